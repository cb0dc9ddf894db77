/* sha256.h - SHA-256 (FIPS 180-4), incremental, and of a whole file.
 *
 * The history identifies a data set by the sha256 of its file; files are
 * streamed through a fixed buffer, so any size hashes in bounded memory.
 *
 * Lifecycle: ee_sha256_init, ee_sha256_update (any number of times),
 * ee_sha256_final. The context holds no heap memory.
 * Errors: only ee_sha256_file fails (the file cannot be opened or read).
 */
#ifndef EE_SHA256_H
#define EE_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct ee_err;

#define EE_SHA256_LEN 32
#define EE_SHA256_HEX (2 * EE_SHA256_LEN + 1) /* 64 lowercase hex digits and a NUL */

struct ee_sha256 {
	uint32_t h[8];
	uint64_t bytes; /* message length so far */
	uint8_t block[64];
	size_t fill; /* bytes waiting in block */
};

void ee_sha256_init(struct ee_sha256 *c);
void ee_sha256_update(struct ee_sha256 *c, const void *data, size_t len);
/* Writes the digest; c must be initialized again before reuse. */
void ee_sha256_final(struct ee_sha256 *c, uint8_t out[EE_SHA256_LEN]);

/* The digest as lowercase hex. */
void ee_sha256_hex(const uint8_t digest[EE_SHA256_LEN], char out[EE_SHA256_HEX]);

/* 1 when s is a hex digest as ee_sha256_hex writes it (64 lowercase hex
 * digits), else 0 (also for NULL). */
int ee_sha256_is_hex(const char *s);

/* The hex digest of the file at path, read in fixed-size chunks. Errors name
 * the path. */
int ee_sha256_file(const char *path, char out[EE_SHA256_HEX], struct ee_err *err);

#endif
