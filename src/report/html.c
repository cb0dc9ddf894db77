/* html.c - the report's page (report.h).
 *
 * One pass writes the whole document into an ee_out: head (CSP, style),
 * header and key figures, the charts (svg.h), the task table, one section
 * per task, and the table's sorting script. The summary comes from
 * ee_summary_json, so every figure is the one `execeval metrics` prints;
 * keys a newer summary may carry (pass_at_k_ci, mean_score_ci, bootstrap,
 * lint, composite) are drawn when present and skipped when absent.
 *
 * The Content-Security-Policy pins the page's only style and script by
 * their SHA-256 (STYLE_HASH, SCRIPT_HASH): a tag that escaped escaping would
 * still not run, and nothing may be fetched (default-src 'none'). Changing
 * STYLE or SCRIPT means updating its hash; tests/e2e/test_report.py checks
 * them and prints the right value.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "verdict/record.h"
#include "report/out.h"
#include "report/report.h"
#include "report/report_int.h"
#include "report/svg.h"
#include "results/summary.h"

#define MAX_KS_SHOWN    32
#define MAX_CLASS_BARS  40
#define MAX_DETAIL_BARS 12
#define SCORE_BINS      10
#define ID_CHARS        200 /* of a task id in the table and headings */

/* clang-format off */
static const char STYLE[] =
"body{margin:0;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1d2430;background:#f4f5f7}"
"header{background:#1d2430;color:#fff;padding:18px 32px}"
"header h1{margin:0 0 4px;font-size:22px;font-weight:600;overflow-wrap:anywhere}"
"header p{margin:0;color:#c5cbd6;font-size:13px;overflow-wrap:anywhere}"
"main{max-width:1240px;margin:0 auto;padding:8px 32px 48px}"
"nav{margin:12px 0;font-size:13px}nav a{margin-right:14px;color:#2456a4}"
".cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0}"
".card{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:8px 16px;min-width:110px}"
".card b{display:block;font-size:22px;font-weight:600}.card span{color:#5b6472;font-size:12px}"
".panels{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:16px}"
".panel{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:12px 16px;margin:16px 0 0}"
".panels .panel{margin:0}.panels{margin-top:16px}.wide{grid-column:1/-1}.halves{display:grid;"
"grid-template-columns:repeat(auto-fit,minmax(440px,1fr));gap:16px}"
"h2{font-size:16px;margin:0 0 8px}h3{font-size:14px;margin:12px 0 4px}"
".note{color:#5b6472;font-size:12px;margin:6px 0 0}"
"svg.chart{display:block;width:100%;height:auto;max-width:760px}"
"svg text{font-size:12px;fill:#303846}svg .tick{fill:#5b6472;font-size:11px}svg .empty{fill:#8a929e}"
"svg .grid{stroke:#e6e8ec}svg .axis{stroke:#9aa3af}"
"svg .bar{fill:#3b6fb6}svg .bar-class{fill:#4c8bd6}svg .bar-detail{fill:#8a6bb8}"
"svg .bar-slow{fill:#d08a2b}svg .bar-mem{fill:#2b9a8a}"
"svg .link{fill:#2456a4;text-decoration:underline}"
"svg .whisker{stroke:#1d2430;stroke-width:1.5;fill:none}"
"svg .mark-line{stroke:#c0392b;stroke-width:1.5;stroke-dasharray:5 3}svg .mark-label{fill:#c0392b;font-size:11px}"
"svg .p10 .mark-line{stroke:#d35400}svg .p10 .mark-label{fill:#d35400}"
"svg .trend-line{fill:none;stroke:#3b6fb6;stroke-width:2}svg .dot{fill:#3b6fb6}"
".s-pass{fill:#2e8b57}.s-assertion_fail{fill:#e07b24}.s-syntax_error{fill:#8e44ad}"
".s-timeout{fill:#c9a00c}.s-error{fill:#c0392b}"
".st{display:inline-block;padding:0 7px;border-radius:9px;color:#fff;font-size:12px;background:#5b6472}"
".st.s-pass{background:#2e8b57}.st.s-assertion_fail{background:#e07b24}.st.s-syntax_error{background:#8e44ad}"
".st.s-timeout{background:#c9a00c}.st.s-error{background:#c0392b}"
"table{border-collapse:collapse;width:100%;font-size:13px}"
"th,td{padding:4px 8px;border-bottom:1px solid #eceff3;text-align:left;vertical-align:top}"
"td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td a{overflow-wrap:anywhere}"
"th button{font:inherit;font-weight:600;color:inherit;background:none;border:0;padding:0;cursor:pointer}"
"th[aria-sort=ascending] button::after{content:' \\25B2'}th[aria-sort=descending] button::after{content:' \\25BC'}"
".task{border-top:1px solid #dde1e7;padding:6px 0 10px;content-visibility:auto;contain-intrinsic-size:auto 160px}"
".task:target{background:#fff8dc}"
".task h3{overflow-wrap:anywhere}.cls{color:#5b6472;font-weight:400}"
".failure{margin:8px 0 0 12px}.failure h4{margin:0;font-size:13px;font-weight:600}"
".failure p,.failure ul{margin:4px 0}.failure p.detail{white-space:pre-wrap;overflow-wrap:anywhere}"
"pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f3f4f6;border-radius:4px;padding:6px 8px;"
"margin:4px 0;max-height:260px;overflow:auto;font-size:12px}"
"code{white-space:pre-wrap;overflow-wrap:anywhere;background:#f3f4f6;padding:0 3px;border-radius:3px}";

/* Sorts every table.sortable by the clicked column: numbers by data-v,
 * text by its content; a second click reverses. data-sort-ready on the
 * table says the script ran (the browser test looks for it). */
static const char SCRIPT[] =
"(function(){"
"var tables=document.querySelectorAll('table.sortable');"
"Array.prototype.forEach.call(tables,function(table){"
"var heads=table.tHead.rows[0].cells;"
"Array.prototype.forEach.call(heads,function(th,col){"
"var button=th.querySelector('button');if(!button)return;"
"button.addEventListener('click',function(){"
"var asc=th.getAttribute('aria-sort')!=='ascending',num=th.getAttribute('data-type')==='num';"
"Array.prototype.forEach.call(heads,function(h){h.removeAttribute('aria-sort');});"
"th.setAttribute('aria-sort',asc?'ascending':'descending');"
"var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);"
"rows.sort(function(a,b){var x=a.cells[col],y=b.cells[col],d;"
"if(num)d=parseFloat(x.getAttribute('data-v'))-parseFloat(y.getAttribute('data-v'));"
"else d=x.textContent.localeCompare(y.textContent);"
"return asc?d:-d;});"
"rows.forEach(function(r){body.appendChild(r);});"
"});});"
"table.setAttribute('data-sort-ready','1');"
"});"
"})();";
/* clang-format on */

/* base64 of the SHA-256 of STYLE and of SCRIPT. */
#define STYLE_HASH  "sha256-ECkDovnQfoHUqVMN7ak6P2kBlO+vzClzIlBMYh6t4gQ="
#define SCRIPT_HASH "sha256-Q6Qpy1Y09rVRyBVZB48bObHNBoWTLfRxNIQclM9aUME="

static const char CSP[] = "default-src 'none'; style-src '" STYLE_HASH "'; script-src '" SCRIPT_HASH
                          "'; img-src 'none'; base-uri 'none'; form-action 'none'";

/* ---- small pieces ---------------------------------------------------------- */

static double num_at(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* An interval [lo, hi] as the summary writes it, when it is one. */
static int interval(const json_t *v, double *lo, double *hi)
{
	if (!json_is_array(v) || json_array_size(v) != 2)
		return 0;
	*lo = json_number_value(json_array_get(v, 0));
	*hi = json_number_value(json_array_get(v, 1));
	return json_is_number(json_array_get(v, 0)) && json_is_number(json_array_get(v, 1)) &&
	       isfinite(*lo) && isfinite(*hi) && *lo <= *hi;
}

static void open_panel(struct ee_out *o, const char *id, const char *title)
{
	ee_out_fmt(o, "<section class=\"panel\" id=\"%s\"><h2>%s</h2>\n", id, title);
}

static void note(struct ee_out *o, const char *text)
{
	ee_out_fmt(o, "<p class=\"note\">%s</p>\n", text);
}

static void card(struct ee_out *o, const char *name, double v, int decimals, const json_t *ci)
{
	double lo, hi;

	if (!isfinite(v))
		return;
	ee_out_raw(o, "<div class=\"card\"><b>");
	ee_out_num(o, v, decimals);
	ee_out_fmt(o, "</b><span>%s", name);
	if (interval(ci, &lo, &hi)) {
		ee_out_raw(o, " (CI ");
		ee_out_num(o, lo, decimals);
		ee_out_raw(o, "\xe2\x80\x93");
		ee_out_num(o, hi, decimals);
		ee_out_raw(o, ")");
	}
	ee_out_raw(o, "</span></div>\n");
}

static void status_badge(struct ee_out *o, int status)
{
	ee_out_fmt(o, "<span class=\"st s-%s\">%s</span>", ee_report_status_names[status],
	           ee_report_status_names[status]);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ---- head, header, figures ------------------------------------------------- */

static void head(struct ee_out *o, const struct ee_report_options *opt)
{
	ee_out_raw(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	              "<meta http-equiv=\"Content-Security-Policy\" content=\"");
	ee_out_raw(o, CSP);
	ee_out_raw(o, "\">\n<meta name=\"referrer\" content=\"no-referrer\">\n"
	              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	ee_out_text(o, opt->title ? opt->title : "execeval report");
	ee_out_raw(o, "</title>\n<style>");
	ee_out_raw(o, STYLE);
	ee_out_raw(o, "</style>\n</head>\n<body>\n");
}

static void models_line(struct ee_out *o, const struct ee_report *r)
{
	const char **names = r->models.len ? calloc(r->models.len, sizeof(*names)) : NULL;
	const struct ee_strmap_slot *sl;
	size_t pos = 0, n = 0;

	if (!names) {
		o->failed |= r->models.len > 0;
		return;
	}
	while ((sl = ee_strmap_next(&r->models, &pos)) && n < r->models.len)
		names[n++] = sl->key;
	qsort(names, n, sizeof(*names), cmp_str);
	ee_out_raw(o, n == 1 ? " \xc2\xb7 model " : " \xc2\xb7 models ");
	for (size_t i = 0; i < n; i++) {
		ee_out_raw(o, i ? ", " : "");
		ee_out_text_cut(o, names[i], 80);
	}
	if (r->more_models)
		ee_out_raw(o, ", and more");
	free(names);
}

static void header(struct ee_out *o, const struct ee_report *r, const struct ee_report_options *opt)
{
	char now[32];

	ee_out_raw(o, "<header><h1>");
	ee_out_text(o, opt->title ? opt->title : "execeval report");
	ee_out_raw(o, "</h1>\n<p>");
	if (opt->source) {
		ee_out_text(o, opt->source);
		ee_out_raw(o, " \xc2\xb7 ");
	}
	ee_out_fmt(o, "%lu records", r->records);
	models_line(o, r);
	if (!opt->generated_at)
		ee_iso_now(now);
	ee_out_raw(o, " \xc2\xb7 generated ");
	ee_out_text(o, opt->generated_at ? opt->generated_at : now);
	ee_out_raw(o, " by execeval " EE_VERSION "</p></header>\n<main>\n");
}

static void figures(struct ee_out *o, const json_t *s)
{
	const json_t *pk = json_object_get(s, "pass_at_k"), *ci = json_object_get(s, "pass_at_k_ci");
	const json_t *lint = json_object_get(s, "lint"), *comp = json_object_get(s, "composite");
	const char *k;
	json_t *v;
	char name[48];

	ee_out_raw(o, "<div class=\"cards\">\n");
	card(o, "tasks", num_at(s, "tasks"), 0, NULL);
	card(o, "samples", num_at(s, "samples"), 0, NULL);
	json_object_foreach ((json_t *)pk, k, v) {
		snprintf(name, sizeof(name), "pass@%.20s", k);
		card(o, name, json_number_value(v), 3, json_object_get(ci, k));
	}
	card(o, "mean score", num_at(s, "mean_score"), 3, json_object_get(s, "mean_score_ci"));
	card(o, "median task score", num_at(s, "median_task_score"), 3, NULL);
	card(o, "p10 task score", num_at(s, "p10_task_score"), 3, NULL);
	card(o, "lint pass rate", num_at(lint, "pass_rate"), 3, NULL);
	card(o, "composite", num_at(comp, "value"), 3, NULL);
	card(o, "wall time, s", num_at(s, "wall_s"), 1, NULL);
	ee_out_raw(o, "</div>\n<nav><a href=\"#pass-at-k\">pass@k</a><a href=\"#classes\">classes</a>");
	if (json_object_size(json_object_get(s, "models")) > 0)
		ee_out_raw(o, "<a href=\"#models\">models</a>");
	ee_out_raw(o, "<a href=\"#statuses\">statuses</a><a href=\"#scores\">scores</a>"
	              "<a href=\"#resources\">time and memory</a><a href=\"#tasks\">tasks</a>"
	              "<a href=\"#failures\">failures</a></nav>\n");
}

/* ---- charts from the summary ----------------------------------------------- */

static void pass_at_k(struct ee_out *o, const json_t *s)
{
	const json_t *pk = json_object_get(s, "pass_at_k"), *ci = json_object_get(s, "pass_at_k_ci");
	const json_t *boot = json_object_get(s, "bootstrap"),
	             *dropped = json_object_get(s, "pass_at_k_dropped");
	struct ee_svg_bar bars[MAX_KS_SHOWN];
	char labels[MAX_KS_SHOWN][32];
	size_t n = 0, with_ci = 0;
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)pk, k, v) {
		if (n == MAX_KS_SHOWN)
			break;
		snprintf(labels[n], sizeof(labels[n]), "pass@%.20s", k);
		bars[n] = (struct ee_svg_bar){ .label = labels[n], .value = json_number_value(v) };
		bars[n].has_ci = interval(json_object_get(ci, k), &bars[n].lo, &bars[n].hi);
		with_ci += bars[n].has_ci;
		n++;
	}
	open_panel(o, "pass-at-k", "pass@k");
	ee_svg_vbars(o, &(struct ee_svg_chart){ .id = "chart-pass-at-k", .title = "pass@k", .max = 1 }, bars,
	             n);
	if (with_ci && json_is_object(boot)) {
		ee_out_raw(o, "<p class=\"note\">Whiskers: ");
		ee_out_num(o, 100 * num_at(boot, "level"), 0);
		ee_out_raw(o, "% bootstrap confidence interval, ");
		ee_out_num(o, num_at(boot, "resamples"), 0);
		ee_out_raw(o, " resamples over tasks, seed ");
		ee_out_num(o, num_at(boot, "seed"), 0);
		ee_out_raw(o, ".</p>\n");
	} else if (with_ci) {
		note(o, "Whiskers: the confidence intervals of the summary.");
	} else {
		note(o, "No confidence intervals in this summary.");
	}
	for (size_t i = 0; i < json_array_size(dropped); i++) {
		const json_t *d = json_array_get(dropped, i);
		ee_out_raw(o, "<p class=\"note\">pass@");
		ee_out_num(o, num_at(d, "k"), 0);
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

/* The bars of g's groups (in a panel of its own unless within_panel). */
static void group_bars(struct ee_out *o, const json_t *s, const struct grouping *g, int within_panel)
{
	const json_t *cls = json_object_get(s, g->key);
	size_t n = json_object_size(cls), i = 0;
	struct class_row *rows = calloc(n + 1, sizeof(*rows));
	struct ee_svg_bar *bars = calloc(n + 1, sizeof(*bars));
	char(*texts)[48] = calloc(n + 1, sizeof(*texts));
	const char *name;
	json_t *c;

	if (!rows || !bars || !texts) {
		o->failed = 1;
		goto out;
	}
	json_object_foreach ((json_t *)cls, name, c) {
		const json_t *p1 = json_object_get(json_object_get(c, "pass_at_k"), "1");
		const json_t *ci = json_object_get(json_object_get(c, "pass_at_k_ci"), "1");
		struct class_row *row = &rows[i++];
		row->name = name[0] ? name : g->none;
		row->rate = json_is_number(p1) ? json_number_value(p1) : 0;
		row->has_ci = interval(ci, &row->lo, &row->hi);
		row->tasks = num_at(c, "tasks");
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
		open_panel(o, g->id, g->title);
	ee_svg_hbars(o, &(struct ee_svg_chart){ .id = chart_id, .title = g->title, .max = 1 }, bars, shown);
	if (n > shown) {
		ee_out_fmt(o, "<p class=\"note\">%zu %s.</p>\n", n - shown, g->more);
	}
	if (!within_panel)
		ee_out_raw(o, "</section>\n");
out:
	free(rows);
	free(bars);
	free(texts);
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
		double count = num_at(st, ee_report_status_names[i]);
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
	open_panel(o, "statuses", "statuses and details");
	ee_svg_stack(o, &(struct ee_svg_chart){ .id = "chart-statuses", .title = "samples by status" }, parts,
	             REP_N_STATUS);
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

/* One model's row: its figures at the whole set's ks, statuses, details. */
static void model_row(struct ee_out *o, const char *name, const json_t *m, const json_t *pk)
{
	const json_t *st = json_object_get(m, "statuses"), *details = json_object_get(m, "details");
	const char *k, *d;
	json_t *unused, *v;
	size_t shown = 0;

	ee_out_raw(o, "<tr><td>");
	ee_out_text_cut(o, name[0] ? name : MODELS.none, 80);
	ee_out_raw(o, "</td>");
	num_cell(o, json_object_get(m, "tasks"), 0);
	num_cell(o, json_object_get(m, "samples"), 0);
	json_object_foreach ((json_t *)pk, k, unused)
		num_cell(o, json_object_get(json_object_get(m, "pass_at_k"), k), 3);
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
	const json_t *ms = json_object_get(s, "models"), *pk = json_object_get(s, "pass_at_k");
	const char *name, *k;
	json_t *m, *unused;

	if (json_object_size(ms) == 0)
		return;
	ee_out_raw(o, "<section class=\"panel wide\" id=\"models\"><h2>by model</h2>\n");
	group_bars(o, s, &MODELS, 1);
	ee_out_raw(o, "<table id=\"model-table\"><thead><tr><th>model</th><th class=\"n\">tasks</th>"
	              "<th class=\"n\">samples</th>");
	json_object_foreach ((json_t *)pk, k, unused) {
		ee_out_raw(o, "<th class=\"n\">pass@");
		ee_out_text_cut(o, k, 20);
		ee_out_raw(o, "</th>");
	}
	ee_out_raw(o, "<th class=\"n\">mean</th><th class=\"n\">median</th><th class=\"n\">p10</th>");
	for (int i = 0; i < REP_N_STATUS; i++)
		ee_out_fmt(o, "<th class=\"n\">%s</th>", ee_report_status_names[i]);
	ee_out_raw(o, "<th>most frequent details</th></tr></thead>\n<tbody>\n");
	json_object_foreach ((json_t *)ms, name, m)
		model_row(o, name, m, pk);
	ee_out_raw(o, "</tbody></table>\n");
	note(o, "Each model over the tasks it attempted; pass@k as for the whole set (- when a task of "
	        "the model has fewer than k samples of it).");
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
	if (isfinite(num_at(s, "median_task_score")))
		marks[nm++] = (struct ee_svg_mark){ "median", num_at(s, "median_task_score"), "median" };
	if (isfinite(num_at(s, "p10_task_score")))
		marks[nm++] = (struct ee_svg_mark){ "p10", num_at(s, "p10_task_score"), "p10" };
	open_panel(o, "scores", "mean score per task");
	ee_svg_histogram(o, &(struct ee_svg_chart){ .id = "chart-scores", .title = "tasks by mean score" },
	                 counts, SCORE_BINS, 0, 1, marks, nm);
	note(o, "Each task counts once, at the mean score of its samples; dashed lines: the median and the "
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
	note(o, "Memory: the sandbox's cgroup peak (peak_memory_kb), else the largest RSS (peak_rss_kb).");
	ee_out_raw(o, "</section>\n");
}

static void trends(struct ee_out *o, const struct ee_report_options *opt)
{
	char id[48];

	open_panel(o, "trends", "over runs");
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
		note(o, opt->trends_note);
	ee_out_raw(o, "</section>\n");
}

/* ---- the table and the tasks ----------------------------------------------- */

static void table(struct ee_out *o, const struct ee_report *r)
{
	open_panel(o, "tasks", "tasks");
	ee_out_raw(o, "<table class=\"sortable\" id=\"task-table\"><thead><tr>"
	              "<th data-type=\"text\"><button type=\"button\">task</button></th>"
	              "<th data-type=\"text\"><button type=\"button\">class</button></th>"
	              "<th class=\"n\" data-type=\"num\"><button type=\"button\">samples</button></th>"
	              "<th class=\"n\" data-type=\"num\"><button type=\"button\">pass rate</button></th>"
	              "<th class=\"n\" data-type=\"num\"><button type=\"button\">mean score</button></th>"
	              "<th data-type=\"num\"><button type=\"button\">worst status</button></th>"
	              "</tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->n_tasks; i++) {
		const struct rep_task *t = &r->tasks[i];
		double rate = t->n ? (double)t->c / (double)t->n : 0,
		       mean = t->n ? t->score_sum / (double)t->n : 0;
		ee_out_fmt(o, "<tr><td><a href=\"#t-%zu\">", i);
		ee_out_text_cut(o, t->id, ID_CHARS);
		ee_out_raw(o, "</a></td><td>");
		ee_out_text_cut(o, t->cls, 80);
		ee_out_fmt(o, "</td><td class=\"n\" data-v=\"%lu\">%lu</td><td class=\"n\" data-v=\"", t->n,
		           t->n);
		ee_out_num(o, rate, 4);
		ee_out_raw(o, "\">");
		ee_out_num(o, rate, 2);
		ee_out_raw(o, "</td><td class=\"n\" data-v=\"");
		ee_out_num(o, mean, 4);
		ee_out_raw(o, "\">");
		ee_out_num(o, mean, 3);
		ee_out_fmt(o, "</td><td data-v=\"%d\">", t->worst);
		status_badge(o, t->worst);
		ee_out_raw(o, "</td></tr>\n");
	}
	ee_out_raw(o, "</tbody></table>\n");
	note(o, "Click a column's name to sort by it; a task's name leads to its failing samples.");
	ee_out_raw(o, "</section>\n");
}

static void failing_test(struct ee_out *o, const json_t *t)
{
	const json_t *index = json_object_get(t, "index");

	ee_out_raw(o, "<li>test ");
	if (json_is_integer(index))
		ee_out_fmt(o, "%lld", (long long)json_integer_value(index));
	ee_out_raw(o, " (");
	ee_out_text(o, json_string_value(json_object_get(t, "kind")));
	ee_out_raw(o, ", ");
	ee_out_text(o, json_string_value(json_object_get(t, "tier")));
	ee_out_raw(o, ", ");
	ee_out_text(o, json_string_value(json_object_get(t, "visibility")));
	ee_out_raw(o, ")");
	const char *msg = json_string_value(json_object_get(t, "message"));
	if (msg) {
		ee_out_raw(o, ": <code>");
		ee_out_text(o, msg);
		ee_out_raw(o, "</code>");
	}
	ee_out_raw(o, "</li>\n");
}

static int status_index(const char *name)
{
	for (int i = 0; name && i < REP_N_STATUS; i++)
		if (strcmp(name, ee_report_status_names[i]) == 0)
			return i;
	return REP_ERROR;
}

/* The code that ran, collapsed: a reader opens it when the detail and the
 * messages do not say enough. */
static void failure_program(struct ee_out *o, const json_t *f)
{
	const char *program = json_string_value(json_object_get(f, "program"));
	int cut = json_is_true(json_object_get(f, "program_cut"));

	if (!program)
		return;
	ee_out_raw(o, "<details class=\"program\"><summary>program");
	if (cut)
		ee_out_raw(o, " (its start: the program is longer)");
	ee_out_raw(o, "</summary><pre>");
	ee_out_text(o, program);
	if (cut)
		ee_out_raw(o, "\xe2\x80\xa6");
	ee_out_raw(o, "</pre></details>\n");
}

static void failure(struct ee_out *o, const json_t *f)
{
	const json_t *sample = json_object_get(f, "sample"), *tests = json_object_get(f, "tests");
	const char *model = json_string_value(json_object_get(f, "model"));
	const char *detail = json_string_value(json_object_get(f, "detail"));
	const char *more = json_string_value(json_object_get(f, "more"));
	const char *err = json_string_value(json_object_get(f, "stderr"));
	json_int_t failing = json_integer_value(json_object_get(f, "failing_tests"));

	ee_out_raw(o, "<div class=\"failure\"><h4>");
	if (json_is_integer(sample))
		ee_out_fmt(o, "sample %lld ", (long long)json_integer_value(sample));
	else
		ee_out_raw(o, "a sample ");
	if (model) {
		ee_out_raw(o, "of ");
		ee_out_text(o, model);
		ee_out_raw(o, " ");
	}
	status_badge(o, status_index(json_string_value(json_object_get(f, "status"))));
	ee_out_raw(o, "</h4>\n");
	if (detail || more) {
		ee_out_raw(o, "<p class=\"detail\">");
		ee_out_text(o, detail);
		ee_out_raw(o, detail && more ? ": " : "");
		ee_out_text(o, more);
		ee_out_raw(o, "</p>\n");
	}
	if (json_array_size(tests)) {
		ee_out_raw(o, "<ul>\n");
		for (size_t i = 0; i < json_array_size(tests); i++)
			failing_test(o, json_array_get(tests, i));
		ee_out_raw(o, "</ul>\n");
	}
	if (failing > (json_int_t)json_array_size(tests))
		ee_out_fmt(o, "<p class=\"note\">%lld more failing tests.</p>\n",
		           (long long)(failing - (json_int_t)json_array_size(tests)));
	if (err) {
		ee_out_raw(o, json_is_true(json_object_get(f, "stderr_cut"))
		                      ? "<pre>stderr (the end):\n\xe2\x80\xa6"
		                      : "<pre>stderr:\n");
		ee_out_text(o, err);
		ee_out_raw(o, "</pre>\n");
	}
	failure_program(o, f);
	ee_out_raw(o, "</div>\n");
}

static void task_section(struct ee_out *o, const struct ee_report *r, size_t i)
{
	const struct rep_task *t = &r->tasks[i];
	size_t shown = json_array_size(t->shown);

	ee_out_fmt(o, "<section class=\"task\" id=\"t-%zu\"><h3>", i);
	ee_out_text_cut(o, t->id, ID_CHARS);
	if (t->cls) {
		ee_out_raw(o, " <span class=\"cls\">");
		ee_out_text_cut(o, t->cls, 80);
		ee_out_raw(o, "</span>");
	}
	ee_out_fmt(o, "</h3>\n<p>%lu sample%s, %lu passed; worst: ", t->n, t->n == 1 ? "" : "s", t->c);
	status_badge(o, t->worst);
	ee_out_raw(o, " \xc2\xb7 <a href=\"#tasks\">the table</a></p>\n");
	for (size_t k = 0; k < shown; k++)
		failure(o, json_array_get(t->shown, k));
	if (t->failures > shown)
		ee_out_fmt(o, "<p class=\"note\">%lu more failing sample%s not shown.</p>\n",
		           t->failures - shown, t->failures - shown == 1 ? "" : "s");
	ee_out_raw(o, "</section>\n");
}

static void tasks(struct ee_out *o, const struct ee_report *r)
{
	open_panel(o, "failures", "failing samples by task");
	if (r->unkept)
		ee_out_fmt(
		        o,
		        "<p class=\"note\">%lu failing samples are counted but not shown: the report keeps "
		        "at most %u MiB of them.</p>\n",
		        r->unkept, EE_REPORT_KEEP_BYTES >> 20);
	for (size_t i = 0; i < r->n_tasks; i++)
		task_section(o, r, i);
	ee_out_raw(o, "</section>\n");
}

/* ---- the page ---------------------------------------------------------------- */

int ee_report_html(const struct ee_report *r, const struct ee_report_options *opt, struct ee_out *o,
                   struct ee_err *err)
{
	if (r->oom)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	json_t *own = opt->summary
	                      ? NULL
	                      : ee_summary_json(r->summary, opt->ks, opt->nk, ee_summary_span_s(r->summary));
	const json_t *s = opt->summary ? opt->summary : own;
	if (!s)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	head(o, opt);
	header(o, r, opt);
	figures(o, s);
	ee_out_raw(o, "<div class=\"panels\">\n");
	pass_at_k(o, s);
	group_bars(o, s, &CLASSES, 0);
	models(o, s);
	statuses(o, s);
	scores(o, r, s);
	resources(o, r);
	ee_out_raw(o, "</div>\n");
	if (opt->trends)
		trends(o, opt);
	table(o, r);
	tasks(o, r);
	ee_out_raw(o, "</main>\n<script>");
	ee_out_raw(o, SCRIPT);
	ee_out_raw(o, "</script>\n</body></html>\n");
	json_decref(own);
	if (ee_out_failed(o))
		return ee_fail(err, EE_ERR_USAGE, "out of memory, or the page would pass %zu MiB",
		               o->buf.cap >> 20);
	return 0;
}
