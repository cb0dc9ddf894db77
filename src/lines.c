/* lines.c - bounded line reading (see lines.h). */
#include "lines.h"

#include <stdio.h>
#include <stdlib.h>

long ee_read_line(void *fp, char **buf, size_t *alloc, size_t cap, int *had_newline)
{
	FILE *f = fp;
	size_t len = 0;
	int c, too_long = 0;

	*had_newline = 0;
	while ((c = getc(f)) != EOF) {
		if (c == '\n') {
			*had_newline = 1;
			break;
		}
		if (len >= cap) {
			too_long = 1;
			continue;
		}
		if (len + 2 > *alloc) {
			size_t n = *alloc ? *alloc * 2 : 4096;
			char *p = realloc(*buf, n);
			if (!p)
				return -2;
			*buf = p;
			*alloc = n;
		}
		(*buf)[len++] = (char)c;
	}
	if (c == EOF && len == 0 && !too_long)
		return -1;
	if (too_long)
		return -2;
	if (!*buf) {
		*buf = malloc(1);
		if (!*buf)
			return -2;
		*alloc = 1;
	}
	(*buf)[len] = '\0';
	return (long)len;
}
