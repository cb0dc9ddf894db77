/* seccomp.c - compiling and loading the allow-list (see seccomp.h).
 *
 * The list is the union of what CPython needs for plain code, typical test
 * code, threads/subprocess/multiprocessing and numpy (found by tracing each),
 * plus the usual file, time, signal and pipe calls.
 * Left out on purpose: network sockets (only AF_UNIX), ptrace,
 * process_vm_*, io_uring, userfaultfd, bpf, perf_event_open, the key-ring
 * calls, mount and friends, unshare/setns, chroot, personality, keyctl,
 * init_module, kexec, reboot, swapon, setuid-family (credentials are
 * final), chown, mknod, TIOCSTI and every ioctl but a few terminal queries.
 *
 * Channels between sandboxes through state they share (docs/threat-model.md,
 * "Channels through shared files"): a page of a read-only /usr file is one
 * bit in the host's page cache, so nothing may evict one (fadvise DONTNEED,
 * madvise COLD/PAGEOUT), warm one without reading it (fadvise WILLNEED,
 * readahead) or test residency without timing it (preadv2 RWF_NOWAIT,
 * mincore, cachestat); and a lock on such a file, or on a /dev node, is
 * seen by every other sandbox, so flock and the fcntl record locks fail
 * with ENOLCK (seccomp sees no path: /tmp files cannot be told apart).
 */
#include "sandbox/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "base/err.h"
#include "sandbox/write_watch.h"

/* clang-format off: grouped by purpose, several to a line */
const char *const ee_seccomp_allowed[] = {
	/* files and descriptors */
	"read",
	"write",
	"readv",
	"writev",
	"pread64",
	"pwrite64",
	"preadv",
	"pwritev",
	"open",
	"openat",
	"creat",
	"close",
	"close_range",
	"lseek",
	"stat",
	"fstat",
	"lstat",
	"newfstatat",
	"statx",
	"statfs",
	"fstatfs",
	"access",
	"faccessat",
	"faccessat2",
	"readlink",
	"readlinkat",
	"getdents",
	"getdents64",
	"fsync",
	"fdatasync",
	"truncate",
	"ftruncate",
	"fallocate",
	"dup",
	"dup2",
	"dup3",
	"pipe",
	"pipe2",
	"sendfile",
	"copy_file_range",
	"splice",
	"tee",
	"getcwd",
	"chdir",
	"fchdir",
	"rename",
	"renameat",
	"renameat2",
	"mkdir",
	"mkdirat",
	"rmdir",
	"link",
	"linkat",
	"unlink",
	"unlinkat",
	"symlink",
	"symlinkat",
	"chmod",
	"fchmod",
	"fchmodat",
	"umask",
	"utime",
	"utimes",
	"utimensat",
	"futimesat",
	"eventfd",
	"eventfd2",
	/* memory */
	"brk",
	"mmap",
	"munmap",
	"mremap",
	"mprotect",
	"msync",
	"get_mempolicy",
	"membarrier",
	/* waiting and time */
	"select",
	"pselect6",
	"poll",
	"ppoll",
	"epoll_create",
	"epoll_create1",
	"epoll_ctl",
	"epoll_wait",
	"epoll_pwait",
	"epoll_pwait2",
	"nanosleep",
	"clock_nanosleep",
	"clock_gettime",
	"clock_getres",
	"gettimeofday",
	"time",
	"getitimer",
	"setitimer",
	"alarm",
	"timerfd_create",
	"timerfd_settime",
	"timerfd_gettime",
	"pause",
	/* signals */
	"rt_sigaction",
	"rt_sigprocmask",
	"rt_sigreturn",
	"rt_sigpending",
	"rt_sigtimedwait",
	"rt_sigsuspend",
	"rt_sigqueueinfo",
	"sigaltstack",
	"signalfd",
	"signalfd4",
	"kill",
	"tgkill",
	"tkill",
	"restart_syscall",
	/* processes and threads (clone is allowed below, without namespace flags) */
	"fork",
	"vfork",
	"execve",
	"execveat",
	"exit",
	"exit_group",
	"wait4",
	"waitid",
	"futex",
	"set_robust_list",
	"get_robust_list",
	"set_tid_address",
	"rseq",
	"arch_prctl",
	"sched_yield",
	"sched_getaffinity",
	"sched_setaffinity",
	"sched_getparam",
	"sched_getscheduler",
	"sched_get_priority_max",
	"sched_get_priority_min",
	"sched_getattr",
	"getcpu",
	"getpriority",
	"setpriority",
	/* identity and limits (read, or lower only: raising needs a capability) */
	"getpid",
	"getppid",
	"gettid",
	"getuid",
	"geteuid",
	"getgid",
	"getegid",
	"getgroups",
	"getresuid",
	"getresgid",
	"getpgrp",
	"getpgid",
	"getsid",
	"setsid",
	"setpgid",
	"capget",
	"getrlimit",
	"setrlimit",
	"prlimit64",
	"getrusage",
	"times",
	"sysinfo",
	"uname",
	"getrandom",
	/* AF_UNIX sockets inside the sandbox (socket/socketpair checked below) */
	"connect",
	"bind",
	"listen",
	"accept",
	"accept4",
	"sendto",
	"recvfrom",
	"sendmsg",
	"recvmsg",
	"sendmmsg",
	"recvmmsg",
	"shutdown",
	"getsockname",
	"getpeername",
	"setsockopt",
	"getsockopt",
	NULL,
};
/* clang-format on */

/* ioctl requests an honest program makes (isatty, terminal size, CLOEXEC). */
static const unsigned long allowed_ioctls[] = { TCGETS, TIOCGWINSZ, FIOCLEX, FIONCLEX, FIONREAD, FIONBIO };

/* prctl options that change nothing of the sandbox's security. */
static const int allowed_prctls[] = {
	PR_SET_NAME,      PR_GET_NAME,     PR_GET_DUMPABLE, PR_SET_PDEATHSIG,
	PR_GET_PDEATHSIG, PR_CAPBSET_READ, PR_GET_SECCOMP,  PR_GET_NO_NEW_PRIVS
};

#define NS_FLAGS                                                                                             \
	((scmp_datum_t)(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |           \
	                CLONE_NEWNET | CLONE_NEWCGROUP | 0x80 /* CLONE_NEWTIME */))

#define LOW32 0xffffffffULL

/* fcntl commands an honest program uses; lock commands fail with ENOLCK
 * (below), leases, F_NOTIFY and anything newer with EPERM. */
static const unsigned allowed_fcntls[] = {
	F_DUPFD,      F_GETFD,      F_SETFD,     F_GETFL,     F_SETFL,     F_GETOWN,
	F_SETOWN,     F_GETSIG,     F_SETSIG,    F_GETOWN_EX, F_SETOWN_EX, F_DUPFD_CLOEXEC,
	F_SETPIPE_SZ, F_GETPIPE_SZ, F_ADD_SEALS, F_GET_SEALS,
};

/* Record locks (F_*LK64 are the same numbers on 64-bit): a lock on a file
 * every sandbox opens (/usr, /dev/null) is a bit the next one can test.
 * ENOLCK is what a filesystem without locks answers. */
static const unsigned lock_fcntls[] = { F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW };

/* fadvise advice that changes nothing outside this file description;
 * DONTNEED evicts shared pages, WILLNEED loads them, NOREUSE is a no-op. */
static const unsigned allowed_fadvice[] = { POSIX_FADV_NORMAL, POSIX_FADV_RANDOM, POSIX_FADV_SEQUENTIAL };

/* madvise advice, an allow-list so a new value is refused until judged.
 * Left out: MADV_COLD and MADV_PAGEOUT (age or evict file pages other
 * sandboxes share), MADV_MERGEABLE (KSM merges identical pages across
 * sandboxes: a copy-on-write timing channel), MADV_HWPOISON and
 * MADV_SOFT_OFFLINE (privileged). */
static const unsigned allowed_madvice[] = {
	MADV_NORMAL,
	MADV_RANDOM,
	MADV_SEQUENTIAL,
	MADV_WILLNEED,
	MADV_DONTNEED,
	MADV_FREE,
	MADV_REMOVE,
	MADV_DONTFORK,
	MADV_DOFORK,
	MADV_UNMERGEABLE,
	MADV_HUGEPAGE,
	MADV_NOHUGEPAGE,
	MADV_DONTDUMP,
	MADV_DODUMP,
	MADV_WIPEONFORK,
	MADV_KEEPONFORK,
	22 /* POPULATE_READ */,
	23 /* POPULATE_WRITE */,
	24 /* DONTNEED_LOCKED */,
	25 /* COLLAPSE */,
	102 /* GUARD_INSTALL */,
	103 /* GUARD_REMOVE */,
};

/* One argument-checked rule: name(... args[arg] == value (low 32 bits) ...). */
struct arg_rule {
	const char *name;
	unsigned arg;
	const unsigned *values;
	size_t n;
	int deny_errno; /* 0: allow */
};

#define VALUES(a) a, sizeof(a) / sizeof(a[0])

/* preadv2/pwritev2 only with flags 0 (argument 5, an int): RWF_NOWAIT
 * answers EAGAIN for an uncached page, a residency test of shared files. */
static const unsigned zero[] = { 0 };

static const struct arg_rule arg_rules[] = {
	{ "fcntl", 1, VALUES(allowed_fcntls), 0 },
	{ "fcntl", 1, VALUES(lock_fcntls), ENOLCK },
	{ "fadvise64", 3, VALUES(allowed_fadvice), 0 },
	{ "madvise", 2, VALUES(allowed_madvice), 0 },
	{ "preadv2", 5, VALUES(zero), 0 },
	{ "pwritev2", 5, VALUES(zero), 0 },
};

static int rule_as(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n,
                   const struct scmp_arg_cmp *cmp, struct ee_err *err)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return 0; /* not on this architecture (e.g. "open" elsewhere): nothing to allow */
	int rc = seccomp_rule_add_array(ctx, action, nr, n, cmp);
	if (rc < 0)
		return ee_fail(err, EE_ERR_SANDBOX, "seccomp: cannot add a rule for %s: %s", name,
		               strerror(-rc));
	return 0;
}

static int rule(scmp_filter_ctx ctx, const char *name, unsigned n, const struct scmp_arg_cmp *cmp,
                struct ee_err *err)
{
	return rule_as(ctx, SCMP_ACT_ALLOW, name, n, cmp, err);
}

static int add_arg_rules(scmp_filter_ctx ctx, struct ee_err *err)
{
	for (size_t i = 0; i < sizeof(arg_rules) / sizeof(arg_rules[0]); i++) {
		const struct arg_rule *r = &arg_rules[i];
		uint32_t action = r->deny_errno ? SCMP_ACT_ERRNO((uint32_t)r->deny_errno) : SCMP_ACT_ALLOW;
		for (size_t j = 0; j < r->n; j++) {
			struct scmp_arg_cmp c = { r->arg, SCMP_CMP_MASKED_EQ, LOW32, r->values[j] };
			if (rule_as(ctx, action, r->name, 1, &c, err) < 0)
				return -1;
		}
	}
	return rule_as(ctx, SCMP_ACT_ERRNO(ENOLCK), "flock", 0, NULL, err);
}

/* Under EE_SECCOMP_WATCH_WRITES: is name a call that writes the file
 * system by path (write_watch.c's table, the one the supervisor reads the
 * paths by)? Then it is left to the default action, the supervisor's
 * notification, which lets it continue. Calls on a descriptor (fchmod,
 * ftruncate) are not: their file was opened for writing, and that was
 * seen. */
static int watched(unsigned flags, const char *name)
{
	return (flags & EE_SECCOMP_WATCH_WRITES) && ee_write_call_find(name) != NULL;
}

/* open and openat that only read stay in the filter; with any of these
 * flags they are notified (O_TMPFILE carries O_RDWR or O_WRONLY). */
#define WRITE_FLAGS ((scmp_datum_t)(O_WRONLY | O_RDWR | O_CREAT | O_TRUNC))

static int add_read_only_opens(scmp_filter_ctx ctx, struct ee_err *err)
{
	struct scmp_arg_cmp open_ro = SCMP_A1(SCMP_CMP_MASKED_EQ, WRITE_FLAGS, 0);
	struct scmp_arg_cmp openat_ro = SCMP_A2(SCMP_CMP_MASKED_EQ, WRITE_FLAGS, 0);
	if (rule(ctx, "open", 1, &open_ro, err) < 0 || rule(ctx, "openat", 1, &openat_ro, err) < 0)
		return -1;
	return 0;
}

static int add_rules(scmp_filter_ctx ctx, unsigned flags, struct ee_err *err)
{
	for (size_t i = 0; ee_seccomp_allowed[i]; i++)
		if (!watched(flags, ee_seccomp_allowed[i]) &&
		    rule(ctx, ee_seccomp_allowed[i], 0, NULL, err) < 0)
			return -1;
	if ((flags & EE_SECCOMP_WATCH_WRITES) && add_read_only_opens(ctx, err) < 0)
		return -1;
	if (!(flags & EE_SECCOMP_NO_MEMFD) && rule(ctx, "memfd_create", 0, NULL, err) < 0)
		return -1;
	if (add_arg_rules(ctx, err) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(allowed_ioctls) / sizeof(allowed_ioctls[0]); i++) {
		struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32, allowed_ioctls[i]);
		if (rule(ctx, "ioctl", 1, &c, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < sizeof(allowed_prctls) / sizeof(allowed_prctls[0]); i++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, (scmp_datum_t)allowed_prctls[i]);
		if (rule(ctx, "prctl", 1, &c, err) < 0)
			return -1;
	}
	struct scmp_arg_cmp unix_only = SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, AF_UNIX);
	if (rule(ctx, "socket", 1, &unix_only, err) < 0 || rule(ctx, "socketpair", 1, &unix_only, err) < 0)
		return -1;
	struct scmp_arg_cmp no_ns = SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS, 0);
	if (rule(ctx, "clone", 1, &no_ns, err) < 0)
		return -1;
	int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), seccomp_syscall_resolve_name("clone3"), 0);
	if (rc < 0)
		return ee_fail(err, EE_ERR_SANDBOX, "seccomp: clone3 rule: %s", strerror(-rc));
	return 0;
}

/* libseccomp 2.5 exports BPF only to a file descriptor: go through a memfd. */
static int export(scmp_filter_ctx ctx, struct ee_seccomp_prog *ret, struct ee_err *err)
{
	int fd = memfd_create("execeval-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "seccomp: memfd_create");
	int rc = seccomp_export_bpf(ctx, fd);
	struct stat st;
	if (rc < 0 || fstat(fd, &st) < 0 || st.st_size <= 0 ||
	    st.st_size % (off_t)sizeof(struct sock_filter) != 0 ||
	    st.st_size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
		close(fd);
		return ee_fail(err, EE_ERR_SANDBOX, "seccomp: cannot export the filter");
	}
	ret->filter = malloc((size_t)st.st_size);
	ret->len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
	if (!ret->filter || pread(fd, ret->filter, (size_t)st.st_size, 0) != st.st_size) {
		close(fd);
		ee_seccomp_free(ret);
		return ee_fail(err, EE_ERR_SANDBOX, "seccomp: cannot read the exported filter");
	}
	close(fd);
	return 0;
}

int ee_seccomp_compile(unsigned flags, struct ee_seccomp_prog *ret, struct ee_err *err)
{
	memset(ret, 0, sizeof(*ret));
	/* NOTIFY: the same EPERM, answered by the supervisor, which counts it
	 * (notify.h); only refused calls take that path. */
	if ((flags & EE_SECCOMP_WATCH_WRITES) && !(flags & EE_SECCOMP_NOTIFY))
		return ee_fail(err, EE_ERR_SANDBOX, "seccomp: watching writes needs the notifying filter");
	scmp_filter_ctx ctx =
	        seccomp_init(flags & EE_SECCOMP_NOTIFY ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EPERM));
	if (!ctx)
		return ee_fail(err, EE_ERR_SANDBOX, "seccomp: seccomp_init failed");
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0); /* the sandbox sets no_new_privs itself */
	/* A binary tree over syscall numbers rather than a chain of ~190
	 * compares: cheaper per call, and per load, where the kernel runs the
	 * filter once for every syscall number to build its allow cache. */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0) {
		seccomp_release(ctx);
		return ee_fail(err, EE_ERR_SANDBOX, "seccomp: attributes: %s", strerror(-rc));
	}
	rc = add_rules(ctx, flags, err);
	if (rc == 0)
		rc = export(ctx, ret, err);
	seccomp_release(ctx);
	return rc;
}

void ee_seccomp_free(struct ee_seccomp_prog *p)
{
	if (!p)
		return;
	free(p->filter);
	p->filter = NULL;
	p->len = 0;
}

/* Does the filter answer anything by user notification? Then it needs a
 * listener (without one the kernel answers ENOSYS). Read from the program
 * itself, as a warm worker receives only its instructions. */
static int wants_listener(const struct ee_seccomp_prog *p)
{
	for (unsigned i = 0; i < p->len; i++)
		if (p->filter[i].code == (BPF_RET | BPF_K) &&
		    (p->filter[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF)
			return 1;
	return 0;
}

int ee_seccomp_load(const struct ee_seccomp_prog *p, int *listener, struct ee_err *err)
{
	struct sock_fprog prog = { .len = p->len, .filter = p->filter };
	if (listener)
		*listener = -1;
	if (listener && wants_listener(p)) {
		long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
		                  &prog);
		if (fd < 0)
			return ee_fail_errno(err, EE_ERR_SANDBOX,
			                     "seccomp: cannot load the filter with a listener");
		*listener = (int)fd;
		return 0;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "seccomp: cannot load the filter");
	return 0;
}

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "the warm init's filter needs this architecture's AUDIT_ARCH"
#endif

/* An x32 call (nr | 0x40000000 on x86-64) matches none of the numbers:
 * EPERM. */
const struct sock_filter ee_seccomp_warm_init[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 4, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close, 3, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_wait4, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
const unsigned short ee_seccomp_warm_init_len =
        sizeof(ee_seccomp_warm_init) / sizeof(ee_seccomp_warm_init[0]);
