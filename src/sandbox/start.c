/* start.c - making a sandbox, until its candidate runs (ee_sandbox_start).
 *
 * The supervisor makes the pipes (control, stdout, stderr, result, gate,
 * and for a cold start the sync pipe) and the sealed memfd of the job.
 * Cold: a clone of this process in new namespaces becomes the sandbox's
 * init (child.c); unprivileged, its id maps are written from here, then a
 * byte on the sync pipe lets it go on. Warm: a worker of the pool is
 * claimed (worker.h) and starts the candidate step by step from the loop
 * (see "a warm start"). Either way the parent's ends go on the loop as the
 * sandbox's watches (sandbox.c), with a timerfd for the wall clock.
 */
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/memfd.h"
#include "sandbox/child.h"
#include "sandbox/clone.h"
#include "sandbox/gvisor.h"
#include "sandbox/gvisor_launch.h"
#include "sandbox/docker_run.h"
#include "sandbox/host.h"
#include "sandbox/worker.h"

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

/* One shot, seconds from now (0: at once). */
static int set_timer(int fd, double seconds, struct ee_err *err)
{
	struct itimerspec its = { { 0, 0 }, { (time_t)seconds, (long)((seconds - floor(seconds)) * 1e9) } };
	if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
		its.it_value.tv_nsec = 1;
	if (timerfd_settime(fd, 0, &its, NULL) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "timerfd_settime");
	return 0;
}

double ee_sandbox_first_clock_s(const struct ee_sandbox_config *cfg)
{
	return cfg->limits->timeout_s + cfg->start_allowance_s;
}

static int arm_timer(double seconds, struct ee_err *err)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (fd < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "timerfd_create");
	if (set_timer(fd, seconds, err) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void close_pair(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
	p[0] = p[1] = -1;
}

/* Pipes: [0] read end, [1] write end, all close-on-exec. */
enum { P_SYNC, P_CTL, P_OUT, P_ERR, P_RESULT, P_GATE, P_COUNT };

static pid_t clone_child(const struct ee_host *h, int *pidfd)
{
	unsigned long flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
	                      CLONE_PIDFD | SIGCHLD;
	if (!h->is_root)
		flags |= CLONE_NEWUSER;
	/* fork-like clone (no new stack): the child continues on a copy. */
	return (pid_t)syscall(SYS_clone, flags, NULL, pidfd, NULL, 0);
}

/* Cold: a clone of this process becomes the sandbox's init (child.c). On
 * success the child's ends of p and job belong to it. */
static int launch_cold(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg, int p[P_COUNT][2], int job,
                       int *pidfd, struct ee_err *err)
{
	if (ee_cgroup_create(cfg->host, cfg->limits, &sb->cg, err) < 0 ||
	    (cfg->host->is_root && ee_uid_claim(&sb->uid, err) < 0))
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
			.uid = sb->uid.id,
			.fds = { .sync = p[P_SYNC][0],
			         .ctl = p[P_CTL][1],
			         .job = job,
			         .out = p[P_OUT][1],
			         .err = p[P_ERR][1],
			         .result = p[P_RESULT][1],
			         .gate = p[P_GATE][0],
			         .code = cfg->code_fd },
		};
		ee_child_main(&a);
	}
	sb->pid = pid;
	if ((!cfg->host->is_root && write_id_maps(pid, err) < 0) ||
	    (write(p[P_SYNC][1], "g", 1) != 1 && ee_fail_errno(err, EE_ERR_SANDBOX, "start the sandbox"))) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, __WALL);
		close(*pidfd);
		*pidfd = -1;
		return -1;
	}
	return 0;
}

static void close_pipes(int (*p)[P_COUNT][2])
{
	for (int i = 0; i < P_COUNT; i++)
		close_pair((*p)[i]);
}

/* A sandbox that never reached the loop: what launching it claimed. */
static void discard_unstarted(struct ee_sandbox **sbp)
{
	struct ee_sandbox *sb = *sbp;

	if (!sb)
		return;
	ee_uid_release(&sb->uid); /* a failed clone, or its child reaped */
	ee_cgroup_destroy(&sb->cg, NULL);
	ee_gvisor_bundle_remove(sb->gvisor_dir);
	free(sb->gvisor_dir);
	free(sb->docker_name);
	ee_buf_free(&sb->out.out);
	ee_buf_free(&sb->out.err);
	free(sb);
}

/* ---- a warm start --------------------------------------------------------
 *
 * A warm sandbox begins "starting": its worker is claimed (ee_pool_claim),
 * and the loop watches the worker's socket (W_WORKER) and the deadline of
 * the answer awaited (W_TIMER) until the candidate runs (STARTED) or
 * cannot, so a slow or dying worker holds up no other sandbox. The child's
 * ends of the pipes wait in child_fds meanwhile: a worker replaced after
 * RUN needs them again. The wall clock starts at STARTED, as the
 * candidate's time is not its worker's warm-up. */

static int claim_worker(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg, int p[P_COUNT][2],
                        int *job, struct ee_err *err)
{
	int *ends[6] = { &p[P_CTL][1], job, &p[P_OUT][1], &p[P_ERR][1], &p[P_RESULT][1], &p[P_GATE][0] };
	int fds[6];

	for (int i = 0; i < 6; i++)
		fds[i] = *ends[i];
	sb->worker = ee_pool_claim(cfg->pool, cfg->limits, fds, err);
	if (!sb->worker)
		return -1;
	for (int i = 0; i < 6; i++) {
		sb->child_fds[i] = *ends[i];
		*ends[i] = -1;
	}
	sb->starting = 1;
	sb->timeout_s = ee_sandbox_first_clock_s(cfg);
	return 0;
}

/* A dup of the worker's socket, which the sandbox closes when done with
 * it; watched again after each step of a start (the worker may be new). */
static int watch_worker(struct ee_sandbox *sb, struct ee_err *err)
{
	sandbox_close_watch(sb, W_WORKER);
	int sock = fcntl(ee_worker_fd(sb->worker), F_DUPFD_CLOEXEC, 0);
	if (sock < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "dup the worker's socket");
	return sandbox_add_watch(sb, W_WORKER, sock, err);
}

/* Killed while starting: ended from the loop at its next event, the
 * timer's, now (sandbox_on_start_event). */
void sandbox_give_up_start(struct ee_sandbox *sb)
{
	if (sb->fd[W_TIMER] >= 0)
		(void)set_timer(sb->fd[W_TIMER], 0, NULL);
}

/* Nothing ran: the sandbox ends with no process to reap (finish_if_done);
 * err, when given, says why (a sandbox error, not a verdict). */
static void end_unstarted(struct ee_sandbox *sb, const struct ee_err *err)
{
	if (err) {
		sb->out.setup_failed = 1;
		sb->out.setup_err = *err;
	}
	sb->starting = 0;
	sb->worker = NULL;
	for (int i = 0; i < 6; i++)
		sandbox_close_fd(&sb->child_fds[i]);
	for (int i = 0; i < W_COUNT; i++)
		sandbox_close_watch(sb, i);
	sb->reaped = 1;
}

/* The candidate runs: from now on a sandbox like any other. */
static void started(struct ee_sandbox *sb, int pidfd)
{
	struct ee_err err;

	sb->starting = 0;
	sb->fd[W_PIDFD] = pidfd;
	for (int i = 0; i < 6; i++)
		sandbox_close_fd(&sb->child_fds[i]);
	clock_gettime(CLOCK_MONOTONIC, &sb->started);
	if (sandbox_watch_held(sb, &err) < 0 || set_timer(sb->fd[W_TIMER], sb->timeout_s, &err) < 0) {
		/* Unreachable in practice; end it cleanly. */
		sb->out.setup_failed = 1;
		sb->out.setup_err = err;
		sandbox_kill_init(sb);
	}
}

void sandbox_on_start_event(struct ee_sandbox *sb, int kind)
{
	struct ee_err err;
	uint64_t ticks;
	int pidfd = -1;

	if (kind == W_TIMER && read(sb->fd[W_TIMER], &ticks, sizeof(ticks)) < 0 && errno == EAGAIN)
		return;
	if (sb->out.end != EE_END_RAN || sb->out.setup_failed) { /* given up (sandbox_give_up_start) */
		ee_worker_start_abandon(sb->worker);
		end_unstarted(sb, NULL);
		return;
	}
	int rc = ee_worker_start_step(sb->worker, &pidfd, &err);
	if (rc < 0) {
		end_unstarted(sb, &err);                    /* the worker is no longer ours */
		sb->out.worker_lost = rc == EE_WORKER_LOST; /* the caller may start it afresh */
	} else if (rc == 1) {
		started(sb, pidfd);
	} else if (watch_worker(sb, &err) < 0 ||
	           set_timer(sb->fd[W_TIMER], ee_worker_start_ms_left(sb->worker) / 1e3, &err) < 0) {
		ee_worker_start_abandon(sb->worker);
		end_unstarted(sb, &err);
	}
}

/* Until the sandbox is on the loop's list, the locals own what is made
 * (base/cleanup.h): a failure returns and they release it. The child's
 * ends of the pipes and the job are closed on return (a cold child has its
 * own copies; a warm sandbox has taken them into child_fds, claim_worker);
 * the parent's ends go to the sandbox one by one as they are watched. */
int ee_sandbox_start(struct ee_loop *loop, const struct ee_sandbox_config *cfg,
                     const struct ee_sandbox_ops *ops, void *ctx, struct ee_sandbox **ret, struct ee_err *err)
{
	__attribute__((cleanup(close_pipes))) int p[P_COUNT][2];
	for (int i = 0; i < P_COUNT; i++)
		p[i][0] = p[i][1] = -1;
	ee_autoclose int job = -1;
	ee_autoclose int pidfd = -1;
	__attribute__((cleanup(discard_unstarted))) struct ee_sandbox *sb = calloc(1, sizeof(*sb));

	if (!sb)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	for (int i = 0; i < W_COUNT; i++)
		sb->fd[i] = -1;
	for (int i = 0; i < 6; i++)
		sb->child_fds[i] = -1;
	sb->gate_fd = -1;
	sb->lifeline_fd = -1;
	sb->cpu_fd = -1;
	sb->uid = EE_UID_NONE;
	sb->loop = loop;
	sb->ops = ops;
	sb->ctx = ctx;
	sb->output_cap = cfg->limits->output_cap;
	sb->drain_output = cfg->drain_output;
	ee_buf_init(&sb->out.out, cfg->keep_output);
	ee_buf_init(&sb->out.err, cfg->keep_output);
	sb->out.cg.oom_kills = sb->out.cg.pids_max_hits = sb->out.cg.peak_kb = -1;
	sb->out.cg.cpu_usec = -1;
	sb->out.runq_wait_ms = -1;

	/* A warm sandbox needs no sync pipe: its worker starts it when ready. */
	/* The control channel is a socket: it carries the seccomp listener (notify.h). */
	for (int i = cfg->pool ? P_CTL : P_SYNC; i < P_COUNT; i++)
		if ((i == P_CTL ? socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p[i])
		                : pipe2(p[i], O_CLOEXEC)) < 0)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "pipe2");
	/* Sealed: the candidate cannot rewrite the job the harness re-reads. */
	job = ee_memfd_sealed("execeval-job", cfg->job, cfg->job_len, err);
	if (job < 0)
		return -1;

	clock_gettime(CLOCK_MONOTONIC, &sb->started);
	if (cfg->pool) {
		if (claim_worker(sb, cfg, p, &job, err) < 0)
			return -1;
	} else if (cfg->gvisor) {
		struct ee_gvisor_fds gf = { p[P_SYNC][0], p[P_SYNC][1], p[P_CTL][1],    job,
			                    p[P_OUT][1],  p[P_ERR][1],  p[P_RESULT][1], p[P_GATE][0] };
		if (ee_gvisor_launch(sb, cfg, &gf, &pidfd, err) < 0)
			return -1;
	} else if (cfg->docker) {
		struct ee_gvisor_fds df = { p[P_SYNC][0], p[P_SYNC][1], p[P_CTL][1],    job,
			                    p[P_OUT][1],  p[P_ERR][1],  p[P_RESULT][1], p[P_GATE][0] };
		sb->docker_client = cfg->docker->client;
		if (ee_docker_launch(sb, cfg, &df, &pidfd, err) < 0)
			return -1;
	} else if (launch_cold(sb, cfg, p, job, &pidfd, err) < 0) {
		return -1;
	}
	sb->lifeline_fd = ee_take_fd(&p[P_SYNC][1]);
	sb->gate_fd = ee_take_fd(&p[P_GATE][1]);
	fcntl(sb->gate_fd, F_SETFL, O_NONBLOCK);
	for (int i = P_CTL; i <= P_RESULT; i++)
		fcntl(p[i][0], F_SETFL, O_NONBLOCK);

	/* A starting sandbox's timer counts its worker's answer first. */
	double clock_s = ee_sandbox_first_clock_s(cfg);
	ee_autoclose int timer = arm_timer(sb->starting ? ee_worker_start_ms_left(sb->worker) / 1e3
	                                   : cfg->gvisor || cfg->docker ? EE_GVISOR_START_S + clock_s
	                                                                : clock_s,
	                                   err);
	/* From here on, the loop owns the sandbox; a failure still tears down
	 * through the loop, so nothing is leaked. */
	sandbox_join(sb);
	int watched;
	if (sb->worker) {
		watched = watch_worker(sb, err) == 0;
	} else {
		watched = sandbox_add_watch(sb, W_PIDFD, ee_take_fd(&pidfd), err) == 0;
	}
	/* sandbox_add_watch takes each fd (also when it fails); those never
	 * reached are closed on return. */
	if (!watched || sandbox_add_watch_when_started(sb, W_CTL, ee_take_fd(&p[P_CTL][0]), err) < 0 ||
	    sandbox_add_watch_when_started(sb, W_OUT, ee_take_fd(&p[P_OUT][0]), err) < 0 ||
	    sandbox_add_watch_when_started(sb, W_ERR, ee_take_fd(&p[P_ERR][0]), err) < 0 ||
	    sandbox_add_watch_when_started(sb, W_RESULT, ee_take_fd(&p[P_RESULT][0]), err) < 0 || timer < 0 ||
	    sandbox_add_watch(sb, W_TIMER, ee_take_fd(&timer), err) < 0) {
		/* Unreachable in practice (epoll_ctl on fresh fds); end it cleanly. */
		sb->out.setup_failed = 1;
		sb->out.setup_err = *err;
		if (sb->starting)
			sandbox_give_up_start(sb);
		else
			sandbox_kill_init(sb);
	}
	*ret = ee_take_ptr(&sb);
	return 0;
}
