/* summary_check.c - a result record checked whole before the summary
 * counts it, so a rejected record leaves no trace (see summary_int.h). */
#include <stdio.h>
#include <string.h>

#include "base/jsonfield.h"
#include "base/strmap.h"
#include "results/summary_int.h"

/* A string field; *ret = NULL when optional and absent or null. */
static int get_string(const struct ee_jf *c, const json_t *obj, const char *key, const char *field,
                      int optional, const char **ret)
{
	const json_t *v = json_object_get(obj, key);

	*ret = NULL;
	if (optional && (!v || json_is_null(v)))
		return 0;
	if (!json_is_string(v))
		return ee_jf_bad(c, field, optional == 2 ? "a string or null" : "a string", v);
	*ret = json_string_value(v);
	return 0;
}

static int check_status(const json_t *rec, const struct ee_jf *c, struct sum_rec *r)
{
	const json_t *v = json_object_get(rec, "status");
	const char *name = json_string_value(v);

	for (int i = 0; name && i < SUM_N_STATUS; i++)
		if (strcmp(name, ee_summary_status_names[i]) == 0) {
			r->status = i;
			return 0;
		}
	return ee_jf_bad(c, "status", "pass, assertion_fail, syntax_error, timeout or error", v);
}

static int check_score(const json_t *rec, const struct ee_jf *c, struct sum_rec *r)
{
	const json_t *v = json_object_get(rec, "score");

	r->score = json_number_value(v);
	if (!json_is_number(v) || !(r->score >= 0.0 && r->score <= 1.0))
		return ee_jf_bad(c, "score", "a number in [0, 1]", v);
	return 0;
}

static int check_tests(const json_t *tests, const struct ee_jf *c)
{
	char field[64];
	const char *unused;

	if (!json_is_array(tests))
		return ee_jf_bad(c, "tests", "an array", tests);
	for (size_t i = 0; i < json_array_size(tests); i++) {
		const json_t *t = json_array_get(tests, i);
		snprintf(field, sizeof(field), "tests[%zu]", i);
		if (!json_is_object(t))
			return ee_jf_bad(c, field, "an object", t);
		snprintf(field, sizeof(field), "tests[%zu].status", i);
		if (get_string(c, t, "status", field, 0, &unused) < 0)
			return -1;
		snprintf(field, sizeof(field), "tests[%zu].tier", i);
		if (get_string(c, t, "tier", field, 1, &unused) < 0)
			return -1;
	}
	return 0;
}

static int check_resources(const json_t *res, const struct ee_jf *c)
{
	static const char *const keys[] = { "wall_ms", "cpu_ms", "peak_rss_kb" };
	char field[64];

	if (!json_is_object(res))
		return ee_jf_bad(c, "resources", "an object", res);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const json_t *v = json_object_get(res, keys[i]);
		snprintf(field, sizeof(field), "resources.%s", keys[i]);
		if (v && !json_is_null(v) && !(json_is_number(v) && json_number_value(v) >= 0.0))
			return ee_jf_bad(c, field, "a number >= 0", v);
	}
	return 0;
}

/* A task keeps the first non-empty class it was seen with. */
static int check_class(const struct ee_summary *s, const struct sum_rec *r, const struct ee_jf *c)
{
	const size_t *ti = ee_strmap_get(&s->task_ix, r->task_id);
	const char *had = ti ? s->classes[s->tasks[*ti].cls].name : "";
	char a[EE_JF_SHOW_BYTES + 4], b[EE_JF_SHOW_BYTES + 4], t[EE_JF_SHOW_BYTES + 4];

	if (!r->cls[0] || !had[0] || strcmp(had, r->cls) == 0)
		return 0;
	json_t *ja = json_string(r->cls), *jb = json_string(had), *jt = json_string(r->task_id);
	ee_jf_show(ja, a, sizeof(a));
	ee_jf_show(jb, b, sizeof(b));
	ee_jf_show(jt, t, sizeof(t));
	json_decref(ja);
	json_decref(jb);
	json_decref(jt);
	return ee_jf_fail(c, "class", "%s differs from %s of an earlier record of task %s", a, b, t);
}

/* The fields of an ordinary record (not a sandbox error or invalid line). */
static int check_outcome(const json_t *rec, const struct ee_jf *c, struct sum_rec *r)
{
	if (check_status(rec, c, r) < 0 || check_score(rec, c, r) < 0 ||
	    get_string(c, rec, "detail", "detail", 2, &r->detail) < 0)
		return -1;
	r->tests = json_object_get(rec, "tests");
	if (check_tests(r->tests, c) < 0)
		return -1;
	r->resources = json_object_get(rec, "resources");
	if (json_is_null(r->resources))
		r->resources = NULL;
	if (r->resources && check_resources(r->resources, c) < 0)
		return -1;
	r->started = json_string_value(json_object_get(rec, "started_at"));
	r->finished = json_string_value(json_object_get(rec, "finished_at"));
	return 0;
}

/* A record that stands for a sample the sandbox never judged: the host
 * failed ("sandbox_error") or the sample line was invalid ("invalid": true,
 * written by eval --skip-invalid, whose task_id may be null). */
static int check_special(const json_t *rec, const struct ee_jf *c, struct sum_rec *r)
{
	const json_t *sandbox_error = json_object_get(rec, "sandbox_error");
	const json_t *detail = json_object_get(rec, "detail");

	r->status = SUM_ERROR;
	if (sandbox_error && !json_is_null(sandbox_error))
		r->detail = "sandbox error"; /* the message is the host's, not a stable class */
	else
		r->detail = json_is_string(detail) ? json_string_value(detail) : "invalid sample";
	if (get_string(c, rec, "task_id", "task_id", 1, &r->task_id) < 0)
		return -1;
	return r->task_id ? get_string(c, rec, "class", "class", 1, &r->cls) : 0;
}

/* A record's "lint" (optional: only with --lint): pass, fail or not_run. */
static int check_lint(const json_t *rec, const struct ee_jf *c, struct sum_rec *r)
{
	const json_t *lint = json_object_get(rec, "lint");
	const char *status;

	r->lint_pass = -1;
	if (!lint)
		return 0;
	if (!json_is_object(lint))
		return ee_jf_bad(c, "lint", "an object", lint);
	if (get_string(c, lint, "status", "lint.status", 0, &status) < 0)
		return -1;
	if (strcmp(status, "not_run") == 0)
		return 0;
	if (strcmp(status, "pass") != 0 && strcmp(status, "fail") != 0)
		return ee_jf_bad(c, "lint.status", "pass, fail or not_run", json_object_get(lint, "status"));
	r->lint_pass = strcmp(status, "pass") == 0;
	r->lint_findings = json_object_get(lint, "findings");
	return 0;
}

/* "reward" (a number, or null for an infra error or a formula's
 * non-finite value), "infra_error" and "reward_formula" (absent: binary). */
static int check_reward(const json_t *rec, const struct ee_jf *c, struct sum_rec *r)
{
	const json_t *reward = json_object_get(rec, "reward");

	r->infra = json_is_true(json_object_get(rec, "infra_error"));
	if (reward && !json_is_null(reward) && !json_is_number(reward))
		return ee_jf_bad(c, "reward", "a number or null", reward);
	r->has_reward = json_is_number(reward) && !r->infra;
	r->reward = json_number_value(reward);
	return get_string(c, rec, "reward_formula", "reward_formula", 1, &r->reward_formula);
}

int sum_check_record(const struct ee_summary *s, const json_t *rec, const struct ee_jf *c, struct sum_rec *r)
{
	memset(r, 0, sizeof(*r));
	if (!json_is_object(rec))
		return ee_jf_fail(c, "", "expected a JSON object");
	const json_t *sandbox_error = json_object_get(rec, "sandbox_error");
	if ((sandbox_error && !json_is_null(sandbox_error)) ||
	    json_is_true(json_object_get(rec, "invalid"))) {
		if (check_special(rec, c, r) < 0)
			return -1;
	} else if (get_string(c, rec, "task_id", "task_id", 0, &r->task_id) < 0 ||
	           get_string(c, rec, "class", "class", 1, &r->cls) < 0 || check_outcome(rec, c, r) < 0) {
		return -1;
	}
	if (get_string(c, rec, "model", "model", 2, &r->model) < 0 || check_lint(rec, c, r) < 0 ||
	    check_reward(rec, c, r) < 0)
		return -1;
	if (!r->cls)
		r->cls = "";
	if (!r->model)
		r->model = "";
	return r->task_id ? check_class(s, r, c) : 0;
}
