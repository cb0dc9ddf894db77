/* test_engine.c - the engine without a host: what code that runs no
 * candidate gets (engine/engine.h). The engine with sandboxes is proven by
 * the e2e suites (run, eval, serve, doctor all open one). */
#include <criterion/criterion.h>
#include <sched.h>
#include <string.h>

#include "engine/engine.h"
#include "base/err.h"
#include "base/loop.h"
#include "engine/evaluate.h"
#include "harness/harness.h"
#include "leakcheck.h"
#include "sandbox/sandbox.h"
#include "input/task.h"

Test(engine, a_loop_only_engine_has_a_loop_and_no_host)
{
	struct ee_eval_options o;
	struct ee_engine_config cfg = { .opt = &o, .loop_only = 1 };
	struct ee_engine *eng = NULL;
	struct ee_err err = { 0 };

	memset(&o, 0, sizeof(o));
	cr_assert_eq(ee_engine_open(&cfg, &eng, &err), 0, "%s", err.msg);
	cr_expect_not_null(ee_engine_loop(eng));
	cr_expect_null(ee_engine_host(eng));
	cr_expect_eq(ee_engine_warm(eng), 0);
	cr_expect_eq(ee_engine_harness(eng)->code_fd, -1);
	cr_expect_eq(ee_loop_run(ee_engine_loop(eng), &err), 0, "nothing to run: %s", err.msg);
	ee_engine_close(eng);
	ee_engine_close(NULL);
	no_leaks();
}

/* An evaluation on it fails at start, with an error and no record. */
Test(engine, an_evaluation_on_a_loop_only_engine_fails_at_start)
{
	static const char *const asserts[] = { "assert f() == 1" };
	struct ee_eval_options o;
	struct ee_engine_config cfg = { .opt = &o, .loop_only = 1 };
	struct ee_engine *eng = NULL;
	struct ee_task task;
	struct ee_err err = { 0 };
	int called = 0;

	memset(&o, 0, sizeof(o));
	ee_limits_default(&o.limits);
	cr_assert_eq(ee_task_from_asserts(asserts, 1, &task, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_engine_open(&cfg, &eng, &err), 0, "%s", err.msg);
	struct ee_candidate c = { .task = &task, .program = "def f():\n    return 1\n", .sample = -1 };
	cr_expect_eq(ee_eval_start(eng, &o, &c, (ee_record_cb)NULL, &called, &err), -1);
	cr_expect(strstr(err.msg, "runs no sandbox") != NULL, "'%s'", err.msg);
	cr_expect_eq(err.code, EE_ERR_SANDBOX);
	cr_expect_eq(called, 0);
	ee_engine_close(eng);
	ee_task_free(&task);
	no_leaks();
}

/* Sandbox starts make the engine's health: EE_ENGINE_SICK_AFTER failed in
 * a row make it sick (stderr says so once), one that succeeds heals it. */
Test(engine, failed_starts_in_a_row_make_it_sick_until_one_succeeds)
{
	struct ee_eval_options o;
	struct ee_engine_config cfg = { .opt = &o, .loop_only = 1 };
	struct ee_engine *eng = NULL;
	struct ee_engine_health h;
	struct ee_err err = { 0 }, why = { .code = EE_ERR_SANDBOX };

	memset(&o, 0, sizeof(o));
	cr_assert_eq(ee_engine_open(&cfg, &eng, &err), 0, "%s", err.msg);
	ee_engine_health(eng, &h);
	cr_expect(!h.sick && h.failing == 0 && h.failures == 0 && h.replacements == 0 && !h.why[0]);
	cr_assert_eq(EE_ENGINE_SICK_AFTER, 3);
	for (int i = 0; i < 2; i++) {
		snprintf(why.msg, sizeof(why.msg), "start %d: No such device", i);
		ee_engine_saw_start(eng, &why);
	}
	ee_engine_saw_start(eng, NULL); /* a success between: the count starts over */
	for (int i = 0; i < EE_ENGINE_SICK_AFTER; i++) {
		ee_engine_health(eng, &h);
		cr_expect_eq(h.sick, 0, "after %d", i);
		snprintf(why.msg, sizeof(why.msg), "start %d: Resource temporarily unavailable", i);
		ee_engine_saw_start(eng, &why);
	}
	ee_engine_health(eng, &h);
	cr_expect_eq(h.sick, 1);
	cr_expect_eq(h.failing, 3);
	cr_expect_eq(h.failures, 5);
	cr_expect_str_eq(h.why, "start 2: Resource temporarily unavailable");
	ee_engine_saw_start(eng, &why);
	ee_engine_health(eng, &h);
	cr_expect(h.sick && h.failing == 4);
	ee_engine_saw_start(eng, NULL);
	ee_engine_health(eng, &h);
	cr_expect(!h.sick && h.failing == 0 && h.failures == 6, "healed; the total stays");
	ee_engine_close(eng);
	no_leaks();
}

/* --judge split's pairs are placed on the CPUs this process may use, the
 * one the fewest live pairs share first; on one CPU there is no choice. */
Test(engine, pairs_spread_over_the_cpus_and_one_cpu_places_none)
{
	struct ee_eval_options o;
	struct ee_engine_config cfg = { .opt = &o, .loop_only = 1 };
	struct ee_engine *eng = NULL;
	struct ee_err err = { 0 };
	cpu_set_t all, one;

	memset(&o, 0, sizeof(o));
	cr_assert_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	if (CPU_COUNT(&all) >= 2) {
		cr_assert_eq(ee_engine_open(&cfg, &eng, &err), 0, "%s", err.msg);
		int a = ee_engine_pair_cpu(eng), b = ee_engine_pair_cpu(eng);
		cr_expect(a >= 0 && b >= 0 && a != b && CPU_ISSET(a, &all) && CPU_ISSET(b, &all), "%d %d", a,
		          b);
		ee_engine_pair_cpu_done(eng, a);
		cr_expect_eq(ee_engine_pair_cpu(eng), a, "the freed CPU is the least shared");
		ee_engine_pair_cpu_done(eng, -1); /* nothing taken: nothing given back */
		ee_engine_close(eng);
	}
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, &one);
			break;
		}
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	cr_assert_eq(ee_engine_open(&cfg, &eng, &err), 0, "%s", err.msg);
	cr_expect_eq(ee_engine_pair_cpu(eng), -1);
	ee_engine_close(eng);
	sched_setaffinity(0, sizeof(all), &all);
	no_leaks();
}
