/* run_jupyter.c - SandboxFusion's POST /run_jupyter: its request read, its
 * cells run in one fresh session, its answer in its shapes (see
 * run_jupyter.h).
 *
 * Theory of operation. A run is one engine session and a cursor over the
 * request's cells. The session's first answer (its empty setup: the
 * interpreter is up) starts cell 0; each cell's answer is kept in
 * SandboxFusion's shape and starts the next, on the clock that is left
 * (ee_jupyter_cell_clock). The last cell carries fetch_files (a request
 * without cells fetches with an empty cell of its own). The run stops at
 * the first cell the session rolls back, or when the total is spent before
 * a cell starts; either way, and at the end, the answer is built and the
 * session ended. The answer goes to its connection from on_end, once the
 * sandbox is gone: a client that has its answer finds nothing of its run
 * left on the host. A session that ends by itself first (it could not
 * start, it broke) answers a SandboxError.
 */
#include "serve/run_jupyter.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/jsonfield.h"
#include "base/loop.h"
#include "engine/session.h"
#include "serve/run_code.h"
#include "serve/sessions.h"

#define JSON_OUT                (JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15))
#define DEFAULT_TOTAL_TIMEOUT_S 45.0 /* SandboxFusion's RunJupyterRequest */
#define LIFE_MARGIN_S           30.0 /* the session's TTL past the total: its start, its end */

/* ---- the request ---------------------------------------------------------- */

void ee_jupyter_request_free(struct ee_jupyter_request *req)
{
	json_decref(req->doc);
	json_decref(req->files);
	json_decref(req->fetch);
	*req = (struct ee_jupyter_request){ 0 };
}

static int read_cells(const struct ee_jf *c, const json_t *doc, const json_t **ret)
{
	json_t *cells = NULL;
	const char *text;
	char name[40];

	if (ee_jf_array(c, doc, "cells", 0, "a list of strings", &cells) < 0)
		return -1;
	if (!cells)
		return ee_jf_bad(c, "cells", "a list of strings", NULL);
	if (json_array_size(cells) > EE_JUPYTER_MAX_CELLS)
		return ee_jf_fail(c, "cells", "at most %d cells", EE_JUPYTER_MAX_CELLS);
	for (size_t i = 0; i < json_array_size(cells); i++)
		if (ee_jf_str_check(c, ee_jf_elem("cells", i, name, sizeof(name)), json_array_get(cells, i),
		                    &text) < 0)
			return -1;
	*ret = cells;
	return 0;
}

static int read_numbers(const struct ee_jf *c, const json_t *doc, const struct ee_run_jupyter_config *cfg,
                        struct ee_jupyter_request *req)
{
	static const char *const kernels[] = { "python3" };
	static const struct ee_jf_num_rule at_least_0 = { 0, 1, 0, "seconds >= 0" };
	static const struct ee_jf_num_rule over_0 = { 0, 0, 0, "seconds > 0" };
	json_int_t mem = -1;
	int kernel = 0;

	if (ee_jf_num(c, doc, "cell_timeout", &at_least_0, &req->cell_timeout_s, NULL) < 0 ||
	    ee_jf_num(c, doc, "total_timeout", &over_0, &req->total_timeout_s, NULL) < 0 ||
	    ee_jf_int(c, doc, "memory_limit_MB", -1, (json_int_t)1 << 40, "-1, or MiB > 0", &mem) < 0 ||
	    ee_jf_enum(c, doc, "kernel", kernels, 1, 0, &kernel) < 0)
		return -1;
	if (mem == 0)
		return ee_jf_bad(c, "memory_limit_MB", "-1, or MiB > 0",
		                 json_object_get(doc, "memory_limit_MB"));
	/* The server's limits are the ceilings, as /run_code's are. */
	if (mem > 0)
		req->memory_mb = mem < EE_MEMORY_MB_MIN                    ? EE_MEMORY_MB_MIN
		                 : mem < (json_int_t)cfg->limits.memory_mb ? (unsigned)mem
		                                                           : cfg->limits.memory_mb;
	if (req->total_timeout_s > cfg->max_total_timeout_s)
		req->total_timeout_s = cfg->max_total_timeout_s;
	return 0;
}

int ee_jupyter_request_read(const char *body, size_t len, const struct ee_run_jupyter_config *cfg,
                            struct ee_jupyter_request *req, struct ee_err *err)
{
	struct ee_jf c = ee_jf_make(NULL, err);
	json_error_t jerr;
	char buf[EE_JF_ERROR_TEXT];
	const char *field = NULL, *msg = NULL;
	char where[256];
	int rc;

	*req = (struct ee_jupyter_request){ .total_timeout_s = DEFAULT_TOTAL_TIMEOUT_S,
		                            .memory_mb = cfg->limits.memory_mb };
	c.root = "body";
	/* A raw NUL byte is not JSON, though jansson skips one between tokens. */
	req->doc = memchr(body, '\0', len) ? NULL : json_loadb(body, len, 0, &jerr);
	if (!req->doc)
		rc = ee_jf_fail(&c, "", "not JSON: %s",
		                memchr(body, '\0', len) ? "a NUL byte" : ee_jf_error_text(&jerr, buf));
	else if (!json_is_object(req->doc))
		rc = ee_jf_bad(&c, "", "a JSON object", req->doc);
	else
		rc = read_cells(&c, req->doc, &req->cells) < 0 || read_numbers(&c, req->doc, cfg, req) < 0
		             ? -1
		             : 0;
	if (rc < 0) {
		if (err && !err->field[0])
			snprintf(err->field, sizeof(err->field), "body");
		return -1;
	}
	json_t *script = json_object();
	if (!script)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (ee_run_code_read_files(req->doc, script, &field, &msg, where, sizeof(where)) < 0) {
		json_decref(script);
		ee_fail(err, EE_ERR_USAGE, "%s", msg);
		if (err)
			ee_jf_cut(err->field, sizeof(err->field), field, strlen(field));
		return -1;
	}
	req->files = json_incref(json_object_get(script, "files"));
	req->fetch = json_incref(json_object_get(script, "fetch"));
	json_decref(script);
	return 0;
}

double ee_jupyter_cell_clock(double cell_timeout_s, double left_s, double max_s, int *by_total)
{
	double clock = cell_timeout_s > 0 && cell_timeout_s < left_s ? cell_timeout_s : left_s;

	/* The server's ceiling is a cell's clock, never the total's. */
	*by_total = left_s <= max_s && !(cell_timeout_s > 0 && cell_timeout_s <= left_s);
	return clock < max_s ? clock : max_s;
}

/* ---- the answer's cells --------------------------------------------------- */

static json_t *text_of(const json_t *v)
{
	return json_is_string(v) ? json_incref((json_t *)v) : json_string("");
}

/* A traceback's text as a list of its lines (Jupyter's is a list). */
static json_t *lines_of(const char *text)
{
	json_t *lines = json_array();

	while (lines && text && *text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);
		json_array_append_new(lines, json_stringn(text, n));
		text += n + (nl != NULL);
	}
	return lines;
}

/* A rolled-back cell's error: ename is execeval's status for it. */
static json_t *rolled_back_error(const char *status, const char *detail, double clock_s)
{
	char why[200];

	if (strcmp(status, "timeout") == 0)
		snprintf(why, sizeof(why),
		         "the cell ran past its %g s clock and was stopped; nothing of it was kept", clock_s);
	else
		snprintf(why, sizeof(why), "%s; nothing of the cell was kept", detail ? detail : status);
	return json_pack("{s:s, s:s, s:[]}", "ename", status, "evalue", why, "traceback");
}

json_t *ee_jupyter_cell_of(const json_t *answer, double clock_s)
{
	const char *status = json_string_value(json_object_get(answer, "status"));
	const json_t *result = json_object_get(answer, "result"), *error = json_object_get(answer, "error");
	json_t *cell =
	        json_pack("{s:o, s:o, s:[], s:[]}", "stdout", text_of(json_object_get(answer, "stdout")),
	                  "stderr", text_of(json_object_get(answer, "stderr")), "display", "error");

	if (!cell || !status)
		return cell;
	if (json_is_string(result))
		json_array_append_new(json_object_get(cell, "display"),
		                      json_pack("{s:O}", "text/plain", result));
	if (json_is_true(json_object_get(answer, "rolled_back")))
		json_array_append_new(json_object_get(cell, "error"),
		                      rolled_back_error(status,
		                                        json_string_value(json_object_get(answer, "detail")),
		                                        clock_s));
	else if (strcmp(status, "error") == 0 && json_is_object(error))
		json_array_append_new(
		        json_object_get(cell, "error"),
		        json_pack("{s:o, s:o, s:o}", "ename", text_of(json_object_get(error, "type")),
		                  "evalue", text_of(json_object_get(error, "message")), "traceback",
		                  lines_of(json_string_value(json_object_get(error, "traceback")))));
	return cell;
}

/* ---- runs ------------------------------------------------------------------- */

enum run_state { RUN_CELLS, RUN_ENDING, RUN_READY };

struct ee_run_jupyter_run {
	struct ee_run_jupyter *rj;
	struct ee_run_jupyter_run *next; /* the route's live runs */
	struct ee_session *s;
	struct ee_jupyter_request req;
	double started; /* monotonic seconds: the total's clock runs from the request */
	size_t at;      /* the cell running, or next to */
	double clock_s; /* the running cell's */
	int by_total;   /* its clock is what was left of the total */
	int fetching;   /* the empty cell that fetches for a request without cells */
	enum run_state state;
	int abandoned;
	void (*ready)(void *ctx);
	void *ctx;
	json_t *cells; /* SandboxFusion's, so far */
	json_t *facts; /* execeval's per cell: status, detail, rolled_back, duration_ms, cpu_ms */
	json_t *answer;
	unsigned code;
	char *text;
};

struct ee_run_jupyter {
	struct ee_engine *eng;
	struct ee_sessions *sessions;
	struct ee_run_jupyter_config cfg;
	struct ee_run_jupyter_run *live;
	unsigned n_live;
};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void run_free(struct ee_run_jupyter_run *run)
{
	ee_jupyter_request_free(&run->req);
	json_decref(run->cells);
	json_decref(run->facts);
	json_decref(run->answer);
	free(run->text);
	free(run);
}

static json_t *sandbox_error(const char *msg)
{
	return json_pack("{s:s, s:s, s:n, s:[], s:n, s:{}}", "status", "SandboxError", "message", msg,
	                 "driver", "cells", "executor_pod_name", "files");
}

/* The driver's return code SandboxFusion would show for a cell that
 * ended its run: as /run_code's run_result (-9 a limit's kill, -N a
 * signal N, N an exit code N). */
static long return_code_of(const char *detail)
{
	int n;

	if (!detail)
		return 1;
	if (sscanf(detail, "exit code %d", &n) == 1)
		return n;
	if (sscanf(detail, "killed by signal %d", &n) == 1)
		return -n;
	if (strcmp(detail, "memory limit") == 0 || strcmp(detail, "output overflow") == 0)
		return -9;
	return 1;
}

/* The answer of a run that ended: Success, or Failed at cell `stop` (-1:
 * none) for `why` ("cell_timeout", "total_timeout", or the cell's status). */
static json_t *run_answer(struct ee_run_jupyter_run *run, long stop, const char *why, const json_t *last)
{
	int timeout = why && strstr(why, "timeout") != NULL;
	const char *detail = last ? json_string_value(json_object_get(last, "detail")) : NULL;
	json_t *driver =
	        json_pack("{s:s, s:f, s:o, s:s, s:s}", "status", timeout ? "TimeLimitExceeded" : "Finished",
	                  "execution_time", now_s() - run->started, "return_code",
	                  timeout ? json_null() : json_integer(why ? return_code_of(detail) : 0), "stdout",
	                  "", "stderr", "");
	json_t *files = !why && json_is_object(json_object_get(last, "files"))
	                        ? json_incref(json_object_get(last, "files"))
	                        : json_object();
	json_t *stopped = why ? json_pack("{s:I, s:s}", "cell", (json_int_t)stop, "why", why) : json_null();

	return json_pack("{s:s, s:s, s:o, s:O, s:n, s:o, s:{s:O, s:o}}", "status", why ? "Failed" : "Success",
	                 "message", "", "driver", driver, "cells", run->cells, "executor_pod_name", "files",
	                 files, "execeval", "cells", run->facts, "stopped", stopped);
}

/* The run's answer is built: its session ends, and on_end hands it on. */
static void end_run(struct ee_run_jupyter_run *run, json_t *answer)
{
	if (run->state != RUN_CELLS) {
		json_decref(answer);
		return;
	}
	run->state = RUN_ENDING;
	run->answer = answer ? answer : sandbox_error("out of memory");
	ee_session_end(run->s); /* the last use of the session here: on_end may follow */
}

static void next_cell(struct ee_run_jupyter_run *run)
{
	size_t n = json_array_size(run->req.cells);
	struct ee_err err = { 0 };

	if (run->at == n && (n > 0 || !json_array_size(run->req.fetch)))
		return end_run(run, run_answer(run, -1, NULL, NULL));
	double left = run->req.total_timeout_s - (now_s() - run->started);
	if (left <= 0)
		return end_run(run, run_answer(run, (long)run->at, "total_timeout", NULL));
	struct ee_cell cell = { .code = n ? json_string_value(json_array_get(run->req.cells, run->at)) : "" };
	cell.timeout_s = ee_jupyter_cell_clock(run->req.cell_timeout_s, left, run->rj->cfg.max_cell_timeout_s,
	                                       &run->by_total);
	run->clock_s = cell.timeout_s;
	run->fetching = n == 0;
	if (run->at + 1 >= n && json_array_size(run->req.fetch))
		cell.fetch = run->req.fetch;
	if (ee_session_exec(run->s, &cell, &err) < 0)
		end_run(run, sandbox_error(err.msg));
}

static void on_answer(void *ctx, struct ee_session *s, json_t *a)
{
	struct ee_run_jupyter_run *run = ctx;
	(void)s;

	if (run->state != RUN_CELLS || json_is_true(json_object_get(a, "setup"))) {
		json_decref(a);
		if (run->state == RUN_CELLS)
			next_cell(run); /* the interpreter is up: cell 0 */
		return;
	}
	const char *status = json_string_value(json_object_get(a, "status"));
	int rolled_back = json_is_true(json_object_get(a, "rolled_back"));
	if (run->fetching) { /* the empty cell of a request without cells */
		json_t *answer = rolled_back ? sandbox_error("the files could not be fetched")
		                             : run_answer(run, -1, NULL, a);
		json_decref(a);
		return end_run(run, answer);
	}
	json_array_append_new(run->cells, ee_jupyter_cell_of(a, run->clock_s));
	json_array_append_new(run->facts,
	                      json_pack("{s:s?, s:O?, s:b, s:b, s:O?, s:O?, s:f}", "status", status, "detail",
	                                json_object_get(a, "detail"), "rolled_back", rolled_back,
	                                "infra_error", json_is_true(json_object_get(a, "infra_error")),
	                                "duration_ms", json_object_get(a, "duration_ms"), "cpu_ms",
	                                json_object_get(a, "cpu_ms"), "clock_s", run->clock_s));
	if (rolled_back) {
		int timeout = status && strcmp(status, "timeout") == 0;
		const char *why = !timeout ? status : run->by_total ? "total_timeout" : "cell_timeout";
		json_t *answer = run_answer(run, (long)run->at, why ? why : "crashed", a);
		json_decref(a);
		return end_run(run, answer);
	}
	run->at++;
	if (run->at == json_array_size(run->req.cells)) {
		json_t *answer = run_answer(run, -1, NULL, a);
		json_decref(a);
		return end_run(run, answer);
	}
	json_decref(a);
	next_cell(run);
}

static void unlink_run(struct ee_run_jupyter_run *run)
{
	struct ee_run_jupyter_run **p = &run->rj->live;

	while (*p && *p != run)
		p = &(*p)->next;
	if (*p)
		*p = run->next;
	run->next = NULL;
}

static void on_end(void *ctx, struct ee_session *s, const char *why)
{
	struct ee_run_jupyter_run *run = ctx;
	struct ee_run_jupyter *rj = run->rj;
	char msg[320];

	if (run->state == RUN_CELLS) { /* it ended by itself, or the server ended it */
		snprintf(msg, sizeof(msg), "the session ended before the cells finished: %s",
		         why[0] ? why : "the server is shutting down");
		json_decref(run->answer);
		run->answer = sandbox_error(msg);
	}
	run->state = RUN_READY;
	unlink_run(run);
	rj->n_live--;
	ee_sessions_unhold(rj->sessions);
	ee_session_free(s);
	run->s = NULL;
	run->text = run->answer ? json_dumps(run->answer, JSON_OUT) : NULL;
	run->code = run->text ? 200 : 500;
	if (run->abandoned)
		return run_free(run);
	run->ready(run->ctx);
}

static const struct ee_session_ops session_ops = { .on_answer = on_answer, .on_end = on_end };

/* ---- the route -------------------------------------------------------------- */

static int answer_now(unsigned status, json_t *v, unsigned *code, char **text, size_t *len)
{
	*code = status;
	*text = v ? json_dumps(v, JSON_OUT) : NULL;
	json_decref(v);
	*len = *text ? strlen(*text) : 0;
	return *text ? 0 : -1;
}

int ee_run_jupyter_submit(struct ee_run_jupyter *rj, const char *body, size_t len, void (*ready)(void *ctx),
                          void *ctx, struct ee_run_jupyter_run **ret, unsigned *code, char **text,
                          size_t *text_len)
{
	struct ee_err err = { 0 };
	struct ee_run_jupyter_run *run = calloc(1, sizeof(*run));

	*ret = NULL;
	if (!run)
		return -1;
	run->rj = rj;
	run->started = now_s();
	if (ee_jupyter_request_read(body, len, &rj->cfg, &run->req, &err) < 0) {
		run_free(run);
		return answer_now(422, ee_run_code_invalid(err.field, err.msg), code, text, text_len);
	}
	if (ee_sessions_hold(rj->sessions) < 0) {
		run_free(run);
		return answer_now(
		        429,
		        json_pack("{s:s}", "error", "the server holds --max-sessions sessions: retry later"),
		        code, text, text_len);
	}
	run->cells = json_array();
	run->facts = json_array();
	struct ee_session_config sc = {
		.limits = rj->cfg.limits,
		.files = run->req.files,
		.preload = rj->cfg.preload,
		.n_preload = rj->cfg.n_preload,
		.deny_imports = rj->cfg.deny_imports,
		.life_s = run->req.total_timeout_s + LIFE_MARGIN_S,
	};
	sc.limits.memory_mb = run->req.memory_mb;
	if (!run->cells || !run->facts ||
	    ee_session_start(rj->eng, &sc, &session_ops, run, &run->s, &err) < 0) {
		ee_sessions_unhold(rj->sessions);
		run_free(run);
		return answer_now(200, sandbox_error(err.msg[0] ? err.msg : "out of memory"), code, text,
		                  text_len);
	}
	run->ready = ready;
	run->ctx = ctx;
	run->next = rj->live;
	rj->live = run;
	rj->n_live++;
	*ret = run;
	return 1;
}

void ee_run_jupyter_answer(struct ee_run_jupyter_run *run, unsigned *code, char **text, size_t *text_len)
{
	*code = run->code;
	*text = run->text;
	*text_len = run->text ? strlen(run->text) : 0;
	run->text = NULL;
	run_free(run);
}

void ee_run_jupyter_abandon(struct ee_run_jupyter_run *run)
{
	if (!run)
		return;
	if (run->state == RUN_READY)
		return run_free(run);
	run->abandoned = 1; /* freed by on_end */
	if (run->state == RUN_CELLS) {
		run->state = RUN_ENDING;
		ee_session_end(run->s);
	}
}

void ee_run_jupyter_end_all(struct ee_run_jupyter *rj)
{
	for (struct ee_run_jupyter_run *run = rj->live; run; run = run->next)
		if (run->state == RUN_CELLS)
			end_run(run, sandbox_error("the server is shutting down"));
}

unsigned ee_run_jupyter_live(const struct ee_run_jupyter *rj)
{
	return rj ? rj->n_live : 0;
}

int ee_run_jupyter_new(struct ee_engine *eng, struct ee_sessions *sessions,
                       const struct ee_run_jupyter_config *cfg, struct ee_run_jupyter **ret,
                       struct ee_err *err)
{
	struct ee_run_jupyter *rj = calloc(1, sizeof(*rj));

	if (!rj)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	rj->eng = eng;
	rj->sessions = sessions;
	rj->cfg = *cfg;
	*ret = rj;
	return 0;
}

void ee_run_jupyter_free(struct ee_run_jupyter *rj, struct ee_loop *loop)
{
	struct ee_err err = { 0 };

	if (!rj)
		return;
	ee_run_jupyter_end_all(rj);
	while (rj->n_live > 0 && ee_loop_wait(loop, 100, &err) == 0)
		;
	free(rj);
}
