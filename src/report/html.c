/* html.c - the report's page (report.h): its assets, head, header and key
 * figures, and the order of its parts (charts: html_charts.c; the task
 * table and sections: html_tasks.c).
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
#include "report/html_int.h"
#include "report/out.h"
#include "report/report.h"
#include "report/report_int.h"
#include "report/svg.h"
#include "results/summary.h"

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

double html_num_at(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

int html_has_classes(const json_t *s)
{
	const char *name;
	json_t *c;

	json_object_foreach (json_object_get(s, "classes"), name, c)
		if (name[0])
			return 1;
	return 0;
}

/* An interval [lo, hi] as the summary writes it, when it is one. */
int html_interval(const json_t *v, double *lo, double *hi)
{
	if (!json_is_array(v) || json_array_size(v) != 2)
		return 0;
	*lo = json_number_value(json_array_get(v, 0));
	*hi = json_number_value(json_array_get(v, 1));
	return json_is_number(json_array_get(v, 0)) && json_is_number(json_array_get(v, 1)) &&
	       isfinite(*lo) && isfinite(*hi) && *lo <= *hi;
}

void html_open_panel(struct ee_out *o, const char *id, const char *title)
{
	ee_out_fmt(o, "<section class=\"panel\" id=\"%s\"><h2>%s</h2>\n", id, title);
}

void html_note(struct ee_out *o, const char *text)
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
	if (html_interval(ci, &lo, &hi)) {
		ee_out_raw(o, " (CI ");
		ee_out_num(o, lo, decimals);
		ee_out_raw(o, "\xe2\x80\x93");
		ee_out_num(o, hi, decimals);
		ee_out_raw(o, ")");
	}
	ee_out_raw(o, "</span></div>\n");
}

void html_status_badge(struct ee_out *o, int status)
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

/* A card of one model's figure: "pass@1 · name (CI ...)", the name escaped. */
static void model_card(struct ee_out *o, const char *figure, const char *model, double v, const json_t *ci)
{
	double lo, hi;

	if (!isfinite(v))
		return;
	ee_out_raw(o, "<div class=\"card\"><b>");
	ee_out_num(o, v, 3);
	ee_out_raw(o, "</b><span>");
	ee_out_text(o, figure); /* its k is a key of the summary: text, never markup */
	ee_out_raw(o, " \xc2\xb7 ");
	ee_out_text_cut(o, model[0] ? model : "(no model)", 40);
	if (html_interval(ci, &lo, &hi)) {
		ee_out_raw(o, " (CI ");
		ee_out_num(o, lo, 3);
		ee_out_raw(o, "\xe2\x80\x93");
		ee_out_num(o, hi, 3);
		ee_out_raw(o, ")");
	}
	ee_out_raw(o, "</span></div>\n");
}

#define MODEL_CARDS 8 /* models with cards; the model table lists them all */

/* Several models: each one's pass@k and mean score, never a figure
 * pooled over them (the summary has none). */
static void model_cards(struct ee_out *o, const json_t *s)
{
	const json_t *ms = json_object_get(s, "models");
	const char *name, *k;
	json_t *m, *v;
	char figure[48];
	size_t shown = 0;

	json_object_foreach ((json_t *)ms, name, m) {
		if (shown++ == MODEL_CARDS)
			break;
		const json_t *ci = json_object_get(m, "pass_at_k_ci");
		json_object_foreach (json_object_get(m, "pass_at_k"), k, v) {
			snprintf(figure, sizeof(figure), "pass@%.20s", k);
			model_card(o, figure, name, json_number_value(v), json_object_get(ci, k));
		}
		model_card(o, "mean score", name, html_num_at(m, "mean_score"),
		           json_object_get(m, "mean_score_ci"));
	}
	if (json_object_size(ms) > MODEL_CARDS)
		ee_out_fmt(o, "<div class=\"card\"><b>%zu</b><span>more models (see by model)</span></div>\n",
		           json_object_size(ms) - MODEL_CARDS);
}

static void figures(struct ee_out *o, const json_t *s)
{
	const json_t *pk = json_object_get(s, "pass_at_k"), *ci = json_object_get(s, "pass_at_k_ci");
	const json_t *lint = json_object_get(s, "lint"), *comp = json_object_get(s, "composite");
	const char *k;
	json_t *v;
	char name[48];

	ee_out_raw(o, "<div class=\"cards\">\n");
	card(o, "tasks", html_num_at(s, "tasks"), 0, NULL);
	card(o, "samples", html_num_at(s, "samples"), 0, NULL);
	if (json_object_size(json_object_get(s, "models")) > 1) {
		model_cards(o, s);
	} else {
		json_object_foreach ((json_t *)pk, k, v) {
			snprintf(name, sizeof(name), "pass@%.20s", k);
			card(o, name, json_number_value(v), 3, json_object_get(ci, k));
		}
		card(o, "mean score", html_num_at(s, "mean_score"), 3, json_object_get(s, "mean_score_ci"));
		card(o, "median task score", html_num_at(s, "median_task_score"), 3, NULL);
		card(o, "p10 task score", html_num_at(s, "p10_task_score"), 3, NULL);
	}
	card(o, "lint pass rate", html_num_at(lint, "pass_rate"), 3, NULL);
	card(o, "composite", html_num_at(comp, "value"), 3, NULL);
	card(o, "wall time, s", html_num_at(s, "wall_s"), 1, NULL);
	ee_out_raw(o, "</div>\n<nav><a href=\"#pass-at-k\">pass@k</a>");
	if (html_has_classes(s))
		ee_out_raw(o, "<a href=\"#classes\">classes</a>");
	if (json_object_size(json_object_get(s, "models")) > 0)
		ee_out_raw(o, "<a href=\"#models\">models</a>");
	ee_out_raw(o, "<a href=\"#statuses\">statuses</a><a href=\"#scores\">scores</a>"
	              "<a href=\"#resources\">time and memory</a><a href=\"#tasks\">tasks</a>"
	              "<a href=\"#failures\">failures</a></nav>\n");
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
	html_charts(o, r, s);
	ee_out_raw(o, "</div>\n");
	if (opt->trends)
		html_trends(o, opt);
	html_tasks(o, r);
	ee_out_raw(o, "</main>\n<script>");
	ee_out_raw(o, SCRIPT);
	ee_out_raw(o, "</script>\n</body></html>\n");
	json_decref(own);
	if (ee_out_failed(o))
		return ee_fail(err, EE_ERR_USAGE, "out of memory, or the page would pass %zu MiB",
		               o->buf.cap >> 20);
	return 0;
}
