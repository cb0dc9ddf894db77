/* test_pyprogram.c - the check-program shape (pyliteral.h,
 * ee_pyprogram_convert): which `program` tests become supervisor-judged
 * calls, and which calls and expected values are read from them.
 *
 * The table in pyprogram_cases.h comes from Python's ast
 * (tests/unit/pyprogram_ref.py): every HumanEval test program as execeval
 * runs it, then hostile ones (tabs, mixed indentation, defaults,
 * decorators, a second def, nested defs, global, huge and deep programs). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "protocol/job.h"
#include "pyvalue/judge.h"
#include "pyvalue/pyliteral.h"
#include "input/task.h"

struct prog_case {
	const char *name;
	const char *code;
	const char *fn;    /* Python's entry name; NULL: not of the shape */
	const char *calls; /* Python's calls, canonical JSON */
	int has_set;       /* set order may differ: compare with == only */
};

#include "pyprogram_cases.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Python's == on two canonical values, lists of them, or [name, value]
 * pairs (kwargs), position by position. */
static bool same(const json_t *a, const json_t *b)
{
	char why[256];

	if (json_is_array(a) && json_is_array(b)) {
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!same(json_array_get(a, i), json_array_get(b, i)))
				return false;
		return true;
	}
	if (json_is_string(a) && json_is_string(b)) /* a str value, or a keyword's name */
		return json_equal(a, b);
	return ee_judge_pyeq(a, b, why, sizeof(why));
}

static void check_case(const struct prog_case *c)
{
	struct ee_pyprogram p;
	int rc = ee_pyprogram_convert(c->code, &p);

	if (!c->fn) {
		cr_expect_eq(rc, 0, "%s: converted, Python's shape says no", c->name);
		cr_expect_null(p.fn);
		ee_pyprogram_free(&p);
		return;
	}
	cr_assert_eq(rc, 1, "%s: refused, Python's shape says yes", c->name);
	cr_expect_str_eq(p.fn, c->fn, "%s", c->name);
	json_error_t e;
	json_t *want = json_loads(c->calls, JSON_ALLOW_NUL, &e);
	cr_assert(want, "bad JSON in the table: %s", e.text);
	if (!c->has_set) {
		char *got = json_dumps(p.calls, JSON_COMPACT);
		cr_expect(json_equal(p.calls, want), "%s: got %s", c->name, got);
		free(got);
	}
	cr_expect_eq(json_array_size(p.calls), json_array_size(want), "%s", c->name);
	for (size_t i = 0; i < json_array_size(want); i++) {
		const json_t *g = json_array_get(p.calls, i), *w = json_array_get(want, i);
		cr_expect(same(json_object_get(g, "args"), json_object_get(w, "args")) &&
		                  same(json_object_get(g, "kwargs"), json_object_get(w, "kwargs")) &&
		                  same(json_object_get(g, "expected"), json_object_get(w, "expected")),
		          "%s: call %zu differs", c->name, i);
	}
	json_decref(want);
	ee_pyprogram_free(&p);
}

Test(pyprogram, agrees_with_python_on_every_case)
{
	size_t converted = 0, humaneval = 0;

	for (size_t i = 0; i < COUNT(prog_cases); i++) {
		check_case(&prog_cases[i]);
		if (strncmp(prog_cases[i].name, "HumanEval/", 10) == 0) {
			humaneval++;
			converted += prog_cases[i].fn != NULL;
		}
	}
	/* 164 when the build found HumanEval (the Makefile), else 0. */
	cr_expect_eq(humaneval, PROG_HUMANEVAL_TOTAL);
	cr_expect_eq(converted, PROG_HUMANEVAL_CONVERTED);
	if (!humaneval)
		cr_log_warn("HumanEval not found at build time: hostile programs only");
}

static char *repeat(const char *head, const char *unit, size_t times, const char *tail)
{
	size_t hn = strlen(head), un = strlen(unit), tn = strlen(tail);
	char *s = malloc(hn + un * times + tn + 1);
	cr_assert(s);
	memcpy(s, head, hn);
	for (size_t i = 0; i < times; i++)
		memcpy(s + hn + i * un, unit, un);
	memcpy(s + hn + un * times, tail, tn + 1);
	return s;
}

static int convert(const char *code)
{
	struct ee_pyprogram p;
	int rc = ee_pyprogram_convert(code, &p);
	ee_pyprogram_free(&p);
	return rc;
}

Test(pyprogram, hostile_input_is_bounded)
{
	const char *head = "def check(candidate):\n";
	char *s;

	/* deep nesting in an argument: refused, not a stack overflow */
	s = repeat("def check(c):\n    assert c(", "[", 200000, ") == 1\ncheck(f)\n");
	cr_expect_eq(convert(s), 0);
	free(s);
	/* EE_PYPROG_MAX_CALLS calls convert, one more does not */
	s = repeat(head, "    assert candidate(1) == 1\n", EE_PYPROG_MAX_CALLS, "check(f)\n");
	cr_expect_eq(convert(s), 1);
	free(s);
	s = repeat(head, "    assert candidate(1) == 1\n", EE_PYPROG_MAX_CALLS + 1, "check(f)\n");
	cr_expect_eq(convert(s), 0);
	free(s);
	/* over EE_PYLIT_MAX_CODE bytes: refused unread */
	s = repeat(head, "    # padding padding padding\n", EE_PYLIT_MAX_CODE / 30 + 1,
	           "    assert candidate(1) == 1\ncheck(f)\n");
	cr_expect_eq(convert(s), 0);
	free(s);
	/* a million blank lines, a million-space indentation */
	s = repeat(head, "\n", 1000, "    assert candidate(1) == 1\ncheck(f)\n");
	cr_expect_eq(convert(s), 1);
	free(s);
	s = repeat(head, " ", 1000000, "assert candidate(1) == 1\ncheck(f)\n");
	cr_expect_eq(convert(s), 0);
	free(s);
	cr_expect_eq(convert(NULL), 0);
	cr_expect_eq(convert(""), 0);
}

Test(pyprogram, reads_calls_in_order_with_keywords_and_messages)
{
	struct ee_pyprogram p;
	const char *code = "M = {'a': [1, 2]}\n\n"
	                   "def check(cand):\n"
	                   "    \"\"\"doc\"\"\"\n"
	                   "    assert cand(1, k=(2,)) == 3, 'first'\n"
	                   "    assert True\n"
	                   "    assert {1: 2} == cand('x')\n"
	                   "\ncheck(solve)\n";

	cr_assert_eq(ee_pyprogram_convert(code, &p), 1);
	cr_expect_str_eq(p.fn, "solve");
	char *text = json_dumps(p.calls, JSON_COMPACT | JSON_SORT_KEYS);
	cr_expect_str_eq(text,
	                 "[{\"args\":[{\"int\":\"1\"}],\"expected\":{\"int\":\"3\"},"
	                 "\"kwargs\":[[\"k\",{\"tuple\":[{\"int\":\"2\"}]}]]},"
	                 "{\"args\":[\"x\"],\"expected\":{\"dict\":[[{\"int\":\"1\"},{\"int\":\"2\"}]]},"
	                 "\"kwargs\":[]}]");
	free(text);
	ee_pyprogram_free(&p);
	ee_pyprogram_free(&p); /* a freed program is zeroed: freeing again is harmless */
}

/* A HumanEval task: its one program test converts in place (kind, index,
 * weight kept) and its job carries the entry name and the arguments, never
 * the program's code nor an expected value. */
Test(pyprogram, a_humaneval_task_converts_and_its_job_holds_no_expected_value)
{
	const char *line =
	        "{\"task_id\":\"HumanEval/x\",\"prompt\":\"def add(a, b):\\n\",\"entry_point\":\"add\","
	        "\"test\":\"METADATA = {}\\n\\ndef check(candidate):\\n"
	        "    assert candidate(1, 2) == 31337\\n    assert candidate(2, b=2) == 'sekrit'\\n\"}";
	json_error_t jerr;
	struct ee_err err;
	struct ee_task task;
	json_t *o = json_loads(line, 0, &jerr);

	cr_assert(o, "%s", jerr.text);
	cr_assert_eq(ee_task_from_json(o, EE_FORMAT_AUTO, "he.jsonl:1", &task, &err), 0, "%s", err.msg);
	json_decref(o);
	cr_assert_eq(ee_task_strict_asserts(&task, &err), 1);
	cr_assert_eq(task.n_tests, 1);
	const struct ee_test *t = &task.tests[0];
	cr_expect_eq(t->kind, EE_TEST_PROGRAM);
	cr_expect(t->strict && ee_test_judged_by_supervisor(t));
	cr_expect_str_eq(t->fn, "add");
	cr_expect_eq(json_array_size(t->calls), 2);
	cr_expect_eq(ee_task_strict_asserts(&task, &err), 0, "converting twice changes nothing");

	struct ee_job_spec spec = { .task = &task,
		                    .program = "def add(a, b):\n    return a + b\n",
		                    .nonce = "0123456789abcdef0123456789abcdef" };
	size_t len;
	char *job = ee_job_build(&spec, &len);
	cr_assert(job);
	cr_expect(strstr(job, "\"kind\":\"calls\"") && strstr(job, "\"fn\":\"add\""), "%s", job);
	cr_expect(strstr(job, "[[\"b\",{\"int\":\"2\"}]]"), "%s", job);
	cr_expect_null(strstr(job, "31337"), "an expected value entered the job: %s", job);
	cr_expect_null(strstr(job, "sekrit"), "an expected value entered the job: %s", job);
	cr_expect_null(strstr(job, "check"), "the program's code entered the job: %s", job);
	free(job);
	ee_task_free(&task);
}
