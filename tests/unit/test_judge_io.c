/* test_judge_io.c - io output comparison (judge.h, ee_judge_io). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pyvalue/judge.h"

#define S(x)  x, sizeof(x) - 1
#define EXACT (-1.0)

/* ---------------------------------------------------------------- io */

struct io_case {
	const char *name;
	const char *expected;
	size_t expected_len;
	const char *actual;
	size_t actual_len;
	double tol;
	bool want;
	const char *why; /* substring of the reason on a mismatch */
};

static const struct io_case io_cases[] = {
	/* normalisation */
	{ "equal", S("3\n"), S("3\n"), EXACT, true, NULL },
	{ "missing final newline", S("3\n"), S("3"), EXACT, true, NULL },
	{ "trailing blanks", S("3\n"), S("3  \t\n"), EXACT, true, NULL },
	{ "trailing blanks in expected", S("1 2 \n"), S("1 2\n"), EXACT, true, NULL },
	{ "trailing empty lines", S("3\n"), S("3\n\n\n  \n"), EXACT, true, NULL },
	{ "CRLF", S("1\r\n2\r\n"), S("1\n2\n"), EXACT, true, NULL },
	{ "both empty", S(""), S(""), EXACT, true, NULL },
	{ "empty vs blank lines", S(""), S("\n \n\r\n"), EXACT, true, NULL },
	{ "NUL bytes equal", S("a\0b\n"), S("a\0b"), EXACT, true, NULL },
	/* mismatches and their reasons */
	{ "leading blank counts", S("3"), S(" 3"), EXACT, false, "line 1: expected '3', got ' 3'" },
	{ "inner spacing exact", S("1 2"), S("1  2"), EXACT, false, "line 1" },
	{ "wrong line", S("1\n2\n"), S("1\n3\n"), EXACT, false, "line 2: expected '2', got '3'" },
	{ "missing line", S("1\n2\n"), S("1\n"), EXACT, false, "line 2: expected '2', got end of output" },
	{ "extra line", S("1\n"), S("1\n2\n"), EXACT, false, "line 2: expected end of output, got '2'" },
	{ "empty vs text", S(""), S("x"), EXACT, false, "line 1: expected end of output, got 'x'" },
	{ "blank line inside", S("a\n\nb"), S("a\nb"), EXACT, false, "line 2: expected '', got 'b'" },
	{ "lone CR is not a newline", S("a\rb"), S("a b"), EXACT, false, "line 1" },
	{ "NUL bytes differ", S("a\0b"), S("a\0c"), EXACT, false, "line 1: expected 'a?b'" },
	{ "control bytes shown as ?", S("ok"), S("\x1b[31m"), EXACT, false, "got '?[31m'" },
	{ "bad UTF-8 shown as ?", S("ok"), S("\xff\xc3"), EXACT, false, "got '?\?'" },
	{ "UTF-8 shown as is", S("caf\xc3\xa9"), S("cafe"), EXACT, false, "expected 'caf\xc3\xa9'" },
	{ "long line cut", S("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
	  S("b"), EXACT, false, "expected 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...', got 'b'" },
	{ "numbers exact without tolerance", S("0.333333"), S("0.3333333333"), EXACT, false, "line 1" },
	/* tolerance */
	{ "within tolerance", S("0.333333"), S("0.3333333333"), 1e-5, true, NULL },
	{ "relative to expected", S("1000000"), S("1000000.5"), 1e-6, true, NULL },
	{ "absolute near zero", S("0"), S("0.0000005"), 1e-6, true, NULL },
	{ "outside tolerance", S("1.0"), S("1.1"), 1e-6, false, "expected '1.0', got '1.1'" },
	{ "tokens mixed", S("abc 1.0\n"), S("abc 1.0000001\n"), 1e-6, true, NULL },
	{ "word differs", S("abc 1.0"), S("abd 1.0"), 1e-6, false, "line 1" },
	{ "token count differs", S("1.0"), S("1.0 2"), 1e-6, false, "line 1" },
	{ "tolerance ignores spacing", S("1 2"), S("1   2"), 0.0, true, NULL },
	{ "1 vs 1.0 at tol 0", S("1"), S("1.0"), 0.0, true, NULL },
	{ "-0 vs 0", S("-0"), S("0"), 0.0, true, NULL },
	{ "1. and .5 are numbers", S("1. .5"), S("1 0.5"), 0.0, true, NULL },
	{ "exponent", S("1e3"), S("1000.0000001"), 1e-9, true, NULL },
	{ "same text inf", S("inf nan"), S("inf nan"), 1e-6, true, NULL },
	{ "inf is not a number", S("inf"), S("1e999"), 1e-6, false, "line 1" },
	{ "overflow is not finite", S("1e999"), S("1e998"), 1e-6, false, "line 1" },
	{ "hex is not decimal", S("0x10"), S("16"), 1e-6, false, "line 1" },
	{ "bare sign is text", S("-"), S("+"), 1e-6, false, "line 1" },
	{ "bad exponent is text", S("1e"), S("1"), 1e-6, false, "line 1" },
	{ "NaN tolerance means exact", S("1"), S("1.0"), NAN, false, "line 1" },
};

Test(judge, io_table)
{
	for (size_t i = 0; i < sizeof(io_cases) / sizeof(io_cases[0]); i++) {
		const struct io_case *tc = &io_cases[i];
		char why[256] = "untouched";
		bool got = ee_judge_io(tc->expected, tc->expected_len, tc->actual, tc->actual_len, tc->tol,
		                       why, sizeof(why));
		cr_expect_eq(got, tc->want, "%s: got %d (%s)", tc->name, got, why);
		if (tc->want)
			cr_expect_str_eq(why, "", "%s: reason cleared on a match", tc->name);
		else
			cr_expect_not_null(strstr(why, tc->why), "%s: reason '%s'", tc->name, why);
	}
}

Test(judge, io_missing_text_fails)
{
	char why[64];
	cr_expect_not(ee_judge_io(NULL, 3, "abc", 3, EXACT, why, sizeof(why)));
	cr_expect_str_eq(why, "missing text");
	cr_expect_not(ee_judge_io("abc", 3, NULL, 3, EXACT, why, sizeof(why)));
	cr_expect(ee_judge_io(NULL, 0, NULL, 0, EXACT, why, sizeof(why)));
}

Test(judge, io_reason_buffer_optional_and_bounded)
{
	char why[8];
	cr_expect_not(ee_judge_io("1", 1, "2", 1, EXACT, NULL, 0));
	cr_expect_not(ee_judge_io("1", 1, "2", 1, EXACT, why, sizeof(why)));
	cr_expect_str_eq(why, "line 1:");
}

Test(judge, io_reason_never_cuts_a_character)
{
	char why[20]; /* "line 1: expected '" is 18 bytes; the 2-byte e-acute would be cut */
	cr_expect_not(ee_judge_io("\xc3\xa9", 2, "x", 1, EXACT, why, sizeof(why)));
	cr_expect_str_eq(why, "line 1: expected '");
}

/* ---------------------------------------------------------------- rules */

struct rule_case {
	const char *rule; /* as ee_compare_parse reads it */
	const char *expected;
	size_t expected_len;
	const char *actual;
	size_t actual_len;
	double tol; /* the test's float_tol */
	bool want;
	const char *why;
};

#define NBSP "\xc2\xa0"

static const struct rule_case rule_cases[] = {
	/* exact: the bytes */
	{ "exact", S("3\n"), S("3\n"), EXACT, true, NULL },
	{ "exact", S("3\n"), S("3"), EXACT, false, "line 1, column 2: expected '\\n', got end of output" },
	{ "exact", S("3"), S("3\n"), EXACT, false, "expected end of output, got '\\n'" },
	{ "exact", S("1\n2\n"), S("1\n2 \n"), EXACT, false, "line 2, column 2: expected '\\n', got ' \\n'" },
	{ "exact", S("1\r\n"), S("1\n"), EXACT, false, "line 1, column 2: expected '\\r\\n', got '\\n'" },
	{ "exact", S(""), S(""), EXACT, true, NULL },
	{ "exact", S(""), S("\n"), EXACT, false, "expected end of output" },
	{ "exact", S("Yes"), S("YES"), EXACT, false, "column 2" },
	{ "exact:ci", S("Yes\n"), S("YES\n"), EXACT, true, NULL },
	{ "exact:ci", S("caf\xc3\xa9"), S("CAF\xc3\x89"), EXACT, false, "column 4" }, /* ASCII only */
	{ "exact", S("a\0b"), S("a\0b"), EXACT, true, NULL },
	{ "exact", S("1.0"), S("1.00"), 1e-3, false, "column 4" }, /* float_tol unused */
	/* rstrip: trailing \n dropped, nothing else (verl) */
	{ "rstrip", S("3\n"), S("3"), EXACT, true, NULL },
	{ "rstrip", S("3"), S("3\n\n\n"), EXACT, true, NULL },
	{ "rstrip", S("3\n"), S("3 \n"), EXACT, false, "column 2: expected end of output, got ' '" },
	{ "rstrip", S("3\r\n"), S("3\n"), EXACT, false, "expected '\\r', got end of output" },
	{ "rstrip", S("1\n2\n"), S("1\n\n2\n"), EXACT, false, "line 2, column 1" },
	{ "rstrip", S(""), S("\n\n"), EXACT, true, NULL },
	{ "rstrip", S(""), S(" "), EXACT, false, "expected end of output, got ' '" },
	{ "rstrip:ci", S("Yes\n"), S("yes"), EXACT, true, NULL },
	/* lines: today's rule */
	{ "lines", S("1\r\n2\r\n"), S("1\n2  \n\n"), EXACT, true, NULL },
	{ "lines", S("1 2"), S("1  2"), EXACT, false, "line 1" },
	{ "lines", S("Yes"), S("yes"), EXACT, false, "line 1: expected 'Yes', got 'yes'" },
	{ "lines:ci", S("Yes\nNO"), S("yes\nno\n"), EXACT, true, NULL },
	{ "lines:ci", S("a b"), S("A  B"), EXACT, false, "line 1" },
	{ "lines:ci", S("x 1.0"), S("X 1.0000001"), 1e-6, true, NULL },
	{ "lines", S("3" NBSP), S("3"), EXACT, false, "line 1" }, /* a no-break space is no blank */
	{ "lines", S(""), S("\n\n"), EXACT, true, NULL },
	/* tokens: whitespace of any length, line breaks included */
	{ "tokens", S("1 2\n3\n"), S("1\n2   3"), EXACT, true, NULL },
	{ "tokens", S("1\r\n2\r\n"), S("  1 2 "), EXACT, true, NULL },
	{ "tokens", S("1\t2\v3\f4"), S("1 2 3 4"), EXACT, true, NULL },
	{ "tokens", S("1 2"), S("1 2 3"), EXACT, false, "token 3: expected end of output, got '3'" },
	{ "tokens", S("1 2 3"), S("1 2"), EXACT, false, "token 3: expected '3', got end of output" },
	{ "tokens", S("a b"), S("a c"), EXACT, false, "token 2: expected 'b', got 'c'" },
	{ "tokens", S("1.0"), S("1"), EXACT, false, "token 1" },
	{ "tokens", S("1.0"), S("1.0000001"), 1e-6, true, NULL }, /* float_tol as under lines */
	{ "tokens", S(""), S(" \n\t"), EXACT, true, NULL },
	{ "tokens", S(""), S("x"), EXACT, false, "token 1: expected end of output, got 'x'" },
	{ "tokens", S("a" NBSP "b"), S("a b"), EXACT, false, "token 1" },
	{ "tokens",
	  S("a\xe3\x80\x80"
	    "b"),
	  S("a b"), EXACT, false, "token 1" }, /* U+3000 neither */
	{ "tokens", S("YES"), S("yes"), EXACT, false, "token 1" },
	{ "tokens:ci", S("YES\nno"), S("yes NO"), EXACT, true, NULL },
	/* numeric: tokens, numbers within max(abs, rel * |expected|) */
	{ "numeric", S("0.333333"), S("0.3333333333"), EXACT, true, NULL },
	{ "numeric", S("0.5\n"), S("0.50001"), EXACT, false, "token 1: expected '0.5', got '0.50001'" },
	{ "numeric", S("1e6"), S("1000000.9"), EXACT, true, NULL },       /* rel 1e-6 of 1e6 */
	{ "numeric", S("1e6"), S("1000001.1"), EXACT, false, "token 1" }, /* outside */
	{ "numeric:abs=0.01", S("0.5"), S("0.509"), EXACT, true, NULL },
	{ "numeric:abs=0.01", S("1000.0"), S("1000.5"), EXACT, false, "token 1" }, /* rel is 0 */
	{ "numeric:rel=0.01", S("1000.0"), S("1009.5"), EXACT, true, NULL },
	{ "numeric:rel=0.01", S("0.0"), S("0.001"), EXACT, false, "token 1" }, /* abs is 0 */
	{ "numeric:abs=0,rel=0", S("0.1"), S("0.10"), EXACT, true, NULL },
	/* the tolerances are for the expected output's floats: an integer
	 * expected only by that integer, whatever the tolerance */
	{ "numeric", S("2"), S("2.0000001"), EXACT, false, "token 1: expected '2', got '2.0000001'" },
	{ "numeric", S("24"), S("24.000009"), EXACT, false, "token 1: expected '24', got '24.000009'" },
	{ "numeric", S("24"), S("24.0"), EXACT, false, "token 1" },
	{ "numeric", S("24"), S("2.4e1"), EXACT, false, "token 1" },
	{ "numeric:abs=1", S("3 24"), S("3 24.5"), EXACT, false, "token 2: expected '24', got '24.5'" },
	{ "numeric:rel=0.5", S("1000000"), S("1000000.1"), EXACT, false, "token 1" },
	{ "numeric", S("24.0"), S("24"), EXACT, true, NULL }, /* a float expected: within */
	{ "numeric", S("2.4e1"), S("24.000001"), EXACT, true, NULL },
	{ "numeric", S("1."), S("1.0000001"), EXACT, true, NULL },
	{ "numeric:abs=0.5", S("1 2.5"), S("1 2.9"), EXACT, true, NULL },
	{ "numeric:abs=0.5", S("1 2.5"), S("1.1 2.5"), EXACT, false, "token 1: expected '1', got '1.1'" },
	{ "numeric", S("-0"), S("0"), EXACT, true, NULL },
	{ "numeric", S("007"), S("+7"), EXACT, true, NULL },
	{ "numeric", S("1000000"), S("1000001"), EXACT, false, "token 1" }, /* integers exactly */
	/* past 2^53 doubles cannot tell these apart; integers compare exactly */
	{ "numeric:abs=0,rel=0", S("9007199254740993"), S("9007199254740992"), EXACT, false, "token 1" },
	{ "numeric", S("123456789012345678901234567890123456789"),
	  S("123456789012345678901234567890123456789"), EXACT, true, NULL },
	{ "numeric", S("123456789012345678901234567890123456789"),
	  S("123456789012345678901234567890123456788"), EXACT, false, "token 1" },
	{ "numeric", S("1e400"), S("1e401"), EXACT, false, "token 1" }, /* not finite: text */
	{ "numeric", S("1e400"), S("1e400"), EXACT, true, NULL },
	{ "numeric", S("inf nan"), S("inf nan"), EXACT, true, NULL },
	{ "numeric", S("nan"), S("NaN"), EXACT, false, "token 1" },
	{ "numeric", S("0x10"), S("16"), EXACT, false, "token 1" },
	{ "numeric", S("1.5 abc"), S("1.5000001 abd"), EXACT, false, "token 2" },
	{ "numeric", S("1.5\n2.5\n"), S("1.5000001 2.4999999"), EXACT, true, NULL },
	{ "numeric:ci", S("YES 0.5"), S("yes 0.5000001"), EXACT, true, NULL },
	{ "numeric", S(""), S(""), EXACT, true, NULL },
	{ "numeric", S("1"), S(""), EXACT, false, "token 1: expected '1', got end of output" },
};

Test(judge, io_rules_table)
{
	for (size_t i = 0; i < sizeof(rule_cases) / sizeof(rule_cases[0]); i++) {
		const struct rule_case *tc = &rule_cases[i];
		struct ee_compare c;
		char why[256] = "untouched";
		cr_assert_eq(ee_compare_parse(tc->rule, &c, why, sizeof(why)), 0, "%s: %s", tc->rule, why);
		bool got = ee_judge_io_by(&c, tc->expected, tc->expected_len, tc->actual, tc->actual_len,
		                          tc->tol, why, sizeof(why));
		cr_expect_eq(got, tc->want, "case %zu (%s): got %d (%s)", i, tc->rule, got, why);
		if (tc->want)
			cr_expect_str_eq(why, "", "case %zu: reason cleared on a match", i);
		else
			cr_expect_not_null(strstr(why, tc->why), "case %zu (%s): reason '%s'", i, tc->rule,
			                   why);
	}
}

/* Every text matches itself under every rule, and lines is ee_judge_io. */
Test(judge, io_rules_agree_where_they_must)
{
	static const char *const rules[] = { "exact",   "rstrip",   "lines",     "tokens",
		                             "numeric", "exact:ci", "tokens:ci", "numeric:abs=0,rel=0" };
	static const char *const texts[] = { "", "\n", "3\n", "a b\r\n c\n\n", "1e999 nan -0", NBSP "x" };
	for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++)
		for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
			struct ee_compare c;
			cr_assert_eq(ee_compare_parse(rules[r], &c, NULL, 0), 0);
			cr_expect(ee_judge_io_by(&c, texts[t], strlen(texts[t]), texts[t], strlen(texts[t]),
			                         EXACT, NULL, 0),
			          "%s: '%s' vs itself", rules[r], texts[t]);
		}
	for (size_t i = 0; i < sizeof(io_cases) / sizeof(io_cases[0]); i++) {
		const struct io_case *tc = &io_cases[i];
		cr_expect_eq(ee_judge_io_by(NULL, tc->expected, tc->expected_len, tc->actual, tc->actual_len,
		                            tc->tol, NULL, 0),
		             tc->want, "%s", tc->name);
	}
}

/* open-r1 zips the two line lists: printing only the first expected line
 * passes there. verl's call wrapper exits 0 after an exception, so empty
 * output "passes" an empty expected output: here empty output is judged
 * like any other, and the judge of an io test is only reached when the
 * program returned (events.c), so a raise is a failure before comparing. */
Test(judge, io_rules_refuse_a_prefix_of_the_expected_lines)
{
	static const char *const rules[] = { "exact", "rstrip", "lines", "tokens", "numeric", "lines:ci" };
	for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++) {
		struct ee_compare c;
		char why[256];
		cr_assert_eq(ee_compare_parse(rules[r], &c, NULL, 0), 0);
		cr_expect_not(ee_judge_io_by(&c, S("1\n2\n3\n"), S("1\n"), EXACT, why, sizeof(why)), "%s",
		              rules[r]);
		cr_expect_not(ee_judge_io_by(&c, S("1\n2\n3\n"), S(""), EXACT, why, sizeof(why)), "%s",
		              rules[r]);
		cr_expect_not(ee_judge_io_by(&c, S("1\n"), S("1\n2\n"), EXACT, why, sizeof(why)), "%s",
		              rules[r]);
	}
}

struct parse_case {
	const char *text;
	int ok;
	const char *canonical; /* ok: ee_compare_text's; else a substring of why */
};

static const struct parse_case parse_cases[] = {
	{ "lines", 1, "lines" },
	{ "exact", 1, "exact" },
	{ "rstrip:ci", 1, "rstrip:ci" },
	{ "tokens:ci", 1, "tokens:ci" },
	{ "numeric", 1, "numeric:abs=1e-06,rel=1e-06" },
	{ "numeric:ci", 1, "numeric:abs=1e-06,rel=1e-06,ci" },
	{ "numeric:abs=1e-9", 1, "numeric:abs=1e-09,rel=0" },
	{ "numeric:rel=0.5,abs=2,ci", 1, "numeric:abs=2,rel=0.5,ci" },
	{ "", 0, "expected exact, rstrip, lines, tokens or numeric, got ''" },
	{ "Lines", 0, "got 'Lines'" },
	{ "token", 0, "got 'token'" },
	{ "lines:", 0, "expected ci, abs=X or rel=X after ':', got ''" },
	{ "lines:ci,", 0, "got ''" },
	{ "lines:CI", 0, "got 'CI'" },
	{ "lines:ci,ci", 0, "'ci' given twice" },
	{ "tokens:abs=1", 0, "'abs=1': only numeric takes a tolerance" },
	{ "numeric:abs=-1", 0, "'abs=-1': expected a number >= 0" },
	{ "numeric:abs=nan", 0, "expected a number >= 0" },
	{ "numeric:abs=inf", 0, "expected a number >= 0" },
	{ "numeric:abs=1x", 0, "expected a number >= 0" },
	{ "numeric:abs=", 0, "got 'abs='" },
	{ "numeric:rel=1,rel=2", 0, "given twice" },
	{ "numeric:abs=0.000000000000000000000000000000000000000000000000000000000000000000000000000001,ci",
	  0, "expected a number >= 0" },
	{ "numeric:abs=0."
	  "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000001",
	  0, "longer text" },
};

Test(judge, compare_rules_parse_and_print_back)
{
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *tc = &parse_cases[i];
		struct ee_compare c, again;
		char why[200] = "untouched", text[EE_COMPARE_TEXT_MAX];
		int rc = ee_compare_parse(tc->text, &c, why, sizeof(why));
		cr_expect_eq(rc == 0, tc->ok, "'%s': %d (%s)", tc->text, rc, why);
		if (rc < 0) {
			cr_expect_not_null(strstr(why, tc->canonical), "'%s': reason '%s'", tc->text, why);
			continue;
		}
		ee_compare_text(&c, text, sizeof(text));
		cr_expect_str_eq(text, tc->canonical, "'%s'", tc->text);
		cr_expect_eq(ee_compare_parse(text, &again, NULL, 0), 0, "%s reads back", text);
		cr_expect(memcmp(&c, &again, sizeof(c)) == 0, "%s reads back the same", text);
	}
	struct ee_compare zero = { 0 }, ci;
	cr_expect(ee_compare_is_default(&zero));
	cr_expect_eq(ee_compare_parse("lines:ci", &ci, NULL, 0), 0);
	cr_expect_not(ee_compare_is_default(&ci));
	cr_expect_eq(ee_compare_parse(NULL, &ci, NULL, 0), -1);
}
