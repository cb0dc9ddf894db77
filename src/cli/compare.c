/* compare.c - `execeval compare BASE NEW`: two runs side by side, and a
 * gate for CI (the library is src/results/compare.h).
 *
 * Parses the options, loads each side with load_side (with the sha256 of
 * the tasks it ran on, where a run file or the history says), checks that
 * both ran on one data set (ee_compare_pair), prints the report
 * (a table, or the JSON with --json) and turns it into the exit code:
 * 0 no gated metric regressed, 1 one did, 2 usage or input error.
 */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/jsonfield.h"
#include "cli/cli.h"
#include "results/compare.h"
#include "results/composite.h"
#include "results/environment.h"
#include "verdict/reward.h"
#include "base/err.h"
#include "history/history.h"

#define MAX_GATED   32
#define MAX_CHANGED 50 /* rows of changed tasks in the table */
#define DEFAULT_EPS 0.01

static const char usage[] =
        "usage: execeval compare BASE NEW [--epsilon 0.01] [--metric pass@1 ...] [--json]\n"
        "                        [--history DB]\n"
        "  BASE, NEW      each a summary JSON (eval --summary-json, metrics --json), a\n"
        "                 results JSONL (then tasks are compared pairwise too), or a run\n"
        "                 id of the history (a number that is not a file: execeval history)\n"
        "  --history DB   the history run ids refer to (default: eval's default history)\n"
        "  --composite F  compute the composite score with formula F on both sides (from\n"
        "                 their summaries' metrics); without it, both sides' recorded\n"
        "                 formulas must agree for composite to be compared\n"
        "  --epsilon E    a gated metric may get worse by at most E (default 0.01)\n"
        "  --metric M     gate on M (repeatable; default pass@1): pass@K, mean_score,\n"
        "                 lint_pass_rate, composite, timeout_rate (lower is better)\n"
        "  --model M      compare model M of each side (a file of several models, or a\n"
        "                 file of M alone); without it, files of several models are\n"
        "                 compared and gated model by model, matched by name\n"
        "  --json         print the comparison as JSON instead of tables\n"
        "  --allow-different-tasks   compare runs over different data sets (tasks files\n"
        "                 or task sets): the metrics and the gate then cover the tasks\n"
        "                 both results files have (without it: exit 2)\n"
        "  --allow-infra-errors      gate on runs that have infra_error records\n"
        "                 (samples whose sandbox failed, left out of their pass@k;\n"
        "                 without it: exit 2)\n"
        "exit status: 0 no gated metric got worse by more than E, 1 one did,\n"
        "             2 usage or input error\n";

struct compare_args {
	const char *base, *new_path;
	const char *history; /* NULL: the default path */
	int composite;       /* --composite given: formula */
	struct ee_composite formula;
	double epsilon;
	struct ee_metric gated[MAX_GATED];
	size_t n_gated;
	int json;
	int allow_different_tasks;
	int allow_infra_errors;
	const char *model; /* --model M, or NULL */
};

static int add_metric(struct compare_args *a, const char *name, struct ee_err *err)
{
	struct ee_metric m;

	if (ee_metric_parse(name, &m, err) < 0) {
		char why[sizeof(err->msg)];
		snprintf(why, sizeof(why), "%s", err->msg);
		return ee_fail(err, EE_ERR_USAGE, "--metric: %s", why);
	}
	for (size_t i = 0; i < a->n_gated; i++)
		if (a->gated[i].kind == m.kind && a->gated[i].k == m.k)
			return 0;
	if (a->n_gated == MAX_GATED)
		return ee_fail(err, EE_ERR_USAGE, "--metric: at most %d metrics", MAX_GATED);
	a->gated[a->n_gated++] = m;
	return 0;
}

static int parse_args(int argc, char **argv, struct compare_args *a, struct ee_err *err)
{
	enum {
		O_EPS = 256,
		O_METRIC,
		O_JSON,
		O_HISTORY,
		O_COMPOSITE,
		O_ALLOW_DIFFERENT,
		O_ALLOW_INFRA,
		O_MODEL,
		O_HELP
	};
	static const struct option longopts[] = {
		{ "composite", required_argument, NULL, O_COMPOSITE },
		{ "history", required_argument, NULL, O_HISTORY },
		{ "epsilon", required_argument, NULL, O_EPS },
		{ "metric", required_argument, NULL, O_METRIC },
		{ "json", no_argument, NULL, O_JSON },
		{ "allow-different-tasks", no_argument, NULL, O_ALLOW_DIFFERENT },
		{ "allow-infra-errors", no_argument, NULL, O_ALLOW_INFRA },
		{ "model", required_argument, NULL, O_MODEL },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	a->epsilon = DEFAULT_EPS;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == O_EPS) {
			if (ee_parse_double("--epsilon", optarg, &a->epsilon, err) < 0)
				return -1;
			if (!(a->epsilon >= 0.0) || !isfinite(a->epsilon))
				return ee_fail(err, EE_ERR_USAGE,
				               "--epsilon: expected a number >= 0, got '%s'", optarg);
		} else if (c == O_METRIC) {
			if (add_metric(a, optarg, err) < 0)
				return -1;
		} else if (c == O_JSON) {
			a->json = 1;
		} else if (c == O_ALLOW_DIFFERENT) {
			a->allow_different_tasks = 1;
		} else if (c == O_ALLOW_INFRA) {
			a->allow_infra_errors = 1;
		} else if (c == O_MODEL) {
			a->model = optarg;
		} else if (c == O_HISTORY) {
			a->history = optarg;
		} else if (c == O_COMPOSITE) {
			if (ee_composite_parse(optarg, &a->formula, err) < 0)
				return -1;
			a->composite = 1;
		} else if (c == O_HELP || c == 'h') {
			return 1;
		} else {
			return ee_fail(err, EE_ERR_USAGE, "unknown option or missing value: '%s'",
			               argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return ee_fail(err, EE_ERR_USAGE, "expected two inputs, BASE and NEW");
	a->base = argv[optind];
	a->new_path = argv[optind + 1];
	if (a->n_gated == 0)
		add_metric(a, "pass@1", err);
	return 0;
}

/* One input. Today a file (a summary or a results file); another source
 * (a history run id) goes here. ks: pass@k to compute from results. */
struct history_side {
	struct ee_compare_side *side;
	char source[64];
	int found;
};

static int take_run(void *ctx, const struct ee_history_run *run, struct ee_err *err)
{
	struct history_side *h = ctx;
	json_error_t jerr;
	char jtext[EE_JF_ERROR_TEXT];
	json_t *summary = json_loads(run->summary, 0, &jerr);

	if (!summary)
		return ee_fail(err, EE_ERR_USAGE, "%s: stored summary: %s", h->source,
		               ee_jf_error_text(&jerr, jtext));
	h->found = 1;
	if (ee_compare_side_from_summary(summary, h->source, h->side, err) < 0)
		return -1;
	snprintf(h->side->tasks_sha256, sizeof(h->side->tasks_sha256), "%s", run->tasks_sha256);
	return 0;
}

/* A run of the history: its stored summary (no per-task pairing). */
static int load_run(const char *db_arg, long long id, struct ee_compare_side *ret, struct ee_err *err)
{
	char path[4096];
	struct ee_history *h;
	struct history_side hs = { .side = ret };

	if (!db_arg &&
	    ee_history_default_path(getenv("XDG_DATA_HOME"), getenv("HOME"), path, sizeof(path)) < 0)
		return ee_fail(err, EE_ERR_USAGE, "run %lld: no history (give --history DB)", id);
	const char *db = db_arg ? db_arg : path;
	snprintf(hs.source, sizeof(hs.source), "history run %lld", id);
	if (ee_history_open(db, 0, &h, err) < 0)
		return -1;
	int rc = ee_history_get(h, id, take_run, &hs, err);
	ee_history_close(h);
	if (rc == 0 && !hs.found)
		return ee_fail(err, EE_ERR_USAGE, "%s: no run %lld", db, id);
	return rc;
}

/* All digits, and no such file: a history run id. */
static long long run_id_of(const char *arg)
{
	char *end;
	if (!arg[0] || strspn(arg, "0123456789") != strlen(arg) || access(arg, F_OK) == 0)
		return -1;
	long long id = strtoll(arg, &end, 10);
	return *end ? -1 : id;
}

static int load_side(const char *arg, const char *history, const unsigned long *ks, size_t nk,
                     struct ee_compare_side *ret, struct ee_err *err)
{
	long long id = run_id_of(arg);
	if (id >= 0)
		return load_run(history, id, ret, err);
	if (ee_compare_side_from_file(arg, ks, nk, ret, err) < 0)
		return -1;
	if (ret->tasks && cli_run_tasks_sha256(arg, ret->tasks_sha256, sizeof(ret->tasks_sha256), err) < 0)
		return -1;
	if (ret->torn)
		fprintf(stderr,
		        "execeval compare: warning: %s: skipped a torn last line (an interrupted run?)\n",
		        arg);
	return 0;
}

/* The environment a side's verdicts came from (results/environment.h): its
 * summary's, or a results file's run file's; NULL when unknown. A new
 * reference. */
static json_t *environment_of(const char *arg, const struct ee_compare_side *side)
{
	json_t *run = NULL, *env;
	struct ee_err err;

	env = json_object_get(side->summary, "environment");
	if (env || !side->tasks)
		return json_incref(env);
	if (cli_run_read(arg, &run, &err) < 0)
		return NULL;
	env = json_incref(json_object_get(run, "environment"));
	json_decref(run);
	return env;
}

/* Two environments (the interpreter, the packages candidates could
 * import) are not a reason to refuse, but a verdict can change with them. */
static void warn_environments(const struct compare_args *a, const struct ee_compare_side *base,
                              const struct ee_compare_side *nw)
{
	json_t *eb = environment_of(a->base, base), *en = environment_of(a->new_path, nw);
	char what[256];

	if (ee_env_differs(eb, en, what, sizeof(what)))
		fprintf(stderr,
		        "execeval compare: warning: BASE and NEW ran in different environments: %s; "
		        "verdicts can depend on it\n",
		        what);
	json_decref(eb);
	json_decref(en);
}

/* The ks a results file is summarised with: the usual ones and every gated pass@K. */
static size_t results_ks(const struct compare_args *a, unsigned long *ks)
{
	size_t n = 0;

	ks[n++] = 1, ks[n++] = 10, ks[n++] = 100;
	for (size_t i = 0; i < a->n_gated; i++)
		if (a->gated[i].kind == EE_METRIC_PASS_AT_K)
			ks[n++] = a->gated[i].k;
	return n;
}

/* One formula on both sides: --composite's, computed from each summary's
 * metrics; else the recorded ones, which must be the same formula and
 * version, or composite means two different things. */
static int reconcile_composite(const struct compare_args *a, struct ee_compare_side *base,
                               struct ee_compare_side *nw, struct ee_err *err)
{
	if (a->composite) {
		if (ee_composite_add(&a->formula, base->summary, err) < 0)
			return -1;
		return ee_composite_add(&a->formula, nw->summary, err);
	}
	const json_t *b = json_object_get(base->summary, "composite");
	const json_t *n = json_object_get(nw->summary, "composite");
	const char *fb = json_string_value(json_object_get(b, "formula"));
	const char *fn = json_string_value(json_object_get(n, "formula"));
	if (!b || !n)
		return 0; /* a gated composite missing on a side is compare's own error */
	if (!fb || !fn || strcmp(fb, fn) != 0 ||
	    json_integer_value(json_object_get(b, "version")) !=
	            json_integer_value(json_object_get(n, "version")))
		return ee_fail(
		        err, EE_ERR_USAGE,
		        "composite: BASE's formula '%.80s' and NEW's '%.80s' differ: give --composite F to "
		        "compare one formula",
		        fb ? fb : "?", fn ? fn : "?");
	return 0;
}

/* The reward formula a summary's records were judged with: absent in a
 * summary older than --reward, whose rewards were binary's. */
static const char *reward_formula(const json_t *summary, int *mixed)
{
	static struct ee_reward binary;
	const json_t *r = json_object_get(summary, "reward");
	const char *f = json_string_value(json_object_get(r, "formula"));

	*mixed = json_is_true(json_object_get(r, "mixed"));
	if (f)
		return f;
	ee_reward_default(&binary);
	return ee_reward_text(&binary);
}

/* Rewards of two formulas are two different things, as composites are:
 * refused (a side of mixed formulas too). */
static int reconcile_reward(const struct ee_compare_side *base, const struct ee_compare_side *nw,
                            struct ee_err *err)
{
	int mb, mn;
	const char *fb = reward_formula(base->summary, &mb), *fn = reward_formula(nw->summary, &mn);

	if (mb || mn)
		return ee_fail(err, EE_ERR_USAGE,
		               "reward: %s's records were judged with different --reward formulas",
		               mb ? "BASE" : "NEW");
	if (strcmp(fb, fn) != 0)
		return ee_fail(err, EE_ERR_USAGE,
		               "reward: BASE's formula '%.80s' and NEW's '%.80s' differ (--reward): their "
		               "rewards are not comparable",
		               fb, fn);
	return 0;
}

/* One data set, or --allow-different-tasks and a warning saying what the
 * metrics then cover. */
static int pair(const struct compare_args *a, struct ee_compare_side *base, struct ee_compare_side *nw,
                const unsigned long *ks, size_t nk, struct ee_err *err)
{
	if (ee_compare_pair(base, nw, a->allow_different_tasks, ks, nk, err) < 0) {
		if (!a->allow_different_tasks) {
			char why[sizeof(err->msg)];
			snprintf(why, sizeof(why), "%s", err->msg);
			ee_fail(err, EE_ERR_USAGE, "%.190s (--allow-different-tasks: %s)", why,
			        base->tasks && nw->tasks ? "compare the paired tasks"
			                                 : "compare anyway, unpaired");
		}
		return -1;
	}
	if (ee_compare_same_data(base, nw) == 0)
		fprintf(stderr, "execeval compare: warning: --allow-different-tasks: %s\n",
		        base->paired_only ? "BASE and NEW ran on different data: metrics and gate over the "
		                            "paired tasks only"
		                          : "BASE and NEW ran on different data; summaries cannot be paired: "
		                            "each side's metrics are over its own tasks");
	return 0;
}

/* A side with infrastructure errors was judged on fewer samples than it
 * has (they are out of its n): not a gate's input unless asked. */
static int check_infra(const struct compare_args *a, const struct ee_compare_side *side, const char *name,
                       const char *path, struct ee_err *err)
{
	json_int_t n = json_integer_value(json_object_get(side->summary, "infra_errors"));
	if (n <= 0)
		return 0;
	if (a->allow_infra_errors) {
		fprintf(stderr, "execeval compare: warning: --allow-infra-errors: %s has %lld\n", name,
		        (long long)n);
		return 0;
	}
	return ee_fail(err, EE_ERR_USAGE,
	               "%s (%.60s) has %lld infra_error records (their sandbox failed: left out of "
	               "its pass@k); judge them again or pass --allow-infra-errors",
	               name, path, (long long)n);
}

/* ---- several models ------------------------------------------------------- */

/* A side's models: its summary's "models" when it holds more than one,
 * else NULL (one model, or records without any). */
static const json_t *models_of(const struct ee_compare_side *side)
{
	const json_t *m = json_object_get(side->summary, "models");
	return json_object_size(m) > 1 ? m : NULL;
}

/* "a, b, c" (at most size bytes, cut with "..."). */
static void names_of(const json_t *models, char *out, size_t size)
{
	size_t len = 0;
	const char *name;
	json_t *unused;

	out[0] = '\0';
	json_object_foreach ((json_t *)models, name, unused) {
		if (len + 4 >= size) {
			snprintf(out + (size > 4 ? size - 4 : 0), 4, "...");
			return;
		}
		len += (size_t)snprintf(out + len, size - len, "%s%s", len ? ", " : "",
		                        name[0] ? name : "\"\"");
	}
}

/* Whether the two sides hold the same models, by name. */
static int same_models(const json_t *mb, const json_t *mn)
{
	const char *name;
	json_t *unused;

	if (json_object_size(mb) != json_object_size(mn))
		return 0;
	json_object_foreach ((json_t *)mb, name, unused)
		if (!json_object_get(mn, name))
			return 0;
	return 1;
}

/* The models to compare one by one: --model's, or those both sides hold
 * (the same names on both). One number per side asked of a side of
 * several models is ambiguous: an error naming them. *ret NULL: compare
 * the sides whole (no side holds several models). */
static int models_to_compare(const struct compare_args *a, const struct ee_compare_side *base,
                             const struct ee_compare_side *nw, const json_t **ret, struct ee_err *err)
{
	const json_t *mb = models_of(base), *mn = models_of(nw);
	char nb[120], nn[120];

	*ret = NULL;
	if (a->model) {
		const struct ee_compare_side *side = mb && !json_object_get(mb, a->model) ? base : nw;
		const json_t *m = side == base ? mb : mn;
		if (m && !json_object_get(m, a->model)) {
			names_of(m, nb, sizeof(nb));
			return ee_fail(err, EE_ERR_USAGE,
			               "--model %.60s: %s holds no such model (its models: %s)", a->model,
			               side == base ? "BASE" : "NEW", nb);
		}
		return 0;
	}
	if (!mb && !mn)
		return 0;
	names_of(mb, nb, sizeof(nb));
	names_of(mn, nn, sizeof(nn));
	if (!mb || !mn)
		return ee_fail(
		        err, EE_ERR_USAGE,
		        "%s holds several models (%s) and %s one: which of them to compare is ambiguous "
		        "(--model M picks one; a pooled figure would be no model's)",
		        mb ? "BASE" : "NEW", mb ? nb : nn, mb ? "NEW" : "BASE");
	if (!same_models(mb, mn))
		return ee_fail(
		        err, EE_ERR_USAGE,
		        "BASE holds the models %s and NEW %s: they are compared model by model, by name, "
		        "so both must hold the same ones (--model M compares one)",
		        nb, nn);
	*ret = mb;
	return 0;
}

/* One model's comparison: each side narrowed to it when it holds several. */
static int compare_model(const struct compare_args *a, const struct ee_compare_side *base,
                         const struct ee_compare_side *nw, const char *model, json_t **ret,
                         struct ee_err *err)
{
	struct ee_compare_options o = { a->epsilon, a->gated, a->n_gated };
	struct ee_compare_side mb = { 0 }, mn = { 0 };
	int rc = -1;

	if ((!models_of(base) || ee_compare_side_of_model(base, model, &mb, err) == 0) &&
	    (!models_of(nw) || ee_compare_side_of_model(nw, model, &mn, err) == 0)) {
		/* a side of the model alone, against a narrowed one: without its
		 * classes, which the narrowed side has not (a borrowed view) */
		struct ee_compare_side vb = *base, vn = *nw;
		json_t *cb = NULL, *cn = NULL;
		if (models_of(nw) && !models_of(base) && (cb = json_deep_copy(base->summary)))
			json_object_del(vb.summary = cb, "classes");
		if (models_of(base) && !models_of(nw) && (cn = json_deep_copy(nw->summary)))
			json_object_del(vn.summary = cn, "classes");
		rc = ee_compare(models_of(base) ? &mb : &vb, models_of(nw) ? &mn : &vn, &o, ret, err);
		json_decref(cb);
		json_decref(cn);
	}
	if (rc == 0 && json_object_set_new(*ret, "model", json_string(model)) < 0)
		rc = ee_fail(err, EE_ERR_USAGE, "out of memory");
	ee_compare_side_free(&mb);
	ee_compare_side_free(&mn);
	return rc;
}

/* The report of each model in models: {"models": {name: report},
 * "regressions": ["pass@1 (name)"]}. */
static int compare_models(const struct compare_args *a, const struct ee_compare_side *base,
                          const struct ee_compare_side *nw, const json_t *models, json_t **ret,
                          struct ee_err *err)
{
	json_t *all = json_object(), *by = json_object(), *regressions = json_array();
	const char *name;
	json_t *unused, *r, *g;
	size_t i;
	char label[160];

	*ret = NULL;
	if (!all || !by || !regressions || json_object_set(all, "models", by) < 0 ||
	    json_object_set(all, "regressions", regressions) < 0)
		goto oom;
	json_object_foreach ((json_t *)models, name, unused) {
		if (compare_model(a, base, nw, name, &r, err) < 0)
			goto fail;
		if (json_object_set_new(by, name, r) < 0)
			goto oom;
		json_array_foreach (json_object_get(r, "regressions"), i, g) {
			snprintf(label, sizeof(label), "%.40s (%.100s)", json_string_value(g), name);
			if (json_array_append_new(regressions, json_string(label)) < 0)
				goto oom;
		}
	}
	json_decref(by);
	json_decref(regressions);
	*ret = all;
	return 0;
oom:
	ee_fail(err, EE_ERR_USAGE, "out of memory");
fail:
	json_decref(all);
	json_decref(by);
	json_decref(regressions);
	return -1;
}

static void print_report(const json_t *report)
{
	const json_t *by = json_object_get(report, "models");
	const char *name;
	json_t *r;
	int first = 1;

	if (!by) {
		ee_compare_print(report, MAX_CHANGED, stdout);
		return;
	}
	json_object_foreach ((json_t *)by, name, r) {
		printf("%s== model %s\n", first ? "" : "\n", name[0] ? name : "(none)");
		ee_compare_print(r, MAX_CHANGED, stdout);
		first = 0;
	}
	const json_t *regressions = json_object_get(report, "regressions"), *g;
	size_t i;
	printf("\nverdict over %zu models: %s", json_object_size(by),
	       json_array_size(regressions) ? "REGRESSION:" : "ok: no gated metric of any model got worse");
	json_array_foreach (regressions, i, g)
		printf("%s %s", i ? "," : "", json_string_value(g));
	printf("\n");
}

static int run(const struct compare_args *a, int *ret_regressed, struct ee_err *err)
{
	struct ee_compare_side base = { 0 }, nw = { 0 };
	struct ee_compare_options o = { a->epsilon, a->gated, a->n_gated };
	unsigned long ks[3 + MAX_GATED];
	size_t nk = results_ks(a, ks);
	const json_t *models = NULL;
	json_t *report = NULL;
	int rc = -1;

	if (load_side(a->base, a->history, ks, nk, &base, err) < 0 ||
	    load_side(a->new_path, a->history, ks, nk, &nw, err) < 0 ||
	    check_infra(a, &base, "BASE", a->base, err) < 0 ||
	    check_infra(a, &nw, "NEW", a->new_path, err) < 0 || pair(a, &base, &nw, ks, nk, err) < 0 ||
	    reconcile_composite(a, &base, &nw, err) < 0 || reconcile_reward(&base, &nw, err) < 0 ||
	    models_to_compare(a, &base, &nw, &models, err) < 0)
		goto out;
	warn_environments(a, &base, &nw);
	if (models     ? compare_models(a, &base, &nw, models, &report, err) < 0
	    : a->model ? compare_model(a, &base, &nw, a->model, &report, err) < 0
	               : ee_compare(&base, &nw, &o, &report, err) < 0)
		goto out;
	if (a->json) {
		if (json_dumpf(report, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) < 0)
			goto out_write;
		fputc('\n', stdout);
	} else {
		print_report(report);
	}
	if (fflush(stdout) != 0)
		goto out_write;
	*ret_regressed = json_array_size(json_object_get(report, "regressions")) > 0;
	rc = 0;
	goto out;
out_write:
	ee_fail_errno(err, EE_ERR_USAGE, "<stdout>");
out:
	json_decref(report);
	ee_compare_side_free(&base);
	ee_compare_side_free(&nw);
	return rc;
}

int cmd_compare(int argc, char **argv)
{
	struct compare_args a = { 0 };
	struct ee_err err = { 0 };
	int regressed = 0;
	int rc = parse_args(argc, argv, &a, &err);

	if (rc > 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (rc < 0) {
		fprintf(stderr, "execeval compare: %s\n%s", err.msg, usage);
		return EXIT_USAGE;
	}
	if (run(&a, &regressed, &err) < 0) {
		fprintf(stderr, "execeval compare: %s\n", err.msg);
		return EXIT_USAGE;
	}
	return regressed ? EXIT_NOT_PASS : EXIT_PASS;
}
