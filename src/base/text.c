/* text.c - turning untrusted bytes into valid UTF-8 with a length cap.
 *
 * The decoder follows the Unicode well-formedness table (Unicode 15, table
 * 3-7): each lead byte admits a narrow range for its second byte, which is
 * what rules out overlong forms, surrogates and code points past U+10FFFF
 * without decoding the value. An ill-formed sequence is replaced by one
 * U+FFFD per "maximal subpart" (the longest prefix that could still have
 * become valid), the practice Unicode recommends and Python's
 * bytes.decode(errors="replace") follows, so both sides agree on counts.
 */
#include "base/text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* Second-byte range allowed after lead byte c, and the sequence length.
 * Returns 0 for a byte that cannot start a sequence. */
static size_t lead_info(unsigned char c, unsigned char *lo, unsigned char *hi)
{
	*lo = 0x80;
	*hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF)
		return 2;
	if (c == 0xE0)
		*lo = 0xA0; /* below: overlong */
	else if (c == 0xED)
		*hi = 0x9F; /* above: surrogates */
	if (c >= 0xE0 && c <= 0xEF)
		return 3;
	if (c == 0xF0)
		*lo = 0x90; /* below: overlong */
	else if (c == 0xF4)
		*hi = 0x8F; /* above: past U+10FFFF */
	if (c >= 0xF0 && c <= 0xF4)
		return 4;
	return 0;
}

/* Length of the well-formed sequence at s[0..n) (n >= 1), or 0 when
 * ill-formed, in which case *bad is the length of the maximal subpart to
 * replace (>= 1). */
static size_t valid_seq(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned char lo, hi;

	*bad = 1;
	if (s[0] < 0x80)
		return 1;
	size_t want = lead_info(s[0], &lo, &hi);
	if (want == 0)
		return 0;
	for (size_t i = 1; i < want; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80; /* only the second byte has a narrowed range */
		hi = 0xBF;
	}
	return want;
}

size_t ee_utf8_char_len(const char *s, size_t n)
{
	size_t bad;

	if (!s || n == 0)
		return 0;
	return valid_seq((const unsigned char *)s, n, &bad);
}

/* Upper bound of the output: at most 3 bytes per input byte (a lone byte can
 * become U+FFFD) and 4 per character kept. SIZE_MAX when it cannot fit. */
static size_t out_bound(size_t len, size_t max_chars)
{
	size_t by_bytes = len <= (SIZE_MAX - 1) / 3 ? len * 3 : SIZE_MAX;
	size_t by_chars = max_chars <= (SIZE_MAX - 1) / 4 ? max_chars * 4 : SIZE_MAX;
	size_t bound = by_bytes < by_chars ? by_bytes : by_chars;

	return bound == SIZE_MAX ? SIZE_MAX : bound + 1;
}

char *ee_text_sanitize(const char *src, size_t len, size_t max_chars, int *ret_truncated)
{
	if (ret_truncated)
		*ret_truncated = 0;
	if (!src && len > 0)
		return NULL;
	size_t bound = out_bound(len, max_chars);
	if (bound == SIZE_MAX)
		return NULL;
	char *out = malloc(bound);
	if (!out)
		return NULL;

	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, o = 0, chars = 0;
	while (i < len && chars < max_chars) {
		size_t bad = 1;
		/* NUL is valid UTF-8, but C strings downstream would cut there. */
		size_t n = s[i] ? valid_seq(s + i, len - i, &bad) : 0;
		if (n) {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(out + o, replacement, 3);
			o += 3;
			i += bad;
		}
		chars++;
	}
	out[o] = '\0';
	if (ret_truncated && i < len)
		*ret_truncated = 1;
	return out;
}

long ee_utf8_first_bad(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		size_t len = (unsigned char)s[i] < 0x80 ? 1 : ee_utf8_char_len(s + i, n - i);
		if (len == 0)
			return (long)i;
		i += len;
	}
	return -1;
}
