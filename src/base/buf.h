/* buf.h - a growable byte buffer with a hard cap.
 *
 * Every byte that comes from a candidate, a data file or a client goes into an
 * ee_buf, whose cap is set at init and never exceeded: ee_buf_append fails at
 * the cap instead of growing. The buffer owns its storage; ee_buf_free
 * releases it and accepts a zeroed or half-built buffer. The data is always
 * NUL-terminated (one byte beyond len), so text can be used as a C string.
 */
#ifndef EE_BUF_H
#define EE_BUF_H

#include <stddef.h>

struct ee_buf {
	char *data;   /* NULL until the first append; NUL-terminated after */
	size_t len;   /* bytes held */
	size_t alloc; /* bytes allocated */
	size_t cap;   /* hard maximum of len */
	int oom;      /* an append failed for memory, not for the cap */
};

void ee_buf_init(struct ee_buf *b, size_t cap);
void ee_buf_free(struct ee_buf *b);
void ee_buf_reset(struct ee_buf *b); /* len = 0, keeps storage and cap */

/* Appends n bytes. Returns 0, or -1 (nothing appended) when len + n would
 * exceed the cap or memory is exhausted. */
int ee_buf_append(struct ee_buf *b, const void *p, size_t n);

/* Appends as much of p as fits under the cap; returns the bytes taken. */
size_t ee_buf_append_some(struct ee_buf *b, const void *p, size_t n);

/* Drops the first n bytes (n <= len). */
void ee_buf_consume(struct ee_buf *b, size_t n);

#endif
