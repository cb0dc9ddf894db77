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

/* Runs `src` (Python, statements) with py_writer and c_writer bound to the
 * two harnesses' _event_writer; returns the value of its `failures`. */
static PyObject *run_against_both_writers(const char *src)
{
	PyObject *py = harness(0), *c = harness(1);
	PyObject *py_fn = PyDict_GetItemString(py, "_event_writer");
	PyObject *c_fn = PyDict_GetItemString(c, "_event_writer");
	cr_assert(py_fn && c_fn);
	PyObject *ns = PyDict_New();
	cr_assert_not_null(ns);
	cr_assert_eq(PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()), 0);
	cr_assert_eq(PyDict_SetItemString(ns, "py_writer", py_fn), 0);
	cr_assert_eq(PyDict_SetItemString(ns, "c_writer", c_fn), 0);
	cr_assert_eq(PyDict_SetItemString(ns, "py_harness", py), 0);
	cr_assert_eq(PyDict_SetItemString(ns, "c_harness", c), 0);
	PyObject *r = PyRun_String(src, Py_file_input, ns, ns);
	if (!r)
		PyErr_Print();
	cr_assert_not_null(r);
	Py_DECREF(r);
	PyObject *failures = PyDict_GetItemString(ns, "failures");
	cr_assert_not_null(failures);
	Py_INCREF(failures);
	Py_DECREF(ns);
	Py_DECREF(py);
	Py_DECREF(c);
	return failures;
}

Test(zygote_native, event_writer_in_c_writes_the_bytes_of_the_python_one)
{
	PyObject *failures = run_against_both_writers(
	        "import os\n"
	        "def frames(make, harness, events):\n"
	        "    fd = os.memfd_create('events')\n"
	        "    emit = make(fd, 'n\\u00f6\"nce')\n"
	        "    errors = []\n"
	        "    for event, fallback in events:\n"
	        "        try:\n"
	        "            emit(event, fallback) if fallback is not None else emit(event)\n"
	        "        except Exception as exc:\n"
	        "            errors.append((type(exc).__name__, str(exc)))\n"
	        "    os.lseek(fd, 0, 0)\n"
	        "    data = b''\n"
	        "    while chunk := os.read(fd, 1 << 20):\n"
	        "        data += chunk\n"
	        "    os.close(fd)\n"
	        "    return data, errors\n"
	        "def events(h):\n"
	        "    raw = h['_Raw']\n"
	        "    big = 'x' * (h['_MAX_FRAME'] + 1)\n"
	        "    return [\n"
	        "        ({'ev': 'hello', 'python': '3.11.2'}, None),\n"
	        "        ({'ev': 'test', 'index': 0, 'status': 'pass', 'duration_ms': 0.125}, None),\n"
	        "        ({'s': 'q\"b\\\\s\\n\\r\\t\\x00\\x01\\x1f\\x7f \\u00e9 \\u4e2d \\U0001f600 \\ud800 "
	        "\\udfff'}, None),\n"
	        "        ({'k\"\\n': '', '': [], 'e': {}}, None),\n"
	        "        ({'n': None, 't': True, 'f': False, 'i': -12, 'b': 10 ** 40, 'z': 0}, None),\n"
	        "        ({'x': [1.5, 1e300, -0.0, float('inf'), float('nan'), 1e-7, 3.0]}, None),\n"
	        "        ({'raw': raw('{\"int\":\"3\"}'), 'nested': [[{'a': [raw('[1]'), '\\ud83d']}]]}, "
	        "None),\n"
	        "        ({'big': big}, {'ev': 'test', 'status': 'too_large'}),\n"
	        "        ({'big': big}, None),\n"
	        "        ({'big': big}, {'big': big}),\n"
	        "        ({'tuple': (1, 2)}, None),\n"
	        "        ({'sub': type('S', (str,), {})('no')}, None),\n"
	        "        ({'after': 'errors'}, None),\n"
	        "    ]\n"
	        "want = frames(py_writer, py_harness, events(py_harness))\n"
	        "got = frames(c_writer, c_harness, events(c_harness))\n"
	        "failures = []\n"
	        "if want[0] != got[0]:\n"
	        "    at = next(i for i in range(min(len(want[0]), len(got[0])) + 1) if want[0][i:i+1] != "
	        "got[0][i:i+1])\n"
	        "    failures.append(('bytes differ at', at, want[0][at - 40:at + 40], got[0][at - 40:at + "
	        "40]))\n"
	        "if want[1] != got[1]:\n"
	        "    failures.append(('errors differ', want[1], got[1]))\n"
	        "if len(want[1]) != 4:\n"
	        "    failures.append(('the cases meant to fail did not', want[1]))\n"
	        "if want[0].count(b'\"seq\":') != 9:\n"
	        "    failures.append(('events written', want[0].count(b'\"seq\":')))\n");
	cr_expect_eq(PyList_Size(failures), 0, "C and Python writers differ: %s",
	             PyUnicode_AsUTF8(PyObject_Repr(failures)));
	Py_DECREF(failures);
}

Test(zygote_native, event_writer_in_c_leaves_quietly_in_a_forked_process)
{
	PyObject *failures = run_against_both_writers(
	        "import os\n"
	        "failures = []\n"
	        "for make in (py_writer, c_writer):\n"
	        "    r, w = os.pipe()\n"
	        "    emit = make(w, 'n')\n"
	        "    pid = os.fork()\n"
	        "    if pid == 0:\n"
	        "        emit({'ev': 'done'})\n"
	        "        os._exit(3)\n"
	        "    _, status = os.waitpid(pid, 0)\n"
	        "    os.close(w)\n"
	        "    if os.waitstatus_to_exitcode(status) != 0 or os.read(r, 100) != b'':\n"
	        "        failures.append(make)\n"
	        "    os.close(r)\n");
	cr_expect_eq(PyList_Size(failures), 0, "a forked child wrote an event or did not exit 0");
	Py_DECREF(failures);
}

/* _c_unix_gc_kick runs the kernel's collector, which ends a socket kept in
 * flight by a cycle (on a busy host another process's release may run it
 * first: this shows the kick works, not that it was needed); it takes no
 * argument. */
Test(zygote_native, unix_gc_kick_ends_a_socket_in_flight_in_a_cycle)
{
	PyObject *g = harness(1);
	PyObject *kick = PyDict_GetItemString(g, "_c_unix_gc_kick");
	cr_assert(kick && PyCFunction_Check(kick));
	PyObject *r = PyRun_String("import array, os, socket, time\n"
	                           "name = '\\0execeval-unit-gc-%d' % os.getpid()\n"
	                           "def listed():\n"
	                           "    with open('/proc/net/unix') as f:\n"
	                           "        return '@' + name[1:] in f.read()\n"
	                           "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
	                           "s.bind(name)\n"
	                           "s.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, "
	                           "array.array('i', [s.fileno()]))], 0, name)\n"
	                           "os.close(s.detach())\n"
	                           "in_flight = listed()\n"
	                           "kicked = _c_unix_gc_kick()\n"
	                           "end = time.monotonic() + 1\n"
	                           "while listed() and time.monotonic() < end:\n"
	                           "    time.sleep(0.001)\n"
	                           "collected = not listed()\n"
	                           "try:\n"
	                           "    _c_unix_gc_kick(1)\n"
	                           "    refused = False\n"
	                           "except TypeError:\n"
	                           "    refused = True\n",
	                           Py_file_input, g, g);
	if (!r)
		PyErr_Print();
	cr_assert_not_null(r);
	Py_DECREF(r);
	cr_assert(PyObject_IsTrue(PyDict_GetItemString(g, "in_flight")), "the cycle keeps the socket listed");
	cr_assert(PyObject_IsTrue(PyDict_GetItemString(g, "kicked")));
	cr_assert(PyObject_IsTrue(PyDict_GetItemString(g, "collected")), "the collector ended it");
	cr_assert(PyObject_IsTrue(PyDict_GetItemString(g, "refused")), "no argument taken");
}
