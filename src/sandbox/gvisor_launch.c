/* gvisor_launch.c - starting a candidate under runsc (see gvisor.h).
 *
 * Theory of operation. The supervisor writes the candidate's bundle and
 * creates its host cgroup (the candidate's limits plus runsc's own share,
 * EE_GVISOR_EXTRA_*), then clones the gVisor init into a new pid
 * namespace. The init:
 *   1. dies with the supervisor (PDEATHSIG) and closes every descriptor of
 *      the supervisor's but its own (another sandbox's pipe held here would
 *      delay that sandbox's end of file);
 *   2. waits for the supervisor's go, joins the cgroup, so runsc, its gofer
 *      and sentry, and thus the candidate's memory and processes, are
 *      counted there and an OOM kill is the sandbox's own; mounts a /proc
 *      of its pid namespace in a mount namespace of its own (runsc
 *      re-executes /proc/self/exe);
 *   3. starts `runsc run` with pipes as its stdio, sends it the job;
 *   4. relays until runsc's stdout ends: frames to the supervisor's stdout,
 *      stderr, result and control pipes, the gate's bytes to runsc's stdin;
 *   5. reports a runsc that never started the harness as a setup error
 *      (with the tail of runsc's own messages) and exits, which kills
 *      whatever of runsc is left (it is all in this pid namespace).
 * sandbox.c sees a cold sandbox: the wall clock and the output cap kill
 * this init, and with it the whole gVisor sandbox. ee_launcher_gvisor, at
 * the end of this file, is the backend's launcher (sandbox_int.h): the
 * cold one's entries but for the start's clock and the bundle's removal.
 */
#include "sandbox/gvisor_launch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fdio.h"
#include "base/resource_limits.h"
#include "sandbox/cgroup.h"
#include "sandbox/child.h"
#include "sandbox/gvisor.h"
#include "sandbox/host.h"
#include "sandbox/sandbox_int.h"
#include "sandbox/seccomp.h"

static const char *const platform_names[] = { "ptrace", "kvm" };

const char *ee_gvisor_platform_name(int platform)
{
	return platform == EE_GVISOR_KVM ? platform_names[1] : platform_names[0];
}

static void send_ctl(int fd, int type, int status, const char *msg)
{
	struct ee_ctl_msg m = { .type = type, .status = status };
	if (msg)
		ee_fail(&m.err, EE_ERR_SANDBOX, "%s", msg);
	(void)ee_write_all(fd, &m, sizeof(m));
}

/* Closes every descriptor but keep[0..n) (sorted or not; -1 skipped). */
static void close_all_but(const int *keep, size_t n)
{
	unsigned next = 0;
	for (;;) {
		int low = -1;
		for (size_t i = 0; i < n; i++)
			if (keep[i] >= (int)next && (low < 0 || keep[i] < low))
				low = keep[i];
		if (low < 0)
			break;
		if ((unsigned)low > next)
			syscall(SYS_close_range, next, (unsigned)low - 1, 0);
		next = (unsigned)low + 1;
	}
	syscall(SYS_close_range, next, ~0U, 0);
}

/* The frames of runsc's stdout, parsed as they come. */
struct demux {
	const struct ee_launch_fds *to; /* the supervisor's pipes */
	const char *label;              /* "gvisor" or "docker", for messages */
	unsigned char buf[5 + EE_GV_FRAME_MAX];
	size_t len;
	int started, exited, failed;
};

/* Handles every whole frame in d->buf; -1 on a malformed one. */
static int demux_frames(struct demux *d)
{
	size_t off = 0;
	while (d->len - off >= 5) {
		const unsigned char *h = d->buf + off;
		size_t n = (size_t)h[1] | (size_t)h[2] << 8 | (size_t)h[3] << 16 | (size_t)h[4] << 24;
		if (n > EE_GV_FRAME_MAX)
			return -1;
		if (d->len - off < 5 + n)
			break;
		const unsigned char *p = h + 5;
		switch (h[0]) {
		case EE_GV_STDOUT: (void)ee_write_all(d->to->out, p, n); break;
		case EE_GV_STDERR: (void)ee_write_all(d->to->err, p, n); break;
		case EE_GV_RESULT: (void)ee_write_all(d->to->result, p, n); break;
		case EE_GV_STARTED:
			d->started = 1;
			send_ctl(d->to->ctl, EE_CTL_STARTED, 0, NULL);
			break;
		case EE_GV_EXIT:
			if (n != 4)
				return -1;
			d->exited = 1;
			send_ctl(d->to->ctl, EE_CTL_EXIT,
			         (int)((unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 |
			               (unsigned)p[3] << 24),
			         NULL);
			break;
		case EE_GV_FAILED: {
			char msg[240];
			snprintf(msg, sizeof(msg), "%s: %.*s", d->label, (int)(n < 200 ? n : 200),
			         (const char *)p);
			d->failed = 1;
			send_ctl(d->to->ctl, EE_CTL_ERROR, 0, msg);
			break;
		}
		default: return -1;
		}
		off += 5 + n;
	}
	memmove(d->buf, d->buf + off, d->len - off);
	d->len -= off;
	return 0;
}

/* The gate's bytes for runsc's stdin, which may not take them at once. */
struct pending {
	char *buf;
	size_t len, off;
};

static void pending_flush(struct pending *q, int *fd)
{
	while (*fd >= 0 && q->off < q->len) {
		ssize_t n = write(*fd, q->buf + q->off, q->len - q->off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close(*fd);
			*fd = -1;
		} else {
			q->off += (size_t)n;
		}
	}
	if (q->off == q->len)
		q->len = q->off = 0;
}

__attribute__((noreturn)) static void init_main(const struct ee_gvisor *g, const char *dir, const char *id,
                                                const struct ee_relay_cmd *cmd, const struct ee_cgroup *cg,
                                                const struct ee_seccomp_prog *prog,
                                                const struct ee_launch_fds *f)
{
	const char *label = cmd ? cmd->label : "gvisor";
	int keep[] = { f->sync, f->ctl, f->job, f->out, f->err, f->result, f->gate };
	char go;
	struct ee_err err = { 0 };

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	close_all_but(keep, sizeof(keep) / sizeof(keep[0]));
	/* 0-2 taken, so the pipes below never land there (dup2 onto itself
	 * would keep close-on-exec). */
	for (int fd = open("/dev/null", O_RDWR | O_CLOEXEC); fd >= 0 && fd < 3;)
		fd = dup(fd);
	if (read(f->sync, &go, 1) != 1)
		_exit(126);
	if (ee_cgroup_attach_self(cg, &err) < 0) {
		send_ctl(f->ctl, EE_CTL_ERROR, 0, err.msg);
		_exit(0);
	}
	/* runsc re-executes /proc/self/exe into new namespaces: it needs a
	 * /proc of this pid namespace (in a mount namespace of its own, so the
	 * host's /proc stays as it is). */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		send_ctl(f->ctl, EE_CTL_ERROR, 0, "gvisor: cannot mount a /proc for runsc");
		_exit(0);
	}
	int in[2], out[2], errp[2];
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		send_ctl(f->ctl, EE_CTL_ERROR, 0, "gvisor: pipe2 failed");
		_exit(0);
	}
	char state[PATH_MAX + 8], platform[32];
	snprintf(state, sizeof(state), "%s/state", dir ? dir : "");
	snprintf(platform, sizeof(platform), "--platform=%s", ee_gvisor_platform_name(g ? g->platform : 0));
	/* EXECEVAL_GVISOR_DEBUG=DIR/: runsc's debug logs there (docs/sandbox.md). */
	const char *debug = getenv("EXECEVAL_GVISOR_DEBUG");
	char debug_log[PATH_MAX + 16];
	snprintf(debug_log, sizeof(debug_log), "--debug-log=%s", debug ? debug : "");
	const char *argv[] = { g ? g->runsc : "",
		               "--root",
		               state,
		               "--network=none",
		               "--ignore-cgroups",
		               platform,
		               "run",
		               "--bundle",
		               dir,
		               id,
		               NULL,
		               NULL,
		               NULL };
	if (debug && *debug) {
		memmove(argv + 3, argv + 1, 9 * sizeof(argv[0]));
		argv[1] = "--debug";
		argv[2] = debug_log;
	}
	static char *const env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	const char *path = g ? g->runsc : cmd->path;
	char *const *av = g ? (char *const *)argv : cmd->argv;
	char *const *ev = g ? env : cmd->env;
	pid_t runsc = fork();
	if (runsc == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(errp[1], 2) < 0)
			_exit(127);
		syscall(SYS_close_range, 3, ~0U, 0);
		execve(path, av, ev);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(errp[1]);
	if (runsc < 0) {
		send_ctl(f->ctl, EE_CTL_ERROR, 0, "gvisor: fork runsc failed");
		_exit(0);
	}

	/* The job: its length, then its bytes, from the sealed memfd. */
	off_t job_len = lseek(f->job, 0, SEEK_END);
	unsigned char lenb[4] = { (unsigned char)job_len, (unsigned char)(job_len >> 8),
		                  (unsigned char)(job_len >> 16), (unsigned char)(job_len >> 24) };
	int to_runsc = in[1];
	int sent = ee_write_all(to_runsc, lenb, 4) == 0;
	char chunk[65536];
	for (off_t off = 0; sent && off < job_len;) {
		ssize_t n = pread(f->job, chunk, sizeof(chunk), off);
		if (n <= 0 || ee_write_all(to_runsc, chunk, (size_t)n) < 0)
			sent = 0;
		off += n > 0 ? n : 0;
	}
	close(f->job);
	/* Then the seccomp program, as compiled here (the relay loads it). */
	unsigned char nb[4] = { (unsigned char)prog->len, (unsigned char)(prog->len >> 8), 0, 0 };
	if (sent && (ee_write_all(to_runsc, nb, 4) < 0 ||
	             ee_write_all(to_runsc, prog->filter, prog->len * sizeof(*prog->filter)) < 0))
		sent = 0;
	fcntl(to_runsc, F_SETFL, O_NONBLOCK);

	static struct demux d;
	d.to = f;
	d.label = label;
	struct pending q = { 0 };
	char tail[1024] = "";
	size_t tail_len = 0;
	int rd = out[0], re = errp[0], gate = f->gate;
	while (rd >= 0 || re >= 0) {
		struct pollfd p[4] = {
			{ .fd = rd, .events = POLLIN },
			{ .fd = re, .events = POLLIN },
			{ .fd = to_runsc >= 0 ? gate : -1, .events = POLLIN },
			{ .fd = q.len > q.off ? to_runsc : -1, .events = POLLOUT },
		};
		if (poll(p, 4, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents) {
			ssize_t n = read(rd, d.buf + d.len, sizeof(d.buf) - d.len);
			if (n <= 0 && !(n < 0 && errno == EINTR)) {
				close(rd);
				rd = -1;
			} else if (n > 0) {
				d.len += (size_t)n;
				if (demux_frames(&d) < 0) {
					send_ctl(f->ctl, EE_CTL_ERROR, 0,
					         "gvisor: malformed frame from the relay");
					_exit(0);
				}
			}
		}
		if (p[1].revents) {
			char e[512];
			ssize_t n = read(re, e, sizeof(e));
			if (n <= 0 && !(n < 0 && errno == EINTR)) {
				close(re);
				re = -1;
			} else if (n > 0) {
				/* runsc's own messages: the last ones say why it failed */
				if (tail_len + (size_t)n >= sizeof(tail))
					tail_len = 0;
				memcpy(tail + tail_len, e, (size_t)n);
				tail_len += (size_t)n;
				tail[tail_len] = '\0';
			}
		}
		if (p[2].revents) {
			ssize_t n = read(gate, chunk, sizeof(chunk));
			if (n <= 0 && !(n < 0 && errno == EINTR)) {
				/* the gate's last answer is written: the harness reads its end */
				gate = -1;
				if (q.len == q.off) {
					close(to_runsc);
					to_runsc = -1;
				}
			} else if (n > 0) {
				char *grown = realloc(q.buf, q.len + (size_t)n);
				if (grown) {
					memcpy(grown + q.len, chunk, (size_t)n);
					q.buf = grown;
					q.len += (size_t)n;
				}
			}
		}
		if (q.len > q.off)
			pending_flush(&q, &to_runsc);
		if (gate < 0 && to_runsc >= 0 && q.len == q.off) {
			close(to_runsc);
			to_runsc = -1;
		}
	}
	int status = 0;
	while (waitpid(runsc, &status, 0) < 0 && errno == EINTR)
		;
	if (!d.started && !d.failed) {
		char msg[240];
		for (size_t i = 0; i < tail_len; i++)
			if (tail[i] == '\n')
				tail[i] = ' ';
		snprintf(msg, sizeof(msg), "%s did not start the harness (%s %d)%s%.150s",
		         g ? "gvisor: runsc" : label, WIFEXITED(status) ? "exit" : "signal",
		         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), tail_len ? ": " : "",
		         tail_len > 150 ? tail + tail_len - 150 : tail);
		send_ctl(f->ctl, EE_CTL_ERROR, 0,
		         sent ? msg
		         : g  ? "gvisor: runsc did not take the job"
		              : "docker did not take the job");
	}
	/* Started and no exit frame: the sandbox died under the candidate (an
	 * OOM kill of the sentry, say): no wait status, as a native init
	 * killed with its namespace gives none. */
	_exit(0);
}

static int relay_launch(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg, const char *dir,
                        const char *id, const struct ee_relay_cmd *cmd, const struct ee_launch_fds *f,
                        int *pidfd, struct ee_err *err);

/* In place of a cold clone: writes the bundle (removed when the sandbox
 * ends), creates sb's cgroup, clones the gVisor init and lets it go. */
static int gvisor_launch(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg, struct ee_launch_fds *f,
                         int *pidfd, struct ee_err *err)
{
	struct ee_limits lim = *cfg->limits;
	char dir[PATH_MAX], id[64];

	if (!cfg->host->is_root)
		return ee_fail(err, EE_ERR_SANDBOX,
		               "--backend gvisor needs root (runsc creates its own "
		               "namespaces and mounts); run execeval as root or use "
		               "--backend native");
	/* The cgroup holds runsc's sentry and gofer as well as the candidate. */
	lim.memory_mb += EE_GVISOR_EXTRA_MB;
	lim.procs += EE_GVISOR_EXTRA_PIDS;
	if (ee_cgroup_create(cfg->host, &lim, &sb->cg, err) < 0 ||
	    ee_gvisor_bundle_write(cfg->gvisor, cfg->mounts, cfg->limits, dir, id, err) < 0)
		return -1;
	sb->part.gvisor.dir = strdup(dir);
	if (!sb->part.gvisor.dir) {
		ee_gvisor_bundle_remove(dir);
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	return relay_launch(sb, cfg, dir, id, NULL, f, pidfd, err);
}

int ee_relay_launch(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg,
                    const struct ee_relay_cmd *cmd, const struct ee_launch_fds *f, int *pidfd,
                    struct ee_err *err)
{
	return relay_launch(sb, cfg, NULL, NULL, cmd, f, pidfd, err);
}

/* Clones the init (gVisor's: dir and id its bundle; else cmd's) and lets it go. */
static int relay_launch(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg, const char *dir,
                        const char *id, const struct ee_relay_cmd *cmd, const struct ee_launch_fds *f,
                        int *pidfd, struct ee_err *err)
{
	sb->timeout_s = ee_sandbox_first_clock_s(cfg); /* armed when the harness starts (sandbox.c) */
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | CLONE_PIDFD | SIGCHLD, NULL, pidfd,
	                           NULL, 0);
	if (pid < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "clone the %s init", cmd ? cmd->label : "gvisor");
	if (pid == 0)
		init_main(cmd ? NULL : cfg->gvisor, dir, id, cmd, &sb->cg, cfg->seccomp, f);
	sb->pid = pid;
	if (write(f->go, "g", 1) != 1) {
		ee_fail_errno(err, EE_ERR_SANDBOX, "start the %s sandbox", cmd ? cmd->label : "gvisor");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, __WALL);
		close(*pidfd);
		*pidfd = -1;
		return -1;
	}
	return 0;
}

double ee_relay_first_timer_s(const struct ee_sandbox *sb, const struct ee_sandbox_config *cfg)
{
	(void)sb;
	return EE_GVISOR_START_S + ee_sandbox_first_clock_s(cfg);
}

/* The bundle and runsc's state (every runsc process is gone with the
 * init's pid namespace). */
static int gvisor_ended(struct ee_sandbox *sb)
{
	ee_gvisor_bundle_remove(sb->part.gvisor.dir);
	return 0;
}

static void gvisor_discard(struct ee_sandbox *sb)
{
	ee_gvisor_bundle_remove(sb->part.gvisor.dir);
	free(sb->part.gvisor.dir);
	sb->part.gvisor.dir = NULL;
}

/* A cold sandbox to sandbox.c, but for its start's clock and its bundle. */
const struct ee_launcher ee_launcher_gvisor = {
	.sync_pipe = 1,
	.clock_at_started = 1,
	.parent = &ee_parent_supervisor,
	.launch = gvisor_launch,
	.first_timer_s = ee_relay_first_timer_s,
	.release = sandbox_own_release,
	.ended = gvisor_ended,
	.on_linger_event = sandbox_no_linger,
	.discard = gvisor_discard,
};
