/* test_task.c - tasks in the native, HumanEval and MBPP formats, and samples
 * (task.h). Fixtures are written with ' for " to stay readable; fix() turns
 * them back. Real data lines are copied verbatim from the data sets, and the
 * whole files are read too when EE_DATASETS (default /work/shared/datasets)
 * holds them. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/jsonfield.h"
#include "input/task.h"

/* Criterion ignores LeakSanitizer's exit-time report (and any failure in a
 * .fini), so each test asks for a leak check at its end, where it counts. */
#include "leakcheck.h"

#define WHERE    "t.jsonl:3"
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Loads a fixture, with ' standing for ". */
static json_t *fix(const char *text, size_t flags)
{
	char *s = strdup(text);
	json_error_t e;

	cr_assert_not_null(s);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	json_t *j = json_loads(s, flags | JSON_DECODE_ANY, &e);
	cr_assert_not_null(j, "bad fixture %s: %s", s, e.text);
	free(s);
	return j;
}

static void load_task(const char *text, int format, struct ee_task *t)
{
	struct ee_err err = { 0 };
	json_t *j = fix(text, 0);

	cr_assert_eq(ee_task_from_json(j, format, WHERE, t, &err), 0, "%s: %s", text, err.msg);
	json_decref(j);
}

static int is_zeroed(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* ---- Native: every field kept ------------------------------------------- */

static const char contract_example[] =
        "{'task_id': 'demo/add', 'class': 'arithmetic',"
        " 'prompt': 'def add(a, b):\\n', 'entry_point': 'add', 'setup': 'import math',"
        " 'tests': ["
        "  {'kind': 'assert', 'code': 'assert add(1, 2) == 3', 'weight': 2.5, 'tier': 'edge',"
        "   'visibility': 'public'},"
        "  {'kind': 'io', 'stdin': '1 2\\n', 'stdout': '3\\n', 'visibility': 'hidden',"
        "   'float_tol': 0.001},"
        "  {'kind': 'call', 'fn': 'add', 'args': [1, 2], 'expected': 3, 'tier': 'property',"
        "   'float_tol': 0},"
        "  {'kind': 'program', 'code': 'check(add)\\n'},"
        "  {'kind': 'unittest', 'code': 'import unittest\\n'}"
        " ],"
        " 'limits': {'timeout_s': 2.5, 'memory_mb': 256, 'procs': 8, 'output_cap': 1000}}";

Test(task, native_keeps_every_field)
{
	struct ee_task t;
	load_task(contract_example, EE_FORMAT_AUTO, &t);

	cr_expect_eq(t.format, EE_FORMAT_NATIVE);
	cr_expect_str_eq(t.task_id, "demo/add");
	cr_expect_str_eq(t.class_name, "arithmetic");
	cr_expect_str_eq(t.prompt, "def add(a, b):\n");
	cr_expect_str_eq(t.entry_point, "add");
	cr_expect_str_eq(t.setup, "import math");
	cr_assert_eq(t.n_tests, 5);

	const struct ee_test *a = &t.tests[0], *io = &t.tests[1], *call = &t.tests[2];
	cr_expect_eq(a->kind, EE_TEST_ASSERT);
	cr_expect_str_eq(a->code, "assert add(1, 2) == 3");
	cr_expect_eq(a->weight, 2.5);
	cr_expect_eq(a->tier, EE_TIER_EDGE);
	cr_expect_eq(a->hidden, 0);

	cr_expect_eq(io->kind, EE_TEST_IO);
	cr_expect_str_eq(io->stdin_text, "1 2\n");
	cr_expect_str_eq(io->stdout_text, "3\n");
	cr_expect_eq(io->hidden, 1);
	cr_expect_eq(io->float_tol, 0.001);
	cr_expect_null(io->code);

	cr_expect_eq(call->kind, EE_TEST_CALL);
	cr_expect_str_eq(call->fn, "add");
	json_t *args = json_pack("[ii]", 1, 2), *three = json_integer(3);
	cr_expect(json_equal(call->args, args));
	cr_expect(json_equal(call->expected, three));
	json_decref(args);
	json_decref(three);
	cr_expect_eq(call->tier, EE_TIER_PROPERTY);
	cr_expect_eq(call->float_tol, 0.0);

	cr_expect_eq(t.tests[3].kind, EE_TEST_PROGRAM);
	cr_expect_str_eq(t.tests[3].code, "check(add)\n");
	cr_expect_eq(t.tests[4].kind, EE_TEST_UNITTEST);
	cr_expect_str_eq(t.tests[4].code, "import unittest\n");

	cr_expect(t.limits.has_timeout && t.limits.has_memory && t.limits.has_procs &&
	          t.limits.has_output_cap);
	cr_expect_eq(t.limits.timeout_s, 2.5);
	cr_expect_eq(t.limits.memory_mb, 256u);
	cr_expect_eq(t.limits.procs, 8u);
	cr_expect_eq(t.limits.output_cap, (size_t)1000);
	ee_task_free(&t);
	cr_expect(is_zeroed(&t, sizeof(t)));
	no_leaks();
}

/* ---- Native: every default ------------------------------------------------ */

Test(task, native_defaults)
{
	struct ee_task t;
	load_task("{'task_id': 'd', 'tests': ["
	          "{'kind': 'assert', 'code': 'assert 1'},"
	          "{'kind': 'io', 'stdout': ''},"
	          "{'kind': 'call', 'fn': 'f', 'expected': null}]}",
	          EE_FORMAT_AUTO, &t);

	cr_expect_str_eq(t.class_name, "");
	cr_expect_str_eq(t.prompt, "");
	cr_expect_str_eq(t.entry_point, "");
	cr_expect_str_eq(t.setup, "");
	cr_expect(is_zeroed(&t.limits, sizeof(t.limits)), "no limits given");
	cr_assert_eq(t.n_tests, 3);
	for (size_t i = 0; i < t.n_tests; i++) {
		cr_expect_eq(t.tests[i].weight, 1.0, "tests[%zu]", i);
		cr_expect_eq(t.tests[i].tier, EE_TIER_CANONICAL, "tests[%zu]", i);
		cr_expect_eq(t.tests[i].hidden, 0, "tests[%zu]", i);
		cr_expect_eq(t.tests[i].float_tol, -1.0, "tests[%zu]", i);
	}
	cr_expect_str_eq(t.tests[1].stdin_text, "");
	cr_expect(json_is_array(t.tests[2].args) && json_array_size(t.tests[2].args) == 0);
	cr_expect(json_is_null(t.tests[2].expected), "expected: null is a value");
	ee_task_free(&t);
	no_leaks();
}

Test(task, integer_task_id_becomes_text)
{
	static const struct {
		const char *json, *want;
	} cases[] = {
		{ "{'task_id': 11, 'test_list': ['assert 1']}", "11" },
		{ "{'task_id': -3, 'test_list': ['assert 1']}", "-3" },
		{ "{'task_id': 9007199254740993, 'test_list': ['assert 1']}", "9007199254740993" },
		{ "{'task_id': '', 'test_list': ['assert 1']}", "" },
	};
	for (size_t i = 0; i < COUNT(cases); i++) {
		struct ee_task t;
		load_task(cases[i].json, EE_FORMAT_AUTO, &t);
		cr_expect_str_eq(t.task_id, cases[i].want);
		ee_task_free(&t);
	}
	no_leaks();
}

Test(task, huge_limits_saturate)
{
	struct ee_task t;
	load_task("{'task_id': 'x', 'tests': [{'kind': 'assert', 'code': ''}],"
	          " 'limits': {'memory_mb': 1e12, 'procs': 4294967296, 'output_cap': 1e30}}",
	          EE_FORMAT_AUTO, &t);
	cr_expect_eq(t.limits.memory_mb, (unsigned)-1);
	cr_expect_eq(t.limits.procs, (unsigned)-1);
	cr_expect_eq(t.limits.output_cap, (size_t)-1);
	cr_expect_eq(t.limits.has_timeout, 0);
	ee_task_free(&t);
	no_leaks();
}

/* ---- Detection -------------------------------------------------------------- */

Test(task, detect_table)
{
	static const struct {
		const char *json;
		int want;
	} cases[] = {
		{ "{'tests': 1}", EE_FORMAT_NATIVE },
		{ "{'tests': [], 'test': '', 'entry_point': '', 'test_list': []}", EE_FORMAT_NATIVE },
		{ "{'test': '', 'entry_point': 'f'}", EE_FORMAT_HUMANEVAL },
		{ "{'test': '', 'entry_point': 'f', 'test_list': []}", EE_FORMAT_HUMANEVAL },
		{ "{'test': ''}", -1 },
		{ "{'entry_point': 'f', 'test_list': []}", EE_FORMAT_MBPP },
		{ "{'test_list': []}", EE_FORMAT_MBPP },
		{ "{}", -1 },
		{ "[]", -1 },
		{ "'tests'", -1 },
	};
	for (size_t i = 0; i < COUNT(cases); i++) {
		json_t *j = fix(cases[i].json, 0);
		cr_expect_eq(ee_task_detect(j), cases[i].want, "%s", cases[i].json);
		json_decref(j);
	}
	cr_expect_eq(ee_task_detect(NULL), -1);
	no_leaks();
}

/* ---- HumanEval and MBPP ----------------------------------------------------- */

/* HumanEval/34, verbatim from HumanEval.jsonl line 35. */
static const char humaneval_34[] =
        "{\"task_id\": \"HumanEval/34\", \"prompt\": \"\\n\\ndef unique(l: list):\\n    \\\"\\\"\\\"Return "
        "sorted unique elements in a list\\n    >>> unique([5, 3, 5, 2, 3, 3, 9, 0, 123])\\n    [0, 2, "
        "3, 5, 9, 123]\\n    \\\"\\\"\\\"\\n\", \"entry_point\": \"unique\", \"canonical_solution\": \"    "
        "return sorted(list(set(l)))\\n\", \"test\": \"\\n\\nMETADATA = {}\\n\\n\\ndef check(candidate):\\n"
        "    assert candidate([5, 3, 5, 2, 3, 3, 9, 0, 123]) == [0, 2, 3, 5, 9, 123]\\n\\n\"}";

/* MBPP task 2, verbatim from mbpp.jsonl (note the CRLF in code). */
static const char mbpp_2[] =
        "{\"text\": \"Write a function to find the similar elements from the given two tuple lists.\", "
        "\"code\": \"def similar_elements(test_tup1, test_tup2):\\r\\n  res = tuple(set(test_tup1) & "
        "set(test_tup2))\\r\\n  return (res) \", \"task_id\": 2, \"test_setup_code\": \"\", \"test_list\": "
        "[\"assert similar_elements((3, 4, 5, 6),(5, 7, 4, 10)) == (4, 5)\", \"assert similar_elements((1, "
        "2, 3, 4),(5, 4, 3, 7)) == (3, 4)\", \"assert similar_elements((11, 12, 14, 13),(17, 15, 14, 13)) "
        "== (13, 14)\"], \"challenge_test_list\": []}";

static json_t *load_raw(const char *s)
{
	json_error_t e;
	json_t *j = json_loads(s, 0, &e);
	cr_assert_not_null(j, "%s", e.text);
	return j;
}

Test(task, humaneval_real_line)
{
	json_t *j = load_raw(humaneval_34);
	struct ee_task t;
	struct ee_err err = { 0 };

	cr_assert_eq(ee_task_from_json(j, EE_FORMAT_AUTO, WHERE, &t, &err), 0, "%s", err.msg);
	cr_expect_eq(t.format, EE_FORMAT_HUMANEVAL);
	cr_expect_str_eq(t.task_id, "HumanEval/34");
	cr_expect_str_eq(t.prompt, json_string_value(json_object_get(j, "prompt")));
	cr_expect_str_eq(t.entry_point, "unique");
	cr_expect_str_eq(t.setup, "");
	cr_assert_eq(t.n_tests, 1);
	cr_expect_eq(t.tests[0].kind, EE_TEST_PROGRAM);
	cr_expect_eq(t.tests[0].hidden, 0);
	cr_expect_eq(t.tests[0].tier, EE_TIER_CANONICAL);
	cr_expect_eq(t.tests[0].weight, 1.0);
	cr_expect_str_eq(t.tests[0].code,
	                 "\n\nMETADATA = {}\n\n\ndef check(candidate):\n"
	                 "    assert candidate([5, 3, 5, 2, 3, 3, 9, 0, 123]) == [0, 2, 3, 5, 9, 123]\n\n"
	                 "\ncheck(unique)\n");
	ee_task_free(&t);
	json_decref(j);
	no_leaks();
}

Test(task, mbpp_real_line)
{
	json_t *j = load_raw(mbpp_2);
	struct ee_task t;
	struct ee_err err = { 0 };

	cr_assert_eq(ee_task_from_json(j, EE_FORMAT_AUTO, WHERE, &t, &err), 0, "%s", err.msg);
	cr_expect_eq(t.format, EE_FORMAT_MBPP);
	cr_expect_str_eq(t.task_id, "2");
	cr_expect_str_eq(t.prompt,
	                 "Write a function to find the similar elements from the given two tuple lists.");
	/* The first test's first call of a name the reference defines, not the set() around it. */
	cr_expect_str_eq(t.entry_point, "similar_elements");
	cr_expect_str_eq(t.setup, "");
	cr_assert_eq(t.n_tests, 3);
	for (size_t i = 0; i < 3; i++) {
		cr_expect_eq(t.tests[i].kind, EE_TEST_ASSERT);
		cr_expect_eq(t.tests[i].hidden, 0);
		cr_expect_eq(t.tests[i].weight, 1.0);
	}
	cr_expect_str_eq(t.tests[2].code,
	                 "assert similar_elements((11, 12, 14, 13),(17, 15, 14, 13)) == (13, 14)");
	ee_task_free(&t);
	json_decref(j);
	no_leaks();
}

/* MBPP's entry point, which tests may take from the candidate though it is
 * a builtin's name (126's sum); none without a reference defining it. */
Test(task, mbpp_entry_point_is_the_first_call_the_reference_defines)
{
	static const struct {
		const char *row, *entry_point;
	} cases[] = {
		{ "{\"task_id\": 126, \"text\": \"t\", \"code\": \"def sum(a,b): \\r\\n    return 0\", "
		  "\"test_list\": [\"assert sum(10,15) == 6\"]}",
		  "sum" },
		{ "{\"task_id\": 1, \"text\": \"t\", \"code\": \"import math\\nclass Pair(object):\\n  "
		  "pass\\n"
		  "def max_chain_length(a, n):\\n  return 0\", "
		  "\"test_list\": [\"assert max_chain_length([Pair(5, 24)], 1) == 3\"]}",
		  "max_chain_length" },
		{ "{\"task_id\": 1, \"text\": \"t\", \"code\": \"def sumx(a): return 0\", "
		  "\"test_list\": [\"assert math.isclose(sumx(1), 0)\"]}",
		  "sumx" },
		{ "{\"task_id\": 1, \"text\": \"t\", \"test_list\": [\"assert f(1) == 0\"]}", "" },
		{ "{\"task_id\": 1, \"text\": \"t\", \"code\": \"def g(a): return 0\", "
		  "\"test_list\": [\"assert f(1) == 0\"]}",
		  "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *j = load_raw(cases[i].row);
		struct ee_task t;
		struct ee_err err = { 0 };
		cr_assert_eq(ee_task_from_json(j, EE_FORMAT_AUTO, WHERE, &t, &err), 0, "%zu: %s", i, err.msg);
		cr_expect_str_eq(t.entry_point, cases[i].entry_point, "case %zu", i);
		ee_task_free(&t);
		json_decref(j);
	}
	no_leaks();
}

Test(task, mbpp_challenge_setup_and_sanitized)
{
	struct ee_task t;

	load_task("{'task_id': 5, 'text': 'T', 'test_setup_code': 'x = 1\\r\\ny = 2',"
	          " 'test_list': ['assert a'], 'challenge_test_list': ['assert b', 'assert c']}",
	          EE_FORMAT_AUTO | EE_TASK_MBPP_CHALLENGE, &t);
	cr_expect_str_eq(t.setup, "x = 1\r\ny = 2");
	cr_assert_eq(t.n_tests, 3);
	cr_expect(!t.tests[0].hidden && t.tests[1].hidden && t.tests[2].hidden);
	cr_expect_str_eq(t.tests[2].code, "assert c");
	ee_task_free(&t);

	/* The standard protocol (the default) scores test_list only. */
	load_task("{'task_id': 5, 'text': 'T', 'test_list': ['assert a'],"
	          " 'challenge_test_list': ['assert b', 'assert c']}",
	          EE_FORMAT_AUTO, &t);
	cr_assert_eq(t.n_tests, 1);
	cr_expect(!t.tests[0].hidden);
	cr_expect_str_eq(t.tests[0].code, "assert a");
	ee_task_free(&t);
	load_task("{'task_id': 5, 'test_list': ['assert a'], 'challenge_test_list': ['assert b']}",
	          EE_FORMAT_MBPP | EE_TASK_MBPP_CHALLENGE, &t);
	cr_expect_eq(t.n_tests, 2);
	ee_task_free(&t);

	/* Sanitized MBPP: prompt, test_imports. */
	load_task("{'source_file': 'x.ipynb', 'task_id': 269, 'prompt': 'Find ascii.',"
	          " 'code': 'def f(k):\\n  return ord(k)', 'test_imports': ['import math', 'import re'],"
	          " 'test_list': ['assert f(1)']}",
	          EE_FORMAT_AUTO, &t);
	cr_expect_str_eq(t.prompt, "Find ascii.");
	cr_expect_str_eq(t.setup, "import math\nimport re");
	cr_expect_eq(t.n_tests, 1);
	ee_task_free(&t);

	/* Both: imports first, then the setup code. */
	load_task("{'task_id': 1, 'test_imports': ['import math'], 'test_setup_code': 'x = 1',"
	          " 'test_list': ['assert x']}",
	          EE_FORMAT_MBPP, &t);
	cr_expect_str_eq(t.setup, "import math\nx = 1");
	ee_task_free(&t);
	no_leaks();
}

Test(task, forced_format_wins)
{
	struct ee_task t;
	load_task("{'task_id': 1, 'test': 'def check(c): pass', 'entry_point': 'f',"
	          " 'test_list': ['assert 1']}",
	          EE_FORMAT_MBPP, &t);
	cr_expect_eq(t.format, EE_FORMAT_MBPP);
	cr_expect_eq(t.n_tests, 1);
	ee_task_free(&t);
	no_leaks();
}

/* ---- Errors: each names its field ------------------------------------------- */

struct err_case {
	const char *json;
	int format;
	const char *want; /* the whole message after "t.jsonl:3: " */
};

#define A        "{'task_id': 'a', 'tests': [{'kind': 'assert', 'code': 'x'}"
#define T1(test) "{'task_id': 'a', 'tests': [" test "]}"
#define KINDS    "assert, io, call, program, unittest"

static const struct err_case task_errors[] = {
	/* shape and detection */
	{ "[]", 0, "expected a JSON object, got array" },
	{ "{'task_id': 'a'}", 0,
	  "cannot tell the format: expected 'tests' (native), 'test'+'entry_point' (HumanEval), "
	  "'test_list' (MBPP) or an RL data set's tests (--format; docs/formats.md)" },
	{ "{'task_id': 'a', 'test': 'x'}", 0,
	  "cannot tell the format: expected 'tests' (native), 'test'+'entry_point' (HumanEval), "
	  "'test_list' (MBPP) or an RL data set's tests (--format; docs/formats.md)" },
	{ A "]}", EE_FORMAT_COUNT, "unknown task format 11" },
	{ A "]}", -2, "unknown task format -2" },
	/* task fields */
	{ "{'tests': [{'kind': 'assert', 'code': 'x'}]}", 0,
	  "task_id: missing (expected a string or an integer)" },
	{ "{'task_id': 1.5, 'tests': []}", 0, "task_id: expected a string or an integer, got number" },
	{ "{'task_id': null, 'tests': []}", 0, "task_id: expected a string or an integer, got null" },
	{ "{'task_id': 'a', 'class': 3, 'tests': []}", 0, "class: expected a string, got number" },
	{ "{'task_id': 'a', 'prompt': true, 'tests': []}", 0, "prompt: expected a string, got boolean" },
	{ "{'task_id': 'a', 'entry_point': [], 'tests': []}", 0,
	  "entry_point: expected a string, got array" },
	{ "{'task_id': 'a', 'setup': {}, 'tests': []}", 0, "setup: expected a string, got object" },
	{ "{'task_id': 'a', 'tests': {}}", 0, "tests: expected a non-empty array of objects, got object" },
	{ "{'task_id': 'a', 'tests': []}", 0,
	  "tests: expected a non-empty array of objects, got an empty array" },
	{ "{'task_id': 'a', 'test': 'x', 'entry_point': 'f'}", EE_FORMAT_NATIVE,
	  "test: unknown key in a task; did you mean 'tests'?" },
	{ "{'task_id': 'a', 'entry_point': 'f'}", EE_FORMAT_NATIVE,
	  "tests: missing (expected a non-empty array of objects)" },
	/* unknown keys: a typo never drops a test or a limit silently */
	{ T1("{'kind': 'assert', 'code': 'x', 'visiblity': 'hidden'}"), 0,
	  "tests[0].visiblity: unknown key in an assert test; did you mean 'visibility'?" },
	{ T1("{'kind': 'assert', 'code': 'x', 'wieght': 2}"), 0,
	  "tests[0].wieght: unknown key in an assert test; did you mean 'weight'?" },
	{ A "], 'limts': {'timeout_s': 1}}", 0, "limts: unknown key in a task; did you mean 'limits'?" },
	{ A "], 'limits': {'timeout': 1}}", 0,
	  "limits.timeout: unknown key in limits; did you mean 'timeout_s'?" },
	{ A "], 'Setup': 'x'}", 0, "Setup: unknown key in a task; did you mean 'setup'?" },
	{ A "], 'description': 'x'}", 0,
	  "description: unknown key in a task; expected one of task_id, class, prompt, entry_point, setup, "
	  "tests, limits, compare, reference, generate, n_generated, generated_tier, generated_float_tol" },
	{ A "], 'compare': 'words'}", 0,
	  "compare: expected exact, rstrip, lines, tokens or numeric, got 'words'" },
	{ A "], 'compare': 'tokens:abs=1'}", 0, "compare: 'abs=1': only numeric takes a tolerance" },
	{ A "], 'compare': ['tokens']}", 0, "compare: expected a string, got array" },
	{ "{'task_id': 'a', 'compare': 'exact', 'tests': [{'kind': 'io', 'stdout': '1'}, "
	  "{'kind': 'io', 'stdout': '1', 'float_tol': 0.1}]}",
	  0, "tests[1].float_tol: compare 'exact' does not use it (lines and tokens do)" },
	{ T1("{'kind': 'io', 'stdout': '1', 'stdn': '2'}"), 0,
	  "tests[0].stdn: unknown key in an io test; did you mean 'stdin'?" },
	{ T1("{'kind': 'call', 'fn': 'f', 'expected': 1, 'arg': []}"), 0,
	  "tests[0].arg: unknown key in a call test; did you mean 'args'?" },
	{ T1("{'kind': 'assert', 'code': 'x', 'stdout': '1'}"), 0,
	  "tests[0].stdout: unknown key in an assert test; expected one of kind, weight, tier, visibility, "
	  "code" },
	{ T1("{'kind': 'assert', 'code': 'x', 'a\\nb': 1}"), 0,
	  "tests[0].\"a\\x0ab\": unknown key in an assert test; expected one of kind, weight, tier, "
	  "visibility, code" },
	/* test fields */
	{ "{'task_id': 'a', 'tests': [1]}", 0, "tests[0]: expected an object, got number" },
	{ A ", 'x']}", 0, "tests[1]: expected an object, got string" },
	{ A ", {'code': 'x'}]}", 0, "tests[1].kind: missing (expected one of " KINDS ")" },
	{ T1("{'kind': 'foo'}"), 0, "tests[0].kind: expected one of " KINDS ", got \"foo\"" },
	{ T1("{'kind': 'a\\nb\\\"c\\\\'}"), 0,
	  "tests[0].kind: expected one of " KINDS ", got \"a\\x0ab\\\"c\\\\\"" },
	/* cut after 40 bytes, but not inside the é that straddles them */
	{ T1("{'kind': '012345678901234567890123456789012345678\\u00e9\\u00e9'}"), 0,
	  "tests[0].kind: expected one of " KINDS ", got \"012345678901234567890123456789012345678"
	  "\xc3\xa9...\"" },
	{ T1("{'kind': 5}"), 0, "tests[0].kind: expected one of " KINDS ", got number" },
	{ T1("{'kind': 'assert', 'code': 'x', 'weight': 0}"), 0,
	  "tests[0].weight: expected a number > 0, got 0" },
	{ T1("{'kind': 'assert', 'code': 'x', 'weight': -1.5}"), 0,
	  "tests[0].weight: expected a number > 0, got -1.5" },
	{ T1("{'kind': 'assert', 'code': 'x', 'weight': '1'}"), 0,
	  "tests[0].weight: expected a number > 0, got string" },
	{ T1("{'kind': 'assert', 'code': 'x', 'tier': 'hard'}"), 0,
	  "tests[0].tier: expected one of canonical, edge, property, got \"hard\"" },
	{ T1("{'kind': 'assert', 'code': 'x', 'tier': null}"), 0,
	  "tests[0].tier: expected one of canonical, edge, property, got null" },
	{ T1("{'kind': 'assert', 'code': 'x', 'visibility': 'private'}"), 0,
	  "tests[0].visibility: expected one of public, hidden, got \"private\"" },
	{ T1("{'kind': 'assert'}"), 0, "tests[0].code: missing (expected a string)" },
	{ T1("{'kind': 'program', 'code': 1}"), 0, "tests[0].code: expected a string, got number" },
	{ T1("{'kind': 'unittest'}"), 0, "tests[0].code: missing (expected a string)" },
	{ T1("{'kind': 'io', 'stdin': 'x'}"), 0, "tests[0].stdout: missing (expected a string)" },
	{ T1("{'kind': 'io', 'stdout': 'x', 'stdin': 1}"), 0,
	  "tests[0].stdin: expected a string, got number" },
	{ T1("{'kind': 'io', 'stdout': 'x', 'float_tol': -0.1}"), 0,
	  "tests[0].float_tol: expected a number >= 0, got -0.1" },
	{ T1("{'kind': 'call', 'expected': 1}"), 0, "tests[0].fn: missing (expected a string)" },
	{ T1("{'kind': 'call', 'fn': '', 'expected': 1}"), 0,
	  "tests[0].fn: expected a name, got an empty string" },
	{ T1("{'kind': 'call', 'fn': 'f', 'args': {}, 'expected': 1}"), 0,
	  "tests[0].args: expected an array, got object" },
	{ T1("{'kind': 'call', 'fn': 'f', 'args': [1]}"), 0,
	  "tests[0].expected: missing (expected any JSON value, null included)" },
	{ T1("{'kind': 'call', 'fn': 'f', 'expected': 1, 'float_tol': 'x'}"), 0,
	  "tests[0].float_tol: expected a number >= 0, got string" },
	/* limits, after the tests were built */
	{ A "], 'limits': []}", 0, "limits: expected an object, got array" },
	{ A "], 'limits': {'timeout_s': 0}}", 0, "limits.timeout_s: expected a number > 0, got 0" },
	{ A "], 'limits': {'memory_mb': 0.5}}", 0, "limits.memory_mb: expected a whole number > 0, got 0.5" },
	{ A "], 'limits': {'memory_mb': 2.5}}", 0, "limits.memory_mb: expected a whole number > 0, got 2.5" },
	{ A "], 'limits': {'procs': 'x'}}", 0, "limits.procs: expected a whole number > 0, got string" },
	{ A "], 'limits': {'output_cap': -5}}", 0, "limits.output_cap: expected a whole number > 0, got -5" },
	/* HumanEval */
	{ "{'task_id': 'H', 'test': 'x', 'entry_point': 5}", 0,
	  "entry_point: expected a string, got number" },
	{ "{'task_id': 'H', 'test': 'x', 'entry_point': ''}", 0,
	  "entry_point: expected a name, got an empty string" },
	{ "{'task_id': 'H', 'test': 1, 'entry_point': 'f'}", 0, "test: expected a string, got number" },
	{ "{'task_id': 'H', 'entry_point': 'f'}", EE_FORMAT_HUMANEVAL, "test: missing (expected a string)" },
	{ "{'task_id': 'H', 'prompt': 1, 'test': 'x', 'entry_point': 'f'}", 0,
	  "prompt: expected a string, got number" },
	/* MBPP */
	{ "{'task_id': 1, 'test_list': 'x'}", 0,
	  "test_list: expected a non-empty array of strings, got string" },
	{ "{'task_id': 1, 'test_list': []}", 0,
	  "test_list: expected a non-empty array of strings, got an empty array" },
	{ "{'task_id': 1, 'test_list': ['a', 3]}", 0, "test_list[1]: expected a string, got number" },
	{ "{'task_id': 1, 'test_list': ['a'], 'challenge_test_list': [null]}", 0,
	  "challenge_test_list[0]: expected a string, got null" },
	{ "{'task_id': 1, 'test_list': ['a'], 'challenge_test_list': 1}", 0,
	  "challenge_test_list: expected an array of strings, got number" },
	{ "{'task_id': 1, 'test_list': ['a'], 'test_setup_code': 1}", 0,
	  "test_setup_code: expected a string, got number" },
	{ "{'task_id': 1, 'test_list': ['a'], 'test_imports': 'import math'}", 0,
	  "test_imports: expected an array of strings, got string" },
	{ "{'task_id': 1, 'test_list': ['a'], 'test_imports': ['import re', 1]}", 0,
	  "test_imports[1]: expected a string, got number" },
	{ "{'task_id': 1, 'test_list': ['a'], 'text': 1}", 0, "text: expected a string, got number" },
	{ "{'task_id': 1, 'test_list': ['a'], 'prompt': []}", 0, "prompt: expected a string, got array" },
	{ "{'task_id': 1}", EE_FORMAT_MBPP, "test_list: missing (expected a non-empty array of strings)" },
};

Test(task, errors_name_their_field)
{
	for (size_t i = 0; i < COUNT(task_errors); i++) {
		const struct err_case *tc = &task_errors[i];
		json_t *j = fix(tc->json, 0);
		struct ee_task t;
		struct ee_err err = { 0 };
		char want[256];

		memset(&t, 0xA5, sizeof(t));
		snprintf(want, sizeof(want), "%s: %s", WHERE, tc->want);
		cr_expect_eq(ee_task_from_json(j, tc->format, WHERE, &t, &err), -1, "%s", tc->json);
		cr_expect_eq(err.code, EE_ERR_USAGE, "%s", tc->json);
		cr_expect_str_eq(err.msg, want, "%s", tc->json);
		cr_expect(is_zeroed(&t, sizeof(t)), "%s: task not zeroed", tc->json);
		ee_task_free(&t);
		json_decref(j);
	}
	no_leaks();
}

Test(task, nul_inside_a_string_is_refused)
{
	json_t *j = fix(T1("{'kind': 'assert', 'code': 'assert 1\\u0000 or 0'}"), JSON_ALLOW_NUL);
	struct ee_task t;
	struct ee_err err = { 0 };

	cr_assert_eq(ee_task_from_json(j, EE_FORMAT_AUTO, WHERE, &t, &err), -1);
	cr_expect_str_eq(err.msg, WHERE ": tests[0].code: expected a string without NUL bytes, got one "
	                                "with \\u0000");
	json_decref(j);
	no_leaks();
}

Test(task, null_where_and_null_err)
{
	json_t *j = fix("{}", 0);
	struct ee_task t;
	struct ee_err err = { 0 };

	cr_expect_eq(ee_task_from_json(j, EE_FORMAT_AUTO, NULL, &t, NULL), -1);
	cr_expect_eq(ee_task_from_json(NULL, EE_FORMAT_AUTO, NULL, &t, &err), -1);
	cr_expect_str_eq(err.msg, "input: expected a JSON object, got nothing");
	json_decref(j);
	no_leaks();
}

/* ---- --assert ----------------------------------------------------------------- */

Test(task, from_asserts)
{
	const char *const asserts[] = { "assert f(1) == 2", "assert f(2) == 3" };
	struct ee_task t;
	struct ee_err err = { 0 };

	cr_assert_eq(ee_task_from_asserts(asserts, 2, &t, &err), 0, "%s", err.msg);
	cr_expect_str_eq(t.task_id, "run");
	cr_expect_eq(t.format, EE_FORMAT_NATIVE);
	cr_expect_str_eq(t.prompt, "");
	cr_expect_str_eq(t.setup, "");
	cr_assert_eq(t.n_tests, 2);
	for (size_t i = 0; i < 2; i++) {
		cr_expect_eq(t.tests[i].kind, EE_TEST_ASSERT);
		cr_expect_eq(t.tests[i].hidden, 0);
		cr_expect_eq(t.tests[i].weight, 1.0);
		cr_expect_eq(t.tests[i].float_tol, -1.0);
		cr_expect_str_eq(t.tests[i].code, asserts[i]);
	}
	ee_task_free(&t);
	no_leaks();
}

Test(task, from_asserts_errors)
{
	const char *const asserts[] = { "assert 1", NULL };
	struct ee_task t;
	struct ee_err err = { 0 };

	cr_expect_eq(ee_task_from_asserts(asserts, 0, &t, &err), -1);
	cr_expect_str_eq(err.msg, "--assert: expected at least one assertion, got none");
	cr_expect_eq(ee_task_from_asserts(asserts, 2, &t, &err), -1);
	cr_expect_str_eq(err.msg, "--assert: assertion 2 is missing");
	cr_expect_eq(err.code, EE_ERR_USAGE);
	cr_expect(is_zeroed(&t, sizeof(t)));
	no_leaks();
}

Test(task, names_and_free_of_nothing)
{
	static const char *const kinds[] = { "assert", "io", "call", "program", "unittest" };
	static const char *const tiers[] = { "canonical", "edge", "property" };
	static const char *const sources[] = { "completion", "generation", "code" };

	for (int i = 0; i < (int)COUNT(kinds); i++)
		cr_expect_str_eq(ee_test_kind_name(i), kinds[i]);
	for (int i = 0; i < (int)COUNT(tiers); i++)
		cr_expect_str_eq(ee_tier_name(i), tiers[i]);
	for (int i = 0; i < (int)COUNT(sources); i++)
		cr_expect_str_eq(ee_sample_source_name(i), sources[i]);
	cr_expect_str_eq(ee_test_kind_name(-1), "unknown");
	cr_expect_str_eq(ee_tier_name(3), "unknown");
	cr_expect_str_eq(ee_sample_source_name(99), "unknown");

	struct ee_task t = { 0 };
	struct ee_sample s = { 0 };
	ee_task_free(&t);
	ee_task_free(NULL);
	ee_sample_free(&s);
	ee_sample_free(NULL);
	no_leaks();
}

/* ---- Samples ------------------------------------------------------------------ */

Test(sample, fields_and_extra)
{
	json_t *j = fix("{'task_id': 7, 'generation': '```py\\nx\\n```', 'sample': 3, 'model': 'm',"
	                " 'temperature': 0.2, 'meta': {'a': [1]}}",
	                0);
	struct ee_sample s;
	struct ee_err err = { 0 };

	cr_assert_eq(ee_sample_from_json(j, WHERE, &s, &err), 0, "%s", err.msg);
	cr_expect_str_eq(s.task_id, "7");
	cr_expect_eq(s.index, 3);
	cr_expect_str_eq(s.model, "m");
	cr_expect_eq(s.source, EE_SAMPLE_GENERATION);
	cr_expect_str_eq(s.text, "```py\nx\n```");
	cr_assert(json_is_object(s.extra));
	cr_expect_eq(json_object_size(s.extra), 2);
	cr_expect_eq(json_real_value(json_object_get(s.extra, "temperature")), 0.2);
	cr_expect(json_equal(json_object_get(s.extra, "meta"), json_object_get(j, "meta")));
	cr_expect_eq(json_object_size(j), 6, "the input is not modified");
	json_decref(j);
	/* extra is a copy: it outlives the input */
	cr_expect(json_is_array(json_object_get(json_object_get(s.extra, "meta"), "a")));
	ee_sample_free(&s);
	cr_expect(is_zeroed(&s, sizeof(s)));
	no_leaks();
}

Test(sample, sources_and_defaults)
{
	static const struct {
		const char *json;
		int source;
		const char *text;
	} cases[] = {
		{ "{'task_id': 'HumanEval/0', 'completion': '    return 1\\n'}", EE_SAMPLE_COMPLETION,
		  "    return 1\n" },
		{ "{'task_id': 'x', 'generation': ''}", EE_SAMPLE_GENERATION, "" },
		{ "{'task_id': 'x', 'code': 'print(1)', 'sample': 0}", EE_SAMPLE_CODE, "print(1)" },
		/* EvalPlus: a complete program, never copied to extra */
		{ "{'task_id': 'HumanEval/0', 'solution': 'def f(): pass'}", EE_SAMPLE_CODE,
		  "def f(): pass" },
	};
	for (size_t i = 0; i < COUNT(cases); i++) {
		json_t *j = fix(cases[i].json, 0);
		struct ee_sample s;
		struct ee_err err = { 0 };

		cr_assert_eq(ee_sample_from_json(j, WHERE, &s, &err), 0, "%s", err.msg);
		cr_expect_eq(s.source, cases[i].source, "%s", cases[i].json);
		cr_expect_str_eq(s.text, cases[i].text);
		cr_expect_eq(s.index, i == 2 ? 0 : -1, "%s", cases[i].json);
		cr_expect_null(s.model);
		cr_expect(json_is_object(s.extra) && json_object_size(s.extra) == 0);
		ee_sample_free(&s);
		json_decref(j);
	}
	no_leaks();
}

#define ONE_OF "completion, generation, code, solution: expected exactly one of these, found "

static const struct err_case sample_errors[] = {
	{ "[1]", 0, "expected a JSON object, got array" },
	{ "{'completion': 'x'}", 0, "task_id: missing (expected a string or an integer)" },
	{ "{'task_id': 1.5, 'completion': 'x'}", 0, "task_id: expected a string or an integer, got number" },
	{ "{'task_id': 'a', 'completion': 'x', 'sample': -1}", 0,
	  "sample: expected an integer >= 0, got -1" },
	{ "{'task_id': 'a', 'completion': 'x', 'sample': 1.0}", 0,
	  "sample: expected an integer >= 0, got number" },
	{ "{'task_id': 'a', 'completion': 'x', 'sample': '0'}", 0,
	  "sample: expected an integer >= 0, got string" },
	{ "{'task_id': 'a', 'completion': 'x', 'model': 1}", 0, "model: expected a string, got number" },
	{ "{'task_id': 'a'}", 0, ONE_OF "none" },
	{ "{'task_id': 'a', 'text': 'x'}", 0, ONE_OF "none" },
	{ "{'task_id': 'a', 'completion': 'x', 'code': 'y'}", 0, ONE_OF "completion and code" },
	{ "{'task_id': 'a', 'generation': 'x', 'code': 'y', 'completion': 'z'}", 0,
	  ONE_OF "completion, generation and code" },
	{ "{'task_id': 'a', 'completion': 'x', 'solution': 'y'}", 0, ONE_OF "completion and solution" },
	{ "{'task_id': 'a', 'solution': 2}", 0, "solution: expected a string, got number" },
	{ "{'task_id': 'a', 'completion': 1}", 0, "completion: expected a string, got number" },
	{ "{'task_id': 'a', 'code': 'x', 'generation': null}", 0, "generation: expected a string, got null" },
};

Test(sample, errors_name_their_field)
{
	for (size_t i = 0; i < COUNT(sample_errors); i++) {
		const struct err_case *tc = &sample_errors[i];
		json_t *j = fix(tc->json, 0);
		struct ee_sample s;
		struct ee_err err = { 0 };
		char want[256];

		memset(&s, 0xA5, sizeof(s));
		snprintf(want, sizeof(want), "%s: %s", WHERE, tc->want);
		cr_expect_eq(ee_sample_from_json(j, WHERE, &s, &err), -1, "%s", tc->json);
		cr_expect_eq(err.code, EE_ERR_USAGE, "%s", tc->json);
		cr_expect_str_eq(err.msg, want, "%s", tc->json);
		cr_expect(is_zeroed(&s, sizeof(s)), "%s: sample not zeroed", tc->json);
		json_decref(j);
	}
	no_leaks();
}

/* ---- The real data sets, whole, when present ------------------------------------ */

static FILE *open_dataset(const char *name, char *path, size_t size)
{
	const char *dir = getenv("EE_DATASETS");

	snprintf(path, size, "%s/%s", dir ? dir : "/work/shared/datasets", name);
	return fopen(path, "r");
}

/* Parses every line of a JSONL file as a task; returns the line count. */
static size_t each_task_line(const char *name, int want_format, int opts, size_t *hidden)
{
	char path[512];
	FILE *f = open_dataset(name, path, sizeof(path));
	char *line = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		cr_skip_test("%s absent", path);
	while (getline(&line, &cap, f) > 0) {
		json_error_t e;
		json_t *j = json_loads(line, 0, &e);
		struct ee_task t;
		struct ee_err err = { 0 };
		n++;
		cr_assert_not_null(j, "%s:%zu: %s", path, n, e.text);
		cr_assert_eq(ee_task_from_json(j, EE_FORMAT_AUTO | opts, path, &t, &err), 0, "%s", err.msg);
		cr_expect_eq(t.format, want_format, "%s:%zu", path, n);
		for (size_t i = 0; i < t.n_tests; i++)
			*hidden += (size_t)t.tests[i].hidden;
		ee_task_free(&t);
		json_decref(j);
	}
	free(line);
	fclose(f);
	return n;
}

Test(datasets, humaneval_whole_file)
{
	size_t hidden = 0;
	cr_expect_eq(each_task_line("humaneval/HumanEval.jsonl", EE_FORMAT_HUMANEVAL, 0, &hidden), 164);
	cr_expect_eq(hidden, 0);
	no_leaks();
}

Test(datasets, mbpp_whole_file)
{
	size_t hidden = 0;
	cr_expect_eq(each_task_line("mbpp/mbpp.jsonl", EE_FORMAT_MBPP, 0, &hidden), 974);
	cr_expect_eq(hidden, 0, "the standard protocol: test_list only");
	hidden = 0;
	cr_expect_eq(each_task_line("mbpp/mbpp.jsonl", EE_FORMAT_MBPP, EE_TASK_MBPP_CHALLENGE, &hidden), 974);
	cr_expect_eq(hidden, 16, "--mbpp-challenge: the 11 tasks' challenge_test_list");
	no_leaks();
}

Test(datasets, sanitized_mbpp_whole_file)
{
	char path[512];
	FILE *f = open_dataset("mbpp/sanitized-mbpp.json", path, sizeof(path));
	json_error_t e;
	size_t with_setup = 0;

	if (!f)
		cr_skip_test("%s absent", path);
	json_t *all = json_loadf(f, 0, &e);
	fclose(f);
	cr_assert(json_is_array(all), "%s: %s", path, e.text);
	cr_expect_eq(json_array_size(all), 427);
	for (size_t i = 0; i < json_array_size(all); i++) {
		struct ee_task t;
		struct ee_err err = { 0 };
		cr_assert_eq(ee_task_from_json(json_array_get(all, i), EE_FORMAT_AUTO, path, &t, &err), 0,
		             "%s", err.msg);
		cr_expect_eq(t.format, EE_FORMAT_MBPP);
		cr_expect_neq(t.prompt[0], '\0');
		with_setup += t.setup[0] != '\0';
		ee_task_free(&t);
	}
	cr_expect_eq(with_setup, 13, "test_imports non-empty for 13 tasks");
	json_decref(all);
	no_leaks();
}

Test(datasets, humaneval_example_samples)
{
	char path[512];
	FILE *f = open_dataset("humaneval/example_samples.jsonl", path, sizeof(path));
	char *line = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		cr_skip_test("%s absent", path);
	while (getline(&line, &cap, f) > 0) {
		json_t *j = json_loads(line, 0, NULL);
		struct ee_sample s;
		struct ee_err err = { 0 };
		cr_assert_eq(ee_sample_from_json(j, path, &s, &err), 0, "%s", err.msg);
		cr_expect_str_eq(s.task_id, "test/0");
		cr_expect_eq(s.source, EE_SAMPLE_COMPLETION);
		ee_sample_free(&s);
		json_decref(j);
		n++;
	}
	free(line);
	fclose(f);
	cr_expect_eq(n, 6);
	no_leaks();
}

/* ee_nearest_name: run --task-id's "did you mean", as the unknown keys'. */
Test(nearest, names_the_close_one_or_none)
{
	static const char *const ids[] = { "HumanEval/0", "HumanEval/1", "HumanEval/99", "HumanEval/100" };
	static const struct {
		const char *key, *want; /* want NULL: nothing close enough */
	} cases[] = {
		{ "HumanEval/999", "HumanEval/99" },
		{ "humaneval/1", "HumanEval/1" }, /* case does not count */
		{ "HumanEval/0", "HumanEval/0" },
		{ "MBPP/3", NULL },
		{ "", NULL },
		{ "HumanEval/1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		  NULL }, /* > 64 */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = ee_nearest_name(cases[i].key, ids, 4);
		if (cases[i].want)
			cr_expect(got && strcmp(got, cases[i].want) == 0, "%s: got %s", cases[i].key,
			          got ? got : "NULL");
		else
			cr_expect_null(got, "%s: got %s", cases[i].key, got);
	}
	cr_expect_null(ee_nearest_name("x", ids, 0));
}

/* ---- compare and the run's rules (task_rules.c) ------------------------ */

#define IO3                                                                                                  \
	"{'kind': 'io', 'stdin': 'aa', 'stdout': '1'}, {'kind': 'io', 'stdin': 'aaaa', 'stdout': '2'}, "     \
	"{'kind': 'call', 'fn': 'f', 'args': ['aaa'], 'expected': 3}, {'kind': 'io', 'stdin': 'aaaa', "      \
	"'stdout': '4'}"

Test(task, compare_of_the_task_beats_the_runs_which_beats_the_default)
{
	struct ee_task own, plain;
	struct ee_task_rules run = { .has_compare = 1 };

	load_task("{'task_id': 'a', 'compare': 'tokens:ci', 'tests': [" IO3 "]}", EE_FORMAT_AUTO, &own);
	load_task("{'task_id': 'b', 'tests': [" IO3 "]}", EE_FORMAT_AUTO, &plain);
	cr_expect(own.compare_given);
	cr_expect(own.tests[0].compare.rule == EE_CMP_TOKENS && own.tests[0].compare.ci);
	cr_expect(ee_compare_is_default(&plain.tests[0].compare), "native's default is lines");
	cr_assert_eq(ee_compare_parse("exact", &run.compare, NULL, 0), 0);
	cr_assert_eq(ee_task_apply_rules(&own, &run, NULL), 0);
	cr_assert_eq(ee_task_apply_rules(&plain, &run, NULL), 0);
	cr_expect_eq(own.tests[3].compare.rule, EE_CMP_TOKENS, "the task's own wins");
	cr_expect_eq(plain.tests[3].compare.rule, EE_CMP_EXACT, "the run's over the default");
	cr_expect_eq(plain.budget.max, 0, "no --max-tests: no budget");
	cr_expect_eq(plain.n_tests, 4);
	ee_task_free(&own);
	ee_task_free(&plain);
}

Test(task, max_tests_keeps_the_first_or_the_longest_in_task_order)
{
	struct ee_task first, longest, all;
	struct ee_task_rules two = { .max_tests = 2, .pick = EE_PICK_FIRST };

	load_task("{'task_id': 'a', 'tests': [" IO3 "]}", EE_FORMAT_AUTO, &first);
	load_task("{'task_id': 'a', 'tests': [" IO3 "]}", EE_FORMAT_AUTO, &longest);
	load_task("{'task_id': 'a', 'tests': [" IO3 "]}", EE_FORMAT_AUTO, &all);
	cr_assert_eq(ee_task_apply_rules(&first, &two, NULL), 0);
	cr_assert_eq(first.n_tests, 2);
	cr_expect_str_eq(first.tests[0].stdout_text, "1");
	cr_expect_str_eq(first.tests[1].stdout_text, "2");
	cr_expect(first.budget.max == 2 && first.budget.pick == EE_PICK_FIRST && first.budget.total == 4);
	/* inputs 2, 4, 7 (["aaa"]) and 4 bytes: the call, then the first of the two 4s */
	two.pick = EE_PICK_LONGEST;
	cr_assert_eq(ee_task_apply_rules(&longest, &two, NULL), 0);
	cr_assert_eq(longest.n_tests, 2);
	cr_expect_str_eq(longest.tests[0].stdout_text, "2", "task order kept");
	cr_expect_eq(longest.tests[1].kind, EE_TEST_CALL);
	cr_expect(longest.tests[0].task_index == 1 && longest.tests[1].task_index == 2);
	cr_expect(longest.budget.pick == EE_PICK_LONGEST && longest.budget.total == 4);
	two.max_tests = 10;
	cr_assert_eq(ee_task_apply_rules(&all, &two, NULL), 0);
	cr_expect(all.n_tests == 4 && all.budget.max == 10 && all.budget.total == 4,
	          "fewer than N: all kept");
	cr_expect_str_eq(ee_test_pick_name(EE_PICK_LONGEST), "longest");
	ee_task_free(&first);
	ee_task_free(&longest);
	ee_task_free(&all);
}
