/* refcache.h - serve's generated tests: each task's reference runs
 * (engine/reference.h), made once per key, shared by every request that
 * needs them, and kept (docs/api.md, "Generated tests").
 *
 * The key is what decides the generated tests: the task object as sent
 * (gen->key, set by request.c), its generator and reference
 * (ee_task_gen_hash), the seed (0 for EvalPlus's given inputs, which owe
 * nothing to one), the limits the reference runs under and whether its
 * times calibrate limits (timed). A lookup finds
 * the results made (a hit), joins the runs in flight for the key (a join:
 * N runs of a GRPO group, in one batch or in N requests, wait on ONE
 * reference run), or starts them (a miss). The runs go through the
 * server's dispatcher as trusted runs (dispatch.h), so the loop never
 * blocks on them; each step's record starts the next.
 *
 * Finished results stay in an LRU bounded by bytes (ee_reference_job_bytes,
 * at most max_bytes together; 0 keeps none: only runs in flight are
 * shared); failures are given to the requests waiting and then dropped,
 * never kept (the next request runs them again).
 *
 * One thread, the loop's. Ownership: the cache borrows the dispatcher and
 * options for its life, a lookup's task until its job is done; it owns its
 * entries. A waiter's context must live until its callback.
 */
#ifndef EE_SERVE_REFCACHE_H
#define EE_SERVE_REFCACHE_H

#include <stddef.h>

struct ee_dispatch;
struct ee_err;
struct ee_eval_options;
struct ee_reference_job;
struct ee_refcache;
struct ee_task;

struct ee_refcache_stats {
	unsigned long long hits, joins, misses; /* lookups: made, in flight, started */
	unsigned long long runs;                /* reference jobs started (misses) */
	unsigned long long sandboxes;           /* their trusted sandboxes */
	unsigned long long failures;            /* jobs that ended in an error */
	unsigned long long evictions;           /* results dropped for room */
	size_t bytes, entries, capacity;        /* kept now; the bound (max_bytes) */
};

/* A lookup's outcome: job, the finished results (borrowed for the call),
 * or NULL with err: the task's error (EE_ERR_USAGE; part: enum
 * ee_reference_part) or the host's (EE_ERR_SANDBOX); or NULL and err NULL:
 * interrupted (the server is stopping). */
typedef void (*ee_refcache_cb)(void *ctx, const struct ee_reference_job *job, int part,
                               const struct ee_err *err);

int ee_refcache_new(struct ee_dispatch *d, const struct ee_eval_options *o, size_t max_bytes,
                    struct ee_refcache **ret, struct ee_err *err);
/* Nothing may be in flight (the server has drained). */
void ee_refcache_free(struct ee_refcache *rc);

/* t's (t->gen's) results for seed; timed: for calibrated limits (each
 * input's time the fastest of EE_REFERENCE_TIMINGS calls: part of the
 * key). Returns 0 on a hit, *ret the results
 * (borrowed until the next call on the cache; cb is not called); 1 when
 * cb will get them (it may have run before this returns); -1 (err) out
 * of memory. t is borrowed until cb when this started its runs. */
int ee_refcache_get(struct ee_refcache *rc, const struct ee_task *t, unsigned long long seed, int timed,
                    ee_refcache_cb cb, void *ctx, const struct ee_reference_job **ret, struct ee_err *err);

const struct ee_refcache_stats *ee_refcache_stats(const struct ee_refcache *rc);

#endif
