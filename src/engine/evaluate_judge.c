/* evaluate_judge.c - one candidate under --judge separate (issue 17;
 * docs/protocol.md, "Separate judge").
 *
 * Two sandboxes, each started exactly as a candidate's, with the task's
 * limits and the run's --timeout: the candidate's (job role serve: its
 * program, then a call server) and the judge's (role judge: the setup and
 * the task's assert, program and unittest tests, the candidate's names
 * bound to stubs). Cold, each is a fresh interpreter; warm, each a fork of
 * a warm worker of its own (the engine keeps two workers per slot:
 * engine.c), so the judge, like the candidate, starts from a worker's
 * pristine copy every time. Each stream is checked by events.c for its
 * role; the supervisor moves the names, the calls and the replies between
 * them through relay.c's rules, on each one's gate fd. A violation in
 * either stream kills both. The candidate ending closes the judge's gate
 * (its pending call fails, "ChannelError"), but its timeout kills the
 * judge (the run's clock covers both); the judge's done sends the
 * candidate {"end":true}.
 *
 * The record: the candidate's phases and outcome, the judge's tests
 * (judged_by "judge"). No test of the judge's kind is ever judged in the
 * candidate's interpreter: what the channel cannot carry fails in the
 * judge (harness judge.py), so nothing the candidate returns or binds
 * can move a test back into its own process. What the pair does not
 * judge, a third run judges: the candidate inline, once the pair finished
 * cleanly (both done, the judge's every test reported), with a job of the
 * task's io and call tests and strict asserts only (judged_by
 * "supervisor": a mixed task, whose expected values never enter the
 * sandbox; job.h, supervisors_only). The judge's tests are not in it, so
 * the candidate's process never holds their code; they keep the judge's
 * verdicts, which count at the run's gate as inline's public verdicts
 * would (ee_judge_leave_out): its hidden tests enter the process only when
 * every public test, the judge's and the supervisor's, passed (or with
 * --run-hidden), and the judge's hidden verdicts count only then
 * (ee_judge_merge). A pair that did not finish (a timeout, an exit, a
 * broken channel) is the verdict as it stands: no third run. One
 * exception, which judges nothing of the judge's there: the judge's gate
 * opens over its own public tests, so in a mixed task its hidden tests
 * run ahead of the supervisor's public ones; a pair that ended among them
 * (the candidate exited in such a call) is a verdict only if inline would
 * have got there. The candidate then runs inline, gated as inline, with
 * the same job, for its public io and call tests (ee_judge_settle): if one
 * fails, that run is the record (the judge's public verdicts kept, the
 * hidden tests skipped or not run, as inline), else the pair's is.
 * A warm worker lost under either side says nothing about the
 * candidate: both start again once, as inline (retry).
 *
 * This file is the pair's life; the verdicts (merging the pair's, the
 * third run's, settling) are evaluate_judge_merge.c's.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/loop.h"
#include "engine/engine.h"
#include "engine/evaluate_int.h"
#include "engine/evaluate_judge_int.h"
#include "engine/judge_host.h"
#include "input/task.h"
#include "protocol/job.h"
#include "protocol/relay.h"
#include "verdict/record.h"
#include "sandbox/sandbox.h"
#include "verdict/events.h"

int ee_judge_kind(const struct ee_test *t)
{
	return !ee_test_judged_by_supervisor(t) &&
	       (t->kind == EE_TEST_ASSERT || t->kind == EE_TEST_PROGRAM || t->kind == EE_TEST_UNITTEST);
}

int ee_judge_fits(const struct ee_task *task)
{
	for (size_t i = 0; i < task->n_tests; i++)
		if (ee_judge_kind(&task->tests[i]))
			return 1;
	return 0;
}

static int build_view(struct judged *j)
{
	const struct ee_task *task = j->ev->task;

	j->view = *task;
	j->view.n_tests = 0;
	j->view.tests = calloc(task->n_tests, sizeof(*j->view.tests));
	j->task_index = calloc(task->n_tests, sizeof(*j->task_index));
	if (!j->view.tests || !j->task_index)
		return -1;
	for (size_t i = 0; i < task->n_tests; i++)
		if (ee_judge_kind(&task->tests[i])) {
			j->task_index[j->view.n_tests] = i;
			j->view.tests[j->view.n_tests++] = task->tests[i];
		}
	return 0;
}

static int view_has_hidden(const struct ee_task *view)
{
	for (size_t k = 0; k < view->n_tests; k++)
		if (view->tests[k].hidden)
			return 1;
	return 0;
}

/* What a judge's start may take on top of the run's clock before its
 * hello: a cold interpreter, a warm worker's fork, gVisor's boot of an
 * interpreter, on a loaded host. */
#define EE_JUDGE_START_S 10

static double monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void ee_judge_violate(struct ee_stream *s, const char *why)
{
	if (!s->wire.violation)
		s->wire.violation = strdup(why); /* NULL when out of memory: killed all the same */
}

static void kill_both(struct judged *j)
{
	if (!j->cand_done)
		ee_sandbox_kill(j->cand_sb);
	if (!j->judge_done && j->judge_sb)
		ee_sandbox_kill(j->judge_sb);
}

/* The candidate's side runs no code of its own until the judge is ready
 * (its hello), so neither its wall clock (held) nor its CPU limit runs on
 * while a judge starts. Sent once, before any other frame to it; with the
 * pair's CPU, which it pins itself to before its code runs. */
static void send_go(struct judged *j)
{
	char go[64], body[48];
	if (!j->go_sent && !j->cand_done) {
		int n = j->cpu >= 0 ? snprintf(body, sizeof(body), "{\"go\":true,\"cpu\":%d}", j->cpu)
		                    : snprintf(body, sizeof(body), "{\"go\":true}");
		int len = snprintf(go, sizeof(go), "%d:%s,", n, body);
		ee_sandbox_gate(j->cand_sb, go, (size_t)len, 0);
	}
	j->go_sent = 1;
}

static void send_end(struct judged *j)
{
	static const char end[] = "12:{\"end\":true},";
	if (!j->end_sent && !j->cand_done) {
		ee_sandbox_hold(j->cand_sb, 0); /* its end runs on its clock */
		ee_sandbox_gate(j->cand_sb, end, sizeof(end) - 1, 1);
	}
	j->end_sent = 1;
}

static void both_done(struct judged *j);

/* The judge's side is over: what it came to, without the buffers of its
 * sandbox (a long-lived one goes on, or is freed, without this pair). */
static void judge_over(struct judged *j, const struct ee_sandbox_outcome *o)
{
	struct ee_sandbox_outcome *to = &j->judge_out;

	to->setup_failed = o->setup_failed;
	to->setup_err = o->setup_err;
	to->have_status = o->have_status;
	to->status = o->status;
	to->end = o->end;
	to->interrupted = o->interrupted;
	to->worker_lost = o->worker_lost;
	to->wall_ms = o->wall_ms;
	to->cpu_ms = o->cpu_ms;
	to->maxrss_kb = o->maxrss_kb;
	j->judge_done = 1;
	if (!j->cand_done)
		ee_sandbox_hold(j->cand_sb, 0); /* its side over, ready or not */
}

/* The judge back to the engine (long-lived), or its sandbox freed. */
static void release_judge(struct judged *j)
{
	if (j->judge_sb)
		ee_sandbox_hold(j->judge_sb, 0);
	if (j->host)
		ee_judge_host_give_back(ee_engine_judges(j->ev->eng), j->host, j->judge_reusable,
		                        j->judge_out.cpu_ms);
	else if (j->judge_sb)
		ee_sandbox_free(j->judge_sb);
	j->host = NULL;
	j->judge_sb = NULL;
}

/* Whose turn it is, and so whose clock runs (docs/protocol.md, "The
 * clocks of a call"): the candidate's while a call is in its hands (from
 * the call's relay to its reply), the judge's otherwise. Out of its turn
 * the candidate's clock is held but charged with its cgroup's CPU, so a
 * thread or a child that computes meanwhile costs it what it costs
 * inline; the judge's is held while the candidate has the call. Each
 * side's half of a crossing (its wake-up, its harness's decoding and
 * encoding) falls in its own turn: the candidate's half happens in its
 * process, where nothing tells it from the candidate's computing. */
static void turn(struct judged *j, int candidates)
{
	/* Once the judge's side is over ({"end":true} sent) nothing releases
	 * the candidate again: it is never held from then on. */
	if (!j->cand_done)
		ee_sandbox_hold_charged(j->cand_sb, !candidates && !j->end_sent && !j->judge_done);
	if (!j->judge_done && j->judge_sb)
		ee_sandbox_hold(j->judge_sb, candidates);
}

/* Both streams' relayed events: checked (relay.c), then forwarded. A
 * message that breaks a rule is its sender's protocol violation. */
static void relay(void *ctx, const char *kind, const json_t *ev)
{
	struct judged *j = ctx;
	struct ee_err err = { 0 };
	char *frame = NULL;
	size_t len = 0;
	int from_judge = strcmp(kind, "call") == 0 || strcmp(kind, "call_part") == 0;
	int rc = strcmp(kind, "call") == 0      ? ee_relay_call(&j->relay, ev, &frame, &len, &err)
	         : strcmp(kind, "serving") == 0 ? ee_relay_names(&j->relay, ev, &frame, &len, &err)
	         : strcmp(kind, "reply") == 0   ? ee_relay_reply(&j->relay, ev, &frame, &len, &err)
	                                      : ee_relay_part(&j->relay, from_judge, ev, &frame, &len, &err);
	if (rc < 0) {
		ee_judge_violate(from_judge ? &j->judge : &j->ev->stream, err.msg);
		return;
	}
	if (from_judge && !j->cand_done) {
		send_go(j);
		turn(j, 1);
		ee_sandbox_gate(j->cand_sb, frame, len, 0);
	} else if (!from_judge && !j->judge_done && j->judge_sb) {
		turn(j, 0);
		ee_sandbox_gate(j->judge_sb, frame, len, 0);
	}
	free(frame);
}

static void cand_result(void *ctx, struct ee_sandbox *sb, const char *p, size_t n)
{
	struct judged *j = ctx;
	(void)sb;
	j->ev->stream.now_ms = monotonic_ms();
	ee_stream_feed(&j->ev->stream, p, n); /* no question: no gate */
	if (j->ev->stream.wire.violation)
		kill_both(j);
}

static void judge_result(void *ctx, struct ee_sandbox *sb, const char *p, size_t n)
{
	struct judged *j = ctx;
	struct ee_stream *s = &j->judge;

	s->now_ms = monotonic_ms();
	if (ee_stream_feed(s, p, n)) {
		/* The gate: its hidden tests. The fd stays open whatever
		 * reply_last says: the candidate's replies still come on it. */
		char byte = (char)s->gate.reply;
		if (s->gate.reply_gate && byte == 'c') {
			size_t len = 0;
			/* no calibration: the view holds no call test */
			char *hidden = ee_job_hidden(&j->view, (long)s->tests.timeout_ms, NULL, &len);
			if (!hidden)
				ee_judge_violate(s, "out of memory");
			else
				ee_sandbox_gate(sb, hidden, len, 0);
			free(hidden);
		} else
			ee_sandbox_gate(sb, &byte, 1, 0);
		s->tests.clock_ms = monotonic_ms();
	}
	/* The judge is ready: both clocks run from here (see judge_ready). */
	if (!j->judge_ready && s->at != EE_AT_HELLO) {
		j->judge_ready = 1;
		ee_sandbox_rearm(sb, j->ev->limits.timeout_s * 1e3);
		if (!j->cand_done)
			ee_sandbox_hold(j->cand_sb, 0);
		send_go(j);
	}
	if (s->wire.violation)
		kill_both(j);
	else if (ee_stream_done(s) && j->host && s->judge_reuse && !j->judge_gate_closed && !j->judge_done) {
		/* A long-lived judge that goes on: its side is over now. */
		struct ee_sandbox_outcome o = { .end = EE_END_RAN, .maxrss_kb = -1 };
		o.cpu_ms = s->judge_cpu_ms;
		o.wall_ms = s->now_ms - j->judge_taken_ms;
		judge_over(j, &o);
		j->judge_reusable = 1;
		send_end(j);
		if (j->cand_done)
			both_done(j);
	} else if (ee_stream_done(s))
		send_end(j);
}

static void free_judged(struct judged *j)
{
	ee_stream_free(&j->judge);
	ee_stream_free(&j->cand_stream);
	free(j->view.tests);
	free(j->task_index);
	free(j->judge_job);
	if (j->cand_sb)
		ee_sandbox_free(j->cand_sb);
	release_judge(j);
	ee_engine_pair_cpu_done(j->eng, j->cpu);
	free(j);
}

/* The third run (the file's comment): the judge's verdicts kept in
 * ev->judged by task index (judged_by set where one stands), the candidate
 * run inline with the supervisor's tests only (ev->job), the judge's
 * verdicts counting at its gate (ee_judge_leave_out); ee_eval_finish
 * merges. Frees j. */
static int rerun_inline(struct judged *j, struct ee_err *err)
{
	struct ee_eval *ev = j->ev;
	const struct ee_sandbox_outcome *co = ee_sandbox_outcome(j->cand_sb), *jo = &j->judge_out;

	ev->judged = calloc(ev->task->n_tests, sizeof(*ev->judged));
	for (size_t k = 0; ev->judged && k < j->view.n_tests; k++) {
		struct ee_test_result *r = &j->judge.tests.results[k];
		ev->judged[j->task_index[k]] = *r; /* moved: the stream no longer owns it */
		memset(r, 0, sizeof(*r));
		ev->judged[j->task_index[k]].judged_by = "judge";
	}
	ev->separate_cpu_ms = (co->cpu_ms > 0 ? co->cpu_ms : 0) + (jo->cpu_ms > 0 ? jo->cpu_ms : 0);
	ev->separate_wall_ms = co->wall_ms > jo->wall_ms ? co->wall_ms : jo->wall_ms; /* side by side */
	free_judged(j);
	ee_stream_free(&ev->stream);
	if (!ev->judged || ee_eval_stream_start(ev) < 0)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	ev->lint_credited = 0;
	ev->attempts = 0; /* a start of its own: a lost worker may retry it */
	return ee_eval_launch(ev, err);
}

static int worker_lost(const struct judged *j, const struct ee_sandbox_outcome *cand,
                       const struct ee_sandbox_outcome *judge)
{
	return (cand->worker_lost || judge->worker_lost) && !cand->interrupted && !judge->interrupted &&
	       j->ev->attempts < 2 && !ee_loop_interrupted(ee_engine_loop(j->ev->eng));
}

/* The candidate inline, gated as inline, with the supervisor's tests
 * only (ev->job) and the judge's verdicts counting at its gate
 * (ee_judge_leave_out: its public ones passed), for the public tests the
 * judge ran ahead of (ran_ahead); the pair waits in ev->pair,
 * its candidate's stream in j->cand_stream. ee_judge_settle takes what
 * follows. On failure ev (which owns j now) is the caller's to free. */
static int wait_for_public(struct judged *j, struct ee_err *err)
{
	struct ee_eval *ev = j->ev;

	j->cand_stream = ev->stream;
	memset(&ev->stream, 0, sizeof(ev->stream));
	ev->pair = j;
	if (ee_eval_stream_start(ev) < 0)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	ev->lint_credited = 0;
	ev->attempts = 0; /* a start of its own: a lost worker may retry it */
	return ee_eval_launch(ev, err);
}

void ee_judge_pair_free(struct judged *pair)
{
	if (pair)
		free_judged(pair);
}

static void both_done(struct judged *j)
{
	struct ee_eval *ev = j->ev;
	struct ee_sandbox_outcome out = *ee_sandbox_outcome(j->cand_sb);
	struct ee_err err = { 0 };

	if (!j->judge_sb) { /* it could not start: both again once, from new workers */
		struct ee_err why = j->start_err;
		ee_engine_saw_start(ev->eng, &why);
		free_judged(j);
		if (!out.interrupted && ev->attempts < 2 && !ee_loop_interrupted(ee_engine_loop(ev->eng)) &&
		    ee_eval_start_again(ev, 1, &err) == 0)
			return;
		ev->cb(ev->ctx, ee_eval_sandbox_error(ev, err.msg[0] ? err.msg : why.msg));
		ee_eval_free(ev);
		return;
	}
	release_judge(j); /* a long-lived one judges the next evaluation meanwhile */
	const struct ee_sandbox_outcome *jo = &j->judge_out;
	if (!out.interrupted && !jo->interrupted)
		ee_engine_saw_start(ev->eng, out.setup_failed   ? &out.setup_err
		                             : jo->setup_failed ? &jo->setup_err
		                                                : NULL);
	if (!j->judge_ready && jo->end == EE_END_TIMEOUT && !out.interrupted) {
		char msg[160];
		snprintf(msg, sizeof(msg), "the judge did not start within %g s",
		         j->ev->limits.timeout_s + EE_JUDGE_START_S);
		ev->cb(ev->ctx, ee_eval_sandbox_error(ev, msg));
		free_judged(j);
		ee_eval_free(ev);
		return;
	}
	if (worker_lost(j, &out, jo)) { /* both sides again, from new workers */
		free_judged(j);
		if (ee_eval_start_again(ev, 1, &err) == 0)
			return;
		ev->cb(ev->ctx, ee_eval_sandbox_error(ev, err.msg));
		ee_eval_free(ev);
		return;
	}
	ee_stream_finish(&ev->stream);
	ee_stream_finish(&j->judge);
	if (!out.setup_failed && jo->setup_failed) {
		out.setup_failed = 1;
		out.setup_err = jo->setup_err;
	}
	if (!out.interrupted && !jo->interrupted && !out.setup_failed && ee_judge_needs_inline(j) &&
	    ee_judge_finished_cleanly(j, &out)) {
		if (rerun_inline(j, &err) == 0)
			return;
		ev->cb(ev->ctx, ee_eval_sandbox_error(ev, err.msg));
		ee_eval_free(ev);
		return;
	}
	if (!out.interrupted && !jo->interrupted && !out.setup_failed && ee_judge_ran_ahead(j)) {
		if (wait_for_public(j, &err) == 0)
			return;
		ev->cb(ev->ctx, ee_eval_sandbox_error(ev, err.msg));
		ee_eval_free(ev); /* frees j, ev->pair */
		return;
	}
	ee_judge_merge_pair(j, &out);
	ee_eval_finish(ev, &out); /* out borrows the sandboxes' buffers: free them after */
	free_judged(j);
}

static void cand_done(void *ctx, struct ee_sandbox *sb)
{
	struct judged *j = ctx;
	j->cand_done = 1;
	/* The clock covers both: at the candidate's timeout the judge ends too,
	 * its test in flight not run (as inline), whichever timer fired first.
	 * Any other end: no more replies, a pending call reads EOF. */
	if (!j->judge_done && j->judge_sb && ee_sandbox_outcome(sb)->end == EE_END_TIMEOUT)
		ee_sandbox_kill(j->judge_sb);
	else if (!j->judge_done && j->judge_sb) {
		ee_sandbox_hold(j->judge_sb, 0); /* a pending call reads EOF on its clock */
		ee_sandbox_gate(j->judge_sb, "", 0, 1);
		j->judge_gate_closed = 1;
	}
	if (j->judge_done)
		both_done(j);
}

static void judge_done(void *ctx, struct ee_sandbox *sb)
{
	struct judged *j = ctx;

	if (j->judge_done)
		return; /* its side was over (judge_result): the host frees it */
	struct ee_sandbox_outcome o = *ee_sandbox_outcome(sb);
	if (j->host) /* its whole life's CPU: this evaluation's is the rest */
		o.cpu_ms = o.cpu_ms > ee_judge_host_cpu_before(j->host)
		                   ? o.cpu_ms - ee_judge_host_cpu_before(j->host)
		                   : 0;
	judge_over(j, &o);
	send_end(j); /* no more calls: the candidate ends */
	if (j->cand_done)
		both_done(j);
}

static const struct ee_sandbox_ops cand_ops = { cand_result, cand_done };
static const struct ee_sandbox_ops judge_ops = { judge_result, judge_done };

static int start_one(struct ee_eval *ev, double start_allowance_s, const char *job, size_t len,
                     const struct ee_sandbox_ops *ops, void *ctx, struct ee_sandbox **ret, struct ee_err *err)
{
	struct ee_sandbox_config cfg = {
		.limits = &ev->limits,
		.start_allowance_s = start_allowance_s,
		.job = job,
		.job_len = len,
		.keep_output = ev->keep_output,
		.drain_output = ev->opt->drain_output,
	};
	if (ee_engine_sandbox_config(ev->eng, &cfg, err) < 0)
		return -1;
	return ee_sandbox_start(ee_engine_loop(ev->eng), &cfg, ops, ctx, ret, err);
}

/* The judge: a long-lived one natively (judge_host.h), else one of its own. */
static int start_judge(struct ee_eval *ev, struct judged *j)
{
	if (ee_engine_backend(ev->eng))
		return start_one(ev, EE_JUDGE_START_S, j->judge_job, j->judge_job_len, &judge_ops, j,
		                 &j->judge_sb, &j->start_err);
	struct ee_sandbox_config cfg = {
		.limits = &ev->limits,
		.start_allowance_s = EE_JUDGE_START_S,
		.keep_output = 0,
		.drain_output = 1, /* what test code prints never ends the judge */
	};
	if (ee_engine_sandbox_config(ev->eng, &cfg, &j->start_err) < 0 ||
	    ee_judge_host_take(ee_engine_judges(ev->eng), ee_engine_loop(ev->eng), &cfg, j->judge_job,
	                       j->judge_job_len, &judge_ops, j, &j->host, &j->start_err) < 0)
		return -1;
	j->judge_sb = ee_judge_host_sandbox(j->host);
	return 0;
}

int ee_judge_launch(struct ee_eval *ev, struct ee_err *err)
{
	const struct ee_eval_options *o = ev->opt;
	struct judged *j = calloc(1, sizeof(*j));
	if (!j)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	j->ev = ev;
	j->cpu = -1;
	j->eng = ev->eng;
	ee_relay_init(&j->relay);
	if (build_view(j) < 0) {
		free_judged(j);
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	int gate = view_has_hidden(&j->view);
	struct ee_job_spec spec = {
		.task = &j->view,
		.program = "",
		.nonce = ev->nonce,
		.deny_imports = o->deny_imports,
		.scan = o->scan,
		.gate = gate,
		.io_output_cap = ev->limits.output_cap,
		.test_timeout_ms = (long)ev->stream.tests.timeout_ms,
		.role = EE_JOB_JUDGE,
	};
	j->cpu = ee_engine_pair_cpu(ev->eng);
	spec.cpu = j->cpu;
	char judge_nonce[33];
	ee_eval_random_hex(judge_nonce); /* its own: neither side can forge the other's frames */
	spec.nonce = judge_nonce;
	j->judge_job = ee_job_build(&spec, &j->judge_job_len);
	if (!j->judge_job ||
	    ee_stream_init(&j->judge, &j->view, judge_nonce, gate, o->run_hidden_on_fail) < 0) {
		free_judged(j);
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	j->judge.tests.timeout_ms = ev->stream.tests.timeout_ms;
	j->judge.relay = (struct ee_stream_relay){ .role = EE_STREAM_JUDGE, .cb = relay, .ctx = j };
	ev->stream.relay = (struct ee_stream_relay){ .role = EE_STREAM_SERVE, .cb = relay, .ctx = j };
	ev->stream.gate.enabled = 0; /* the candidate asks nothing */
	if (start_one(ev, 0, ev->serve_job, ev->serve_job_len, &cand_ops, j, &j->cand_sb, err) < 0) {
		ee_engine_saw_start(ev->eng, err);
		free_judged(j);
		return -1;
	}
	ee_sandbox_hold(j->cand_sb, 1); /* until the judge's hello (judge_ready) */
	ev->attempts++;
	j->judge_taken_ms = monotonic_ms();
	if (start_judge(ev, j) < 0) {
		j->judge_sb = NULL;
		/* The candidate runs alone until its kill: its on_done ends it,
		 * the record a sandbox error. */
		j->judge_done = 1;
		ee_sandbox_kill(j->cand_sb);
		return 0;
	}
	return 0;
}
