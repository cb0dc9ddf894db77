/* run_code.h - SandboxFusion's POST /run_code on `execeval serve`
 * (docs/api.md, "POST /run_code").
 *
 * A request is one program run as a plain script: no tests, no phases to
 * judge; the answer says what it did, in SandboxFusion's shapes, so an RL
 * trainer pointed at it works unchanged. The script is one io test whose
 * stdout and stderr are the sandbox's own (the harness's script mode), its
 * files written into the sandbox's cwd before it runs and read back after.
 *
 * Back-pressure as those clients need it (they retry only on 504 and
 * count anything else as a failed test): a request waits in this route's
 * own FIFO, never refused while its deadline allows (compile_timeout +
 * run_timeout + 10 s, or the server's --run-code-deadline); it is answered
 * 504 when it could not start before its deadline, or when the FIFO
 * (--run-code-queue) or the server's memory budget is full. A waiting
 * request starts when a sandbox is idle and no /v1 evaluation waits for
 * one (the dispatcher's hook, dispatch.h).
 *
 * Lifecycle: ee_run_code_new beside the dispatcher; per request
 * ee_run_code_submit, then, once its ready callback ran, ee_run_code_answer
 * (or ee_run_code_abandon when its connection went away first); the loop
 * calls ee_run_code_tick; ee_run_code_free. One thread, the loop's.
 * Ownership: the route borrows the dispatcher, options, budget and stats;
 * it owns its calls until answered or abandoned.
 */
#ifndef EE_SERVE_RUN_CODE_H
#define EE_SERVE_RUN_CODE_H

#include <jansson.h>
#include <stddef.h>

struct ee_budget;
struct ee_dispatch;
struct ee_err;
struct ee_eval_options;
struct ee_serve_stats;
struct ee_run_code;
struct ee_run_code_call;

struct ee_run_code_config {
	double deadline_s; /* > 0: a request's deadline; 0: compile_timeout + run_timeout + 10 s */
	size_t queue;      /* requests that may wait; 0: ee_run_code_default_queue() */
	unsigned jobs;     /* the dispatcher's sandboxes */
	unsigned coalesce; /* waiting requests of one program one sandbox runs (< 2: one) */
};

/* The default queue: one place per 4 MiB of physical memory, at least 256
 * (a trainer's burst), at most 16384. */
size_t ee_run_code_default_queue(void);

int ee_run_code_new(struct ee_dispatch *d, const struct ee_eval_options *o, struct ee_budget *budget,
                    struct ee_serve_stats *stats, const struct ee_run_code_config *cfg,
                    struct ee_run_code **ret, struct ee_err *err);
/* Every call must have been answered or abandoned. */
void ee_run_code_free(struct ee_run_code *rc);

/* The answer when the program did not run: {"status": "SandboxError",
 * "message": msg, ...}, owned by the caller. */
json_t *ee_run_code_sandbox_error(const char *msg);

/* A 422's body naming the field, in execeval's shape ("error", "field")
 * and FastAPI's ("detail": [{"loc", "msg", "type"}]) at once; the
 * caller's. /run_jupyter answers its refusals with it too. */
json_t *ee_run_code_invalid(const char *field, const char *msg);

/* SandboxFusion's "files" ({relative path: base64}, null values skipped,
 * 8 MiB decoded in all) and "fetch_files" (at most 64 relative paths) of
 * the request req, checked into script: {"files": {...}, "fetch": [...],
 * "fetch_cap"}. -1 with *field (a key, or buf: "files.<path>",
 * "fetch_files.<i>") and *msg (static text) naming the fault. Shared
 * with /run_jupyter (run_jupyter.h). */
int ee_run_code_read_files(const json_t *req, json_t *script, const char **field, const char **msg, char *buf,
                           size_t size);

typedef void (*ee_run_code_ready)(void *ctx);

/* Reads a request body. Returns 0 when it is answered at once (a 422, a
 * SandboxError, a 504): *code, *text (malloc'd JSON, taken) and *len set.
 * Returns 1 when it was queued: *call is set and ready(ctx) runs once its
 * answer is there (possibly before this returns). -1: out of memory. */
int ee_run_code_submit(struct ee_run_code *rc, const char *body, size_t len, ee_run_code_ready ready,
                       void *ctx, struct ee_run_code_call **call, unsigned *code, char **text,
                       size_t *text_len);

/* A ready call's answer (text taken); frees the call. */
void ee_run_code_answer(struct ee_run_code_call *call, unsigned *code, char **text, size_t *len);

/* The call's connection is gone: no ready callback will come; freed now,
 * or when its sandbox is done. Accepts a ready call. */
void ee_run_code_abandon(struct ee_run_code_call *call);

/* Starts waiting calls on idle sandboxes, answers 504 to those past their
 * deadline (their ready callbacks run). */
void ee_run_code_tick(struct ee_run_code *rc);
/* Milliseconds to the next waiting call's deadline, -1 for none. */
long ee_run_code_next_ms(const struct ee_run_code *rc);

size_t ee_run_code_waiting(const struct ee_run_code *rc);
size_t ee_run_code_capacity(const struct ee_run_code *rc);

/* A forced stop: every waiting call is answered 503. */
void ee_run_code_drop_waiting(struct ee_run_code *rc);

#endif
