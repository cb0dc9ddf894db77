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
