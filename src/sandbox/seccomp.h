/* seccomp.h - the sandbox's system-call allow-list.
 *
 * An allow-list, not a deny-list: a deny-list silently allows every syscall
 * newer than the installed libseccomp knows (mseal, listmount, ...). Calls
 * outside the list fail with EPERM, so Python raises a readable OSError;
 * clone3 fails with ENOSYS so libc falls back to clone, whose flags seccomp
 * can read (namespace flags are refused); a foreign architecture (a 32-bit
 * int 0x80 from a 64-bit process) kills the process. Arguments the kernel
 * truncates to 32 bits (ioctl requests, socket families) are compared masked
 * to 32 bits, or TIOCSTI | 1 << 32 would slip through. Some calls are
 * allowed only with certain arguments (fcntl commands, fadvise and madvise
 * advice, preadv2/pwritev2 flags 0) and flock and record locks fail with
 * ENOLCK: seccomp.c says why.
 *
 * The filter is compiled once in the supervisor (ee_seccomp_compile) and
 * loaded in the sandbox with one prctl (ee_seccomp_load): no allocation and
 * no libseccomp call happens after clone.
 */
#ifndef EE_SECCOMP_H
#define EE_SECCOMP_H

#include <linux/filter.h>
#include <stddef.h>

struct ee_err;

struct ee_seccomp_prog {
	struct sock_filter *filter; /* owned, malloc'd */
	unsigned short len;         /* instructions */
};

/* The plain allow-list (calls allowed with any arguments), NULL-terminated;
 * for doctor and tests. Argument-checked calls and memfd_create are not in it. */
extern const char *const ee_seccomp_allowed[];

/* Policy variants. NO_MEMFD (--weak-limits, no memory cgroup): memfd pages
 * count against no rlimit, so memfd_create fails with EPERM. NOTIFY: refused
 * calls are answered by the supervisor (notify.h). WATCH_WRITES (with
 * NOTIFY only): so are the calls that write the file system by path
 * (write_watch.h; open and openat only with a write flag), which the
 * supervisor judges and lets continue. */
enum { EE_SECCOMP_NO_MEMFD = 1, EE_SECCOMP_NOTIFY = 2, EE_SECCOMP_WATCH_WRITES = 4 };

/* Compiles the policy (flags: EE_SECCOMP_*). The result is owned by the
 * caller (ee_seccomp_free). */
int ee_seccomp_compile(unsigned flags, struct ee_seccomp_prog *ret, struct ee_err *err);
void ee_seccomp_free(struct ee_seccomp_prog *p);

/* Installs p on the calling thread. Requires no_new_privs or CAP_SYS_ADMIN.
 * For a NOTIFY filter and a non-NULL listener, *listener is its listener
 * (close-on-exec; may be fd 0), else -1. NULL: loaded without one (refused
 * calls then fail with ENOSYS). 0, or -1 on error. */
int ee_seccomp_load(const struct ee_seccomp_prog *p, int *listener, struct ee_err *err);

/* The warm candidate's pid namespace init's own filter (zygote.c): once it
 * has dropped its privileges that init makes four calls, write, close,
 * wait4 and exit; every other call fails with EPERM and a foreign
 * architecture kills it. Narrower than the candidate's, and ten
 * instructions where the candidate's are hundreds: the kernel converts,
 * JIT-compiles and caches a filter on every load, once per candidate. */
extern const struct sock_filter ee_seccomp_warm_init[];
extern const unsigned short ee_seccomp_warm_init_len;

#endif
