/* test_err.c - filling struct ee_err (err.h): the message is cut to fit,
 * errno's text is appended and errno kept, a NULL err is allowed. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"

Test(err, fail_fills_code_and_message_and_clears_the_field)
{
	struct ee_err err;

	memset(&err, 'x', sizeof(err));
	cr_expect_eq(ee_fail(&err, EE_ERR_USAGE, "%s:%d: bad", "t.jsonl", 3), -1);
	cr_expect_eq(err.code, EE_ERR_USAGE);
	cr_expect_str_eq(err.msg, "t.jsonl:3: bad");
	cr_expect_str_eq(err.field, "");
	cr_expect_eq(ee_fail(NULL, EE_ERR_SANDBOX, "nowhere"), -1);
}

Test(err, a_long_message_is_cut_and_terminated)
{
	struct ee_err err;
	char long_text[1000];

	memset(long_text, 'a', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	ee_fail(&err, EE_ERR_USAGE, "%s", long_text);
	cr_expect_eq(strlen(err.msg), sizeof(err.msg) - 1);
	errno = ENOENT;
	ee_fail_errno(&err, EE_ERR_USAGE, "%s", long_text);
	cr_expect_eq(strlen(err.msg), sizeof(err.msg) - 1, "the errno text does not run past the end");
}

Test(err, fail_errno_appends_strerror_and_keeps_errno)
{
	struct ee_err err;
	char want[256];

	errno = ENOENT;
	cr_expect_eq(ee_fail_errno(&err, EE_ERR_SANDBOX, "open %s", "f"), -1);
	cr_expect_eq(errno, ENOENT);
	snprintf(want, sizeof(want), "open f: %s", strerror(ENOENT));
	cr_expect_str_eq(err.msg, want);
	cr_expect_eq(err.code, EE_ERR_SANDBOX);
	errno = EACCES;
	cr_expect_eq(ee_fail_errno(NULL, EE_ERR_SANDBOX, "x"), -1);
	cr_expect_eq(errno, EACCES);
}
