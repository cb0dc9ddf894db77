/* test_summary.c - the data-set summary (summary.h).
 * Expected pass@k values are exact fractions worked out by hand in the
 * comments: pass@k = 1 - C(n-c, k) / C(n, k), averaged over tasks.
 * Fixtures are written with ' for " to stay readable; fix() turns them back. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "results/summary.h"

#include "fixture_json.h"
#include "leakcheck.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define NODROP   (-1.0)

static void add_json(struct ee_summary *s, const char *text)
{
	struct ee_err err = { 0 };
	json_t *j = fix(text);

	cr_assert_eq(ee_summary_add(s, j, "t.jsonl:1", &err), 0, "%s: %s", text, err.msg);
	json_decref(j);
}

/* A minimal valid record. */
static void add_rec(struct ee_summary *s, const char *task, const char *status, double score)
{
	struct ee_err err = { 0 };
	int pass = strcmp(status, "pass") == 0;
	json_t *j = json_pack("{s:s, s:s, s:f, s:s*, s:[]}", "task_id", task, "status", status, "score",
	                      score, "detail", pass ? NULL : "test 0 failed: x", "tests");

	cr_assert_not_null(j);
	cr_assert_eq(ee_summary_add(s, j, "t.jsonl:1", &err), 0, "%s", err.msg);
	json_decref(j);
}

/* n samples of task, the first c passing. */
static void add_task(struct ee_summary *s, const char *task, int n, int c)
{
	for (int i = 0; i < n; i++)
		add_rec(s, task, i < c ? "pass" : "assertion_fail", i < c ? 1.0 : 0.0);
}

static double num(const json_t *obj, const char *path)
{
	char key[128];
	const json_t *v = obj;

	snprintf(key, sizeof(key), "%s", path);
	for (char *tok = strtok(key, "/"); tok; tok = strtok(NULL, "/"))
		v = json_object_get(v, tok);
	cr_assert(json_is_number(v), "%s: not a number", path);
	return json_number_value(v);
}

static int has(const json_t *obj, const char *path)
{
	char key[128];
	const json_t *v = obj;

	snprintf(key, sizeof(key), "%s", path);
	for (char *tok = strtok(key, "/"); tok && v; tok = strtok(NULL, "/"))
		v = json_object_get(v, tok);
	return v != NULL;
}

#define expect_close(got, want, what)                                                                        \
	cr_expect(fabs((got) - (want)) < 1e-12, "%s: got %.17g want %.17g", what, (double)(got),             \
	          (double)(want))

/* ---- pass@k --------------------------------------------------------------- */

struct k_case {
	unsigned long k;
	double want; /* NODROP: dropped */
	const char *reason;
};

/* Tasks a (n=5, c=2), b (n=4, c=0), c (n=6, c=3). */
static const struct k_case k_cases[] = {
	/* (2/5 + 0 + 3/6) / 3 = 3/10 */
	{ 1, 3.0 / 10.0, NULL },
	/* a: 1 - C(3,2)/C(5,2) = 7/10; c: 1 - C(3,2)/C(6,2) = 4/5; (7/10 + 4/5) / 3 = 1/2 */
	{ 2, 1.0 / 2.0, NULL },
	/* a: 1 - C(3,3)/C(5,3) = 9/10; c: 1 - C(3,3)/C(6,3) = 19/20; sum 37/20, / 3 */
	{ 3, 37.0 / 60.0, NULL },
	/* a and c: n - c < 4, so 1; b: 0; 2/3 */
	{ 4, 2.0 / 3.0, NULL },
	{ 5, NODROP, "1 of 3 tasks have fewer than 5 samples (min 4)" },
	{ 7, NODROP, "3 of 3 tasks have fewer than 7 samples (min 4)" },
	{ 0, NODROP, "k must be positive" },
};

Test(summary, pass_at_k_worked_example)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long ks[COUNT(k_cases) + 2];

	cr_assert_not_null(s);
	add_task(s, "a", 5, 2);
	add_task(s, "b", 4, 0);
	add_task(s, "c", 6, 3);
	for (size_t i = 0; i < COUNT(k_cases); i++)
		ks[i] = k_cases[i].k;
	ks[COUNT(k_cases)] = 1; /* repeats are ignored */
	ks[COUNT(k_cases) + 1] = 5;
	json_t *j = ee_summary_json(s, ks, COUNT(ks), 0.0);
	cr_assert_not_null(j);
	cr_expect_eq(num(j, "tasks"), 3);
	cr_expect_eq(num(j, "samples"), 15);
	const json_t *dropped = json_object_get(j, "pass_at_k_dropped");
	size_t n_dropped = 0;
	for (size_t i = 0; i < COUNT(k_cases); i++) {
		const struct k_case *tc = &k_cases[i];
		char key[32];
		snprintf(key, sizeof(key), "pass_at_k/%lu", tc->k);
		if (tc->want != NODROP) {
			cr_expect(has(j, key), "k=%lu missing", tc->k);
			if (has(j, key))
				expect_close(num(j, key), tc->want, key);
			continue;
		}
		cr_expect(!has(j, key), "k=%lu should be dropped", tc->k);
		const json_t *d = json_array_get(dropped, n_dropped++);
		cr_expect_eq(json_integer_value(json_object_get(d, "k")), (json_int_t)tc->k);
		cr_expect_str_eq(json_string_value(json_object_get(d, "reason")), tc->reason);
	}
	cr_expect_eq(json_array_size(dropped), n_dropped);
	cr_expect_eq(json_object_size(json_object_get(j, "pass_at_k")), 4);
	/* statuses: 5 passes, 10 assertion failures, the rest zero */
	cr_expect_eq(num(j, "statuses/pass"), 5);
	cr_expect_eq(num(j, "statuses/assertion_fail"), 10);
	cr_expect_eq(num(j, "statuses/timeout"), 0);
	cr_expect_eq(num(j, "details/test failed"), 10);
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

Test(summary, empty_summary_drops_every_k)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long ks[] = { 1, 10 };
	json_t *j = ee_summary_json(s, ks, COUNT(ks), 0.0);

	cr_assert_not_null(j);
	cr_expect_eq(num(j, "tasks"), 0);
	cr_expect_eq(json_object_size(json_object_get(j, "pass_at_k")), 0);
	const json_t *d = json_array_get(json_object_get(j, "pass_at_k_dropped"), 1);
	cr_expect_str_eq(json_string_value(json_object_get(d, "reason")), "no tasks");
	cr_expect(json_is_null(json_object_get(j, "mean_score")));
	cr_expect(json_is_null(json_object_get(j, "median_task_score")));
	cr_expect(!has(j, "throughput_per_s"));
	json_decref(j);
	ee_summary_free(s);
	ee_summary_free(NULL);
	no_leaks();
}

/* ---- score distribution --------------------------------------------------- */

Test(summary, mean_median_p10_of_task_means)
{
	static const struct {
		const char *task;
		double score;
	} recs[] = {
		{ "t1", 1.0 },  { "t1", 0.5 },                 /* mean 3/4 */
		{ "t2", 0.0 },                                 /* 0 */
		{ "t3", 0.25 }, { "t3", 0.25 }, { "t3", 1.0 }, /* 1/2 */
		{ "t4", 1.0 },                                 /* 1 */
	};
	struct ee_summary *s = ee_summary_new();
	unsigned long k = 1;

	for (size_t i = 0; i < COUNT(recs); i++)
		add_rec(s, recs[i].task, recs[i].score == 1.0 ? "pass" : "assertion_fail", recs[i].score);
	json_t *j = ee_summary_json(s, &k, 1, 2.0);
	/* sorted task means 0, 1/2, 3/4, 1 */
	expect_close(num(j, "mean_score"), (0.0 + 0.5 + 0.75 + 1.0) / 4, "mean");
	expect_close(num(j, "median_task_score"), (0.5 + 0.75) / 2, "median");
	expect_close(num(j, "p10_task_score"), 0.3 * 0.5, "p10"); /* rank 0.3 between 0 and 1/2 */
	/* pass@1: (1/2 + 0 + 1/3 + 1) / 4 = 11/24 */
	expect_close(num(j, "pass_at_k/1"), 11.0 / 24.0, "pass@1");
	expect_close(num(j, "wall_s"), 2.0, "wall");
	expect_close(num(j, "throughput_per_s"), 7.0 / 2.0, "throughput");
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

/* ---- classes -------------------------------------------------------------- */

Test(summary, segmented_by_class)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long ks[] = { 1, 2 };

	add_json(s, "{'task_id':'s1','class':'strings','status':'pass','score':1,'tests':[]}");
	add_json(s, "{'task_id':'s1','class':'strings','status':'timeout','detail':'timeout','score':0,'"
	            "tests':[]}");
	/* no class: joins its task's class */
	add_json(s, "{'task_id':'s1','status':'pass','score':1,'tests':[]}");
	add_json(s, "{'task_id':'s2','class':'strings','status':'pass','score':1,'tests':[]}");
	add_json(s, "{'task_id':'s2','class':'strings','status':'pass','score':1,'tests':[]}");
	add_json(s, "{'task_id':'m1','class':'math','status':'syntax_error','detail':'syntax error: "
	            "bad','score':0,'tests':[]}");
	add_json(s, "{'task_id':'m1','class':'math','status':'pass','score':1,'tests':[]}");
	add_json(s, "{'task_id':'n1','status':'error','detail':'premature exit','score':0.5,'tests':[]}");
	add_json(s, "{'task_id':'n1','class':null,'status':'pass','score':1,'tests':[]}");
	/* a class given late moves the task (its earlier samples' statuses stay) */
	add_json(s, "{'task_id':'late','status':'pass','score':1,'tests':[]}");
	add_json(s, "{'task_id':'late','class':'math','status':'pass','score':1,'tests':[]}");
	json_t *j = ee_summary_json(s, ks, COUNT(ks), 0.0);
	cr_assert_not_null(j);
	const json_t *cls = json_object_get(j, "classes");
	cr_expect_eq(json_object_size(cls), 3);

	const json_t *str = json_object_get(cls, "strings");
	cr_expect_eq(num(str, "tasks"), 2);
	cr_expect_eq(num(str, "samples"), 5);
	/* s1: 2 of 3; s2: 2 of 2 -> (2/3 + 1) / 2 = 5/6 */
	expect_close(num(str, "pass_at_k/1"), 5.0 / 6.0, "strings pass@1");
	/* s1: 1 - C(1,2)/C(3,2) = 1; s2: 1 */
	expect_close(num(str, "pass_at_k/2"), 1.0, "strings pass@2");
	cr_expect_eq(num(str, "statuses/timeout"), 1);
	cr_expect_eq(num(str, "details/timeout"), 1);

	const json_t *math = json_object_get(cls, "math");
	cr_expect_eq(num(math, "tasks"), 2);
	cr_expect_eq(num(math, "samples"), 3, "late's first sample stays with (none)");
	expect_close(num(math, "pass_at_k/1"), (0.5 + 1.0) / 2, "math pass@1");
	cr_expect_eq(num(math, "details/syntax error"), 1);

	const json_t *none = json_object_get(cls, "");
	cr_expect_eq(num(none, "tasks"), 1);
	cr_expect_eq(num(none, "samples"), 3);
	expect_close(num(none, "mean_score"), 0.75, "(none) mean");
	cr_expect_eq(num(none, "statuses/error"), 1);
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

Test(summary, a_task_has_one_class)
{
	struct ee_summary *s = ee_summary_new();
	struct ee_err err = { 0 };
	json_t *j = fix("{'task_id':'s1','class':'math','status':'pass','score':1,'tests':[]}");

	add_json(s, "{'task_id':'s1','class':'strings','status':'pass','score':1,'tests':[]}");
	cr_expect_eq(ee_summary_add(s, j, "r.jsonl:2", &err), -1);
	cr_expect_eq(err.code, EE_ERR_USAGE);
	cr_expect_str_eq(err.msg, "r.jsonl:2: class: \"math\" differs from \"strings\" of an "
	                          "earlier record of task \"s1\"");
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

/* ---- tiers ---------------------------------------------------------------- */

Test(summary, segmented_by_tier)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long k = 1;

	add_json(s, "{'task_id':'a','status':'assertion_fail','score':0.6,'tests':["
	            "{'tier':'canonical','status':'pass'},{'status':'pass'},"
	            "{'tier':'edge','status':'fail'}]}");
	add_json(s, "{'task_id':'a','status':'assertion_fail','score':0.5,'tests':["
	            "{'tier':'canonical','status':'pass'},{'tier':'canonical','status':'skipped'}]}");
	add_json(s, "{'task_id':'a','status':'pass','score':1,'tests':[{'tier':'edge','status':'pass'},"
	            "{'tier':'property','status':'pass','weight':2}]}");
	add_json(s,
	         "{'task_id':'a','status':'timeout','score':0,'tests':[{'tier':null,'status':'not_run'}]}");
	json_t *j = ee_summary_json(s, &k, 1, 0.0);
	const json_t *t = json_object_get(j, "tiers");
	cr_assert_not_null(t);
	cr_expect_eq(json_object_size(t), 3);
	/* canonical: 5 tests (absent and null tier count as canonical), 3 passed,
	 * in 3 samples, all passed only in the first */
	const json_t *c = json_object_get(t, "canonical");
	cr_expect_eq(num(c, "tests"), 5);
	cr_expect_eq(num(c, "tests_passed"), 3);
	expect_close(num(c, "pass_rate"), 3.0 / 5.0, "canonical pass rate");
	cr_expect_eq(num(c, "samples"), 3);
	cr_expect_eq(num(c, "samples_all_passed"), 1);
	expect_close(num(c, "all_passed_rate"), 1.0 / 3.0, "canonical all passed");
	const json_t *e = json_object_get(t, "edge");
	cr_expect_eq(num(e, "tests"), 2);
	cr_expect_eq(num(e, "samples_all_passed"), 1);
	expect_close(num(e, "all_passed_rate"), 0.5, "edge all passed");
	cr_expect_eq(num(json_object_get(t, "property"), "samples"), 1);
	/* the fixed order first */
	const char *first = json_object_iter_key(json_object_iter((json_t *)t));
	cr_expect_str_eq(first, "canonical");
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

Test(summary, tiers_are_capped)
{
	struct ee_summary *s = ee_summary_new();
	char rec[160];
	unsigned long k = 1;

	for (int i = 0; i < EE_SUMMARY_MAX_TIERS + 5; i++) {
		snprintf(rec, sizeof(rec),
		         "{'task_id':'a','status':'pass','score':1,'tests':[{'tier':'t%d','status':'pass'}]}",
		         i);
		add_json(s, rec);
	}
	json_t *j = ee_summary_json(s, &k, 1, 0.0);
	const json_t *t = json_object_get(j, "tiers");
	cr_expect_eq(json_object_size(t), EE_SUMMARY_MAX_TIERS + 1);
	cr_expect_eq(num(t, "(other)/tests"), 5);
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

/* ---- details -------------------------------------------------------------- */

Test(summary, detail_classes)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "test 3 failed: AssertionError (line 2: assert f(1) == 2)", "test failed" },
		{ "test 12 failed", "test failed" },
		{ "test failed: x", "test failed: x" }, /* not the scorer's form: kept */
		{ "test 3x failed: y", "test 3x failed: y" },
		{ "syntax error: invalid syntax (line 1)", "syntax error" },
		{ "import error: NameError: name 'x' is not defined", "import error" },
		{ "setup failed: ZeroDivisionError: division by zero", "setup failed" },
		{ "protocol violation: wrong nonce", "protocol violation: wrong nonce" },
		{ "protocol violation: bad frame: length 12x", "protocol violation: bad frame" },
		{ "denied import: socket", "denied import: socket" },
		{ "killed by signal SIGSEGV", "killed by signal SIGSEGV" },
		{ "blocked by scan: os.system", "blocked by scan: os.system" },
		{ "timeout", "timeout" },
		{ "timeout (starved: 133 ms of CPU)", "timeout (starved)" },
		{ "output overflow", "output overflow" },
		{ "", "" },
	};
	char out[EE_SUMMARY_DETAIL_BYTES + 1];

	for (size_t i = 0; i < COUNT(cases); i++) {
		ee_summary_detail_class(cases[i].in, out, sizeof(out));
		cr_expect_str_eq(out, cases[i].want, "'%s'", cases[i].in);
	}
	/* cut to the limit on a character boundary: 'é' is two bytes */
	char long_detail[400] = "denied import: ";
	for (size_t i = strlen(long_detail); i + 2 < sizeof(long_detail) - 1; i += 2)
		strcat(long_detail, "\xc3\xa9");
	ee_summary_detail_class(long_detail, out, sizeof(out));
	cr_expect_leq(strlen(out), EE_SUMMARY_DETAIL_BYTES);
	cr_expect_geq(strlen(out), EE_SUMMARY_DETAIL_BYTES - 1);
	cr_expect_neq((unsigned char)out[strlen(out) - 1], 0xc3, "cut inside a character");
	/* a small buffer is never overrun */
	char tiny[5];
	ee_summary_detail_class("syntax error: x", tiny, sizeof(tiny));
	cr_expect_str_eq(tiny, "synt");
}

Test(summary, details_are_capped)
{
	enum { EXTRA = 7 };
	struct ee_summary *s = ee_summary_new();
	char detail[64];
	unsigned long k = 1;

	for (int i = 0; i < EE_SUMMARY_MAX_DETAILS + EXTRA; i++) {
		struct ee_err err = { 0 };
		snprintf(detail, sizeof(detail), "odd thing %d", i);
		json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:i, s:[]}", "task_id", "a", "class", "c",
		                      "status", "error", "detail", detail, "score", 0, "tests");
		cr_assert_eq(ee_summary_add(s, r, "x", &err), 0, "%s", err.msg);
		json_decref(r);
	}
	add_rec(s, "a", "assertion_fail", 0.0); /* a known detail after the cap: still its own */
	json_t *j = ee_summary_json(s, &k, 1, 0.0);
	const json_t *d = json_object_get(j, "details");
	cr_expect_eq(json_object_size(d), EE_SUMMARY_MAX_DETAILS + 1);
	cr_expect_eq(num(d, "(other)"), EXTRA + 1, "test failed came too late to get a slot");
	cr_expect_eq(num(d, "odd thing 0"), 1);
	const char *last = NULL;
	for (void *it = json_object_iter((json_t *)d); it; it = json_object_iter_next((json_t *)d, it))
		last = json_object_iter_key(it);
	cr_expect_str_eq(last, "(other)", "(other) comes last whatever its count");
	const json_t *cd = json_object_get(json_object_get(json_object_get(j, "classes"), "c"), "details");
	cr_expect_eq(json_object_size(cd), EE_SUMMARY_MAX_DETAILS + 1);
	cr_expect_eq(num(cd, "(other)"), EXTRA + 1, "task a is in class c");
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

Test(summary, details_sorted_by_count)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long k = 1;

	add_json(s, "{'task_id':'a','status':'timeout','detail':'timeout','score':0,'tests':[]}");
	add_json(s, "{'task_id':'a','status':'error','detail':'memory limit','score':0,'tests':[]}");
	add_json(s, "{'task_id':'a','status':'error','detail':'memory limit','score':0,'tests':[]}");
	add_json(s, "{'task_id':'a','status':'error','detail':'cpu limit','score':0,'tests':[]}");
	json_t *j = ee_summary_json(s, &k, 1, 0.0);
	void *it = json_object_iter(json_object_get(j, "details"));
	static const char *const order[] = { "memory limit", "cpu limit", "timeout" };
	for (size_t i = 0; i < COUNT(order);
	     i++, it = json_object_iter_next(json_object_get(j, "details"), it)) {
		cr_assert_not_null(it);
		cr_expect_str_eq(json_object_iter_key(it), order[i]);
	}
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

/* ---- special records, resources, timestamps ------------------------------- */

Test(summary, sandbox_errors_and_invalid_lines_count_as_error)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long k = 1;

	add_json(s, "{'task_id':'a','sandbox_error':'cgroup: permission denied'}");
	/* as eval --skip-invalid writes them; status and score are not read */
	add_json(s, "{'task_id':'a','sample':-1,'status':'bogus','detail':'invalid sample','score':7,"
	            "'invalid':true,'line':3,'message':'samples.jsonl:3: completion: expected a string'}");
	add_json(s, "{'task_id':null,'invalid':true}");
	add_json(s, "{'task_id':'a','class':'c','status':'pass','score':1,'tests':[]}");
	json_t *j = ee_summary_json(s, &k, 1, 0.0);
	cr_expect_eq(num(j, "samples"), 4);
	cr_expect_eq(num(j, "samples_without_task"), 1);
	cr_expect_eq(num(j, "tasks"), 1);
	cr_expect_eq(num(j, "statuses/error"), 3);
	cr_expect_eq(num(j, "details/sandbox error"), 1);
	cr_expect_eq(num(j, "details/invalid sample"), 2);
	expect_close(num(j, "pass_at_k/1"), 1.0 / 3.0, "pass@1");
	expect_close(num(j, "mean_score"), 1.0 / 3.0, "mean");
	/* the task's class, given late, takes the task; the totals keep the rest */
	const json_t *cls = json_object_get(j, "classes");
	cr_expect_eq(num(cls, "c/tasks"), 1);
	cr_expect_eq(num(json_object_get(cls, ""), "samples"), 2);
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

/* An infra error is the host's failure, not the model's: out of n and
 * every count, in "infra_errors" (and the reward's) only. */
Test(summary, infra_errors_are_left_out_of_n_and_counted)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long k = 1;

	add_json(s, "{'task_id':'a','sample':0,'sandbox_error':'warm worker: start a candidate: No such "
	            "device','reward':null,'infra_error':true}");
	add_json(s, "{'task_id':'b','sample':0,'sandbox_error':'clone: EAGAIN','reward':null,"
	            "'infra_error':true}");
	add_json(s, "{'task_id':'a','sample':1,'status':'pass','score':1,'tests':[]}");
	json_t *j = ee_summary_json(s, &k, 1, 0.0);
	cr_expect_eq(num(j, "samples"), 1);
	cr_expect_eq(num(j, "infra_errors"), 2);
	cr_expect_eq(num(j, "tasks"), 1, "b has no judged sample");
	cr_expect_eq(num(j, "statuses/error"), 0);
	expect_close(num(j, "pass_at_k/1"), 1.0, "pass@1 over the judged samples");
	cr_expect_eq(num(j, "reward/infra_errors"), 2);
	char *table = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&table, &len);
	ee_summary_print(j, f);
	fclose(f);
	cr_expect(strstr(table, "infra errors") && strstr(table, "left out of samples and pass@k"), "%s",
	          table);
	free(table);
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

Test(summary, resources_and_span)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long k = 1;

	cr_expect_eq(ee_summary_span_s(s), 0.0);
	add_json(s, "{'task_id':'a','status':'pass','score':1,'tests':[],"
	            "'resources':{'wall_ms':40,'cpu_ms':30,'peak_rss_kb':9000},"
	            "'started_at':'2026-11-29T10:00:01.250Z','finished_at':'2026-11-29T10:00:01.300Z'}");
	add_json(s, "{'task_id':'a','status':'pass','score':1,'tests':[],"
	            "'resources':{'wall_ms':60.5,'cpu_ms':null,'peak_rss_kb':12000},"
	            "'started_at':'2026-11-29T10:00:00.500Z','finished_at':'2026-11-29T10:01:00.000Z'}");
	add_json(s, "{'task_id':'a','status':'pass','score':1,'tests':[],"
	            "'started_at':'yesterday','finished_at':'2026-13-29T10:02:00.000Z'}");
	expect_close(ee_summary_span_s(s), 59.5, "span");
	json_t *j = ee_summary_json(s, &k, 1, 0.0);
	expect_close(num(j, "resources/wall_ms_mean"), 50.25, "wall mean");
	expect_close(num(j, "resources/wall_ms_max"), 60.5, "wall max");
	expect_close(num(j, "resources/cpu_ms_total"), 30, "cpu total");
	expect_close(num(j, "resources/peak_rss_kb_max"), 12000, "rss max");
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

/* ---- bad records ---------------------------------------------------------- */

struct bad_case {
	const char *record;
	const char *msg; /* after "r.jsonl:7: " */
};

static const struct bad_case bad_cases[] = {
	{ "[1]", "expected a JSON object" },
	{ "{'status':'pass','score':1,'tests':[]}", "task_id: missing" },
	{ "{'task_id':3,'status':'pass','score':1,'tests':[]}", "task_id: expected a string, got 3" },
	{ "{'task_id':'a','score':1,'tests':[]}", "status: missing" },
	{ "{'task_id':'a','status':'passed','score':1,'tests':[]}",
	  "status: expected pass, assertion_fail, syntax_error, timeout or error, got \"passed\"" },
	{ "{'task_id':'a','status':'pass','tests':[]}", "score: missing" },
	{ "{'task_id':'a','status':'pass','score':'1','tests':[]}",
	  "score: expected a number in [0, 1], got \"1\"" },
	{ "{'task_id':'a','status':'pass','score':1.5,'tests':[]}",
	  "score: expected a number in [0, 1], got 1.5" },
	{ "{'task_id':'a','status':'pass','score':-0.1,'tests':[]}",
	  "score: expected a number in [0, 1], got -0.10000000000000001" },
	{ "{'task_id':'a','class':1,'status':'pass','score':1,'tests':[]}",
	  "class: expected a string, got 1" },
	{ "{'task_id':'a','status':'pass','score':1,'detail':[],'tests':[]}",
	  "detail: expected a string or null, got []" },
	{ "{'task_id':'a','status':'pass','score':1}", "tests: missing" },
	{ "{'task_id':'a','status':'pass','score':1,'tests':{}}", "tests: expected an array, got {}" },
	{ "{'task_id':'a','status':'pass','score':1,'tests':[{'status':'pass'},3]}",
	  "tests[1]: expected an object, got 3" },
	{ "{'task_id':'a','status':'pass','score':1,'tests':[{'tier':'edge'}]}", "tests[0].status: missing" },
	{ "{'task_id':'a','status':'pass','score':1,'tests':[{'status':'pass','tier':2}]}",
	  "tests[0].tier: expected a string, got 2" },
	{ "{'task_id':'a','status':'pass','score':1,'tests':[],'resources':5}",
	  "resources: expected an object, got 5" },
	{ "{'task_id':'a','status':'pass','score':1,'tests':[],'resources':{'wall_ms':'x'}}",
	  "resources.wall_ms: expected a number >= 0, got \"x\"" },
	{ "{'task_id':'a','status':'pass','score':1,'tests':[],'resources':{'peak_rss_kb':-1}}",
	  "resources.peak_rss_kb: expected a number >= 0, got -1" },
	{ "{'task_id':'a','status':'a very long status string that goes on and on and "
	  "on','score':1,'tests':[]}",
	  "status: expected pass, assertion_fail, syntax_error, timeout or error, got \"a very long "
	  "status string that goes on ..." },
};

Test(summary, bad_records_name_the_field)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long k = 1;

	for (size_t i = 0; i < COUNT(bad_cases); i++) {
		struct ee_err err = { 0 };
		char want[300];
		json_t *j = fix(bad_cases[i].record);
		snprintf(want, sizeof(want), "r.jsonl:7: %s", bad_cases[i].msg);
		cr_expect_eq(ee_summary_add(s, j, "r.jsonl:7", &err), -1, "%s", bad_cases[i].record);
		cr_expect_eq(err.code, EE_ERR_USAGE);
		cr_expect_str_eq(err.msg, want);
		json_decref(j);
	}
	/* nothing was counted */
	json_t *j = ee_summary_json(s, &k, 1, 0.0);
	cr_expect_eq(num(j, "samples"), 0);
	cr_expect_eq(num(j, "tasks"), 0);
	cr_expect_eq(json_object_size(json_object_get(j, "tiers")), 0);
	cr_expect_eq(json_object_size(json_object_get(j, "classes")), 0);
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

/* ---- the table ------------------------------------------------------------ */

static char *render(const json_t *j)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	ee_summary_print(j, f);
	fclose(f);
	return text;
}

Test(summary, syntax_error_is_split_by_detail)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long ks[] = { 1 };

	add_json(s, "{'task_id':'a','class':'c','status':'syntax_error','detail':'syntax error: invalid "
	            "syntax (line 1)','score':0,'tests':[]}");
	add_json(s, "{'task_id':'a','class':'c','status':'syntax_error','detail':'import error: NameError: "
	            "x','score':0,'tests':[]}");
	add_json(s, "{'task_id':'b','status':'syntax_error','detail':'import error: ImportError: y',"
	            "'score':0,'tests':[]}");
	add_rec(s, "b", "pass", 1.0);
	json_t *j = ee_summary_json(s, ks, COUNT(ks), 0);
	cr_expect_eq(num(j, "statuses/syntax_error"), 3);
	cr_expect_eq(num(j, "syntax_error_details/syntax error"), 1);
	cr_expect_eq(num(j, "syntax_error_details/import error"), 2);
	cr_expect_null(json_object_get(json_object_get(j, "syntax_error_details"), "(other)"));
	cr_expect_eq(num(j, "classes/c/syntax_error_details/import error"), 1);
	cr_expect_eq(
	        num(json_object_get(json_object_get(j, "classes"), ""), "syntax_error_details/syntax error"),
	        0);
	char *text = render(j);
	cr_expect(strstr(text, "\n  does not parse         1    25.0%\n"
	                       "  fails at import        2    50.0%\n"),
	          "%s", text);
	free(text);
	json_decref(j);
	/* a hand-written record with another detail is neither kind */
	add_json(s, "{'task_id':'b','status':'syntax_error','detail':'weird','score':0,'tests':[]}");
	j = ee_summary_json(s, ks, COUNT(ks), 0);
	cr_expect_eq(num(j, "syntax_error_details/(other)"), 1);
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

Test(summary, table_shows_every_block)
{
	struct ee_summary *s = ee_summary_new();
	unsigned long ks[] = { 1, 10 };

	add_task(s, "a", 3, 1);
	add_json(s, "{'task_id':'b','class':'strings','status':'timeout','detail':'timeout','score':0,"
	            "'tests':[{'tier':'edge','status':'not_run'}]}");
	json_t *j = ee_summary_json(s, ks, COUNT(ks), 4.0);
	char *text = render(j);
	static const char *const want[] = {
		"tasks",          "samples",
		"pass@1",         "0.1667",
		"pass@10",        "dropped: 2 of 2 tasks have fewer than 10",
		"mean score",     "median task score",
		"p10 task score", "wall time",
		"throughput",     "1.00 samples/s",
		"class",          "(none)",
		"strings",        "tier",
		"edge",           "status",
		"assertion_fail", "timeout",
		"detail",         "test failed",
	};
	for (size_t i = 0; i < COUNT(want); i++)
		cr_expect(strstr(text, want[i]), "'%s' missing from:\n%s", want[i], text);
	cr_expect(strstr(text, "(none)") < strstr(text, "strings"), "classes sorted by name");
	free(text);
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

Test(summary, table_of_nothing_or_junk_does_not_crash)
{
	json_t *junk[] = { json_object(), json_array(),
		           json_pack("{s:s, s:[i]}", "tasks", "x", "classes", 1) };

	for (size_t i = 0; i < COUNT(junk); i++) {
		free(render(junk[i]));
		json_decref(junk[i]);
	}
	free(render(NULL));
	no_leaks();
}

/* ---- models --------------------------------------------------------------- */

/* A record of model (NULL: none) on task, passing or failing with detail. */
static void add_model_rec(struct ee_summary *s, const char *model, const char *task, const char *status,
                          const char *detail)
{
	struct ee_err err = { 0 };
	int pass = strcmp(status, "pass") == 0;
	json_t *j = json_pack("{s:s, s:s*, s:s, s:f, s:s*, s:[]}", "task_id", task, "model", model, "status",
	                      status, "score", pass ? 1.0 : 0.0, "detail", detail, "tests");

	cr_assert_not_null(j);
	cr_assert_eq(ee_summary_add(s, j, "t.jsonl:1", &err), 0, "%s", err.msg);
	json_decref(j);
}

/* The same records with and without their model: the overall figures are
 * the same, and only the summary that knows two models has "models". */
static void add_two_models(struct ee_summary *s, int with_model)
{
	/* good: a 2/2, b 1/2; poor: a 0/1 (syntax), c 0/2 (import, test) */
	add_model_rec(s, with_model ? "good" : NULL, "a", "pass", NULL);
	add_model_rec(s, with_model ? "good" : NULL, "a", "pass", NULL);
	add_model_rec(s, with_model ? "good" : NULL, "b", "pass", NULL);
	add_model_rec(s, with_model ? "good" : NULL, "b", "assertion_fail", "test 1 failed: x");
	add_model_rec(s, with_model ? "poor" : NULL, "a", "syntax_error", "syntax error: line 3: bad");
	add_model_rec(s, with_model ? "poor" : NULL, "c", "syntax_error", "import error: NameError: y");
	add_model_rec(s, with_model ? "poor" : NULL, "c", "assertion_fail", "test 0 failed: z");
}

/* The keys of a summary block that are figures over tasks: with several
 * models they would pool them (issue 35). */
static const char *const pooled_keys[] = { "pass_at_k",      "pass_at_k_ci",  "pass_at_k_dropped",
	                                   "mean_score",     "mean_score_ci", "median_task_score",
	                                   "p10_task_score", "classes",       "generated" };

Test(summary, models_break_down_and_nothing_is_pooled_across_them)
{
	const unsigned long ks[] = { 1, 2 };
	struct ee_summary *s = ee_summary_new(), *plain = ee_summary_new();

	add_two_models(s, 1);
	add_two_models(plain, 0);
	json_t *j = ee_summary_json(s, ks, 2, 0.0), *p = ee_summary_json(plain, ks, 2, 0.0);
	cr_assert_not_null(j);
	cr_assert_not_null(p);
	cr_expect(!has(p, "models"), "one model (none): no breakdown");
	json_t *without = json_deep_copy(j), *plain_counts = json_deep_copy(p);
	json_object_del(without, "models");
	for (size_t i = 0; i < sizeof(pooled_keys) / sizeof(pooled_keys[0]); i++) {
		json_object_del(without, pooled_keys[i]);
		json_object_del(plain_counts, pooled_keys[i]);
	}
	cr_expect(json_equal(without, plain_counts),
	          "the counts are those of the same records without models");
	json_decref(without);
	json_decref(plain_counts);
	/* no pooled figure: none at the top, none per class, each k says why */
	cr_expect_eq(json_object_size(json_object_get(j, "pass_at_k")), 0, "no pooled pass@k");
	cr_expect_eq(json_object_size(json_object_get(j, "pass_at_k_ci")), 0);
	cr_expect(json_is_null(json_object_get(j, "mean_score")), "no pooled mean score");
	cr_expect(json_is_null(json_object_get(j, "median_task_score")));
	const json_t *dropped = json_object_get(j, "pass_at_k_dropped");
	cr_assert_eq(json_array_size(dropped), 2);
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(dropped, 0), "reason")),
	                 "the records hold 2 models: a pass@k pooled over them is no model's (see models)");
	cr_expect_eq(json_object_size(json_object_get(json_object_get(json_object_get(j, "classes"), ""),
	                                              "pass_at_k")),
	             0, "nor per class");
	cr_expect(json_is_null(
	        json_object_get(json_object_get(json_object_get(j, "classes"), ""), "mean_score")));
	cr_expect_eq(num(json_object_get(json_object_get(j, "classes"), ""), "samples"), 7,
	             "the class keeps its counts");
	const json_t *m = json_object_get(j, "models");
	cr_assert_eq(json_object_size(m), 2);
	cr_expect_str_eq(json_object_iter_key(json_object_iter((json_t *)m)), "good", "by name");
	/* good: tasks a (2/2), b (1/2): pass@1 = 0.75, pass@2 = (1 + 1) / 2 */
	cr_expect_eq(num(m, "good/tasks"), 2);
	cr_expect_eq(num(m, "good/samples"), 4);
	expect_close(num(m, "good/pass_at_k/1"), 0.75, "good pass@1");
	expect_close(num(m, "good/pass_at_k/2"), 1.0, "good pass@2");
	expect_close(num(m, "good/mean_score"), 0.75, "good mean");
	expect_close(num(m, "good/median_task_score"), 0.75, "good median");
	cr_expect_eq(num(m, "good/statuses/pass"), 3);
	cr_expect_eq(num(m, "good/details/test failed"), 1);
	/* poor: a has 1 sample, so pass@2 is dropped for it alone */
	cr_expect_eq(num(m, "poor/tasks"), 2);
	expect_close(num(m, "poor/pass_at_k/1"), 0.0, "poor pass@1");
	cr_expect(!has(m, "poor/pass_at_k/2"));
	cr_expect_eq(json_array_size(json_object_get(json_object_get(m, "poor"), "pass_at_k_dropped")), 1);
	cr_expect_eq(num(m, "poor/statuses/syntax_error"), 2);
	cr_expect_eq(num(m, "poor/details/syntax error"), 1, "syntax and import errors apart");
	cr_expect_eq(num(m, "poor/details/import error"), 1);
	/* each model's samples per task: the n of its pass@k */
	cr_expect_eq(num(m, "good/samples_per_task/min"), 2);
	cr_expect_eq(num(m, "poor/samples_per_task/min"), 1);
	cr_expect_eq(num(m, "poor/samples_per_task/max"), 2);
	json_decref(j);
	json_decref(p);
	ee_summary_free(s);
	ee_summary_free(plain);
	no_leaks();
}

Test(summary, records_without_a_model_are_a_model_of_their_own)
{
	unsigned long k = 1;
	struct ee_summary *s = ee_summary_new();

	add_model_rec(s, "m", "a", "pass", NULL);
	add_model_rec(s, NULL, "a", "assertion_fail", "test 0 failed");
	json_t *j = ee_summary_json(s, &k, 1, 0.0);
	expect_close(num(j, "models/m/pass_at_k/1"), 1.0, "m");
	cr_expect_eq(num(json_object_get(json_object_get(j, "models"), ""), "samples"), 1, "\"\": no model");
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

Test(summary, models_are_capped)
{
	unsigned long k = 1;
	struct ee_summary *s = ee_summary_new();
	char name[32];

	for (int i = 0; i < EE_SUMMARY_MAX_MODELS + 3; i++) {
		snprintf(name, sizeof(name), "m%03d", i);
		add_model_rec(s, name, "a", "pass", NULL);
	}
	json_t *j = ee_summary_json(s, &k, 1, 0.0);
	const json_t *m = json_object_get(j, "models");
	cr_expect_eq(json_object_size(m), EE_SUMMARY_MAX_MODELS + 1);
	cr_expect_eq(num(m, "(other)/samples"), 3);
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

Test(summary, a_model_that_is_not_a_string_is_refused)
{
	struct ee_summary *s = ee_summary_new();
	struct ee_err err = { 0 };
	json_t *j = fix("{'task_id':'a','model':7,'status':'pass','score':1,'tests':[]}");

	cr_expect_eq(ee_summary_add(s, j, "r.jsonl:4", &err), -1);
	cr_expect_str_eq(err.msg, "r.jsonl:4: model: expected a string or null, got 7");
	json_decref(j);
	ee_summary_free(s);
	no_leaks();
}

/* ---- lint ----------------------------------------------------------------- */

Test(summary, a_record_with_a_bad_lint_is_refused_and_leaves_no_trace)
{
	static const struct {
		const char *lint, *msg;
	} cases[] = {
		{ "5", "r.jsonl:2: lint: expected an object, got 5" },
		{ "{'status':'maybe'}",
		  "r.jsonl:2: lint.status: expected pass, fail or not_run, got \"maybe\"" },
		{ "{}", "r.jsonl:2: lint.status: missing" },
	};
	unsigned long k = 1;
	char text[160];

	for (size_t i = 0; i < COUNT(cases); i++) {
		struct ee_summary *s = ee_summary_new();
		struct ee_err err = { 0 };
		add_json(s, "{'task_id':'a','model':'m','status':'pass','score':1,'tests':[],"
		            "'lint':{'status':'fail','findings':[{'code':'F401'}]}}");
		snprintf(text, sizeof(text),
		         "{'task_id':'b','model':'n','status':'pass','score':1,'tests':[],'lint':%s}",
		         cases[i].lint);
		json_t *j = fix(text);
		cr_expect_eq(ee_summary_add(s, j, "r.jsonl:2", &err), -1, "%s", cases[i].lint);
		cr_expect_str_eq(err.msg, cases[i].msg);
		json_decref(j);
		json_t *sum = ee_summary_json(s, &k, 1, 0.0);
		cr_expect_eq(num(sum, "samples"), 1, "%s: the refused record was counted", cases[i].lint);
		cr_expect_eq(num(sum, "tasks"), 1);
		cr_expect(!has(sum, "models"), "nor its model");
		cr_expect_eq(num(sum, "lint/codes/F401"), 1);
		json_decref(sum);
		ee_summary_free(s);
	}
	no_leaks();
}
