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
#include "cleanup.h"
#include "err.h"
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

/* ---- Context and messages ------------------------------------------------ */

struct ctx {
	const char *where; /* "file:line" */
	unsigned opts;     /* EE_TASK_MBPP_CHALLENGE, ... */
	char prefix[48];   /* "", "tests[2]." or "limits." */
	struct ee_err *err;
};

static struct ctx ctx_make(const char *where, struct ee_err *err)
{
	struct ctx c = { .where = where ? where : "input", .prefix = "", .err = err };
	return c;
}

/* A context for the fields of a nested object, e.g. prefix "tests[2].". */
static struct ctx ctx_sub(const struct ctx *c, const char *name)
{
	struct ctx sub = *c;
	/* Paths are at most "tests[N].", so truncation cannot happen. */
	if (snprintf(sub.prefix, sizeof(sub.prefix), "%s%s.", c->prefix, name) < 0)
		sub.prefix[0] = '\0';
	return sub;
}

__attribute__((format(printf, 3, 4))) static int fail(const struct ctx *c, const char *field, const char *fmt,
                                                      ...)
{
	char detail[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	ee_fail(c->err, EE_ERR_USAGE, "%s: %s%s: %s", c->where, c->prefix, field, detail);
	if (c->err)
		snprintf(c->err->field, sizeof(c->err->field), "%s%s", c->prefix, field);
	return -1;
}

static int fail_oom(const struct ctx *c)
{
	return ee_fail(c->err, EE_ERR_USAGE, "%s: out of memory", c->where);
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER:
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	default: return "null";
	}
}

/* "a, b, c" into buf (truncated to fit). */
static const char *join_names(const char *const *names, size_t n, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", names[i]);
	return buf;
}

/* s as a short, one-line, quoted literal for a message: control characters
 * escaped, cut after about 40 bytes (not inside a UTF-8 sequence) with "...". */
static const char *quote(const char *s, char *buf, size_t size)
{
	size_t len = 0, i;

	buf[len++] = '"';
	for (i = 0; s[i] && (i < 40 || ((unsigned char)s[i] & 0xC0) == 0x80) && len + 8 < size; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\')
			len += (size_t)snprintf(buf + len, size - len, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			len += (size_t)snprintf(buf + len, size - len, "\\x%02x", ch);
		else
			buf[len++] = (char)ch;
	}
	snprintf(buf + len, size - len, "%s\"", s[i] ? "..." : "");
	return buf;
}

/* "key[i]" into buf, the path of an array element. */
static const char *elem_name(const char *key, size_t i, char *buf, size_t size)
{
	snprintf(buf, size, "%s[%zu]", key, i);
	return buf;
}

/* ---- Unknown keys ----------------------------------------------------------
 * Tasks are trusted data: a misspelt key ("visiblity") would otherwise drop
 * what it meant to say without a word, so every key of a native task, test
 * and limits object must be known, and the message names the nearest one. */

#define NAME_MAX_LEN 64

/* Levenshtein distance of a and b, case-insensitive; names longer than
 * NAME_MAX_LEN count as far from everything. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[NAME_MAX_LEN + 1];

	if (la > NAME_MAX_LEN || lb > NAME_MAX_LEN)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			int same = (a[i - 1] | 0x20) == (b[j - 1] | 0x20);
			size_t best = diag + !same;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *ee_nearest_name(const char *key, const char *const *names, size_t n)
{
	size_t best = (size_t)-1, limit = strlen(key) / 3 > 2 ? strlen(key) / 3 : 2;
	const char *found = NULL;

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(key, names[i]);
		if (d < best) {
			best = d;
			found = names[i];
		}
	}
	return best <= limit ? found : NULL;
}

/* A key fit to print as a path element as it is. */
static int plain_name(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
	return s[n] == '\0' && n > 0 && n <= 40;
}

/* Every key of obj is one of names; what: "a task", "an assert test"... */
static int known_keys(const struct ctx *c, const json_t *obj, const char *const *names, size_t n,
                      const char *what)
{
	const char *key;
	json_t *v;
	char list[200], shown[96];

	json_object_foreach ((json_t *)obj, key, v) {
		size_t i = 0;
		while (i < n && strcmp(key, names[i]) != 0)
			i++;
		if (i < n)
			continue;
		const char *near = ee_nearest_name(key, names, n);
		const char *name = plain_name(key) ? key : quote(key, shown, sizeof(shown));
		if (near)
			return fail(c, name, "unknown key in %s; did you mean '%s'?", what, near);
		return fail(c, name, "unknown key in %s; expected one of %s", what,
		            join_names(names, n, list, sizeof(list)));
	}
	return 0;
}

/* ---- Field getters -------------------------------------------------------- */

static int dup_str(const struct ctx *c, const char *s, char **ret)
{
	*ret = strdup(s);
	return *ret ? 0 : fail_oom(c);
}

/* Borrows the text of a string value; a NUL inside would silently cut it. */
static int str_check(const struct ctx *c, const char *field, const json_t *v, const char **ret)
{
	if (!json_is_string(v))
		return fail(c, field, "expected a string, got %s", type_name(v));
	if (strlen(json_string_value(v)) != json_string_length(v))
		return fail(c, field, "expected a string without NUL bytes, got one with \\u0000");
	*ret = json_string_value(v);
	return 0;
}

static int str_value(const struct ctx *c, const char *field, const json_t *v, char **ret)
{
	const char *s;

	if (str_check(c, field, v, &s) < 0)
		return -1;
	return dup_str(c, s, ret);
}

static int req_str(const struct ctx *c, const json_t *obj, const char *key, char **ret)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return fail(c, key, "missing (expected a string)");
	return str_value(c, key, v, ret);
}

/* Absent: *ret = copy of dflt, or left alone when dflt is NULL. */
static int opt_str(const struct ctx *c, const json_t *obj, const char *key, const char *dflt, char **ret)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return dflt ? dup_str(c, dflt, ret) : 0;
	return str_value(c, key, v, ret);
}

/* A name that code will call, so it cannot be empty. */
static int req_name(const struct ctx *c, const json_t *obj, const char *key, char **ret)
{
	if (req_str(c, obj, key, ret) < 0)
		return -1;
	if (!**ret)
		return fail(c, key, "expected a name, got an empty string");
	return 0;
}

/* task_id: a string, or an integer turned into its decimal text. */
static int id_value(const struct ctx *c, const json_t *obj, const char *key, char **ret)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return fail(c, key, "missing (expected a string or an integer)");
	if (json_is_string(v))
		return str_value(c, key, v, ret);
	if (!json_is_integer(v))
		return fail(c, key, "expected a string or an integer, got %s", type_name(v));
	if (asprintf(ret, "%" JSON_INTEGER_FORMAT, json_integer_value(v)) < 0) {
		*ret = NULL;
		return fail_oom(c);
	}
	return 0;
}

struct num_rule {
	double min;
	int min_ok; /* min itself is allowed */
	int whole;  /* no fractional part */
	const char *what;
};

static const struct num_rule positive = { 0, 0, 0, "a number > 0" };
static const struct num_rule non_negative = { 0, 1, 0, "a number >= 0" };
static const struct num_rule whole_positive = { 1, 1, 1, "a whole number > 0" };

/* Absent: *ret is left alone (the caller preset the default) and *has too. */
static int opt_num(const struct ctx *c, const json_t *obj, const char *key, const struct num_rule *rule,
                   double *ret, int *has)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (!json_is_number(v))
		return fail(c, key, "expected %s, got %s", rule->what, type_name(v));
	double d = json_number_value(v);
	int ok = rule->min_ok ? d >= rule->min : d > rule->min;
	if (!ok || (rule->whole && floor(d) != d))
		return fail(c, key, "expected %s, got %g", rule->what, d);
	*ret = d;
	if (has)
		*has = 1;
	return 0;
}

/* One of names; dflt < 0 means required. */
static int opt_enum(const struct ctx *c, const json_t *obj, const char *key, const char *const *names,
                    size_t n, int dflt, int *ret)
{
	const json_t *v = json_object_get(obj, key);
	char list[96], got[96];

	join_names(names, n, list, sizeof(list));
	if (!v && dflt < 0)
		return fail(c, key, "missing (expected one of %s)", list);
	if (!v) {
		*ret = dflt;
		return 0;
	}
	if (!json_is_string(v))
		return fail(c, key, "expected one of %s, got %s", list, type_name(v));
	for (size_t i = 0; i < n; i++) {
		if (strcmp(json_string_value(v), names[i]) == 0) {
			*ret = (int)i;
			return 0;
		}
	}
	return fail(c, key, "expected one of %s, got %s", list,
	            quote(json_string_value(v), got, sizeof(got)));
}

/* An array, or NULL in *ret when absent and not required. */
static int opt_array(const struct ctx *c, const json_t *obj, const char *key, int required, const char *what,
                     json_t **ret)
{
	json_t *v = json_object_get(obj, key);

	*ret = v;
	if (!v && required)
		return fail(c, key, "missing (expected %s)", what);
	if (v && !json_is_array(v))
		return fail(c, key, "expected %s, got %s", what, type_name(v));
	if (v && required && json_array_size(v) == 0)
		return fail(c, key, "expected %s, got an empty array", what);
	return 0;
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

static int parse_io(const struct ctx *c, const json_t *obj, struct ee_test *t)
{
	if (req_str(c, obj, "stdout", &t->stdout_text) < 0 ||
	    opt_str(c, obj, "stdin", "", &t->stdin_text) < 0)
		return -1;
	return opt_num(c, obj, "float_tol", &non_negative, &t->float_tol, NULL);
}

static int parse_call(const struct ctx *c, const json_t *obj, struct ee_test *t)
{
	json_t *args;

	if (req_name(c, obj, "fn", &t->fn) < 0 || opt_array(c, obj, "args", 0, "an array", &args) < 0)
		return -1;
	t->args = args ? json_incref(args) : json_array();
	if (!t->args)
		return fail_oom(c);
	t->expected = json_object_get(obj, "expected");
	if (!t->expected)
		return fail(c, "expected", "missing (expected any JSON value, null included)");
	json_incref(t->expected);
	return opt_num(c, obj, "float_tol", &non_negative, &t->float_tol, NULL);
}

static int parse_test(const struct ctx *parent, const json_t *obj, size_t i, struct ee_test *t)
{
	char name[32];
	struct ctx c = ctx_sub(parent, elem_name("tests", i, name, sizeof(name)));

	if (!json_is_object(obj))
		return fail(parent, name, "expected an object, got %s", type_name(obj));
	test_init(t, 0, 0);
	if (opt_enum(&c, obj, "kind", kind_names, COUNT(kind_names), -1, &t->kind) < 0 ||
	    opt_num(&c, obj, "weight", &positive, &t->weight, NULL) < 0 ||
	    opt_enum(&c, obj, "tier", tier_names, COUNT(tier_names), EE_TIER_CANONICAL, &t->tier) < 0 ||
	    opt_enum(&c, obj, "visibility", visibility_names, COUNT(visibility_names), 0, &t->hidden) < 0)
		return -1;
	switch (t->kind) {
	case EE_TEST_IO:
		return known_keys(&c, obj, io_test_keys, COUNT(io_test_keys), test_kind_what[t->kind]) < 0
		               ? -1
		               : parse_io(&c, obj, t);
	case EE_TEST_CALL:
		return known_keys(&c, obj, call_test_keys, COUNT(call_test_keys), test_kind_what[t->kind]) < 0
		               ? -1
		               : parse_call(&c, obj, t);
	default:
		if (known_keys(&c, obj, code_test_keys, COUNT(code_test_keys), test_kind_what[t->kind]) < 0)
			return -1;
		return req_str(&c, obj, "code", &t->code);
	}
}

/* Allocates n zeroed tests, so ee_task_free can run at any point after. */
static int alloc_tests(const struct ctx *c, struct ee_task *t, size_t n)
{
	t->tests = calloc(n, sizeof(*t->tests));
	if (!t->tests)
		return fail_oom(c);
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
static int parse_limits(const struct ctx *parent, const json_t *obj, struct ee_task_limits *lim)
{
	const json_t *v = json_object_get(obj, "limits");
	struct ctx c = ctx_sub(parent, "limits");
	double mem = 0, procs = 0, cap = 0;

	if (!v)
		return 0;
	if (!json_is_object(v))
		return fail(parent, "limits", "expected an object, got %s", type_name(v));
	if (known_keys(&c, v, limits_keys, COUNT(limits_keys), "limits") < 0)
		return -1;
	if (opt_num(&c, v, "timeout_s", &positive, &lim->timeout_s, &lim->has_timeout) < 0 ||
	    opt_num(&c, v, "memory_mb", &whole_positive, &mem, &lim->has_memory) < 0 ||
	    opt_num(&c, v, "procs", &whole_positive, &procs, &lim->has_procs) < 0 ||
	    opt_num(&c, v, "output_cap", &whole_positive, &cap, &lim->has_output_cap) < 0)
		return -1;
	lim->memory_mb = to_uint(mem);
	lim->procs = to_uint(procs);
	lim->output_cap = to_size(cap);
	return 0;
}

int ee_task_limits_from_json(const json_t *obj, const char *where, struct ee_task_limits *ret,
                             struct ee_err *err)
{
	struct ctx c = ctx_make(where, err);
	struct ee_task_limits lim;

	memset(&lim, 0, sizeof(lim));
	if (parse_limits(&c, obj, &lim) < 0)
		return -1;
	*ret = lim;
	return 0;
}

/* ---- Formats -------------------------------------------------------------- */

static int parse_native(const struct ctx *c, const json_t *obj, struct ee_task *t)
{
	json_t *tests;

	if (known_keys(c, obj, task_keys, COUNT(task_keys), "a task") < 0 ||
	    opt_str(c, obj, "prompt", NULL, &t->prompt) < 0 ||
	    opt_str(c, obj, "entry_point", NULL, &t->entry_point) < 0 ||
	    opt_str(c, obj, "setup", NULL, &t->setup) < 0 ||
	    opt_array(c, obj, "tests", 1, "a non-empty array of objects", &tests) < 0 ||
	    alloc_tests(c, t, json_array_size(tests)) < 0)
		return -1;
	for (size_t i = 0; i < t->n_tests; i++)
		if (parse_test(c, json_array_get(tests, i), i, &t->tests[i]) < 0)
			return -1;
	return parse_limits(c, obj, &t->limits);
}

/* HumanEval's test defines check(candidate); running it is the one test. */
static int parse_humaneval(const struct ctx *c, const json_t *obj, struct ee_task *t)
{
	char *test = NULL;
	int rc = -1;

	if (opt_str(c, obj, "prompt", NULL, &t->prompt) < 0 ||
	    req_name(c, obj, "entry_point", &t->entry_point) < 0 || req_str(c, obj, "test", &test) < 0 ||
	    alloc_tests(c, t, 1) < 0)
		goto out;
	test_init(&t->tests[0], EE_TEST_PROGRAM, 0);
	if (asprintf(&t->tests[0].code, "%s\ncheck(%s)\n", test, t->entry_point) < 0) {
		t->tests[0].code = NULL;
		fail_oom(c);
		goto out;
	}
	rc = 0;
out:
	free(test);
	return rc;
}

/* Borrows element i of an array that must hold strings. */
static int str_elem(const struct ctx *c, const json_t *arr, const char *key, size_t i, const char **ret)
{
	char name[64];

	return str_check(c, elem_name(key, i, name, sizeof(name)), json_array_get(arr, i), ret);
}

/* Appends one assert test per element of list (may be NULL) at *n. */
static int add_asserts(const struct ctx *c, const json_t *list, const char *key, int hidden,
                       struct ee_task *t, size_t *n)
{
	for (size_t i = 0; i < json_array_size(list); i++) {
		struct ee_test *test = &t->tests[(*n)++];
		const char *s;

		test_init(test, EE_TEST_ASSERT, hidden);
		if (str_elem(c, list, key, i, &s) < 0 || dup_str(c, s, &test->code) < 0)
			return -1;
	}
	return 0;
}

static int append_line(const struct ctx *c, struct ee_buf *b, const char *s)
{
	if ((b->len && ee_buf_append(b, "\n", 1) < 0) || ee_buf_append(b, s, strlen(s)) < 0)
		return b->oom ? fail(c, "setup", "out of memory")
		              : fail(c, "setup", "longer than %u bytes", SETUP_CAP);
	return 0;
}

/* setup = sanitized MBPP's test_imports, one a line, then test_setup_code. */
static int mbpp_setup(const struct ctx *c, const json_t *obj, char **ret)
{
	ee_autobuf struct ee_buf b;
	ee_buf_init(&b, SETUP_CAP);
	json_t *imports;
	const json_t *code = json_object_get(obj, "test_setup_code");
	const char *s = "";

	if (opt_array(c, obj, "test_imports", 0, "an array of strings", &imports) < 0 ||
	    (code && str_check(c, "test_setup_code", code, &s) < 0))
		return -1;
	for (size_t i = 0; i < json_array_size(imports); i++) {
		const char *line;
		if (str_elem(c, imports, "test_imports", i, &line) < 0 || append_line(c, &b, line) < 0)
			return -1;
	}
	if (*s && append_line(c, &b, s) < 0)
		return -1;
	return dup_str(c, b.data ? b.data : "", ret);
}

static int parse_mbpp(const struct ctx *c, const json_t *obj, struct ee_task *t)
{
	json_t *pub, *hidden;
	size_t n = 0;
	/* The original names the problem statement "text", sanitized "prompt". */
	const char *prompt_key = json_object_get(obj, "text") ? "text" : "prompt";

	if (opt_str(c, obj, prompt_key, NULL, &t->prompt) < 0 || mbpp_setup(c, obj, &t->setup) < 0 ||
	    opt_array(c, obj, "test_list", 1, "a non-empty array of strings", &pub) < 0 ||
	    opt_array(c, obj, "challenge_test_list", 0, "an array of strings", &hidden) < 0)
		return -1;
	/* The standard protocol scores test_list only; challenge tests on
	 * request. Left out, they are still checked: bad data is an error. */
	for (size_t i = 0; i < json_array_size(hidden); i++) {
		const char *s;
		if (str_elem(c, hidden, "challenge_test_list", i, &s) < 0)
			return -1;
	}
	if (!(c->opts & EE_TASK_MBPP_CHALLENGE))
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

static int fill_empty(const struct ctx *c, char **s)
{
	return *s ? 0 : dup_str(c, "", s);
}

/* The strings a format did not set become "". */
static int fill_defaults(const struct ctx *c, struct ee_task *t)
{
	if (fill_empty(c, &t->class_name) < 0 || fill_empty(c, &t->prompt) < 0 ||
	    fill_empty(c, &t->entry_point) < 0 || fill_empty(c, &t->setup) < 0)
		return -1;
	return 0;
}

static int check_object(const struct ctx *c, const json_t *obj)
{
	if (json_is_object(obj))
		return 0;
	return ee_fail(c->err, EE_ERR_USAGE, "%s: expected a JSON object, got %s", c->where,
	               obj ? type_name(obj) : "nothing");
}

static int parse_task(const struct ctx *c, const json_t *obj, int format, struct ee_task *t)
{
	static int (*const parsers[])(const struct ctx *, const json_t *, struct ee_task *) = {
		[EE_FORMAT_NATIVE] = parse_native,
		[EE_FORMAT_HUMANEVAL] = parse_humaneval,
		[EE_FORMAT_MBPP] = parse_mbpp,
	};

	if (check_object(c, obj) < 0)
		return -1;
	if (format > 0)
		format &= (int)EE_TASK_FORMAT_MASK;
	if (format == EE_FORMAT_AUTO && (format = ee_task_detect(obj)) < 0)
		return ee_fail(c->err, EE_ERR_USAGE,
		               "%s: cannot tell the format: expected 'tests' (native), "
		               "'test'+'entry_point' (HumanEval) or 'test_list' (MBPP)",
		               c->where);
	if (format < 0 || format >= (int)COUNT(parsers) || !parsers[format])
		return ee_fail(c->err, EE_ERR_USAGE, "%s: unknown task format %d", c->where, format);
	t->format = format;
	if (id_value(c, obj, "task_id", &t->task_id) < 0 ||
	    opt_str(c, obj, "class", NULL, &t->class_name) < 0 || parsers[format](c, obj, t) < 0)
		return -1;
	return fill_defaults(c, t);
}

int ee_task_from_json(const json_t *obj, int format, const char *where, struct ee_task *ret,
                      struct ee_err *err)
{
	struct ctx c = ctx_make(where, err);
	struct ee_task t = { 0 };

	c.opts = format > 0 ? (unsigned)format & ~EE_TASK_FORMAT_MASK : 0;
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
	struct ctx c = ctx_make("--assert", err);
	struct ee_task t = { .format = EE_FORMAT_NATIVE };

	memset(ret, 0, sizeof(*ret));
	if (n == 0)
		return ee_fail(err, EE_ERR_USAGE, "--assert: expected at least one assertion, got none");
	if (dup_str(&c, "run", &t.task_id) < 0 || alloc_tests(&c, &t, n) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		test_init(&t.tests[i], EE_TEST_ASSERT, 0);
		if (!asserts[i]) {
			ee_fail(err, EE_ERR_USAGE, "--assert: assertion %zu is missing", i + 1);
			goto fail;
		}
		if (dup_str(&c, asserts[i], &t.tests[i].code) < 0)
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

static int parse_index(const struct ctx *c, const json_t *obj, long *ret)
{
	const json_t *v = json_object_get(obj, "sample");

	*ret = -1;
	if (!v)
		return 0;
	if (!json_is_integer(v))
		return fail(c, "sample", "expected an integer >= 0, got %s", type_name(v));
	json_int_t i = json_integer_value(v);
	if (i < 0 || i > LONG_MAXIMUM)
		return fail(c, "sample", "expected an integer >= 0, got %" JSON_INTEGER_FORMAT, i);
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
static int parse_source(const struct ctx *c, const json_t *obj, struct ee_sample *s)
{
	int found[COUNT(source_fields)];
	size_t n = 0;
	const char *text = NULL;
	char names[64], list[80];

	for (size_t i = 0; i < COUNT(source_fields); i++) {
		const json_t *v = json_object_get(obj, source_fields[i]);
		if (!v)
			continue;
		if (str_check(c, source_fields[i], v, &text) < 0)
			return -1;
		found[n++] = (int)i;
	}
	join_names(source_fields, COUNT(source_fields), names, sizeof(names));
	if (n != 1)
		return fail(c, names, "expected exactly one of these, found %s",
		            n ? found_list(found, n, list, sizeof(list)) : "none");
	s->source = source_of[found[0]];
	return dup_str(c, text, &s->text);
}

static int sample_extra(const struct ctx *c, const json_t *obj, json_t **ret)
{
	*ret = json_deep_copy(obj);
	if (!*ret)
		return fail_oom(c);
	for (size_t i = 0; i < COUNT(sample_known); i++)
		json_object_del(*ret, sample_known[i]);
	return 0;
}

static int parse_sample(const struct ctx *c, const json_t *obj, struct ee_sample *s)
{
	if (check_object(c, obj) < 0)
		return -1;
	if (id_value(c, obj, "task_id", &s->task_id) < 0 || parse_index(c, obj, &s->index) < 0 ||
	    opt_str(c, obj, "model", NULL, &s->model) < 0 || parse_source(c, obj, s) < 0)
		return -1;
	return sample_extra(c, obj, &s->extra);
}

int ee_sample_from_json(const json_t *obj, const char *where, struct ee_sample *ret, struct ee_err *err)
{
	struct ctx c = ctx_make(where, err);
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

int ee_test_judging(const struct ee_test *t)
{
	if (t->strict)
		return t->calls ? EE_JUDGE_PYEQ_CALLS : EE_JUDGE_PYEQ;
	if (t->kind == EE_TEST_IO)
		return EE_JUDGE_IO;
	return t->kind == EE_TEST_CALL ? EE_JUDGE_VALUE : EE_JUDGE_SANDBOX;
}

int ee_test_judged_by_supervisor(const struct ee_test *t)
{
	return ee_test_judging(t) != EE_JUDGE_SANDBOX;
}
