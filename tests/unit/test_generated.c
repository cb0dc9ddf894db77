/* test_generated.c - a native task's reference and generator (task.h,
 * struct ee_task_gen; generated.c) and the tolerance of generated tests
 * (judge.h, ee_judge_pyeq_tol). Fixtures use ' for ". */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "input/task.h"
#include "pyvalue/judge.h"

#include "fixture_json.h"
#include "leakcheck.h"

#define WHERE "t.jsonl:1"
#define GEN                                                                                                  \
	"'task_id': 'g', 'entry_point': 'f', 'tests': [{'kind': 'assert', 'code': 'assert f(1) == 1'}], "    \
	"'reference': 'def f(x): return x', 'generate': 'def generate(rng, n): return [[1]] * n'"

static int load(const char *text, struct ee_task *t, struct ee_err *err)
{
	json_t *j = fix(text);
	int rc = ee_task_from_json(j, EE_FORMAT_AUTO, WHERE, t, err);
	json_decref(j);
	return rc;
}

Test(generated, defaults)
{
	struct ee_task t;
	struct ee_err err = { 0 };

	cr_assert_eq(load("{" GEN "}", &t, &err), 0, "%s", err.msg);
	cr_assert_not_null(t.gen);
	cr_expect_eq(t.gen->n, 20);
	cr_expect_eq(t.gen->tier, EE_TIER_PROPERTY);
	cr_expect_lt(t.gen->float_tol, 0);
	cr_expect_eq(t.gen->added, 0);
	cr_expect_str_eq(t.gen->reference, "def f(x): return x");
	ee_task_free(&t);
	cr_expect_eq(load("{" GEN
	                  ", 'n_generated': 3, 'generated_tier': 'edge', 'generated_float_tol': 1e-6}",
	                  &t, &err),
	             0, "%s", err.msg);
	cr_expect_eq(t.gen->n, 3);
	cr_expect_eq(t.gen->tier, EE_TIER_EDGE);
	cr_expect_float_eq(t.gen->float_tol, 1e-6, 1e-12);
	ee_task_free(&t);
	cr_expect_eq(load("{'task_id': 'p', 'tests': [{'kind': 'assert', 'code': 'x'}]}", &t, &err), 0);
	cr_expect_null(t.gen, "no reference: no generated tests");
	ee_task_free(&t);
	no_leaks();
}

static const struct {
	const char *json, *want;
} errors[] = {
	{ "{'task_id': 'g', 'entry_point': 'f', 'tests': [{'kind': 'assert', 'code': 'x'}], 'reference': "
	  "'r'}",
	  "generate: missing (a task with 'reference' needs both reference and generate)" },
	{ "{'task_id': 'g', 'entry_point': 'f', 'tests': [{'kind': 'assert', 'code': 'x'}], 'n_generated': "
	  "3}",
	  "n_generated: needs 'reference' and 'generate'" },
	{ "{" GEN ", 'n_generated': 0}", "n_generated: expected a whole number >= 1, got 0" },
	{ "{" GEN ", 'n_generated': 10001}", "n_generated: expected at most 10000, got 10001" },
	{ "{" GEN ", 'generated_tier': 'gold'}",
	  "generated_tier: expected one of canonical, edge, property, got \"gold\"" },
	{ "{" GEN ", 'generated_float_tol': -1}", "generated_float_tol: expected a number >= 0, got -1" },
	{ "{" GEN ", 'generated': 1}", "generated: unknown key in a task; did you mean 'generate'?" },
	{ "{'task_id': 'g', 'tests': [{'kind': 'assert', 'code': 'x'}], 'reference': 'r', 'generate': 'g'}",
	  "entry_point: missing (generated tests call it)" },
};

Test(generated, errors_name_their_field)
{
	char want[300];

	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		struct ee_task t;
		struct ee_err err = { 0 };
		cr_expect_eq(load(errors[i].json, &t, &err), -1, "%s", errors[i].json);
		snprintf(want, sizeof(want), "%s: %s", WHERE, errors[i].want);
		cr_expect_str_eq(err.msg, want, "%s", errors[i].json);
		cr_expect_null(t.gen);
		ee_task_free(&t);
	}
	no_leaks();
}

/* n inputs f(i), outputs i * 2 except where the reference raised (NULL). */
static void add(struct ee_task *t, size_t n, const int *raised, unsigned long long seed, double fraction)
{
	json_t *inputs = json_array();
	json_t **outputs = calloc(n, sizeof(*outputs));
	struct ee_err err = { 0 };
	char text[32];

	for (size_t i = 0; i < n; i++) {
		snprintf(text, sizeof(text), "%zu", i);
		json_array_append_new(inputs, json_pack("[{s:s}]", "int", text));
		snprintf(text, sizeof(text), "%zu", 2 * i);
		outputs[i] = raised && raised[i] ? NULL : json_pack("{s:s}", "int", text);
	}
	cr_assert_eq(ee_task_add_generated(t, inputs, outputs, seed, fraction, &err), 0, "%s", err.msg);
	for (size_t i = 0; i < n; i++)
		json_decref(outputs[i]);
	free(outputs);
	json_decref(inputs);
}

Test(generated, add_appends_strict_calls_and_counts_drops)
{
	struct ee_task t;
	struct ee_err err = { 0 };
	static const int raised[4] = { 0, 1, 0, 1 };

	cr_assert_eq(load("{" GEN "}", &t, &err), 0, "%s", err.msg);
	add(&t, 4, raised, 9, 0);
	cr_assert_eq(t.n_tests, 3);
	cr_expect_eq(t.gen->made, 2);
	cr_expect_eq(t.gen->dropped, 2);
	cr_expect_eq(t.gen->seed, 9);
	cr_expect_eq(t.gen->added, 1);
	const struct ee_test *g = &t.tests[2];
	cr_expect_eq(g->kind, EE_TEST_CALL);
	cr_expect(g->strict);
	cr_expect_eq(g->tier, EE_TIER_PROPERTY);
	cr_expect_str_eq(g->fn, "f");
	cr_expect_eq(g->task_index, 2);
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(g->args, 0), "int")), "2");
	cr_expect_str_eq(json_string_value(json_object_get(g->expected, "int")), "4");
	cr_expect_eq(ee_test_judging(g), EE_JUDGE_PYEQ);
	ee_task_free(&t);
	no_leaks();
}

static unsigned hidden_mask(unsigned long long seed)
{
	struct ee_task t;
	struct ee_err err = { 0 };
	unsigned mask = 0;

	cr_assert_eq(load("{" GEN "}", &t, &err), 0, "%s", err.msg);
	add(&t, 10, NULL, seed, 0.3);
	cr_expect_eq(t.gen->hidden, 3);
	for (size_t i = 1; i < t.n_tests; i++)
		mask |= (unsigned)t.tests[i].hidden << (i - 1);
	cr_expect_eq(t.tests[0].hidden, 0, "the fixed test stays as it was");
	ee_task_free(&t);
	return mask;
}

Test(generated, holdout_is_seeded)
{
	unsigned a = hidden_mask(1), b = hidden_mask(1);
	int differs = 0;

	cr_expect_eq(a, b, "the same seed, the same holdout");
	for (unsigned long long s = 2; s < 10; s++)
		differs |= hidden_mask(s) != a;
	cr_expect(differs, "other seeds pick other tests");
	no_leaks();
}

Test(generated, hash_changes_with_what_decides_the_tests)
{
	struct ee_task t, u;
	struct ee_err err = { 0 };
	char a[65], b[65];

	cr_assert_eq(load("{" GEN "}", &t, &err), 0);
	cr_assert_eq(load("{" GEN ", 'n_generated': 21}", &u, &err), 0);
	ee_task_gen_hash(&t, a);
	ee_task_gen_hash(&u, b);
	cr_expect_str_neq(a, b);
	ee_task_gen_hash(&t, b);
	cr_expect_str_eq(a, b);
	ee_task_free(&t);
	ee_task_free(&u);
	no_leaks();
}

static bool eq_tol(const char *e, const char *a, double tol)
{
	json_t *je = json_loads(e, 0, NULL), *ja = json_loads(a, 0, NULL);
	char why[256];
	cr_assert(je && ja);
	bool r = ee_judge_pyeq_tol(je, ja, tol, why, sizeof(why));
	json_decref(je);
	json_decref(ja);
	return r;
}

Test(generated, pyeq_tolerance_is_for_floats)
{
	const char *e = "{\"list\": [{\"float\": \"0.1\"}, {\"int\": \"3\"}]}";
	const char *near = "{\"list\": [{\"float\": \"0.1000000001\"}, {\"int\": \"3\"}]}";
	cr_expect(eq_tol(e, near, 1e-6));
	cr_expect_not(eq_tol(e, near, -1), "no tolerance: exact");
	cr_expect_not(eq_tol("{\"int\": \"1000000\"}", "{\"int\": \"1000001\"}", 1e-3), "ints stay exact");
	cr_expect(eq_tol("{\"int\": \"3\"}", "{\"float\": \"3.0000001\"}", 1e-6), "int against a float");
	cr_expect(eq_tol("{\"dict\": [[\"a\", {\"float\": \"1.0\"}]]}",
	                 "{\"dict\": [[\"a\", {\"float\": \"1.0000001\"}]]}", 1e-6),
	          "dict values");
	cr_expect_not(
	        eq_tol("{\"set\": [{\"float\": \"1.0\"}]}", "{\"set\": [{\"float\": \"1.0000001\"}]}", 1e-6),
	        "set members stay exact");
	cr_expect_not(
	        eq_tol("{\"tuple\": [{\"float\": \"1.0\"}]}", "{\"list\": [{\"float\": \"1.0\"}]}", 1e-6),
	        "a tuple is not a list");
}

/* The calibrated limit: max(floor, factor x the reference), at most the
 * cap, whole ms; none without a reference time or with the factor 0. */
Test(generated, calibrated_limit_rule)
{
	struct ee_test t = { .reference_ms = 10 };
	struct ee_calibration c = { .floor_ms = 50, .factor = 4, .cap_ms = 3000 };

	cr_expect_float_eq(ee_test_limit_ms(&t, &c), 50, 1e-9, "the floor");
	t.reference_ms = 100.2;
	cr_expect_float_eq(ee_test_limit_ms(&t, &c), 401, 1e-9, "4 x 100.2, rounded up");
	t.reference_ms = 2000;
	cr_expect_float_eq(ee_test_limit_ms(&t, &c), 3000, 1e-9, "the cap");
	c.factor = 0;
	cr_expect_float_eq(ee_test_limit_ms(&t, &c), 0, 1e-9, "off");
	c.factor = 4;
	t.reference_ms = 0;
	cr_expect_float_eq(ee_test_limit_ms(&t, &c), 0, 1e-9, "not timed");
	cr_expect_float_eq(ee_test_limit_ms(&t, NULL), 0, 1e-9);
}

Test(generated, timed_add_keeps_each_inputs_reference_time)
{
	struct ee_task t;
	struct ee_err err = { 0 };
	json_t *inputs = json_pack("[[{s:s}], [{s:s}], [{s:s}]]", "int", "1", "int", "2", "int", "3");
	json_t *outputs[3] = { json_pack("{s:s}", "int", "2"), NULL, json_pack("{s:s}", "int", "6") };
	static const double ms[3] = { 1.5, 9, -1 };

	cr_assert_eq(load("{" GEN "}", &t, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_task_add_generated_timed(&t, inputs, outputs, ms, 0, 0, &err), 0, "%s", err.msg);
	cr_assert_eq(t.n_tests, 3);
	cr_expect_float_eq(t.tests[1].reference_ms, 1.5, 1e-9);
	cr_expect_float_eq(t.tests[2].reference_ms, 0, 1e-9, "unknown: not calibrated");
	cr_expect_float_eq(t.tests[0].reference_ms, 0, 1e-9, "the fixed test is not timed");
	json_decref(outputs[0]);
	json_decref(outputs[2]);
	json_decref(inputs);
	ee_task_free(&t);
	no_leaks();
}
