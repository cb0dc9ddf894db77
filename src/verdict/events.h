/* events.h - validating the harness's event stream against the job.
 *
 * The harness runs inside the candidate's interpreter, so every event is
 * untrusted. The supervisor accepts a verdict only from a complete,
 * well-formed stream that matches the job it sent: the right nonce, seq
 * 0, 1, 2, ... without gaps, phases in order, each test once and in the run
 * order (public tests, then hidden ones), nothing after "done". Any
 * deviation fails the whole stream ("protocol violation: ..."). Only typed,
 * expected fields are taken from an event; the rest is ignored.
 *
 * io and call tests arrive as raw observations (stdout, return value) and
 * are judged here against the task's expected values, which never entered
 * the sandbox.
 */
#ifndef EE_EVENTS_H
#define EE_EVENTS_H

#include <stddef.h>
#include <jansson.h>

#include "input/task.h"
#include "protocol/netstring.h"
#include "verdict/score.h"

struct ee_task;

enum ee_phase_state { EE_PH_NOT_RUN, EE_PH_OK, EE_PH_FAIL, EE_PH_SKIPPED };

/* The phase cursor: what the stream accepts next. hello, then the phases
 * in order (lint only when the job asked for it), then the tests; a failed
 * phase stops it (only "done" may follow), "done" ends it. */
enum ee_stream_at {
	EE_AT_HELLO,
	EE_AT_SYNTAX,
	EE_AT_SCAN,
	EE_AT_LINT,
	EE_AT_IMPORT,
	EE_AT_TESTS,
	EE_AT_STOPPED,
	EE_AT_DONE
};

struct ee_test_result {
	int judging;        /* enum ee_judging (task.h), set by ee_stream_init */
	int state;          /* enum ee_test_state */
	double duration_ms; /* -1 unknown */
	char *message;      /* owned; NULL when none */
	char *denied;       /* owned; NULL when none */
	int exited;
	int overflow;  /* io: the program's stdout passed the output cap */
	int timed_out; /* --test-timeout: the test ran out of its own clock */
	int slow;      /* timed_out over its calibrated limit (--time-factor): message says by how much */
	/* io: the exit code the harness saw (-N: signal N), when reported */
	int have_exit_code;
	long exit_code;
	json_t *files;         /* a script's read-back files {path: base64} (checked), or NULL */
	json_t *apart;         /* a script run apart: its "apart" object (unchecked), or NULL */
	json_t *value;         /* keep_values: a call's returned canonical value (owned), or NULL */
	int channel_ended;     /* role judge: failed as the candidate's process ended in its call */
	int setup_failed;      /* role judge: failed as the task's setup raised ("setup: " message) */
	const char *judged_by; /* static; the separate judge's path sets it, else NULL */
};

struct ee_phase_result {
	int state;          /* enum ee_phase_state */
	double duration_ms; /* -1 unknown */
	char *message;      /* owned */
	long line;          /* syntax: line of the error, 0 unknown */
};

/* The frames: their decoder, the job's nonce, the next sequence number. */
struct ee_stream_wire {
	struct ee_ns_decoder dec;
	char nonce[33];
	long next_seq;
	char *violation; /* owned; first protocol violation */
};

struct ee_stream_phases {
	struct ee_phase_result syntax, scan, lint, import;
	int lint_asked;        /* the job asked for the lint phase (set after init) */
	json_t *findings;      /* scan findings (sanitised copies) */
	json_t *lint_findings; /* lint findings (sanitised copies) */
	json_t *lint_tools;    /* names of the tools that ran */
	char *scan_block;      /* code of the first blocking finding */
	int import_exit, import_setup;
	char *import_denied;
};

struct ee_stream_tests {
	size_t *order; /* run order: indices of public, then hidden tests (the record's) */
	/* The tests the harness reports, in run order: order without those
	 * left out of the job (ee_stream_leave_out). */
	size_t *due;
	size_t n_due;
	size_t n_run;                   /* tests reported so far (position in due) */
	struct ee_test_result *results; /* by task index */
	size_t n_results;               /* the task's tests, kept for ee_stream_free */
	size_t call_next;               /* strict program under way: its next call's number */
	/* --test-timeout (0: off): each clocked test's limit, and when the
	 * event before it arrived (its clock's start, on the supervisor's clock) */
	double timeout_ms, clock_ms;
	struct ee_calibration cal; /* --time-floor, --time-factor (factor 0: off) */
};

/* The gate fd: the gate's question and a strict program's go-on/stop. */
struct ee_stream_gate {
	int enabled; /* the task has hidden tests: the harness asks for them after the public ones */
	int run_hidden_on_fail; /* no oracle: the gate opens whatever the public verdict,
	                         * a strict program's calls get 'c' after a mismatch too */
	int asked;              /* the harness sent "gate" */
	int answer;             /* 'c' or 's' once decided */
	int reply;              /* the byte the harness waits for on the gate fd */
	int reply_last;         /* no question can follow it: close the gate fd */
	int reply_gate;         /* the reply is the gate's: 'c' goes with the hidden tests */
};

/* --judge separate (docs/protocol.md, "Separate judge"): which side's stream
 * this is, and where the events the supervisor relays go (relay.h). */
enum ee_stream_role { EE_STREAM_INLINE, EE_STREAM_SERVE, EE_STREAM_JUDGE };

struct ee_stream_relay {
	int role; /* enum ee_stream_role, set after init */
	/* Called for each relayed event as it is accepted: "serving" and
	 * "reply" (serve), "call" (judge). */
	void (*cb)(void *ctx, const char *kind, const json_t *ev);
	void *ctx;
	int serving; /* serve: the serving event came (once, before any reply) */
};

struct ee_stream {
	const struct ee_task *task; /* borrowed */
	int at;                     /* enum ee_stream_at */
	int memory_error;           /* the import or a test failed with MemoryError */
	int keep_values;            /* keep each call's returned value in its result (set after
	                             * init; trusted code only: a reference's, a generator's) */
	double now_ms;              /* the caller's monotonic clock as the bytes fed arrived */
	struct ee_stream_wire wire;
	struct ee_stream_phases phases;
	struct ee_stream_tests tests;
	struct ee_stream_gate gate;
	struct ee_stream_relay relay;
	/* A long-lived judge's "done" (role judge): its CPU for this
	 * evaluation, and whether it judges another (evaluate_judge.c). */
	double judge_cpu_ms;
	int judge_reuse;
};

/* Prepares a stream for task; nonce is the job's. */
int ee_stream_init(struct ee_stream *s, const struct ee_task *task, const char *nonce, int gate,
                   int run_hidden_on_fail);

/* Test index is not in the job (--judge separate: the judge judged it,
 * docs/protocol.md "Mixed tasks"): the stream neither waits for nor
 * accepts an event for it, and takes state (enum ee_test_state) as its
 * verdict, which counts at the gate as any public test's. Its result
 * owns nothing; judged_by is "judge". Call after ee_stream_init, before
 * any bytes are fed. */
void ee_stream_leave_out(struct ee_stream *s, size_t index, int state);
void ee_stream_free(struct ee_stream *s);
/* Frees what r owns and zeroes it (a result moved out of its stream). */
void ee_test_result_free(struct ee_test_result *r);

/* Feeds result-channel bytes. Returns 1 when the harness waits for a byte
 * on the gate fd (write s->gate.reply, then close the fd when s->gate.reply_last):
 * the gate's answer, or after a strict program's call whether to go on
 * ('c', the value matched) or stop ('s').
 * When s->gate.reply_gate and s->gate.reply is 'c', the hidden tests go with it
 * (ee_job_hidden). Else 0. A violation is recorded, never returned as an error: the caller
 * kills the sandbox when s->wire.violation. */
int ee_stream_feed(struct ee_stream *s, const char *p, size_t n);

/* Call at end of stream (EOF). A cut-off last frame only leaves the
 * stream incomplete (not at EE_AT_DONE). */
void ee_stream_finish(struct ee_stream *s);

/* Whether the stream ended with "done". */
int ee_stream_done(const struct ee_stream *s);

/* Whether any public test is not a pass (after the public phase), those
 * left out included. */
int ee_stream_public_failed(const struct ee_stream *s);

#endif
