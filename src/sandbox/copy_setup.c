/* copy_setup.c - what a copy of a session gets while it is stopped, from
 * processes other than itself (copy.h, copy.c's steps 3): its uid and gid
 * maps, its cgroups, a fresh /tmp holding the state's files and a fresh
 * /proc; and the session's pids limit, raised while the copies are born in
 * its cgroup. Every function runs in the fork's helper (or its children). */
#include "sandbox/copy_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "sandbox/copy.h"

#define TMP_DEPTH 32 /* directories deep a copied /tmp may go */

static int write_proc(pid_t pid, const char *name, const char *text, struct ee_err *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t n = strlen(text);
	int ok = fd >= 0 && write(fd, text, n) == (ssize_t)n;
	if (fd >= 0)
		close(fd);
	return ok ? 0 : ee_fail_errno(err, EE_ERR_SANDBOX, "fork: write %s", path);
}

static unsigned long userns_of(pid_t pid)
{
	char path[64];
	struct stat st;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/user");
	return stat(path, &st) < 0 ? 0 : (unsigned long)st.st_ino;
}

/* The copy's maps: the sandboxes' whole range, onto itself. The copy's
 * own uid is one of them, and a copy of this copy (whose user namespace
 * nests in this one's) can only be mapped onto ids mapped here; without
 * a capability, the copy can become none of the others. The kernel takes
 * maps only from a process in the new namespace's parent, the state's:
 * a copy's copy has them written by a child that joins it. */
int copy_write_maps(pid_t state, pid_t copy, const struct ee_copy_target *t, struct ee_err *err)
{
	char map[64];
	snprintf(map, sizeof(map), "%u %u %u\n", t->uid_base, t->uid_base, t->uid_count);
	if (userns_of(state) == userns_of(0))
		return write_proc(copy, "setgroups", "deny", err) < 0 ||
		                       write_proc(copy, "uid_map", map, err) < 0 ||
		                       write_proc(copy, "gid_map", map, err) < 0
		               ? -1
		               : 0;
	pid_t h = fork();
	if (h < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: the maps' helper");
	if (h == 0) {
		char path[64];
		struct ee_err ignored;
		snprintf(path, sizeof(path), "/proc/%d/ns/user", state);
		int ns = open(path, O_RDONLY | O_CLOEXEC);
		_exit(ns < 0 || setns(ns, CLONE_NEWUSER) < 0 ||
		                      write_proc(copy, "setgroups", "deny", &ignored) < 0 ||
		                      write_proc(copy, "uid_map", map, &ignored) < 0 ||
		                      write_proc(copy, "gid_map", map, &ignored) < 0
		              ? 1
		              : 0);
	}
	int st;
	pid_t got;
	do
		got = waitpid(h, &st, 0);
	while (got < 0 && errno == EINTR);
	if (got != h || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return ee_fail(err, EE_ERR_SANDBOX,
		               "fork: a copy's maps could not be written from its parent's namespace");
	return 0;
}

/* Every copy into its cgroups, in one burst: a write of a v1 cgroup's
 * tasks file waits for an RCU grace period unless another write came just
 * before it, so copy by copy each paid one (~5 ms); one after the other
 * here, all but the first ride on it. In a child (copy_setup_all). */
static int join_all(const struct ee_copy_plan *plan, size_t n, struct ee_err *err)
{
	for (int k = 0; k < 5; k++)
		for (size_t i = 0; i < n; i++) {
			const struct ee_copy_target *t = &plan->copies[i];
			char pid[24];
			int len = snprintf(pid, sizeof(pid), "%d", t->pid);
			int last = 0;
			while (last < 5 && t->join[last] >= 0)
				last++;
			if (k < last && pwrite(t->join[k], pid, (size_t)len, 0) != len)
				return ee_fail_errno(err, EE_ERR_SANDBOX,
				                     "fork: move a copy into its cgroup");
		}
	return 0;
}

/* Copies the directory from into to (an empty directory of the fresh
 * /tmp): directories, files and symbolic links, owned by uid; sockets and
 * FIFOs are the state's, not copied. Bounded by the tmpfs's size. */
static int copy_tree(int from, int to, unsigned uid, int depth)
{
	DIR *d = fdopendir(dup(from));
	if (!d)
		return -1;
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(from, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode) && depth < TMP_DEPTH) {
			int a = openat(from, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			int ok = a >= 0 && mkdirat(to, e->d_name, st.st_mode & 07777) == 0;
			int b = ok ? openat(to, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			           : -1;
			rc = b < 0 ? -1 : copy_tree(a, b, uid, depth + 1);
			if (b >= 0 && (fchown(b, uid, uid) < 0 || fchmod(b, st.st_mode & 07777) < 0))
				rc = -1;
			if (a >= 0)
				close(a);
			if (b >= 0)
				close(b);
		} else if (S_ISREG(st.st_mode)) {
			int a = openat(from, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			int b = a < 0 ? -1
			              : openat(to, e->d_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			char buf[1 << 16];
			ssize_t n = 0;
			while (b >= 0 && (n = read(a, buf, sizeof(buf))) > 0)
				if (write(b, buf, (size_t)n) != n) {
					n = -1;
					break;
				}
			if (b < 0 || n < 0 || fchown(b, uid, uid) < 0 || fchmod(b, st.st_mode & 07777) < 0)
				rc = -1;
			else {
				struct timespec times[2] = { st.st_atim, st.st_mtim };
				futimens(b, times);
			}
			if (a >= 0)
				close(a);
			if (b >= 0)
				close(b);
		} else if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlinkat(from, e->d_name, target, sizeof(target) - 1);
			if (n >= 0) {
				target[n] = 0;
				rc = symlinkat(target, to, e->d_name) < 0 || fchownat(to, e->d_name, uid, uid,
				                                                      AT_SYMLINK_NOFOLLOW) < 0
				             ? -1
				             : 0;
			}
		}
	}
	closedir(d);
	return rc;
}

/* In the copy's mount namespace: a fresh /tmp holding a copy of the
 * state's, and, from a child in its pid namespace, a fresh /proc, each
 * mounted over the state's. Exit codes say the step that failed. */
static void mounts_main(pid_t copy, const struct ee_copy_target *t)
{
	char path[64], opts[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", copy);
	int mnt = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", copy);
	int pidns = open(path, O_RDONLY | O_CLOEXEC);
	if (mnt < 0 || pidns < 0 || setns(mnt, CLONE_NEWNS) < 0 || setns(pidns, CLONE_NEWPID) < 0)
		_exit(2);
	/* Into the copy's cgroups first: the tmpfs pages it writes are the
	 * copy's memory (bounded by its limit), not the server's, and its CPU
	 * the copy's. */
	char self[24];
	int len = snprintf(self, sizeof(self), "%d", getpid());
	for (int i = 0; i < 5 && t->join[i] >= 0; i++)
		if (pwrite(t->join[i], self, (size_t)len, 0) != len)
			_exit(8);
	int old = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(opts, sizeof(opts), "size=%lld,mode=1777", t->tmp_bytes);
	/* Over the state's: the mounts a less privileged user namespace got
	 * are locked (no unmount reveals what is under them), the copy holds
	 * no descriptor into it, and can mount nothing. */
	if (old < 0 || mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		_exit(3);
	int fresh = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fresh < 0 || copy_tree(old, fresh, t->uid, 0) < 0)
		_exit(4);
	pid_t in = fork();
	if (in == 0)
		_exit(mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 ? 5 : 0);
	int st;
	if (in < 0 || waitpid(in, &st, 0) != in)
		_exit(6);
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 7);
}

/* Every copy's mounts, by helpers that run at once (one per copy), and
 * its cgroups. */
int copy_setup_all(const struct ee_copy_plan *plan, size_t n, struct ee_err *err)
{
	static const char *const step[] = { "",
		                            "",
		                            "enter its namespaces",
		                            "mount its /tmp",
		                            "copy its /tmp",
		                            "mount its /proc",
		                            "fork into its pid namespace",
		                            "mount its /proc",
		                            "join its cgroups" };
	pid_t helpers[EE_COPY_MAX + 1];
	int code = 0;
	size_t started = 0;
	/* The cgroups' burst too, from a child of its own: its grace period
	 * (time, not work) passes while the mounts are made. */
	pid_t joiner = fork();
	if (joiner == 0) {
		struct ee_err ignored;
		_exit(join_all(plan, n, &ignored) < 0 ? 1 : 0);
	}
	for (; started < n; started++) {
		helpers[started] = fork();
		if (helpers[started] < 0)
			break;
		if (helpers[started] == 0)
			mounts_main(plan->copies[started].pid, &plan->copies[started]);
	}
	if (started < n)
		code = -1;
	for (size_t i = 0; i < started; i++) {
		int st;
		pid_t got;
		do
			got = waitpid(helpers[i], &st, 0);
		while (got < 0 && errno == EINTR);
		if (!code && (got != helpers[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0))
			code = got == helpers[i] && WIFEXITED(st) && WEXITSTATUS(st) >= 2 ? WEXITSTATUS(st)
			                                                                  : 1;
	}
	int st = 0;
	if (joiner > 0)
		while (waitpid(joiner, &st, 0) < 0 && errno == EINTR)
			;
	if (joiner < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return ee_fail(err, EE_ERR_SANDBOX, "fork: the copies could not be moved into their cgroups");
	if (code < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "fork: the mount helpers");
	if (code)
		return ee_fail(err, EE_ERR_SANDBOX, "fork: a copy's mounts: %s",
		               code >= 2 && code <= 8 ? step[code] : "the helper died");
	return 0;
}

/* The session's pids limit, raised by the copies' count: they are born in
 * its cgroup and leave it only once all are made (copy_setup_all). The old
 * limit, or -1 when there is none to raise. */
long copy_raise_pids(const struct ee_copy_plan *plan)
{
	char buf[32];
	if (plan->pids_max_fd < 0)
		return -1;
	ssize_t r = pread(plan->pids_max_fd, buf, sizeof(buf) - 1, 0);
	if (r <= 0)
		return -1;
	buf[r] = 0;
	if (strncmp(buf, "max", 3) == 0)
		return -1;
	long old = strtol(buf, NULL, 10);
	int len = snprintf(buf, sizeof(buf), "%ld", old + (long)plan->n);
	return pwrite(plan->pids_max_fd, buf, (size_t)len, 0) == len ? old : -1;
}

void copy_restore_pids(const struct ee_copy_plan *plan, long old)
{
	char buf[32];
	if (old < 0)
		return;
	int len = snprintf(buf, sizeof(buf), "%ld", old);
	(void)!pwrite(plan->pids_max_fd, buf, (size_t)len, 0);
}
