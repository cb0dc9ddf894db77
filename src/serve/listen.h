/* listen.h - the address `serve --listen` binds: "127.0.0.1:8080",
 * "[::1]:8080" or "localhost:8080" (numeric addresses only otherwise: no
 * name lookup at start-up). The port is required; 0 asks for any free one.
 */
#ifndef EE_SERVE_LISTEN_H
#define EE_SERVE_LISTEN_H

#include <sys/socket.h>

struct ee_err;

struct ee_listen_addr {
	struct sockaddr_storage sa;
	socklen_t len;
};

int ee_listen_parse(const char *s, struct ee_listen_addr *ret, struct ee_err *err);

/* 1 for 127.0.0.0/8 and ::1 (and ::ffff:127.x). */
int ee_listen_is_loopback(const struct ee_listen_addr *a);

/* "127.0.0.1:8080" / "[::1]:8080" into buf. */
void ee_listen_format(const struct sockaddr *sa, char *buf, size_t size);

#endif
