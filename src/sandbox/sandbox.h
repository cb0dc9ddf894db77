/* sandbox.h - running the harness in a throw-away, kernel-isolated sandbox.
 *
 * Lifecycle: ee_loop_new once (base/loop.h); ee_sandbox_start for each
 * candidate (any number at once); ee_loop_run drives them all until each
 * has finished and been torn down, calling ops->on_result with
 * result-channel bytes as they arrive and ops->on_done once per sandbox;
 * ee_sandbox_free afterwards (from on_done, say).
 *
 * Ownership: a sandbox owns its pipes, pidfd, timer and cgroup until
 * on_done, by which time all are released and no process, mount or cgroup
 * of it is left. The config is borrowed for the duration of
 * ee_sandbox_start only.
 *
 * A candidate's crash, timeout or overflow is an outcome, never an error;
 * ee_err is for a sandbox that could not be set up (exit code 3).
 *
 * Signals: each sandbox is a job of the loop (base/loop.h); when the loop
 * is interrupted (a signal, ee_loop_interrupt) it kills every sandbox,
 * whose outcomes say interrupted, tears each down, and ee_loop_run returns
 * the signal number, so the caller exits 128 + signo with nothing left
 * behind.
 */
#ifndef EE_SANDBOX_H
#define EE_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/tally.h"
#include "sandbox/cgroup.h"

struct ee_host;
struct ee_limits;
struct ee_mount_plan;
struct ee_seccomp_prog;
struct ee_loop;
struct ee_pool;
struct ee_gvisor;
struct ee_docker;
struct ee_sandbox;

/* The fd numbers the harness sees (docs/protocol.md). */
enum { EE_FD_JOB = 3, EE_FD_RESULT = 4, EE_FD_GATE = 5, EE_FD_CODE = 6 };

struct ee_sandbox_config {
	const struct ee_host *host;
	const struct ee_limits *limits;
	const struct ee_mount_plan *mounts;
	const struct ee_seccomp_prog *seccomp;
	const char *const *argv; /* argv[0] is the program path */
	int code_fd;             /* borrowed; becomes EE_FD_CODE, or -1 for none */
	const char *job;         /* copied into a sealed memfd: fd 3 */
	size_t job_len;
	size_t keep_output;           /* bytes of stdout and of stderr kept for the record */
	int drain_output;             /* output past limits->output_cap is read and dropped
	                         (outcome.output_truncated), not a kill (overflow) */
	struct ee_pool *pool;         /* warm: a worker of this pool forks the sandbox
	                         (worker.h); NULL: cold, a clone of this process */
	struct ee_pool *session_pool; /* a worker of this pool forks the sandbox detached, in
	                                 a cgroup and uid of its own (a session: worker.h,
	                                 ee_pool_claim_detached); NULL: not */
	int copy;                     /* a copy of a session, made by copy.c and adopted
	                                 (launch_copy.c); no process is started here */
	struct ee_gvisor *gvisor;     /* not NULL: the gVisor backend (gvisor.h), cold */
	struct ee_docker *docker;     /* not NULL: the Docker backend (docker_run.h), cold */
	double start_allowance_s;     /* wall-clock seconds on top of limits->timeout_s
	                             until the holder rearms it (ee_sandbox_rearm):
	                             the separate judge's start; its CPU limit
	                             stays limits->timeout_s's */
};

/* What ended a sandbox that ran. The first cause wins: a kill for one
 * reason is not relabelled by another that comes while the sandbox dies. */
enum ee_sandbox_end {
	EE_END_RAN,             /* it ended by itself (the wait status says how) */
	EE_END_TIMEOUT,         /* the wall clock expired and we killed it */
	EE_END_OUTPUT_OVERFLOW, /* stdout + stderr passed the cap; killed */
	EE_END_KILLED           /* ee_sandbox_kill was called */
};

struct ee_sandbox_outcome {
	int setup_failed;        /* the sandbox never ran the payload */
	struct ee_err setup_err; /* why, when setup_failed */
	int have_status;         /* the payload's wait status is known */
	int status;              /* wait status of the payload (the harness) */
	int end;                 /* enum ee_sandbox_end */
	int output_truncated;    /* drain_output: stdout + stderr passed the cap; the
	                              rest was read and dropped, the sandbox ran on */
	/* Not end causes: whatever ended the sandbox, these say there is no
	 * verdict to give. */
	int interrupted;           /* killed because the loop caught a signal: the
	                              candidate's outcome is unknown, not a verdict */
	int worker_lost;           /* warm: its worker died or hung mid-candidate, or
	                              while starting it once RUN had gone out (it is
	                              replaced); the outcome is unknown, not a verdict */
	struct ee_cgroup_stats cg; /* -1 fields when no cgroup */
	struct ee_buf out;         /* first keep_output bytes of stdout */
	struct ee_buf err;         /* first keep_output bytes of stderr */
	size_t out_total, err_total;
	double wall_ms;          /* clone to teardown */
	double cpu_ms;           /* user + system of every sandbox process (the
	                              cgroup's count when there is one) */
	double runq_wait_ms;     /* timed out: the longest a live thread of it had waited
	                        for a CPU at the deadline; -1 unknown or no timeout */
	double runq_wall_ms;     /* its wall time when runq_wait_ms was read: a starved
	                            sandbox is slow to die too, so wall_ms is longer */
	long maxrss_kb;          /* largest resident set of any process; -1 when
	                              the sandbox was killed before it reported */
	struct ee_tally refused; /* system calls refused, by name (notify.h) */
	int paced;               /* its notifications outran EE_NOTIFY_RATE: it waited */
};

struct ee_sandbox_ops {
	void (*on_result)(void *ctx, struct ee_sandbox *sb, const char *p, size_t n);
	void (*on_done)(void *ctx, struct ee_sandbox *sb);
};

/* The wall clock a sandbox started with cfg gets: limits->timeout_s +
 * start_allowance_s (armed when its harness starts). */
double ee_sandbox_first_clock_s(const struct ee_sandbox_config *cfg);

int ee_sandbox_start(struct ee_loop *loop, const struct ee_sandbox_config *cfg,
                     const struct ee_sandbox_ops *ops, void *ctx, struct ee_sandbox **ret,
                     struct ee_err *err);

/* Sends p[0..n) on the gate fd, from the loop without blocking (copied;
 * what the pipe does not take waits for EPOLLOUT): the gate's answer ('c'
 * and the hidden tests, or 's'), or a strict program's go-on/stop after a
 * call; last closes the fd once it is written (no question can follow). */
int ee_sandbox_gate(struct ee_sandbox *sb, const char *p, size_t n, int last);

/* Moves the wall-clock deadline ms later (earlier when negative: at most to
 * now); nothing once the clock ran out or the sandbox is dying. */
void ee_sandbox_extend(struct ee_sandbox *sb, double ms);

/* For a sandbox that serves one evaluation after another (the long-lived
 * judge, evaluate_judge.c): sets the wall clock to ms from now, or stops
 * it (ms <= 0); nothing while it starts, dies or has timed out. */
void ee_sandbox_rearm(struct ee_sandbox *sb, double ms);

/* Held, the wall clock stops: at the release it goes on with what was
 * left (a timer that ran out meanwhile fires then, not before). A sandbox
 * still starting starts its clock held. Bounded by its holder: the
 * separate judge's candidate is held until the judge says hello. */
void ee_sandbox_hold(struct ee_sandbox *sb, int held);

/* A hold that charges the CPU the sandbox's cgroup uses while it lasts
 * (every process and thread of it): at the release its clock goes on
 * with what was left, less that CPU. The separate judge's candidate
 * between two calls (evaluate_judge.c): waiting for the judge costs it
 * nothing, computing meanwhile costs it as much as ever. Where the
 * cgroup's CPU cannot be read, the whole stretch counts (no hold). */
void ee_sandbox_hold_charged(struct ee_sandbox *sb, int held);

/* Parked, a running sandbox is no job of its loop: ee_loop_run returns
 * without waiting for it and an interruption does not reach it (its owner
 * kills it); its fds stay watched, so its end still comes to on_done. */
void ee_sandbox_park(struct ee_sandbox *sb, int parked);

/* Ends the sandbox now (e.g. a protocol violation); outcome.end says killed
 * unless another cause came first. */
void ee_sandbox_kill(struct ee_sandbox *sb);

const struct ee_sandbox_outcome *ee_sandbox_outcome(const struct ee_sandbox *sb);

/* The counters of a running cold sandbox's own cgroup now (a session
 * between its cells); -1 fields where unknown (no cgroup, warm, gVisor). */
void ee_sandbox_cgroup_now(const struct ee_sandbox *sb, struct ee_cgroup_stats *st);
/* The longest a thread of that cgroup started at or after born_since
 * (cgroup.h, ee_cgroup_ticks_now) has waited for a CPU, in ms; -1 unknown
 * (as ee_sandbox_cgroup_now). */
double ee_sandbox_runq_wait_ms(const struct ee_sandbox *sb, long long born_since);
void ee_sandbox_free(struct ee_sandbox *sb);

/* ---- forking a session (copy.h, launch_copy.c) ---- */

struct ee_copy_target;
/* A running session's sandbox sb, to be copied: into plan (copy.h), the
 * seccomp listener of its filter (held by filter_sb: sb's own, or for a
 * copy its family's first session's), taken off the loop (the fork's
 * helper answers it meanwhile), and sb's cgroup's process list and pids
 * limit, opened (ee_sandbox_fork_close closes them). ee_sandbox_fork_done
 * puts the listener back (the copies' refused calls come to it too). */
struct ee_copy_plan;
int ee_sandbox_fork_begin(struct ee_sandbox *sb, struct ee_sandbox *filter_sb, struct ee_copy_plan *plan,
                          struct ee_err *err);
void ee_sandbox_fork_close(struct ee_copy_plan *plan);
void ee_sandbox_fork_done(struct ee_sandbox *filter_sb);
/* A copy's sandbox (config.copy), still starting: what its copy is to be
 * given (fds borrowed until it starts or fails); -1 when not one. */
int ee_sandbox_copy_target(struct ee_sandbox *sb, struct ee_copy_target *t);
/* The helper made its copy (pid, running): adopted. Or it did not. */
void ee_sandbox_copy_started(struct ee_sandbox *sb, pid_t pid);
void ee_sandbox_copy_failed(struct ee_sandbox *sb, const struct ee_err *err);

#endif
