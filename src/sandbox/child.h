/* child.h - the code that runs inside a new sandbox, between clone and exec.
 *
 * Two processes: the sandbox's init (pid 1 of its pid namespace), which
 * builds the root, drops every privilege, loads seccomp and forks the
 * payload; and the payload, which puts the harness's descriptors in place,
 * sets rlimits and execs the interpreter with an environment rebuilt from an
 * allow-list. init reaps orphans until the payload ends, reports the
 * payload's wait status on the control pipe and exits, which makes the kernel
 * kill everything else in the namespace (daemons included).
 *
 * Nothing here allocates; failures are written whole as a control message.
 */
#ifndef EE_CHILD_H
#define EE_CHILD_H

#include <sys/resource.h>

#include "base/err.h"

struct ee_host;
struct ee_limits;
struct ee_mount_plan;
struct ee_seccomp_prog;
struct ee_cgroup;

/* STARTED: the gVisor init's (gvisor_launch.c): the harness runs now, so
 * the wall clock starts (runsc's own start-up is not the candidate's time).
 * LISTENER: carries the seccomp listener (notify.h) as SCM_RIGHTS; the
 * control channel is a SOCK_SEQPACKET pair for it. */
enum { EE_CTL_ERROR = 1, EE_CTL_EXIT = 2, EE_CTL_STARTED = 3, EE_CTL_LISTENER = 4 };

/* One message on the control pipe (smaller than PIPE_BUF: written whole). */
struct ee_ctl_msg {
	int type;          /* EE_CTL_* */
	int status;        /* EXIT: the payload's wait status */
	struct ee_err err; /* ERROR: what failed */
};

struct ee_child_fds {
	int sync;                        /* read end: the supervisor's go (maps, cgroup done);
	                        its hang-up later means the supervisor died */
	int ctl;                         /* write end of the control pipe */
	int job, out, err, result, gate; /* become fds 3, 1, 2, 4, 5 */
	int code;                        /* becomes fd 6 when >= 0 (the harness's pyc) */
};

struct ee_child_args {
	const struct ee_host *host;
	const struct ee_limits *limits;
	const struct ee_mount_plan *mounts;
	const struct ee_seccomp_prog *seccomp;
	const char *const *argv;
	const struct ee_cgroup *cgroup; /* to join first thing (borrowed copy) */
	int use_cgroup_ns;              /* unshare a cgroup namespace after being attached */
	int have_memory_cg;             /* else RLIMIT_AS stands in for the memory limit */
	int have_pids_cg;               /* else RLIMIT_NPROC stands in (root only) */
	unsigned uid;                   /* as root: the host uid and gid to run as (uid.h) */
	struct ee_child_fds fds;

	/* Warm (zygote.c): this process was cloned by a worker that already
	 * lives in a prepared root and network namespace, with a clean
	 * environment, into a pid namespace whose init the worker made and
	 * fresh mount, ipc and uts namespaces. It is
	 * the payload itself (no init of its own): it joins its pooled cgroup
	 * through cgroup_fds (files opened before the worker's root was built;
	 * -1 ends the list), mounts a fresh /proc and /tmp (ee_mount_refresh)
	 * instead of building a root, and calls enter() instead of execve. */
	int warm;
	int own_account; /* warm, detached: uid is not the one the worker's root names */
	const int *cgroup_fds;
	__attribute__((noreturn)) void (*enter)(void);
};

/* The environment the sandbox's processes get: fixed values, nothing from
 * the host (NULL-terminated). */
extern char *const ee_child_clean_env[];

/* Where the process's command line lives (main's argv), for a cold init to
 * wipe its copy as it wipes the environment. */
void ee_child_note_argv(char **argv);

/* Never returns. */
__attribute__((noreturn)) void ee_child_main(const struct ee_child_args *a);

/* Empties the capability bounding set (which capabilities an exec could
 * ever regain). */
int ee_child_drop_bounding_set(const struct ee_host *h, struct ee_err *err);

#endif
