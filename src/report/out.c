/* out.c - capped, escaping output for the report (out.h). */
#include "report/out.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */
#define ELLIPSIS    "\xe2\x80\xa6" /* U+2026 */

void ee_out_init(struct ee_out *o, size_t cap)
{
	ee_buf_init(&o->buf, cap);
	o->failed = 0;
}

void ee_out_free(struct ee_out *o)
{
	ee_buf_free(&o->buf);
}

int ee_out_failed(const struct ee_out *o)
{
	return o->failed;
}

static void put(struct ee_out *o, const char *p, size_t n)
{
	if (!o->failed && ee_buf_append(&o->buf, p, n) < 0)
		o->failed = 1;
}

void ee_out_raw(struct ee_out *o, const char *s)
{
	put(o, s, strlen(s));
}

void ee_out_fmt(struct ee_out *o, const char *fmt, ...)
{
	char small[512];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		o->failed = 1;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		put(o, small, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		o->failed = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	put(o, big, (size_t)n);
	free(big);
}

void ee_out_num(struct ee_out *o, double x, int decimals)
{
	if (!isfinite(x))
		x = 0;
	if (decimals < 0)
		decimals = 0;
	if (decimals > 6)
		decimals = 6;
	if (fabs(x) > 1e15) /* no 300-digit numbers */
		x = x > 0 ? 1e15 : -1e15;
	char s[64];
	int n = snprintf(s, sizeof(s), "%.*f", decimals, x);
	/* "-0.00" reads oddly and means 0 */
	if (n > 1 && s[0] == '-' && strspn(s + 1, "0.") == (size_t)(n - 1)) {
		put(o, s + 1, (size_t)(n - 1));
		return;
	}
	put(o, s, (size_t)n);
}

/* The entity for an ASCII byte that needs one, else NULL. */
static const char *entity(unsigned char c)
{
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&#39;";
	case '\t':
	case '\n':
	case '\r': return NULL;
	default: return c < 0x20 || c == 0x7f ? REPLACEMENT : NULL;
	}
}

/* Escapes s[0..n); ill-formed UTF-8 becomes U+FFFD. */
static void text_n(struct ee_out *o, const char *s, size_t n)
{
	size_t run = 0, i = 0; /* s[i - run .. i) is copied as is */

	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		const char *e = NULL;
		size_t len = 1;
		if (c < 0x80)
			e = entity(c);
		else if ((len = ee_utf8_char_len(s + i, n - i)) == 0)
			e = REPLACEMENT, len = 1;
		if (!e) {
			run += len;
			i += len;
			continue;
		}
		put(o, s + i - run, run);
		put(o, e, strlen(e));
		run = 0;
		i += len;
	}
	put(o, s + n - run, run);
}

void ee_out_text(struct ee_out *o, const char *s)
{
	if (s)
		text_n(o, s, strlen(s));
}

/* Bytes of the first max_chars characters of s[0..n) (ill-formed bytes
 * count as one character each). */
static size_t prefix_bytes(const char *s, size_t n, size_t max_chars)
{
	size_t i = 0;

	for (size_t chars = 0; i < n && chars < max_chars; chars++) {
		size_t len = ee_utf8_char_len(s + i, n - i);
		i += len ? len : 1;
	}
	return i;
}

void ee_out_text_cut(struct ee_out *o, const char *s, size_t max_chars)
{
	if (!s)
		return;
	size_t n = strlen(s), take = prefix_bytes(s, n, max_chars);
	text_n(o, s, take);
	if (take < n)
		ee_out_raw(o, ELLIPSIS);
}

char *ee_out_cut_copy(const char *s, size_t max_chars, int from_end, int *ret_cut)
{
	if (ret_cut)
		*ret_cut = 0;
	if (!s)
		return NULL;
	size_t n = strlen(s), chars = 0;
	for (size_t i = 0; i < n; i++)
		chars += ((unsigned char)s[i] & 0xc0) != 0x80;
	size_t start = 0, end = n;
	if (chars > max_chars) {
		if (ret_cut)
			*ret_cut = 1;
		if (!from_end) {
			end = prefix_bytes(s, n, max_chars);
		} else {
			/* skip chars - max_chars characters from the start */
			size_t skip = chars - max_chars;
			for (start = 0; start < n && skip; skip--)
				do
					start++;
				while (start < n && ((unsigned char)s[start] & 0xc0) == 0x80);
		}
	}
	char *copy = malloc(end - start + 1);
	if (copy) {
		memcpy(copy, s + start, end - start);
		copy[end - start] = '\0';
	}
	return copy;
}
