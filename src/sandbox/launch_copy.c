/* launch_copy.c - the copy launcher: a sandbox that is a copy of a live
 * session, made by copy.c (see sandbox_int.h, "the seam"; engine/session.c,
 * ee_session_fork).
 *
 * Its launch makes what the copy will be given, and no process: a uid
 * and cgroups of its own (as a session's), and the child's ends of its
 * output, result and gate pipes, kept until the fork's helper has placed
 * them in the copy (ee_sandbox_copy_target). The helper makes every copy
 * of one fork at once; then ee_sandbox_copy_started adopts this one by
 * its pid, or ee_sandbox_copy_failed ends its start. From then on it is
 * a session's sandbox: its init (the copy, pid 1 of its namespaces) is
 * not our child, its pidfd says its end, its keeper reports on its result
 * channel.
 */
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/resource_limits.h"
#include "sandbox/cgroup.h"
#include "sandbox/copy.h"

/* The fork's helper takes this long at most to hand the copy over. */
#define COPY_START_S 30.0

static int launch_copy(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg, struct ee_launch_fds *f,
                       int *pidfd, struct ee_err *err)
{
	struct ee_session_part *s = &sb->part.session;

	*pidfd = -1;
	s->uid = EE_UID_NONE;
	s->worker = NULL;
	for (int i = 0; i < 6; i++)
		s->child_fds[i] = -1;
	for (int i = 0; i < 5; i++)
		s->join[i] = -1;
	if (ee_cgroup_create(cfg->host, cfg->limits, &sb->cg, err) < 0 || ee_uid_claim(&s->uid, err) < 0 ||
	    ee_cgroup_open_attach(&sb->cg, s->join, err) < 0)
		return -1;
	s->tmp_mb = cfg->limits->tmp_mb;
	s->child_fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (s->child_fds[0] < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "open /dev/null");
	s->child_fds[1] = ee_take_fd(&f->out);
	s->child_fds[2] = ee_take_fd(&f->err);
	s->child_fds[3] = ee_take_fd(&f->result);
	s->child_fds[4] = ee_take_fd(&f->gate);
	sb->starting = 1;
	sb->timeout_s = ee_sandbox_first_clock_s(cfg);
	return 0;
}

static double copy_first_timer_s(const struct ee_sandbox *sb, const struct ee_sandbox_config *cfg)
{
	(void)sb;
	(void)cfg;
	return COPY_START_S;
}

static int copy_watch(struct ee_sandbox *sb, int pidfd, struct ee_err *err)
{
	(void)sb;
	(void)err;
	if (pidfd >= 0)
		close(pidfd);
	return 0;
}

/* The start's end with nothing to reap: given up, failed, or too slow. */
static void end_start(struct ee_sandbox *sb, const struct ee_err *err)
{
	if (err && !sb->out.setup_failed) {
		sb->out.setup_failed = 1;
		sb->out.setup_err = *err;
	}
	sb->starting = 0;
	sandbox_detached_drop_start(sb);
	for (int i = 0; i < W_COUNT; i++)
		sandbox_close_watch(sb, i);
	sb->reaped = 1;
}

static void on_start_event(struct ee_sandbox *sb, int kind)
{
	uint64_t ticks;
	struct ee_err err = { 0 };

	if (kind != W_TIMER || (read(sb->fd[W_TIMER], &ticks, sizeof(ticks)) < 0 && errno == EAGAIN))
		return;
	if (sb->out.end != EE_END_RAN || sb->out.setup_failed)
		return end_start(sb, NULL);
	ee_fail(&err, EE_ERR_SANDBOX, "the copy was not made within %.0f s", COPY_START_S);
	end_start(sb, &err);
}

int ee_sandbox_copy_target(struct ee_sandbox *sb, struct ee_copy_target *t)
{
	struct ee_session_part *s = &sb->part.session;

	if (sb->launcher != &ee_launcher_copy || !sb->starting)
		return -1;
	t->uid = s->uid.id;
	if (ee_uid_range(&t->uid_base, &t->uid_count) < 0 || t->uid < t->uid_base ||
	    t->uid - t->uid_base >= t->uid_count)
		return -1;
	for (int i = 0; i < 5; i++)
		t->join[i] = s->join[i];
	for (int i = 0; i < EE_COPY_FDS; i++)
		t->fds[i] = s->child_fds[i];
	t->tmp_bytes = (long long)s->tmp_mb * 1024 * 1024;
	t->pid = 0;
	return 0;
}

void ee_sandbox_copy_started(struct ee_sandbox *sb, pid_t pid)
{
	struct ee_err err = { 0 };

	if (!sb->starting) { /* given up meanwhile: the copy is nobody's */
		kill(pid, SIGKILL);
		return;
	}
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		ee_fail_errno(&err, EE_ERR_SANDBOX, "pidfd_open (a copy)");
		kill(pid, SIGKILL);
		ee_sandbox_copy_failed(sb, &err);
		return;
	}
	sb->pid = pid;
	sandbox_detached_started(sb, pidfd);
}

void ee_sandbox_copy_failed(struct ee_sandbox *sb, const struct ee_err *err)
{
	if (!sb->starting)
		return;
	if (!sb->out.setup_failed) {
		sb->out.setup_failed = 1;
		sb->out.setup_err = *err;
	}
	sandbox_give_up_start(sb); /* its timer fires now: on_start_event ends it */
}

static const struct ee_init_parent copy_parent = {
	.kick_unix_gc = 1,
	.watch = copy_watch,
	.on_start_event = on_start_event,
	.on_channel = sandbox_detached_ended,
	.cgroup_of = sandbox_own_cgroup,
	.killed = sandbox_no_step, /* its pidfd says the end: certain */
	.grace_over = sandbox_no_step,
	.holds_pinned = sandbox_own_holds_pinned,
	.still_pinned = sandbox_own_still_pinned,
};

const struct ee_launcher ee_launcher_copy = {
	.sync_pipe = 0,
	.clock_at_started = 0,
	.parent = &copy_parent,
	.launch = launch_copy,
	.first_timer_s = copy_first_timer_s,
	.release = sandbox_detached_release,
	.ended = sandbox_nothing_after,
	.on_linger_event = sandbox_no_linger,
	.discard = sandbox_detached_discard,
};

/* ---- the session being copied ---- */

int ee_sandbox_fork_begin(struct ee_sandbox *sb, struct ee_sandbox *filter_sb, struct ee_copy_plan *plan,
                          struct ee_err *err)
{
	const struct ee_cgroup *cg = sb->parent ? sb->parent->cgroup_of(sb) : NULL;
	const char *dir = !cg ? "" : cg->pids[0] ? cg->pids : cg->mem;
	char path[PATH_MAX + 16];

	plan->listener = plan->procs_fd = plan->pids_max_fd = -1;
	if (sb->done || sb->starting || cg != &sb->cg || !dir[0])
		return ee_fail(err, EE_ERR_USAGE,
		               "this session cannot be forked: it has no cgroup of its own");
	if (filter_sb->done || filter_sb->fd[W_NOTIFY] < 0)
		return ee_fail(err, EE_ERR_USAGE,
		               "this session cannot be forked: its seccomp filter has no listener here");
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	plan->procs_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (plan->procs_fd < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "open %s", path);
	if (cg->pids[0]) {
		snprintf(path, sizeof(path), "%s/pids.max", cg->pids);
		plan->pids_max_fd = open(path, O_RDWR | O_CLOEXEC);
		if (plan->pids_max_fd < 0) {
			ee_fail_errno(err, EE_ERR_SANDBOX, "open %s", path);
			ee_sandbox_fork_close(plan);
			return -1;
		}
	}
	sandbox_unwatch(filter_sb, W_NOTIFY);
	plan->listener = filter_sb->fd[W_NOTIFY];
	return 0;
}

void ee_sandbox_fork_close(struct ee_copy_plan *plan)
{
	sandbox_close_fd(&plan->procs_fd);
	sandbox_close_fd(&plan->pids_max_fd);
	plan->listener = -1; /* the sandbox's */
}

void ee_sandbox_fork_done(struct ee_sandbox *filter_sb)
{
	struct ee_err err;
	if (!filter_sb->done)
		(void)sandbox_rewatch(filter_sb, W_NOTIFY, &err);
}
