/* scheduler.h - many evaluations at once on one event loop.
 *
 * Keeps up to `jobs` sandboxes in flight on the engine's loop: whenever one finishes, its record
 * goes to the source's done() and the next candidate is pulled from next().
 * Memory is bounded by jobs, not by the number of candidates, as long as the
 * source streams. No threads: everything runs on the loop's thread.
 *
 * A candidate whose sandbox cannot be made is not an error: its record
 * (an infrastructure error, evaluate.h) goes to done() at once, and the
 * source stops the run from next() when it must.
 * Stops pulling on the first error from next() (the error is returned after
 * the evaluations in flight have finished and been handed to done(), so
 * nothing already done is lost) or on a signal (every sandbox is killed and
 * torn down; the signal number is returned).
 */
#ifndef EE_SCHEDULER_H
#define EE_SCHEDULER_H

#include <jansson.h>

#include "engine/evaluate.h"

struct ee_engine;
struct ee_err;

/* From next(): nothing now, ask again once done() has had a record (the
 * source's consumer is full: backpressure). Only while an evaluation is in
 * flight, whose end can make room; with none in flight it is an error. */
#define EE_SCHED_WAIT 2

struct ee_sched_source {
	/* Fills *c (its pointers must stay valid until done() for the same
	 * token; the program is copied at start). Returns 1, 0 at the end,
	 * EE_SCHED_WAIT, or -1 with err filled. */
	int (*next)(void *ctx, struct ee_candidate *c, void **token, struct ee_err *err);
	/* Receives the record (owned) of the candidate next() gave with token. */
	void (*done)(void *ctx, void *token, json_t *record);
};

/* Returns 0, a signal number (> 0), or -1 with err filled. */
int ee_schedule(struct ee_engine *eng, const struct ee_eval_options *o, unsigned jobs,
                const struct ee_sched_source *src, void *ctx, struct ee_err *err);

#endif
