/* notify.c - the refused system calls, seen by the supervisor (notify.h). */
#include "sandbox/notify.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/tally.h"
#include "sandbox/write_watch.h"

int ee_notify_send(int sock, const void *msg, size_t n, int listener)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { (void *)msg, n };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)
	};

	memset(ctl, 0, sizeof(ctl));
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &listener, sizeof(int));
	ssize_t r;
	do
		r = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r == (ssize_t)n ? 0 : -1;
}

long ee_notify_recv(int sock, void *msg, size_t n, int *fd)
{
	char ctl[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { msg, n };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)
	};

	*fd = -1;
	ssize_t r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (r < 0)
		return r;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int got;
			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = got;
			else
				close(got); /* one listener per message, no more */
		}
	}
	return r;
}

#define NS_FLAGS                                                                                             \
	((unsigned long)(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |          \
	                 CLONE_NEWNET | CLONE_NEWCGROUP | 0x80 /* CLONE_NEWTIME */))

static void count(const char *name, const struct seccomp_notif *req, struct ee_tally *t)
{
	if (name && strcmp(name, "clone") == 0 && (req->data.args[0] & NS_FLAGS))
		ee_tally_add(t, "clone_namespace", 1);
	else if (name)
		ee_tally_add(t, name, 1);
	else
		ee_tally_add(t, "unknown", 1);
}

int ee_notify_answer(int listener, struct ee_tally *t)
{
	/* Zeroed, as the kernel asks, and larger than today's structs: a newer
	 * kernel's longer one still fits (SECCOMP_GET_NOTIF_SIZES). */
	union {
		struct seccomp_notif n;
		char room[256];
	} req;

	/* RECV would block with nothing pending: ask first. HUP alone: every
	 * task under the filter is gone. */
	struct pollfd pfd = { .fd = listener, .events = POLLIN };
	if (poll(&pfd, 1, 0) < 0)
		return errno == EINTR ? 0 : -1;
	if (!(pfd.revents & POLLIN))
		return pfd.revents & (POLLHUP | POLLERR | POLLNVAL) ? -1 : 0;
	memset(&req, 0, sizeof(req));
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		/* ENOENT: withdrawn (its task was killed meanwhile); EINTR: again. */
		return errno == ENOENT || errno == EINTR || errno == EAGAIN ? 0 : -1;
	return ee_notify_respond(listener, &req.n, t);
}

int ee_notify_respond(int listener, const struct seccomp_notif *req, struct ee_tally *t)
{
	union {
		struct seccomp_notif_resp r;
		char room[256];
	} resp;
	char *name = seccomp_syscall_resolve_num_arch(req->data.arch, req->data.nr);
	/* A writing call reaches here only when the filter watches writes
	 * (every one of them is allowed otherwise): judged, then continued. */
	const struct ee_write_call *w = name ? ee_write_call_find(name) : NULL;
	memset(&resp, 0, sizeof(resp));
	resp.r.id = req->id;
	if (w) {
		if (ee_write_outside_tmp(req, w) == 1 && t)
			ee_tally_add(t, EE_WRITE_OUTSIDE_TMP, 1);
		resp.r.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	} else {
		if (t)
			count(name, req, t);
		resp.r.error = -EPERM;
	}
	free(name);
	/* ENOENT: the caller died meanwhile; nothing to answer. */
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp.r);
	return w ? 1 : 0;
}
