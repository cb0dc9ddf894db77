/* test_metrics.c - pass@k and quantiles (metrics.h).
 * Expected pass@k values are 1 - C(n-c,k)/C(n,k) computed exactly with
 * Python's fractions; quantiles follow numpy.quantile(method="linear"). */
#include <criterion/criterion.h>
#include <math.h>

#include "results/metrics.h"

/* ULONG_MAX without <limits.h>. */
#define ULONG_MAX_ ((unsigned long)-1)

struct pass_case {
	unsigned long n, c, k;
	double want;
};

static const struct pass_case pass_cases[] = {
	/* pass@1 is c/n */
	{ 10, 3, 1, 0.3 },
	{ 7, 0, 1, 0.0 },
	{ 1, 1, 1, 1.0 },
	/* worked example: 1 - C(7,5)/C(10,5) = 1 - 21/252 */
	{ 10, 3, 5, 1.0 - 21.0 / 252.0 },
	{ 10, 2, 3, 1.0 - 56.0 / 120.0 },
	{ 10, 7, 2, 1.0 - 3.0 / 45.0 }, /* c > k: the k-factor product */
	/* n - c < k: every draw holds a correct sample */
	{ 10, 6, 5, 1.0 },
	{ 10, 10, 10, 1.0 },
	{ 5, 5, 1, 1.0 },
	/* c = 0 */
	{ 10, 0, 5, 0.0 },
	{ 10, 0, 10, 0.0 },
	/* large n */
	{ 10000, 1, 1, 0.0001 },
	{ 10000, 1, 100, 0.01 },
	{ 10000, 2, 2, 0.0003999799979998 },
	{ 10000, 37, 100, 0.31101570603080364 },
	{ 10000, 5000, 10, 0.9990278263190201 },
	{ 10000, 9000, 1000, 1.0 },
	{ 200, 3, 100, 0.87688442211055273 },
	{ 1000000, 10, 1000, 0.0099551643871495996 },
	{ 1000000, 1, 1, 9.9999999999999995e-07 },
	{ 100000, 50000, 3, 0.87500375003750042 },
};

Test(metrics, pass_at_k_table)
{
	for (size_t i = 0; i < sizeof(pass_cases) / sizeof(pass_cases[0]); i++) {
		const struct pass_case *tc = &pass_cases[i];
		double got = ee_pass_at_k(tc->n, tc->c, tc->k);
		/* relative: small values must keep their digits too */
		double err = fabs(got - tc->want) / fmax(fabs(tc->want), 1e-300);
		cr_expect(got == tc->want || err < 1e-13,
		          "n=%lu c=%lu k=%lu: got %.17g want %.17g (rel err %g)", tc->n, tc->c, tc->k, got,
		          tc->want, err);
	}
}

Test(metrics, pass_at_k_is_monotone_in_k)
{
	double prev = 0.0;
	for (unsigned long k = 1; k <= 1000; k++) {
		double p = ee_pass_at_k(1000, 7, k);
		cr_assert(p >= prev && p <= 1.0, "k=%lu: %.17g after %.17g", k, p, prev);
		prev = p;
	}
	cr_expect_eq(prev, 1.0);
}

Test(metrics, pass_at_k_extreme_n_terminates)
{
	cr_expect_eq(ee_pass_at_k(ULONG_MAX_, ULONG_MAX_, 1), 1.0);
	double p = ee_pass_at_k(ULONG_MAX_, 1, 1);
	cr_expect(p >= 0.0 && p < 1e-15, "got %g", p);
	cr_expect_eq(ee_pass_at_k(ULONG_MAX_, ULONG_MAX_ - 1, ULONG_MAX_ - 1), 1.0);
}

struct bad_case {
	const char *name;
	unsigned long n, c, k;
};

static const struct bad_case bad_cases[] = {
	{ "k = 0", 10, 3, 0 }, { "k > n", 10, 3, 11 },      { "c > n", 10, 11, 1 },
	{ "n = 0", 0, 0, 0 },  { "n = 0, k = 1", 0, 0, 1 },
};

Test(metrics, pass_at_k_impossible_args_are_nan)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *tc = &bad_cases[i];
		cr_expect(isnan(ee_pass_at_k(tc->n, tc->c, tc->k)), "%s", tc->name);
	}
}

struct quantile_case {
	const char *name;
	double v[8];
	size_t n;
	double q;
	double want;
};

static const struct quantile_case quantile_cases[] = {
	{ "median of even", { 1, 2, 3, 4 }, 4, 0.5, 2.5 },
	{ "min", { 4, 2, 3, 1 }, 4, 0.0, 1.0 },
	{ "max", { 4, 2, 3, 1 }, 4, 1.0, 4.0 },
	{ "q1", { 1, 2, 3, 4 }, 4, 0.25, 1.75 },
	{ "unsorted median", { 3, 1, 2 }, 3, 0.5, 2.0 },
	{ "single", { 7 }, 1, 0.9, 7.0 },
	{ "upper half lerp", { 1, 10 }, 2, 0.9, 9.1 },
	{ "lower half lerp", { 0, 1 }, 2, 0.3, 0.3 },
	{ "ties", { 5, 5, 5, 1 }, 4, 0.5, 5.0 },
	{ "negative", { -3, -1, -2 }, 3, 0.75, -1.5 },
	{ "infinities equal", { INFINITY, INFINITY }, 2, 0.5, INFINITY },
};

Test(metrics, quantile_table)
{
	for (size_t i = 0; i < sizeof(quantile_cases) / sizeof(quantile_cases[0]); i++) {
		const struct quantile_case *tc = &quantile_cases[i];
		double v[8];
		memcpy(v, tc->v, sizeof(v));
		double got = ee_quantile(v, tc->n, tc->q);
		cr_expect(got == tc->want || fabs(got - tc->want) < 1e-12, "%s: got %.17g want %.17g",
		          tc->name, got, tc->want);
	}
}

Test(metrics, quantile_p95_of_1_to_100)
{
	double v[100];
	for (int i = 0; i < 100; i++)
		v[i] = 100 - i; /* reversed: the function sorts */
	cr_expect(fabs(ee_quantile(v, 100, 0.95) - 95.05) < 1e-9);
	for (int i = 1; i < 100; i++)
		cr_assert_leq(v[i - 1], v[i], "sorted in place");
	cr_expect_eq(ee_quantile(v, 100, 0.5), 50.5);
}

Test(metrics, quantile_nan_cases)
{
	double v[3] = { 1, 2, 3 };
	cr_expect(isnan(ee_quantile(v, 0, 0.5)), "empty");
	cr_expect(isnan(ee_quantile(v, 3, -0.1)), "q < 0");
	cr_expect(isnan(ee_quantile(v, 3, 1.1)), "q > 1");
	cr_expect(isnan(ee_quantile(v, 3, NAN)), "q NaN");
	double w[3] = { 1, NAN, 3 };
	cr_expect(isnan(ee_quantile(w, 3, 0.0)), "data holds NaN");
}
