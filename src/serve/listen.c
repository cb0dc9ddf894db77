/* listen.c - parsing and printing listen addresses (see listen.h). */
#include "serve/listen.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

static int parse_port(const char *s, const char *text, unsigned short *ret, struct ee_err *err)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return ee_fail(err, EE_ERR_USAGE, "--listen %s: expected HOST:PORT, PORT a number", text);
	unsigned long p = strtoul(s, &end, 10);
	if (*end || p > 65535)
		return ee_fail(err, EE_ERR_USAGE, "--listen %s: port must be 0..65535", text);
	*ret = (unsigned short)p;
	return 0;
}

int ee_listen_parse(const char *s, struct ee_listen_addr *ret, struct ee_err *err)
{
	char host[64];
	const char *colon;
	unsigned short port;

	memset(ret, 0, sizeof(*ret));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':' || (size_t)(close - s - 1) >= sizeof(host))
			return ee_fail(err, EE_ERR_USAGE, "--listen %s: expected [IPv6]:PORT", s);
		memcpy(host, s + 1, (size_t)(close - s - 1));
		host[close - s - 1] = '\0';
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= sizeof(host) || strchr(s, ':') != colon)
			return ee_fail(err, EE_ERR_USAGE,
			               "--listen %s: expected HOST:PORT (IPv6 as [::1]:PORT)", s);
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = '\0';
	}
	if (parse_port(colon + 1, s, &port, err) < 0)
		return -1;
	if (strcmp(host, "localhost") == 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ret->sa;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ret->sa;
	if (s[0] != '[' && inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		ret->len = sizeof(*in4);
	} else if (s[0] == '[' && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		ret->len = sizeof(*in6);
	} else {
		return ee_fail(err, EE_ERR_USAGE,
		               "--listen %s: '%s' is not a numeric address (e.g. 127.0.0.1, [::1], 0.0.0.0)",
		               s, host);
	}
	return 0;
}

int ee_listen_is_loopback(const struct ee_listen_addr *a)
{
	if (a->sa.ss_family == AF_INET) {
		const struct sockaddr_in *in4 = (const struct sockaddr_in *)&a->sa;
		return (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	}
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&a->sa;
	if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
		return 1;
	return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
}

void ee_listen_format(const struct sockaddr *sa, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in4 = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host));
		snprintf(buf, size, "%s:%u", host, ntohs(in4->sin_port));
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, size, "[%s]:%u", host, ntohs(in6->sin6_port));
	}
}
