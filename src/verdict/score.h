/* score.h - from what happened to a status, a detail, a score and a reward.
 *
 * Pure: no I/O, no sandbox. The inputs are facts the supervisor established
 * itself (the clock, the cgroup counters, the wait status, the validated event
 * stream, its own judgement of io/call tests); nothing a candidate printed.
 *
 * Precedence, first match wins (docs/statuses.md lists every detail):
 *   timeout ("timeout", or "timeout (starved: N ms of CPU)" when a thread
 *   of it waited for a CPU for over half its wall time and it ran for
 *   under a quarter of it) >
 *   output overflow > memory limit (an OOM kill or a MemoryError,
 *   unless everything passed) >
 *   protocol violation > syntax > scan block > import failure >
 *   incomplete stream (signal, cpu/file limits, premature exit) >
 *   a test that exited, overflowed or hit a denied import >
 *   a test out of its --test-timeout (timeout, "test N timed out", scored
 *   by the tests that passed: the others were judged) > a failed test >
 *   pass.
 * A pids-limit hit turns any non-pass but a timeout (and the three limits
 * above it) into error / "process limit".
 */
#ifndef EE_SCORE_H
#define EE_SCORE_H

#include <stddef.h>

enum ee_status { EE_PASS, EE_ASSERTION_FAIL, EE_SYNTAX_ERROR, EE_TIMEOUT, EE_ERROR };

enum ee_test_state { EE_T_NOT_RUN, EE_T_PASS, EE_T_FAIL, EE_T_SKIPPED };

struct ee_test_outcome {
	int state; /* enum ee_test_state */
	double weight;
	int index;           /* index in the task */
	int exited;          /* the candidate tried to end the interpreter */
	int overflow;        /* io: its output passed the cap */
	int timed_out;       /* it ran out of its own clock (--test-timeout) */
	int slow;            /* over its calibrated limit: message is "slow: Nx the reference" */
	const char *denied;  /* denied import that failed it, or NULL */
	const char *message; /* why it failed, or NULL */
};

struct ee_verdict_in {
	int timed_out, output_overflow, oom_killed, pids_limit_hit;
	int have_status, status;    /* the harness's wait status */
	const char *protocol_error; /* NULL when the stream was well-formed */
	int done;                   /* the stream ended with "done" */
	const char *syntax_error;   /* message when the syntax phase failed */
	const char *scan_block;     /* finding code when the scan blocked */
	int import_failed, import_exit, import_setup;
	const char *import_denied, *import_message;
	const struct ee_test_outcome *tests; /* in run order: public, then hidden */
	size_t n_tests;
	/* A timeout's evidence of starvation (0 or negative: unknown): CPU of
	 * the whole sandbox, the longest one of its threads had waited for a
	 * CPU at the deadline, and the wall time it had then. */
	double cpu_ms, runq_wait_ms, wall_ms;
};

struct ee_verdict {
	int status;       /* enum ee_status */
	char detail[256]; /* "" for pass (null in the record) */
	double score;     /* weighted fraction passed, [0,1]; 0 when the wall clock expired */
	int reward;       /* +1 pass, -1 otherwise */
	unsigned passed, total;
};

void ee_verdict_decide(const struct ee_verdict_in *in, struct ee_verdict *out);

/* Whether a run that timed out was starved by the host rather than slow
 * (score.c says how): its timeout is then "timeout (starved: ...)". */
int ee_verdict_starved(double wall_ms, double cpu_ms, double runq_wait_ms);

const char *ee_status_name(int status);

#endif
