/* heal.c - a sick server's own probe (see heal.h). */
#include "serve/heal.h"

#include <jansson.h>
#include <stdlib.h>
#include <time.h>

#include "base/err.h"
#include "engine/engine.h"
#include "engine/evaluate.h"
#include "input/task.h"
#include "serve/dispatch.h"

/* Probes at most this often: each may make a warm worker again. */
#define PROBE_EVERY_S 1.0

struct ee_heal {
	struct ee_engine *eng;
	struct ee_dispatch *d;
	const struct ee_eval_options *o;
	struct ee_task task;
	int in_flight;
	double last_s; /* monotonic, of the last probe's start */
	unsigned long probes;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int ee_heal_new(struct ee_engine *eng, struct ee_dispatch *d, const struct ee_eval_options *o,
                struct ee_heal **ret, struct ee_err *err)
{
	static const char *const asserts[] = { "assert add(1, 2) == 3" };
	struct ee_heal *h = calloc(1, sizeof(*h));

	if (!h)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	if (ee_task_from_asserts(asserts, 1, &h->task, err) < 0 ||
	    (o->strict_asserts && ee_task_strict_asserts(&h->task, err) < 0)) {
		ee_task_free(&h->task);
		free(h);
		return -1;
	}
	h->eng = eng;
	h->d = d;
	h->o = o;
	h->last_s = -PROBE_EVERY_S;
	*ret = h;
	return 0;
}

/* Its record says nothing a client waits for: its start was counted
 * (evaluate.c), which is what heals the engine. */
static void probe_done(void *ctx, json_t *record, double run_s)
{
	struct ee_heal *h = ctx;
	(void)run_s;
	json_decref(record);
	h->in_flight = 0;
}

void ee_heal_poke(struct ee_heal *h)
{
	struct ee_engine_health health;

	ee_engine_health(h->eng, &health);
	if (!health.sick || h->in_flight || now_s() - h->last_s < PROBE_EVERY_S)
		return;
	struct ee_candidate c = {
		.task = &h->task,
		.program = "def add(a, b):\n    return a + b\n",
		.sample = -1,
		.trusted = 1,
	};
	h->last_s = now_s();
	h->in_flight = 1;
	if (ee_dispatch_submit_trusted(h->d, &c, h->o, probe_done, h) < 0)
		h->in_flight = 0; /* out of memory: the next poke tries again */
	else
		h->probes++;
}

unsigned long ee_heal_probes(const struct ee_heal *h)
{
	return h ? h->probes : 0;
}

void ee_heal_free(struct ee_heal *h)
{
	if (!h)
		return;
	ee_task_free(&h->task);
	free(h);
}
