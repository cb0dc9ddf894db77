/* test_score.c - status, detail, score and reward from facts (score.h). */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <string.h>

#include "verdict/score.h"

static struct ee_test_outcome pass_t(double w, int i)
{
	return (struct ee_test_outcome){ .state = EE_T_PASS, .weight = w, .index = i };
}

static struct ee_test_outcome fail_t(double w, int i, const char *msg)
{
	return (struct ee_test_outcome){ .state = EE_T_FAIL, .weight = w, .index = i, .message = msg };
}

static struct ee_verdict decide(struct ee_verdict_in in)
{
	struct ee_verdict v;
	ee_verdict_decide(&in, &v);
	return v;
}

Test(score, all_pass)
{
	struct ee_test_outcome t[] = { pass_t(1, 0), pass_t(1, 1) };
	struct ee_verdict v = decide((struct ee_verdict_in){ .done = 1, .tests = t, .n_tests = 2 });
	cr_assert_eq(v.status, EE_PASS);
	cr_assert_str_eq(v.detail, "");
	cr_assert_float_eq(v.score, 1.0, 1e-12);
	cr_assert_eq(v.reward, 1);
	cr_assert_eq(v.passed, 2);
	cr_assert_eq(v.total, 2);
}

Test(score, two_of_three_is_0_667_and_names_the_first_failure)
{
	struct ee_test_outcome t[] = { pass_t(1, 0), fail_t(1, 1, "AssertionError"), pass_t(1, 2) };
	struct ee_verdict v = decide((struct ee_verdict_in){ .done = 1, .tests = t, .n_tests = 3 });
	cr_assert_eq(v.status, EE_ASSERTION_FAIL);
	cr_assert_str_eq(v.detail, "test 1 failed: AssertionError");
	cr_assert_float_eq(v.score, 2.0 / 3.0, 1e-12);
	cr_assert_eq(v.reward, -1);
}

Test(score, a_multi_line_message_gives_a_one_line_detail)
{
	struct ee_test_outcome t[] = { fail_t(1, 0, "AssertionError: 1 != 2\n- a\n+ b") };
	struct ee_verdict v = decide((struct ee_verdict_in){ .done = 1, .tests = t, .n_tests = 1 });
	cr_assert_str_eq(v.detail, "test 0 failed: AssertionError: 1 != 2");
}

Test(score, weights)
{
	struct ee_test_outcome t[] = { pass_t(3, 0), fail_t(1, 1, NULL) };
	struct ee_verdict v = decide((struct ee_verdict_in){ .done = 1, .tests = t, .n_tests = 2 });
	cr_assert_float_eq(v.score, 0.75, 1e-12);
	cr_assert_str_eq(v.detail, "test 1 failed");
}

Test(score, timeout_scores_zero_even_with_passed_tests)
{
	struct ee_test_outcome t[] = { pass_t(1, 0), { .state = EE_T_NOT_RUN, .weight = 1, .index = 1 } };
	struct ee_verdict v = decide((struct ee_verdict_in){ .timed_out = 1, .tests = t, .n_tests = 2 });
	cr_assert_eq(v.status, EE_TIMEOUT);
	cr_assert_str_eq(v.detail, "timeout");
	cr_assert_float_eq(v.score, 0.0, 1e-12);
	cr_assert_eq(v.passed, 1);
}

/* A timeout is "starved" only when a thread of it waited for a CPU for
 * more than half of its wall time and it ran for less than half of it
 * (less than half a core over its clock). */
Test(score, starved_timeouts)
{
	static const struct {
		double cpu_ms, wait_ms, wall_ms;
		const char *detail;
	} cases[] = {
		{ 133, 1800, 2010, "timeout (starved: 133 ms of CPU)" }, /* the victim */
		{ 0.4, 1990, 2000, "timeout (starved: 0 ms of CPU)" },
		{ 3, 1, 2000, "timeout" },       /* a sleeper or a deadlock: no run-queue wait */
		{ 26, 300, 3000, "timeout" },    /* a sleeper that waited at start-up on a busy host */
		{ 2000, 1900, 2010, "timeout" }, /* its own threads share its one-CPU quota */
		{ 1100, 1500, 2000, "timeout" }, /* more than half of the wall time on a CPU */
		{ 1000, 1000, 2000, "timeout" }, /* exactly half a core: not less */
		{ 600, 1390, 2000, "timeout (starved: 600 ms of CPU)" }, /* 30 % of a core */
		{ 900, 1100, 2000,
		  "timeout (starved: 900 ms of CPU)" }, /* 45 %: a honest 60 % program's loss */
		{ 490, 1500, 2000, "timeout (starved: 490 ms of CPU)" },
		{ 133, -1, 2000, "timeout" },   /* no schedstat: no claim */
		{ -1, 1800, 2000, "timeout" },  /* no CPU figure */
		{ 133, 1800, 0, "timeout" },    /* no wall time */
		{ 300, 1000, 2000, "timeout" }, /* waited exactly half of it: not more */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ee_verdict v = decide((struct ee_verdict_in){ .timed_out = 1,
		                                                     .pids_limit_hit = 1,
		                                                     .cpu_ms = cases[i].cpu_ms,
		                                                     .runq_wait_ms = cases[i].wait_ms,
		                                                     .wall_ms = cases[i].wall_ms });
		cr_expect_eq(v.status, EE_TIMEOUT, "case %zu", i);
		cr_expect_str_eq(v.detail, cases[i].detail, "case %zu: detail '%s'", i, v.detail);
		cr_expect_float_eq(v.score, 0.0, 1e-12, "case %zu", i);
	}
	/* Without a timeout the figures say nothing. */
	struct ee_verdict v =
	        decide((struct ee_verdict_in){ .cpu_ms = 133, .runq_wait_ms = 1800, .wall_ms = 2010 });
	cr_expect_str_eq(v.detail, "premature exit");
}

Test(score, precedence_table)
{
	static const struct {
		struct ee_verdict_in in;
		int status;
		const char *detail;
	} cases[] = {
		{ { .timed_out = 1, .output_overflow = 1, .oom_killed = 1 }, EE_TIMEOUT, "timeout" },
		{ { .output_overflow = 1, .oom_killed = 1 }, EE_ERROR, "output overflow" },
		{ { .oom_killed = 1, .have_status = 1, .status = SIGKILL }, EE_ERROR, "memory limit" },
		{ { .protocol_error = "wrong nonce", .done = 1 },
		  EE_ERROR,
		  "protocol violation: wrong nonce" },
		{ { .syntax_error = "line 1: invalid syntax", .done = 1 },
		  EE_SYNTAX_ERROR,
		  "syntax error: line 1: invalid syntax" },
		{ { .scan_block = "denied-import", .done = 1 }, EE_ERROR, "blocked by scan: denied-import" },
		{ { .import_failed = 1, .import_denied = "socket", .done = 1 },
		  EE_ERROR,
		  "denied import: socket" },
		{ { .import_failed = 1, .import_exit = 1, .done = 1 }, EE_ERROR, "premature exit" },
		{ { .import_failed = 1, .import_setup = 1, .import_message = "NameError: x", .done = 1 },
		  EE_ERROR,
		  "setup failed: NameError: x" },
		{ { .import_failed = 1, .import_message = "ZeroDivisionError: division by zero", .done = 1 },
		  EE_SYNTAX_ERROR,
		  "import error: ZeroDivisionError: division by zero" },
		{ { .have_status = 1, .status = SIGXCPU }, EE_ERROR, "cpu limit" },
		{ { .have_status = 1, .status = SIGXFSZ }, EE_ERROR, "file size limit" },
		{ { .have_status = 1, .status = SIGSEGV }, EE_ERROR, "killed by signal SIGSEGV" },
		{ { .have_status = 1, .status = 0 }, EE_ERROR, "premature exit" },
		{ { .have_status = 0 }, EE_ERROR, "premature exit" },
		{ { .timed_out = 1, .pids_limit_hit = 1 }, EE_TIMEOUT, "timeout" },
		{ { .pids_limit_hit = 1, .import_failed = 1, .import_message = "BlockingIOError", .done = 1 },
		  EE_ERROR,
		  "process limit" },
		{ { .pids_limit_hit = 1, .oom_killed = 1 }, EE_ERROR, "memory limit" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ee_verdict v = decide(cases[i].in);
		cr_expect_eq(v.status, cases[i].status, "case %zu: status %d", i, v.status);
		cr_expect_str_eq(v.detail, cases[i].detail, "case %zu: detail '%s'", i, v.detail);
		cr_expect_eq(v.reward, -1, "case %zu", i);
	}
}

Test(score, oom_after_everything_passed_keeps_the_pass)
{
	struct ee_test_outcome t[] = { pass_t(1, 0) };
	struct ee_verdict v =
	        decide((struct ee_verdict_in){ .oom_killed = 1, .done = 1, .tests = t, .n_tests = 1 });
	cr_assert_eq(v.status, EE_PASS);
}

Test(score, exit_inside_a_test_is_premature_exit_not_pass)
{
	struct ee_test_outcome t[] = { pass_t(1, 0),
		                       { .state = EE_T_PASS, .weight = 1, .index = 1, .exited = 1 } };
	struct ee_verdict v = decide((struct ee_verdict_in){ .done = 1, .tests = t, .n_tests = 2 });
	cr_assert_eq(v.status, EE_ERROR);
	cr_assert_str_eq(v.detail, "premature exit");
}

Test(score, an_io_test_over_the_output_cap_is_output_overflow)
{
	struct ee_test_outcome t[] = { pass_t(1, 0),
		                       { .state = EE_T_FAIL, .weight = 1, .index = 1, .overflow = 1 } };
	struct ee_verdict v = decide((struct ee_verdict_in){ .done = 1, .tests = t, .n_tests = 2 });
	cr_assert_eq(v.status, EE_ERROR);
	cr_assert_str_eq(v.detail, "output overflow");
}

Test(score, denied_import_in_a_test)
{
	struct ee_test_outcome t[] = { { .state = EE_T_FAIL, .weight = 1, .denied = "subprocess" } };
	struct ee_verdict v = decide((struct ee_verdict_in){ .done = 1, .tests = t, .n_tests = 1 });
	cr_assert_eq(v.status, EE_ERROR);
	cr_assert_str_eq(v.detail, "denied import: subprocess");
}

Test(score, done_with_unreported_tests_is_not_a_pass)
{
	struct ee_test_outcome t[] = { pass_t(1, 0), { .state = EE_T_NOT_RUN, .weight = 1, .index = 1 } };
	struct ee_verdict v = decide((struct ee_verdict_in){ .done = 1, .tests = t, .n_tests = 2 });
	cr_assert_eq(v.status, EE_ERROR);
	cr_assert_str_eq(v.detail, "premature exit");
	cr_assert_float_eq(v.score, 0.5, 1e-12);
}

Test(score, skipped_hidden_tests_count_against_the_score)
{
	struct ee_test_outcome t[] = { fail_t(1, 0, "x"),
		                       { .state = EE_T_SKIPPED, .weight = 1, .index = 1 } };
	struct ee_verdict v = decide((struct ee_verdict_in){ .done = 1, .tests = t, .n_tests = 2 });
	cr_assert_eq(v.status, EE_ASSERTION_FAIL);
	cr_assert_float_eq(v.score, 0.0, 1e-12);
	cr_assert_eq(v.total, 2);
}

Test(score, no_tests_is_not_a_pass)
{
	struct ee_verdict v = decide((struct ee_verdict_in){ .done = 1 });
	cr_assert_eq(v.status, EE_ERROR);
	cr_assert_str_eq(v.detail, "no tests");
	cr_assert_eq(v.reward, -1);
}

Test(score, status_names)
{
	cr_assert_str_eq(ee_status_name(EE_PASS), "pass");
	cr_assert_str_eq(ee_status_name(EE_ASSERTION_FAIL), "assertion_fail");
	cr_assert_str_eq(ee_status_name(EE_SYNTAX_ERROR), "syntax_error");
	cr_assert_str_eq(ee_status_name(EE_TIMEOUT), "timeout");
	cr_assert_str_eq(ee_status_name(EE_ERROR), "error");
	cr_assert_str_eq(ee_status_name(42), "error");
}

/* --test-timeout: one test out of its own clock; the others were judged. */
Test(score, a_tests_own_timeout_is_a_timeout_scored_by_the_passed_ones)
{
	struct ee_test_outcome t[] = { fail_t(1, 0, "expected 1"), pass_t(1, 1), fail_t(1, 2, "timed out"),
		                       pass_t(1, 3) };
	t[2].timed_out = 1;
	struct ee_verdict v = decide((struct ee_verdict_in){ .done = 1, .tests = t, .n_tests = 4 });
	cr_assert_eq(v.status, EE_TIMEOUT);
	cr_assert_str_eq(v.detail, "test 2 timed out");
	cr_assert_float_eq(v.score, 0.5, 1e-12);
	cr_assert_eq(v.passed, 2);
	cr_assert_eq(v.reward, -1);
	v = decide((struct ee_verdict_in){ .done = 1, .tests = t, .n_tests = 4, .pids_limit_hit = 1 });
	cr_assert_str_eq(v.detail, "test 2 timed out", "a timeout keeps its detail");
}

/* --time-factor: a calibrated test over its limit makes the run's detail
 * its own message, "slow: Nx the reference". */
Test(score, a_slow_calibrated_test_gives_the_run_its_message)
{
	struct ee_test_outcome t[] = { pass_t(1, 0), fail_t(1, 1, "slow: 41x the reference"),
		                       fail_t(1, 2, "slow: over 5.0x the reference (stopped at its limit)") };
	t[1].timed_out = t[1].slow = 1;
	t[2].timed_out = t[2].slow = 1;
	struct ee_verdict v = decide((struct ee_verdict_in){ .done = 1, .tests = t, .n_tests = 3 });
	cr_assert_eq(v.status, EE_TIMEOUT);
	cr_assert_str_eq(v.detail, "slow: 41x the reference");
	cr_assert_eq(v.passed, 1);
}
