/* run_jupyter.h - SandboxFusion's POST /run_jupyter on `execeval serve`
 * (docs/api.md, "POST /run_jupyter").
 *
 * A request is a list of cells run in order in one fresh live interpreter
 * (an engine session, engine/session.h), as SandboxFusion runs them in one
 * Jupyter kernel: state is shared, a cell that raises is an answer and the
 * next cell still runs. Each cell has the request's cell_timeout, the whole
 * has total_timeout (a cell that would pass it gets what is left); a cell
 * the session rolls back (its clock, the output cap, the memory limit, a
 * crash) stops the run. Then the session is ended, and once its sandbox is
 * gone the answer is given in SandboxFusion's shape: {status, message,
 * driver, cells: [{stdout, stderr, display, error}], executor_pod_name,
 * files}, and execeval's own facts under "execeval".
 *
 * Each run's session counts toward --max-sessions with /v1/sessions'
 * (sessions.h: ee_sessions_hold); past it the answer is 429.
 *
 * Lifecycle: ee_run_jupyter_new beside the sessions table; per request
 * ee_run_jupyter_submit, then, once its ready callback ran,
 * ee_run_jupyter_answer (or ee_run_jupyter_abandon when its connection went
 * away first: its session is ended); ee_run_jupyter_end_all on a forced
 * stop; ee_run_jupyter_free. One thread, the loop's.
 *
 * Ownership: the route borrows the engine and the sessions table; it owns
 * its runs until answered or abandoned, and their sessions.
 */
#ifndef EE_SERVE_RUN_JUPYTER_H
#define EE_SERVE_RUN_JUPYTER_H

#include <jansson.h>
#include <stddef.h>

#include "base/resource_limits.h"

struct ee_engine;
struct ee_err;
struct ee_loop;
struct ee_run_jupyter;
struct ee_run_jupyter_run;
struct ee_sessions;

struct ee_run_jupyter_config {
	struct ee_limits limits;    /* the server's: memory (the ceiling of memory_limit_MB), output cap... */
	double max_cell_timeout_s;  /* a cell's clock, at most */
	double max_total_timeout_s; /* total_timeout, at most */
	const char *const *preload; /* modules every session imports first (--session-preload) */
	size_t n_preload;
	int deny_imports;
};

/* ---- the request and the answer's pieces (pure) -------------------------- */

#define EE_JUPYTER_MAX_CELLS 1000

/* A request read. doc owns what the borrowed fields point into. */
struct ee_jupyter_request {
	json_t *doc;
	const json_t *cells;    /* [string], borrowed from doc */
	double cell_timeout_s;  /* 0: none, the total's only */
	double total_timeout_s; /* > 0, at most the server's */
	unsigned memory_mb;     /* the session's */
	json_t *files;          /* {relative path: base64}, owned */
	json_t *fetch;          /* [relative path], owned */
};

/* Reads a body as SandboxFusion's RunJupyterRequest does (unknown fields
 * ignored): cells (required, strings, at most EE_JUPYTER_MAX_CELLS),
 * cell_timeout (>= 0, default 0), total_timeout (> 0, default 45),
 * memory_limit_MB (-1 or > 0), kernel ("python3"), files, fetch_files.
 * -1 with err naming the field (err->field, as a 422's); ee_jupyter_request_free
 * either way. */
int ee_jupyter_request_read(const char *body, size_t len, const struct ee_run_jupyter_config *cfg,
                            struct ee_jupyter_request *req, struct ee_err *err);
void ee_jupyter_request_free(struct ee_jupyter_request *req);

/* The clock of the next cell: cell_timeout (0: none) within what is left
 * of the total, at most max. *by_total: what is left of the total is what
 * bounds it (not cell_timeout, not max). */
double ee_jupyter_cell_clock(double cell_timeout_s, double left_s, double max_s, int *by_total);

/* SandboxFusion's cell {stdout, stderr, display, error} of an engine
 * session's cell answer (session.h: on_answer): the trailing expression's
 * repr as display [{"text/plain": ...}], an exception as error [{ename,
 * evalue, traceback: [lines]}], a rolled-back cell as error [{ename: its
 * status, evalue: why, traceback: []}] (clock: its seconds, for a timeout's
 * why). New reference, NULL out of memory. */
json_t *ee_jupyter_cell_of(const json_t *answer, double clock_s);

/* ---- the route ------------------------------------------------------------- */

int ee_run_jupyter_new(struct ee_engine *eng, struct ee_sessions *sessions,
                       const struct ee_run_jupyter_config *cfg, struct ee_run_jupyter **ret,
                       struct ee_err *err);
/* Ends every run's session, runs loop until each is gone, frees the route. */
void ee_run_jupyter_free(struct ee_run_jupyter *rj, struct ee_loop *loop);

/* Reads a body and starts its run. Returns 0 when it is answered at once
 * (a 422, a 429, a SandboxError): *code, *text (malloc'd JSON, taken),
 * *text_len. Returns 1 when it runs: *run is set and ready(ctx) is called
 * once its answer is there. -1: out of memory. */
int ee_run_jupyter_submit(struct ee_run_jupyter *rj, const char *body, size_t len, void (*ready)(void *ctx),
                          void *ctx, struct ee_run_jupyter_run **run, unsigned *code, char **text,
                          size_t *text_len);
/* A ready run's answer (text taken); frees the run. */
void ee_run_jupyter_answer(struct ee_run_jupyter_run *run, unsigned *code, char **text, size_t *text_len);
/* Its connection is gone: no ready callback comes; its session is ended
 * and the run freed once it is gone. Accepts a ready run. */
void ee_run_jupyter_abandon(struct ee_run_jupyter_run *run);

/* A forced stop: every run's session ends (its answer: a SandboxError). */
void ee_run_jupyter_end_all(struct ee_run_jupyter *rj);
/* Runs whose session is not gone yet. */
unsigned ee_run_jupyter_live(const struct ee_run_jupyter *rj);

#endif
