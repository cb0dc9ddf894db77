/* task_strict.c - --strict-asserts (task.h): tests of a known shape
 * (an assert of literals, a check program) become calls the supervisor
 * judges itself, and who judges each test.
 */
#include <stdlib.h>

#include "base/err.h"
#include "pyvalue/pyliteral.h"
#include "input/task.h"

/* A program test of the check-program shape: 1 converted, 0 left alone. */
static int strict_program(struct ee_test *test)
{
	struct ee_pyprogram prog;
	int rc = ee_pyprogram_convert(test->code, &prog);

	if (rc <= 0)
		return rc;
	free(test->fn);
	json_decref(test->calls);
	test->fn = prog.fn;
	test->calls = prog.calls;
	test->strict = 1;
	return 1;
}

/* An assert test of the literal shape: 1 converted, 0 left alone. */
static int strict_assert(struct ee_test *test)
{
	struct ee_pycall call;
	int rc = ee_pyassert_convert(test->code, &call);

	if (rc <= 0)
		return rc;
	json_decref(test->args);
	json_decref(test->kwargs);
	json_decref(test->expected);
	free(test->fn);
	test->fn = call.fn;
	test->args = call.args;
	test->kwargs = call.kwargs;
	test->expected = call.expected;
	test->strict = 1;
	return 1;
}

int ee_task_strict_asserts(struct ee_task *t, struct ee_err *err)
{
	int converted = 0;

	t->strict_asserts = 1;
	for (size_t i = 0; i < t->n_tests; i++) {
		struct ee_test *test = &t->tests[i];
		int rc = test->strict                    ? 0
		         : test->kind == EE_TEST_PROGRAM ? strict_program(test)
		         : test->kind == EE_TEST_ASSERT  ? strict_assert(test)
		                                         : 0;
		if (rc < 0)
			return ee_fail(err, EE_ERR_USAGE, "%s: tests[%zu]: out of memory", t->task_id, i);
		converted += rc;
	}
	return converted;
}

int ee_test_judging(const struct ee_test *t)
{
	if (t->strict)
		return t->calls ? EE_JUDGE_PYEQ_CALLS : EE_JUDGE_PYEQ;
	if (t->kind == EE_TEST_IO)
		return EE_JUDGE_IO;
	return t->kind == EE_TEST_CALL ? EE_JUDGE_VALUE : EE_JUDGE_SANDBOX;
}

int ee_test_judged_by_supervisor(const struct ee_test *t)
{
	return ee_test_judging(t) != EE_JUDGE_SANDBOX;
}
