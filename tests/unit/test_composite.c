/* test_composite.c - the composite formula (composite.h): its grammar,
 * hostile formulas, and its value over a summary block. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "results/composite.h"
#include "base/err.h"

static const char *block_text = "{\"samples\": 10, \"statuses\": {\"pass\": 4, \"timeout\": 2, \"error\": 1},"
                                " \"pass_at_k\": {\"1\": 0.4, \"5\": 0.9}, \"mean_score\": 0.55,"
                                " \"lint\": {\"pass_rate\": 0.8}}";

static double value_of(const char *formula)
{
	struct ee_composite c;
	struct ee_err err = { 0 };
	json_t *block = json_loads(block_text, 0, NULL);
	double v = NAN;

	cr_assert_not_null(block);
	cr_assert_eq(ee_composite_parse(formula, &c, &err), 0, "%s: %s", formula, err.msg);
	cr_assert_eq(ee_composite_eval(&c, block, &v, &err), 0, "%s: %s", formula, err.msg);
	json_decref(block);
	return v;
}

Test(composite, values)
{
	struct {
		const char *formula;
		double want;
	} cases[] = {
		{ "0.7*correctness+0.3*lint", 0.7 * 0.4 + 0.3 * 0.8 },
		{ "correctness", 0.4 },
		{ "pass@1", 0.4 },
		{ "pass@5 - pass@1", 0.5 },
		{ "mean_score", 0.55 },
		{ "timeout_rate", 0.2 },
		{ "error_rate", 0.1 },
		{ "1 - timeout_rate", 0.8 },
		{ "-lint + 1", 0.2 },
		{ "--lint", 0.8 },
		{ "2 * (correctness + lint) / 4", 0.6 },
		{ "1 - 2 - 3", -4 }, /* left-associative */
		{ "8 / 4 / 2", 1 },  /* left-associative */
		{ "1 + 2 * 3", 7 },  /* precedence */
		{ " ( 1 + 2 ) * 3 ", 9 },
		{ ".5", 0.5 },
		{ "1e-1*10", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_float_eq(value_of(cases[i].formula), cases[i].want, 1e-12, "%s", cases[i].formula);
}

Test(composite, text_is_recorded_without_spaces)
{
	struct ee_composite c;
	struct ee_err err = { 0 };

	cr_assert_eq(ee_composite_parse(" 0.7 * correctness +\t0.3*lint ", &c, &err), 0);
	cr_expect_str_eq(c.f.text, "0.7*correctness+0.3*lint");
}

Test(composite, hostile_and_malformed_formulas_are_refused)
{
	char deep[400], long_sum[600], many[300];
	size_t n = 0;

	for (int i = 0; i < 100; i++)
		deep[n++] = '(';
	deep[n++] = '1';
	for (int i = 0; i < 100; i++)
		deep[n++] = ')';
	deep[n] = '\0';
	n = 0;
	for (int i = 0; i < 290; i++)
		n += (size_t)snprintf(long_sum + n, sizeof(long_sum) - n, "%s1", i ? "+" : "");
	n = 0;
	for (int i = 0; i < 70; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "%s1", i ? "+" : "");
	struct {
		const char *formula;
		const char *in_msg;
	} cases[] = {
		{ "", "empty" },
		{ "   ", "empty" },
		{ "correctness +", "expected a metric" },
		{ "0.7*correctnes", "unknown metric" },
		{ "__import__('os').system('id')", "expected a metric" },
		{ "eval(1)", "unknown metric" },
		{ "lint lint", "expected an operator" },
		{ "1 2", "expected an operator" },
		{ "(1+2", "expected ')'" },
		{ "1+2)", "expected an operator" },
		{ "pass@", "whole number" },
		{ "pass@0", "1 <= k" },
		{ "pass@x", "whole number" },
		{ "1e999", "bad number" },
		{ "1 ** 2", "expected a metric" },
		{ "1 % 2", "expected an operator" },
		{ "LINT", "expected a metric" },
		{ "lint\x01", "printable" },
		{ deep, "nested too deeply" },
		{ "----------------------------------1", "nested too deeply" },
		{ long_sum, "longer than" },
		{ many, "too long" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ee_composite c;
		struct ee_err err = { 0 };
		cr_expect_eq(ee_composite_parse(cases[i].formula, &c, &err), -1, "accepted: %.40s",
		             cases[i].formula);
		cr_expect(strstr(err.msg, cases[i].in_msg) != NULL, "%.40s: %s", cases[i].formula, err.msg);
		cr_expect(strncmp(err.msg, "--composite: ", 13) == 0, "%s", err.msg);
	}
}

Test(composite, missing_metric_or_infinite_value_is_null_with_a_reason)
{
	struct ee_composite c;
	struct ee_err err = { 0 };
	json_t *no_lint = json_loads(
	        "{\"samples\": 2, \"statuses\": {\"pass\": 1}, \"pass_at_k\": {\"1\": 0.5}}", 0, NULL);
	double v;

	cr_assert_eq(ee_composite_parse("0.5*correctness+0.5*lint", &c, &err), 0);
	cr_expect_eq(ee_composite_eval(&c, no_lint, &v, &err), -1);
	cr_expect(strstr(err.msg, "lint is not in the summary (it needs --lint)") != NULL, "%s", err.msg);
	json_t *j = ee_composite_json(&c, no_lint);
	cr_expect(json_is_null(json_object_get(j, "value")));
	cr_expect_str_eq(json_string_value(json_object_get(j, "formula")), "0.5*correctness+0.5*lint");
	cr_expect_eq(json_integer_value(json_object_get(j, "version")), EE_COMPOSITE_VERSION);
	cr_expect_not_null(json_object_get(j, "error"));
	json_decref(j);

	cr_assert_eq(ee_composite_parse("pass@10", &c, &err), 0);
	cr_expect_eq(ee_composite_eval(&c, no_lint, &v, &err), -1);
	cr_expect(strstr(err.msg, "pass@10 is not in the summary") != NULL, "%s", err.msg);

	cr_assert_eq(ee_composite_parse("correctness/(correctness-correctness)", &c, &err), 0);
	cr_expect_eq(ee_composite_eval(&c, no_lint, &v, &err), -1);
	cr_expect(strstr(err.msg, "not finite") != NULL, "%s", err.msg);
	json_decref(no_lint);
}

Test(composite, added_to_the_summary_and_each_class)
{
	struct ee_composite c;
	struct ee_err err = { 0 };
	json_t *s = json_loads(
	        "{\"samples\": 4, \"statuses\": {\"pass\": 1}, \"classes\": {\"a\": {\"samples\": 2,"
	        " \"statuses\": {\"pass\": 1}}, \"b\": {\"samples\": 2, \"statuses\": {\"pass\": 0}}}}",
	        0, NULL);

	cr_assert_eq(ee_composite_parse("correctness", &c, &err), 0);
	cr_assert_eq(ee_composite_add(&c, s, &err), 0);
	cr_expect_float_eq(json_real_value(json_object_get(json_object_get(s, "composite"), "value")), 0.25,
	                   1e-12);
	json_t *cls = json_object_get(s, "classes");
	cr_expect_float_eq(json_real_value(json_object_get(
	                           json_object_get(json_object_get(cls, "a"), "composite"), "value")),
	                   0.5, 1e-12);
	cr_expect_float_eq(json_real_value(json_object_get(
	                           json_object_get(json_object_get(cls, "b"), "composite"), "value")),
	                   0.0, 1e-12);
	json_decref(s);
}

/* One language with --reward: comparisons, min, max and if over metrics. */
Test(composite, comparisons_min_max_and_if_over_metrics)
{
	struct ee_composite c;
	struct ee_err err = { 0 };
	json_t *block = json_loads("{\"samples\": 4, \"statuses\": {\"pass\": 3, \"timeout\": 1}, "
	                           "\"mean_score\": 0.5}",
	                           0, NULL);
	double v = 0;
	cr_assert_eq(ee_composite_parse("if(timeout_rate > 0.2, min(correctness, 0.1), max(mean_score, 0.9))",
	                                &c, &err),
	             0, "%s", err.msg);
	cr_assert_eq(ee_composite_eval(&c, block, &v, &err), 0, "%s", err.msg);
	cr_expect_eq(v, 0.1);
	cr_assert_eq(ee_composite_parse("correctness == 0.75", &c, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_composite_eval(&c, block, &v, &err), 0, "%s", err.msg);
	cr_expect_eq(v, 1);
	cr_expect_eq(ee_composite_parse("if(lint, 1)", &c, &err), -1);
	cr_expect(strstr(err.msg, "--composite: at 11: expected ','") != NULL, "%s", err.msg);
	json_decref(block);
}
