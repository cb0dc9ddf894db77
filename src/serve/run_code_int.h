/* run_code_int.h - POST /run_code's state, shared by its modules. Not a
 * public header: everyone else goes through run_code.h.
 *
 *   run_code.c          the route's queue: a call's life from submit to
 *                       answer, starting calls on idle sandboxes, deadlines
 *   run_code_request.c  a request's fields checked, into the call's task
 *   run_code_answer.c   the answers in SandboxFusion's shapes
 *   run_code_group.c    coalescing: waiting calls of one program run in one
 *                       sandbox, each in a process of its own
 *
 * All of it runs on the loop's one thread.
 */
#ifndef EE_SERVE_RUN_CODE_INT_H
#define EE_SERVE_RUN_CODE_INT_H

#include <jansson.h>
#include <stddef.h>

#include "input/task.h"
#include "serve/run_code.h"

/* What a call may have the sandbox read back: one event frame holds it
 * (1 MiB, events.c). */
#define EE_RC_FETCH_CAP (512u << 10)

enum ee_rc_state { EE_RC_WAITING, EE_RC_RUNNING, EE_RC_READY };

/* What the sandbox did, kept from its outcome (run_code.c's on_outcome, or
 * a group's: ee_rc_start_group) for the answer. */
struct ee_rc_facts {
	int have;
	char *out, *err; /* the first output-cap bytes of each */
	size_t out_len, err_len, out_total, err_total;
	int end, have_status, status;
	double wall_ms;
	int have_exit_code;
	long exit_code;
	json_t *files;
};

struct ee_run_code_call {
	struct ee_run_code *rc;
	struct ee_task task; /* one io test in script mode */
	char *program;
	double arrived;  /* monotonic seconds */
	double deadline; /* the latest it may start (ee_rc_read_request) */
	size_t charged;  /* of the budget, while it waits or runs */
	int state;       /* enum ee_rc_state */
	int abandoned;
	ee_run_code_ready ready;
	void *ctx;
	struct ee_rc_facts facts;
	int solo;           /* runs in a sandbox of its own (run again, or never coalesced) */
	double wait_s;      /* how long it may wait to start, from arrived */
	unsigned long hash; /* of the program: a quick test for coalescing */
	json_t *verdict;    /* in a group: {"status", "detail", "resources"} once its test ran apart */
	unsigned code;
	char *text;
	size_t len;
	struct ee_run_code_call *next; /* the FIFO */
};

struct ee_run_code {
	struct ee_dispatch *d;
	const struct ee_eval_options *o;
	struct ee_budget *budget;
	struct ee_serve_stats *stats;
	struct ee_run_code_config cfg;
	struct ee_run_code_call *head, *tail;
	size_t waiting;
	double earliest; /* no waiting call's deadline is before it: the loop
	                  * scans the FIFO only once it is reached */
};

/* ---- run_code.c: the queue ---------------------------------------------- */

/* Monotonic seconds. */
double ee_rc_now(void);

/* Frees a call, its budget's charge released. */
void ee_rc_call_free(struct ee_run_code_call *call);

/* A call's record (NULL: a forced stop) made its answer, to its connection
 * (or dropped with it); takes rec. The dispatcher's callback. */
void ee_rc_on_record(void *ctx, json_t *rec, double run_s);

/* ---- run_code_request.c: the request -------------------------------------- */

/* The request's fields checked as SandboxFusion's model reads them
 * (unknown ones ignored), into call's task, program and clocks. 0 with the
 * call filled; 1 answered (*code, *text, *len); -1 out of memory. */
int ee_rc_read_request(struct ee_run_code *rc, const json_t *req, struct ee_run_code_call *call,
                       unsigned *code, char **text, size_t *len);

/* A task of n script tests (filled by ee_rc_script_test): no prompt, no
 * entry point, the task id "run_code". 0, or -1 out of memory. */
int ee_rc_script_task(struct ee_task *t, size_t n);

/* One io test run as a script (its own reference to script) on stdin. */
int ee_rc_script_test(struct ee_test *test, json_t *script, const char *stdin_text);

/* ---- run_code_answer.c: the answers --------------------------------------- */

/* v as compact JSON (malloc'd, its length in *len; NULL out of memory);
 * takes v. */
char *ee_rc_dump(json_t *v, size_t *len);

/* A 422 naming field (ee_run_code_invalid): 0, or -1 out of memory. */
int ee_rc_refuse_422(unsigned *code, char **text, size_t *len, const char *field, const char *msg);

/* A 504 saying msg, counted as a /run_code timeout: 0, or -1 out of memory. */
int ee_rc_answer_504(struct ee_run_code *rc, unsigned *code, char **text, size_t *len, const char *msg);

/* The 200 answer for a program that ran, from its record and facts; the
 * caller's. */
json_t *ee_rc_ran_answer(const json_t *rec, const struct ee_rc_facts *f, const char *program);

/* ---- run_code_group.c: coalescing ----------------------------------------- */

/* first and the waiting calls like it, in one sandbox: 1 when it started
 * (or they went back to wait alone), 0 when first has none like it. */
int ee_rc_start_group(struct ee_run_code *rc, struct ee_run_code_call *first);

#endif
