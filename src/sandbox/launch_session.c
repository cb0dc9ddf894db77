/* launch_session.c - the session launcher: a worker of the sessions' pool
 * (worker.h) forks the sandbox, detached, into a cgroup and a uid of its
 * own (see sandbox_int.h, "the seam"; engine/session.h).
 *
 * A session outlives any one candidate's time with its worker, so its
 * worker does not wait for it: the start is warm's, by its driver
 * (sandbox_worker_start_event: the worker claimed, READY and STARTED
 * awaited on its socket, W_LAUNCHER, and the timer), with
 * RUN saying detached, the sandbox's own uid (claimed here, as a cold
 * start claims one) and the join files of its own cgroups (made here, as
 * cold makes them), and the worker is idle again at STARTED (zygote.c:
 * the init is a fork of the worker, the payload gets a network namespace
 * of its own). From then on the sandbox is a cold one whose init is not our
 * child: its pidfd, watched as the launcher's channel, says it ended (the
 * worker reaps it); a kill's end is that too, so no grace. Its outcome
 * has no wait status: a session's keeper reports on its result channel.
 */
#include "sandbox/sandbox_int.h"

#include <fcntl.h>
#include <unistd.h>

#include "sandbox/cgroup.h"
#include "sandbox/worker.h"

static void close_fds(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		sandbox_close_fd(&fds[i]);
}

static int launch_session(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg, struct ee_launch_fds *f,
                          int *pidfd, struct ee_err *err)
{
	struct ee_session_part *s = &sb->part.session;
	int *ends[6] = { &f->ctl, &f->job, &f->out, &f->err, &f->result, &f->gate };
	int fds[6], join[5] = { -1, -1, -1, -1, -1 };

	*pidfd = -1;
	s->uid = EE_UID_NONE;
	for (int i = 0; i < 6; i++)
		s->child_fds[i] = -1;
	for (int i = 0; i < 5; i++)
		s->join[i] = -1;
	if (ee_cgroup_create(cfg->host, cfg->limits, &sb->cg, err) < 0 || ee_uid_claim(&s->uid, err) < 0 ||
	    ee_cgroup_open_attach(&sb->cg, join, err) < 0)
		return -1;
	int n = 0;
	while (n < 5 && join[n] >= 0)
		n++;
	for (int i = 0; i < 6; i++)
		fds[i] = *ends[i];
	s->worker = ee_pool_claim_detached(cfg->session_pool, cfg->limits, fds, s->uid.id, join, n, err);
	if (!s->worker) {
		close_fds(join, n);
		return -1;
	}
	for (int i = 0; i < 6; i++) {
		s->child_fds[i] = *ends[i];
		*ends[i] = -1;
	}
	for (int i = 0; i < n; i++)
		s->join[i] = join[i];
	sb->starting = 1;
	sb->timeout_s = ee_sandbox_first_clock_s(cfg);
	return 0;
}

static double session_first_timer_s(const struct ee_sandbox *sb, const struct ee_sandbox_config *cfg)
{
	(void)cfg;
	return ee_worker_start_ms_left(sb->part.session.worker) / 1e3;
}

static int watch_worker(struct ee_sandbox *sb, struct ee_err *err)
{
	return sandbox_watch_worker(sb, sb->part.session.worker, err);
}

static int session_watch(struct ee_sandbox *sb, int pidfd, struct ee_err *err)
{
	(void)pidfd;
	return watch_worker(sb, err);
}

static void close_start_fds(struct ee_session_part *s)
{
	close_fds(s->child_fds, 6);
	close_fds(s->join, 5);
}

static struct ee_worker **session_worker(struct ee_sandbox *sb)
{
	return &sb->part.session.worker;
}

void sandbox_detached_drop_start(struct ee_sandbox *sb)
{
	close_start_fds(&sb->part.session);
}

void sandbox_detached_started(struct ee_sandbox *sb, int pidfd)
{
	struct ee_err err;

	sb->starting = 0;
	sb->part.session.worker = NULL; /* idle again (ee_pool_claim_detached) */

	close_start_fds(&sb->part.session);
	sandbox_close_watch(sb, W_LAUNCHER);
	clock_gettime(CLOCK_MONOTONIC, &sb->started);
	int end = fcntl(pidfd, F_DUPFD_CLOEXEC, 0);
	sb->fd[W_PIDFD] = pidfd;
	if (end < 0 || sandbox_add_watch(sb, W_LAUNCHER, end, &err) < 0 || sandbox_watch_held(sb, &err) < 0 ||
	    sandbox_set_timer(sb->fd[W_TIMER], sb->timeout_s, &err) < 0) {
		if (end < 0)
			ee_fail_errno(&err, EE_ERR_SANDBOX, "dup a pidfd");
		sb->out.setup_failed = 1;
		sb->out.setup_err = err;
		sandbox_kill_init(sb);
	}
}

/* Warm's start driver; a lost worker is the start's failure (a session
 * is not started afresh). */
static const struct sandbox_worker_start session_start = {
	.worker = session_worker,
	.started = sandbox_detached_started,
	.drop_start = sandbox_detached_drop_start,
	.lost_restarts = 0,
};

static void on_start_event(struct ee_sandbox *sb, int kind)
{
	sandbox_worker_start_event(sb, &session_start, kind);
}

/* Its init ended (the worker reaps it, or, a copy's, the family's holder
 * once it ends): every process of it is gone. */
void sandbox_detached_ended(struct ee_sandbox *sb)
{
	sb->reaped = 1;
	sandbox_close_watch(sb, W_LAUNCHER);
	sandbox_close_watch(sb, W_PIDFD);
	sandbox_close_watch(sb, W_TIMER);
}

void sandbox_detached_release(struct ee_sandbox *sb)
{
	ee_uid_release(&sb->part.session.uid);
	sandbox_own_release(sb);
}

void sandbox_detached_discard(struct ee_sandbox *sb)
{
	close_start_fds(&sb->part.session);
	if (sb->reaped)
		ee_uid_release(&sb->part.session.uid);
}

static const struct ee_init_parent detached_parent = {
	.kick_unix_gc = 1, /* its own network namespace: the worker never looks */
	.watch = session_watch,
	.on_start_event = on_start_event,
	.on_channel = sandbox_detached_ended,
	.cgroup_of = sandbox_own_cgroup,
	.killed = sandbox_no_step, /* its pidfd says the end: certain */
	.grace_over = sandbox_no_step,
	.holds_pinned = sandbox_own_holds_pinned,
	.still_pinned = sandbox_own_still_pinned,
};

const struct ee_launcher ee_launcher_session = {
	.sync_pipe = 0, /* its worker starts it when ready */
	.clock_at_started = 0,
	.parent = &detached_parent,
	.launch = launch_session,
	.first_timer_s = session_first_timer_s,
	.release = sandbox_detached_release,
	.ended = sandbox_nothing_after,
	.on_linger_event = sandbox_no_linger,
	.discard = sandbox_detached_discard,
};
