/* compare.c - the comparison of two sides: metric rows, the gate, classes
 * and paired tasks, as the report JSON (compare.h). Printing is in
 * compare_print.c, reading the inputs in compare_load.c.
 *
 * The metrics shown are the gated ones and every other one either side
 * has, in a fixed order: pass@k by k, mean_score, lint_pass_rate,
 * composite, timeout_rate. The per-task lists come from a merge of the two
 * sides' task arrays, both sorted by id, so the work is O(tasks log tasks)
 * and the memory O(tasks).
 */
#include "results/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "results/summary.h"

/* ---- metrics ---------------------------------------------------------------- */

static const struct {
	const char *name;
	enum ee_metric_kind kind;
} named[] = {
	{ "mean_score", EE_METRIC_MEAN_SCORE },
	{ "lint_pass_rate", EE_METRIC_LINT_PASS_RATE },
	{ "composite", EE_METRIC_COMPOSITE },
	{ "timeout_rate", EE_METRIC_TIMEOUT_RATE },
};
#define N_NAMED (sizeof(named) / sizeof(named[0]))

int ee_metric_parse(const char *name, struct ee_metric *ret, struct ee_err *err)
{
	for (size_t i = 0; i < N_NAMED; i++)
		if (strcmp(name, named[i].name) == 0) {
			*ret = (struct ee_metric){ .kind = named[i].kind };
			return 0;
		}
	if (strncmp(name, "pass@", 5) == 0) {
		const char *p = name + 5;
		unsigned long k = 0;
		for (; *p >= '0' && *p <= '9' && k <= EE_COMPARE_MAX_K; p++)
			k = k * 10 + (unsigned long)(*p - '0');
		if (p != name + 5 && !*p && k > 0 && k <= EE_COMPARE_MAX_K && name[5] != '0') {
			*ret = (struct ee_metric){ .kind = EE_METRIC_PASS_AT_K, .k = k };
			return 0;
		}
	}
	return ee_fail(err, EE_ERR_USAGE,
	               "unknown metric '%.60s' (known: pass@K, mean_score, lint_pass_rate, composite, "
	               "timeout_rate)",
	               name);
}

void ee_metric_name(const struct ee_metric *m, char *out, size_t size)
{
	if (m->kind == EE_METRIC_PASS_AT_K) {
		snprintf(out, size, "pass@%lu", m->k);
		return;
	}
	for (size_t i = 0; i < N_NAMED; i++)
		if (named[i].kind == m->kind)
			snprintf(out, size, "%s", named[i].name);
}

static int same_metric(const struct ee_metric *a, const struct ee_metric *b)
{
	return a->kind == b->kind && (a->kind != EE_METRIC_PASS_AT_K || a->k == b->k);
}

/* The order rows are shown in. */
static int cmp_metric(const void *pa, const void *pb)
{
	const struct ee_metric *a = pa, *b = pb;

	if (a->kind != b->kind)
		return (int)a->kind - (int)b->kind;
	return (a->k > b->k) - (a->k < b->k);
}

/* A metric's value in one block (the top level or a class). */
struct value {
	int has, has_ci;
	double v, lo, hi;
};

static void read_interval(const json_t *ci, struct value *out)
{
	if (json_array_size(ci) != 2)
		return;
	out->has_ci = 1;
	out->lo = json_number_value(json_array_get(ci, 0));
	out->hi = json_number_value(json_array_get(ci, 1));
}

/* The block passed ee_compare_check_summary: types are known. */
static struct value metric_value(const json_t *block, const struct ee_metric *m)
{
	struct value out = { 0 };
	const json_t *v = NULL;
	char key[32];

	switch (m->kind) {
	case EE_METRIC_PASS_AT_K:
		snprintf(key, sizeof(key), "%lu", m->k);
		v = json_object_get(json_object_get(block, "pass_at_k"), key);
		read_interval(json_object_get(json_object_get(block, "pass_at_k_ci"), key), &out);
		break;
	case EE_METRIC_MEAN_SCORE:
		v = json_object_get(block, "mean_score");
		read_interval(json_object_get(block, "mean_score_ci"), &out);
		break;
	case EE_METRIC_LINT_PASS_RATE:
		v = json_object_get(json_object_get(block, "lint"), "pass_rate");
		break;
	case EE_METRIC_COMPOSITE: v = json_object_get(json_object_get(block, "composite"), "value"); break;
	case EE_METRIC_TIMEOUT_RATE: {
		const json_t *samples = json_object_get(block, "samples");
		const json_t *timeout = json_object_get(json_object_get(block, "statuses"), "timeout");
		if (json_is_integer(samples) && json_integer_value(samples) > 0 && json_is_integer(timeout)) {
			out.has = 1;
			out.v = (double)json_integer_value(timeout) / (double)json_integer_value(samples);
		}
		return out;
	}
	}
	out.has = json_is_number(v);
	out.v = json_number_value(v);
	if (!out.has)
		out.has_ci = 0;
	return out;
}

/* Why the metric is not in the summary, for the error message. */
static void why_missing(const json_t *summary, const struct ee_metric *m, char *out, size_t size)
{
	const json_t *d;
	size_t i;

	switch (m->kind) {
	case EE_METRIC_PASS_AT_K:
		json_array_foreach (json_object_get(summary, "pass_at_k_dropped"), i, d)
			if (json_integer_value(json_object_get(d, "k")) == (json_int_t)m->k) {
				snprintf(out, size, "%s", json_string_value(json_object_get(d, "reason")));
				return;
			}
		snprintf(
		        out, size,
		        "its pass_at_k has no \"%lu\" (pass@k needs k samples of every task, and -k %lu when "
		        "the summary was written)",
		        m->k, m->k);
		return;
	case EE_METRIC_MEAN_SCORE: snprintf(out, size, "no mean_score (no tasks?)"); return;
	case EE_METRIC_LINT_PASS_RATE:
		snprintf(out, size, "no lint.pass_rate (the run had no lint phase)");
		return;
	case EE_METRIC_COMPOSITE:
		snprintf(out, size, "no composite.value (the run had no composite score)");
		return;
	case EE_METRIC_TIMEOUT_RATE: snprintf(out, size, "no samples or no statuses.timeout"); return;
	}
}

/* ---- the metric list ----------------------------------------------------------- */

struct metric_list {
	struct ee_metric *m;
	size_t n, cap;
};

static int list_add(struct metric_list *l, const struct ee_metric *m)
{
	for (size_t i = 0; i < l->n; i++)
		if (same_metric(&l->m[i], m))
			return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct ee_metric *p = realloc(l->m, cap * sizeof(*p));
		if (!p)
			return -1;
		l->m = p;
		l->cap = cap;
	}
	l->m[l->n++] = *m;
	return 0;
}

/* Every metric the block has. */
static int list_block(struct metric_list *l, const json_t *block)
{
	const char *key;
	json_t *v;
	char name[64];
	struct ee_metric m;

	json_object_foreach (json_object_get(block, "pass_at_k"), key, v) {
		snprintf(name, sizeof(name), "pass@%s", key);
		if (!json_is_null(v) && ee_metric_parse(name, &m, NULL) == 0 && list_add(l, &m) < 0)
			return -1;
	}
	for (size_t i = 0; i < N_NAMED; i++) {
		m = (struct ee_metric){ .kind = named[i].kind };
		if (metric_value(block, &m).has && list_add(l, &m) < 0)
			return -1;
	}
	return 0;
}

/* ---- rows ------------------------------------------------------------------------ */

struct builder {
	const struct ee_compare_options *o;
	int oom;
};

static void put(struct builder *b, json_t *obj, const char *key, json_t *val)
{
	if (!val || json_object_set_new(obj, key, val) < 0)
		b->oom = 1;
}

static void append(struct builder *b, json_t *arr, json_t *val)
{
	if (!val || json_array_append_new(arr, val) < 0)
		b->oom = 1;
}

static json_t *number_or_null(int has, double v)
{
	return has && isfinite(v) ? json_real(v) : json_null();
}

static json_t *interval_or_null(const struct value *v)
{
	return v->has && v->has_ci ? json_pack("[f, f]", v->lo, v->hi) : json_null();
}

static int is_gated(const struct builder *b, const struct ee_metric *m)
{
	for (size_t i = 0; i < b->o->n_gated; i++)
		if (same_metric(&b->o->gated[i], m))
			return 1;
	return 0;
}

/* How much worse new is than base (negative: better). */
static double worse_by(const struct ee_metric *m, double base, double new_v)
{
	return m->kind == EE_METRIC_TIMEOUT_RATE ? new_v - base : base - new_v;
}

/* One row; top: with "gated" and "regressed". *ret_regressed when so. */
static json_t *row_json(struct builder *b, const struct ee_metric *m, const json_t *base_block,
                        const json_t *new_block, int top, int *ret_regressed)
{
	struct value bv = metric_value(base_block, m), nv = metric_value(new_block, m);
	json_t *row = json_object();
	char name[EE_COMPARE_NAME_MAX];
	int both = bv.has && nv.has;

	if (!row) {
		b->oom = 1;
		return NULL;
	}
	ee_metric_name(m, name, sizeof(name));
	put(b, row, "metric", json_string(name));
	if (top)
		put(b, row, "gated", json_boolean(is_gated(b, m)));
	put(b, row, "base", number_or_null(bv.has, bv.v));
	put(b, row, "new", number_or_null(nv.has, nv.v));
	put(b, row, "delta", number_or_null(both, nv.v - bv.v));
	put(b, row, "base_ci", interval_or_null(&bv));
	put(b, row, "new_ci", interval_or_null(&nv));
	if (bv.has && nv.has && bv.has_ci && nv.has_ci)
		put(b, row, "ci_overlap", json_boolean(bv.lo <= nv.hi && nv.lo <= bv.hi));
	else
		put(b, row, "ci_overlap", json_null());
	if (top) {
		int regressed =
		        is_gated(b, m) && both && worse_by(m, bv.v, nv.v) > b->o->epsilon + EE_COMPARE_SLACK;
		put(b, row, "regressed", json_boolean(regressed));
		*ret_regressed = regressed;
	}
	return row;
}

static json_t *rows_json(struct builder *b, const struct metric_list *l, const json_t *base_block,
                         const json_t *new_block, int top, json_t *regressions)
{
	json_t *rows = json_array();
	char name[EE_COMPARE_NAME_MAX];

	for (size_t i = 0; rows && i < l->n; i++) {
		int regressed = 0;
		if (!top && !metric_value(base_block, &l->m[i]).has && !metric_value(new_block, &l->m[i]).has)
			continue;
		append(b, rows, row_json(b, &l->m[i], base_block, new_block, top, &regressed));
		if (regressed) {
			ee_metric_name(&l->m[i], name, sizeof(name));
			append(b, regressions, json_string(name));
		}
	}
	return rows;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The classes of either side, by name, each with its rows. */
static json_t *classes_json(struct builder *b, const struct metric_list *l, const json_t *base_cls,
                            const json_t *new_cls)
{
	size_t cap = json_object_size(base_cls) + json_object_size(new_cls), n = 0;
	const char **names = malloc((cap + 1) * sizeof(*names));
	json_t *obj = json_object(), *v;
	const char *key;

	if (!names || !obj) {
		free(names);
		json_decref(obj);
		b->oom = 1;
		return NULL;
	}
	json_object_foreach ((json_t *)base_cls, key, v)
		names[n++] = key;
	json_object_foreach ((json_t *)new_cls, key, v)
		if (!json_object_get(base_cls, key))
			names[n++] = key;
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		const json_t *bb = json_object_get(base_cls, names[i]),
		             *nb = json_object_get(new_cls, names[i]);
		put(b, obj, names[i], rows_json(b, l, bb, nb, 0, NULL));
	}
	free(names);
	return obj;
}

/* ---- paired tasks ------------------------------------------------------------------ */

struct change {
	const char *id;
	double base, new_v;
};

static int cmp_change(const void *pa, const void *pb)
{
	const struct change *a = pa, *b = pb;
	double da = a->new_v - a->base, db = b->new_v - b->base;

	if (da != db)
		return da < db ? -1 : 1;
	return strcmp(a->id, b->id);
}

static double rate(const struct ee_summary_task *t)
{
	return (double)t->c / (double)t->n;
}

static int passes(double r)
{
	return r >= EE_COMPARE_PASS_THRESHOLD;
}

static json_t *changes_json(struct builder *b, struct change *ch, size_t n)
{
	json_t *arr = json_array();

	qsort(ch, n, sizeof(*ch), cmp_change);
	for (size_t i = 0; arr && i < n; i++)
		append(b, arr,
		       json_pack("{s:s, s:f, s:f, s:f}", "task_id", ch[i].id, "base", ch[i].base, "new",
		                 ch[i].new_v, "delta", ch[i].new_v - ch[i].base));
	return arr;
}

/* A merge of the two id-sorted task arrays. */
static json_t *tasks_json(struct builder *b, const struct ee_compare_side *base,
                          const struct ee_compare_side *nw)
{
	json_t *only_base = json_array(), *only_new = json_array(), *p2f = json_array(), *f2p = json_array();
	struct change *ch = malloc((base->n_tasks + 1) * sizeof(*ch));
	size_t i = 0, j = 0, n_ch = 0, paired = 0;
	json_t *out = NULL;

	if (!only_base || !only_new || !p2f || !f2p || !ch)
		goto out;
	while (i < base->n_tasks || j < nw->n_tasks) {
		int c = i == base->n_tasks ? 1
		        : j == nw->n_tasks ? -1
		                           : strcmp(base->tasks[i].task_id, nw->tasks[j].task_id);
		if (c < 0) {
			append(b, only_base, json_string(base->tasks[i++].task_id));
			continue;
		}
		if (c > 0) {
			append(b, only_new, json_string(nw->tasks[j++].task_id));
			continue;
		}
		double rb = rate(&base->tasks[i]), rn = rate(&nw->tasks[j]);
		const char *id = base->tasks[i].task_id;
		paired++;
		if (passes(rb) && !passes(rn))
			append(b, p2f, json_string(id));
		if (!passes(rb) && passes(rn))
			append(b, f2p, json_string(id));
		if (rb != rn)
			ch[n_ch++] = (struct change){ id, rb, rn };
		i++, j++;
	}
	out = json_pack("{s:I, s:O, s:O, s:O, s:O, s:o}", "paired", (json_int_t)paired, "only_base",
	                only_base, "only_new", only_new, "pass_to_fail", p2f, "fail_to_pass", f2p, "changed",
	                changes_json(b, ch, n_ch));
out:
	if (!out)
		b->oom = 1;
	json_decref(only_base);
	json_decref(only_new);
	json_decref(p2f);
	json_decref(f2p);
	free(ch);
	return out;
}

/* ---- the report ----------------------------------------------------------------------- */

/* "tasks": the side's own, also when its summary was restricted to the
 * paired tasks. */
static json_t *side_json(const struct ee_compare_side *s)
{
	const json_t *tasks = json_object_get(s->summary, "tasks");

	if (s->tasks)
		return json_pack("{s:s, s:s, s:I}", "source", s->source, "kind", s->kind, "tasks",
		                 (json_int_t)s->n_tasks);
	return json_pack("{s:s, s:s, s:O}", "source", s->source, "kind", s->kind, "tasks",
	                 tasks ? tasks : json_null());
}

static json_t *sha_or_null(const struct ee_compare_side *s)
{
	return s->tasks_sha256[0] ? json_string(s->tasks_sha256) : json_null();
}

/* Whether the sides ran on one data set, and what the metrics cover. */
static json_t *data_set_json(const struct ee_compare_side *base, const struct ee_compare_side *nw)
{
	int same = ee_compare_same_data(base, nw);

	return json_pack("{s:o, s:o, s:o, s:b}", "same", same < 0 ? json_null() : json_boolean(same),
	                 "base_tasks_sha256", sha_or_null(base), "new_tasks_sha256", sha_or_null(nw),
	                 "paired_only", base->paired_only && nw->paired_only);
}

/* Every gated metric must be in both sides. */
static int check_gated(const struct ee_compare_side *base, const struct ee_compare_side *nw,
                       const struct ee_compare_options *o, struct ee_err *err)
{
	const struct ee_compare_side *sides[2] = { base, nw };
	static const char *const which[2] = { "BASE", "NEW" };
	char name[EE_COMPARE_NAME_MAX], why[160];

	for (size_t i = 0; i < o->n_gated; i++)
		for (int s = 0; s < 2; s++)
			if (!metric_value(sides[s]->summary, &o->gated[i]).has) {
				ee_metric_name(&o->gated[i], name, sizeof(name));
				why_missing(sides[s]->summary, &o->gated[i], why, sizeof(why));
				return ee_fail(err, EE_ERR_USAGE, "%s: gated metric %s missing in %s: %s",
				               sides[s]->source, name, which[s], why);
			}
	return 0;
}

static json_t *ci_level(const json_t *summary)
{
	const json_t *level = json_object_get(json_object_get(summary, "bootstrap"), "level");

	return json_is_number(level) ? json_real(json_number_value(level)) : json_null();
}

int ee_compare(const struct ee_compare_side *base, const struct ee_compare_side *new_side,
               const struct ee_compare_options *o, json_t **ret, struct ee_err *err)
{
	struct builder b = { .o = o };
	struct metric_list l = { 0 };
	json_t *r = NULL, *gated = json_array(), *regressions = json_array();
	char name[EE_COMPARE_NAME_MAX];

	*ret = NULL;
	if (!(o->epsilon >= 0.0) || !isfinite(o->epsilon)) {
		json_decref(gated);
		json_decref(regressions);
		return ee_fail(err, EE_ERR_USAGE, "epsilon must be a finite number >= 0");
	}
	if (check_gated(base, new_side, o, err) < 0) {
		json_decref(gated);
		json_decref(regressions);
		return -1;
	}
	for (size_t i = 0; i < o->n_gated && gated; i++) {
		ee_metric_name(&o->gated[i], name, sizeof(name));
		append(&b, gated, json_string(name));
		if (list_add(&l, &o->gated[i]) < 0)
			b.oom = 1;
	}
	if (list_block(&l, base->summary) < 0 || list_block(&l, new_side->summary) < 0)
		b.oom = 1;
	if (l.n)
		qsort(l.m, l.n, sizeof(*l.m), cmp_metric);
	r = json_object();
	if (r && gated && regressions && !b.oom) {
		put(&b, r, "base", side_json(base));
		put(&b, r, "new", side_json(new_side));
		put(&b, r, "epsilon", json_real(o->epsilon));
		put(&b, r, "gated", json_incref(gated));
		put(&b, r, "ci_level", ci_level(base->summary));
		put(&b, r, "metrics", rows_json(&b, &l, base->summary, new_side->summary, 1, regressions));
		put(&b, r, "classes",
		    classes_json(&b, &l, json_object_get(base->summary, "classes"),
		                 json_object_get(new_side->summary, "classes")));
		put(&b, r, "tasks",
		    base->tasks && new_side->tasks ? tasks_json(&b, base, new_side) : json_null());
		put(&b, r, "data_set", data_set_json(base, new_side));
		put(&b, r, "regressions", json_incref(regressions));
	}
	free(l.m);
	json_decref(gated);
	json_decref(regressions);
	if (!r || b.oom) {
		json_decref(r);
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	}
	*ret = r;
	return 0;
}
