/* test_auth.c - serve's bearer token (auth.h): loading its file, checking it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "leakcheck.h"
#include "serve/auth.h"

static char *token_file(const char *content)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/ee-token-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
	return path;
}

Test(token, load_strips_one_newline_and_rejects_weak_files)
{
	struct {
		const char *content;
		const char *token; /* NULL: refused */
		const char *in_msg;
	} cases[] = {
		{ "0123456789abcdef\n", "0123456789abcdef", NULL },
		{ "0123456789abcdef\r\n", "0123456789abcdef", NULL },
		{ "", NULL, "empty" },
		{ "\n", NULL, "empty" },
		{ "short\n", NULL, "too short" },
		{ "0123456789 abcdef\n", NULL, "not printable" },
		{ "0123456789abcdef\n\n", NULL, "not printable" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *path = token_file(cases[i].content);
		char *tok = NULL;
		struct ee_err err = { 0 };
		int rc = ee_token_load(path, &tok, &err);
		if (cases[i].token) {
			cr_expect_eq(rc, 0, "case %zu: %s", i, err.msg);
			cr_expect_str_eq(tok, cases[i].token, "case %zu", i);
		} else {
			cr_expect_eq(rc, -1, "case %zu accepted", i);
			cr_expect(strstr(err.msg, cases[i].in_msg) && strstr(err.msg, path), "case %zu: %s",
			          i, err.msg);
		}
		free(tok);
		unlink(path);
	}
	struct ee_err err = { 0 };
	char *tok = NULL;
	cr_expect_eq(ee_token_load("/nonexistent/token", &tok, &err), -1);
	cr_expect(strstr(err.msg, "/nonexistent/token") != NULL, "%s", err.msg);
}

Test(token, check)
{
	const char *t = "0123456789abcdef";

	cr_expect(ee_token_check(t, "Bearer 0123456789abcdef"));
	cr_expect(ee_token_check(t, "bearer 0123456789abcdef"));
	cr_expect_not(ee_token_check(t, NULL));
	cr_expect_not(ee_token_check(t, ""));
	cr_expect_not(ee_token_check(t, "Bearer "));
	cr_expect_not(ee_token_check(t, "Bearer 0123456789abcdeF"));  /* same length, one byte off */
	cr_expect_not(ee_token_check(t, "Bearer 0123456789abcde"));   /* a prefix */
	cr_expect_not(ee_token_check(t, "Bearer 0123456789abcdef0")); /* longer */
	cr_expect_not(ee_token_check(t, "Bearer 0123456789abcdef0123456789abcdef")); /* the token twice */
	cr_expect_not(ee_token_check(t, "Basic 0123456789abcdef"));
	cr_expect_not(ee_token_check(t, "0123456789abcdef"));
}
