/* gvisor.h - the gVisor backend: each candidate in its own runsc sandbox.
 *
 * runsc passes only stdin, stdout and stderr into a container, so the
 * harness's descriptors (docs/protocol.md: the job on 3, the result
 * channel on 4, the gate on 5, the pyc on 6) are rebuilt inside it by a
 * relay: execeval itself, bound read-only into the container and started
 * as `execeval __gvisor-relay PYTHON AS_MB` (gvisor_relay.c). Between the two:
 *
 *   supervisor ── pipes ──▶ gVisor init (host, trusted) ──stdin──▶ relay ──fds 3-6──▶ harness
 *              ◀─ pipes ───                             ◀─stdout── frames ◀─ 1, 2, 4 ──
 *
 * The gVisor init (gvisor_launch.c) is the sandbox's init for sandbox.c:
 * the init of a new pid namespace holding runsc and everything runsc
 * starts, so killing it (the wall clock, the output cap) ends them all. It
 * turns the relay's frames back into the supervisor's stdout, stderr,
 * result and control pipes, so sandbox.c, the event validator and the
 * record see exactly what a native sandbox gives them.
 *
 * Frames, relay to init: a type byte, a 4-byte little-endian length, the
 * bytes. Init to relay: a 4-byte length and the job, a 4-byte count and
 * the supervisor's compiled seccomp program (struct sock_filter each), then
 * the gate's bytes as they come; end of file closes the gate.
 *
 * Ownership: struct ee_gvisor is the engine's (ee_gvisor_open/close); it
 * owns a private directory holding the shared read-only root and one
 * bundle directory per running candidate, each removed when its sandbox
 * ends (ee_gvisor_bundle_remove) and all of it at close; the directory of
 * an execeval killed before its close is removed by the next one's open.
 */
#ifndef EE_GVISOR_H
#define EE_GVISOR_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct ee_err;
struct ee_limits;
struct ee_mount_plan;

/* The platforms runsc 20221219 offers (no systrap yet). */
enum ee_gvisor_platform { EE_GVISOR_PTRACE, EE_GVISOR_KVM };

struct ee_gvisor {
	char runsc[PATH_MAX];  /* the runsc binary */
	char relay[PATH_MAX];  /* this execeval binary, bound into each container */
	char dir[PATH_MAX];    /* private: rootfs/ and one b-N/ per candidate */
	char python[PATH_MAX]; /* the interpreter, as the relay starts it */
	int platform;          /* enum ee_gvisor_platform */
	uint64_t next_id;      /* names the next bundle */
	unsigned tmp_mb;       /* the size of each container's /tmp */
	int lock_fd;           /* dir, flock'd shared: not stale while we live */
};

/* What the gVisor sandbox's host cgroup allows beyond the candidate's own
 * limits: runsc's sentry and gofer (Go runtimes, ~40 threads, tens of MB)
 * live in it too. Measured in docs/sandbox.md. */
#define EE_GVISOR_EXTRA_MB   192
#define EE_GVISOR_EXTRA_PIDS 256

/* runsc's start-up, until the harness runs, has a clock of its own: the
 * candidate's starts only then (EE_CTL_STARTED). */
#define EE_GVISOR_START_S 20

/* The runsc this host has: $EXECEVAL_RUNSC, else the first runsc on PATH,
 * else /usr/bin/runsc. -1 with a fix naming Debian's package when none. */
int ee_gvisor_find_runsc(char *path, size_t size, struct ee_err *err);

/* Finds runsc, makes the private directory and the read-only root from the
 * mount plan (directories, symlinks, generated files; the binds become the
 * bundles' mounts). python: the host's interpreter. */
int ee_gvisor_open(struct ee_gvisor *g, int platform, const struct ee_mount_plan *plan, const char *python,
                   struct ee_err *err);
/* Removes everything of the private directory. Accepts a never-opened g. */
void ee_gvisor_close(struct ee_gvisor *g);

/* Writes a candidate's bundle (config.json: mounts, user, rlimits) into a
 * new directory of g's, named into dir (size PATH_MAX); its container id
 * into id (size 64). */
int ee_gvisor_bundle_write(struct ee_gvisor *g, const struct ee_mount_plan *plan, const struct ee_limits *lim,
                           char *dir, char *id, struct ee_err *err);
/* Removes a bundle directory and runsc's state in it (any depth). */
void ee_gvisor_bundle_remove(const char *dir);

/* The relay's entry (main.c dispatches `__gvisor-relay PYTHON AS_MB` to it):
 * inside the container, never returns. */
__attribute__((noreturn)) void ee_gvisor_relay_main(int argc, char **argv);

/* Frame types, relay to init. */
enum {
	EE_GV_STDOUT = 'O',
	EE_GV_STDERR = 'E',
	EE_GV_RESULT = 'R',
	EE_GV_STARTED = 'S', /* the harness was started: from now on, no setup error */
	EE_GV_EXIT = 'X',    /* 4 bytes: the harness's wait status */
	EE_GV_FAILED = 'F',  /* the relay could not start the harness: why */
};

#define EE_GV_FRAME_MAX (1u << 16) /* a frame's bytes, at most */

#endif
