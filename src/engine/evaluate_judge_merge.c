/* evaluate_judge_merge.c - the split judge's verdicts: the pair's merged
 * into the candidate's stream, and a third (inline) run's with the
 * judge's, gated as inline would be (see evaluate_judge.c's comment for
 * the whole, evaluate_judge_int.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/evaluate_judge_int.h"

/* A public test the supervisor judges: the judge's gate does not wait for
 * it (ran_ahead). */
static int supervisors_public(const struct ee_test *t)
{
	return !t->hidden && !ee_judge_kind(t);
}

void ee_judge_leave_out(struct ee_eval *ev)
{
	const struct judged *j = ev->pair;

	for (size_t i = 0; ev->judged && i < ev->task->n_tests; i++)
		if (ev->judged[i].judged_by)
			ee_stream_leave_out(&ev->stream, i, ev->judged[i].state);
	for (size_t k = 0; j && k < j->view.n_tests; k++)
		ee_stream_leave_out(&ev->stream, j->task_index[k], j->judge.tests.results[k].state);
}

void ee_judge_merge(struct ee_eval *ev)
{
	const struct ee_task *task = ev->task;
	struct ee_test_result *res = ev->stream.tests.results;
	int public_failed = 0;

	for (size_t i = 0; i < task->n_tests; i++) {
		if (ev->judged[i].judged_by) {
			struct ee_test_result inline_result = res[i];
			res[i] = ev->judged[i];
			ev->judged[i] = inline_result; /* freed with ev */
		} else
			res[i].judged_by = "supervisor"; /* the judge takes every other test */
		public_failed |= !task->tests[i].hidden && res[i].state != EE_T_PASS;
	}
	/* The run's own gate was inline's: it opened over the merged public
	 * verdicts (the judge's counted there), so its hidden tests ran only
	 * then. The judge's ran behind its own gate, over its own public
	 * tests: they count only when inline's would have opened. */
	if (!public_failed || ev->opt->run_hidden_on_fail)
		return;
	for (size_t i = 0; i < task->n_tests; i++)
		if (task->tests[i].hidden && res[i].state != EE_T_NOT_RUN) {
			const char *by = res[i].judged_by;
			ee_test_result_free(&res[i]);
			res[i].state = EE_T_SKIPPED;
			res[i].judged_by = by;
		}
}

/* The judge's test in flight when the candidate's process ended (no done:
 * an exit, a kill, a limit) failed on the channel; inline, the harness
 * died in that test, which is not run: so it is here. */
static int ended_in_a_call(const struct ee_stream *cand, const struct ee_test_result *r)
{
	return !ee_stream_done(cand) && r->state == EE_T_FAIL && r->channel_ended;
}

/* The task's setup raised in the judge: the import phase failed with it,
 * as inline ("setup failed: ..."), and no test ran. */
static void setup_failed(struct ee_stream *s, const char *message)
{
	static const char prefix[] = "setup: ";
	if (message && strncmp(message, prefix, sizeof(prefix) - 1) == 0)
		message += sizeof(prefix) - 1;
	char *copy = strdup(message ? message : "the setup raised");
	if (!copy)
		return; /* the tests' own failures stand */
	free(s->phases.import.message);
	s->phases.import.message = copy;
	s->phases.import.state = EE_PH_FAIL;
	s->phases.import_setup = 1;
	for (size_t i = 0; i < s->task->n_tests; i++) {
		const char *by = s->tests.results[i].judged_by;
		ee_test_result_free(&s->tests.results[i]);
		s->tests.results[i].state = EE_T_NOT_RUN;
		s->tests.results[i].judged_by = by;
	}
}

/* The candidate's phases and the judge's tests, in the candidate's stream;
 * the others (io, call) did not run. */
void ee_judge_merge_pair(struct judged *j, struct ee_sandbox_outcome *out)
{
	struct ee_stream *s = &j->ev->stream, *js = &j->judge;
	const char *setup_message = NULL;
	int setup_raised = 0;

	for (size_t k = 0; k < j->view.n_tests; k++) {
		struct ee_test_result *r = &s->tests.results[j->task_index[k]], swap = *r;
		*r = js->tests.results[k];
		js->tests.results[k] = swap;
		r->judged_by = "judge";
		if (r->setup_failed && !setup_raised) {
			setup_raised = 1;
			setup_message =
			        r->message; /* freed by setup_failed's ee_test_result_free: copied first */
		}
		if (ended_in_a_call(s, r)) {
			free(r->message);
			r->message = NULL;
			r->state = EE_T_NOT_RUN;
		}
	}
	for (size_t i = 0; i < j->ev->task->n_tests; i++)
		if (!s->tests.results[i].judged_by)
			s->tests.results[i].judged_by = "supervisor";
	if (!s->wire.violation && js->wire.violation) {
		char msg[300];
		snprintf(msg, sizeof(msg), "judge: %s", js->wire.violation);
		ee_judge_violate(s, msg);
	}
	if (setup_raised)
		setup_failed(s, setup_message);
	s->memory_error |= js->memory_error;
	/* Both had to finish: a judge cut short is no verdict. */
	if (!ee_stream_done(js) && ee_stream_done(s) && s->phases.import.state == EE_PH_OK)
		s->at = EE_AT_TESTS;
	const struct ee_sandbox_outcome *jo = &j->judge_out;
	if (jo->end == EE_END_TIMEOUT && out->end == EE_END_RAN)
		out->end = EE_END_TIMEOUT; /* the run's clock covers both */
	out->cpu_ms += jo->cpu_ms > 0 ? jo->cpu_ms : 0;
	out->interrupted |= jo->interrupted;
}

/* What only a third run judges: a test not the judge's (a mixed task). */
int ee_judge_needs_inline(const struct judged *j)
{
	return j->view.n_tests < j->ev->task->n_tests;
}

/* Both sides ran to their ends and the judge reported every test (a
 * hidden one may be skipped): its verdicts are whole. */
int ee_judge_finished_cleanly(const struct judged *j, const struct ee_sandbox_outcome *out)
{
	const struct ee_stream *s = &j->ev->stream, *js = &j->judge;

	if (out->end != EE_END_RAN || j->judge_out.end != EE_END_RAN || !ee_stream_done(s) ||
	    !ee_stream_done(js) || s->phases.import.state != EE_PH_OK || s->wire.violation ||
	    js->wire.violation)
		return 0;
	for (size_t k = 0; k < j->view.n_tests; k++)
		if (js->tests.results[k].state == EE_T_NOT_RUN)
			return 0;
	return 1;
}

/* The judge opened its gate over its own public tests while the task has
 * public tests it does not judge (a mixed task), and the pair ended among
 * the hidden tests that ran ahead of them: an exit, a memory limit or a
 * timeout there is a verdict only if those public tests pass. Not with
 * --run-hidden-on-fail (the hidden tests are due whatever they say), nor
 * after a violation or a failed import (verdicts of their own). */
int ee_judge_ran_ahead(const struct judged *j)
{
	const struct ee_task *task = j->ev->task;
	const struct ee_stream *s = &j->ev->stream, *js = &j->judge;
	int unjudged_public = 0;

	for (size_t i = 0; i < task->n_tests; i++)
		unjudged_public |= supervisors_public(&task->tests[i]);
	return unjudged_public && !j->ev->opt->run_hidden_on_fail && js->gate.answer == 'c' &&
	       s->phases.import.state == EE_PH_OK && !s->wire.violation && !js->wire.violation;
}

/* ee_judge_settle's closed gate: the inline run's record, but for the
 * judge's tests, which were not in its job: the public ones keep the
 * judge's verdicts (passes: its gate opened); the hidden ones are as
 * inline would have left them, skipped once the run reported every public
 * test it was due and ended (its gate, asked or not, closed), else not run. */
static void settle_inline(struct judged *j)
{
	const struct ee_task *task = j->ev->task;
	const struct ee_stream *s = &j->ev->stream;
	struct ee_test_result *res = s->tests.results;
	size_t public_due = 0;

	for (size_t i = 0; i < task->n_tests; i++)
		public_due += supervisors_public(&task->tests[i]);
	int gated = ee_stream_done(s) && s->tests.n_run >= public_due;
	for (size_t k = 0; k < j->view.n_tests; k++) {
		size_t i = j->task_index[k];
		struct ee_test_result *r = &res[i]; /* left out: owns nothing (ee_stream_leave_out) */
		if (!task->tests[i].hidden) {
			*r = j->judge.tests.results[k]; /* moved */
			memset(&j->judge.tests.results[k], 0, sizeof(*r));
		} else
			r->state = gated ? EE_T_SKIPPED : EE_T_NOT_RUN; /* never a verdict from here */
		r->judged_by = "judge";
	}
	for (size_t i = 0; i < task->n_tests; i++)
		if (!res[i].judged_by)
			res[i].judged_by = "supervisor";
}

void ee_judge_settle(struct ee_eval *ev, const struct ee_sandbox_outcome *out)
{
	struct judged *j = ev->pair;
	const struct ee_task *task = ev->task;
	const struct ee_sandbox_outcome *co = ee_sandbox_outcome(j->cand_sb), *jo = &j->judge_out;
	double pair_cpu_ms = (co->cpu_ms > 0 ? co->cpu_ms : 0) + (jo->cpu_ms > 0 ? jo->cpu_ms : 0);
	int public_failed = 0;

	ev->pair = NULL;
	ee_stream_finish(&ev->stream);
	for (size_t i = 0; i < task->n_tests; i++)
		public_failed |=
		        supervisors_public(&task->tests[i]) && ev->stream.tests.results[i].state != EE_T_PASS;
	if (public_failed || out->interrupted) {
		struct ee_sandbox_outcome merged = *out;
		settle_inline(j);
		merged.cpu_ms = (out->cpu_ms > 0 ? out->cpu_ms : 0) + pair_cpu_ms;
		merged.wall_ms = (out->wall_ms > 0 ? out->wall_ms : 0) +
		                 (co->wall_ms > jo->wall_ms ? co->wall_ms : jo->wall_ms);
		ee_eval_finish(ev, &merged);
		ee_judge_pair_free(j);
		return;
	}
	/* The gate opens inline too: the pair's end stands, with the
	 * supervisor's public verdicts (passes) from this run. */
	struct ee_stream check = ev->stream;
	ev->stream = j->cand_stream;
	memset(&j->cand_stream, 0, sizeof(j->cand_stream));
	for (size_t i = 0; i < task->n_tests; i++)
		if (supervisors_public(&task->tests[i])) {
			struct ee_test_result swap = ev->stream.tests.results[i];
			ev->stream.tests.results[i] = check.tests.results[i];
			check.tests.results[i] = swap;
		}
	ee_stream_free(&check);
	struct ee_sandbox_outcome pair_out = *co;
	ee_judge_merge_pair(j, &pair_out);
	pair_out.cpu_ms += out->cpu_ms > 0 ? out->cpu_ms : 0;
	ee_eval_finish(ev, &pair_out); /* pair_out borrows the pair's buffers: free them after */
	ee_judge_pair_free(j);
}
