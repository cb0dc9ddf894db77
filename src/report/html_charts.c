/* html_charts.c - the report page's charts and figures tables (see
 * html_int.h): from the summary (pass@k, classes, models, statuses) and
 * from the tasks (scores, the slowest and hungriest tasks), and the trends
 * over earlier runs. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"
#include "report/out.h"
#include "report/report_int.h"
#include "report/svg.h"
#include "results/summary.h"

#define MAX_KS_SHOWN    32
#define MAX_CLASS_BARS  40
#define MAX_DETAIL_BARS 12
#define SCORE_BINS      10
#define MODEL_LABEL     72 /* bytes of a bar's label "model · pass@k" */

/* ---- charts from the summary ----------------------------------------------- */

/* The bars of block's pass@k ("pass@1", or "name · pass@1" when name is
 * not NULL) appended to bars[*n .. MAX_KS_SHOWN); labels as many. */
static size_t k_bars(const json_t *block, const char *name, struct ee_svg_bar *bars,
                     char (*labels)[MODEL_LABEL], size_t *n)
{
	const json_t *ci = json_object_get(block, "pass_at_k_ci");
	size_t with_ci = 0;
	const char *k;
	json_t *v;

	json_object_foreach (json_object_get(block, "pass_at_k"), k, v) {
		if (*n == MAX_KS_SHOWN)
			break;
		if (name)
			snprintf(labels[*n], MODEL_LABEL, "%.40s \xc2\xb7 pass@%.20s",
			         name[0] ? name : "(no model)", k);
		else
			snprintf(labels[*n], MODEL_LABEL, "pass@%.20s", k);
		bars[*n] = (struct ee_svg_bar){ .label = labels[*n], .value = json_number_value(v) };
		bars[*n].has_ci = html_interval(json_object_get(ci, k), &bars[*n].lo, &bars[*n].hi);
		with_ci += bars[*n].has_ci;
		++*n;
	}
	return with_ci;
}

/* pass@k: one bar per k, or with several models one per model and k
 * (horizontal, to fit the names), never a figure pooled over models. */
static void pass_at_k(struct ee_out *o, const json_t *s)
{
	const json_t *boot = json_object_get(s, "bootstrap"),
	             *dropped = json_object_get(s, "pass_at_k_dropped"), *ms = json_object_get(s, "models");
	struct ee_svg_bar bars[MAX_KS_SHOWN];
	char labels[MAX_KS_SHOWN][MODEL_LABEL];
	size_t n = 0, with_ci = 0;
	int mixed = json_object_size(ms) > 1;
	const char *name;
	json_t *m;

	if (mixed)
		json_object_foreach ((json_t *)ms, name, m)
			with_ci += k_bars(m, name, bars, labels, &n);
	else
		with_ci = k_bars(s, NULL, bars, labels, &n);
	html_open_panel(o, "pass-at-k", mixed ? "pass@k by model" : "pass@k");
	if (mixed) {
		ee_svg_hbars(o,
		             &(struct ee_svg_chart){
		                     .id = "chart-pass-at-k", .title = "pass@k by model", .max = 1 },
		             bars, n);
		html_note(
		        o,
		        "Each model's pass@k over its own samples (the records hold several models: a pass@k "
		        "pooled over them would be no model's).");
		dropped = NULL; /* each model's are in the model table's note */
	} else {
		ee_svg_vbars(o,
		             &(struct ee_svg_chart){ .id = "chart-pass-at-k", .title = "pass@k", .max = 1 },
		             bars, n);
	}
	if (with_ci && json_is_object(boot)) {
		ee_out_raw(o, "<p class=\"note\">Whiskers: ");
		ee_out_num(o, 100 * html_num_at(boot, "level"), 0);
		ee_out_raw(o, "% bootstrap confidence interval, ");
		ee_out_num(o, html_num_at(boot, "resamples"), 0);
		ee_out_raw(o, " resamples over tasks, seed ");
		ee_out_num(o, html_num_at(boot, "seed"), 0);
		ee_out_raw(o, ".</p>\n");
	} else if (with_ci) {
		html_note(o, "Whiskers: the confidence intervals of the summary.");
	} else {
		html_note(o, "No confidence intervals in this summary.");
	}
	for (size_t i = 0; i < json_array_size(dropped); i++) {
		const json_t *d = json_array_get(dropped, i);
		ee_out_raw(o, "<p class=\"note\">pass@");
		ee_out_num(o, html_num_at(d, "k"), 0);
		ee_out_raw(o, " not reported: ");
		ee_out_text(o, json_string_value(json_object_get(d, "reason")));
		ee_out_raw(o, "</p>\n");
	}
	ee_out_raw(o, "</section>\n");
}

struct class_row {
	const char *name;
	double rate;
	int has_ci;
	double lo, hi;
	double tasks;
};

static int by_rate(const void *pa, const void *pb)
{
	const struct class_row *a = pa, *b = pb;
	if (a->rate != b->rate)
		return a->rate < b->rate ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* A grouping of the summary drawn as pass@1 bars: its classes or models. */
struct grouping {
	const char *key;   /* in the summary */
	const char *id;    /* of the panel; the chart's is "chart-" id */
	const char *title; /* of the panel and the chart */
	const char *none;  /* the label of the group "" */
	const char *more;  /* the note when not all are drawn: "N <more>." */
};

static const struct grouping CLASSES = { "classes", "classes", "pass@1 by class", "(no class)",
	                                 "more classes (the table lists every task)" };
static const struct grouping MODELS = { "models", "models", "pass@1 by model", "(no model)",
	                                "more models (the table lists every model)" };

/* A group's row when its pass@1 is a number (a class of several models'
 * samples has none: it would pool them); rows[*n] is filled, name kept. */
static void add_row(struct class_row *rows, size_t *n, const char *name, const json_t *c)
{
	const json_t *p1 = json_object_get(json_object_get(c, "pass_at_k"), "1");
	struct class_row *row = &rows[*n];

	if (!json_is_number(p1))
		return;
	row->name = name;
	row->rate = json_number_value(p1);
	row->has_ci =
	        html_interval(json_object_get(json_object_get(c, "pass_at_k_ci"), "1"), &row->lo, &row->hi);
	row->tasks = html_num_at(c, "tasks");
	++*n;
}

/* The number of rows g can have: its groups, or by class with several
 * models, each model's classes. */
static size_t max_rows(const json_t *s, const struct grouping *g, int by_model)
{
	const char *name;
	json_t *m;
	size_t n = 0;

	if (!by_model)
		return json_object_size(json_object_get(s, g->key));
	json_object_foreach (json_object_get(s, "models"), name, m)
		n += json_object_size(json_object_get(m, "classes"));
	return n;
}

#define ROW_LABEL 96 /* bytes of "class · model" */

/* The bars of g's groups (in a panel of its own unless within_panel). By
 * class with several models: a bar per model and class ("math · big"),
 * from each model's own samples of the class's tasks. */
static void group_bars(struct ee_out *o, const json_t *s, const struct grouping *g, int within_panel)
{
	int by_model = g == &CLASSES && json_object_size(json_object_get(s, "models")) > 1;
	size_t cap = max_rows(s, g, by_model), n = 0, i;
	struct class_row *rows = calloc(cap + 1, sizeof(*rows));
	struct ee_svg_bar *bars = calloc(cap + 1, sizeof(*bars));
	char(*texts)[48] = calloc(cap + 1, sizeof(*texts));
	char(*labels)[ROW_LABEL] = calloc(cap + 1, sizeof(*labels));
	const char *name, *mname;
	json_t *c, *m;

	if (!rows || !bars || !texts || !labels) {
		o->failed = 1;
		goto out;
	}
	if (by_model) {
		json_object_foreach (json_object_get(s, "models"), mname, m) {
			json_object_foreach (json_object_get(m, "classes"), name, c) {
				if (n == cap)
					break;
				snprintf(labels[n], ROW_LABEL, "%.40s \xc2\xb7 %.40s",
				         name[0] ? name : g->none, mname[0] ? mname : MODELS.none);
				add_row(rows, &n, labels[n], c);
			}
		}
	} else {
		json_object_foreach (json_object_get(s, g->key), name, c)
			add_row(rows, &n, name[0] ? name : g->none, c);
	}
	qsort(rows, n, sizeof(*rows), by_rate);
	size_t shown = n < MAX_CLASS_BARS ? n : MAX_CLASS_BARS;
	for (i = 0; i < shown; i++) {
		snprintf(texts[i], sizeof(texts[i]), "%.3f \xc2\xb7 %.0f task%s", rows[i].rate, rows[i].tasks,
		         rows[i].tasks == 1 ? "" : "s");
		bars[i] = (struct ee_svg_bar){ .label = rows[i].name,
			                       .value = rows[i].rate,
			                       .has_ci = rows[i].has_ci,
			                       .lo = rows[i].lo,
			                       .hi = rows[i].hi,
			                       .text = texts[i],
			                       .cls = "bar-class" };
	}
	char chart_id[64];
	snprintf(chart_id, sizeof(chart_id), "chart-%s", g->id);
	if (!within_panel)
		html_open_panel(o, g->id, g->title);
	ee_svg_hbars(o, &(struct ee_svg_chart){ .id = chart_id, .title = g->title, .max = 1 }, bars, shown);
	if (n > shown) {
		ee_out_fmt(o, "<p class=\"note\">%zu %s.</p>\n", n - shown, g->more);
	}
	if (by_model)
		html_note(o, "Per model and class, from each model's own samples (the records hold several "
		             "models: a class's pass@1 over all of them would pool them).");
	if (!within_panel)
		ee_out_raw(o, "</section>\n");
out:
	free(rows);
	free(bars);
	free(texts);
	free(labels);
}

/* syntax_error split by detail (docs/summary.md, syntax_error_details):
 * the status also counts programs that parse but raise at import. */
static void syntax_split(struct ee_out *o, const json_t *s)
{
	const json_t *by = json_object_get(s, "syntax_error_details");
	double total = html_num_at(json_object_get(s, "statuses"), "syntax_error");
	double parse = html_num_at(by, "syntax error"), import = html_num_at(by, "import error");
	double other = html_num_at(by, "(other)");

	if (!(total > 0) || !isfinite(parse) || !isfinite(import))
		return;
	ee_out_fmt(o,
	           "<p class=\"note\" id=\"syntax-split\">syntax_error %.0f: %.0f do not parse (detail "
	           "<code>syntax error</code>), %.0f fail at import (<code>import error</code>: the program "
	           "parsed, then raised while being imported)",
	           total, parse, import);
	if (other > 0)
		ee_out_fmt(o, ", %.0f with another detail", other);
	ee_out_raw(o, ".</p>\n");
}

static void statuses(struct ee_out *o, const json_t *s)
{
	const json_t *st = json_object_get(s, "statuses"), *details = json_object_get(s, "details");
	struct ee_svg_bar parts[REP_N_STATUS], bars[MAX_DETAIL_BARS];
	char texts[REP_N_STATUS][32], dtexts[MAX_DETAIL_BARS][32], cls[REP_N_STATUS][32];
	size_t n = 0;
	const char *d;
	json_t *v;

	for (int i = 0; i < REP_N_STATUS; i++) {
		double count = html_num_at(st, ee_report_status_names[i]);
		snprintf(texts[i], sizeof(texts[i]), "%.0f", isfinite(count) ? count : 0);
		snprintf(cls[i], sizeof(cls[i]), "s-%s", ee_report_status_names[i]);
		parts[i] = (struct ee_svg_bar){
			.label = ee_report_status_names[i], .value = count, .text = texts[i], .cls = cls[i]
		};
	}
	json_object_foreach ((json_t *)details, d, v) {
		if (n == MAX_DETAIL_BARS)
			break;
		snprintf(dtexts[n], sizeof(dtexts[n]), "%.0f", json_number_value(v));
		bars[n] = (struct ee_svg_bar){
			.label = d, .value = json_number_value(v), .text = dtexts[n], .cls = "bar-detail"
		};
		n++;
	}
	html_open_panel(o, "statuses", "statuses and details");
	ee_svg_stack(o, &(struct ee_svg_chart){ .id = "chart-statuses", .title = "samples by status" }, parts,
	             REP_N_STATUS);
	syntax_split(o, s);
	ee_out_raw(o, "<h3>details of the samples that did not pass</h3>\n");
	ee_svg_hbars(o, &(struct ee_svg_chart){ .id = "chart-details", .title = "samples by detail" }, bars,
	             n);
	if (json_object_size(details) > n)
		ee_out_fmt(o, "<p class=\"note\">%zu more detail classes.</p>\n",
		           json_object_size(details) - n);
	ee_out_raw(o, "</section>\n");
}

/* ---- per model ------------------------------------------------------------- */

#define MODEL_DETAILS 3 /* the most frequent details shown per model */

static void num_cell(struct ee_out *o, const json_t *v, int decimals)
{
	ee_out_raw(o, "<td class=\"n\">");
	if (json_is_number(v))
		ee_out_num(o, json_number_value(v), decimals);
	else
		ee_out_raw(o, "-");
	ee_out_raw(o, "</td>");
}

/* One model's row: its samples per task, its figures at the ks any model
 * reports ("-" where it has too few samples), statuses, details. */
static void model_row(struct ee_out *o, const char *name, const json_t *m, const unsigned long *ks, size_t nk)
{
	const json_t *st = json_object_get(m, "statuses"), *details = json_object_get(m, "details");
	const json_t *per_task = json_object_get(m, "samples_per_task");
	double lo = html_num_at(per_task, "min"), hi = html_num_at(per_task, "max");
	const char *d;
	json_t *v;
	size_t shown = 0;
	char k[24];

	ee_out_raw(o, "<tr><td>");
	ee_out_text_cut(o, name[0] ? name : MODELS.none, 80);
	ee_out_raw(o, "</td>");
	num_cell(o, json_object_get(m, "tasks"), 0);
	num_cell(o, json_object_get(m, "samples"), 0);
	if (isfinite(lo) && isfinite(hi) && lo != hi)
		ee_out_fmt(o, "<td class=\"n\">%.0f\xe2\x80\x93%.0f</td>", lo, hi);
	else
		num_cell(o, json_object_get(per_task, "min"), 0);
	for (size_t i = 0; i < nk; i++) {
		snprintf(k, sizeof(k), "%lu", ks[i]);
		num_cell(o, json_object_get(json_object_get(m, "pass_at_k"), k), 3);
	}
	num_cell(o, json_object_get(m, "mean_score"), 3);
	num_cell(o, json_object_get(m, "median_task_score"), 3);
	num_cell(o, json_object_get(m, "p10_task_score"), 3);
	for (int i = 0; i < REP_N_STATUS; i++)
		num_cell(o, json_object_get(st, ee_report_status_names[i]), 0);
	ee_out_raw(o, "<td>");
	json_object_foreach ((json_t *)details, d, v) {
		if (shown++ == MODEL_DETAILS)
			break;
		ee_out_raw(o, shown > 1 ? " \xc2\xb7 " : "");
		ee_out_text_cut(o, d, 80);
		ee_out_raw(o, " ");
		ee_out_num(o, json_number_value(v), 0);
	}
	ee_out_raw(o, "</td></tr>\n");
}

/* With more than one model: pass@1 by model, and a row per model. */
static void models(struct ee_out *o, const json_t *s)
{
	const json_t *ms = json_object_get(s, "models");
	unsigned long ks[MAX_KS_SHOWN];
	size_t nk = ee_summary_models_ks(s, ks, MAX_KS_SHOWN), i;
	const char *name;
	json_t *m, *d;

	if (json_object_size(ms) == 0)
		return;
	ee_out_raw(o, "<section class=\"panel wide\" id=\"models\"><h2>by model</h2>\n");
	group_bars(o, s, &MODELS, 1);
	ee_out_raw(o, "<table id=\"model-table\"><thead><tr><th>model</th><th class=\"n\">tasks</th>"
	              "<th class=\"n\">samples</th><th class=\"n\">n/task</th>");
	for (i = 0; i < nk; i++)
		ee_out_fmt(o, "<th class=\"n\">pass@%lu</th>", ks[i]);
	ee_out_raw(o, "<th class=\"n\">mean</th><th class=\"n\">median</th><th class=\"n\">p10</th>");
	for (int st = 0; st < REP_N_STATUS; st++)
		ee_out_fmt(o, "<th class=\"n\">%s</th>", ee_report_status_names[st]);
	ee_out_raw(o, "<th>most frequent details</th></tr></thead>\n<tbody>\n");
	json_object_foreach ((json_t *)ms, name, m)
		model_row(o, name, m, ks, nk);
	ee_out_raw(o, "</tbody></table>\n");
	html_note(o, "Each model over the tasks it attempted, from its own samples only (n/task: its samples "
	             "per task); - when a task of the model has fewer than k samples of it.");
	json_object_foreach ((json_t *)ms, name, m) {
		json_array_foreach (json_object_get(m, "pass_at_k_dropped"), i, d) {
			ee_out_raw(o, "<p class=\"note\">");
			ee_out_text_cut(o, name[0] ? name : MODELS.none, 80);
			ee_out_fmt(o, ": pass@%.0f not reported: ", html_num_at(d, "k"));
			ee_out_text(o, json_string_value(json_object_get(d, "reason")));
			ee_out_raw(o, "</p>\n");
		}
	}
	ee_out_raw(o, "</section>\n");
}

/* ---- charts from the tasks -------------------------------------------------- */

static void scores(struct ee_out *o, const struct ee_report *r, const json_t *s)
{
	unsigned long counts[SCORE_BINS] = { 0 };
	struct ee_svg_mark marks[2];
	size_t nm = 0;

	for (size_t i = 0; i < r->n_tasks; i++) {
		const struct rep_task *t = &r->tasks[i];
		double mean = t->n ? t->score_sum / (double)t->n : 0;
		int bin = (int)(mean * SCORE_BINS);
		counts[bin < 0 ? 0 : bin >= SCORE_BINS ? SCORE_BINS - 1 : bin]++;
	}
	if (isfinite(html_num_at(s, "median_task_score")))
		marks[nm++] = (struct ee_svg_mark){ "median", html_num_at(s, "median_task_score"), "median" };
	if (isfinite(html_num_at(s, "p10_task_score")))
		marks[nm++] = (struct ee_svg_mark){ "p10", html_num_at(s, "p10_task_score"), "p10" };
	html_open_panel(o, "scores", "mean score per task");
	ee_svg_histogram(o, &(struct ee_svg_chart){ .id = "chart-scores", .title = "tasks by mean score" },
	                 counts, SCORE_BINS, 0, 1, marks, nm);
	html_note(o,
	          "Each task counts once, at the mean score of its samples; dashed lines: the median and the "
	          "10th percentile over tasks.");
	ee_out_raw(o, "</section>\n");
}

struct ranked {
	double v;
	size_t ix;
	const char *id;
};

static int by_value(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;
	if (a->v != b->v)
		return a->v < b->v ? 1 : -1;
	return strcmp(a->id, b->id);
}

/* The EE_REPORT_TOP tasks with the largest wall time (wall = 1) or memory. */
static void top_tasks(struct ee_out *o, const struct ee_report *r, int wall)
{
	struct ranked *rk = calloc(r->n_tasks + 1, sizeof(*rk));
	struct ee_svg_bar bars[EE_REPORT_TOP];
	char texts[EE_REPORT_TOP][32], hrefs[EE_REPORT_TOP][32];
	size_t n = 0;

	if (!rk) {
		o->failed = 1;
		return;
	}
	for (size_t i = 0; i < r->n_tasks; i++) {
		double v = wall ? r->tasks[i].wall_max : r->tasks[i].mem_max;
		if (v >= 0)
			rk[n++] = (struct ranked){ v, i, r->tasks[i].id };
	}
	qsort(rk, n, sizeof(*rk), by_value);
	n = n < EE_REPORT_TOP ? n : EE_REPORT_TOP;
	for (size_t i = 0; i < n; i++) {
		if (wall)
			snprintf(texts[i], sizeof(texts[i]), "%.1f ms", rk[i].v);
		else
			snprintf(texts[i], sizeof(texts[i]), "%.1f MiB", rk[i].v / 1024);
		snprintf(hrefs[i], sizeof(hrefs[i]), "#t-%zu", rk[i].ix);
		bars[i] = (struct ee_svg_bar){ .label = rk[i].id,
			                       .value = rk[i].v,
			                       .text = texts[i],
			                       .href = hrefs[i],
			                       .cls = wall ? "bar-slow" : "bar-mem" };
	}
	if (wall)
		ee_svg_hbars(o, &(struct ee_svg_chart){ .id = "chart-slowest", .title = "slowest tasks" },
		             bars, n);
	else
		ee_svg_hbars(
		        o,
		        &(struct ee_svg_chart){ .id = "chart-memory", .title = "most memory-hungry tasks" },
		        bars, n);
	free(rk);
}

static void resources(struct ee_out *o, const struct ee_report *r)
{
	ee_out_raw(o, "<section class=\"panel wide\" id=\"resources\"><h2>time and memory</h2>\n"
	              "<div class=\"halves\"><div><h3>slowest tasks (largest wall time of a sample)</h3>\n");
	top_tasks(o, r, 1);
	ee_out_raw(o, "</div><div><h3>most memory-hungry tasks (largest peak of a sample)</h3>\n");
	top_tasks(o, r, 0);
	ee_out_raw(o, "</div></div>\n");
	html_note(o,
	          "Memory: the sandbox's cgroup peak (peak_memory_kb), else the largest RSS (peak_rss_kb).");
	ee_out_raw(o, "</section>\n");
}

void html_trends(struct ee_out *o, const struct ee_report_options *opt)
{
	char id[48];

	html_open_panel(o, "trends", "over runs");
	for (size_t i = 0; i < opt->n_trends; i++) {
		const struct ee_report_trend *t = &opt->trends[i];
		snprintf(id, sizeof(id), "chart-trend-%zu", i);
		ee_out_raw(o, "<h3>");
		ee_out_text(o, t->label);
		ee_out_raw(o, "</h3>\n");
		ee_svg_trend(o, &(struct ee_svg_chart){ .id = id, .title = t->label, .max = t->max }, t->pts,
		             t->n);
	}
	if (opt->trends_note)
		html_note(o, opt->trends_note);
	ee_out_raw(o, "</section>\n");
}

void html_charts(struct ee_out *o, const struct ee_report *r, const json_t *s)
{
	pass_at_k(o, s);
	if (html_has_classes(s))
		group_bars(o, s, &CLASSES, 0);
	models(o, s);
	statuses(o, s);
	scores(o, r, s);
	resources(o, r);
}
