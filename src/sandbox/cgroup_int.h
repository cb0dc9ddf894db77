/* cgroup_int.h - what the cgroup modules share. Not a public header:
 * everyone else goes through cgroup.h.
 *
 *   cgroup.c        making, joining and removing cgroups, writing limits
 *   cgroup_stats.c  their counters, the memory they still hold, run queues
 *   cgroup_name.c   their names, and the sweep of stale ones
 */
#ifndef EE_CGROUP_INT_H
#define EE_CGROUP_INT_H

#include <stddef.h>
#include <sys/types.h>

struct ee_cgroup;
struct ee_cgroup_pool;
struct ee_err;

/* Every cgroup execeval makes is named so (cgroup_name.c). */
#define NAME_PREFIX "execeval."

/* ---- cgroup_stats.c ---- */

/* dir/file opened close-on-exec; -1 when dir is empty (no such cgroup). */
int cgroup_open_in(const char *dir, const char *file, int flags);
/* A pool's candidate counter files, opened once (fds -1 when absent), and
 * closed again. */
void cgroup_open_counters(struct ee_cgroup_pool *p);
void cgroup_close_counters(struct ee_cgroup_pool *p);

/* ---- cgroup_name.c ---- */

/* /proc/<pid>/<name>, one read, NUL-terminated; its length or -1. */
ssize_t cgroup_read_proc_file(int pid, const char *name, char *text, size_t size);
/* A fresh token after a name was taken (EEXIST), or the first one. */
void cgroup_new_token(void);
/* The next name for a cgroup of this process. */
void cgroup_next_name(char name[64]);
/* Takes a shared flock on each of cg's directories, held (close-on-exec
 * fds in cg->held) until cgroup_release: the sign of a live owner that the
 * sweep of every execeval reads. */
int cgroup_hold(struct ee_cgroup *cg, struct ee_err *err);
void cgroup_release(struct ee_cgroup *cg);

#endif
