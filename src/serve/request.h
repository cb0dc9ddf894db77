/* request.h - the bodies of POST /v1/run and /v1/batch, read into tasks and
 * programs (docs/api.md).
 *
 * A run is {"task", "candidate", "limits"?, "model"?, "sample"?, "extract"?};
 * a batch is {"runs": [run, ...]} with optional "task", "limits", "model"
 * and "extract" that apply to each run without its own (a run's own field
 * replaces the batch's whole). Reading is strict: an unknown field, a
 * wrong type or an invalid task fails with a message and err->field set to
 * the JSON path at fault ("runs[3].task.tests[0].kind"), so a client learns
 * exactly what to fix. The request's limits override the task's, which
 * override the server's (ee_eval_limits clamps the result); none may ask
 * for more than the server's ceiling.
 *
 * Ownership: a parsed request owns its tasks, programs and models;
 * ee_request_free releases them and accepts a zeroed request.
 */
#ifndef EE_SERVE_REQUEST_H
#define EE_SERVE_REQUEST_H

#include <stddef.h>

#include "extract.h"
#include "task.h"

struct ee_err;
struct ee_limits;

struct ee_run {
	struct ee_task task;
	char *program; /* extracted from "candidate" */
	char *model;   /* NULL when absent */
	long sample;   /* 0 when absent, as for `execeval run` */
	int no_code_block;
};

struct ee_request {
	struct ee_run *runs;
	size_t n_runs;
};

enum ee_request_kind { EE_REQUEST_RUN, EE_REQUEST_BATCH };

/* What the server allows: a batch of at most max_runs; extract when a run
 * says none; limits (a task's or a request's) at most ceiling's, or the
 * request is refused naming the field (NULL: no ceiling). */
struct ee_request_rules {
	size_t max_runs;
	enum ee_extract_mode extract;
	const struct ee_limits *ceiling;
	int strict_asserts; /* convert literal asserts (ee_task_strict_asserts) */
};

/* Reads body[0..len) as a run (one run) or a batch (1..max_runs runs).
 * Returns 0; -1 for a malformed body; -2 for a batch of more than max_runs
 * (err says how many). */
int ee_request_parse(const char *body, size_t len, int kind, const struct ee_request_rules *rules,
                     struct ee_request *ret, struct ee_err *err);

void ee_request_free(struct ee_request *r);

#endif
