/* gvisor_bundle.c - the OCI bundles runsc runs (see gvisor.h).
 *
 * The native mount plan (mount.h) is the one policy for both backends:
 * its directories, symlinks and generated files are made once in a shared
 * root directory that every container gets read-only; its read-only binds
 * become the bundles' bind mounts (ro, nosuid, nodev), its /proc and its
 * bounded /tmp gVisor's own. /dev is gVisor's (null, zero, full, random,
 * urandom, tty and the fd links; no host device). The relay, this very
 * binary, is bound read-only at /.execeval-relay. The process runs as
 * 65534:65534 with no capabilities, no_new_privs and the native payload's
 * rlimits; the network is runsc's --network=none (loopback only).
 */
#include "sandbox/gvisor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/resource_limits.h"
#include "sandbox/mount.h"

#define RELAY_TARGET "/.execeval-relay"

static int is_executable(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

int ee_gvisor_find_runsc(char *path, size_t size, struct ee_err *err)
{
	const char *env = getenv("EXECEVAL_RUNSC");
	if (env && *env) {
		if (!is_executable(env))
			return ee_fail(
			        err, EE_ERR_SANDBOX,
			        "--backend gvisor: EXECEVAL_RUNSC=%.150s is not an executable; install "
			        "Debian's runsc package (apt-get install runsc)",
			        env);
		snprintf(path, size, "%s", env);
		return 0;
	}
	const char *dirs = getenv("PATH");
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s:/usr/bin:/usr/sbin", dirs ? dirs : "");
	for (char *save = NULL, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(path, size, "%s/runsc", d);
		if (*d == '/' && is_executable(path))
			return 0;
	}
	path[0] = '\0';
	return ee_fail(err, EE_ERR_SANDBOX,
	               "--backend gvisor: runsc not found on PATH; install Debian's runsc package "
	               "(apt-get install runsc) or set EXECEVAL_RUNSC");
}

static int mkdirs(const char *path, struct ee_err *err)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "gvisor root: mkdir %s", p);
		*s = '/';
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "gvisor root: mkdir %s", p);
	return 0;
}

static int write_file(const char *path, const char *text, mode_t mode, struct ee_err *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "gvisor root: create %s", path);
	size_t len = strlen(text);
	ssize_t n = write(fd, text, len);
	close(fd);
	if (n != (ssize_t)len)
		return ee_fail(err, EE_ERR_SANDBOX, "gvisor root: short write to %s", path);
	return 0;
}

/* A step of the plan, played into the shared root (binds: their mount points). */
static int root_step(const char *root, const struct ee_mount_step *s, struct ee_err *err)
{
	char p[PATH_MAX + 160];
	if (strncmp(s->target, "/dev", 4) == 0 && (s->target[4] == '/' || !s->target[4]))
		return 0; /* gVisor's own /dev */
	snprintf(p, sizeof(p), "%s%s", root, s->target);
	switch (s->kind) {
	case EE_MNT_DIR:
	case EE_MNT_PROC:
	case EE_MNT_TMPFS: return mkdirs(p, err);
	case EE_MNT_SYMLINK:
		if (symlink(s->arg, p) < 0 && errno != EEXIST)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "gvisor root: symlink %s", p);
		return 0;
	case EE_MNT_BIND_RO:
		if (s->is_dir)
			return mkdirs(p, err);
		return write_file(p, "", 0444, err);
	case EE_MNT_FILE: return write_file(p, s->arg, 0644, err);
	default: return 0;
	}
}

static void remove_tree_at(int dfd, const char *name, int depth);

/* The private directories of execevals that died without their clean-up
 * (SIGKILL): each live one holds a shared flock on its directory (pids do
 * not say it: another pid namespace may share this /tmp). */
static void sweep_stale(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "execeval-gvisor.", 16) != 0)
			continue;
		int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			remove_tree_at(dirfd(d), e->d_name, 0);
		close(fd);
	}
	if (d)
		closedir(d);
}

int ee_gvisor_open(struct ee_gvisor *g, int platform, const struct ee_mount_plan *plan, const char *python,
                   struct ee_err *err)
{
	char root[PATH_MAX + 16];

	memset(g, 0, sizeof(*g));
	g->lock_fd = -1;
	g->platform = platform;
	snprintf(g->python, sizeof(g->python), "%s", python);
	if (ee_gvisor_find_runsc(g->runsc, sizeof(g->runsc), err) < 0)
		return -1;
	ssize_t n = readlink("/proc/self/exe", g->relay, sizeof(g->relay) - 1);
	if (n < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "readlink /proc/self/exe");
	g->relay[n] = '\0';
	const char *env_tmp = getenv("TMPDIR");
	const char *tmp = env_tmp && *env_tmp == '/' ? env_tmp : "/tmp";
	sweep_stale(tmp);
	snprintf(g->dir, sizeof(g->dir), "%s/execeval-gvisor.XXXXXX", tmp);
	if (!mkdtemp(g->dir)) {
		int e = errno;
		g->dir[0] = '\0';
		errno = e;
		return ee_fail_errno(err, EE_ERR_SANDBOX, "gvisor: mkdtemp");
	}
	/* Held until close: a live execeval's directory is not stale. */
	g->lock_fd = open(g->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (g->lock_fd < 0 || flock(g->lock_fd, LOCK_SH) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "gvisor: lock %s", g->dir);
	/* runsc's gofer opens the root as root, its sentry as nobody. */
	chmod(g->dir, 0711);
	snprintf(root, sizeof(root), "%s/rootfs", g->dir);
	if (mkdirs(root, err) < 0)
		return -1;
	for (size_t i = 0; i < plan->n; i++) {
		if (plan->steps[i].kind == EE_MNT_TMPFS && strcmp(plan->steps[i].target, "/tmp") == 0)
			g->tmp_mb = (unsigned)strtoul(plan->steps[i].arg, NULL, 10);
		if (root_step(root, &plan->steps[i], err) < 0)
			return -1;
	}
	char relay[PATH_MAX + 64];
	snprintf(relay, sizeof(relay), "%s%s", root, RELAY_TARGET);
	return write_file(relay, "", 0555, err);
}

static void remove_tree_at(int dfd, const char *name, int depth)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && depth < 16) {
		DIR *d = fdopendir(fd);
		struct dirent *e;
		while (d && (e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				remove_tree_at(dirfd(d), e->d_name, depth + 1);
		if (d)
			closedir(d);
		else
			close(fd);
		unlinkat(dfd, name, AT_REMOVEDIR);
		return;
	}
	if (fd >= 0)
		close(fd);
	unlinkat(dfd, name, 0);
}

void ee_gvisor_bundle_remove(const char *dir)
{
	if (dir && dir[0] == '/')
		remove_tree_at(AT_FDCWD, dir, 0);
}

void ee_gvisor_close(struct ee_gvisor *g)
{
	if (!g || !g->dir[0])
		return;
	ee_gvisor_bundle_remove(g->dir);
	g->dir[0] = '\0';
	if (g->lock_fd >= 0)
		close(g->lock_fd);
	g->lock_fd = -1;
}

/* ---- a candidate's config.json ----------------------------------------- */

static json_t *mount_of(const char *dst, const char *type, const char *src, const char *opts[], size_t n)
{
	json_t *o = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(o, json_string(opts[i]));
	return json_pack("{s:s, s:s, s:s, s:o}", "destination", dst, "type", type, "source", src, "options",
	                 o);
}

static json_t *mounts_of(const struct ee_gvisor *g, const struct ee_mount_plan *plan,
                         const struct ee_limits *lim)
{
	static const char *ro[] = { "rbind", "ro", "nosuid", "nodev" };
	static const char *proc[] = { "nosuid", "nodev", "noexec" };
	char tmp_opts[64];
	snprintf(tmp_opts, sizeof(tmp_opts), "size=%um", lim->tmp_mb ? lim->tmp_mb : g->tmp_mb);
	const char *tmp[] = { tmp_opts, "mode=1777", "nosuid", "nodev" };
	json_t *m = json_array();

	json_array_append_new(m, mount_of("/proc", "proc", "proc", proc, 3));
	for (size_t i = 0; i < plan->n; i++)
		if (plan->steps[i].kind == EE_MNT_BIND_RO)
			json_array_append_new(
			        m, mount_of(plan->steps[i].target, "bind", plan->steps[i].arg, ro, 4));
	json_array_append_new(m, mount_of(RELAY_TARGET, "bind", g->relay, ro, 4));
	json_array_append_new(m, mount_of("/tmp", "tmpfs", "tmpfs", tmp, 4));
	/* Natively /dev/shm is a link to /tmp (POSIX semaphores:
	 * multiprocessing); gVisor's own /dev has one only root may write. A
	 * tmpfs of the same size: the memory cgroup bounds both. */
	json_array_append_new(m, mount_of("/dev/shm", "tmpfs", "tmpfs", tmp, 4));
	return m;
}

static json_t *rlimit(const char *type, unsigned long long soft, unsigned long long hard)
{
	return json_pack("{s:s, s:I, s:I}", "type", type, "soft", (json_int_t)soft, "hard", (json_int_t)hard);
}

/* The native payload's rlimits (child.c's set_rlimits), plus NPROC: the
 * host's pids cgroup holds runsc too, so inside the count is gVisor's. The
 * relay adds RLIMIT_AS for the harness alone (gvisor_relay.c). */
static json_t *rlimits_of(const struct ee_limits *l)
{
	unsigned long long cpu, cpu_hard;
	ee_limits_cpu(l, &cpu, &cpu_hard);
	unsigned long long fsize = (unsigned long long)l->file_mb << 20;
	json_t *r = json_array();
	json_array_append_new(r, rlimit("RLIMIT_CPU", cpu, cpu_hard));
	json_array_append_new(r, rlimit("RLIMIT_FSIZE", fsize, fsize));
	json_array_append_new(r, rlimit("RLIMIT_NOFILE", l->open_files, l->open_files));
	json_array_append_new(r, rlimit("RLIMIT_CORE", 0, 0));
	json_array_append_new(r, rlimit("RLIMIT_MEMLOCK", 0, 0));
	json_array_append_new(r, rlimit("RLIMIT_NPROC", l->procs, l->procs));
	return r;
}

int ee_gvisor_bundle_write(struct ee_gvisor *g, const struct ee_mount_plan *plan, const struct ee_limits *lim,
                           char *dir, char *id, struct ee_err *err)
{
	char root[PATH_MAX + 16], path[PATH_MAX + 16];
	unsigned long long n = ++g->next_id;

	snprintf(id, 64, "execeval-%d-%llu", (int)getpid(), n);
	if (snprintf(dir, PATH_MAX, "%.4000s/b-%llu", g->dir, n) >= PATH_MAX)
		return ee_fail(err, EE_ERR_SANDBOX, "gvisor: path too long");
	snprintf(root, sizeof(root), "%s/rootfs", g->dir);
	if (mkdir(dir, 0711) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "gvisor: mkdir %s", dir);
	char as_mb[24];
	snprintf(as_mb, sizeof(as_mb), "%u", lim->memory_mb + 128);
	json_t *args = json_pack("[s, s, s, s]", RELAY_TARGET, "__gvisor-relay", g->python, as_mb);
	json_t *env = json_pack("[s]", "PATH=/usr/bin:/bin");
	json_t *ns = json_pack("[{s:s}, {s:s}, {s:s}, {s:s}, {s:s}]", "type", "pid", "type", "network",
	                       "type", "ipc", "type", "uts", "type", "mount");
	/* The relay as root with CAP_SETUID and CAP_SETGID alone, to drop the
	 * harness to 65534 (gvisor_relay.c says why). */
	json_t *caps =
	        json_pack("{s:[s,s], s:[s,s], s:[s,s]}", "bounding", "CAP_SETUID", "CAP_SETGID", "effective",
	                  "CAP_SETUID", "CAP_SETGID", "permitted", "CAP_SETUID", "CAP_SETGID");
	json_t *spec = json_pack(
	        "{s:s, s:{s:{s:i, s:i}, s:o, s:o, s:s, s:o, s:b, s:o}, s:{s:s, s:b}, s:s, s:o, s:{s:o}}",
	        "ociVersion", "1.0.0", "process", "user", "uid", 0, "gid", 0, "args", args, "env", env, "cwd",
	        "/tmp", "capabilities", caps, "noNewPrivileges", 1, "rlimits", rlimits_of(lim), "root",
	        "path", root, "readonly", 1, "hostname", "sandbox", "mounts", mounts_of(g, plan, lim),
	        "linux", "namespaces", ns);
	snprintf(path, sizeof(path), "%s/config.json", dir);
	int rc = spec ? json_dump_file(spec, path, JSON_COMPACT) : -1;
	json_decref(spec);
	if (rc < 0)
		return ee_fail(err, EE_ERR_SANDBOX, "gvisor: cannot write %s", path);
	return 0;
}
