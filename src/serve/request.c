/* request.c - reading API request bodies (see request.h). */
#include "serve/request.h"

#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/compose.h"
#include "base/err.h"
#include "base/jsonfield.h"
#include "options/http.h"
#include "options/options.h"
#include "base/resource_limits.h"
#include "base/sha256.h"
#include "serve/prescan.h"

/* A run's own fields, and a batch's (besides "runs", defaults for the runs
 * that lack them); the options table's HTTP rows add theirs (http.h). */
static const char *const run_fields[] = { "task",   "candidate", "completion", "generation",
	                                  "limits", "model",     "sample",     "stop" };
static const char *const batch_fields[] = { "runs", "task", "limits", "model", "stop" };

/* What a run evaluates: exactly one of these (compose.h). A candidate and a
 * generation are read alike, extracted by "extract" (a plain program comes
 * through whole); a completion continues the task's prompt. */
static const char *const text_fields[] = { "candidate", "completion", "generation" };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A client's key in a message stays one printable line. */
static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* The context of the object at prefix ("", "runs[2]", "task.limits"): its
 * messages start at the path, and an empty one is the "body". */
static struct ee_jf context(const char *prefix, struct ee_err *err)
{
	struct ee_jf top = ee_jf_make(NULL, err);

	top.root = "body";
	return ee_jf_sub(&top, prefix);
}

/* Fails naming the field path (prefix + name) in the message and err->field;
 * ee_request_parse makes both printable. */
__attribute__((format(printf, 4, 5))) static int fail(struct ee_err *err, const char *prefix,
                                                      const char *name, const char *fmt, ...)
{
	struct ee_jf c = context(prefix, err);
	va_list ap;

	va_start(ap, fmt);
	ee_jf_vfail(&c, name, fmt, ap);
	va_end(ap);
	return -1;
}

/* Every key of obj is one of own[0..n) or an HTTP row's field. */
static int check_fields(const json_t *obj, const char *prefix, const char *const *own, size_t n,
                        struct ee_err *err)
{
	const char *names[8 + EE_OPTIONS_MAX];
	size_t count = 0;
	const char *key;
	const json_t *v;
	char list[200];

	for (; count < n; count++)
		names[count] = own[count];
	for (size_t i = 0; i < ee_options_count; i++)
		if (ee_option_http_field(&ee_options[i]))
			names[count++] = ee_option_http_field(&ee_options[i]);
	json_object_foreach ((json_t *)obj, key, v) {
		size_t i = 0;
		while (i < count && strcmp(key, names[i]) != 0)
			i++;
		if (i == count)
			return fail(err, prefix, key, "unknown field (expected %s)",
			            ee_jf_join_names(names, count, list, sizeof(list)));
	}
	return 0;
}

/* The task parser names fields relative to the task ("tests[0].kind"):
 * make the path absolute ("runs[2].task.tests[0].kind"). */
static int task_error(struct ee_err *err, const char *task_path)
{
	char field[sizeof(err->field)];

	ee_jf_join_path(field, sizeof(field), task_path, err->field);
	memcpy(err->field, field, sizeof(field));
	return -1;
}

/* Tests a task's reference makes (generated.c's default n_generated). */
#define GENERATED_DEFAULT 20

/* Tests a task object carries, counted in its JSON before it is built:
 * native "tests", MBPP's two lists, HumanEval's one "test"; and the tests
 * its reference will make: n_generated, EvalPlus's given inputs. */
static size_t json_tests(const json_t *task)
{
	static const char *const lists[] = { "tests", "test_list", "challenge_test_list", "base_input",
		                             "plus_input" };
	size_t n = json_object_get(task, "test") ? 1 : 0;
	const json_t *asked = json_object_get(task, "n_generated");

	for (size_t i = 0; i < COUNT(lists); i++) {
		const json_t *v = json_object_get(task, lists[i]);
		if (json_is_array(v))
			n += json_array_size(v);
	}
	if (json_object_get(task, "generate"))
		n += json_is_integer(asked) && json_integer_value(asked) > 0
		             ? (size_t)json_integer_value(asked)
		             : GENERATED_DEFAULT;
	return n;
}

/* Tests t will have once its generated ones are in. */
static size_t task_tests(const struct ee_task *t)
{
	if (!t->gen || t->gen->added)
		return t->n_tests;
	return t->n_tests + (t->gen->inputs ? json_array_size(t->gen->inputs) : t->gen->n);
}

/* The key of a task's reference results: the task object as sent (its
 * keys sorted), so an equal task in another request finds them. */
static int gen_key(const json_t *task, struct ee_task *t, struct ee_err *err)
{
	struct ee_sha256 h;
	uint8_t d[EE_SHA256_LEN];
	char *text = json_dumps(task, JSON_COMPACT | JSON_SORT_KEYS);

	if (!text)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	ee_sha256_init(&h);
	ee_sha256_update(&h, text, strlen(text));
	ee_sha256_final(&h, d);
	ee_sha256_hex(d, t->gen->key);
	free(text);
	return 0;
}

static int too_many_tests(struct ee_err *err, const char *task_path, size_t n, size_t max)
{
	fail(err, task_path, "tests", "%zu tests, more than this server's --max-tests-per-task (%zu)", n,
	     max);
	return -2;
}

/* Builds obj's "task" (path: where it is, for messages). -2 over max_tests. */
static int read_task(const json_t *task, const char *path, const struct ee_request_rules *rules,
                     struct ee_task *ret, struct ee_err *err)
{
	if (!json_is_object(task))
		return fail(err, path, "", "expected an object");
	if (json_tests(task) > rules->max_tests)
		return too_many_tests(err, path, json_tests(task), rules->max_tests);
	if (ee_task_from_json(task, rules->task_format, path, ret, err) < 0)
		return task_error(err, path);
	if (task_tests(ret) > rules->max_tests)
		return too_many_tests(err, path, task_tests(ret), rules->max_tests);
	if (ret->gen && gen_key(task, ret, err) < 0)
		return -1;
	/* Then as cli_prepare_task does for run and eval: the server's rules, strict asserts. */
	if ((rules->task_rules && ee_task_apply_rules(ret, rules->task_rules, err) < 0) ||
	    (rules->strict_asserts && ee_task_strict_asserts(ret, err) < 0))
		return task_error(err, path);
	return 0;
}

/* A task's or a request's limits at most the server's. path: "limits" or
 * "task.limits" under prefix. */
static int check_ceiling(const struct ee_task_limits *lim, const struct ee_limits *max, const char *prefix,
                         const char *path, struct ee_err *err)
{
	char where[96];

	ee_jf_join_path(where, sizeof(where), prefix, path);
	struct ee_jf c = context(where, err);
	return ee_options_http_ceiling(&c, lim, max);
}

int ee_request_read_task(const json_t *task, const char *path, const struct ee_request_rules *rules,
                         struct ee_task *ret, struct ee_err *err)
{
	char limits[96];
	int rc = read_task(task, path, rules, ret, err);

	if (rc < 0)
		return rc;
	ee_jf_join_path(limits, sizeof(limits), path, "limits");
	return check_ceiling(&ret->limits, rules->ceiling, "", limits, err);
}

/* The request's limits go over the task's own. */
static int read_limits(const json_t *obj, const char *prefix, const struct ee_limits *max,
                       struct ee_task_limits *lim, struct ee_err *err)
{
	struct ee_task_limits req;

	if (ee_task_limits_from_json(obj, prefix[0] ? prefix : "body", &req, err) < 0) {
		char field[sizeof(err->field)];
		ee_jf_join_path(field, sizeof(field), prefix, err->field);
		memcpy(err->field, field, sizeof(field));
		return -1;
	}
	if (check_ceiling(&req, max, prefix, "limits", err) < 0)
		return -1;
	ee_options_http_limits_over(lim, &req);
	return 0;
}

/* What a run inherits when it does not say: its batch's, which is the
 * server's when the batch does not say either. One rule, run > batch >
 * server, for every field here (read_inherited). */
struct inherited {
	enum ee_extract_mode mode; /* "extract" */
	int stop;                  /* "stop", for a completion */
	struct ee_reward reward;   /* "reward", when has_reward */
	int has_reward;            /* 0: the server's --reward */
	struct ee_run_gen gen;     /* "seed", "hidden_fraction", "time_floor", "time_factor" */
};

struct ee_run_gen ee_request_gen_default(const struct ee_request_rules *rules)
{
	const struct ee_eval_options *o = rules->opt;

	if (!o)
		return (struct ee_run_gen){ 0 };
	return (struct ee_run_gen){ o->seed, o->hidden_fraction, { o->time_floor_s, o->time_factor } };
}

/* The bottom of the rule: what the server says (--extract; no "stop";
 * its --reward, --seed, ...). */
static struct inherited from_server(const struct ee_request_rules *rules)
{
	return (struct inherited){ .mode = rules->extract, .gen = ee_request_gen_default(rules) };
}

/* The generated-test fields obj has, read into own (absent: -1, and for
 * the seed ULLONG_MAX, which no seed is), over *gen. A time_floor above
 * the server's timeout is refused, as a limit above its ceiling is. */
static int take_gen(const json_t *obj, const char *prefix, const struct ee_eval_options *own,
                    const struct ee_limits *ceiling, struct ee_run_gen *gen, struct ee_err *err)
{
	if (own->seed != ULLONG_MAX)
		gen->seed = own->seed;
	if (own->hidden_fraction >= 0)
		gen->hidden_fraction = own->hidden_fraction;
	if (own->time_floor_s >= 0)
		gen->time.floor_s = own->time_floor_s;
	if (own->time_factor >= 0)
		gen->time.factor = own->time_factor;
	if (ceiling && json_object_get(obj, "time_floor") && own->time_floor_s > ceiling->timeout_s)
		return fail(err, prefix, "time_floor", "%g is above this server's ceiling %g (its --timeout)",
		            own->time_floor_s, ceiling->timeout_s);
	return 0;
}

/* obj's "stop" into *stop when it has one: true cuts a completion at
 * HumanEval's stop sequences, as eval --stop. */
static int read_stop(const json_t *obj, const char *prefix, int *stop, struct ee_err *err)
{
	const json_t *v = json_object_get(obj, "stop");

	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return fail(err, prefix, "stop",
		            "expected true or false (true: HumanEval's stop sequences; a list is not taken)");
	*stop = json_is_true(v);
	return 0;
}

/* *out is base with what obj says of its own over it. "stop" is read
 * here; every other field is a row of the options table (http.h). */
static int read_inherited(const json_t *obj, const char *prefix, const struct ee_request_rules *rules,
                          const struct inherited *base, struct inherited *out, struct ee_err *err)
{
	struct ee_jf c = context(prefix, err);
	/* the rows a request stores in evaluation options: its "reward" and
	 * its generated tests' fields (-1: absent) */
	struct ee_eval_options own = { .reward = { .custom = -1 },
		                       .seed = ULLONG_MAX,
		                       .hidden_fraction = -1,
		                       .time_floor_s = -1,
		                       .time_factor = -1 };

	*out = *base;
	if (read_stop(obj, prefix, &out->stop, err) < 0 ||
	    ee_options_http_read(&c, obj, &(struct ee_option_sink){ &own, &out->mode }) < 0 ||
	    take_gen(obj, prefix, &own, rules->ceiling, &out->gen, err) < 0)
		return -1;
	if (own.reward.custom >= 0) {
		out->reward = own.reward;
		out->has_reward = 1;
	}
	return 0;
}

/* model and sample: the run's own (the batch's model is shared, read_run). */
static int read_model(const json_t *obj, const char *prefix, struct ee_run *run, struct ee_err *err)
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
	return 0;
}

/* What a batch gives the runs that lack a field: read once (read_defaults). */
struct batch_defaults {
	const json_t *root;         /* the batch object, for its "limits" */
	const struct ee_task *task; /* the shared task, or NULL */
	const json_t *task_json;    /* its object, for a run that needs its own copy */
	char *model;                /* the shared model, or NULL */
	struct inherited set;       /* the batch's, over the server's */
};

/* The run's one text field: *ret its value, *name its name. */
static int read_text(const json_t *obj, const char *prefix, const json_t **ret, const char **name,
                     struct ee_err *err)
{
	*ret = NULL;
	for (size_t i = 0; i < COUNT(text_fields); i++) {
		const json_t *v = json_object_get(obj, text_fields[i]);
		if (!v)
			continue;
		if (*ret)
			return fail(err, prefix, text_fields[i],
			            "give one of candidate, completion or generation, not both %s and %s",
			            *name, text_fields[i]);
		if (!json_is_string(v))
			return fail(err, prefix, text_fields[i], "expected a string");
		*ret = v;
		*name = text_fields[i];
	}
	if (!*ret)
		return fail(err, prefix, "candidate",
		            "required: one of candidate (a program or a model's generation), completion (the "
		            "rest of the task's prompt) or generation");
	return 0;
}

/* The run's program from its text field name (read_text). */
static int compose(const struct ee_run *run, const json_t *v, const char *name, enum ee_extract_mode mode,
                   int stop, char **ret, struct ee_extract_info *how, struct ee_err *err)
{
	if (strcmp(name, "completion") == 0)
		return ee_compose_completion(&run->task, json_string_value(v), stop, ret, how, err);
	return ee_compose_generation(&run->task, json_string_value(v), json_string_length(v), mode, ret, how,
	                             err);
}

/* The run's task: its own, built here, or a shallow copy of the batch's. */
/* Whether a run of the batch's task makes other generated tests than the
 * batch's (its own seed or hidden_fraction): then it needs its own copy. */
static int gen_differs(const struct batch_defaults *d, const struct ee_run_gen *g)
{
	return d->task->gen &&
	       (g->seed != d->set.gen.seed || g->hidden_fraction != d->set.gen.hidden_fraction);
}

static int run_task(const json_t *obj, const char *prefix, const struct ee_request_rules *rules,
                    const struct batch_defaults *d, const struct ee_run_gen *g, struct ee_run *run,
                    struct ee_err *err)
{
	const json_t *task = json_object_get(obj, "task");
	char path[96];

	ee_jf_join_path(path, sizeof(path), prefix, "task");
	if (!task && d && d->task && gen_differs(d, g)) {
		task = d->task_json; /* read again: checked once already, so as "task" */
		snprintf(path, sizeof(path), "task");
		run->batch_task = 1;
	}
	if (!task && d && d->task) {
		run->batch_task = 1;
		run->task = *d->task; /* its limits are the run's own from here on */
		run->shared_task = 1;
		return 0;
	}
	if (!task)
		return fail(err, prefix, "task", "required (a task object: native, HumanEval or MBPP)");
	int rc = read_task(task, path, rules, &run->task, err);
	if (rc < 0)
		return rc;
	return check_ceiling(&run->task.limits, rules->ceiling, prefix, "task.limits", err);
}

static int read_run(const json_t *obj, const char *prefix, const struct ee_request_rules *rules,
                    const struct batch_defaults *d, struct ee_run *run, struct ee_err *err)
{
	const struct inherited server = from_server(rules);
	struct inherited set;
	const json_t *limits_from = obj;
	const char *limits_prefix = prefix;
	const json_t *v;
	const char *name = "candidate";
	struct ee_extract_info how;
	int rc;

	run->sample = 0; /* as `execeval run`: one candidate is sample 0 */
	if (!json_is_object(obj))
		return fail(err, prefix, "", "expected an object");
	if (check_fields(obj, prefix, run_fields, COUNT(run_fields), err) < 0 ||
	    read_text(obj, prefix, &v, &name, err) < 0 ||
	    read_inherited(obj, prefix, rules, d ? &d->set : &server, &set, err) < 0)
		return -1;
	run->reward = set.reward;
	run->has_reward = set.has_reward;
	run->gen = set.gen;
	if (json_object_get(obj, "stop") && strcmp(name, "completion") != 0)
		return fail(err, prefix, "stop", "cuts a completion only (this run has a %s)", name);
	if ((rc = run_task(obj, prefix, rules, d, &set.gen, run, err)) < 0)
		return rc;
	if (d && !json_object_get(obj, "limits")) { /* the batch's, checked once already */
		limits_from = d->root;
		limits_prefix = "";
	}
	if (read_limits(limits_from, limits_prefix, rules->ceiling, &run->task.limits, err) < 0 ||
	    read_model(obj, prefix, run, err) < 0)
		return -1;
	if (!run->model && d && d->model) {
		run->model = d->model;
		run->shared_model = 1;
	}
	if (compose(run, v, name, set.mode, set.stop, &run->program, &how, err) < 0)
		return -1;
	run->no_code_block = how.how == EE_HOW_NO_BLOCK;
	ee_extraction_name(&how, run->extraction, sizeof(run->extraction));
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

/* The batch's defaults are read once on their own, so that a fault in one
 * is named where it is ("task.tests[0].kind"), not in every run; its task
 * becomes the request's shared task and its model the shared model. */
static int read_defaults(const json_t *root, const struct ee_request_rules *rules, struct ee_request *r,
                         struct batch_defaults *d, struct ee_err *err)
{
	struct ee_run probe = { 0 };
	const json_t *task = json_object_get(root, "task");
	int rc;

	const struct inherited server = from_server(rules);

	*d = (struct batch_defaults){ .root = root };
	if (task) {
		if ((rc = read_task(task, "task", rules, &r->shared, err)) < 0)
			return rc;
		r->has_shared = 1;
		d->task = &r->shared;
		d->task_json = task;
		if (check_ceiling(&r->shared.limits, rules->ceiling, "", "task.limits", err) < 0)
			return -1;
	}
	if (read_limits(root, "", rules->ceiling, &probe.task.limits, err) < 0 ||
	    read_inherited(root, "", rules, &server, &d->set, err) < 0)
		return -1;
	rc = read_model(root, "", &probe, err);
	r->model = d->model = probe.model;
	return rc;
}

/* The bounds on runs and tests, checked on counts of the body: from its
 * bytes before it is parsed (prescan.h), and again from its tree. A run's
 * own task counts its tests; a batch's task counts once per run without
 * one. -2 over a bound. */
static int check_counts(const struct ee_prescan *c, int kind, const struct ee_request_rules *rules,
                        struct ee_err *err)
{
	if (c->has_task && c->task_tests > rules->max_tests)
		return too_many_tests(err, "task", c->task_tests, rules->max_tests);
	if (kind == EE_REQUEST_RUN) {
		if (c->task_tests <= rules->max_request_tests)
			return 0;
		fail(err, "task", "tests", "%zu tests, more than this server's --max-request-tests (%zu)",
		     c->task_tests, rules->max_request_tests);
		return -2;
	}
	if (c->runs > rules->max_runs) {
		fail(err, "", "runs", "%zu runs, more than the queue holds (%zu)", c->runs, rules->max_runs);
		return -2;
	}
	if (c->max_own > rules->max_tests) {
		char path[48];
		snprintf(path, sizeof(path), "runs[%zu].task", c->max_own_index);
		return too_many_tests(err, path, c->max_own, rules->max_tests);
	}
	size_t total = c->own_tests + c->runs_without_task * (c->has_task ? c->task_tests : 0);
	if (total > rules->max_request_tests) {
		fail(err, "", "runs",
		     "%zu runs carry %zu tests in all, more than this server's --max-request-tests (%zu)",
		     c->runs, total, rules->max_request_tests);
		return -2;
	}
	return 0;
}

/* The counts of check_counts, from the parsed tree. */
static void counts_of_tree(const json_t *root, const json_t *runs, struct ee_prescan *c)
{
	const json_t *shared = json_object_get(root, "task");

	memset(c, 0, sizeof(*c));
	c->has_task = json_is_object(shared);
	c->task_tests = c->has_task ? json_tests(shared) : 0;
	c->runs = json_array_size(runs);
	for (size_t i = 0; i < c->runs; i++) {
		const json_t *task = json_object_get(json_array_get(runs, i), "task");
		size_t n = json_is_object(task) ? json_tests(task) : 0;
		if (!json_is_object(task))
			c->runs_without_task++;
		c->own_tests += n;
		if (n > c->max_own) {
			c->max_own = n;
			c->max_own_index = i;
		}
	}
}

static int count_tests(const json_t *root, const json_t *runs, int kind, const struct ee_request_rules *rules,
                       struct ee_request *r, struct ee_err *err)
{
	struct ee_prescan c;

	counts_of_tree(root, runs, &c);
	r->tests = kind == EE_REQUEST_RUN
	                   ? c.task_tests
	                   : c.own_tests + c.runs_without_task * (c.has_task ? c.task_tests : 0);
	return check_counts(&c, kind, rules, err);
}

static int read_batch(const json_t *root, const struct ee_request_rules *rules, struct ee_request *r,
                      struct ee_err *err)
{
	size_t max_runs = rules->max_runs;
	struct batch_defaults d;
	const json_t *runs = json_object_get(root, "runs");
	int rc;

	if (check_fields(root, "", batch_fields, COUNT(batch_fields), err) < 0)
		return -1;
	if (!runs)
		return fail(err, "", "runs", "required (an array of run objects)");
	if (!json_is_array(runs) || json_array_size(runs) == 0)
		return fail(err, "", "runs", "expected a non-empty array of run objects");
	if (json_array_size(runs) > max_runs) {
		fail(err, "", "runs", "%zu runs, more than the queue holds (%zu)", json_array_size(runs),
		     max_runs);
		return -2;
	}
	if ((rc = count_tests(root, runs, EE_REQUEST_BATCH, rules, r, err)) < 0 ||
	    (rc = read_defaults(root, rules, r, &d, err)) < 0)
		return rc;
	if (alloc_runs(r, json_array_size(runs), err) < 0)
		return -1;
	for (size_t i = 0; i < r->n_runs; i++) {
		char prefix[32];
		snprintf(prefix, sizeof(prefix), "runs[%zu]", i);
		if ((rc = read_run(json_array_get(runs, i), prefix, rules, &d, &r->runs[i], err)) < 0)
			return rc;
	}
	return 0;
}

/* One run: its task's tests bound the request's too. */
static int read_single(const json_t *root, const struct ee_request_rules *rules, struct ee_request *r,
                       struct ee_err *err)
{
	int rc;

	if ((rc = count_tests(root, NULL, EE_REQUEST_RUN, rules, r, err)) < 0)
		return rc;
	if (alloc_runs(r, 1, err) < 0)
		return -1;
	if ((rc = read_run(root, "", rules, NULL, &r->runs[0], err)) < 0)
		return rc;
	return 0;
}

/* The bounds checked on the body's bytes, before jansson spends a second
 * on 16 MiB of small values (prescan.h). A body the scan cannot follow is
 * left to jansson, which says where it is malformed. */
static int prescan(const char *body, size_t len, int kind, const struct ee_request_rules *rules,
                   struct ee_prescan *pre, struct ee_err *err)
{
	int scan = ee_prescan(body, len, pre);

	if (scan == EE_PRESCAN_OK && check_counts(pre, kind, rules, err) < 0)
		return -2; /* tests first: they name the field to shrink */
	if (pre->values > rules->max_values) {
		fail(err, "", "", "more than %zu JSON values (this server's --max-body-values)",
		     rules->max_values);
		return -2;
	}
	if (scan == EE_PRESCAN_ESCAPED)
		return fail(err, pre->escaped, "",
		            "a field name written with an escape sequence (write it plainly)");
	return 0;
}

void ee_request_printable(struct ee_err *err)
{
	printable(err->msg); /* jansson quotes the body as it is */
	printable(err->field);
}

/* jansson skips a raw NUL byte between tokens ("stop": true\0, ... loads),
 * which no JSON text holds (a string's NUL is \u0000): refused first, where
 * it is, so the body jansson reads is the one prescan.c walked. */
static int refuse_nul(const char *body, size_t len, struct ee_err *err)
{
	const char *nul = memchr(body, '\0', len);
	if (!nul)
		return 0;
	int line = 1, column = 1;
	for (const char *p = body; p < nul; p++, column++)
		if (*p == '\n') {
			line++;
			column = 0;
		}
	return ee_fail(err, EE_ERR_USAGE, "body: line %d column %d: a NUL byte (not JSON)", line, column);
}

json_t *ee_request_load(const char *body, size_t len, struct ee_err *err)
{
	json_error_t jerr;
	if (refuse_nul(body, len, err) < 0)
		return NULL;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);

	if (!root) {
		ee_fail(err, EE_ERR_USAGE, "body: line %d column %d: %s", jerr.line, jerr.column, jerr.text);
		ee_request_printable(err);
	}
	return root;
}

int ee_request_parse(const char *body, size_t len, int kind, const struct ee_request_rules *rules,
                     struct ee_request *ret, struct ee_err *err)
{
	struct ee_request r = { 0 };
	struct ee_prescan pre;
	int rc;

	if ((rc = prescan(body, len, kind, rules, &pre, err)) != 0)
		return rc;
	json_t *root = ee_request_load(body, len, err);
	if (!root)
		return -1;
	if (!json_is_object(root))
		rc = fail(err, "", "", "the body must be a JSON object");
	else if (kind == EE_REQUEST_BATCH)
		rc = read_batch(root, rules, &r, err);
	else
		rc = read_single(root, rules, &r, err);
	json_decref(root);
	if (rc < 0) {
		ee_request_printable(err);
		ee_request_free(&r);
		return rc;
	}
	*ret = r;
	return 0;
}

/* malloc's own overhead on each block, about */
#define BLOCK 16

static size_t str_cost(const char *s)
{
	return s ? strlen(s) + 1 + BLOCK : 0;
}

/* A JSON value as jansson holds it: about twice its compact text. */
static size_t json_cost(const json_t *v)
{
	return v ? 2 * json_dumpb(v, NULL, 0, JSON_COMPACT) + 64 : 0;
}

static size_t task_cost(const struct ee_task *t)
{
	size_t n = sizeof(*t) + str_cost(t->task_id) + str_cost(t->class_name) + str_cost(t->prompt) +
	           str_cost(t->entry_point) + str_cost(t->setup);

	for (size_t i = 0; i < t->n_tests; i++) {
		const struct ee_test *x = &t->tests[i];
		n += sizeof(*x) + str_cost(x->code) + str_cost(x->stdin_text) + str_cost(x->stdout_text) +
		     str_cost(x->fn) + json_cost(x->args) + json_cost(x->expected) + json_cost(x->kwargs) +
		     json_cost(x->calls);
	}
	return n;
}

size_t ee_request_cost(const struct ee_request *r)
{
	size_t n = sizeof(*r) + str_cost(r->model) + (r->has_shared ? task_cost(&r->shared) : 0);

	for (size_t i = 0; i < r->n_runs; i++) {
		const struct ee_run *run = &r->runs[i];
		n += sizeof(*run) + str_cost(run->program);
		if (!run->shared_model)
			n += str_cost(run->model);
		if (!run->shared_task)
			n += task_cost(&run->task);
	}
	return n;
}

void ee_request_free(struct ee_request *r)
{
	for (size_t i = 0; i < r->n_runs; i++) {
		if (!r->runs[i].shared_task)
			ee_task_free(&r->runs[i].task);
		free(r->runs[i].program);
		if (!r->runs[i].shared_model)
			free(r->runs[i].model);
	}
	free(r->runs);
	ee_task_free(&r->shared); /* also half-built, when has_shared is still 0 */
	free(r->model);
	memset(r, 0, sizeof(*r));
}
