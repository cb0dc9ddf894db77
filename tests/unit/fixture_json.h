/* fixture_json.h - fix(): a JSON fixture written with ' standing for ", so
 * that rows of JSON in C strings stay readable (\' gives \"). Fails the
 * current test on a bad fixture. */
#ifndef EE_TEST_FIXTURE_JSON_H
#define EE_TEST_FIXTURE_JSON_H

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static inline json_t *fix(const char *text)
{
	char *s = strdup(text);
	json_error_t e;

	cr_assert_not_null(s);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	json_t *j = json_loads(s, JSON_DECODE_ANY, &e);
	cr_assert_not_null(j, "bad fixture %s: %s", s, e.text);
	free(s);
	return j;
}

#endif
