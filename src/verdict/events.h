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

#include "protocol/netstring.h"
#include "verdict/score.h"

struct ee_task;

enum ee_phase_state { EE_PH_NOT_RUN, EE_PH_OK, EE_PH_FAIL, EE_PH_SKIPPED };

struct ee_test_result {
	int state;          /* enum ee_test_state */
	double duration_ms; /* -1 unknown */
	char *message;      /* owned; NULL when none */
	char *denied;       /* owned; NULL when none */
	int exited;
	int overflow; /* io: the program's stdout passed the output cap */
};

struct ee_phase_result {
	int state;          /* enum ee_phase_state */
	double duration_ms; /* -1 unknown */
	char *message;      /* owned */
	long line;          /* syntax: line of the error, 0 unknown */
};

struct ee_stream {
	const struct ee_task *task; /* borrowed */
	char nonce[33];
	int gate; /* the task has hidden tests: the harness asks for them after the public ones */
	int run_hidden_on_fail; /* no oracle: the gate opens whatever the public verdict,
	                         * a strict program's calls get 'c' after a mismatch too */
	struct ee_ns_decoder dec;
	long next_seq;
	int hello, done;
	char *violation; /* owned; first protocol violation */
	struct ee_phase_result syntax, scan, lint_phase, import;
	int lint;              /* the job asked for the lint phase (set after init) */
	json_t *findings;      /* scan findings (sanitised copies) */
	json_t *lint_findings; /* lint findings (sanitised copies) */
	json_t *lint_tools;    /* names of the tools that ran */
	char *scan_block;      /* code of the first blocking finding */
	int import_exit, import_setup;
	int memory_error; /* the import or a test failed with MemoryError */
	char *import_denied;
	size_t *order;                /* run order: indices of public, then hidden tests */
	size_t n_run;                 /* tests reported so far (position in order) */
	struct ee_test_result *tests; /* by task index */
	int gate_asked;               /* the harness sent "gate" */
	int gate_answer;              /* 'c' or 's' once decided */
	size_t call_next;             /* strict program under way: its next call's number */
	int reply;                    /* the byte the harness waits for on the gate fd */
	int reply_last;               /* no question can follow it: close the gate fd */
	int reply_gate;               /* the reply is the gate's: 'c' goes with the hidden tests */
};

/* Prepares a stream for task; nonce is the job's. */
int ee_stream_init(struct ee_stream *s, const struct ee_task *task, const char *nonce, int gate,
                   int run_hidden_on_fail);
void ee_stream_free(struct ee_stream *s);

/* Feeds result-channel bytes. Returns 1 when the harness waits for a byte
 * on the gate fd (write s->reply, then close the fd when s->reply_last):
 * the gate's answer, or after a strict program's call whether to go on
 * ('c', the value matched) or stop ('s').
 * When s->reply_gate and s->reply is 'c', the hidden tests go with it
 * (ee_job_hidden). Else 0. A violation is recorded, never returned as an error: the caller
 * kills the sandbox when s->violation. */
int ee_stream_feed(struct ee_stream *s, const char *p, size_t n);

/* Call at end of stream (EOF). A cut-off last frame only leaves the
 * stream incomplete (done == 0). */
void ee_stream_finish(struct ee_stream *s);

/* Whether any public test is not a pass (after the public phase). */
int ee_stream_public_failed(const struct ee_stream *s);

#endif
