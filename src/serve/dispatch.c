/* dispatch.c - the server's bounded FIFO of evaluations (see dispatch.h). */
#include "serve/dispatch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "base/err.h"
#include "base/loop.h"
#include "engine/evaluate.h"
#include "verdict/record.h"
#include "input/task.h"

struct item {
	struct ee_candidate c;
	const struct ee_eval_options *o; /* the dispatcher's, or a trusted run's own */
	ee_dispatch_cb cb;
	void *ctx;
	double latest; /* the latest it may start (dispatch.h), INFINITY: no deadline */
	struct ee_dispatch *d;
	struct timespec started;
	struct item *next;
};

struct ee_dispatch {
	struct ee_engine *eng;
	struct ee_loop *loop;
	const struct ee_eval_options *o;
	unsigned jobs, running;
	size_t capacity, waiting;
	size_t reserved;              /* places held for candidates to come */
	size_t trusted;               /* trusted runs waiting (not in waiting) */
	struct item *head, *tail;     /* candidates */
	struct item *t_head, *t_tail; /* trusted runs: started first */
	void (*on_idle)(void *ctx);
	void *idle_ctx;
	double earliest; /* no waiting candidate's latest start is before it */
};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

int ee_dispatch_new(struct ee_engine *eng, const struct ee_eval_options *o, unsigned jobs, size_t capacity,
                    struct ee_dispatch **ret, struct ee_err *err)
{
	struct ee_dispatch *d = calloc(1, sizeof(*d));

	if (!d)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	d->eng = eng;
	d->loop = ee_engine_loop(eng);
	d->o = o;
	d->jobs = jobs ? jobs : 1;
	d->capacity = capacity;
	d->earliest = INFINITY;
	*ret = d;
	return 0;
}

size_t ee_dispatch_room(const struct ee_dispatch *d)
{
	size_t idle = d->running < d->jobs ? d->jobs - d->running : 0;
	size_t total = idle + (d->waiting < d->capacity ? d->capacity - d->waiting : 0);
	return total > d->reserved ? total - d->reserved : 0; /* held places are taken */
}

size_t ee_dispatch_waiting(const struct ee_dispatch *d)
{
	return d->waiting + d->trusted;
}

unsigned ee_dispatch_running(const struct ee_dispatch *d)
{
	return d->running;
}

static void pump(struct ee_dispatch *d);

static void on_record(void *ctx, json_t *record)
{
	struct item *it = ctx;
	struct ee_dispatch *d = it->d;

	d->running--;
	it->cb(it->ctx, record, seconds_since(&it->started));
	free(it);
	pump(d);
	if (d->on_idle && d->running < d->jobs)
		d->on_idle(d->idle_ctx);
}

void ee_dispatch_on_idle(struct ee_dispatch *d, void (*fn)(void *ctx), void *ctx)
{
	d->on_idle = fn;
	d->idle_ctx = ctx;
}

/* The next item to start: a trusted run first, else the oldest candidate. */
static struct item *take_next(struct ee_dispatch *d)
{
	struct item *it = d->t_head;

	if (it) {
		d->t_head = it->next;
		if (!d->t_head)
			d->t_tail = NULL;
		d->trusted--;
		return it;
	}
	it = d->head;
	if (it) {
		d->head = it->next;
		if (!d->head)
			d->tail = NULL;
		d->waiting--;
	}
	return it;
}

/* A candidate that can no longer start in time: called back, never started. */
static void expire(struct item *it)
{
	it->cb(it->ctx, NULL, EE_DISPATCH_EXPIRED);
	free(it);
}

/* Starts waiting items while sandbox slots are free; one past its latest
 * start is expired instead. */
static void pump(struct ee_dispatch *d)
{
	while ((d->head || d->t_head) && d->running < d->jobs && !ee_loop_interrupted(d->loop)) {
		struct item *it = take_next(d);
		struct ee_err err = { 0 };

		if (it->latest < INFINITY && now_s() > it->latest) {
			expire(it);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &it->started);
		if (ee_eval_start(d->eng, it->o, &it->c, on_record, it, &err) < 0) {
			it->cb(it->ctx, ee_record_sandbox_error(it->c.task->task_id, err.msg), 0);
			free(it);
			continue;
		}
		d->running++;
	}
}

static struct item *new_item(struct ee_dispatch *d, const struct ee_candidate *c,
                             const struct ee_eval_options *o, ee_dispatch_cb cb, void *ctx)
{
	struct item *it = calloc(1, sizeof(*it));

	if (it)
		*it = (struct item){
			.c = *c, .o = o ? o : d->o, .cb = cb, .ctx = ctx, .latest = INFINITY, .d = d
		};
	return it;
}

static void enqueue(struct ee_dispatch *d, struct item *it)
{
	if (d->tail)
		d->tail->next = it;
	else
		d->head = it;
	d->tail = it;
	d->waiting++;
	if (it->latest < d->earliest)
		d->earliest = it->latest;
	pump(d);
}

int ee_dispatch_submit(struct ee_dispatch *d, const struct ee_candidate *c, ee_dispatch_cb cb, void *ctx)
{
	if (ee_dispatch_room(d) == 0)
		return -1;
	struct item *it = new_item(d, c, NULL, cb, ctx);
	if (!it)
		return -1;
	enqueue(d, it);
	return 0;
}

int ee_dispatch_reserve(struct ee_dispatch *d, size_t n)
{
	if (ee_dispatch_room(d) < n)
		return -1;
	d->reserved += n;
	return 0;
}

void ee_dispatch_unreserve(struct ee_dispatch *d, size_t n)
{
	d->reserved -= n < d->reserved ? n : d->reserved;
}

int ee_dispatch_submit_reserved(struct ee_dispatch *d, const struct ee_candidate *c, double latest,
                                ee_dispatch_cb cb, void *ctx)
{
	struct item *it = new_item(d, c, NULL, cb, ctx);

	ee_dispatch_unreserve(d, 1);
	if (!it)
		return -1;
	it->latest = latest;
	enqueue(d, it);
	return 0;
}

void ee_dispatch_tick(struct ee_dispatch *d)
{
	double now = now_s(), next = INFINITY;
	struct item *expired = NULL, **end = &expired, *last = NULL;

	if (!d->head || now <= d->earliest)
		return;
	/* Out of the queue first, called back after: a callback finds it whole. */
	for (struct item **p = &d->head; *p;) {
		struct item *it = *p;
		if (now <= it->latest) {
			next = it->latest < next ? it->latest : next;
			last = it;
			p = &it->next;
			continue;
		}
		*p = it->next;
		d->waiting--;
		it->next = NULL;
		*end = it;
		end = &it->next;
	}
	d->tail = last;
	d->earliest = next;
	while (expired) {
		struct item *it = expired;
		expired = it->next;
		expire(it);
	}
}

long ee_dispatch_next_ms(const struct ee_dispatch *d)
{
	double now = now_s();

	if (!d->head || d->earliest == INFINITY)
		return -1;
	return d->earliest <= now ? 0 : (long)ceil((d->earliest - now) * 1000);
}

int ee_dispatch_submit_trusted(struct ee_dispatch *d, const struct ee_candidate *c,
                               const struct ee_eval_options *o, ee_dispatch_cb cb, void *ctx)
{
	struct item *it = new_item(d, c, o, cb, ctx);

	if (!it)
		return -1;
	if (d->t_tail)
		d->t_tail->next = it;
	else
		d->t_head = it;
	d->t_tail = it;
	d->trusted++;
	pump(d);
	return 0;
}

void ee_dispatch_drop_waiting(struct ee_dispatch *d)
{
	struct item *it;

	/* not pumped: take_next alone, so a callback's new submission waits */
	while ((it = take_next(d))) {
		it->cb(it->ctx, NULL, 0);
		free(it);
	}
}

void ee_dispatch_free(struct ee_dispatch *d)
{
	if (!d)
		return;
	ee_dispatch_drop_waiting(d);
	free(d);
}
