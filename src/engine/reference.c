/* reference.c - a task's generated tests from its generator and reference
 * (see reference.h for the three runs and why they are in that order).
 *
 * Each run is an ordinary evaluation of trusted code: a synthetic task of
 * strict call tests (canonical arguments in, canonical result out) whose
 * returned values the stream keeps (keep_values), so the values cross the
 * same serialiser, limits and sandbox as a candidate's. Nothing here
 * trusts the values beyond their shape: a value that is not plain data
 * ({"other": ...}) is an error of the task.
 *
 * A job is a small state machine (step: generate, check, outputs, done),
 * so one code path serves the synchronous driver at the end of this file
 * and serve's asynchronous one (serve/refcache.c).
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

enum step { STEP_GENERATE, STEP_CHECK, STEP_OUTPUTS, STEP_DONE };

struct ee_reference_job {
	const struct ee_task *t; /* borrowed until done */
	struct ee_eval_options trusted;
	unsigned long long seed;
	int step; /* enum step: the run next gives */
	int part; /* enum ee_reference_part of a task's error */
	unsigned runs;
	unsigned repeats; /* calls of the reference per input in run 3 */
	/* The synthetic tasks of runs 1 and 3, kept until the job is freed: a
	 * run's stream still reads its task after the record's callback,
	 * where an asynchronous driver starts the next run. */
	struct ee_task q_gen, q_out;
	char *program;  /* generate: the generator and its driver */
	struct run r;   /* the run under way; once done, the reference's outputs */
	json_t *inputs; /* canonical argument arrays */
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

static void run_free(struct run *r)
{
	for (size_t i = 0; r->values && i < r->n; i++)
		json_decref(r->values[i]);
	free(r->values);
	free(r->ms);
	json_decref(r->record);
	memset(r, 0, sizeof(*r));
}

/* A fresh run; with values, room for n calls' values and times. */
static int run_init(struct run *r, size_t n, int values, struct ee_err *err)
{
	run_free(r);
	if (!values)
		return 0;
	r->n = n;
	r->values = calloc(n ? n : 1, sizeof(*r->values));
	r->ms = calloc(n ? n : 1, sizeof(*r->ms));
	if (!r->values || !r->ms)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	return 0;
}

struct ee_calibration ee_eval_calibration(const struct ee_eval_options *o, double timeout_s)
{
	return ee_calibration_of(o->time_floor_s, o->time_factor, timeout_s);
}

struct ee_calibration ee_calibration_of(double floor_s, double factor, double timeout_s)
{
	struct ee_calibration c = { 0 };

	if (floor_s <= 0 && factor <= 0)
		return c;
	c.floor_ms = 1e3 * (floor_s > 0 ? floor_s : EE_TIME_FLOOR_DEFAULT_S);
	c.factor = factor > 0 ? factor : EE_TIME_FACTOR_DEFAULT;
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

/* Run 1's task: one call of the generator's driver with (seed, n). */
static int generate_run(struct ee_reference_job *j, struct ee_err *err)
{
	const struct ee_task *t = j->t;
	char seed[32], n[16];

	if (calls_task(t, GENERATE_FN, "", 1, &j->q_gen, err) < 0)
		return -1;
	snprintf(seed, sizeof(seed), "%llu", j->seed);
	snprintf(n, sizeof(n), "%u", t->gen->n);
	j->q_gen.tests[0].args = json_pack("[{s:s}, {s:s}]", "int", seed, "int", n);
	if (!j->q_gen.tests[0].args || asprintf(&j->program, "%s%s", t->gen->generate, generate_driver) < 0) {
		j->program = NULL;
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	return run_init(&j->r, 1, 1, err);
}

/* Run 3's task: the entry point called on each input, repeats times in a
 * row (the later calls warm: the same code, data and caches). */
static int outputs_run(struct ee_reference_job *j, struct ee_err *err)
{
	const struct ee_task *t = j->t;
	size_t n = json_array_size(j->inputs) * j->repeats;

	if (calls_task(t, t->entry_point, t->setup, n, &j->q_out, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		j->q_out.tests[i].args = json_incref(json_array_get(j->inputs, i / j->repeats));
	return run_init(&j->r, n, 1, err);
}

/* Run 3's calls, one per input again: the first call's value, the
 * fastest call's time (the minimum: what the input costs on this host,
 * the least disturbed by a cold cache or a neighbour's burst). */
static int one_per_input(struct ee_reference_job *j, struct ee_err *err)
{
	struct run *r = &j->r;
	size_t n = r->n / j->repeats;

	if (j->repeats == 1)
		return 0;
	for (size_t i = 0; i < n; i++) {
		double best = -1;
		for (unsigned k = 0; k < j->repeats; k++) {
			double ms = r->ms[i * j->repeats + k];
			if (ms >= 0 && (best < 0 || ms < best))
				best = ms;
		}
		json_t *v = r->values[i * j->repeats];
		for (unsigned k = 1; k < j->repeats; k++)
			json_decref(r->values[i * j->repeats + k]);
		r->values[i] = v;
		r->ms[i] = best;
	}
	for (size_t i = n; i < r->n; i++)
		r->values[i] = NULL;
	r->n = n;
	(void)err;
	return 0;
}

/* Run 1's record: the generator's inputs as a new array of canonical
 * argument arrays, at most n_generated of them. */
static int take_inputs(struct ee_reference_job *j, struct ee_err *err)
{
	const struct ee_task *t = j->t;
	struct run *r = &j->r;
	json_t *list = json_object_get(r->values[0], "list");
	size_t i;
	json_t *args;

	j->part = EE_REF_PART_GENERATE;
	if (!json_is_array(list)) {
		size_t at = 0;
		const char *msg = first_failure(r->record, &at);
		return ee_fail(err, EE_ERR_USAGE, "task %s: generate failed: %s: %s", t->task_id,
		               record_str(r->record, "status"),
		               msg            ? msg
		               : r->values[0] ? "expected a list of argument lists"
		                              : record_str(r->record, "detail"));
	}
	if (json_array_size(list) > t->gen->n)
		return ee_fail(err, EE_ERR_USAGE,
		               "task %s: generate: returned %zu inputs, more than n_generated (%u)",
		               t->task_id, json_array_size(list), t->gen->n);
	json_t *inputs = json_array();
	json_array_foreach (list, i, args) {
		json_t *a = json_object_get(args, "list");
		if (!json_is_array(a) || has_other(a, 0)) {
			json_decref(inputs);
			return ee_fail(
			        err, EE_ERR_USAGE,
			        "task %s: generate: input %zu: expected a list of plain values (None, bool, "
			        "int, float, str, list, tuple, dict, set)",
			        t->task_id, i);
		}
		json_array_append(inputs, a);
	}
	if (json_array_size(inputs) != json_array_size(list)) {
		json_decref(inputs);
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	j->part = EE_REF_PART_NONE;
	j->inputs = inputs;
	return 0;
}

/* Run 2's record: the reference must pass the task's own tests. */
static int check_passed(struct ee_reference_job *j, struct ee_err *err)
{
	const struct ee_task *t = j->t;
	const json_t *rec = j->r.record;
	size_t at = 0;

	if (strcmp(record_str(rec, "status"), "pass") == 0)
		return 0;
	j->part = EE_REF_PART_REFERENCE;
	const char *msg = first_failure(rec, &at);
	if (msg)
		return ee_fail(err, EE_ERR_USAGE, "task %s: the reference fails its own test %zu: %s",
		               t->task_id, at, msg);
	return ee_fail(err, EE_ERR_USAGE, "task %s: the reference fails its own tests: %s: %s", t->task_id,
	               record_str(rec, "status"), record_str(rec, "detail"));
}

/* Run 3's record: the reference's result on each input (NULL where it raised). */
static int outputs_ok(struct ee_reference_job *j, struct ee_err *err)
{
	const struct ee_task *t = j->t;
	const struct run *r = &j->r;
	const char *status = record_str(r->record, "status");

	j->part = EE_REF_PART_REFERENCE;
	if (strcmp(status, "pass") != 0 && strcmp(status, "assertion_fail") != 0)
		return ee_fail(err, EE_ERR_USAGE,
		               "task %s: the reference did not finish on the generated inputs: %s: %s",
		               t->task_id, status, record_str(r->record, "detail"));
	for (size_t i = 0; i < r->n; i++)
		if (r->values[i] && has_other(r->values[i], 0))
			return ee_fail(
			        err, EE_ERR_USAGE,
			        "task %s: the reference's result on generated input %zu is not plain data",
			        t->task_id, i);
	j->part = EE_REF_PART_NONE;
	return 0;
}

int ee_reference_job_new(const struct ee_eval_options *o, const struct ee_task *t, unsigned long long seed,
                         int timed, struct ee_reference_job **ret, struct ee_err *err)
{
	struct ee_reference_job *j = calloc(1, sizeof(*j));

	if (!j)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	trusted_options(o, &j->trusted);
	j->t = t;
	j->seed = seed;
	j->repeats = timed ? EE_REFERENCE_TIMINGS : 1;
	j->step = STEP_GENERATE;
	if (t->gen->inputs) { /* given (EvalPlus's base_input + plus_input) */
		j->inputs = json_incref(t->gen->inputs);
		j->step = t->n_tests ? STEP_CHECK : STEP_OUTPUTS;
	}
	*ret = j;
	return 0;
}

int ee_reference_job_next(struct ee_reference_job *j, struct ee_candidate *cand,
                          const struct ee_eval_options **opt, struct ee_err *err)
{
	int values = 1;

	memset(cand, 0, sizeof(*cand));
	*opt = &j->trusted;
	free(j->program); /* ee_eval_start copied it */
	j->program = NULL;
	switch (j->step) {
	case STEP_DONE: return 0;
	case STEP_GENERATE:
		if (j->q_gen.tests) /* next twice without a record fed */
			return ee_fail(err, EE_ERR_SANDBOX, "internal: a reference run asked for twice");
		if (generate_run(j, err) < 0)
			return -1;
		cand->task = &j->q_gen;
		cand->program = j->program;
		break;
	case STEP_CHECK:
		if (run_init(&j->r, 0, 0, err) < 0)
			return -1;
		cand->task = j->t;
		cand->program = j->t->gen->reference;
		values = 0;
		break;
	default:
		if (j->q_out.tests)
			return ee_fail(err, EE_ERR_SANDBOX, "internal: a reference run asked for twice");
		if (outputs_run(j, err) < 0)
			return -1;
		cand->task = &j->q_out;
		cand->program = j->t->gen->reference;
		break;
	}
	cand->sample = -1;
	cand->trusted = 1;
	if (values) {
		cand->keep_values = 1;
		cand->on_outcome = keep_values;
		cand->outcome_ctx = &j->r;
	}
	j->runs++;
	return 1;
}

int ee_reference_job_feed(struct ee_reference_job *j, json_t *record, struct ee_err *err)
{
	const char *id = j->t ? j->t->task_id : "?";

	json_decref(j->r.record);
	j->r.record = record;
	if (!record || j->step == STEP_DONE)
		return ee_fail(err, EE_ERR_SANDBOX, "%s: no record", id);
	const char *why = json_string_value(json_object_get(record, "sandbox_error"));
	if (why)
		return ee_fail(err, EE_ERR_SANDBOX, "%s: %s", id, why);
	switch (j->step) {
	case STEP_GENERATE:
		if (take_inputs(j, err) < 0)
			return -1;
		j->step = j->t->n_tests ? STEP_CHECK : STEP_OUTPUTS;
		break;
	case STEP_CHECK:
		if (check_passed(j, err) < 0)
			return -1;
		j->step = STEP_OUTPUTS;
		break;
	default:
		if (outputs_ok(j, err) < 0 || one_per_input(j, err) < 0)
			return -1;
		json_decref(j->r.record); /* the values are what is kept */
		j->r.record = NULL;
		j->step = STEP_DONE;
		j->t = NULL;
		return 0;
	}
	return 0;
}

int ee_reference_job_part(const struct ee_reference_job *j)
{
	return j->part;
}

unsigned ee_reference_job_runs(const struct ee_reference_job *j)
{
	return j->runs;
}

int ee_reference_job_apply(const struct ee_reference_job *j, struct ee_task *t, double hidden_fraction,
                           struct ee_err *err)
{
	if (j->step != STEP_DONE)
		return ee_fail(err, EE_ERR_SANDBOX, "%s: the reference runs are not done", t->task_id);
	/* The reference's time on each input, for calibrated limits: its
	 * call's wall time in a sandbox like the candidates' (warm when
	 * they are), the reference imported once before the first call. */
	return ee_task_add_generated_timed(t, j->inputs, j->r.values, j->r.ms, j->seed, hidden_fraction, err);
}

size_t ee_reference_job_bytes(const struct ee_reference_job *j)
{
	/* jansson holds a value in about twice its compact text */
	size_t n = sizeof(*j) + 2 * json_dumpb(j->inputs, NULL, 0, JSON_COMPACT) +
	           (j->q_gen.n_tests + j->q_out.n_tests) * sizeof(struct ee_test);

	for (size_t i = 0; i < j->r.n; i++)
		n += sizeof(double) + sizeof(json_t *) +
		     (j->r.values[i] ? 2 * json_dumpb(j->r.values[i], NULL, 0, JSON_COMPACT) : 0);
	return n;
}

void ee_reference_job_free(struct ee_reference_job *j)
{
	if (!j)
		return;
	run_free(&j->r);
	ee_task_free(&j->q_gen);
	ee_task_free(&j->q_out);
	free(j->program);
	json_decref(j->inputs);
	free(j);
}

/* ---- the synchronous driver (run, eval) ----------------------------------- */

static void keep_record(void *ctx, json_t *record)
{
	*(json_t **)ctx = record;
}

int ee_reference_prepare(struct ee_engine *eng, const struct ee_eval_options *o, struct ee_task *t,
                         struct ee_err *err)
{
	struct ee_reference_job *j;
	struct ee_candidate cand;
	const struct ee_eval_options *ro;
	int rc;

	if (!t->gen || t->gen->added)
		return 0;
	int timed = o->time_floor_s > 0 || o->time_factor > 0;
	if (ee_reference_job_new(o, t, o->seed, timed, &j, err) < 0)
		return -1;
	while ((rc = ee_reference_job_next(j, &cand, &ro, err)) == 1) {
		json_t *rec = NULL;
		if (ee_eval_start(eng, ro, &cand, keep_record, &rec, err) < 0) {
			rc = -1;
			break;
		}
		int sig = ee_loop_run(ee_engine_loop(eng), err);
		if (sig != 0) {
			json_decref(rec);
			rc = sig;
			break;
		}
		if ((rc = ee_reference_job_feed(j, rec, err)) < 0)
			break;
	}
	if (rc == 0)
		rc = ee_reference_job_apply(j, t, o->hidden_fraction, err);
	ee_reference_job_free(j);
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
