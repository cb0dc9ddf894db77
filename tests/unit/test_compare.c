/* test_compare.c - compare's logic (compare.h): metric names, the summary
 * checks, deltas, the gate and its epsilon boundary, missing metrics,
 * intervals, classes, paired tasks, telling the input files apart, and the
 * printed verdict. Fixtures are written with ' for " (fix() turns them
 * back). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/compare.h"
#include "base/err.h"

#include "leakcheck.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static char *fixed(const char *text)
{
	char *s = strdup(text);

	cr_assert_not_null(s);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	return s;
}

static json_t *fix(const char *text)
{
	char *s = fixed(text);
	json_error_t e;
	json_t *j = json_loads(s, 0, &e);

	cr_assert_not_null(j, "bad fixture %s: %s", s, e.text);
	free(s);
	return j;
}

/* A summary with pass@1 = p1 (interval [p1 - w, p1 + w] when w >= 0), a
 * mean score, and timeouts out of 100 samples. */
static json_t *summary(double p1, double w, double mean, int timeouts)
{
	json_t *s = json_pack("{s:i, s:i, s:{s:f}, s:f, s:{s:i, s:i}}", "tasks", 10, "samples", 100,
	                      "pass_at_k", "1", p1, "mean_score", mean, "statuses", "pass", 100 - timeouts,
	                      "timeout", timeouts);

	cr_assert_not_null(s);
	if (w >= 0)
		json_object_set_new(s, "pass_at_k_ci",
		                    json_pack("{s:[f, f]}", "1", fmax(0, p1 - w), fmin(1, p1 + w)));
	return s;
}

static void side(struct ee_compare_side *sd, json_t *sum, const char *name)
{
	struct ee_err err = { 0 };

	cr_assert_eq(ee_compare_side_from_summary(sum, name, sd, &err), 0, "%s", err.msg);
}

static const json_t *row(const json_t *report, const char *metric)
{
	const json_t *r;
	size_t i;

	json_array_foreach (json_object_get(report, "metrics"), i, r)
		if (strcmp(json_string_value(json_object_get(r, "metric")), metric) == 0)
			return r;
	return NULL;
}

static struct ee_metric metric(const char *name)
{
	struct ee_metric m;
	struct ee_err err = { 0 };

	cr_assert_eq(ee_metric_parse(name, &m, &err), 0, "%s", err.msg);
	return m;
}

/* ---- metric names ------------------------------------------------------------- */

Test(compare, metric_names)
{
	static const struct {
		const char *name;
		int ok;
	} cases[] = {
		{ "pass@1", 1 },
		{ "pass@100", 1 },
		{ "pass@1000000000", 1 },
		{ "mean_score", 1 },
		{ "lint_pass_rate", 1 },
		{ "composite", 1 },
		{ "timeout_rate", 1 },
		{ "pass@0", 0 },
		{ "pass@", 0 },
		{ "pass@01", 0 },
		{ "pass@1x", 0 },
		{ "pass@-1", 0 },
		{ "pass@1000000001", 0 },
		{ "pass@99999999999999999999", 0 },
		{ "Pass@1", 0 },
		{ "mean", 0 },
		{ "", 0 },
	};
	char name[EE_COMPARE_NAME_MAX];

	for (size_t i = 0; i < COUNT(cases); i++) {
		struct ee_metric m;
		struct ee_err err = { 0 };
		int rc = ee_metric_parse(cases[i].name, &m, &err);
		cr_expect_eq(rc, cases[i].ok ? 0 : -1, "'%s'", cases[i].name);
		if (rc == 0) {
			ee_metric_name(&m, name, sizeof(name));
			cr_expect_str_eq(name, cases[i].name, "round trip");
		} else {
			cr_expect_eq(err.code, EE_ERR_USAGE);
			cr_expect(strstr(err.msg, "unknown metric"), "%s", err.msg);
		}
	}
}

/* ---- checking summaries ------------------------------------------------------------ */

Test(compare, summary_checks)
{
	static const struct {
		const char *json;
		const char *field; /* NULL: accepted */
		const char *msg;   /* a part of the message */
	} cases[] = {
		{ "{'statuses':{}}", NULL, NULL },
		{ "{'statuses':{'timeout':0},'pass_at_k':{'1':null},'mean_score':null,'mean_score_ci':null,"
		  "'lint':{'pass_rate':0.5},'composite':{'value':-3.5},'bootstrap':{'level':0.9},"
		  "'classes':{'':{'pass_at_k':{'1':1}}}}",
		  NULL, NULL },
		{ "[1]", "", "expected a JSON object" },
		{ "{'tasks':1}", "statuses", "not a summary" },
		{ "{'statuses':[]}", "statuses", "expected an object, got []" },
		{ "{'statuses':{'pass':-1}}", "statuses.pass", "an integer >= 0" },
		{ "{'statuses':{'timeout':5},'samples':4}", "statuses.timeout", "at most samples" },
		{ "{'statuses':{},'samples':1.5}", "samples", "an integer >= 0" },
		{ "{'statuses':{},'pass_at_k':[]}", "pass_at_k", "an object" },
		{ "{'statuses':{},'pass_at_k':{'1':1.0000001}}", "pass_at_k.1", "[0, 1]" },
		{ "{'statuses':{},'pass_at_k':{'1':'0.5'}}", "pass_at_k.1", "got \"0.5\"" },
		{ "{'statuses':{},'pass_at_k':{'one':0.5}}", "pass_at_k.one", "not a positive integer" },
		{ "{'statuses':{},'pass_at_k':{'0':0.5}}", "pass_at_k.0", "not a positive integer" },
		{ "{'statuses':{},'pass_at_k_ci':{'1':[0.6,0.5]}}", "pass_at_k_ci.1", "lo <= hi" },
		{ "{'statuses':{},'pass_at_k_ci':{'1':[0.5]}}", "pass_at_k_ci.1", "lo <= hi" },
		{ "{'statuses':{},'mean_score':-0.1}", "mean_score", "[0, 1]" },
		{ "{'statuses':{},'mean_score_ci':[0.1,2]}", "mean_score_ci", "lo <= hi" },
		{ "{'statuses':{},'pass_at_k_dropped':{}}", "pass_at_k_dropped", "an array" },
		{ "{'statuses':{},'pass_at_k_dropped':[{'k':5}]}", "pass_at_k_dropped[0]", "reason" },
		{ "{'statuses':{},'lint':3}", "lint", "an object" },
		{ "{'statuses':{},'lint':{'pass_rate':true}}", "lint.pass_rate", "[0, 1]" },
		{ "{'statuses':{},'composite':{'value':'x'}}", "composite.value", "a number" },
		{ "{'statuses':{},'bootstrap':{'level':1}}", "bootstrap.level", "(0, 1)" },
		{ "{'statuses':{},'classes':[]}", "classes", "an object" },
		{ "{'statuses':{},'classes':{'math':1}}", "classes.math", "an object" },
		{ "{'statuses':{},'classes':{'math':{'pass_at_k':{'1':2}}}}", "classes.math.pass_at_k.1",
		  "[0, 1]" },
		{ "{'statuses':{},'classes':{'m':{'statuses':{'timeout':'x'}}}}",
		  "classes.m.statuses.timeout", "an integer" },
	};
	for (size_t i = 0; i < COUNT(cases); i++) {
		json_t *j = fix(cases[i].json);
		struct ee_err err = { 0 };
		int rc = ee_compare_check_summary(j, "s.json", &err);
		if (!cases[i].field) {
			cr_expect_eq(rc, 0, "case %zu: %s", i, err.msg);
		} else {
			cr_expect_eq(rc, -1, "case %zu accepted", i);
			cr_expect_eq(err.code, EE_ERR_USAGE);
			cr_expect_str_eq(err.field, cases[i].field, "case %zu: %s", i, err.msg);
			cr_expect(strncmp(err.msg, "s.json: ", 8) == 0, "%s", err.msg);
			cr_expect(strstr(err.msg, cases[i].msg), "case %zu: '%s' lacks '%s'", i, err.msg,
			          cases[i].msg);
		}
		json_decref(j);
	}
	/* a hostile class name is cut in the field path, never overflows it */
	char name[300], text[400];
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(text, sizeof(text), "{\"statuses\":{},\"classes\":{\"%s\":[]}}", name);
	json_t *j = json_loads(text, 0, NULL);
	struct ee_err err = { 0 };
	cr_expect_eq(ee_compare_check_summary(j, "s.json", &err), -1);
	cr_expect_lt(strlen(err.field), sizeof(err.field));
	cr_expect(strncmp(err.field, "classes.xxxx", 12) == 0, "%s", err.field);
	json_decref(j);
	no_leaks();
}

/* ---- the gate ---------------------------------------------------------------------- */

struct gate_case {
	const char *what;
	const char *metric;
	double base, new_v;  /* pass@1 (or the mean score for mean_score) */
	int base_to, new_to; /* timeouts of 100 samples */
	double epsilon;
	int regressed;
};

static const struct gate_case gate_cases[] = {
	{ "equal", "pass@1", 0.6, 0.6, 0, 0, 0.01, 0 },
	{ "equal, epsilon 0", "pass@1", 0.6, 0.6, 0, 0, 0.0, 0 },
	{ "better", "pass@1", 0.6, 0.9, 0, 0, 0.0, 0 },
	{ "a drop of exactly epsilon passes", "pass@1", 0.6, 0.59, 0, 0, 0.01, 0 },
	{ "a drop of exactly epsilon passes (2)", "pass@1", 0.7, 0.6, 0, 0, 0.1, 0 },
	{ "just over epsilon fails", "pass@1", 0.6, 0.5899, 0, 0, 0.01, 1 },
	{ "the smallest drop fails epsilon 0", "pass@1", 0.6, 0.599999, 0, 0, 0.0, 1 },
	{ "a big drop", "pass@1", 0.9, 0.1, 0, 0, 0.01, 1 },
	{ "a big drop, a big epsilon", "pass@1", 0.9, 0.1, 0, 0, 0.8, 0 },
	{ "mean score drop", "mean_score", 0.5, 0.4, 0, 0, 0.05, 1 },
	{ "timeouts up is worse", "timeout_rate", 0.5, 0.5, 1, 5, 0.01, 1 },
	{ "timeouts down is better", "timeout_rate", 0.5, 0.5, 5, 1, 0.0, 0 },
	{ "timeouts up by epsilon", "timeout_rate", 0.5, 0.5, 1, 2, 0.01, 0 },
};

Test(compare, gate_and_epsilon_boundary)
{
	for (size_t i = 0; i < COUNT(gate_cases); i++) {
		const struct gate_case *c = &gate_cases[i];
		int mean = strcmp(c->metric, "mean_score") == 0;
		struct ee_compare_side b, n;
		struct ee_metric m = metric(c->metric);
		struct ee_compare_options o = { c->epsilon, &m, 1 };
		struct ee_err err = { 0 };
		json_t *report;

		side(&b, summary(mean ? 0.5 : c->base, -1, mean ? c->base : 0.5, c->base_to), "base.json");
		side(&n, summary(mean ? 0.5 : c->new_v, -1, mean ? c->new_v : 0.5, c->new_to), "new.json");
		cr_assert_eq(ee_compare(&b, &n, &o, &report, &err), 0, "%s: %s", c->what, err.msg);
		const json_t *r = row(report, c->metric);
		cr_assert_not_null(r, "%s: no row", c->what);
		cr_expect_eq(json_is_true(json_object_get(r, "regressed")), c->regressed, "%s", c->what);
		cr_expect(json_is_true(json_object_get(r, "gated")), "%s", c->what);
		cr_expect_eq(json_array_size(json_object_get(report, "regressions")), (size_t)c->regressed,
		             "%s", c->what);
		double want_delta =
		        c->metric[0] == 't' ? (c->new_to - c->base_to) / 100.0 : c->new_v - c->base;
		cr_expect(fabs(json_number_value(json_object_get(r, "delta")) - want_delta) < 1e-12,
		          "%s: delta", c->what);
		json_decref(report);
		ee_compare_side_free(&b);
		ee_compare_side_free(&n);
	}
	no_leaks();
}

Test(compare, only_gated_metrics_fail)
{
	struct ee_compare_side b, n;
	struct ee_metric gated[2] = { metric("pass@1"), metric("timeout_rate") };
	struct ee_compare_options o = { 0.01, gated, 2 };
	json_t *report;

	/* the mean score collapses, but it is not gated */
	json_t *bs = summary(0.5, -1, 0.9, 0);
	json_object_set_new(bs, "pass_at_k", json_pack("{s:f, s:f, s:f}", "10", 0.9, "1", 0.5, "2", 0.7));
	side(&b, bs, "b");
	side(&n, summary(0.5, -1, 0.1, 0), "n");
	cr_assert_eq(ee_compare(&b, &n, &o, &report, NULL), 0);
	cr_expect_eq(json_array_size(json_object_get(report, "regressions")), 0);
	const json_t *ms = row(report, "mean_score");
	cr_expect(json_is_false(json_object_get(ms, "gated")));
	cr_expect(json_is_false(json_object_get(ms, "regressed")));
	/* rows of either side: pass@k by k, then the others in a fixed order */
	static const char *const order[] = { "pass@1", "pass@2", "pass@10", "mean_score", "timeout_rate" };
	const json_t *rows = json_object_get(report, "metrics");
	cr_expect_eq(json_array_size(rows), COUNT(order));
	for (size_t i = 0; i < COUNT(order); i++)
		cr_expect_str_eq(json_string_value(json_object_get(json_array_get(rows, i), "metric")),
		                 order[i]);
	cr_expect(json_is_null(json_object_get(row(report, "pass@10"), "new")), "NEW has no pass@10");
	cr_expect_str_eq(json_string_value(json_array_get(json_object_get(report, "gated"), 1)),
	                 "timeout_rate");
	cr_expect(json_is_null(json_object_get(report, "tasks")), "summaries: no paired tasks");
	json_decref(report);
	ee_compare_side_free(&b);
	ee_compare_side_free(&n);
	no_leaks();
}

Test(compare, missing_gated_metric_is_an_input_error)
{
	static const struct {
		const char *metric;
		const char *want;
	} cases[] = {
		{ "pass@10", "new.json: gated metric pass@10 missing in NEW: 3 of 10 tasks have fewer" },
		{ "lint_pass_rate",
		  "base.json: gated metric lint_pass_rate missing in BASE: no lint.pass_rate" },
		{ "composite", "base.json: gated metric composite missing in BASE: no composite.value" },
	};
	for (size_t i = 0; i < COUNT(cases); i++) {
		struct ee_compare_side b, n;
		struct ee_metric m = metric(cases[i].metric);
		struct ee_compare_options o = { 0.01, &m, 1 };
		struct ee_err err = { 0 };
		json_t *report = (json_t *)1, *bs = summary(0.5, -1, 0.5, 0), *ns = summary(0.5, -1, 0.5, 0);

		json_object_set_new(bs, "pass_at_k", json_pack("{s:f, s:f}", "1", 0.5, "10", 0.7));
		json_object_set_new(ns, "pass_at_k_dropped",
		                    json_pack("[{s:i, s:s}]", "k", 10, "reason",
		                              "3 of 10 tasks have fewer than 10 samples (min 5)"));
		if (i == 2) /* the other side has one: still missing in BASE */
			json_object_set_new(ns, "composite", json_pack("{s:f}", "value", 0.5));
		side(&b, bs, "base.json");
		side(&n, ns, "new.json");
		cr_expect_eq(ee_compare(&b, &n, &o, &report, &err), -1, "%s", cases[i].metric);
		cr_expect_null(report);
		cr_expect_eq(err.code, EE_ERR_USAGE);
		cr_expect(strstr(err.msg, cases[i].want), "'%s' lacks '%s'", err.msg, cases[i].want);
		ee_compare_side_free(&b);
		ee_compare_side_free(&n);
	}
	no_leaks();
}

Test(compare, bad_epsilon)
{
	struct ee_compare_side b, n;
	struct ee_metric m = metric("pass@1");
	static const double bad[] = { -0.01, NAN, INFINITY };
	json_t *report;

	side(&b, summary(0.5, -1, 0.5, 0), "b");
	side(&n, summary(0.5, -1, 0.5, 0), "n");
	for (size_t i = 0; i < COUNT(bad); i++) {
		struct ee_compare_options o = { bad[i], &m, 1 };
		struct ee_err err = { 0 };
		cr_expect_eq(ee_compare(&b, &n, &o, &report, &err), -1);
		cr_expect(strstr(err.msg, "epsilon"), "%s", err.msg);
	}
	ee_compare_side_free(&b);
	ee_compare_side_free(&n);
	no_leaks();
}

Test(compare, intervals_overlap_or_not)
{
	static const struct {
		double b, bw, n, nw;
		int overlap; /* -1: null */
	} cases[] = {
		{ 0.6, 0.05, 0.5, 0.04, 0 },  /* [0.55, 0.65] vs [0.46, 0.54] */
		{ 0.6, 0.05, 0.52, 0.04, 1 }, /* [0.55, 0.65] vs [0.48, 0.56] */
		{ 0.6, 0.0, 0.6, 0.0, 1 },    /* points, equal */
		{ 0.6, 0.05, 0.5, -1, -1 },   /* NEW has none */
		{ 0.6, -1, 0.5, -1, -1 },
	};
	struct ee_metric m = metric("pass@1");
	struct ee_compare_options o = { 0.5, &m, 1 };

	for (size_t i = 0; i < COUNT(cases); i++) {
		struct ee_compare_side b, n;
		json_t *report;
		side(&b, summary(cases[i].b, cases[i].bw, 0.5, 0), "b");
		side(&n, summary(cases[i].n, cases[i].nw, 0.5, 0), "n");
		cr_assert_eq(ee_compare(&b, &n, &o, &report, NULL), 0);
		const json_t *r = row(report, "pass@1"), *ov = json_object_get(r, "ci_overlap");
		if (cases[i].overlap < 0)
			cr_expect(json_is_null(ov), "case %zu", i);
		else
			cr_expect_eq(json_is_true(ov), cases[i].overlap, "case %zu", i);
		cr_expect_eq(json_is_array(json_object_get(r, "base_ci")), cases[i].bw >= 0, "case %zu", i);
		json_decref(report);
		ee_compare_side_free(&b);
		ee_compare_side_free(&n);
	}
	no_leaks();
}

Test(compare, classes_of_either_side)
{
	struct ee_compare_side b, n;
	struct ee_metric m = metric("pass@1");
	struct ee_compare_options o = { 0.01, &m, 1 };
	json_t *report;

	side(&b,
	     fix("{'statuses':{},'pass_at_k':{'1':0.5},'classes':{'math':{'pass_at_k':{'1':0.4}},"
	         "'old':{'pass_at_k':{'1':0.9}}}}"),
	     "b");
	side(&n,
	     fix("{'statuses':{},'pass_at_k':{'1':0.5},'classes':{'math':{'pass_at_k':{'1':0.1}},"
	         "'new':{'pass_at_k':{'1':0.2}}}}"),
	     "n");
	cr_assert_eq(ee_compare(&b, &n, &o, &report, NULL), 0);
	const json_t *cls = json_object_get(report, "classes");
	cr_expect_eq(json_object_size(cls), 3);
	const char *first = json_object_iter_key(json_object_iter((json_t *)cls));
	cr_expect_str_eq(first, "math", "by name");
	const json_t *math = json_array_get(json_object_get(cls, "math"), 0);
	cr_expect(fabs(json_number_value(json_object_get(math, "delta")) + 0.3) < 1e-12);
	cr_expect(!json_object_get(math, "regressed"), "classes are not gated");
	const json_t *old = json_array_get(json_object_get(cls, "old"), 0);
	cr_expect(json_is_null(json_object_get(old, "new")));
	cr_expect(json_is_null(json_object_get(old, "delta")));
	cr_expect_eq(json_array_size(json_object_get(report, "regressions")), 0,
	             "classes never fail the gate");
	json_decref(report);
	ee_compare_side_free(&b);
	ee_compare_side_free(&n);
	no_leaks();
}

/* ---- files and paired tasks ----------------------------------------------------------- */

static char *temp_file(const char *text)
{
	char *path = strdup("/tmp/ee-test-compare-XXXXXX");
	int fd = mkstemp(path);
	char *body = fixed(text);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, body, strlen(body)), (ssize_t)strlen(body));
	close(fd);
	free(body);
	return path;
}

/* Records: for each "id:n:c", n samples of which c pass. */
static char *results_file(const char *const *tasks, size_t n_tasks)
{
	char *text = calloc(1, 1 << 16);
	size_t len = 0;

	cr_assert_not_null(text);
	for (size_t i = 0; i < n_tasks; i++) {
		char id[32];
		int n, c;
		cr_assert_eq(sscanf(tasks[i], "%31[^:]:%d:%d", id, &n, &c), 3);
		for (int s = 0; s < n; s++)
			len += (size_t)snprintf(
			        text + len, (1 << 16) - len,
			        "{'task_id':'%s','sample':%d,'status':'%s','score':%d,'tests':[]}\n", id, s,
			        s < c ? "pass" : "assertion_fail", s < c);
	}
	char *path = temp_file(text);
	free(text);
	return path;
}

static int has_id(const json_t *ids, const char *id)
{
	const json_t *v;
	size_t i;

	json_array_foreach (ids, i, v)
		if (strcmp(json_string_value(v), id) == 0)
			return 1;
	return 0;
}

Test(compare, paired_tasks_flip_at_half)
{
	static const char *const base[] = {
		"a:2:2", "b:2:1", "c:2:0", "d:4:2", "e:3:3", "gone:1:1", "f:1:0"
	};
	static const char *const nw[] = { "a:2:1", "b:2:0", "c:2:1", "d:4:2", "e:3:0", "added:1:0", "f:2:2" };
	char *pb = results_file(base, COUNT(base)), *pn = results_file(nw, COUNT(nw));
	unsigned long ks[] = { 1 };
	struct ee_compare_side b, n;
	struct ee_metric m = metric("pass@1");
	struct ee_compare_options o = { 0.01, &m, 1 };
	struct ee_err err = { 0 };
	json_t *report;

	cr_assert_eq(ee_compare_side_from_file(pb, ks, 1, &b, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_compare_side_from_file(pn, ks, 1, &n, &err), 0, "%s", err.msg);
	cr_expect_str_eq(b.kind, "results");
	cr_assert_eq(ee_compare(&b, &n, &o, &report, &err), 0, "%s", err.msg);
	const json_t *t = json_object_get(report, "tasks");
	cr_assert(json_is_object(t));
	cr_expect_eq(json_integer_value(json_object_get(t, "paired")), 6);
	cr_expect(has_id(json_object_get(t, "only_base"), "gone"));
	cr_expect(has_id(json_object_get(t, "only_new"), "added"));
	/* a 1 -> 0.5: still passes (half); b 0.5 -> 0: flips; e 1 -> 0: flips */
	const json_t *p2f = json_object_get(t, "pass_to_fail"), *f2p = json_object_get(t, "fail_to_pass");
	cr_expect_eq(json_array_size(p2f), 2);
	cr_expect(has_id(p2f, "b") && has_id(p2f, "e"));
	/* c 0 -> 0.5 and f 0 -> 1 flip to pass */
	cr_expect_eq(json_array_size(f2p), 2);
	cr_expect(has_id(f2p, "c") && has_id(f2p, "f"));
	/* changed, worst first: e -1, a -0.5, b -0.5, c +0.5, f +1; d unchanged */
	const json_t *ch = json_object_get(t, "changed");
	static const char *const order[] = { "e", "a", "b", "c", "f" };
	cr_expect_eq(json_array_size(ch), COUNT(order));
	for (size_t i = 0; i < COUNT(order) && i < json_array_size(ch); i++)
		cr_expect_str_eq(json_string_value(json_object_get(json_array_get(ch, i), "task_id")),
		                 order[i]);
	cr_expect_eq(json_number_value(json_object_get(json_array_get(ch, 0), "delta")), -1.0);
	json_decref(report);
	ee_compare_side_free(&b);
	ee_compare_side_free(&n);
	unlink(pb), unlink(pn);
	free(pb), free(pn);
	no_leaks();
}

Test(compare, files_are_told_apart)
{
	static const struct {
		const char *text;
		const char *kind; /* NULL: an error */
		const char *msg;  /* after the path */
	} cases[] = {
		{ "{'task_id':'a','sample':0,'status':'pass','score':1,'tests':[]}\n", "results", NULL },
		/* results files have no blank lines: told apart, then refused */
		{ "\n{'task_id':'a','sample':0,'status':'pass','score':1,'tests':[]}\n", NULL,
		  ":1: not a result record" },
		{ "{'statuses':{},'pass_at_k':{'1':0.5}}\n", "summary", NULL },
		{ "{\n  'statuses': {},\n  'tasks': 2\n}\n", "summary", NULL },
		{ "", NULL, ": empty" },
		{ "\n  \n", NULL, ": empty" },
		{ "{\n  'statuses': {},\n  'tasks': 2,\n}\n", NULL, ":4:1: invalid JSON" },
		{ "{'statuses':{}}\n{'statuses':{}}\n", NULL, ":2:1: invalid JSON" },
		{ "{'task_id':'a','sample':0,'status':'pass','score':1,'tests':[]}\n{'task_id':'a'}\n"
		  "{'task_id':'a','sample':1,'status':'pass','score':1,'tests':[]}\n",
		  NULL, ":2: not a result record" },
		{ "{'task_id':'a','sample':0,'status':'pass','score':1,'tests':[]}\n"
		  "{'task_id':'a','sample':1,'status':'maybe','score':1,'tests':[]}\n",
		  NULL, ":2: status: expected" },
		{ "{'foo':1}\n", NULL, ": statuses: missing" },
	};
	unsigned long ks[] = { 1 };

	for (size_t i = 0; i < COUNT(cases); i++) {
		char *path = temp_file(cases[i].text);
		struct ee_compare_side s;
		struct ee_err err = { 0 };
		int rc = ee_compare_side_from_file(path, ks, 1, &s, &err);
		if (cases[i].kind) {
			cr_expect_eq(rc, 0, "case %zu: %s", i, err.msg);
			if (rc == 0)
				cr_expect_str_eq(s.kind, cases[i].kind, "case %zu", i);
		} else {
			char want[256];
			snprintf(want, sizeof(want), "%s%s", path, cases[i].msg);
			cr_expect_eq(rc, -1, "case %zu accepted", i);
			cr_expect(strncmp(err.msg, want, strlen(want)) == 0, "case %zu: '%s' is not '%s...'",
			          i, err.msg, want);
		}
		ee_compare_side_free(&s);
		unlink(path);
		free(path);
	}
	struct ee_compare_side s;
	struct ee_err err = { 0 };
	cr_expect_eq(ee_compare_side_from_file("/nonexistent/x.json", ks, 1, &s, &err), -1);
	cr_expect(strstr(err.msg, "/nonexistent/x.json: No such file"), "%s", err.msg);
	ee_compare_side_free(&s);
	no_leaks();
}

/* ---- the printed report ------------------------------------------------------------------ */

Test(compare, printed_verdict)
{
	struct ee_compare_side b, n;
	struct ee_metric m = metric("pass@1");
	struct ee_compare_options o = { 0.01, &m, 1 };
	json_t *report;
	char *text = NULL;
	size_t len = 0;

	side(&b, summary(0.6, 0.05, 0.5, 0), "base.json");
	side(&n, summary(0.5, 0.05, 0.5, 0), "new.json");
	cr_assert_eq(ee_compare(&b, &n, &o, &report, NULL), 0);
	FILE *out = open_memstream(&text, &len);
	ee_compare_print(report, 10, out);
	fclose(out);
	cr_expect(strstr(text, "BASE  base.json (summary, 10 tasks)"), "%s", text);
	cr_expect(strstr(text, "pass@1              0.6000    0.5000   -0.1000  [0.5500, 0.6500]"), "%s",
	          text);
	cr_expect(strstr(text, "FAIL"), "%s", text);
	cr_expect(strstr(text, "tasks: not compared"), "%s", text);
	cr_expect(strstr(text, "verdict: REGRESSION: pass@1 got worse by more than epsilon 0.0100"), "%s",
	          text);
	free(text);
	json_decref(report);
	ee_compare_side_free(&b);
	ee_compare_side_free(&n);
	no_leaks();
}

/* ---- one data set ---------------------------------------------------------- */

static void load_results(const char *const *tasks, size_t n, struct ee_compare_side *ret, char **path)
{
	unsigned long ks[] = { 1 };
	struct ee_err err = { 0 };

	*path = results_file(tasks, n);
	cr_assert_eq(ee_compare_side_from_file(*path, ks, 1, ret, &err), 0, "%s", err.msg);
}

/* Frees both sides and removes their files, then checks for leaks. */
static void drop_pair(struct ee_compare_side *b, struct ee_compare_side *n, char *pb, char *pn)
{
	ee_compare_side_free(b);
	ee_compare_side_free(n);
	unlink(pb), unlink(pn);
	free(pb), free(pn);
	no_leaks();
}

static double pass1(const struct ee_compare_side *s)
{
	return json_number_value(json_object_get(json_object_get(s->summary, "pass_at_k"), "1"));
}

Test(compare, different_task_sets_are_refused_naming_them)
{
	static const char *const base[] = { "a:1:1", "b:1:1", "c:1:0", "gone:1:1", "gone2:1:1" };
	static const char *const nw[] = { "a:1:1", "b:1:1", "c:1:0", "added:1:0" };
	unsigned long ks[] = { 1 };
	struct ee_compare_side b, n;
	struct ee_err err = { 0 };
	char *pb, *pn;

	load_results(base, COUNT(base), &b, &pb);
	load_results(nw, COUNT(nw), &n, &pn);
	cr_expect_eq(ee_compare_same_data(&b, &n), 0);
	cr_assert_eq(ee_compare_pair(&b, &n, 0, ks, 1, &err), -1);
	cr_expect(strstr(err.msg, "2 only in BASE (gone, gone2)"), "%s", err.msg);
	cr_expect(strstr(err.msg, "1 only in NEW (added)"), "%s", err.msg);
	cr_expect_eq(b.paired_only, 0);
	cr_expect_float_eq(pass1(&b), 0.8, 1e-12); /* untouched when refused */
	drop_pair(&b, &n, pb, pn);
}

Test(compare, allowed_different_tasks_gate_over_the_paired_ones)
{
	static const char *const base[] = { "a:1:1", "b:1:1", "c:1:0", "gone:1:1", "gone2:1:1" };
	static const char *const nw[] = { "a:1:1", "b:1:1", "c:1:0", "added:1:0" };
	unsigned long ks[] = { 1 };
	struct ee_compare_side b, n;
	struct ee_metric m = metric("pass@1");
	struct ee_compare_options o = { 0.01, &m, 1 };
	struct ee_err err = { 0 };
	json_t *report;
	char *pb, *pn;

	load_results(base, COUNT(base), &b, &pb);
	load_results(nw, COUNT(nw), &n, &pn);
	/* over every task: 0.8 -> 0.5, a regression that is only the data's */
	cr_assert_eq(ee_compare_pair(&b, &n, 1, ks, 1, &err), 0, "%s", err.msg);
	cr_expect(b.paired_only && n.paired_only);
	cr_expect_float_eq(pass1(&b), 2.0 / 3.0, 1e-12);
	cr_expect_float_eq(pass1(&n), 2.0 / 3.0, 1e-12);
	cr_assert_eq(ee_compare(&b, &n, &o, &report, &err), 0, "%s", err.msg);
	cr_expect_eq(json_array_size(json_object_get(report, "regressions")), 0);
	const json_t *d = json_object_get(report, "data_set");
	cr_expect(json_is_false(json_object_get(d, "same")));
	cr_expect(json_is_true(json_object_get(d, "paired_only")));
	cr_expect_eq(json_integer_value(json_object_get(json_object_get(report, "base"), "tasks")), 5);
	cr_expect_eq(json_integer_value(json_object_get(json_object_get(report, "tasks"), "paired")), 3);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ee_compare_print(report, 50, f);
	fclose(f);
	cr_expect(strstr(text, "compared on 3 paired tasks; 2 only in BASE, 1 only in NEW"), "%s", text);
	free(text);
	json_decref(report);
	drop_pair(&b, &n, pb, pn);
}

Test(compare, the_tasks_sha256_decides_when_both_sides_know_it)
{
	static const char *const tasks[] = { "a:1:1", "b:1:0" };
	unsigned long ks[] = { 1 };
	struct ee_compare_side b, n;
	struct ee_err err = { 0 };
	char *pb, *pn;

	load_results(tasks, COUNT(tasks), &b, &pb);
	load_results(tasks, COUNT(tasks), &n, &pn);
	cr_expect_eq(ee_compare_same_data(&b, &n), 1);
	memset(b.tasks_sha256, 'a', 64);
	cr_expect_eq(ee_compare_same_data(&b, &n), 1); /* one side unknown: the task ids */
	memset(n.tasks_sha256, 'a', 64);
	cr_expect_eq(ee_compare_pair(&b, &n, 0, ks, 1, &err), 0, "%s", err.msg);
	memset(n.tasks_sha256, 'b', 64);
	cr_expect_eq(ee_compare_same_data(&b, &n), 0);
	cr_assert_eq(ee_compare_pair(&b, &n, 0, ks, 1, &err), -1);
	cr_expect(strstr(err.msg, "different tasks files: tasks sha256 aaaaaaaaaaaaaaaa"), "%s", err.msg);
	cr_expect(strstr(err.msg, "aaaa and bbbbbbbbbbbbbbbb"), "%s", err.msg);
	drop_pair(&b, &n, pb, pn);
}

Test(compare, summaries_of_different_sizes_are_refused_and_never_paired)
{
	struct ee_compare_side b, n;
	struct ee_err err = { 0 };
	unsigned long ks[] = { 1 };
	json_t *small = summary(0.5, -1, 0.5, 0);

	json_object_set_new(small, "tasks", json_integer(8));
	side(&b, summary(0.5, -1, 0.5, 0), "base.json");
	side(&n, small, "new.json");
	cr_expect_eq(ee_compare_same_data(&b, &n), 0);
	cr_assert_eq(ee_compare_pair(&b, &n, 0, ks, 1, &err), -1);
	cr_expect(strstr(err.msg, "different data sets: BASE has 10 tasks, NEW 8"), "%s", err.msg);
	cr_expect_eq(ee_compare_pair(&b, &n, 1, ks, 1, &err), 0, "%s", err.msg);
	cr_expect_eq(b.paired_only, 0);
	ee_compare_side_free(&b);
	ee_compare_side_free(&n);
	no_leaks();
}

Test(compare, no_task_in_common_is_an_error_even_when_allowed)
{
	static const char *const base[] = { "a:1:1" };
	static const char *const nw[] = { "z:1:1" };
	unsigned long ks[] = { 1 };
	struct ee_compare_side b, n;
	struct ee_err err = { 0 };
	char *pb, *pn;

	load_results(base, COUNT(base), &b, &pb);
	load_results(nw, COUNT(nw), &n, &pn);
	cr_assert_eq(ee_compare_pair(&b, &n, 1, ks, 1, &err), -1);
	cr_expect(strstr(err.msg, "no task in common"), "%s", err.msg);
	drop_pair(&b, &n, pb, pn);
}

Test(compare, a_summarys_tasks_sha256_is_read_and_checked)
{
	struct ee_compare_side b;
	struct ee_err err = { 0 };
	json_t *s = summary(0.5, -1, 0.5, 0);
	char sha[65];

	memset(sha, 'c', 64);
	sha[64] = '\0';
	json_object_set_new(s, "tasks_sha256", json_string(sha));
	side(&b, s, "base.json");
	cr_expect_str_eq(b.tasks_sha256, sha);
	ee_compare_side_free(&b);
	s = summary(0.5, -1, 0.5, 0);
	json_object_set_new(s, "tasks_sha256", json_string("ABC"));
	cr_expect_eq(ee_compare_side_from_summary(s, "base.json", &b, &err), -1);
	cr_expect(strstr(err.msg, "base.json: tasks_sha256: expected 64 lowercase hex digits, got \"ABC\""),
	          "%s", err.msg);
	ee_compare_side_free(&b);
	no_leaks();
}
