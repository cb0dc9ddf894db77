/* reference.c - a task's generated tests from its generator and reference
 * (see reference.h for the three runs and why they are in that order).
 *
 * Each run is an ordinary evaluation of trusted code: a synthetic task of
 * strict call tests (canonical arguments in, canonical result out) whose
 * returned values the stream keeps (keep_values), so the values cross the
 * same serialiser, limits and sandbox as a candidate's. Nothing here
 * trusts the values beyond their shape: a value that is not plain data
 * ({"other": ...}) is an error of the task.
 */
#include "engine/reference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/loop.h"
#include "engine/engine.h"
#include "engine/evaluate.h"
#include "input/dataset.h"
#include "input/task.h"
#include "verdict/events.h"

/* The generator's entry, appended to its code: argument lists as lists. */
static const char generate_driver[] = "\n\ndef __execeval_generate__(seed, n):\n"
                                      "    import random\n"
                                      "    return [list(a) for a in generate(random.Random(seed), n)]\n";
#define GENERATE_FN "__execeval_generate__"

/* What one run brings back: the record, and the calls' values by test. */
struct run {
	json_t *record;
	json_t **values; /* n, owned references; NULL: the call raised or did not run */
	double *ms;      /* n: each call's wall time as the harness measured it (-1 unknown) */
	size_t n;
};

static void keep_values(void *ctx, const struct ee_sandbox_outcome *out, const struct ee_stream *s)
{
	struct run *r = ctx;
	(void)out;
	for (size_t i = 0; i < r->n; i++) {
		if (s->tests.results[i].value)
			r->values[i] = json_incref(s->tests.results[i].value);
		r->ms[i] = s->tests.results[i].duration_ms;
	}
}

static void keep_record(void *ctx, json_t *record)
{
	((struct run *)ctx)->record = record;
}

static void run_free(struct run *r)
{
	for (size_t i = 0; r->values && i < r->n; i++)
		json_decref(r->values[i]);
	free(r->values);
	free(r->ms);
	json_decref(r->record);
	memset(r, 0, sizeof(*r));
}

struct ee_calibration ee_eval_calibration(const struct ee_eval_options *o, double timeout_s)
{
	struct ee_calibration c = { 0 };

	if (o->time_floor_s <= 0 && o->time_factor <= 0)
		return c;
	c.floor_ms = 1e3 * (o->time_floor_s > 0 ? o->time_floor_s : EE_TIME_FLOOR_DEFAULT_S);
	c.factor = o->time_factor > 0 ? o->time_factor : EE_TIME_FACTOR_DEFAULT;
	c.cap_ms = 1e3 * timeout_s;
	return c;
}

/* What the trusted runs share: the candidate's sandbox and limits, none of
 * the candidate-only phases, every test run, no calibrated limit. */
static void trusted_options(const struct ee_eval_options *o, struct ee_eval_options *ret)
{
	*ret = *o;
	ret->lint = 0;
	ret->scan = EE_SCAN_OFF;
	ret->run_hidden_on_fail = 1;
	ret->test_timeout_s = 0;
	ret->time_floor_s = ret->time_factor = 0;
	ee_reward_default(&ret->reward);
}

/* Runs program against task; 0, a signal number, or -1. */
static int run_program(struct ee_engine *eng, const struct ee_eval_options *o, const struct ee_task *task,
                       const char *program, int values, struct run *r, struct ee_err *err)
{
	struct ee_candidate cand = { .task = task, .program = program, .sample = -1, .trusted = 1 };

	memset(r, 0, sizeof(*r));
	if (values) {
		r->n = task->n_tests;
		r->values = calloc(r->n ? r->n : 1, sizeof(*r->values));
		r->ms = calloc(r->n ? r->n : 1, sizeof(*r->ms));
		if (!r->values || !r->ms)
			return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
		cand.keep_values = 1;
		cand.on_outcome = keep_values;
		cand.outcome_ctx = r;
	}
	if (ee_eval_start(eng, o, &cand, keep_record, r, err) < 0)
		return -1;
	int sig = ee_loop_run(ee_engine_loop(eng), err);
	if (sig != 0)
		return sig;
	if (!r->record)
		return ee_fail(err, EE_ERR_SANDBOX, "%s: no record", task->task_id);
	const char *why = json_string_value(json_object_get(r->record, "sandbox_error"));
	if (why)
		return ee_fail(err, EE_ERR_SANDBOX, "%s: %s", task->task_id, why);
	return 0;
}

static const char *record_str(const json_t *rec, const char *key)
{
	const char *s = json_string_value(json_object_get(rec, key));
	return s ? s : "?";
}

/* The message of the first test of rec that did not pass, or NULL. */
static const char *first_failure(const json_t *rec, size_t *index)
{
	size_t i;
	json_t *t;

	json_array_foreach (json_object_get(rec, "tests"), i, t) {
		const char *status = json_string_value(json_object_get(t, "status"));
		if (status && strcmp(status, "pass") != 0) {
			*index = i;
			return json_string_value(json_object_get(t, "message"));
		}
	}
	return NULL;
}

/* Whether a canonical value holds {"other": ...} anywhere. */
static int has_other(const json_t *v, int depth)
{
	const char *key;
	json_t *x;
	size_t i;

	if (depth > 100 || json_object_get(v, "other"))
		return 1;
	if (json_is_array(v)) {
		json_array_foreach (v, i, x)
			if (has_other(x, depth + 1))
				return 1;
	} else if (json_is_object(v)) {
		json_object_foreach ((json_t *)v, key, x)
			if (has_other(x, depth + 1))
				return 1;
	}
	return 0;
}

/* A synthetic task of n strict calls of fn, the borrowed task's limits and
 * setup; args filled by the caller. */
static int calls_task(const struct ee_task *like, const char *fn, const char *setup, size_t n,
                      struct ee_task *ret, struct ee_err *err)
{
	struct ee_task t = { .format = EE_FORMAT_NATIVE, .limits = like->limits };

	memset(ret, 0, sizeof(*ret));
	t.task_id = strdup(like->task_id);
	t.class_name = strdup("");
	t.prompt = strdup("");
	t.entry_point = strdup(fn);
	t.setup = strdup(setup ? setup : "");
	t.tests = calloc(n ? n : 1, sizeof(*t.tests));
	int oom = !t.task_id || !t.class_name || !t.prompt || !t.entry_point || !t.setup || !t.tests;
	t.n_tests = t.tests ? n : 0;
	for (size_t i = 0; !oom && i < n; i++) {
		struct ee_test *c = &t.tests[i];
		c->kind = EE_TEST_CALL;
		c->weight = 1.0;
		c->float_tol = -1;
		c->strict = 1;
		c->task_index = i;
		c->fn = strdup(fn);
		c->kwargs = json_array();
		c->expected = json_null();
		oom = !c->fn || !c->kwargs;
	}
	if (oom) {
		ee_task_free(&t);
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	*ret = t;
	return 0;
}

/* Run 1: the generator's inputs as a new array of canonical argument arrays. */
static int generate_inputs(struct ee_engine *eng, const struct ee_eval_options *o, const struct ee_task *t,
                           json_t **ret, struct ee_err *err)
{
	struct ee_task g;
	struct run r;
	char seed[32], n[16];
	char *program = NULL;
	int rc;

	*ret = NULL;
	if (calls_task(t, GENERATE_FN, "", 1, &g, err) < 0)
		return -1;
	snprintf(seed, sizeof(seed), "%llu", o->seed);
	snprintf(n, sizeof(n), "%u", t->gen->n);
	g.tests[0].args = json_pack("[{s:s}, {s:s}]", "int", seed, "int", n);
	if (!g.tests[0].args || asprintf(&program, "%s%s", t->gen->generate, generate_driver) < 0) {
		ee_task_free(&g);
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	rc = run_program(eng, o, &g, program, 1, &r, err);
	free(program);
	ee_task_free(&g);
	if (rc != 0) {
		run_free(&r);
		return rc;
	}
	json_t *list = json_object_get(r.values[0], "list");
	size_t i;
	json_t *args;
	if (!json_is_array(list)) {
		size_t at = 0;
		const char *msg = first_failure(r.record, &at);
		ee_fail(err, EE_ERR_USAGE, "task %s: generate failed: %s: %s", t->task_id,
		        record_str(r.record, "status"),
		        msg           ? msg
		        : r.values[0] ? "expected a list of argument lists"
		                      : record_str(r.record, "detail"));
		run_free(&r);
		return -1;
	}
	json_t *inputs = json_array();
	json_array_foreach (list, i, args) {
		json_t *a = json_object_get(args, "list");
		if (!json_is_array(a) || has_other(a, 0)) {
			ee_fail(err, EE_ERR_USAGE,
			        "task %s: generate: input %zu: expected a list of plain values (None, bool, "
			        "int, float, str, list, tuple, dict, set)",
			        t->task_id, i);
			json_decref(inputs);
			run_free(&r);
			return -1;
		}
		json_array_append(inputs, a);
	}
	size_t want = json_array_size(list);
	run_free(&r);
	if (json_array_size(inputs) != want) {
		json_decref(inputs);
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	*ret = inputs;
	return 0;
}

/* Run 2: the reference against the task's own tests must pass. */
static int check_reference(struct ee_engine *eng, const struct ee_eval_options *o, const struct ee_task *t,
                           struct ee_err *err)
{
	struct run r;
	int rc = run_program(eng, o, t, t->gen->reference, 0, &r, err);

	if (rc == 0 && strcmp(record_str(r.record, "status"), "pass") != 0) {
		size_t at = 0;
		const char *msg = first_failure(r.record, &at);
		if (msg)
			ee_fail(err, EE_ERR_USAGE, "task %s: the reference fails its own test %zu: %s",
			        t->task_id, at, msg);
		else
			ee_fail(err, EE_ERR_USAGE, "task %s: the reference fails its own tests: %s: %s",
			        t->task_id, record_str(r.record, "status"), record_str(r.record, "detail"));
		rc = -1;
	}
	run_free(&r);
	return rc;
}

/* Run 3: the reference's result on each input (NULL where it raised). */
static int reference_outputs(struct ee_engine *eng, const struct ee_eval_options *o, const struct ee_task *t,
                             const json_t *inputs, struct run *r, struct ee_err *err)
{
	struct ee_task q;
	size_t n = json_array_size(inputs);

	if (calls_task(t, t->entry_point, t->setup, n, &q, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		q.tests[i].args = json_incref(json_array_get(inputs, i));
	int rc = run_program(eng, o, &q, t->gen->reference, 1, r, err);
	ee_task_free(&q);
	if (rc != 0)
		return rc;
	const char *status = record_str(r->record, "status");
	if (strcmp(status, "pass") != 0 && strcmp(status, "assertion_fail") != 0)
		return ee_fail(err, EE_ERR_USAGE,
		               "task %s: the reference did not finish on the generated inputs: %s: %s",
		               t->task_id, status, record_str(r->record, "detail"));
	for (size_t i = 0; i < n; i++)
		if (r->values[i] && has_other(r->values[i], 0))
			return ee_fail(
			        err, EE_ERR_USAGE,
			        "task %s: the reference's result on generated input %zu is not plain data",
			        t->task_id, i);
	return 0;
}

int ee_reference_prepare(struct ee_engine *eng, const struct ee_eval_options *o, struct ee_task *t,
                         struct ee_err *err)
{
	struct ee_eval_options trusted;
	json_t *inputs = NULL;
	struct run r = { 0 };
	int rc;

	if (!t->gen || t->gen->added)
		return 0;
	trusted_options(o, &trusted);
	if (t->gen->inputs) /* given (EvalPlus's base_input + plus_input) */
		inputs = json_incref(t->gen->inputs);
	else if ((rc = generate_inputs(eng, &trusted, t, &inputs, err)) != 0)
		goto out;
	if ((t->n_tests && (rc = check_reference(eng, &trusted, t, err)) != 0) ||
	    (rc = reference_outputs(eng, &trusted, t, inputs, &r, err)) != 0)
		goto out;
	/* The reference's time on each input, for calibrated limits: its
	 * call's wall time in a sandbox like the candidates' (warm when
	 * they are), the reference imported once before the first call. */
	rc = ee_task_add_generated_timed(t, inputs, r.values, r.ms, o->seed, o->hidden_fraction, err);
out:
	run_free(&r);
	json_decref(inputs);
	return rc;
}

int ee_reference_prepare_set(struct ee_engine *eng, const struct ee_eval_options *o, struct ee_dataset *d,
                             struct ee_err *err)
{
	for (size_t i = 0; i < d->n; i++) {
		int rc = ee_reference_prepare(eng, o, &d->entries[i].task, err);
		if (rc != 0)
			return rc;
	}
	return 0;
}
