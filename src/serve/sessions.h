/* sessions.h - the server's live interpreters: /v1/sessions (docs/api.md
 * "Sessions").
 *
 *   POST   /v1/sessions            {limits, idle_timeout_s, ttl_s, files, setup} -> {id, ...}
 *   POST   /v1/sessions/{id}/exec  {code, timeout_s, stdin, fetch_files} -> the cell's answer
 *   GET    /v1/sessions/{id}       state, cells run, resources
 *   DELETE /v1/sessions/{id}
 *
 * Each session is an engine session (engine/session.h). The table bounds
 * them (--max-sessions: 429 with Retry-After past it), ends an idle one
 * after its idle_timeout_s and any after its ttl_s, and refuses a second
 * cell while one runs (409). A request that waits (a create for its
 * setup, an exec for its answer) gets its answer through `ready`, as
 * /run_code's calls do (run_code.h); its client going away abandons the
 * wait, never the session.
 *
 * Ownership: the table owns its sessions and their waits' answers until
 * taken (ee_sessions_answer). Everything runs on the loop's thread.
 */
#ifndef EE_SERVE_SESSIONS_H
#define EE_SERVE_SESSIONS_H

#include <stddef.h>

#include "base/resource_limits.h"

struct ee_engine;
struct ee_err;
struct ee_loop;
struct ee_sessions;
struct ee_sessions_wait;

struct ee_sessions_config {
	unsigned max_sessions;     /* live at once */
	struct ee_limits limits;   /* the server's: each session's defaults and ceilings */
	double max_cell_timeout_s; /* a cell's clock, at most */
	double idle_timeout_s;     /* default, and max_idle_timeout_s its ceiling */
	double max_idle_timeout_s;
	double ttl_s; /* default, and max_ttl_s its ceiling */
	double max_ttl_s;
	const char *const *preload; /* modules every session imports first (--session-preload) */
	size_t n_preload;
	int deny_imports; /* the default deny list, as candidates have it */
};

int ee_sessions_new(struct ee_engine *eng, const struct ee_sessions_config *cfg, struct ee_sessions **ret,
                    struct ee_err *err);
/* Kills every session, runs loop until each has ended, frees the table. */
void ee_sessions_free(struct ee_sessions *t, struct ee_loop *loop);

/* One request under /v1/sessions (path: what follows it, "" or "/ID" or
 * "/ID/exec"). Returns 0 with *code and *text (malloc'd JSON, the
 * caller's) answered now, 1 when it waits (ready(ctx) is called once its
 * answer is there; *wait is the handle), -1 out of memory. */
int ee_sessions_request(struct ee_sessions *t, const char *method, const char *path, const char *body,
                        size_t len, void (*ready)(void *ctx), void *ctx, struct ee_sessions_wait **wait,
                        unsigned *code, char **text, size_t *text_len);
/* A ready wait's answer (the wait is freed). */
void ee_sessions_answer(struct ee_sessions_wait *w, unsigned *code, char **text, size_t *text_len);
/* Its client went away: the answer, when it comes, is dropped. */
void ee_sessions_abandon(struct ee_sessions_wait *w);

/* Idle and TTL ends due now; the milliseconds until the next one (-1: none). */
long ee_sessions_tick(struct ee_sessions *t);
/* The server drains: every session ends (waits answer 503). */
void ee_sessions_end_all(struct ee_sessions *t);
unsigned ee_sessions_live(const struct ee_sessions *t);
/* A session another route holds (/run_jupyter's, run_jupyter.h) counts
 * toward --max-sessions: 0 when it fits, -1 when the server holds as many
 * as it may (answer 429); each hold that fit is given back once. */
int ee_sessions_hold(struct ee_sessions *t);
void ee_sessions_unhold(struct ee_sessions *t);

#endif
