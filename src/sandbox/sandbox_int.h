/* sandbox_int.h - what a sandbox's two modules share: the struct and the
 * few steps each takes from the other. Not a public header: everyone else
 * goes through sandbox.h.
 *
 *   start.c    making a sandbox: pipes, the job, a cold clone or a warm
 *              worker's start, until it runs (ee_sandbox_start)
 *   sandbox.c  its life on the loop: watches, the gate, end causes, reap,
 *              memory left pinned, the outcome (everything else)
 */
#ifndef EE_SANDBOX_INT_H
#define EE_SANDBOX_INT_H

#include <time.h>

#include "base/bucket.h"
#include "base/loop.h"
#include "sandbox/sandbox.h"
#include "sandbox/uid.h"

/* W_PIDFD is watched for a cold sandbox (its init is our child); a warm
 * one's init is the worker's child, whose DONE on W_WORKER (a dup of the
 * worker's socket) says it was reaped: its pidfd is only for killing. */
/* W_NOTIFY: the seccomp listener, once the sandbox passed it (notify.h);
 * off the loop (fd kept) while its pace is spent, until W_PACE, a timerfd
 * made at the first pause, fires. */
enum watch_kind { W_PIDFD, W_CTL, W_OUT, W_ERR, W_RESULT, W_TIMER, W_WORKER, W_NOTIFY, W_PACE, W_COUNT };

/* The context of one watch: which sandbox, which of its fds. */
struct watch {
	struct ee_sandbox *sb;
	int kind;
};

struct ee_worker;

struct ee_sandbox {
	struct ee_loop *loop;
	struct ee_loop_job job; /* on the loop from ee_sandbox_start to on_done */
	const struct ee_sandbox_ops *ops;
	void *ctx;
	pid_t pid;
	int fd[W_COUNT]; /* -1 when closed */
	struct watch watch[W_COUNT];
	struct ee_loop_fd *watched[W_COUNT]; /* NULL when not on the loop */
	int gate_fd;                         /* write end of the gate pipe */
	struct ee_loop_fd *gate_watch;       /* while gate_out waits for room */
	char *gate_out; /* answers not yet written (the hidden tests can pass the pipe's size) */
	size_t gate_len, gate_off;
	int gate_last;   /* close gate_fd once gate_out is written */
	int lifeline_fd; /* write end of the sync pipe, held until the end */
	int reaped;
	int killing;     /* warm: killed, waiting for the worker's DONE */
	int worker_hung; /* warm: no DONE within the grace period */
	int done;
	int parked;             /* off the loop's jobs while it waits for work (ee_sandbox_park) */
	int held;               /* its clock stopped (ee_sandbox_hold) */
	double held_ms;         /* since when (CLOCK_MONOTONIC, ms) */
	double expired_ms;      /* its timer fired while held, at: 0 if not */
	double owed_ms;         /* stretches of released holds not yet added to its timer
	                           (on_timer adds them when it fires) */
	int held_charged;       /* the hold charges its CPU meanwhile (ee_sandbox_hold_charged) */
	long long held_cpu_us;  /* its cgroup's CPU at the hold, -1 unknown */
	int cpu_fd;             /* its cgroup's CPU counter, opened at the first charged hold */
	double cycle_ms;        /* charged holds: when its last turn began (0: none yet) */
	long long cycle_cpu_us; /* and its cgroup's CPU then, -1 unknown */
	int settling;           /* ended; waiting for pinned memory to be released */
	int kicks;              /* times the unix garbage collector was scheduled */
	unsigned long notified; /* refused calls answered (notify.h) */
	struct ee_bucket pace;  /* notifications answered, from the listener's arrival */
	struct timespec settle_started;
	size_t output_cap;
	int drain_output;         /* past the cap: read and drop, do not kill */
	struct ee_cgroup cg;      /* cold: its own */
	struct ee_uid uid;        /* cold, as root: its own, until its init is reaped */
	struct ee_worker *worker; /* warm: the worker that forked it */
	int starting;             /* warm: its worker is starting it (see "a warm start") */
	int child_fds[6];         /* warm, starting: the child's ends, until STARTED */
	double timeout_s;         /* warm: the wall clock, armed at STARTED */
	struct timespec started;
	char *gvisor_dir;      /* gvisor: the candidate's bundle, removed at the end */
	char *docker_name;     /* docker: the container's name (docker kill at a kill) */
	int docker_killing;    /* docker: complete, docker kill running (W_PIDFD, W_TIMER) */
	pid_t docker_kill_pid; /* its pid, until reaped */
	const char *docker_client;
	struct ee_sandbox_outcome out;
};

/* ---- sandbox.c ---- */

/* Puts the sandbox on its loop's list of jobs: from now on the loop owns
 * it (an interruption kills it) until on_done. */
void sandbox_join(struct ee_sandbox *sb);
/* Watches fd as sb's kind: sb->fd[kind] takes fd, also when this fails. */
int sandbox_add_watch(struct ee_sandbox *sb, int kind, int fd, struct ee_err *err);
/* As sandbox_add_watch, but while sb is starting the fd is only held:
 * watched from sandbox_watch_held on (start.c, when the worker says the
 * candidate started). Level-triggered, a pipe the candidate wrote to before
 * then (its hello event, its seccomp listener) would wake the loop in a
 * spin, dispatch ignoring it, and take a core from the worker. */
int sandbox_add_watch_when_started(struct ee_sandbox *sb, int kind, int fd, struct ee_err *err);
int sandbox_watch_held(struct ee_sandbox *sb, struct ee_err *err);
/* Stops watching and closes sb->fd[kind], if open. */
void sandbox_close_watch(struct ee_sandbox *sb, int kind);
/* Kills the running sandbox's init (warm: and arms the worker's grace). */
void sandbox_kill_init(struct ee_sandbox *sb);
void sandbox_close_fd(int *fd);

/* ---- start.c ---- */

/* A starting sandbox's event on W_WORKER or W_TIMER: the next step of the
 * warm start, or its end. */
void sandbox_on_start_event(struct ee_sandbox *sb, int kind);
/* Killed while starting: ends it from the loop at its next event. */
void sandbox_give_up_start(struct ee_sandbox *sb);

#endif
