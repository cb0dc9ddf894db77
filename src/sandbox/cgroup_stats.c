/* cgroup_stats.c - what a sandbox cgroup counted, and what it still holds.
 *
 * After a run: CPU time (v1 cpuacct.usage, v2 cpu.stat usage_usec), OOM
 * kills (v1 memory.oom_control "oom_kill N", v2 memory.events), the peak
 * (v1 memory.max_usage_in_bytes, v2 memory.peak) and hits of the pids limit
 * (pids.events "max N"); a warm pool's counters stay open and are read as
 * differences per candidate. Between candidates: the memory still charged
 * (usage minus page cache) and a kick of the unix garbage collector that
 * releases what descriptors in flight pin. At a timeout: how long a thread
 * of the cgroup waited for a CPU.
 */
#include "sandbox/cgroup.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/cgroup_int.h"
#include "sandbox/host.h"

int cgroup_open_in(const char *dir, const char *file, int flags)
{
	char path[PATH_MAX + 64];
	if (!dir[0])
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return open(path, flags | O_CLOEXEC);
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

static long read_key(const char *dir, const char *file, const char *key)
{
	int fd = cgroup_open_in(dir, file, O_RDONLY);
	long v = read_key_fd(fd, key);
	if (fd >= 0)
		close(fd);
	return v;
}

static long long read_number(const char *dir, const char *file)
{
	int fd = cgroup_open_in(dir, file, O_RDONLY);
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
void cgroup_open_counters(struct ee_cgroup_pool *p)
{
	const struct ee_cgroup *c = &p->candidate;
	int v1 = c->mem_version == EE_CG_V1, v2 = c->mem_version == EE_CG_V2;

	p->fd_cpu = c->cpu[0] ? cgroup_open_in(c->cpu, "cpuacct.usage", O_RDONLY)
	            : v2      ? cgroup_open_in(c->mem, "cpu.stat", O_RDONLY)
	                      : -1;
	p->fd_oom = v1   ? cgroup_open_in(c->mem, "memory.oom_control", O_RDONLY)
	            : v2 ? cgroup_open_in(c->mem, "memory.events", O_RDONLY)
	                 : -1;
	p->fd_peak = v1 ? cgroup_open_in(c->mem, "memory.max_usage_in_bytes", O_RDWR) : -1;
	p->fd_usage = c->mem_version ? cgroup_open_in(c->mem, usage_file(c), O_RDONLY) : -1;
	p->fd_pids = cgroup_open_in(c->pids, "pids.events", O_RDONLY);
}

void cgroup_close_counters(struct ee_cgroup_pool *p)
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

int ee_cgroup_open_cpu(const struct ee_cgroup *cg)
{
	return cg->cpu[0]                    ? cgroup_open_in(cg->cpu, "cpuacct.usage", O_RDONLY)
	       : cg->mem_version == EE_CG_V2 ? cgroup_open_in(cg->mem, "cpu.stat", O_RDONLY)
	                                     : -1;
}

long long ee_cgroup_cpu_usec(const struct ee_cgroup *cg, int fd)
{
	if (!cg->cpu[0])
		return read_key_fd(fd, "usage_usec");
	long long ns = read_number_fd(fd);
	return ns < 0 ? -1 : ns / 1000;
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
	if (cgroup_read_proc_file(tid, "schedstat", text, sizeof(text)) <= 0)
		return -1;
	unsigned long long run, wait;
	return sscanf(text, "%llu %llu", &run, &wait) == 2 ? (long long)wait : -1;
}

/* Field 22 of /proc/<tid>/stat: when the thread started, in clock ticks
 * since boot; -1 unreadable. The name (field 2) may hold anything: the
 * fields counted from its closing parenthesis. */
static long long start_ticks(int tid)
{
	char text[1024];
	if (cgroup_read_proc_file(tid, "stat", text, sizeof(text)) <= 0)
		return -1;
	const char *p = strrchr(text, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoll(p + 1, NULL, 10) : -1;
}

long long ee_cgroup_ticks_now(void)
{
	struct timespec t;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &t) < 0)
		return -1;
	return (long long)t.tv_sec * hz + (long long)t.tv_nsec / (1000000000LL / hz);
}

double ee_cgroup_runq_wait_since_ms(const struct ee_cgroup *cg, long long born_since)
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
		if (born_since >= 0 && start_ticks(tid) < born_since)
			continue;
		long long ns = run_delay_ns(tid);
		if (ns > longest)
			longest = ns;
	}
	fclose(f);
	return longest < 0 ? -1 : (double)longest / 1e6;
}

double ee_cgroup_runq_wait_ms(const struct ee_cgroup *cg)
{
	return ee_cgroup_runq_wait_since_ms(cg, -1);
}
