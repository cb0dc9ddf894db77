/* test_seccomp.c - the seccomp allow-list, as data and as the kernel
 * enforces it. Probes are side-effect free: a refused call fails
 * with EPERM/ENOSYS, the same call allowed would fail with EBADF/EINVAL/EFAULT
 * on its bad arguments. They run in a forked child, so the filter never
 * touches the test runner. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "base/err.h"
#include "sandbox/seccomp.h"

#define P(...) ((long)syscall(__VA_ARGS__))

/* Each probe returns the errno of a call, 0 if it succeeded. */
struct probe {
	const char *name;
	int expect; /* errno wanted under the filter (0: success) */
};

static int run_probe(int i)
{
	long rc = -1;
	errno = 0;
	switch (i) {
	case 0: rc = P(SYS_read, -1, NULL, 0); break; /* allowed */
	case 1: rc = P(SYS_ptrace, 2 /* PEEKDATA */, 1, NULL, NULL); break;
	case 2: rc = P(SYS_io_uring_setup, 0, NULL); break;
	case 3: rc = P(SYS_bpf, -1, NULL, 0); break;
	case 4: rc = P(SYS_perf_event_open, NULL, 0, -1, -1, 0); break;
	case 5: rc = P(SYS_userfaultfd, -1); break;
	case 6: rc = P(SYS_keyctl, -1, 0, 0, 0, 0); break;
	case 7: rc = P(SYS_process_vm_readv, 1, NULL, 0, NULL, 0, 0); break;
	case 8: rc = P(SYS_setns, -1, 0); break;
	case 9: rc = P(SYS_unshare, 0x1 /* invalid flag */); break;
	case 10: rc = P(SYS_mount, NULL, NULL, NULL, 0, NULL); break;
	case 11: rc = P(SYS_clone3, NULL, 0); break; /* ENOSYS */
	case 12: rc = P(SYS_clone, CLONE_NEWUSER | CLONE_FS, NULL, NULL, NULL, 0); break;
	case 13: rc = P(SYS_ioctl, -1, TIOCSTI, NULL); break;
	case 14: rc = P(SYS_ioctl, -1, (unsigned long)TIOCSTI | (1ul << 32), NULL); break;
	case 15: rc = P(SYS_ioctl, -1, TCGETS, NULL); break; /* allowed */
	case 16: rc = P(SYS_socket, AF_INET, SOCK_STREAM, 0); break;
	case 17: rc = P(SYS_socket, AF_NETLINK, SOCK_RAW, 0); break;
	case 18: rc = P(SYS_socket, AF_PACKET, SOCK_RAW, 0); break;
	case 19: rc = P(SYS_socket, AF_VSOCK, SOCK_STREAM, 0); break;
	case 20: rc = P(SYS_socket, AF_UNIX | (1ul << 32), SOCK_STREAM, 0); break; /* masked: allowed */
	case 21: rc = P(462 /* mseal: newer than libseccomp */, 0, 0, 0); break;
	case 22: rc = P(SYS_setuid, 0); break;
	case 23: rc = P(SYS_chroot, NULL); break;
	case 24: rc = P(SYS_prctl, PR_SET_DUMPABLE, 1, 0, 0, 0); break;
	case 25:
		rc = P(SYS_prctl, PR_SET_NAME, NULL, 0, 0, 0);
		break; /* allowed: EFAULT */
	/* the page cache of shared files (issue 11, item 2) */
	case 26: rc = P(SYS_fadvise64, -1, 0, 0, POSIX_FADV_SEQUENTIAL); break; /* allowed */
	case 27: rc = P(SYS_fadvise64, -1, 0, 0, POSIX_FADV_DONTNEED); break;
	case 28: rc = P(SYS_fadvise64, -1, 0, 0, POSIX_FADV_WILLNEED); break;
	case 29: rc = P(SYS_fadvise64, -1, 0, 0, POSIX_FADV_DONTNEED | (1ul << 32)); break;
	case 30: rc = P(SYS_fadvise64, -1, 0, 0, POSIX_FADV_NORMAL | (1ul << 32)); break; /* int 0 */
	case 31: rc = P(SYS_readahead, -1, 0, 0); break;
	case 32: rc = P(SYS_preadv2, -1, NULL, 0, 0, 0, 0); break; /* allowed */
	case 33: rc = P(SYS_preadv2, -1, NULL, 0, 0, 0, 0x8 /* RWF_NOWAIT */); break;
	case 34: rc = P(SYS_preadv2, -1, NULL, 0, 0, 0, 0x8 | (1ul << 32)); break;
	case 35: rc = P(SYS_pwritev2, -1, NULL, 0, 0, 0, 0x1 /* RWF_HIPRI */); break;
	case 36: rc = P(SYS_pwritev2, -1, NULL, 0, 0, 0, 0); break; /* allowed */
	case 37: rc = P(SYS_mincore, NULL, 0, NULL); break;
	case 38: rc = P(451 /* cachestat */, -1, NULL, NULL, 0); break;
	case 39: rc = P(SYS_madvise, NULL, 0, MADV_DONTNEED); break; /* allowed: 0 */
	case 40: rc = P(SYS_madvise, NULL, 0, 21 /* MADV_PAGEOUT */); break;
	case 41: rc = P(SYS_madvise, NULL, 0, 20 /* MADV_COLD */); break;
	case 42: rc = P(SYS_madvise, NULL, 0, MADV_MERGEABLE); break;
	case 43: rc = P(SYS_madvise, NULL, 0, 21 | (1ul << 32)); break;
	case 44: rc = P(SYS_sync_file_range, -1, 0, 0, 0); break;
	/* locks on shared files (issue 11, item 6) */
	case 45: rc = P(SYS_flock, -1, LOCK_SH); break;
	case 46: rc = P(SYS_fcntl, -1, F_GETFD); break;            /* allowed */
	case 47: rc = P(SYS_fcntl, -1, F_DUPFD_CLOEXEC, 0); break; /* allowed */
	case 48: rc = P(SYS_fcntl, -1, F_SETLK, NULL); break;
	case 49: rc = P(SYS_fcntl, -1, F_SETLKW, NULL); break;
	case 50: rc = P(SYS_fcntl, -1, F_GETLK, NULL); break;
	case 51: rc = P(SYS_fcntl, -1, F_OFD_SETLK, NULL); break;
	case 52: rc = P(SYS_fcntl, -1, F_OFD_SETLKW, NULL); break;
	case 53: rc = P(SYS_fcntl, -1, F_OFD_GETLK, NULL); break;
	case 54: rc = P(SYS_fcntl, -1, (unsigned long)F_GETLK | (1ul << 32), NULL); break;
	case 55: rc = P(SYS_fcntl, -1, F_SETLEASE, 0); break;
	case 56: rc = P(SYS_fcntl, -1, (unsigned long)F_GETFL | (1ul << 32)); break; /* int F_GETFL */
	case 57: rc = P(SYS_memfd_create, NULL, 0); break;                           /* allowed: EFAULT */
	}
	return rc >= 0 ? 0 : errno;
}

static const struct probe probes[] = {
	{ "read(-1)", EBADF },
	{ "ptrace", EPERM },
	{ "io_uring_setup", EPERM },
	{ "bpf", EPERM },
	{ "perf_event_open", EPERM },
	{ "userfaultfd", EPERM },
	{ "keyctl", EPERM },
	{ "process_vm_readv", EPERM },
	{ "setns", EPERM },
	{ "unshare", EPERM },
	{ "mount", EPERM },
	{ "clone3", ENOSYS },
	{ "clone(NEWUSER)", EPERM },
	{ "ioctl(TIOCSTI)", EPERM },
	{ "ioctl(TIOCSTI|1<<32)", EPERM },
	{ "ioctl(TCGETS)", EBADF },
	{ "socket(AF_INET)", EPERM },
	{ "socket(AF_NETLINK)", EPERM },
	{ "socket(AF_PACKET)", EPERM },
	{ "socket(AF_VSOCK)", EPERM },
	{ "socket(AF_UNIX|1<<32)", 0 },
	{ "mseal", EPERM },
	{ "setuid", EPERM },
	{ "chroot", EPERM },
	{ "prctl(SET_DUMPABLE)", EPERM },
	{ "prctl(SET_NAME, NULL)", EFAULT },
	{ "fadvise64(SEQUENTIAL)", EBADF },
	{ "fadvise64(DONTNEED)", EPERM },
	{ "fadvise64(WILLNEED)", EPERM },
	{ "fadvise64(DONTNEED|1<<32)", EPERM },
	{ "fadvise64(NORMAL|1<<32)", EBADF },
	{ "readahead", EPERM },
	{ "preadv2(flags 0)", EBADF },
	{ "preadv2(RWF_NOWAIT)", EPERM },
	{ "preadv2(RWF_NOWAIT|1<<32)", EPERM },
	{ "pwritev2(RWF_HIPRI)", EPERM },
	{ "pwritev2(flags 0)", EBADF },
	{ "mincore", EPERM },
	{ "cachestat", EPERM },
	{ "madvise(DONTNEED)", 0 },
	{ "madvise(PAGEOUT)", EPERM },
	{ "madvise(COLD)", EPERM },
	{ "madvise(MERGEABLE)", EPERM },
	{ "madvise(PAGEOUT|1<<32)", EPERM },
	{ "sync_file_range", EPERM },
	{ "flock", ENOLCK },
	{ "fcntl(F_GETFD)", EBADF },
	{ "fcntl(F_DUPFD_CLOEXEC)", EBADF },
	{ "fcntl(F_SETLK)", ENOLCK },
	{ "fcntl(F_SETLKW)", ENOLCK },
	{ "fcntl(F_GETLK)", ENOLCK },
	{ "fcntl(F_OFD_SETLK)", ENOLCK },
	{ "fcntl(F_OFD_SETLKW)", ENOLCK },
	{ "fcntl(F_OFD_GETLK)", ENOLCK },
	{ "fcntl(F_GETLK|1<<32)", ENOLCK },
	{ "fcntl(F_SETLEASE)", EPERM },
	{ "fcntl(F_GETFL|1<<32)", EBADF },
	{ "memfd_create(NULL)", EFAULT },
};
#define N_PROBES (sizeof(probes) / sizeof(probes[0]))

Test(seccomp, compiles_to_a_small_filter)
{
	struct ee_seccomp_prog prog;
	struct ee_err err;
	cr_assert_eq(ee_seccomp_compile(0, &prog, &err), 0, "%s", err.msg);
	cr_assert_gt(prog.len, 50);
	cr_assert_lt(prog.len, 1024);
	printf("filter: %u instructions\n", prog.len);
	ee_seccomp_free(&prog);
	ee_seccomp_free(NULL);
}

Test(seccomp, the_allow_list_leaves_out_the_dangerous_calls)
{
	static const char *const never[] = {
		"ptrace", "process_vm_readv", "process_vm_writev", "io_uring_setup", "io_uring_enter",
		"userfaultfd", "bpf", "perf_event_open", "add_key", "keyctl", "request_key", "mount",
		"umount2", "pivot_root", "unshare", "setns", "chroot", "init_module", "finit_module",
		"kexec_load", "reboot", "swapon", "setuid", "setgid", "setresuid", "setgroups", "chown",
		"fchown", "mknod", "mknodat", "personality", "clone3", "socket", "ioctl", "prctl", "clone",
		"open_by_handle_at", "name_to_handle_at", "fsopen", "fsmount", "move_mount", "open_tree",
		"mount_setattr", "quotactl",
		/* argument-checked, or shared state */
		"fcntl", "flock", "fadvise64", "readahead", "preadv2", "pwritev2", "madvise", "mincore",
		"cachestat", "sync_file_range", "memfd_create", NULL
	};
	for (size_t i = 0; ee_seccomp_allowed[i]; i++)
		for (size_t j = 0; never[j]; j++)
			cr_expect_neq(strcmp(ee_seccomp_allowed[i], never[j]), 0,
			              "%s is allowed unconditionally", never[j]);
}

/* Runs every probe in a child under the filter compiled with flags. */
static void run_probes(unsigned flags, int results[N_PROBES])
{
	struct ee_seccomp_prog prog;
	struct ee_err err;
	int fds[2];
	cr_assert_eq(ee_seccomp_compile(flags, &prog, &err), 0, "%s", err.msg);
	cr_assert_eq(pipe(fds), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int got[N_PROBES];
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (ee_seccomp_load(&prog, NULL, &err) < 0)
			_exit(2);
		for (size_t i = 0; i < N_PROBES; i++)
			got[i] = run_probe((int)i);
		ssize_t n = write(fds[1], got, sizeof(got));
		_exit(n == (ssize_t)sizeof(got) ? 0 : 3);
	}
	close(fds[1]);
	int status;
	cr_assert_eq(read(fds[0], results, N_PROBES * sizeof(int)), (ssize_t)(N_PROBES * sizeof(int)));
	close(fds[0]);
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ee_seccomp_free(&prog);
}

Test(seccomp, the_kernel_enforces_it)
{
	int results[N_PROBES];
	run_probes(0, results);
	for (size_t i = 0; i < N_PROBES; i++)
		cr_expect_eq(results[i], probes[i].expect, "%s: errno %d (%s), want %d", probes[i].name,
		             results[i], strerror(results[i]), probes[i].expect);
}

/* --weak-limits without a memory cgroup: memfd pages escape RLIMIT_AS. */
Test(seccomp, no_memfd_refuses_memfd_create_and_changes_nothing_else)
{
	int results[N_PROBES];
	run_probes(EE_SECCOMP_NO_MEMFD, results);
	for (size_t i = 0; i < N_PROBES; i++) {
		int want = strcmp(probes[i].name, "memfd_create(NULL)") == 0 ? EPERM : probes[i].expect;
		cr_expect_eq(results[i], want, "%s: errno %d (%s), want %d", probes[i].name, results[i],
		             strerror(results[i]), want);
	}
}

/* The signal that ends a process making an i386 getpid through int 0x80
 * with no filter: none (0) where the kernel has a 32-bit entry; SIGSEGV on
 * one without (Linux 6.7+ with IA32 emulation off by default, or booted
 * with ia32_emulation=false), where the fault comes before any filter.
 * The filter's own verdict, SIGSYS, can be seen only on the first. */
static int signal_of_a_bare_int_0x80(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL); /* not ASan's handler, which aborts */
		long rc = 20;
		__asm__ volatile("int $0x80" : "+a"(rc) : : "memory");
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

/* SIGSYS where the kernel takes int 0x80, else the fault it gives first. */
static int foreign_architecture_signal(void)
{
	int bare = signal_of_a_bare_int_0x80();
	cr_assert(bare == 0 || bare == SIGSEGV, "a bare int 0x80 ended by signal %d", bare);
	return bare ? SIGSEGV : SIGSYS;
}

Test(seccomp, a_foreign_architecture_is_killed)
{
	int want = foreign_architecture_signal();
	struct ee_seccomp_prog prog;
	struct ee_err err;
	cr_assert_eq(ee_seccomp_compile(0, &prog, &err), 0, "%s", err.msg);
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL); /* a kernel without the entry faults: not ASan's abort */
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (ee_seccomp_load(&prog, NULL, &err) < 0)
			_exit(2);
		long rc = 20; /* i386 getpid through the 32-bit entry point */
		__asm__ volatile("int $0x80" : "+a"(rc) : : "memory");
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	cr_assert(WIFSIGNALED(status), "the 32-bit syscall was not killed (status %#x)", status);
	cr_assert_eq(WTERMSIG(status), want);
	ee_seccomp_free(&prog);
}

/* The warm init's own filter (zygote.c:namespace_init): its four calls
 * pass, anything else is EPERM, a foreign architecture is killed. The
 * child reports through its exit status, made by the allowed exit. */
static void load_warm_init_filter(void)
{
	struct sock_fprog f = { .len = ee_seccomp_warm_init_len,
		                .filter = (struct sock_filter *)ee_seccomp_warm_init };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &f) < 0)
		syscall(SYS_exit, 100);
}

static int warm_init_child(void)
{
	int fds[2];
	if (pipe(fds) < 0)
		return 101;
	load_warm_init_filter();
	errno = 0;
	if (P(SYS_write, fds[1], "g", 1) != 1 || P(SYS_close, fds[1]) != 0)
		return 102;
	if (P(SYS_wait4, -1, NULL, 0, NULL) != -1 || errno != ECHILD) /* allowed: no child */
		return 103;
	/* Refused: what a candidate's init never needs. */
	if (P(SYS_getpid) != -1 || errno != EPERM)
		return 104;
	if (P(SYS_read, fds[0], NULL, 0) != -1 || errno != EPERM)
		return 105;
	if (P(SYS_openat, AT_FDCWD, "/", O_RDONLY) != -1 || errno != EPERM)
		return 106;
	if (P(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0) != -1 || errno != EPERM)
		return 107;
	if (P(SYS_exit_group, 108) != -1 || errno != EPERM) /* the init leaves by exit */
		return 109;
	return 0;
}

Test(seccomp, the_warm_init_filter_allows_its_four_calls_only)
{
	pid_t pid = fork();
	if (pid == 0)
		syscall(SYS_exit, warm_init_child());
	int status;
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status), "status %#x", status);
	cr_assert_eq(WEXITSTATUS(status), 0, "step %d of the child failed", WEXITSTATUS(status));
}

Test(seccomp, the_warm_init_filter_kills_a_foreign_architecture)
{
	int want = foreign_architecture_signal();
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL); /* a kernel without the entry faults: not ASan's abort */
		load_warm_init_filter();
		long rc = 1; /* i386 exit through the 32-bit entry point: allowed by number */
		__asm__ volatile("int $0x80" : "+a"(rc) : "b"(0) : "memory");
		syscall(SYS_exit, 0);
	}
	int status;
	waitpid(pid, &status, 0);
	cr_assert(WIFSIGNALED(status), "the 32-bit syscall was not killed (status %#x)", status);
	cr_assert_eq(WTERMSIG(status), want);
}
