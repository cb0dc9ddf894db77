/* test_bootstrap.c - the seeded bootstrap (bootstrap.h) and the intervals
 * of the summary (summary.h).
 *
 * The reference: ref_* below reimplement splitmix64, xoshiro256**, the
 * rejection draw and the percentile bootstrap the plain way, from the
 * published algorithms, without the library; the summary's intervals must
 * match them. The generator's first outputs and one interval are also
 * pinned to numbers printed by an independent Python implementation,
 * tests/unit/bootstrap_ref.py, so a bug shared by the library and the C
 * reference still shows. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/bootstrap.h"
#include "base/err.h"
#include "results/metrics.h"
#include "results/summary.h"

#include "leakcheck.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the reference ------------------------------------------------------- */

struct ref_rng {
	uint64_t s[4];
};

static uint64_t ref_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static void ref_seed(struct ref_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = ref_splitmix(&seed);
}

static uint64_t ref_next(struct ref_rng *r)
{
	uint64_t *s = r->s;
	uint64_t x = s[1] * 5;
	uint64_t result = ((x << 7) | (x >> 57)) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return result;
}

/* Rejection: accept x only at or above 2^64 mod n, so x mod n is even. */
static size_t ref_below(struct ref_rng *r, size_t n)
{
	uint64_t skip = (UINT64_MAX % n + 1) % n; /* 2^64 mod n */
	uint64_t x;

	do
		x = ref_next(r);
	while (x < skip);
	return (size_t)(x % n);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Quantile by linear interpolation between closest ranks, from the sorted v. */
static double ref_quantile(const double *sorted, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)h, hi = lo + 1 < n ? lo + 1 : lo;
	return sorted[lo] + (sorted[hi] - sorted[lo]) * (h - (double)lo);
}

/* The 95 % interval of the mean of v[0..n) over R resamples. */
static void ref_interval(const double *v, size_t n, uint64_t seed, size_t R, double *lo, double *hi)
{
	struct ref_rng rng;
	double *means = malloc(R * sizeof(*means));

	cr_assert_not_null(means);
	ref_seed(&rng, seed);
	for (size_t r = 0; r < R; r++) {
		double sum = 0;
		for (size_t i = 0; i < n; i++)
			sum += v[ref_below(&rng, n)];
		means[r] = sum / (double)n;
	}
	qsort(means, R, sizeof(*means), cmp_d);
	*lo = ref_quantile(means, R, 0.025);
	*hi = ref_quantile(means, R, 0.975);
	free(means);
}

/* ---- helpers -------------------------------------------------------------- */

/* n samples of task, the first c passing (score 1), the rest failing with fail_score. */
static void add_task(struct ee_summary *s, const char *task, const char *cls, int n, int c, double fail_score)
{
	for (int i = 0; i < n; i++) {
		struct ee_err err = { 0 };
		json_t *j =
		        json_pack("{s:s, s:s, s:s, s:f, s:s*, s:[]}", "task_id", task, "class", cls, "status",
		                  i < c ? "pass" : "assertion_fail", "score", i < c ? 1.0 : fail_score,
		                  "detail", i < c ? NULL : "test 0 failed", "tests");
		cr_assert_not_null(j);
		cr_assert_eq(ee_summary_add(s, j, "t.jsonl:1", &err), 0, "%s", err.msg);
		json_decref(j);
	}
}

static void get_ci(const json_t *ci, double *lo, double *hi)
{
	cr_assert(json_is_array(ci) && json_array_size(ci) == 2, "not an interval");
	*lo = json_number_value(json_array_get(ci, 0));
	*hi = json_number_value(json_array_get(ci, 1));
}

#define expect_close(got, want, what)                                                                        \
	cr_expect(fabs((got) - (want)) < 1e-12, "%s: got %.17g want %.17g", what, (double)(got),             \
	          (double)(want))

/* ---- the generator --------------------------------------------------------- */

Test(bootstrap, splitmix64_published_outputs)
{
	/* the outputs of splitmix64 from seed 1234567 (its reference test vectors) */
	static const uint64_t want[] = { 6457827717110365317u, 3203168211198807973u, 9817491932198370423u,
		                         4593380528125082431u, 16408922859458223821u };
	uint64_t state = 1234567;

	for (size_t i = 0; i < COUNT(want); i++)
		cr_expect_eq(ee_splitmix64(&state), want[i], "output %zu", i);
}

Test(bootstrap, xoshiro_matches_python_and_the_reference)
{
	static const struct {
		uint64_t seed;
		uint64_t want[4]; /* computed by an independent Python implementation */
	} cases[] = {
		{ 0, { 0x99ec5f36cb75f2b4u, 0xbf6e1f784956452au, 0x1a5f849d4933e6e0u, 0x6aa594f1262d2d2cu } },
		{ 20240229,
		  { 0x20aa5b1c5271cd4cu, 0xb257e77893654c3au, 0xa6131db90b8955ebu, 0xeac2a1e4506558beu } },
	};
	for (size_t c = 0; c < COUNT(cases); c++) {
		struct ee_rng r;
		struct ref_rng ref;
		ee_rng_seed(&r, cases[c].seed);
		ref_seed(&ref, cases[c].seed);
		for (size_t i = 0; i < 4; i++) {
			uint64_t got = ee_rng_next(&r);
			cr_expect_eq(got, cases[c].want[i], "seed %lu output %zu",
			             (unsigned long)cases[c].seed, i);
			cr_expect_eq(got, ref_next(&ref));
		}
		for (size_t i = 0; i < 10000; i++)
			cr_assert_eq(ee_rng_next(&r), ref_next(&ref), "seed %lu output %zu",
			             (unsigned long)cases[c].seed, i + 4);
	}
}

Test(bootstrap, draws_below_n_are_in_range_and_even)
{
	static const uint64_t ns[] = { 1, 2, 3, 7, 164, 1000, (uint64_t)1 << 63, UINT64_MAX };
	struct ee_rng r;

	ee_rng_seed(&r, 7);
	cr_expect_eq(ee_rng_below(&r, 0), 0, "n = 0 gives 0, never a division by zero");
	for (size_t i = 0; i < COUNT(ns); i++)
		for (int j = 0; j < 2000; j++)
			cr_assert_lt(ee_rng_below(&r, ns[i]), ns[i]);
	/* 60,000 draws below 3: each value 20,000 +- 3 % (about 7 sigma) */
	unsigned long seen[3] = { 0 };
	for (int j = 0; j < 60000; j++)
		seen[ee_rng_below(&r, 3)]++;
	for (int v = 0; v < 3; v++)
		cr_expect(seen[v] > 19400 && seen[v] < 20600, "value %d drawn %lu times", v, seen[v]);
}

Test(bootstrap, streams_differ_by_name_and_seed)
{
	uint64_t a = ee_bootstrap_stream(1, "math"), b = ee_bootstrap_stream(1, "strings");
	uint64_t c = ee_bootstrap_stream(2, "math"), d = ee_bootstrap_stream(1, "");

	cr_expect_neq(a, b);
	cr_expect_neq(a, c);
	cr_expect_neq(d, 1, "the class without a name has its own stream too");
	cr_expect_eq(a, ee_bootstrap_stream(1, "math"));
}

/* ---- ee_bootstrap_means -------------------------------------------------- */

Test(bootstrap, means_match_the_reference)
{
	static const double v[] = { 0.1, 0.9, 0.5, 0.0, 1.0, 0.25, 0.75, 0.3, 0.6, 0.45, 0.2 };
	const size_t n = COUNT(v);
	struct ee_bootstrap b = { 1000, 0.95 };
	double lo, hi, want_lo, want_hi;
	struct ee_err err = { 0 };

	for (uint64_t seed = 0; seed < 5; seed++) {
		cr_assert_eq(ee_bootstrap_means(v, n, 1, &b, seed, &lo, &hi, &err), 0, "%s", err.msg);
		ref_interval(v, n, seed, 1000, &want_lo, &want_hi);
		expect_close(lo, want_lo, "lo");
		expect_close(hi, want_hi, "hi");
		cr_expect_lt(lo, hi);
	}
}

Test(bootstrap, metrics_share_the_draws)
{
	/* metric 1 is metric 0 plus 1: every resample mean, so both bounds, shift by exactly 1 */
	double v[2 * 6] = { 0.1, 0.4, 0.2, 0.9, 0.0, 0.6 };
	struct ee_bootstrap b = { 500, 0.9 };
	double lo[2], hi[2];

	for (int i = 0; i < 6; i++)
		v[6 + i] = v[i] + 1.0;
	cr_assert_eq(ee_bootstrap_means(v, 6, 2, &b, 3, lo, hi, NULL), 0);
	expect_close(lo[1], lo[0] + 1.0, "lo");
	expect_close(hi[1], hi[0] + 1.0, "hi");
}

Test(bootstrap, identical_items_collapse_the_interval)
{
	double v[37], lo, hi;
	struct ee_bootstrap b = { 1000, 0.95 };

	for (size_t i = 0; i < COUNT(v); i++)
		v[i] = 0.3;
	cr_assert_eq(ee_bootstrap_means(v, COUNT(v), 1, &b, 11, &lo, &hi, NULL), 0);
	double point = 0;
	for (size_t i = 0; i < COUNT(v); i++)
		point += v[i];
	point /= (double)COUNT(v);
	cr_expect_eq(lo, point);
	cr_expect_eq(hi, point);
}

Test(bootstrap, bad_arguments_and_no_items)
{
	static const struct {
		unsigned long resamples;
		double level;
	} bad[] = { { 0, 0.95 },
		    { EE_BOOTSTRAP_MAX_RESAMPLES + 1, 0.95 },
		    { 100, 0.0 },
		    { 100, 1.0 },
		    { 100, NAN } };
	double v[3] = { 1, 2, 3 }, lo = 0, hi = 0;
	struct ee_err err = { 0 };

	for (size_t i = 0; i < COUNT(bad); i++) {
		struct ee_bootstrap b = { bad[i].resamples, bad[i].level };
		cr_expect_eq(ee_bootstrap_means(v, 3, 1, &b, 1, &lo, &hi, &err), -1, "case %zu", i);
		cr_expect_eq(err.code, EE_ERR_USAGE);
		cr_expect(strstr(err.msg, "bootstrap: resamples must be"), "%s", err.msg);
	}
	struct ee_bootstrap b = { 10, 0.95 };
	cr_expect_eq(ee_bootstrap_means(v, 0, 1, &b, 1, &lo, &hi, &err), 0);
	cr_expect(isnan(lo) && isnan(hi), "no items: NaN bounds");
	no_leaks();
}

/* ---- the summary's intervals --------------------------------------------------- */

static const struct {
	const char *id;
	int n, c;
} data[] = {
	/* listed out of id order: the draws go by id */
	{ "e", 10, 1 }, { "a", 5, 2 }, { "c", 6, 3 }, { "f", 4, 1 }, { "b", 4, 0 }, { "d", 3, 3 },
};

Test(bootstrap, summary_intervals_match_the_reference_and_python)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long ks[] = { 1, 2 };
	/* by id: a b c d e f */
	static const int order[] = { 1, 4, 2, 5, 0, 3 };
	double rows[3][COUNT(data)];
	double lo, hi, want_lo, want_hi;

	cr_assert_not_null(s);
	for (size_t i = 0; i < COUNT(data); i++)
		add_task(s, data[i].id, "x", data[i].n, data[i].c, 0.25);
	for (size_t i = 0; i < COUNT(data); i++) {
		int t = order[i];
		rows[0][i] = ee_pass_at_k((unsigned long)data[t].n, (unsigned long)data[t].c, 1);
		rows[1][i] = ee_pass_at_k((unsigned long)data[t].n, (unsigned long)data[t].c, 2);
		rows[2][i] = (data[t].c + 0.25 * (data[t].n - data[t].c)) / data[t].n;
	}
	json_t *j = ee_summary_json(s, ks, COUNT(ks), 0.0);
	cr_assert_not_null(j);
	const json_t *ci = json_object_get(j, "pass_at_k_ci");
	const json_t *cis[3] = { json_object_get(ci, "1"), json_object_get(ci, "2"),
		                 json_object_get(j, "mean_score_ci") };
	/* the same intervals from Python: tests/unit/bootstrap_ref.py */
	static const double python[3][2] = { { 0.15833333333333333, 0.6752083333333331 },
		                             { 0.2833333333333333, 0.7999999999999999 },
		                             { 0.36874999999999997, 0.7564062499999998 } };
	for (int m = 0; m < 3; m++) {
		get_ci(cis[m], &lo, &hi);
		ref_interval(rows[m], COUNT(data), EE_BOOTSTRAP_SEED, EE_BOOTSTRAP_RESAMPLES, &want_lo,
		             &want_hi);
		expect_close(lo, want_lo, "reference lo");
		expect_close(hi, want_hi, "reference hi");
		expect_close(lo, python[m][0], "python lo");
		expect_close(hi, python[m][1], "python hi");
	}
	/* the class's stream is its own: a different interval from the same tasks */
	const json_t *x = json_object_get(json_object_get(j, "classes"), "x");
	get_ci(json_object_get(json_object_get(x, "pass_at_k_ci"), "1"), &lo, &hi);
	ref_interval(rows[0], COUNT(data), ee_bootstrap_stream(EE_BOOTSTRAP_SEED, "x"), 1000, &want_lo,
	             &want_hi);
	expect_close(lo, want_lo, "class lo");
	expect_close(hi, want_hi, "class hi");
	const json_t *boot = json_object_get(j, "bootstrap");
	cr_expect_eq(json_integer_value(json_object_get(boot, "resamples")), 1000);
	cr_expect_eq(json_integer_value(json_object_get(boot, "seed")), EE_BOOTSTRAP_SEED);
	cr_expect_eq(json_real_value(json_object_get(boot, "level")), 0.95);
	cr_expect_str_eq(json_string_value(json_object_get(boot, "unit")), "task");
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

static char *intervals_of(const json_t *j)
{
	json_t *pick =
	        json_pack("{s:O, s:O, s:O}", "all", json_object_get(j, "pass_at_k_ci"), "mean",
	                  json_object_get(j, "mean_score_ci"), "classes", json_object_get(j, "classes"));
	char *text = json_dumps(pick, JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
	json_decref(pick);
	return text;
}

Test(bootstrap, reproducible_and_independent_of_record_order)
{
	struct ee_summary *fwd = ee_summary_new(), *rev = ee_summary_new(), *again = ee_summary_new();
	unsigned long k = 1;

	for (size_t i = 0; i < COUNT(data); i++) {
		add_task(fwd, data[i].id, i % 2 ? "odd" : "even", data[i].n, data[i].c, 0.0);
		add_task(again, data[i].id, i % 2 ? "odd" : "even", data[i].n, data[i].c, 0.0);
	}
	for (size_t i = COUNT(data); i-- > 0;)
		add_task(rev, data[i].id, i % 2 ? "odd" : "even", data[i].n, data[i].c, 0.0);
	json_t *a = ee_summary_json(fwd, &k, 1, 0), *b = ee_summary_json(rev, &k, 1, 0),
	       *c = ee_summary_json(again, &k, 1, 0);
	char *ta = intervals_of(a), *tb = intervals_of(b), *tc = intervals_of(c);
	cr_expect_str_eq(ta, tb, "records in another order, other intervals");
	cr_expect_str_eq(ta, tc, "the same records, other intervals");
	free(ta), free(tb), free(tc);
	json_decref(a), json_decref(b), json_decref(c);
	ee_summary_free(fwd), ee_summary_free(rev), ee_summary_free(again);
	no_leaks();
}

Test(bootstrap, a_class_interval_ignores_other_classes)
{
	struct ee_summary *one = ee_summary_new(), *two = ee_summary_new();
	unsigned long k = 1;

	for (size_t i = 0; i < COUNT(data); i++) {
		add_task(one, data[i].id, "math", data[i].n, data[i].c, 0.0);
		add_task(two, data[i].id, "math", data[i].n, data[i].c, 0.0);
	}
	add_task(two, "zz", "strings", 3, 1, 0.0);
	json_t *a = ee_summary_json(one, &k, 1, 0), *b = ee_summary_json(two, &k, 1, 0);
	char *ta = json_dumps(
	        json_object_get(json_object_get(json_object_get(a, "classes"), "math"), "pass_at_k_ci"),
	        JSON_REAL_PRECISION(17));
	char *tb = json_dumps(
	        json_object_get(json_object_get(json_object_get(b, "classes"), "math"), "pass_at_k_ci"),
	        JSON_REAL_PRECISION(17));
	cr_expect_str_eq(ta, tb);
	free(ta), free(tb);
	json_decref(a), json_decref(b);
	ee_summary_free(one), ee_summary_free(two);
	no_leaks();
}

Test(bootstrap, identical_tasks_collapse_to_the_point)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long ks[] = { 1, 3 };
	char id[16];
	double lo, hi;

	for (int t = 0; t < 40; t++) {
		snprintf(id, sizeof(id), "t%02d", t);
		add_task(s, id, "", 5, 2, 0.5);
	}
	json_t *j = ee_summary_json(s, ks, COUNT(ks), 0);
	static const char *const keys[] = { "1", "3" };
	for (size_t i = 0; i < COUNT(keys); i++) {
		get_ci(json_object_get(json_object_get(j, "pass_at_k_ci"), keys[i]), &lo, &hi);
		double point = json_number_value(json_object_get(json_object_get(j, "pass_at_k"), keys[i]));
		cr_expect_eq(lo, point, "pass@%s", keys[i]);
		cr_expect_eq(hi, point, "pass@%s", keys[i]);
	}
	get_ci(json_object_get(j, "mean_score_ci"), &lo, &hi);
	cr_expect_eq(lo, json_number_value(json_object_get(j, "mean_score")));
	cr_expect_eq(hi, lo);
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

Test(bootstrap, no_tasks_no_intervals)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long k = 1;
	json_t *j = ee_summary_json(s, &k, 1, 0);

	cr_assert_not_null(j);
	cr_expect_eq(json_object_size(json_object_get(j, "pass_at_k_ci")), 0);
	cr_expect(json_is_null(json_object_get(j, "mean_score_ci")));
	cr_expect(json_is_object(json_object_get(j, "bootstrap")));
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

Test(bootstrap, summary_tasks_are_listed_by_id)
{
	struct ee_summary *s = ee_summary_new();
	size_t n = 99;

	for (size_t i = 0; i < COUNT(data); i++)
		add_task(s, data[i].id, i ? "c1" : "c0", data[i].n, data[i].c, 0.5);
	struct ee_summary_task *t = ee_summary_tasks(s, &n);
	cr_assert_not_null(t);
	cr_assert_eq(n, COUNT(data));
	static const char *const ids[] = { "a", "b", "c", "d", "e", "f" };
	for (size_t i = 0; i < n; i++)
		cr_expect_str_eq(t[i].task_id, ids[i]);
	cr_expect_eq(t[4].n, 10); /* e */
	cr_expect_eq(t[4].c, 1);
	cr_expect_str_eq(t[4].class_name, "c0");
	expect_close(t[4].score_sum, 1 + 9 * 0.5, "e's score sum");
	free(t);
	ee_summary_free(s);
	s = ee_summary_new();
	t = ee_summary_tasks(s, &n);
	cr_expect_not_null(t, "no tasks: an empty array, not a failure");
	cr_expect_eq(n, 0);
	free(t);
	ee_summary_free(s);
	no_leaks();
}
