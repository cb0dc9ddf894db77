/* html_tasks.c - the report page's task table and its section per task
 * (see html_int.h): each task's figures, then its kept failures with the
 * failing tests, the detail and the program. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_int.h"
#include "report/out.h"
#include "report/report_int.h"
#include "verdict/record.h"

#define ID_CHARS 200 /* of a task id in the table and headings */

/* ---- the table and the tasks ----------------------------------------------- */

static void table(struct ee_out *o, const struct ee_report *r)
{
	html_open_panel(o, "tasks", "tasks");
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
		html_status_badge(o, t->worst);
		ee_out_raw(o, "</td></tr>\n");
	}
	ee_out_raw(o, "</tbody></table>\n");
	html_note(o, "Click a column's name to sort by it; a task's name leads to its failing samples.");
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
	html_status_badge(o, status_index(json_string_value(json_object_get(f, "status"))));
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
	html_status_badge(o, t->worst);
	ee_out_raw(o, " \xc2\xb7 <a href=\"#tasks\">the table</a></p>\n");
	for (size_t k = 0; k < shown; k++)
		failure(o, json_array_get(t->shown, k));
	if (t->failures > shown)
		ee_out_fmt(o, "<p class=\"note\">%lu more failing sample%s not shown.</p>\n",
		           t->failures - shown, t->failures - shown == 1 ? "" : "s");
	ee_out_raw(o, "</section>\n");
}

static void task_sections(struct ee_out *o, const struct ee_report *r)
{
	html_open_panel(o, "failures", "failing samples by task");
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

void html_tasks(struct ee_out *o, const struct ee_report *r)
{
	table(o, r);
	task_sections(o, r);
}
