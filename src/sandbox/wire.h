/* wire.h - one fixed-size message and its descriptors over a SOCK_SEQPACKET
 * socket: the conversation between the supervisor and a warm worker.
 *
 * A message is exactly `len` bytes (shorter, longer or truncated is an
 * error: EPROTO) with at most EE_WIRE_MAX_FDS descriptors (SCM_RIGHTS),
 * received close-on-exec. Descriptors past what the receiver wants are
 * closed, never leaked.
 */
#ifndef EE_WIRE_H
#define EE_WIRE_H

#include <stddef.h>

#define EE_WIRE_MAX_FDS 12

/* 0, or -1 with errno. MSG_NOSIGNAL: a closed peer is EPIPE, not SIGPIPE. */
int ee_wire_send(int sock, const void *msg, size_t len, const int *fds, int nfds);

/* 1: a message (and *nfds descriptors in fds, at most max), 0: the peer
 * closed, -1 with errno (EAGAIN with MSG_DONTWAIT in flags; EPROTO for a
 * malformed message, whose descriptors are closed). */
int ee_wire_recv(int sock, void *msg, size_t len, int *fds, int max, int *nfds, int flags);

#endif
