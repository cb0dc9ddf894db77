/* auth.h - the server's bearer token.
 *
 * The token is read once from a file (--token-file): its content without a
 * trailing newline, printable ASCII only, 16 to 4096 bytes (a shorter one is
 * guessable; anything else is likely the wrong file). Checking a request's
 * Authorization header takes time that depends on the header's length only,
 * never on how much of the token it got right.
 */
#ifndef EE_SERVE_AUTH_H
#define EE_SERVE_AUTH_H

struct ee_err;

/* *ret: malloc'd token. Errors name the file. */
int ee_token_load(const char *path, char **ret, struct ee_err *err);

/* 1 when header is "Bearer <token>" (scheme case-insensitive), else 0.
 * header may be NULL (absent). */
int ee_token_check(const char *token, const char *header);

#endif
