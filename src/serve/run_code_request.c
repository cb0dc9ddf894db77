/* run_code_request.c - a /run_code request's fields checked as
 * SandboxFusion's model reads them, into its call's one-test script task
 * (see run_code_int.h). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/evaluate.h"
#include "input/task.h"
#include "serve/run_code_int.h"

/* What a request may bring: written files, decoded, in total; files to
 * read back, in number (their bytes: EE_RC_FETCH_CAP); a path's length. */
#define FILES_CAP       (8u << 20)
#define FETCH_MAX       64
#define PATH_MAX_LEN    255
#define DEFAULT_TIMEOUT 10.0
#define MAX_DEADLINE    3600.0
#define ANSWER_MARGIN_S 1.0 /* a sandbox's start and the answer's way back */

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
	json_object_set_new(script, "fetch_cap", json_integer(EE_RC_FETCH_CAP));
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

/* A task of n script tests (filled by ee_rc_script_test): no prompt, no entry
 * point, the task id "run_code". */
int ee_rc_script_task(struct ee_task *t, size_t n)
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
int ee_rc_script_test(struct ee_test *test, json_t *script, const char *stdin_text)
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

	if (ee_rc_script_task(t, 1) < 0 ||
	    ee_rc_script_test(&t->tests[0], script, json_is_string(in) ? json_string_value(in) : "") < 0)
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
int ee_rc_read_request(struct ee_run_code *rc, const json_t *req, struct ee_run_code_call *call,
                       unsigned *code, char **text, size_t *len)
{
	const json_t *prog = json_object_get(req, "code"), *lang = json_object_get(req, "language");
	const json_t *in = json_object_get(req, "stdin"), *mem = json_object_get(req, "memory_limit_MB");
	double compile_timeout, run_timeout;
	const char *field = NULL, *msg = NULL;
	char buf[256];

	if (!json_is_object(req))
		return ee_rc_refuse_422(code, text, len, "body", "the body must be a JSON object") < 0 ? -1
		                                                                                       : 1;
	if (!json_is_string(prog))
		return ee_rc_refuse_422(code, text, len, "code", "code: a string is required") < 0 ? -1 : 1;
	if (lang && !json_is_null(lang) && !json_is_string(lang))
		return ee_rc_refuse_422(code, text, len, "language", "language: must be a string") < 0 ? -1
		                                                                                       : 1;
	if (in && !json_is_null(in) && !json_is_string(in))
		return ee_rc_refuse_422(code, text, len, "stdin", "stdin: must be a string or null") < 0 ? -1
		                                                                                         : 1;
	if (seconds_field(req, "compile_timeout", &compile_timeout) < 0)
		return ee_rc_refuse_422(code, text, len, "compile_timeout", "compile_timeout: a number > 0") <
		                       0
		               ? -1
		               : 1;
	if (seconds_field(req, "run_timeout", &run_timeout) < 0)
		return ee_rc_refuse_422(code, text, len, "run_timeout", "run_timeout: a number > 0") < 0 ? -1
		                                                                                         : 1;
	if (mem && !json_is_null(mem) &&
	    (!json_is_integer(mem) || (json_integer_value(mem) <= 0 && json_integer_value(mem) != -1)))
		return ee_rc_refuse_422(code, text, len, "memory_limit_MB",
		                        "memory_limit_MB: an integer > 0, or -1") < 0
		               ? -1
		               : 1;
	json_t *script = json_object();
	if (!script)
		return -1;
	if (ee_run_code_read_files(req, script, &field, &msg, buf, sizeof(buf)) < 0) {
		json_decref(script);
		return ee_rc_refuse_422(code, text, len, field, msg) < 0 ? -1 : 1;
	}
	if (lang && json_is_string(lang) && strcmp(json_string_value(lang), "python") != 0) {
		json_decref(script);
		snprintf(buf, sizeof(buf), "language %.64s: execeval runs Python only (\"python\")",
		         json_string_value(lang));
		*code = 200;
		*text = ee_rc_dump(ee_run_code_sandbox_error(buf), len);
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
	call->arrived = ee_rc_now();
	call->deadline = call->arrived + call->wait_s;
	call->hash = program_hash(call->program);
	script = call->task.tests[0].script;
	call->solo = json_object_size(json_object_get(script, "files")) > 0 ||
	             json_array_size(json_object_get(script, "fetch")) > 0;
	return 0;
}
