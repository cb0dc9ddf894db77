/* test_base64.c - base64 both ways (base64.h): RFC 4648's test vectors,
 * every byte value round-tripped, and what the decoder refuses. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"

/* RFC 4648, section 10. */
static const char *const plain[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
static const char *const coded[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };

Test(base64, rfc4648_vectors_both_ways)
{
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		char *e = ee_base64_encode((const unsigned char *)plain[i], strlen(plain[i]));
		cr_assert_str_eq(e, coded[i]);
		free(e);
		size_t n = 99;
		char *d = ee_base64_decode(coded[i], strlen(coded[i]), &n);
		cr_assert_not_null(d, "%s", coded[i]);
		cr_assert_eq(n, strlen(plain[i]));
		cr_assert_str_eq(d, plain[i]); /* NUL-terminated after the bytes */
		free(d);
	}
}

Test(base64, every_byte_value_round_trips)
{
	unsigned char all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)(255 - i);
	for (size_t len = 250; len <= 256; len++) {
		char *e = ee_base64_encode(all, len);
		size_t n = 0;
		char *d = ee_base64_decode(e, strlen(e), &n);
		cr_assert_not_null(d);
		cr_assert_eq(n, len);
		cr_assert_eq(memcmp(d, all, len), 0);
		free(e);
		free(d);
	}
}

Test(base64, refuses_what_is_not_padded_base64)
{
	static const char *const bad[] = {
		"Zg",       /* not a multiple of 4 */
		"Zg=",      /* idem */
		"Z===",     /* three pads */
		"Zg=a",     /* a digit after a pad */
		"Zg==Zg==", /* a pad before the end */
		"Zm9v\n",   /* whitespace */
		"Zm 9",     /* idem */
		"Zm9-",     /* the URL alphabet */
		"Zm9_",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n = 7;
		cr_assert_null(ee_base64_decode(bad[i], strlen(bad[i]), &n), "%s", bad[i]);
		cr_assert_eq(n, 7, "%s", bad[i]); /* untouched */
	}
}
