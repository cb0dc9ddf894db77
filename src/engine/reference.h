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
 * Then ee_task_add_generated appends the call tests. One (task, seed) is
 * made once per process: every sample of the task is judged on them.
 *
 * Synchronous: each run goes through ee_eval_start and ee_loop_run, so it
 * must not be called from a callback of the engine's loop (a server).
 * Errors: EE_ERR_USAGE for a task's (its generator or reference fails, a
 * value is not plain data), EE_ERR_SANDBOX for the host's.
 */
#ifndef EE_REFERENCE_H
#define EE_REFERENCE_H

struct ee_dataset;
struct ee_engine;
struct ee_err;
struct ee_eval_options;
struct ee_task;

/* Appends t's generated tests for o->seed (o->hidden_fraction of them
 * hidden). Nothing for a task without t->gen or whose tests are in.
 * Returns 0, a signal number (> 0) when interrupted, or -1. */
int ee_reference_prepare(struct ee_engine *eng, const struct ee_eval_options *o, struct ee_task *t,
                         struct ee_err *err);

/* ee_reference_prepare for every task of d; the first failure stops. */
int ee_reference_prepare_set(struct ee_engine *eng, const struct ee_eval_options *o, struct ee_dataset *d,
                             struct ee_err *err);

#endif
