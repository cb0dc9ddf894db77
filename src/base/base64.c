/* base64.c - standard base64 both ways (see base64.h). */
#include "base/base64.h"

#include <stdlib.h>

static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *ee_base64_encode(const unsigned char *p, size_t n)
{
	char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
		             (i + 2 < n ? p[i + 2] : 0);
		*o++ = digits[v >> 18 & 63];
		*o++ = digits[v >> 12 & 63];
		*o++ = i + 1 < n ? digits[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? digits[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

/* A digit's value, or -1. */
static int value_of(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

char *ee_base64_decode(const char *s, size_t n, size_t *len)
{
	if (n % 4 != 0)
		return NULL;
	char *out = malloc(n / 4 * 3 + 1);
	size_t k = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 4) {
		int last = i + 4 == n;
		int pad = last && s[i + 3] == '=' ? (s[i + 2] == '=' ? 2 : 1) : 0;
		unsigned v = 0;
		for (size_t j = 0; j < 4; j++) {
			int d = j >= 4 - (size_t)pad ? 0 : value_of(s[i + j]);
			if (d < 0) {
				free(out);
				return NULL;
			}
			v = v << 6 | (unsigned)d;
		}
		out[k++] = (char)(v >> 16);
		if (pad < 2)
			out[k++] = (char)(v >> 8 & 0xff);
		if (pad < 1)
			out[k++] = (char)(v & 0xff);
	}
	out[k] = '\0';
	*len = k;
	return out;
}
