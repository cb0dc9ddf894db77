/* fuzz_text.c - sanitising always yields well-formed UTF-8 without NUL,
 * at most max_chars code points, and leaves valid text untouched.
 * Input: byte 0 picks max_chars (255 = no cap), the rest is the text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Code points in s[0..n), or SIZE_MAX when it is not well-formed. */
static size_t count_chars(const char *s, size_t n)
{
	size_t chars = 0;

	for (size_t i = 0; i < n; chars++) {
		size_t len = ee_utf8_char_len(s + i, n - i);
		if (len == 0)
			return SIZE_MAX;
		i += len;
	}
	return chars;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t max_chars = data[0] == 255 ? SIZE_MAX : data[0];
	const char *src = (const char *)data + 1;
	size_t len = size - 1;
	int truncated = -1;

	char *out = ee_text_sanitize(src, len, max_chars, &truncated);
	if (!out)
		abort();
	size_t out_len = strlen(out); /* stops at the first NUL: there is none */
	size_t chars = count_chars(out, out_len);
	if (chars == SIZE_MAX || chars > max_chars)
		abort();
	if (truncated != 0 && truncated != 1)
		abort();
	if (truncated && chars != max_chars)
		abort();
	/* Valid text without NUL that fits comes back byte for byte. */
	size_t in_chars = count_chars(src, len);
	if (in_chars != SIZE_MAX && !memchr(src, '\0', len) && in_chars <= max_chars &&
	    (truncated || out_len != len || memcmp(out, src, len) != 0))
		abort();
	free(out);
	return 0;
}
