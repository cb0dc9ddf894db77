/* mount.h - the sandbox's root filesystem, as a plan and its execution.
 *
 * Policy is data: a static table names what the interpreter needs from the
 * host (/usr and the merged-/usr symlinks, the loader cache, the time zone),
 * each bound read-only, nosuid, nodev. The host's root is never bound: a
 * file-path UNIX socket of the host stays connectable through a read-only
 * bind even inside an empty network namespace. Everything else is made fresh:
 * a read-only skeleton tmpfs as /, a new /proc, a /dev holding only null,
 * zero, full, random and urandom, and a size-bounded private tmpfs /tmp that
 * is the working directory and HOME.
 *
 * ee_mount_plan() runs in the supervisor (it reads the host's layout once);
 * ee_mount_apply() runs in the sandbox's first process, inside its new mount
 * and pid namespaces, and ends with pivot_root into the new root.
 */
#ifndef EE_MOUNT_H
#define EE_MOUNT_H

#include <limits.h>
#include <stddef.h>

struct ee_err;

enum ee_mount_kind {
	EE_MNT_DIR,     /* an empty directory */
	EE_MNT_SYMLINK, /* a symlink to arg */
	EE_MNT_BIND_RO, /* host path arg bound read-only (dir or file) */
	EE_MNT_DEV,     /* host device node arg bound (read-write, noexec) */
	EE_MNT_TMPFS,   /* a tmpfs of arg's size in MiB, writable */
	EE_MNT_PROC,    /* a new proc for the new pid namespace */
	EE_MNT_FILE,    /* a regular file with content arg */
};

struct ee_mount_step {
	int kind;           /* enum ee_mount_kind */
	int is_dir;         /* BIND_RO: the source is a directory */
	char target[128];   /* absolute path inside the sandbox */
	char arg[PATH_MAX]; /* see kind */
};

#define EE_MOUNT_MAX_STEPS 48

struct ee_mount_plan {
	size_t n;
	struct ee_mount_step steps[EE_MOUNT_MAX_STEPS];
};

/* Builds the plan from the table and the host's layout. tmp_mb sizes /tmp. */
int ee_mount_plan(unsigned tmp_mb, struct ee_mount_plan *plan, struct ee_err *err);

/* Executes plan in the current (new, private) mount namespace, then
 * pivot_roots into it and makes / read-only; cwd is /tmp afterwards. uid
 * is the sandbox's (uid.h): /etc/passwd and /etc/group name it `sandbox`
 * besides nobody (65534 adds nothing). */
int ee_mount_apply(const struct ee_mount_plan *plan, unsigned uid, struct ee_err *err);

/* For a candidate forked from a warm worker, which already lives in an
 * applied plan: in its own new mount namespace, mounts a fresh /proc (of
 * its own pid namespace) and a fresh, empty /tmp over the worker's, and
 * makes that /tmp the cwd. Nothing the previous candidate left is reachable.
 * own_uid: 0 when the candidate runs as the uid the worker's root names;
 * else the uid it runs as (a detached sandbox's own), which its own
 * /etc/passwd and /etc/group then name `sandbox` instead. */
int ee_mount_refresh(const struct ee_mount_plan *plan, unsigned own_uid, struct ee_err *err);

#endif
