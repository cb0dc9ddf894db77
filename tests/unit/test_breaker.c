/* test_breaker.c - the circuit breaker's window and spec (engine/breaker.h),
 * the violation classes (verdict/violations.h) and the tally (base/tally.h). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/tally.h"
#include "engine/breaker.h"
#include "verdict/violations.h"

static json_t *rec(const char *violations)
{
	json_t *r = json_pack("{s:s, s:i}", "task_id", "t", "sample", 0);
	if (violations)
		json_object_set_new(r, "violations", json_loads(violations, 0, NULL));
	return r;
}

static int feed(struct ee_breaker *b, const char *violations)
{
	json_t *r = rec(violations);
	int tripped = ee_breaker_feed(b, r);
	json_decref(r);
	return tripped;
}

Test(breaker, parses_the_spec_forms)
{
	struct ee_breaker_spec s;
	struct ee_err err = { 0 };

	cr_assert_eq(ee_breaker_parse("0.05 over 100", &s, &err), 0, "%s", err.msg);
	cr_expect_float_eq(s.rate, 0.05, 1e-12);
	cr_expect_eq(s.n, 100);
	cr_assert_eq(ee_breaker_parse("5% over 20", &s, &err), 0, "%s", err.msg);
	cr_expect_float_eq(s.rate, 0.05, 1e-12);
	cr_assert_eq(ee_breaker_parse("0/1", &s, &err), 0, "%s", err.msg);
	cr_expect_eq(s.n, 1);
	cr_assert_eq(ee_breaker_parse("off", &s, &err), 0);
	cr_expect_eq(s.n, 0);
	const char *bad[] = {
		"1 over 10",   "-0.1 over 10", "0.1 over 0",      "0.1 over", "over 10", "0.1 over 10x",
		"0.1 over -1", "abc",          "0.1 over 100001", "",         NULL
	};
	for (const char **b = bad; *b; b++) {
		memset(&err, 0, sizeof(err));
		cr_expect_eq(ee_breaker_parse(*b, &s, &err), -1, "accepted '%s'", *b);
		cr_expect_eq(err.code, EE_ERR_USAGE);
	}
}

Test(breaker, trips_above_rate_times_n_over_a_sliding_window)
{
	struct ee_breaker_spec s = { 0.2, 10 };
	struct ee_breaker b;
	struct ee_err err = { 0 };

	cr_assert_eq(ee_breaker_init(&b, &s, &err), 0);
	/* Two attacks in ten are not more than 0.2 x 10. */
	cr_expect_eq(feed(&b, "{\"socket\": 1}"), 0);
	cr_expect_eq(feed(&b, "{\"ptrace\": 4}"), 0);
	/* Not escape-class: never counted. */
	for (int i = 0; i < 20; i++)
		cr_expect_eq(feed(&b, "{\"time_limit\": 1, \"denied_import\": 2, \"mincore\": 1}"), 0);
	cr_expect_eq(feed(&b, NULL), 0);
	/* The window slid past the first two: two more still do not trip it. */
	cr_expect_eq(feed(&b, "{\"mount\": 1}"), 0);
	cr_expect_eq(feed(&b, "{\"clone_namespace\": 1}"), 0);
	cr_expect_eq(feed(&b, "{\"setuid\": 1}"), 1);
	cr_expect(b.tripped);
	cr_expect(strstr(b.why, "3 of the last 10 candidates") != NULL, "%s", b.why);
	cr_expect_eq(feed(&b, "{\"bpf\": 1}"), 0, "trips once");
	ee_breaker_reset(&b);
	cr_expect(!b.tripped);
	cr_expect_eq(feed(&b, "{\"socket\": 1}"), 0, "a fresh window");
	ee_breaker_free(&b);
}

Test(breaker, rate_zero_trips_on_the_first_attempt_and_off_never)
{
	struct ee_breaker b;
	struct ee_err err = { 0 };
	struct ee_breaker_spec zero = { 0, 5 }, off = { 0, 0 };

	cr_assert_eq(ee_breaker_init(&b, &zero, &err), 0);
	cr_expect_eq(feed(&b, NULL), 0);
	cr_expect_eq(feed(&b, "{\"socketpair\": 1}"), 1);
	ee_breaker_free(&b);
	cr_assert_eq(ee_breaker_init(&b, &off, &err), 0);
	for (int i = 0; i < 5; i++)
		cr_expect_eq(feed(&b, "{\"socket\": 9}"), 0);
	ee_breaker_free(&b);
}

Test(violations, classes_and_the_escape_class)
{
	cr_expect_str_eq(ee_violation_class("socket"), "network");
	cr_expect_str_eq(ee_violation_class("clone_namespace"), "namespaces");
	cr_expect_str_eq(ee_violation_class("time_limit"), "limit");
	cr_expect_str_eq(ee_violation_class("denied_import"), "import");
	cr_expect_str_eq(ee_violation_class("mincore"), "other");
	cr_expect(ee_violation_is_escape("ptrace"));
	cr_expect(ee_violation_is_escape("io_uring_setup"));
	cr_expect(!ee_violation_is_escape("memory_limit"));
	cr_expect(!ee_violation_is_escape("getxattr"));
	/* refused by the mounts, not an attempt on the boundary */
	cr_expect_str_eq(ee_violation_class("write_outside_tmp"), "filesystem");
	cr_expect(!ee_violation_is_escape("write_outside_tmp"));
	json_t *v = json_loads("{\"socket\": 2, \"mount\": 1, \"time_limit\": 1, \"mincore\": 5}", 0, NULL);
	cr_expect_eq(ee_violations_escape_count(v), 3);
	cr_expect_eq(ee_violations_escape_count(NULL), 0);
	json_decref(v);
}

Test(tally, counts_names_and_keeps_its_bound)
{
	struct ee_tally t;
	char name[16];

	memset(&t, 0, sizeof(t));
	ee_tally_add(&t, "socket", 1);
	ee_tally_add(&t, "socket", 2);
	cr_expect_eq(ee_tally_get(&t, "socket"), 3);
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "call%d", i);
		ee_tally_add(&t, name, 1);
	}
	cr_expect_eq(t.n, EE_TALLY_MAX);
	unsigned long total = 0;
	for (unsigned i = 0; i < t.n; i++)
		total += t.v[i].count;
	cr_expect_eq(total, 103, "nothing lost: the overflow is under \"other\"");
	cr_expect_gt(ee_tally_get(&t, "other"), 0);
	cr_expect_eq(ee_tally_get(&t, "socket"), 3);
}
