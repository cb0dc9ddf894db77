/* test_zygote_native.c - the harness's helpers in C (zygote_native.h) give
 * what the harness's Python versions give. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <criterion/criterion.h>

#include "harness/harness.h"
#include "sandbox/zygote_native.h"

/* The interpreter keeps objects to its end by design. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpython";
}

/* The harness module run from its source form, with or without the C helpers. */
static PyObject *harness(int native)
{
	PyObject *g = PyDict_New();
	cr_assert_not_null(g);
	cr_assert_eq(PyDict_SetItemString(g, "__name__", PyUnicode_FromString("execeval_harness")), 0);
	cr_assert_eq(PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()), 0);
	if (native)
		cr_assert_eq(ee_zygote_add_native(g), 0);
	PyObject *r = PyRun_String(ee_harness_py, Py_file_input, g, g);
	if (!r)
		PyErr_Print();
	cr_assert_not_null(r);
	Py_DECREF(r);
	return g;
}

static void init(void)
{
	Py_InitializeEx(0);
}

static void fini(void)
{
	Py_FinalizeEx();
}

TestSuite(zygote_native, .init = init, .fini = fini);

Test(zygote_native, loaded_under_is_the_harness_own_function_in_c)
{
	PyObject *py = harness(0), *c = harness(1);
	PyObject *py_fn = PyDict_GetItemString(py, "_loaded_under");
	PyObject *c_fn = PyDict_GetItemString(c, "_loaded_under");
	cr_assert(py_fn && c_fn && PyFunction_Check(py_fn) && PyCFunction_Check(c_fn),
	          "the warm harness uses the C helper, a cold one its own");

	/* sys.modules, and keys of every kind sys.modules could hold. */
	PyObject *cases = PyRun_String("[(__import__('sys').modules,\n"
	                               "  frozenset(['os', 'json', 'collections', 'nope'])),\n"
	                               " ({'a': 1, 'a.b': 2, 'ab': 3, 'b.a': 4, '': 5, '.a': 6,\n"
	                               "   'a.': 7, 'a..b': 8, '\\u00e9.x': 9, 'x.y.z': 10,\n"
	                               "   type('S', (str,), {})('zz'): 11, 7: 12, ('a',): 13},\n"
	                               "  frozenset(['a', '', '\\u00e9', 'x'])),\n"
	                               " ({'a': 1, 'a.b': 2}, frozenset())]\n",
	                               Py_eval_input, py, py);
	cr_assert_not_null(cases);
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(cases); i++) {
		PyObject *args = PyList_GET_ITEM(cases, i);
		PyObject *want = PyObject_CallObject(py_fn, args), *got = PyObject_CallObject(c_fn, args);
		cr_assert(want && got);
		cr_expect_eq(PyObject_RichCompareBool(want, got, Py_EQ), 1, "case %zd: C and Python differ",
		             i);
		if (i == 0)
			cr_expect_geq(PyList_GET_SIZE(got), 2, "sys.modules holds os and os.path at least");
		Py_DECREF(want);
		Py_DECREF(got);
	}
	Py_DECREF(cases);

	/* Wrong types raise, as the Python version would fail on them. */
	PyObject *bad = PyObject_CallFunction(c_fn, "(OO)", Py_None, Py_None);
	cr_expect_null(bad);
	cr_expect(PyErr_ExceptionMatches(PyExc_TypeError));
	PyErr_Clear();
	Py_DECREF(py);
	Py_DECREF(c);
}
