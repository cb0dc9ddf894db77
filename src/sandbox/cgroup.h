/* cgroup.h - one cgroup per sandbox: memory (no swap), pids and CPU limits.
 *
 * Works on v1 hierarchies (one directory per controller) and on v2 (one
 * directory for both). A sandbox cgroup is created under this process's own
 * cgroup, named "execeval.<supervisor pid>.<start>-<random>.<serial>"
 * (the supervisor's start time and a random token, since a pid repeats
 * across pid namespaces), so limits of an outer cgroup still apply and stale
 * ones are recognisable. The struct owns the
 * directories it names and, for a top-level one, a shared flock on each
 * directory, held until ee_cgroup_destroy (which removes them and accepts a
 * zeroed or half-built struct): that lock, not a pid, tells every other
 * execeval, in whatever namespaces, that the cgroup's owner is alive. A controller the host lacks is left empty, and the
 * sandbox falls back to rlimits (see doctor).
 */
#ifndef EE_CGROUP_H
#define EE_CGROUP_H

#include <limits.h>
#include <sys/types.h>

struct ee_err;
struct ee_host;
struct ee_limits;

struct ee_cgroup {
	int mem_version;      /* 0 when no memory cgroup */
	int pids_version;     /* 0 when no pids cgroup */
	char mem[PATH_MAX];   /* directory, "" when none */
	char pids[PATH_MAX];  /* directory, "" when none (same as mem on v2) */
	char cpu[PATH_MAX];   /* v1 cpuacct directory, "" when none (v2: mem's cpu.stat) */
	int sched_version;    /* the cpu controller's hierarchy, 0 when none */
	char sched[PATH_MAX]; /* its directory (shares, quota): v1 its own or cpu's when
	                         mounted together, v2 mem's; "" when none */
	int held[4];          /* fds of the directories flock'd shared (cgroup_name.c) */
	int nheld;            /* how many of held[] are open: 0 in a zeroed struct */
};

struct ee_cgroup_stats {
	long oom_kills;     /* processes the OOM killer ended, -1 unknown */
	long pids_max_hits; /* forks refused by pids.max, -1 unknown */
	long peak_kb;       /* peak memory charged to the cgroup, -1 unknown */
	long long cpu_usec; /* CPU time of every process that ever ran in it, -1 unknown */
};

/* Creates the cgroup(s) and writes the limits. Controllers that the host
 * lacks or this process may not use are skipped (cg fields stay empty). */
int ee_cgroup_create(const struct ee_host *h, const struct ee_limits *lim, struct ee_cgroup *cg,
                     struct ee_err *err);

/* Moves the calling process, which must be single-threaded, into every
 * created cgroup (heap-free: called in the sandbox's init before it runs
 * anything else). */
int ee_cgroup_attach_self(const struct ee_cgroup *cg, struct ee_err *err);

/* The warm pool keeps cgroups per worker slot for many candidates: a top
 * "execeval.<pid>.<serial>" (no limits, no process) holding "worker" (the
 * worker process, no limits) and "candidate" (the limits; each candidate
 * joins it). The top always has children and the worker cgroup a process,
 * so no other execeval's sweep of stale cgroups takes them for dead. */
struct ee_cgroup_pool {
	struct ee_cgroup top, worker, candidate;
	int fd_cpu, fd_oom, fd_peak, fd_usage, fd_pids; /* the candidate's counters, -1 if none */
};

int ee_cgroup_pool_create(const struct ee_host *h, const struct ee_limits *lim, struct ee_cgroup_pool *p,
                          struct ee_err *err);
int ee_cgroup_pool_destroy(struct ee_cgroup_pool *p, struct ee_err *err);

/* Rewrites the memory and pids limits (a task's own limits differ). */
int ee_cgroup_set_limits(struct ee_cgroup *cg, const struct ee_limits *lim, struct ee_err *err);

/* Opens the file a process writes "0" to to join each created cgroup (v1
 * `tasks`, v2 `cgroup.procs`): fds ends with -1. Close-on-exec. A warm
 * candidate's init writes them (zygote.c:namespace_init). */
int ee_cgroup_open_attach(const struct ee_cgroup *cg, int fds[5], struct ee_err *err);

/* Before a candidate: resets the peak and snapshots the counters. */
void ee_cgroup_pool_begin(const struct ee_cgroup_pool *p, struct ee_cgroup_stats *base);

/* After it: the candidate cgroup's counters since ee_cgroup_pool_begin. */
void ee_cgroup_pool_stats(const struct ee_cgroup_pool *p, const struct ee_cgroup_stats *base,
                          struct ee_cgroup_stats *st);

/* Reads the counters after a run. */
void ee_cgroup_stats(const struct ee_cgroup *cg, struct ee_cgroup_stats *st);

/* Removes the cgroup(s), waiting briefly for dying tasks. Returns 0 or -1
 * (a directory that would not go; err says which). */
int ee_cgroup_destroy(struct ee_cgroup *cg, struct ee_err *err);

/* Memory left behind. When every process of a sandbox has ended, its
 * memory cgroup should hold only what reclaim gives back (page cache).
 * Descriptors in flight in a cycle of unix sockets (SCM_RIGHTS) outlive
 * their processes until the kernel's unix garbage collector runs, which on
 * an idle host may be minutes away: memfds, a flock, pipes full of data,
 * charged to the cgroup (or, once it is removed, to its parent). */

/* Bytes charged to the memory cgroup (v1 memory.usage_in_bytes, v2
 * memory.current), -1 when there is none. */
long long ee_cgroup_usage(const struct ee_cgroup *cg);
long long ee_cgroup_pool_usage(const struct ee_cgroup_pool *p); /* the candidate cgroup's */

/* Those bytes less the file pages of memory.stat: what reclaim would not
 * give back. -1 when unknown. */
long long ee_cgroup_held(const struct ee_cgroup *cg);

/* Schedules the kernel's unix garbage collector (a socket released while
 * descriptors are in flight does; since 6.10 it then runs as queued work,
 * so its effect shows a little later). Returns 0 or -1 (errno). */
int ee_unix_gc_kick(void);

/* The cgroup's CPU counter, opened once for reads while it runs (the
 * separate judge's clock charges the CPU a candidate used while its clock
 * was held): an fd (close-on-exec, the caller's to close) or -1 when the
 * cgroup has no CPU accounting. ee_cgroup_cpu_usec reads it: the CPU of
 * every process that ever ran in the cgroup, in us, as the kernel has
 * accounted it so far (at its scheduler ticks and switches); -1 unknown. */
int ee_cgroup_open_cpu(const struct ee_cgroup *cg);
long long ee_cgroup_cpu_usec(const struct ee_cgroup *cg, int fd);

/* The longest time one of the cgroup's live threads has waited, runnable,
 * for a CPU (/proc/<tid>/schedstat; at most 512 threads read), in ms; -1
 * when none could be read. Read at a timeout, before the kill: a candidate
 * with a thread that waited for most of its time was starved, not slow. */
double ee_cgroup_runq_wait_ms(const struct ee_cgroup *cg);
/* The same, of the threads started at or after born_since (clock ticks
 * since boot, ee_cgroup_ticks_now; -1: every thread): a session's cell
 * (a fresh fork) without the session's older processes, whose waits span
 * its whole life. */
double ee_cgroup_runq_wait_since_ms(const struct ee_cgroup *cg, long long born_since);
/* Now, in the clock ticks since boot /proc/<pid>/stat counts in; -1 unknown. */
long long ee_cgroup_ticks_now(void);

/* Removes sandbox cgroups left by execeval processes that no longer exist
 * (killed with SIGKILL, power loss): a cgroup is stale when nobody holds
 * its directory's flock (an owner in any pid, mount or user namespace
 * holds it for the cgroup's life, and the kernel drops it when the owner
 * dies), and only when older than a few seconds (the lock is taken just
 * after mkdir). Best effort. */
void ee_cgroup_sweep_stale(const struct ee_host *h);

#endif
