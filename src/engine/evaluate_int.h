/* evaluate_int.h - one candidate's state, shared by evaluate.c (inline:
 * one sandbox) and evaluate_judge.c (--judge separate: two). Internal to
 * src/engine. */
#ifndef EE_EVALUATE_INT_H
#define EE_EVALUATE_INT_H

#include <jansson.h>
#include <stddef.h>

#include "engine/evaluate.h"
#include "verdict/events.h"
#include "verdict/reward.h"

struct ee_sandbox;
struct ee_sandbox_outcome;
struct judged; /* evaluate_judge.c's pair of sandboxes */

struct ee_eval {
	struct ee_stream stream;
	struct ee_limits limits;
	const struct ee_task *task;
	char *model;
	long sample;
	json_t *extra;
	int no_code_block;
	char *program;    /* its first KEEP_OUTPUT_BYTES, for the record */
	char *extraction; /* NULL: absent */
	char shard[32];   /* "": absent */
	char sandbox_id[33];
	char started_at[32];
	ee_record_cb cb;
	void *ctx;
	/* To start it again on a new worker when its warm worker was lost. */
	struct ee_engine *eng;
	const struct ee_eval_options *opt;
	char *job;
	size_t job_len;
	char nonce[33];
	int gate;
	int attempts;
	int starved;       /* a run of it timed out starved (ee_eval_finish) */
	int lint_credited; /* the lint phase's time was given back to the clock */
	size_t keep_output;
	struct ee_reward reward;       /* the candidate's, else the options' */
	struct ee_time_rule time_rule; /* the candidate's, else the options' */
	void (*on_outcome)(void *ctx, const struct ee_sandbox_outcome *out, const struct ee_stream *s);
	void *outcome_ctx;
	int keep_values;
	char *serve_job; /* --judge separate: the candidate's job (role serve), else NULL */
	size_t serve_job_len;
	/* --judge separate: job (an inline run's, a mixed task's) holds only
	 * the tests the supervisor judges (job.h, supervisors_only). */
	int supervisors_only;
	/* --judge separate's third run (evaluate_judge.c): the judge's verdicts
	 * by task index, judged_by set where one stands (owned; NULL otherwise),
	 * and the CPU and the wall time the pair used before it. */
	struct ee_test_result *judged;
	double separate_cpu_ms, separate_wall_ms;
	/* --judge separate: a pair that ended in the hidden tests its judge ran
	 * ahead of the supervisor's public ones, kept (owned) while this run
	 * judges those (ee_judge_settle); NULL otherwise. */
	struct judged *pair;
};

/* ev->stream afresh for ev's task and options: its gate, lint, kept
 * values, each test's clock and the calibration, the same for the first
 * run, a retry and an inline rerun. 0, or -1 out of memory. */
int ee_eval_stream_start(struct ee_eval *ev);

/* ev afresh (a new stream, the lint credit back) and started again: the
 * split judge's pair (separate) or its inline sandbox; 0 when it runs. A
 * lost worker's retry, a starved run's restart. */
int ee_eval_start_again(struct ee_eval *ev, int separate, struct ee_err *err);

/* Starts ev's (inline) sandbox with ev->job; 0 when it runs. */
int ee_eval_launch(struct ee_eval *ev, struct ee_err *err);

/* The record from ev->stream and out, to the callback; frees ev. */
void ee_eval_finish(struct ee_eval *ev, const struct ee_sandbox_outcome *out);

void ee_eval_free(struct ee_eval *ev);

/* 32 random hex characters (a nonce, an id). */
void ee_eval_random_hex(char out[33]);

/* --judge separate (evaluate_judge.c): whether any of the task's tests is
 * the judge's kind (assert, program, unittest, not strict). */
int ee_judge_fits(const struct ee_task *task);

/* Starts the candidate's and the judge's sandboxes; 0 when both run. A
 * task with tests not the judge's (io, call, strict: a mixed task) runs ev
 * once more inline (ee_eval_launch), with ev->judged set, for those. */
int ee_judge_launch(struct ee_eval *ev, struct ee_err *err);

/* After that inline run: the judge's verdicts for its tests, the inline
 * run's for the supervisor's, each test's judged_by, the gate over the
 * merged public verdicts. */
void ee_judge_merge(struct ee_eval *ev);

/* After the run ev->pair waited for: the pair's record when the public
 * tests it could not judge passed (its judge's hidden tests were due), else
 * this run's, the gate closed; either to ee_eval_finish. */
void ee_judge_settle(struct ee_eval *ev, const struct ee_sandbox_outcome *out);

/* In ev->stream, a supervisors_only run's (the third run: ev->judged set;
 * ran_ahead's: ev->pair set; else nothing), the judge's tests left out
 * (ee_stream_leave_out), each with the state of the judge's verdict. */
void ee_judge_leave_out(struct ee_eval *ev);

/* The candidate's infrastructure error: a sandbox_error record with its
 * sample's key (record.h, ee_record_sample_sandbox_error). */
json_t *ee_eval_sandbox_error(const struct ee_eval *ev, const char *msg);

/* Frees a pair kept in ev->pair (NULL is fine). */
void ee_judge_pair_free(struct judged *pair);

#endif
