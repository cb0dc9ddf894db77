/* test_report.c - the report: escaping and bounded output (out.h), the SVG
 * primitives (svg.h) and the page (report.h).
 *
 * Chart coordinates are worked out from the layouts in svg.c: vertical
 * bars plot 260 - 22 - 36 = 202 px high; horizontal bars start at x = 208
 * and are at most 560 - 208 - 96 = 256 px long; the stack is 560 - 8 = 552
 * px wide. Fixtures are written with ' for " to stay readable. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "report/out.h"
#include "report/report.h"
#include "report/svg.h"

#include "leakcheck.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define BIG      (1u << 24)

static size_t occurrences(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* No number in the markup is NaN or infinite ("nan", "inf" in any case). */
static void expect_finite(const char *s)
{
	for (const char *p = s; *p; p++) {
		cr_expect(strncasecmp(p, "nan", 3) != 0, "NaN at ...%.40s", p);
		cr_expect(strncasecmp(p, "inf", 3) != 0, "infinity at ...%.40s", p);
	}
}

/* ---- out.h ------------------------------------------------------------------ */

struct esc_case {
	const char *in, *want;
};

static const struct esc_case esc_cases[] = {
	{ "plain text", "plain text" },
	{ "", "" },
	{ "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;" },
	{ "</script><script>alert(1)</script>", "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" },
	{ "<svg onload=alert(1)>", "&lt;svg onload=alert(1)&gt;" },
	{ "a\" onmouseover=\"x", "a&quot; onmouseover=&quot;x" },
	{ "it's", "it&#39;s" },
	{ "a&amp;b", "a&amp;amp;b" },
	{ "tab\tnew\nline\r", "tab\tnew\nline\r" },
	{ "bell\x07 esc\x1b del\x7f", "bell\xef\xbf\xbd esc\xef\xbf\xbd del\xef\xbf\xbd" },
	{ "caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93" }, /* valid UTF-8 stays */
	{ "bad \xff byte", "bad \xef\xbf\xbd byte" },               /* invalid UTF-8 */
	{ "cut \xe2\x9c", "cut \xef\xbf\xbd\xef\xbf\xbd" },         /* truncated sequence */
	{ "over \xc0\xbc", "over \xef\xbf\xbd\xef\xbf\xbd" },       /* overlong '<' */
};

Test(out, escapes_every_untrusted_string)
{
	for (size_t i = 0; i < COUNT(esc_cases); i++) {
		struct ee_out o;
		ee_out_init(&o, BIG);
		ee_out_text(&o, esc_cases[i].in);
		cr_assert(!ee_out_failed(&o));
		cr_expect_str_eq(o.buf.data ? o.buf.data : "", esc_cases[i].want, "case %zu", i);
		ee_out_free(&o);
	}
	struct ee_out o;
	ee_out_init(&o, BIG);
	ee_out_text(&o, NULL);
	cr_expect_eq(o.buf.len, 0);
	ee_out_free(&o);
	no_leaks();
}

struct cut_case {
	const char *in;
	size_t max;
	int from_end;
	const char *want_text; /* ee_out_text_cut (from the start only) */
	const char *want_copy; /* ee_out_cut_copy */
	int cut;
};

static const struct cut_case cut_cases[] = {
	{ "abcdef", 3, 0, "abc\xe2\x80\xa6", "abc", 1 },
	{ "abcdef", 6, 0, "abcdef", "abcdef", 0 },
	{ "abcdef", 3, 1, NULL, "def", 1 },
	{ "\xc3\xa9\xc3\xa9\xc3\xa9", 2, 0, "\xc3\xa9\xc3\xa9\xe2\x80\xa6", "\xc3\xa9\xc3\xa9", 1 },
	{ "\xc3\xa9\xc3\xa9\xc3\xa9", 2, 1, NULL, "\xc3\xa9\xc3\xa9", 1 },
	{ "<<<<", 2, 0, "&lt;&lt;\xe2\x80\xa6", "<<", 1 },
	{ "x", 0, 0, "\xe2\x80\xa6", "", 1 },
};

Test(out, cuts_at_character_boundaries)
{
	for (size_t i = 0; i < COUNT(cut_cases); i++) {
		const struct cut_case *tc = &cut_cases[i];
		int cut = -1;
		char *copy = ee_out_cut_copy(tc->in, tc->max, tc->from_end, &cut);
		cr_assert_not_null(copy);
		cr_expect_str_eq(copy, tc->want_copy, "case %zu", i);
		cr_expect_eq(cut, tc->cut, "case %zu", i);
		free(copy);
		if (!tc->want_text)
			continue;
		struct ee_out o;
		ee_out_init(&o, BIG);
		ee_out_text_cut(&o, tc->in, tc->max);
		cr_expect_str_eq(o.buf.data ? o.buf.data : "", tc->want_text, "case %zu", i);
		ee_out_free(&o);
	}
	cr_expect_null(ee_out_cut_copy(NULL, 3, 0, NULL));
	no_leaks();
}

struct num_case {
	double x;
	int decimals;
	const char *want;
};

static const struct num_case num_cases[] = {
	{ 0.5, 1, "0.5" },        { 12.345, 2, "12.35" },
	{ -0.0001, 2, "0.00" },   { -2.5, 1, "-2.5" },
	{ NAN, 1, "0.0" },        { INFINITY, 0, "0" },
	{ -INFINITY, 2, "0.00" }, { 1e300, 0, "1000000000000000" },
	{ 3, 9, "3.000000" }, /* at most 6 decimals */
};

Test(out, numbers_are_always_finite)
{
	for (size_t i = 0; i < COUNT(num_cases); i++) {
		struct ee_out o;
		ee_out_init(&o, BIG);
		ee_out_num(&o, num_cases[i].x, num_cases[i].decimals);
		cr_expect_str_eq(o.buf.data, num_cases[i].want, "case %zu", i);
		ee_out_free(&o);
	}
	no_leaks();
}

Test(out, the_cap_fails_once_and_stays_failed)
{
	struct ee_out o;

	ee_out_init(&o, 8);
	ee_out_raw(&o, "12345");
	cr_expect(!ee_out_failed(&o));
	ee_out_text(&o, "<>"); /* 8 bytes escaped: does not fit */
	cr_expect(ee_out_failed(&o));
	ee_out_raw(&o, "x"); /* would fit, but the output is failed */
	ee_out_fmt(&o, "%d", 1);
	cr_expect_str_eq(o.buf.data, "12345");
	ee_out_free(&o);

	ee_out_init(&o, 100);
	ee_out_fmt(&o, "%0600d", 7); /* longer than fmt's stack buffer and the cap */
	cr_expect(ee_out_failed(&o));
	ee_out_free(&o);
	ee_out_init(&o, 1000);
	ee_out_fmt(&o, "%0600d", 7);
	cr_expect(!ee_out_failed(&o));
	cr_expect_eq(o.buf.len, 600);
	ee_out_free(&o);
	no_leaks();
}

/* ---- svg.h ------------------------------------------------------------------ */

struct scale_case {
	double v, max, len, want;
};

static const struct scale_case scale_cases[] = {
	{ 0.5, 1, 200, 100 },    { 1, 1, 200, 200 }, { 2, 1, 200, 200 }, /* clamped */
	{ -1, 1, 200, 0 },       { 0, 1, 200, 0 },   { NAN, 1, 200, 0 },
	{ INFINITY, 1, 200, 0 }, { 1, 0, 200, 0 },   { 1, -5, 200, 0 },
	{ 1, NAN, 200, 0 },      { 1, 1, NAN, 0 },   { 3, 12, 48, 12 },
};

Test(svg, scale_is_finite_and_clamped)
{
	for (size_t i = 0; i < COUNT(scale_cases); i++) {
		const struct scale_case *tc = &scale_cases[i];
		double got = ee_svg_scale(tc->v, tc->max, tc->len);
		cr_expect(got == tc->want, "case %zu: got %g want %g", i, got, tc->want);
	}
}

/* Runs a chart-writing call into a fresh output, returns the text. */
#define DRAW(call)                                                                                           \
	({                                                                                                   \
		struct ee_out o_;                                                                            \
		ee_out_init(&o_, BIG);                                                                       \
		struct ee_out *o = &o_;                                                                      \
		call;                                                                                        \
		cr_assert(!ee_out_failed(o));                                                                \
		char *s_ = strdup(o_.buf.data ? o_.buf.data : "");                                           \
		ee_out_free(&o_);                                                                            \
		cr_assert_not_null(s_);                                                                      \
		s_;                                                                                          \
	})

static const struct ee_svg_chart unit_chart = { .id = "c1", .title = "a chart", .max = 1 };
static const struct ee_svg_chart auto_chart = { .id = "c2", .title = "a chart" };

Test(svg, vbars_one_bar_coordinates)
{
	struct ee_svg_bar bar = { .label = "pass@1", .value = 0.5 };
	char *s = DRAW(ee_svg_vbars(o, &unit_chart, &bar, 1));

	/* 202 px plot: half is 101; top at 22 + 202 - 101 */
	cr_expect(strstr(s, "height=\"101.0\""), "%s", s);
	cr_expect(strstr(s, "y=\"123.0\""), "%s", s);
	/* one slot of 500 px, bar 60% of it capped at 90, centred at 48 + 250 */
	cr_expect(strstr(s, "<rect class=\"bar\" x=\"253.0\""), "%s", s);
	cr_expect(strstr(s, ">0.500</text>"), "%s", s);
	cr_expect(strstr(s, ">pass@1</text>"), "%s", s);
	cr_expect(strstr(s, "<svg class=\"chart\" id=\"c1\" viewBox=\"0 0 560 260\""), "%s", s);
	cr_expect(!strstr(s, "whisker"), "no CI, no whisker");
	cr_expect(!strstr(s, "no data"));
	expect_finite(s);
	free(s);
}

Test(svg, vbars_whiskers_follow_the_interval)
{
	struct ee_svg_bar bars[] = {
		{ .label = "pass@1", .value = 0.5, .has_ci = 1, .lo = 0.25, .hi = 0.75 },
		{ .label = "pass@10", .value = 0.9 },
	};
	char *s = DRAW(ee_svg_vbars(o, &unit_chart, bars, 2));

	cr_expect_eq(occurrences(s, "<rect"), 2);
	cr_expect_eq(occurrences(s, "class=\"whisker\""), 1);
	/* slot 250 px, centre 48 + 125 = 173; lo at 224 - 50.5, hi at 224 - 151.5 */
	cr_expect(strstr(s, "d=\"M173.0 173.5V72.5M167.0 173.5H179.0M167.0 72.5H179.0\""), "%s", s);
	cr_expect(strstr(s, "(CI 0.250\xe2\x80\x93"
	                    "0.750)"),
	          "%s", s);
	free(s);
}

Test(svg, every_chart_says_no_data_when_empty)
{
	static const unsigned long zero[3] = { 0, 0, 0 };
	struct ee_svg_bar zero_part = { .label = "pass", .value = 0 };
	char *s[] = {
		DRAW(ee_svg_vbars(o, &unit_chart, NULL, 0)),
		DRAW(ee_svg_hbars(o, &unit_chart, NULL, 0)),
		DRAW(ee_svg_stack(o, &unit_chart, &zero_part, 1)),
		DRAW(ee_svg_histogram(o, &auto_chart, zero, 3, 0, 1, NULL, 0)),
		DRAW(ee_svg_histogram(o, &auto_chart, NULL, 0, 0, 1, NULL, 0)),
		DRAW(ee_svg_trend(o, &unit_chart, NULL, 0)),
	};
	for (size_t i = 0; i < COUNT(s); i++) {
		cr_expect(strstr(s[i], "<svg class=\"chart\""), "chart %zu: %s", i, s[i]);
		cr_expect(strstr(s[i], ">no data</text></svg>"), "chart %zu: %s", i, s[i]);
		cr_expect(!strstr(s[i], "<rect"), "chart %zu: %s", i, s[i]);
		expect_finite(s[i]);
		free(s[i]);
	}
	no_leaks();
}

Test(svg, hbars_scale_link_and_escape)
{
	struct ee_svg_bar bars[] = {
		{ .label = "<b>x</b>", .value = 0.25, .text = "1 & 2", .href = "#t-3", .cls = "bar-slow" },
		{ .label = "long", .value = 0.5, .has_ci = 1, .lo = 0.5, .hi = 1 },
	};
	char *s = DRAW(ee_svg_hbars(o, &unit_chart, bars, 2));

	cr_expect(strstr(s, "<rect class=\"bar-slow\" x=\"208.0\" y=\"10.0\" width=\"64.0\""), "%s", s);
	cr_expect(strstr(s, "width=\"128.0\""), "%s", s);
	cr_expect(strstr(s, "<a href=\"#t-3\">"), "%s", s);
	cr_expect(strstr(s, "&lt;b&gt;x&lt;/b&gt;"), "%s", s);
	cr_expect(strstr(s, ">1 &amp; 2</text>"), "%s", s);
	cr_expect(!strstr(s, "<b>"), "%s", s);
	/* the whisker runs from 208 + 128 to 208 + 256 at the row's middle (6 + 22 + 11) */
	cr_expect(strstr(s, "d=\"M336.0 39.0H464.0"), "%s", s);
	free(s);
}

Test(svg, hbars_scale_to_the_largest_value_without_max)
{
	struct ee_svg_bar bars[] = { { .label = "a", .value = 10 }, { .label = "b", .value = 40 } };
	char *s = DRAW(ee_svg_hbars(o, &auto_chart, bars, 2));

	cr_expect(strstr(s, "width=\"64.0\""), "%s", s);
	cr_expect(strstr(s, "width=\"256.0\""), "%s", s);
	free(s);
}

Test(svg, stack_splits_by_share)
{
	struct ee_svg_bar parts[] = {
		{ .label = "pass", .value = 1, .cls = "s-pass" },
		{ .label = "timeout", .value = 0, .cls = "s-timeout" },
		{ .label = "error", .value = 3, .cls = "s-error" },
	};
	char *s = DRAW(ee_svg_stack(o, &auto_chart, parts, 3));

	cr_expect(strstr(s, "<rect class=\"s-pass\" x=\"4.0\" y=\"6.0\" width=\"138.0\""), "%s", s);
	cr_expect(strstr(s, "<rect class=\"s-error\" x=\"142.0\" y=\"6.0\" width=\"414.0\""), "%s", s);
	cr_expect_eq(occurrences(s, "class=\"s-timeout\""), 1, "a zero part: its legend swatch only");
	cr_expect(strstr(s, "(25.0%)"), "%s", s);
	cr_expect(strstr(s, "(75.0%)"), "%s", s);
	free(s);
}

Test(svg, histogram_bins_and_marks)
{
	unsigned long counts[] = { 1, 0, 4, 2 };
	struct ee_svg_mark marks[] = { { "median", 0.5, "median" }, { "p10", 0.125, "p10" } };
	char *s = DRAW(ee_svg_histogram(o, &auto_chart, counts, 4, 0, 1, marks, 2));

	cr_expect_eq(occurrences(s, "<rect class=\"bar\""), 4);
	/* plot 184 px high, top 4: the bin of 4 is full height, the bin of 1 a quarter */
	cr_expect(strstr(s, "height=\"184.0\""), "%s", s);
	cr_expect(strstr(s, "height=\"46.0\""), "%s", s);
	/* x = 48 + value * 496 */
	cr_expect(strstr(s, "<g class=\"median\"><line class=\"mark-line\" x1=\"296.0\""), "%s", s);
	cr_expect(strstr(s, "<g class=\"p10\"><line class=\"mark-line\" x1=\"110.0\""), "%s", s);
	cr_expect(strstr(s, ">median 0.50</text>"), "%s", s);
	cr_expect(strstr(s, "<title>0.50\xe2\x80\x93"
	                    "0.75: 4</title>"),
	          "%s", s);
	expect_finite(s);
	free(s);
}

Test(svg, trend_sorts_skips_non_finite_and_labels_dates)
{
	/* 2024-01-02 00:00 UTC = 1704153600; a day later; NaN points left out */
	struct ee_svg_point pts[] = {
		{ 1704240000, 0.75 }, { NAN, 0.5 },        { 1704153600, 0.25 },
		{ 1704196800, NAN },  { 1704196800, 0.5 },
	};
	char *s = DRAW(ee_svg_trend(o, &unit_chart, pts, COUNT(pts)));

	/* plot 496 x 184: first point at x 48, value 0.25 at y 16 + 184 - 46 */
	cr_expect(strstr(s, "<path class=\"trend-line\" d=\"M48.0 154.0L296.0 108.0L544.0 62.0\"/>"), "%s",
	          s);
	cr_expect_eq(occurrences(s, "<circle"), 3);
	cr_expect(strstr(s, ">2024-01-02 00:00</text>"), "%s", s);
	cr_expect(strstr(s, ">2024-01-03 00:00</text>"), "%s", s);
	cr_expect(strstr(s, "<title>2024-01-02 12:00: 0.500</title>"), "%s", s);
	expect_finite(s);
	free(s);
}

Test(svg, trend_of_one_point_and_of_constant_values)
{
	struct ee_svg_point one = { 1704153600, 0.5 };
	char *s = DRAW(ee_svg_trend(o, &unit_chart, &one, 1));

	cr_expect(strstr(s, "d=\"M296.0 108.0\""), "%s", s); /* centred */
	free(s);
	struct ee_svg_point flat[] = { { 1, 0 }, { 2, 0 } };
	s = DRAW(ee_svg_trend(o, &auto_chart, flat, 2));
	cr_expect(strstr(s, "d=\"M48.0 200.0L544.0 200.0\""), "%s", s); /* scale 0..1, not 0..0 */
	expect_finite(s);
	free(s);
	no_leaks();
}

Test(svg, non_finite_values_never_reach_the_markup)
{
	struct ee_svg_bar bars[] = {
		{ .label = "a", .value = NAN, .has_ci = 1, .lo = -INFINITY, .hi = NAN },
		{ .label = "b", .value = INFINITY },
		{ .label = "c", .value = -1 },
	};
	struct ee_svg_chart nan_max = { .title = "t", .max = NAN };
	unsigned long counts[] = { 1, 2 };
	struct ee_svg_mark mark = { "m", NAN, NULL };
	char *s[] = {
		DRAW(ee_svg_vbars(o, &nan_max, bars, 3)),
		DRAW(ee_svg_hbars(o, &nan_max, bars, 3)),
		DRAW(ee_svg_stack(o, &nan_max, bars, 3)),
		DRAW(ee_svg_histogram(o, &nan_max, counts, 2, 0, 1, &mark, 1)),
		DRAW(ee_svg_histogram(o, &nan_max, counts, 2, NAN, 1, NULL, 0)),
	};
	for (size_t i = 0; i < COUNT(s); i++) {
		expect_finite(s[i]);
		free(s[i]);
	}
	no_leaks();
}

/* ---- the page --------------------------------------------------------------- */

static json_t *fix(const char *text)
{
	char *s = strdup(text);
	json_error_t e;

	cr_assert_not_null(s);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	json_t *j = json_loads(s, 0, &e);
	cr_assert_not_null(j, "bad fixture %s: %s", s, e.text);
	free(s);
	return j;
}

static void add(struct ee_report *r, const char *text)
{
	struct ee_err err = { 0 };
	json_t *j = fix(text);

	cr_assert_eq(ee_report_add(r, j, "r.jsonl:1", &err), 0, "%s: %s", text, err.msg);
	json_decref(j);
}

static void add_json(struct ee_report *r, json_t *j)
{
	struct ee_err err = { 0 };

	cr_assert_not_null(j);
	cr_assert_eq(ee_report_add(r, j, "r.jsonl:1", &err), 0, "%s", err.msg);
	json_decref(j);
}

static char *page(const struct ee_report *r, const struct ee_report_options *opt)
{
	struct ee_out o;
	struct ee_err err = { 0 };

	ee_out_init(&o, BIG);
	cr_assert_eq(ee_report_html(r, opt, &o, &err), 0, "%s", err.msg);
	char *s = strdup(o.buf.data);
	ee_out_free(&o);
	cr_assert_not_null(s);
	return s;
}

static const unsigned long ks[] = { 1, 2 };
static const struct ee_report_options opts = {
	.title = "t <i>", .source = "r.jsonl", .generated_at = "2024-01-01T00:00:00Z", .ks = ks, .nk = 2
};

/* A tiny results set: a pass, a hostile failure, a sandbox error, an
 * invalid sample without a task, a record without the optional fields. */
static struct ee_report *tiny(void)
{
	struct ee_report *r = ee_report_new();

	cr_assert_not_null(r);
	add(r,
	    "{'task_id': 'a', 'sample': 0, 'model': 'm1', 'class': 'math', 'status': 'pass', 'detail': null,"
	    " 'score': 1.0, 'tests': [{'index': 0, 'status': 'pass', 'tier': 'canonical', 'message': null}],"
	    " 'resources': {'wall_ms': 12.5, 'cpu_ms': 3, 'peak_rss_kb': 2048, 'peak_memory_kb': 1024}}");
	add(r, "{'task_id': 'a', 'sample': 1, 'model': '<m2>', 'class': 'math', 'status': 'assertion_fail',"
	       " 'detail': 'test 0 failed: </script><script>alert(1)</script>', 'score': 0.0,"
	       " 'tests': [{'index': 0, 'kind': 'call', 'tier': 'edge', 'visibility': 'public',"
	       " 'status': 'fail', 'message': '<svg onload=alert(2)>'}],"
	       " 'stderr': 'Traceback <img src=x onerror=alert(3)>',"
	       " 'resources': {'wall_ms': 30.0, 'peak_rss_kb': 4096}}");
	add(r, "{'task_id': 'b<x>', 'sandbox_error': 'clone: boom <b>', 'execeval_version': '0.1.0'}");
	add(r, "{'task_id': null, 'sample': -4, 'status': 'error', 'detail': 'invalid sample', 'score': 0.0,"
	       " 'invalid': true, 'message': 'line 4: bad'}");
	add(r, "{'task_id': 'c', 'status': 'timeout', 'score': 0.0, 'tests': []}");
	return r;
}

Test(report, tiny_page_has_every_part)
{
	struct ee_report *r = tiny();
	char *s = page(r, &opts);

	cr_expect(strncmp(s, "<!DOCTYPE html>", 15) == 0);
	cr_expect(strstr(s, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"),
	          "CSP");
	cr_expect(strstr(s, "<title>t &lt;i&gt;</title>"));
	/* pass@k, classes, models (m1, <m2> and none), statuses, details, scores, slowest, memory */
	cr_expect_eq(occurrences(s, "<svg class=\"chart\""), 8);
	static const char *const ids[] = { "chart-pass-at-k", "chart-classes", "chart-models",
		                           "chart-statuses",  "chart-details", "chart-scores",
		                           "chart-slowest",   "chart-memory" };
	for (size_t i = 0; i < COUNT(ids); i++)
		cr_expect(strstr(s, ids[i]), "%s missing", ids[i]);
	cr_expect(!strstr(s, "chart-trend"), "no trend without history");
	/* the table: three tasks (the invalid sample has none), linked to their sections */
	cr_expect(strstr(s, "<table class=\"sortable\""));
	cr_expect_eq(occurrences(s, "<tr><td><a href=\"#t-"), 3);
	for (int i = 0; i < 3; i++) {
		char anchor[32], link[32];
		snprintf(anchor, sizeof(anchor), "id=\"t-%d\"", i);
		snprintf(link, sizeof(link), "href=\"#t-%d\"", i);
		cr_expect(strstr(s, anchor), "%s", anchor);
		cr_expect(strstr(s, link), "%s", link);
	}
	cr_expect(strstr(s, ">b&lt;x&gt;</a>"), "the sandbox error's task in the table");
	/* task a: pass rate 0.5, mean 0.5, worst assertion_fail; c: timeout */
	cr_expect(strstr(s, "data-v=\"0.5000\">0.50</td>"));
	cr_expect(strstr(s, "<td data-v=\"1\"><span class=\"st s-assertion_fail\">"));
	cr_expect(strstr(s, "<td data-v=\"3\"><span class=\"st s-timeout\">"));
	cr_expect(strstr(s, "<td data-v=\"4\"><span class=\"st s-error\">"));
	/* the failures, escaped */
	cr_expect(strstr(s, "test 0 failed: &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
	cr_expect(strstr(s, "<code>&lt;svg onload=alert(2)&gt;</code>"));
	cr_expect(strstr(s, "Traceback &lt;img src=x onerror=alert(3)&gt;"));
	cr_expect(strstr(s, "sandbox error: clone: boom &lt;b&gt;"));
	cr_expect(strstr(s, "of &lt;m2&gt; "));
	/* the model table: a row per model, escaped; c's record has none */
	cr_expect(strstr(s, "<tr><td>&lt;m2&gt;</td><td class=\"n\">1</td><td class=\"n\">1</td>"));
	cr_expect(strstr(s, "<tr><td>(no model)</td>"));
	cr_expect(strstr(s, "<a href=\"#models\">models</a>"));
	cr_expect(!strstr(s, "alert(1)</script>"));
	cr_expect(!strstr(s, "<svg onload"));
	cr_expect(!strstr(s, "<img"));
	cr_expect_eq(occurrences(s, "<script"), 1, "only the page's own script");
	cr_expect(!strstr(s, "http://") && !strstr(s, "https://"), "no network address");
	cr_expect_eq(occurrences(s, " src="), occurrences(s, "&lt;img src="), "nothing to load");
	/* resources: the slowest is a (30 ms); memory prefers the cgroup peak */
	cr_expect(strstr(s, ">30.0 ms</text>"));
	cr_expect(strstr(s, ">4.0 MiB</text>"));
	/* header: models sorted, records counted (the invalid one too) */
	cr_expect(strstr(s, "5 records \xc2\xb7 models &lt;m2&gt;, m1"), "%.400s", strstr(s, "<header>"));
	/* the summary's bootstrap intervals: whiskers on the pass@k bars */
	cr_expect(!strstr(s, "No confidence intervals in this summary."));
	cr_expect(occurrences(s, "class=\"whisker\"") >= 1);
	expect_finite(s);
	free(s);
	ee_report_free(r);
	ee_report_free(NULL);
	no_leaks();
}

Test(report, rejects_a_bad_record_and_stays_as_it_was)
{
	struct ee_report *r = tiny();
	struct ee_err err = { 0 };
	char *before = page(r, &opts);
	json_t *bad = fix("{'task_id': 'a', 'status': 'bogus', 'score': 0.0, 'tests': []}");

	cr_expect_eq(ee_report_add(r, bad, "r.jsonl:9", &err), -1);
	cr_expect_eq(err.code, EE_ERR_USAGE);
	cr_expect(strstr(err.msg, "r.jsonl:9: status"), "%s", err.msg);
	json_decref(bad);
	char *after = page(r, &opts);
	cr_expect_str_eq(after, before);
	free(before);
	free(after);
	ee_report_free(r);
	no_leaks();
}

Test(report, a_page_over_the_cap_fails)
{
	struct ee_report *r = tiny();
	struct ee_out o;
	struct ee_err err = { 0 };

	ee_out_init(&o, 4096);
	cr_expect_eq(ee_report_html(r, &opts, &o, &err), -1);
	cr_expect(strstr(err.msg, "would pass"), "%s", err.msg);
	ee_out_free(&o);
	ee_report_free(r);
	no_leaks();
}

Test(report, trends_are_drawn_when_given)
{
	struct ee_report *r = tiny();
	struct ee_svg_point pts[] = { { 1704153600, 0.4 }, { 1704240000, 0.6 } };
	struct ee_report_trend tr[] = { { "pass@1 <over time>", pts, 2, 1 }, { "timeout rate", NULL, 0, 1 } };
	struct ee_report_options o = opts;
	o.trends = tr;
	o.n_trends = 2;
	char *s = page(r, &o);

	cr_expect_eq(occurrences(s, "<svg class=\"chart\""), 10);
	cr_expect(strstr(s, "id=\"chart-trend-0\""));
	cr_expect(strstr(s, "<h3>pass@1 &lt;over time&gt;</h3>"));
	cr_expect_eq(occurrences(s, "class=\"trend-line\""), 1, "the empty series says no data");
	free(s);
	ee_report_free(r);
	no_leaks();
}

/* n failing samples of task t with this detail and a message of len chars. */
static void add_failures(struct ee_report *r, const char *t, int n, const char *status, const char *detail,
                         size_t len)
{
	char *msg = malloc(len + 1);

	cr_assert_not_null(msg);
	memset(msg, 'x', len);
	msg[len] = '\0';
	for (int i = 0; i < n; i++)
		add_json(r, json_pack("{s:s, s:i, s:s, s:s, s:f, s:[{s:i, s:s, s:s}], s:s}", "task_id", t,
		                      "sample", i, "status", status, "detail", detail, "score", 0.0, "tests",
		                      "index", 0, "status", "fail", "message", msg, "stderr", msg));
	free(msg);
}

Test(report, failures_shown_are_few_varied_and_cut)
{
	struct ee_report *r = ee_report_new();

	cr_assert_not_null(r);
	add_failures(r, "t", 10, "assertion_fail", "test 0 failed: no", 5000);
	add_failures(r, "t", 1, "timeout", "timeout", 10);
	char *s = page(r, &opts);

	cr_expect_eq(occurrences(s, "<div class=\"failure\">"), EE_REPORT_SHOWN);
	cr_expect(strstr(s, "<p class=\"detail\">timeout</p>"),
	          "a new kind of failure replaces a repeated one");
	cr_expect(strstr(s, "8 more failing samples not shown."), "%s", strstr(s, "id=\"t-0\""));
	/* messages cut to EE_REPORT_MESSAGE_CHARS, stderr to its last EE_REPORT_STDERR_CHARS */
	char longest[EE_REPORT_STDERR_CHARS + 2];
	memset(longest, 'x', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	cr_expect(!strstr(s, longest));
	longest[EE_REPORT_STDERR_CHARS] = '\0';
	cr_expect(strstr(s, longest));
	cr_expect(strstr(s, "stderr (the end):"));
	free(s);
	ee_report_free(r);
	no_leaks();
}

/* The program of a failing sample: collapsed, escaped, cut to its start;
 * a passing sample's is not shown. */
Test(report, failures_show_their_program_collapsed_escaped_and_capped)
{
	struct ee_report *r = ee_report_new();
	size_t len = EE_REPORT_PROGRAM_CHARS + 100;
	char *program = malloc(len + 1);

	cr_assert_not_null(r);
	cr_assert_not_null(program);
	memset(program, 'y', len);
	program[len] = '\0';
	memcpy(program, "</pre><script>x()</script>", 26);
	add_json(r, json_pack("{s:s, s:i, s:s, s:s, s:f, s:[], s:s}", "task_id", "t", "sample", 0, "status",
	                      "assertion_fail", "detail", "test 0 failed", "score", 0.0, "tests", "program",
	                      program));
	add_json(r, json_pack("{s:s, s:i, s:s, s:s, s:f, s:[], s:s, s:b}", "task_id", "t", "sample", 1,
	                      "status", "timeout", "detail", "timeout", "score", 0.0, "tests", "program",
	                      "while True: pass\n", "program_truncated", 1));
	add_json(r, json_pack("{s:s, s:i, s:s, s:f, s:[], s:s}", "task_id", "u", "sample", 0, "status",
	                      "pass", "score", 1.0, "tests", "program", "PASSING_PROGRAM"));
	char *s = page(r, &opts);

	cr_expect_eq(occurrences(s, "<details class=\"program\">"), 2);
	cr_expect(strstr(s, "<summary>program (its start: the program is longer)</summary><pre>&lt;/pre&gt;"
	                    "&lt;script&gt;x()&lt;/script&gt;yyy"),
	          "the long one: escaped, said to be cut");
	cr_expect(!strstr(s, "</pre><script>x()"));
	char longest[EE_REPORT_PROGRAM_CHARS];
	memset(longest, 'y', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	cr_expect(!strstr(s, longest), "cut to EE_REPORT_PROGRAM_CHARS");
	longest[EE_REPORT_PROGRAM_CHARS - 27] = '\0';
	cr_expect(strstr(s, longest));
	cr_expect(
	        strstr(s,
	               "<summary>program (its start: the program is longer)</summary><pre>while True: pass"),
	        "the record's own program_truncated is said too");
	cr_expect(!strstr(s, "PASSING_PROGRAM"));
	free(s);
	free(program);
	ee_report_free(r);
	no_leaks();
}

Test(report, an_empty_results_set_still_makes_a_page)
{
	struct ee_report *r = ee_report_new();
	char *s = page(r, &opts);

	/* every chart but the classes' (no class: no panel) */
	cr_expect_eq(occurrences(s, "<svg class=\"chart\""), 6);
	cr_expect_eq(occurrences(s, ">no data</text>"), 6);
	cr_expect(!strstr(s, "pass@1 by class"));
	cr_expect(strstr(s, "pass@1 not reported: no tasks"));
	cr_expect(strstr(s, "</html>\n"));
	expect_finite(s);
	free(s);
	ee_report_free(r);
	no_leaks();
}

Test(report, confidence_intervals_become_whiskers)
{
	struct ee_report *r = tiny();
	json_t *sum = fix("{'tasks': 3, 'samples': 5, 'pass_at_k': {'1': 0.5, '2': 0.75},"
	                  " 'pass_at_k_ci': {'1': [0.25, 0.75], '2': 'junk'}, 'mean_score': 0.4,"
	                  " 'mean_score_ci': [0.2, 0.6], 'median_task_score': 0.5, 'p10_task_score': 0.1,"
	                  " 'bootstrap': {'resamples': 1000, 'seed': 7, 'level': 0.95, 'unit': 'task'},"
	                  " 'statuses': {'pass': 1, 'assertion_fail': 1, 'syntax_error': 0, 'timeout': 1,"
	                  " 'error': 2}, 'details': {'test failed': 1},"
	                  " 'classes': {'math': {'tasks': 1, 'pass_at_k': {'1': 0.5},"
	                  " 'pass_at_k_ci': {'1': [0.5, 0.5]}}, '': {'tasks': 2, 'pass_at_k': {'1': 0}}},"
	                  " 'lint': {'pass_rate': 0.25}, 'composite': {'value': 0.125}}");
	struct ee_report_options o = opts;
	o.summary = sum;
	char *s = page(r, &o);

	cr_expect_eq(occurrences(s, "class=\"whisker\""), 2, "pass@1 and math; not pass@2 (junk)");
	cr_expect(strstr(s, "95% bootstrap confidence interval, 1000 resamples over tasks, seed 7."));
	cr_expect(strstr(s, "<b>0.500</b><span>pass@1 (CI 0.250\xe2\x80\x93"
	                    "0.750)</span>"));
	cr_expect(strstr(s, "<span>mean score (CI 0.200\xe2\x80\x93"
	                    "0.600)</span>"));
	cr_expect(strstr(s, "<b>0.250</b><span>lint pass rate</span>"));
	cr_expect(strstr(s, "<b>0.125</b><span>composite</span>"));
	cr_expect(strstr(s, ">(no class)</text>"));
	cr_expect(ee_report_summary(r) != NULL);
	json_decref(sum);
	free(s);
	ee_report_free(r);
	no_leaks();
}
