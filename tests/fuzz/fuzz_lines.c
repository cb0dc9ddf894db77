/* fuzz_lines.c - the line reader (lines.h) on arbitrary bytes, plain or as
 * the body of a gzip stream: never a crash, and every line it gives is
 * within the cap, newline-free, valid UTF-8, at an offset that only grows. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/err.h"
#include "input/lines.h"
#include "base/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP 64

/* A gzip header (deflate, no name, no mtime) before the fuzzed deflate data. */
static const uint8_t gzip_header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };

static void check(const char *path)
{
	struct ee_lines l;
	struct ee_err err;
	uint64_t last = 0;
	unsigned long lines = 0;
	int rc;

	if (ee_lines_open(&l, path, CAP, &err) == 0)
		while ((rc = ee_lines_next(&l, &err)) != 0 && rc != -1) {
			if (++lines != l.line_no || l.line_offset < last || l.offset < l.line_offset)
				__builtin_trap();
			last = l.offset;
			if (rc == 1 && (l.line.len > CAP || memchr(l.line.data, '\n', l.line.len) ||
			                ee_utf8_first_bad(l.line.data, l.line.len) >= 0))
				__builtin_trap();
		}
	ee_lines_close(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64];

	if (fd < 0)
		fd = memfd_create("fuzz-lines", 0);
	if (size == 0 || fd < 0 || ftruncate(fd, 0) < 0)
		return 0;
	/* the first byte picks: plain bytes, or the rest as a gzip body */
	int gz = data[0] & 1;
	if ((gz && pwrite(fd, gzip_header, sizeof(gzip_header), 0) != sizeof(gzip_header)) ||
	    pwrite(fd, data + 1, size - 1, gz ? sizeof(gzip_header) : 0) != (ssize_t)(size - 1))
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	check(path);
	return 0;
}
