/* host.h - what this host offers the sandbox, probed once per process.
 *
 * The probe only reads (/proc/self/cgroup, /proc/self/mountinfo, /proc/sys,
 * its own capabilities) and forks one throw-away child to try a user
 * namespace; it changes nothing. `execeval doctor` prints it; the sandbox
 * decides from it which controls to use and which fallbacks (rlimits for a
 * missing cgroup controller), and ee_host_usable refuses a host where a
 * sandbox would not hold (exit 3) before any candidate runs.
 */
#ifndef EE_HOST_H
#define EE_HOST_H

#include <limits.h>
#include <stddef.h>

struct ee_err;

enum ee_cgroup_version { EE_CG_NONE = 0, EE_CG_V1 = 1, EE_CG_V2 = 2 };

/* Where sandbox cgroups of one controller are created. */
struct ee_cg_controller {
	int version;        /* enum ee_cgroup_version; 0 when none can be used */
	int writable;       /* this process may create cgroups in dir */
	char dir[PATH_MAX]; /* this process's own cgroup in that hierarchy */
	char why[512];      /* version 0: why the host's hierarchy cannot be
	                       used; "" when the host simply has none */
};

struct ee_host {
	int is_root;                /* uid 0 of the host's user namespace: no user namespace needed */
	int userns;                 /* an unprivileged user namespace can be made */
	int seccomp;                /* seccomp filters are available */
	unsigned cap_last_cap;      /* highest capability number of the kernel */
	unsigned long long cap_eff; /* effective capabilities, bit n = capability n */
	struct ee_cg_controller memory;
	struct ee_cg_controller pids;
	struct ee_cg_controller cpuacct; /* v1 only; on v2 cpu.stat is always there */
	struct ee_cg_controller cpu;     /* the scheduler's: shares and quota per sandbox */
	char python[PATH_MAX];           /* the interpreter candidates run with */
};

/* A capability the sandbox needs when execeval runs as root. */
struct ee_cap_need {
	int cap;              /* CAP_* number */
	const char *name;     /* as docker --cap-add and Kubernetes spell it */
	const char *used_for; /* what the sandbox does with it */
};

#define EE_HOST_N_CAPS 5
extern const struct ee_cap_need ee_host_caps[EE_HOST_N_CAPS];

/* Fills h. Fails only when /proc is unreadable or capget fails. */
int ee_host_probe(struct ee_host *h, struct ee_err *err);

/* Whether sandboxes get a memory cgroup (else RLIMIT_AS, --weak-limits). */
int ee_host_has_memory_cgroup(const struct ee_host *h);

/* Whether the sandbox can run at all on this host, with a fix in err. */
int ee_host_usable(const struct ee_host *h, struct ee_err *err);

/* The needed capabilities missing from cap_eff, as "SETUID, KILL" in ret
 * ("" when none). Returns how many. */
int ee_host_missing_caps(unsigned long long cap_eff, char *ret, size_t len);

/* Locates this process's cgroup of controller (a v1 hierarchy), or of the
 * unified hierarchy (controller NULL), from the texts of
 * /proc/self/mountinfo and /proc/self/cgroup: the mount point plus the
 * cgroup's path below the mount's root (a container without its own cgroup
 * namespace mounts /docker/<id> of the hierarchy, not its root); a mount
 * hidden by a later one at the same point is passed over. Returns 1
 * with c->version and c->dir set; 0 otherwise, with c->why saying why when
 * the hierarchy is there but unusable (the cgroup lies outside every mount
 * of it). Reads no file: c->writable is left 0. */
int ee_cg_locate(const char *mountinfo, const char *proc_cgroup, const char *controller,
                 struct ee_cg_controller *c);

#endif
