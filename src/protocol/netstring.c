/* netstring.c - incremental netstring decoding of the result channel.
 *
 * Bytes are appended to one capped buffer. ee_ns_next parses at the read
 * offset `consumed`; a returned payload stays where it is (its ',' replaced
 * by the NUL the header promises) and the bytes before the offset are only
 * dropped by the next feed, in one move. That keeps the borrowed pointer
 * valid and draining a chunk of many small frames linear, not quadratic.
 * The header is checked byte by byte as it arrives, so a hostile length
 * fails after its digits, never after megabytes of payload were buffered.
 * Lengths are accumulated in size_t against max_frame before multiplying,
 * so no length can overflow.
 */
#include "protocol/netstring.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"

/* Marks the decoder failed with code and a reason, and reports it. */
__attribute__((format(printf, 4, 5))) static int fail(struct ee_ns_decoder *d, struct ee_err *err, int code,
                                                      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->failure, sizeof(d->failure), fmt, ap);
	va_end(ap);
	d->failed = code;
	return ee_fail(err, code, "%s", d->failure);
}

/* The sticky error again, for every call after the first failure. */
static int failed_again(const struct ee_ns_decoder *d, struct ee_err *err)
{
	return ee_fail(err, d->failed, "%s", d->failure);
}

void ee_ns_init(struct ee_ns_decoder *d, size_t max_frame, size_t max_total)
{
	/* The stream cap bounds the buffer too; halved so that ee_buf's
	 * len + 1 and doubling arithmetic can never wrap. */
	ee_buf_init(&d->buf, max_total < SIZE_MAX / 2 ? max_total : SIZE_MAX / 2);
	d->max_frame = max_frame;
	d->max_total = max_total;
	d->total = 0;
	d->consumed = 0;
	d->failed = 0;
	d->failure[0] = '\0';
}

void ee_ns_free(struct ee_ns_decoder *d)
{
	if (!d)
		return;
	ee_buf_free(&d->buf);
	d->consumed = 0;
}

/* Drops the frames already returned. Invalidates their payload pointers. */
static void compact(struct ee_ns_decoder *d)
{
	if (d->consumed == 0)
		return;
	ee_buf_consume(&d->buf, d->consumed);
	d->consumed = 0;
}

/* Bytes fed but not yet returned as frames. */
static size_t pending(const struct ee_ns_decoder *d)
{
	return d->buf.len - d->consumed;
}

int ee_ns_feed(struct ee_ns_decoder *d, const void *p, size_t n, struct ee_err *err)
{
	if (d->failed)
		return failed_again(d, err);
	if (n > d->max_total - d->total)
		return fail(d, err, EE_ERR_USAGE, "bad frame: stream over %zu bytes", d->max_total);
	compact(d);
	if (ee_buf_append(&d->buf, p, n) < 0)
		return fail(d, err, EE_ERR_SANDBOX, "netstring: cannot buffer %zu bytes%s", n,
		            d->buf.oom ? ": out of memory" : "");
	d->total += n;
	return 0;
}

/* Parses "<digits>:" at the read offset. Returns 1 with the header's size
 * and the payload length, 0 when more bytes are needed, -1 on error. */
static int parse_header(struct ee_ns_decoder *d, size_t *ret_hdr, size_t *ret_len, struct ee_err *err)
{
	size_t have = pending(d), value = 0, i;
	const unsigned char *p = have ? (const unsigned char *)d->buf.data + d->consumed : NULL;

	for (i = 0; i < have && p[i] >= '0' && p[i] <= '9'; i++) {
		size_t digit = (size_t)(p[i] - '0');
		if (i == 1 && p[0] == '0')
			return fail(d, err, EE_ERR_USAGE, "bad frame: leading zero in length");
		if (value > d->max_frame / 10 || digit > d->max_frame - value * 10)
			return fail(d, err, EE_ERR_USAGE, "bad frame: length over %zu", d->max_frame);
		value = value * 10 + digit;
	}
	if (i == have)
		return 0;
	if (p[i] != ':')
		return fail(d, err, EE_ERR_USAGE, "bad frame: byte 0x%02x in length", p[i]);
	if (i == 0)
		return fail(d, err, EE_ERR_USAGE, "bad frame: empty length");
	*ret_hdr = i + 1;
	*ret_len = value;
	return 1;
}

int ee_ns_next(struct ee_ns_decoder *d, const char **payload, size_t *len, struct ee_err *err)
{
	size_t hdr = 0, n = 0;

	if (d->failed)
		return failed_again(d, err);
	int r = parse_header(d, &hdr, &n, err);
	if (r <= 0)
		return r;
	/* hdr <= pending here; the payload and its ',' need n + 1 more bytes. */
	if (pending(d) - hdr <= n)
		return 0;
	char *body = d->buf.data + d->consumed + hdr;
	if (body[n] != ',')
		return fail(d, err, EE_ERR_USAGE, "bad frame: missing ',' after %zu-byte payload", n);
	body[n] = '\0';
	*payload = body;
	*len = n;
	d->consumed += hdr + n + 1;
	return 1;
}

int ee_ns_finish(struct ee_ns_decoder *d, struct ee_err *err)
{
	if (d->failed)
		return failed_again(d, err);
	if (pending(d) > 0)
		return fail(d, err, EE_ERR_USAGE, "bad frame: truncated frame (%zu bytes pending)",
		            pending(d));
	return 0;
}
