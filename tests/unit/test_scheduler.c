/* test_scheduler.c - the scheduler's source protocol (scheduler.h), on a
 * real loop but without sandboxes: what next() answers when nothing runs. */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/engine.h"
#include "base/err.h"
#include "engine/scheduler.h"
#include "input/task.h"

#include "leakcheck.h"

struct source_state {
	int answer; /* what next() returns */
	int calls;
	int done_calls;
};

static int next_answers(void *ctx, struct ee_candidate *c, void **token, struct ee_err *err)
{
	struct source_state *s = ctx;
	(void)c;
	*token = NULL;
	s->calls++;
	if (s->answer < 0)
		return ee_fail(err, EE_ERR_USAGE, "bad sample");
	return s->answer;
}

static void done_counts(void *ctx, void *token, json_t *record)
{
	struct source_state *s = ctx;
	(void)token;
	s->done_calls++;
	json_decref(record);
}

static const struct ee_sched_source source = { next_answers, done_counts };

struct answer_case {
	int answer;
	int want_rc;
	const char *want_msg; /* in err.msg, or NULL */
};

Test(scheduler, a_source_that_waits_with_nothing_in_flight_is_an_error_not_a_spin)
{
	static const struct answer_case cases[] = {
		{ 0, 0, NULL },
		{ EE_SCHED_WAIT, -1, "waits with no evaluation in flight" },
		{ -1, -1, "bad sample" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ee_engine *eng = NULL;
		struct ee_eval_options o;
		struct ee_engine_config cfg = { .opt = &o, .loop_only = 1 };
		struct ee_err err = { 0 };
		struct source_state s = { .answer = cases[i].answer };

		memset(&o, 0, sizeof(o));
		cr_assert_eq(ee_engine_open(&cfg, &eng, &err), 0, "%s", err.msg);
		int rc = ee_schedule(eng, &o, 2, &source, &s, &err);
		cr_expect_eq(rc, cases[i].want_rc, "case %zu: rc %d", i, rc);
		cr_expect_eq(s.calls, 1, "case %zu: next() asked once, then the scheduler stopped", i);
		cr_expect_eq(s.done_calls, 0, "case %zu", i);
		if (cases[i].want_msg)
			cr_expect(strstr(err.msg, cases[i].want_msg) != NULL, "case %zu: '%s'", i, err.msg);
		ee_engine_close(eng);
	}
	no_leaks();
}

/* A candidate whose sandbox cannot be made (a loop-only engine makes
 * none) is its record, an infrastructure error with the sample's key, and
 * the scheduler goes on pulling: the source decides when to stop. */
struct infra_state {
	struct ee_task task;
	int given, limit;
	json_t *records[4];
	int n;
};

static int next_candidates(void *ctx, struct ee_candidate *c, void **token, struct ee_err *err)
{
	struct infra_state *s = ctx;
	(void)err;
	if (s->given == s->limit)
		return 0;
	*c = (struct ee_candidate){
		.task = &s->task, .program = "x = 1\n", .model = "m", .sample = s->given
	};
	*token = NULL;
	s->given++;
	return 1;
}

static void done_keeps(void *ctx, void *token, json_t *record)
{
	struct infra_state *s = ctx;
	(void)token;
	cr_assert_lt(s->n, 4);
	s->records[s->n++] = record;
}

Test(scheduler, a_sandbox_that_cannot_be_made_is_the_candidates_infra_error_record)
{
	static const char *const asserts[] = { "assert x == 1" };
	static const struct ee_sched_source infra_source = { next_candidates, done_keeps };
	struct ee_engine *eng = NULL;
	struct ee_eval_options o;
	struct ee_engine_config cfg = { .opt = &o, .loop_only = 1 };
	struct ee_err err = { 0 };
	struct infra_state s = { .limit = 3 };

	memset(&o, 0, sizeof(o));
	ee_limits_default(&o.limits);
	cr_assert_eq(ee_task_from_asserts(asserts, 1, &s.task, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_engine_open(&cfg, &eng, &err), 0, "%s", err.msg);
	cr_expect_eq(ee_schedule(eng, &o, 2, &infra_source, &s, &err), 0, "%s", err.msg);
	cr_expect_eq(s.n, 3, "every candidate has its record, and the run went on");
	for (int i = 0; i < s.n; i++) {
		json_t *r = s.records[i];
		cr_assert_not_null(r);
		cr_expect(json_is_true(json_object_get(r, "infra_error")));
		cr_expect(json_is_null(json_object_get(r, "reward")));
		cr_expect_eq(json_integer_value(json_object_get(r, "sample")), i);
		cr_expect_str_eq(json_string_value(json_object_get(r, "model")), "m");
		cr_expect(strstr(json_string_value(json_object_get(r, "sandbox_error")), "runs no sandbox"));
		json_decref(r);
	}
	ee_engine_close(eng);
	ee_task_free(&s.task);
	no_leaks();
}
