/* test_judge_pyeq.c - Python's == on canonical values (judge.h,
 * ee_judge_pyeq, ee_judge_pykey) against Python (pyliteral_tables.h). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "pyvalue/judge.h"
#include "pyvalue/pyliteral.h"
#include "pyliteral_tables.h"

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

/* complex and builtin types: actual canonical values on both sides (no
 * literal reads them), each case's verdict Python's own. */
Test(pyeq, complex_and_types_as_python)
{
	static const struct {
		const char *e, *a;
		bool want;
	} cases[] = {
		{ "{\"complex\":[\"1.0\",\"0.0\"]}", "{\"int\":\"1\"}", true }, /* 1+0j == 1 */
		{ "true", "{\"complex\":[\"1.0\",\"-0.0\"]}", true },           /* True == 1-0j */
		{ "{\"float\":\"0.5\"}", "{\"complex\":[\"0.5\",\"0.0\"]}", true },
		{ "{\"int\":\"1152921504606846977\"}", "{\"complex\":[\"1.152921504606847e+18\",\"0.0\"]}",
		  false }, /* exact, as float == int */
		{ "{\"complex\":[\"1.0\",\"2.0\"]}", "{\"complex\":[\"1.0\",\"2.0\"]}", true },
		{ "{\"complex\":[\"0.0\",\"0.0\"]}", "{\"complex\":[\"-0.0\",\"-0.0\"]}", true },
		{ "{\"complex\":[\"1.0\",\"2.0\"]}", "{\"complex\":[\"1.0\",\"-2.0\"]}", false },
		{ "{\"complex\":[\"nan\",\"0.0\"]}", "{\"complex\":[\"nan\",\"0.0\"]}", false },
		{ "{\"complex\":[\"1.0\",\"1.0\"]}", "{\"int\":\"1\"}", false },
		{ "{\"complex\":[\"1.0\",\"0.0\"]}", "\"1\"", false },
		{ "{\"tuple\":[{\"float\":\"2.0\"},{\"complex\":[\"-2.0\",\"2.4492935982947064e-16\"]}]}",
		  "{\"tuple\":[{\"float\":\"2.0\"},{\"complex\":[\"-2.0\",\"2.4492935982947064e-16\"]}]}",
		  true },
		{ "{\"set\":[{\"int\":\"1\"},{\"complex\":[\"0.0\",\"1.0\"]}]}",
		  "{\"set\":[{\"complex\":[\"0.0\",\"1.0\"]},{\"complex\":[\"1.0\",\"0.0\"]}]}", true },
		{ "{\"dict\":[[{\"complex\":[\"2.0\",\"0.0\"]},\"a\"]]}",
		  "{\"dict\":[[{\"int\":\"2\"},\"a\"]]}", true },
		{ "{\"type\":\"int\"}", "{\"type\":\"int\"}", true },
		{ "{\"type\":\"int\"}", "{\"type\":\"float\"}", false },
		{ "{\"type\":\"int\"}", "\"int\"", false },
		{ "{\"list\":[{\"type\":\"str\"}]}", "{\"list\":[{\"type\":\"str\"}]}", true },
		{ "{\"set\":[{\"type\":\"int\"}]}", "{\"frozenset\":[{\"type\":\"int\"}]}", true },
	};
	for (size_t i = 0; i < COUNT(cases); i++) {
		json_t *e = load(cases[i].e), *a = load(cases[i].a);
		char why[256];
		cr_assert(e && a, "case %zu", i);
		cr_expect_eq(ee_judge_pyeq(e, a, why, sizeof(why)), cases[i].want, "%s == %s: %s", cases[i].e,
		             cases[i].a, why);
		cr_expect_eq(ee_judge_pyeq(a, e, why, sizeof(why)), cases[i].want, "%s == %s (swapped)",
		             cases[i].a, cases[i].e);
		json_decref(e);
		json_decref(a);
	}
}

/* Reasons show complex and types as Python's repr does. */
Test(pyeq, complex_and_types_repr_as_python)
{
	static const char *const reprs[][2] = {
		{ "{\"complex\":[\"0.0\",\"1.0\"]}", "1j" },
		{ "{\"complex\":[\"-0.0\",\"-1.0\"]}", "(-0-1j)" },
		{ "{\"complex\":[\"0.0\",\"0.0\"]}", "0j" },
		{ "{\"complex\":[\"1.5\",\"-2.5\"]}", "(1.5-2.5j)" },
		{ "{\"complex\":[\"nan\",\"nan\"]}", "(nan+nanj)" },
		{ "{\"complex\":[\"0.0\",\"inf\"]}", "infj" },
		{ "{\"complex\":[\"1e+16\",\"1e-05\"]}", "(1e+16+1e-05j)" },
		{ "{\"complex\":[\"123456789012345.0\",\"1.0\"]}", "(123456789012345+1j)" },
		{ "{\"complex\":[\"0.0\",\"1e+22\"]}", "1e+22j" },
		{ "{\"type\":\"int\"}", "<class 'int'>" },
	};
	for (size_t i = 0; i < COUNT(reprs); i++) {
		json_t *e = load("{\"list\":[]}"), *a = load(reprs[i][0]);
		char why[256], want[128];
		snprintf(want, sizeof(want), "expected [], got %s", reprs[i][1]);
		cr_expect_not(ee_judge_pyeq(e, a, why, sizeof(why)));
		cr_expect_str_eq(why, want);
		json_decref(e);
		json_decref(a);
	}
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
