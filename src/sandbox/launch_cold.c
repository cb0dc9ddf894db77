/* launch_cold.c - the cold launcher: a clone of this process in new
 * namespaces becomes the sandbox's init (child.c), in a cgroup of its own
 * and, as root, with a uid of its own (see sandbox_int.h, "the seam").
 *
 * Set-up, in this order (docs/sandbox.md, "Set-up order"): the cgroups with
 * their limits, the uid claim, the clone; unprivileged, the id maps written
 * from here; then a byte on the sync pipe lets the init go on. The init is
 * our child: its pidfd says it ended, wait4 reaps it (sandbox.c:reap), and
 * a kill's end is certain, so no grace. Also here, ee_parent_supervisor,
 * which the gVisor and Docker launchers share with it: an init that is our
 * child, in a cgroup of the sandbox's own.
 */
#include "sandbox/sandbox_int.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/cgroup.h"
#include "sandbox/child.h"
#include "sandbox/clone.h"
#include "sandbox/host.h"

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Unprivileged: the sandbox's 65534 is the caller's own uid and gid. */
static int write_id_maps(pid_t pid, struct ee_err *err)
{
	char path[64], map[64];

	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
	if (write_file(path, "deny") < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "write %s", path);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	snprintf(map, sizeof(map), "65534 %u 1\n", (unsigned)getuid());
	if (write_file(path, map) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "write %s", path);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	snprintf(map, sizeof(map), "65534 %u 1\n", (unsigned)getgid());
	if (write_file(path, map) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "write %s", path);
	return 0;
}

static pid_t clone_child(const struct ee_host *h, int *pidfd)
{
	unsigned long flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
	                      CLONE_PIDFD | SIGCHLD;
	if (!h->is_root)
		flags |= CLONE_NEWUSER;
	/* fork-like clone (no new stack): the child continues on a copy. */
	return (pid_t)syscall(SYS_clone, flags, NULL, pidfd, NULL, 0);
}

/* The child has its own copies of f's descriptors. */
static int launch_cold(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg, struct ee_launch_fds *f,
                       int *pidfd, struct ee_err *err)
{
	sb->part.cold.uid = EE_UID_NONE;
	if (ee_cgroup_create(cfg->host, cfg->limits, &sb->cg, err) < 0 ||
	    (cfg->host->is_root && ee_uid_claim(&sb->part.cold.uid, err) < 0))
		return -1;
	pid_t pid = clone_child(cfg->host, pidfd);
	if (pid < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "clone with new namespaces");
	if (pid == 0) {
		struct ee_child_args a = {
			.host = cfg->host,
			.limits = cfg->limits,
			.mounts = cfg->mounts,
			.seccomp = cfg->seccomp,
			.argv = cfg->argv,
			.cgroup = &sb->cg,
			.use_cgroup_ns = sb->cg.mem[0] || sb->cg.pids[0],
			.have_memory_cg = sb->cg.mem[0] != '\0',
			.have_pids_cg = sb->cg.pids[0] != '\0',
			.uid = sb->part.cold.uid.id,
			.fds = { .sync = f->sync,
			         .ctl = f->ctl,
			         .job = f->job,
			         .out = f->out,
			         .err = f->err,
			         .result = f->result,
			         .gate = f->gate,
			         .code = cfg->code_fd },
		};
		ee_child_main(&a);
	}
	sb->pid = pid;
	if ((!cfg->host->is_root && write_id_maps(pid, err) < 0) ||
	    (write(f->go, "g", 1) != 1 && ee_fail_errno(err, EE_ERR_SANDBOX, "start the sandbox"))) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, __WALL);
		close(*pidfd);
		*pidfd = -1;
		return -1;
	}
	return 0;
}

static double cold_first_timer_s(const struct ee_sandbox *sb, const struct ee_sandbox_config *cfg)
{
	(void)sb;
	return ee_sandbox_first_clock_s(cfg);
}

/* Every process of the namespace is gone with its init: the uid can go to
 * the next sandbox, before the counters are read. */
static void cold_release(struct ee_sandbox *sb)
{
	ee_uid_release(&sb->part.cold.uid);
	sandbox_own_release(sb);
}

/* Not reaped, its processes may live on: the claim stays held (its fd
 * open) until this process exits, so no sandbox gets that uid meanwhile. */
static void cold_discard(struct ee_sandbox *sb)
{
	if (sb->reaped)
		ee_uid_release(&sb->part.cold.uid);
}

/* ---- the init is our child, in a cgroup of its own --------------------- */

static int watch_pidfd(struct ee_sandbox *sb, int pidfd, struct ee_err *err)
{
	return sandbox_add_watch(sb, W_PIDFD, pidfd, err);
}

const struct ee_cgroup *sandbox_own_cgroup(const struct ee_sandbox *sb)
{
	return &sb->cg;
}

int sandbox_own_holds_pinned(struct ee_sandbox *sb, long long tolerance)
{
	/* A fresh cgroup: its baseline is 0. */
	long long usage = ee_cgroup_usage(&sb->cg);
	if (usage <= tolerance)
		return 0;
	return ee_cgroup_held(&sb->cg) > tolerance;
}

void sandbox_own_still_pinned(struct ee_sandbox *sb, double ms)
{
	fprintf(stderr, "execeval: cgroup %s still holds %lld KB %d ms after its sandbox ended\n", sb->cg.mem,
	        ee_cgroup_held(&sb->cg) / 1024, (int)ms);
}

void sandbox_own_release(struct ee_sandbox *sb)
{
	ee_cgroup_stats(&sb->cg, &sb->out.cg);
}

static void no_event(struct ee_sandbox *sb, int kind)
{
	(void)sb;
	(void)kind;
}

void sandbox_no_step(struct ee_sandbox *sb)
{
	(void)sb;
}

int sandbox_nothing_after(struct ee_sandbox *sb)
{
	(void)sb;
	return 0;
}

int sandbox_no_linger(struct ee_sandbox *sb, int kind)
{
	(void)sb;
	(void)kind;
	return 1;
}

const struct ee_init_parent ee_parent_supervisor = {
	.kick_unix_gc = 1,
	.watch = watch_pidfd,
	.on_start_event = no_event,
	.on_channel = sandbox_no_step,
	.cgroup_of = sandbox_own_cgroup,
	.killed = sandbox_no_step,
	.grace_over = sandbox_no_step,
	.holds_pinned = sandbox_own_holds_pinned,
	.still_pinned = sandbox_own_still_pinned,
};

const struct ee_launcher ee_launcher_cold = {
	.sync_pipe = 1,
	.clock_at_started = 0,
	.parent = &ee_parent_supervisor,
	.launch = launch_cold,
	.first_timer_s = cold_first_timer_s,
	.release = cold_release,
	.ended = sandbox_nothing_after,
	.on_linger_event = sandbox_no_linger,
	.discard = cold_discard,
};
