/* buf.c - capped growable buffer (see buf.h). */
#include "base/buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void ee_buf_init(struct ee_buf *b, size_t cap)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
	b->oom = 0;
}

void ee_buf_free(struct ee_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
}

void ee_buf_reset(struct ee_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

static int reserve(struct ee_buf *b, size_t need)
{
	if (need >= SIZE_MAX / 2)
		return -1; /* doubling below would wrap */
	if (need + 1 <= b->alloc)
		return 0;
	size_t alloc = b->alloc ? b->alloc : 256;
	while (alloc < need + 1)
		alloc *= 2;
	char *p = realloc(b->data, alloc);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->data = p;
	b->alloc = alloc;
	return 0;
}

int ee_buf_append(struct ee_buf *b, const void *p, size_t n)
{
	if (n > b->cap - b->len)
		return -1;
	if (reserve(b, b->len + n) < 0)
		return -1;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

size_t ee_buf_append_some(struct ee_buf *b, const void *p, size_t n)
{
	size_t room = b->cap - b->len;
	size_t take = n < room ? n : room;

	if (ee_buf_append(b, p, take) < 0)
		return 0;
	return take;
}

void ee_buf_consume(struct ee_buf *b, size_t n)
{
	if (n >= b->len) {
		ee_buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}
