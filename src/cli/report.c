/* report.c - `execeval report`: a results file as one HTML page.
 *
 * Reads the results file as `execeval metrics` does (cli_read_results),
 * gathers it (src/report/report.c), writes the page into memory (capped at
 * EE_REPORT_MAX_BYTES) and then to -o in one go, so a failed run leaves no
 * half page behind it. --history DB adds the trends over the history's latest
 * runs (pass@k, mean score, lint pass rate, timeout rate), one per data set.
 */
#include <getopt.h>
#include <math.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "results/figures.h"
#include "history/history.h"
#include "base/err.h"
#include "results/outpath.h"
#include "report/out.h"
#include "report/svg.h"
#include "report/report.h"

#define MAX_KS 32

static const char usage[] =
        "usage: execeval report RESULTS.jsonl -o REPORT.html [-k 1,10,100] [--title T] [--history DB]\n"
        "  -o FILE         write the page here (one self-contained HTML file)\n"
        "  -k LIST         pass@k for these k (default 1,10,100); a k is reported only\n"
        "                  when every task has at least k samples\n"
        "  --title T       the page's title (default: execeval report: RESULTS)\n"
        "  --history DB    add the trends over the runs in this history database, one\n"
        "                  per data set (tasks file sha256), the results' own first\n"
        "  --force         write through a REPORT.html that is a symbolic link\n";

struct report_args {
	const char *results;
	const char *out;
	const char *title;
	const char *history;
	int force;
	unsigned long ks[MAX_KS];
	size_t nk;
};

static int parse_args(int argc, char **argv, struct report_args *a, struct ee_err *err)
{
	enum { O_TITLE = 256, O_HISTORY, O_FORCE, O_HELP };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, O_TITLE },
		{ "history", required_argument, NULL, O_HISTORY },
		{ "force", no_argument, NULL, O_FORCE },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	a->ks[0] = 1, a->ks[1] = 10, a->ks[2] = 100, a->nk = 3;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hk:o:", longopts, NULL)) != -1) {
		if (c == 'k' && cli_parse_ks(optarg, a->ks, MAX_KS, &a->nk, err) < 0)
			return -1;
		else if (c == 'o')
			a->out = optarg;
		else if (c == O_TITLE)
			a->title = optarg;
		else if (c == O_HISTORY)
			a->history = optarg;
		else if (c == O_FORCE)
			a->force = 1;
		else if (c == O_HELP || c == 'h')
			return 1;
		else if (c == '?' || c == ':')
			return ee_fail(err, EE_ERR_USAGE, "unknown option or missing value: '%s'",
			               argv[optind - 1]);
	}
	if (optind != argc - 1)
		return ee_fail(err, EE_ERR_USAGE, "expected one results file\n%s", usage);
	a->results = argv[optind];
	if (!a->out)
		return ee_fail(err, EE_ERR_USAGE, "-o REPORT.html is required\n%s", usage);
	return 0;
}

/* ---- trends from the history ---------------------------------------------- */

/* One trend per data set (the tasks file's sha256) and model: a line
 * through runs on different tasks would show the data's change as the
 * model's, and one through different models a model's change that never
 * happened. A run of several models is a point on each model's line (its
 * block of the summary). The data sets drawn are the reported results'
 * own (its run file says which) and the most recently run ones, at most
 * TREND_SETS lines. */
#define TREND_RUNS 200 /* the most recent runs read */
#define TREND_SETS 6   /* data sets drawn */

enum { TR_PASS, TR_MEAN, TR_LINT, TR_TIMEOUT, TR_COUNT };

struct set_trend {
	char sha[65];
	char model[64]; /* "" for runs without a model name */
	char name[112]; /* "tasks.jsonl@1a2b3c4d, model m" */
	char labels[TR_COUNT][160];
	struct ee_svg_point pts[TR_COUNT][TREND_RUNS];
	size_t n[TR_COUNT];
	unsigned long k; /* of the pass@k series: the newest run's */
};

struct trends {
	struct set_trend sets[TREND_SETS];
	size_t n_sets;
	unsigned long not_drawn; /* runs over further data sets */
	char note[400];
};

static double epoch_of(const char *iso)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	const char *end = iso ? strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	return end ? (double)timegm(&tm) : NAN;
}

static void add_point(struct set_trend *t, int series, double when, double v)
{
	if (isfinite(v) && t->n[series] < TREND_RUNS)
		t->pts[series][t->n[series]++] = (struct ee_svg_point){ when, v };
}

/* The line of the run's data set and model among those drawn, a new one
 * while there is room (the results' own data set, set up first without a
 * model, takes the first model seen on it), or NULL. */
static struct set_trend *set_of(struct trends *t, const struct ee_history_run *run, const char *model)
{
	char cut[sizeof(t->sets[0].model)];

	snprintf(cut, sizeof(cut), "%s", model);
	for (size_t i = 0; i < t->n_sets; i++)
		if (strcmp(t->sets[i].sha, run->tasks_sha256) == 0 &&
		    (strcmp(t->sets[i].model, cut) == 0 || (i == 0 && !t->sets[0].name[0])))
			return &t->sets[i];
	if (t->n_sets == TREND_SETS)
		return NULL;
	struct set_trend *s = &t->sets[t->n_sets++];
	snprintf(s->sha, sizeof(s->sha), "%s", run->tasks_sha256);
	return s;
}

/* One point of each series of the line of run's data set and model,
 * from block (the run's summary, or its block of that model). */
static void add_run(struct trends *t, const struct ee_history_run *run, const char *model,
                    const json_t *block, struct ee_err *err)
{
	struct set_trend *s = set_of(t, run, model);
	double when = epoch_of(run->started_at);
	struct ee_figures f;

	if (!s) {
		t->not_drawn++;
		return;
	}
	if (!s->name[0]) {
		char set[48];
		snprintf(s->model, sizeof(s->model), "%s", model);
		cli_dataset_label(run->tasks_path, run->tasks_sha256, set, sizeof(set));
		snprintf(s->name, sizeof(s->name), "%.40s%s%.60s", set, model[0] ? ", model " : "", model);
	}
	if (ee_figures_of(block, NULL, &f, err) == 0) {
		if (!s->k)
			s->k = f.k;
		if (f.k == s->k) /* one series is one k */
			add_point(s, TR_PASS, when, f.pass_at_k);
		add_point(s, TR_MEAN, when, f.mean_score);
		add_point(s, TR_LINT, when, f.lint_pass_rate);
		add_point(s, TR_TIMEOUT, when, f.timeout_rate);
	}
}

static int visit_run(void *ctx, const struct ee_history_run *run, struct ee_err *err)
{
	struct trends *t = ctx;
	json_t *summary = json_loads(run->summary, 0, NULL), *names = json_loads(run->models, 0, NULL);
	const json_t *models = json_object_get(summary, "models"), *block;
	const char *name;

	if (summary && json_object_size(models) > 1) {
		json_object_foreach ((json_t *)models, name, block)
			add_run(t, run, name, block, err);
	} else if (summary && json_array_size(names) <= 1) {
		const char *only = json_string_value(json_array_get(names, 0));
		add_run(t, run, only ? only : "", summary, err);
	} else if (summary) { /* several models, stored before per-model figures: no model's */
		t->not_drawn++;
	}
	json_decref(summary);
	json_decref(names);
	return 0;
}

/* A line's series, labelled "pass@1 on tasks.jsonl@1a2b3c4d, model m", into out[*n ..). */
static void line_series(struct set_trend *s, struct ee_report_trend *out, size_t *n)
{
	static const char *const names[TR_COUNT] = { NULL, "mean score", "lint pass rate", "timeout rate" };
	char what[32];

	for (int m = 0; m < TR_COUNT; m++) {
		if (s->n[m] == 0)
			continue;
		if (m == TR_PASS)
			snprintf(what, sizeof(what), "pass@%lu", s->k ? s->k : 1);
		else
			snprintf(what, sizeof(what), "%s", names[m]);
		snprintf(s->labels[m], sizeof(s->labels[m]), "%s on %s", what, s->name);
		out[(*n)++] = (struct ee_report_trend){ s->labels[m], s->pts[m], s->n[m], 1.0 };
	}
}

/* Every line's series, those of the results' own data set first. */
static size_t trend_series(struct trends *t, struct ee_report_trend *out)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n_sets; i++)
		if (strcmp(t->sets[i].sha, t->sets[0].sha) == 0)
			line_series(&t->sets[i], out, &n);
	for (size_t i = 0; i < t->n_sets; i++)
		if (strcmp(t->sets[i].sha, t->sets[0].sha) != 0)
			line_series(&t->sets[i], out, &n);
	return n;
}

/* The series of the history's latest runs, one set per data set, the
 * results' own first (a missing history is an error: the trend was asked
 * for). */
static int load_trends(const struct report_args *a, struct trends *t, struct ee_report_trend *out,
                       size_t *n_out, struct ee_err *err)
{
	struct ee_history *h;
	struct ee_history_query q = { .limit = TREND_RUNS };

	if (cli_run_tasks_sha256(a->results, t->sets[0].sha, sizeof(t->sets[0].sha), err) < 0)
		return -1;
	t->n_sets = t->sets[0].sha[0] ? 1 : 0;
	if (ee_history_open(a->history, 0, &h, err) < 0)
		return -1;
	int rc = ee_history_list(h, &q, visit_run, t, err);
	ee_history_close(h);
	if (rc < 0)
		return -1;
	*n_out = trend_series(t, out);
	int n = snprintf(t->note, sizeof(t->note),
	                 "One chart per data set (the tasks file and its sha256) and model: runs on "
	                 "different tasks or of different models are never joined by one line.");
	if (t->not_drawn && n > 0)
		snprintf(t->note + n, sizeof(t->note) - (size_t)n,
		         " %lu points of the latest %d runs (other data sets or models, or several models "
		         "stored before per-model figures) are not drawn.",
		         t->not_drawn, TREND_RUNS);
	return 0;
}

static int add_record(void *ctx, const json_t *rec, const char *where, struct ee_err *err)
{
	return ee_report_add(ctx, rec, where, err);
}

static int write_page(const struct ee_out *page, const char *path, int force, struct ee_err *err)
{
	return ee_write_atomic(path, page->buf.data, page->buf.len, force, err);
}

/* Before the results are read: -o is not the input (nor the history), not
 * a symlink (unless --force), and its directory takes it. */
static int check_paths(const struct report_args *a, struct ee_err *err)
{
	const struct ee_path_role in[] = { { "results", a->results },
		                           { "--history", a->history ? a->history : "-" } };
	const struct ee_path_role out = { "-o", a->out };
	return ee_outputs_check(in, a->history ? 2 : 1, &out, 1, a->force, err);
}

static int make_report(const struct report_args *a, struct ee_err *err)
{
	struct ee_report *r = ee_report_new();
	struct ee_out page;
	char title[512];
	int rc = -1;

	ee_out_init(&page, EE_REPORT_MAX_BYTES);
	if (!r)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (check_paths(a, err) < 0) {
		ee_report_free(r);
		return -1;
	}
	if (!a->title) {
		snprintf(title, sizeof(title), "execeval report: %s", cli_path_base(a->results));
	}
	struct ee_report_options opt = {
		.title = a->title ? a->title : title,
		.source = a->results,
		.ks = a->ks,
		.nk = a->nk,
	};
	struct trends *t = a->history ? calloc(1, sizeof(*t)) : NULL;
	struct ee_report_trend series[TREND_SETS * TR_COUNT];
	if (a->history) {
		if (!t || load_trends(a, t, series, &opt.n_trends, err) < 0) {
			if (!t)
				ee_fail(err, EE_ERR_USAGE, "out of memory");
			free(t);
			ee_report_free(r);
			return -1;
		}
		opt.trends = series;
		opt.trends_note = t->note;
	}
	if (cli_read_results(a->results, add_record, r, err) == 0 && ee_report_html(r, &opt, &page, err) == 0)
		rc = write_page(&page, a->out, a->force, err);
	ee_out_free(&page);
	ee_report_free(r);
	free(t);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = { 0 };
	struct ee_err err = { 0 };
	int rc = parse_args(argc, argv, &a, &err);

	if (rc > 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (rc < 0 || make_report(&a, &err) < 0) {
		fprintf(stderr, "execeval report: %s\n", err.msg);
		return EXIT_USAGE;
	}
	return 0;
}
