/* test_pyliteral.c - the Python-literal reader (pyliteral.h,
 * ee_pyliteral_parse) against Python (pyliteral_tables.h). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "pyvalue/judge.h"
#include "pyvalue/pyliteral.h"
#include "pyliteral_tables.h"

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
