/* dispatch.h - a bounded queue of evaluations in front of the sandboxes.
 *
 * The server's scheduler: candidates arrive whenever clients send them (push,
 * unlike scheduler.h's pull from a file); at most `jobs` run at once on the
 * loop, the rest wait in FIFO order, and at most `capacity` may wait, so
 * memory is bounded by jobs + capacity, never by the clients. A candidate
 * that cannot be queued is refused at once (the caller answers 429).
 *
 * Every submitted candidate gets exactly one callback: its record (owned by
 * the callback), or NULL when it never got a verdict (dropped from the queue,
 * or its sandbox was interrupted). A sandbox that could not be set up gives a
 * sandbox_error record ({"task_id", "sandbox_error", "execeval_version"}).
 * The candidate's pointers are borrowed until its callback.
 *
 * Two more ways in, for generated tests (serve/refcache.h): a request
 * whose candidates must wait for their task's reference runs reserves its
 * places first (ee_dispatch_reserve: room is then counted without them)
 * and submits into them later, never refused; and the reference runs
 * themselves (trusted code, with options of their own) go in a lane of
 * their own that starts before the candidates waiting, outside the
 * capacity: there is at most one at a time per reference being made, and
 * each is waited for by reserved candidates, so they stay bounded by them.
 *
 * Deadlines: a reserved candidate may carry the latest moment it may
 * start (a request's deadline less its clock: serve's Execeval-Deadline,
 * docs/api.md). One still waiting then never starts: ee_dispatch_tick,
 * which the server's loop calls as ee_dispatch_next_ms says, takes it out
 * of the queue at that moment and calls it back with record NULL and
 * run_s EE_DISPATCH_EXPIRED, so that its request is answered while its
 * client still waits rather than run late for nobody.
 */
#ifndef EE_SERVE_DISPATCH_H
#define EE_SERVE_DISPATCH_H

#include <jansson.h>
#include <stddef.h>

struct ee_candidate;
struct ee_engine;
struct ee_err;
struct ee_eval_options;
struct ee_dispatch;

/* record: owned by the callee, or NULL (no verdict). run_s: seconds from the
 * sandbox's start to the record, 0 when it never started, and
 * EE_DISPATCH_EXPIRED (record NULL) when it could not start before its
 * latest start (ee_dispatch_submit_reserved). */
#define EE_DISPATCH_EXPIRED (-1.0)
typedef void (*ee_dispatch_cb)(void *ctx, json_t *record, double run_s);

/* Runs its candidates on eng (borrowed, as o, for the dispatcher's life). */
int ee_dispatch_new(struct ee_engine *eng, const struct ee_eval_options *o, unsigned jobs, size_t capacity,
                    struct ee_dispatch **ret, struct ee_err *err);
/* Drops what still waits (callbacks with NULL); call when nothing runs. */
void ee_dispatch_free(struct ee_dispatch *d);

/* Candidates that can be submitted now: idle sandbox slots + free queue places. */
size_t ee_dispatch_room(const struct ee_dispatch *d);
size_t ee_dispatch_waiting(const struct ee_dispatch *d); /* trusted runs too */
unsigned ee_dispatch_running(const struct ee_dispatch *d);

/* Queues c (started at once when a sandbox slot is free). Returns 0, or -1
 * when the queue is full (no callback will come). */
int ee_dispatch_submit(struct ee_dispatch *d, const struct ee_candidate *c, ee_dispatch_cb cb, void *ctx);

/* fn(ctx) runs after every record's callback while a sandbox slot is
 * idle: a caller holding its own work back (serve's /run_code, run_code.h)
 * submits it then. One hook; NULL removes it. */
void ee_dispatch_on_idle(struct ee_dispatch *d, void (*fn)(void *ctx), void *ctx);

/* Holds n places for candidates submitted later (ee_dispatch_submit_reserved):
 * 0, or -1 when there is no room for n (nothing held). */
int ee_dispatch_reserve(struct ee_dispatch *d, size_t n);
/* Gives back n held places that will not be used. */
void ee_dispatch_unreserve(struct ee_dispatch *d, size_t n);
/* Queues c in one held place, to start by latest (CLOCK_MONOTONIC seconds;
 * INFINITY: whenever a slot frees). Past it c is expired, never started
 * (above): at once when it already is. -1 out of memory only (the place
 * is given back). */
int ee_dispatch_submit_reserved(struct ee_dispatch *d, const struct ee_candidate *c, double latest,
                                ee_dispatch_cb cb, void *ctx);
/* Expires the waiting candidates whose latest start has passed. */
void ee_dispatch_tick(struct ee_dispatch *d);
/* Milliseconds to the next waiting candidate's latest start, -1 for none. */
long ee_dispatch_next_ms(const struct ee_dispatch *d);
/* Queues a trusted run with its own options o (borrowed until the
 * callback), ahead of the candidates waiting. -1 out of memory. */
int ee_dispatch_submit_trusted(struct ee_dispatch *d, const struct ee_candidate *c,
                               const struct ee_eval_options *o, ee_dispatch_cb cb, void *ctx);

/* Ends every waiting candidate with a NULL record (a forced stop). */
void ee_dispatch_drop_waiting(struct ee_dispatch *d);

#endif
