/* test_wire.c - messages with descriptors between supervisor and worker (wire.h).
 *
 * Over a real SOCK_SEQPACKET pair: a message and its descriptors arrive
 * whole; anything malformed (short, long, too many descriptors) is an
 * error that leaks no descriptor; a closed peer is 0, an empty socket
 * EAGAIN. Leaks of descriptors are counted through /proc/self/fd. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/wire.h"

struct msg {
	int type;
	char text[60];
};

static int sv[2];

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

static void pair(void)
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

static void unpair(void)
{
	close(sv[0]);
	close(sv[1]);
}

TestSuite(wire, .init = pair, .fini = unpair);

Test(wire, a_message_and_its_descriptors_arrive_whole)
{
	struct msg out = { 7, "hello" }, in;
	int p[2], got[4], n;
	cr_assert_eq(pipe(p), 0);
	int before = open_fds();

	cr_assert_eq(ee_wire_send(sv[0], &out, sizeof(out), p, 2), 0);
	cr_assert_eq(ee_wire_recv(sv[1], &in, sizeof(in), got, 4, &n, 0), 1);
	cr_expect_eq(n, 2);
	cr_expect_eq(in.type, 7);
	cr_expect_str_eq(in.text, "hello");
	cr_expect(fcntl(got[0], F_GETFD) & FD_CLOEXEC, "received close-on-exec");
	/* The received ends are the pipe's: what goes in one comes out of the other. */
	cr_assert_eq(write(got[1], "x", 1), 1);
	char c = 0;
	cr_expect_eq(read(p[0], &c, 1), 1);
	cr_expect_eq(c, 'x');
	cr_expect_eq(open_fds(), before + 2);
	close(got[0]);
	close(got[1]);
	close(p[0]);
	close(p[1]);
}

Test(wire, descriptors_past_what_the_receiver_wants_are_closed)
{
	struct msg out = { 1, "" }, in;
	int p[2], got[1], n;
	cr_assert_eq(pipe(p), 0);
	int before = open_fds();

	cr_assert_eq(ee_wire_send(sv[0], &out, sizeof(out), p, 2), 0);
	cr_assert_eq(ee_wire_recv(sv[1], &in, sizeof(in), got, 1, &n, 0), 1);
	cr_expect_eq(n, 1);
	cr_expect_eq(open_fds(), before + 1, "the second descriptor was closed, not leaked");
	close(got[0]);
	close(p[0]);
	close(p[1]);
}

Test(wire, a_message_of_the_wrong_size_is_refused_and_leaks_nothing)
{
	struct msg in;
	int p[2], got[4], n;
	cr_assert_eq(pipe(p), 0);
	int before = open_fds();

	/* Shorter than expected. */
	cr_assert_eq(ee_wire_send(sv[0], "abc", 3, p, 2), 0);
	cr_expect_eq(ee_wire_recv(sv[1], &in, sizeof(in), got, 4, &n, 0), -1);
	cr_expect_eq(errno, EPROTO);
	cr_expect_eq(n, 0);
	/* Longer: truncated by the kernel (MSG_TRUNC). */
	char big[sizeof(in) + 16];
	memset(big, 'x', sizeof(big));
	cr_assert_eq(ee_wire_send(sv[0], big, sizeof(big), p, 1), 0);
	cr_expect_eq(ee_wire_recv(sv[1], &in, sizeof(in), got, 4, &n, 0), -1);
	cr_expect_eq(errno, EPROTO);
	cr_expect_eq(open_fds(), before, "descriptors of refused messages are closed");
	close(p[0]);
	close(p[1]);
}

Test(wire, more_descriptors_than_the_wire_carries_is_an_error)
{
	struct msg out = { 1, "" };
	int fds[EE_WIRE_MAX_FDS + 1];
	for (int i = 0; i <= EE_WIRE_MAX_FDS; i++)
		fds[i] = 0;
	cr_expect_eq(ee_wire_send(sv[0], &out, sizeof(out), fds, EE_WIRE_MAX_FDS + 1), -1);
	cr_expect_eq(errno, EINVAL);
}

Test(wire, an_empty_socket_and_a_closed_peer)
{
	struct msg in;
	int got[1], n;

	cr_expect_eq(ee_wire_recv(sv[1], &in, sizeof(in), got, 1, &n, MSG_DONTWAIT), -1);
	cr_expect(errno == EAGAIN || errno == EWOULDBLOCK);
	close(sv[0]);
	sv[0] = -1;
	cr_expect_eq(ee_wire_recv(sv[1], &in, sizeof(in), got, 1, &n, 0), 0);
	struct msg out = { 1, "" };
	cr_expect_eq(ee_wire_send(sv[1], &out, sizeof(out), NULL, 0), -1, "no SIGPIPE, an error");
	cr_expect_eq(errno, EPIPE);
}
