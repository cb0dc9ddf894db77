/* report.c - gathering a results file for the report (report.h).
 *
 * Each record first goes to the summary (src/results/summary.c), which validates
 * it and keeps the data set's metrics; only a record it accepts is counted
 * here, so the page and `execeval metrics` always agree. Per task this
 * file adds what the summary does not keep: the worst status, the largest
 * wall time and memory, and a few failing samples to show.
 *
 * Which failing samples are shown: the first EE_REPORT_SHOWN; after that a
 * failure of a detail class not shown yet ("timeout" when only "test
 * failed" is shown) replaces the newest one whose class is shown twice, so
 * a task shows the variety of its failures. A kept failure is a small JSON
 * object of copies cut to size:
 *   {"sample": n|null, "model": s?, "status": s, "detail": s?,
 *    "more": s? (a sandbox error's or an invalid sample's message),
 *    "tests": [{"index", "kind", "tier", "visibility", "message"}] (the
 *    failing ones), "failing_tests": n, "stderr": s? (its end),
 *    "stderr_cut": bool, "program": s? (its start), "program_cut": bool
 *    (cut here, or already in the record: "program_truncated")}
 */
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "report/out.h"
#include "report/report_int.h"
#include "results/summary.h"

const char *const ee_report_status_names[REP_N_STATUS] = { "pass", "assertion_fail", "syntax_error",
	                                                   "timeout", "error" };

struct ee_report *ee_report_new(void)
{
	struct ee_report *r = calloc(1, sizeof(*r));

	if (r && !(r->summary = ee_summary_new())) {
		free(r);
		return NULL;
	}
	return r;
}

void ee_report_free(struct ee_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_tasks; i++) {
		free(r->tasks[i].id);
		free(r->tasks[i].cls);
		json_decref(r->tasks[i].shown);
	}
	free(r->tasks);
	ee_strmap_free(&r->task_ix);
	ee_strmap_free(&r->models);
	ee_summary_free(r->summary);
	free(r);
}

/* ---- reading a record ------------------------------------------------------ */

static int is_special(const json_t *rec)
{
	const json_t *se = json_object_get(rec, "sandbox_error");
	return (se && !json_is_null(se)) || json_is_true(json_object_get(rec, "invalid"));
}

static int status_of(const json_t *rec)
{
	const char *s = json_string_value(json_object_get(rec, "status"));

	if (is_special(rec) || !s)
		return REP_ERROR;
	for (int i = 0; i < REP_N_STATUS; i++)
		if (strcmp(s, ee_report_status_names[i]) == 0)
			return i;
	return REP_ERROR; /* not reached: the summary accepted the record */
}

/* resources.key as a number >= 0, else -1. */
static double resource(const json_t *rec, const char *key)
{
	const json_t *v = json_object_get(json_object_get(rec, "resources"), key);
	return json_is_number(v) && json_number_value(v) >= 0 ? json_number_value(v) : -1;
}

/* FNV-1a: which detail class a shown failure has. */
static uint64_t kind_hash(const char *detail)
{
	char cls[EE_SUMMARY_DETAIL_BYTES + 1];
	uint64_t h = 1469598103934665603ull;

	ee_summary_detail_class(detail ? detail : "", cls, sizeof(cls));
	for (const char *p = cls; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

/* ---- a failure to show ----------------------------------------------------- */

/* obj[key] = a copy of s cut to max characters; adds its size to *cost. */
static int put_cut(json_t *obj, const char *key, const char *s, size_t max, int from_end, int *ret_cut,
                   size_t *cost)
{
	char *copy = ee_out_cut_copy(s, max, from_end, ret_cut);

	if (!copy)
		return -1;
	*cost += strlen(copy) + 32;
	int rc = json_object_set_new(obj, key, json_string(copy));
	free(copy);
	return rc;
}

static json_t *failing_tests(const json_t *tests, unsigned long *ret_failing, size_t *cost)
{
	json_t *out = json_array();

	*ret_failing = 0;
	for (size_t i = 0; out && i < json_array_size(tests); i++) {
		const json_t *t = json_array_get(tests, i);
		const char *status = json_string_value(json_object_get(t, "status"));
		if (!status || strcmp(status, "fail") != 0 || (*ret_failing)++ >= EE_REPORT_TESTS_SHOWN)
			continue;
		static const char *const keys[] = { "kind", "tier", "visibility" };
		const json_t *index = json_object_get(t, "index");
		json_t *o = json_object();
		int bad = !o || json_array_append_new(out, o) < 0 ||
		          json_object_set_new(o, "index",
		                              json_is_integer(index) ? json_copy((json_t *)index)
		                                                     : json_null()) < 0;
		for (size_t k = 0; !bad && k < sizeof(keys) / sizeof(keys[0]); k++) {
			const char *v = json_string_value(json_object_get(t, keys[k]));
			bad = v && put_cut(o, keys[k], v, 40, 0, NULL, cost) < 0;
		}
		const char *msg = json_string_value(json_object_get(t, "message"));
		if (bad || (msg && put_cut(o, "message", msg, EE_REPORT_MESSAGE_CHARS, 0, NULL, cost) < 0)) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* The detail shown for a record: its own, the host's sandbox error, or an
 * invalid sample's message. */
static const char *detail_of(const json_t *rec, const char **ret_more)
{
	const char *se = json_string_value(json_object_get(rec, "sandbox_error"));

	*ret_more = NULL;
	if (se) {
		*ret_more = se;
		return "sandbox error";
	}
	if (json_is_true(json_object_get(rec, "invalid")))
		*ret_more = json_string_value(json_object_get(rec, "message"));
	return json_string_value(json_object_get(rec, "detail"));
}

/* f["program"]: the start of the code that ran, and whether the page
 * shows less than the candidate's whole program ("program_cut"). */
static int put_program(json_t *f, const json_t *rec, size_t *cost)
{
	const char *program = json_string_value(json_object_get(rec, "program"));
	int cut = 0;

	if (!program || !program[0])
		return 0;
	if (put_cut(f, "program", program, EE_REPORT_PROGRAM_CHARS, 0, &cut, cost) < 0)
		return -1;
	cut |= json_is_true(json_object_get(rec, "program_truncated"));
	return json_object_set_new(f, "program_cut", json_boolean(cut));
}

static json_t *failure_json(const json_t *rec, int status, size_t *cost)
{
	json_t *f = json_object(), *sample = json_object_get(rec, "sample");
	const char *more, *detail = detail_of(rec, &more);
	const char *model = json_string_value(json_object_get(rec, "model"));
	const char *err = json_string_value(json_object_get(rec, "stderr"));
	unsigned long failing = 0;
	int cut = 0;

	*cost = 64;
	if (!f)
		return NULL;
	json_t *tests = failing_tests(json_object_get(rec, "tests"), &failing, cost);
	int bad = !tests || json_object_set_new(f, "tests", tests) < 0 ||
	          json_object_set_new(f, "sample",
	                              json_is_integer(sample) ? json_copy(sample) : json_null()) < 0 ||
	          json_object_set_new(f, "status", json_string(ee_report_status_names[status])) < 0 ||
	          json_object_set_new(f, "failing_tests", json_integer((json_int_t)failing)) < 0 ||
	          (model && put_cut(f, "model", model, 80, 0, NULL, cost) < 0) ||
	          (detail && put_cut(f, "detail", detail, EE_REPORT_MESSAGE_CHARS, 0, NULL, cost) < 0) ||
	          (more && put_cut(f, "more", more, EE_REPORT_MESSAGE_CHARS, 0, NULL, cost) < 0) ||
	          (err && err[0] && put_cut(f, "stderr", err, EE_REPORT_STDERR_CHARS, 1, &cut, cost) < 0) ||
	          json_object_set_new(f, "stderr_cut", json_boolean(cut)) < 0 ||
	          put_program(f, rec, cost) < 0;
	if (bad) {
		json_decref(f);
		return NULL;
	}
	return f;
}

/* Where a failure of this kind goes among t's shown ones: an index, or -1
 * for nowhere (see the top of the file). */
static int slot_for(const struct rep_task *t, uint64_t kind)
{
	size_t n = json_array_size(t->shown);

	if (n < EE_REPORT_SHOWN)
		return (int)n;
	for (size_t i = 0; i < n; i++)
		if (t->shown_kind[i] == kind)
			return -1;
	for (size_t i = n; i-- > 0;)
		for (size_t j = 0; j < n; j++)
			if (j != i && t->shown_kind[j] == t->shown_kind[i])
				return (int)i;
	return -1;
}

static int keep_failure(struct ee_report *r, struct rep_task *t, const json_t *rec, int status)
{
	const char *more;
	uint64_t kind = kind_hash(detail_of(rec, &more));
	int slot = slot_for(t, kind);
	size_t cost;

	if (slot < 0)
		return 0;
	size_t freed = (size_t)slot < json_array_size(t->shown) ? t->shown_cost[slot] : 0;
	json_t *f = failure_json(rec, status, &cost);
	if (!f)
		return -1;
	if (r->kept_bytes - freed + cost > EE_REPORT_KEEP_BYTES) {
		json_decref(f);
		r->unkept++;
		return 0;
	}
	/* both steal f, also when they fail */
	if ((size_t)slot < json_array_size(t->shown) ? json_array_set_new(t->shown, (size_t)slot, f) < 0
	                                             : json_array_append_new(t->shown, f) < 0)
		return -1;
	r->kept_bytes = r->kept_bytes - freed + cost;
	t->shown_kind[slot] = kind;
	t->shown_cost[slot] = cost;
	return 0;
}

/* ---- counting -------------------------------------------------------------- */

static struct rep_task *task_of(struct ee_report *r, const char *id)
{
	const size_t *v = ee_strmap_get(&r->task_ix, id);

	if (v)
		return &r->tasks[*v];
	if (r->n_tasks == r->cap_tasks) {
		size_t cap = r->cap_tasks ? r->cap_tasks * 2 : 64;
		struct rep_task *p = cap < SIZE_MAX / sizeof(*p) ? realloc(r->tasks, cap * sizeof(*p)) : NULL;
		if (!p)
			return NULL;
		r->tasks = p;
		r->cap_tasks = cap;
	}
	struct rep_task *t = &r->tasks[r->n_tasks];
	memset(t, 0, sizeof(*t));
	t->wall_max = t->mem_max = -1;
	t->id = strdup(id);
	t->shown = json_array();
	if (!t->id || !t->shown || !ee_strmap_put(&r->task_ix, id, r->n_tasks, NULL)) {
		free(t->id);
		json_decref(t->shown);
		return NULL;
	}
	r->n_tasks++;
	return t;
}

static int note_model(struct ee_report *r, const json_t *rec)
{
	const char *m = json_string_value(json_object_get(rec, "model"));

	if (!m || ee_strmap_get(&r->models, m))
		return 0;
	if (r->models.len >= REP_MAX_MODELS) {
		r->more_models = 1;
		return 0;
	}
	return ee_strmap_put(&r->models, m, 0, NULL) ? 0 : -1;
}

static int count(struct ee_report *r, const json_t *rec)
{
	const char *id = json_string_value(json_object_get(rec, "task_id"));
	const char *cls = json_string_value(json_object_get(rec, "class"));
	int status = status_of(rec);

	r->records++;
	if (note_model(r, rec) < 0)
		return -1;
	if (!id) /* an invalid sample of no known task: in the totals only */
		return 0;
	struct rep_task *t = task_of(r, id);
	if (!t)
		return -1;
	if (!t->cls && cls && cls[0] && !(t->cls = strdup(cls)))
		return -1;
	t->n++;
	t->c += status == REP_PASS;
	t->score_sum += is_special(rec) ? 0 : json_number_value(json_object_get(rec, "score"));
	t->worst = status > t->worst ? status : t->worst;
	double wall = resource(rec, "wall_ms"), mem = resource(rec, "peak_memory_kb");
	if (mem < 0)
		mem = resource(rec, "peak_rss_kb");
	t->wall_max = wall > t->wall_max ? wall : t->wall_max;
	t->mem_max = mem > t->mem_max ? mem : t->mem_max;
	if (status == REP_PASS)
		return 0;
	t->failures++;
	return keep_failure(r, t, rec, status);
}

const struct ee_summary *ee_report_summary(const struct ee_report *r)
{
	return r->summary;
}

int ee_report_add(struct ee_report *r, const json_t *rec, const char *where, struct ee_err *err)
{
	if (r->oom)
		return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", where);
	if (ee_summary_add(r->summary, rec, where, err) < 0)
		return -1;
	if (count(r, rec) < 0) {
		r->oom = 1;
		return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", where);
	}
	return 0;
}
