/* test_text.c - UTF-8 sanitising and truncation by code points (text.h).
 * Replacement counts were checked against Python's bytes.decode(errors="replace"). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

#define FFFD  "\xEF\xBF\xBD"
#define NOCAP ((size_t)-1)

struct sanitize_case {
	const char *name;
	const char *in;
	size_t in_len;
	size_t max_chars;
	const char *want;
	int want_truncated;
};

/* S(x) passes a literal with its exact length, NULs included. */
#define S(x) x, sizeof(x) - 1

static const struct sanitize_case sanitize_cases[] = {
	{ "empty", S(""), NOCAP, "", 0 },
	{ "ascii", S("hello\tworld\n"), NOCAP, "hello\tworld\n", 0 },
	{ "2-byte kept", S("caf\xC3\xA9"), NOCAP, "caf\xC3\xA9", 0 },
	{ "3-byte kept", S("\xE2\x82\xAC"), NOCAP, "\xE2\x82\xAC", 0 },
	{ "4-byte kept", S("\xF0\x9F\x98\x80"), NOCAP, "\xF0\x9F\x98\x80", 0 },
	{ "U+10FFFF kept", S("\xF4\x8F\xBF\xBF"), NOCAP, "\xF4\x8F\xBF\xBF", 0 },
	{ "U+FFFF kept", S("\xEF\xBF\xBF"), NOCAP, "\xEF\xBF\xBF", 0 },
	{ "U+E000 kept (after surrogates)", S("\xEE\x80\x80"), NOCAP, "\xEE\x80\x80", 0 },
	{ "overlong 2-byte", S("\xC0\xAF"), NOCAP, FFFD FFFD, 0 },
	{ "overlong 3-byte", S("\xE0\x80\xAF"), NOCAP, FFFD FFFD FFFD, 0 },
	{ "overlong 4-byte", S("\xF0\x80\x80\xAF"), NOCAP, FFFD FFFD FFFD FFFD, 0 },
	{ "surrogate", S("\xED\xA0\x80"), NOCAP, FFFD FFFD FFFD, 0 },
	{ "above U+10FFFF", S("\xF4\x90\x80\x80"), NOCAP, FFFD FFFD FFFD FFFD, 0 },
	{ "F5 lead", S("\xF5"), NOCAP, FFFD, 0 },
	{ "5-byte form", S("\xF8\x88\x80\x80\x80"), NOCAP, FFFD FFFD FFFD FFFD FFFD, 0 },
	{ "FF byte",
	  S("a\xFF"
	    "b"),
	  NOCAP, "a" FFFD "b", 0 },
	{ "lone continuations", S("\x80\xBF"), NOCAP, FFFD FFFD, 0 },
	{ "truncated at end", S("x\xE2\x82"), NOCAP, "x" FFFD, 0 },
	{ "truncated mid-text",
	  S("\xE2\x82"
	    "A"),
	  NOCAP, FFFD "A", 0 },
	{ "truncated 4-byte",
	  S("\xF0\x9F\x98"
	    "A"),
	  NOCAP, FFFD "A", 0 },
	{ "lone lead at end", S("\xC3"), NOCAP, FFFD, 0 },
	{ "NUL replaced", S("a\0b"), NOCAP, "a" FFFD "b", 0 },
	{ "cut by code points", S("h\xC3\xA9llo"), 3, "h\xC3\xA9l", 1 },
	{ "exactly max kept", S("h\xC3\xA9llo"), 5, "h\xC3\xA9llo", 0 },
	{ "emoji counts once",
	  S("\xF0\x9F\x98\x80\xF0\x9F\x98\x80"
	    "ab"),
	  2, "\xF0\x9F\x98\x80\xF0\x9F\x98\x80", 1 },
	{ "replacement counts once",
	  S("\xFF\xFF"
	    "ab"),
	  2, FFFD FFFD, 1 },
	{ "max 0 of text", S("abc"), 0, "", 1 },
	{ "max 0 of nothing", S(""), 0, "", 0 },
};

Test(text, sanitize_table)
{
	for (size_t i = 0; i < sizeof(sanitize_cases) / sizeof(sanitize_cases[0]); i++) {
		const struct sanitize_case *tc = &sanitize_cases[i];
		int truncated = -1;
		char *out = ee_text_sanitize(tc->in, tc->in_len, tc->max_chars, &truncated);
		cr_assert_not_null(out, "%s: NULL", tc->name);
		cr_expect_str_eq(out, tc->want, "%s", tc->name);
		cr_expect_eq(truncated, tc->want_truncated, "%s: truncated %d", tc->name, truncated);
		free(out);
	}
}

Test(text, sanitize_without_truncated_flag)
{
	char *out = ee_text_sanitize("abc", 3, 1, NULL);
	cr_assert_str_eq(out, "a");
	free(out);
}

Test(text, sanitize_fails_on_null_source)
{
	int truncated = -1;
	cr_expect_null(ee_text_sanitize(NULL, 5, 10, &truncated));
	cr_expect_eq(truncated, 0);

	char *out = ee_text_sanitize(NULL, 0, 10, NULL);
	cr_assert_str_eq(out, "");
	free(out);
}

Test(text, sanitize_fails_when_bound_overflows)
{
	/* Neither cap limits the output: the size cannot be represented. */
	cr_expect_null(ee_text_sanitize("x", (size_t)-1, (size_t)-1, NULL));
}

Test(text, sanitize_large_input_is_valid)
{
	/* Every byte value, many times: the output must decode cleanly. */
	size_t n = 256 * 64;
	char *in = malloc(n);
	cr_assert_not_null(in);
	for (size_t i = 0; i < n; i++)
		in[i] = (char)(i * 7 % 256);
	char *out = ee_text_sanitize(in, n, (size_t)-1, NULL);
	cr_assert_not_null(out);
	size_t len = strlen(out);
	for (size_t i = 0; i < len;) {
		size_t cl = ee_utf8_char_len(out + i, len - i);
		cr_assert_gt(cl, 0, "ill-formed output at %zu", i);
		i += cl;
	}
	free(out);
	free(in);
}

struct charlen_case {
	const char *name;
	const char *in;
	size_t in_len;
	size_t want;
};

static const struct charlen_case charlen_cases[] = {
	{ "ascii", S("a"), 1 },
	{ "NUL is well-formed", S("\0"), 1 },
	{ "2-byte", S("\xC3\xA9"), 2 },
	{ "3-byte",
	  S("\xE2\x82\xAC"
	    "x"),
	  3 },
	{ "4-byte", S("\xF0\x9F\x98\x80"), 4 },
	{ "empty", S(""), 0 },
	{ "overlong", S("\xC1\xBF"), 0 },
	{ "surrogate", S("\xED\xBF\xBF"), 0 },
	{ "past max", S("\xF4\x90\x80\x80"), 0 },
	{ "short", S("\xF0\x9F\x98"), 0 },
	{ "continuation", S("\x80"), 0 },
};

Test(text, utf8_char_len_table)
{
	for (size_t i = 0; i < sizeof(charlen_cases) / sizeof(charlen_cases[0]); i++) {
		const struct charlen_case *tc = &charlen_cases[i];
		cr_expect_eq(ee_utf8_char_len(tc->in, tc->in_len), tc->want, "%s", tc->name);
	}
	cr_expect_eq(ee_utf8_char_len(NULL, 4), 0, "NULL");
}
