/* test_events.c - the supervisor's validation of the event stream: a
 * verdict only from a complete, well-formed stream that matches the job. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "verdict/events.h"
#include "protocol/job.h"
#include "input/task.h"

#define NONCE "0123456789abcdef0123456789abcdef"

static struct ee_task task;
static struct ee_stream s;

/* A task with two public asserts and one hidden io test "1 2" -> "3". */
static void setup_task(void)
{
	const char *json =
	        "{\"task_id\":\"t\",\"tests\":["
	        "{\"kind\":\"assert\",\"code\":\"assert 1\"},"
	        "{\"kind\":\"assert\",\"code\":\"assert 2\"},"
	        "{\"kind\":\"io\",\"stdin\":\"1 2\",\"stdout\":\"3\\n\",\"visibility\":\"hidden\"}]}";
	json_error_t jerr;
	struct ee_err err;
	json_t *o = json_loads(json, 0, &jerr);
	cr_assert_not_null(o);
	cr_assert_eq(ee_task_from_json(o, EE_FORMAT_AUTO, "t.json:1", &task, &err), 0, "%s", err.msg);
	json_decref(o);
	cr_assert_eq(ee_stream_init(&s, &task, NONCE, 1, 0), 0);
}

static void teardown_task(void)
{
	ee_stream_free(&s);
	ee_task_free(&task);
}

TestSuite(events, .init = setup_task, .fini = teardown_task);

static int seq;

/* Feeds one event as a netstring; body is the JSON object's inside. */
static int send_ev(const char *nonce, const char *body)
{
	char payload[1024], frame[1100];
	snprintf(payload, sizeof(payload), "{\"nonce\":\"%s\",\"seq\":%d,%s}", nonce, seq++, body);
	int n = snprintf(frame, sizeof(frame), "%zu:%s,", strlen(payload), payload);
	return ee_stream_feed(&s, frame, (size_t)n);
}

static void good_prefix(void)
{
	seq = 0;
	send_ev(NONCE, "\"ev\":\"hello\"");
	send_ev(NONCE, "\"ev\":\"phase\",\"name\":\"syntax\",\"status\":\"ok\"");
	send_ev(NONCE, "\"ev\":\"phase\",\"name\":\"scan\",\"status\":\"ok\",\"findings\":[]");
	send_ev(NONCE, "\"ev\":\"phase\",\"name\":\"import\",\"status\":\"ok\"");
}

Test(events, a_complete_stream_with_the_gate)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":1,\"status\":\"pass\"");
	cr_assert_eq(send_ev(NONCE, "\"ev\":\"gate\""), 1, "the harness waits for the gate");
	cr_assert_eq(s.gate.answer, 'c');
	send_ev(NONCE, "\"ev\":\"test\",\"index\":2,\"status\":\"returned\",\"stdout\":\"3  "
	               "\\n\\n\",\"exit_code\":0");
	send_ev(NONCE, "\"ev\":\"done\"");
	ee_stream_finish(&s);
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_assert(ee_stream_done(&s));
	for (int i = 0; i < 3; i++)
		cr_expect_eq(s.tests.results[i].state, EE_T_PASS, "test %d", i);
}

Test(events, the_supervisor_judges_io)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":1,\"status\":\"pass\"");
	send_ev(NONCE, "\"ev\":\"gate\"");
	send_ev(NONCE,
	        "\"ev\":\"test\",\"index\":2,\"status\":\"returned\",\"stdout\":\"4\\n\",\"exit_code\":0");
	cr_assert_eq(s.tests.results[2].state, EE_T_FAIL);
	cr_assert_not_null(s.tests.results[2].message);
}

Test(events, a_public_failure_skips_hidden_tests)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"fail\",\"message\":\"AssertionError\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":1,\"status\":\"pass\"");
	cr_assert_eq(send_ev(NONCE, "\"ev\":\"gate\""), 1);
	cr_assert_eq(s.gate.answer, 's');
	send_ev(NONCE, "\"ev\":\"done\"");
	cr_assert_null(s.wire.violation);
	cr_assert_eq(s.tests.results[2].state, EE_T_SKIPPED);
}

static void expect_violation(const char *why)
{
	cr_assert_not_null(s.wire.violation, "expected a violation: %s", why);
	cr_assert_str_eq(s.wire.violation, why);
}

Test(events, wrong_nonce)
{
	seq = 0;
	send_ev("ffffffffffffffffffffffffffffffff", "\"ev\":\"hello\"");
	expect_violation("wrong nonce");
}

Test(events, sequence_gap)
{
	seq = 0;
	send_ev(NONCE, "\"ev\":\"hello\"");
	seq++;
	send_ev(NONCE, "\"ev\":\"phase\",\"name\":\"syntax\",\"status\":\"ok\"");
	expect_violation("sequence gap");
}

Test(events, hello_must_come_first)
{
	seq = 0;
	send_ev(NONCE, "\"ev\":\"phase\",\"name\":\"syntax\",\"status\":\"ok\"");
	expect_violation("hello out of place");
}

Test(events, test_before_import)
{
	seq = 0;
	send_ev(NONCE, "\"ev\":\"hello\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\"");
	expect_violation("test before the import phase");
}

Test(events, tests_out_of_order_or_twice)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":1,\"status\":\"pass\"");
	expect_violation("test out of order or unknown");
}

Test(events, a_test_reported_twice)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\"");
	expect_violation("test out of order or unknown");
}

Test(events, hidden_without_the_gate)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":1,\"status\":\"pass\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":2,\"status\":\"returned\",\"stdout\":\"3\"");
	expect_violation("hidden test without the gate's consent");
}

Test(events, event_after_done)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"done\"");
	send_ev(NONCE, "\"ev\":\"done\"");
	expect_violation("event after done");
}

Test(events, a_forged_pass_after_a_premature_done_cannot_help)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"done\"");
	cr_assert_null(s.wire.violation);
	/* done without tests: nothing passed */
	for (int i = 0; i < 3; i++)
		cr_expect_neq(s.tests.results[i].state, EE_T_PASS);
}

Test(events, not_json)
{
	const char frame[] = "5:hello,";
	ee_stream_feed(&s, frame, sizeof(frame) - 1);
	expect_violation("event is not a JSON object");
}

Test(events, bad_framing)
{
	const char frame[] = "x:{},";
	ee_stream_feed(&s, frame, sizeof(frame) - 1);
	cr_assert_not_null(s.wire.violation);
}

Test(events, a_frame_cut_at_eof_is_incomplete_not_forged)
{
	good_prefix();
	const char part[] = "40:{\"nonce\":";
	ee_stream_feed(&s, part, sizeof(part) - 1);
	ee_stream_finish(&s);
	cr_assert_null(s.wire.violation);
	cr_assert(!ee_stream_done(&s));
}

Test(events, a_bad_status_is_a_violation)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"passed!\"");
	expect_violation("bad test status");
}

Test(events, an_exit_is_never_a_pass)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\",\"exit\":true");
	cr_assert_eq(s.tests.results[0].state, EE_T_NOT_RUN);
	cr_assert(s.tests.results[0].exited);
}

Test(events, a_memory_error_is_noted)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"fail\",\"error_type\":\"MemoryError\"");
	cr_assert(s.memory_error);
	cr_assert_eq(s.tests.results[0].state, EE_T_FAIL);
}

Test(events, an_io_overflow_is_flagged)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":1,\"status\":\"pass\"");
	send_ev(NONCE, "\"ev\":\"gate\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":2,\"status\":\"overflow\"");
	cr_assert_null(s.wire.violation);
	cr_assert_eq(s.tests.results[2].state, EE_T_FAIL);
	cr_assert(s.tests.results[2].overflow);
}

Test(events, a_nul_in_program_output_is_data_not_a_violation)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":1,\"status\":\"pass\"");
	send_ev(NONCE, "\"ev\":\"gate\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":2,\"status\":\"returned\",\"stdout\":\"3\\u0000\\n\","
	               "\"exit_code\":0");
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_assert_eq(s.tests.results[2].state, EE_T_FAIL, "3\\0 is not 3");
}

/* ---- strict programs: a check program judged call by call ------------- */

static struct ee_task ptask;

/* A strict program of three calls (public), then a hidden strict program
 * of one call, behind the gate. */
static void setup_program(void)
{
	const char *json = "{\"task_id\":\"p\",\"tests\":["
	                   "{\"kind\":\"program\",\"code\":\"def check(c):\\n    assert c(1) == 1\\n"
	                   "    assert c(2) == (4, 5)\\n    assert c(3) == 9\\ncheck(f)\\n\"},"
	                   "{\"kind\":\"program\",\"visibility\":\"hidden\","
	                   "\"code\":\"def check(c):\\n    assert c(0) == 0\\ncheck(f)\\n\"}]}";
	json_error_t jerr;
	struct ee_err err;
	json_t *o = json_loads(json, 0, &jerr);
	cr_assert_not_null(o);
	cr_assert_eq(ee_task_from_json(o, EE_FORMAT_AUTO, "p.json:1", &ptask, &err), 0, "%s", err.msg);
	json_decref(o);
	cr_assert_eq(ee_task_strict_asserts(&ptask, &err), 2);
	cr_assert(ptask.tests[0].strict && ptask.tests[0].calls);
	cr_assert_eq(ee_stream_init(&s, &ptask, NONCE, 1, 0), 0);
}

static void teardown_program(void)
{
	ee_stream_free(&s);
	ee_task_free(&ptask);
}

#define CALL(i, k, v) "\"ev\":\"test\",\"index\":" #i ",\"call\":" #k ",\"status\":\"returned\",\"value\":" v

Test(events_program, every_call_matches, .init = setup_program, .fini = teardown_program)
{
	good_prefix();
	cr_assert_eq(send_ev(NONCE, CALL(0, 0, "{\"float\":\"1.0\"}")), 1, "asks after a match");
	cr_expect_eq(s.gate.reply, 'c');
	cr_expect_eq(s.gate.reply_last, 0);
	cr_assert_eq(send_ev(NONCE, CALL(0, 1, "{\"tuple\":[{\"int\":\"4\"},{\"int\":\"5\"}]}")), 1);
	cr_assert_eq(send_ev(NONCE, CALL(0, 2, "{\"int\":\"9\"}")), 0, "no question after the last call");
	cr_expect_eq(s.tests.results[0].state, EE_T_PASS);
	cr_assert_eq(send_ev(NONCE, "\"ev\":\"gate\""), 1);
	cr_expect_eq(s.gate.reply, 'c');
	cr_expect_eq(s.gate.reply_last, 1, "the hidden strict program has one call: it asks nothing");
	cr_assert_eq(send_ev(NONCE, CALL(1, 0, "{\"int\":\"0\"}")), 0);
	send_ev(NONCE, "\"ev\":\"done\"");
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_expect_eq(s.tests.results[1].state, EE_T_PASS);
	cr_expect_eq(s.tests.results[0].duration_ms, -1);
}

Test(events_program, a_mismatch_stops_the_test, .init = setup_program, .fini = teardown_program)
{
	good_prefix();
	send_ev(NONCE, CALL(0, 0, "{\"int\":\"1\"}"));
	cr_assert_eq(send_ev(NONCE, CALL(0, 1, "{\"list\":[{\"int\":\"4\"},{\"int\":\"5\"}]}")), 1);
	cr_expect_eq(s.gate.reply, 's');
	cr_expect_eq(s.gate.reply_last, 0, "the gate is still to come");
	cr_expect_eq(s.tests.results[0].state, EE_T_FAIL);
	cr_expect_str_eq(s.tests.results[0].message, "assert 2 of 3: expected (4, 5), got [4, 5]");
	/* the third call must not come: the test is over */
	send_ev(NONCE, CALL(0, 2, "{\"int\":\"9\"}"));
	cr_expect_str_eq(s.wire.violation, "test out of order or unknown");
}

Test(events_program, an_exception_ends_the_test_at_that_call, .init = setup_program, .fini = teardown_program)
{
	good_prefix();
	send_ev(NONCE, CALL(0, 0, "{\"int\":\"1\"}"));
	cr_assert_eq(send_ev(NONCE,
	                     "\"ev\":\"test\",\"index\":0,\"call\":1,\"status\":\"raised\","
	                     "\"error_type\":\"ZeroDivisionError\",\"message\":\"ZeroDivisionError: x\""),
	             0, "an exception asks nothing");
	cr_expect_str_eq(s.tests.results[0].message, "assert 2 of 3: ZeroDivisionError: x");
	cr_assert_eq(send_ev(NONCE, "\"ev\":\"gate\""), 1);
	cr_expect_eq(s.gate.reply, 's');
	cr_expect_eq(s.gate.reply_last, 1, "skipping the hidden tests: nothing more to ask");
	send_ev(NONCE, "\"ev\":\"done\"");
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_expect_eq(s.tests.results[1].state, EE_T_SKIPPED);
}

Test(events_program, a_call_out_of_order_fails_the_test, .init = setup_program, .fini = teardown_program)
{
	good_prefix();
	cr_expect_eq(send_ev(NONCE, CALL(0, 1, "{\"int\":\"1\"}")), 0);
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_expect_eq(s.tests.results[0].state, EE_T_FAIL);
	cr_expect_str_eq(s.tests.results[0].message, "assert 1 of 3: the call raised");
	send_ev(NONCE, CALL(0, 1, "{\"tuple\":[{\"int\":\"4\"},{\"int\":\"5\"}]}"));
	cr_expect_str_eq(s.wire.violation, "test out of order or unknown", "the test is over");
}

Test(events_program, done_in_the_middle_is_a_violation, .init = setup_program, .fini = teardown_program)
{
	good_prefix();
	send_ev(NONCE, CALL(0, 0, "{\"int\":\"1\"}"));
	send_ev(NONCE, "\"ev\":\"done\"");
	cr_expect_str_eq(s.wire.violation, "done in the middle of a test");
}

Test(events_program, a_forged_pass_without_a_call_fails, .init = setup_program, .fini = teardown_program)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\",\"message\":\"fine\"");
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_expect_str_eq(s.tests.results[0].message, "assert 1 of 3: the call raised");
}

Test(events_program, two_questions_in_one_read_are_a_violation, .init = setup_program,
     .fini = teardown_program)
{
	char payload[2][256], frames[600];
	int n = 0;

	good_prefix();
	for (int k = 0; k < 2; k++) {
		snprintf(payload[k], sizeof(payload[k]), "{\"nonce\":\"%s\",\"seq\":%d,%s}", NONCE, seq++,
		         k ? CALL(0, 1, "{\"tuple\":[{\"int\":\"4\"},{\"int\":\"5\"}]}")
		           : CALL(0, 0, "{\"int\":\"1\"}"));
		n += snprintf(frames + n, sizeof(frames) - (size_t)n, "%zu:%s,", strlen(payload[k]),
		              payload[k]);
	}
	cr_expect_eq(ee_stream_feed(&s, frames, (size_t)n), 0);
	cr_expect_str_eq(s.wire.violation, "a question before the last answer");
}

/* ---- the gate without an oracle (--run-hidden; serve's default) -------- */

Test(events, run_hidden_opens_the_gate_after_a_public_failure)
{
	ee_stream_free(&s);
	cr_assert_eq(ee_stream_init(&s, &task, NONCE, 1, 1), 0);
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"fail\",\"message\":\"AssertionError\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":1,\"status\":\"pass\"");
	cr_assert_eq(send_ev(NONCE, "\"ev\":\"gate\""), 1);
	cr_expect_eq(s.gate.reply, 'c', "the answer does not depend on the public verdict");
	cr_expect_eq(s.gate.reply_gate, 1, "the hidden tests go with it");
	cr_expect_eq(s.gate.reply_last, 1);
	send_ev(NONCE,
	        "\"ev\":\"test\",\"index\":2,\"status\":\"returned\",\"stdout\":\"3\\n\",\"exit_code\":0");
	send_ev(NONCE, "\"ev\":\"done\"");
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_expect_eq(s.tests.results[2].state, EE_T_PASS);
}

Test(events, a_gated_skip_sends_no_hidden_tests)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"fail\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":1,\"status\":\"pass\"");
	cr_assert_eq(send_ev(NONCE, "\"ev\":\"gate\""), 1);
	cr_expect_eq(s.gate.reply, 's');
	cr_expect_eq(s.gate.reply_gate, 1);
	/* the next read carries no answer of the gate's */
	send_ev(NONCE, "\"ev\":\"done\"");
	cr_expect_eq(s.gate.reply_gate, 0);
}

Test(events_program, without_the_oracle_a_mismatch_still_answers_c, .init = setup_program,
     .fini = teardown_program)
{
	ee_stream_free(&s);
	cr_assert_eq(ee_stream_init(&s, &ptask, NONCE, 1, 1), 0);
	good_prefix();
	cr_assert_eq(send_ev(NONCE, CALL(0, 0, "{\"int\":\"7\"}")), 1, "the harness waits");
	cr_expect_eq(s.gate.reply, 'c', "a mismatch answers as a match does");
	cr_expect_eq(s.gate.reply_gate, 0, "a call's answer brings no hidden tests");
	cr_expect_eq(s.tests.results[0].state, EE_T_FAIL);
	cr_assert_eq(send_ev(NONCE, CALL(0, 1, "{\"tuple\":[{\"int\":\"4\"},{\"int\":\"5\"}]}")), 1);
	cr_expect_eq(s.gate.reply, 'c');
	cr_assert_eq(send_ev(NONCE, CALL(0, 2, "{\"int\":\"9\"}")), 0, "no question after the last call");
	cr_expect_eq(s.tests.results[0].state, EE_T_FAIL, "later matches do not undo the first mismatch");
	cr_expect_str_eq(s.tests.results[0].message, "assert 1 of 3: expected 1, got 7");
	cr_assert_eq(send_ev(NONCE, "\"ev\":\"gate\""), 1);
	cr_expect_eq(s.gate.reply, 'c');
	cr_expect_eq(s.gate.reply_gate, 1);
	cr_assert_eq(send_ev(NONCE, CALL(1, 0, "{\"int\":\"0\"}")), 0);
	send_ev(NONCE, "\"ev\":\"done\"");
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_expect_eq(s.tests.results[1].state, EE_T_PASS);
}

/* ---- the job and the gate's payload (job.h) ---------------------------- */

Test(events, the_job_holds_no_hidden_test_and_the_gate_brings_them)
{
	struct ee_job_spec spec = { .task = &task, .program = "x = 1\n", .nonce = NONCE, .gate = 1 };
	size_t len = 0;
	char *job = ee_job_build(&spec, &len);
	cr_assert_not_null(job);
	cr_expect_null(strstr(job, "1 2"), "a hidden io test's stdin is in the job: %s", job);
	cr_expect(strstr(job, "\"hidden_kinds\":[\"io\"]"), "%s", job);
	cr_expect(strstr(job, "\"code\":\"assert 2\""), "%s", job);
	free(job);
	char *gate = ee_job_hidden(&task, 0, NULL, &len);
	cr_assert_not_null(gate);
	const char *want = "c71:{\"tests\":[{\"index\":2,\"kind\":\"io\",\"visibility\":\"hidden\","
	                   "\"stdin\":\"1 2\"}]},";
	cr_expect_eq(len, strlen(want));
	cr_expect(len == strlen(want) && memcmp(gate, want, len) == 0, "%.*s", (int)len, gate);
	cr_expect_null(strstr(gate, "3\\n"), "an expected value went to the sandbox");
	free(gate);
}

/* --judge separate's inline runs of a mixed task: the judge's tests are
 * not in the job, their verdicts count at the gate (docs/protocol.md,
 * "Mixed tasks"). */
Test(events, a_left_out_public_failure_closes_the_gate)
{
	ee_stream_leave_out(&s, 0, EE_T_PASS);
	ee_stream_leave_out(&s, 1, EE_T_FAIL);
	good_prefix();
	cr_assert_eq(send_ev(NONCE, "\"ev\":\"gate\""), 1, "no public test is due: the gate comes first");
	cr_assert_eq(s.gate.answer, 's', "the judge's failed public test counts");
	send_ev(NONCE, "\"ev\":\"done\"");
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_expect_eq(s.tests.results[1].state, EE_T_FAIL);
	cr_expect_str_eq(s.tests.results[1].judged_by, "judge");
	cr_expect_eq(s.tests.results[2].state, EE_T_SKIPPED);
	cr_expect_eq(s.tests.order[0], 0, "the record's order keeps every test");
}

Test(events, left_out_passes_open_the_gate)
{
	ee_stream_leave_out(&s, 0, EE_T_PASS);
	ee_stream_leave_out(&s, 1, EE_T_PASS);
	good_prefix();
	cr_assert_eq(send_ev(NONCE, "\"ev\":\"gate\""), 1);
	cr_assert_eq(s.gate.answer, 'c');
	send_ev(NONCE, "\"ev\":\"test\",\"index\":2,\"status\":\"returned\",\"stdout\":\"3\\n\","
	               "\"exit_code\":0");
	send_ev(NONCE, "\"ev\":\"done\"");
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_expect_eq(s.tests.results[2].state, EE_T_PASS);
}

Test(events, a_left_out_test_is_never_accepted)
{
	ee_stream_leave_out(&s, 0, EE_T_FAIL);
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\"");
	expect_violation("test out of order or unknown");
	cr_expect_eq(s.tests.results[0].state, EE_T_FAIL, "the judge's verdict stands");
}

Test(events, with_every_hidden_test_left_out_no_gate_is_due)
{
	ee_stream_leave_out(&s, 2, EE_T_PASS);
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":1,\"status\":\"pass\"");
	send_ev(NONCE, "\"ev\":\"gate\"");
	expect_violation("unexpected gate");
}

Test(events, with_every_hidden_test_left_out_done_ends_the_run)
{
	ee_stream_leave_out(&s, 2, EE_T_NOT_RUN);
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"fail\",\"message\":\"AssertionError\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":1,\"status\":\"pass\"");
	send_ev(NONCE, "\"ev\":\"done\"");
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_assert(ee_stream_done(&s));
	cr_expect_eq(s.tests.results[2].state, EE_T_NOT_RUN, "left to the caller");
}

/* The job of such a run: the supervisor's tests only, public and hidden. */
Test(events, a_supervisors_only_job_holds_no_test_code)
{
	const char *json = "{\"task_id\":\"m\",\"tests\":["
	                   "{\"kind\":\"assert\",\"code\":\"assert f(1) == 11\"},"
	                   "{\"kind\":\"io\",\"stdin\":\"in-public\",\"stdout\":\"x\\n\"},"
	                   "{\"kind\":\"assert\",\"code\":\"assert f(2) == 22\",\"visibility\":\"hidden\"},"
	                   "{\"kind\":\"unittest\",\"code\":\"import unittest\",\"visibility\":\"hidden\"},"
	                   "{\"kind\":\"call\",\"fn\":\"f\",\"args\":[3],\"expected\":33,"
	                   "\"visibility\":\"hidden\"}]}";
	struct ee_task m;
	struct ee_err err;
	json_error_t jerr;
	json_t *o = json_loads(json, 0, &jerr);
	cr_assert_not_null(o);
	cr_assert_eq(ee_task_from_json(o, EE_FORMAT_AUTO, "m.json:1", &m, &err), 0, "%s", err.msg);
	json_decref(o);
	struct ee_job_spec spec = {
		.task = &m, .program = "x = 1\n", .nonce = NONCE, .gate = 1, .supervisors_only = 1
	};
	size_t len = 0;
	char *job = ee_job_build(&spec, &len);
	cr_assert_not_null(job);
	cr_expect_null(strstr(job, "assert"), "the judge's test code is in the job: %s", job);
	cr_expect(strstr(job, "\"stdin\":\"in-public\""), "%s", job);
	cr_expect(strstr(job, "\"hidden_kinds\":[\"call\"]"), "%s", job);
	cr_expect(strstr(job, "\"import_phase\":true"), "%s", job);
	free(job);
	char *gate = ee_job_hidden_of(&m, 1, 0, NULL, &len);
	cr_assert_not_null(gate);
	cr_expect_null(strstr(gate, "assert"), "%.*s", (int)len, gate);
	cr_expect_null(strstr(gate, "unittest"), "%.*s", (int)len, gate);
	cr_expect(strstr(gate, "\"index\":4,\"kind\":\"call\""), "%.*s", (int)len, gate);
	free(gate);
	gate = ee_job_hidden(&m, 0, NULL, &len); /* every hidden test: an inline job's */
	cr_assert_not_null(gate);
	cr_expect(strstr(gate, "assert f(2) == 22"), "%.*s", (int)len, gate);
	free(gate);
	spec.supervisors_only = 0;
	job = ee_job_build(&spec, &len);
	cr_assert_not_null(job);
	cr_expect(strstr(job, "assert f(1) == 11"), "%s", job);
	cr_expect_null(strstr(job, "import_phase"), "%s", job);
	free(job);
	ee_task_free(&m);
}

/* /run_code requests sharing a sandbox: their stdins come on the gate at
 * each one's turn, so the job has their lengths only. */
Test(events, apart_scripts_stdins_stay_out_of_the_job)
{
	const char *json = "{\"task_id\":\"r\",\"tests\":["
	                   "{\"kind\":\"io\",\"stdin\":\"qqq\",\"stdout\":\"\"},"
	                   "{\"kind\":\"io\",\"stdin\":\"d\\u00e9\",\"stdout\":\"\"},"
	                   "{\"kind\":\"io\",\"stdin\":\"zz\",\"stdout\":\"\"}]}";
	struct ee_task r;
	struct ee_err err;
	json_error_t jerr;
	json_t *o = json_loads(json, 0, &jerr);
	cr_assert_not_null(o);
	cr_assert_eq(ee_task_from_json(o, EE_FORMAT_AUTO, "r.json:1", &r, &err), 0, "%s", err.msg);
	json_decref(o);
	json_t *apart = json_pack("{s:b}", "apart", 1);
	r.tests[0].script = json_incref(apart);
	r.tests[1].script = json_incref(apart);
	r.tests[2].script = json_pack("{s:b}", "apart", 0);
	json_decref(apart);

	struct ee_job_spec spec = { .task = &r, .program = "print(input())\n", .nonce = NONCE };
	size_t len = 0;
	char *job = ee_job_build(&spec, &len);
	cr_assert_not_null(job);
	cr_expect_null(strstr(job, "qqq"), "an apart stdin is in the job: %s", job);
	cr_expect(strstr(job, "\"stdin_len\":3"), "%s", job);
	cr_expect(strstr(job, "\"stdin_len\":3,") || strstr(job, "\"stdin_len\":3}"), "%s", job);
	cr_expect(strstr(job, "\"stdin\":\"zz\""), "not apart: its stdin is in the job: %s", job);
	free(job);
	char *stdins = NULL;
	cr_assert_eq(ee_job_apart_stdins(&r, &stdins, &len), 0);
	cr_assert_not_null(stdins);
	cr_expect_eq(len, 6); /* "qqq", then "d\xc3\xa9" in UTF-8 */
	cr_expect(len == 6 && memcmp(stdins, "qqqd\xc3\xa9", 6) == 0, "%.*s", (int)len, stdins);
	free(stdins);
	ee_task_free(&r);
	/* Every other task: nothing for the gate, nothing allocated. */
	stdins = (char *)"untouched";
	cr_expect_eq(ee_job_apart_stdins(&task, &stdins, &len), 0);
	cr_expect_null(stdins);
	cr_expect_eq(len, 0);
}

/* A strict assert whose literal a sibling's code holds, and one whose
 * literal no code holds; whitespace and quotes do not hide it. */
Test(events, a_strict_literal_in_a_sibling_is_visible)
{
	const char *json = "{\"task_id\":\"v\",\"tests\":["
	                   "{\"kind\":\"assert\",\"code\":\"assert f(1) == [2, 'a b']\"},"
	                   "{\"kind\":\"assert\",\"code\":\"assert f(2) == 77\"},"
	                   "{\"kind\":\"assert\",\"code\":\"assert f(3) == 'zz'\",\"visibility\":\"hidden\"},"
	                   "{\"kind\":\"unittest\",\"visibility\":\"hidden\",\"code\":"
	                   "\"T = {1: [2,\\\"ab\\\"], 3: \\\"zz\\\"}\"}]}";
	struct ee_task v;
	json_error_t jerr;
	struct ee_err err;
	json_t *o = json_loads(json, 0, &jerr);
	cr_assert_not_null(o, "%s", jerr.text);
	cr_assert_eq(ee_task_from_json(o, EE_FORMAT_AUTO, "v.json:1", &v, &err), 0, "%s", err.msg);
	json_decref(o);
	cr_assert_eq(ee_task_strict_asserts(&v, &err), 3);
	cr_expect_eq(ee_job_expected_visible(&v, 0), 0, "public: the hidden unittest comes after it ran");
	cr_expect_eq(ee_job_expected_visible(&v, 1), 0);
	cr_expect_eq(ee_job_expected_visible(&v, 2), 1, "hidden: the hidden unittest holds \"zz\"");
	cr_expect_eq(ee_job_expected_visible(&v, 3), 0, "not a strict test");
	ee_task_free(&v);
}

/* The phase cursor: each phase only as the expected next one; lint only
 * when the job asked for it, and then before import; a failed phase (but
 * lint) admits no later phase and no test. */
Test(events, phases_are_accepted_only_in_order)
{
	static const struct {
		int lint;
		const char *phases[4]; /* "name:status" */
		const char *violation; /* NULL: accepted, and a test may follow */
	} cases[] = {
		{ 0, { "syntax:ok", "scan:ok", "import:ok" }, NULL },
		{ 0, { "syntax:ok", "scan:skipped", "import:skipped" }, NULL },
		{ 0, { "scan:ok" }, "phase out of order" },
		{ 0, { "syntax:ok", "import:ok" }, "phase out of order" },
		{ 0, { "syntax:ok", "scan:ok", "lint:ok" }, "phase out of order" },
		{ 0, { "syntax:ok", "syntax:ok" }, "phase out of order" },
		{ 0, { "syntax:fail", "scan:ok" }, "phase out of order" },
		{ 0, { "syntax:skipped" }, "bad phase status" },
		{ 0, { "syntax:ok", "scan:fail", "import:ok" }, "phase out of order" },
		{ 0, { "syntax:ok", "scan:ok", "import:fail" }, "test before the import phase" },
		{ 1, { "syntax:ok", "scan:ok", "lint:fail", "import:ok" }, NULL },
		{ 1, { "syntax:ok", "scan:skipped", "lint:ok", "import:ok" }, NULL },
		{ 1, { "syntax:ok", "scan:ok", "import:ok" }, "phase out of order" },
		{ 1, { "syntax:ok", "scan:ok", "import:ok", "lint:ok" }, "phase out of order" },
	};
	char body[200];

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		ee_stream_free(&s);
		cr_assert_eq(ee_stream_init(&s, &task, NONCE, 1, 0), 0);
		s.phases.lint_asked = cases[c].lint;
		seq = 0;
		send_ev(NONCE, "\"ev\":\"hello\"");
		for (int k = 0; k < 4 && cases[c].phases[k]; k++) {
			const char *p = cases[c].phases[k], *colon = strchr(p, ':');
			snprintf(body, sizeof(body), "\"ev\":\"phase\",\"name\":\"%.*s\",\"status\":\"%s\"",
			         (int)(colon - p), p, colon + 1);
			send_ev(NONCE, body);
		}
		send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\"");
		if (cases[c].violation)
			cr_expect_str_eq(s.wire.violation ? s.wire.violation : "(none)", cases[c].violation,
			                 "case %zu", c);
		else
			cr_expect_null(s.wire.violation, "case %zu: %s", c, s.wire.violation);
	}
}

Test(events, each_test_carries_its_judging_mode)
{
	cr_expect_eq(s.tests.results[0].judging, EE_JUDGE_SANDBOX);
	cr_expect_eq(s.tests.results[2].judging, EE_JUDGE_IO);
}

/* --judge separate: each side's stream takes its own relayed events only. */
static int relayed;
static char last_kind[16];

static void count_relayed(void *ctx, const char *kind, const json_t *ev)
{
	(void)ctx, (void)ev;
	snprintf(last_kind, sizeof(last_kind), "%s", kind);
	relayed++;
}

/* A streamed value's part is relayed as whose it is: the judge's before a
 * call, the candidate's (once it serves) before a reply. */
Test(events, parts_are_relayed_as_whose_they_are)
{
	relayed = 0;
	s.relay = (struct ee_stream_relay){ .role = EE_STREAM_JUDGE, .cb = count_relayed };
	seq = 0;
	send_ev(NONCE, "\"ev\":\"hello\"");
	send_ev(NONCE, "\"ev\":\"part\",\"data\":\"N\"");
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_expect_eq(relayed, 1);
	cr_expect_str_eq(last_kind, "call_part");
}

Test(events, the_candidates_part_before_serving_is_a_violation)
{
	s.relay = (struct ee_stream_relay){ .role = EE_STREAM_SERVE, .cb = count_relayed };
	good_prefix();
	send_ev(NONCE, "\"ev\":\"part\",\"data\":\"N\"");
	cr_assert_str_eq(s.wire.violation, "serving out of place");
}

Test(events, the_serve_stream_relays_serving_and_replies_never_a_test)
{
	relayed = 0;
	s.relay = (struct ee_stream_relay){ .role = EE_STREAM_SERVE, .cb = count_relayed };
	good_prefix();
	send_ev(NONCE, "\"ev\":\"serving\",\"names\":[\"add\"]");
	send_ev(NONCE, "\"ev\":\"reply\",\"call\":0,\"status\":\"returned\",\"value\":3");
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_assert_eq(relayed, 2);
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\"");
	cr_assert_str_eq(s.wire.violation, "test event from the candidate's call server");
}

Test(events, the_serve_stream_refuses_a_reply_before_serving)
{
	s.relay = (struct ee_stream_relay){ .role = EE_STREAM_SERVE, .cb = count_relayed };
	good_prefix();
	send_ev(NONCE, "\"ev\":\"reply\",\"call\":0,\"status\":\"returned\",\"value\":3");
	cr_assert_str_eq(s.wire.violation, "serving out of place");
}

Test(events, the_judge_stream_has_no_phases)
{
	relayed = 0;
	s.relay = (struct ee_stream_relay){ .role = EE_STREAM_JUDGE, .cb = count_relayed };
	seq = 0;
	send_ev(NONCE, "\"ev\":\"hello\"");
	send_ev(NONCE, "\"ev\":\"call\",\"call\":0,\"fn\":\"add\",\"args\":[1,2],\"kwargs\":[]");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"pass\"");
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_assert_eq(relayed, 1);
	cr_assert_eq(s.tests.results[0].state, EE_T_PASS);
	send_ev(NONCE, "\"ev\":\"phase\",\"name\":\"syntax\",\"status\":\"ok\"");
	cr_assert_str_eq(s.wire.violation, "phase event from the judge");
}

/* No test is ever judged again in the candidate's interpreter: a judge
 * that says "fallback" broke the protocol (it did, before issue 33). */
Test(events, a_fallback_from_the_judge_is_a_violation)
{
	s.relay = (struct ee_stream_relay){ .role = EE_STREAM_JUDGE, .cb = count_relayed };
	seq = 0;
	send_ev(NONCE, "\"ev\":\"hello\"");
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"fallback\",\"message\":\"m\"");
	cr_assert_str_eq(s.wire.violation, "bad test status");
	cr_assert_neq(s.tests.results[0].state, EE_T_PASS);
}

Test(events, only_the_judge_stream_says_a_test_failed_as_the_candidate_ended)
{
	static const char ended[] = "\"ev\":\"test\",\"index\":%d,\"status\":\"fail\","
	                            "\"error_type\":\"ChannelError\",\"channel_ended\":%s,\"message\":\"m\"";
	char ev[256];
	s.relay = (struct ee_stream_relay){ .role = EE_STREAM_JUDGE, .cb = count_relayed };
	seq = 0;
	send_ev(NONCE, "\"ev\":\"hello\"");
	snprintf(ev, sizeof(ev), ended, 0, "true");
	send_ev(NONCE, ev);
	snprintf(ev, sizeof(ev), ended, 1, "false");
	send_ev(NONCE, ev);
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_assert(s.tests.results[0].channel_ended);
	cr_assert_not(s.tests.results[1].channel_ended);
	cr_assert_eq(s.tests.results[1].state, EE_T_FAIL);
}

Test(events, an_inline_stream_never_says_a_test_failed_as_the_candidate_ended)
{
	good_prefix();
	send_ev(NONCE,
	        "\"ev\":\"test\",\"index\":0,\"status\":\"fail\",\"channel_ended\":true,\"message\":\"m\"");
	cr_assert_null(s.wire.violation, "%s", s.wire.violation);
	cr_assert_eq(s.tests.results[0].state, EE_T_FAIL);
	cr_assert_not(s.tests.results[0].channel_ended);
}

Test(events, an_inline_stream_takes_no_relayed_event)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"serving\",\"names\":[\"add\"]");
	cr_assert_str_eq(s.wire.violation, "unexpected relay event");
}

Test(events, an_inline_stream_refuses_fallback)
{
	good_prefix();
	send_ev(NONCE, "\"ev\":\"test\",\"index\":0,\"status\":\"fallback\"");
	cr_assert_str_eq(s.wire.violation, "bad test status");
}
