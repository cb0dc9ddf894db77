/* auth.c - loading and checking the bearer token (see auth.h). */
#include "serve/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/err.h"

#define TOKEN_MIN 16
#define TOKEN_MAX 4096

int ee_token_load(const char *path, char **ret, struct ee_err *err)
{
	char buf[TOKEN_MAX + 2];
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return ee_fail_errno(err, EE_ERR_USAGE, "--token-file %s", path);
	for (;;) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return ee_fail_errno(err, EE_ERR_USAGE, "--token-file %s", path);
		}
		if (n == 0 || (len += (size_t)n) == sizeof(buf))
			break;
	}
	close(fd);
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	if (len > TOKEN_MAX)
		return ee_fail(err, EE_ERR_USAGE, "--token-file %s: longer than %d bytes", path, TOKEN_MAX);
	if (len < TOKEN_MIN)
		return ee_fail(err, EE_ERR_USAGE, "--token-file %s: %s (at least %d characters)", path,
		               len ? "token too short" : "empty", TOKEN_MIN);
	for (size_t i = 0; i < len; i++)
		if (buf[i] <= ' ' || buf[i] > '~')
			return ee_fail(
			        err, EE_ERR_USAGE,
			        "--token-file %s: byte %zu is not printable ASCII (the token is one word)",
			        path, i + 1);
	char *token = malloc(len + 1);
	if (!token)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	memcpy(token, buf, len);
	token[len] = '\0';
	*ret = token;
	return 0;
}

int ee_token_check(const char *token, const char *header)
{
	static const char scheme[] = "Bearer ";
	size_t tlen = strlen(token);

	if (!header || strncasecmp(header, scheme, sizeof(scheme) - 1) != 0)
		return 0;
	const volatile unsigned char *got = (const unsigned char *)header + sizeof(scheme) - 1;
	size_t glen = strlen((const char *)got);
	/* Every byte of what was sent is compared, against the token cycled:
	 * the time depends on glen, which the client knows, not on the token. */
	unsigned diff = glen != tlen;
	for (size_t i = 0; i < glen; i++)
		diff |= got[i] ^ (unsigned char)token[i % tlen];
	return diff == 0;
}
