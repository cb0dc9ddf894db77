/* mount.c - building the sandbox's root filesystem (see mount.h).
 *
 * Order inside the sandbox's first process (new mount ns, new pid ns):
 *   1. make every mount private, so nothing propagates back to the host;
 *   2. mount a small skeleton tmpfs over /tmp (invisible outside the ns);
 *   3. play the plan's steps into it: directories, symlinks, read-only binds,
 *      device binds, the /proc and /tmp mounts, generated files;
 *   4. pivot_root into the skeleton and detach the old root entirely;
 *   5. remount the skeleton and /dev read-only; chdir /tmp.
 */
#include "sandbox/mount.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/err.h"

#define SKELETON "/tmp"

enum { REQUIRED = 0, OPTIONAL = 1 };

/* What the interpreter needs from the host. Symlinks (merged /usr) are
 * reproduced as symlinks, so /bin -> usr/bin keeps working. */
static const struct {
	const char *path;
	int optional;
} host_paths[] = {
	{ "/usr", REQUIRED },
	{ "/bin", OPTIONAL },
	{ "/sbin", OPTIONAL },
	{ "/lib", OPTIONAL },
	{ "/lib64", OPTIONAL },
	{ "/lib32", OPTIONAL },
	{ "/libx32", OPTIONAL },
	{ "/etc/ld.so.cache", OPTIONAL },
	{ "/etc/ld.so.conf", OPTIONAL },
	{ "/etc/ld.so.conf.d", OPTIONAL },
	{ "/etc/localtime", OPTIONAL },
	{ "/etc/alternatives", OPTIONAL }, /* Debian's libblas/liblapack links */
};

static const char *const devices[] = { "null", "zero", "full", "random", "urandom" };

static const struct {
	const char *target;
	const char *to;
} dev_links[] = {
	{ "/dev/fd", "/proc/self/fd" },
	{ "/dev/stdin", "/proc/self/fd/0" },
	{ "/dev/stdout", "/proc/self/fd/1" },
	{ "/dev/stderr", "/proc/self/fd/2" },
	{ "/dev/shm", "/tmp" }, /* POSIX semaphores (multiprocessing) */
};

static const char passwd[] = "nobody:x:65534:65534:nobody:/tmp:/usr/sbin/nologin\n";
static const char group[] = "nogroup:x:65534:\n";

static int add(struct ee_mount_plan *plan, int kind, const char *target, const char *arg, struct ee_err *err)
{
	if (plan->n >= EE_MOUNT_MAX_STEPS)
		return ee_fail(err, EE_ERR_SANDBOX, "mount plan: more than %d steps", EE_MOUNT_MAX_STEPS);
	struct ee_mount_step *s = &plan->steps[plan->n++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	snprintf(s->target, sizeof(s->target), "%s", target);
	snprintf(s->arg, sizeof(s->arg), "%s", arg ? arg : "");
	return 0;
}

static int add_host_path(struct ee_mount_plan *plan, const char *path, int optional, struct ee_err *err)
{
	struct stat st;
	char link[PATH_MAX];

	if (lstat(path, &st) < 0) {
		if (optional && errno == ENOENT)
			return 0;
		return ee_fail_errno(err, EE_ERR_SANDBOX, "mount plan: %s", path);
	}
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "mount plan: readlink %s", path);
		link[n] = '\0';
		return add(plan, EE_MNT_SYMLINK, path, link, err);
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return optional ? 0
		                : ee_fail(err, EE_ERR_SANDBOX, "mount plan: %s is not a file or directory",
		                          path);
	if (add(plan, EE_MNT_BIND_RO, path, path, err) < 0)
		return -1;
	plan->steps[plan->n - 1].is_dir = S_ISDIR(st.st_mode);
	return 0;
}

int ee_mount_plan(unsigned tmp_mb, struct ee_mount_plan *plan, struct ee_err *err)
{
	char size[16];

	plan->n = 0;
	if (add(plan, EE_MNT_DIR, "/etc", NULL, err) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(host_paths) / sizeof(host_paths[0]); i++)
		if (add_host_path(plan, host_paths[i].path, host_paths[i].optional, err) < 0)
			return -1;
	if (add(plan, EE_MNT_FILE, "/etc/passwd", passwd, err) < 0 ||
	    add(plan, EE_MNT_FILE, "/etc/group", group, err) < 0 ||
	    add(plan, EE_MNT_PROC, "/proc", NULL, err) < 0 || add(plan, EE_MNT_TMPFS, "/dev", "1", err) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
		char path[64];
		snprintf(path, sizeof(path), "/dev/%s", devices[i]);
		if (add(plan, EE_MNT_DEV, path, path, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < sizeof(dev_links) / sizeof(dev_links[0]); i++)
		if (add(plan, EE_MNT_SYMLINK, dev_links[i].target, dev_links[i].to, err) < 0)
			return -1;
	snprintf(size, sizeof(size), "%u", tmp_mb);
	return add(plan, EE_MNT_TMPFS, "/tmp", size, err);
}

/* ---- execution, inside the sandbox ------------------------------------ */

static int make_node(const char *path, int is_dir, struct ee_err *err)
{
	if (is_dir) {
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "mkdir %s", path);
		return 0;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
	if (fd < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "create %s", path);
	close(fd);
	return 0;
}

/* Flags a read-only remount must keep: in a user namespace the kernel
 * refuses to clear nosuid/nodev/noexec/atime flags the source mount has. */
static unsigned long locked_flags(const char *src)
{
	struct statvfs sv;
	unsigned long f = 0;

	if (statvfs(src, &sv) < 0)
		return 0;
	if (sv.f_flag & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		f |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		f |= MS_RELATIME;
	return f;
}

static int bind(const char *src, const char *dst, unsigned long extra, struct ee_err *err)
{
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "bind %s", src);
	unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOSUID | extra | locked_flags(src);
	if (mount(NULL, dst, NULL, flags, NULL) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "remount %s", src);
	return 0;
}

static int tmpfs(const char *dst, const char *size_mb, const char *mode, struct ee_err *err)
{
	char opts[96];
	snprintf(opts, sizeof(opts), "size=%sm,nr_inodes=16384,mode=%s", size_mb, mode);
	if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "mount tmpfs on %s", dst);
	return 0;
}

/* 0644 as a host's /etc/passwd: writable by its owner (root) so that
 * add_account can append without CAP_DAC_OVERRIDE; the root is remounted
 * read-only before anything of the sandbox runs. */
static int write_content(const char *path, const char *content, struct ee_err *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "create %s", path);
	size_t len = strlen(content);
	ssize_t n = write(fd, content, len);
	close(fd);
	if (n != (ssize_t)len)
		return ee_fail(err, EE_ERR_SANDBOX, "write %s: short write", path);
	return 0;
}

static int apply_step(const struct ee_mount_step *s, struct ee_err *err)
{
	char dst[PATH_MAX];
	snprintf(dst, sizeof(dst), SKELETON "%s", s->target);

	switch (s->kind) {
	case EE_MNT_DIR: return make_node(dst, 1, err);
	case EE_MNT_SYMLINK:
		if (symlink(s->arg, dst) < 0)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "symlink %s", s->target);
		return 0;
	case EE_MNT_BIND_RO:
		if (make_node(dst, s->is_dir, err) < 0)
			return -1;
		return bind(s->arg, dst, MS_RDONLY | MS_NODEV, err);
	case EE_MNT_DEV:
		if (make_node(dst, 0, err) < 0)
			return -1;
		return bind(s->arg, dst, MS_NOEXEC, err);
	case EE_MNT_TMPFS:
		if (make_node(dst, 1, err) < 0)
			return -1;
		return tmpfs(dst, s->arg, strcmp(s->target, "/tmp") == 0 ? "1777" : "0755", err);
	case EE_MNT_PROC:
		if (make_node(dst, 1, err) < 0)
			return -1;
		if (mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "mount proc");
		return 0;
	case EE_MNT_FILE: return write_content(dst, s->arg, err);
	}
	return ee_fail(err, EE_ERR_SANDBOX, "mount plan: unknown step kind %d", s->kind);
}

static int remount_ro(const char *path, struct ee_err *err)
{
	unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID;
	if (strcmp(path, "/dev") != 0)
		flags |= MS_NODEV;
	if (mount(NULL, path, NULL, flags, NULL) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "remount %s read-only", path);
	return 0;
}

static int append(const char *path, const char *line, struct ee_err *err)
{
	size_t len = strlen(line);
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "open %s", path);
	ssize_t n = write(fd, line, len);
	close(fd);
	if (n != (ssize_t)len)
		return ee_fail(err, EE_ERR_SANDBOX, "write %s: short write", path);
	return 0;
}

/* The sandbox's own uid by a name, for getpass.getuser() and pwd, in the
 * passwd and group files of etc (a directory). */
static int add_account(const char *etc, unsigned uid, struct ee_err *err)
{
	char user[96], grp[64], path[64];

	if (uid == 65534)
		return 0;
	snprintf(user, sizeof(user), "sandbox:x:%u:%u:sandbox:/tmp:/usr/sbin/nologin\n", uid, uid);
	snprintf(grp, sizeof(grp), "sandbox:x:%u:\n", uid);
	snprintf(path, sizeof(path), "%s/passwd", etc);
	if (append(path, user, err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/group", etc);
	return append(path, grp, err);
}

/* A detached sandbox forked from a warm worker (a session) runs as a uid
 * of its own, not the slot's that the worker's root names: passwd and
 * group files naming it, written in a small tmpfs mounted on /tmp and bound
 * read-only over the worker's; the fresh /tmp then hides that tmpfs (the
 * binds keep their files). */
static int name_own_account(unsigned uid, struct ee_err *err)
{
	if (tmpfs("/tmp", "1", "0755", err) < 0 || write_content("/tmp/passwd", passwd, err) < 0 ||
	    write_content("/tmp/group", group, err) < 0 || add_account("/tmp", uid, err) < 0 ||
	    bind("/tmp/passwd", "/etc/passwd", MS_RDONLY | MS_NODEV | MS_NOEXEC, err) < 0 ||
	    bind("/tmp/group", "/etc/group", MS_RDONLY | MS_NODEV | MS_NOEXEC, err) < 0)
		return -1;
	return 0;
}

int ee_mount_apply(const struct ee_mount_plan *plan, unsigned uid, struct ee_err *err)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "make mounts private");
	if (tmpfs(SKELETON, "1", "0755", err) < 0)
		return -1;
	for (size_t i = 0; i < plan->n; i++)
		if (apply_step(&plan->steps[i], err) < 0)
			return -1;
	if (add_account(SKELETON "/etc", uid, err) < 0)
		return -1;
	if (chdir(SKELETON) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "chdir to the new root");
	/* pivot_root(".", ".") stacks the old root under the new one; detaching
	 * it leaves nothing of the host reachable but the binds. */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "detach the old root");
	if (chdir("/") < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "chdir /");
	if (remount_ro("/dev", err) < 0 || remount_ro("/", err) < 0)
		return -1;
	if (chdir("/tmp") < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "chdir /tmp");
	return 0;
}

int ee_mount_refresh(const struct ee_mount_plan *plan, unsigned own_uid, struct ee_err *err)
{
	if (own_uid && name_own_account(own_uid, err) < 0)
		return -1;
	for (size_t i = 0; i < plan->n; i++) {
		const struct ee_mount_step *s = &plan->steps[i];
		if (s->kind == EE_MNT_PROC) {
			if (mount("proc", s->target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
				return ee_fail_errno(err, EE_ERR_SANDBOX, "mount proc");
		} else if (s->kind == EE_MNT_TMPFS && strcmp(s->target, "/tmp") == 0) {
			if (tmpfs(s->target, s->arg, "1777", err) < 0)
				return -1;
		}
	}
	/* The old /tmp is still the cwd: enter the new one. */
	if (chdir("/") < 0 || chdir("/tmp") < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "chdir /tmp");
	return 0;
}
