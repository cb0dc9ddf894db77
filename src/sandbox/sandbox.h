/* sandbox.h - running the harness in a throw-away, kernel-isolated sandbox.
 *
 * Lifecycle: ee_loop_new once; ee_sandbox_start for each candidate (any
 * number at once); ee_loop_run drives them all until each has finished and
 * been torn down, calling ops->on_result with result-channel bytes as they
 * arrive and ops->on_done once per sandbox; ee_sandbox_free afterwards.
 *
 * Ownership: the loop owns its epoll and signalfd; a sandbox owns its pipes,
 * pidfd, timer and cgroup until on_done, by which time all are released and
 * no process, mount or cgroup of it is left. The config is borrowed for the
 * duration of ee_sandbox_start only.
 *
 * A candidate's crash, timeout or overflow is an outcome, never an error;
 * ee_err is for a sandbox that could not be set up (exit code 3).
 *
 * Signals: the loop ignores SIGPIPE (a sandbox may close its pipes) and
 * blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT and reads
 * them from a signalfd; on one it kills every sandbox, tears each down, and
 * ee_loop_run returns the signal number, so the caller exits 128 + signo
 * with nothing left behind.
 */
#ifndef EE_SANDBOX_H
#define EE_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

#include "base/buf.h"
#include "base/err.h"
#include "sandbox/cgroup.h"

struct ee_host;
struct ee_limits;
struct ee_mount_plan;
struct ee_seccomp_prog;
struct ee_loop;
struct ee_pool;
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
	size_t keep_output;   /* bytes of stdout and of stderr kept for the record */
	int drain_output;     /* output past limits->output_cap is read and dropped
	                         (outcome.output_truncated), not a kill (overflow) */
	struct ee_pool *pool; /* warm: a worker of this pool forks the sandbox
	                         (worker.h); NULL: cold, a clone of this process */
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
	int worker_lost;           /* warm: its worker died or hung mid-candidate (it
	                              is replaced); the outcome is unknown, not a verdict */
	struct ee_cgroup_stats cg; /* -1 fields when no cgroup */
	struct ee_buf out;         /* first keep_output bytes of stdout */
	struct ee_buf err;         /* first keep_output bytes of stderr */
	size_t out_total, err_total;
	double wall_ms;      /* clone to teardown */
	double cpu_ms;       /* user + system of every sandbox process (the
	                              cgroup's count when there is one) */
	double runq_wait_ms; /* timed out: the longest a live thread of it had waited
	                        for a CPU at the deadline; -1 unknown or no timeout */
	long maxrss_kb;      /* largest resident set of any process; -1 when
	                              the sandbox was killed before it reported */
};

struct ee_sandbox_ops {
	void (*on_result)(void *ctx, struct ee_sandbox *sb, const char *p, size_t n);
	void (*on_done)(void *ctx, struct ee_sandbox *sb);
};

int ee_loop_new(struct ee_loop **ret, struct ee_err *err);
void ee_loop_free(struct ee_loop *loop);

/* Runs until no sandbox is active. Returns 0, a signal number (> 0) when
 * interrupted (every sandbox was killed and torn down), or -1 on an
 * internal failure of the loop itself. */
int ee_loop_run(struct ee_loop *loop, struct ee_err *err);

/* One round: waits for events and handles them (callbacks included).
 * Returns 0 (also when nothing is active) or -1. */
int ee_loop_run_once(struct ee_loop *loop, struct ee_err *err);

/* The signal that interrupted the loop, or 0. Once set, callers should
 * start no new sandbox. */
int ee_loop_interrupted(const struct ee_loop *loop);

/* Waits up to timeout_ms (-1: without end) for events, also when no
 * sandbox is active (a server waiting for requests), and handles them.
 * Returns 0 or -1. */
int ee_loop_wait(struct ee_loop *loop, int timeout_ms, struct ee_err *err);

/* Kills every sandbox as a signal does and marks the loop interrupted by
 * signo: their outcomes say interrupted. */
void ee_loop_interrupt(struct ee_loop *loop, int signo);

/* Lets hook decide what a signal does: it returns 1 when it handled the
 * signal itself (e.g. a server that drains first), 0 for the default
 * (ee_loop_interrupt). */
void ee_loop_on_signal(struct ee_loop *loop, int (*hook)(void *ctx, int signo), void *ctx);

/* Another fd for the loop to watch (readable: cb runs on the loop's thread).
 * Remove it before closing fd, and never from within another fd's callback. */
struct ee_loop_fd;
typedef void (*ee_loop_fd_cb)(void *ctx);
int ee_loop_add_fd(struct ee_loop *loop, int fd, ee_loop_fd_cb cb, void *ctx, struct ee_loop_fd **ret,
                   struct ee_err *err);
void ee_loop_remove_fd(struct ee_loop_fd *x);

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

/* Ends the sandbox now (e.g. a protocol violation); outcome.end says killed
 * unless another cause came first. */
void ee_sandbox_kill(struct ee_sandbox *sb);

const struct ee_sandbox_outcome *ee_sandbox_outcome(const struct ee_sandbox *sb);
void ee_sandbox_free(struct ee_sandbox *sb);

#endif
