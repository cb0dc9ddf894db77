/* test_pyliteral.c - the Python-literal reader, the assert shape
 * (pyliteral.h) and Python's == on canonical values (ee_judge_pyeq).
 *
 * The tables in pyliteral_cases.h come from Python itself
 * (tests/unit/pyliteral_ref.py): what literal_eval reads, what it refuses,
 * what `expected == actual` says, which asserts have the shape. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "judge.h"
#include "pyliteral.h"

struct lit_case {
	const char *src;
	const char *canonical; /* Python's value, canonical JSON */
	int has_set;           /* set order may differ: compare with == only */
};

struct pyeq_case {
	const char *expected_src;
	const char *actual; /* canonical JSON of the actual value */
	int want;
	int other; /* Python says equal, strict mode says no ("other") */
};

struct shape_case {
	const char *code;
	int converts;
};

#include "pyliteral_cases.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static json_t *load(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
	cr_assert(v, "bad JSON in the table: %s (%s)", text, e.text);
	return v;
}

static json_t *parse(const char *src)
{
	return ee_pyliteral_parse(src, strlen(src));
}

Test(pyliteral, reads_what_python_reads)
{
	for (size_t i = 0; i < COUNT(lit_cases); i++) {
		const struct lit_case *c = &lit_cases[i];
		json_t *got = parse(c->src), *want = load(c->canonical);
		cr_assert(got, "refused %s", c->src);
		char why[256];
		cr_expect(ee_judge_pyeq(got, want, why, sizeof(why)), "%s: %s", c->src, why);
		if (!c->has_set) {
			char *text = json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT);
			cr_expect(json_equal(got, want), "%s: got %s, Python %s", c->src, text, c->canonical);
			free(text);
		}
		json_decref(got);
		json_decref(want);
	}
}

Test(pyliteral, refuses_what_python_refuses)
{
	for (size_t i = 0; i < COUNT(bad_cases); i++) {
		json_t *got = parse(bad_cases[i]);
		cr_expect_null(got, "accepted %s", bad_cases[i]);
		json_decref(got);
	}
}

Test(pyliteral, declines_what_it_does_not_judge)
{
	for (size_t i = 0; i < COUNT(declined_cases); i++) {
		json_t *got = parse(declined_cases[i]);
		cr_expect_null(got, "accepted %s", declined_cases[i]);
		json_decref(got);
	}
}

Test(pyliteral, hostile_input_is_bounded)
{
	size_t n = 1 << 20;
	char *s = malloc(n + 1);
	cr_assert(s);

	/* deep nesting: refused past EE_PYLIT_MAX_DEPTH, not a stack overflow */
	memset(s, '[', n);
	s[n] = '\0';
	cr_expect_null(parse(s));
	memset(s, '(', n);
	cr_expect_null(parse(s));
	memset(s, '{', n);
	cr_expect_null(parse(s));
	/* a million-digit int; an unterminated million-byte string */
	memset(s, '7', n);
	cr_expect_null(parse(s));
	memset(s, 'a', n);
	s[0] = '\'';
	cr_expect_null(parse(s));
	s[0] = 'r';
	s[1] = '"';
	cr_expect_null(parse(s));
	/* too many nodes: [0, 0, ...] past EE_PYLIT_MAX_NODES */
	size_t o = 0;
	s[o++] = '[';
	for (int i = 0; i < EE_PYLIT_MAX_NODES + 5; i++)
		o += (size_t)sprintf(s + o, "0,");
	s[o++] = ']';
	s[o] = '\0';
	cr_expect_null(parse(s));
	/* invalid UTF-8 and NUL inside strings */
	cr_expect_null(ee_pyliteral_parse("'\xff'", 3));
	cr_expect_null(ee_pyliteral_parse("'\xc3'", 3));
	cr_expect_null(ee_pyliteral_parse("'a\0b'", 5));
	cr_expect_null(ee_pyliteral_parse(NULL, 0));
	free(s);
}

Test(pyliteral, nesting_at_the_limit)
{
	char s[2 * EE_PYLIT_MAX_DEPTH + 3];
	json_t *v;

	memset(s, '[', EE_PYLIT_MAX_DEPTH);
	memset(s + EE_PYLIT_MAX_DEPTH, ']', EE_PYLIT_MAX_DEPTH);
	s[2 * EE_PYLIT_MAX_DEPTH] = '\0';
	v = parse(s);
	cr_expect(v);
	json_decref(v);
	memmove(s + 1, s, 2 * EE_PYLIT_MAX_DEPTH + 1);
	s[0] = '[';
	strcat(s, "]");
	cr_expect_null(parse(s));
}

Test(pyliteral, escapes_decode_exactly)
{
	json_t *v = parse("'\\0a\\x00\\u00e9\\U0001F600\\101\\777'");
	static const char want[] = "\0a\0\xc3\xa9\xf0\x9f\x98\x80"
	                           "A\xc7\xbf";
	cr_assert(v);
	cr_expect_eq(json_string_length(v), sizeof(want) - 1);
	cr_expect(memcmp(json_string_value(v), want, sizeof(want) - 1) == 0);
	json_decref(v);
}

Test(pyassert, shape_as_python_parses_it)
{
	for (size_t i = 0; i < COUNT(shape_cases); i++) {
		struct ee_pycall c;
		int rc = ee_pyassert_convert(shape_cases[i].code, &c);
		cr_expect_eq(rc, shape_cases[i].converts, "%s: got %d", shape_cases[i].code, rc);
		if (rc == 1) {
			cr_expect(c.fn && c.args && c.kwargs && c.expected);
		} else {
			cr_expect(!c.fn && !c.args && !c.expected);
		}
		ee_pycall_free(&c);
	}
}

Test(pyassert, parts)
{
	struct ee_pycall c;
	json_t *want;

	cr_assert_eq(ee_pyassert_convert("assert add(1, [2.5], k='x') == (4, 5), 'msg'", &c), 1);
	cr_expect_str_eq(c.fn, "add");
	want = load("[{\"int\":\"1\"},{\"list\":[{\"float\":\"2.5\"}]}]");
	cr_expect(json_equal(c.args, want));
	json_decref(want);
	want = load("[[\"k\",\"x\"]]");
	cr_expect(json_equal(c.kwargs, want));
	json_decref(want);
	want = load("{\"tuple\":[{\"int\":\"4\"},{\"int\":\"5\"}]}");
	cr_expect(json_equal(c.expected, want));
	json_decref(want);
	ee_pycall_free(&c);

	cr_assert_eq(ee_pyassert_convert("assert [1] == f()", &c), 1);
	cr_expect_str_eq(c.fn, "f");
	cr_expect_eq(json_array_size(c.args), 0);
	ee_pycall_free(&c);

	cr_expect_eq(ee_pyassert_convert(NULL, &c), 0);
	ee_pycall_free(&c); /* zeroed: fine */
	ee_pycall_free(NULL);
}

Test(pyeq, agrees_with_python)
{
	for (size_t i = 0; i < COUNT(pyeq_cases); i++) {
		const struct pyeq_case *c = &pyeq_cases[i];
		json_t *e = parse(c->expected_src), *a = load(c->actual);
		char why[256];
		cr_assert(e, "refused %s", c->expected_src);
		bool got = ee_judge_pyeq(e, a, why, sizeof(why));
		cr_expect_eq(got, (bool)c->want, "%s == %s: got %d, want %d%s", c->expected_src, c->actual,
		             got, c->want, c->other ? " (other)" : "");
		if (got)
			cr_expect_str_eq(why, "");
		else
			cr_expect(strncmp(why, "expected ", 9) == 0, "%s", why);
		json_decref(e);
		json_decref(a);
	}
}

static void expect_reason(const char *expected_src, const char *actual, const char *reason)
{
	json_t *e = parse(expected_src), *a = load(actual);
	char why[256];

	cr_assert(e);
	cr_expect_not(ee_judge_pyeq(e, a, why, sizeof(why)));
	cr_expect_str_eq(why, reason);
	json_decref(e);
	json_decref(a);
}

Test(pyeq, reasons_read_like_asserts)
{
	expect_reason("(4, 5)", "{\"list\":[{\"int\":\"4\"},{\"int\":\"5\"}]}",
	              "expected (4, 5), got [4, 5]");
	expect_reason("(4,)", "{\"tuple\":[]}", "expected (4,), got ()");
	expect_reason("{1: 'a'}", "{\"dict\":[[{\"int\":\"1\"},\"b\"]]}", "expected {1: 'a'}, got {1: 'b'}");
	expect_reason("{1}", "{\"frozenset\":[]}", "expected {1}, got frozenset()");
	expect_reason("None", "{\"other\":\"Decimal\"}", "expected None, got <unsupported type 'Decimal'>");
	expect_reason("'a\\n'", "\"it's\"", "expected 'a\\n', got 'it\\'s'");
	expect_reason("0.5", "{\"float\":\"nan\"}", "expected 0.5, got nan");
	expect_reason("True", "false", "expected True, got False");
	expect_reason("1", "[1]", "expected 1, got <malformed canonical value>");
}

Test(pyeq, long_values_are_cut)
{
	json_t *e = parse("'"
	                  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	                  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	                  "\xc3\xa9\xc3\xa9\xc3\xa9'");
	json_t *a = json_string("b");
	char why[256];

	cr_assert(e);
	cr_expect_not(ee_judge_pyeq(e, a, why, sizeof(why)));
	cr_expect(strstr(why, "...") != NULL, "%s", why);
	cr_expect(strlen(why) < 240);
	/* the cut never splits a character: the reason is valid UTF-8 */
	json_t *s = json_string(why);
	cr_expect(s, "%s", why);
	json_decref(s);
	json_decref(e);
	json_decref(a);
	cr_expect_not(ee_judge_pyeq(NULL, a, why, sizeof(why)));
}

/* Hostile canonical values from the sandbox: repeated keys, bad tags, bad
 * numbers. None may match; none may crash. */
Test(pyeq, forged_values_never_match)
{
	static const struct {
		const char *expected_src;
		const char *actual;
	} forged[] = {
		{ "{1: 'a', 2: 'a'}", "{\"dict\":[[{\"int\":\"1\"},\"a\"],[{\"int\":\"1\"},\"a\"]]}" },
		{ "{1, 2}", "{\"set\":[{\"int\":\"1\"},{\"int\":\"1\"}]}" },
		{ "{1, 2}", "{\"set\":[{\"int\":\"1\"},{\"float\":\"1.0\"}]}" },
		{ "{1: 2}", "{\"dict\":[[{\"int\":\"1\"}]]}" },
		{ "{1: 2}", "{\"dict\":[[{\"list\":[]},{\"int\":\"2\"}]]}" },
		{ "1", "{\"int\":\"1x\"}" },
		{ "1", "{\"int\":\"\"}" },
		{ "1", "{\"int\":\"1\",\"float\":\"1\"}" },
		{ "1.5", "{\"float\":\"1.5junk\"}" },
		{ "[1]", "{\"list\":{\"int\":\"1\"}}" },
		{ "1", "{\"bogus\":\"1\"}" },
		{ "1", "1" },
		{ "'a'", "{\"other\":\"str\"}" },
		{ "{1}", "{\"set\":[{\"float\":\"nan\"}]}" },
	};
	for (size_t i = 0; i < COUNT(forged); i++) {
		json_t *e = parse(forged[i].expected_src), *a = load(forged[i].actual);
		char why[256];
		cr_assert(e);
		cr_expect_not(ee_judge_pyeq(e, a, why, sizeof(why)), "%s matched", forged[i].actual);
		json_decref(e);
		json_decref(a);
	}
	/* leading zeros and -0 are the same integer (the harness never sends them) */
	json_t *e = parse("[0, 7]"), *a = load("{\"list\":[{\"int\":\"-0\"},{\"int\":\"007\"}]}");
	cr_expect(ee_judge_pyeq(e, a, NULL, 0));
	json_decref(e);
	json_decref(a);
}

Test(pyeq, deep_actual_is_refused)
{
	json_t *a = json_string("x"), *e;
	for (int i = 0; i < 150; i++)
		a = json_pack("{s:[o]}", "list", a);
	e = json_deep_copy(a);
	/* a value deeper than MAX_DEPTH never matches, even itself */
	cr_expect_not(ee_judge_pyeq(e, a, NULL, 0));
	json_decref(a);
	json_decref(e);
}

Test(pykey, equal_values_share_a_key)
{
	static const char *const same[][2] = {
		{ "1", "True" }, { "1", "1.0" },       { "0", "-0.0" }, { "(1, 'a')", "(1.0, 'a')" },
		{ "''", "''" },  { "1e400", "1e401" },
	};
	static const char *const differ[][2] = {
		{ "1", "'1'" },  { "0.5", "0.25" },        { "(1,)", "(1, 1)" }, { "(1, (2,))", "(1, 2)" },
		{ "None", "0" }, { "'ab'", "('a', 'b')" },
	};
	struct ee_buf a, b;
	ee_buf_init(&a, 1 << 16);
	ee_buf_init(&b, 1 << 16);
	for (size_t i = 0; i < COUNT(same) + COUNT(differ); i++) {
		bool want_same = i < COUNT(same);
		const char *const *pair = want_same ? same[i] : differ[i - COUNT(same)];
		json_t *x = parse(pair[0]), *y = parse(pair[1]);
		ee_buf_reset(&a);
		ee_buf_reset(&b);
		cr_assert(ee_judge_pykey(x, &a) == 0 && ee_judge_pykey(y, &b) == 0);
		bool eq = a.len == b.len && memcmp(a.data, b.data, a.len) == 0;
		cr_expect_eq(eq, want_same, "%s vs %s", pair[0], pair[1]);
		json_decref(x);
		json_decref(y);
	}
	json_t *list = parse("[1]");
	cr_expect_eq(ee_judge_pykey(list, &a), -1);
	cr_expect_eq(ee_judge_pykey(NULL, &a), -1);
	json_decref(list);
	/* a full buffer is a failure, not a cut key */
	struct ee_buf tiny;
	ee_buf_init(&tiny, 4);
	json_t *s = parse("'abcdefgh'");
	cr_expect_eq(ee_judge_pykey(s, &tiny), -1);
	json_decref(s);
	ee_buf_free(&tiny);
	ee_buf_free(&a);
	ee_buf_free(&b);
}
