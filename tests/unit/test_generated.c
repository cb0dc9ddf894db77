/* test_generated.c - a native task's reference and generator (task.h,
 * struct ee_task_gen; generated.c) and the tolerance of generated tests
 * (judge.h, ee_judge_evalplus). Fixtures use ' for ". */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "input/task.h"
#include "pyvalue/judge.h"
#include "pyvalue/pyliteral.h"

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

/* EvalPlus's comparison (judge.h, ee_judge_evalplus): expected and actual
 * as Python literals ('=' and canonical JSON for a complex), the task's atol, the verdict and the reason. Each
 * verdict is what EvalPlus's unsafe_execute decides for the same values
 * (tests/unit/evalplus_ref.py checks this table with numpy). */
static const struct {
	const char *expected, *actual;
	double atol;
	bool want;
	const char *why; /* NULL: not checked */
} evalplus_cases[] = {
	/* Python's == first, across types, as EvalPlus's `out == exp` */
	{ "24", "24", 0, true, NULL },
	{ "24", "24.0", 0, true, NULL },
	{ "24", "24.0", 1e-6, true, NULL },
	{ "1", "True", 0, true, NULL },
	{ "-1", "-1.0", 1e-6, true, NULL },
	{ "2.0", "2", 0, true, NULL },
	{ "(4, 5)", "(4, 5)", 0, true, NULL },
	{ "1e400", "1e400", 0, true, NULL },
	/* an int expected and atol 0: no tolerance at all (the gamma factorial) */
	{ "24", "24.0000096", 0, false, "expected 24, got 24.0000096" },
	{ "3", "3.0000001", 0, false, "expected 3, got 3.0000001" },
	{ "1000000000", "1000000001", 0, false, "expected 1000000000, got 1000000001" },
	/* a float expected and atol 0: 1e-6, and numpy's rtol 1e-7 */
	{ "0.5", "0.5000004", 0, true, NULL },
	{ "0.5", "0.500002", 0, false, "expected 0.5, got 0.500002" },
	{ "0.0", "1e-07", 0, true, NULL },
	{ "1000000.0", "1000000.05", 0, true, NULL },
	{ "1000000.0", "1000000.2", 0, false, "expected 1000000.0, got 1000000.2" },
	{ "0.5", "1e400", 0, false, "expected 0.5, got inf" },
	/* the tolerance path wants the expected type: an int is an int */
	{ "24", "24.000009", 1e-6, false, "expected 24, got 24.000009 (float, not int)" },
	{ "24", "24.0000001", 1e-6, false, "expected 24, got 24.0000001 (float, not int)" },
	{ "2", "True", 1.0, false, "expected 2, got True (bool, not int)" },
	{ "0.5", "1", 0.6, false, "expected 0.5, got 1 (int, not float)" },
	{ "1.5", "={\"complex\": [\"1.5000001\", \"0.0\"]}", 0, false,
	  "expected 1.5, got (1.5000001+0j) (complex, not float)" },
	{ "[0.5, 1.5]", "(0.5000001, 1.5)", 0, false,
	  "expected [0.5, 1.5], got (0.5000001, 1.5) (tuple, not list)" },
	{ "None", "0", 1e-6, false, "expected None, got 0 (int, not NoneType)" },
	/* with atol != 0, two ints within it are close, as numpy finds them */
	{ "1000000000", "1000000001", 1e-6, true, NULL },
	{ "24", "25", 0.5, false, "expected 24, got 25" },
	/* all-float lists and tuples take the float default; others do not */
	{ "[0.5, 1.5]", "[0.5000001, 1.5]", 0, true, NULL },
	{ "(1.5, 2.5)", "(1.5000001, 2.5)", 0, true, NULL },
	{ "[0.5, 1]", "[0.5000001, 1]", 0, false, "expected [0.5, 1], got [0.5000001, 1]" },
	{ "[[0.5, 1.5]]", "[[0.5000001, 1.5]]", 0, false, NULL },
	{ "[0.5, 1]", "[0.5000001, 1]", 1e-3, true, NULL },
	{ "[[0.5, 1.5]]", "[[0.5000001, 1.5]]", 1e-6, true, NULL },
	/* numpy checks the type at the top only: inside a list a float is a number */
	{ "[24, 6]", "[24.0000001, 6.0]", 1e-6, true, NULL },
	{ "[[0.5], (1.5,)]", "[(0.5000001,), [1.5]]", 1e-6, true, NULL },
	/* what numpy cannot make a numeric array of fails */
	{ "[0.5]", "[0.5, 0.5]", 0, false, "expected [0.5], got [0.5, 0.5]" },
	{ "[[0.5], [1.5, 2.5]]", "[[0.5000001], [1.5, 2.5]]", 1e-6, false, NULL },
	{ "[[0.5, 1.5]]", "[[0.5000001], [1.5]]", 1e-6, false, NULL },
	{ "[0.5, 'a']", "[0.5000001, 'a']", 1e-6, false, NULL },
	{ "'a'", "'b'", 1e-6, false, "expected 'a', got 'b'" },
	{ "{'a': 0.5}", "{'a': 0.5000001}", 1e-6, false, NULL },
	{ "{0.5}", "{0.5000001}", 1e-6, false, NULL },
	{ "[100000000000000000000]", "[100000000000000000001]", 1e-6, false, NULL },
	{ "[1.5, 2.5]", "[1.5, 1e400]", 0, false, NULL },
	{ "[1e400, 2.5]", "[1e400, 2.5000001]", 0, true, NULL },
	{ "={\"complex\": [\"0.5\", \"1.0\"]}", "={\"complex\": [\"0.5000001\", \"1.0\"]}", 1e-6, true,
	  NULL },
	{ "[True, 2.5]", "[False, 2.5]", 1e-6, false, NULL },
};

/* A Python literal, or after '=' canonical JSON (a complex). */
static json_t *literal(const char *src)
{
	json_t *v = src[0] == '=' ? json_loads(src + 1, 0, NULL) : ee_pyliteral_parse(src, strlen(src));
	cr_assert(v, "not a literal: %s", src);
	return v;
}

Test(generated, evalplus_comparison)
{
	for (size_t i = 0; i < sizeof(evalplus_cases) / sizeof(evalplus_cases[0]); i++) {
		json_t *e = literal(evalplus_cases[i].expected), *a = literal(evalplus_cases[i].actual);
		char why[256];
		bool got = ee_judge_evalplus(e, a, evalplus_cases[i].atol, why, sizeof(why));
		cr_expect_eq(got, evalplus_cases[i].want, "%s against %s, atol %g: got %d",
		             evalplus_cases[i].expected, evalplus_cases[i].actual, evalplus_cases[i].atol,
		             got);
		if (got)
			cr_expect_str_eq(why, "");
		else if (evalplus_cases[i].why)
			cr_expect_str_eq(why, evalplus_cases[i].why);
		else
			cr_expect(strncmp(why, "expected ", 9) == 0, "%s", why);
		json_decref(e);
		json_decref(a);
	}
}

/* An EvalPlus row's atol is its tests' as given: 0 stays 0, the rule
 * itself gives floats EvalPlus's 1e-6 (ee_judge_evalplus). */
Test(generated, evalplus_row_keeps_its_atol)
{
	static const struct {
		const char *atol;
		double want;
	} cases[] = { { "", 0 }, { ", 'atol': 0", 0 }, { ", 'atol': 0.001", 1e-3 } };
	char row[512];
	struct ee_task t;
	struct ee_err err = { 0 };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(row, sizeof(row),
		         "{'task_id': 'HumanEval/x', 'prompt': 'def f(n):\\n', 'entry_point': 'f', "
		         "'canonical_solution': '    return n\\n', 'base_input': [[1]]%s}",
		         cases[i].atol);
		cr_assert_eq(load(row, &t, &err), 0, "%s: %s", row, err.msg);
		cr_assert_not_null(t.gen);
		cr_expect_float_eq(t.gen->float_tol, cases[i].want, 1e-12, "%s", row);
		ee_task_free(&t);
	}
	no_leaks();
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
