/* events.c - the supervisor's reading of the harness's events (events.h). */
#include "verdict/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/err.h"
#include "base/text.h"
#include "input/task.h"
#include "protocol/job.h"
#include "pyvalue/judge.h"

#define MAX_FRAME    (1u << 20)
#define MAX_STREAM   (64u << 20)
#define MAX_MESSAGE  2000
#define MAX_FINDINGS 100

/* The violation when even its copy cannot be made (never freed). */
static char out_of_memory[] = "out of memory";

static void violate(struct ee_stream *s, const char *why)
{
	if (!s->wire.violation)
		s->wire.violation = strdup(why);
	if (!s->wire.violation)
		s->wire.violation = out_of_memory;
}

static char *copy_text(const char *p)
{
	return p ? strndup(p, MAX_MESSAGE) : NULL;
}

/* A copy of p (NULL for NULL); one that memory fails is a violation: a
 * message left out would change the verdict's reading. */
static char *dup_text(struct ee_stream *s, const char *p)
{
	char *d = copy_text(p);
	if (p && !d)
		violate(s, "out of memory");
	return d;
}

/* A failed test without its message: fail_test's copy failed. */
static void check_message(struct ee_stream *s, const struct ee_test_result *r)
{
	if (r->state == EE_T_FAIL && !r->message)
		violate(s, "out of memory");
}

/* Appends copy (stolen) to list. A copy that failed for memory is a
 * violation; one that failed on a character cut by strnlen is dropped. */
static void keep(struct ee_stream *s, json_t *list, json_t *copy, const json_error_t *e)
{
	if (copy ? json_array_append_new(list, copy) < 0 : json_error_code(e) != json_error_invalid_utf8)
		violate(s, "out of memory");
}

static const char *get_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static double get_ms(const json_t *o)
{
	json_t *v = json_object_get(o, "duration_ms");
	return json_is_number(v) && json_number_value(v) >= 0 ? json_number_value(v) : -1;
}

int ee_stream_init(struct ee_stream *s, const struct ee_task *task, const char *nonce, int gate,
                   int run_hidden_on_fail)
{
	size_t n = task->n_tests ? task->n_tests : 1;

	memset(s, 0, sizeof(*s));
	s->task = task;
	s->at = EE_AT_HELLO;
	snprintf(s->wire.nonce, sizeof(s->wire.nonce), "%s", nonce);
	ee_ns_init(&s->wire.dec, MAX_FRAME, MAX_STREAM);
	s->gate.enabled = gate;
	s->gate.run_hidden_on_fail = run_hidden_on_fail;
	struct ee_stream_phases *ph = &s->phases;
	ph->findings = json_array();
	ph->lint_findings = json_array();
	ph->lint_tools = json_array();
	s->tests.order = calloc(n, sizeof(*s->tests.order));
	s->tests.due = calloc(n, sizeof(*s->tests.due));
	s->tests.results = calloc(n, sizeof(*s->tests.results));
	s->tests.n_results = s->tests.results ? n : 0;
	if (!ph->findings || !ph->lint_findings || !ph->lint_tools || !s->tests.order || !s->tests.due ||
	    !s->tests.results)
		return -1;
	size_t k = 0;
	for (int hidden = 0; hidden <= 1; hidden++)
		for (size_t i = 0; i < task->n_tests; i++)
			if (task->tests[i].hidden == hidden)
				s->tests.order[k++] = i;
	memcpy(s->tests.due, s->tests.order, task->n_tests * sizeof(*s->tests.due));
	s->tests.n_due = task->n_tests;
	for (size_t i = 0; i < task->n_tests; i++) {
		s->tests.results[i].duration_ms = -1;
		s->tests.results[i].judging = ee_test_judging(&task->tests[i]);
	}
	ph->syntax.duration_ms = ph->scan.duration_ms = ph->lint.duration_ms = ph->import.duration_ms = -1;
	return 0;
}

void ee_stream_leave_out(struct ee_stream *s, size_t index, int state)
{
	struct ee_stream_tests *ts = &s->tests;

	for (size_t k = 0; k < ts->n_due; k++)
		if (ts->due[k] == index) {
			memmove(&ts->due[k], &ts->due[k + 1], (ts->n_due - k - 1) * sizeof(*ts->due));
			ts->n_due--;
			ts->results[index].state = state;
			ts->results[index].judged_by = "judge";
			return;
		}
}

static void free_phase(struct ee_phase_result *p)
{
	free(p->message);
	p->message = NULL;
}

void ee_test_result_free(struct ee_test_result *r)
{
	free(r->message);
	free(r->denied);
	json_decref(r->files);
	json_decref(r->apart);
	json_decref(r->value);
	memset(r, 0, sizeof(*r));
}

void ee_stream_free(struct ee_stream *s)
{
	struct ee_stream_phases *ph = &s->phases;

	ee_ns_free(&s->wire.dec);
	if (s->wire.violation != out_of_memory)
		free(s->wire.violation);
	json_decref(ph->findings);
	json_decref(ph->lint_findings);
	json_decref(ph->lint_tools);
	free(ph->scan_block);
	free(ph->import_denied);
	free_phase(&ph->syntax);
	free_phase(&ph->scan);
	free_phase(&ph->lint);
	free_phase(&ph->import);
	for (size_t i = 0; i < s->tests.n_results; i++) /* the task may be gone: its owner's */
		ee_test_result_free(&s->tests.results[i]);
	free(s->tests.results);
	free(s->tests.order);
	free(s->tests.due);
	memset(s, 0, sizeof(*s));
}

int ee_stream_done(const struct ee_stream *s)
{
	return s->at == EE_AT_DONE;
}

/* ---- phases ------------------------------------------------------------- */

static int phase_state(const char *status, int allow_skip)
{
	if (!status)
		return -1;
	if (strcmp(status, "ok") == 0)
		return EE_PH_OK;
	if (strcmp(status, "fail") == 0)
		return EE_PH_FAIL;
	if (allow_skip && strcmp(status, "skipped") == 0)
		return EE_PH_SKIPPED;
	return -1;
}

static void take_findings(struct ee_stream *s, const json_t *list)
{
	struct ee_stream_phases *ph = &s->phases;
	size_t i;
	json_t *f;

	json_array_foreach (list, i, f) {
		if (i >= MAX_FINDINGS || !json_is_object(f))
			break;
		const char *code = get_str(f, "code"), *sev = get_str(f, "severity");
		const char *msg = get_str(f, "message");
		json_t *line = json_object_get(f, "line");
		if (!code || !sev)
			continue;
		json_error_t e;
		json_t *copy = json_pack_ex(
		        &e, 0, "{s:s%, s:s%, s:s%, s:I}", "code", code, strnlen(code, 64), "severity", sev,
		        strnlen(sev, 16), "message", msg ? msg : "", msg ? strnlen(msg, 300) : 0, "line",
		        (json_int_t)(json_is_integer(line) ? json_integer_value(line) : 0));
		keep(s, ph->findings, copy, &e);
		if (!ph->scan_block && strcmp(sev, "block") == 0)
			ph->scan_block = dup_text(s, code);
	}
}

static int severity_known(const char *sev)
{
	return strcmp(sev, "low") == 0 || strcmp(sev, "medium") == 0 || strcmp(sev, "high") == 0;
}

/* Lint findings: typed fields only, bounded, unknown severities dropped. */
static void take_lint(struct ee_stream *s, const json_t *ev)
{
	struct ee_stream_phases *ph = &s->phases;
	size_t i;
	json_t *f;

	json_array_foreach (json_object_get(ev, "findings"), i, f) {
		if (json_array_size(ph->lint_findings) >= MAX_FINDINGS || !json_is_object(f))
			break;
		const char *tool = get_str(f, "tool"), *code = get_str(f, "code");
		const char *sev = get_str(f, "severity"), *msg = get_str(f, "message");
		json_t *line = json_object_get(f, "line");
		if (!tool || !code || !sev || !severity_known(sev))
			continue;
		json_error_t e;
		json_t *copy =
		        json_pack_ex(&e, 0, "{s:s%, s:s%, s:I, s:s%, s:s}", "tool", tool, strnlen(tool, 16),
		                     "code", code, strnlen(code, 16), "line",
		                     (json_int_t)(json_is_integer(line) ? json_integer_value(line) : 0),
		                     "message", msg ? msg : "", msg ? strnlen(msg, 300) : 0, "severity", sev);
		keep(s, ph->lint_findings, copy, &e);
	}
	json_array_foreach (json_object_get(ev, "tools"), i, f) {
		const char *name = json_string_value(f);
		if (i >= 8 || !name)
			break;
		size_t n = strnlen(name, 16);
		json_t *tool = json_stringn(name, n); /* NULL too for a character cut: dropped */
		if (tool ? json_array_append_new(ph->lint_tools, tool) < 0 : ee_utf8_first_bad(name, n) < 0)
			violate(s, "out of memory");
	}
}

/* MemoryError is the address-space limit (or an allocation the kernel
 * refused) speaking: the verdict is "memory limit", like an OOM kill. */
static void note_memory_error(struct ee_stream *s, const json_t *ev)
{
	const char *type = get_str(ev, "error_type");
	if (type && strcmp(type, "MemoryError") == 0)
		s->memory_error = 1;
}

/* The phase the cursor expects as name, or NULL. */
static struct ee_phase_result *expected_phase(struct ee_stream *s, const char *name)
{
	static const struct {
		const char *name;
		int at;
	} order[] = { { "syntax", EE_AT_SYNTAX },
		      { "scan", EE_AT_SCAN },
		      { "lint", EE_AT_LINT },
		      { "import", EE_AT_IMPORT } };
	struct ee_phase_result *slot[] = { &s->phases.syntax, &s->phases.scan, &s->phases.lint,
		                           &s->phases.import };

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (strcmp(name, order[i].name) == 0)
			return s->at == order[i].at ? slot[i] : NULL;
	return NULL;
}

/* Where the cursor goes once phase p ended in state: a failed syntax,
 * scan or import phase stops the run (a failed lint phase does not). */
static void advance(struct ee_stream *s, const struct ee_phase_result *p, int state)
{
	const struct ee_stream_phases *ph = &s->phases;

	if (state == EE_PH_FAIL && p != &ph->lint)
		s->at = EE_AT_STOPPED;
	else if (p == &ph->syntax)
		s->at = EE_AT_SCAN;
	else if (p == &ph->scan)
		s->at = ph->lint_asked ? EE_AT_LINT : EE_AT_IMPORT;
	else if (p == &ph->lint)
		s->at = EE_AT_IMPORT;
	else
		s->at = EE_AT_TESTS;
}

static void take_scan(struct ee_stream *s, const json_t *ev, int state)
{
	struct ee_stream_phases *ph = &s->phases;

	take_findings(s, json_object_get(ev, "findings"));
	if (state != EE_PH_FAIL) {
		free(ph->scan_block); /* findings reported, not blocking */
		ph->scan_block = NULL;
	} else if (!ph->scan_block) {
		ph->scan_block = dup_text(s, "unknown");
	}
}

static void on_phase(struct ee_stream *s, const json_t *ev)
{
	const char *name = get_str(ev, "name");
	struct ee_stream_phases *ph = &s->phases;

	if (!name)
		return violate(s, "phase without a name");
	struct ee_phase_result *p = expected_phase(s, name);
	if (!p)
		return violate(s, "phase out of order");
	int state = phase_state(get_str(ev, "status"), p != &ph->syntax);
	if (state < 0)
		return violate(s, "bad phase status");
	p->state = state;
	p->duration_ms = get_ms(ev);
	p->message = dup_text(s, get_str(ev, "message"));
	advance(s, p, state);
	if (p == &ph->syntax && json_is_integer(json_object_get(ev, "line")))
		p->line = (long)json_integer_value(json_object_get(ev, "line"));
	if (p == &ph->scan)
		take_scan(s, ev, state);
	if (p == &ph->lint && state == EE_PH_OK)
		take_lint(s, ev);
	if (p == &ph->import && state == EE_PH_FAIL) {
		note_memory_error(s, ev);
		ph->import_exit = json_is_true(json_object_get(ev, "exit"));
		ph->import_setup = json_is_true(json_object_get(ev, "setup"));
		ph->import_denied = dup_text(s, get_str(ev, "denied"));
	}
}

/* ---- tests -------------------------------------------------------------- */

static void fail_test(struct ee_test_result *r, const char *msg)
{
	r->state = EE_T_FAIL;
	if (!r->message)
		r->message = copy_text(msg); /* checked by the caller */
}

/* A script's facts (serve's /run_code): its exit code, its read-back
 * files when every key and value is a string (else none), and what a
 * script run apart reported (harness apart.py), checked where it is read. */
static void take_script(const struct ee_test *t, const json_t *ev, struct ee_test_result *r)
{
	json_t *code = json_object_get(ev, "exit_code");
	json_t *files = json_object_get(ev, "files");
	const char *path;
	json_t *v;

	if (json_is_integer(code) && json_integer_value(code) >= -255 && json_integer_value(code) <= 255) {
		r->have_exit_code = 1;
		r->exit_code = (long)json_integer_value(code);
	}
	if (t->script && json_is_object(json_object_get(ev, "apart")))
		r->apart = json_deep_copy(json_object_get(ev, "apart")); /* read by serve/run_code_group.c */
	if (!t->script || !json_is_object(files))
		return;
	json_object_foreach (files, path, v) {
		if (!json_is_string(v))
			return;
	}
	r->files = json_deep_copy(files);
}

static void judge_io(const struct ee_test *t, const json_t *ev, struct ee_test_result *r)
{
	const char *status = get_str(ev, "status");
	char why[256];

	take_script(t, ev, r);

	if (status && strcmp(status, "overflow") == 0) {
		r->overflow = 1;
		return fail_test(r, "output overflow");
	}
	if (!status || strcmp(status, "returned") != 0)
		return fail_test(r, get_str(ev, "message") ? get_str(ev, "message") : "the program raised");
	json_t *out = json_object_get(ev, "stdout");
	json_t *code = json_object_get(ev, "exit_code");
	if (!json_is_string(out))
		return fail_test(r, "no output reported");
	if (json_is_integer(code) && json_integer_value(code) != 0) {
		snprintf(why, sizeof(why), "exit code %lld", (long long)json_integer_value(code));
		return fail_test(r, why);
	}
	if (ee_judge_io_by(&t->compare, t->stdout_text, strlen(t->stdout_text), json_string_value(out),
	                   json_string_length(out), t->float_tol, why, sizeof(why)))
		r->state = EE_T_PASS;
	else
		fail_test(r, why);
}

/* A call test, or a strict assert (Python's == between its literal and the
 * canonical value). */
static void judge_call(const struct ee_test *t, const json_t *ev, struct ee_test_result *r, int keep_values)
{
	const char *status = get_str(ev, "status");
	const json_t *value = json_object_get(ev, "value");
	char why[256];

	if (!status || strcmp(status, "returned") != 0 || !value)
		return fail_test(r, get_str(ev, "message") ? get_str(ev, "message") : "the call raised");
	if (keep_values && !r->value) /* the reference's answers (engine/reference.c) */
		r->value = json_incref((json_t *)value);
	bool ok;
	if (r->judging != EE_JUDGE_PYEQ)
		ok = ee_judge_call(t->expected, value, t->float_tol, why, sizeof(why));
	else if (t->float_tol >= 0) /* EvalPlus's rows and generated tests with a tolerance */
		ok = ee_judge_evalplus(t->expected, value, t->float_tol, why, sizeof(why));
	else
		ok = ee_judge_pyeq(t->expected, value, why, sizeof(why));
	if (ok)
		r->state = EE_T_PASS;
	else
		fail_test(r, why);
}

/* assert, program, unittest: the sandbox's own verdict. */
static void judge_reported(struct ee_stream *s, const json_t *ev, struct ee_test_result *r)
{
	const char *status = get_str(ev, "status");
	if (status && strcmp(status, "pass") == 0 && !r->exited)
		r->state = EE_T_PASS;
	else if (status && strcmp(status, "fail") == 0) {
		note_memory_error(s, ev);
		r->channel_ended = s->relay.role == EE_STREAM_JUDGE &&
		                   json_is_true(json_object_get(ev, "channel_ended"));
		r->setup_failed =
		        s->relay.role == EE_STREAM_JUDGE && json_is_true(json_object_get(ev, "setup"));
		fail_test(r, get_str(ev, "message") ? get_str(ev, "message") : "failed");
	} else
		violate(s, "bad test status");
}

/* One call of a strict program (a check program become calls): judged at
 * once, as its assert would be. Returns 1 when the harness waits for the
 * reply: 'c' for the next call, 's' to stop (a mismatch). The test ends
 * at its first mismatch or exception, or after its last call. */
static int judge_program_call(struct ee_stream *s, const struct ee_test *t, struct ee_test_result *r,
                              const json_t *ev)
{
	const char *status = get_str(ev, "status");
	json_t *number = json_object_get(ev, "call"), *value = json_object_get(ev, "value");
	size_t n = json_array_size(t->calls), k = s->tests.call_next;
	char why[256], msg[400];

	/* An honest harness numbers every call; an event that does not (a
	 * forged "pass") reports no value: the test fails there, as a strict
	 * assert's does. */
	if (!json_is_integer(number) || json_integer_value(number) != (json_int_t)k)
		status = NULL;
	int returned = status && strcmp(status, "returned") == 0 && value;
	if (r->state != EE_T_FAIL) { /* else a mismatch came before (no oracle) */
		if (returned && ee_judge_pyeq(json_object_get(json_array_get(t->calls, k), "expected"), value,
		                              why, sizeof(why))) {
			if (k + 1 == n)
				r->state = EE_T_PASS;
		} else {
			const char *raised = status ? get_str(ev, "message") : NULL;
			snprintf(msg, sizeof(msg), "assert %zu of %zu: %s", k + 1, n,
			         returned ? why
			         : raised ? raised
			                  : "the call raised");
			r->exited = json_is_true(json_object_get(ev, "exit"));
			r->denied = dup_text(s, get_str(ev, "denied"));
			if (!returned)
				note_memory_error(s, ev);
			fail_test(r, msg);
			check_message(s, r);
		}
	}
	/* The harness waits after a returned value that is not the last: 'c'
	 * for the next call. Without the oracle (hidden tests always run) the
	 * answer is 'c' after a mismatch too, so that no running candidate
	 * learns a verdict; the test's verdict stays its first mismatch's. */
	int asks = returned && k + 1 < n;
	if (asks && (r->state != EE_T_FAIL || s->gate.run_hidden_on_fail)) {
		s->tests.call_next++;
		s->gate.reply = 'c';
		return 1;
	}
	if (asks)
		s->gate.reply = 's'; /* check() stops at its first failing assert */
	s->tests.call_next = 0;
	s->tests.n_run++;
	return asks;
}

/* Why the test event ev cannot be the next one, or NULL. */
static const char *test_out_of_place(const struct ee_stream *s, const json_t *ev)
{
	json_t *idx = json_object_get(ev, "index");
	const struct ee_stream_tests *ts = &s->tests;

	if (s->at != EE_AT_TESTS)
		return "test before the import phase";
	if (ts->n_run >= ts->n_due || !json_is_integer(idx) ||
	    (size_t)json_integer_value(idx) != ts->due[ts->n_run])
		return "test out of order or unknown";
	if (s->task->tests[ts->due[ts->n_run]].hidden && s->gate.enabled && s->gate.answer != 'c')
		return "hidden test without the gate's consent";
	return NULL;
}

/* A harness's margin over --test-timeout on the supervisor's clock: the
 * fork of an io test, an event's encoding and its trip. */
#define TEST_CLOCK_SLACK    1.1
#define TEST_CLOCK_SLACK_MS 100.0

/* "41x" (a whole number from 10 up, one decimal below). */
static void format_ratio(char *buf, size_t n, double ratio)
{
	snprintf(buf, n, ratio >= 10 ? "%.0fx" : "%.1fx", ratio);
}

/* --time-factor: a calibrated call over its limit is a timeout "slow: 41x
 * the reference". Over means: the harness says it stopped it at its limit
 * (a call after one that overran, tests.py), or its own time for the call
 * passed the limit (the honest path, precise), or the supervisor's clock
 * from the event before it did with the slack (the candidate's last word:
 * no reset alarm or forged duration gets past it). One that never returns
 * is the wall clock's: the candidate's timeout, its usual detail. */
static void clock_calibrated(struct ee_stream *s, const struct ee_test *t, const json_t *ev,
                             struct ee_test_result *r, double limit_ms)
{
	const char *status = get_str(ev, "status");
	double elapsed = s->now_ms - s->tests.clock_ms;
	int stopped = status && strcmp(status, "timeout") == 0;
	int over_own = r->duration_ms > limit_ms;
	char ratio[32], why[96];

	if (!stopped && !over_own && elapsed <= limit_ms * TEST_CLOCK_SLACK + TEST_CLOCK_SLACK_MS)
		return;
	double took = over_own && !stopped ? r->duration_ms : elapsed;
	format_ratio(ratio, sizeof(ratio), took / t->reference_ms);
	if (stopped)
		snprintf(why, sizeof(why), "slow: over %s the reference (stopped at its limit)", ratio);
	else
		snprintf(why, sizeof(why), "slow: %s the reference", ratio);
	free(r->message);
	r->message = NULL;
	r->timed_out = r->slow = 1;
	fail_test(r, why);
}

/* --test-timeout (a calibrated call: clock_calibrated): a clocked test the
 * harness says timed out, or whose event came later after the one before
 * it than the limit allows, is a timeout of that test whatever it
 * reported: the supervisor's clock is the candidate's last word, so no
 * caught exception or reset alarm makes an overrun pass. */
static void clock_test(struct ee_stream *s, const struct ee_test *t, const json_t *ev,
                       struct ee_test_result *r)
{
	const struct ee_stream_tests *ts = &s->tests;
	const char *status = get_str(ev, "status");
	double limit_ms = t->kind == EE_TEST_CALL ? ee_test_limit_ms(t, &ts->cal) : 0;
	char why[96];

	if (limit_ms > 0) {
		clock_calibrated(s, t, ev, r, limit_ms);
		return;
	}
	if (ts->timeout_ms <= 0 || !ee_job_test_clocked(t) || r->overflow)
		return;
	if (!(status && strcmp(status, "timeout") == 0) &&
	    s->now_ms - ts->clock_ms <= ts->timeout_ms * TEST_CLOCK_SLACK + TEST_CLOCK_SLACK_MS)
		return;
	snprintf(why, sizeof(why), "timed out (--test-timeout %g s)", ts->timeout_ms / 1000.0);
	free(r->message);
	r->message = NULL;
	r->timed_out = 1;
	fail_test(r, why);
}

static int on_test(struct ee_stream *s, const json_t *ev)
{
	const char *why = test_out_of_place(s, ev);

	if (why) {
		violate(s, why);
		return 0;
	}
	size_t i = s->tests.due[s->tests.n_run];
	const struct ee_test *t = &s->task->tests[i];
	struct ee_test_result *r = &s->tests.results[i];
	if (r->judging == EE_JUDGE_PYEQ_CALLS)
		return judge_program_call(s, t, r, ev);
	s->tests.n_run++;
	r->duration_ms = get_ms(ev);
	r->exited = json_is_true(json_object_get(ev, "exit"));
	r->denied = dup_text(s, get_str(ev, "denied"));
	switch (r->judging) {
	case EE_JUDGE_IO: judge_io(t, ev, r); break;
	case EE_JUDGE_VALUE:
	case EE_JUDGE_PYEQ: judge_call(t, ev, r, s->keep_values); break;
	default: judge_reported(s, ev, r);
	}
	clock_test(s, t, ev, r);
	check_message(s, r);
	return 0;
}

int ee_stream_public_failed(const struct ee_stream *s)
{
	for (size_t i = 0; i < s->task->n_tests; i++)
		if (!s->task->tests[i].hidden && s->tests.results[i].state != EE_T_PASS)
			return 1;
	return 0;
}

/* The public tests the harness reports (those left out are not). */
static size_t count_public_due(const struct ee_stream *s)
{
	size_t n = 0;
	for (size_t k = 0; k < s->tests.n_due; k++)
		n += !s->task->tests[s->tests.due[k]].hidden;
	return n;
}

static int on_gate(struct ee_stream *s)
{
	struct ee_stream_gate *g = &s->gate;
	size_t n_run = s->tests.n_run;

	if (!g->enabled || g->asked || n_run != count_public_due(s) || n_run == s->tests.n_due ||
	    s->tests.call_next > 0) {
		violate(s, "unexpected gate");
		return 0;
	}
	g->asked = 1;
	g->answer = (!ee_stream_public_failed(s) || g->run_hidden_on_fail) ? 'c' : 's';
	g->reply = g->answer;
	g->reply_gate = 1;
	return 1;
}

/* Tests the stream never reported: skipped (the gate said so) or not run. */
static void settle_unreported(struct ee_stream *s)
{
	for (size_t k = s->tests.n_run; k < s->tests.n_due; k++) {
		size_t i = s->tests.due[k];
		if (s->task->tests[i].hidden && s->gate.answer == 's')
			s->tests.results[i].state = EE_T_SKIPPED;
	}
}

/* ---- the stream --------------------------------------------------------- */

/* --judge separate: the relayed events, each in its side's stream only and
 * only where it can come (after the import phase; the judge has no phases). */
static void on_relayed(struct ee_stream *s, const char *kind, const json_t *ev)
{
	struct ee_stream_relay *r = &s->relay;
	int serve = r->role == EE_STREAM_SERVE, part = strcmp(kind, "part") == 0;

	if (s->at != EE_AT_TESTS || r->role == EE_STREAM_INLINE ||
	    (!part && (strcmp(kind, "call") == 0) == serve))
		violate(s, "unexpected relay event");
	else if (serve && (part ? !r->serving : (strcmp(kind, "serving") == 0) == r->serving))
		violate(s, "serving out of place");
	else {
		r->serving |= serve;
		/* A part is the judge's (before a call) or the candidate's
		 * (before a reply): the relay is told which. */
		if (r->cb)
			r->cb(r->ctx, part ? (serve ? "reply_part" : "call_part") : kind, ev);
	}
}

/* Whether this side's stream may carry the event kind at all. */
static const char *role_refuses(const struct ee_stream *s, const char *kind)
{
	if (s->relay.role == EE_STREAM_SERVE && (strcmp(kind, "test") == 0 || strcmp(kind, "gate") == 0))
		return "test event from the candidate's call server";
	if (s->relay.role == EE_STREAM_JUDGE && strcmp(kind, "phase") == 0)
		return "phase event from the judge";
	return NULL;
}

static int on_event(struct ee_stream *s, const char *payload, size_t len)
{
	json_error_t jerr;
	ee_autodecref json_t *ev = json_loadb(payload, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	int wants_reply = 0;

	if (!json_is_object(ev)) {
		violate(s, "event is not a JSON object");
		return 0;
	}
	const char *nonce = get_str(ev, "nonce"), *kind = get_str(ev, "ev");
	json_t *seq = json_object_get(ev, "seq");
	if (!nonce || strcmp(nonce, s->wire.nonce) != 0)
		violate(s, "wrong nonce");
	else if (!json_is_integer(seq) || json_integer_value(seq) != s->wire.next_seq)
		violate(s, "sequence gap");
	else if (s->at == EE_AT_DONE)
		violate(s, "event after done");
	else if (!kind)
		violate(s, "event without a kind");
	else if ((s->at == EE_AT_HELLO) != (strcmp(kind, "hello") == 0))
		violate(s, "hello out of place");
	else if (role_refuses(s, kind))
		violate(s, role_refuses(s, kind));
	else if (strcmp(kind, "hello") == 0)
		s->at = s->relay.role == EE_STREAM_JUDGE ? EE_AT_TESTS : EE_AT_SYNTAX;
	else if (strcmp(kind, "serving") == 0 || strcmp(kind, "reply") == 0 || strcmp(kind, "call") == 0 ||
	         strcmp(kind, "part") == 0)
		on_relayed(s, kind, ev);
	else if (strcmp(kind, "phase") == 0)
		on_phase(s, ev);
	else if (strcmp(kind, "test") == 0)
		wants_reply = on_test(s, ev);
	else if (strcmp(kind, "gate") == 0)
		wants_reply = on_gate(s);
	else if (strcmp(kind, "done") == 0 && s->tests.call_next > 0)
		violate(s, "done in the middle of a test");
	else if (strcmp(kind, "done") == 0) {
		s->at = EE_AT_DONE;
		settle_unreported(s);
		if (s->relay.role == EE_STREAM_JUDGE) {
			json_t *cpu = json_object_get(ev, "cpu_ms");
			s->judge_cpu_ms = json_is_number(cpu) && json_number_value(cpu) >= 0
			                          ? json_number_value(cpu)
			                          : 0;
			s->judge_reuse = json_is_true(json_object_get(ev, "reuse"));
		}
	} else
		violate(s, "unknown event");
	s->wire.next_seq++;
	s->tests.clock_ms = s->now_ms; /* the next test's clock starts here */
	return wants_reply;
}

/* Whether the harness may still ask anything once it has s->gate.reply: the
 * rest of a strict program, a strict program still to run, or the gate. */
static int more_questions(const struct ee_stream *s)
{
	if (s->tests.call_next > 0)
		return 1;
	if (s->gate.asked && s->gate.answer != 'c')
		return 0;
	int hidden_left = 0;
	for (size_t k = s->tests.n_run; k < s->tests.n_due; k++) {
		size_t i = s->tests.due[k];
		const struct ee_test *t = &s->task->tests[i];
		if (s->tests.results[i].judging == EE_JUDGE_PYEQ_CALLS && json_array_size(t->calls) > 1)
			return 1; /* a one-call program asks nothing */
		hidden_left |= t->hidden;
	}
	return s->gate.enabled && !s->gate.asked && hidden_left;
}

int ee_stream_feed(struct ee_stream *s, const char *p, size_t n)
{
	struct ee_err err;
	const char *payload;
	size_t len;
	int wants_reply = 0;

	s->gate.reply_gate = 0;
	if (s->wire.violation)
		return 0;
	if (ee_ns_feed(&s->wire.dec, p, n, &err) < 0) {
		violate(s, err.msg);
		return 0;
	}
	for (;;) {
		int rc = ee_ns_next(&s->wire.dec, &payload, &len, &err);
		if (rc < 0)
			violate(s, err.msg);
		if (rc <= 0 || s->wire.violation)
			break;
		int asks = on_event(s, payload, len);
		if (asks && wants_reply) /* the harness waits after each question */
			violate(s, "a question before the last answer");
		wants_reply |= asks;
		if (s->wire.violation)
			break;
	}
	if (wants_reply)
		s->gate.reply_last = !more_questions(s);
	return s->wire.violation ? 0 : wants_reply;
}

void ee_stream_finish(struct ee_stream *s)
{
	/* A frame cut off at EOF is not a forgery: the harness was killed while
	 * writing (timeout, kill(-1), OOM). The stream is simply incomplete. */
	(void)s;
}
