/* request.c - reading API request bodies (see request.h). */
#include "serve/request.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "resource_limits.h"

static const char *const run_fields[] = { "task", "candidate", "limits", "model", "sample", "extract" };
/* A batch's own fields besides "runs": defaults for the runs that lack them. */
static const char *const batch_defaults[] = { "task", "limits", "model", "extract" };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* a.b into dst (a or b may be empty); a path too long is cut, never overrun. */
static void join_path(char *dst, size_t size, const char *a, const char *b)
{
	if (snprintf(dst, size, "%s%s%s", a, a[0] && b[0] ? "." : "", b) < 0)
		dst[0] = '\0';
}

/* A client's key in a message stays one printable line. */
static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* Fails naming the field path (prefix + name) in the message and err->field. */
__attribute__((format(printf, 4, 5))) static int fail(struct ee_err *err, const char *prefix,
                                                      const char *name, const char *fmt, ...)
{
	char path[96], detail[160];
	va_list ap;

	join_path(path, sizeof(path), prefix, name);
	printable(path);
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	ee_fail(err, EE_ERR_USAGE, "%s: %s", path[0] ? path : "body", detail);
	snprintf(err->field, sizeof(err->field), "%s", path);
	return -1;
}

static int known_field(const char *key)
{
	for (size_t i = 0; i < COUNT(run_fields); i++)
		if (strcmp(key, run_fields[i]) == 0)
			return 1;
	return 0;
}

/* The task parser names fields relative to the task ("tests[0].kind"):
 * make the path absolute ("runs[2].task.tests[0].kind"). */
static int task_error(struct ee_err *err, const char *task_path)
{
	char field[sizeof(err->field)];

	join_path(field, sizeof(field), task_path, err->field);
	memcpy(err->field, field, sizeof(field));
	return -1;
}

static int read_task(const json_t *obj, const char *prefix, int strict, struct ee_run *run,
                     struct ee_err *err)
{
	const json_t *task = json_object_get(obj, "task");
	char path[96];

	join_path(path, sizeof(path), prefix, "task");
	if (!task)
		return fail(err, prefix, "task", "required (a task object: native, HumanEval or MBPP)");
	if (!json_is_object(task))
		return fail(err, prefix, "task", "expected an object");
	if (ee_task_from_json(task, EE_FORMAT_AUTO, path, &run->task, err) < 0 ||
	    (strict && ee_task_strict_asserts(&run->task, err) < 0))
		return task_error(err, path);
	return 0;
}

/* Limits above the server's are refused, not cut: a cut limit would change
 * the verdict without telling. path: "limits" or "task.limits" under prefix. */
static int check_ceiling(const struct ee_task_limits *lim, const struct ee_limits *max, const char *prefix,
                         const char *path, struct ee_err *err)
{
	char where[96];

	if (!max)
		return 0;
	join_path(where, sizeof(where), prefix, path);
	if (lim->has_timeout && lim->timeout_s > max->timeout_s)
		return fail(err, where, "timeout_s", "%g is above this server's ceiling %g (its --timeout)",
		            lim->timeout_s, max->timeout_s);
	if (lim->has_memory && lim->memory_mb > max->memory_mb)
		return fail(err, where, "memory_mb", "%u is above this server's ceiling %u (its --memory)",
		            lim->memory_mb, max->memory_mb);
	if (lim->has_procs && lim->procs > max->procs)
		return fail(err, where, "procs", "%u is above this server's ceiling %u (its --procs)",
		            lim->procs, max->procs);
	if (lim->has_output_cap && lim->output_cap > max->output_cap)
		return fail(err, where, "output_cap",
		            "%zu is above this server's ceiling %zu (its --output-cap)", lim->output_cap,
		            max->output_cap);
	return 0;
}

/* The request's limits go over the task's own. */
static int read_limits(const json_t *obj, const char *prefix, const struct ee_limits *max,
                       struct ee_task_limits *lim, struct ee_err *err)
{
	struct ee_task_limits req;

	if (ee_task_limits_from_json(obj, prefix[0] ? prefix : "body", &req, err) < 0) {
		char field[sizeof(err->field)];
		join_path(field, sizeof(field), prefix, err->field);
		memcpy(err->field, field, sizeof(field));
		return -1;
	}
	if (check_ceiling(&req, max, prefix, "limits", err) < 0)
		return -1;
	if (req.has_timeout) {
		lim->has_timeout = 1;
		lim->timeout_s = req.timeout_s;
	}
	if (req.has_memory) {
		lim->has_memory = 1;
		lim->memory_mb = req.memory_mb;
	}
	if (req.has_procs) {
		lim->has_procs = 1;
		lim->procs = req.procs;
	}
	if (req.has_output_cap) {
		lim->has_output_cap = 1;
		lim->output_cap = req.output_cap;
	}
	return 0;
}

static int read_options(const json_t *obj, const char *prefix, struct ee_run *run, enum ee_extract_mode *mode,
                        struct ee_err *err)
{
	const json_t *v;

	if ((v = json_object_get(obj, "model"))) {
		if (!json_is_string(v))
			return fail(err, prefix, "model", "expected a string");
		if (!(run->model = strdup(json_string_value(v))))
			return ee_fail(err, EE_ERR_USAGE, "out of memory");
	}
	if ((v = json_object_get(obj, "sample"))) {
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return fail(err, prefix, "sample", "expected an integer >= 0");
		run->sample = (long)json_integer_value(v);
	}
	if ((v = json_object_get(obj, "extract"))) {
		if (!json_is_string(v) || ee_extract_mode_parse(json_string_value(v), mode) < 0)
			return fail(err, prefix, "extract", "expected one of auto, fenced, none");
	}
	return 0;
}

static int read_run(const json_t *obj, const char *prefix, const struct ee_request_rules *rules,
                    struct ee_run *run, struct ee_err *err)
{
	enum ee_extract_mode mode = rules->extract;
	const char *key;
	const json_t *v;
	int found = 0;
	size_t len;

	run->sample = 0; /* as `execeval run`: one candidate is sample 0 */
	if (!json_is_object(obj))
		return fail(err, prefix, "", "expected an object");
	json_object_foreach ((json_t *)obj, key, v)
		if (!known_field(key))
			return fail(err, prefix, key,
			            "unknown field (expected task, candidate, limits, model, "
			            "sample, extract)");
	v = json_object_get(obj, "candidate");
	if (!v)
		return fail(err, prefix, "candidate", "required (program text or a model's generation)");
	if (!json_is_string(v))
		return fail(err, prefix, "candidate", "expected a string");
	if (read_task(obj, prefix, rules->strict_asserts, run, err) < 0 ||
	    check_ceiling(&run->task.limits, rules->ceiling, prefix, "task.limits", err) < 0 ||
	    read_limits(obj, prefix, rules->ceiling, &run->task.limits, err) < 0 ||
	    read_options(obj, prefix, run, &mode, err) < 0)
		return -1;
	if (ee_extract(json_string_value(v), json_string_length(v), mode, &run->program, &len, &found, err) <
	    0)
		return -1;
	run->no_code_block = mode == EE_EXTRACT_FENCED && !found;
	return 0;
}

static int alloc_runs(struct ee_request *r, size_t n, struct ee_err *err)
{
	r->runs = calloc(n, sizeof(*r->runs));
	if (!r->runs)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	r->n_runs = n;
	return 0;
}

static int is_batch_field(const char *key)
{
	if (strcmp(key, "runs") == 0)
		return 1;
	for (size_t i = 0; i < COUNT(batch_defaults); i++)
		if (strcmp(key, batch_defaults[i]) == 0)
			return 1;
	return 0;
}

/* The batch's defaults are read once on their own, so that a fault in one
 * is named where it is ("task.tests[0].kind"), not in every run. */
static int check_defaults(const json_t *root, const struct ee_request_rules *rules, struct ee_err *err)
{
	struct ee_run probe = { 0 };
	enum ee_extract_mode mode = rules->extract;
	int rc = 0;

	if (json_object_get(root, "task") &&
	    (read_task(root, "", rules->strict_asserts, &probe, err) < 0 ||
	     check_ceiling(&probe.task.limits, rules->ceiling, "", "task.limits", err) < 0))
		rc = -1;
	if (rc == 0)
		rc = read_limits(root, "", rules->ceiling, &probe.task.limits, err);
	if (rc == 0)
		rc = read_options(root, "", &probe, &mode, err);
	ee_task_free(&probe.task);
	free(probe.model);
	return rc;
}

/* A run with the batch's defaults for the fields it does not have (a
 * run's own field replaces the default whole: its "limits" are not merged
 * key by key with the batch's). NULL when out of memory. */
static json_t *with_defaults(const json_t *run, const json_t *root)
{
	if (!json_is_object(run))
		return json_incref((json_t *)run);
	json_t *merged = json_copy((json_t *)run);
	for (size_t i = 0; merged && i < COUNT(batch_defaults); i++) {
		json_t *v = json_object_get(root, batch_defaults[i]);
		if (v && !json_object_get(run, batch_defaults[i]) &&
		    json_object_set(merged, batch_defaults[i], v) < 0) {
			json_decref(merged);
			merged = NULL;
		}
	}
	return merged;
}

static int read_batch(const json_t *root, const struct ee_request_rules *rules, struct ee_request *r,
                      struct ee_err *err)
{
	size_t max_runs = rules->max_runs;
	const char *key;
	const json_t *v;
	const json_t *runs = json_object_get(root, "runs");

	json_object_foreach ((json_t *)root, key, v)
		if (!is_batch_field(key))
			return fail(err, "", key,
			            "unknown field (expected runs, task, limits, model, extract)");
	if (!runs)
		return fail(err, "", "runs", "required (an array of run objects)");
	if (!json_is_array(runs) || json_array_size(runs) == 0)
		return fail(err, "", "runs", "expected a non-empty array of run objects");
	if (json_array_size(runs) > max_runs) {
		fail(err, "", "runs", "%zu runs, more than the queue holds (%zu)", json_array_size(runs),
		     max_runs);
		return -2;
	}
	if (check_defaults(root, rules, err) < 0 || alloc_runs(r, json_array_size(runs), err) < 0)
		return -1;
	for (size_t i = 0; i < r->n_runs; i++) {
		char prefix[32];
		json_t *run = with_defaults(json_array_get(runs, i), root);
		snprintf(prefix, sizeof(prefix), "runs[%zu]", i);
		if (!run)
			return ee_fail(err, EE_ERR_USAGE, "out of memory");
		int rc = read_run(run, prefix, rules, &r->runs[i], err);
		json_decref(run);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int ee_request_parse(const char *body, size_t len, int kind, const struct ee_request_rules *rules,
                     struct ee_request *ret, struct ee_err *err)
{
	struct ee_request r = { NULL, 0 };
	json_error_t jerr;
	int rc;

	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		ee_fail(err, EE_ERR_USAGE, "body: line %d column %d: %s", jerr.line, jerr.column, jerr.text);
		printable(err->msg);
		return -1;
	}
	if (!json_is_object(root))
		rc = fail(err, "", "", "the body must be a JSON object");
	else if (kind == EE_REQUEST_BATCH)
		rc = read_batch(root, rules, &r, err);
	else if ((rc = alloc_runs(&r, 1, err)) == 0)
		rc = read_run(root, "", rules, &r.runs[0], err);
	json_decref(root);
	if (rc < 0) {
		printable(err->msg); /* jansson quotes the body as it is */
		printable(err->field);
		ee_request_free(&r);
		return rc;
	}
	*ret = r;
	return 0;
}

void ee_request_free(struct ee_request *r)
{
	for (size_t i = 0; i < r->n_runs; i++) {
		ee_task_free(&r->runs[i].task);
		free(r->runs[i].program);
		free(r->runs[i].model);
	}
	free(r->runs);
	r->runs = NULL;
	r->n_runs = 0;
}
