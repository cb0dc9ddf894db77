/* compare_load.c - the inputs of compare: reading a side from a file, and
 * checking a summary's keys before anything reads them (compare.h).
 *
 * A file is a results file when its first non-blank line, alone, is a JSON
 * object with a "task_id"; its records go through ee_results_read and
 * ee_summary_add (errors name file:line and field) and the summary is
 * computed as `metrics` computes it. Anything else is read whole (at most
 * EE_COMPARE_MAX_SUMMARY bytes) as one JSON document, a summary, whose
 * syntax errors name file:line:column and whose content errors name the
 * field as a path ("classes.math.pass_at_k.1").
 *
 * ee_compare_pair decides whether two sides ran on one data set and, when
 * they did not but that is allowed, reads each results file a second time
 * keeping only the records of the tasks both sides have.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "results/compare.h"
#include "base/err.h"
#include "base/jsonfield.h"
#include "input/lines.h"
#include "results/results.h"
#include "base/sha256.h"
#include "results/summary.h"

#define CLASS_NAME_MAX 48 /* bytes of a class name shown in a field path */
#define MAX_FIRST_LINE (64u << 20)
_Static_assert(EE_COMPARE_SHA256_HEX == EE_SHA256_HEX, "a side holds a hex sha256");

#define SHOWN_IDS      3  /* task ids named when the task sets differ */
#define SHOWN_ID_BYTES 24 /* of each */

void ee_compare_side_free(struct ee_compare_side *side)
{
	if (!side)
		return;
	free(side->source);
	json_decref(side->summary);
	ee_summary_free(side->counts);
	free(side->tasks);
	memset(side, 0, sizeof(*side));
}

/* ---- checking a summary ----------------------------------------------------- */

/* path + "." + key into out; keys are cut to CLASS_NAME_MAX bytes and the
 * whole to size, so a hostile key cannot make the message useless. */
static void join(char *out, size_t size, const char *path, const char *key)
{
	char cut[CLASS_NAME_MAX + 1];

	ee_jf_cut(cut, sizeof(cut), key, strlen(key));
	if (snprintf(out, size, "%s%s%s", path, path[0] ? "." : "", cut) >= (int)size)
		out[size - 1] = '\0'; /* cut: still names the field's start */
}

static int is_rate(const json_t *v)
{
	return json_is_number(v) && json_number_value(v) >= 0.0 && json_number_value(v) <= 1.0;
}

/* An optional key: absent and null pass; else ok(v) must hold. */
static int optional(const struct ee_jf *c, const json_t *obj, const char *path, const char *key,
                    int (*ok)(const json_t *), const char *expected)
{
	const json_t *v = json_object_get(obj, key);
	char field[160];

	if (!v || json_is_null(v) || ok(v))
		return 0;
	join(field, sizeof(field), path, key);
	return ee_jf_bad(c, field, expected, v);
}

static int is_interval(const json_t *v)
{
	const json_t *lo = json_array_get(v, 0), *hi = json_array_get(v, 1);

	return json_array_size(v) == 2 && is_rate(lo) && is_rate(hi) &&
	       json_number_value(lo) <= json_number_value(hi);
}

static int is_count(const json_t *v)
{
	return json_is_integer(v) && json_integer_value(v) >= 0;
}

static int is_finite_number(const json_t *v)
{
	return json_is_number(v) && isfinite(json_number_value(v));
}

static int is_level(const json_t *v)
{
	return json_is_number(v) && json_number_value(v) > 0.0 && json_number_value(v) < 1.0;
}

/* A pass@k key: a positive decimal integer up to EE_COMPARE_MAX_K. */
static int parse_k(const char *s, unsigned long *ret)
{
	unsigned long k = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9' && k <= EE_COMPARE_MAX_K; p++)
		k = k * 10 + (unsigned long)(*p - '0');
	if (p == s || *p || k == 0 || k > EE_COMPARE_MAX_K || s[0] == '0')
		return -1;
	*ret = k;
	return 0;
}

/* {"k": value} where each value passes ok (or is null). */
static int check_k_map(const struct ee_jf *c, const json_t *block, const char *path, const char *key,
                       int (*ok)(const json_t *), const char *expected)
{
	const json_t *map = json_object_get(block, key);
	const char *k;
	json_t *v;
	char field[160], kfield[200];
	unsigned long unused;

	if (!map || json_is_null(map))
		return 0;
	join(field, sizeof(field), path, key);
	if (!json_is_object(map))
		return ee_jf_bad(c, field, "an object", map);
	json_object_foreach ((json_t *)map, k, v) {
		join(kfield, sizeof(kfield), field, k);
		if (parse_k(k, &unused) < 0)
			return ee_jf_fail(c, kfield, "the key is not a positive integer k");
		if (!json_is_null(v) && !ok(v))
			return ee_jf_bad(c, kfield, expected, v);
	}
	return 0;
}

static int check_dropped(const struct ee_jf *c, const json_t *block, const char *path)
{
	const json_t *arr = json_object_get(block, "pass_at_k_dropped"), *d;
	char field[160], efield[200];
	size_t i;

	if (!arr)
		return 0;
	join(field, sizeof(field), path, "pass_at_k_dropped");
	if (!json_is_array(arr))
		return ee_jf_bad(c, field, "an array", arr);
	json_array_foreach (arr, i, d) {
		snprintf(efield, sizeof(efield), "%s[%zu]", field, i);
		if (!json_is_object(d) || !is_count(json_object_get(d, "k")) ||
		    !json_is_string(json_object_get(d, "reason")))
			return ee_jf_bad(c, efield, "an object {\"k\": integer, \"reason\": string}", d);
	}
	return 0;
}

/* statuses: counts; at the top level required. timeout <= samples. */
static int check_statuses(const struct ee_jf *c, const json_t *block, const char *path, int required)
{
	const json_t *st = json_object_get(block, "statuses"), *samples = json_object_get(block, "samples");
	const char *key;
	json_t *v;
	char field[160], kfield[200];

	join(field, sizeof(field), path, "statuses");
	if (!st && !required)
		return 0;
	if (!st)
		return ee_jf_fail(
		        c, "statuses",
		        "missing: not a summary (eval --summary-json and metrics --json write one) nor a "
		        "results file (JSON lines with a task_id)");
	if (!json_is_object(st))
		return ee_jf_bad(c, field, "an object", st);
	json_object_foreach ((json_t *)st, key, v) {
		join(kfield, sizeof(kfield), field, key);
		if (!is_count(v))
			return ee_jf_bad(c, kfield, "an integer >= 0", v);
	}
	const json_t *timeout = json_object_get(st, "timeout");
	if (timeout && is_count(samples) && json_integer_value(timeout) > json_integer_value(samples)) {
		join(kfield, sizeof(kfield), field, "timeout");
		return ee_jf_bad(c, kfield, "at most samples", timeout);
	}
	return 0;
}

/* An object key whose member must pass ok. */
static int check_member(const struct ee_jf *c, const json_t *block, const char *path, const char *key,
                        const char *member, int (*ok)(const json_t *), const char *expected)
{
	const json_t *obj = json_object_get(block, key);
	char field[160];

	join(field, sizeof(field), path, key);
	if (!obj)
		return 0;
	if (!json_is_object(obj))
		return ee_jf_bad(c, field, "an object", obj);
	return optional(c, obj, field, member, ok, expected);
}

/* The keys shared by the top level and each class. */
static int check_block(const struct ee_jf *c, const json_t *block, const char *path, int top)
{
	if (!json_is_object(block))
		return ee_jf_bad(c, path, "an object", block);
	if (optional(c, block, path, "tasks", is_count, "an integer >= 0") < 0 ||
	    optional(c, block, path, "samples", is_count, "an integer >= 0") < 0 ||
	    check_k_map(c, block, path, "pass_at_k", is_rate, "a number in [0, 1] or null") < 0 ||
	    check_k_map(c, block, path, "pass_at_k_ci", is_interval,
	                "[lo, hi] with 0 <= lo <= hi <= 1, or null") < 0 ||
	    check_dropped(c, block, path) < 0 ||
	    optional(c, block, path, "mean_score", is_rate, "a number in [0, 1] or null") < 0 ||
	    optional(c, block, path, "mean_score_ci", is_interval,
	             "[lo, hi] with 0 <= lo <= hi <= 1, or null") < 0 ||
	    check_statuses(c, block, path, top) < 0 ||
	    check_member(c, block, path, "lint", "pass_rate", is_rate, "a number in [0, 1] or null") < 0 ||
	    check_member(c, block, path, "composite", "value", is_finite_number, "a number or null") < 0)
		return -1;
	return 0;
}

static int is_sha256(const json_t *v)
{
	return ee_sha256_is_hex(json_string_value(v));
}

int ee_compare_check_summary(const json_t *summary, const char *source, struct ee_err *err)
{
	struct ee_jf c = ee_jf_make(source, err);
	const json_t *classes = json_object_get(summary, "classes");
	const char *name;
	json_t *block;
	char path[160];

	if (!json_is_object(summary))
		return ee_jf_fail(&c, "", "expected a JSON object (a summary) or JSON lines (results)");
	if (check_block(&c, summary, "", 1) < 0 ||
	    check_member(&c, summary, "", "bootstrap", "level", is_level, "a number in (0, 1)") < 0 ||
	    optional(&c, summary, "", "tasks_sha256", is_sha256, "64 lowercase hex digits") < 0)
		return -1;
	if (!classes)
		return 0;
	if (!json_is_object(classes))
		return ee_jf_bad(&c, "classes", "an object", classes);
	json_object_foreach ((json_t *)classes, name, block) {
		join(path, sizeof(path), "classes", name);
		if (check_block(&c, block, path, 0) < 0)
			return -1;
	}
	return 0;
}

/* ---- reading a side ---------------------------------------------------------- */

int ee_compare_side_from_summary(json_t *summary, const char *source, struct ee_compare_side *ret,
                                 struct ee_err *err)
{
	memset(ret, 0, sizeof(*ret));
	ret->source = strdup(source);
	ret->summary = summary;
	ret->kind = "summary";
	if (!ret->source)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (ee_compare_check_summary(summary, source, err) < 0)
		return -1;
	const char *sha = json_string_value(json_object_get(summary, "tasks_sha256"));
	snprintf(ret->tasks_sha256, sizeof(ret->tasks_sha256), "%s", sha ? sha : "");
	return 0;
}

int ee_compare_side_of_model(const struct ee_compare_side *side, const char *model,
                             struct ee_compare_side *ret, struct ee_err *err)
{
	const json_t *block = json_object_get(json_object_get(side->summary, "models"), model);
	const json_t *boot = json_object_get(side->summary, "bootstrap");
	char source[512];

	memset(ret, 0, sizeof(*ret));
	if (!json_is_object(block))
		return ee_fail(err, EE_ERR_USAGE, "%.200s: no model '%.80s'", side->source, model);
	snprintf(source, sizeof(source), "%.200s (model %.80s)", side->source, model);
	json_t *summary = json_deep_copy(block);
	if (!summary || (boot && json_object_set_new(summary, "bootstrap", json_deep_copy(boot)) < 0) ||
	    json_object_set_new(summary, "tasks_sha256",
	                        side->tasks_sha256[0] ? json_string(side->tasks_sha256) : json_null()) < 0) {
		json_decref(summary);
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	}
	if (!side->tasks_sha256[0])
		json_object_del(summary, "tasks_sha256");
	if (ee_compare_side_from_summary(summary, source, ret, err) < 0)
		return -1;
	ret->kind = side->kind;
	ret->paired_only = side->paired_only;
	if (!side->counts)
		return 0;
	ret->tasks = ee_summary_model_tasks(side->counts, model, &ret->n_tasks);
	if (!ret->tasks && errno == ENOMEM)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	return 0;
}

static int add_record(void *ctx, const json_t *record, const char *where, struct ee_err *err)
{
	return ee_summary_add(ctx, record, where, err);
}

static int from_results(const char *path, const unsigned long *ks, size_t nk, struct ee_compare_side *ret,
                        struct ee_err *err)
{
	ret->kind = "results";
	ret->counts = ee_summary_new();
	if (!ret->counts)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (ee_results_read_unique(path, add_record, ret->counts, &ret->torn, err) < 0)
		return -1;
	ret->summary = ee_summary_json(ret->counts, ks, nk, 0.0);
	ret->tasks = ee_summary_tasks(ret->counts, &ret->n_tasks);
	if (!ret->summary || !ret->tasks)
		return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", path);
	return ee_compare_check_summary(ret->summary, path, err); /* ours: holds unless a bug */
}

/* 1 when the first non-blank line of l is a JSON object with a task_id
 * (l stays on it), 0 when it is not, -1 when the file cannot be read. */
static int looks_like_results(struct ee_lines *l, struct ee_err *err)
{
	int rc;
	while ((rc = ee_lines_next(l, err)) == 1 && ee_lines_blank(l))
		;
	if (rc == 0)
		return ee_fail(err, EE_ERR_USAGE, "%s: empty: neither a summary nor a results file",
		               l->in.name);
	if (rc < 0)
		return -1;
	json_t *first = json_loadb(l->line.data, l->line.len, 0, NULL);
	int results = json_is_object(first) && json_object_get(first, "task_id") != NULL;
	json_decref(first);
	return results;
}

static int from_summary_file(struct ee_lines *l, struct ee_compare_side *ret, struct ee_err *err)
{
	struct ee_buf text;
	json_error_t jerr;
	char jtext[EE_JF_ERROR_TEXT];
	unsigned long first = l->line_no;

	ee_buf_init(&text, EE_COMPARE_MAX_SUMMARY);
	int rc = ee_lines_slurp(l, &text, err);
	json_t *summary = rc == 0 ? json_loadb(text.data, text.len, 0, &jerr) : NULL;
	ee_buf_free(&text);
	if (rc < 0)
		return -1;
	if (!summary)
		return ee_fail(err, EE_ERR_USAGE, "%s:%lu:%d: invalid JSON: %s", l->in.name,
		               first + (unsigned long)jerr.line - 1, jerr.column,
		               ee_jf_error_text(&jerr, jtext));
	return ee_compare_side_from_summary(summary, l->in.name, ret, err);
}

int ee_compare_side_from_file(const char *path, const unsigned long *ks, size_t nk,
                              struct ee_compare_side *ret, struct ee_err *err)
{
	struct ee_lines l;

	memset(ret, 0, sizeof(*ret));
	int rc = ee_lines_open(&l, path, MAX_FIRST_LINE, err);
	int results = rc < 0 ? -1 : looks_like_results(&l, err);
	if (results == 1) {
		ee_lines_close(&l);
		ret->source = strdup(path);
		return ret->source ? from_results(path, ks, nk, ret, err)
		                   : ee_fail(err, EE_ERR_USAGE, "out of memory");
	}
	rc = results == 0 ? from_summary_file(&l, ret, err) : -1;
	ee_lines_close(&l);
	return rc;
}

/* ---- one data set ---------------------------------------------------------- */

/* s's tasks are sorted by id (ee_summary_tasks). */
static int has_task(const struct ee_compare_side *s, const char *id)
{
	size_t lo = 0, hi = s->n_tasks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->tasks[mid].task_id, id);
		if (c == 0)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* How many of a's tasks b lacks; the first SHOWN_IDS into ids. */
static size_t tasks_missing(const struct ee_compare_side *a, const struct ee_compare_side *b, char *ids,
                            size_t size)
{
	size_t n = 0, len = 0;

	ids[0] = '\0';
	for (size_t i = 0; i < a->n_tasks; i++) {
		if (has_task(b, a->tasks[i].task_id))
			continue;
		if (n < SHOWN_IDS && len < size)
			len += (size_t)snprintf(ids + len, size - len, "%s%.*s", n ? ", " : "",
			                        SHOWN_ID_BYTES, a->tasks[i].task_id);
		n++;
	}
	if (n > SHOWN_IDS && len < size)
		snprintf(ids + len, size - len, ", ...");
	return n;
}

static long long task_count(const struct ee_compare_side *s)
{
	const json_t *t = json_object_get(s->summary, "tasks");
	return s->tasks ? (long long)s->n_tasks : json_is_integer(t) ? (long long)json_integer_value(t) : -1;
}

int ee_compare_same_data(const struct ee_compare_side *base, const struct ee_compare_side *nw)
{
	int both_sha = base->tasks_sha256[0] && nw->tasks_sha256[0];
	char unused[8];

	if (both_sha && strcmp(base->tasks_sha256, nw->tasks_sha256) != 0)
		return 0;
	if (base->tasks && nw->tasks)
		return base->n_tasks == nw->n_tasks && tasks_missing(base, nw, unused, sizeof(unused)) == 0;
	if (both_sha)
		return 1;
	long long nb = task_count(base), nn = task_count(nw);
	return nb >= 0 && nn >= 0 && nb != nn ? 0 : -1;
}

/* The error for two data sets, naming what differs (not the files: the
 * user named them, and two paths could crowd out the difference). */
static int different(const struct ee_compare_side *base, const struct ee_compare_side *nw, struct ee_err *err)
{
	char only_b[128], only_n[128];

	if (base->tasks_sha256[0] && nw->tasks_sha256[0] && strcmp(base->tasks_sha256, nw->tasks_sha256) != 0)
		return ee_fail(err, EE_ERR_USAGE,
		               "BASE and NEW ran on different tasks files: tasks sha256 %.64s and %.64s",
		               base->tasks_sha256, nw->tasks_sha256);
	if (base->tasks && nw->tasks) {
		size_t nb = tasks_missing(base, nw, only_b, sizeof(only_b));
		size_t nn = tasks_missing(nw, base, only_n, sizeof(only_n));
		return ee_fail(err, EE_ERR_USAGE,
		               "BASE and NEW cover different tasks: %zu only in BASE%s%.80s%s, %zu only in "
		               "NEW%s%.80s%s",
		               nb, nb ? " (" : "", only_b, nb ? ")" : "", nn, nn ? " (" : "", only_n,
		               nn ? ")" : "");
	}
	return ee_fail(err, EE_ERR_USAGE,
	               "BASE and NEW are different data sets: BASE has %lld tasks, NEW %lld",
	               task_count(base), task_count(nw));
}

struct paired {
	struct ee_summary *counts;
	const struct ee_compare_side *other;
};

static int add_if_paired(void *ctx, const json_t *record, const char *where, struct ee_err *err)
{
	struct paired *p = ctx;
	const char *id = json_string_value(json_object_get(record, "task_id"));

	return id && has_task(p->other, id) ? ee_summary_add(p->counts, record, where, err) : 0;
}

/* s's summary over the tasks other has too (s->tasks stays whole: the
 * report lists the unpaired ones). */
static int restrict_to_paired(struct ee_compare_side *s, const struct ee_compare_side *other,
                              const unsigned long *ks, size_t nk, struct ee_err *err)
{
	struct paired p = { ee_summary_new(), other };
	int torn = 0, rc = -1;

	if (!p.counts)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (ee_results_read_unique(s->source, add_if_paired, &p, &torn, err) == 0) {
		json_t *summary = ee_summary_json(p.counts, ks, nk, 0.0);
		if (summary) {
			json_decref(s->summary);
			s->summary = summary;
			s->paired_only = 1;
			rc = ee_compare_check_summary(summary, s->source, err);
		} else {
			ee_fail(err, EE_ERR_USAGE, "%s: out of memory", s->source);
		}
	}
	ee_summary_free(p.counts);
	return rc;
}

int ee_compare_pair(struct ee_compare_side *base, struct ee_compare_side *nw, int allow,
                    const unsigned long *ks, size_t nk, struct ee_err *err)
{
	if (ee_compare_same_data(base, nw) != 0)
		return 0;
	if (!allow)
		return different(base, nw, err);
	if (!base->tasks || !nw->tasks)
		return 0; /* a summary cannot be paired: each side keeps its own tasks */
	char unused[8];
	if (tasks_missing(base, nw, unused, sizeof(unused)) == base->n_tasks)
		return ee_fail(err, EE_ERR_USAGE, "BASE and NEW have no task in common");
	if (restrict_to_paired(base, nw, ks, nk, err) < 0 || restrict_to_paired(nw, base, ks, nk, err) < 0)
		return -1;
	return 0;
}
