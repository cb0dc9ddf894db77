/* history.c - `execeval history`: the runs eval stored, and their trends.
 *
 *   execeval history [--db FILE] [--model M] [--task-class C] [--limit N] [--json]
 *   execeval history show ID [--db FILE]
 *
 * The list is newest first, one row per run and model with its headline
 * figures (figures.h): a run of several models has a row per model (its
 * block of the summary's "models"; a pass@k pooled over models is no
 * model's), with --model only that model's, with --task-class that
 * class's (one row per run: a class pools the run's models). A run stored
 * before summaries had per-model blocks shows the whole run's figures, and
 * the row says so (" *"). The trend is the change of pass@k against the
 * previous run of the same data set (the same tasks file sha256) and the
 * same model that passes the same filters; it is left out when the two
 * runs report different k, or either's figures are not the model's alone.
 * `show` prints a run's stored summary JSON as `eval --summary-json`
 * writes it.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "base/err.h"
#include "results/figures.h"
#include "history/history.h"
#include "base/text.h"

#define DEFAULT_LIMIT 20
#define MODELS_WIDTH  20
#define DATASET_WIDTH 16

static const char usage[] =
        "usage: execeval history [OPTIONS]          the stored runs, newest first, with trends\n"
        "       execeval history show ID [--db FILE] run ID's summary JSON\n"
        "  --db FILE          the history (default: $XDG_DATA_HOME/execeval/history.db, else\n"
        "                     ~/.local/share/execeval/history.db)\n"
        "  --model M          only runs that evaluated model M; the figures are M's\n"
        "  --task-class C     only runs with task class C; the figures are that class's\n"
        "  --limit N          the newest N runs (default 20; 0: all)\n"
        "  --json             a JSON array instead of the table\n"
        "columns: pass@k at the smallest k reported (@k when it is not 1), mean task score,\n"
        "lint pass rate (runs with --lint), timeout rate (timeouts / samples), trend (the\n"
        "change of pass@k since the previous run of the same tasks file)\n";

struct history_args {
	const char *db;
	struct ee_history_query q;
	int json;
	long long show; /* > 0: show this run */
};

struct list_ctx {
	struct ee_history *h;
	const struct history_args *a;
	json_t *out; /* --json: the array being built */
	int rows;
	int marked; /* a row's figures are of all the run's models (" *") */
};

/* ---- options ------------------------------------------------------------ */

enum { O_DB = 256, O_MODEL, O_CLASS, O_LIMIT, O_JSON, O_HELP };

static const struct option longopts[] = {
	{ "db", required_argument, NULL, O_DB },
	{ "model", required_argument, NULL, O_MODEL },
	{ "task-class", required_argument, NULL, O_CLASS },
	{ "limit", required_argument, NULL, O_LIMIT },
	{ "json", no_argument, NULL, O_JSON },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

static int parse_args(int argc, char **argv, struct history_args *a, struct ee_err *err)
{
	unsigned long n;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_DB: a->db = optarg; break;
		case O_MODEL: a->q.model = optarg; break;
		case O_CLASS: a->q.task_class = optarg; break;
		case O_LIMIT:
			if (ee_parse_uint("--limit", optarg, 1ul << 30, &a->q.limit, err) < 0)
				return -1;
			break;
		case O_JSON: a->json = 1; break;
		case 'h':
		case O_HELP: fputs(usage, stdout); exit(EXIT_PASS);
		default:
			return ee_fail(err, EE_ERR_USAGE,
			               "unknown or incomplete option '%s' (see execeval history --help)",
			               argv[optind - 1]);
		}
	}
	if (optind == argc)
		return 0;
	if (strcmp(argv[optind], "show") != 0)
		return ee_fail(err, EE_ERR_USAGE, "unexpected argument '%s'", argv[optind]);
	if (optind + 2 != argc || ee_parse_uint("show", argv[optind + 1], 1ul << 62, &n, err) < 0 || n == 0)
		return ee_fail(err, EE_ERR_USAGE, "show: expected one run id (a positive integer)");
	a->show = (long long)n;
	return 0;
}

/* ---- which figures ------------------------------------------------------- */

/* Whether the run's models (a JSON array) are exactly [model]. */
static int only_model(const char *models_json, const char *model)
{
	json_t *models = json_loads(models_json, 0, NULL);
	const char *first = json_string_value(json_array_get(models, 0));
	int only = json_array_size(models) == 1 && first && strcmp(first, model) == 0;

	json_decref(models);
	return only;
}

/* The number of models a run evaluated (its models, a JSON array). */
static size_t models_count(const char *models_json)
{
	json_t *models = json_loads(models_json, 0, NULL);
	size_t n = json_array_size(models);

	json_decref(models);
	return n;
}

/* The part of summary a row's figures come from: with a model M its block
 * (with --task-class, when the block has the class: summaries before
 * per-model classes have not), or the whole run when M is all it
 * evaluated; else the whole run. *ret_of_model: the figures are M's alone (without
 * M: the run evaluated no model, or its records named none). */
static const json_t *figures_block(const json_t *summary, const struct ee_history_run *run, const char *model,
                                   const char *task_class, int *ret_of_model)
{
	const json_t *m;

	if (!model) {
		*ret_of_model = models_count(run->models) == 0;
		return summary;
	}
	*ret_of_model = 0;
	m = json_object_get(json_object_get(summary, "models"), model);
	if (task_class) { /* M's figures of the class, else the class's over all models */
		if (json_is_object(json_object_get(json_object_get(m, "classes"), task_class))) {
			*ret_of_model = 1;
			return m;
		}
		*ret_of_model = only_model(run->models, model);
		return summary;
	}
	if (json_is_object(m)) {
		*ret_of_model = 1;
		return m;
	}
	*ret_of_model = only_model(run->models, model);
	return summary;
}

/* ---- formatting ---------------------------------------------------------- */

static json_t *real_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

/* A stored string as JSON: the database may hold any bytes. */
static json_t *text_json(const char *s)
{
	char *valid = ee_text_sanitize(s, strlen(s), (size_t)-1, NULL);
	json_t *j = valid ? json_string(valid) : NULL;

	free(valid);
	return j ? j : json_null();
}

/* "a,b,c" cut to width bytes (ending in "..." when cut); out holds width + 1. */
static void models_cell(const char *models_json, char *out, size_t width)
{
	json_t *models = json_loads(models_json, 0, NULL);
	char all[256] = "";
	size_t len = 0, i;
	json_t *m;

	json_array_foreach (models, i, m) {
		if (json_is_string(m) && len < sizeof(all))
			len += (size_t)snprintf(all + len, sizeof(all) - len, "%s%s", len ? "," : "",
			                        json_string_value(m));
	}
	json_decref(models);
	size_t n = strlen(all);
	if (n == 0) {
		strcpy(out, "-");
	} else if (n <= width) {
		memcpy(out, all, n + 1);
	} else {
		size_t cut = width - 3;
		while (cut > 0 && ((unsigned char)all[cut] & 0xc0) == 0x80)
			cut--; /* not inside a UTF-8 character */
		memcpy(out, all, cut);
		memcpy(out + cut, "...", 4);
	}
}

void cli_dataset_label(const char *path, const char *sha, char *out, size_t size)
{
	snprintf(out, size, "%.*s@%.8s", DATASET_WIDTH, cli_path_base(path), sha);
}

static void rate_cell(double x, char *out, size_t size)
{
	if (isfinite(x))
		snprintf(out, size, "%.1f%%", 100.0 * x);
	else
		snprintf(out, size, "-");
}

static void print_header(const struct history_args *a)
{
	if (a->q.task_class)
		printf("figures of class %s\n", a->q.task_class);
	else if (a->q.model)
		printf("figures of model %s (* : of all the run's models, stored before per-model figures)\n",
		       a->q.model);
	printf("%6s  %-16s  %-*s  %-*s  %7s  %8s  %6s  %6s  %8s  %8s\n", "id", "started (UTC)", MODELS_WIDTH,
	       "models", DATASET_WIDTH + 9, "data set", "samples", "pass@1", "mean", "lint", "timeouts",
	       "trend");
}

/* model: the row's (its models cell), NULL: the run's models. */
static void print_row(const struct ee_history_run *run, const char *model, const struct ee_figures *f,
                      int all_models, double delta)
{
	char when[17] = "", models[MODELS_WIDTH + 8], dataset[DATASET_WIDTH + 16], pass[32], mean[32],
	     lint[16], tmo[16], trend[32], samples[32];

	/* 2024-05-01T12:34:56Z -> 2024-05-01 12:34 */
	snprintf(when, sizeof(when), "%.16s", run->started_at);
	if (when[10] == 'T')
		when[10] = ' ';
	json_t *one = model ? json_pack("[s]", model) : NULL;
	char *one_text = one ? json_dumps(one, JSON_COMPACT) : NULL;
	models_cell(one_text ? one_text : run->models, models, all_models ? MODELS_WIDTH - 2 : MODELS_WIDTH);
	free(one_text);
	json_decref(one);
	if (all_models)
		strcat(models, " *");
	cli_dataset_label(run->tasks_path, run->tasks_sha256, dataset, sizeof(dataset));
	if (f->k == 0)
		snprintf(pass, sizeof(pass), "-");
	else if (f->k == 1)
		snprintf(pass, sizeof(pass), "%.4f", f->pass_at_k);
	else
		snprintf(pass, sizeof(pass), "%.4f@%lu", f->pass_at_k, f->k);
	snprintf(mean, sizeof(mean), isfinite(f->mean_score) ? "%.4f" : "-", f->mean_score);
	snprintf(samples, sizeof(samples), f->samples >= 0 ? "%lld" : "-", f->samples);
	rate_cell(f->lint_pass_rate, lint, sizeof(lint));
	rate_cell(f->timeout_rate, tmo, sizeof(tmo));
	snprintf(trend, sizeof(trend), isfinite(delta) ? "%+.4f" : "-", delta);
	printf("%6lld  %-16s  %-*s  %-*s  %7s  %8s  %6s  %6s  %8s  %8s\n", run->id, when, MODELS_WIDTH,
	       models, DATASET_WIDTH + 9, dataset, samples, pass, mean, lint, tmo, trend);
}

static json_t *count_or_null(long long n)
{
	return n >= 0 ? json_integer(n) : json_null();
}

/* One row of --json: the run's identity and its figures. */
static json_t *row_json(const struct ee_history_run *run, const struct ee_figures *f, const char *task_class,
                        const char *model, long long prev_id, double delta)
{
	json_t *models = json_loads(run->models, 0, NULL);
	const struct {
		const char *key;
		json_t *value; /* a new reference, or NULL when out of memory */
	} fields[] = {
		{ "id", json_integer(run->id) },
		{ "started_at", text_json(run->started_at) },
		{ "finished_at", text_json(run->finished_at) },
		{ "models", models ? models : json_array() },
		{ "tasks_path", text_json(run->tasks_path) },
		{ "tasks_sha256", text_json(run->tasks_sha256) },
		{ "samples_path", text_json(run->samples_path) },
		{ "samples_sha256", text_json(run->samples_sha256) },
		{ "execeval_version", text_json(run->execeval_version) },
		{ "class", task_class ? text_json(task_class) : json_null() },
		{ "model", model ? text_json(model) : json_null() },
		{ "tasks", count_or_null(f->tasks) },
		{ "samples", count_or_null(f->samples) },
		{ "k", f->k ? json_integer((json_int_t)f->k) : json_null() },
		{ "pass_at_k", real_or_null(f->pass_at_k) },
		{ "mean_score", real_or_null(f->mean_score) },
		{ "lint_pass_rate", real_or_null(f->lint_pass_rate) },
		{ "timeout_rate", real_or_null(f->timeout_rate) },
		{ "previous_id", prev_id > 0 ? json_integer(prev_id) : json_null() },
		{ "pass_at_k_delta", real_or_null(delta) },
	};
	json_t *o = json_object();
	int failed = !o;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (failed)
			json_decref(fields[i].value);
		else if (json_object_set_new(o, fields[i].key, fields[i].value) <
		         0) /* takes value even then */
			failed = 1;
	}
	if (failed) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ---- listing ------------------------------------------------------------- */

/* A run's figures of model (NULL: the whole run's; figures_block says
 * which, *ret_of_model as there); an unreadable summary gives no figures
 * (all absent). */
static void figures_of_run(const struct ee_history_run *run, const char *model, const char *task_class,
                           struct ee_figures *f, int *ret_of_model)
{
	json_t *summary = json_loads(run->summary, 0, NULL);
	struct ee_err err;

	*ret_of_model = 0;
	if (!summary || ee_figures_of(figures_block(summary, run, model, task_class, ret_of_model),
	                              task_class, f, &err) < 0)
		*f = (struct ee_figures){ -1, -1, 0, NAN, NAN, NAN, NAN };
	json_decref(summary);
}

struct previous {
	long long id;
	struct ee_figures f;
	const char *model, *task_class;
	int of_model;
};

static int take_previous(void *ctx, const struct ee_history_run *run, struct ee_err *err)
{
	struct previous *p = ctx;
	p->id = run->id;
	figures_of_run(run, p->model, p->task_class, &p->f, &p->of_model);
	return 0;
}

/* One row: run's figures of model (NULL: the whole run's), and the trend
 * against the previous run of the same data set and model. */
static int visit_row(struct list_ctx *c, const struct ee_history_run *run, const char *model,
                     struct ee_err *err)
{
	struct ee_figures f;
	struct previous prev = { 0, { 0 }, model, c->a->q.task_class, 0 };
	struct ee_history_query q = c->a->q;
	double delta = NAN;
	int of_model;

	figures_of_run(run, model, c->a->q.task_class, &f, &of_model);
	q.model = model ? model : c->a->q.model;
	q.tasks_sha256 = run->tasks_sha256;
	q.before_id = run->id;
	q.limit = 1;
	if (ee_history_list(c->h, &q, take_previous, &prev, err) < 0)
		return -1;
	if (prev.id > 0 && f.k && f.k == prev.f.k && of_model && prev.of_model) /* like with like */
		delta = f.pass_at_k - prev.f.pass_at_k;
	c->rows++;
	if (!c->out) {
		print_row(run, of_model ? model : NULL, &f, !of_model, delta);
		c->marked |= !of_model;
		return 0;
	}
	if (json_array_append_new(c->out, row_json(run, &f, c->a->q.task_class, of_model ? model : NULL,
	                                           prev.id, delta)) < 0)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	return 0;
}

/* Whether model block m has figures to show: with --task-class, of that class. */
static int has_figures(const json_t *m, const char *task_class)
{
	return !task_class || json_is_object(json_object_get(json_object_get(m, "classes"), task_class));
}

/* A row per model the run's summary has a block of (without --model: a
 * run of several models; with --task-class, the models with figures of
 * that class), else one row. */
static int visit_run(void *vctx, const struct ee_history_run *run, struct ee_err *err)
{
	struct list_ctx *c = vctx;
	json_t *summary = NULL, *m;
	const char *name, *tc = c->a->q.task_class;
	int rc = 0, rows = 0;

	if (c->a->q.model || models_count(run->models) == 0)
		return visit_row(c, run, c->a->q.model, err);
	summary = json_loads(run->summary, 0, NULL);
	const json_t *models = json_object_get(summary, "models");
	if (json_object_size(models) > 1)
		json_object_foreach ((json_t *)models, name, m)
			rows += has_figures(m, tc);
	if (rows) {
		json_object_foreach ((json_t *)models, name, m)
			if (rc == 0 && has_figures(m, tc))
				rc = visit_row(c, run, name, err);
	} else if (json_object_size(models) > 1) { /* an older summary: the class over all models */
		rc = visit_row(c, run, NULL, err);
	} else {
		json_t *names = json_loads(run->models, 0, NULL);
		/* one model: its name; several without blocks (an older summary): none */
		rc = visit_row(c, run,
		               json_array_size(names) == 1 ? json_string_value(json_array_get(names, 0))
		                                           : NULL,
		               err);
		json_decref(names);
	}
	json_decref(summary);
	return rc;
}

static int list_runs(struct ee_history *h, const struct history_args *a, struct ee_err *err)
{
	struct list_ctx c = { h, a, a->json ? json_array() : NULL, 0, 0 };
	int rc;

	if (a->json && !c.out)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (!a->json)
		print_header(a);
	rc = ee_history_list(h, &a->q, visit_run, &c, err);
	if (rc == 0 && a->json) {
		json_dumpf(c.out, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		putchar('\n');
	} else if (rc == 0 && c.rows == 0) {
		printf("(no runs%s)\n", a->q.model || a->q.task_class ? " match" : " yet");
	} else if (rc == 0 && c.marked && !a->q.model) {
		printf("* : the figures of all the run's models (of a class, or stored before per-model "
		       "figures)\n");
	}
	json_decref(c.out);
	return rc;
}

static int print_summary(void *ctx, const struct ee_history_run *run, struct ee_err *err)
{
	json_t *summary = json_loads(run->summary, 0, NULL);

	if (!summary)
		return ee_fail(err, EE_ERR_USAGE, "run %lld: the stored summary is not JSON", run->id);
	json_dumpf(summary, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
	putchar('\n');
	json_decref(summary);
	return 0;
}

/* Before the first eval stores a run there is no default history file:
 * that is an empty history (listed as such, naming where eval will create
 * it), not an error. A --db FILE that does not exist stays an error (a
 * mistyped name must not pass for an empty history). 1 when the default
 * history does not exist and the empty list was printed. */
static int no_history_yet(const struct history_args *a)
{
	struct stat st;

	if (stat(a->db, &st) == 0 || errno != ENOENT)
		return 0;
	if (a->json)
		puts("[]");
	else
		printf("no runs yet (%s does not exist: eval creates it when it stores a run)\n", a->db);
	return 1;
}

int cmd_history(int argc, char **argv)
{
	struct history_args a = { .q.limit = DEFAULT_LIMIT };
	struct ee_history *h = NULL;
	struct ee_err err = { 0 };
	char db_default[4096];
	int code = EXIT_USAGE;

	if (parse_args(argc, argv, &a, &err) < 0)
		goto out;
	if (!a.db && cli_history_default(db_default, sizeof(db_default)) < 0) {
		ee_fail(&err, EE_ERR_USAGE, "no --db FILE, and neither XDG_DATA_HOME nor HOME is set");
		goto out;
	}
	int by_default = !a.db;
	if (!a.db)
		a.db = db_default;
	if (by_default && !a.show && no_history_yet(&a)) {
		code = EXIT_PASS;
		goto out;
	}
	if (ee_history_open(a.db, 0, &h, &err) < 0)
		goto out;
	if (a.show) {
		int found = ee_history_get(h, a.show, print_summary, NULL, &err);
		if (found == 0)
			ee_fail(&err, EE_ERR_USAGE, "history %.160s: no run %lld", a.db, a.show);
		if (found == 1)
			code = EXIT_PASS;
	} else if (list_runs(h, &a, &err) == 0) {
		code = EXIT_PASS;
	}
out:
	if (code != EXIT_PASS)
		fprintf(stderr, "execeval history: %s\n", err.msg);
	ee_history_close(h);
	return code;
}
