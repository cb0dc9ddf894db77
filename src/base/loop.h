/* loop.h - the one event loop: epoll over fds, a signalfd, jobs.
 *
 * The process that clones sandboxes has no threads: this loop drives every
 * fd it watches (a sandbox's pipes, pidfd and timers, the HTTP server's
 * epoll) and knows nothing of what they are. A watch is an fd, a callback
 * and its context; a job is whatever keeps ee_loop_run going (a running
 * sandbox) and is told when the loop is interrupted.
 *
 * Lifecycle: ee_loop_new once; ee_loop_add_fd / ee_loop_join as work comes;
 * ee_loop_run (until no job is left) or ee_loop_wait (one round, also with
 * no job: a server waiting for requests); ee_loop_free at the end.
 *
 * Ownership: the loop owns its epoll fd, its signalfd and the struct of
 * each watch (freed by ee_loop_remove_fd, or after the batch in progress).
 * The watched fd stays its caller's; so does a job's struct, linked into
 * the loop from ee_loop_join to ee_loop_leave.
 *
 * Signals: the loop ignores SIGPIPE (a sandbox may close its pipes) and
 * blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT and reads them from a
 * signalfd; on one it interrupts (ee_loop_interrupt) unless a hook took it,
 * and ee_loop_run returns the signal number once every job has left, so
 * the caller exits 128 + signo with nothing left behind. ee_loop_free
 * restores the mask and SIGPIPE.
 *
 * Errors are EE_ERR_SANDBOX: the host refused epoll, a signalfd or memory.
 */
#ifndef EE_BASE_LOOP_H
#define EE_BASE_LOOP_H

#include "base/err.h"

struct ee_loop;
struct ee_loop_fd;

int ee_loop_new(struct ee_loop **ret, struct ee_err *err);
void ee_loop_free(struct ee_loop *loop);

/* Runs until no job is left. Returns 0, a signal number (> 0) when
 * interrupted (every job was told and has left), or -1 on an internal
 * failure of the loop itself. */
int ee_loop_run(struct ee_loop *loop, struct ee_err *err);

/* One round: waits for events and handles them (callbacks included).
 * Returns 0 (also when no job is left: then without waiting) or -1. */
int ee_loop_run_once(struct ee_loop *loop, struct ee_err *err);

/* Waits up to timeout_ms (-1: without end) for events, also when no job
 * is active (a server waiting for requests), and handles them.
 * Returns 0 or -1. */
int ee_loop_wait(struct ee_loop *loop, int timeout_ms, struct ee_err *err);

/* The signal that interrupted the loop, or 0. Once set, callers should
 * start no new job. */
int ee_loop_interrupted(const struct ee_loop *loop);

/* Marks the loop interrupted by signo (the first signo stays) and tells
 * every job, newest first, as a signal does. */
void ee_loop_interrupt(struct ee_loop *loop, int signo);

/* Lets hook decide what a signal does: it returns 1 when it handled the
 * signal itself (e.g. a server that drains first), 0 for the default
 * (ee_loop_interrupt). NULL restores the default. */
void ee_loop_on_signal(struct ee_loop *loop, int (*hook)(void *ctx, int signo), void *ctx);

/* What to watch an fd for. */
enum { EE_LOOP_READABLE = 1, EE_LOOP_WRITABLE = 2 };

/* Watches fd (level-triggered) for events; cb runs on the loop's thread
 * from ee_loop_wait while the fd is ready. Remove the watch before closing
 * fd. Removing it from within a callback is safe: an event of it still
 * pending in the batch being handled is dropped. */
typedef void (*ee_loop_fd_cb)(void *ctx);
int ee_loop_add_fd(struct ee_loop *loop, int fd, int events, ee_loop_fd_cb cb, void *ctx,
                   struct ee_loop_fd **ret, struct ee_err *err);
void ee_loop_remove_fd(struct ee_loop_fd *x); /* NULL: nothing */

/* A job: from ee_loop_join to ee_loop_leave it keeps ee_loop_run going,
 * and on_interrupt(ctx) is called when the loop is interrupted (it should
 * end the job, which then leaves from a later callback). The caller owns
 * the struct and fills on_interrupt and ctx; the links are the loop's. */
struct ee_loop_job {
	void (*on_interrupt)(void *ctx);
	void *ctx;
	struct ee_loop_job *next, *prev;
};
void ee_loop_join(struct ee_loop *loop, struct ee_loop_job *job);
void ee_loop_leave(struct ee_loop *loop, struct ee_loop_job *job);

#endif
