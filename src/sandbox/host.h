/* host.h - what this host offers the sandbox, probed once per process.
 *
 * The probe only reads (/proc/self/cgroup, /proc/self/mountinfo, /proc/sys)
 * and forks one throw-away child to try a user namespace; it changes nothing.
 * `execeval doctor` prints it; the sandbox decides from it which controls to
 * use and which fallbacks (rlimits for a missing cgroup controller).
 */
#ifndef EE_HOST_H
#define EE_HOST_H

#include <limits.h>

struct ee_err;

enum ee_cgroup_version { EE_CG_NONE = 0, EE_CG_V1 = 1, EE_CG_V2 = 2 };

/* Where sandbox cgroups of one controller are created. */
struct ee_cg_controller {
	int version;        /* enum ee_cgroup_version */
	int writable;       /* this process may create cgroups in dir */
	char dir[PATH_MAX]; /* this process's own cgroup in that hierarchy */
};

struct ee_host {
	int is_root;           /* effective uid 0: no user namespace needed */
	int userns;            /* an unprivileged user namespace can be made */
	int seccomp;           /* seccomp filters are available */
	unsigned cap_last_cap; /* highest capability number of the kernel */
	struct ee_cg_controller memory;
	struct ee_cg_controller pids;
	struct ee_cg_controller cpuacct; /* v1 only; on v2 cpu.stat is always there */
	char python[PATH_MAX];           /* the interpreter candidates run with */
};

/* Fills h. Fails only when /proc is unreadable. */
int ee_host_probe(struct ee_host *h, struct ee_err *err);

/* Whether the sandbox can run at all on this host, with a fix in err. */
int ee_host_usable(const struct ee_host *h, struct ee_err *err);

#endif
