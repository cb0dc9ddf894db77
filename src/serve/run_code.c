/* run_code.c - SandboxFusion's POST /run_code: its request read, its
 * program run as a script, its answer in its shapes (see run_code.h). */
#include "serve/run_code.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/err.h"
#include "base/text.h"
#include "engine/evaluate.h"
#include "input/task.h"
#include "sandbox/sandbox.h"
#include "serve/budget.h"
#include "serve/dispatch.h"
#include "serve/stats.h"
#include "verdict/events.h"
#include "verdict/record.h"
#include "verdict/score.h"

#define JSON_FLAGS (JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15))

/* What a request may bring: written files, decoded, in total; files to
 * read back, in number and in bytes (one event frame holds them: 1 MiB,
 * events.c); a path's length. */
#define FILES_CAP       (8u << 20)
#define FETCH_MAX       64
#define FETCH_CAP       (512u << 10)
#define PATH_MAX_LEN    255
#define DEFAULT_TIMEOUT 10.0
#define MAX_DEADLINE    3600.0
#define ANSWER_MARGIN_S 1.0 /* a sandbox's start and the answer's way back */

enum call_state { CALL_WAITING, CALL_RUNNING, CALL_READY };

/* What the sandbox did, kept from its outcome (on_outcome) for the answer. */
struct facts {
	int have;
	char *out, *err; /* the first output-cap bytes of each */
	size_t out_len, err_len, out_total, err_total;
	int end, have_status, status;
	double wall_ms;
	int have_exit_code;
	long exit_code;
	json_t *files;
};

struct ee_run_code_call {
	struct ee_run_code *rc;
	struct ee_task task; /* one io test in script mode */
	char *program;
	double arrived;  /* monotonic seconds */
	double deadline; /* the latest it may start (read_request) */
	size_t charged;  /* of the budget, while it waits or runs */
	int state;       /* enum call_state */
	int abandoned;
	ee_run_code_ready ready;
	void *ctx;
	struct facts facts;
	int solo;           /* runs in a sandbox of its own (run again, or never coalesced) */
	double wait_s;      /* how long it may wait to start, from arrived */
	unsigned long hash; /* of the program: a quick test for coalescing */
	json_t *verdict;    /* in a group: {"status", "detail", "resources"} once its test ran apart */
	unsigned code;
	char *text;
	size_t len;
	struct ee_run_code_call *next; /* the FIFO */
};

struct ee_run_code {
	struct ee_dispatch *d;
	const struct ee_eval_options *o;
	struct ee_budget *budget;
	struct ee_serve_stats *stats;
	struct ee_run_code_config cfg;
	struct ee_run_code_call *head, *tail;
	size_t waiting;
	double earliest; /* no waiting call's deadline is before it: the loop
	                  * scans the FIFO only once it is reached */
};

/* Waiting requests of one program run in one sandbox (harness apart.py). */
struct group {
	struct ee_run_code *rc;
	struct ee_task task; /* one apart script test per call, in order */
	struct ee_run_code_call **calls;
	size_t n;
};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

size_t ee_run_code_default_queue(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	double mib = pages > 0 && size > 0 ? (double)pages * (double)size / (1 << 20) : 0;
	double n = mib / 4;

	return n < 256 ? 256 : n > 16384 ? 16384 : (size_t)n;
}

int ee_run_code_new(struct ee_dispatch *d, const struct ee_eval_options *o, struct ee_budget *budget,
                    struct ee_serve_stats *stats, const struct ee_run_code_config *cfg,
                    struct ee_run_code **ret, struct ee_err *err)
{
	struct ee_run_code *rc = calloc(1, sizeof(*rc));

	if (!rc)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	*rc = (struct ee_run_code){ .d = d, .o = o, .budget = budget, .stats = stats, .cfg = *cfg };
	if (!rc->cfg.queue)
		rc->cfg.queue = ee_run_code_default_queue();
	if (!rc->cfg.jobs)
		rc->cfg.jobs = 1;
	*ret = rc;
	return 0;
}

size_t ee_run_code_waiting(const struct ee_run_code *rc)
{
	return rc->waiting;
}

size_t ee_run_code_capacity(const struct ee_run_code *rc)
{
	return rc->cfg.queue;
}

/* ---- answers ------------------------------------------------------------ */

static char *dump(json_t *v, size_t *len)
{
	char *text = v ? json_dumps(v, JSON_FLAGS) : NULL;
	json_decref(v);
	*len = text ? strlen(text) : 0;
	return text;
}

json_t *ee_run_code_invalid(const char *field, const char *msg)
{
	return json_pack("{s:s, s:s, s:[{s:[s,s], s:s, s:s}]}", "error", msg, "field", field, "detail", "loc",
	                 "body", field, "msg", msg, "type", "value_error");
}

static int refuse_422(unsigned *code, char **text, size_t *len, const char *field, const char *msg)
{
	*code = 422;
	*text = dump(ee_run_code_invalid(field, msg), len);
	return *text ? 0 : -1;
}

json_t *ee_run_code_sandbox_error(const char *msg)
{
	return json_pack("{s:s, s:s, s:n, s:n, s:n, s:{}, s:{s:s, s:s}}", "status", "SandboxError", "message",
	                 msg, "compile_result", "run_result", "executor_pod_name", "files", "execeval",
	                 "status", "error", "detail", msg);
}

static int answer_504(struct ee_run_code *rc, unsigned *code, char **text, size_t *len, const char *msg)
{
	rc->stats->run_code_timeouts++;
	*code = 504;
	*text = dump(json_pack("{s:s, s:n, s:s}", "error", msg, "field", "detail", msg), len);
	return *text ? 0 : -1;
}

static void call_free(struct ee_run_code_call *call)
{
	if (call->charged)
		ee_budget_release(call->rc->budget, NULL, call->charged);
	ee_task_free(&call->task);
	free(call->program);
	free(call->facts.out);
	free(call->facts.err);
	json_decref(call->facts.files);
	json_decref(call->verdict);
	free(call->text);
	free(call);
}

/* The call's answer is there: to its connection, or dropped with it. */
static void finish(struct ee_run_code_call *call, unsigned code, char *text, size_t len)
{
	call->state = CALL_READY;
	call->code = code;
	call->text = text;
	call->len = len;
	if (call->charged) {
		ee_budget_release(call->rc->budget, NULL, call->charged);
		call->charged = 0;
	}
	if (call->abandoned)
		call_free(call);
	else
		call->ready(call->ctx);
}

void ee_run_code_answer(struct ee_run_code_call *call, unsigned *code, char **text, size_t *len)
{
	*code = call->code;
	*text = call->text;
	*len = call->len;
	call->text = NULL;
	call_free(call);
}

/* ---- the request -------------------------------------------------------- */

/* A path the sandbox may hold: relative, no "..", no NUL, not empty. */
static int relative_path(const char *p, size_t n)
{
	if (n == 0 || n > PATH_MAX_LEN || p[0] == '/' || memchr(p, '\0', n))
		return 0;
	for (const char *s = p; s < p + n;) {
		const char *e = memchr(s, '/', (size_t)(p + n - s));
		size_t k = e ? (size_t)(e - s) : (size_t)(p + n - s);
		if (k == 2 && s[0] == '.' && s[1] == '.')
			return 0;
		s += k + 1;
	}
	return 1;
}

/* The decoded length of strict base64 (newlines allowed), or -1. */
static long base64_length(const char *s, size_t n)
{
	size_t digits = 0, pad = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '\n' || ch == '\r')
			continue;
		if (ch == '=') {
			pad++;
			continue;
		}
		if (pad || !(ch == '+' || ch == '/' || (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'Z') ||
		             (ch >= 'a' && ch <= 'z')))
			return -1;
		digits++;
	}
	if ((digits + pad) % 4 != 0 || pad > 2)
		return -1;
	return (long)((digits + pad) / 4 * 3 - pad);
}

/* A seconds field: absent or null the default, else a number > 0. */
static int seconds_field(const json_t *req, const char *key, double *ret)
{
	const json_t *v = json_object_get(req, key);

	*ret = DEFAULT_TIMEOUT;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v) || !(json_number_value(v) > 0) || !isfinite(json_number_value(v)))
		return -1;
	*ret = json_number_value(v);
	return 0;
}

int ee_run_code_read_files(const json_t *req, json_t *script, const char **field, const char **msg, char *buf,
                           size_t size)
{
	const json_t *files = json_object_get(req, "files"), *fetch = json_object_get(req, "fetch_files");
	json_t *put = json_object(), *want = json_array();
	size_t total = 0;
	const char *path;
	json_t *v;

	json_object_set_new(script, "files", put);
	json_object_set_new(script, "fetch", want);
	json_object_set_new(script, "fetch_cap", json_integer(FETCH_CAP));
	*field = "files";
	if (files && !json_is_null(files) && !json_is_object(files))
		return *msg = "files: must be an object of relative path -> base64", -1;
	json_object_foreach ((json_t *)files, path, v) {
		snprintf(buf, size, "files.%.200s", path);
		*field = buf;
		if (json_is_null(v))
			continue;
		if (!relative_path(path, strlen(path)))
			return *msg = "a file's path must be relative, without \"..\"", -1;
		long n = json_is_string(v) ? base64_length(json_string_value(v), json_string_length(v)) : -1;
		if (n < 0)
			return *msg = "a file's content must be a base64 string", -1;
		total += (size_t)n;
		if (total > FILES_CAP)
			return *msg = "files: more than 8 MiB in total", -1;
		if (json_object_set(put, path, v) < 0)
			return *msg = "out of memory", -1;
	}
	*field = "fetch_files";
	if (fetch && !json_is_null(fetch) && !json_is_array(fetch))
		return *msg = "fetch_files: must be a list of relative paths", -1;
	if (json_array_size(fetch) > FETCH_MAX)
		return *msg = "fetch_files: at most 64 paths", -1;
	for (size_t i = 0; i < json_array_size(fetch); i++) {
		v = json_array_get(fetch, i);
		snprintf(buf, size, "fetch_files.%zu", i);
		*field = buf;
		if (!json_is_string(v) || !relative_path(json_string_value(v), json_string_length(v)))
			return *msg = "a path to fetch must be relative, without \"..\"", -1;
		json_array_append(want, v);
	}
	return 0;
}

/* A task of n script tests (filled by script_test): no prompt, no entry
 * point, the task id "run_code". */
static int script_task(struct ee_task *t, size_t n)
{
	t->task_id = strdup("run_code");
	t->class_name = strdup("");
	t->prompt = strdup("");
	t->entry_point = strdup("");
	t->setup = strdup("");
	t->tests = calloc(n, sizeof(*t->tests));
	if (!t->task_id || !t->class_name || !t->prompt || !t->entry_point || !t->setup || !t->tests)
		return -1;
	t->n_tests = n;
	return 0;
}

/* One io test run as a script (its own reference to script) on stdin. */
static int script_test(struct ee_test *test, json_t *script, const char *stdin_text)
{
	*test = (struct ee_test){ .kind = EE_TEST_IO,
		                  .tier = EE_TIER_CANONICAL,
		                  .weight = 1.0,
		                  .float_tol = -1.0,
		                  .script = json_incref(script) };
	test->stdin_text = strdup(stdin_text);
	test->stdout_text = strdup("");
	return test->stdin_text && test->stdout_text ? 0 : -1;
}

/* The one-test task of a script: stdin, files, and its limits, the
 * server's own (--timeout, --memory) the ceiling as for every request. */
static int make_task(const struct ee_limits *server, struct ee_run_code_call *call, const json_t *req,
                     double run_timeout, json_t *script)
{
	struct ee_task *t = &call->task;
	const json_t *in = json_object_get(req, "stdin");
	const json_t *mem = json_object_get(req, "memory_limit_MB");

	if (script_task(t, 1) < 0 ||
	    script_test(&t->tests[0], script, json_is_string(in) ? json_string_value(in) : "") < 0)
		return -1;
	t->limits.has_timeout = 1;
	t->limits.timeout_s = run_timeout < server->timeout_s ? run_timeout : server->timeout_s;
	if (json_is_integer(mem) && json_integer_value(mem) > 0) {
		t->limits.has_memory = 1;
		t->limits.memory_mb = json_integer_value(mem) < (json_int_t)server->memory_mb
		                              ? (unsigned)json_integer_value(mem)
		                              : server->memory_mb;
	}
	return 0;
}

/* FNV-1a: equal programs hash equal (strcmp decides). */
static unsigned long program_hash(const char *p)
{
	unsigned long h = 14695981039346656037ul;

	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ul;
	return h;
}

/* The request's fields checked as SandboxFusion's model reads them
 * (unknown ones ignored). 0 with the call filled; 1 answered (*code...);
 * -1 out of memory. */
static int read_request(struct ee_run_code *rc, const json_t *req, struct ee_run_code_call *call,
                        unsigned *code, char **text, size_t *len)
{
	const json_t *prog = json_object_get(req, "code"), *lang = json_object_get(req, "language");
	const json_t *in = json_object_get(req, "stdin"), *mem = json_object_get(req, "memory_limit_MB");
	double compile_timeout, run_timeout;
	const char *field = NULL, *msg = NULL;
	char buf[256];

	if (!json_is_object(req))
		return refuse_422(code, text, len, "body", "the body must be a JSON object") < 0 ? -1 : 1;
	if (!json_is_string(prog))
		return refuse_422(code, text, len, "code", "code: a string is required") < 0 ? -1 : 1;
	if (lang && !json_is_null(lang) && !json_is_string(lang))
		return refuse_422(code, text, len, "language", "language: must be a string") < 0 ? -1 : 1;
	if (in && !json_is_null(in) && !json_is_string(in))
		return refuse_422(code, text, len, "stdin", "stdin: must be a string or null") < 0 ? -1 : 1;
	if (seconds_field(req, "compile_timeout", &compile_timeout) < 0)
		return refuse_422(code, text, len, "compile_timeout", "compile_timeout: a number > 0") < 0
		               ? -1
		               : 1;
	if (seconds_field(req, "run_timeout", &run_timeout) < 0)
		return refuse_422(code, text, len, "run_timeout", "run_timeout: a number > 0") < 0 ? -1 : 1;
	if (mem && !json_is_null(mem) &&
	    (!json_is_integer(mem) || (json_integer_value(mem) <= 0 && json_integer_value(mem) != -1)))
		return refuse_422(code, text, len, "memory_limit_MB",
		                  "memory_limit_MB: an integer > 0, or -1") < 0
		               ? -1
		               : 1;
	json_t *script = json_object();
	if (!script)
		return -1;
	if (ee_run_code_read_files(req, script, &field, &msg, buf, sizeof(buf)) < 0) {
		json_decref(script);
		return refuse_422(code, text, len, field, msg) < 0 ? -1 : 1;
	}
	if (lang && json_is_string(lang) && strcmp(json_string_value(lang), "python") != 0) {
		json_decref(script);
		snprintf(buf, sizeof(buf), "language %.64s: execeval runs Python only (\"python\")",
		         json_string_value(lang));
		*code = 200;
		*text = dump(ee_run_code_sandbox_error(buf), len);
		return *text ? 1 : -1;
	}
	int rc_task = make_task(&rc->o->limits, call, req, run_timeout, script);
	json_decref(script); /* the task holds it */
	if (rc_task < 0 || !(call->program = strdup(json_string_value(prog))))
		return -1;
	call->task.stdlib_only = rc->o->task_rules.stdlib_only; /* serve --packages */
	struct ee_limits lim;
	ee_eval_limits(rc->o, &call->task, &lim);
	/* How long it may wait to start: --run-code-deadline, else what keeps
	 * its answer inside its client's wait. verl's client reads for
	 * compile_timeout + run_timeout + 10 s and retries only a 504: the
	 * request starts by that wait less its whole clock and a margin for the
	 * sandbox's start and the answer, or gets its 504 then, while the
	 * client still reads (not a result nobody reads). At most an hour, so a
	 * huge compile_timeout cannot hold a queue place for ever. */
	double wait = rc->cfg.deadline_s > 0 ? rc->cfg.deadline_s : compile_timeout + 10 - ANSWER_MARGIN_S;
	call->wait_s = wait < MAX_DEADLINE ? wait : MAX_DEADLINE;
	call->arrived = now_s();
	call->deadline = call->arrived + call->wait_s;
	call->hash = program_hash(call->program);
	script = call->task.tests[0].script;
	call->solo = json_object_size(json_object_get(script, "files")) > 0 ||
	             json_array_size(json_object_get(script, "fetch")) > 0;
	return 0;
}

/* ---- running ------------------------------------------------------------ */

static void on_outcome(void *ctx, const struct ee_sandbox_outcome *out, const struct ee_stream *s)
{
	struct ee_run_code_call *call = ctx;
	struct facts *f = &call->facts;
	const struct ee_test_result *r = s->tests.results ? &s->tests.results[0] : NULL;

	f->have = 1;
	f->out = ee_text_sanitize(out->out.data ? out->out.data : "", out->out.len, SIZE_MAX, NULL);
	f->err = ee_text_sanitize(out->err.data ? out->err.data : "", out->err.len, SIZE_MAX, NULL);
	f->out_len = out->out.len;
	f->err_len = out->err.len;
	f->out_total = out->out_total;
	f->err_total = out->err_total;
	f->end = out->end;
	f->have_status = out->have_status;
	f->status = out->status;
	f->wall_ms = out->wall_ms;
	if (r && r->have_exit_code) {
		f->have_exit_code = 1;
		f->exit_code = r->exit_code;
	}
	if (r && r->files)
		f->files = json_incref(r->files);
}

static int detail_is(const char *detail, const char *what)
{
	return detail && strcmp(detail, what) == 0;
}

/* The return code SandboxFusion would report, from the record and the
 * facts: a limit's kill is -9, a signal N -N, else the exit code. */
static long return_code(const char *status, const char *detail, const struct facts *f)
{
	if (detail_is(detail, "memory limit") || detail_is(detail, "output overflow") ||
	    detail_is(detail, "process limit") || detail_is(detail, "cpu limit") ||
	    detail_is(detail, "file size limit"))
		return -9;
	if (f->have_exit_code)
		return f->exit_code;
	if (status && strcmp(status, "syntax_error") == 0)
		return 1;
	if (f->have_status && WIFSIGNALED(f->status))
		return -(long)WTERMSIG(f->status);
	if (f->have_status && WIFEXITED(f->status) && WEXITSTATUS(f->status) != 0)
		return WEXITSTATUS(f->status);
	return 1; /* it never reported: the harness was stopped (a blocked scan, a violation) */
}

static json_t *text_or_empty(const char *s)
{
	json_t *v = json_string(s ? s : "");
	return v ? v : json_string("");
}

/* What python3 prints for a program that does not compile, as far as the
 * record knows it: the line (the syntax phase's "line") and its text,
 * stripped as python3 strips it, then the error (detail less "syntax
 * error: "); no caret: the column is not kept. */
static json_t *syntax_stderr(const json_t *rec, const char *program, const char *message)
{
	const json_t *phases = json_object_get(rec, "phases");
	json_int_t line = json_integer_value(json_object_get(json_array_get(phases, 0), "line"));
	const char *p = program ? program : "";
	char text[1200];
	int n = 0;

	for (json_int_t i = 1; i < line && p; i++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (line > 0 && p) {
		p += strspn(p, " \t\f");
		int len = (int)strcspn(p, "\r\n");
		n = snprintf(text, sizeof(text), "  File \"<candidate>\", line %lld\n    %.*s\n",
		             (long long)line, len < 400 ? len : 400, p);
	}
	snprintf(text + n, sizeof(text) - (size_t)n, "%.600s\n", message);
	return text_or_empty(text);
}

/* The 200 answer for a program that ran. */
static json_t *ran_answer(const json_t *rec, const struct facts *f, const char *program)
{
	const char *status = json_string_value(json_object_get(rec, "status"));
	const char *detail = json_string_value(json_object_get(rec, "detail"));
	int timeout = status && strcmp(status, "timeout") == 0;
	long rc = return_code(status, detail, f);
	int overflow = f->end == EE_END_OUTPUT_OVERFLOW;
	int out_cut = f->out_total > f->out_len || (overflow && f->out_total >= f->err_total);
	int err_cut = f->err_total > f->err_len || (overflow && f->err_total > f->out_total);
	json_t *err = text_or_empty(f->err);

	/* A program that never compiled says why on stderr, as python3 would. */
	const char *prefix = "syntax error: ";
	if (status && strcmp(status, "syntax_error") == 0 && json_string_length(err) == 0 && detail) {
		json_decref(err);
		int parse = strncmp(detail, prefix, strlen(prefix)) == 0;
		err = parse ? syntax_stderr(rec, program, detail + strlen(prefix))
		            : syntax_stderr(NULL, NULL, detail);
	}
	json_t *run = json_pack("{s:s, s:f, s:o, s:o, s:o}", "status",
	                        timeout ? "TimeLimitExceeded" : "Finished", "execution_time",
	                        f->wall_ms / 1000.0, "return_code", timeout ? json_null() : json_integer(rc),
	                        "stdout", text_or_empty(f->out), "stderr", err);
	json_t *facts =
	        json_pack("{s:s?, s:O?, s:O?, s:O?, s:b, s:b, s:O*}", "status", status, "detail",
	                  json_object_get(rec, "detail"), "resources", json_object_get(rec, "resources"),
	                  "sandbox_id", json_object_get(rec, "sandbox_id"), "stdout_truncated", out_cut,
	                  "stderr_truncated", err_cut, "coalesced", json_object_get(rec, "coalesced"));
	int ok = !timeout && rc == 0;
	return json_pack("{s:s, s:s, s:n, s:o?, s:n, s:o, s:o?}", "status", ok ? "Success" : "Failed",
	                 "message", "", "compile_result", "run_result", run, "executor_pod_name", "files",
	                 f->files ? json_incref(f->files) : json_object(), "execeval", facts);
}

static void on_record(void *ctx, json_t *rec, double run_s)
{
	struct ee_run_code_call *call = ctx;
	const char *failure = json_string_value(json_object_get(rec, "sandbox_error"));
	json_t *v;
	size_t len;

	(void)run_s;
	int starved = !failure && json_is_true(json_object_get(rec, "infra_error"));
	if (!rec) { /* a forced stop: no outcome to give */
		v = json_pack("{s:s, s:n}", "error", "the server stopped before this program finished; retry",
		              "field");
		char *text = dump(v, &len);
		finish(call, 503, text, len);
		return;
	}
	ee_stats_record(call->rc->stats, json_string_value(json_object_get(rec, "status")));
	if (starved) { /* twice: the host's, not a TimeLimitExceeded of the program's */
		v = ee_run_code_sandbox_error("the host starved the program of CPU twice: its timeout is "
		                              "the busy machine's, not the program's; retry");
	} else if (failure || !call->facts.have) {
		char msg[300];
		/* The engine's own words, never the program. */
		snprintf(msg, sizeof(msg), "sandbox setup failed: %.250s", failure ? failure : "no outcome");
		v = ee_run_code_sandbox_error(msg);
	} else {
		v = ran_answer(rec, &call->facts, call->program);
	}
	json_decref(rec);
	char *text = dump(v, &len);
	finish(call, text ? 200 : 500, text, len);
}

/* ---- several requests of one program, one sandbox ---------------------- */

/* Requests one sandbox runs in turn (harness apart.py); each one's fork,
 * reap and cleanup on the group's clock. A request starts in the group
 * only within GROUP_RELEASE_S of the group's first: a slow or hanging
 * program's requests then go on side by side in sandboxes of their own
 * rather than in turn behind it, and none waits in a group longer than
 * that for its turn. */
#define GROUP_MAX       16
#define APART_SLACK_S   0.5
#define GROUP_RELEASE_S 2.0

/* Where a request waits, with its deadline: at the head, to run alone
 * (its answer is a sandbox of its own's to give, or its group's sandbox
 * never gave one). Its client's clock has run since it arrived. */
static void requeue_alone(struct ee_run_code *rc, struct ee_run_code_call *call)
{
	rc->stats->run_code_reruns++;
	call->solo = 1;
	call->state = CALL_WAITING;
	call->next = rc->head;
	rc->head = call;
	if (!rc->tail)
		rc->tail = call;
	rc->waiting++;
	if (rc->waiting == 1 || call->deadline < rc->earliest)
		rc->earliest = call->deadline;
}

/* What a test run apart reported, with its verdict as a sandbox of its own
 * would decide it: into call->facts and call->verdict; nothing when it is
 * to run again alone (not run, ended by a signal or os._exit, past the
 * cap, an idle timeout: apart.py; a refused fork: whose it was is the
 * single sandbox's to say). */
static void take_apart(struct ee_run_code_call *call, const struct ee_test_result *r, int pids_hit)
{
	const json_t *a = r->apart;
	const json_t *out = json_object_get(a, "stdout"), *err = json_object_get(a, "stderr");
	const json_t *wall = json_object_get(a, "wall_ms"), *cpu = json_object_get(a, "cpu_ms");
	const json_t *rss = json_object_get(a, "rss_kb");

	if (!json_is_object(a) || json_is_true(json_object_get(a, "rerun")) || !json_is_string(out) ||
	    !json_is_string(err) || !json_is_number(wall) || !json_is_number(cpu) || !json_is_integer(rss))
		return;
	int timeout = json_is_true(json_object_get(a, "timeout"));
	struct ee_test_outcome t = { .state = r->state,
		                     .weight = 1.0,
		                     .exited = r->exited,
		                     .denied = r->denied,
		                     .message = r->message };
	struct ee_verdict_in in = {
		.done = 1, .timed_out = timeout, .pids_limit_hit = pids_hit, .tests = &t, .n_tests = 1
	};
	struct ee_verdict v;
	ee_verdict_decide(&in, &v);
	if (pids_hit && v.status != EE_PASS && v.status != EE_TIMEOUT)
		return;
	size_t out_len, err_len;
	char *o = ee_base64_decode(json_string_value(out), json_string_length(out), &out_len);
	char *e = ee_base64_decode(json_string_value(err), json_string_length(err), &err_len);
	struct facts *f = &call->facts;
	if (o && e) {
		f->out = ee_text_sanitize(o, out_len, SIZE_MAX, NULL);
		f->err = ee_text_sanitize(e, err_len, SIZE_MAX, NULL);
	}
	free(o);
	free(e);
	if (!f->out || !f->err)
		return;
	f->out_len = f->out_total = out_len;
	f->err_len = f->err_total = err_len;
	f->end = EE_END_RAN;
	f->wall_ms = json_number_value(wall);
	f->have_exit_code = r->have_exit_code;
	f->exit_code = r->exit_code;
	call->verdict =
	        json_pack("{s:s, s:s?, s:{s:f, s:f, s:O}}", "status", ee_status_name(v.status), "detail",
	                  v.detail[0] ? v.detail : NULL, "resources", "wall_ms", json_number_value(wall),
	                  "cpu_ms", json_number_value(cpu), "peak_rss_kb", rss);
	f->have = call->verdict != NULL;
}

static void group_outcome(void *ctx, const struct ee_sandbox_outcome *out, const struct ee_stream *s)
{
	struct group *g = ctx;

	for (size_t i = 0; i < g->n && s->tests.results; i++)
		take_apart(g->calls[i], &s->tests.results[i], out->cg.pids_max_hits > 0);
}

static void group_free(struct group *g)
{
	ee_task_free(&g->task);
	free(g->calls);
	free(g);
}

static void group_record(void *ctx, json_t *rec, double run_s)
{
	struct group *g = ctx;
	struct ee_run_code *rc = g->rc;
	int failed = !rec || json_object_get(rec, "sandbox_error");
	json_int_t answered = 0; /* by this sandbox: the others run again alone */

	for (size_t i = 0; rec && !failed && i < g->n; i++)
		answered += g->calls[i]->verdict != NULL;
	for (size_t i = 0; i < g->n; i++) {
		struct ee_run_code_call *call = g->calls[i];
		if (!rec || (call->verdict && !failed)) {
			if (rec) {
				json_object_set(call->verdict, "sandbox_id",
				                json_object_get(rec, "sandbox_id"));
				json_object_set_new(call->verdict, "coalesced", json_integer(answered));
				rc->stats->run_code_coalesced++;
			}
			on_record(call, call->verdict ? json_incref(call->verdict) : NULL, run_s);
		} else if (call->abandoned)
			call_free(call);
		else
			requeue_alone(rc, call);
	}
	json_decref(rec);
	group_free(g);
}

/* The group's task: one apart script test per call, each with the clock
 * and the CPU limit a sandbox of its own would have; their sum (and the
 * slack) the sandbox's clock. */
static int group_task(struct group *g)
{
	struct ee_task *t = &g->task;
	const struct ee_task *one = &g->calls[0]->task;
	struct ee_limits lim;
	unsigned long long cpu_soft, cpu_hard;

	ee_eval_limits(g->rc->o, one, &lim);
	ee_limits_cpu(&lim, &cpu_soft, &cpu_hard);
	json_t *script = json_pack("{s:{}, s:[], s:i, s:b, s:I, s:[I,I], s:I}", "files", "fetch", "fetch_cap",
	                           (int)FETCH_CAP, "apart", 1, "timeout_ms",
	                           (json_int_t)ceil(lim.timeout_s * 1000), "cpu_limit", (json_int_t)cpu_soft,
	                           (json_int_t)cpu_hard, "release_ms", (json_int_t)(GROUP_RELEASE_S * 1000));

	int rc = script && script_task(t, g->n) == 0 ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < g->n; i++)
		rc = script_test(&t->tests[i], script, g->calls[i]->task.tests[0].stdin_text);
	json_decref(script);
	if (rc < 0)
		return -1;
	/* Each request's clock and slack, and never more than a sandbox's
	 * clock; what starts before the release fits in that (start_group). */
	double clock = (double)g->n * (lim.timeout_s + APART_SLACK_S);
	t->limits = one->limits;
	t->limits.timeout_s = clock < EE_TIMEOUT_MAX_S ? clock : EE_TIMEOUT_MAX_S;
	return 0;
}

static int same_run(const struct ee_run_code_call *a, const struct ee_run_code_call *b)
{
	const struct ee_task_limits *x = &a->task.limits, *y = &b->task.limits;

	return !b->solo && a->hash == b->hash && x->timeout_s == y->timeout_s &&
	       x->has_memory == y->has_memory && x->memory_mb == y->memory_mb &&
	       strcmp(a->program, b->program) == 0;
}

/* The waiting requests of first's program and limits that are still in
 * time, out of the FIFO behind first, up to max in all. */
static size_t take_alike(struct ee_run_code *rc, struct ee_run_code_call *first,
                         struct ee_run_code_call **calls, size_t max)
{
	double now = now_s();
	size_t n = 0;

	calls[n++] = first;
	for (struct ee_run_code_call **p = &rc->head; *p && n < max;) {
		struct ee_run_code_call *call = *p;
		/* It may start as late as the group's release: still in time then. */
		if (call->deadline < now + GROUP_RELEASE_S || !same_run(first, call)) {
			p = &call->next;
			continue;
		}
		*p = call->next;
		call->next = NULL;
		rc->waiting--;
		calls[n++] = call;
	}
	rc->tail = rc->head;
	while (rc->tail && rc->tail->next)
		rc->tail = rc->tail->next;
	return n;
}

/* first and the requests like it, in one sandbox: 1 when it started (or
 * they went back to wait alone), 0 when first has none like it. */
static int start_group(struct ee_run_code *rc, struct ee_run_code_call *first)
{
	struct ee_limits lim;
	ee_eval_limits(rc->o, &first->task, &lim);
	/* The last request to start (by the release) ends within a sandbox's clock. */
	if (GROUP_RELEASE_S + lim.timeout_s + APART_SLACK_S > EE_TIMEOUT_MAX_S)
		return 0;
	size_t max = rc->cfg.coalesce < GROUP_MAX ? rc->cfg.coalesce : GROUP_MAX;
	if (max < 2)
		return 0;
	struct ee_run_code_call *calls[GROUP_MAX];
	size_t n = take_alike(rc, first, calls, max);
	struct group *g = n > 1 ? calloc(1, sizeof(*g)) : NULL;

	if (n < 2)
		return 0;
	if (g) {
		g->rc = rc;
		g->n = n;
		g->calls = malloc(n * sizeof(*g->calls));
	}
	if (!g || !g->calls || (memcpy(g->calls, calls, n * sizeof(*calls)), group_task(g) < 0)) {
		if (g)
			group_free(g);
		for (size_t i = n; i-- > 0;) /* out of memory: each alone, in order */
			requeue_alone(rc, calls[i]);
		return 1;
	}
	struct ee_candidate cand = {
		/* the group's output cap is each request's */
		.task = &g->task,
		.program = first->program,
		.sample = -1,
		.keep_output = lim.output_cap,
		.on_outcome = group_outcome,
		.outcome_ctx = g,
	};
	for (size_t i = 0; i < n; i++) {
		calls[i]->state = CALL_RUNNING;
		ee_stats_observe(&rc->stats->run_code_wait_s, now_s() - calls[i]->arrived);
	}
	if (ee_dispatch_submit(rc->d, &cand, group_record, g) < 0)
		group_record(g, ee_record_sandbox_error("run_code", "the dispatcher refused it"), 0);
	return 1;
}

/* A sandbox is idle and no /v1 evaluation waits for it. */
static int idle(const struct ee_run_code *rc)
{
	return ee_dispatch_running(rc->d) < rc->cfg.jobs && ee_dispatch_waiting(rc->d) == 0;
}

static struct ee_run_code_call *pop(struct ee_run_code *rc)
{
	struct ee_run_code_call *call = rc->head;

	rc->head = call->next;
	if (!rc->head)
		rc->tail = NULL;
	call->next = NULL;
	rc->waiting--;
	return call;
}

static void expire(struct ee_run_code *rc, struct ee_run_code_call *call)
{
	size_t len;
	char *text = NULL;
	unsigned code;

	answer_504(rc, &code, &text, &len,
	           "no sandbox was free early enough to answer within this request's deadline "
	           "(compile_timeout + run_timeout + 10 s, or --run-code-deadline); retry");
	finish(call, 504, text, len);
}

static void start(struct ee_run_code *rc, struct ee_run_code_call *call)
{
	struct ee_limits lim;

	ee_eval_limits(rc->o, &call->task, &lim);
	struct ee_candidate cand = {
		.task = &call->task,
		.program = call->program,
		.sample = -1,
		.keep_output = lim.output_cap,
		.on_outcome = on_outcome,
		.outcome_ctx = call,
	};
	call->state = CALL_RUNNING;
	ee_stats_observe(&rc->stats->run_code_wait_s, now_s() - call->arrived);
	if (ee_dispatch_submit(rc->d, &cand, on_record, call) < 0)
		on_record(call, ee_record_sandbox_error("run_code", "the dispatcher refused it"), 0);
}

static void pump(void *ctx)
{
	struct ee_run_code *rc = ctx;

	while (rc->head && idle(rc)) {
		struct ee_run_code_call *call = pop(rc);
		if (now_s() > call->deadline)
			expire(rc, call);
		else if (call->solo || rc->cfg.coalesce < 2 || rc->o->backend != EE_BACKEND_NATIVE ||
		         !start_group(rc, call))
			start(rc, call);
	}
}

long ee_run_code_next_ms(const struct ee_run_code *rc)
{
	double now = now_s();

	if (!rc->head)
		return -1;
	return rc->earliest <= now ? 0 : (long)ceil((rc->earliest - now) * 1000);
}

void ee_run_code_tick(struct ee_run_code *rc)
{
	double now = now_s(), next = INFINITY;

	pump(rc);
	if (!rc->head || now < rc->earliest)
		return;
	struct ee_run_code_call *last = NULL;
	for (struct ee_run_code_call **p = &rc->head; *p;) {
		struct ee_run_code_call *call = *p;
		if (now <= call->deadline) {
			next = call->deadline < next ? call->deadline : next;
			last = call;
			p = &call->next;
			continue;
		}
		*p = call->next;
		rc->waiting--;
		call->next = NULL;
		expire(rc, call);
	}
	rc->tail = last;
	rc->earliest = next;
}

int ee_run_code_submit(struct ee_run_code *rc, const char *body, size_t len, ee_run_code_ready ready,
                       void *ctx, struct ee_run_code_call **ret, unsigned *code, char **text,
                       size_t *text_len)
{
	json_error_t jerr;
	/* A raw NUL byte is not JSON, though jansson skips one between tokens. */
	json_t *req = memchr(body, '\0', len) ? NULL : json_loadb(body, len, 0, &jerr);

	if (!req)
		return refuse_422(code, text, text_len, "body", "the body is not JSON");
	struct ee_run_code_call *call = calloc(1, sizeof(*call));
	if (!call) {
		json_decref(req);
		return -1;
	}
	call->rc = rc;
	call->ready = ready;
	call->ctx = ctx;
	int r = read_request(rc, req, call, code, text, text_len);
	size_t cost = len + sizeof(*call);
	json_decref(req);
	if (r != 0) {
		call_free(call);
		return r < 0 ? -1 : 0;
	}
	ee_dispatch_on_idle(rc->d, pump, rc);
	if (rc->waiting >= rc->cfg.queue || ee_budget_charge(rc->budget, NULL, cost) != EE_BUDGET_OK) {
		call_free(call);
		return answer_504(rc, code, text, text_len,
		                  "the /run_code queue is full (--run-code-queue, --max-buffered); retry");
	}
	call->charged = cost;
	call->state = CALL_WAITING;
	if (rc->tail)
		rc->tail->next = call;
	else
		rc->head = call;
	rc->tail = call;
	rc->waiting++;
	if (rc->waiting == 1 || call->deadline < rc->earliest)
		rc->earliest = call->deadline;
	*ret = call;
	pump(rc);
	return 1;
}

void ee_run_code_abandon(struct ee_run_code_call *call)
{
	struct ee_run_code *rc = call->rc;

	if (call->state == CALL_READY) {
		call_free(call);
		return;
	}
	if (call->state == CALL_RUNNING) {
		call->abandoned = 1; /* freed when its record comes (finish) */
		return;
	}
	for (struct ee_run_code_call **p = &rc->head; *p; p = &(*p)->next)
		if (*p == call) {
			*p = call->next;
			rc->waiting--;
			break;
		}
	rc->tail = rc->head;
	while (rc->tail && rc->tail->next)
		rc->tail = rc->tail->next;
	call_free(call);
}

void ee_run_code_drop_waiting(struct ee_run_code *rc)
{
	while (rc->head) {
		struct ee_run_code_call *call = pop(rc);
		size_t len;
		char *text =
		        dump(json_pack("{s:s, s:n}", "error", "the server is shutting down", "field"), &len);
		finish(call, 503, text, len);
	}
}

void ee_run_code_free(struct ee_run_code *rc)
{
	if (!rc)
		return;
	ee_dispatch_on_idle(rc->d, NULL, NULL);
	free(rc);
}
