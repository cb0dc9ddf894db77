/* summary.c - accumulating result records into the data-set summary
 * (see summary.h). The metrics are derived in summary_json.c, the table is
 * drawn in summary_print.c.
 *
 * Theory of operation. ee_summary_add validates a record completely first
 * (summary_check.c's sum_check_record fills a struct sum_rec with pointers
 * borrowed from it) and only then counts it, so a rejected record leaves
 * no trace. What is kept:
 *   tasks[]    per task: n, c, sum of scores, class index (task_ix: id -> index)
 *   classes[]  per class: status and detail counts (class_ix: name -> index)
 *   all        the same counts over every record
 *   tiers[]    per tier: tests, tests passed, samples, samples all passed
 *   models[]   per model: the counts of a class, and n, c, sum of scores per
 *              task (model_ix: name -> index; at most EE_SUMMARY_MAX_MODELS)
 * The global detail map admits at most EE_SUMMARY_MAX_DETAILS keys and the
 * per-class and per-model maps only use its keys (or "(other)"), so every
 * map is capped. A record counts in up to three sum_counts at once: the
 * totals, its class's and its model's (struct into).
 */
#include "results/summary.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/jsonfield.h"
#include "results/summary_int.h"
#include "verdict/reward.h"
#include "verdict/violations.h"
#include "base/text.h"

const char *const ee_summary_status_names[SUM_N_STATUS] = { "pass", "assertion_fail", "syntax_error",
	                                                    "timeout", "error" };
const char *const ee_summary_syntax_names[SUM_N_SYNTAX] = { "syntax error", "import error", SUM_OTHER };

/* The classes of violations.h, escape class first. */
const char *const sum_violation_classes[SUM_N_VCLASS] = { "network",    "ptrace",    "mount",
	                                                  "namespaces", "privilege", "kernel",
	                                                  "import",     "limit",     "other" };
const char *const ee_summary_judged_by_names[SUM_N_JUDGED_BY] = { "supervisor", "judge", "candidate",
	                                                          "sandbox" };

struct ee_summary *ee_summary_new(void)
{
	return calloc(1, sizeof(struct ee_summary));
}

void ee_summary_free(struct ee_summary *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_classes; i++) {
		free(s->classes[i].name);
		ee_strmap_free(&s->classes[i].counts.details);
		ee_strmap_free(&s->classes[i].counts.lint_codes);
		ee_strmap_free(&s->classes[i].counts.rewards);
	}
	for (size_t i = 0; i < s->n_tiers; i++)
		free(s->tiers[i].name);
	for (size_t i = 0; i < s->n_models; i++) {
		free(s->models[i].name);
		free(s->models[i].tasks);
		ee_strmap_free(&s->models[i].counts.details);
		ee_strmap_free(&s->models[i].counts.lint_codes);
		ee_strmap_free(&s->models[i].counts.rewards);
	}
	ee_strmap_free(&s->model_ix);
	ee_strmap_free(&s->task_ix);
	ee_strmap_free(&s->class_ix);
	ee_strmap_free(&s->tier_ix);
	ee_strmap_free(&s->all.details);
	ee_strmap_free(&s->all.lint_codes);
	ee_strmap_free(&s->all.rewards);
	free(s->tasks);
	free(s->classes);
	free(s);
}

static int cmp_slot_key(const void *pa, const void *pb)
{
	return strcmp((*(const struct ee_strmap_slot *const *)pa)->key,
	              (*(const struct ee_strmap_slot *const *)pb)->key);
}

const struct ee_strmap_slot **sum_tasks_by_id(const struct ee_summary *s)
{
	const struct ee_strmap_slot **sl = malloc((s->n_tasks + 1) * sizeof(*sl));
	size_t pos = 0, n = 0;

	if (!sl)
		return NULL;
	while (n < s->n_tasks && (sl[n] = ee_strmap_next(&s->task_ix, &pos)))
		n++;
	qsort(sl, n, sizeof(*sl), cmp_slot_key);
	return sl;
}

struct ee_summary_task *ee_summary_tasks(const struct ee_summary *s, size_t *ret_n)
{
	const struct ee_strmap_slot **sl = sum_tasks_by_id(s);
	struct ee_summary_task *t = malloc((s->n_tasks + 1) * sizeof(*t));

	*ret_n = 0;
	if (!sl || !t) {
		free(sl);
		free(t);
		return NULL;
	}
	for (size_t i = 0; i < s->n_tasks; i++) {
		const struct sum_task *st = &s->tasks[sl[i]->value];
		t[i] = (struct ee_summary_task){ .task_id = sl[i]->key,
			                         .class_name = s->classes[st->cls].name,
			                         .n = st->n,
			                         .c = st->c,
			                         .score_sum = st->score_sum };
	}
	free(sl);
	*ret_n = s->n_tasks;
	return t;
}

struct ee_summary_task *ee_summary_model_tasks(const struct ee_summary *s, const char *model, size_t *ret_n)
{
	const size_t *mi = ee_strmap_get(&s->model_ix, model);
	const struct sum_model *m = mi ? &s->models[*mi] : NULL;
	const struct ee_strmap_slot **sl = m ? sum_tasks_by_id(s) : NULL;
	struct ee_summary_task *t = m ? malloc((s->n_tasks + 1) * sizeof(*t)) : NULL;
	size_t n = 0;

	*ret_n = 0;
	errno = 0;
	if (!m)
		return NULL;
	if (!sl || !t) {
		free(sl);
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < s->n_tasks; i++) {
		size_t ti = sl[i]->value;
		if (ti >= m->n_tasks || m->tasks[ti].n == 0)
			continue;
		t[n++] = (struct ee_summary_task){ .task_id = sl[i]->key,
			                           .class_name = s->classes[s->tasks[ti].cls].name,
			                           .n = m->tasks[ti].n,
			                           .c = m->tasks[ti].c,
			                           .score_sum = m->tasks[ti].score_sum };
	}
	free(sl);
	*ret_n = n;
	return t;
}

/* ---- detail classes ------------------------------------------------------- */

/* "test <digits> failed" followed by the end or ':'. */
static int is_test_failed(const char *d)
{
	if (strncmp(d, "test ", 5) != 0)
		return 0;
	const char *p = d + 5;
	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	return strncmp(p, " failed", 7) == 0 && (p[7] == '\0' || p[7] == ':');
}

void ee_summary_detail_class(const char *d, char *out, size_t size)
{
	static const char *const prefixes[] = { "syntax error", "import error", "setup failed" };
	static const char pv[] = "protocol violation: ";
	static const char starved[] = "timeout (starved"; /* ": N ms of CPU)" varies */
	size_t n = strlen(d);

	if (size == 0)
		return;
	if (size > EE_SUMMARY_DETAIL_BYTES + 1)
		size = EE_SUMMARY_DETAIL_BYTES + 1;
	if (is_test_failed(d)) {
		ee_jf_cut(out, size, "test failed", 11);
		return;
	}
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t len = strlen(prefixes[i]);
		if (strncmp(d, prefixes[i], len) == 0 && (d[len] == '\0' || d[len] == ':')) {
			ee_jf_cut(out, size, d, len);
			return;
		}
	}
	if (strncmp(d, starved, sizeof(starved) - 1) == 0) {
		ee_jf_cut(out, size, "timeout (starved)", 17);
		return;
	}
	if (strncmp(d, pv, sizeof(pv) - 1) == 0) {
		const char *colon = strchr(d + sizeof(pv) - 1, ':');
		if (colon)
			n = (size_t)(colon - d);
	}
	ee_jf_cut(out, size, d, n); /* the rest is short and stable already */
}

/* ---- counting ------------------------------------------------------------- */

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t cap2 = *cap ? *cap * 2 : 16;
	if (cap2 < need || cap2 > SIZE_MAX / elem)
		return -1;
	void *p = realloc(*arr, cap2 * elem);
	if (!p)
		return -1;
	*arr = p;
	*cap = cap2;
	return 0;
}

static int class_index(struct ee_summary *s, const char *name, size_t *ret)
{
	const size_t *v = ee_strmap_get(&s->class_ix, name);
	struct sum_class *c;

	if (v) {
		*ret = *v;
		return 0;
	}
	if (grow((void **)&s->classes, &s->cap_classes, s->n_classes + 1, sizeof(*c)) < 0)
		return -1;
	c = &s->classes[s->n_classes];
	memset(c, 0, sizeof(*c));
	c->name = strdup(name);
	if (!c->name || !ee_strmap_put(&s->class_ix, name, s->n_classes, NULL)) {
		free(c->name);
		return -1;
	}
	*ret = s->n_classes++;
	return 0;
}

static int task_index(struct ee_summary *s, const char *id, size_t cls, size_t *ret)
{
	const size_t *v = ee_strmap_get(&s->task_ix, id);

	if (v) {
		*ret = *v;
		return 0;
	}
	if (grow((void **)&s->tasks, &s->cap_tasks, s->n_tasks + 1, sizeof(*s->tasks)) < 0 ||
	    !ee_strmap_put(&s->task_ix, id, s->n_tasks, NULL))
		return -1;
	s->tasks[s->n_tasks] = (struct sum_task){ .cls = cls };
	*ret = s->n_tasks++;
	return 0;
}

static int bump(struct ee_strmap *m, const char *key)
{
	size_t *v = ee_strmap_put(m, key, 0, NULL);

	if (!v)
		return -1;
	(*v)++;
	return 0;
}

/* The counts one record goes into: the totals first, then its class's and
 * its model's (absent for a record of no task). */
struct into {
	struct sum_counts *c[3];
	size_t n;
};

/* The status, and a syntax_error's kind by its detail (detail: NULL when none). */
static void count_status(const struct into *in, int status, const char *detail)
{
	int kind = SUM_SYNTAX_OTHER;

	for (int k = SUM_SYNTAX_PARSE; detail && k < SUM_SYNTAX_OTHER; k++) {
		size_t len = strlen(ee_summary_syntax_names[k]);
		if (strncmp(detail, ee_summary_syntax_names[k], len) == 0 &&
		    (detail[len] == '\0' || detail[len] == ':'))
			kind = k;
	}
	for (size_t i = 0; i < in->n; i++) {
		in->c[i]->status[status]++;
		if (status == SUM_SYNTAX_ERROR)
			in->c[i]->syntax[kind]++;
	}
}

/* key, or SUM_OTHER when key is new to the totals' map seen and *n keys
 * already fill its cap: the maps stay bounded whatever the records say. */
static const char *capped_key(const struct ee_strmap *seen, size_t *n, size_t cap, const char *key)
{
	if (ee_strmap_get(seen, key))
		return key;
	if (*n >= cap)
		return SUM_OTHER;
	++*n;
	return key;
}

static int count_detail(struct ee_summary *s, const struct into *in, const char *detail)
{
	char d[EE_SUMMARY_DETAIL_BYTES + 1];

	ee_summary_detail_class(detail, d, sizeof(d));
	const char *key = capped_key(&s->all.details, &s->n_details, EE_SUMMARY_MAX_DETAILS, d);
	for (size_t i = 0; i < in->n; i++)
		if (bump(&in->c[i]->details, key) < 0)
			return -1;
	return 0;
}

/* The lint verdict check_lint read and the codes of its findings, in the
 * totals, the class and the model. not_run counts nowhere. -1: out of
 * memory. */
static int count_lint(struct ee_summary *s, const struct into *in, const struct sum_rec *r)
{
	const json_t *f;
	size_t i;

	if (r->lint_pass < 0)
		return 0;
	int pass = r->lint_pass;
	for (size_t j = 0; j < in->n; j++) {
		in->c[j]->lint_pass += pass;
		in->c[j]->lint_fail += !pass;
	}
	json_array_foreach (r->lint_findings, i, f) {
		const char *code = json_string_value(json_object_get(f, "code"));
		char key[32];
		if (!code)
			continue;
		ee_jf_cut(key, sizeof(key), code, strlen(code));
		const char *k =
		        capped_key(&s->all.lint_codes, &s->n_lint_codes, EE_SUMMARY_MAX_LINT_CODES, key);
		for (size_t j = 0; j < in->n; j++)
			if (bump(&in->c[j]->lint_codes, k) < 0)
				return -1;
	}
	return 0;
}

/* The index of name among the *n names kept in ix, at most cap of them,
 * then that of "(other)" (so the arrays hold cap + 1). A new name's copy
 * goes to *ret_new_name, for the caller to keep at that index; else NULL.
 * -1: out of memory. */
static long capped_index(struct ee_strmap *ix, size_t *n, size_t cap, const char *name, char **ret_new_name)
{
	const size_t *v = ee_strmap_get(ix, name);

	*ret_new_name = NULL;
	if (!v && *n >= cap) {
		name = SUM_OTHER;
		v = ee_strmap_get(ix, name);
	}
	if (v)
		return (long)*v;
	char *copy = strdup(name);
	if (!copy || !ee_strmap_put(ix, name, *n, NULL)) {
		free(copy);
		return -1;
	}
	*ret_new_name = copy;
	return (long)(*n)++;
}

/* The tier's slot; past the cap, the "(other)" slot. NULL: out of memory. */
static struct sum_tier *tier_slot(struct ee_summary *s, const char *name)
{
	char *added;
	long i = capped_index(&s->tier_ix, &s->n_tiers, EE_SUMMARY_MAX_TIERS, name, &added);

	if (i < 0)
		return NULL;
	if (added)
		s->tiers[i].name = added;
	return &s->tiers[i];
}

/* The model's slot; past the cap, the "(other)" slot. NULL: out of memory. */
static struct sum_model *model_slot(struct ee_summary *s, const char *name)
{
	char *added;
	long i = capped_index(&s->model_ix, &s->n_models, EE_SUMMARY_MAX_MODELS, name, &added);

	if (i < 0)
		return NULL;
	if (added)
		s->models[i].name = added;
	return &s->models[i];
}

/* The model's counters of task ti, its array grown (zeroed) to reach it. */
static struct sum_task *model_task(struct sum_model *m, size_t ti)
{
	if (grow((void **)&m->tasks, &m->cap_tasks, ti + 1, sizeof(*m->tasks)) < 0)
		return NULL;
	while (m->n_tasks <= ti)
		m->tasks[m->n_tasks++] = (struct sum_task){ 0 };
	return &m->tasks[ti];
}

static int count_tests(struct ee_summary *s, const json_t *tests)
{
	for (size_t i = 0; i < json_array_size(tests); i++) {
		const json_t *test = json_array_get(tests, i);
		const char *tier = json_string_value(json_object_get(test, "tier"));
		int pass = strcmp(json_string_value(json_object_get(test, "status")), "pass") == 0;
		const char *by = json_string_value(json_object_get(test, "judged_by"));
		for (int j = 0; by && j < SUM_N_JUDGED_BY; j++)
			s->judged_by[j] += strcmp(by, ee_summary_judged_by_names[j]) == 0;
		struct sum_tier *t = tier_slot(s, tier ? tier : "canonical");
		if (!t)
			return -1;
		t->tests++;
		t->passed += (unsigned long)pass;
		if (t->seen_at != s->samples) {
			t->seen_at = s->samples;
			t->samples++;
			t->failed = 0;
		}
		t->failed |= !pass;
	}
	for (size_t i = 0; i < s->n_tiers; i++)
		if (s->tiers[i].seen_at == s->samples && !s->tiers[i].failed)
			s->tiers[i].all_passed++;
	return 0;
}

static void count_resources(struct sum_res *res, const json_t *r)
{
	const json_t *wall = json_object_get(r, "wall_ms"), *cpu = json_object_get(r, "cpu_ms");
	const json_t *rss = json_object_get(r, "peak_rss_kb");

	if (json_is_number(wall)) {
		res->n_wall++;
		res->wall_sum += json_number_value(wall);
		res->wall_max = fmax(res->wall_max, json_number_value(wall));
	}
	if (json_is_number(cpu)) {
		res->n_cpu++;
		res->cpu_sum += json_number_value(cpu);
	}
	if (json_is_number(rss)) {
		res->n_rss++;
		res->rss_max = fmax(res->rss_max, json_number_value(rss));
	}
}

static int digits(const char *p, int n, int *ret)
{
	*ret = 0;
	for (int i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		*ret = *ret * 10 + (p[i] - '0');
	}
	return 0;
}

/* "YYYY-MM-DDTHH:MM:SS[.fff]Z" as seconds since the epoch; -1 if malformed. */
static double parse_time(const char *s)
{
	struct tm tm = { 0 };
	double frac = 0.0, scale = 0.1;

	if (!s || strlen(s) < 20 || digits(s, 4, &tm.tm_year) || s[4] != '-' ||
	    digits(s + 5, 2, &tm.tm_mon) || s[7] != '-' || digits(s + 8, 2, &tm.tm_mday) || s[10] != 'T' ||
	    digits(s + 11, 2, &tm.tm_hour) || s[13] != ':' || digits(s + 14, 2, &tm.tm_min) || s[16] != ':' ||
	    digits(s + 17, 2, &tm.tm_sec))
		return -1;
	if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
	    tm.tm_min > 59 || tm.tm_sec > 60)
		return -1;
	const char *p = s + 19;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
			frac += (*p - '0') * scale;
	if (p[0] != 'Z' || p[1] != '\0' || p[-1] == '.')
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	return t < 0 ? -1 : (double)t + frac;
}

static void count_times(struct ee_summary *s, const struct sum_rec *r)
{
	double start = parse_time(r->started), finish = parse_time(r->finished);

	if (start > 0 && (s->first_start == 0 || start < s->first_start))
		s->first_start = start;
	if (finish > 0 && finish > s->last_finish)
		s->last_finish = finish;
}

double ee_summary_span_s(const struct ee_summary *s)
{
	if (s->first_start == 0 || s->last_finish <= s->first_start)
		return 0.0;
	return s->last_finish - s->first_start;
}

/* The record's class: its own, else its task's. */
static int record_class(struct ee_summary *s, const struct sum_rec *r, size_t *ret_cls, size_t *ret_task)
{
	const size_t *ti = ee_strmap_get(&s->task_ix, r->task_id);

	if (ti && !r->cls[0])
		*ret_cls = s->tasks[*ti].cls;
	else if (class_index(s, r->cls, ret_cls) < 0)
		return -1;
	if (task_index(s, r->task_id, *ret_cls, ret_task) < 0)
		return -1;
	struct sum_task *t = &s->tasks[*ret_task];
	if (!s->classes[t->cls].name[0])
		t->cls = *ret_cls; /* a class given late: the task moves */
	return 0;
}

static void count_task(struct sum_task *t, const struct sum_rec *r)
{
	t->n++;
	t->c += r->status == SUM_PASS;
	t->score_sum += r->score;
}

/* The reward's moments and values, in the totals, the class and the
 * model; the formula the records name, and whether they disagree. */
static int count_reward(struct ee_summary *s, const struct into *in, const struct sum_rec *r)
{
	char value[32];
	struct ee_reward binary;

	ee_reward_default(&binary);
	const char *formula = r->reward_formula ? r->reward_formula : ee_reward_text(&binary);
	if (!s->reward_formula[0])
		snprintf(s->reward_formula, sizeof(s->reward_formula), "%s", formula);
	else if (strcmp(s->reward_formula, formula) != 0)
		s->reward_mixed = 1;
	snprintf(value, sizeof(value), "%.6g", r->reward);
	const char *key = r->has_reward
	                          ? capped_key(&s->all.rewards, &s->n_rewards, EE_SUMMARY_MAX_REWARDS, value)
	                          : NULL;
	for (size_t i = 0; i < in->n; i++) {
		struct sum_counts *c = in->c[i];
		c->n_infra += r->infra;
		if (!key)
			continue;
		c->n_reward++;
		c->reward_sum += r->reward;
		c->reward_sq += r->reward * r->reward;
		if (bump(&c->rewards, key) < 0)
			return -1;
	}
	return 0;
}

/* A record's "violations", by class, into the totals, its class and model.
 * Not validated beyond its shape: a count that is no integer counts 0. */
static void count_violations(const struct into *in, const json_t *violations)
{
	unsigned long by_class[SUM_N_VCLASS] = { 0 };
	const char *kind;
	json_t *n;
	int any = 0, escape = 0;

	json_object_foreach ((json_t *)violations, kind, n) {
		json_int_t k = json_is_integer(n) ? json_integer_value(n) : 0;
		if (k <= 0)
			continue;
		const char *cls = ee_violation_class(kind);
		for (size_t i = 0; i < SUM_N_VCLASS; i++)
			if (strcmp(cls, sum_violation_classes[i]) == 0)
				by_class[i] += (unsigned long)k;
		any = 1;
		escape |= ee_violation_is_escape(kind);
	}
	for (size_t j = 0; j < in->n; j++) {
		for (size_t i = 0; i < SUM_N_VCLASS; i++)
			in->c[j]->violations[i] += by_class[i];
		in->c[j]->violating += any;
		in->c[j]->escaping += escape;
	}
}

int ee_summary_add(struct ee_summary *s, const json_t *record, const char *where, struct ee_err *err)
{
	struct ee_jf c = ee_jf_make(where, err);
	struct sum_rec r;
	struct into in = { { NULL }, 1 };
	size_t cls, ti;

	if (sum_check_record(s, record, &c, &r) < 0 || sum_gen_check(record, &c) < 0)
		return -1;
	in.c[0] = &s->all;
	if (r.infra) { /* the host failed, not the model: out of n (docs/summary.md) */
		s->infra_excluded++;
		s->all.n_infra++;
		return 0;
	}
	if (!r.task_id) { /* an invalid sample of no known task: in the totals only */
		s->samples++;
		s->unattributed++;
		count_status(&in, r.status, r.detail);
		return count_detail(s, &in, r.detail) < 0 || count_reward(s, &in, &r) < 0
		               ? ee_fail(err, EE_ERR_USAGE, "out of memory")
		               : 0;
	}
	struct sum_model *m = model_slot(s, r.model);
	if (!m || record_class(s, &r, &cls, &ti) < 0)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	struct sum_task *mt = model_task(m, ti);
	if (!mt)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	in.c[in.n++] = &s->classes[cls].counts;
	in.c[in.n++] = &m->counts;
	s->samples++;
	count_task(&s->tasks[ti], &r);
	count_task(mt, &r);
	sum_gen_count(s, record, r.status == SUM_PASS, &s->tasks[ti], mt);
	count_status(&in, r.status, r.detail);
	if ((r.detail && count_detail(s, &in, r.detail) < 0) || count_tests(s, r.tests) < 0 ||
	    count_lint(s, &in, &r) < 0 || count_reward(s, &in, &r) < 0)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (r.resources)
		count_resources(&s->res, r.resources);
	if (json_is_object(json_object_get(record, "violations")))
		count_violations(&in, json_object_get(record, "violations"));
	count_times(s, &r);
	return 0;
}
