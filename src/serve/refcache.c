/* refcache.c - the reference results of serve's generated tests (see
 * refcache.h): a chained hash table of entries, those done on an LRU list,
 * those in flight with their waiters, each job stepped by its records. */
#include "serve/refcache.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "engine/evaluate.h"
#include "engine/reference.h"
#include "input/task.h"
#include "serve/dispatch.h"

#define BUCKETS 4096 /* a power of two */

struct waiter {
	ee_refcache_cb cb;
	void *ctx;
	struct waiter *next;
};

struct entry {
	struct ee_refcache *rc;
	char *key;
	uint64_t hash;
	int listed; /* in its bucket: other lookups find it */
	struct ee_reference_job *job;
	int ready;
	struct waiter *waiters, **last;
	size_t bytes;
	struct entry *chain;         /* its bucket's next */
	struct entry *newer, *older; /* the LRU of ready entries */
};

struct ee_refcache {
	struct ee_dispatch *d;
	const struct ee_eval_options *o;
	struct entry *buckets[BUCKETS];
	struct entry *newest, *oldest;
	/* Entries done with but not kept: freed at the next lookup, since a
	 * job ends in its last run's record callback and that run's stream
	 * still reads the job's task after it. */
	struct entry *dead;
	struct ee_refcache_stats stats;
};

/* FNV-1a: keys are digests and numbers, not a client's free choice. */
static uint64_t hash_of(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

int ee_refcache_new(struct ee_dispatch *d, const struct ee_eval_options *o, size_t max_bytes,
                    struct ee_refcache **ret, struct ee_err *err)
{
	struct ee_refcache *rc = calloc(1, sizeof(*rc));

	if (!rc)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	rc->d = d;
	rc->o = o;
	rc->stats.capacity = max_bytes;
	*ret = rc;
	return 0;
}

static void entry_free(struct entry *e)
{
	struct waiter *w = e->waiters;

	while (w) {
		struct waiter *next = w->next;
		free(w);
		w = next;
	}
	ee_reference_job_free(e->job);
	free(e->key);
	free(e);
}

static void unlist(struct entry *e)
{
	struct entry **p = &e->rc->buckets[e->hash & (BUCKETS - 1)];

	if (!e->listed)
		return;
	while (*p && *p != e)
		p = &(*p)->chain;
	if (*p)
		*p = e->chain;
	e->listed = 0;
}

static void lru_unlink(struct entry *e)
{
	struct ee_refcache *rc = e->rc;

	if (e->newer)
		e->newer->older = e->older;
	else
		rc->newest = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		rc->oldest = e->newer;
	e->newer = e->older = NULL;
}

static void lru_push(struct entry *e)
{
	struct ee_refcache *rc = e->rc;

	e->older = rc->newest;
	e->newer = NULL;
	if (rc->newest)
		rc->newest->newer = e;
	rc->newest = e;
	if (!rc->oldest)
		rc->oldest = e;
}

/* Drops the oldest results until the rest fit. */
static void evict(struct ee_refcache *rc)
{
	while (rc->stats.bytes > rc->stats.capacity && rc->oldest) {
		struct entry *e = rc->oldest;
		lru_unlink(e);
		unlist(e);
		rc->stats.bytes -= e->bytes;
		rc->stats.entries--;
		rc->stats.evictions++;
		entry_free(e);
	}
}

static struct entry *find(const struct ee_refcache *rc, const char *key, uint64_t hash)
{
	for (struct entry *e = rc->buckets[hash & (BUCKETS - 1)]; e; e = e->chain)
		if (e->hash == hash && strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

/* The job ended (err NULL: done; err with code 0: interrupted): every
 * waiter is told; the results are kept when they fit, else dropped. */
static void finish(struct entry *e, int part, const struct ee_err *err)
{
	struct ee_refcache *rc = e->rc;
	struct waiter *w = e->waiters;
	int keep = !err && e->listed;

	e->waiters = NULL;
	e->last = &e->waiters;
	if (err && err->code)
		rc->stats.failures++;
	if (keep) {
		e->ready = 1;
		e->bytes = ee_reference_job_bytes(e->job);
		keep = e->bytes <= rc->stats.capacity;
	}
	if (!keep)
		unlist(e); /* no later lookup finds it; freed below */
	while (w) {
		struct waiter *next = w->next;
		if (!err)
			w->cb(w->ctx, e->job, EE_REF_PART_NONE, NULL);
		else
			w->cb(w->ctx, NULL, part, err->code ? err : NULL);
		free(w);
		w = next;
	}
	if (!keep) {
		e->chain = rc->dead;
		rc->dead = e;
		return;
	}
	lru_push(e);
	rc->stats.bytes += e->bytes;
	rc->stats.entries++;
	evict(rc);
}

static void on_run(void *ctx, json_t *record, double run_s);

/* Starts the job's next run, or finishes it. */
static void step(struct entry *e)
{
	struct ee_candidate cand;
	const struct ee_eval_options *o;
	struct ee_err err = { 0 };
	int rc = ee_reference_job_next(e->job, &cand, &o, &err);

	if (rc == 0) {
		finish(e, EE_REF_PART_NONE, NULL);
	} else if (rc < 0) {
		finish(e, ee_reference_job_part(e->job), &err);
	} else if (ee_dispatch_submit_trusted(e->rc->d, &cand, o, on_run, e) < 0) {
		ee_fail(&err, EE_ERR_SANDBOX, "out of memory");
		finish(e, EE_REF_PART_NONE, &err);
	}
	/* e may be gone here: a run that could not start calls on_run at once */
}

static void on_run(void *ctx, json_t *record, double run_s)
{
	struct entry *e = ctx;
	struct ee_err err = { 0 };

	(void)run_s;
	e->rc->stats.sandboxes++;
	if (!record) {
		finish(e, EE_REF_PART_NONE, &err); /* code 0: interrupted */
		return;
	}
	if (ee_reference_job_feed(e->job, record, &err) < 0) {
		finish(e, ee_reference_job_part(e->job), &err);
		return;
	}
	step(e);
}

/* The key of t's results for seed (refcache.h). */
static char *key_of(const struct ee_refcache *rc, const struct ee_task *t, unsigned long long seed, int timed)
{
	struct ee_limits lim;
	char gen[65], *key = NULL;

	ee_task_gen_hash(t, gen);
	ee_eval_limits(rc->o, t, &lim);
	if (asprintf(&key, "%s %s %llu %.17g %u %u %zu %u %d", t->gen->key, gen, t->gen->generate ? seed : 0,
	             lim.timeout_s, lim.memory_mb, lim.procs, lim.output_cap, lim.tmp_mb, timed) < 0)
		return NULL;
	return key;
}

static int add_waiter(struct entry *e, ee_refcache_cb cb, void *ctx)
{
	struct waiter *w = calloc(1, sizeof(*w));

	if (!w)
		return -1;
	w->cb = cb;
	w->ctx = ctx;
	*e->last = w;
	e->last = &w->next;
	return 0;
}

static void bury(struct ee_refcache *rc)
{
	while (rc->dead) {
		struct entry *e = rc->dead;
		rc->dead = e->chain;
		entry_free(e);
	}
}

int ee_refcache_get(struct ee_refcache *rc, const struct ee_task *t, unsigned long long seed, int timed,
                    ee_refcache_cb cb, void *ctx, const struct ee_reference_job **ret, struct ee_err *err)
{
	timed = !!timed;
	char *key = key_of(rc, t, seed, timed);
	struct entry *e;

	*ret = NULL;
	bury(rc); /* never called from a sandbox's callback: their streams are gone */
	if (!key)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	uint64_t hash = hash_of(key);
	if ((e = find(rc, key, hash))) {
		free(key);
		if (e->ready) {
			rc->stats.hits++;
			lru_unlink(e);
			lru_push(e);
			*ret = e->job;
			return 0;
		}
		if (add_waiter(e, cb, ctx) < 0)
			return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
		rc->stats.joins++;
		return 1;
	}
	if (!(e = calloc(1, sizeof(*e)))) {
		free(key);
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	e->rc = rc;
	e->key = key;
	e->hash = hash;
	e->last = &e->waiters;
	if (ee_reference_job_new(rc->o, t, seed, timed, &e->job, err) < 0 || add_waiter(e, cb, ctx) < 0) {
		entry_free(e);
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	/* A task read elsewhere than request.c has no key of its content: its
	 * runs are its own, never found by another lookup. */
	if (t->gen->key[0]) {
		struct entry **b = &rc->buckets[hash & (BUCKETS - 1)];
		e->chain = *b;
		*b = e;
		e->listed = 1;
	}
	rc->stats.misses++;
	rc->stats.runs++;
	step(e);
	return 1;
}

const struct ee_refcache_stats *ee_refcache_stats(const struct ee_refcache *rc)
{
	return &rc->stats;
}

void ee_refcache_free(struct ee_refcache *rc)
{
	if (!rc)
		return;
	bury(rc);
	for (size_t i = 0; i < BUCKETS; i++) {
		struct entry *e = rc->buckets[i];
		while (e) {
			struct entry *next = e->chain;
			entry_free(e); /* in flight ones too: their dispatcher is gone with the server */
			e = next;
		}
	}
	free(rc);
}
