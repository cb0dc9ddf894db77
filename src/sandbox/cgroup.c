/* cgroup.c - making, joining and removing sandbox cgroups (see cgroup.h).
 *
 * v1 files: memory.limit_in_bytes, memory.memsw.limit_in_bytes (no swap when
 * swap accounting exists), cpu.shares and cpu.cfs_*_us, pids.max.
 * v2 files: memory.max, memory.swap.max, memory.oom.group, cpu.weight,
 * cpu.max, pids.max. On v2 the controllers must be enabled in the parent's
 * cgroup.subtree_control, which the kernel refuses while the parent holds
 * processes; execeval then moves itself into a leaf first. What the
 * cgroups count is read in cgroup_stats.c; their names and the sweep of
 * stale ones are cgroup_name.c's.
 */
#include "sandbox/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/resource_limits.h"
#include "sandbox/cgroup_int.h"
#include "sandbox/host.h"

static int write_file(const char *dir, const char *file, const char *value)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = strlen(value);
	ssize_t n = write(fd, value, len);
	int saved = errno;
	close(fd);
	errno = saved;
	return n == (ssize_t)len ? 0 : -1;
}

/* v2: enables memory and pids for children of dir, moving this process to
 * a leaf when dir holds processes ("no internal processes" rule). */
static int v2_delegate(const char *dir, struct ee_err *err)
{
	if (write_file(dir, "cgroup.subtree_control", "+memory +pids") == 0)
		return 0;
	if (errno != EBUSY)
		return ee_fail_errno(err, EE_ERR_SANDBOX,
		                     "cannot enable memory and pids in %s/cgroup.subtree_control", dir);
	char leaf[PATH_MAX];
	snprintf(leaf, sizeof(leaf), "%.4000s/" NAME_PREFIX "supervisor.%d", dir, (int)getpid());
	if (mkdir(leaf, 0755) < 0 && errno != EEXIST)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "cannot create %s", leaf);
	if (write_file(leaf, "cgroup.procs", "0") < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "cannot move execeval into %s", leaf);
	if (write_file(dir, "cgroup.subtree_control", "+memory +pids") < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX,
		                     "cannot enable memory and pids in %s/cgroup.subtree_control", dir);
	return 0;
}

/* Set when the last make_dir failed because the name was taken. */
static int name_taken;

static int make_dir(const char *parent, const char *name, char *ret, struct ee_err *err)
{
	snprintf(ret, PATH_MAX, "%.4000s/%s", parent, name);
	name_taken = 0;
	if (mkdir(ret, 0755) < 0) {
		name_taken = errno == EEXIST;
		ret[0] = '\0'; /* not ours: ee_cgroup_destroy must leave it */
		return ee_fail_errno(err, EE_ERR_SANDBOX, "cannot create cgroup %.3900s/%s", parent, name);
	}
	return 0;
}

static int setup_memory(struct ee_cgroup *cg, const struct ee_limits *lim, struct ee_err *err)
{
	char bytes[32];
	snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)lim->memory_mb << 20);
	if (cg->mem_version == EE_CG_V1) {
		if (write_file(cg->mem, "memory.limit_in_bytes", bytes) < 0)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "cannot write %s/memory.limit_in_bytes",
			                     cg->mem);
		/* memsw = memory + swap; equal to the limit means no swap. Absent
		 * without swap accounting, which is fine: then there is no swap to use. */
		if (write_file(cg->mem, "memory.memsw.limit_in_bytes", bytes) < 0 && errno != ENOENT)
			return ee_fail_errno(err, EE_ERR_SANDBOX,
			                     "cannot write %s/memory.memsw.limit_in_bytes", cg->mem);
		return 0;
	}
	if (write_file(cg->mem, "memory.max", bytes) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "cannot write %s/memory.max", cg->mem);
	if (write_file(cg->mem, "memory.swap.max", "0") < 0 && errno != ENOENT)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "cannot write %s/memory.swap.max", cg->mem);
	/* An OOM kills the whole sandbox, not one random process of it. */
	(void)write_file(cg->mem, "memory.oom.group", "1");
	return 0;
}

/* Equal shares and at most one CPU per sandbox (per warm slot): the
 * scheduler's autogroups give each session one share, and a candidate may
 * call setsid() in 60 children; a cgroup is one share whatever runs in it.
 * A quota above an outer cgroup's is refused on v1 (EINVAL): the outer one
 * bounds it then. */
#define CPU_PERIOD_US "100000"
#define CPU_QUOTA_US  "100000" /* one CPU */

static int setup_cpu(const struct ee_cgroup *cg, struct ee_err *err)
{
	int v1 = cg->sched_version == EE_CG_V1;
	const char *share = v1 ? "cpu.shares" : "cpu.weight";
	if (write_file(cg->sched, share, v1 ? "1024" : "100") < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "cannot write %s/%s", cg->sched, share);
	if (v1) {
		if (write_file(cg->sched, "cpu.cfs_period_us", CPU_PERIOD_US) < 0 ||
		    (write_file(cg->sched, "cpu.cfs_quota_us", CPU_QUOTA_US) < 0 && errno != EINVAL))
			return ee_fail_errno(err, EE_ERR_SANDBOX, "cannot write %s/cpu.cfs_quota_us",
			                     cg->sched);
	} else if (write_file(cg->sched, "cpu.max", CPU_QUOTA_US " " CPU_PERIOD_US) < 0) {
		return ee_fail_errno(err, EE_ERR_SANDBOX, "cannot write %s/cpu.max", cg->sched);
	}
	return 0;
}

static int setup_pids(struct ee_cgroup *cg, const struct ee_limits *lim, struct ee_err *err)
{
	char value[32];
	snprintf(value, sizeof(value), "%u", lim->procs);
	if (write_file(cg->pids, "pids.max", value) < 0)
		return ee_fail_errno(err, EE_ERR_SANDBOX, "cannot write %s/pids.max", cg->pids);
	return 0;
}

/* The directories to create a cgroup in: this process's own, or another
 * execeval cgroup's (a pool's top). */
struct parents {
	const char *mem, *pids, *cpu;
	const char *sched; /* NULL: no cpu controller directory (a pool's candidate) */
};

/* The cpu controller's directory: on v2 the one directory (when the
 * controller is enabled there), on v1 cpuacct's when the two are mounted
 * together ("cpu,cpuacct"), else one of its own. */
static int make_sched(const struct ee_host *h, const struct parents *at, const char *name,
                      struct ee_cgroup *cg, struct ee_err *err)
{
	char probe[PATH_MAX + 16];
	if (h->cpu.version == EE_CG_V2) {
		snprintf(probe, sizeof(probe), "%s/cpu.max", cg->mem);
		if (cg->mem_version == EE_CG_V2 && access(probe, F_OK) == 0) {
			cg->sched_version = EE_CG_V2;
			snprintf(cg->sched, sizeof(cg->sched), "%s", cg->mem);
		}
		return 0;
	}
	cg->sched_version = EE_CG_V1;
	if (cg->cpu[0] && strcmp(at->sched, at->cpu) == 0) {
		snprintf(cg->sched, sizeof(cg->sched), "%s", cg->cpu);
		return 0;
	}
	return make_dir(at->sched, name, cg->sched, err);
}

/* Creates `name` under each parent; lim NULL: no limits written. */
static int create_under(const struct ee_host *h, const struct parents *at, const char *name,
                        const struct ee_limits *lim, struct ee_cgroup *cg, struct ee_err *err)
{
	static int delegated;

	memset(cg, 0, sizeof(*cg));
	if (!delegated && h->memory.writable && h->memory.version == EE_CG_V2) {
		if (v2_delegate(h->memory.dir, err) < 0)
			return -1;
		/* Best effort: without it, sandbox cgroups have no cpu.max. */
		if (h->cpu.version == EE_CG_V2)
			(void)write_file(h->memory.dir, "cgroup.subtree_control", "+cpu");
		delegated = 1;
	}
	if (h->memory.writable && h->memory.version) {
		cg->mem_version = h->memory.version;
		if (make_dir(at->mem, name, cg->mem, err) < 0)
			goto fail;
		if (lim && setup_memory(cg, lim, err) < 0)
			goto fail;
	}
	/* CPU accounting: killed processes are never reaped by init, so only the
	 * cgroup knows what they used. v1 needs its own cpuacct hierarchy. */
	if (h->cpuacct.writable && h->cpuacct.version == EE_CG_V1 &&
	    make_dir(at->cpu, name, cg->cpu, err) < 0)
		goto fail;
	if (at->sched && h->cpu.writable && h->cpu.version && make_sched(h, at, name, cg, err) < 0)
		goto fail;
	if (cg->sched[0] && lim && setup_cpu(cg, err) < 0)
		goto fail;
	if (h->pids.writable && h->pids.version) {
		cg->pids_version = h->pids.version;
		if (h->pids.version == EE_CG_V2 && cg->mem_version == EE_CG_V2)
			snprintf(cg->pids, sizeof(cg->pids), "%s", cg->mem);
		else if (make_dir(at->pids, name, cg->pids, err) < 0)
			goto fail;
		if (lim && setup_pids(cg, lim, err) < 0)
			goto fail;
	}
	return 0;
fail:
	ee_cgroup_destroy(cg, NULL);
	return -1;
}

/* How often a taken name is met with a new token before giving up: a
 * collision of 32 random bits twice in a row is not bad luck. */
#define NAME_TRIES 4

/* Creates a cgroup under a fresh name, retrying with a new token when the
 * name is taken (a stale directory of an earlier process that had this pid
 * and started in the same tick), and holds its lock (cgroup_name.c). */
static int create_named(const struct ee_host *h, const struct parents *at, const struct ee_limits *lim,
                        struct ee_cgroup *cg, struct ee_err *err)
{
	char name[64];
	for (int i = 0;; i++) {
		cgroup_next_name(name);
		if (create_under(h, at, name, lim, cg, err) == 0) {
			if (cgroup_hold(cg, err) == 0)
				return 0;
			ee_cgroup_destroy(cg, NULL);
			return -1;
		}
		if (!name_taken || i + 1 == NAME_TRIES)
			return -1;
		cgroup_new_token();
	}
}

int ee_cgroup_create(const struct ee_host *h, const struct ee_limits *lim, struct ee_cgroup *cg,
                     struct ee_err *err)
{
	const struct parents own = { h->memory.dir, h->pids.dir, h->cpuacct.dir, h->cpu.dir };
	return create_named(h, &own, lim, cg, err);
}

int ee_cgroup_pool_create(const struct ee_host *h, const struct ee_limits *lim, struct ee_cgroup_pool *p,
                          struct ee_err *err)
{
	const struct parents own = { h->memory.dir, h->pids.dir, h->cpuacct.dir, h->cpu.dir };

	memset(p, 0, sizeof(*p));
	p->fd_cpu = p->fd_oom = p->fd_peak = p->fd_usage = p->fd_pids = -1;
	if (create_named(h, &own, NULL, &p->top, err) < 0)
		return -1;
	/* v2: the top holds no process, so its children may have controllers. */
	if (p->top.mem_version == EE_CG_V2 &&
	    write_file(p->top.mem, "cgroup.subtree_control", "+memory +pids") < 0) {
		ee_fail_errno(err, EE_ERR_SANDBOX, "cannot enable memory and pids in %s", p->top.mem);
		goto fail;
	}
	/* The slot's CPU share and quota are the top's: the worker's cgroup
	 * below it holds the worker, and its candidates stay in that one of
	 * the cpu hierarchy (the candidate cgroup has none: a zygote joins at
	 * most three cgroups). */
	if (p->top.sched[0] && setup_cpu(&p->top, err) < 0)
		goto fail;
	const struct parents top = { p->top.mem, p->top.pids, p->top.cpu,
		                     p->top.sched[0] ? p->top.sched : NULL };
	const struct parents cand = { p->top.mem, p->top.pids, p->top.cpu, NULL };
	if (create_under(h, &top, "worker", NULL, &p->worker, err) < 0 ||
	    create_under(h, &cand, "candidate", lim, &p->candidate, err) < 0)
		goto fail;
	cgroup_open_counters(p);
	return 0;
fail:
	ee_cgroup_pool_destroy(p, NULL);
	return -1;
}

int ee_cgroup_pool_destroy(struct ee_cgroup_pool *p, struct ee_err *err)
{
	cgroup_close_counters(p);
	int rc = ee_cgroup_destroy(&p->candidate, err);
	if (ee_cgroup_destroy(&p->worker, err) < 0)
		rc = -1;
	if (ee_cgroup_destroy(&p->top, err) < 0)
		rc = -1;
	return rc;
}

/* v1: "0" written to `tasks` moves the calling thread only, which the
 * kernel does without the global cgroup_threadgroup_rwsem; a pid written to
 * cgroup.procs takes it for writing, which waits for an RCU grace period
 * (5-19 ms measured here). A single-threaded caller is its whole process.
 * v2 has no such shortcut for processes: cgroup.procs. */
struct join_point {
	const char *dir, *file;
};

/* Where to write "0" to join every created cgroup of cg. */
static int join_points(const struct ee_cgroup *cg, struct join_point out[4])
{
	int n = 0;
	if (cg->mem[0])
		out[n++] = (struct join_point){ cg->mem,
			                        cg->mem_version == EE_CG_V1 ? "tasks" : "cgroup.procs" };
	if (cg->pids[0] && strcmp(cg->pids, cg->mem) != 0)
		out[n++] = (struct join_point){ cg->pids,
			                        cg->pids_version == EE_CG_V1 ? "tasks" : "cgroup.procs" };
	if (cg->cpu[0])
		out[n++] = (struct join_point){ cg->cpu, "tasks" };
	if (cg->sched[0] && strcmp(cg->sched, cg->mem) != 0 && strcmp(cg->sched, cg->cpu) != 0)
		out[n++] = (struct join_point){ cg->sched, "tasks" };
	return n;
}

int ee_cgroup_attach_self(const struct ee_cgroup *cg, struct ee_err *err)
{
	struct join_point j[4];
	for (int i = 0, n = join_points(cg, j); i < n; i++)
		if (write_file(j[i].dir, j[i].file, "0") < 0)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "cannot attach to %s", j[i].dir);
	return 0;
}

/* ---- pooled cgroups (the warm pool) ----------------------------------- */

int ee_cgroup_set_limits(struct ee_cgroup *cg, const struct ee_limits *lim, struct ee_err *err)
{
	if (cg->mem[0] && setup_memory(cg, lim, err) < 0)
		return -1;
	if (cg->pids[0] && setup_pids(cg, lim, err) < 0)
		return -1;
	return 0;
}

int ee_cgroup_open_attach(const struct ee_cgroup *cg, int fds[5], struct ee_err *err)
{
	struct join_point j[4];
	int n = join_points(cg, j);

	for (int i = 0; i < n; i++) {
		fds[i] = cgroup_open_in(j[i].dir, j[i].file, O_WRONLY);
		if (fds[i] < 0) {
			ee_fail_errno(err, EE_ERR_SANDBOX, "cannot open %s/%s", j[i].dir, j[i].file);
			while (i > 0)
				close(fds[--i]);
			fds[0] = -1;
			return -1;
		}
	}
	fds[n] = -1;
	return 0;
}

/* rmdir, retrying while the kernel finishes tearing down the last tasks. */
static int remove_dir(const char *dir)
{
	struct timespec pause = { 0, 200000 };
	for (int i = 0; i < 60; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -1;
		/* Anything still inside is a sandbox leftover: end it. */
		char procs[PATH_MAX + 16];
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
		FILE *f = fopen(procs, "re");
		int pid;
		while (f && fscanf(f, "%d", &pid) == 1)
			kill(pid, SIGKILL);
		if (f)
			fclose(f);
		nanosleep(&pause, NULL);
		if (pause.tv_nsec < 20000000)
			pause.tv_nsec *= 2;
	}
	errno = EBUSY;
	return -1;
}

int ee_cgroup_destroy(struct ee_cgroup *cg, struct ee_err *err)
{
	int rc = 0;
	if (!cg)
		return 0;
	if (cg->pids[0] && strcmp(cg->pids, cg->mem) != 0 && remove_dir(cg->pids) < 0)
		rc = ee_fail_errno(err, EE_ERR_SANDBOX, "cannot remove cgroup %s", cg->pids);
	if (cg->mem[0] && remove_dir(cg->mem) < 0)
		rc = ee_fail_errno(err, EE_ERR_SANDBOX, "cannot remove cgroup %s", cg->mem);
	if (cg->cpu[0] && remove_dir(cg->cpu) < 0)
		rc = ee_fail_errno(err, EE_ERR_SANDBOX, "cannot remove cgroup %s", cg->cpu);
	if (cg->sched[0] && strcmp(cg->sched, cg->mem) != 0 && strcmp(cg->sched, cg->cpu) != 0 &&
	    remove_dir(cg->sched) < 0)
		rc = ee_fail_errno(err, EE_ERR_SANDBOX, "cannot remove cgroup %s", cg->sched);
	cg->mem[0] = cg->pids[0] = cg->cpu[0] = cg->sched[0] = '\0';
	/* Only now: a directory that would not go stays locked by nobody, and
	 * the next sweep may take it. */
	cgroup_release(cg);
	return rc;
}
