/* test_refcache.c - serve's reference results (serve/refcache.h) and the
 * dispatcher's held places and trusted lane (serve/dispatch.h), on an
 * engine without a host: every sandbox fails to start, which is exactly
 * the host's failure a reference run must report as such (never as the
 * task's). Hits and joins need real sandboxes: tests/e2e/test_serve_generated.py. */
#include <criterion/criterion.h>
#include <math.h>
#include <time.h>
#include <jansson.h>
#include <string.h>

#include "base/err.h"
#include "engine/engine.h"
#include "engine/evaluate.h"
#include "engine/reference.h"
#include "input/task.h"
#include "leakcheck.h"
#include "serve/dispatch.h"
#include "serve/refcache.h"

static const char sort_task[] =
        "{\"task_id\": \"demo/sort\", \"entry_point\": \"f\","
        " \"tests\": [{\"kind\": \"assert\", \"code\": \"assert f([2, 1]) == [1, 2]\"}],"
        " \"reference\": \"def f(xs):\\n    return sorted(xs)\\n\","
        " \"generate\": \"def generate(rng, n):\\n    return [[[rng.random()]] for _ in range(n)]\\n\"}";

struct fixture {
	struct ee_eval_options o;
	struct ee_engine *eng;
	struct ee_dispatch *d;
	struct ee_refcache *rc;
	struct ee_task task;
};

static void open_fixture(struct fixture *f)
{
	struct ee_err err = { 0 };

	memset(f, 0, sizeof(*f));
	ee_limits_default(&f->o.limits);
	struct ee_engine_config cfg = { .opt = &f->o, .loop_only = 1 };
	cr_assert_eq(ee_engine_open(&cfg, &f->eng, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_dispatch_new(f->eng, &f->o, 2, 8, &f->d, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_refcache_new(f->d, &f->o, 1 << 20, &f->rc, &err), 0, "%s", err.msg);
	json_t *j = json_loads(sort_task, 0, NULL);
	cr_assert_not_null(j);
	cr_assert_eq(ee_task_from_json(j, EE_FORMAT_AUTO, "t", &f->task, &err), 0, "%s", err.msg);
	json_decref(j);
	cr_assert_not_null(f->task.gen);
	snprintf(f->task.gen->key, sizeof(f->task.gen->key), "key");
}

static void close_fixture(struct fixture *f)
{
	ee_dispatch_free(f->d);
	ee_refcache_free(f->rc);
	ee_engine_close(f->eng);
	ee_task_free(&f->task);
}

struct outcome {
	int calls, code, part, job;
	char msg[256];
};

static void on_result(void *ctx, const struct ee_reference_job *job, int part, const struct ee_err *err)
{
	struct outcome *o = ctx;
	o->calls++;
	o->job = job != NULL;
	o->part = part;
	o->code = err ? err->code : 0;
	snprintf(o->msg, sizeof(o->msg), "%s", err ? err->msg : "");
}

/* A reference sandbox that cannot start is the host's error, not the
 * task's: no part of the task named, and nothing kept for the next lookup. */
Test(refcache, a_reference_sandbox_that_cannot_start_is_the_hosts_error_and_not_kept)
{
	struct fixture f;
	struct outcome got = { 0 };
	const struct ee_reference_job *job = (const void *)1;
	struct ee_err err = { 0 };

	open_fixture(&f);
	cr_expect_eq(ee_refcache_get(f.rc, &f.task, 3, 0, on_result, &got, &job, &err), 1, "%s", err.msg);
	cr_expect_null(job);
	cr_expect_eq(got.calls, 1, "its first run failed to start at once");
	cr_expect_eq(got.job, 0);
	cr_expect_eq(got.code, EE_ERR_SANDBOX, "%d: %s", got.code, got.msg);
	cr_expect_eq(got.part, EE_REF_PART_NONE);
	cr_expect(strstr(got.msg, "runs no sandbox") != NULL, "'%s'", got.msg);
	const struct ee_refcache_stats *s = ee_refcache_stats(f.rc);
	cr_expect_eq(s->misses, 1);
	cr_expect_eq(s->runs, 1);
	cr_expect_eq(s->sandboxes, 1);
	cr_expect_eq(s->failures, 1);
	cr_expect_eq(s->entries, 0);
	cr_expect_eq(ee_refcache_get(f.rc, &f.task, 3, 0, on_result, &got, &job, &err), 1);
	cr_expect_eq(got.calls, 2);
	cr_expect_eq(s->misses, 2, "a failure is not cached: the next lookup runs again");
	cr_expect_eq(s->hits + s->joins, 0);
	close_fixture(&f);
	no_leaks();
}

static void count_record(void *ctx, json_t *record, double run_s)
{
	(void)run_s;
	if (record && json_object_get(record, "sandbox_error"))
		++*(int *)ctx;
	json_decref(record);
}

/* Held places are room taken; a held place is never refused; the trusted
 * lane is outside the capacity. */
Test(refcache, held_places_count_as_taken_and_are_submitted_into)
{
	struct fixture f;
	int failed = 0;

	open_fixture(&f);
	cr_expect_eq(ee_dispatch_room(f.d), 10, "2 idle sandboxes + 8 queue places");
	cr_expect_eq(ee_dispatch_reserve(f.d, 4), 0);
	cr_expect_eq(ee_dispatch_room(f.d), 6);
	cr_expect_eq(ee_dispatch_reserve(f.d, 7), -1, "no room for 7 more: nothing held");
	cr_expect_eq(ee_dispatch_room(f.d), 6);
	struct ee_candidate c = { .task = &f.task, .program = "x = 1\n", .sample = -1, .trusted = 1 };
	cr_expect_eq(ee_dispatch_submit_reserved(f.d, &c, INFINITY, count_record, &failed), 0);
	cr_expect_eq(failed, 1, "started (and failed: no host) at once");
	cr_expect_eq(ee_dispatch_room(f.d), 7, "one held place used");
	ee_dispatch_unreserve(f.d, 3);
	cr_expect_eq(ee_dispatch_room(f.d), 10);
	cr_expect_eq(ee_dispatch_submit_trusted(f.d, &c, &f.o, count_record, &failed), 0);
	cr_expect_eq(failed, 2);
	cr_expect_eq(ee_dispatch_waiting(f.d), 0);
	close_fixture(&f);
	no_leaks();
}

static void expired_record(void *ctx, json_t *record, double run_s)
{
	if (!record && run_s == EE_DISPATCH_EXPIRED)
		++*(int *)ctx;
	json_decref(record);
}

/* A candidate whose latest start has passed is called back as expired,
 * never started, even with a sandbox slot idle (serve's deadlines). */
Test(refcache, a_candidate_past_its_latest_start_is_expired_not_started)
{
	struct fixture f;
	int expired = 0;
	struct timespec now;

	open_fixture(&f);
	clock_gettime(CLOCK_MONOTONIC, &now);
	cr_expect_eq(ee_dispatch_reserve(f.d, 2), 0);
	struct ee_candidate c = { .task = &f.task, .program = "x = 1\n", .sample = -1, .trusted = 1 };
	double past = (double)now.tv_sec + (double)now.tv_nsec / 1e9 - 1;
	cr_expect_eq(ee_dispatch_submit_reserved(f.d, &c, past, expired_record, &expired), 0);
	cr_expect_eq(expired, 1, "expired at once, its place given back");
	cr_expect_eq(ee_dispatch_room(f.d), 9);
	cr_expect_eq(ee_dispatch_submit_reserved(f.d, &c, past + 3600, expired_record, &expired), 0);
	cr_expect_eq(expired, 1, "in time: started (and failed: no host), not expired");
	cr_expect_eq(ee_dispatch_waiting(f.d), 0);
	cr_expect_eq(ee_dispatch_next_ms(f.d), -1, "nothing waits: no deadline to wake for");
	ee_dispatch_tick(f.d);
	cr_expect_eq(expired, 1);
	close_fixture(&f);
	no_leaks();
}
