/* request.h - the bodies of POST /v1/run and /v1/batch, read into tasks and
 * programs (docs/api.md).
 *
 * A run is {"task", one of "candidate" | "generation" | "completion",
 * "limits"?, "model"?, "sample"?, "extract"?, "stop"?}; a batch is
 * {"runs": [run, ...]} with optional "task", "limits", "model", "extract"
 * and "stop" that apply to each run without its own (a run's own field
 * replaces the batch's whole). A candidate or a generation is extracted
 * (ee_compose_generation), a completion follows the task's prompt, cut at
 * HumanEval's stop sequences under "stop": true (ee_compose_completion);
 * none of the three, or two, fails naming the run's field. Reading is strict: an unknown field, a
 * wrong type or an invalid task fails with a message and err->field set to
 * the JSON path at fault ("runs[3].task.tests[0].kind"), so a client learns
 * exactly what to fix. The request's limits override the task's, which
 * override the server's (ee_eval_limits clamps the result); none may ask
 * for more than the server's ceiling.
 *
 * A batch's own task is read once: every run without a task of its own
 * holds a shallow copy of it (its own limits over the shared tests and
 * strings), so 1000 runs of one 2000-test task cost one task, not 1000.
 * The batch's model is likewise one string all its runs point to.
 *
 * A task with a reference and a generator (or an EvalPlus row) counts its
 * generated tests too (n_generated, or its given inputs) in the bounds
 * below. A run of a batch's shared task that asks for another seed or
 * hidden_fraction than the batch gets its own copy of the task (its
 * generated tests differ). time_floor above the ceiling's timeout is
 * refused, as a limit is.
 *
 * Bounds (413, err->field naming what to shrink): at most max_runs runs,
 * max_tests tests in one task ("task.tests", "runs[3].task.tests"), and
 * max_request_tests tests over all runs together, a shared task counted
 * once per run ("runs"), since each run's record lists every test.
 * A body holds at most max_values JSON values (413, no field: its parse
 * would hold the server's only thread for seconds). Values and tests are
 * counted from the body's bytes before it is parsed (prescan.h), so a
 * body over a bound costs one pass over its bytes.
 *
 * Ownership: a parsed request owns its tasks (the shared one included),
 * programs and models; a run's task and model may borrow the request's
 * shared ones, which live as long as the request. ee_request_free releases
 * them and accepts a zeroed request.
 */
#ifndef EE_SERVE_REQUEST_H
#define EE_SERVE_REQUEST_H

#include <jansson.h>
#include <stddef.h>

#include "engine/evaluate.h"
#include "input/extract.h"
#include "input/task.h"
#include "verdict/reward.h"

struct ee_err;
struct ee_limits;

/* What a run says of its generated tests (docs/generated.md): "seed",
 * "hidden_fraction", "time_floor", "time_factor", each the run's, else its
 * batch's, else the server's. */
struct ee_run_gen {
	unsigned long long seed;
	double hidden_fraction;
	struct ee_time_rule time; /* both 0: no calibrated limits */
};

struct ee_run {
	struct ee_task task; /* own, or a shallow copy of the request's shared task */
	char *program;       /* composed from the run's candidate, generation or completion */
	char *model;         /* NULL when absent; may be the request's shared model */
	long sample;         /* 0 when absent, as for `execeval run` */
	int no_code_block;
	char extraction[EE_EXTRACTION_NAME_MAX]; /* how program was found (compose.h) */
	int shared_task;         /* task's strings and tests are the request's shared task's */
	int batch_task;          /* task came from the batch's "task" (shared or its own copy) */
	int shared_model;        /* model is the request's */
	struct ee_reward reward; /* "reward", the run's or the batch's, when has_reward */
	int has_reward;
	struct ee_run_gen gen;
};

struct ee_request {
	struct ee_run *runs;
	size_t n_runs;
	struct ee_task shared; /* a batch's own "task", when has_shared */
	int has_shared;
	char *model;  /* a batch's own "model", or NULL */
	size_t tests; /* tests over all runs (a shared task's once per run) */
};

enum ee_request_kind { EE_REQUEST_RUN, EE_REQUEST_BATCH };

/* What the server allows: a batch of at most max_runs; extract when a run
 * says none; limits (a task's or a request's) at most ceiling's, or the
 * request is refused naming the field (NULL: no ceiling). */
struct ee_request_rules {
	size_t max_runs;
	enum ee_extract_mode extract;
	const struct ee_limits *ceiling;
	int strict_asserts;       /* convert literal asserts (ee_task_strict_asserts) */
	size_t max_tests;         /* tests in one task */
	size_t max_request_tests; /* tests over all runs of a request */
	size_t max_values;        /* JSON values in a body (prescan.h) */
	int task_format;          /* ee_task_from_json's format and parse options (0: auto) */
	const struct ee_task_rules
	        *task_rules;               /* the server's --compare, --max-tests, --test-pick (NULL: none) */
	const struct ee_eval_options *opt; /* the server's --seed, --hidden-fraction, --time-floor,
	                                    * --time-factor (NULL: none given) */
};

/* A run's generated-test fields when it says none: the server's. */
struct ee_run_gen ee_request_gen_default(const struct ee_request_rules *rules);

/* Reads body[0..len) as a run (one run) or a batch (1..max_runs runs).
 * Returns 0; -1 for a malformed body; -2 for a request over one of the
 * bounds above (err says which and how many, err->field names it). */
int ee_request_parse(const char *body, size_t len, int kind, const struct ee_request_rules *rules,
                     struct ee_request *ret, struct ee_err *err);

/* The body as JSON (duplicate keys refused), or NULL with err saying
 * where it is malformed, on one printable line. */
json_t *ee_request_load(const char *body, size_t len, struct ee_err *err);

/* err's message and field made one printable line each: they may quote
 * a client's bytes. */
void ee_request_printable(struct ee_err *err);

/* Builds the task object at path ("labels[3]"; messages name fields under
 * it) as a run's own task is built: the server's rules applied, its tests
 * at most max_tests (-2 over), its limits at most the ceiling. */
int ee_request_read_task(const json_t *task, const char *path, const struct ee_request_rules *rules,
                         struct ee_task *ret, struct ee_err *err);

/* Bytes the parsed request holds, about (its tasks, programs, models and
 * run structs; a shared task once): what the server charges to its
 * --max-buffered while the request lives. */
size_t ee_request_cost(const struct ee_request *r);

void ee_request_free(struct ee_request *r);

#endif
