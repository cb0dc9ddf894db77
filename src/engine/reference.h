/* reference.h - a task's generated tests, made before any candidate runs
 * (issue 19; docs/generated.md).
 *
 * For a native task with reference and generate (struct ee_task_gen), in
 * sandboxes with the task's limits, three runs of trusted code, in order:
 *   1. the generator: generate(random.Random(seed), n_generated), its
 *      argument lists sent back as canonical values;
 *   2. the reference against the task's own tests (all of them, hidden
 *      included): a reference that does not pass them is an error of the
 *      task, reported before any candidate runs (as BigCodeBench checks its
 *      ground truth);
 *   3. the reference called on each generated input, its canonical results
 *      kept: an input it raises on is dropped (and counted).
 * Then ee_reference_job_apply appends the call tests to a task.
 *
 * A job is those runs as steps, driven by its caller: ee_reference_job_next
 * says which candidate to run with which options, ee_reference_job_feed
 * takes its record, until next says the job is done. Two drivers: the
 * synchronous ee_reference_prepare (run, eval: each run through
 * ee_eval_start and ee_loop_run, so never from a callback of the engine's
 * loop) and serve's, which submits the runs to its dispatcher and keeps
 * finished jobs as a cache (serve/refcache.h).
 *
 * Errors: EE_ERR_USAGE for a task's (its generator or reference fails, a
 * value is not plain data; ee_reference_job_part says which), EE_ERR_SANDBOX
 * for the host's (a sandbox could not be set up, out of memory).
 * Ownership: a job borrows its task until it is done (next returned 0) or
 * freed; it owns its options, runs and results.
 */
#ifndef EE_REFERENCE_H
#define EE_REFERENCE_H

#include <jansson.h>
#include <stddef.h>

struct ee_candidate;
struct ee_dataset;
struct ee_engine;
struct ee_err;
struct ee_eval_options;
struct ee_task;
struct ee_reference_job;

/* Which trusted code a task's error is of. */
enum ee_reference_part { EE_REF_PART_NONE, EE_REF_PART_GENERATE, EE_REF_PART_REFERENCE };

/* Calls of the reference per input when its times calibrate limits: the
 * input's time is their minimum (docs/generated.md, "What is measured"). */
#ifndef EE_REFERENCE_TIMINGS /* bench/reference-timing builds a baseline of 1 */
#define EE_REFERENCE_TIMINGS 3
#endif

/* A job for t (which has t->gen) and seed, its runs with o's sandbox and
 * limits (none of the candidate-only phases). timed: each input is called
 * EE_REFERENCE_TIMINGS times in a row, its time the fastest (else once). */
int ee_reference_job_new(const struct ee_eval_options *o, const struct ee_task *t, unsigned long long seed,
                         int timed, struct ee_reference_job **ret, struct ee_err *err);

/* The next run: *cand and *opt filled (borrowed from the job until its
 * record is fed). Returns 1 for a run, 0 when the job is done, -1 (err)
 * when it failed. */
int ee_reference_job_next(struct ee_reference_job *j, struct ee_candidate *cand,
                          const struct ee_eval_options **opt, struct ee_err *err);

/* The record of the run next gave (taken). 0, or -1 with err: the task's
 * (EE_ERR_USAGE) or the host's (EE_ERR_SANDBOX, a sandbox_error record). */
int ee_reference_job_feed(struct ee_reference_job *j, json_t *record, struct ee_err *err);

/* The part a task's error was found in (EE_REF_PART_NONE before one). */
int ee_reference_job_part(const struct ee_reference_job *j);

/* A done job's results into t (whose generated tests they are: same
 * reference, generator and seed), round(hidden_fraction x tests) hidden.
 * -1 out of memory. */
int ee_reference_job_apply(const struct ee_reference_job *j, struct ee_task *t, double hidden_fraction,
                           struct ee_err *err);

/* Bytes a done job holds, about (serve's cache counts them). */
size_t ee_reference_job_bytes(const struct ee_reference_job *j);

/* Sandboxes the job has run. */
unsigned ee_reference_job_runs(const struct ee_reference_job *j);

void ee_reference_job_free(struct ee_reference_job *j);

/* Appends t's generated tests for o->seed (o->hidden_fraction of them
 * hidden), synchronously. Nothing for a task without t->gen or whose tests
 * are in. Returns 0, a signal number (> 0) when interrupted, or -1. */
int ee_reference_prepare(struct ee_engine *eng, const struct ee_eval_options *o, struct ee_task *t,
                         struct ee_err *err);

/* ee_reference_prepare for every task of d; the first failure stops. */
int ee_reference_prepare_set(struct ee_engine *eng, const struct ee_eval_options *o, struct ee_dataset *d,
                             struct ee_err *err);

#endif
