/* start.c - making a sandbox, until its candidate runs (ee_sandbox_start).
 *
 * The supervisor makes the pipes (control, stdout, stderr, result, gate,
 * and the sync pipe when the launcher's init waits for one) and the sealed
 * memfd of the job, then hands the child's ends to the sandbox's launcher
 * (sandbox_int.h, "the seam"), the one its config asks for (launcher_of):
 * cold, a clone of this process (launch_cold.c); warm, a worker of the
 * pool (launch_warm.c); gVisor (gvisor_launch.c) or Docker (docker_run.c).
 * Then the parent's ends go on the loop as the sandbox's watches
 * (sandbox.c), with a timerfd for the wall clock.
 */
#include "sandbox/sandbox_int.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/memfd.h"
#include "base/resource_limits.h"

/* One shot, seconds from now (0: at once). */
int sandbox_set_timer(int fd, double seconds, struct ee_err *err)
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
	if (sandbox_set_timer(fd, seconds, err) < 0) {
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

static void close_pipes(int (*p)[P_COUNT][2])
{
	for (int i = 0; i < P_COUNT; i++)
		close_pair((*p)[i]);
}

static void close_launch_fds(struct ee_launch_fds *f)
{
	int *fds[] = { &f->sync, &f->go, &f->ctl, &f->job, &f->out, &f->err, &f->result, &f->gate };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		sandbox_close_fd(fds[i]);
}

/* A sandbox that never reached the loop: what launching it claimed. Nothing
 * of it runs (a failed launch kills and reaps what it cloned). */
static void discard_unstarted(struct ee_sandbox **sbp)
{
	struct ee_sandbox *sb = *sbp;

	if (!sb)
		return;
	sb->reaped = 1;
	ee_cgroup_destroy(&sb->cg, NULL);
	if (sb->launcher)
		sb->launcher->discard(sb);
	ee_buf_free(&sb->out.out);
	ee_buf_free(&sb->out.err);
	free(sb);
}

/* Killed while starting: ended from the loop at its next event, the
 * timer's, now (the launcher's on_start_event). */
void sandbox_give_up_start(struct ee_sandbox *sb)
{
	if (sb->fd[W_TIMER] >= 0)
		(void)sandbox_set_timer(sb->fd[W_TIMER], 0, NULL);
}

/* The one place a sandbox's backend is told from its config. */
static const struct ee_launcher *launcher_of(const struct ee_sandbox_config *cfg)
{
	if (cfg->copy)
		return &ee_launcher_copy;
	if (cfg->session_pool)
		return &ee_launcher_session;
	if (cfg->pool)
		return &ee_launcher_warm;
	if (cfg->gvisor)
		return &ee_launcher_gvisor;
	if (cfg->docker)
		return &ee_launcher_docker;
	return &ee_launcher_cold;
}

/* Until the sandbox is on the loop's list, the locals own what is made
 * (base/cleanup.h): a failure returns and they release it. The child's
 * ends of the pipes and the job, in f, are closed on return (a cloned init
 * has its own copies; a warm launch has taken them); the parent's ends go
 * to the sandbox one by one as they are watched. */
int ee_sandbox_start(struct ee_loop *loop, const struct ee_sandbox_config *cfg,
                     const struct ee_sandbox_ops *ops, void *ctx, struct ee_sandbox **ret, struct ee_err *err)
{
	const struct ee_launcher *launcher = launcher_of(cfg);
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
	sb->gate_fd = -1;
	sb->lifeline_fd = -1;
	sb->cpu_fd = -1;
	sb->loop = loop;
	sb->ops = ops;
	sb->ctx = ctx;
	sb->output_cap = cfg->limits->output_cap;
	sb->drain_output = cfg->drain_output;
	ee_buf_init(&sb->out.out, cfg->keep_output);
	ee_buf_init(&sb->out.err, cfg->keep_output);
	sb->out.cg.oom_kills = sb->out.cg.pids_max_hits = sb->out.cg.peak_kb = -1;
	sb->out.cg.cpu_usec = -1;
	sb->out.runq_wait_ms = sb->out.runq_wall_ms = -1;

	/* The control channel is a socket: it carries the seccomp listener (notify.h). */
	for (int i = launcher->sync_pipe ? P_SYNC : P_CTL; i < P_COUNT; i++)
		if ((i == P_CTL ? socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p[i])
		                : pipe2(p[i], O_CLOEXEC)) < 0)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "pipe2");
	/* Sealed: the candidate cannot rewrite the job the harness re-reads. */
	job = ee_memfd_sealed("execeval-job", cfg->job, cfg->job_len, err);
	if (job < 0)
		return -1;
	__attribute__((cleanup(close_launch_fds))) struct ee_launch_fds f = {
		.sync = ee_take_fd(&p[P_SYNC][0]),
		.go = ee_take_fd(&p[P_SYNC][1]),
		.ctl = ee_take_fd(&p[P_CTL][1]),
		.job = ee_take_fd(&job),
		.out = ee_take_fd(&p[P_OUT][1]),
		.err = ee_take_fd(&p[P_ERR][1]),
		.result = ee_take_fd(&p[P_RESULT][1]),
		.gate = ee_take_fd(&p[P_GATE][0]),
	};

	clock_gettime(CLOCK_MONOTONIC, &sb->started);
	sb->launcher = launcher;
	sb->parent = launcher->parent;
	if (launcher->launch(sb, cfg, &f, &pidfd, err) < 0)
		return -1;
	sb->lifeline_fd = ee_take_fd(&f.go);
	sb->gate_fd = ee_take_fd(&p[P_GATE][1]);
	fcntl(sb->gate_fd, F_SETFL, O_NONBLOCK);
	for (int i = P_CTL; i <= P_RESULT; i++)
		fcntl(p[i][0], F_SETFL, O_NONBLOCK);

	ee_autoclose int timer = arm_timer(launcher->first_timer_s(sb, cfg), err);
	/* From here on, the loop owns the sandbox; a failure still tears down
	 * through the loop, so nothing is leaked. */
	sandbox_join(sb);
	/* sandbox_add_watch takes each fd (also when it fails); those never
	 * reached are closed on return. */
	if (sb->parent->watch(sb, ee_take_fd(&pidfd), err) < 0 ||
	    sandbox_add_watch_when_started(sb, W_CTL, ee_take_fd(&p[P_CTL][0]), err) < 0 ||
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
