/* input.c - reading an input file once, decompressing gzip (see input.h). */
#include "input/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"

/* A failure of the content: in->why says it without the file's name, for
 * callers that name the line too. */
static int fail(struct ee_input *in, struct ee_err *err, const char *why, const char *detail)
{
	snprintf(in->why, sizeof(in->why), "%s%s%.100s", why, detail ? ": " : "", detail ? detail : "");
	return ee_fail(err, EE_ERR_USAGE, "%.300s: %s", in->name, in->why);
}

/* Appends raw bytes at raw[raw_len..); 0 at the end of the file. */
static ssize_t read_raw(struct ee_input *in, size_t at, struct ee_err *err)
{
	for (;;) {
		ssize_t n = read(in->fd, in->raw + at, sizeof(in->raw) - at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(in->why, sizeof(in->why), "read: %s", strerror(errno));
			return ee_fail(err, EE_ERR_USAGE, "%.300s: %s", in->name, in->why);
		}
		in->eof = n == 0;
		ee_sha256_update(&in->sha, in->raw + at, (size_t)n);
		return n;
	}
}

/* zlib allocates through these, so its allocations are the program's own
 * malloc's (tests that fail allocations one by one reach them: test_oom). */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
	(void)opaque;
	if (size && items > SIZE_MAX / size)
		return Z_NULL;
	return malloc((size_t)items * size);
}

static void z_free(voidpf opaque, voidpf p)
{
	(void)opaque;
	free(p);
}

int ee_input_open(struct ee_input *in, const char *path, struct ee_err *err)
{
	int stdin_ = strcmp(path, "-") == 0;

	memset(in, 0, sizeof(*in));
	snprintf(in->name, sizeof(in->name), "%s", stdin_ ? "<stdin>" : path);
	ee_sha256_init(&in->sha);
	in->fd = stdin_ ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0)
		return ee_fail_errno(err, EE_ERR_USAGE, "%s", path);
	in->own_fd = !stdin_;
	/* A pipe may give one byte at a time: enough of them to see the magic. */
	while (in->raw_len < 2 && !in->eof) {
		ssize_t n = read_raw(in, in->raw_len, err);
		if (n < 0)
			return -1;
		in->raw_len += (size_t)n;
	}
	in->gzip = in->raw_len >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b;
	if (!in->gzip) {
		in->data = in->raw;
		in->len = in->raw_len;
		return 0;
	}
	in->z.zalloc = z_alloc;
	in->z.zfree = z_free;
	if (inflateInit2(&in->z, 16 + MAX_WBITS) != Z_OK)
		return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", in->name);
	in->z_live = 1;
	in->z.next_in = in->raw;
	in->z.avail_in = (uInt)in->raw_len;
	in->data = in->out;
	return 0;
}

static int fill_plain(struct ee_input *in, struct ee_err *err)
{
	if (in->eof)
		return 0;
	ssize_t n = read_raw(in, 0, err);
	if (n < 0)
		return -1;
	in->len = (size_t)n;
	return n > 0;
}

/* Inflates until some content comes out, the last member ends cleanly, or
 * the stream is found corrupt or cut short. */
static int fill_gzip(struct ee_input *in, struct ee_err *err)
{
	for (;;) {
		if (in->z.avail_in == 0 && !in->eof) {
			ssize_t n = read_raw(in, 0, err);
			if (n < 0)
				return -1;
			in->z.next_in = in->raw;
			in->z.avail_in = (uInt)n;
		}
		if (in->member_end) {
			if (in->z.avail_in == 0)
				return 0;
			inflateReset(&in->z); /* another member follows, as `gzip -c a b` makes */
			in->member_end = 0;
		}
		in->z.next_out = in->out;
		in->z.avail_out = sizeof(in->out);
		int rc = inflate(&in->z, Z_NO_FLUSH);
		in->len = sizeof(in->out) - in->z.avail_out;
		if (rc == Z_STREAM_END)
			in->member_end = 1;
		else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT)
			return fail(in, err, "corrupt gzip data", in->z.msg ? in->z.msg : "bad stream");
		else if (rc == Z_MEM_ERROR)
			return fail(in, err, "out of memory", NULL);
		else if (in->len == 0 && in->eof && in->z.avail_in == 0)
			return fail(in, err, "truncated gzip data (the file ends inside the stream)", NULL);
		if (in->len > 0)
			return 1;
	}
}

int ee_input_fill(struct ee_input *in, struct ee_err *err)
{
	if (in->pos < in->len)
		return 1;
	in->pos = in->len = 0;
	return in->gzip ? fill_gzip(in, err) : fill_plain(in, err);
}

void ee_input_sha256(struct ee_input *in, char out[EE_SHA256_HEX])
{
	struct ee_sha256 copy = in->sha; /* final consumes it: the input may go on */
	uint8_t digest[EE_SHA256_LEN];
	ee_sha256_final(&copy, digest);
	ee_sha256_hex(digest, out);
}

void ee_input_close(struct ee_input *in)
{
	if (in->z_live)
		inflateEnd(&in->z);
	in->z_live = 0;
	if (in->own_fd && in->fd >= 0)
		close(in->fd);
	in->fd = -1;
	in->own_fd = 0;
}
