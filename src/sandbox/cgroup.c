/* cgroup.c - per-sandbox cgroups on v1 and v2 hierarchies (see cgroup.h).
 *
 * v1 files: memory.limit_in_bytes, memory.memsw.limit_in_bytes (no swap when
 * swap accounting exists), memory.oom_control ("oom_kill N"),
 * memory.max_usage_in_bytes, pids.max, pids.events ("max N").
 * v2 files: memory.max, memory.swap.max, memory.oom.group, memory.events,
 * memory.peak, pids.max, pids.events. On v2 the controllers must be enabled
 * in the parent's cgroup.subtree_control, which the kernel refuses while the
 * parent holds processes; execeval then moves itself into a leaf first.
 */
#include "sandbox/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/resource_limits.h"
#include "sandbox/host.h"

#define NAME_PREFIX "execeval."

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

/* Reads "key N" from a flat-keyed file open at fd (the counters of a
 * warm pool stay open); -1 when absent or fd < 0. */
static long read_key_fd(int fd, const char *key)
{
	char text[1024];
	ssize_t n = fd < 0 ? -1 : pread(fd, text, sizeof(text) - 1, 0);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	size_t klen = strlen(key);
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
			return strtol(line + klen + 1, NULL, 10);
	return -1;
}

static long long read_number_fd(int fd)
{
	char text[64];
	ssize_t n = fd < 0 ? -1 : pread(fd, text, sizeof(text) - 1, 0);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	return strtoll(text, NULL, 10);
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

static int open_in(const char *dir, const char *file, int flags)
{
	char path[PATH_MAX + 64];
	if (!dir[0])
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return open(path, flags | O_CLOEXEC);
}

static long read_key(const char *dir, const char *file, const char *key)
{
	int fd = open_in(dir, file, O_RDONLY);
	long v = read_key_fd(fd, key);
	if (fd >= 0)
		close(fd);
	return v;
}

static long long read_number(const char *dir, const char *file)
{
	int fd = open_in(dir, file, O_RDONLY);
	long long v = read_number_fd(fd);
	if (fd >= 0)
		close(fd);
	return v;
}

/* The cgroup's memory file: v1 memory.usage_in_bytes, v2 memory.current. */
static const char *usage_file(const struct ee_cgroup *cg)
{
	return cg->mem_version == EE_CG_V1 ? "memory.usage_in_bytes" : "memory.current";
}

/* The candidate cgroup's counter files, opened once: per candidate they
 * are read twice, and a path walk through cgroupfs costs more than the read. */
static void open_counters(struct ee_cgroup_pool *p)
{
	const struct ee_cgroup *c = &p->candidate;
	int v1 = c->mem_version == EE_CG_V1, v2 = c->mem_version == EE_CG_V2;

	p->fd_cpu = c->cpu[0] ? open_in(c->cpu, "cpuacct.usage", O_RDONLY)
	            : v2      ? open_in(c->mem, "cpu.stat", O_RDONLY)
	                      : -1;
	p->fd_oom = v1   ? open_in(c->mem, "memory.oom_control", O_RDONLY)
	            : v2 ? open_in(c->mem, "memory.events", O_RDONLY)
	                 : -1;
	p->fd_peak = v1 ? open_in(c->mem, "memory.max_usage_in_bytes", O_RDWR) : -1;
	p->fd_usage = c->mem_version ? open_in(c->mem, usage_file(c), O_RDONLY) : -1;
	p->fd_pids = open_in(c->pids, "pids.events", O_RDONLY);
}

static void close_counters(struct ee_cgroup_pool *p)
{
	int *fds[] = { &p->fd_cpu, &p->fd_oom, &p->fd_peak, &p->fd_usage, &p->fd_pids };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

static void read_counters(const struct ee_cgroup_pool *p, struct ee_cgroup_stats *st)
{
	const struct ee_cgroup *c = &p->candidate;
	if (c->cpu[0]) {
		long long ns = read_number_fd(p->fd_cpu);
		st->cpu_usec = ns < 0 ? -1 : ns / 1000;
	} else {
		st->cpu_usec = read_key_fd(p->fd_cpu, "usage_usec");
	}
	st->oom_kills = read_key_fd(p->fd_oom, "oom_kill");
	st->pids_max_hits = read_key_fd(p->fd_pids, "max");
	long long peak = read_number_fd(p->fd_peak);
	st->peak_kb = peak < 0 ? -1 : (long)(peak / 1024);
}

/* The counters of a pooled cgroup only grow: a candidate's figures are the
 * difference from a snapshot taken before it starts. The peak is reset
 * (v1) to the current usage, which is what the cgroup still holds of
 * earlier candidates (page cache); the candidate's peak is above it. */
void ee_cgroup_pool_begin(const struct ee_cgroup_pool *p, struct ee_cgroup_stats *base)
{
	if (p->fd_peak >= 0)
		(void)!pwrite(p->fd_peak, "0", 1, 0);
	read_counters(p, base);
	long long usage = read_number_fd(p->fd_usage);
	base->peak_kb = usage < 0 ? -1 : (long)(usage / 1024);
}

static long since(long now, long base)
{
	return now < 0 || base < 0 ? -1 : now - base;
}

void ee_cgroup_pool_stats(const struct ee_cgroup_pool *p, const struct ee_cgroup_stats *base,
                          struct ee_cgroup_stats *st)
{
	read_counters(p, st);
	st->oom_kills = since(st->oom_kills, base->oom_kills);
	st->pids_max_hits = since(st->pids_max_hits, base->pids_max_hits);
	st->cpu_usec = st->cpu_usec < 0 || base->cpu_usec < 0 ? -1 : st->cpu_usec - base->cpu_usec;
	/* v2's memory.peak cannot be reset here (kernels >= 6.12 reset it per
	 * open file): unknown rather than another candidate's. */
	if (st->peak_kb < 0 || base->peak_kb < 0)
		st->peak_kb = -1;
	else
		st->peak_kb = st->peak_kb > base->peak_kb ? st->peak_kb - base->peak_kb : 0;
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
static ssize_t read_proc_file(int pid, const char *name, char *text, size_t size)
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
	if (read_proc_file(pid, "stat", text, sizeof(text)) <= 0)
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
static void new_token(void)
{
	own_token.pid = (int)getpid();
	if (!own_token.start)
		own_token.start = start_time_of(own_token.pid);
	own_token.rnd = random_bits();
}

static void next_name(char name[64])
{
	static unsigned long serial;
	if (own_token.pid != (int)getpid())
		new_token();
	snprintf(name, 64, NAME_PREFIX "%d.%llu-%08x.%lu", own_token.pid, own_token.start, own_token.rnd,
	         ++serial);
}

/* How often a taken name is met with a new token before giving up: a
 * collision of 32 random bits twice in a row is not bad luck. */
#define NAME_TRIES 4

/* Creates a cgroup under a fresh name, retrying with a new token when the
 * name is taken (a stale directory of an earlier process that had this pid
 * and started in the same tick). */
static int create_named(const struct ee_host *h, const struct parents *at, const struct ee_limits *lim,
                        struct ee_cgroup *cg, struct ee_err *err)
{
	char name[64];
	for (int i = 0;; i++) {
		next_name(name);
		if (create_under(h, at, name, lim, cg, err) == 0)
			return 0;
		if (!name_taken || i + 1 == NAME_TRIES)
			return -1;
		new_token();
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
	open_counters(p);
	return 0;
fail:
	ee_cgroup_pool_destroy(p, NULL);
	return -1;
}

int ee_cgroup_pool_destroy(struct ee_cgroup_pool *p, struct ee_err *err)
{
	close_counters(p);
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

int ee_cgroup_attach_fds(const int *fds, struct ee_err *err)
{
	for (; *fds >= 0; fds++)
		if (pwrite(*fds, "0", 1, 0) != 1)
			return ee_fail_errno(err, EE_ERR_SANDBOX, "cannot join a pooled cgroup");
	return 0;
}

void ee_cgroup_stats(const struct ee_cgroup *cg, struct ee_cgroup_stats *st)
{
	st->oom_kills = -1;
	st->pids_max_hits = -1;
	st->peak_kb = -1;
	st->cpu_usec = -1;
	if (cg->cpu[0]) {
		long long ns = read_number(cg->cpu, "cpuacct.usage");
		st->cpu_usec = ns < 0 ? -1 : ns / 1000;
	} else if (cg->mem_version == EE_CG_V2) {
		st->cpu_usec = read_key(cg->mem, "cpu.stat", "usage_usec");
	}
	if (cg->mem_version == EE_CG_V1) {
		st->oom_kills = read_key(cg->mem, "memory.oom_control", "oom_kill");
		long peak = read_number(cg->mem, "memory.max_usage_in_bytes");
		st->peak_kb = peak < 0 ? -1 : peak / 1024;
	} else if (cg->mem_version == EE_CG_V2) {
		st->oom_kills = read_key(cg->mem, "memory.events", "oom_kill");
		long peak = read_number(cg->mem, "memory.peak");
		st->peak_kb = peak < 0 ? -1 : peak / 1024;
	}
	if (cg->pids[0])
		st->pids_max_hits = read_key(cg->pids, "pids.events", "max");
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
		fds[i] = open_in(j[i].dir, j[i].file, O_WRONLY);
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
	return rc;
}

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

/* ---- memory left behind ------------------------------------------------ */

long long ee_cgroup_usage(const struct ee_cgroup *cg)
{
	return cg->mem[0] ? read_number(cg->mem, usage_file(cg)) : -1;
}

long long ee_cgroup_pool_usage(const struct ee_cgroup_pool *p)
{
	return read_number_fd(p->fd_usage);
}

/* The file pages (page cache) of memory.stat: what reclaim gives back. The
 * v1 file is about 1.5 KB, with the hierarchy's totals after the cgroup's
 * own figures, which come first. */
static long long file_pages(const struct ee_cgroup *cg)
{
	char path[PATH_MAX + 16], text[8192];
	snprintf(path, sizeof(path), "%s/memory.stat", cg->mem);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	long long sum = 0;
	int found = 0;
	for (char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		long long v;
		if (sscanf(line, "active_file %lld", &v) == 1 ||
		    sscanf(line, "inactive_file %lld", &v) == 1) {
			sum += v;
			found++;
		}
	}
	return found == 2 ? sum : -1;
}

long long ee_cgroup_held(const struct ee_cgroup *cg)
{
	long long usage = ee_cgroup_usage(cg), file = usage < 0 ? -1 : file_pages(cg);
	if (usage < 0 || file < 0)
		return -1;
	return usage > file ? usage - file : 0;
}

int ee_unix_gc_kick(void)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	/* One end in flight on the other: closing both then releases a socket
	 * while descriptors are in flight, which schedules the collector. */
	char byte = 0, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)
	};
	memset(ctl, 0, sizeof(ctl));
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &sv[0], sizeof(int));
	ssize_t n = sendmsg(sv[1], &m, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(sv[1]);
	close(sv[0]);
	return n == 1 ? 0 : -1;
}

/* ---- time spent waiting for a CPU ----------------------------------------- */

/* Threads read at most: a timeout is judged from the first ones listed
 * (a candidate may have thousands under a large --procs). */
#define RUNQ_MAX_THREADS 512

/* Second field of /proc/<tid>/schedstat: ns spent runnable on a run queue
 * without a CPU. -1 when unreadable (the thread ended, no SCHED_INFO). */
static long long run_delay_ns(int tid)
{
	char text[128];
	if (read_proc_file(tid, "schedstat", text, sizeof(text)) <= 0)
		return -1;
	unsigned long long run, wait;
	return sscanf(text, "%llu %llu", &run, &wait) == 2 ? (long long)wait : -1;
}

double ee_cgroup_runq_wait_ms(const struct ee_cgroup *cg)
{
	const char *dir = cg->pids[0] ? cg->pids : cg->mem;
	int v2 = cg->pids[0] ? cg->pids_version == EE_CG_V2 : cg->mem_version == EE_CG_V2;
	char path[PATH_MAX + 32];
	if (!dir[0])
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, v2 ? "cgroup.threads" : "tasks");
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long long longest = -1;
	int tid, seen = 0;
	while (seen++ < RUNQ_MAX_THREADS && fscanf(f, "%d", &tid) == 1) {
		long long ns = run_delay_ns(tid);
		if (ns > longest)
			longest = ns;
	}
	fclose(f);
	return longest < 0 ? -1 : (double)longest / 1e6;
}

/* How old a stale-looking cgroup must be before it is removed: the pid in
 * its name may belong to an execeval in another pid namespace (invisible
 * here), whose fresh cgroup is empty until its sandbox joins it. */
#define SWEEP_MIN_AGE_S 10

/* Whether the execeval that named this cgroup may still be running here:
 * it is this process, or its pid is live and (names with a token) started
 * when the name says. A pid that is live but started later is a new process
 * given the same pid (a restart in a fresh pid namespace, where execeval is
 * pid 1 or 2 every time): the name is stale. An owner in another pid
 * namespace is invisible here; the age and emptiness checks protect it. */
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
		/* A warm pool's top: alive while its worker cgroup holds the
		 * worker (its candidate cgroup is empty between candidates). */
		snprintf(worker, sizeof(worker), "%s/worker", path);
		snprintf(candidate, sizeof(candidate), "%s/candidate", path);
		if (access(worker, F_OK) == 0) {
			if (has_tasks(worker) || has_tasks(candidate))
				continue;
			(void)rmdir(candidate);
			(void)rmdir(worker);
		}
		/* Only an empty one: its sandbox died with its supervisor (the
		 * init has PR_SET_PDEATHSIG). Never kill here: the pid may belong
		 * to a live execeval in another pid namespace. */
		(void)rmdir(path);
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
