/* launch_warm.c - the warm launcher: a worker of the pool (worker.h) forks
 * the candidate into fresh namespaces (zygote.c), in the slot's pooled
 * cgroup and uid (see sandbox_int.h, "the seam").
 *
 * A warm start. A warm sandbox begins "starting": its worker is claimed
 * (ee_pool_claim), and the loop watches the worker's socket (W_LAUNCHER)
 * and the deadline of the answer awaited (W_TIMER) until the candidate
 * runs (STARTED) or cannot, so a slow or dying worker holds up no other
 * sandbox. The child's ends of the pipes wait in child_fds meanwhile: a
 * worker replaced after RUN needs them again. The wall clock starts at
 * STARTED, as the candidate's time is not its worker's warm-up. The
 * session launcher's start is the same, by the same driver
 * (sandbox_worker_start_event), with what it holds of the start its own.
 *
 * Its end. The init is the worker's child: the worker reaps it and says
 * DONE on its socket, which the supervisor takes as the reap (on_worker).
 * A kill goes to the init's pidfd and arms a grace on the timer; a worker
 * that does not answer within it is killed, and the candidate's outcome is
 * "worker lost" (docs/sandbox.md, "Teardown order").
 */
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "sandbox/worker.h"

/* How long a warm worker may take to report a killed candidate reaped
 * before it is taken for hung (stopped, tampered with) and killed itself. */
#define WORKER_GRACE_S 2.0

static int claim_worker(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg, struct ee_launch_fds *f,
                        int *pidfd, struct ee_err *err)
{
	struct ee_warm_part *w = &sb->part.warm;
	int *ends[6] = { &f->ctl, &f->job, &f->out, &f->err, &f->result, &f->gate };
	int fds[6];

	*pidfd = -1;
	for (int i = 0; i < 6; i++) {
		w->child_fds[i] = -1;
		fds[i] = *ends[i];
	}
	w->worker = ee_pool_claim(cfg->pool, cfg->limits, fds, err);
	if (!w->worker)
		return -1;
	for (int i = 0; i < 6; i++) {
		w->child_fds[i] = *ends[i];
		*ends[i] = -1;
	}
	sb->starting = 1;
	sb->timeout_s = ee_sandbox_first_clock_s(cfg);
	return 0;
}

/* A starting sandbox's timer counts its worker's answer first. */
static double warm_first_timer_s(const struct ee_sandbox *sb, const struct ee_sandbox_config *cfg)
{
	(void)cfg;
	return ee_worker_start_ms_left(sb->part.warm.worker) / 1e3;
}

/* A dup of the worker's socket, which the sandbox closes when done with
 * it; watched again after each step of a start (the worker may be new). */
int sandbox_watch_worker(struct ee_sandbox *sb, const struct ee_worker *w, struct ee_err *err)
{
	sandbox_close_watch(sb, W_LAUNCHER);
	int sock = fcntl(ee_worker_fd(w), F_DUPFD_CLOEXEC, 0);
	if (sock < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "dup the worker's socket");
	return sandbox_add_watch(sb, W_LAUNCHER, sock, err);
}

static int watch_worker(struct ee_sandbox *sb, struct ee_err *err)
{
	return sandbox_watch_worker(sb, sb->part.warm.worker, err);
}

/* No pidfd yet (-1): the worker sends it at STARTED. */
static int warm_watch(struct ee_sandbox *sb, int pidfd, struct ee_err *err)
{
	(void)pidfd;
	return watch_worker(sb, err);
}

static void close_child_fds(struct ee_warm_part *w)
{
	for (int i = 0; i < 6; i++)
		sandbox_close_fd(&w->child_fds[i]);
}

/* ---- a worker's start, the warm and the session launchers' ---- */

void sandbox_worker_start_end(struct ee_sandbox *sb, const struct sandbox_worker_start *how,
                              const struct ee_err *err)
{
	if (err) {
		sb->out.setup_failed = 1;
		sb->out.setup_err = *err;
	}
	sb->starting = 0;
	*how->worker(sb) = NULL;
	how->drop_start(sb);
	for (int i = 0; i < W_COUNT; i++)
		sandbox_close_watch(sb, i);
	sb->reaped = 1;
}

/* The next step of the start, or its end. */
void sandbox_worker_start_event(struct ee_sandbox *sb, const struct sandbox_worker_start *how, int kind)
{
	struct ee_worker *w = *how->worker(sb);
	struct ee_err err;
	uint64_t ticks;
	int pidfd = -1;

	if (kind == W_TIMER && read(sb->fd[W_TIMER], &ticks, sizeof(ticks)) < 0 && errno == EAGAIN)
		return;
	if (sb->out.end != EE_END_RAN || sb->out.setup_failed) { /* given up (sandbox_give_up_start) */
		ee_worker_start_abandon(w);
		sandbox_worker_start_end(sb, how, NULL);
		return;
	}
	int rc = ee_worker_start_step(w, &pidfd, &err);
	if (rc < 0) {
		sandbox_worker_start_end(sb, how, &err); /* the worker is no longer ours */
		if (how->lost_restarts)
			sb->out.worker_lost = rc == EE_WORKER_LOST; /* the caller may start it afresh */
	} else if (rc == 1) {
		how->started(sb, pidfd);
	} else if (sandbox_watch_worker(sb, w, &err) < 0 ||
	           sandbox_set_timer(sb->fd[W_TIMER], ee_worker_start_ms_left(w) / 1e3, &err) < 0) {
		ee_worker_start_abandon(w);
		sandbox_worker_start_end(sb, how, &err);
	}
}

/* ---- the warm launcher's own ---- */

static struct ee_worker **warm_worker(struct ee_sandbox *sb)
{
	return &sb->part.warm.worker;
}

/* No worker: the end is the supervisor's, its cgroup its own (empty). */
static void warm_drop_start(struct ee_sandbox *sb)
{
	sb->parent = &ee_parent_supervisor;
	close_child_fds(&sb->part.warm);
}

/* The candidate runs: from now on a sandbox like any other. */
static void started(struct ee_sandbox *sb, int pidfd)
{
	struct ee_err err;

	sb->starting = 0;
	sb->fd[W_PIDFD] = pidfd;
	close_child_fds(&sb->part.warm);
	clock_gettime(CLOCK_MONOTONIC, &sb->started);
	if (sandbox_watch_held(sb, &err) < 0 || sandbox_set_timer(sb->fd[W_TIMER], sb->timeout_s, &err) < 0) {
		/* Unreachable in practice; end it cleanly. */
		sb->out.setup_failed = 1;
		sb->out.setup_err = err;
		sandbox_kill_init(sb);
	}
}

static const struct sandbox_worker_start warm_start = {
	.worker = warm_worker,
	.started = started,
	.drop_start = warm_drop_start,
	.lost_restarts = 1,
};

static void on_start_event(struct ee_sandbox *sb, int kind)
{
	sandbox_worker_start_event(sb, &warm_start, kind);
}

/* The worker reaped the payload and the namespace's init (DONE), or died,
 * which took the candidate's namespace with it. */
static void on_worker(struct ee_sandbox *sb)
{
	struct ee_warm_part *w = &sb->part.warm;
	struct ee_worker_msg m;
	int rc = ee_worker_receive(w->worker, &m);

	if (rc == 0)
		return;
	sb->reaped = 1;
	if (rc == 1) {
		sb->out.cpu_ms = m.cpu_ms;
		sb->out.maxrss_kb = m.maxrss_kb;
		/* The payload's status as its init saw it, exactly as a cold
		 * init reports it (not at all when the sandbox was killed). */
		if (m.has_status) {
			sb->out.have_status = 1;
			sb->out.status = m.status;
		}
		/* The worker's own failure ended the candidate: no verdict. */
		m.err.msg[sizeof(m.err.msg) - 1] = '\0';
		if (m.err.msg[0] && !sb->out.setup_failed) {
			sb->out.setup_failed = 1;
			sb->out.setup_err = m.err;
			ee_worker_retire(w->worker); /* its slot is broken: a fresh one */
		}
	} else if (w->hung || (!sb->out.have_status && !sb->out.setup_failed && sb->out.end == EE_END_RAN)) {
		/* Not the candidate's doing: the caller may run it again. */
		sb->out.worker_lost = 1;
		sb->out.setup_failed = 1;
		ee_fail(&sb->out.setup_err, EE_ERR_SANDBOX, "the warm worker running this candidate %s",
		        w->hung ? "stopped answering" : "died");
	}
	sandbox_close_watch(sb, W_LAUNCHER);
	sandbox_close_watch(sb, W_PIDFD);
	sandbox_close_watch(sb, W_TIMER);
}

static const struct ee_cgroup *warm_cgroup(const struct ee_sandbox *sb)
{
	return ee_worker_cgroup(sb->part.warm.worker);
}

/* A warm init's end is the worker's DONE; a worker that never sends it is
 * killed, which ends the sandbox through the socket (on_worker). */
static void warm_killed(struct ee_sandbox *sb)
{
	if (sb->killing)
		return;
	struct itimerspec grace = { { 0, 0 }, { (time_t)WORKER_GRACE_S, 0 } };
	sb->killing = 1;
	if (sb->fd[W_TIMER] < 0 || timerfd_settime(sb->fd[W_TIMER], 0, &grace, NULL) < 0)
		ee_worker_kill(sb->part.warm.worker);
}

/* The grace period ran out: the worker, not the candidate, failed. */
static void warm_grace_over(struct ee_sandbox *sb)
{
	sb->part.warm.hung = 1;
	ee_worker_kill(sb->part.warm.worker);
}

static int warm_holds_pinned(struct ee_sandbox *sb, long long tolerance)
{
	return ee_worker_holds_pinned(sb->part.warm.worker, tolerance);
}

/* Its slot gets a fresh worker and cgroups. */
static void warm_still_pinned(struct ee_sandbox *sb, double ms)
{
	(void)ms;
	ee_worker_retire(sb->part.warm.worker);
}

/* The worker is idle again; none left when the start ended unstarted. */
static void warm_release(struct ee_sandbox *sb)
{
	if (!sb->part.warm.worker) {
		sandbox_own_release(sb);
		return;
	}
	ee_worker_release(sb->part.warm.worker, &sb->out.cg);
	sb->part.warm.worker = NULL;
}

static void warm_discard(struct ee_sandbox *sb)
{
	close_child_fds(&sb->part.warm);
}

static const struct ee_init_parent worker_parent = {
	.kick_unix_gc = 0, /* the worker does, when the candidate left a socket (zygote.c) */
	.watch = warm_watch,
	.on_start_event = on_start_event,
	.on_channel = on_worker,
	.cgroup_of = warm_cgroup,
	.killed = warm_killed,
	.grace_over = warm_grace_over,
	.holds_pinned = warm_holds_pinned,
	.still_pinned = warm_still_pinned,
};

const struct ee_launcher ee_launcher_warm = {
	.sync_pipe = 0, /* its worker starts it when ready */
	.clock_at_started = 0,
	.parent = &worker_parent,
	.launch = claim_worker,
	.first_timer_s = warm_first_timer_s,
	.release = warm_release,
	.ended = sandbox_nothing_after,
	.on_linger_event = sandbox_no_linger,
	.discard = warm_discard,
};
