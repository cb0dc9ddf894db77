/* gvisor_relay.c - inside a gVisor container: the harness's descriptors
 * rebuilt from stdin and stdout (see gvisor.h).
 *
 * The relay is the container's first process (uid 65534, no capabilities,
 * no_new_privs, the bundle's rlimits). It reads the job from stdin, puts it
 * in a sealed memfd, and starts the harness exactly as a native sandbox's
 * payload starts it: a new session, stdin /dev/null, the job on 3, pipes
 * for stdout, stderr, the result channel (4) and the gate (5), the pyc on
 * 6, the clean environment, and the native seccomp allow-list loaded just
 * before exec (gVisor runs seccomp filters itself), so a syscall probe
 * gets the same answer under both backends. Then it relays: the harness's
 * stdout, stderr and result channel go out as frames on stdout, the rest
 * of stdin goes to the gate, and once the harness has ended it sends its
 * wait status and exits, which ends the container and everything in it.
 *
 * The relay is non-dumpable, which the kernel honours under Docker: the
 * candidate, the same uid, can neither trace it nor open /proc/1/fd/1 to
 * write frames of its own. gVisor (20221219) honours it for /proc/1/mem
 * but not for /proc/1/fd, /proc/1/environ or kill(2) (*seen*: the
 * candidate opened the relay's stdin and stdout and killed it); so under
 * gVisor the relay runs as root inside the sentry with CAP_SETUID,
 * CAP_SETGID and CAP_SETPCAP alone (the bundle, gvisor_bundle.c) and the harness drops to
 * 65534 before exec: then the candidate is another uid than the relay,
 * without a capability. Writing to fd 4 is open to it, exactly as
 * natively; the supervisor validates what comes (the nonce, the framing),
 * as it does for a native sandbox.
 */
#include "sandbox/gvisor.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fdio.h"
#include "base/memfd.h"
#include "harness/harness.h"
#include "sandbox/child.h"
#include "sandbox/sandbox.h"
#include "sandbox/seccomp.h"

#define JOB_MAX (1u << 30)

static rlim_t as_bytes; /* the harness's RLIMIT_AS (argv[3], MB) */

static void frame(int type, const void *p, size_t n)
{
	unsigned char h[5] = { (unsigned char)type, (unsigned char)n, (unsigned char)(n >> 8),
		               (unsigned char)(n >> 16), (unsigned char)(n >> 24) };
	if (ee_write_all(1, h, sizeof(h)) < 0 || (n && ee_write_all(1, p, n) < 0))
		_exit(125); /* the init is gone: nobody to tell */
}

__attribute__((noreturn)) static void fail(const struct ee_err *e)
{
	frame(EE_GV_FAILED, e->msg, strlen(e->msg));
	_exit(126);
}

/* The payload's descriptors, as child.c's place_fds gives them. */
struct relay_fds {
	int job, code, out[2], err[2], result[2], gate[2];
};

__attribute__((noreturn)) static void exec_harness(const struct ee_harness *h, const struct relay_fds *f,
                                                   const struct ee_seccomp_prog *prog)
{
	const int src[] = { f->out[1], f->err[1], f->job, f->result[1], f->gate[0], f->code };
	const int dst[] = { 1, 2, EE_FD_JOB, EE_FD_RESULT, EE_FD_GATE, EE_FD_CODE };
	const int n = f->code >= 0 ? 6 : 5;
	int high[6];
	struct ee_err err = { 0 };

	setsid();
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int i = 0; i < n; i++)
		if ((high[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 16)) < 0)
			_exit(127);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0)
		_exit(127);
	for (int i = 0; i < n; i++)
		if (dup2(high[i], dst[i]) < 0)
			_exit(127);
	syscall(SYS_close_range, EE_FD_CODE + 1, ~0U, CLOSE_RANGE_CLOEXEC);
	/* A big allocation is a MemoryError ("memory limit") at once, where the
	 * host's OOM kill would come only after the sentry touched every page
	 * (seconds under ptrace: a timeout, not the native verdict). The
	 * harness's alone: the relay may be an ASan build, which reserves
	 * terabytes of shadow. */
	/* Root only under gVisor (above): the harness becomes 65534, and the
	 * change of uid clears every capability (no SECBIT_KEEP_CAPS). */
	const gid_t nobody = 65534;
	if (getuid() == 0) {
		/* The bounding set first (CAP_SETPCAP), emptied as natively as
		 * far as gVisor lets it: 20221219 keeps CAP_SETUID and
		 * CAP_SETGID there (*seen*); with nothing permitted, effective,
		 * inheritable or ambient after the change of uid, and
		 * no_new_privs, they grant nothing. */
		for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
			(void)prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
		if (setgroups(0, NULL) < 0 || setresgid(nobody, nobody, nobody) < 0 ||
		    setresuid(nobody, nobody, nobody) < 0)
			_exit(127);
	}
	struct rlimit as = { as_bytes, as_bytes };
	if (setrlimit(RLIMIT_AS, &as) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    ee_seccomp_load(prog, NULL, &err) < 0)
		_exit(127);
	execve(h->argv[0], (char *const *)h->argv, ee_child_clean_env);
	_exit(127);
}

/* Everything readable on fd now, as frames; 0 at end of file. */
static int relay_out(int fd, int type)
{
	char buf[EE_GV_FRAME_MAX];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return 1; /* EAGAIN: nothing more now */
		if (n == 0)
			return 0;
		frame(type, buf, (size_t)n);
	}
}

struct gate {
	int fd; /* write end, nonblocking; -1 once closed */
	char *buf;
	size_t len, off;
	int eof; /* stdin ended: close once written */
};

/* Writes what the pipe takes: the harness reads the gate only when it
 * asks, so a long answer must not block the relay's output. */
static void gate_flush(struct gate *g)
{
	while (g->fd >= 0 && g->off < g->len) {
		ssize_t n = write(g->fd, g->buf + g->off, g->len - g->off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) { /* the harness closed its end */
			close(g->fd);
			g->fd = -1;
			return;
		}
		g->off += (size_t)n;
	}
	g->len = g->off = 0;
	if (g->eof && g->fd >= 0) {
		close(g->fd);
		g->fd = -1;
	}
}

static void gate_take(struct gate *g)
{
	char chunk[16384];
	ssize_t n = read(0, chunk, sizeof(chunk));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		g->eof = 1;
		gate_flush(g);
		return;
	}
	char *grown = realloc(g->buf, g->len + (size_t)n);
	if (!grown)
		_exit(125);
	memcpy(grown + g->len, chunk, (size_t)n);
	g->buf = grown;
	g->len += (size_t)n;
	gate_flush(g);
}

/* pid 1 of the container: reaps every orphan; 1 once the harness ended. */
static int reap(pid_t harness, int *status)
{
	int st, ended = 0;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
		if (pid == harness) {
			*status = st;
			ended = 1;
		}
	return ended;
}

static void relay(pid_t harness, struct relay_fds *f, int sigfd)
{
	int outs[3] = { f->out[0], f->err[0], f->result[0] };
	const int types[3] = { EE_GV_STDOUT, EE_GV_STDERR, EE_GV_RESULT };
	struct gate g = { .fd = f->gate[1] };
	int status = 0, stdin_open = 1;

	for (int i = 0; i < 3; i++)
		fcntl(outs[i], F_SETFL, O_NONBLOCK);
	fcntl(g.fd, F_SETFL, O_NONBLOCK);
	for (;;) {
		struct pollfd p[6];
		int n = 0;
		for (int i = 0; i < 3; i++)
			p[n++] = (struct pollfd){ .fd = outs[i], .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = stdin_open ? 0 : -1, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = g.len > g.off ? g.fd : -1, .events = POLLOUT };
		p[n++] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
		if (poll(p, (nfds_t)n, -1) < 0 && errno != EINTR)
			_exit(125);
		for (int i = 0; i < 3; i++)
			if (outs[i] >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    relay_out(outs[i], types[i]) == 0) {
				close(outs[i]);
				outs[i] = -1;
			}
		if (p[3].revents & (POLLIN | POLLHUP | POLLERR)) {
			gate_take(&g);
			stdin_open = !g.eof;
		}
		if (p[4].revents)
			gate_flush(&g);
		if (p[5].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				;
			if (reap(harness, &status)) {
				/* What it wrote before it ended is in the pipes. */
				for (int i = 0; i < 3; i++)
					if (outs[i] >= 0)
						(void)relay_out(outs[i], types[i]);
				unsigned char s[4] = { (unsigned char)status, (unsigned char)(status >> 8),
					               (unsigned char)(status >> 16),
					               (unsigned char)(status >> 24) };
				frame(EE_GV_EXIT, s, sizeof(s));
				_exit(0); /* pid 1: the container, and all in it, ends */
			}
		}
	}
}

void ee_gvisor_relay_main(int argc, char **argv)
{
	struct ee_err err = { 0 };
	struct ee_harness h;
	struct ee_seccomp_prog prog = { 0 };
	struct relay_fds f;
	unsigned char lenb[4];

	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (argc != 4) {
		ee_fail(&err, EE_ERR_SANDBOX, "relay: usage: __gvisor-relay PYTHON AS_MB");
		fail(&err);
	}
	as_bytes = (rlim_t)strtoull(argv[3], NULL, 10) << 20;
	if (ee_read_all(0, lenb, 4) < 0)
		_exit(126);
	uint32_t len = (uint32_t)lenb[0] | (uint32_t)lenb[1] << 8 | (uint32_t)lenb[2] << 16 |
	               (uint32_t)lenb[3] << 24;
	char *job = len <= JOB_MAX ? malloc(len ? len : 1) : NULL;
	if (!job || ee_read_all(0, job, len) < 0) {
		ee_fail(&err, EE_ERR_SANDBOX, "relay: cannot read the job (%u bytes)", len);
		fail(&err);
	}
	f.job = ee_memfd_sealed("execeval-job", job, len, &err);
	free(job);
	/* The supervisor's compiled filter: libseccomp's own probes of the
	 * kernel fail under gVisor, and this is the very same program. */
	if (ee_read_all(0, lenb, 4) < 0)
		_exit(126);
	len = (uint32_t)lenb[0] | (uint32_t)lenb[1] << 8 | (uint32_t)lenb[2] << 16 | (uint32_t)lenb[3] << 24;
	prog.len = (unsigned short)len;
	prog.filter = len && len <= 4096 ? calloc(len, sizeof(*prog.filter)) : NULL;
	if (!prog.filter || ee_read_all(0, prog.filter, len * sizeof(*prog.filter)) < 0) {
		ee_fail(&err, EE_ERR_SANDBOX, "relay: cannot read the seccomp filter (%u instructions)", len);
		fail(&err);
	}
	if (f.job < 0 || ee_harness_prepare(argv[2], &h, &err) < 0)
		fail(&err);
	f.code = h.code_fd;
	if (pipe2(f.out, O_CLOEXEC) < 0 || pipe2(f.err, O_CLOEXEC) < 0 || pipe2(f.result, O_CLOEXEC) < 0 ||
	    pipe2(f.gate, O_CLOEXEC) < 0) {
		ee_fail_errno(&err, EE_ERR_SANDBOX, "relay: pipe2");
		fail(&err);
	}
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		ee_fail_errno(&err, EE_ERR_SANDBOX, "relay: signalfd");
		fail(&err);
	}
	pid_t pid = fork();
	if (pid < 0) {
		ee_fail_errno(&err, EE_ERR_SANDBOX, "relay: fork the harness");
		fail(&err);
	}
	if (pid == 0)
		exec_harness(&h, &f, &prog);
	close(f.out[1]);
	close(f.err[1]);
	close(f.result[1]);
	close(f.gate[0]);
	close(f.job);
	ee_harness_release(&h);
	frame(EE_GV_STARTED, NULL, 0);
	relay(pid, &f, sigfd);
	_exit(125);
}
