/* test_buf.c - the capped growable buffer (buf.h). */
#include <criterion/criterion.h>

#include "base/buf.h"

Test(buf, never_passes_its_cap)
{
	struct ee_buf b;
	ee_buf_init(&b, 10);
	cr_expect_eq(ee_buf_append(&b, "0123456", 7), 0);
	cr_expect_eq(ee_buf_append(&b, "789a", 4), -1, "11 > 10: refused whole");
	cr_expect_eq(b.len, 7);
	cr_expect_eq(ee_buf_append_some(&b, "789abc", 6), 3);
	cr_expect_str_eq(b.data, "0123456789");
	ee_buf_consume(&b, 4);
	cr_expect_str_eq(b.data, "456789");
	ee_buf_free(&b);
	ee_buf_free(&b);
}
