/* copy.c - copies of a live session's interpreter (copy.h).
 *
 * Theory of operation (docs/sandbox.md, "Forking a session"). This runs in
 * a helper the supervisor forked for one request, as root, and is the
 * only tracer of the processes it touches:
 *
 *   1. the state is seized and interrupted; it must be stopped in its
 *      read() between cells (else the session is busy), alone with the
 *      session's init and keeper in its cgroup, single-threaded and with
 *      no shared mapping: what a fork shares beyond private memory
 *      (copied on write) is then nothing a copy keeps (descriptors are
 *      replaced below);
 *   2. for each copy, clone(new user, pid, mount, net, IPC, UTS) is run at
 *      the state's own syscall instruction; the filter turns it into a
 *      notification, approved for the state's pid and that call alone;
 *      PTRACE_O_TRACEFORK stops the copy at its birth;
 *   3. every copy, still stopped: its maps, then its cgroups (one burst)
 *      and its mounts (helpers in its mount and pid namespaces), at once;
 *   4. the session's init is stopped for good (the family's holder) and
 *      every other process of it killed, the state among them;
 *   5. each copy: the calls only it can make on itself, injected:
 *      close_range over the state's descriptors, setresgid, setresuid
 *      (during whose notification its channels are added at 0..4),
 *      capset to nothing; then its read() "returns" the frame that makes
 *      the harness a copy's keeper, and it is let go.
 *
 * Failure before step 4: the state gets its registers back (its read()
 * is redone) and goes on. Any failure: every copy made is killed, so a
 * copy with its capabilities (the clone gives it every one in its own
 * user namespace until its capset) never runs; should this helper die,
 * PTRACE_O_EXITKILL kills what it traces.
 */
#include "sandbox/copy.h"
#include "sandbox/copy_int.h"

#include "base/err.h"
#include "base/resource_limits.h"
#include "sandbox/notify.h"

#if defined(__x86_64__)

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NS_FLAGS     (CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
#define SETTLE_TRIES 1000 /* 2 ms apart: for a cell's handover to end, on a loaded host too */

/* The kernel's restart codes (not in the uapi headers). */
enum { RESTARTSYS = 512, RESTARTNOINTR = 513, RESTARTNOHAND = 514, RESTART_RESTARTBLOCK = 516 };

typedef struct user_regs_struct regs_t;

struct copier {
	struct ee_copy_plan *plan;
	pid_t state, init, keeper; /* host pids; keeper 0 when it is the init */
	int sigfd;                 /* SIGCHLD, for the tracees' stops */
	unsigned long site;        /* the state's syscall instruction */
	regs_t saved;              /* the state's registers in its read() */
};

/* ---- ptrace ------------------------------------------------------------ */

static int get_regs(pid_t pid, regs_t *r, struct ee_err *err)
{
	return ptrace(PTRACE_GETREGS, pid, NULL, r) < 0 ? ee_fail_errno(err, EE_ERR_SANDBOX, "fork: GETREGS")
	                                                : 0;
}

static int set_regs(pid_t pid, const regs_t *r, struct ee_err *err)
{
	return ptrace(PTRACE_SETREGS, pid, NULL, r) < 0 ? ee_fail_errno(err, EE_ERR_SANDBOX, "fork: SETREGS")
	                                                : 0;
}

/* The registers that redo the call a stop interrupted, as the kernel
 * would on its way back to user mode (restoring registers at the exit of
 * an injected call stops it from doing so). */
static regs_t restarted(const regs_t *r)
{
	regs_t out = *r;
	long e = -(long)r->rax;
	if ((long)r->orig_rax >= 0 && (e == RESTARTSYS || e == RESTARTNOINTR || e == RESTARTNOHAND)) {
		out.rip -= 2;
		out.rax = r->orig_rax;
	} else if ((long)r->orig_rax >= 0 && e == RESTART_RESTARTBLOCK) {
		out.rip -= 2;
		out.rax = SYS_restart_syscall;
	}
	out.orig_rax = (unsigned long)-1;
	return out;
}

/* A notification, larger than today's struct: a newer kernel's longer one
 * fits. */
union notif {
	struct seccomp_notif n;
	char room[256];
};

/* The next notification into u: 1; 0 when it was withdrawn (its caller
 * died) or interrupted. */
static int receive(int listener, union notif *u, struct ee_err *err)
{
	memset(u, 0, sizeof(*u));
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &u->n) == 0)
		return 1;
	return errno == EINTR || errno == ENOENT ? 0
	                                         : ee_fail_errno(err, EE_ERR_SANDBOX, "fork: notification");
}

/* Lets the notified call go on (the call is one this helper injected). */
static int approve(int listener, __u64 id, struct ee_err *err)
{
	struct seccomp_notif_resp resp;
	memset(&resp, 0, sizeof(resp));
	resp.id = id;
	resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: answer a notification");
	return 0;
}

/* One notification: approved when it is pid's call nr; any other answered
 * as the supervisor answers it (notify.h). *approved counts approvals. */
static int answer_one(int listener, pid_t pid, long nr, int *approved, struct ee_err *err)
{
	union notif u;
	int got = receive(listener, &u, err);
	if (got <= 0)
		return got;
	if ((pid_t)u.n.pid != pid || u.n.data.nr != nr) {
		ee_notify_respond(listener, &u.n, NULL);
		return 0;
	}
	(*approved)++;
	return approve(listener, u.n.id, err);
}

/* Answers notifications for ms (as the supervisor would: the listener is
 * this helper's while it works, and a process of the session or of its
 * family waits on it). */
static void pump(struct copier *c, int ms)
{
	struct pollfd p = { .fd = c->plan->listener, .events = POLLIN };
	int approved = 0;
	struct ee_err ignored;
	while (poll(&p, 1, ms) > 0 && (p.revents & POLLIN)) {
		if (answer_one(c->plan->listener, 0, -1, &approved, &ignored) < 0)
			break;
		ms = 0;
	}
}

/* Waits for a tracee's stop (SIGCHLD, drained: 0) or a notification (1). */
static int wait_event(struct copier *c, struct ee_err *err)
{
	struct pollfd p[2] = { { .fd = c->sigfd, .events = POLLIN },
		               { .fd = c->plan->listener, .events = POLLIN } };
	if (poll(p, 2, 1000) < 0 && errno != EINTR)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: poll");
	if (p[0].revents) {
		char drain[128 * 8];
		(void)!read(c->sigfd, drain, sizeof(drain));
	}
	return (p[1].revents & POLLIN) != 0;
}

/* Waits for pid's next ptrace stop, answering notifications meanwhile
 * (answer_one's rule for call nr; -1: none approved). */
static int wait_stop(struct copier *c, pid_t pid, long nr, int *approved, int *status, struct ee_err *err)
{
	for (;;) {
		pid_t got = waitpid(pid, status, __WALL | WNOHANG);
		if (got == pid) {
			if (!WIFSTOPPED(*status))
				return ee_fail(err, EE_ERR_SANDBOX,
				               "fork: process %d ended while being copied", pid);
			return 0;
		}
		if (got < 0 && errno != EINTR)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: waitpid %d", pid);
		int notified = wait_event(c, err);
		if (notified < 0 || (notified && answer_one(c->plan->listener, pid, nr, approved, err) < 0))
			return -1;
	}
}

static int poke(pid_t pid, unsigned long at, const void *data, size_t n, struct ee_err *err)
{
	struct iovec local = { (void *)data, n }, remote = { (void *)at, n };
	if (process_vm_writev(pid, &local, 1, &remote, 1, 0) != (ssize_t)n)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: write into a copy");
	return 0;
}

/* ---- the session as it is ----------------------------------------------- */

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* pid's number in its innermost pid namespace; 0 when unknown, or a
 * zombie (an old state its parent has not reaped yet: it holds nothing). */
static long ns_pid(pid_t pid)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	const char *st = strstr(buf, "\nState:");
	if (st && st[7 + strspn(st + 7, " \t")] == 'Z')
		return 0;
	char *line = strstr(buf, "\nNSpid:");
	if (!line)
		return 0;
	line += 7;
	char *end = strchr(line, '\n');
	if (end)
		*end = 0;
	char *last = strrchr(line, '\t');
	return strtol(last ? last + 1 : line, NULL, 10);
}

/* The session's processes (its cgroup's), whole: *n of them into pids (at
 * most max). A list that does not fit is an error, never parsed cut (a
 * pid cut short is another process's). */
static int read_procs(const struct copier *c, pid_t *pids, size_t max, size_t *n, struct ee_err *err)
{
	size_t size = max * 12 + 1, len = 0;
	char *buf = malloc(size);
	if (!buf)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	for (ssize_t r; len < size - 1; len += (size_t)r) {
		r = pread(c->plan->procs_fd, buf + len, size - 1 - len, (off_t)len);
		if (r < 0) {
			free(buf);
			return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: the session's processes");
		}
		if (r == 0)
			break;
	}
	buf[len] = 0;
	*n = 0;
	int rc = len == size - 1
	                 ? ee_fail(err, EE_ERR_SANDBOX, "fork: the session's process list does not fit")
	                 : 0;
	for (char *p = buf, *end; *p && !rc; p = end) {
		pid_t pid = (pid_t)strtol(p, &end, 10);
		if (end == p)
			break;
		if (*n == max || *end != '\n')
			rc = ee_fail(err, EE_ERR_SANDBOX, "fork: the session's process list does not fit");
		else
			pids[(*n)++] = pid;
		end += *end == '\n';
	}
	free(buf);
	return rc;
}

/* Room for a session's processes and the copies born among them. */
#define PROCS_ROOM (EE_PROCS_MAX + EE_COPY_MAX + 64)

/* The init, keeper and state among the cgroup's processes. */
static int find_processes(struct copier *c, struct ee_err *err)
{
	static pid_t pids[PROCS_ROOM];
	size_t count;
	if (read_procs(c, pids, PROCS_ROOM, &count, err) < 0)
		return -1;
	int others = 0;
	long extra = 0;
	for (size_t i = 0; i < count; i++) {
		pid_t pid = pids[i];
		long in = ns_pid(pid);
		if (in == 1)
			c->init = pid;
		else if (in == 2 && !c->plan->keeper_is_init)
			c->keeper = pid;
		else if (in > 0 && others++ == 0)
			c->state = pid;
		else if (in > 0)
			extra = in;
	}
	if (others > 1)
		return ee_fail(
		        err, EE_ERR_USAGE,
		        "the session runs processes besides its interpreter (%d, its pid %ld among them): "
		        "a copy would share them; end them before forking",
		        others - 1, extra);
	if (!c->init || !c->state || (!c->plan->keeper_is_init && !c->keeper))
		return ee_fail(err, EE_ERR_SANDBOX, "fork: the session's processes are not as a session's");
	return 0;
}

/* Refused unless a fork shares nothing but private memory: one thread, no
 * shared mapping (MAP_SHARED, SysV or POSIX shared memory). */
static int check_state(pid_t state, struct ee_err *err)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%d/status", state);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: %s", path);
	const char *t = strstr(buf, "\nThreads:");
	if (!t || strtol(t + 9, NULL, 10) != 1)
		return ee_fail(
		        err, EE_ERR_USAGE,
		        "the session's interpreter runs threads (%ld): CPython's threads do not survive a "
		        "fork; end them before forking",
		        t ? strtol(t + 9, NULL, 10) : -1L);
	snprintf(path, sizeof(path), "/proc/%d/maps", state);
	FILE *f = fopen(path, "re");
	if (!f)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: %s", path);
	char line[512];
	int shared = 0;
	while (!shared && fgets(line, sizeof(line), f)) {
		char perms[8] = "";
		const char *file = strchr(line, '/');
		/* A read-only mapping of a file under /usr (a read-only bind in
		 * every sandbox, glibc maps its gconv cache so) has no writer:
		 * not a channel. Any other shared one is. */
		int ro_usr = file && strncmp(file, "/usr/", 5) == 0;
		if (sscanf(line, "%*s %7s", perms) == 1 && perms[3] == 's' && (perms[1] == 'w' || !ro_usr)) {
			shared = 1;
			line[strcspn(line, "\n")] = 0;
		}
	}
	fclose(f);
	if (shared)
		return ee_fail(
		        err, EE_ERR_USAGE,
		        "the session holds a shared memory mapping, which its copies would share: %.120s",
		        line);
	return 0;
}

/* Seized and stopped in its read() between cells, its registers saved. */
static int stop_state(struct copier *c, struct ee_err *err)
{
	int status, approved = 0;
	/* EXITKILL, which its copies inherit: should this helper die (a crash,
	 * its alarm), a copy still being set up dies too, never let go. */
	if (ptrace(PTRACE_SEIZE, c->state, NULL, (void *)(long)(PTRACE_O_TRACEFORK | PTRACE_O_EXITKILL)) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: PTRACE_SEIZE");
	if (ptrace(PTRACE_INTERRUPT, c->state, NULL, NULL) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: PTRACE_INTERRUPT");
	if (wait_stop(c, c->state, -1, &approved, &status, err) < 0 || get_regs(c->state, &c->saved, err) < 0)
		return -1;
	long insn = ptrace(PTRACE_PEEKTEXT, c->state, (void *)(c->saved.rip - 2), NULL);
	/* Its read of the keeper's pipe (_Frames.fill: 64 KiB at a time), not
	 * the one a cell that answered makes while the old state goes. */
	if (c->saved.orig_rax != SYS_read || c->saved.rdx != 1 << 16 || (insn & 0xffff) != 0x050f)
		return ee_fail(err, EE_ERR_USAGE,
		               "the session's interpreter is not waiting for a cell: try again");
	c->site = c->saved.rip - 2;
	return 0;
}

static void let_state_go(struct copier *c)
{
	regs_t back = restarted(&c->saved);
	struct ee_err ignored;
	if (set_regs(c->state, &back, &ignored) == 0)
		ptrace(PTRACE_DETACH, c->state, NULL, NULL);
}

/* The session between cells, its state stopped in its read: right after
 * a cell answered, the old state is still on its way out and the new one
 * not yet in its read, so this looks again, 2 ms apart, for a while. */
static int settle(struct copier *c, int *stopped, struct ee_err *err)
{
	for (int tries = 0;; tries++) {
		pid_t seized = 0;
		c->state = c->init = c->keeper = 0;
		int rc = find_processes(c, err);
		if (rc == 0)
			rc = check_state(c->state, err);
		if (rc == 0) {
			seized = c->state;
			rc = stop_state(c, err);
		}
		if (rc == 0) { /* stopped: the same state, alone, and nothing changes now */
			rc = find_processes(c, err);
			if (rc == 0 && c->state != seized)
				rc = ee_fail(err, EE_ERR_USAGE,
				             "the session's interpreter changed: try again");
			if (rc == 0)
				rc = check_state(seized, err);
			c->state = seized;
		}
		if (rc == 0) {
			*stopped = 1;
			return 0;
		}
		if (seized) {
			c->state = seized;
			let_state_go(c);
		}
		if (err->code != EE_ERR_USAGE || tries >= SETTLE_TRIES)
			return -1;
		pump(c, 2);
	}
}

/* ---- one copy ------------------------------------------------------------ */

/* A copy born of a clone injected into the stopped state: *ret, stopped. */
static int clone_state(struct copier *c, pid_t *ret, struct ee_err *err)
{
	regs_t r = c->saved;
	int status, approved = 0;
	r.rip = c->site;
	r.rax = SYS_clone;
	r.orig_rax = (unsigned long)-1;
	r.rdi = NS_FLAGS | SIGCHLD;
	r.rsi = r.rdx = r.r10 = r.r8 = 0;
	if (set_regs(c->state, &r, err) < 0)
		return -1;
	/* Its entry, then the copy's birth, or the call's exit when it failed. */
	if (ptrace(PTRACE_SYSCALL, c->state, NULL, NULL) < 0 ||
	    wait_stop(c, c->state, -1, &approved, &status, err) < 0)
		return err->msg[0] ? -1 : ee_fail_errno(err, EE_ERR_SANDBOX, "fork: PTRACE_SYSCALL");
	if (ptrace(PTRACE_SYSCALL, c->state, NULL, NULL) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: PTRACE_SYSCALL");
	if (wait_stop(c, c->state, SYS_clone, &approved, &status, err) < 0)
		return -1;
	if (status >> 8 != (SIGTRAP | (PTRACE_EVENT_FORK << 8))) {
		long rc = get_regs(c->state, &r, err) < 0 ? 0 : (long)r.rax;
		if (rc == -ENOSPC || rc == -EUSERS)
			return ee_fail(
			        err, EE_ERR_USAGE,
			        "the session is a copy of a copy too many times: the kernel nests at most 32 "
			        "pid and user namespaces; fork a session fewer forks away from its start");
		return ee_fail(err, EE_ERR_SANDBOX, "fork: the clone into new namespaces failed: %s",
		               rc < 0 ? strerror((int)-rc) : "no copy");
	}
	unsigned long msg;
	if (ptrace(PTRACE_GETEVENTMSG, c->state, NULL, &msg) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: GETEVENTMSG");
	*ret = (pid_t)msg;
	if (wait_stop(c, *ret, -1, &approved, &status, err) < 0) /* born stopped */
		return -1;
	/* The state finishes its clone and stops again, to be given its
	 * registers back or cloned again. */
	if (ptrace(PTRACE_SYSCALL, c->state, NULL, NULL) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: PTRACE_SYSCALL");
	return wait_stop(c, c->state, -1, &approved, &status, err);
}

/* The calls only a copy can make on itself, injected (close_range over
 * every descriptor first: setresuid then places its channels at 0..4, by
 * ADDFD during its notification), then its frame, and it goes. All copies
 * at once, each a step ahead as its stops come: copy by copy, their eight
 * stops and three notifications each were mostly waiting. */
enum { CALLS = 4 };

struct finishing {
	pid_t pid;
	const struct ee_copy_target *t;
	long args[CALLS][3];
	int call;     /* the call it is in, CALLS: done */
	int entered;  /* its call's entry stop came: its exit is next */
	int approved; /* its call's notification was approved (setresuid's placed its channels) */
};

static const long call_nr[CALLS] = { SYS_close_range, SYS_setresgid, SYS_setresuid, SYS_capset };

/* Its next call set up at the syscall instruction and let run to its entry. */
static int start_call(struct copier *c, struct finishing *f, struct ee_err *err)
{
	regs_t r;
	if (get_regs(f->pid, &r, err) < 0)
		return -1;
	r.rip = c->site;
	r.rax = (unsigned long)call_nr[f->call];
	r.orig_rax = (unsigned long)-1;
	r.rdi = (unsigned long)f->args[f->call][0], r.rsi = (unsigned long)f->args[f->call][1];
	r.rdx = (unsigned long)f->args[f->call][2];
	r.r10 = r.r8 = r.r9 = 0;
	f->entered = f->approved = 0;
	if (set_regs(f->pid, &r, err) < 0 || ptrace(PTRACE_SYSCALL, f->pid, NULL, NULL) < 0)
		return err->msg[0] ? -1 : ee_fail_errno(err, EE_ERR_SANDBOX, "fork: PTRACE_SYSCALL");
	return 0;
}

/* The frame its read() returns, its registers, and it goes. */
static int let_copy_go(struct copier *c, struct finishing *f, struct ee_err *err)
{
	if (f->t->frame_len > c->saved.rdx)
		return ee_fail(err, EE_ERR_SANDBOX, "fork: the copy's frame is longer than the state's read");
	if (poke(f->pid, c->saved.rsi, f->t->frame, f->t->frame_len, err) < 0)
		return -1;
	regs_t r = c->saved;
	r.rax = f->t->frame_len;
	r.orig_rax = (unsigned long)-1;
	if (set_regs(f->pid, &r, err) < 0)
		return -1;
	if (ptrace(PTRACE_DETACH, f->pid, NULL, NULL) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: let a copy go");
	f->call = CALLS;
	return 0;
}

/* One of its stops: an entry (let it on to the call, which the filter may
 * notify), or an exit (the call's result; the next call, or the end). */
static int on_stop(struct copier *c, struct finishing *f, struct ee_err *err)
{
	if (!f->entered) {
		f->entered = 1;
		return ptrace(PTRACE_SYSCALL, f->pid, NULL, NULL) < 0
		               ? ee_fail_errno(err, EE_ERR_SANDBOX, "fork: PTRACE_SYSCALL")
		               : 0;
	}
	regs_t r;
	if (get_regs(f->pid, &r, err) < 0)
		return -1;
	if ((long)r.rax != 0)
		return ee_fail(err, EE_ERR_SANDBOX, "fork: a call made in a copy failed (%ld)", (long)r.rax);
	if (call_nr[f->call] == SYS_setresuid && !f->approved)
		return ee_fail(err, EE_ERR_SANDBOX, "fork: the copy's channels were not placed");
	if (++f->call == CALLS)
		return let_copy_go(c, f, err);
	return start_call(c, f, err);
}

static struct finishing *finishing_of(struct finishing *fs, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (fs[i].pid == pid && fs[i].call < CALLS)
			return &fs[i];
	return NULL;
}

/* A notification: approved when it is a copy's own injected call, in it
 * (setresuid's with its channels added); anyone else's as the supervisor
 * answers it. */
static int on_notification(struct copier *c, struct finishing *fs, size_t n, struct ee_err *err)
{
	union notif u;
	int got = receive(c->plan->listener, &u, err);
	if (got <= 0)
		return got;
	struct finishing *f = finishing_of(fs, n, (pid_t)u.n.pid);
	if (!f || !f->entered || u.n.data.nr != call_nr[f->call]) {
		ee_notify_respond(c->plan->listener, &u.n, NULL);
		return 0;
	}
	if (call_nr[f->call] == SYS_setresuid)
		for (int i = 0; i < EE_COPY_FDS; i++) {
			struct seccomp_notif_addfd a = { .id = u.n.id,
				                         .flags = SECCOMP_ADDFD_FLAG_SETFD,
				                         .srcfd = (unsigned)f->t->fds[i],
				                         .newfd = (unsigned)i };
			if (ioctl(c->plan->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a) != i)
				return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: a copy's channel");
		}
	f->approved = 1;
	return approve(c->plan->listener, u.n.id, err);
}

static int finish_all(struct copier *c, struct finishing *fs, size_t n, struct ee_err *err)
{
	size_t left = n;
	for (size_t i = 0; i < n; i++) {
		struct finishing *f = &fs[i];
		const struct ee_copy_target *t = &c->plan->copies[i];
		regs_t cr;
		if (get_regs(t->pid, &cr, err) < 0)
			return -1;
		/* capset's two structs, on its stack below the red zone */
		struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct none[2];
		memset(none, 0, sizeof(none));
		unsigned long at = (cr.rsp - 512) & ~15UL;
		if (poke(t->pid, at, &hdr, sizeof(hdr), err) < 0 ||
		    poke(t->pid, at + 64, none, sizeof(none), err) < 0)
			return -1;
		long id = (long)t->uid;
		const long args[CALLS][3] = {
			{ 0, (long)~0U, 0 }, { id, id, id }, { id, id, id }, { (long)at, (long)(at + 64), 0 }
		};
		*f = (struct finishing){ .pid = t->pid, .t = t };
		memcpy(f->args, args, sizeof(args));
		if (start_call(c, f, err) < 0)
			return -1;
	}
	while (left > 0) {
		pid_t got;
		int status;
		while ((got = waitpid(-1, &status, __WALL | WNOHANG)) > 0) {
			struct finishing *f = finishing_of(fs, n, got);
			if (!f)
				continue; /* the state's end, say */
			if (!WIFSTOPPED(status))
				return ee_fail(err, EE_ERR_SANDBOX, "fork: a copy ended while being set up");
			if (on_stop(c, f, err) < 0)
				return -1;
			left -= f->call == CALLS;
		}
		if (!left)
			break;
		int notified = wait_event(c, err);
		if (notified < 0 || (notified && on_notification(c, fs, n, err) < 0))
			return -1;
	}
	return 0;
}

/* Before any copy runs: the session's init stopped for good (the family's
 * holder) and every other process of its cgroup killed, the keeper and the
 * state among them, and whatever a copy's keeper (the agent's) forked
 * meanwhile: none of the agent's may run in a namespace above a copy's.
 * The init stopped, no new one comes but from those being killed. */
static int end_session(struct copier *c)
{
	kill(c->init, SIGSTOP);
	for (int round = 0; round < 500; round++) {
		static pid_t pids[PROCS_ROOM];
		size_t count;
		struct ee_err ignored;
		if (read_procs(c, pids, PROCS_ROOM, &count, &ignored) < 0)
			return -1;
		int left = 0;
		for (size_t i = 0; i < count; i++)
			if (pids[i] != c->init && ns_pid(pids[i]) != 0) { /* 0: a zombie, or gone */
				kill(pids[i], SIGKILL);
				left++;
			}
		if (!left)
			return 0;
		pump(c, 1);
	}
	return -1;
}

static int sigchld_fd(struct ee_err *err)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: sigprocmask");
	int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? ee_fail_errno(err, EE_ERR_SANDBOX, "fork: signalfd") : fd;
}

int ee_copy_make(struct ee_copy_plan *plan, struct ee_err *err)
{
	struct copier c = { .plan = plan };
	size_t made = 0;
	int stopped = 0;
	c.sigfd = sigchld_fd(err);
	if (c.sigfd < 0)
		return -1;
	if (settle(&c, &stopped, err) < 0)
		goto fail;
	if (plan->n > EE_COPY_MAX) {
		ee_fail(err, EE_ERR_USAGE, "a fork makes at most %d copies", EE_COPY_MAX);
		goto fail;
	}
	long pids_max = copy_raise_pids(plan);
	for (; made < plan->n; made++) {
		struct ee_copy_target *t = &plan->copies[made];
		if (clone_state(&c, &t->pid, err) < 0 || copy_write_maps(c.state, t->pid, t, err) < 0) {
			made += t->pid > 0;
			copy_restore_pids(plan, pids_max);
			goto fail;
		}
	}
	int rc = copy_setup_all(plan, made, err);
	copy_restore_pids(plan, pids_max);
	if (rc < 0)
		goto fail;
	/* Every copy is made: the session's own processes go before any copy
	 * runs (its init, the family's holder, stopped; every other killed). */
	if (end_session(&c) < 0) {
		ee_fail(err, EE_ERR_SANDBOX, "fork: the session's processes would not end");
		for (size_t k = 0; k < plan->n; k++)
			kill(plan->copies[k].pid, SIGKILL);
		close(c.sigfd);
		plan->session_gone = 1;
		return -1;
	}
	struct finishing *fs = calloc(plan->n, sizeof(*fs));
	if (!fs || finish_all(&c, fs, plan->n, err) < 0) {
		if (!fs)
			ee_fail(err, EE_ERR_SANDBOX, "out of memory");
		free(fs);
		for (size_t k = 0; k < plan->n; k++)
			kill(plan->copies[k].pid, SIGKILL);
		close(c.sigfd);
		plan->session_gone = 1; /* the caller ends it */
		return -1;
	}
	free(fs);
	close(c.sigfd);
	return 0;
fail:
	for (size_t k = 0; k < made; k++) {
		kill(plan->copies[k].pid, SIGKILL);
		plan->copies[k].pid = 0;
	}
	if (stopped)
		let_state_go(&c);
	close(c.sigfd);
	return -1;
}

#else /* not x86-64 */

int ee_copy_make(struct ee_copy_plan *plan, struct ee_err *err)
{
	(void)plan;
	return ee_fail(err, EE_ERR_USAGE, "forking a session is made for x86-64 only");
}

#endif
