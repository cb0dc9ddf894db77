/* pickle_str.c - a pickled str read without unpickling (pickle_str.h).
 *
 * The input is walked once, front to back, against the one shape CPython's
 * pickler writes for a str; every length is checked against the bytes left
 * before it is used, and any byte out of place is refused with its offset.
 */
#include "input/pickle_str.h"

#include <stdint.h>
#include <stdio.h>

enum {
	OP_PROTO = 0x80,
	OP_FRAME = 0x95,
	OP_SHORT_BINUNICODE = 0x8c,
	OP_BINUNICODE = 'X',
	OP_BINUNICODE8 = 0x8d,
	OP_MEMOIZE = 0x94,
	OP_BINPUT = 'q',
	OP_STOP = '.',
};

struct reader {
	const unsigned char *p;
	size_t n, at;
	char *why;
	size_t why_len;
};

static int refuse(struct reader *r, const char *what)
{
	if (r->at < r->n)
		snprintf(r->why, r->why_len, "byte %zu (0x%02x): %s", r->at, r->p[r->at], what);
	else
		snprintf(r->why, r->why_len, "byte %zu (the end): %s", r->at, what);
	return -1;
}

/* A little-endian unsigned of width bytes after the opcode at r->at. */
static int length(struct reader *r, size_t width, uint64_t *ret)
{
	if (r->n - r->at - 1 < width)
		return refuse(r, "truncated length");
	*ret = 0;
	for (size_t i = width; i > 0; i--)
		*ret = *ret << 8 | r->p[r->at + i];
	r->at += 1 + width;
	return 0;
}

static int string_op(struct reader *r, int proto, const unsigned char **ret, size_t *ret_len)
{
	uint64_t len;
	size_t width;

	if (r->at >= r->n)
		return refuse(r, "expected a string");
	switch (r->p[r->at]) {
	case OP_BINUNICODE: width = 4; break;
	case OP_SHORT_BINUNICODE: width = proto >= 4 ? 1 : 0; break;
	case OP_BINUNICODE8: width = proto >= 4 ? 8 : 0; break;
	default: width = 0; break;
	}
	if (width == 0)
		return refuse(r, "only a single string is accepted");
	if (length(r, width, &len) < 0)
		return -1;
	if (len > r->n - r->at)
		return refuse(r, "string longer than the pickle");
	*ret = r->p + r->at;
	*ret_len = (size_t)len;
	r->at += (size_t)len;
	return 0;
}

int ee_pickle_str(const unsigned char *p, size_t n, const unsigned char **ret, size_t *ret_len, char *why,
                  size_t why_len)
{
	struct reader r = { p, n, 0, why, why_len };
	uint64_t frame;
	int proto;

	if (why_len)
		why[0] = '\0';
	if (n < 2 || p[0] != OP_PROTO)
		return refuse(&r, "expected PROTO (a pickle of protocol 2 or later)");
	proto = p[1];
	if (proto < 2 || proto > 5)
		return r.at = 1, refuse(&r, "protocol not in 2..5");
	r.at = 2;
	if (r.at < n && p[r.at] == OP_FRAME && proto >= 4) {
		if (length(&r, 8, &frame) < 0)
			return -1;
		if (frame != n - r.at)
			return r.at -= 9, refuse(&r, "frame length is not the rest of the pickle");
	}
	if (string_op(&r, proto, ret, ret_len) < 0)
		return -1;
	if (r.at < n && ((p[r.at] == OP_MEMOIZE && proto >= 4)))
		r.at++;
	else if (r.at < n && p[r.at] == OP_BINPUT && proto < 4) {
		if (n - r.at < 2)
			return refuse(&r, "truncated BINPUT");
		r.at += 2;
	}
	if (r.at >= n || p[r.at] != OP_STOP)
		return refuse(&r, "expected STOP after the string (only a single string is accepted)");
	r.at++;
	if (r.at != n)
		return refuse(&r, "bytes after STOP");
	return 0;
}
