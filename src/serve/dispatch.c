/* dispatch.c - the server's bounded FIFO of evaluations (see dispatch.h). */
#include "serve/dispatch.h"

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
	ee_dispatch_cb cb;
	void *ctx;
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
	struct item *head, *tail;
	void (*on_idle)(void *ctx);
	void *idle_ctx;
};

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
	*ret = d;
	return 0;
}

size_t ee_dispatch_room(const struct ee_dispatch *d)
{
	size_t idle = d->running < d->jobs ? d->jobs - d->running : 0;
	return idle + (d->waiting < d->capacity ? d->capacity - d->waiting : 0);
}

size_t ee_dispatch_waiting(const struct ee_dispatch *d)
{
	return d->waiting;
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

/* Starts waiting candidates while sandbox slots are free. */
static void pump(struct ee_dispatch *d)
{
	while (d->head && d->running < d->jobs && !ee_loop_interrupted(d->loop)) {
		struct item *it = d->head;
		struct ee_err err = { 0 };

		d->head = it->next;
		if (!d->head)
			d->tail = NULL;
		d->waiting--;
		clock_gettime(CLOCK_MONOTONIC, &it->started);
		if (ee_eval_start(d->eng, d->o, &it->c, on_record, it, &err) < 0) {
			it->cb(it->ctx, ee_record_sandbox_error(it->c.task->task_id, err.msg), 0);
			free(it);
			continue;
		}
		d->running++;
	}
}

int ee_dispatch_submit(struct ee_dispatch *d, const struct ee_candidate *c, ee_dispatch_cb cb, void *ctx)
{
	if (ee_dispatch_room(d) == 0)
		return -1;
	struct item *it = calloc(1, sizeof(*it));
	if (!it)
		return -1;
	*it = (struct item){ .c = *c, .cb = cb, .ctx = ctx, .d = d };
	if (d->tail)
		d->tail->next = it;
	else
		d->head = it;
	d->tail = it;
	d->waiting++;
	pump(d);
	return 0;
}

void ee_dispatch_drop_waiting(struct ee_dispatch *d)
{
	while (d->head) {
		struct item *it = d->head;
		d->head = it->next;
		d->waiting--;
		it->cb(it->ctx, NULL, 0);
		free(it);
	}
	d->tail = NULL;
}

void ee_dispatch_free(struct ee_dispatch *d)
{
	if (!d)
		return;
	ee_dispatch_drop_waiting(d);
	free(d);
}
