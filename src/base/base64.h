/* base64.h - standard base64 (RFC 4648, with padding), both ways. */
#ifndef EE_BASE_BASE64_H
#define EE_BASE_BASE64_H

#include <stddef.h>

/* Base64 of p[0..n), NUL-terminated, malloc'd; NULL when out of memory. */
char *ee_base64_encode(const unsigned char *p, size_t n);

/* The bytes of s[0..n) (padded base64, no whitespace), malloc'd with a NUL
 * after them and their count in *len; NULL when s is not such base64 or
 * memory ran out. */
char *ee_base64_decode(const char *s, size_t n, size_t *len);

#endif
