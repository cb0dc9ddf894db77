/* test_get_reward.c - OpenRLHF's /get_reward body and answer (get_reward.h):
 * the response taken out of the query, labels shared within a group, and
 * an infrastructure error masked as 0.0 with its truth in extra_logs (a
 * sandbox that cannot be set up is not reachable from the e2e tests). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "serve/get_reward.h"

static const struct ee_request_rules rules = {
	.max_runs = 64,
	.extract = EE_EXTRACT_AUTO,
	.max_tests = 100,
	.max_request_tests = 1000,
	.max_values = 100000,
};

static int parse(const char *body, struct ee_request *r, int *records, struct ee_err *err)
{
	return ee_get_reward_parse(body, strlen(body), &rules, r, records, err);
}

#define LABEL "{\"tests\": [{\"kind\": \"io\", \"stdin\": \"\", \"stdout\": \"1\\n\"}]}"

Test(get_reward, response_is_the_query_after_its_prompt)
{
	const char *body = "{\"query\": [\"PROMPT\\nprint(1)\\n<|im_end|>\", \"xx PROMPT\\nprint(2)</s>\\n\","
	                   " \"print(3)\"], \"prompts\": [\"PROMPT\\n\", \"PROMPT\\n\", \"PROMPT\\n\"],"
	                   " \"labels\": [" LABEL ", " LABEL ", " LABEL "]}";
	struct ee_request r = { 0 };
	struct ee_err err = { 0 };
	int records = -1;

	cr_assert_eq(parse(body, &r, &records, &err), 0, "%s", err.msg);
	cr_assert_eq(r.n_runs, 3);
	cr_assert_eq(records, 0);
	cr_assert_str_eq(r.runs[0].program, "print(1)");
	cr_assert_str_eq(r.runs[1].program, "print(2)"); /* up to the prompt's first occurrence */
	cr_assert_str_eq(r.runs[2].program, "print(3)"); /* no prompt in it: the whole query */
	cr_assert_str_eq(r.runs[0].task.task_id, "labels[0]");
	/* the same label as the sample before: its task, parsed once */
	cr_assert(r.runs[1].shared_task && r.runs[2].shared_task && !r.runs[0].shared_task);
	cr_assert_eq(r.runs[2].task.tests, r.runs[0].task.tests);
	cr_assert_eq(r.runs[2].sample, 2);
	cr_assert_eq(r.tests, 3);
	ee_request_free(&r);
}

/* Every end token the table names comes off, DeepSeek's (full-width bars,
 * U+2581 for spaces) included, and several in a row. */
Test(get_reward, end_of_sequence_tokens_come_off_the_response)
{
	static const char *const ends[] = { "<|im_end|>",
		                            "<|endoftext|>",
		                            "</s>",
		                            "<|eot_id|>",
		                            "<|end|>",
		                            "<\uff5cend\u2581of\u2581sentence\uff5c>",
		                            "<|eot_id|>\\n<|endoftext|>" };

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		char body[512];
		struct ee_request r = { 0 };
		struct ee_err err = { 0 };
		int records;

		snprintf(body, sizeof(body), "{\"query\": [\"print(1)%s\"], \"labels\": [" LABEL "]}",
		         ends[i]);
		cr_assert_eq(parse(body, &r, &records, &err), 0, "%s", err.msg);
		cr_assert_str_eq(r.runs[0].program, "print(1)", "%s", ends[i]);
		ee_request_free(&r);
	}
}

Test(get_reward, a_label_may_be_the_text_of_a_task)
{
	const char *body =
	        "{\"query\": [\"print(1)\"], \"labels\": [\"{\\\"task_id\\\": \\\"t\\\", \\\"test_list\\\":"
	        " [\\\"assert 1 == 1\\\"]}\"], \"records\": true}";
	struct ee_request r = { 0 };
	struct ee_err err = { 0 };
	int records = 0;

	cr_assert_eq(parse(body, &r, &records, &err), 0, "%s", err.msg);
	cr_assert_str_eq(r.runs[0].task.task_id, "t");
	cr_assert_eq(records, 1);
	ee_request_free(&r);
}

static void refused(const char *body, int rc, const char *field)
{
	struct ee_request r = { 0 };
	struct ee_err err = { 0 };
	int records;

	cr_assert_eq(parse(body, &r, &records, &err), rc, "%s: %s", body, err.msg);
	cr_assert_str_eq(err.field, field, "%s: %s", body, err.msg);
	cr_assert_null(r.runs);
}

Test(get_reward, refusals_name_the_field)
{
	refused("{\"labels\": []}", -1, "query");
	refused("{\"query\": [\"x\"], \"labels\": []}", -1, "labels");
	refused("{\"query\": [\"x\"], \"prompts\": [\"a\", \"b\"], \"labels\": [" LABEL "]}", -1, "prompts");
	refused("{\"query\": [\"x\"], \"labels\": [7]}", -1, "labels[0]");
	refused("{\"query\": [\"x\"], \"labels\": [\"not json\"]}", -1, "labels[0]");
	refused("{\"query\": [1], \"labels\": [" LABEL "]}", -1, "query[0]");
	refused("{\"query\": [\"x\"], \"labels\": [{\"tests\": [{\"kind\": \"nope\"}]}]}", -1,
	        "labels[0].tests[0].kind");
	refused("{\"query\": [\"x\"], \"labels\": [" LABEL "], \"records\": 1}", -1, "records");
}

/* What APPS's input_output, an OpenRLHF data set's input_output column and
 * verl's ground_truth hold, as an object or its text: read as APPS's. */
Test(get_reward, a_label_may_be_a_bare_ground_truth)
{
	const char *body = "{\"query\": [\"print(1)\", \"def f(x): return x\"], \"labels\": ["
	                   "{\"inputs\": [\"1\\n\", \"2\\n\"], \"outputs\": [\"1\\n\", \"2\\n\"]},"
	                   " \"{\\\"fn_name\\\": \\\"f\\\", \\\"inputs\\\": [[1]], \\\"outputs\\\": [1]}\"]}";
	struct ee_request r = { 0 };
	struct ee_err err = { 0 };
	int records;

	cr_assert_eq(parse(body, &r, &records, &err), 0, "%s", err.msg);
	cr_assert_eq(r.runs[0].task.n_tests, 2);
	cr_assert_eq(r.runs[0].task.tests[0].kind, EE_TEST_IO);
	cr_assert_str_eq(r.runs[0].task.task_id, "labels[0]");
	cr_assert_eq(r.runs[1].task.n_tests, 1);
	cr_assert_eq(r.runs[1].task.tests[0].kind, EE_TEST_CALL);
	ee_request_free(&r);
	/* Another key, and no task format of its own: refused by name. */
	refused("{\"query\": [\"x\"], \"labels\": [{\"inputs\": [], \"outputs\": [], \"x\": 1}]}", -1,
	        "labels[0].x");
}

Test(get_reward, over_the_queue_is_413)
{
	char body[8192] = "{\"query\": [";
	for (int i = 0; i < 65; i++)
		strcat(body, i ? ", \"x\"" : "\"x\"");
	strcat(body, "], \"labels\": []}");
	refused(body, -2, "query");
}

Test(get_reward, an_infra_error_is_masked_and_flagged)
{
	char *texts[] = {
		strdup("{\"status\": \"pass\", \"reward\": 1, \"score\": 1.0, \"passed\": 2, \"total\": 2, "
		       "\"tests\": [{\"judged_by\": \"judge\"}, {\"judged_by\": \"supervisor\"}]}"),
		strdup("{\"task_id\": \"t\", \"sandbox_error\": \"no\", \"reward\": null, \"infra_error\": "
		       "true}"),
		strdup("{\"status\": \"timeout\", \"reward\": -1, \"score\": 0.0, \"passed\": 0, \"total\": "
		       "2, \"tests\": [{\"judged_by\": \"sandbox\"}, {}]}")
	};
	size_t lens[3];
	size_t len;

	for (int i = 0; i < 3; i++)
		lens[i] = strlen(texts[i]);
	char *text = ee_get_reward_answer(texts, lens, 3, 0, &len);
	cr_assert_not_null(text);
	json_t *a = json_loads(text, 0, NULL);
	json_t *want = json_loads(
	        "{\"rewards\": [1.0, 0.0, -1.0], \"scores\": [1.0, 0.0, 0.0], \"extra_logs\": "
	        "{\"pass\": [1, 0, 0], \"assertion_fail\": [0, 0, 0], \"syntax_error\": [0, 0, 0], "
	        "\"timeout\": [0, 0, 1], \"error\": [0, 0, 0], \"infra_error\": [0, 1, 0], "
	        "\"passed\": [2, 0, 0], \"total\": [2, 0, 2], \"judged_by_supervisor\": [1, 0, 0], "
	        "\"judged_by_judge\": [1, 0, 0], \"judged_by_sandbox\": [0, 0, 1]}}",
	        0, NULL);
	cr_assert(json_equal(a, want), "%s", text);
	cr_assert(json_is_real(json_array_get(json_object_get(a, "rewards"), 0)), "rewards are floats");
	json_decref(a);
	json_decref(want);
	free(text);
	text = ee_get_reward_answer(texts, lens, 3, 1, &len);
	a = json_loads(text, 0, NULL);
	cr_assert_eq(json_array_size(json_object_get(a, "records")), 3, "%s", text);
	json_decref(a);
	free(text);
	for (int i = 0; i < 3; i++)
		free(texts[i]);
}
