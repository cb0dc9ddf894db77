/* cgroup_name.c - the names of sandbox cgroups, who owns them, and the
 * sweep of stale ones.
 *
 * A name says which execeval made the cgroup and when that process started
 * (see "names"): people and tests find a run's cgroups by it. Whether its
 * owner is alive is decided by a lock (see "ownership"), because nothing
 * read through a pid namespace can tell: a later execeval removes a cgroup
 * whose owner is gone (killed with -9, its sandbox dead with it) and never
 * a live one's, whatever namespaces either runs in.
 */
#include "sandbox/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "sandbox/cgroup_int.h"
#include "sandbox/host.h"

/* ---- names ---------------------------------------------------------------
 *
 * "execeval.<pid>.<start>-<random>.<serial>": the pid alone repeats (in a
 * container or a fresh pid namespace execeval is pid 1 or 2 after every
 * restart, and a kill -9 leaves its cgroups), so a token follows it: the
 * process's start time (clock ticks since boot, /proc/<pid>/stat field 22),
 * which lets the sweep tell a live owner from a later process given the
 * same pid, and 32 random bits against two starts in one tick in two pid
 * namespaces. The pid stays first: tests and people find a run's cgroups by
 * "execeval.<pid>.". */

struct name_token {
	int pid;
	unsigned long long start; /* 0: unknown */
	unsigned rnd;
};

/* /proc/<pid>/<name>, one read, NUL-terminated; its length or -1. */
ssize_t cgroup_read_proc_file(int pid, const char *name, char *text, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, text, size - 1);
	if (fd >= 0)
		close(fd);
	if (n >= 0)
		text[n] = '\0';
	return n;
}

/* Field 22 of /proc/<pid>/stat, after the command's closing parenthesis
 * (a command may hold spaces and parentheses). 0 when unreadable. */
static unsigned long long start_time_of(int pid)
{
	char text[1024];
	if (cgroup_read_proc_file(pid, "stat", text, sizeof(text)) <= 0)
		return 0;
	const char *p = strrchr(text, ')');
	unsigned long long start = 0;
	/* After ')': state (3) ... starttime (22) is the 20th field. */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		start = strtoull(p + 1, NULL, 10);
	return start;
}

static unsigned random_bits(void)
{
	unsigned r;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned)t.tv_nsec ^ (unsigned)getpid() << 16;
}

static struct name_token own_token;

/* A fresh token after a name was taken (EEXIST), or the first one. */
void cgroup_new_token(void)
{
	own_token.pid = (int)getpid();
	if (!own_token.start)
		own_token.start = start_time_of(own_token.pid);
	own_token.rnd = random_bits();
}

void cgroup_next_name(char name[64])
{
	static unsigned long serial;
	if (own_token.pid != (int)getpid())
		cgroup_new_token();
	snprintf(name, 64, NAME_PREFIX "%d.%llu-%08x.%lu", own_token.pid, own_token.start, own_token.rnd,
	         ++serial);
}

/* ---- ownership -----------------------------------------------------------
 *
 * The owner of a top-level cgroup holds a shared flock on each of its
 * directories from just after mkdir until it has removed them; the sweep
 * takes an exclusive one, without waiting, before it removes anything. A
 * flock lives on the directory's inode, which every mount of the hierarchy
 * shares (a container's own cgroup mount, a cgroup namespace, another mount
 * namespace), and the kernel drops it with the owner's last descriptor,
 * which dies with the owner. A pid cannot do this: cgroup.procs lists only
 * the pids visible in the reader's pid namespace, so a live server's pooled
 * candidate cgroup, empty between candidates, looks abandoned from another
 * pid namespace, and on v1 rmdir of an empty cgroup succeeds. */

int cgroup_hold(struct ee_cgroup *cg, struct ee_err *err)
{
	const char *dirs[4] = { cg->mem, cg->pids, cg->cpu, cg->sched };
	for (int i = 0; i < 4; i++) {
		int repeat = !dirs[i][0];
		for (int j = 0; j < i && !repeat; j++)
			repeat = strcmp(dirs[i], dirs[j]) == 0;
		if (repeat)
			continue;
		int fd = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || flock(fd, LOCK_SH | LOCK_NB) < 0) {
			ee_fail_errno(err, EE_ERR_SANDBOX, "cannot lock cgroup %.3900s", dirs[i]);
			if (fd >= 0)
				close(fd);
			return -1;
		}
		cg->held[cg->nheld++] = fd;
	}
	return 0;
}

void cgroup_release(struct ee_cgroup *cg)
{
	while (cg->nheld > 0)
		close(cg->held[--cg->nheld]);
}

/* ---- the sweep of stale cgroups ------------------------------------------ */

static int has_tasks(const char *dir)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	FILE *f = fopen(path, "re");
	int pid, any = 0;
	if (f) {
		any = fscanf(f, "%d", &pid) == 1;
		fclose(f);
	}
	return any;
}

/* How old a stale-looking cgroup must be before it is removed: its owner
 * takes the lock just after mkdir. */
#define SWEEP_MIN_AGE_S 10

/* Whether the execeval that named this cgroup is visibly running here: it
 * is this process, or its pid is live and (names with a token) started
 * when the name says. A shortcut only: an owner in another pid namespace is
 * invisible here, and the lock decides (sweep_dir). */
static int owner_is_alive(const char *name)
{
	const char *rest = name + strlen(NAME_PREFIX);
	struct name_token t = { 0, 0, 0 };
	int leaf = strncmp(rest, "supervisor.", 11) == 0; /* v2: "supervisor.<pid>" */

	/* "<pid>.<start>-<rnd>.<serial>", or an older "<pid>.<serial>". */
	int fields = sscanf(rest + (leaf ? 11 : 0), "%d.%llu-%x.", &t.pid, &t.start, &t.rnd);
	if (fields < 1)
		return 1; /* not a name execeval makes: leave it */
	int tokened = fields == 3;
	if (t.pid == getpid())
		/* Ours only with our token; the leaf is reused as it is. */
		return leaf || (tokened && t.start == own_token.start && t.rnd == own_token.rnd);
	if (kill(t.pid, 0) < 0 && errno == ESRCH)
		return 0;
	return !tokened || start_time_of(t.pid) == t.start;
}

static void sweep_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, NAME_PREFIX, strlen(NAME_PREFIX)) != 0 || owner_is_alive(e->d_name))
			continue;
		char path[PATH_MAX], worker[PATH_MAX + 8], candidate[PATH_MAX + 16];
		struct stat st;
		snprintf(path, sizeof(path), "%.3000s/%.255s", dir, e->d_name);
		if (stat(path, &st) < 0 || time(NULL) - st.st_ctime < SWEEP_MIN_AGE_S)
			continue;
		/* Held to the end: its owner is gone and cannot come back. */
		int lock = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (lock < 0)
			continue;
		if (flock(lock, LOCK_EX | LOCK_NB) < 0) {
			close(lock); /* a live owner, in whatever namespace */
			continue;
		}
		/* A warm pool's top: alive while its worker cgroup holds the
		 * worker (its candidate cgroup is empty between candidates). */
		snprintf(worker, sizeof(worker), "%s/worker", path);
		snprintf(candidate, sizeof(candidate), "%s/candidate", path);
		if (access(worker, F_OK) == 0 && !has_tasks(worker) && !has_tasks(candidate)) {
			(void)rmdir(candidate);
			(void)rmdir(worker);
		}
		/* Only an empty one: its sandbox died with its supervisor (the
		 * init has PR_SET_PDEATHSIG), and rmdir refuses a cgroup with
		 * tasks. Never kill here: an execeval of a version that took no
		 * lock may still own it from another pid namespace. */
		(void)rmdir(path);
		close(lock);
	}
	closedir(d);
}

void ee_cgroup_sweep_stale(const struct ee_host *h)
{
	if (h->memory.writable)
		sweep_dir(h->memory.dir);
	if (h->pids.writable && strcmp(h->pids.dir, h->memory.dir) != 0)
		sweep_dir(h->pids.dir);
	if (h->cpuacct.writable && h->cpuacct.version == EE_CG_V1)
		sweep_dir(h->cpuacct.dir);
	if (h->cpu.writable && h->cpu.version == EE_CG_V1 &&
	    !(h->cpuacct.version == EE_CG_V1 && strcmp(h->cpu.dir, h->cpuacct.dir) == 0))
		sweep_dir(h->cpu.dir);
}
