/* input.h - the bytes of an input file, read once, gzip or not.
 *
 * Tasks, samples and results files are read front to back in chunks, never
 * twice, so a pipe (`-`, /dev/stdin, `<(...)`) works like a file. A file
 * whose first two bytes are gzip's magic (1f 8b) is decompressed on the way,
 * whatever its name (members one after another, as gzip reads them); a
 * corrupt or truncated stream is an error naming the file. The sha256 is of
 * the bytes as given (the compressed ones for a .gz), so it matches
 * `sha256sum FILE`.
 *
 * Lifecycle: ee_input_open, ee_input_fill (taking data by advancing pos) until it returns
 * 0, ee_input_close (accepts a zeroed or failed input).
 */
#ifndef EE_INPUT_H
#define EE_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "base/sha256.h"

struct ee_err;

#define EE_INPUT_CHUNK 65536

struct ee_input {
	char name[512]; /* for messages: the path, "<stdin>" for "-" */
	char why[192];  /* the last failure without the name, for file:line messages */
	int fd;         /* -1: closed */
	int own_fd;     /* not standard input: closed at the end */
	int gzip;       /* the content is decompressed */
	int eof;        /* no more raw bytes */
	int z_live;     /* z is initialised */
	int member_end; /* a gzip member ended: another may follow */
	z_stream z;
	struct ee_sha256 sha; /* of the raw bytes read so far */
	unsigned char raw[EE_INPUT_CHUNK];
	size_t raw_len; /* plain input: raw[pos..raw_len) is the data */
	unsigned char out[EE_INPUT_CHUNK];
	const unsigned char *data; /* the bytes ee_input_fill made available */
	size_t pos, len;           /* data[pos..len) not taken yet */
};

/* Opens path ("-": standard input, not closed at the end) and sniffs gzip. */
int ee_input_open(struct ee_input *in, const char *path, struct ee_err *err);

/* Makes more content available in in->data[in->pos..in->len) when none is
 * left: 1 when some is, 0 at the end, -1 on a read error or corrupt gzip
 * (err names the file; the caller adds where it was). */
int ee_input_fill(struct ee_input *in, struct ee_err *err);

/* The sha256 (hex) of the raw bytes read so far: of the whole file once
 * ee_input_fill returned 0. */
void ee_input_sha256(struct ee_input *in, char out[EE_SHA256_HEX]);

void ee_input_close(struct ee_input *in);

#endif
