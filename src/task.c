/* task.c - reading tasks and samples from JSON (see task.h).
 *
 * Theory of operation: every field goes through one of a few checked getters
 * (a required or optional string, an id, a number under a rule, one of a list
 * of names), each of which either stores a copy or fails with a message of
 * the form "where: path: expected X, got Y". A parse context carries `where`
 * ("file:line") and the path prefix ("tests[2]." or "limits."), so the
 * getters never build messages themselves. The three task formats only
 * differ in which getters they call; all of them fill the same struct, and
 * any string left unset becomes "" at the end. On error the half-built task
 * is freed and the caller's struct stays zeroed.
 */
#include "task.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "jsonfield.h"
#include "pyliteral.h"

/* Setup joined from MBPP's test_imports and test_setup_code stays below this. */
#define SETUP_CAP (16u << 20)

static const char *const kind_names[] = { "assert", "io", "call", "program", "unittest" };
static const char *const tier_names[] = { "canonical", "edge", "property" };
static const char *const visibility_names[] = { "public", "hidden" };
static const char *const source_names[] = { "completion", "generation", "code" };
/* The keys a native task, its tests (by kind) and its limits may have. */
static const char *const task_keys[] = { "task_id", "class", "prompt", "entry_point",
	                                 "setup",   "tests", "limits" };
static const char *const limits_keys[] = { "timeout_s", "memory_mb", "procs", "output_cap" };
#define TEST_COMMON "kind", "weight", "tier", "visibility"
static const char *const code_test_keys[] = { TEST_COMMON, "code" };
static const char *const io_test_keys[] = { TEST_COMMON, "stdin", "stdout", "float_tol" };
static const char *const call_test_keys[] = { TEST_COMMON, "fn", "args", "expected", "float_tol" };
static const char *const test_kind_what[] = { "an assert test", "an io test", "a call test", "a program test",
	                                      "a unittest test" };
/* Sample fields with a meaning; every other field goes to extra. */
static const char *const sample_known[] = { "task_id",    "sample", "model",   "completion",
	                                    "generation", "code",   "solution" };
/* The fields a sample's text may come from, and the source each one means:
 * "solution" is EvalPlus's name for a complete program. */
static const char *const source_fields[] = { "completion", "generation", "code", "solution" };
static const int source_of[] = { EE_SAMPLE_COMPLETION, EE_SAMPLE_GENERATION, EE_SAMPLE_CODE, EE_SAMPLE_CODE };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* <limits.h> is shadowed by src/limits.h under -Isrc, hence these. */
#define UNSIGNED_MAX ((unsigned)-1)
#define LONG_MAXIMUM ((long)((unsigned long)-1 / 2))

/* ---- Field rules ---------------------------------------------------------- */

static const struct ee_jf_num_rule positive = { 0, 0, 0, "a number > 0" };
static const struct ee_jf_num_rule non_negative = { 0, 1, 0, "a number >= 0" };
static const struct ee_jf_num_rule whole_positive = { 1, 1, 1, "a whole number > 0" };

/* Where a message says nothing better. */
static struct ee_jf ctx_make(const char *where, struct ee_err *err)
{
	return ee_jf_make(where ? where : "input", err);
}

/* ---- Tests ---------------------------------------------------------------- */

static void test_init(struct ee_test *t, int kind, int hidden)
{
	t->kind = kind;
	t->hidden = hidden;
	t->tier = EE_TIER_CANONICAL;
	t->weight = 1.0;
	t->float_tol = -1.0;
}

static void test_free(struct ee_test *t)
{
	free(t->code);
	free(t->stdin_text);
	free(t->stdout_text);
	free(t->fn);
	json_decref(t->args);
	json_decref(t->expected);
	json_decref(t->kwargs);
	json_decref(t->calls);
}

static int parse_io(const struct ee_jf *c, const json_t *obj, struct ee_test *t)
{
	if (ee_jf_str(c, obj, "stdout", 1, NULL, &t->stdout_text) < 0 ||
	    ee_jf_str(c, obj, "stdin", 0, "", &t->stdin_text) < 0)
		return -1;
	return ee_jf_num(c, obj, "float_tol", &non_negative, &t->float_tol, NULL);
}

static int parse_call(const struct ee_jf *c, const json_t *obj, struct ee_test *t)
{
	json_t *args;

	if (ee_jf_name(c, obj, "fn", &t->fn) < 0 || ee_jf_array(c, obj, "args", 0, "an array", &args) < 0)
		return -1;
	t->args = args ? json_incref(args) : json_array();
	if (!t->args)
		return ee_jf_oom(c);
	t->expected = json_object_get(obj, "expected");
	if (!t->expected)
		return ee_jf_fail(c, "expected", "missing (expected any JSON value, null included)");
	json_incref(t->expected);
	return ee_jf_num(c, obj, "float_tol", &non_negative, &t->float_tol, NULL);
}

static int parse_test(const struct ee_jf *parent, const json_t *obj, size_t i, struct ee_test *t)
{
	char name[32];
	struct ee_jf c = ee_jf_sub(parent, ee_jf_elem("tests", i, name, sizeof(name)));

	if (!json_is_object(obj))
		return ee_jf_fail(parent, name, "expected an object, got %s", ee_jf_type_name(obj));
	test_init(t, 0, 0);
	if (ee_jf_enum(&c, obj, "kind", kind_names, COUNT(kind_names), -1, &t->kind) < 0 ||
	    ee_jf_num(&c, obj, "weight", &positive, &t->weight, NULL) < 0 ||
	    ee_jf_enum(&c, obj, "tier", tier_names, COUNT(tier_names), EE_TIER_CANONICAL, &t->tier) < 0 ||
	    ee_jf_enum(&c, obj, "visibility", visibility_names, COUNT(visibility_names), 0, &t->hidden) < 0)
		return -1;
	switch (t->kind) {
	case EE_TEST_IO:
		return ee_jf_known_keys(&c, obj, io_test_keys, COUNT(io_test_keys), test_kind_what[t->kind]) <
		                       0
		               ? -1
		               : parse_io(&c, obj, t);
	case EE_TEST_CALL:
		return ee_jf_known_keys(&c, obj, call_test_keys, COUNT(call_test_keys),
		                        test_kind_what[t->kind]) < 0
		               ? -1
		               : parse_call(&c, obj, t);
	default:
		if (ee_jf_known_keys(&c, obj, code_test_keys, COUNT(code_test_keys),
		                     test_kind_what[t->kind]) < 0)
			return -1;
		return ee_jf_str(&c, obj, "code", 1, NULL, &t->code);
	}
}

/* Allocates n zeroed tests, so ee_task_free can run at any point after. */
static int alloc_tests(const struct ee_jf *c, struct ee_task *t, size_t n)
{
	t->tests = calloc(n, sizeof(*t->tests));
	if (!t->tests)
		return ee_jf_oom(c);
	t->n_tests = n;
	return 0;
}

/* ---- Limits --------------------------------------------------------------- */

static unsigned to_uint(double d)
{
	return d >= (double)UNSIGNED_MAX ? UNSIGNED_MAX : (unsigned)d;
}

static size_t to_size(double d)
{
	return d >= (double)SIZE_MAX ? SIZE_MAX : (size_t)d;
}

/* Recorded as given; clamping to the host's bounds happens in limits.c. */
static int parse_limits(const struct ee_jf *parent, const json_t *obj, struct ee_task_limits *lim)
{
	const json_t *v = json_object_get(obj, "limits");
	struct ee_jf c = ee_jf_sub(parent, "limits");
	double mem = 0, procs = 0, cap = 0;

	if (!v)
		return 0;
	if (!json_is_object(v))
		return ee_jf_fail(parent, "limits", "expected an object, got %s", ee_jf_type_name(v));
	if (ee_jf_known_keys(&c, v, limits_keys, COUNT(limits_keys), "limits") < 0)
		return -1;
	if (ee_jf_num(&c, v, "timeout_s", &positive, &lim->timeout_s, &lim->has_timeout) < 0 ||
	    ee_jf_num(&c, v, "memory_mb", &whole_positive, &mem, &lim->has_memory) < 0 ||
	    ee_jf_num(&c, v, "procs", &whole_positive, &procs, &lim->has_procs) < 0 ||
	    ee_jf_num(&c, v, "output_cap", &whole_positive, &cap, &lim->has_output_cap) < 0)
		return -1;
	lim->memory_mb = to_uint(mem);
	lim->procs = to_uint(procs);
	lim->output_cap = to_size(cap);
	return 0;
}

int ee_task_limits_from_json(const json_t *obj, const char *where, struct ee_task_limits *ret,
                             struct ee_err *err)
{
	struct ee_jf c = ctx_make(where, err);
	struct ee_task_limits lim;

	memset(&lim, 0, sizeof(lim));
	if (parse_limits(&c, obj, &lim) < 0)
		return -1;
	*ret = lim;
	return 0;
}

/* ---- Formats -------------------------------------------------------------- */

static int parse_native(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t)
{
	json_t *tests;

	if (ee_jf_known_keys(c, obj, task_keys, COUNT(task_keys), "a task") < 0 ||
	    ee_jf_str(c, obj, "prompt", 0, NULL, &t->prompt) < 0 ||
	    ee_jf_str(c, obj, "entry_point", 0, NULL, &t->entry_point) < 0 ||
	    ee_jf_str(c, obj, "setup", 0, NULL, &t->setup) < 0 ||
	    ee_jf_array(c, obj, "tests", 1, "a non-empty array of objects", &tests) < 0 ||
	    alloc_tests(c, t, json_array_size(tests)) < 0)
		return -1;
	for (size_t i = 0; i < t->n_tests; i++)
		if (parse_test(c, json_array_get(tests, i), i, &t->tests[i]) < 0)
			return -1;
	return parse_limits(c, obj, &t->limits);
}

/* HumanEval's test defines check(candidate); running it is the one test. */
static int parse_humaneval(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t)
{
	char *test = NULL;
	int rc = -1;

	if (ee_jf_str(c, obj, "prompt", 0, NULL, &t->prompt) < 0 ||
	    ee_jf_name(c, obj, "entry_point", &t->entry_point) < 0 ||
	    ee_jf_str(c, obj, "test", 1, NULL, &test) < 0 || alloc_tests(c, t, 1) < 0)
		goto out;
	test_init(&t->tests[0], EE_TEST_PROGRAM, 0);
	if (asprintf(&t->tests[0].code, "%s\ncheck(%s)\n", test, t->entry_point) < 0) {
		t->tests[0].code = NULL;
		ee_jf_oom(c);
		goto out;
	}
	rc = 0;
out:
	free(test);
	return rc;
}

/* Borrows element i of an array that must hold strings. */
static int str_elem(const struct ee_jf *c, const json_t *arr, const char *key, size_t i, const char **ret)
{
	char name[64];

	return ee_jf_str_check(c, ee_jf_elem(key, i, name, sizeof(name)), json_array_get(arr, i), ret);
}

/* Appends one assert test per element of list (may be NULL) at *n. */
static int add_asserts(const struct ee_jf *c, const json_t *list, const char *key, int hidden,
                       struct ee_task *t, size_t *n)
{
	for (size_t i = 0; i < json_array_size(list); i++) {
		struct ee_test *test = &t->tests[(*n)++];
		const char *s;

		test_init(test, EE_TEST_ASSERT, hidden);
		if (str_elem(c, list, key, i, &s) < 0 || ee_jf_strdup(c, s, &test->code) < 0)
			return -1;
	}
	return 0;
}

static int append_line(const struct ee_jf *c, struct ee_buf *b, const char *s)
{
	if ((b->len && ee_buf_append(b, "\n", 1) < 0) || ee_buf_append(b, s, strlen(s)) < 0)
		return b->oom ? ee_jf_fail(c, "setup", "out of memory")
		              : ee_jf_fail(c, "setup", "longer than %u bytes", SETUP_CAP);
	return 0;
}

/* setup = sanitized MBPP's test_imports, one a line, then test_setup_code. */
static int mbpp_setup(const struct ee_jf *c, const json_t *obj, char **ret)
{
	json_t *imports;
	const json_t *code = json_object_get(obj, "test_setup_code");
	const char *s = "";
	struct ee_buf b;
	int rc = -1;

	ee_buf_init(&b, SETUP_CAP);
	if (ee_jf_array(c, obj, "test_imports", 0, "an array of strings", &imports) < 0 ||
	    (code && ee_jf_str_check(c, "test_setup_code", code, &s) < 0))
		goto out;
	for (size_t i = 0; i < json_array_size(imports); i++) {
		const char *line;
		if (str_elem(c, imports, "test_imports", i, &line) < 0 || append_line(c, &b, line) < 0)
			goto out;
	}
	if (*s && append_line(c, &b, s) < 0)
		goto out;
	rc = ee_jf_strdup(c, b.data ? b.data : "", ret);
out:
	ee_buf_free(&b);
	return rc;
}

static int parse_mbpp(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t)
{
	json_t *pub, *hidden;
	size_t n = 0;
	/* The original names the problem statement "text", sanitized "prompt". */
	const char *prompt_key = json_object_get(obj, "text") ? "text" : "prompt";

	if (ee_jf_str(c, obj, prompt_key, 0, NULL, &t->prompt) < 0 || mbpp_setup(c, obj, &t->setup) < 0 ||
	    ee_jf_array(c, obj, "test_list", 1, "a non-empty array of strings", &pub) < 0 ||
	    ee_jf_array(c, obj, "challenge_test_list", 0, "an array of strings", &hidden) < 0)
		return -1;
	/* The standard protocol scores test_list only; challenge tests on
	 * request. Left out, they are still checked: bad data is an error. */
	for (size_t i = 0; i < json_array_size(hidden); i++) {
		const char *s;
		if (str_elem(c, hidden, "challenge_test_list", i, &s) < 0)
			return -1;
	}
	if (!(opts & EE_TASK_MBPP_CHALLENGE))
		hidden = NULL;
	if (alloc_tests(c, t, json_array_size(pub) + json_array_size(hidden)) < 0 ||
	    add_asserts(c, pub, "test_list", 0, t, &n) < 0 ||
	    add_asserts(c, hidden, "challenge_test_list", 1, t, &n) < 0)
		return -1;
	return 0;
}

/* ---- Tasks ---------------------------------------------------------------- */

int ee_task_detect(const json_t *obj)
{
	if (!json_is_object(obj))
		return -1;
	if (json_object_get(obj, "tests"))
		return EE_FORMAT_NATIVE;
	if (json_object_get(obj, "test") && json_object_get(obj, "entry_point"))
		return EE_FORMAT_HUMANEVAL;
	if (json_object_get(obj, "test_list"))
		return EE_FORMAT_MBPP;
	return -1;
}

static int fill_empty(const struct ee_jf *c, char **s)
{
	return *s ? 0 : ee_jf_strdup(c, "", s);
}

/* The strings a format did not set become "". */
static int fill_defaults(const struct ee_jf *c, struct ee_task *t)
{
	if (fill_empty(c, &t->class_name) < 0 || fill_empty(c, &t->prompt) < 0 ||
	    fill_empty(c, &t->entry_point) < 0 || fill_empty(c, &t->setup) < 0)
		return -1;
	return 0;
}

static int check_object(const struct ee_jf *c, const json_t *obj)
{
	if (json_is_object(obj))
		return 0;
	return ee_jf_fail(c, "", "expected a JSON object, got %s", obj ? ee_jf_type_name(obj) : "nothing");
}

static int parse_task(const struct ee_jf *c, const json_t *obj, int format, struct ee_task *t)
{
	static int (*const parsers[])(const struct ee_jf *, const json_t *, unsigned, struct ee_task *) = {
		[EE_FORMAT_NATIVE] = parse_native,
		[EE_FORMAT_HUMANEVAL] = parse_humaneval,
		[EE_FORMAT_MBPP] = parse_mbpp,
	};

	if (check_object(c, obj) < 0)
		return -1;
	unsigned opts = format > 0 ? (unsigned)format & ~EE_TASK_FORMAT_MASK : 0;
	if (format > 0)
		format &= (int)EE_TASK_FORMAT_MASK;
	if (format == EE_FORMAT_AUTO && (format = ee_task_detect(obj)) < 0)
		return ee_jf_fail(c, "",
		                  "cannot tell the format: expected 'tests' (native), "
		                  "'test'+'entry_point' (HumanEval) or 'test_list' (MBPP)");
	if (format < 0 || format >= (int)COUNT(parsers) || !parsers[format])
		return ee_jf_fail(c, "", "unknown task format %d", format);
	t->format = format;
	if (ee_jf_id(c, obj, "task_id", &t->task_id) < 0 ||
	    ee_jf_str(c, obj, "class", 0, NULL, &t->class_name) < 0 || parsers[format](c, obj, opts, t) < 0)
		return -1;
	return fill_defaults(c, t);
}

int ee_task_from_json(const json_t *obj, int format, const char *where, struct ee_task *ret,
                      struct ee_err *err)
{
	struct ee_jf c = ctx_make(where, err);
	struct ee_task t = { 0 };

	memset(ret, 0, sizeof(*ret));
	if (parse_task(&c, obj, format, &t) < 0) {
		ee_task_free(&t);
		return -1;
	}
	*ret = t;
	return 0;
}

int ee_task_from_asserts(const char *const *asserts, size_t n, struct ee_task *ret, struct ee_err *err)
{
	struct ee_jf c = ctx_make("--assert", err);
	struct ee_task t = { .format = EE_FORMAT_NATIVE };

	memset(ret, 0, sizeof(*ret));
	if (n == 0)
		return ee_fail(err, EE_ERR_USAGE, "--assert: expected at least one assertion, got none");
	if (ee_jf_strdup(&c, "run", &t.task_id) < 0 || alloc_tests(&c, &t, n) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		test_init(&t.tests[i], EE_TEST_ASSERT, 0);
		if (!asserts[i]) {
			ee_fail(err, EE_ERR_USAGE, "--assert: assertion %zu is missing", i + 1);
			goto fail;
		}
		if (ee_jf_strdup(&c, asserts[i], &t.tests[i].code) < 0)
			goto fail;
	}
	if (fill_defaults(&c, &t) < 0)
		goto fail;
	*ret = t;
	return 0;
fail:
	ee_task_free(&t);
	return -1;
}

void ee_task_free(struct ee_task *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->tests && i < t->n_tests; i++)
		test_free(&t->tests[i]);
	free(t->tests);
	free(t->task_id);
	free(t->class_name);
	free(t->prompt);
	free(t->entry_point);
	free(t->setup);
	memset(t, 0, sizeof(*t));
}

static const char *name_of(const char *const *names, size_t n, int i)
{
	return i >= 0 && (size_t)i < n ? names[i] : "unknown";
}

const char *ee_test_kind_name(int kind)
{
	return name_of(kind_names, COUNT(kind_names), kind);
}

const char *ee_tier_name(int tier)
{
	return name_of(tier_names, COUNT(tier_names), tier);
}

/* ---- Samples -------------------------------------------------------------- */

const char *ee_sample_source_name(int source)
{
	return name_of(source_names, COUNT(source_names), source);
}

static int parse_index(const struct ee_jf *c, const json_t *obj, long *ret)
{
	json_int_t i = -1;

	if (ee_jf_int(c, obj, "sample", 0, LONG_MAXIMUM, "an integer >= 0", &i) < 0)
		return -1;
	*ret = (long)i;
	return 0;
}

/* "a", "a and b", "a, b and c": the source fields found, for the message. */
static const char *found_list(const int *found, size_t n, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " and " : ", ";
		len += (size_t)snprintf(buf + len, size - len, "%s%s", sep, source_fields[found[i]]);
	}
	return buf;
}

/* Exactly one of completion, generation, code, solution, and a string. */
static int parse_source(const struct ee_jf *c, const json_t *obj, struct ee_sample *s)
{
	int found[COUNT(source_fields)];
	size_t n = 0;
	const char *text = NULL;
	char names[64], list[80];

	for (size_t i = 0; i < COUNT(source_fields); i++) {
		const json_t *v = json_object_get(obj, source_fields[i]);
		if (!v)
			continue;
		if (ee_jf_str_check(c, source_fields[i], v, &text) < 0)
			return -1;
		found[n++] = (int)i;
	}
	ee_jf_join_names(source_fields, COUNT(source_fields), names, sizeof(names));
	if (n != 1)
		return ee_jf_fail(c, names, "expected exactly one of these, found %s",
		                  n ? found_list(found, n, list, sizeof(list)) : "none");
	s->source = source_of[found[0]];
	return ee_jf_strdup(c, text, &s->text);
}

static int sample_extra(const struct ee_jf *c, const json_t *obj, json_t **ret)
{
	*ret = json_deep_copy(obj);
	if (!*ret)
		return ee_jf_oom(c);
	for (size_t i = 0; i < COUNT(sample_known); i++)
		json_object_del(*ret, sample_known[i]);
	return 0;
}

static int parse_sample(const struct ee_jf *c, const json_t *obj, struct ee_sample *s)
{
	if (check_object(c, obj) < 0)
		return -1;
	if (ee_jf_id(c, obj, "task_id", &s->task_id) < 0 || parse_index(c, obj, &s->index) < 0 ||
	    ee_jf_str(c, obj, "model", 0, NULL, &s->model) < 0 || parse_source(c, obj, s) < 0)
		return -1;
	return sample_extra(c, obj, &s->extra);
}

int ee_sample_from_json(const json_t *obj, const char *where, struct ee_sample *ret, struct ee_err *err)
{
	struct ee_jf c = ctx_make(where, err);
	struct ee_sample s = { .index = -1 };

	memset(ret, 0, sizeof(*ret));
	if (parse_sample(&c, obj, &s) < 0) {
		ee_sample_free(&s);
		return -1;
	}
	*ret = s;
	return 0;
}

void ee_sample_free(struct ee_sample *s)
{
	if (!s)
		return;
	free(s->task_id);
	free(s->model);
	free(s->text);
	json_decref(s->extra);
	memset(s, 0, sizeof(*s));
}

/* ---- Strict asserts ------------------------------------------------------- */

/* A program test of the check-program shape: 1 converted, 0 left alone. */
static int strict_program(struct ee_test *test)
{
	struct ee_pyprogram prog;
	int rc = ee_pyprogram_convert(test->code, &prog);

	if (rc <= 0)
		return rc;
	free(test->fn);
	json_decref(test->calls);
	test->fn = prog.fn;
	test->calls = prog.calls;
	test->strict = 1;
	return 1;
}

/* An assert test of the literal shape: 1 converted, 0 left alone. */
static int strict_assert(struct ee_test *test)
{
	struct ee_pycall call;
	int rc = ee_pyassert_convert(test->code, &call);

	if (rc <= 0)
		return rc;
	json_decref(test->args);
	json_decref(test->kwargs);
	json_decref(test->expected);
	free(test->fn);
	test->fn = call.fn;
	test->args = call.args;
	test->kwargs = call.kwargs;
	test->expected = call.expected;
	test->strict = 1;
	return 1;
}

int ee_task_strict_asserts(struct ee_task *t, struct ee_err *err)
{
	int converted = 0;

	t->strict_asserts = 1;
	for (size_t i = 0; i < t->n_tests; i++) {
		struct ee_test *test = &t->tests[i];
		int rc = test->strict                    ? 0
		         : test->kind == EE_TEST_PROGRAM ? strict_program(test)
		         : test->kind == EE_TEST_ASSERT  ? strict_assert(test)
		                                         : 0;
		if (rc < 0)
			return ee_fail(err, EE_ERR_USAGE, "%s: tests[%zu]: out of memory", t->task_id, i);
		converted += rc;
	}
	return converted;
}

int ee_test_judged_by_supervisor(const struct ee_test *t)
{
	return t->strict || t->kind == EE_TEST_IO || t->kind == EE_TEST_CALL;
}
