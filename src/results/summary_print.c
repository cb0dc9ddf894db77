/* summary_print.c - the summary as a table for people (summary.h).
 *
 * Reads only the summary JSON, so `eval` and `metrics` print alike and a
 * saved summary prints the same again. Anything missing prints as "-", and
 * input of any other shape prints as mostly dashes, never crashes.
 * Widths count characters (code points); long names are cut with "...".
 * Bootstrap intervals follow their value ("95% CI [lo, hi]"); the class
 * table shows the interval of the first pass@k only, to stay narrow. The
 * model table (summaries of more than one model) is drawn as the class
 * table, followed by each model's statuses and details.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict/reward.h"
#include "results/summary.h"

#define LABEL_W       20
#define NAME_MAX_W    40
#define DETAILS_SHOWN 25
#define MODEL_DETAILS 5 /* details shown per model */

static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* s left-aligned in w columns, cut with "..." when longer. */
static void put_name(FILE *out, const char *s, size_t w)
{
	size_t tw = text_width(s), shown = 0;

	if (tw <= w) {
		fprintf(out, "%s%*s", s, (int)(w - tw), "");
		return;
	}
	const char *p = s;
	for (; *p && shown < w - 3; p++) {
		shown += ((unsigned char)*p & 0xc0) != 0x80;
		if (shown == w - 3) /* keep the continuation bytes of the last character */
			while (((unsigned char)p[1] & 0xc0) == 0x80)
				p++;
	}
	fprintf(out, "%.*s...", (int)(p - s), s);
}

/* A number right-aligned in w columns with prec decimals; "-" if absent. */
static void put_num(FILE *out, const json_t *v, int w, int prec)
{
	if (json_is_integer(v))
		fprintf(out, " %*lld", w - 1, (long long)json_integer_value(v));
	else if (json_is_number(v))
		fprintf(out, " %*.*f", w - 1, prec, json_number_value(v));
	else
		fprintf(out, " %*s", w - 1, "-");
}

static void put_percent(FILE *out, double part, double whole, int w)
{
	if (whole > 0)
		fprintf(out, " %*.1f%%", w - 2, 100.0 * part / whole);
	else
		fprintf(out, " %*s", w - 1, "-");
}

static const char *class_label(const char *name)
{
	return name[0] ? name : "(none)";
}

/* The widest name of obj's keys, between the header's width and the cap. */
static size_t name_width(const json_t *obj, const char *header, int classes)
{
	size_t w = strlen(header);
	const char *key;
	json_t *val;

	json_object_foreach ((json_t *)obj, key, val) {
		size_t kw = text_width(classes ? class_label(key) : key);
		w = kw > w ? kw : w;
	}
	return w < NAME_MAX_W ? w : NAME_MAX_W;
}

static void print_line(FILE *out, const char *label, const json_t *v, int prec, const char *unit)
{
	fprintf(out, "  %-*s", LABEL_W, label);
	put_num(out, v, 1, prec);
	fprintf(out, "%s\n", json_is_number(v) && unit ? unit : "");
}

/* "violations  3 samples (2 escape-class): network 3, limit 1" */
static void print_violations(FILE *out, const json_t *v)
{
	const char *cls;
	json_t *n;
	const char *sep = ": ";

	if (!v)
		return;
	fprintf(out, "  %-*s %lld samples (%lld escape-class)", LABEL_W, "violations",
	        (long long)json_integer_value(json_object_get(v, "samples")),
	        (long long)json_integer_value(json_object_get(v, "escape_samples")));
	json_object_foreach ((json_t *)json_object_get(v, "by_class"), cls, n) {
		fprintf(out, "%s%s %lld", sep, cls, (long long)json_integer_value(n));
		sep = ", ";
	}
	fputc('\n', out);
}

/* "[lo, hi]" of an interval; "-" when ci is not two numbers. */
static void format_ci(const json_t *ci, char *buf, size_t size)
{
	const json_t *lo = json_array_get(ci, 0), *hi = json_array_get(ci, 1);

	if (json_array_size(ci) == 2 && json_is_number(lo) && json_is_number(hi))
		snprintf(buf, size, "[%.4f, %.4f]", json_number_value(lo), json_number_value(hi));
	else
		snprintf(buf, size, "-");
}

/* "95%" from the summary's bootstrap level ("" when absent). */
static void level_label(const json_t *sum, char *buf, size_t size)
{
	const json_t *level = json_object_get(json_object_get(sum, "bootstrap"), "level");

	buf[0] = '\0';
	if (json_is_number(level) && json_number_value(level) > 0 && json_number_value(level) < 1)
		snprintf(buf, size, "%g%%", 100.0 * json_number_value(level));
}

/* A value's line, with its interval when the summary has one. */
static void print_with_ci(FILE *out, const char *label, const json_t *v, const json_t *ci, const char *level)
{
	char text[64];

	fprintf(out, "  %-*s", LABEL_W, label);
	put_num(out, v, 1, 4);
	if (json_is_number(v) && json_is_array(ci)) {
		format_ci(ci, text, sizeof(text));
		fprintf(out, "   %s%sCI %s", level, level[0] ? " " : "", text);
	}
	fprintf(out, "\n");
}

static void print_pass_at_k(FILE *out, const json_t *sum)
{
	const json_t *cis = json_object_get(sum, "pass_at_k_ci");
	const char *key;
	json_t *val;
	char label[48], level[16];

	level_label(sum, level, sizeof(level));
	json_object_foreach (json_object_get(sum, "pass_at_k"), key, val) {
		snprintf(label, sizeof(label), "pass@%s", key);
		print_with_ci(out, label, val, json_object_get(cis, key), level);
	}
	size_t i;
	json_array_foreach (json_object_get(sum, "pass_at_k_dropped"), i, val) {
		snprintf(label, sizeof(label), "pass@%lld",
		         (long long)json_integer_value(json_object_get(val, "k")));
		const char *why = json_string_value(json_object_get(val, "reason"));
		fprintf(out, "  %-*s dropped: %s\n", LABEL_W, label, why ? why : "?");
	}
}

static void print_overall(FILE *out, const json_t *sum)
{
	const json_t *res = json_object_get(sum, "resources");
	char level[16];

	fprintf(out, "summary\n");
	print_line(out, "tasks", json_object_get(sum, "tasks"), 0, NULL);
	if (json_is_integer(json_object_get(sum, "tasks_in_file"))) {
		char attempted[64];
		snprintf(attempted, sizeof(attempted), ", attempted %lld%s",
		         (long long)json_integer_value(json_object_get(sum, "tasks_attempted")),
		         json_is_true(json_object_get(sum, "attempted_only")) ? " (--attempted-only)" : "");
		print_line(out, "tasks in file", json_object_get(sum, "tasks_in_file"), 0, attempted);
	}
	print_line(out, "samples", json_object_get(sum, "samples"), 0, NULL);
	if (json_object_get(sum, "samples_without_task"))
		print_line(out, "samples without task", json_object_get(sum, "samples_without_task"), 0,
		           " (invalid sample lines)");
	const json_t *infra = json_object_get(sum, "infra_errors");
	if (json_integer_value(infra) > 0)
		print_line(
		        out, "infra errors", infra, 0,
		        " (sandbox failed: left out of samples and pass@k; `execeval compare` refuses them)");
	if (json_object_size(json_object_get(sum, "models")) > 1) {
		/* a figure over tasks pooled across models would be no model's */
		fprintf(out, "  %-*s per model, below (the records hold %zu models)\n", LABEL_W,
		        "pass@k, scores", json_object_size(json_object_get(sum, "models")));
	} else {
		print_pass_at_k(out, sum);
		level_label(sum, level, sizeof(level));
		print_with_ci(out, "mean score", json_object_get(sum, "mean_score"),
		              json_object_get(sum, "mean_score_ci"), level);
		print_line(out, "median task score", json_object_get(sum, "median_task_score"), 4, NULL);
		print_line(out, "p10 task score", json_object_get(sum, "p10_task_score"), 4, NULL);
	}
	/* A reward other than binary's (whose mean the pass rate already says). */
	const json_t *reward = json_object_get(sum, "reward");
	const char *formula = json_string_value(json_object_get(reward, "formula"));
	struct ee_reward binary;
	ee_reward_default(&binary);
	if (formula && strcmp(formula, ee_reward_text(&binary)) != 0) {
		char sd[64];
		const json_t *d = json_object_get(reward, "sd");
		snprintf(sd, sizeof(sd), ", sd %.4f (%.40s)", json_is_number(d) ? json_number_value(d) : 0.0,
		         formula);
		print_line(out, "reward mean", json_object_get(reward, "mean"), 4, sd);
	}
	print_violations(out, json_object_get(sum, "violations"));
	const json_t *lint = json_object_get(sum, "lint"), *comp = json_object_get(sum, "composite");
	if (lint)
		print_line(out, "lint pass rate", json_object_get(lint, "pass_rate"), 4, NULL);
	if (comp) {
		const char *why = json_string_value(json_object_get(comp, "error"));
		print_line(out, "composite", json_object_get(comp, "value"), 4, NULL);
		fprintf(out, "  %-*s %s%s%s\n", LABEL_W, "",
		        json_string_value(json_object_get(comp, "formula")), why ? ": " : "", why ? why : "");
	}
	if (json_object_get(sum, "wall_s")) {
		int stamps = json_is_true(json_object_get(sum, "wall_from_timestamps"));
		print_line(out, "wall time", json_object_get(sum, "wall_s"), 2,
		           stamps ? " s (first start to last finish of the records)" : " s");
		print_line(out, "throughput", json_object_get(sum, "throughput_per_s"), 2, " samples/s");
	}
	if (json_object_get(res, "wall_ms_mean"))
		print_line(out, "sandbox wall, mean", json_object_get(res, "wall_ms_mean"), 1, " ms");
	if (json_object_get(res, "cpu_ms_mean"))
		print_line(out, "sandbox cpu, mean", json_object_get(res, "cpu_ms_mean"), 1, " ms");
	if (json_is_number(json_object_get(res, "peak_rss_kb_max"))) {
		json_t *mib = json_real(json_number_value(json_object_get(res, "peak_rss_kb_max")) / 1024.0);
		print_line(out, "peak RSS, max", mib, 1, " MiB");
		json_decref(mib);
	}
}

/* The k of a pass_at_k key ("10"), 0 when it is not one. */
static unsigned long key_k(const char *key)
{
	char *end;
	unsigned long k = strtoul(key, &end, 10);

	return *key >= '1' && *key <= '9' && !*end ? k : 0;
}

size_t ee_summary_models_ks(const json_t *summary, unsigned long *ks, size_t max)
{
	const char *name, *key;
	json_t *m, *unused;
	size_t n = 0;

	json_object_foreach (json_object_get(summary, "models"), name, m) {
		json_object_foreach (json_object_get(m, "pass_at_k"), key, unused) {
			unsigned long k = key_k(key);
			size_t at = 0;
			while (at < n && ks[at] < k)
				at++;
			if (!k || (at < n && ks[at] == k) || n == max)
				continue;
			memmove(ks + at + 1, ks + at, (n - at) * sizeof(*ks));
			ks[at] = k;
			n++;
		}
	}
	return n;
}

/* "5" or "3-5": the samples per task of a model block. */
static void per_task_cell(const json_t *b, char *buf, size_t size)
{
	const json_t *r = json_object_get(b, "samples_per_task");
	const json_t *lo = json_object_get(r, "min"), *hi = json_object_get(r, "max");

	if (!json_is_integer(lo) || !json_is_integer(hi))
		snprintf(buf, size, "-");
	else if (json_integer_value(lo) == json_integer_value(hi))
		snprintf(buf, size, "%lld", (long long)json_integer_value(lo));
	else
		snprintf(buf, size, "%lld-%lld", (long long)json_integer_value(lo),
		         (long long)json_integer_value(hi));
}

#define MAX_COLUMN_KS 16

/* The blocks of sum[key] ("classes" or "models"), one row each, named
 * under header. The columns: the whole set's ks, or for models the ks any
 * model reports (each its own, "-" where it has too few samples), and its
 * samples per task; without figures (the classes of a summary of several
 * models: they would pool them) only the counts. */
static void print_blocks(FILE *out, const json_t *sum, const char *key_name, const char *header)
{
	const json_t *classes = json_object_get(sum, key_name);
	int models = strcmp(key_name, "models") == 0;
	int figures = models || json_object_size(json_object_get(sum, "models")) < 2;
	size_t w = name_width(classes, header, 1), nk = 0;
	unsigned long ks[MAX_COLUMN_KS];
	const char *key;
	json_t *val, *unused;
	char level[16], text[64], k[24];

	if (json_object_size(classes) == 0)
		return;
	if (models) {
		nk = ee_summary_models_ks(sum, ks, MAX_COLUMN_KS);
	} else if (figures) {
		json_object_foreach (json_object_get(sum, "pass_at_k"), key, unused)
			if (nk < MAX_COLUMN_KS && key_k(key))
				ks[nk++] = key_k(key);
	}
	int ci = nk > 0 &&
	         json_object_get(models ? json_object_iter_value(json_object_iter((json_t *)classes)) : sum,
	                         "pass_at_k_ci");
	level_label(sum, level, sizeof(level));
	fprintf(out, "\n");
	put_name(out, header, w);
	fprintf(out, "   tasks  samples%s", models ? "   n/task" : "");
	for (size_t i = 0; i < nk; i++) {
		snprintf(k, sizeof(k), "%lu", ks[i]);
		fprintf(out, " %9s%s", "pass@", k);
	}
	if (figures)
		fprintf(out, "     mean   median      p10");
	if (ci)
		fprintf(out, "   pass@%lu %s CI", ks[0], level);
	fprintf(out, "\n");
	json_object_foreach ((json_t *)classes, key, val) {
		put_name(out, class_label(key), w);
		put_num(out, json_object_get(val, "tasks"), 8, 0);
		put_num(out, json_object_get(val, "samples"), 9, 0);
		if (models) {
			per_task_cell(val, text, sizeof(text));
			fprintf(out, " %8s", text);
		}
		for (size_t i = 0; i < nk; i++) {
			snprintf(k, sizeof(k), "%lu", ks[i]);
			put_num(out, json_object_get(json_object_get(val, "pass_at_k"), k),
			        10 + (int)strlen(k), 4);
		}
		if (figures) {
			put_num(out, json_object_get(val, "mean_score"), 9, 4);
			put_num(out, json_object_get(val, "median_task_score"), 9, 4);
			put_num(out, json_object_get(val, "p10_task_score"), 9, 4);
		}
		if (ci) {
			snprintf(k, sizeof(k), "%lu", ks[0]);
			format_ci(json_object_get(json_object_get(val, "pass_at_k_ci"), k), text,
			          sizeof(text));
			fprintf(out, "   %s", text);
		}
		fprintf(out, "\n");
	}
}

/* Under the model table: the ks a model does not report, and why. */
static void print_models_dropped(FILE *out, const json_t *sum)
{
	const char *name;
	json_t *m, *d;
	size_t i;

	json_object_foreach (json_object_get(sum, "models"), name, m) {
		json_array_foreach (json_object_get(m, "pass_at_k_dropped"), i, d) {
			const char *why = json_string_value(json_object_get(d, "reason"));
			fprintf(out, "  %s: pass@%lld dropped: %s\n", class_label(name),
			        (long long)json_integer_value(json_object_get(d, "k")), why ? why : "?");
		}
	}
}

static void print_tiers(FILE *out, const json_t *sum)
{
	const json_t *tiers = json_object_get(sum, "tiers");
	size_t w = name_width(tiers, "tier", 0);
	const char *key;
	json_t *val;

	if (json_object_size(tiers) == 0)
		return;
	fprintf(out, "\n");
	put_name(out, "tier", w);
	fprintf(out, "    tests   passed  pass rate  samples  all passed\n");
	json_object_foreach ((json_t *)tiers, key, val) {
		put_name(out, key, w);
		put_num(out, json_object_get(val, "tests"), 9, 0);
		put_num(out, json_object_get(val, "tests_passed"), 9, 0);
		put_percent(out, json_number_value(json_object_get(val, "tests_passed")),
		            json_number_value(json_object_get(val, "tests")), 11);
		put_num(out, json_object_get(val, "samples"), 9, 0);
		put_percent(out, json_number_value(json_object_get(val, "samples_all_passed")),
		            json_number_value(json_object_get(val, "samples")), 12);
		fprintf(out, "\n");
	}
}

/* One line: how many tests each party judged, so a run's trustless share
 * shows at a glance ("sandbox": in the candidate's own interpreter). */
static void print_judged_by(FILE *out, const json_t *sum)
{
	const json_t *by = json_object_get(sum, "judged_by");
	const char *key;
	json_t *val;
	double total = 0;

	json_object_foreach ((json_t *)by, key, val)
		total += json_number_value(val);
	if (total <= 0)
		return;
	fprintf(out, "\ntests judged by:");
	json_object_foreach ((json_t *)by, key, val)
		fprintf(out, " %s %.0f (%.1f%%)", key, json_number_value(val),
		        100.0 * json_number_value(val) / total);
	fprintf(out, "\n");
}

/* A table of counts with their share of the samples; at most max rows. */
static void print_counts(FILE *out, const json_t *counts, const char *header, double samples, size_t max)
{
	size_t w = name_width(counts, header, 0), row = 0;
	const char *key;
	json_t *val;

	if (json_object_size(counts) == 0)
		return;
	fprintf(out, "\n");
	put_name(out, header, w);
	fprintf(out, "    count    share\n");
	json_object_foreach ((json_t *)counts, key, val) {
		if (row++ == max)
			break;
		put_name(out, key, w);
		put_num(out, val, 9, 0);
		put_percent(out, json_number_value(val), samples, 9);
		fprintf(out, "\n");
	}
	if (json_object_size(counts) > max)
		fprintf(out, "... %zu more in the JSON summary\n", json_object_size(counts) - max);
}

/* The statuses, syntax_error followed by its split by detail: the status
 * also counts programs that parse but raise while being imported, and
 * "12% syntax errors" must not be quoted for 7% that do not parse. */
static void print_statuses(FILE *out, const json_t *sum, double samples)
{
	static const char *const split[][2] = { { "syntax error", "  does not parse" },
		                                { "import error", "  fails at import" },
		                                { "(other)", "  other detail" } };
	const json_t *counts = json_object_get(sum, "statuses");
	const json_t *by_detail = json_object_get(sum, "syntax_error_details");
	int show = json_number_value(json_object_get(counts, "syntax_error")) > 0 &&
	           json_object_size(by_detail) > 0;
	size_t w = name_width(counts, "status", 0);
	const char *key;
	json_t *val;

	if (json_object_size(counts) == 0)
		return;
	if (show && w < strlen(split[1][1]))
		w = strlen(split[1][1]);
	fprintf(out, "\n");
	put_name(out, "status", w);
	fprintf(out, "    count    share\n");
	json_object_foreach ((json_t *)counts, key, val) {
		put_name(out, key, w);
		put_num(out, val, 9, 0);
		put_percent(out, json_number_value(val), samples, 9);
		fprintf(out, "\n");
		for (size_t i = 0;
		     show && strcmp(key, "syntax_error") == 0 && i < sizeof(split) / sizeof(split[0]); i++) {
			const json_t *n = json_object_get(by_detail, split[i][0]);
			if (!n)
				continue;
			put_name(out, split[i][1], w);
			put_num(out, n, 9, 0);
			put_percent(out, json_number_value(n), samples, 9);
			fprintf(out, "\n");
		}
	}
}

/* Per model: its statuses in one row, then its most frequent details. */
static void print_model_outcomes(FILE *out, const json_t *sum)
{
	const json_t *models = json_object_get(sum, "models"), *first;
	size_t w = name_width(models, "model", 1);
	const char *key, *status;
	json_t *val, *n;

	first = json_object_get(json_object_iter_value(json_object_iter((json_t *)models)), "statuses");
	if (!first)
		return;
	fprintf(out, "\n");
	put_name(out, "model", w);
	json_object_foreach ((json_t *)first, status, n)
		fprintf(out, " %*s", (int)strlen(status) > 8 ? (int)strlen(status) : 8, status);
	fprintf(out, "\n");
	json_object_foreach ((json_t *)models, key, val) {
		put_name(out, class_label(key), w);
		json_object_foreach ((json_t *)first, status, n)
			put_num(out, json_object_get(json_object_get(val, "statuses"), status),
			        ((int)strlen(status) > 8 ? (int)strlen(status) : 8) + 1, 0);
		fprintf(out, "\n");
	}
	json_object_foreach ((json_t *)models, key, val) {
		size_t size = strlen(class_label(key)) + 16;
		char *header = malloc(size);
		if (!header)
			return;
		snprintf(header, size, "detail, %s", class_label(key));
		print_counts(out, json_object_get(val, "details"), header,
		             json_number_value(json_object_get(val, "samples")), MODEL_DETAILS);
		free(header);
	}
}

/* One line: what produced the summary (eval only; metrics cannot know). */
static void print_environment(FILE *out, const json_t *env)
{
	const json_t *py = json_object_get(env, "interpreter");
	const char *version = json_string_value(json_object_get(py, "version"));
	const char *path = json_string_value(json_object_get(py, "path"));

	const json_t *packages = json_object_get(env, "packages");
	const char *fingerprint = json_string_value(json_object_get(packages, "sha256"));
	char pk[64] = "";

	if (!env)
		return;
	if (json_is_true(json_object_get(packages, "stdlib_only")))
		snprintf(pk, sizeof(pk), ", 0 packages (--packages stdlib: stdlib only)");
	else if (fingerprint) /* what candidates could import (results/environment.h) */
		snprintf(pk, sizeof(pk), ", %lld packages (fingerprint %.8s)",
		         (long long)json_integer_value(json_object_get(packages, "count")), fingerprint);
	fprintf(out, "\nenvironment: execeval %s, python %s (%s)%s, isolation %s%s, kernel %s\n",
	        json_string_value(json_object_get(env, "execeval_version")), version ? version : "unknown",
	        path ? path : "unknown", pk, json_string_value(json_object_get(env, "isolation")),
	        json_is_true(json_object_get(env, "weak_limits")) ? " (weak limits)" : "",
	        json_string_value(json_object_get(env, "kernel")));
}

/* Generated tests and the canonical tier's pass@k (summary_gen.c). */
static void print_generated(FILE *out, const json_t *sum)
{
	const json_t *g = json_object_get(sum, "generated"), *seed = json_object_get(g, "seed");
	const char *key;
	json_t *val;

	if (!json_is_object(g))
		return;
	fprintf(out, "\n");
	if (json_integer_value(json_object_get(g, "tasks")) > 0) {
		fprintf(out, "generated tests: %lld over %lld tasks, %lld inputs dropped",
		        (long long)json_integer_value(json_object_get(g, "tests")),
		        (long long)json_integer_value(json_object_get(g, "tasks")),
		        (long long)json_integer_value(json_object_get(g, "dropped")));
		if (json_is_integer(seed))
			fprintf(out, ", seed %lld", (long long)json_integer_value(seed));
		else if (json_is_string(seed))
			fprintf(out, ", seed %s", json_string_value(seed));
		fprintf(out, "\n");
	}
	const json_t *cal = json_object_get(g, "calibration");
	if (json_is_object(cal)) /* --time-floor, --time-factor */
		fprintf(out, "calibrated limits: max(%g s, %g x the reference)\n",
		        json_number_value(json_object_get(cal, "floor_s")),
		        json_number_value(json_object_get(cal, "factor")));
	else if (json_is_string(cal))
		fprintf(out, "calibrated limits: mixed\n");
	const json_t *models = json_object_get(sum, "models"), *m;
	const char *name;
	if (json_object_size(models) < 2) {
		fprintf(out, "canonical tier only:");
		json_object_foreach ((json_t *)json_object_get(g, "pass_at_k_canonical"), key, val)
			fprintf(out, "  pass@%s %.4f", key, json_number_value(val));
		fprintf(out, "\n");
		return;
	}
	fprintf(out, "canonical tier only, per model:\n"); /* pooled, it would be no model's */
	json_object_foreach ((json_t *)models, name, m) {
		fprintf(out, "  %s:", name[0] ? name : "(none)");
		json_object_foreach (json_object_get(json_object_get(m, "generated"), "pass_at_k_canonical"),
		                     key, val)
			fprintf(out, "  pass@%s %.4f", key, json_number_value(val));
		fprintf(out, "\n");
	}
}

void ee_summary_print(const json_t *summary, FILE *out)
{
	double samples = json_number_value(json_object_get(summary, "samples"));

	print_overall(out, summary);
	print_blocks(out, summary, "classes", "class");
	print_blocks(out, summary, "models", "model");
	print_models_dropped(out, summary);
	print_tiers(out, summary);
	print_generated(out, summary);
	print_judged_by(out, summary);
	print_statuses(out, summary, samples);
	print_counts(out, json_object_get(summary, "details"), "detail", samples, DETAILS_SHOWN);
	print_model_outcomes(out, summary);
	print_environment(out, json_object_get(summary, "environment"));
}
