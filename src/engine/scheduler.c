/* scheduler.c - keeping `jobs` evaluations in flight (see scheduler.h). */
#include "engine/scheduler.h"

#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "base/err.h"
#include "base/loop.h"
#include "sandbox/sandbox.h"

struct sched {
	struct ee_engine *eng;
	struct ee_loop *loop;
	const struct ee_eval_options *o;
	const struct ee_sched_source *src;
	void *ctx;
	unsigned in_flight;
	int exhausted; /* next() said end, or failed */
	int failed;
	struct ee_err err;
};

struct slot {
	struct sched *s;
	void *token;
};

static void refill(struct sched *s, unsigned jobs);

static void stop(struct sched *s, const char *why)
{
	s->failed = 1;
	s->exhausted = 1;
	ee_fail(&s->err, EE_ERR_SANDBOX, "%s", why);
}

static void on_record(void *ctx, json_t *record)
{
	struct slot *slot = ctx;
	struct sched *s = slot->s;

	s->in_flight--;
	s->src->done(s->ctx, slot->token, record);
	free(slot);
}

/* Starts candidates until jobs are in flight or the source is dry. */
static void refill(struct sched *s, unsigned jobs)
{
	while (!s->exhausted && s->in_flight < jobs && !ee_loop_interrupted(s->loop)) {
		struct ee_candidate c;
		struct slot *slot = calloc(1, sizeof(*slot));
		if (!slot) {
			stop(s, "out of memory");
			return;
		}
		memset(&c, 0, sizeof(c));
		int rc = s->src->next(s->ctx, &c, &slot->token, &s->err);
		if (rc == EE_SCHED_WAIT) {
			free(slot);
			if (s->in_flight == 0) /* nothing could ever make room: never spin */
				stop(s, "the sample source waits with no evaluation in flight");
			return;
		}
		if (rc <= 0) {
			free(slot);
			s->exhausted = 1;
			s->failed = rc < 0;
			return;
		}
		slot->s = s;
		struct ee_err why = { 0 };
		if (ee_eval_start(s->eng, s->o, &c, on_record, slot, &why) < 0) {
			void *token = slot->token;
			free(slot);
			if (why.code != EE_ERR_SANDBOX) {
				s->err = why;
				s->exhausted = 1;
				s->failed = 1;
				return;
			}
			/* The sandbox could not be made (tried twice): the host, not
			 * the candidate; its record says so, and the source decides
			 * whether the run goes on (samples.c). */
			s->src->done(s->ctx, token, ee_candidate_sandbox_error(&c, why.msg));
			continue;
		}
		s->in_flight++;
	}
}

int ee_schedule(struct ee_engine *eng, const struct ee_eval_options *o, unsigned jobs,
                const struct ee_sched_source *src, void *ctx, struct ee_err *err)
{
	struct ee_loop *loop = ee_engine_loop(eng);
	struct sched s = { .eng = eng, .loop = loop, .o = o, .src = src, .ctx = ctx };

	if (jobs == 0)
		jobs = 1;
	refill(&s, jobs);
	while (s.in_flight > 0) {
		int rc = ee_loop_run_once(loop, err);
		if (rc < 0)
			return -1;
		refill(&s, jobs);
	}
	if (ee_loop_interrupted(loop))
		return ee_loop_interrupted(loop);
	if (s.failed) {
		*err = s.err;
		return -1;
	}
	return 0;
}
