/* job.c - the job the harness reads from fd 3 (docs/protocol.md). */
#include "harness/harness.h"
#include "protocol/job.h"

#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/buf.h"
#include "base/cleanup.h"
#include "input/task.h"

const char *const ee_default_denylist[] = {
	"os.system",          "os.popen", "subprocess", "_posixsubprocess", "socket", "_socket",
	"requests",           "urllib",   "ctypes",     "_ctypes",          "shutil", "http.client",
	"asyncio.subprocess", NULL,
};

int ee_job_test_clocked(const struct ee_test *t)
{
	return !t->strict && ((t->kind == EE_TEST_IO && !t->script) || t->kind == EE_TEST_CALL);
}

/* A strict program's calls as the job holds them: arguments only. */
static json_t *job_calls(const json_t *calls)
{
	json_t *out = json_array(), *c;
	size_t i;

	json_array_foreach (calls, i, c) {
		json_t *o = json_pack("{s:O, s:O}", "args", json_object_get(c, "args"), "kwargs",
		                      json_object_get(c, "kwargs"));
		if (!o || json_array_append_new(out, o) < 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* One of several /run_code requests run in one sandbox (serve/run_code_group.c). */
static int test_apart(const struct ee_test *t)
{
	return t->script && json_is_true(json_object_get(t->script, "apart"));
}

/* test_timeout_ms (0: none) goes with io and call tests: their own clock;
 * a calibrated call's limit (cal) goes instead, as limit_ms. */
static json_t *job_test(const struct ee_test *t, size_t index, long test_timeout_ms,
                        const struct ee_calibration *cal)
{
	double limit_ms = t->kind == EE_TEST_CALL ? ee_test_limit_ms(t, cal) : 0;
	json_t *o = json_pack("{s:I, s:s, s:s}", "index", (json_int_t)index, "kind",
	                      ee_test_kind_name(t->kind), "visibility", t->hidden ? "hidden" : "public");
	if (!o)
		return NULL;
	int rc = 0;
	if (t->strict && t->calls) /* a check program become calls; expected values stay */
		rc = json_object_set_new(o, "kind", json_string("calls")) |
		     json_object_set_new(o, "fn", json_string(t->fn)) |
		     json_object_set_new(o, "calls", job_calls(t->calls)) |
		     json_object_set_new(o, "strict", json_true());
	else if (t->strict) /* an assert become a call; its code holds the expected value */
		rc = json_object_set_new(o, "kind", json_string("call")) |
		     json_object_set_new(o, "fn", json_string(t->fn)) | json_object_set(o, "args", t->args) |
		     json_object_set(o, "kwargs", t->kwargs) | json_object_set_new(o, "strict", json_true());
	else if (t->kind == EE_TEST_IO && test_apart(t)) /* its stdin comes at its turn */
		rc = json_object_set_new(
		             o, "stdin_len",
		             json_integer((json_int_t)(t->stdin_text ? strlen(t->stdin_text) : 0))) |
		     json_object_set(o, "script", t->script);
	else if (t->kind == EE_TEST_IO)
		rc = json_object_set_new(o, "stdin", json_string(t->stdin_text ? t->stdin_text : "")) |
		     (t->script ? json_object_set(o, "script", t->script) : 0);
	else if (t->kind == EE_TEST_CALL)
		rc = json_object_set_new(o, "fn", json_string(t->fn)) |
		     json_object_set(o, "args", t->args ? t->args : json_array()) |
		     (t->method_of ? json_object_set_new(o, "method_of", json_string(t->method_of)) : 0);
	else
		rc = json_object_set_new(o, "code", json_string(t->code));
	if (limit_ms > 0)
		rc |= json_object_set_new(o, "limit_ms", json_integer((json_int_t)limit_ms));
	else if (test_timeout_ms > 0 && ee_job_test_clocked(t))
		rc |= json_object_set_new(o, "timeout_ms", json_integer(test_timeout_ms));
	/* Expected values (io stdout, call expected) never enter the sandbox. */
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The program as "code", or as "code_b64" when it is not valid UTF-8: the
 * harness then compiles the bytes, and Python decides (a coding
 * declaration, or a SyntaxError) exactly as for a file. */
static int set_program(json_t *job, const char *program)
{
	size_t len = strlen(program);
	json_t *text = json_stringn(program, len);
	if (text)
		return json_object_set_new(job, "code", text);
	char *b64 = ee_base64_encode((const unsigned char *)program, len);
	int rc = b64 ? json_object_set_new(job, "code_b64", json_string(b64)) : -1;
	free(b64);
	return rc;
}

/* Whether a job holds test t: every test, or (supervisors_only) the
 * supervisor's only, whose expected values stay out of the sandbox. */
static int job_holds(const struct ee_test *t, int supervisors_only)
{
	return !supervisors_only || ee_test_judged_by_supervisor(t);
}

/* The kinds the hidden tests will have, as the job names them, once each:
 * the harness decides before candidate code runs whether the import phase
 * runs and unittest is bound. */
static json_t *hidden_kinds(const struct ee_task *task, int supervisors_only)
{
	json_t *kinds = json_array();

	for (size_t i = 0; kinds && i < task->n_tests; i++) {
		const struct ee_test *t = &task->tests[i];
		if (!job_holds(t, supervisors_only))
			continue;
		const char *name = !t->strict ? ee_test_kind_name(t->kind) : t->calls ? "calls" : "call";
		size_t k;
		json_t *x;
		int seen = 0;
		json_array_foreach (kinds, k, x)
			seen |= strcmp(json_string_value(x), name) == 0;
		if (t->hidden && !seen)
			json_array_append_new(kinds, json_string(name));
	}
	return kinds;
}

char *ee_job_build(const struct ee_job_spec *spec, size_t *len)
{
	const struct ee_task *task = spec->task;
	json_t *tests = json_array(), *deny = json_array();
	static const char *const scan_names[] = { "off", "report", "block" };

	/* Hidden tests come after the gate (ee_job_hidden): a candidate whose
	 * public tests fail never holds them, and none holds them at import. */
	/* --judge separate: the candidate's side (serve) holds no test and
	 * no setup, the judge's no candidate code (docs/protocol.md). */
	int serve = spec->role == EE_JOB_SERVE, judge = spec->role == EE_JOB_JUDGE;
	for (size_t i = 0; tests && !serve && i < task->n_tests; i++)
		if (!task->tests[i].hidden && job_holds(&task->tests[i], spec->supervisors_only))
			json_array_append_new(tests,
			                      job_test(&task->tests[i], i, spec->test_timeout_ms, spec->cal));
	for (size_t i = 0; deny && spec->deny_imports && ee_default_denylist[i]; i++)
		json_array_append_new(deny, json_string(ee_default_denylist[i]));
	ee_autodecref json_t *job =
	        json_pack("{s:i, s:s, s:s, s:o, s:o, s:s, s:b, s:I}", "v", 1, "nonce", spec->nonce, "setup",
	                  task->setup && !serve ? task->setup : "", "tests", tests, "deny_imports", deny,
	                  "scan", scan_names[spec->scan], "gate", spec->gate && !serve, "io_output_cap",
	                  (json_int_t)spec->io_output_cap);
	static const char *const role_names[] = { "inline", "serve", "judge" };
	if (!job ||
	    json_object_set_new(job, "hidden_kinds",
	                        serve ? json_array() : hidden_kinds(task, spec->supervisors_only)) < 0 ||
	    /* The judge's tests left out would have run the import phase: it
	     * runs, as inline with them, even when every test held is io. */
	    (spec->supervisors_only && json_object_set_new(job, "import_phase", json_true()) < 0) ||
	    (spec->lint && !judge && json_object_set_new(job, "lint", json_string(ee_lint_py)) < 0) ||
	    (spec->role && json_object_set_new(job, "role", json_string(role_names[spec->role])) < 0) ||
	    (judge && spec->cpu >= 0 && json_object_set_new(job, "cpu", json_integer(spec->cpu)) < 0) ||
	    (task->stdlib_only && json_object_set_new(job, "packages", json_string("stdlib")) < 0) ||
	    /* The name a test may take from the candidate although it is a
	     * builtin's (harness judge.py, _shadowing): the task's, never the
	     * candidate's choice. */
	    (!serve && task->entry_point && task->entry_point[0] &&
	     json_object_set_new(job, "entry_point", json_string(task->entry_point)) < 0) ||
	    set_program(job, judge ? "" : spec->program) < 0)
		return NULL;
	char *text = json_dumps(job, JSON_COMPACT);
	if (text)
		*len = strlen(text);
	return text;
}

char *ee_job_hidden(const struct ee_task *task, long test_timeout_ms, const struct ee_calibration *cal,
                    size_t *len)
{
	return ee_job_hidden_of(task, 0, test_timeout_ms, cal, len);
}

char *ee_job_hidden_of(const struct ee_task *task, int supervisors_only, long test_timeout_ms,
                       const struct ee_calibration *cal, size_t *len)
{
	json_t *tests = json_array();

	for (size_t i = 0; tests && i < task->n_tests; i++)
		if (task->tests[i].hidden && job_holds(&task->tests[i], supervisors_only))
			json_array_append_new(tests, job_test(&task->tests[i], i, test_timeout_ms, cal));
	ee_autodecref json_t *o = json_pack("{s:o}", "tests", tests);
	ee_autofree char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	if (!text)
		return NULL;
	/* 'c', then the netstring: "c<len>:<json>," */
	size_t n = strlen(text), room = n + 32;
	char *out = malloc(room);
	if (out) {
		int head = snprintf(out, room, "c%zu:", n);
		memcpy(out + head, text, n);
		out[head + n] = ',';
		out[head + n + 1] = '\0';
		*len = (size_t)head + n + 1;
	}
	return out;
}

int ee_job_apart_stdins(const struct ee_task *task, char **out, size_t *len)
{
	size_t n = 0;

	for (size_t i = 0; i < task->n_tests; i++)
		if (test_apart(&task->tests[i]) && task->tests[i].stdin_text)
			n += strlen(task->tests[i].stdin_text);
	*out = NULL;
	*len = n;
	if (n == 0) /* none apart, or all their stdins empty: nothing for the gate */
		return 0;
	char *p = *out = malloc(n);
	for (size_t i = 0; p && i < task->n_tests; i++) {
		const char *text = task->tests[i].stdin_text;
		if (test_apart(&task->tests[i]) && text) {
			size_t k = strlen(text);
			memcpy(p, text, k);
			p += k;
		}
	}
	return *out ? 0 : -1;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Whether t starts with needle n (which has no whitespace), t's
 * whitespace skipped. */
static int matches_at(const char *t, const char *n)
{
	for (; *n; t++, n++) {
		while (is_blank(*t))
			t++;
		if (*t != *n) /* the end of t too */
			return 0;
	}
	return 1;
}

static int contains_squeezed(const char *text, const char *needle)
{
	for (; needle[0] && *text; text++)
		if (*text == needle[0] && matches_at(text, needle))
			return 1;
	return 0;
}

/* Appends v as Python source (no whitespace), strings in quote q. */
static int render(struct ee_buf *b, const json_t *v, char q, int depth)
{
	if (depth > 100)
		return -1;
	if (json_is_null(v))
		return ee_buf_append(b, "None", 4);
	if (json_is_boolean(v))
		return json_is_true(v) ? ee_buf_append(b, "True", 4) : ee_buf_append(b, "False", 5);
	if (json_is_string(v)) {
		const char *p = json_string_value(v);
		size_t n = json_string_length(v);
		int rc = ee_buf_append(b, &q, 1);
		for (size_t i = 0; rc == 0 && i < n; i++)
			if (!is_blank(p[i]))
				rc = ee_buf_append(b, &p[i], 1);
		return rc ? rc : ee_buf_append(b, &q, 1);
	}
	if (!json_is_object(v) || json_object_size(v) != 1)
		return -1;
	void *it = json_object_iter((json_t *)v);
	const char *tag = json_object_iter_key(it);
	const json_t *inner = json_object_iter_value(it);
	if (json_is_string(inner))
		return ee_buf_append(b, json_string_value(inner), json_string_length(inner));
	static const struct {
		const char *tag, *open, *close;
		int pairs;     /* items are [key, value] */
		int comma_one; /* (x,) */
	} shapes[] = { { "list", "[", "]", 0, 0 },
		       { "tuple", "(", ")", 0, 1 },
		       { "dict", "{", "}", 1, 0 },
		       { "set", "{", "}", 0, 0 },
		       { "frozenset", "frozenset({", "})", 0, 0 } };
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		if (strcmp(tag, shapes[s].tag) != 0)
			continue;
		int rc = ee_buf_append(b, shapes[s].open, strlen(shapes[s].open));
		size_t i;
		json_t *x;
		json_array_foreach (inner, i, x) {
			if (rc == 0 && i > 0)
				rc = ee_buf_append(b, ",", 1);
			if (rc == 0 && shapes[s].pairs)
				rc = render(b, json_array_get(x, 0), q, depth + 1) |
				     ee_buf_append(b, ":", 1) | render(b, json_array_get(x, 1), q, depth + 1);
			else if (rc == 0)
				rc = render(b, x, q, depth + 1);
		}
		if (rc == 0 && shapes[s].comma_one && json_array_size(inner) == 1)
			rc = ee_buf_append(b, ",", 1);
		return rc ? rc : ee_buf_append(b, shapes[s].close, strlen(shapes[s].close));
	}
	return -1;
}

/* Whether the text of literal v (as Python source, either quote) is in
 * text, whitespace ignored. */
static int literal_in(const json_t *v, const char *text)
{
	for (int k = 0; k < 2; k++) {
		struct ee_buf b;
		ee_buf_init(&b, 1u << 20);
		int rc = render(&b, v, k ? '"' : '\'', 0);
		int found = rc == 0 && b.data && contains_squeezed(text, b.data);
		ee_buf_free(&b);
		if (found)
			return 1;
	}
	return 0;
}

/* Whether any of strict test t's expected literals is in text. */
static int expected_in(const struct ee_test *t, const char *text)
{
	size_t i;
	json_t *c;

	if (!text || !text[0])
		return 0;
	if (!t->calls)
		return literal_in(t->expected, text);
	json_array_foreach (t->calls, i, c)
		if (literal_in(json_object_get(c, "expected"), text))
			return 1;
	return 0;
}

int ee_job_expected_visible(const struct ee_task *task, size_t index)
{
	const struct ee_test *t = &task->tests[index];

	if (!t->strict)
		return 0;
	if (expected_in(t, task->setup))
		return 1;
	for (size_t i = 0; i < task->n_tests; i++) {
		const struct ee_test *u = &task->tests[i];
		/* In the sandbox while t runs: code sent as code, public from
		 * the start, hidden only after the gate (so with hidden t). */
		if (i != index && !u->strict && u->code && (!u->hidden || t->hidden) &&
		    (u->kind == EE_TEST_ASSERT || u->kind == EE_TEST_PROGRAM ||
		     u->kind == EE_TEST_UNITTEST) &&
		    expected_in(t, u->code))
			return 1;
	}
	return 0;
}
