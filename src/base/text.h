/* text.h - making untrusted bytes safe to put in a JSON record.
 *
 * Candidate output is arbitrary bytes; JSON strings must be valid UTF-8.
 */
#ifndef EE_TEXT_H
#define EE_TEXT_H

#include <stddef.h>

/* Copies src[0..len) into a malloc'd NUL-terminated string, replacing each
 * invalid UTF-8 sequence (overlong forms, surrogates, > U+10FFFF, truncated
 * sequences, and NUL bytes) with U+FFFD, and keeping at most max_chars
 * characters (code points). *ret_truncated (when non-NULL) is set to 1 when
 * characters were dropped. Returns NULL on allocation failure and on
 * src == NULL with len > 0. Each maximal ill-formed subpart becomes one
 * U+FFFD (Unicode's recommended practice, as Python's errors="replace"). */
char *ee_text_sanitize(const char *src, size_t len, size_t max_chars, int *ret_truncated);

/* Length (1 to 4) of the well-formed UTF-8 character at s[0..n), or 0 when
 * the bytes there are ill-formed or n == 0. NUL counts as well-formed. */
size_t ee_utf8_char_len(const char *s, size_t n);

/* The index of the first byte of s[0..n) that starts no well-formed UTF-8
 * character (as Python's UnicodeDecodeError reports it), or -1: all valid. */
long ee_utf8_first_bad(const char *s, size_t n);

#endif
