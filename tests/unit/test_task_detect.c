/* test_task_detect.c - which format a row is in (task_detect.c): each RL
 * data set by its own fields, JSON strings of objects looked into, and the
 * order that settles a row carrying the fields of two. Fixtures are written
 * with ' for " (fix()). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "input/task.h"
#include "fixture_json.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
	const char *json;
	int want;
} cases[] = {
	/* each format by its fields */
	{ "{'input_output': '{}'}", EE_FORMAT_APPS },
	{ "{'input_output': {'inputs': [], 'outputs': []}}", EE_FORMAT_APPS },
	{ "{'public_tests': {'input': [], 'output': []}}", EE_FORMAT_CODECONTESTS },
	{ "{'private_tests': {}}", EE_FORMAT_CODECONTESTS },
	{ "{'generated_tests': {}}", EE_FORMAT_CODECONTESTS },
	{ "{'reward_model': {'ground_truth': '{}'}}", EE_FORMAT_VERL },
	{ "{'public_test_cases': '[]'}", EE_FORMAT_LCB },
	{ "{'private_test_cases': 'eJw='}", EE_FORMAT_LCB },
	{ "{'verification_info': {'language': 'python', 'test_cases': []}}", EE_FORMAT_OPENR1 },
	{ "{'verification_info': '{\\'test_cases\\': []}'}", EE_FORMAT_OPENR1 },
	{ "{'verification_info': {'test_case_inputs': [], 'test_case_outputs': []}}", EE_FORMAT_PRIME },
	{ "{'verification_info': '{\\'test_case_inputs\\': []}'}", EE_FORMAT_PRIME },
	/* look-alikes that are none */
	{ "{'reward_model': '{}'}", -1 },
	{ "{'verification_info': 'not json'}", -1 },
	{ "{'verification_info': '[1]'}", -1 },
	{ "{'verification_info': {'language': 'python'}}", -1 },
	{ "{'problem_id': 1, 'question': 'q'}", -1 },
	/* the order: native, HumanEval, MBPP, verl, LiveCodeBench, CodeContests, APPS, open-r1, Prime */
	{ "{'tests': [], 'input_output': '{}', 'public_tests': {}}", EE_FORMAT_NATIVE },
	{ "{'test_list': [], 'reward_model': {}}", EE_FORMAT_MBPP },
	{ "{'reward_model': {}, 'input_output': '{}'}", EE_FORMAT_VERL },
	{ "{'public_test_cases': '[]', 'public_tests': {}}", EE_FORMAT_LCB },
	{ "{'public_tests': {}, 'input_output': '{}'}", EE_FORMAT_CODECONTESTS },
	{ "{'input_output': '{}', 'verification_info': {'test_cases': []}}", EE_FORMAT_APPS },
	{ "{'verification_info': {'test_cases': [], 'test_case_inputs': []}}", EE_FORMAT_OPENR1 },
};

Test(task_detect, each_format_by_its_fields_in_one_order)
{
	for (size_t i = 0; i < COUNT(cases); i++) {
		json_t *j = fix(cases[i].json);
		cr_expect_eq(ee_task_detect(j), cases[i].want, "%s", cases[i].json);
		json_decref(j);
	}
	cr_expect_eq(ee_task_detect(NULL), -1);
}

Test(task_detect, a_forced_format_reads_its_own_fields_only)
{
	json_t *j = fix("{'problem_id': 1, 'input_output': {'inputs': ['1'], 'outputs': ['1']}}");
	struct ee_task t;
	struct ee_err err = { 0 };

	cr_expect_eq(ee_task_from_json(j, EE_FORMAT_APPS, "t.jsonl:1", &t, &err), 0, "%s", err.msg);
	cr_expect_eq(t.format, EE_FORMAT_APPS);
	ee_task_free(&t);
	cr_expect_eq(ee_task_from_row(j, EE_FORMAT_CODECONTESTS, "t.jsonl:1", 1, &t, &err), -1);
	cr_expect_str_eq(err.msg, "t.jsonl:1: public_tests: no tests (public_tests, private_tests and "
	                          "generated_tests are empty)");
	cr_expect_eq(ee_task_from_row(j, EE_FORMAT_LCB, "t.jsonl:1", 1, &t, &err), -1);
	cr_expect_eq(ee_task_from_row(j, EE_FORMAT_VERL, "t.jsonl:1", 1, &t, &err), -1);
	cr_expect_str_eq(err.msg, "t.jsonl:1: reward_model: missing (expected an object)");
	/* what the format lacks comes before the id */
	cr_expect_eq(ee_task_from_json(j, EE_FORMAT_VERL, "t.jsonl:1", &t, &err), -1);
	cr_expect_str_eq(err.msg, "t.jsonl:1: reward_model: missing (expected an object)");
	json_decref(j);
	/* without a line to stand in, the format's own id is asked for */
	j = fix("{'public_tests': {'input': ['1'], 'output': ['1']}}");
	cr_expect_eq(ee_task_from_json(j, EE_FORMAT_AUTO, "t.jsonl:1", &t, &err), -1);
	cr_expect_str_eq(err.msg,
	                 "t.jsonl:1: task_id: missing, and so is name (expected a string or an integer)");
	json_decref(j);
}
