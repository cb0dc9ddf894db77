/* evaluate.c - one candidate from program text to record (see evaluate.h). */
#include "engine/evaluate.h"
#include "engine/evaluate_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "engine/engine.h"
#include "engine/events_log.h"
#include "base/cleanup.h"
#include "base/err.h"
#include "base/loop.h"
#include "verdict/events.h"
#include "protocol/job.h"
#include "verdict/record.h"
#include "verdict/score.h"
#include "sandbox/sandbox.h"
#include "input/task.h"

/* The most wall-clock time the lint phase may take from the candidate's
 * timeout without it counting. */
#define LINT_BUDGET_MS 10000.0

/* Enough bytes for EE_RECORD_TEXT_CHARS characters of UTF-8. */
#define KEEP_OUTPUT_BYTES (4 * EE_RECORD_TEXT_CHARS + 4)

void ee_eval_random_hex(char out[33])
{
	unsigned char raw[16];
	size_t got = 0;

	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n > 0)
			got += (size_t)n;
		else if (errno != EINTR)
			abort(); /* no entropy: better no verdict than a guessable nonce */
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

void ee_eval_limits(const struct ee_eval_options *o, const struct ee_task *t, struct ee_limits *ret)
{
	*ret = o->limits;
	if (t->limits.has_timeout)
		ret->timeout_s = t->limits.timeout_s;
	if (t->limits.has_memory)
		ret->memory_mb = t->limits.memory_mb;
	if (t->limits.has_procs)
		ret->procs = t->limits.procs;
	if (t->limits.has_output_cap)
		ret->output_cap = t->limits.output_cap;
	ee_limits_clamp(ret);
	if (o->weak_limits)
		ee_limits_fit_weak(ret); /* a task's own memory limit may be lower */
}

json_t *ee_eval_sandbox_error(const struct ee_eval *ev, const char *msg)
{
	return ee_record_sample_sandbox_error(ev->task->task_id, ev->sample, ev->model,
	                                      ev->shard[0] ? ev->shard : NULL, msg);
}

json_t *ee_candidate_sandbox_error(const struct ee_candidate *c, const char *msg)
{
	return ee_record_sample_sandbox_error(c->task->task_id, c->sample, c->model, c->shard, msg);
}

/* ---- sandbox callbacks -------------------------------------------------- */

/* The byte the harness waits for; an opening gate brings the hidden tests
 * with it: they enter the sandbox only now (docs/protocol.md, Gate). */
static void answer(struct ee_eval *ev, struct ee_sandbox *sb)
{
	char byte = (char)ev->stream.gate.reply;
	int last = ev->stream.gate.reply_last;

	if (!ev->stream.gate.reply_gate || byte != 'c') {
		ee_sandbox_gate(sb, &byte, 1, last);
		return;
	}
	size_t len = 0;
	char *hidden = ee_job_hidden_of(ev->task, ev->supervisors_only, (long)ev->stream.tests.timeout_ms,
	                                &ev->stream.tests.cal, &len);
	if (!hidden) {
		ee_sandbox_kill(sb); /* out of memory: no verdict without its tests */
		return;
	}
	/* A gate the candidate closed takes nothing: the harness reads EOF. */
	ee_sandbox_gate(sb, hidden, len, last);
	free(hidden);
}

static double monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void on_result(void *ctx, struct ee_sandbox *sb, const char *p, size_t n)
{
	struct ee_eval *ev = ctx;

	ev->stream.now_ms = monotonic_ms(); /* the per-test clock's (events.c) */
	if (ee_stream_feed(&ev->stream, p, n)) {
		answer(ev, sb);
		ev->stream.tests.clock_ms = monotonic_ms(); /* the harness waited for it */
	}
	/* The clock started with LINT_BUDGET_MS more than the timeout; once the
	 * lint phase is over (or cannot come: the syntax or scan phase failed),
	 * the part of it lint did not use is taken back, so the candidate gets
	 * exactly its timeout and --lint never turns a pass into a timeout. */
	const struct ee_stream *s = &ev->stream;
	if (ev->opt->lint && !ev->lint_credited &&
	    (s->phases.lint.state != EE_PH_NOT_RUN || s->phases.syntax.state == EE_PH_FAIL ||
	     s->phases.scan.state == EE_PH_FAIL)) {
		double used = s->phases.lint.state == EE_PH_NOT_RUN ? 0 : s->phases.lint.duration_ms;
		ev->lint_credited = 1;
		used = used < 0 ? LINT_BUDGET_MS : used > LINT_BUDGET_MS ? LINT_BUDGET_MS : used;
		ee_sandbox_extend(sb, used - LINT_BUDGET_MS);
	}
	if (ev->stream.wire.violation)
		ee_sandbox_kill(sb);
}

/* The split judge's verdicts a third run kept (ev->judged), freed: by
 * their count in ev->stream, never the task (the record's callback may
 * have freed it: serve's /run_code). */
static void drop_judged(struct ee_eval *ev)
{
	for (size_t i = 0; ev->judged && i < ev->stream.tests.n_results; i++)
		ee_test_result_free(&ev->judged[i]);
	free(ev->judged);
	ev->judged = NULL;
}

void ee_eval_free(struct ee_eval *ev)
{
	ee_judge_pair_free(ev->pair);
	drop_judged(ev);
	ee_stream_free(&ev->stream);
	free(ev->job);
	free(ev->serve_job);
	free(ev->model);
	free(ev->program);
	free(ev->extraction);
	json_decref(ev->extra);
	free(ev);
}

int ee_eval_stream_start(struct ee_eval *ev)
{
	const struct ee_eval_options *o = ev->opt;

	if (ee_stream_init(&ev->stream, ev->task, ev->nonce, ev->gate, o->run_hidden_on_fail) < 0)
		return -1;
	/* --judge separate's inline runs: the judge's tests are not in the
	 * job, their verdicts count at its gate. */
	if (ev->supervisors_only)
		ee_judge_leave_out(ev);
	ev->stream.phases.lint_asked = o->lint;
	ev->stream.keep_values = ev->keep_values;
	/* A test's clock longer than the candidate's is the candidate's. */
	if (o->test_timeout_s > 0)
		ev->stream.tests.timeout_ms =
		        ceil(1e3 * (o->test_timeout_s < ev->limits.timeout_s ? o->test_timeout_s
		                                                             : ev->limits.timeout_s));
	ev->stream.tests.cal =
	        ee_calibration_of(ev->time_rule.floor_s, ev->time_rule.factor, ev->limits.timeout_s);
	return 0;
}

int ee_eval_start_again(struct ee_eval *ev, int separate, struct ee_err *err)
{
	ee_stream_free(&ev->stream);
	if (ee_eval_stream_start(ev) < 0)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	ev->lint_credited = 0;
	return separate ? ee_judge_launch(ev, err) : ee_eval_launch(ev, err);
}

/* A timeout the host caused (starved: the sandbox waited for a CPU most
 * of its clock) says nothing about the candidate: the first one runs the
 * whole evaluation again, from the start, in the slot it holds; a second
 * is the host's fault, an infrastructure error (reward null), never the
 * candidate's verdict. */
static int starved_timeout(const struct ee_sandbox_outcome *out)
{
	return !out->interrupted && !out->setup_failed && out->end == EE_END_TIMEOUT &&
	       ee_verdict_starved(out->runq_wall_ms, out->cpu_ms, out->runq_wait_ms);
}

static int restart(struct ee_eval *ev, struct ee_err *err)
{
	drop_judged(ev);
	ev->separate_cpu_ms = ev->separate_wall_ms = 0;
	ev->attempts = 0;
	return ee_eval_start_again(ev, ev->serve_job != NULL, err);
}

/* The record of a candidate whose sandbox (or sandboxes) ended with out,
 * to the callback; frees ev (unless a starved run starts it again). */
void ee_eval_finish(struct ee_eval *ev, const struct ee_sandbox_outcome *out)
{
	json_t *rec = NULL;

	if (ev->pair) { /* --judge separate: the public tests a pair ran ahead of */
		ee_judge_settle(ev, out);
		return;
	}
	struct ee_sandbox_outcome merged;
	ee_stream_finish(&ev->stream);
	if (ev->judged) { /* --judge separate's third run */
		ee_judge_merge(ev);
		merged = *out;
		merged.cpu_ms = (out->cpu_ms > 0 ? out->cpu_ms : 0) + ev->separate_cpu_ms;
		merged.wall_ms = (out->wall_ms > 0 ? out->wall_ms : 0) + ev->separate_wall_ms;
		out = &merged;
	}
	int starved = starved_timeout(out);
	if (starved && !ev->starved && !ee_loop_interrupted(ee_engine_loop(ev->eng))) {
		struct ee_err err = { 0 };
		ev->starved = 1;
		if (restart(ev, &err) == 0)
			return;
		ev->cb(ev->ctx, ee_eval_sandbox_error(ev, err.msg));
		ee_eval_free(ev);
		return;
	}
	if (ev->on_outcome && !out->interrupted && !out->setup_failed)
		ev->on_outcome(ev->outcome_ctx, out, &ev->stream);
	if (out->interrupted) {
		rec = NULL; /* stopped by execeval's own signal: no verdict to give */
	} else if (out->setup_failed) {
		rec = ee_eval_sandbox_error(ev, out->setup_err.msg);
	} else {
		struct ee_record_parts parts = {
			.task = ev->task,
			.stream = &ev->stream,
			.out = out,
			.model = ev->model,
			.sample = ev->sample,
			.extra = ev->extra,
			.no_code_block = ev->no_code_block,
			.program = ev->program,
			.extraction = ev->extraction,
			.shard = ev->shard[0] ? ev->shard : NULL,
			.sandbox_id = ev->sandbox_id,
			.backend = ee_engine_backend(ev->eng),
			.started_at = ev->started_at,
			.lint = ev->opt->lint,
			.lint_severity = ev->opt->lint_severity,
			.reward = &ev->reward,
		};
		rec = ee_record_build(&parts);
		if (!rec) /* the host failed, not the candidate: no record short of a key */
			rec = ee_eval_sandbox_error(ev, "out of memory building the record");
		else if (starved) /* twice: the host's */
			ee_record_mark_infra(rec);
	}
	if (rec)
		ee_engine_saw_record(ev->eng, rec);
	ev->cb(ev->ctx, rec);
	ee_eval_free(ev);
}

static void on_done(void *ctx, struct ee_sandbox *sb)
{
	struct ee_eval *ev = ctx;
	const struct ee_sandbox_outcome *out = ee_sandbox_outcome(sb);
	struct ee_err err = { 0 };

	if (!out->interrupted)
		ee_engine_saw_start(ev->eng, out->setup_failed ? &out->setup_err : NULL);
	/* A warm worker lost mid-candidate (killed from outside, hung, its slot
	 * broken so that it could not start one) or a sandbox that could not be
	 * set up says nothing about the candidate: it runs once more, from a new
	 * worker (worker.c made the lost one again with fresh cgroups). A second
	 * failure is reported below, as any sandbox failure: the sample's
	 * infrastructure error (record.h, ee_record_sandbox_error). */
	if ((out->worker_lost || out->setup_failed) && !out->interrupted && ev->attempts < 2 &&
	    !ee_loop_interrupted(ee_engine_loop(ev->eng))) {
		ee_sandbox_free(sb);
		if (ee_eval_start_again(ev, 0, &err) == 0)
			return;
		ev->cb(ev->ctx, ee_eval_sandbox_error(ev, err.msg));
		ee_eval_free(ev);
		return;
	}
	ee_eval_finish(ev, out);
	ee_sandbox_free(sb);
}

static const struct ee_sandbox_ops ops = { on_result, on_done };

int ee_eval_start(struct ee_engine *eng, const struct ee_eval_options *o, const struct ee_candidate *c,
                  ee_record_cb cb, void *ctx, struct ee_err *err)
{
	/* A candidate judged without the tests its task asks for would pass on
	 * fewer: the caller runs ee_reference_prepare first (reference.h). */
	if (c->task->gen && !c->task->gen->added && !c->trusted)
		return ee_fail(
		        err, EE_ERR_USAGE,
		        "task %s: its generated tests (reference, generate or EvalPlus inputs) are not "
		        "made yet (the caller runs ee_reference_prepare first)",
		        c->task->task_id);
	struct ee_eval *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	ev->task = c->task;
	ev->model = c->model ? strdup(c->model) : NULL;
	ev->sample = c->sample;
	ev->extra = c->extra ? json_deep_copy(c->extra) : NULL;
	ev->no_code_block = c->no_code_block;
	ev->program = strndup(c->program ? c->program : "", KEEP_OUTPUT_BYTES);
	ev->extraction = c->extraction ? strdup(c->extraction) : NULL;
	snprintf(ev->shard, sizeof(ev->shard), "%s", c->shard ? c->shard : "");
	if (!ev->program || (c->extraction && !ev->extraction)) {
		ee_eval_free(ev);
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	ev->cb = cb;
	ev->ctx = ctx;
	ev->keep_output = c->keep_output ? c->keep_output : KEEP_OUTPUT_BYTES;
	ev->reward = c->reward ? *c->reward : o->reward;
	ev->time_rule =
	        c->time_rule ? *c->time_rule : (struct ee_time_rule){ o->time_floor_s, o->time_factor };
	ev->on_outcome = c->on_outcome;
	ev->outcome_ctx = c->outcome_ctx;
	ee_eval_random_hex(ev->nonce);
	ee_eval_random_hex(ev->sandbox_id);
	ee_iso_now(ev->started_at);
	ee_eval_limits(o, c->task, &ev->limits);

	size_t n_hidden = 0;
	for (size_t i = 0; i < c->task->n_tests; i++)
		n_hidden += c->task->tests[i].hidden;
	/* Hidden tests always come after the public ones, through the gate; with
	 * run_hidden_on_fail it opens whatever the public verdict. */
	ev->gate = n_hidden > 0;
	ev->opt = o;
	ev->keep_values = c->keep_values;
	/* --judge separate: tasks with a test of the judge's kinds, without
	 * --lint (its clock credit is the inline path's); the others run
	 * inline. The inline job is then only a mixed task's (the third run,
	 * ran_ahead's run): the supervisor's tests, never the judge's. */
	int separate = o->judge == EE_JUDGE_SEPARATE && !o->lint && ee_judge_fits(c->task);
	ev->supervisors_only = separate;
	if (ee_eval_stream_start(ev) < 0) {
		ee_eval_free(ev);
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	size_t job_len = 0;
	struct ee_job_spec spec = {
		.task = c->task,
		.program = c->program,
		.nonce = ev->nonce,
		.deny_imports = o->deny_imports,
		.scan = o->scan,
		.gate = ev->gate,
		.io_output_cap = ev->limits.output_cap,
		.lint = o->lint,
		.test_timeout_ms = (long)ev->stream.tests.timeout_ms,
		.cal = &ev->stream.tests.cal,
		.supervisors_only = ev->supervisors_only,
	};
	ev->job = ee_job_build(&spec, &job_len);
	if (!ev->job) {
		ee_eval_free(ev);
		return ee_fail(err, EE_ERR_USAGE,
		               "task %s: cannot encode the job (invalid UTF-8 in the task?)",
		               c->task->task_id);
	}
	ev->job_len = job_len;
	ev->eng = eng;
	if (separate) {
		spec.role = EE_JOB_SERVE;
		spec.supervisors_only = 0;
		ev->serve_job = ee_job_build(&spec, &ev->serve_job_len);
		if (!ev->serve_job) {
			ee_eval_free(ev);
			return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
		}
	}
	if ((separate ? ee_judge_launch(ev, err) : ee_eval_launch(ev, err)) < 0) {
		ee_eval_free(ev);
		return -1;
	}
	ee_events_log_provisioned(ee_engine_events(eng), ev->sandbox_id, c->task->task_id, c->sample,
	                          c->model);
	return 0;
}

int ee_eval_launch(struct ee_eval *ev, struct ee_err *err)
{
	const struct ee_eval_options *o = ev->opt;
	struct ee_sandbox *sb;
	struct ee_limits limits = ev->limits;
	if (o->lint)
		limits.timeout_s += LINT_BUDGET_MS / 1000; /* given back after the lint phase (on_result) */
	struct ee_sandbox_config cfg = {
		.limits = &limits,
		.job = ev->job,
		.job_len = ev->job_len,
		.keep_output = ev->keep_output,
		.drain_output = o->drain_output,
	};
	if (ee_engine_sandbox_config(ev->eng, &cfg, err) < 0)
		return -1;
	/* A sandbox that cannot be made (no fresh warm worker, no cgroup) is
	 * tried once more at once: the one retry a candidate gets (on_done). */
	for (;;) {
		ev->attempts++;
		if (ee_sandbox_start(ee_engine_loop(ev->eng), &cfg, &ops, ev, &sb, err) == 0)
			break;
		ee_engine_saw_start(ev->eng, err);
		if (ev->attempts >= 2 || err->code != EE_ERR_SANDBOX)
			return -1;
	}
	/* /run_code requests run apart take their stdins from the gate, each at
	 * its turn (the job has their lengths): the gate carries nothing else. */
	size_t len = 0;
	ee_autofree char *stdins = NULL;
	if (ee_job_apart_stdins(ev->task, &stdins, &len) < 0 ||
	    (stdins && ee_sandbox_gate(sb, stdins, len, 1) < 0))
		ee_sandbox_kill(sb); /* no answer without them: each runs again alone */
	return 0;
}
