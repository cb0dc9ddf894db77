/* compare_print.c - the comparison report as tables for people (compare.h).
 *
 * Reads only the report JSON, as summary_print.c reads only the summary:
 * what is missing prints as "-". Sections: the two sides, the metrics
 * (gated ones marked, with the gate's verdict), the classes, the paired
 * tasks when there are any, and a last line with the verdict.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "results/compare.h"

#define CLASS_W 24

static void put_num(FILE *out, const json_t *v, int w)
{
	if (json_is_number(v))
		fprintf(out, " %*.4f", w - 1, json_number_value(v));
	else
		fprintf(out, " %*s", w - 1, "-");
}

static void put_delta(FILE *out, const json_t *v, int w)
{
	if (json_is_number(v))
		fprintf(out, " %+*.4f", w - 1, json_number_value(v));
	else
		fprintf(out, " %*s", w - 1, "-");
}

static void put_ci(FILE *out, const json_t *ci)
{
	char text[64] = "-";

	if (json_array_size(ci) == 2)
		snprintf(text, sizeof(text), "[%.4f, %.4f]", json_number_value(json_array_get(ci, 0)),
		         json_number_value(json_array_get(ci, 1)));
	fprintf(out, "  %-16s", text);
}

static const char *overlap_text(const json_t *v)
{
	return json_is_boolean(v) ? (json_is_true(v) ? "overlap" : "apart") : "-";
}

static const char *str(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));
	return s ? s : "?";
}

/* s in w columns, cut with "..." (bytes; class names are mostly ASCII). */
static void put_name(FILE *out, const char *s, int w)
{
	if ((int)strlen(s) <= w)
		fprintf(out, "%-*s", w, s);
	else
		fprintf(out, "%.*s...", w - 3, s);
}

static void print_sides(FILE *out, const json_t *r)
{
	static const char *const keys[2] = { "base", "new" };
	static const char *const labels[2] = { "BASE", "NEW " };

	for (int i = 0; i < 2; i++) {
		const json_t *s = json_object_get(r, keys[i]);
		fprintf(out, "%s  %s (%s", labels[i], str(s, "source"), str(s, "kind"));
		if (json_is_integer(json_object_get(s, "tasks")))
			fprintf(out, ", %lld tasks",
			        (long long)json_integer_value(json_object_get(s, "tasks")));
		fprintf(out, ")\n");
	}
	const json_t *g;
	size_t i;
	fprintf(out, "gate  epsilon %.4f, gated:", json_number_value(json_object_get(r, "epsilon")));
	json_array_foreach (json_object_get(r, "gated"), i, g)
		fprintf(out, "%s %s", i ? "," : "", json_string_value(g));
	fprintf(out, "\n");
}

/* The paired-task counts of the report's "tasks". */
struct pairing {
	long long paired;
	size_t only_base, only_new;
};

static struct pairing pairing_of(const json_t *t)
{
	return (struct pairing){ (long long)json_integer_value(json_object_get(t, "paired")),
		                 json_array_size(json_object_get(t, "only_base")),
		                 json_array_size(json_object_get(t, "only_new")) };
}

/* Said only when the sides ran on different data (allowed). */
static void print_data_set(FILE *out, const json_t *r)
{
	const json_t *d = json_object_get(r, "data_set");
	struct pairing p = pairing_of(json_object_get(r, "tasks"));

	if (!json_is_false(json_object_get(d, "same")))
		return;
	if (json_is_true(json_object_get(d, "paired_only")))
		fprintf(out,
		        "data  different data sets: compared on %lld paired tasks; %zu only in BASE, %zu "
		        "only in NEW\n",
		        p.paired, p.only_base, p.only_new);
	else
		fprintf(out, "data  different data sets: summaries cannot be paired; each side's metrics are "
		             "over its own tasks\n");
}

static void print_metrics(FILE *out, const json_t *r)
{
	const json_t *level = json_object_get(r, "ci_level"), *row;
	char ci[48] = "";
	size_t i;

	if (json_is_number(level))
		snprintf(ci, sizeof(ci), "%g%% ", 100.0 * json_number_value(level));
	fprintf(out, "\n%-16s %9s %9s %9s  %-16s  %-16s  %-7s  %s\n", "metric", "base", "new", "delta",
	        "base CI", "new CI", "CIs", "gate");
	json_array_foreach (json_object_get(r, "metrics"), i, row) {
		int gated = json_is_true(json_object_get(row, "gated"));
		fprintf(out, "%-16s", str(row, "metric"));
		put_num(out, json_object_get(row, "base"), 10);
		put_num(out, json_object_get(row, "new"), 10);
		put_delta(out, json_object_get(row, "delta"), 10);
		put_ci(out, json_object_get(row, "base_ci"));
		put_ci(out, json_object_get(row, "new_ci"));
		fprintf(out, "  %-7s  %s\n", overlap_text(json_object_get(row, "ci_overlap")),
		        !gated                                            ? ""
		        : json_is_true(json_object_get(row, "regressed")) ? "FAIL"
		                                                          : "ok");
	}
	fprintf(out,
	        "(CI: %sbootstrap interval over tasks, when the summary has one; CIs \"overlap\": the two\n"
	        " intervals share values, so the difference may be noise)\n",
	        ci);
}

static void print_classes(FILE *out, const json_t *r)
{
	const json_t *classes = json_object_get(r, "classes"), *rows, *row;
	const char *name;
	size_t i;

	if (json_object_size(classes) == 0)
		return;
	fprintf(out, "\n%-*s %-16s %9s %9s %9s  %s\n", CLASS_W, "class", "metric", "base", "new", "delta",
	        "CIs");
	json_object_foreach ((json_t *)classes, name, rows) {
		json_array_foreach (rows, i, row) {
			put_name(out, i == 0 ? (name[0] ? name : "(none)") : "", CLASS_W);
			fprintf(out, " %-16s", str(row, "metric"));
			put_num(out, json_object_get(row, "base"), 10);
			put_num(out, json_object_get(row, "new"), 10);
			put_delta(out, json_object_get(row, "delta"), 10);
			fprintf(out, "  %s\n", overlap_text(json_object_get(row, "ci_overlap")));
		}
	}
}

static void print_ids(FILE *out, const char *title, const json_t *ids)
{
	const json_t *id;
	size_t i;

	fprintf(out, "%s: %zu\n", title, json_array_size(ids));
	json_array_foreach (ids, i, id)
		fprintf(out, "  %s\n", json_string_value(id));
}

static void print_tasks(FILE *out, const json_t *r, size_t max_changed)
{
	const json_t *t = json_object_get(r, "tasks"), *changed = json_object_get(t, "changed"), *row;
	size_t i;

	if (!json_is_object(t)) {
		fprintf(out, "\ntasks: not compared (a paired comparison needs two results files)\n");
		return;
	}
	struct pairing p = pairing_of(t);
	fprintf(out,
	        "\ntasks: %lld in both, %zu only in BASE, %zu only in NEW (a task passes when at least half\n"
	        "of its samples pass)\n",
	        p.paired, p.only_base, p.only_new);
	print_ids(out, "pass -> fail", json_object_get(t, "pass_to_fail"));
	print_ids(out, "fail -> pass", json_object_get(t, "fail_to_pass"));
	fprintf(out, "pass rate changed: %zu (worst first)\n", json_array_size(changed));
	json_array_foreach (changed, i, row) {
		if (i == max_changed) {
			fprintf(out, "  ... %zu more (--json lists all)\n",
			        json_array_size(changed) - max_changed);
			break;
		}
		fprintf(out, " ");
		put_delta(out, json_object_get(row, "delta"), 8);
		fprintf(out, "  %.4f -> %.4f  %s\n", json_number_value(json_object_get(row, "base")),
		        json_number_value(json_object_get(row, "new")), str(row, "task_id"));
	}
}

static void print_verdict(FILE *out, const json_t *r)
{
	const json_t *regs = json_object_get(r, "regressions"), *v;
	double eps = json_number_value(json_object_get(r, "epsilon"));
	size_t i;

	if (json_array_size(regs) == 0) {
		fprintf(out, "\nverdict: ok: no gated metric got worse by more than epsilon %.4f\n", eps);
		return;
	}
	fprintf(out, "\nverdict: REGRESSION:");
	json_array_foreach (regs, i, v)
		fprintf(out, "%s %s", i ? "," : "", json_string_value(v));
	fprintf(out, " got worse by more than epsilon %.4f\n", eps);
}

void ee_compare_print(const json_t *report, size_t max_changed, FILE *out)
{
	print_sides(out, report);
	print_data_set(out, report);
	print_metrics(out, report);
	print_classes(out, report);
	print_tasks(out, report, max_changed);
	print_verdict(out, report);
}
