/* netstring.h - incremental decoder of the result channel's framing.
 *
 * Frames are netstrings: "<decimal length>:<payload>," (docs/protocol.md).
 * Bytes arrive in arbitrary chunks from an untrusted writer; the decoder
 * rejects leading zeros, non-digits, lengths over max_frame, a missing ','
 * and more than max_total bytes in all. A bad header fails as soon as its
 * bytes arrive (an oversized length after its digits, not after its payload).
 * When the caller drains every whole frame with ee_ns_next after each feed,
 * the buffer holds at most one partial frame (max_frame + 16 bytes) plus the
 * next chunk fed; it never exceeds max_total. After an error the decoder
 * stays failed. It owns its buffer. Error codes: EE_ERR_USAGE for a bad
 * stream, EE_ERR_SANDBOX when memory runs out.
 */
#ifndef EE_NETSTRING_H
#define EE_NETSTRING_H

#include <stddef.h>
#include "base/buf.h"

struct ee_err;

struct ee_ns_decoder {
	struct ee_buf buf; /* undecoded bytes */
	size_t max_frame;  /* largest payload accepted */
	size_t max_total;  /* largest stream accepted */
	size_t total;      /* bytes fed so far */
	size_t consumed;   /* bytes of buf already returned as frames */
	int failed;        /* sticky error */
	char failure[128]; /* why, once failed */
};

void ee_ns_init(struct ee_ns_decoder *d, size_t max_frame, size_t max_total);
void ee_ns_free(struct ee_ns_decoder *d);

/* Appends bytes. Returns 0, or -1 (decoder failed) past max_total. */
int ee_ns_feed(struct ee_ns_decoder *d, const void *p, size_t n, struct ee_err *err);

/* Returns 1 and sets *payload (borrowed until the next feed/next/free call,
 * NUL-terminated) and *len when a whole frame is available; 0 when more bytes
 * are needed; -1 on a framing error. */
int ee_ns_next(struct ee_ns_decoder *d, const char **payload, size_t *len, struct ee_err *err);

/* Call at EOF: returns 0 when no partial frame is pending, else -1
 * ("truncated frame"). */
int ee_ns_finish(struct ee_ns_decoder *d, struct ee_err *err);

#endif
