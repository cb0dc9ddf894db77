/* summary_json.c - the summary object, derived from the counters (summary.h).
 *
 * Everything per task is computed here, at the end: each task's pass@k and
 * mean score (one row of task_values per metric), then their means,
 * quantiles and bootstrap intervals over all tasks and over the tasks of
 * each class, and per model over the tasks it attempted (from the model's
 * own per-task counters, with its own choice of ks: a model may have fewer
 * samples per task than all of them together). Tasks are taken in the
 * order of their ids (sum_tasks_by_id),
 * grouped by class with a stable counting sort over the class index, so the
 * bootstrap's draws do not depend on the order of the records. The work is
 * O(tasks x ks x resamples + tasks log tasks); the memory O(tasks x ks).
 * An allocation failure anywhere sets view.oom and the result is NULL.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "results/bootstrap.h"
#include "results/environment.h"
#include "results/metrics.h"
#include "results/summary_int.h"

struct view {
	const struct ee_summary *s;
	const struct sum_task *tasks; /* the counters task_values reads: s->tasks or a model's */
	unsigned long *kept;          /* the ks reported in the block being built */
	size_t n_kept;
	size_t *by_id;   /* task indices by task id */
	size_t *order;   /* the same grouped by class (by id within a class) */
	size_t *start;   /* class i's tasks: order[start[i] .. start[i + 1]) */
	double *scratch; /* one per task */
	double *values;  /* (n_kept + 1) x tasks: see task_values */
	double *lo, *hi; /* n_kept + 1 interval bounds */
	struct ee_bootstrap boot;
	int oom;
};

/* Sets obj[key] = val (stolen); a NULL val or a failed set marks oom. */
static void put(struct view *v, json_t *obj, const char *key, json_t *val)
{
	if (!val || json_object_set_new(obj, key, val) < 0)
		v->oom = 1;
}

static json_t *real_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *count_json(unsigned long n)
{
	return json_integer((json_int_t)n);
}

/* Fills v->kept with the ks every task ix[0..n) of v->tasks has enough
 * samples for; returns the dropped ks with their reasons. */
static json_t *choose_ks(struct view *v, const size_t *ix, size_t n, const unsigned long *ks, size_t nk)
{
	json_t *dropped = json_array();
	unsigned long min_n = (unsigned long)-1;
	char reason[128];

	if (!dropped)
		v->oom = 1;
	v->n_kept = 0;
	for (size_t i = 0; i < n; i++)
		min_n = v->tasks[ix[i]].n < min_n ? v->tasks[ix[i]].n : min_n;
	for (size_t i = 0; i < nk && dropped; i++) {
		unsigned long k = ks[i];
		size_t short_tasks = 0, seen = 0;
		for (size_t j = 0; j < i; j++)
			seen |= ks[j] == k;
		if (seen)
			continue;
		for (size_t t = 0; t < n; t++)
			short_tasks += v->tasks[ix[t]].n < k;
		if (k == 0)
			snprintf(reason, sizeof(reason), "k must be positive");
		else if (n == 0)
			snprintf(reason, sizeof(reason), "no tasks");
		else if (short_tasks == 0) {
			v->kept[v->n_kept++] = k;
			continue;
		} else
			snprintf(reason, sizeof(reason),
			         "%zu of %zu tasks have fewer than %lu samples (min %lu)", short_tasks, n, k,
			         min_n);
		if (json_array_append_new(dropped,
		                          json_pack("{s:I, s:s}", "k", (json_int_t)k, "reason", reason)) < 0)
			v->oom = 1;
	}
	return dropped;
}

/* Most frequent first, "(other)" last. */
static int cmp_detail(const void *pa, const void *pb)
{
	const struct ee_strmap_slot *a = *(const struct ee_strmap_slot *const *)pa;
	const struct ee_strmap_slot *b = *(const struct ee_strmap_slot *const *)pb;
	int ao = strcmp(a->key, SUM_OTHER) == 0, bo = strcmp(b->key, SUM_OTHER) == 0;

	if (ao != bo)
		return ao - bo;
	if (a->value != b->value)
		return a->value < b->value ? 1 : -1;
	return strcmp(a->key, b->key);
}

static json_t *details_json(struct view *v, const struct ee_strmap *m)
{
	const struct ee_strmap_slot **sl = malloc((m->len + 1) * sizeof(*sl));
	json_t *obj = json_object();
	size_t pos = 0, n = 0;

	if (sl && obj) {
		while ((sl[n] = ee_strmap_next(m, &pos)))
			n++;
		qsort(sl, n, sizeof(*sl), cmp_detail);
		for (size_t i = 0; i < n; i++)
			put(v, obj, sl[i]->key, count_json(sl[i]->value));
	} else {
		v->oom = 1; /* never an empty object standing for the details */
	}
	free(sl);
	return obj;
}

/* "reward": mean and standard deviation (population) of the records with
 * a reward, the share of them at each value (most frequent first, at most
 * EE_SUMMARY_MAX_REWARDS and "(other)"), and the infra errors left out. */
static json_t *reward_json(struct view *v, const struct sum_counts *c)
{
	double n = (double)c->n_reward, mean = n > 0 ? c->reward_sum / n : 0;
	double var = n > 0 ? c->reward_sq / n - mean * mean : 0;
	json_t *counts = details_json(v, &c->rewards), *values = json_object();
	const char *key;
	json_t *count;

	json_object_foreach (counts, key, count)
		put(v, values, key, json_real(round((double)json_integer_value(count) / n * 1e6) / 1e6));
	json_decref(counts);
	return json_pack("{s:o, s:o, s:o, s:o, s:o}", "samples", count_json(c->n_reward), "mean",
	                 real_or_null(n > 0 ? mean : NAN), "sd",
	                 real_or_null(n > 0 ? sqrt(var > 0 ? var : 0) : NAN), "values", values,
	                 "infra_errors", count_json(c->n_infra));
}

static json_t *statuses_json(struct view *v, const struct sum_counts *c)
{
	json_t *obj = json_object();

	for (int i = 0; obj && i < SUM_N_STATUS; i++)
		put(v, obj, ee_summary_status_names[i], count_json(c->status[i]));
	return obj;
}

/* syntax_error by detail: "syntax error" and "import error" always,
 * "(other)" only when a record's detail was neither. */
static json_t *syntax_json(struct view *v, const struct sum_counts *c)
{
	json_t *obj = json_object();

	for (int i = 0; obj && i < SUM_N_SYNTAX; i++)
		if (i != SUM_SYNTAX_OTHER || c->syntax[i])
			put(v, obj, ee_summary_syntax_names[i], count_json(c->syntax[i]));
	return obj;
}

/* Row j < n_kept of v->values: pass@kept[j] of each task ix[0..n); row
 * n_kept: each task's mean score. */
static void task_values(struct view *v, const size_t *ix, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct sum_task *t = &v->tasks[ix[i]];
		for (size_t j = 0; j < v->n_kept; j++)
			v->values[j * n + i] = ee_pass_at_k(t->n, t->c, v->kept[j]);
		v->values[v->n_kept * n + i] = t->score_sum / (double)t->n;
	}
}

static double row_mean(const struct view *v, size_t row, size_t n)
{
	double sum = 0.0;

	for (size_t i = 0; i < n; i++)
		sum += v->values[row * n + i];
	return n ? sum / (double)n : NAN;
}

static json_t *interval_json(double lo, double hi)
{
	if (!isfinite(lo) || !isfinite(hi))
		return json_null();
	return json_pack("[f, f]", lo, hi);
}

/* {"k": value} (ci 0) or {"k": [lo, hi]} (ci 1) over the kept ks. */
static json_t *pass_at_k_json(struct view *v, size_t n, int ci)
{
	json_t *obj = json_object();
	char key[32];

	for (size_t j = 0; obj && n > 0 && j < v->n_kept; j++) {
		snprintf(key, sizeof(key), "%lu", v->kept[j]);
		put(v, obj, key, ci ? interval_json(v->lo[j], v->hi[j]) : real_or_null(row_mean(v, j, n)));
	}
	return obj;
}

/* "violations": records with any, with an escape-class one, and the
 * attempts by class (docs/summary.md). Only when a record had any. */
static json_t *violations_json(struct view *v, const struct sum_counts *c)
{
	json_t *by = json_object();
	for (size_t i = 0; by && i < SUM_N_VCLASS; i++)
		if (c->violations[i])
			put(v, by, sum_violation_classes[i], count_json(c->violations[i]));
	if (!by)
		v->oom = 1;
	return json_pack("{s:o, s:o, s:o*}", "samples", count_json(c->violating), "escape_samples",
	                 count_json(c->escaping), "by_class", by);
}

/* The figures over tasks ix[0..n) of v->tasks, in b: tasks, samples,
 * pass@k and its intervals (then dropped, the ks left out, when given; b
 * takes it), the mean score and its interval, the median and p10 task
 * scores. The intervals draw from a generator seeded with seed. */
static void put_figures(struct view *v, json_t *b, const size_t *ix, size_t n, unsigned long samples,
                        json_t *dropped, uint64_t seed)
{
	size_t ms = v->n_kept; /* the mean score's row */

	task_values(v, ix, n);
	if (ee_bootstrap_means(v->values, n, v->n_kept + 1, &v->boot, seed, v->lo, v->hi, NULL) < 0)
		v->oom = 1;
	put(v, b, "tasks", count_json(n));
	put(v, b, "samples", count_json(samples));
	put(v, b, "pass_at_k", pass_at_k_json(v, n, 0));
	put(v, b, "pass_at_k_ci", pass_at_k_json(v, n, 1));
	if (dropped)
		put(v, b, "pass_at_k_dropped", dropped);
	put(v, b, "mean_score", real_or_null(row_mean(v, ms, n)));
	put(v, b, "mean_score_ci", interval_json(v->lo[ms], v->hi[ms]));
	memcpy(v->scratch, v->values + ms * n, n * sizeof(*v->scratch));
	put(v, b, "median_task_score", real_or_null(ee_quantile(v->scratch, n, 0.5)));
	put(v, b, "p10_task_score", real_or_null(ee_quantile(v->scratch, n, 0.1)));
}

/* The keys shared by the whole set and each class, over tasks ix[0..n)
 * (in task id order); the intervals draw from a generator seeded with seed. */
static json_t *block_json(struct view *v, const size_t *ix, size_t n, const struct sum_counts *c,
                          json_t *dropped, uint64_t seed)
{
	json_t *b = json_object();
	unsigned long samples = 0;

	if (!b) {
		json_decref(dropped);
		v->oom = 1;
		return NULL;
	}
	for (int i = 0; i < SUM_N_STATUS; i++)
		samples += c->status[i];
	put_figures(v, b, ix, n, samples, dropped, seed);
	put(v, b, "statuses", statuses_json(v, c));
	put(v, b, "syntax_error_details", syntax_json(v, c));
	put(v, b, "details", details_json(v, &c->details));
	if (c->lint_pass + c->lint_fail > 0) {
		unsigned long ran = c->lint_pass + c->lint_fail;
		put(v, b, "lint",
		    json_pack("{s:o, s:o, s:o}", "pass_rate",
		              real_or_null((double)c->lint_pass / (double)ran), "samples", count_json(ran),
		              "codes", details_json(v, &c->lint_codes)));
	}
	put(v, b, "reward", reward_json(v, c));
	if (c->violating)
		put(v, b, "violations", violations_json(v, c));
	return b;
}

static int cmp_class(const void *pa, const void *pb)
{
	return strcmp((*(const struct sum_class *const *)pa)->name,
	              (*(const struct sum_class *const *)pb)->name);
}

static json_t *classes_json(struct view *v)
{
	const struct ee_summary *s = v->s;
	const struct sum_class **by_name = malloc((s->n_classes + 1) * sizeof(*by_name));
	json_t *obj = json_object();

	if (by_name && obj) {
		for (size_t i = 0; i < s->n_classes; i++)
			by_name[i] = &s->classes[i];
		qsort(by_name, s->n_classes, sizeof(*by_name), cmp_class);
		for (size_t i = 0; i < s->n_classes; i++) {
			size_t ci = (size_t)(by_name[i] - s->classes);
			size_t from = v->start[ci], n = v->start[ci + 1] - from;
			put(v, obj, by_name[i]->name,
			    block_json(v, v->order + from, n, &by_name[i]->counts, NULL,
			               ee_bootstrap_stream(EE_BOOTSTRAP_SEED, by_name[i]->name)));
		}
	} else {
		v->oom = 1;
	}
	free(by_name);
	return obj;
}

/* A block's figures over tasks (pass@k, its interval, the task-score
 * statistics), removed where they would pool the samples of several
 * models: the top level and each class of a summary of more than one
 * model, and the "(other)" model. Counts (samples, statuses, details)
 * stay: they add up. The top level and "(other)" say why per k in
 * pass_at_k_dropped (why: NULL for a class, which has no such key). */
static void unpool(struct view *v, json_t *b, const unsigned long *ks, size_t nk, const char *why)
{
	static const char *const nulled[] = { "mean_score", "mean_score_ci", "median_task_score",
		                              "p10_task_score" };
	json_t *dropped = why ? json_array() : NULL;

	put(v, b, "pass_at_k", json_object());
	put(v, b, "pass_at_k_ci", json_object());
	for (size_t i = 0; i < sizeof(nulled) / sizeof(nulled[0]); i++)
		put(v, b, nulled[i], json_null());
	for (size_t i = 0; why && i < nk; i++) {
		int seen = 0;
		for (size_t j = 0; j < i; j++)
			seen |= ks[j] == ks[i];
		if (!seen &&
		    json_array_append_new(dropped, json_pack("{s:I, s:s}", "k", (json_int_t)ks[i], "reason",
		                                             ks[i] ? why : "k must be positive")) < 0)
			v->oom = 1;
	}
	if (why)
		put(v, b, "pass_at_k_dropped", dropped);
}

static int cmp_model(const void *pa, const void *pb)
{
	return strcmp((*(const struct sum_model *const *)pa)->name,
	              (*(const struct sum_model *const *)pb)->name);
}

/* The tasks model m attempted, in task id order, into ix; their number. */
static size_t model_tasks(const struct view *v, const struct sum_model *m, size_t *ix)
{
	size_t n = 0;

	for (size_t i = 0; i < v->s->n_tasks; i++) {
		size_t t = v->by_id[i];
		if (t < m->n_tasks && m->tasks[t].n > 0)
			ix[n++] = t;
	}
	return n;
}

/* A model's figures over tasks ix[0..n) of v->tasks at v->kept (those of
 * a class block without the counts, which are the whole class's). */
static json_t *figures_json(struct view *v, const size_t *ix, size_t n, uint64_t seed)
{
	json_t *b = json_object();
	unsigned long samples = 0;

	if (!b) {
		v->oom = 1;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		samples += v->tasks[ix[i]].n;
	put_figures(v, b, ix, n, samples, NULL, seed);
	return b;
}

/* A model's "classes": per class of the tasks ix[0..n) it attempted (in
 * task id order), its figures; the intervals draw from seed's stream, then
 * the class's name. The tasks are grouped by a stable counting sort over
 * the class index, so the work is O(tasks + classes) per model. */
static json_t *model_classes_json(struct view *v, const size_t *ix, size_t n, uint64_t seed)
{
	const struct ee_summary *s = v->s;
	size_t *start = calloc(s->n_classes + 2, sizeof(*start)), *sub = malloc((n + 1) * sizeof(*sub));
	const struct sum_class **by_name = malloc((s->n_classes + 1) * sizeof(*by_name));
	json_t *obj = json_object();

	if (!start || !sub || !by_name || !obj) {
		v->oom = 1;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		start[s->tasks[ix[i]].cls + 2]++;
	for (size_t c = 2; c <= s->n_classes + 1; c++)
		start[c] += start[c - 1];
	for (size_t i = 0; i < n; i++) /* start[c + 1]: the next free slot of class c */
		sub[start[s->tasks[ix[i]].cls + 1]++] = ix[i];
	for (size_t i = 0; i < s->n_classes; i++)
		by_name[i] = &s->classes[i];
	qsort(by_name, s->n_classes, sizeof(*by_name), cmp_class);
	for (size_t i = 0; i < s->n_classes; i++) {
		size_t ci = (size_t)(by_name[i] - s->classes), from = start[ci], m = start[ci + 1] - from;
		if (m)
			put(v, obj, by_name[i]->name,
			    figures_json(v, sub + from, m, ee_bootstrap_stream(seed, by_name[i]->name)));
	}
out:
	free(start);
	free(sub);
	free(by_name);
	return obj;
}

/* A model's "generated": its pass@k on the canonical tier (summary_gen.c)
 * over tasks ix[0..n) of v->tasks at v->kept, from its own samples. */
static json_t *model_generated_json(struct view *v, const size_t *ix, size_t n)
{
	json_t *pk = json_object();
	char key[32];

	for (size_t j = 0; pk && n && j < v->n_kept; j++) {
		double sum = 0;
		for (size_t i = 0; i < n; i++)
			sum += ee_pass_at_k(v->tasks[ix[i]].n, v->tasks[ix[i]].c_canonical, v->kept[j]);
		snprintf(key, sizeof(key), "%lu", v->kept[j]);
		put(v, pk, key, json_real(sum / (double)n));
	}
	if (!pk)
		v->oom = 1;
	return json_pack("{s:o*}", "pass_at_k_canonical", pk);
}

/* {"min", "max"}: the fewest and most samples a task of v->tasks ix[0..n)
 * has (null without tasks): the n of a model's pass@k. */
static json_t *per_task_range(const struct view *v, const size_t *ix, size_t n)
{
	unsigned long lo = (unsigned long)-1, hi = 0;

	for (size_t i = 0; i < n; i++) {
		lo = v->tasks[ix[i]].n < lo ? v->tasks[ix[i]].n : lo;
		hi = v->tasks[ix[i]].n > hi ? v->tasks[ix[i]].n : hi;
	}
	return json_pack("{s:o, s:o}", "min", n ? count_json(lo) : json_null(), "max",
	                 n ? count_json(hi) : json_null());
}

/* Each model's block over the tasks it attempted, with its own ks (and,
 * when root has "generated", its canonical tier's pass@k); the
 * intervals draw from the stream "model", then the model's name. v->kept
 * and v->tasks are the overall ones again afterwards. */
static json_t *models_json(struct view *v, const json_t *root, const unsigned long *ks, size_t nk)
{
	const struct ee_summary *s = v->s;
	const struct sum_model *by_name[EE_SUMMARY_MAX_MODELS + 1];
	unsigned long *overall = malloc((nk + 1) * sizeof(*overall));
	size_t *ix = malloc((s->n_tasks + 1) * sizeof(*ix)), n_overall = v->n_kept;
	uint64_t stream = ee_bootstrap_stream(EE_BOOTSTRAP_SEED, "model");
	json_t *obj = json_object();

	if (!overall || !ix || !obj) {
		v->oom = 1;
		goto out;
	}
	memcpy(overall, v->kept, n_overall * sizeof(*overall));
	for (size_t i = 0; i < s->n_models; i++)
		by_name[i] = &s->models[i];
	qsort(by_name, s->n_models, sizeof(by_name[0]), cmp_model);
	for (size_t i = 0; i < s->n_models; i++) {
		size_t n = model_tasks(v, by_name[i], ix);
		v->tasks = by_name[i]->tasks;
		json_t *dropped = choose_ks(v, ix, n, ks, nk);
		uint64_t seed = ee_bootstrap_stream(stream, by_name[i]->name);
		json_t *b = block_json(v, ix, n, &by_name[i]->counts, dropped, seed);
		int other = strcmp(by_name[i]->name, SUM_OTHER) == 0;
		if (b && other)
			unpool(v, b, ks, nk, "pooled over the models past the first 64");
		if (b) {
			put(v, b, "samples_per_task", per_task_range(v, ix, n));
			put(v, b, "classes", other ? json_object() : model_classes_json(v, ix, n, seed));
			if (json_object_get(root, "generated") && !other)
				put(v, b, "generated", model_generated_json(v, ix, n));
		}
		put(v, obj, by_name[i]->name, b);
	}
	v->tasks = s->tasks;
	memcpy(v->kept, overall, n_overall * sizeof(*overall));
	v->n_kept = n_overall;
out:
	free(overall);
	free(ix);
	return obj;
}

/* canonical, edge, property, the others by name, "(other)". */
static int tier_rank(const char *name)
{
	static const char *const fixed[] = { "canonical", "edge", "property" };

	for (int i = 0; i < 3; i++)
		if (strcmp(name, fixed[i]) == 0)
			return i;
	return strcmp(name, SUM_OTHER) == 0 ? 4 : 3;
}

static int cmp_tier(const void *pa, const void *pb)
{
	const struct sum_tier *a = *(const struct sum_tier *const *)pa;
	const struct sum_tier *b = *(const struct sum_tier *const *)pb;
	int ra = tier_rank(a->name), rb = tier_rank(b->name);

	return ra != rb ? ra - rb : strcmp(a->name, b->name);
}

static json_t *tiers_json(struct view *v)
{
	const struct ee_summary *s = v->s;
	const struct sum_tier *sorted[EE_SUMMARY_MAX_TIERS + 1];
	json_t *obj = json_object();

	for (size_t i = 0; i < s->n_tiers; i++)
		sorted[i] = &s->tiers[i];
	qsort(sorted, s->n_tiers, sizeof(sorted[0]), cmp_tier);
	for (size_t i = 0; obj && i < s->n_tiers; i++) {
		const struct sum_tier *t = sorted[i];
		put(v, obj, t->name,
		    json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "tests", count_json(t->tests), "tests_passed",
		              count_json(t->passed), "pass_rate",
		              real_or_null((double)t->passed / (double)t->tests), "samples",
		              count_json(t->samples), "samples_all_passed", count_json(t->all_passed),
		              "all_passed_rate", real_or_null((double)t->all_passed / (double)t->samples)));
	}
	return obj;
}

/* Tests per judge, all four always present (docs/summary.md). */
static json_t *judged_by_json(struct view *v)
{
	json_t *obj = json_object();

	for (int j = 0; obj && j < SUM_N_JUDGED_BY; j++)
		put(v, obj, ee_summary_judged_by_names[j], count_json(v->s->judged_by[j]));
	return obj;
}

static json_t *resources_json(struct view *v)
{
	const struct sum_res *r = &v->s->res;
	json_t *obj = json_object();

	if (obj && r->n_wall) {
		put(v, obj, "wall_ms_mean", real_or_null(r->wall_sum / (double)r->n_wall));
		put(v, obj, "wall_ms_max", real_or_null(r->wall_max));
	}
	if (obj && r->n_cpu) {
		put(v, obj, "cpu_ms_mean", real_or_null(r->cpu_sum / (double)r->n_cpu));
		put(v, obj, "cpu_ms_total", real_or_null(r->cpu_sum));
	}
	if (obj && r->n_rss)
		put(v, obj, "peak_rss_kb_max", real_or_null(r->rss_max));
	return obj;
}

static json_t *bootstrap_json(const struct view *v)
{
	return json_pack("{s:I, s:I, s:f, s:s}", "resamples", (json_int_t)v->boot.resamples, "seed",
	                 (json_int_t)EE_BOOTSTRAP_SEED, "level", v->boot.level, "unit", "task");
}

/* The tasks in id order, then a stable counting sort of them by class. */
static int group_by_class(struct view *v)
{
	const struct ee_summary *s = v->s;
	const struct ee_strmap_slot **by_id = sum_tasks_by_id(s);
	size_t *next = malloc((s->n_classes + 1) * sizeof(*next));

	v->start = calloc(s->n_classes + 2, sizeof(*v->start));
	v->by_id = malloc((s->n_tasks + 1) * sizeof(*v->by_id));
	v->order = malloc((s->n_tasks + 1) * sizeof(*v->order));
	v->scratch = malloc((s->n_tasks + 1) * sizeof(*v->scratch));
	if (!by_id || !next || !v->start || !v->by_id || !v->order || !v->scratch) {
		free(by_id);
		free(next);
		return -1;
	}
	for (size_t i = 0; i < s->n_tasks; i++)
		v->by_id[i] = by_id[i]->value;
	free(by_id);
	for (size_t t = 0; t < s->n_tasks; t++)
		v->start[s->tasks[t].cls + 1]++;
	for (size_t c = 1; c <= s->n_classes; c++)
		v->start[c] += v->start[c - 1];
	memcpy(next, v->start, (s->n_classes + 1) * sizeof(*next));
	for (size_t i = 0; i < s->n_tasks; i++) {
		size_t t = v->by_id[i];
		v->order[next[s->tasks[t].cls]++] = t;
	}
	free(next);
	return 0;
}

/* A summary of several models: the top level's and the classes' figures
 * over tasks would pool them (unpool); each model's are under "models". */
static void unpool_mixed(struct view *v, json_t *root, const unsigned long *ks, size_t nk)
{
	char why[128];
	const char *name;
	json_t *cls;

	snprintf(why, sizeof(why),
	         "the records hold %zu models: a pass@k pooled over them is no model's "
	         "(see models)",
	         v->s->n_models);
	unpool(v, root, ks, nk, why);
	json_object_foreach (json_object_get(root, "classes"), name, cls)
		unpool(v, cls, ks, nk, NULL);
}

/* Room for the per-task values and the intervals of nk + 1 metrics (a
 * model may keep more ks than the whole set). */
static int alloc_values(struct view *v, size_t nk)
{
	size_t m = nk + 1, n = v->s->n_tasks + 1;

	if (n > SIZE_MAX / sizeof(double) / m)
		return -1;
	v->values = malloc(m * n * sizeof(*v->values));
	v->lo = malloc(m * sizeof(*v->lo));
	v->hi = malloc(m * sizeof(*v->hi));
	return v->values && v->lo && v->hi ? 0 : -1;
}

json_t *ee_summary_json(const struct ee_summary *s, const unsigned long *ks, size_t nk, double wall_s)
{
	struct view v = { .s = s, .tasks = s->tasks, .boot = { EE_BOOTSTRAP_RESAMPLES, EE_BOOTSTRAP_LEVEL } };
	json_t *root = NULL, *dropped;
	int mixed = s->n_models > 1;

	v.kept = malloc((nk + 1) * sizeof(*v.kept));
	if (v.kept && group_by_class(&v) == 0) {
		dropped = choose_ks(&v, v.by_id, s->n_tasks, ks, nk);
		json_t *gen = NULL; /* the set's ks, before a class's choose_ks */
		if (sum_gen_json(s, v.kept, mixed ? 0 : v.n_kept, &gen) < 0)
			v.oom = 1;
		if (alloc_values(&v, nk) == 0)
			root = block_json(&v, v.by_id, s->n_tasks, &s->all, dropped, EE_BOOTSTRAP_SEED);
		else
			json_decref(dropped);
		if (root && gen)
			put(&v, root, "generated", gen);
		else
			json_decref(gen);
		if (root && s->unattributed)
			put(&v, root, "samples_without_task", count_json(s->unattributed));
		if (root)
			put(&v, root, "infra_errors", count_json(s->infra_excluded));
		if (root) {
			/* the formula the rewards came from; "mixed": records disagreed */
			json_t *reward = json_object_get(root, "reward");
			put(&v, reward, "formula",
			    s->reward_formula[0] ? json_string(s->reward_formula) : json_null());
			if (s->reward_mixed)
				put(&v, reward, "mixed", json_true());
			put(&v, root, "bootstrap", bootstrap_json(&v));
			put(&v, root, "classes", classes_json(&v));
			put(&v, root, "tiers", tiers_json(&v));
			put(&v, root, "judged_by", judged_by_json(&v));
			put(&v, root, "resources", resources_json(&v));
			if (mixed) {
				put(&v, root, "models", models_json(&v, root, ks, nk));
				unpool_mixed(&v, root, ks, nk);
			}
		}
		if (root && wall_s > 0) {
			put(&v, root, "wall_s", real_or_null(wall_s));
			put(&v, root, "throughput_per_s", real_or_null((double)s->samples / wall_s));
		}
	}
	if (!root || !v.kept || v.oom) {
		json_decref(root);
		root = NULL;
	}
	free(v.kept);
	free(v.by_id);
	free(v.order);
	free(v.start);
	free(v.scratch);
	free(v.values);
	free(v.lo);
	free(v.hi);
	return root;
}

/* ---- the environment -------------------------------------------------- */

#define VERSION_WAIT_MS 5000

/* Reads what fd gives within VERSION_WAIT_MS into buf (NUL-terminated). */
static void read_answer(int fd, char *buf, size_t n)
{
	size_t got = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (got + 1 < n && poll(&p, 1, VERSION_WAIT_MS) == 1) {
		ssize_t r = read(fd, buf + got, n - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
}

/* "3.11.2" out of "Python 3.11.2\n" from `python -I -S -V` (the trusted
 * interpreter itself, no candidate code), or "" when it gives no answer. */
static void python_version(const char *python, char *out, size_t n)
{
	char *const argv[] = { (char *)python, "-I", "-S", "-V", NULL };
	extern char **environ;
	posix_spawn_file_actions_t fa;
	int fds[2];
	pid_t pid;
	char buf[128];

	out[0] = '\0';
	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	int rc = posix_spawn(&pid, python, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc == 0) {
		read_answer(fds[0], buf, sizeof(buf));
		kill(pid, SIGKILL); /* gone already, unless it hung */
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		if (strncmp(buf, "Python ", 7) == 0)
			snprintf(out, n, "%.*s", (int)strcspn(buf + 7, " \r\n"), buf + 7);
	}
	close(fds[0]);
}

json_t *ee_summary_environment(const char *python, int warm, int weak_limits)
{
	struct utsname u;
	char version[64] = "", real[PATH_MAX];
	json_t *interp;

	if (python) {
		python_version(python, version, sizeof(version));
		interp = json_pack("{s:s, s:s, s:o}", "path", python, "realpath",
		                   realpath(python, real) ? real : python, "version",
		                   version[0] ? json_string(version) : json_null());
	} else {
		interp = json_pack("{s:n, s:n, s:n}", "path", "realpath", "version");
	}
	json_t *packages = ee_env_packages(version[0] ? version : NULL);
	return json_pack("{s:s, s:o, s:o*, s:s, s:b, s:s}", "execeval_version", EE_VERSION, "interpreter",
	                 interp, "packages", packages, "isolation", warm ? "warm" : "cold", "weak_limits",
	                 weak_limits, "kernel", uname(&u) == 0 ? u.release : "unknown");
}
