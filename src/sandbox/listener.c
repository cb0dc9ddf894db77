/* listener.c - a sandbox's seccomp listener on the loop (notify.h): the
 * calls its filter refuses, and its watched writes, answered at a pace.
 *
 * The listener comes on the control socket once the payload loaded its
 * filter (sandbox.c:on_ctl, sandbox_listener_arrived). Each notification
 * takes a token of the sandbox's pace (EE_NOTIFY_RATE, EE_NOTIFY_BURST):
 * with none left the listener leaves the loop until a timerfd (W_PACE)
 * says the pace allows again, so its callers wait in the kernel, not the
 * supervisor. Past EE_NOTIFY_MAX refused calls, or on any failure, the
 * listener is closed and the kernel answers the rest ENOSYS itself:
 * refused all the same, uncounted.
 */
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "sandbox/notify.h"

void sandbox_listener_arrived(struct ee_sandbox *sb, int fd)
{
	struct ee_err err = { 0 };
	ee_bucket_init(&sb->pace, EE_NOTIFY_RATE, EE_NOTIFY_BURST, EE_NOTIFY_QUANTUM, sandbox_now_ms());
	/* On failure the listener is closed: refused calls get ENOSYS, still refused. */
	(void)sandbox_add_watch(sb, W_NOTIFY, fd, &err);
}

/* Its notifications outran their pace (notify.h): the listener leaves the
 * loop until wait_ms from now, so its callers wait in the kernel. Should
 * the timer fail, the listener is closed: the kernel answers the rest
 * ENOSYS itself, uncounted, and the supervisor is spared all the same. */
static void pause_notify(struct ee_sandbox *sb, double wait_ms)
{
	struct ee_err err;
	long long ns = (long long)(wait_ms * 1e6) + 1;
	struct itimerspec its = { { 0, 0 }, { (time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL) } };

	sb->out.paced = 1;
	if (sb->fd[W_PACE] < 0) {
		int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (fd < 0 || sandbox_add_watch(sb, W_PACE, fd, &err) < 0) {
			if (fd >= 0 && sb->fd[W_PACE] != fd)
				close(fd);
			sandbox_close_watch(sb, W_PACE);
			ee_tally_add(&sb->out.refused, "uncounted", 1);
			sandbox_close_watch(sb, W_NOTIFY);
			return;
		}
	}
	if (timerfd_settime(sb->fd[W_PACE], 0, &its, NULL) < 0) {
		ee_tally_add(&sb->out.refused, "uncounted", 1);
		sandbox_close_watch(sb, W_NOTIFY);
		return;
	}
	sandbox_unwatch(sb, W_NOTIFY);
}

/* The pause is over: the listener is back on the loop. */
void sandbox_on_pace(struct ee_sandbox *sb)
{
	uint64_t ticks;
	struct ee_err err;

	if (read(sb->fd[W_PACE], &ticks, sizeof(ticks)) < 0 && errno == EAGAIN)
		return;
	if (sandbox_rewatch(sb, W_NOTIFY, &err) < 0) {
		ee_tally_add(&sb->out.refused, "uncounted", 1);
		sandbox_close_watch(sb, W_NOTIFY);
	}
}

/* Each refused call is a round trip through this loop, which every
 * sandbox shares: past EE_NOTIFY_MAX of one candidate the listener is
 * closed, and the kernel answers the rest ENOSYS itself, uncounted (and
 * watched writes too: a candidate that floods refused calls loses them).
 * Watched writes continue and do not count against the cap: an honest
 * candidate may make many in /tmp. Both take a token of its pace first,
 * one per wake-up, so neither costs the loop more than the pace allows. */
void sandbox_on_notify(struct ee_sandbox *sb)
{
	double wait_ms = ee_bucket_take(&sb->pace, sandbox_now_ms());
	if (wait_ms > 0) {
		pause_notify(sb, wait_ms);
		return;
	}
	int r = ee_notify_answer(sb->fd[W_NOTIFY], &sb->out.refused);
	if (r < 0) {
		sandbox_close_watch(sb, W_NOTIFY);
	} else if (r == 0 && ++sb->notified >= EE_NOTIFY_MAX) {
		ee_tally_add(&sb->out.refused, "uncounted", 1);
		sandbox_close_watch(sb, W_NOTIFY);
	}
}
