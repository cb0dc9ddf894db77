/* test_formats_rl.c - the RL data sets' rows as tasks (formats_rl.c,
 * formats_lcb.c): what each test becomes, where ids come from, and the
 * error naming file, line and JSON path of what a row lacks. The rows are
 * written for these tests, with ' for " (fix()). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "input/task.h"
#include "fixture_json.h"
#include "leakcheck.h"

#define WHERE    "t.jsonl:3"
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void load(const char *text, struct ee_task *t)
{
	struct ee_err err = { 0 };
	json_t *j = fix(text);

	cr_assert_eq(ee_task_from_row(j, EE_FORMAT_AUTO, WHERE, 3, t, &err), 0, "%s: %s", text, err.msg);
	json_decref(j);
}

static void expect_io(const struct ee_test *t, int hidden, const char *in, const char *out)
{
	cr_expect_eq(t->kind, EE_TEST_IO);
	cr_expect_eq(t->hidden, hidden);
	cr_expect_str_eq(t->stdin_text, in);
	cr_expect_str_eq(t->stdout_text, out);
}

/* A call test: fn, method_of (NULL: none), args and expected as JSON text. */
static void expect_call(const struct ee_test *t, int hidden, const char *fn, const char *method_of,
                        const char *args, const char *expected)
{
	json_t *a = fix(args), *e = fix(expected);

	cr_expect_eq(t->kind, EE_TEST_CALL);
	cr_expect_eq(t->hidden, hidden);
	cr_expect_str_eq(t->fn, fn);
	if (method_of)
		cr_expect(t->method_of && strcmp(t->method_of, method_of) == 0, "method_of %s", t->method_of);
	else
		cr_expect_null(t->method_of);
	cr_expect(json_equal(t->args, a), "args of %s", fn);
	cr_expect(json_equal(t->expected, e), "expected of %s", fn);
	json_decref(a);
	json_decref(e);
}

Test(formats_rl, apps_stdin_lists_are_joined_and_calls_unwrap_one_element_outputs)
{
	struct ee_task t;

	load("{'problem_id': 12, 'input_output': '{\\'inputs\\': [\\'1 2\\\\n\\', [\\'3\\', \\'4\\']],"
	     " \\'outputs\\': [\\'3\\\\n\\', [\\'7\\', \\'\\']]}'}",
	     &t);
	cr_expect_eq(t.format, EE_FORMAT_APPS);
	cr_expect_str_eq(t.task_id, "12");
	cr_assert_eq(t.n_tests, 2);
	expect_io(&t.tests[0], 0, "1 2\n", "3\n");
	expect_io(&t.tests[1], 0, "3\n4", "7\n");
	ee_task_free(&t);

	load("{'task_id': 'x', 'problem_id': 12, 'starter_code': 'class Solution:\\n    def f(self, a):\\n',"
	     " 'input_output': {'fn_name': 'f', 'inputs': [[1, 2], [[3]]], 'outputs': [[3], [[3], 4]]}}",
	     &t);
	cr_expect_str_eq(t.task_id, "x");
	cr_expect_str_eq(t.entry_point, "Solution");
	cr_assert_eq(t.n_tests, 2);
	expect_call(&t.tests[0], 0, "f", "Solution", "[1, 2]", "3");
	expect_call(&t.tests[1], 0, "f", "Solution", "[[3]]", "[[3], 4]");
	ee_task_free(&t);
	no_leaks();
}

Test(formats_rl, codecontests_public_tests_are_public_the_others_hidden)
{
	struct ee_task t;

	load("{'name': '1A. Theatre', 'public_tests': {'input': ['6 6 4\\n'], 'output': ['4\\n']},"
	     " 'private_tests': {'input': ['1 1 1\\n'], 'output': ['1\\n']},"
	     " 'generated_tests': {'input': ['2 2 1\\n', '3 3 3\\n'], 'output': ['4\\n', '1\\n']}}",
	     &t);
	cr_expect_eq(t.format, EE_FORMAT_CODECONTESTS);
	cr_expect_str_eq(t.task_id, "1A. Theatre");
	cr_assert_eq(t.n_tests, 4);
	expect_io(&t.tests[0], 0, "6 6 4\n", "4\n");
	expect_io(&t.tests[1], 1, "1 1 1\n", "1\n");
	expect_io(&t.tests[3], 1, "3 3 3\n", "1\n");
	ee_task_free(&t);
	no_leaks();
}

Test(formats_rl, verl_ground_truth_io_json_line_calls_and_asserts)
{
	struct ee_task t;

	load("{'reward_model': {'style': 'rule', 'ground_truth': '{\\'inputs\\': [\\'5\\\\n\\'], "
	     "\\'outputs\\':"
	     " [\\'25\\\\n\\']}'}}",
	     &t);
	cr_expect_eq(t.format, EE_FORMAT_VERL);
	cr_expect_str_eq(t.task_id, "3"); /* no id of its own: the line */
	expect_io(&t.tests[0], 0, "5\n", "25\n");
	ee_task_free(&t);

	load("{'reward_model': {'ground_truth': {'fn_name': 'add', 'inputs': ['1\\n[2, 3]\\n'],"
	     " 'outputs': ['[3, 4]']}}}",
	     &t);
	expect_call(&t.tests[0], 0, "add", NULL, "[1, [2, 3]]", "[3, 4]");
	cr_expect_str_eq(t.entry_point, "add");
	ee_task_free(&t);

	load("{'reward_model': {'ground_truth': {'assert_case': ['assert f(1) == 2', 'assert f(2) == 3']}}}",
	     &t);
	cr_assert_eq(t.n_tests, 2);
	cr_expect_eq(t.tests[1].kind, EE_TEST_ASSERT);
	cr_expect_str_eq(t.tests[1].code, "assert f(2) == 3");
	ee_task_free(&t);
	no_leaks();
}

/* base64(zlib(pickle.dumps(json.dumps(cases)))) as LiveCodeBench ships its
 * private tests, made with CPython for this test: two functional cases,
 * "[1, 2]\n3" -> "[1, 2, 3]" and "" -> "[]". */
#define LCB_PRIVATE                                                                                          \
	"eJxrYJnaxgABPU3R1UqZeQWlJUpWCkrRhjoKRrExecZKOgpK+"                                                  \
	"aUlyMI6CsaxIOGS1OKSksqCVJBEWmlecklmfl5ijlKtjgKSQWj68WqM"                                            \
	"naIHAIfcKw4="

Test(formats_lcb, public_json_private_packed_and_solution_methods)
{
	struct ee_task t;

	load("{'question_id': 'abc301_a', 'starter_code': 'class Solution:\\n    def push(self, a, x):\\n',"
	     " 'metadata': '{\\'func_name\\': \\'push\\'}',"
	     " 'public_test_cases': '[{\\'input\\': \\'[]\\\\n0\\', \\'output\\': \\'[0]\\', \\'testtype\\':"
	     " \\'functional\\'}]',"
	     " 'private_test_cases': '" LCB_PRIVATE "'}",
	     &t);
	cr_expect_eq(t.format, EE_FORMAT_LCB);
	cr_expect_str_eq(t.task_id, "abc301_a");
	cr_assert_eq(t.n_tests, 3);
	expect_call(&t.tests[0], 0, "push", "Solution", "[[], 0]", "[0]");
	expect_call(&t.tests[1], 1, "push", "Solution", "[[1, 2], 3]", "[1, 2, 3]");
	expect_call(&t.tests[2], 1, "push", "Solution", "[]", "[]");
	ee_task_free(&t);

	load("{'question_id': 'q', 'public_test_cases': [{'input': '1\\n', 'output': '2\\n', 'testtype': "
	     "'stdin'}],"
	     " 'private_test_cases': '[]', 'metadata': '{}'}",
	     &t);
	cr_assert_eq(t.n_tests, 1);
	expect_io(&t.tests[0], 0, "1\n", "2\n");
	ee_task_free(&t);
	no_leaks();
}

Test(formats_rl, openr1_and_prime_verification_info)
{
	struct ee_task t;

	load("{'problem_id': 'p1', 'verification_info': '{\\'language\\': \\'python\\', \\'test_cases\\':"
	     " [{\\'input\\': \\'2\\\\n\\', \\'output\\': \\'4\\\\n\\', \\'type\\': \\'stdin_stdout\\'}]}'}",
	     &t);
	cr_expect_eq(t.format, EE_FORMAT_OPENR1);
	cr_expect_str_eq(t.task_id, "p1");
	expect_io(&t.tests[0], 0, "2\n", "4\n");
	ee_task_free(&t);

	load("{'verification_info': {'test_case_inputs': ['\\'3\\\\n\\''], 'test_case_outputs': "
	     "['\\'9\\\\n\\''],"
	     " 'fn_name': null, 'timeout': 5}}",
	     &t);
	cr_expect_eq(t.format, EE_FORMAT_PRIME);
	expect_io(&t.tests[0], 0, "3\n", "9\n");
	ee_task_free(&t);

	load("{'verification_info': {'test_case_inputs': ['[1, 2]', '\\'3\\\\n4\\''], 'test_case_outputs': "
	     "['3', '7'],"
	     " 'fn_name': 'add'}}",
	     &t);
	expect_call(&t.tests[0], 0, "add", NULL, "[1, 2]", "3");
	expect_call(&t.tests[1], 0, "add", NULL, "[3, 4]", "7");
	ee_task_free(&t);
	no_leaks();
}

static const struct {
	const char *json;
	const char *want; /* after "t.jsonl:3: " */
} errors[] = {
	{ "{'problem_id': 1, 'input_output': '{\\'inputs\\': [\\'1\\']}'}",
	  "input_output.outputs: missing (expected a non-empty array)" },
	{ "{'problem_id': 1, 'input_output': '{\\'inputs\\': [1'}", "input_output: not JSON" },
	{ "{'problem_id': 1, 'input_output': {'inputs': ['1', 2], 'outputs': ['1', '2']}}",
	  "input_output.inputs[1]: expected a string or a list of strings, got 2" },
	{ "{'problem_id': 1, 'input_output': {'inputs': ['1'], 'outputs': ['1', '2']}}",
	  "input_output.outputs: 2 outputs for 1 inputs" },
	{ "{'problem_id': 1, 'input_output': {'fn_name': 'f', 'inputs': [3], 'outputs': [3]}}",
	  "input_output.inputs[0]: expected an argument list or a string of JSON lines, got 3" },
	{ "{'problem_id': [1], 'input_output': {'inputs': ['1'], 'outputs': ['1']}}",
	  "problem_id: expected a string or an integer, got array" },
	{ "{'name': 'n', 'public_tests': {'input': ['1'], 'output': []}}",
	  "public_tests.output: 0 outputs for 1 inputs" },
	{ "{'name': 'n', 'private_tests': {'input': [1], 'output': ['1']}}",
	  "private_tests.input[0]: expected a string, got number" },
	{ "{'reward_model': {}}", "reward_model.ground_truth: missing (expected JSON, or a string of JSON)" },
	{ "{'reward_model': {'ground_truth': '[]'}}",
	  "reward_model.ground_truth: expected an object (inputs and outputs, or assert_case), got []" },
	{ "{'reward_model': {'ground_truth': {'fn_name': 'f', 'inputs': ['1\\nx'], 'outputs': ['1']}}}",
	  "reward_model.ground_truth.inputs[0]: not JSON" },
	{ "{'reward_model': {'ground_truth': {'assert_case': []}}}",
	  "reward_model.ground_truth.assert_case: expected a non-empty array of strings, got []" },
	{ "{'question_id': 'q', 'public_test_cases': '[{\\'input\\': \\'1\\', \\'output\\': \\'1\\', "
	  "\\'testtype\\':"
	  " \\'functional\\'}]'}",
	  "metadata.func_name: missing (public_test_cases[0] is functional)" },
	{ "{'question_id': 'q', 'public_test_cases': '[{\\'input\\': \\'1\\', \\'testtype\\': "
	  "\\'stdin\\'}]'}",
	  "public_test_cases[0].output: missing (expected a string)" },
	{ "{'question_id': 'q', 'public_test_cases': '[{\\'input\\': \\'1\\', \\'output\\': \\'1\\', "
	  "\\'testtype\\':"
	  " \\'file\\'}]'}",
	  "public_test_cases[0].testtype: expected one of stdin, functional" },
	{ "{'question_id': 'q', 'private_test_cases': 'bm90IHpsaWI='}",
	  "private_test_cases: not zlib data (corrupt)" },
	{ "{'question_id': 'q', 'private_test_cases': 'not base64!'}",
	  "private_test_cases: neither JSON nor base64 (of zlib of a pickled string)" },
	/* zlib of pickle.dumps([...]): a list, not a str */
	{ "{'question_id': 'q', 'private_test_cases': "
	  "'eJxrYJkaywABsVM0aqdo9LBm5hWUlkzp4Yg21FEwiuUyntLDll9aAhbjBIvpKBjHAuVLUotLSioLUqf0cKWV5iWXZObnJeZMK"
	  "QWakcHUwzAlg6WHKTp2SgZbBntpqh4AolAiOg=='}",
	  "private_test_cases: not a pickled string: byte 11 (0x5d): only a single string is accepted" },
	{ "{'question_id': 'q', 'public_test_cases': '[]', 'private_test_cases': ''}",
	  "public_test_cases: no tests (public_test_cases and private_test_cases are empty)" },
	{ "{'verification_info': {'language': 'cpp', 'test_cases': [{'input': '', 'output': ''}]}}",
	  "verification_info.language: expected python (execeval runs Python only), got \"cpp\"" },
	{ "{'verification_info': {'test_cases': [{'input': '', 'output': '', 'type': 'function_call'}]}}",
	  "verification_info.test_cases[0].type: expected \"stdin_stdout\", got \"function_call\"" },
	{ "{'verification_info': {'test_cases': [{'output': ''}]}}",
	  "verification_info.test_cases[0].input: missing (expected a string)" },
	{ "{'verification_info': {'test_case_inputs': ['1'], 'test_case_outputs': []}}",
	  "verification_info.test_case_outputs: expected a non-empty array of JSON strings, got an empty "
	  "array" },
	{ "{'verification_info': {'test_case_inputs': ['1'], 'test_case_outputs': ['\\'1\\'']}}",
	  "verification_info.test_case_inputs[0]: expected a string, got number" },
	{ "{'verification_info': {'test_case_inputs': ['x'], 'test_case_outputs': ['1']}}",
	  "verification_info.test_case_inputs[0]: not JSON" },
	{ "{'verification_info': {'test_case_inputs': ['1'], 'test_case_outputs': ['1'], 'timeout': -1}}",
	  "verification_info.timeout: expected a number > 0, got -1" },
};

Test(formats_rl, a_row_missing_what_its_format_needs_names_the_field)
{
	for (size_t i = 0; i < COUNT(errors); i++) {
		json_t *j = fix(errors[i].json);
		struct ee_task t;
		struct ee_err err = { 0 };
		char want[512];

		snprintf(want, sizeof(want), "%s: %s", WHERE, errors[i].want);
		cr_expect_eq(ee_task_from_row(j, EE_FORMAT_AUTO, WHERE, 3, &t, &err), -1, "%s",
		             errors[i].json);
		cr_expect(strncmp(err.msg, want, strlen(want)) == 0, "case %zu:\n got  %s\n want %s", i,
		          err.msg, want);
		json_decref(j);
	}
	no_leaks();
}

Test(formats_rl, ids_task_id_then_the_formats_own_then_the_line)
{
	json_t *j = fix("{'reward_model': {'ground_truth': {'inputs': ['1'], 'outputs': ['1']}}}");
	struct ee_task t;
	struct ee_err err = { 0 };

	/* without a line (a request's task) an id-less row is an error */
	cr_expect_eq(ee_task_from_json(j, EE_FORMAT_AUTO, "task", &t, &err), -1);
	cr_expect_str_eq(err.msg, "task: task_id: missing (expected a string or an integer)");
	cr_expect_eq(ee_task_from_row(j, EE_FORMAT_AUTO, "t.jsonl:9", 9, &t, &err), 0, "%s", err.msg);
	cr_expect_str_eq(t.task_id, "9");
	ee_task_free(&t);
	json_decref(j);
	j = fix("{'problem_id': 4, 'input_output': {'inputs': ['1'], 'outputs': ['1']}}");
	cr_expect_eq(ee_task_from_json(j, EE_FORMAT_AUTO, "task", &t, &err), 0, "%s", err.msg);
	cr_expect_str_eq(t.task_id, "4");
	ee_task_free(&t);
	json_decref(j);
	no_leaks();
}

/* An io test's rule: the row's own "compare", else its format's default
 * (docs/compare.md): verl's rstrip, CodeContests' numeric, lines else. */
Test(formats_rl, io_tests_get_their_formats_compare_rule_unless_the_row_names_one)
{
	struct ee_task t;

	load("{'reward_model': {'ground_truth': {'inputs': ['5\\n'], 'outputs': ['25\\n']}}}", &t);
	cr_expect_eq(t.tests[0].compare.rule, EE_CMP_RSTRIP);
	cr_expect_eq(t.compare_given, 0); /* --compare may still override it */
	ee_task_free(&t);

	load("{'name': 'x', 'public_tests': {'input': ['1\\n'], 'output': ['YES\\n']}}", &t);
	cr_expect_eq(t.tests[0].compare.rule, EE_CMP_NUMERIC);
	cr_expect_eq(t.tests[0].compare.ci, 1);
	cr_expect_float_eq(t.tests[0].compare.abs_tol, 1e-5, 1e-12);
	cr_expect_eq(t.tests[0].compare.rel_tol, 0);
	ee_task_free(&t);

	load("{'name': 'x', 'compare': 'exact', 'public_tests': {'input': ['1\\n'], 'output': ['2\\n']}}",
	     &t);
	cr_expect_eq(t.tests[0].compare.rule, EE_CMP_EXACT);
	cr_expect_eq(t.compare_given, 1);
	ee_task_free(&t);

	load("{'problem_id': 1, 'input_output': {'inputs': ['1\\n'], 'outputs': ['2\\n']}}", &t);
	cr_expect_eq(t.tests[0].compare.rule, EE_CMP_LINES);
	ee_task_free(&t);
	no_leaks();
}
