/* write_watch.h - writes outside /tmp, counted (the tripwires; issue 18).
 *
 * Under EE_SECCOMP_WATCH_WRITES (seccomp.h) the calls that write the file
 * system by path (open and openat with a write flag, mkdir, unlink, rename,
 * link, symlink, chmod, truncate, utime*) stop at the supervisor by user
 * notification (notify.h). It reads the call's paths from the caller's
 * memory, resolves a relative one against the caller's working directory
 * or directory descriptor (as the host's /proc shows them: the sandbox's
 * own paths, its root being the root of its mount namespace), judges them
 * lexically and lets the call continue. The read-only mounts, not this,
 * refuse what lies outside /tmp: what the supervisor read may change
 * before the kernel reads it, which can only make the count wrong, never
 * a write succeed. A symlink inside /tmp pointing out is judged inside
 * (not followed); the mount refuses the write all the same.
 */
#ifndef EE_WRITE_WATCH_H
#define EE_WRITE_WATCH_H

#include <stddef.h>
#include <sys/types.h>

struct seccomp_notif;

/* Where a writing call's paths are: up to two (rename), each a directory
 * descriptor argument (-1: relative to the working directory) and a path
 * argument. */
struct ee_write_call {
	const char *name;
	unsigned n;
	int dirfd_arg[2];
	int path_arg[2];
};

/* The writing call named name, or NULL when it is not one. */
const struct ee_write_call *ee_write_call_find(const char *name);

/* May the candidate write at path: under /tmp or /dev/shm (a link to it),
 * a node of the sandbox's /dev (null, zero, full, random, urandom, tty,
 * stdin, stdout, stderr) or a descriptor's link (/dev/fd/N,
 * /proc/PID/fd/N)? path is absolute or relative to base (absolute; NULL
 * or empty for "/"); judged lexically ("." and ".." folded). 1 or 0. */
int ee_write_path_allowed(const char *base, const char *path);

/* For a notification of call c by the thread req->pid (in the
 * supervisor's pid namespace): 1 when one of its paths lies outside the
 * allowed places, 0 when none does, -1 when they could not be read (then
 * nothing is counted). */
int ee_write_outside_tmp(const struct seccomp_notif *req, const struct ee_write_call *c);

#endif
