/* child.c - inside the sandbox, from clone to exec (see child.h).
 *
 * Theory of operation. The supervisor clones this process into new pid,
 * mount, network, ipc and uts namespaces (and a user namespace when not
 * root). The clone is the sandbox's init:
 *   1. dies with the supervisor (PDEATHSIG), wipes its copy of the
 *      supervisor's environment strings (so /proc/1/environ holds nothing);
 *   2. waits for the supervisor's go: uid/gid maps written, cgroup attached;
 *   3. joins its cgroups (cheaply, from inside), enters a cgroup namespace
 *      rooted there, names the host;
 *   4. builds the root filesystem and pivots into it (mount.c);
 *   5. drops privileges for good: bounding set, supplementary groups,
 *      the sandbox's own uid/gid (as root, uid.h; 65534 in a user
 *      namespace otherwise), capabilities, no_new_privs, non-dumpable;
 *   6. loads the seccomp filter (inherited by everything it forks);
 *   7. forks the payload and reaps until the payload ends.
 * The payload starts a new session (no controlling terminal: TIOCSTI), resets
 * signal state, places its descriptors, sets rlimits and execs the harness.
 */
#include "sandbox/child.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/resource_limits.h"
#include "sandbox/cgroup.h"
#include "sandbox/host.h"
#include "sandbox/mount.h"
#include "sandbox/sandbox.h"
#include "sandbox/notify.h"
#include "sandbox/seccomp.h"

extern char **environ;

/* The payload's whole environment: fixed values, nothing from the host. */
char *const ee_child_clean_env[] = {
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"HOME=/tmp",
	"TMPDIR=/tmp",
	"LANG=C.UTF-8",
	"LC_ALL=C.UTF-8",
	"PYTHONIOENCODING=utf-8",
	"OPENBLAS_NUM_THREADS=1",
	"OMP_NUM_THREADS=1",
	NULL,
};

static void send_ctl(int fd, const struct ee_ctl_msg *m)
{
	ssize_t n;
	do
		n = write(fd, m, sizeof(*m));
	while (n < 0 && errno == EINTR);
}

__attribute__((noreturn)) static void die(const struct ee_child_args *a, const struct ee_err *e)
{
	struct ee_ctl_msg m = { .type = EE_CTL_ERROR, .err = *e };
	send_ctl(a->fds.ctl, &m);
	_exit(127);
}

static char **supervisor_argv;

void ee_child_note_argv(char **argv)
{
	supervisor_argv = argv;
}

/* The strings /proc/<pid>/environ and /proc/<pid>/cmdline show live in
 * this copy of the supervisor's memory (its command line names the
 * caller's files); zero them before anything of the sandbox runs. */
static void scrub_environment(void)
{
	for (char **e = environ; e && *e; e++)
		memset(*e, 0, strlen(*e));
	environ = NULL;
	for (char **a = supervisor_argv; a && *a; a++)
		memset(*a, 0, strlen(*a));
}

int ee_child_drop_bounding_set(const struct ee_host *h, struct ee_err *err)
{
	for (unsigned cap = 0; cap <= h->cap_last_cap; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "drop capability %u from the bounding set",
			                     cap);
	return 0;
}

static int drop_privileges(const struct ee_child_args *a, struct ee_err *err)
{
	/* A warm worker emptied the bounding set once for all its candidates. */
	if (!a->warm && ee_child_drop_bounding_set(a->host, err) < 0)
		return -1;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "clear ambient capabilities");
	/* As root, a uid and gid of this sandbox's own: no quota of the
	 * kernel's per-user ones is shared with another sandbox. */
	if (a->host->is_root) {
		if (setgroups(0, NULL) < 0)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "setgroups");
		if (a->uid < 65536) /* never a host account's: root, nobody */
			return ee_fail(err, EE_ERR_SANDBOX, "internal: no uid claimed for the sandbox");
		if (setresgid(a->uid, a->uid, a->uid) < 0 || setresuid(a->uid, a->uid, a->uid) < 0)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "become uid/gid %u", a->uid);
	}
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "drop capabilities");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "set no_new_privs");
	/* Non-dumpable: /proc/1/mem and /proc/1/environ stay closed to the
	 * payload, which runs as the same uid. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "set non-dumpable");
	return 0;
}

static int set_limit(int resource, rlim_t soft, rlim_t hard, const char *name, struct ee_err *err)
{
	struct rlimit rl = { soft, hard };
	if (setrlimit(resource, &rl) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "setrlimit %s", name);
	return 0;
}

static int set_rlimits(const struct ee_child_args *a, struct ee_err *err)
{
	const struct ee_limits *l = a->limits;
	unsigned long long cpu, cpu_hard;
	ee_limits_cpu(l, &cpu, &cpu_hard);

	if (set_limit(RLIMIT_CPU, (rlim_t)cpu, (rlim_t)cpu_hard, "CPU", err) < 0 ||
	    set_limit(RLIMIT_FSIZE, (rlim_t)l->file_mb << 20, (rlim_t)l->file_mb << 20, "FSIZE", err) < 0 ||
	    set_limit(RLIMIT_NOFILE, l->open_files, l->open_files, "NOFILE", err) < 0 ||
	    set_limit(RLIMIT_CORE, 0, 0, "CORE", err) < 0 ||
	    set_limit(RLIMIT_MEMLOCK, 0, 0, "MEMLOCK", err) < 0)
		return -1;
	if (!a->have_memory_cg) {
		rlim_t as = ((rlim_t)l->memory_mb << 20) + ((rlim_t)128 << 20);
		if (set_limit(RLIMIT_AS, as, as, "AS", err) < 0)
			return -1;
	}
	/* Without a pids cgroup, RLIMIT_NPROC stands in. As root it counts the
	 * processes of the sandbox's own uid (uid.h); unprivileged, the kernel
	 * (>= 5.14) counts it per user namespace: either way this sandbox
	 * alone. */
	if (!a->have_pids_cg && set_limit(RLIMIT_NPROC, l->procs, l->procs, "NPROC", err) < 0)
		return -1;
	return 0;
}

static int reset_signals(struct ee_err *err)
{
	sigset_t none;
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "reset the signal mask");
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL); /* fails harmlessly for SIGKILL, SIGSTOP, RT */
	return 0;
}

/* Moves fds into the numbers the harness expects. Sources are first copied
 * above the targets, so a source that already sits on a target number is
 * not clobbered. */
static int place_fds(const struct ee_child_fds *f, struct ee_err *err)
{
	const int src[] = { f->out, f->err, f->job, f->result, f->gate, f->code };
	const int dst[] = { 1, 2, EE_FD_JOB, EE_FD_RESULT, EE_FD_GATE, EE_FD_CODE };
	const int n = f->code >= 0 ? 6 : 5;
	int high[6];

	for (int i = 0; i < n; i++) {
		high[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 16);
		if (high[i] < 0)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "dup fd %d", src[i]);
	}
	/* init closed 0-2, so /dev/null may open as fd 0 itself: then dup2 is a
	 * no-op and only clearing close-on-exec keeps it. */
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || (null == 0 ? fcntl(0, F_SETFD, 0) : dup2(null, 0)) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "/dev/null on stdin");
	for (int i = 0; i < n; i++)
		if (dup2(high[i], dst[i]) < 0)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "dup2 to fd %d", dst[i]);
	/* Nothing else crosses exec, whatever a library may have opened. */
	if (syscall(SYS_close_range, EE_FD_CODE + 1, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "close_range");
	return 0;
}

__attribute__((noreturn)) static void payload(const struct ee_child_args *a)
{
	struct ee_err err = { 0 };

	if (setsid() < 0) {
		ee_fail_errno(&err, EE_ERR_SANDBOX, "setsid");
	} else if (a->warm) {
		/* The warm interpreter keeps the signal dispositions it set up
		 * (enter() restores them); without exec, close-on-exec closes
		 * nothing, so everything past the protocol's fds goes now. */
		sigset_t none;
		sigemptyset(&none);
		if (sigprocmask(SIG_SETMASK, &none, NULL) == 0 && place_fds(&a->fds, &err) == 0 &&
		    syscall(SYS_close_range, EE_FD_GATE + 1, ~0U, 0) == 0 && set_rlimits(a, &err) == 0)
			a->enter();
		if (!err.msg[0])
			ee_fail_errno(&err, EE_ERR_SANDBOX, "prepare the warm payload");
	} else if (reset_signals(&err) == 0 && place_fds(&a->fds, &err) == 0 && set_rlimits(a, &err) == 0) {
		execve(a->argv[0], (char *const *)a->argv, ee_child_clean_env);
		ee_fail_errno(&err, EE_ERR_SANDBOX, "execve %s", a->argv[0]);
	}
	die(a, &err);
}

/* init's last job: reap everything until the payload ends, then report. */
__attribute__((noreturn)) static void reap(const struct ee_child_args *a, pid_t payload_pid)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, __WALL);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid == payload_pid || pid < 0) {
			struct ee_ctl_msg m = { .type = EE_CTL_EXIT, .status = pid < 0 ? -1 : status };
			send_ctl(a->fds.ctl, &m);
			_exit(0); /* the kernel now kills the rest of the namespace */
		}
	}
}

static int cmp_int(const void *x, const void *y)
{
	return *(const int *)x - *(const int *)y;
}

/* init does not exec, so close-on-exec protects nothing here: close every
 * descriptor of the supervisor's (other sandboxes' pipes, epoll, signalfd)
 * but the ones this sandbox needs (and also's, ended by -1). */
static void close_others(const struct ee_child_fds *f, const int *also)
{
	int keep[16] = { f->sync, f->ctl, f->job, f->out, f->err, f->result, f->gate, f->code };
	size_t n = 8;
	unsigned next = 0;

	for (; also && *also >= 0 && n < sizeof(keep) / sizeof(keep[0]); also++)
		keep[n++] = *also;
	qsort(keep, n, sizeof(keep[0]), cmp_int);
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < 0)
			continue; /* no code fd */
		if ((unsigned)keep[i] > next)
			syscall(SYS_close_range, next, (unsigned)keep[i] - 1, 0);
		next = (unsigned)keep[i] + 1;
	}
	syscall(SYS_close_range, next, ~0U, 0);
}

/* Loads the filter; a notifying one's listener goes to the supervisor on
 * the control socket and this copy is closed before the candidate runs
 * (notify.h): nothing in the sandbox may answer its own calls. */
static int install_filter(const struct ee_child_args *a, struct ee_err *err)
{
	int listener;
	if (ee_seccomp_load(a->seccomp, &listener, err) < 0)
		return -1;
	if (listener < 0)
		return 0; /* a filter that answers by itself */
	struct ee_ctl_msg m = { .type = EE_CTL_LISTENER };
	int sent = ee_notify_send(a->fds.ctl, &m, sizeof(m), listener);
	close(listener);
	if (sent < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "pass the seccomp listener");
	return 0;
}

/* The warm variant of steps 3-6, in the payload itself: the worker built
 * the root and named the host; the candidate's init joined the cgroup
 * before it cloned this process (zygote.c:namespace_init), so it is born
 * there; this candidate gets its own /proc and /tmp. */
static int enter_warm_sandbox(const struct ee_child_args *a, struct ee_err *err)
{
	for (const int *fd = a->cgroup_fds; *fd >= 0; fd++)
		close(*fd);
	if (a->use_cgroup_ns && unshare(CLONE_NEWCGROUP) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "unshare cgroup namespace");
	if (ee_mount_refresh(a->mounts, a->own_account ? a->uid : 0, err) < 0 || drop_privileges(a, err) < 0)
		return -1;
	/* The worker is the init of the pid namespace this one nests in: if it
	 * dies, the kernel kills this namespace with it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "set the parent-death signal");
	return install_filter(a, err);
}

/* Steps 3-6 of the theory of operation, as init. */
static int enter_sandbox(const struct ee_child_args *a, struct ee_err *err)
{
	/* Joined from inside, before anything else runs: everything this
	 * process forks is then in the cgroups too. */
	if (ee_cgroup_attach_self(a->cgroup, err) < 0)
		return -1;
	if (a->use_cgroup_ns && unshare(CLONE_NEWCGROUP) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "unshare cgroup namespace");
	if (sethostname("sandbox", 7) < 0 || setdomainname("sandbox", 7) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "sethostname");
	if (ee_mount_apply(a->mounts, a->host->is_root ? a->uid : 65534, err) < 0 ||
	    drop_privileges(a, err) < 0)
		return -1;
	/* The kernel clears the parent-death signal on any change of
	 * credentials: arm it again, then make sure the supervisor did not die
	 * in between (it holds the sync pipe's write end open until the end). */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	struct pollfd lifeline = { .fd = a->fds.sync, .events = POLLIN };
	if (poll(&lifeline, 1, 0) > 0 && (lifeline.revents & (POLLHUP | POLLERR)))
		_exit(126);
	close(a->fds.sync);
	return install_filter(a, err);
}

void ee_child_main(const struct ee_child_args *a)
{
	struct ee_err err = { 0 };
	char go;

	if (a->warm) {
		/* The worker's environment is already clean; its fds but these
		 * (the worker's socket above all) must not reach the candidate.
		 * The pid namespace's init is the worker's (zygote.c): this
		 * process is the payload itself. */
		close_others(&a->fds, a->cgroup_fds);
		if (enter_warm_sandbox(a, &err) < 0)
			die(a, &err);
		payload(a);
	} else {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		scrub_environment();
		close_others(&a->fds, NULL);
		if (read(a->fds.sync, &go, 1) != 1)
			_exit(126); /* the supervisor is gone */
		if (enter_sandbox(a, &err) < 0)
			die(a, &err);
	}

	pid_t pid = fork();
	if (pid < 0) {
		ee_fail_errno(&err, EE_ERR_SANDBOX, "fork the payload");
		die(a, &err);
	}
	if (pid == 0)
		payload(a);
	close(a->fds.out);
	close(a->fds.err);
	close(a->fds.result);
	close(a->fds.gate);
	close(a->fds.job);
	if (a->fds.code >= 0)
		close(a->fds.code);
	reap(a, pid);
}
