/* sandbox_int.h - what a sandbox's modules share: the struct, the launcher
 * table every backend fills, and the few steps each module takes from
 * another. Not a public header: everyone else goes through sandbox.h.
 *
 *   start.c        making a sandbox: pipes, the job, the launcher its
 *                  config asks for, the watches (ee_sandbox_start)
 *   sandbox.c      its life on the loop, common to every backend: watches,
 *                  output, the gate, the wall clock and its holds, end
 *                  causes, memory left pinned, the outcome
 *   listener.c     its seccomp listener on the loop, paced
 *   launch_cold.c  the cold launcher: a clone of this process
 *   launch_warm.c  the warm launcher: a worker of the pool forks it
 *   launch_session.c  a session's: a worker forks it detached
 *   launch_copy.c  a copy of a session's, made by copy.c, adopted
 *   gvisor_launch.c, docker_run.c  the gVisor and Docker launchers
 *
 * The seam: sandbox.c and start.c never ask which backend a sandbox has;
 * whatever differs is an entry of its struct ee_launcher or of its init's
 * parent (struct ee_init_parent), and a backend's state is its member of
 * sb->part. A new lifecycle (sessions, forks) is a new launcher.
 */
#ifndef EE_SANDBOX_INT_H
#define EE_SANDBOX_INT_H

#include <time.h>

#include "base/bucket.h"
#include "base/loop.h"
#include "sandbox/sandbox.h"
#include "sandbox/uid.h"

/* W_PIDFD is watched when the sandbox's init is our child (cold, gVisor,
 * Docker). W_LAUNCHER is a launcher's own channel, watched instead: warm, a
 * dup of the worker's socket, whose DONE says the init (the worker's child)
 * was reaped; its pidfd is then only for killing. */
/* W_NOTIFY: the seccomp listener, once the sandbox passed it (notify.h);
 * off the loop (fd kept) while its pace is spent, until W_PACE, a timerfd
 * made at the first pause, fires. */
enum watch_kind { W_PIDFD, W_CTL, W_OUT, W_ERR, W_RESULT, W_TIMER, W_LAUNCHER, W_NOTIFY, W_PACE, W_COUNT };

/* The context of one watch: which sandbox, which of its fds. */
struct watch {
	struct ee_sandbox *sb;
	int kind;
};

struct ee_worker;

/* The child's ends of a sandbox's pipes and its job's memfd, made by
 * ee_sandbox_start and closed when it returns: a launch borrows them (an
 * init cloned from here has copies of its own) or takes one (sets it to -1).
 * go is the supervisor's end of the sync pipe, on which one byte lets the
 * init go on; ee_sandbox_start keeps it as the lifeline. -1: none. */
struct ee_launch_fds {
	int sync, go, ctl, job, out, err, result, gate;
};

/* Each launcher's own state: the member of sb->part its sb->launcher
 * uses, set by its launch (the rest of the struct is common). */
struct ee_cold_part {
	struct ee_uid uid; /* as root: its own, until its init is reaped */
};
struct ee_warm_part {
	struct ee_worker *worker; /* the worker that forks it */
	int child_fds[6];         /* starting: the child's ends, until STARTED */
	int hung;                 /* no DONE within the kill's grace */
};
struct ee_gvisor_part {
	char *dir; /* the candidate's bundle, removed at the end */
};
struct ee_session_part {
	struct ee_uid uid;        /* its own, until its init is gone */
	struct ee_worker *worker; /* starting: the worker that forks it */
	int child_fds[6];         /* starting: the child's ends, until STARTED */
	int join[5];              /* starting: its cgroups' join files */
	unsigned tmp_mb;          /* a copy's (launch_copy.c): its fresh /tmp's size */
};
struct ee_docker_part {
	char *name;         /* the container's name (docker kill at a kill) */
	const char *client; /* the docker client */
	pid_t kill_pid;     /* docker kill's, until reaped */
};

/* Who the sandbox's init is a child of, and so who sees it end and whose
 * cgroup counts it: the supervisor, with a cgroup of the sandbox's own
 * (cold, gVisor, Docker: ee_parent_supervisor, launch_cold.c), or a warm
 * worker, with the slot's pooled cgroup (launch_warm.c). */
struct ee_init_parent {
	int kick_unix_gc; /* schedule the unix collector at every end (a fresh
	                     cgroup; warm: the worker does) */
	/* Watches what says the sandbox ended: the init's pidfd (taken, also on
	 * failure), or the launcher's channel (W_LAUNCHER). */
	int (*watch)(struct ee_sandbox *sb, int pidfd, struct ee_err *err);
	/* While sb->starting: an event of W_LAUNCHER or W_TIMER. */
	void (*on_start_event)(struct ee_sandbox *sb, int kind);
	/* Running: its channel (W_LAUNCHER) is readable. */
	void (*on_channel)(struct ee_sandbox *sb);
	/* The cgroup the candidate's processes are counted in. */
	const struct ee_cgroup *(*cgroup_of)(const struct ee_sandbox *sb);
	/* SIGKILL went to the init: an end that is not certain arms a grace on
	 * the timer and sets sb->killing. */
	void (*killed)(struct ee_sandbox *sb);
	/* The timer fired while sb->killing: the grace ran out. */
	void (*grace_over)(struct ee_sandbox *sb);
	/* Its cgroup still holds more than tolerance bytes over its baseline. */
	int (*holds_pinned)(struct ee_sandbox *sb, long long tolerance);
	/* It still did after ms of settling: what to do with it. */
	void (*still_pinned)(struct ee_sandbox *sb, double ms);
};

extern const struct ee_init_parent ee_parent_supervisor;

/* What differs between backends, one table each (ee_launcher_cold, _warm,
 * _gvisor, _docker), picked by start.c:launcher_of from the config. Every
 * entry is filled. The steps are called in the orders of docs/sandbox.md
 * ("Set-up order", "Teardown order"). */
struct ee_launcher {
	int sync_pipe;        /* its init waits for a byte on a sync pipe (f->go) */
	int clock_at_started; /* the wall clock restarts at the init's
	                         EE_CTL_STARTED (gVisor, Docker: sandbox.c:on_ctl) */
	const struct ee_init_parent *parent;
	/* In place of the clone: whatever the backend needs (cgroup, uid,
	 * bundle, worker), then the init. On success *pidfd is the init's
	 * (warm: -1, still starting: sb->starting). */
	int (*launch)(struct ee_sandbox *sb, const struct ee_sandbox_config *cfg, struct ee_launch_fds *f,
	              int *pidfd, struct ee_err *err);
	/* The timer's first deadline, in seconds from now. */
	double (*first_timer_s)(const struct ee_sandbox *sb, const struct ee_sandbox_config *cfg);
	/* At the end (sandbox.c:complete), the uid and the counters
	 * (sb->out.cg); warm: the worker is idle again. */
	void (*release)(struct ee_sandbox *sb);
	/* After the cgroup's removal: 1 when the end goes on from the loop
	 * (Docker: docker kill), whose events then go to on_linger_event. */
	int (*ended)(struct ee_sandbox *sb);
	/* Lingering: an event; 1 when the end is over (on_done follows). */
	int (*on_linger_event)(struct ee_sandbox *sb, int kind);
	/* Frees sb->part: at ee_sandbox_free, or when the start failed after
	 * launch was called (then also half-launched). */
	void (*discard)(struct ee_sandbox *sb);
};

extern const struct ee_launcher ee_launcher_cold, ee_launcher_warm, ee_launcher_gvisor, ee_launcher_docker,
        ee_launcher_session, ee_launcher_copy;

struct ee_sandbox {
	struct ee_loop *loop;
	struct ee_loop_job job; /* on the loop from ee_sandbox_start to on_done */
	const struct ee_sandbox_ops *ops;
	void *ctx;
	const struct ee_launcher *launcher; /* set just before its launch */
	/* Its init's parent: its launcher's, but the supervisor's (with an
	 * empty cgroup of its own) once a warm start ended with nothing run. */
	const struct ee_init_parent *parent;
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
	int starting; /* its launcher is still starting it (warm: see launch_warm.c) */
	int killing;  /* killed, the timer counts the launcher's grace (warm) */
	int done;
	int lingering;          /* done, its launcher's end still runs (Docker's docker kill) */
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
	int drain_output;    /* past the cap: read and drop, do not kill */
	struct ee_cgroup cg; /* its own (cold, gVisor, Docker); warm: none, its worker's */
	double timeout_s;    /* the wall clock of a late start (warm: at STARTED;
	                      gVisor, Docker: at EE_CTL_STARTED) */
	struct timespec started;
	union {
		struct ee_cold_part cold;
		struct ee_warm_part warm;
		struct ee_gvisor_part gvisor;
		struct ee_docker_part docker;
		struct ee_session_part session;
	} part; /* its launcher's own state */
	struct ee_sandbox_outcome out;
};

/* ---- sandbox.c ---- */

/* Puts the sandbox on its loop's list of jobs: from now on the loop owns
 * it (an interruption kills it) until on_done. */
void sandbox_join(struct ee_sandbox *sb);
/* Watches fd as sb's kind: sb->fd[kind] takes fd, also when this fails. */
int sandbox_add_watch(struct ee_sandbox *sb, int kind, int fd, struct ee_err *err);
/* As sandbox_add_watch, but while sb is starting the fd is only held:
 * watched from sandbox_watch_held on (launch_warm.c, when the worker says
 * the candidate started). Level-triggered, a pipe the candidate wrote to before
 * then (its hello event, its seccomp listener) would wake the loop in a
 * spin, dispatch ignoring it, and take a core from the worker. */
int sandbox_add_watch_when_started(struct ee_sandbox *sb, int kind, int fd, struct ee_err *err);
int sandbox_watch_held(struct ee_sandbox *sb, struct ee_err *err);
/* Takes sb->fd[kind] off the loop, open; sandbox_rewatch puts it back
 * (nothing when closed or watched). */
void sandbox_unwatch(struct ee_sandbox *sb, int kind);
int sandbox_rewatch(struct ee_sandbox *sb, int kind, struct ee_err *err);
/* Stops watching and closes sb->fd[kind], if open. */
void sandbox_close_watch(struct ee_sandbox *sb, int kind);
/* Kills the running sandbox's init, then tells its launcher (killed). */
void sandbox_kill_init(struct ee_sandbox *sb);
void sandbox_close_fd(int *fd);
/* CLOCK_MONOTONIC, in ms. */
double sandbox_now_ms(void);

/* ---- listener.c ---- */

/* The seccomp listener came on the control socket: watched (fd taken). */
void sandbox_listener_arrived(struct ee_sandbox *sb, int fd);
/* Events of W_NOTIFY and W_PACE. */
void sandbox_on_notify(struct ee_sandbox *sb);
void sandbox_on_pace(struct ee_sandbox *sb);

/* ---- start.c ---- */

/* Sets the one-shot timer fd to seconds from now (0: at once). */
int sandbox_set_timer(int fd, double seconds, struct ee_err *err);
/* Killed while starting: ends it from the loop at its next event. */
void sandbox_give_up_start(struct ee_sandbox *sb);

/* ---- launch_cold.c: entries other launchers share ---- */

/* Its own cgroup's counters into sb->out.cg (gVisor, Docker). */
void sandbox_own_release(struct ee_sandbox *sb);
/* A cgroup of its own: cgroup_of, holds_pinned (a fresh cgroup's baseline
 * is 0), still_pinned (said on stderr); a step with nothing to do. */
const struct ee_cgroup *sandbox_own_cgroup(const struct ee_sandbox *sb);
int sandbox_own_holds_pinned(struct ee_sandbox *sb, long long tolerance);
void sandbox_own_still_pinned(struct ee_sandbox *sb, double ms);
void sandbox_no_step(struct ee_sandbox *sb);
/* Watches a dup of worker w's socket as W_LAUNCHER (launch_warm.c; the
 * session launcher's start too): again after each step of a start, as the
 * worker may be a new one. */
int sandbox_watch_worker(struct ee_sandbox *sb, const struct ee_worker *w, struct ee_err *err);

/* The start of a sandbox a worker forks (launch_warm.c; the session
 * launcher's too), one event (kind: W_LAUNCHER or W_TIMER) at a time: the
 * worker's next step, STARTED handed to started(), or the end of a start
 * that cannot be (given up, failed: the sandbox ends with nothing to
 * reap). What differs is the launcher's: where it holds the worker, what
 * it drops of the start's (drop_start: the child's fds it holds), and
 * whether a lost worker lets the caller start the sandbox afresh. */
struct sandbox_worker_start {
	struct ee_worker **(*worker)(struct ee_sandbox *sb);
	void (*started)(struct ee_sandbox *sb, int pidfd);
	void (*drop_start)(struct ee_sandbox *sb);
	int lost_restarts; /* a lost worker sets out.worker_lost */
};
void sandbox_worker_start_event(struct ee_sandbox *sb, const struct sandbox_worker_start *how, int kind);
/* Nothing ran: the sandbox ends with no process to reap; err, when given,
 * says why (a sandbox error, not a verdict). */
void sandbox_worker_start_end(struct ee_sandbox *sb, const struct sandbox_worker_start *how,
                              const struct ee_err *err);
/* ---- launch_session.c: what the copy launcher shares ----
 * A detached sandbox (a session's, a copy's): its init is not our child,
 * its part is struct ee_session_part. */

/* It runs: its pidfd kept for the kill (W_PIDFD) and a dup watched as its
 * channel, which says its end; its clock armed; the start's fds dropped. */
void sandbox_detached_started(struct ee_sandbox *sb, int pidfd);
/* Its init ended: every process of it is gone (on_channel). */
void sandbox_detached_ended(struct ee_sandbox *sb);
/* The child's ends and join files the start held, closed. */
void sandbox_detached_drop_start(struct ee_sandbox *sb);
/* At the end: its uid and counters (release); freeing its part (discard). */
void sandbox_detached_release(struct ee_sandbox *sb);
void sandbox_detached_discard(struct ee_sandbox *sb);

/* Nothing after the cgroup's removal; never lingering. */
int sandbox_nothing_after(struct ee_sandbox *sb);
int sandbox_no_linger(struct ee_sandbox *sb, int kind);

#endif
