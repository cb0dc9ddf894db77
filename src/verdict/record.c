/* record.c - the result record, built from the supervisor's own evidence
 * (docs/record.md lists every key). */
#include "verdict/record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verdict/events.h"
#include "protocol/job.h"
#include "sandbox/sandbox.h"
#include "verdict/reward.h"
#include "verdict/score.h"
#include "verdict/violations.h"
#include "input/task.h"
#include "base/text.h"

void ee_iso_now(char out[32])
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03dZ", (int)(ts.tv_nsec / 1000000) % 1000);
}

static const char *phase_name(int state)
{
	static const char *const names[] = { "not_run", "ok", "fail", "skipped" };
	return names[state];
}

static const char *test_state_name(const struct ee_test_result *r)
{
	static const char *const names[] = { "not_run", "pass", "fail", "skipped" };
	return r->timed_out ? "timeout" : names[r->state];
}

static json_t *ms_value(double ms)
{
	return ms < 0 ? json_null() : json_real(round(ms * 1000.0) / 1000.0);
}

static json_t *text_value(const char *p, size_t len)
{
	char *clean = ee_text_sanitize(p ? p : "", p ? len : 0, EE_RECORD_TEXT_CHARS, NULL);
	json_t *v = clean ? json_string(clean) : NULL;
	free(clean);
	return v;
}

static json_t *opt_text(const char *p)
{
	return p ? text_value(p, strlen(p)) : json_null();
}

/* Sets o[key] = v (stolen); a NULL v or a failed set marks *oom: a record
 * short of a key would be data silently lost (ee_record_build then fails). */
static void put(int *oom, json_t *o, const char *key, json_t *v)
{
	if (!v || json_object_set_new(o, key, v) < 0)
		*oom = 1;
}

static void append(int *oom, json_t *a, json_t *v)
{
	if (!v || json_array_append_new(a, v) < 0)
		*oom = 1;
}

static json_t *phase_json(int *oom, const char *name, const struct ee_phase_result *p)
{
	json_t *o = json_pack("{s:s, s:s}", "name", name, "status", phase_name(p->state));
	if (p->duration_ms >= 0)
		put(oom, o, "duration_ms", ms_value(p->duration_ms));
	if (p->message)
		put(oom, o, "message", opt_text(p->message));
	if (p->line > 0)
		put(oom, o, "line", json_integer(p->line));
	return o;
}

static json_t *tests_phase(int *oom, const struct ee_record_parts *ev, int hidden)
{
	const struct ee_task *t = ev->task;
	unsigned passed = 0, total = 0, skipped = 0, ran = 0;

	for (size_t i = 0; i < t->n_tests; i++) {
		if (t->tests[i].hidden != hidden)
			continue;
		int st = ev->stream->tests.results[i].state;
		total++;
		passed += st == EE_T_PASS;
		skipped += st == EE_T_SKIPPED;
		ran += st == EE_T_PASS || st == EE_T_FAIL;
	}
	const char *status = total == 0 || skipped == total ? "skipped"
	                     : ran < total && passed == ran ? "not_run"
	                     : passed == total              ? "ok"
	                                                    : "fail";
	json_t *o = json_pack("{s:s, s:s, s:I, s:I}", "name", hidden ? "hidden" : "public", "status", status,
	                      "passed", (json_int_t)passed, "total", (json_int_t)total);
	/* gated: hidden tests only after every public one passed (an oracle
	 * to the candidate); always: whatever the public verdict. */
	if (o && hidden && total > 0)
		put(oom, o, "mode", json_string(ev->stream->gate.run_hidden_on_fail ? "always" : "gated"));
	return o;
}

static json_t *phases_json(int *oom, const struct ee_record_parts *ev)
{
	json_t *a = json_array();
	append(oom, a, phase_json(oom, "syntax", &ev->stream->phases.syntax));
	json_t *scan = phase_json(oom, "scan", &ev->stream->phases.scan);
	if (json_object_set(scan, "findings", ev->stream->phases.findings) < 0)
		*oom = 1;
	append(oom, a, scan);
	append(oom, a, phase_json(oom, "import", &ev->stream->phases.import));
	append(oom, a, tests_phase(oom, ev, 0));
	append(oom, a, tests_phase(oom, ev, 1));
	return a;
}

static json_t *tests_json(int *oom, const struct ee_record_parts *ev)
{
	json_t *a = json_array();
	for (size_t i = 0; i < ev->task->n_tests; i++) {
		const struct ee_test *t = &ev->task->tests[i];
		const struct ee_test_result *r = &ev->stream->tests.results[i];
		append(oom, a,
		       json_pack("{s:I, s:s, s:s, s:s, s:s, s:f, s:o, s:o}", "index", (json_int_t)i, "kind",
		                 ee_test_kind_name(t->kind), "visibility", t->hidden ? "hidden" : "public",
		                 "tier", ee_tier_name(t->tier), "status", test_state_name(r), "weight",
		                 t->weight, "duration_ms", ms_value(r->duration_ms), "message",
		                 opt_text(r->message)));
		/* Who judged it (docs/contract.md), on every test: what the judge and
		 * the merges set, else the supervisor (io, call, converted
		 * asserts) or the candidate's own interpreter. */
		put(oom, json_array_get(a, i), "judged_by",
		    json_string(r->judged_by                      ? r->judged_by
		                : ee_test_judged_by_supervisor(t) ? "supervisor"
		                                                  : "sandbox"));
		if (ev->task->budget.total > ev->task->n_tests) /* --max-tests cut: where it came from */
			put(oom, json_array_get(a, i), "task_index", json_integer((json_int_t)t->task_index));
		if (t->kind == EE_TEST_IO && !ee_compare_is_default(&t->compare)) {
			char rule[EE_COMPARE_TEXT_MAX];
			ee_compare_text(&t->compare, rule, sizeof(rule));
			put(oom, json_array_get(a, i), "compare", json_string(rule));
		}
		double limit_ms = ee_test_limit_ms(t, &ev->stream->tests.cal);
		if (limit_ms > 0) /* --time-factor: the limit it had, from the reference's time */
			put(oom, json_array_get(a, i), "limit_ms", json_real(limit_ms));
		if (limit_ms > 0)
			put(oom, json_array_get(a, i), "reference_ms", json_real(t->reference_ms));
		if (t->strict) /* its literal's text is in test code the sandbox held */
			put(oom, json_array_get(a, i), "expected_visible",
			    json_boolean(ee_job_expected_visible(ev->task, i)));
	}
	return a;
}

/* {"canonical": {"passed": 2, "total": 3}, ...}: tiers present in the task. */
static json_t *tiers_json(int *oom, const struct ee_record_parts *ev)
{
	json_t *o = json_object();
	for (size_t i = 0; o && i < ev->task->n_tests; i++) {
		const char *tier = ee_tier_name(ev->task->tests[i].tier);
		json_t *t = json_object_get(o, tier);
		if (!t) { /* t is got back: a failed set has freed it */
			put(oom, o, tier, json_pack("{s:i, s:i}", "passed", 0, "total", 0));
			t = json_object_get(o, tier);
		}
		put(oom, t, "total", json_integer(json_integer_value(json_object_get(t, "total")) + 1));
		if (ev->stream->tests.results[i].state == EE_T_PASS)
			put(oom, t, "passed",
			    json_integer(json_integer_value(json_object_get(t, "passed")) + 1));
	}
	return o;
}

static void fill_verdict_in(const struct ee_record_parts *ev, const struct ee_sandbox_outcome *out,
                            struct ee_test_outcome *tests, struct ee_verdict_in *in)
{
	const struct ee_stream *s = ev->stream;

	memset(in, 0, sizeof(*in));
	in->timed_out = out->end == EE_END_TIMEOUT;
	in->cpu_ms = out->cpu_ms;
	in->runq_wait_ms = out->runq_wait_ms;
	in->wall_ms = out->runq_wall_ms;
	in->output_overflow = out->end == EE_END_OUTPUT_OVERFLOW;
	in->oom_killed = out->cg.oom_kills > 0 || s->memory_error;
	in->pids_limit_hit = out->cg.pids_max_hits > 0;
	in->have_status = out->have_status;
	in->status = out->status;
	in->protocol_error = s->wire.violation;
	in->done = ee_stream_done(s);
	if (s->phases.syntax.state == EE_PH_FAIL)
		in->syntax_error = s->phases.syntax.message ? s->phases.syntax.message : "invalid syntax";
	if (s->phases.scan.state == EE_PH_FAIL)
		in->scan_block = s->phases.scan_block;
	in->import_failed = s->phases.import.state == EE_PH_FAIL;
	in->import_exit = s->phases.import_exit;
	in->import_setup = s->phases.import_setup;
	in->import_denied = s->phases.import_denied;
	in->import_message = s->phases.import.message ? s->phases.import.message : "the module raised";
	for (size_t k = 0; k < ev->task->n_tests; k++) {
		size_t i = s->tests.order[k];
		const struct ee_test_result *r = &s->tests.results[i];
		tests[k] = (struct ee_test_outcome){ .state = r->state,
			                             .weight = ev->task->tests[i].weight,
			                             .index = (int)i,
			                             .exited = r->exited,
			                             .overflow = r->overflow,
			                             .timed_out = r->timed_out,
			                             .slow = r->slow,
			                             .denied = r->denied,
			                             .message = r->message };
	}
	in->tests = tests;
	in->n_tests = ev->task->n_tests;
}

static json_t *resources_json(int *oom, const struct ee_sandbox_outcome *out)
{
	json_t *r = json_pack("{s:o, s:o, s:o}", "wall_ms", ms_value(out->wall_ms), "cpu_ms",
	                      ms_value(out->cpu_ms), "peak_rss_kb",
	                      out->maxrss_kb < 0 ? json_null() : json_integer(out->maxrss_kb));
	if (out->cg.peak_kb >= 0)
		put(oom, r, "peak_memory_kb", json_integer(out->cg.peak_kb));
	return r;
}

static const char *const severity_names[] = { "low", "medium", "high" };

static int severity_rank(const char *name)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(name, severity_names[i]) == 0)
			return i;
	return 0;
}

/* "lint": pass when no finding is at or above the threshold; not_run when
 * the phase did not run or a tool failed (message says which). */
static json_t *lint_json(int *oom, const struct ee_record_parts *ev)
{
	const struct ee_stream *s = ev->stream;
	const char *status = "not_run";

	if (s->phases.lint.state == EE_PH_OK) {
		size_t i;
		json_t *f;
		status = "pass";
		json_array_foreach (s->phases.lint_findings, i, f)
			if (severity_rank(json_string_value(json_object_get(f, "severity"))) >=
			    ev->lint_severity)
				status = "fail";
	}
	json_t *lint = json_pack("{s:s, s:s, s:O, s:O}", "status", status, "severity",
	                         severity_names[ev->lint_severity], "tools", s->phases.lint_tools, "findings",
	                         s->phases.lint_findings);
	if (lint && s->phases.lint.duration_ms >= 0)
		put(oom, lint, "duration_ms", json_real(s->phases.lint.duration_ms));
	if (lint && s->phases.lint.message)
		put(oom, lint, "message", json_string(s->phases.lint.message));
	return lint;
}

/* "extraction", "program" and "program_truncated": what ran, capped like
 * stdout (the caller keeps more bytes than the cap holds, so a longer
 * program always reads as truncated). */
static void program_json(int *oom, const struct ee_record_parts *ev, json_t *rec)
{
	int cut = 0;

	if (ev->extraction)
		put(oom, rec, "extraction", json_string(ev->extraction));
	if (!ev->program)
		return;
	char *clean = ee_text_sanitize(ev->program, strlen(ev->program), EE_RECORD_TEXT_CHARS, &cut);
	put(oom, rec, "program", clean ? json_string(clean) : NULL);
	put(oom, rec, "program_truncated", json_boolean(cut));
	free(clean);
}

/* The weighted fraction of the tests of one visibility that passed; -1
 * when there are none. */
static double visible_score(const struct ee_record_parts *ev, int hidden)
{
	double got = 0, all = 0;
	int any = 0;

	for (size_t i = 0; i < ev->task->n_tests; i++) {
		if (ev->task->tests[i].hidden != hidden)
			continue;
		any = 1;
		all += ev->task->tests[i].weight;
		if (ev->stream->tests.results[i].state == EE_T_PASS)
			got += ev->task->tests[i].weight;
	}
	return !any ? -1 : all > 0 ? got / all : 0;
}

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The facts a reward formula reads (reward.h), from the verdict v. */
static void reward_facts(const struct ee_record_parts *ev, const struct ee_verdict *v, int lint_pass,
                         struct ee_reward_facts *f)
{
	double pub = visible_score(ev, 0), hid = visible_score(ev, 1);
	double tests = pub < 0 ? hid : hid < 0 ? pub : -1;

	if (tests < 0) { /* both visibilities: weighted over every test */
		double got = 0, all = 0;
		for (size_t i = 0; i < ev->task->n_tests; i++) {
			all += ev->task->tests[i].weight;
			got += ev->stream->tests.results[i].state == EE_T_PASS ? ev->task->tests[i].weight
			                                                       : 0;
		}
		tests = all > 0 ? got / all : 0;
	}
	memset(f, 0, sizeof(*f));
	f->v[EE_RF_PASS] = v->status == EE_PASS;
	f->v[EE_RF_SCORE] = v->score;
	f->v[EE_RF_TESTS_SCORE] = tests > 1 ? 1 : tests;
	f->v[EE_RF_PUBLIC_SCORE] = pub < 0 ? 0 : pub;
	f->v[EE_RF_HIDDEN_SCORE] = hid < 0 ? f->v[EE_RF_PUBLIC_SCORE] : hid;
	f->v[EE_RF_TIMEOUT] = v->status == EE_TIMEOUT;
	f->v[EE_RF_SYNTAX_ERROR] = v->status == EE_SYNTAX_ERROR;
	f->v[EE_RF_ERROR] = v->status == EE_ERROR;
	f->v[EE_RF_ASSERTION_FAIL] = v->status == EE_ASSERTION_FAIL;
	f->v[EE_RF_BLOCKED] = v->status == EE_ERROR &&
	                      (starts(v->detail, "blocked by scan") || starts(v->detail, "denied import") ||
	                       starts(v->detail, "blocked syscall"));
	f->v[EE_RF_LINT_PASS] = lint_pass;
	f->v[EE_RF_SCAN_FINDINGS] = (double)json_array_size(ev->stream->phases.findings);
	f->v[EE_RF_PASSED] = v->passed;
	f->v[EE_RF_TOTAL] = v->total;
}

/* "reward" (and "reward_formula" when it is not the default binary one,
 * so default records stay as they were): a value the formula could not
 * compute (not finite) is null with "reward_error". */
static void reward_json(int *oom, const struct ee_record_parts *ev, const struct ee_verdict *v, json_t *rec)
{
	if (!ev->reward || !ev->reward->custom) {
		put(oom, rec, "reward", json_integer(v->reward));
		return;
	}
	const char *lint = json_string_value(json_object_get(json_object_get(rec, "lint"), "status"));
	struct ee_reward_facts f;
	double value;
	reward_facts(ev, v, lint && strcmp(lint, "pass") == 0, &f);
	if (ee_reward_eval(ev->reward, &f, &value) == 0) {
		put(oom, rec, "reward", json_real(value));
	} else {
		put(oom, rec, "reward", json_null());
		put(oom, rec, "reward_error", json_string("the value is not finite (a division by zero?)"));
	}
	put(oom, rec, "reward_formula", json_string(ee_reward_text(ev->reward)));
}

json_t *ee_record_build(const struct ee_record_parts *ev)
{
	const struct ee_sandbox_outcome *out = ev->out;
	struct ee_test_outcome *tests = calloc(ev->task->n_tests + 1, sizeof(*tests));
	struct ee_verdict_in in;
	struct ee_verdict v;
	char finished[32];
	int oom_flag = 0, *oom = &oom_flag;

	if (!tests)
		return NULL;
	fill_verdict_in(ev, out, tests, &in);
	ee_verdict_decide(&in, &v);
	free(tests);
	if (ev->no_code_block && v.status != EE_PASS) {
		v.status = EE_ERROR;
		snprintf(v.detail, sizeof(v.detail), "no code block");
	}
	ee_iso_now(finished);

	json_t *rec = json_object();
	put(oom, rec, "task_id", json_string(ev->task->task_id));
	if (ev->sample >= 0)
		put(oom, rec, "sample", json_integer(ev->sample));
	if (ev->model)
		put(oom, rec, "model", json_string(ev->model));
	if (ev->shard)
		put(oom, rec, "shard", json_string(ev->shard));
	if (ev->task->class_name && ev->task->class_name[0])
		put(oom, rec, "class", json_string(ev->task->class_name));
	put(oom, rec, "status", json_string(ee_status_name(v.status)));
	put(oom, rec, "detail", v.status == EE_PASS ? json_null() : opt_text(v.detail));
	put(oom, rec, "score", json_real(v.score));
	put(oom, rec, "passed", json_integer(v.passed));
	put(oom, rec, "total", json_integer(v.total));
	put(oom, rec, "reward", json_integer(v.reward)); /* its place; its value below */
	put(oom, rec, "phases", phases_json(oom, ev));
	put(oom, rec, "tests", tests_json(oom, ev));
	put(oom, rec, "tiers", tiers_json(oom, ev));
	if (ev->task->budget.max) /* --max-tests: how many ran of how many, and which */
		put(oom, rec, "test_budget",
		    json_pack("{s:I, s:s, s:I}", "max", (json_int_t)ev->task->budget.max, "pick",
		              ee_test_pick_name(ev->task->budget.pick), "tests",
		              (json_int_t)ev->task->budget.total));
	const struct ee_task_gen *gen = ev->task->gen;
	if (gen && gen->added) {   /* generated tests: from which seed, how many */
		if (gen->generate) /* given inputs (EvalPlus's) owe nothing to a seed */
			put(oom, rec, "seed", json_integer((json_int_t)gen->seed));
		put(oom, rec, "generated",
		    json_pack("{s:I, s:I, s:I, s:I}", "asked", (json_int_t)gen->n, "tests",
		              (json_int_t)gen->made, "dropped", (json_int_t)gen->dropped, "hidden",
		              (json_int_t)gen->hidden));
	}
	const struct ee_calibration *cal = &ev->stream->tests.cal;
	if (cal->factor > 0) /* --time-floor, --time-factor: the rule of the tests' limit_ms */
		put(oom, rec, "calibration",
		    json_pack("{s:f, s:f}", "floor_s", cal->floor_ms / 1e3, "factor", cal->factor));
	if (ev->lint)
		put(oom, rec, "lint", lint_json(oom, ev));
	reward_json(oom, ev, &v, rec);
	put(oom, rec, "stdout", text_value(out->out.data, out->out.len));
	put(oom, rec, "stderr", text_value(out->err.data, out->err.len));
	if (out->output_truncated) /* only under drain_output: the cap dropped the rest */
		put(oom, rec, "output_truncated", json_true());
	program_json(oom, ev, rec);
	put(oom, rec, "resources", resources_json(oom, out));
	if (ev->backend) /* absent for the native backend */
		put(oom, rec, "backend", json_string(ev->backend));
	json_t *violations = ee_violations_json(out, ev->stream, oom);
	if (violations)
		put(oom, rec, "violations", violations);
	put(oom, rec, "sandbox_id", json_string(ev->sandbox_id));
	put(oom, rec, "started_at", json_string(ev->started_at));
	put(oom, rec, "finished_at", json_string(finished));
	put(oom, rec, "execeval_version", json_string(EE_VERSION));
	/* Unknown sample fields are kept, but never over the record's own;
	 * "shard" is the record's even when absent: merge trusts it. */
	const char *key;
	json_t *val;
	if (ev->extra) {
		json_object_foreach (ev->extra, key, val) {
			if (!json_object_get(rec, key) && strcmp(key, "shard") != 0)
				if (json_object_set(rec, key, val) < 0)
					oom_flag = 1;
		}
	}
	if (oom_flag) {
		json_decref(rec);
		return NULL;
	}
	return rec;
}

void ee_record_mark_infra(json_t *rec)
{
	json_object_set_new(rec, "reward", json_null());
	json_object_set_new(rec, "infra_error", json_true());
}

json_t *ee_record_sandbox_error(const char *task_id, const char *msg)
{
	return json_pack("{s:s, s:s, s:n, s:b, s:s}", "task_id", task_id, "sandbox_error", msg, "reward",
	                 "infra_error", 1, "execeval_version", EE_VERSION);
}

json_t *ee_record_sample_sandbox_error(const char *task_id, long sample, const char *model, const char *shard,
                                       const char *msg)
{
	json_t *rec = json_pack("{s:s}", "task_id", task_id);
	int failed = !rec;

	/* The key first, in the order of a record's keys (docs/record.md). */
	if (rec && sample >= 0)
		failed |= json_object_set_new(rec, "sample", json_integer(sample)) < 0;
	if (rec && model)
		failed |= json_object_set_new(rec, "model", json_string(model)) < 0;
	if (rec && shard && *shard)
		failed |= json_object_set_new(rec, "shard", json_string(shard)) < 0;
	json_t *rest = failed ? NULL : ee_record_sandbox_error(task_id, msg);
	failed |= !rest || json_object_update(rec, rest) < 0;
	json_decref(rest);
	if (failed) {
		json_decref(rec);
		return NULL;
	}
	return rec;
}

json_t *ee_record_invalid_sample(const json_t *task_id, long line, const char *message)
{
	json_t *rec =
	        json_pack("{s:O?, s:I, s:s, s:s, s:f, s:i, s:i, s:i, s:b, s:I}", "task_id",
	                  json_is_string(task_id) ? (json_t *)task_id : NULL, "sample", -(json_int_t)line,
	                  "status", "error", "detail", "invalid sample", "score", 0.0, "passed", 0, "total",
	                  0, "reward", -1, "invalid", 1, "line", (json_int_t)line);
	/* A message cut inside a UTF-8 character is not a JSON string: left out. */
	if (rec)
		json_object_set_new(rec, "message", json_string(message));
	return rec;
}
