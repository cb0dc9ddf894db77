/* loop.c - the event loop: one epoll set, a signalfd, callbacks (loop.h).
 *
 * Each watched fd's epoll data points at its struct ee_loop_fd; the
 * signalfd's is NULL. One epoll_wait batch may hold several events of one
 * owner (a sandbox's pidfd and its timer, say): the first can end it and
 * its owner remove every watch of it, even free it. A watch removed during
 * a batch is only marked, its memory kept on the dead list until the batch
 * is over, and the events of what is marked are skipped; so no callback
 * runs for a watch removed before its turn, and a new watch that reuses a
 * closed fd's number gets no event meant for the old one.
 */
#include "base/loop.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

struct ee_loop_fd {
	struct ee_loop *loop;
	int fd;
	ee_loop_fd_cb cb;
	void *ctx;
	int removed;                  /* during a batch: its memory waits */
	struct ee_loop_fd *next_dead; /* in the loop's dead list */
};

struct ee_loop {
	int epfd;
	int sigfd;
	int dispatching;
	struct ee_loop_fd *dead_fds;
	int (*signal_hook)(void *ctx, int signo);
	void *signal_ctx;
	sigset_t old_mask;
	struct sigaction old_pipe;
	int active;               /* jobs joined, not yet left */
	int interrupted;          /* signal number, 0 if none */
	struct ee_loop_job *jobs; /* newest first, for interruption */
};

int ee_loop_new(struct ee_loop **ret, struct ee_err *err)
{
	struct ee_loop *loop = calloc(1, sizeof(*loop));
	sigset_t mask;

	if (!loop)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	loop->sigfd = -1;
	if (loop->epfd < 0) {
		free(loop);
		return ee_fail_errno(err, EE_ERR_SANDBOX, "epoll_create1");
	}
	sigprocmask(SIG_BLOCK, &mask, &loop->old_mask);
	/* A sandbox that closes its end of the gate pipe must not kill the
	 * supervisor: the write fails with EPIPE instead. */
	struct sigaction ignore = { .sa_handler = SIG_IGN };
	sigaction(SIGPIPE, &ignore, &loop->old_pipe);
	loop->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	if (loop->sigfd < 0 || epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->sigfd, &ev) < 0) {
		ee_fail_errno(err, EE_ERR_SANDBOX, "signalfd");
		ee_loop_free(loop);
		return -1;
	}
	*ret = loop;
	return 0;
}

void ee_loop_free(struct ee_loop *loop)
{
	if (!loop)
		return;
	if (loop->sigfd >= 0)
		close(loop->sigfd);
	close(loop->epfd);
	sigprocmask(SIG_SETMASK, &loop->old_mask, NULL);
	sigaction(SIGPIPE, &loop->old_pipe, NULL);
	free(loop);
}

int ee_loop_add_fd(struct ee_loop *loop, int fd, int events, ee_loop_fd_cb cb, void *ctx,
                   struct ee_loop_fd **ret, struct ee_err *err)
{
	struct ee_loop_fd *x = calloc(1, sizeof(*x));

	if (!x)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	*x = (struct ee_loop_fd){ .loop = loop, .fd = fd, .cb = cb, .ctx = ctx };
	struct epoll_event ev = {
		.events = (events & EE_LOOP_READABLE ? EPOLLIN : 0) |
		          (events & EE_LOOP_WRITABLE ? EPOLLOUT : 0),
		.data.ptr = x,
	};
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		free(x);
		return ee_fail_errno(err, EE_ERR_SANDBOX, "epoll_ctl");
	}
	*ret = x;
	return 0;
}

void ee_loop_remove_fd(struct ee_loop_fd *x)
{
	if (!x)
		return;
	epoll_ctl(x->loop->epfd, EPOLL_CTL_DEL, x->fd, NULL);
	if (x->loop->dispatching) {
		x->removed = 1;
		x->next_dead = x->loop->dead_fds;
		x->loop->dead_fds = x;
		return;
	}
	free(x);
}

void ee_loop_join(struct ee_loop *loop, struct ee_loop_job *job)
{
	job->prev = NULL;
	job->next = loop->jobs;
	if (loop->jobs)
		loop->jobs->prev = job;
	loop->jobs = job;
	loop->active++;
}

void ee_loop_leave(struct ee_loop *loop, struct ee_loop_job *job)
{
	if (job->prev)
		job->prev->next = job->next;
	else
		loop->jobs = job->next;
	if (job->next)
		job->next->prev = job->prev;
	job->next = job->prev = NULL;
	loop->active--;
}

void ee_loop_interrupt(struct ee_loop *loop, int signo)
{
	if (!loop->interrupted)
		loop->interrupted = signo;
	for (struct ee_loop_job *job = loop->jobs, *next; job; job = next) {
		next = job->next;
		job->on_interrupt(job->ctx);
	}
}

static void on_signal(struct ee_loop *loop)
{
	struct signalfd_siginfo si;
	if (read(loop->sigfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return;
	if (loop->signal_hook && loop->signal_hook(loop->signal_ctx, (int)si.ssi_signo))
		return;
	ee_loop_interrupt(loop, (int)si.ssi_signo);
}

void ee_loop_on_signal(struct ee_loop *loop, int (*hook)(void *ctx, int signo), void *ctx)
{
	loop->signal_hook = hook;
	loop->signal_ctx = ctx;
}

/* Frees the watches removed during the batch just handled. */
static void bury(struct ee_loop *loop)
{
	while (loop->dead_fds) {
		struct ee_loop_fd *x = loop->dead_fds;
		loop->dead_fds = x->next_dead;
		free(x);
	}
}

int ee_loop_wait(struct ee_loop *loop, int timeout_ms, struct ee_err *err)
{
	struct epoll_event evs[64];

	int n = epoll_wait(loop->epfd, evs, 64, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : ee_fail_errno(err, EE_ERR_SANDBOX, "epoll_wait");
	loop->dispatching = 1;
	for (int i = 0; i < n; i++) {
		struct ee_loop_fd *x = evs[i].data.ptr;
		if (!x)
			on_signal(loop);
		else if (!x->removed)
			x->cb(x->ctx);
	}
	loop->dispatching = 0;
	bury(loop);
	return 0;
}

int ee_loop_run_once(struct ee_loop *loop, struct ee_err *err)
{
	return loop->active == 0 ? 0 : ee_loop_wait(loop, -1, err);
}

int ee_loop_run(struct ee_loop *loop, struct ee_err *err)
{
	while (loop->active > 0)
		if (ee_loop_run_once(loop, err) < 0)
			return -1;
	return loop->interrupted;
}

int ee_loop_interrupted(const struct ee_loop *loop)
{
	return loop->interrupted;
}
