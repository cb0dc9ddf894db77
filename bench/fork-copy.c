/* fork-copy.c - the kernel sequence of a session's copy, proven and timed.
 *
 * docs/sandbox.md ("Forking a session") designs a copy of a live session
 * made so that nothing the copied process does decides its isolation. This
 * runs that sequence on a stand-in "state" process and checks, from the
 * host, what the copy ends up with; nothing of execeval's own runs:
 *
 *   1. the state: a child of this program, uid/gid nobody, no groups,
 *      no_new_privs, a seccomp filter that lets everything through but
 *      turns clone with CLONE_NEWUSER, setresuid, setresgid, setgroups and
 *      capset into notifications (the session filter's refusals are
 *      notifications already); then it blocks in read() on its command
 *      pipe, as the harness's state does between cells;
 *   2. this program, the "supervisor" (root), takes the filter's listener
 *      (pidfd_getfd), seizes the state (PTRACE_O_TRACEFORK) and interrupts
 *      it in its read;
 *   3. it injects clone(CLONE_NEWUSER | NEWPID | NEWNS | NEWNET | NEWIPC |
 *      NEWUTS) at the state's own syscall instruction, approves the
 *      notification for that pid only (SECCOMP_USER_NOTIF_FLAG_CONTINUE),
 *      and catches the copy at its birth, stopped before its first
 *      instruction; the state gets its registers back and its read()
 *      restarts;
 *   4. while the copy is stopped: its user namespace's uid and gid maps
 *      onto a uid of its own; a helper that enters its mount and pid
 *      namespaces mounts a fresh tmpfs on /tmp and a fresh /proc; the copy
 *      is made to run setgroups, setresgid, setresuid (notified and
 *      approved) then capset to nothing and close_range(3, ~0);
 *   5. the host reads /proc/<copy>: its uid and gid, its capabilities, its
 *      namespaces against the state's, its /tmp's file system; the state is
 *      sent a byte and must echo it (it resumed its read intact).
 *
 * x86-64 only. Run as root (ptrace, namespaces, mounts):
 *
 *   cc -O2 -Wall -o /tmp/fork-copy bench/fork-copy.c -lseccomp && /tmp/fork-copy [N]
 *
 * It prints each check and, over N copies (default 20), the p50 and p99 of
 * each step and of the whole copy, beside a plain fork and exit of this
 * program. `--without-maps`, `--without-mounts` or `--without-creds` leaves
 * that step out: the checks it answers for then fail (and the exit is 1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOBODY      65534
#define COPY_UID    61234 /* a uid of the copy's own on the host */
#define LISTENER_FD 100   /* the state's listener, where the supervisor takes it */
#define NS_FLAGS    (CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

static void die(const char *what)
{
	fprintf(stderr, "fork-copy: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- the state ---------------------------------------------------------- */

static void state_filter(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx ||
	    seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(clone), 1,
	                     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(setresuid), 0) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(setresgid), 0) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(setgroups), 0) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(capset), 0) < 0 || seccomp_load(ctx) < 0)
		die("seccomp");
	int listener = seccomp_notify_fd(ctx);
	if (listener != LISTENER_FD && (dup2(listener, LISTENER_FD) < 0 || close(listener) < 0))
		die("the listener's fd");
}

/* Never returns: echoes each byte of cmd on rep. The listener stays open
 * (LISTENER_FD) for the supervisor to take. */
static void state_main(int cmd, int rep)
{
	if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
	    setresuid(NOBODY, NOBODY, NOBODY) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die("the state's credentials");
	state_filter();
	char c = 'r';
	if (write(rep, &c, 1) != 1)
		_exit(1);
	for (;;) {
		ssize_t n = read(cmd, &c, 1); /* where the supervisor interrupts it */
		if (n <= 0)
			_exit(0);
		if (write(rep, &c, 1) != 1)
			_exit(1);
	}
}

/* ---- ptrace helpers ----------------------------------------------------- */

static int wait_stop(pid_t pid)
{
	int status;
	if (waitpid(pid, &status, __WALL) != pid)
		die("waitpid");
	if (!WIFSTOPPED(status)) {
		fprintf(stderr, "fork-copy: %d did not stop (status %#x)\n", pid, status);
		exit(1);
	}
	return status;
}

static void getregs(pid_t pid, struct user_regs_struct *r)
{
	if (ptrace(PTRACE_GETREGS, pid, NULL, r) < 0)
		die("PTRACE_GETREGS");
}

static void setregs(pid_t pid, const struct user_regs_struct *r)
{
	if (ptrace(PTRACE_SETREGS, pid, NULL, r) < 0)
		die("PTRACE_SETREGS");
}

/* The registers that redo the system call a stop interrupted, as the
 * kernel would have on its way back to user mode: restored at the exit of
 * an injected call, the kernel no longer does it. */
static struct user_regs_struct restarted(const struct user_regs_struct *r)
{
	struct user_regs_struct out = *r;
	long err = (long)r->rax;
	if ((long)r->orig_rax >= 0 && (err == -512 || err == -513 || err == -514)) {
		out.rip -= 2; /* ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND */
		out.rax = r->orig_rax;
	} else if ((long)r->orig_rax >= 0 && err == -516) {
		out.rip -= 2; /* ERESTART_RESTARTBLOCK */
		out.rax = SYS_restart_syscall;
	}
	out.orig_rax = -1;
	return out;
}

/* Answers the filter's notifications for pid with CONTINUE while waiting
 * for pid's next ptrace stop; any other pid's is refused. */
static int approve_until_stop(int listener, pid_t pid, int *approved)
{
	for (;;) {
		int status;
		pid_t got = waitpid(pid, &status, __WALL | WNOHANG);
		if (got == pid) {
			if (!WIFSTOPPED(status)) {
				fprintf(stderr, "fork-copy: %d ended (status %#x)\n", pid, status);
				exit(1);
			}
			return status;
		}
		struct pollfd p = { .fd = listener, .events = POLLIN };
		if (poll(&p, 1, 1) <= 0)
			continue;
		struct seccomp_notif *req;
		struct seccomp_notif_resp *resp;
		if (seccomp_notify_alloc(&req, &resp) < 0)
			die("seccomp_notify_alloc");
		if (seccomp_notify_receive(listener, req) == 0) {
			resp->id = req->id;
			if ((pid_t)req->pid == pid) {
				resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
				(*approved)++;
			} else {
				resp->error = -EPERM;
			}
			seccomp_notify_respond(listener, resp);
		}
		seccomp_notify_free(req, resp);
	}
}

/* Makes the stopped pid run one system call at its syscall instruction
 * `site`: from a stop outside a system call, to its entry, then its exit.
 * Returns the call's result. */
static long inject(pid_t pid, int listener, unsigned long site, long nr, long a0, long a1, long a2,
                   int *approved)
{
	struct user_regs_struct r;
	getregs(pid, &r);
	r.rip = site;
	r.rax = nr;
	r.orig_rax = -1;
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	r.r10 = r.r8 = r.r9 = 0;
	setregs(pid, &r);
	if (ptrace(PTRACE_SYSCALL, pid, NULL, NULL) < 0)
		die("PTRACE_SYSCALL (entry)");
	wait_stop(pid); /* syscall-enter-stop: the filter runs after it */
	if (ptrace(PTRACE_SYSCALL, pid, NULL, NULL) < 0)
		die("PTRACE_SYSCALL (exit)");
	approve_until_stop(listener, pid, approved); /* syscall-exit-stop */
	getregs(pid, &r);
	return (long)r.rax;
}

/* ---- the copy's set-up -------------------------------------------------- */

static void write_file(pid_t pid, const char *name, const char *text)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) < 0)
		die(path);
}

/* A helper enters the copy's mount namespace and mounts /tmp; its child,
 * in the copy's pid namespace, mounts /proc. */
static void mount_fresh(pid_t copy)
{
	pid_t h = fork();
	if (h < 0)
		die("fork the helper");
	if (h == 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", copy);
		int mnt = open(path, O_RDONLY | O_CLOEXEC);
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", copy);
		int pid = open(path, O_RDONLY | O_CLOEXEC);
		if (mnt < 0 || pid < 0 || setns(mnt, CLONE_NEWNS) < 0 || setns(pid, CLONE_NEWPID) < 0)
			_exit(2);
		if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=1777") < 0)
			_exit(3);
		pid_t in = fork();
		if (in == 0)
			_exit(mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 ? 4
			                                                                                 : 0);
		int st;
		if (in < 0 || waitpid(in, &st, 0) != in)
			_exit(5);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 6);
	}
	int st;
	if (waitpid(h, &st, 0) != h || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "fork-copy: the mount helper failed (%#x)\n", st);
		exit(1);
	}
}

struct times {
	double clone_ms, maps_ms, mounts_ms, creds_ms, total_ms;
};

/* One copy of the stopped-and-restored state: returns the copy, stopped. */
/* Steps a run may leave out, to watch the checks below fail without them. */
static int skip_maps, skip_mounts, skip_creds;

static pid_t make_copy(pid_t state, int listener, struct times *t)
{
	int approved = 0;
	double t0 = now_ms();
	if (ptrace(PTRACE_SEIZE, state, NULL, (void *)(long)PTRACE_O_TRACEFORK) < 0)
		die("PTRACE_SEIZE");
	if (ptrace(PTRACE_INTERRUPT, state, NULL, NULL) < 0)
		die("PTRACE_INTERRUPT");
	wait_stop(state);
	struct user_regs_struct saved;
	getregs(state, &saved);
	/* A syscall instruction of the state's own: before its rip when it was
	 * stopped in a call (its read), else the one found before (it may
	 * not have reached its restarted read yet). */
	static unsigned long site;
	long insn = ptrace(PTRACE_PEEKTEXT, state, (void *)(saved.rip - 2), NULL);
	if ((insn & 0xffff) == 0x050f)
		site = saved.rip - 2;
	if (!site) {
		fprintf(stderr, "fork-copy: no syscall instruction before the state's rip\n");
		exit(1);
	}

	struct user_regs_struct r = saved;
	r.rip = site;
	r.rax = SYS_clone;
	r.orig_rax = -1;
	r.rdi = NS_FLAGS | SIGCHLD;
	r.rsi = r.rdx = r.r10 = r.r8 = 0;
	setregs(state, &r);
	if (ptrace(PTRACE_CONT, state, NULL, NULL) < 0)
		die("PTRACE_CONT");
	int status = approve_until_stop(listener, state, &approved);
	if (status >> 8 != (SIGTRAP | (PTRACE_EVENT_FORK << 8))) {
		fprintf(stderr, "fork-copy: the clone was refused (status %#x)\n", status);
		exit(1);
	}
	unsigned long msg;
	if (ptrace(PTRACE_GETEVENTMSG, state, NULL, &msg) < 0)
		die("PTRACE_GETEVENTMSG");
	pid_t copy = (pid_t)msg;
	wait_stop(copy); /* born stopped: PTRACE_EVENT_STOP */
	/* The state finishes the clone, then gets its own registers back: its
	 * interrupted read() restarts when it runs again. */
	if (ptrace(PTRACE_SYSCALL, state, NULL, NULL) < 0)
		die("PTRACE_SYSCALL (state)");
	wait_stop(state);
	struct user_regs_struct back = restarted(&saved);
	setregs(state, &back);
	if (ptrace(PTRACE_DETACH, state, NULL, NULL) < 0)
		die("PTRACE_DETACH (state)");
	double t1 = now_ms();

	char map[64];
	snprintf(map, sizeof(map), "%d %d 1\n", NOBODY, COPY_UID);
	if (!skip_maps) {
		write_file(copy, "setgroups", "deny");
		write_file(copy, "uid_map", map);
		write_file(copy, "gid_map", map);
	}
	double t2 = now_ms();

	if (!skip_mounts)
		mount_fresh(copy);
	double t3 = now_ms();
	if (skip_creds || skip_maps) { /* unmapped, setresuid would fail: leave the copy as born */
		*t = (struct times){ t1 - t0, t2 - t1, t3 - t2, 0, t3 - t0 };
		return copy;
	}

	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct none[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
	/* capset's arguments live in the copy's memory: put them on its stack,
	 * below the red zone. */
	struct user_regs_struct cr;
	getregs(copy, &cr);
	unsigned long at = (cr.rsp - 512) & ~15UL;
	unsigned long words[(sizeof(hdr) + sizeof(none)) / sizeof(long) + 1] = { 0 };
	memcpy(words, &hdr, sizeof(hdr));
	memcpy((char *)words + sizeof(hdr), none, sizeof(none));
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (ptrace(PTRACE_POKEDATA, copy, (void *)(at + i * sizeof(long)), (void *)words[i]) < 0)
			die("PTRACE_POKEDATA");
	long rc = inject(copy, listener, site, SYS_setresgid, NOBODY, NOBODY, NOBODY, &approved);
	if (rc == 0)
		rc = inject(copy, listener, site, SYS_setresuid, NOBODY, NOBODY, NOBODY, &approved);
	if (rc == 0)
		rc = inject(copy, listener, site, SYS_capset, (long)at, (long)(at + sizeof(hdr)), 0,
		            &approved);
	if (rc == 0)
		rc = inject(copy, listener, site, SYS_close_range, 3, ~0U, 0, &approved);
	if (rc != 0) {
		fprintf(stderr, "fork-copy: a call injected into the copy failed: %ld\n", rc);
		exit(1);
	}
	double t4 = now_ms();
	*t = (struct times){ t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0 };
	if (approved != 4) { /* the clone and three credential calls, no more */
		fprintf(stderr, "fork-copy: %d notifications approved, 4 expected\n", approved);
		exit(1);
	}
	return copy;
}

/* ---- the host's checks -------------------------------------------------- */

static void status_line(pid_t pid, const char *key, char *out, size_t size)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *f = fopen(path, "re");
	out[0] = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0) {
			snprintf(out, size, "%s", line + strlen(key));
			out[strcspn(out, "\n")] = 0;
		}
	if (f)
		fclose(f);
}

static unsigned long ns_inode(pid_t pid, const char *ns)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, ns);
	return stat(path, &st) < 0 ? 0 : (unsigned long)st.st_ino;
}

static unsigned long tmp_dev(pid_t pid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/root/tmp", pid);
	return stat(path, &st) < 0 ? 0 : (unsigned long)st.st_dev;
}

static int fd_count(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	int n = 0;
	for (int fd = 0; fd < 64; fd++) {
		char p[80];
		snprintf(p, sizeof(p), "%s/%d", path, fd);
		n += access(p, F_OK) == 0;
	}
	return n;
}

static int check(const char *what, int ok)
{
	printf("  %-58s %s\n", what, ok ? "yes" : "NO");
	return ok;
}

static int checks(pid_t state, pid_t copy)
{
	char uid[128], gid[128], capeff[64], capprm[64], groups[128];
	status_line(copy, "Uid:", uid, sizeof(uid));
	status_line(copy, "Gid:", gid, sizeof(gid));
	status_line(copy, "CapEff:", capeff, sizeof(capeff));
	status_line(copy, "CapPrm:", capprm, sizeof(capprm));
	status_line(copy, "Groups:", groups, sizeof(groups));
	char want[64];
	snprintf(want, sizeof(want), "%d\t%d\t%d\t%d", COPY_UID, COPY_UID, COPY_UID, COPY_UID);
	int ok = 1;
	ok &= check("the copy's uids are its own", strcmp(uid + strspn(uid, "\t "), want) == 0);
	ok &= check("the copy's gids are its own", strcmp(gid + strspn(gid, "\t "), want) == 0);
	ok &= check("the copy has no supplementary group", groups[strspn(groups, "\t ")] == 0);
	ok &= check("the copy has no capability (effective, permitted)",
	            strtoull(capeff, NULL, 16) == 0 && strtoull(capprm, NULL, 16) == 0);
	static const char *const kinds[] = { "user", "pid", "mnt", "net", "ipc", "uts" };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char what[80];
		snprintf(what, sizeof(what), "its %s namespace is not the state's", kinds[i]);
		ok &= check(what, ns_inode(copy, kinds[i]) &&
		                          ns_inode(copy, kinds[i]) != ns_inode(state, kinds[i]));
	}
	ok &= check("its /tmp is a file system of its own", tmp_dev(copy) && tmp_dev(copy) != tmp_dev(state));
	ok &= check("it holds no descriptor but 0, 1, 2", fd_count(copy) <= 3);
	return ok;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void report(const char *name, double *xs, int n)
{
	qsort(xs, n, sizeof(double), cmp_double);
	printf("  %-34s p50 %7.3f ms  p99 %7.3f ms\n", name, xs[n / 2],
	       xs[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1]);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	const char *without = argc > 2 ? argv[2] : "";
	skip_maps = strcmp(without, "--without-maps") == 0;
	skip_mounts = strcmp(without, "--without-mounts") == 0;
	skip_creds = strcmp(without, "--without-creds") == 0;
	if (n < 1 || n > 10000 || geteuid() != 0 || (*without && !skip_maps && !skip_mounts && !skip_creds)) {
		fprintf(stderr,
		        "usage (as root): fork-copy [N [--without-maps|--without-mounts|--without-creds]]\n");
		return 2;
	}
	int cmd[2], rep[2];
	if (pipe2(cmd, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0)
		die("pipe");
	pid_t state = fork();
	if (state == 0) {
		close(cmd[1]);
		close(rep[0]);
		state_main(cmd[0], rep[1]);
	}
	close(cmd[0]);
	close(rep[1]);
	char c;
	if (read(rep[0], &c, 1) != 1)
		die("the state's start");
	int pidfd = (int)syscall(SYS_pidfd_open, state, 0);
	int listener = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, LISTENER_FD, 0);
	if (listener < 0)
		die("pidfd_getfd (the state's listener)");

	double *clone_ms = calloc(n, sizeof(double)), *maps = calloc(n, sizeof(double)),
	       *mounts = calloc(n, sizeof(double)), *creds = calloc(n, sizeof(double)),
	       *total = calloc(n, sizeof(double)), *plain = calloc(n, sizeof(double));
	int ok = 1;
	for (int i = 0; i < n; i++) {
		struct times t;
		pid_t copy = make_copy(state, listener, &t);
		if (i == 0) {
			printf("the first copy, checked from the host:\n");
			ok &= checks(state, copy);
			c = 'x';
			ok &= check("the state answers after the copy was made",
			            write(cmd[1], &c, 1) == 1 && read(rep[0], &c, 1) == 1 && c == 'x');
		}
		clone_ms[i] = t.clone_ms, maps[i] = t.maps_ms, mounts[i] = t.mounts_ms;
		creds[i] = t.creds_ms, total[i] = t.total_ms;
		kill(copy, SIGKILL);
		waitpid(copy, NULL, __WALL);

		/* A plain fork of the same state, for the floor. */
		double t0 = now_ms();
		pid_t f = fork();
		if (f == 0)
			_exit(0);
		waitpid(f, NULL, 0);
		plain[i] = now_ms() - t0;
	}
	c = 'y';
	ok &= check("the state still answers after every copy",
	            write(cmd[1], &c, 1) == 1 && read(rep[0], &c, 1) == 1 && c == 'y');
	printf("%d copies:\n", n);
	report("seize, clone in namespaces, restore", clone_ms, n);
	report("uid and gid maps", maps, n);
	report("/tmp and /proc mounted", mounts, n);
	report("credentials and descriptors", creds, n);
	report("a whole copy", total, n);
	report("a plain fork+exit of this program", plain, n);
	close(cmd[1]);
	waitpid(state, NULL, 0);
	printf(ok ? "every check held\n" : "A CHECK FAILED\n");
	return ok ? 0 : 1;
}
