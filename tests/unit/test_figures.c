/* test_figures.c - the headline figures of a summary (figures.h). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "base/err.h"
#include "results/figures.h"

#include "leakcheck.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define ABSENT   -9.0 /* stands for NAN in the table */

struct figures_case {
	const char *summary;
	const char *task_class;
	long long tasks, samples;
	unsigned long k;
	double pass, mean, lint, timeout_rate;
};

static const struct figures_case cases[] = {
	/* a summary as eval writes it */
	{ "{\"tasks\":4,\"samples\":10,\"pass_at_k\":{\"1\":0.5,\"3\":0.9},\"mean_score\":0.6,"
	  "\"statuses\":{\"pass\":5,\"timeout\":2}}",
	  NULL, 4, 10, 1, 0.5, 0.6, ABSENT, 0.2 },
	/* with lint; k sorted as numbers ("10" < "3" as text) */
	{ "{\"samples\":4,\"pass_at_k\":{\"10\":0.9,\"3\":0.7},\"lint\":{\"pass_rate\":0.75},"
	  "\"statuses\":{\"timeout\":0}}",
	  NULL, -1, 4, 3, 0.7, ABSENT, 0.75, 0.0 },
	/* a class's figures */
	{ "{\"samples\":10,\"pass_at_k\":{\"1\":0.5},\"classes\":{\"math\":{\"tasks\":1,\"samples\":2,"
	  "\"pass_at_k\":{\"1\":1.0},\"mean_score\":1,\"lint\":{\"pass_rate\":0.5},"
	  "\"statuses\":{\"timeout\":1}}}}",
	  "math", 1, 2, 1, 1.0, 1.0, 0.5, 0.5 },
	/* nothing known: every figure absent, no failure */
	{ "{}", NULL, -1, -1, 0, ABSENT, ABSENT, ABSENT, ABSENT },
	/* mistyped or odd keys are ignored */
	{ "{\"tasks\":\"4\",\"samples\":-1,\"pass_at_k\":{\"0\":1,\"01\":1,\"-1\":1,\"x\":1,\"2\":null,"
	  "\"99999999999\":1,\"5\":0.25},\"mean_score\":\"high\",\"lint\":[],\"statuses\":{\"timeout\":3}}",
	  NULL, -1, -1, 5, 0.25, ABSENT, ABSENT, ABSENT },
	/* no samples: no timeout rate; statuses without timeout: 0 */
	{ "{\"samples\":0,\"statuses\":{\"timeout\":0}}", NULL, -1, 0, 0, ABSENT, ABSENT, ABSENT, ABSENT },
	{ "{\"samples\":3,\"statuses\":{\"pass\":3}}", NULL, -1, 3, 0, ABSENT, ABSENT, ABSENT, 0.0 },
	{ "{\"pass_at_k\":[0.5]}", NULL, -1, -1, 0, ABSENT, ABSENT, ABSENT, ABSENT },
};

static void expect_value(double got, double want, size_t i, const char *what)
{
	if (want == ABSENT)
		cr_expect(isnan(got), "case %zu: %s should be absent, got %g", i, what, got);
	else
		cr_expect(fabs(got - want) < 1e-12, "case %zu: %s %g, want %g", i, what, got, want);
}

Test(figures, read_from_summaries_old_and_new)
{
	for (size_t i = 0; i < COUNT(cases); i++) {
		const struct figures_case *c = &cases[i];
		json_t *s = json_loads(c->summary, 0, NULL);
		struct ee_figures f;
		struct ee_err err = { 0 };

		cr_assert_not_null(s, "case %zu", i);
		cr_assert_eq(ee_figures_of(s, c->task_class, &f, &err), 0, "case %zu: %s", i, err.msg);
		cr_expect_eq(f.tasks, c->tasks, "case %zu: tasks %lld", i, f.tasks);
		cr_expect_eq(f.samples, c->samples, "case %zu: samples %lld", i, f.samples);
		cr_expect_eq(f.k, c->k, "case %zu: k %lu", i, f.k);
		expect_value(f.pass_at_k, c->pass, i, "pass@k");
		expect_value(f.mean_score, c->mean, i, "mean score");
		expect_value(f.lint_pass_rate, c->lint, i, "lint pass rate");
		expect_value(f.timeout_rate, c->timeout_rate, i, "timeout rate");
		json_decref(s);
	}
	no_leaks();
}

Test(figures, not_a_summary_or_no_such_class_is_an_error)
{
	static const struct {
		const char *summary, *task_class, *want;
	} bad[] = {
		{ "[1]", NULL, "not a JSON object" },
		{ "3", NULL, "not a JSON object" },
		{ "{\"classes\":{\"math\":{}}}", "io", "no class 'io'" },
		{ "{\"classes\":{\"math\":3}}", "math", "no class 'math'" },
		{ "{}", "math", "no class" },
	};
	for (size_t i = 0; i < COUNT(bad); i++) {
		json_t *s = json_loads(bad[i].summary, JSON_DECODE_ANY, NULL);
		struct ee_figures f;
		struct ee_err err = { 0 };

		cr_assert_not_null(s);
		cr_expect_eq(ee_figures_of(s, bad[i].task_class, &f, &err), -1, "case %zu", i);
		cr_expect(strstr(err.msg, bad[i].want) != NULL, "case %zu: %s", i, err.msg);
		json_decref(s);
	}
	no_leaks();
}
