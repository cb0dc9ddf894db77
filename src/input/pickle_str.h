/* pickle_str.h - the one pickle execeval reads: a single str, as CPython's
 * pickle.dumps(s) writes it (LiveCodeBench's private tests are
 * base64(zlib(pickle(json_text)))).
 *
 * A pickle is a program for a stack machine; unpickling an untrusted one
 * can call anything. This reader is no unpickler: it accepts exactly the
 * byte shape CPython emits for a str (protocol 2 to 5) and refuses every
 * other opcode:
 *
 *     PROTO v                      (0x80, v in 2..5)
 *     [FRAME n]                    (0x95, 8-byte length: the rest; v >= 4)
 *     SHORT_BINUNICODE | BINUNICODE | BINUNICODE8   (0x8c / 'X' / 0x8d)
 *     [MEMOIZE | BINPUT i]         (0x94, v >= 4 / 'q', v < 4)
 *     STOP                         ('.'), then nothing
 *
 * No allocation: the string is returned in place, inside the input; its
 * bytes are not checked here (the caller parses them as JSON, which checks
 * UTF-8).
 */
#ifndef EE_PICKLE_STR_H
#define EE_PICKLE_STR_H

#include <stddef.h>

/* The str p[0..n) pickles: 0 with *ret, *ret_len pointing into p, or -1
 * with a reason in why[0..why_len) ("opcode 0x63 at byte 2: only a single
 * string is accepted"). */
int ee_pickle_str(const unsigned char *p, size_t n, const unsigned char **ret, size_t *ret_len, char *why,
                  size_t why_len);

#endif
