/* fuzz_pyassert_python.c - the literal-assert reader against CPython itself.
 *
 * --strict-asserts must never change an honest candidate's verdict, so an
 * assert the C reader converts must be one CPython compiles, of exactly the
 * shape `NAME(LITERALS) == LITERAL` (either way round), with the same name,
 * the same arguments and keywords in order and the same expected value.
 * The input is one test's code (up to its first NUL byte; a task's strings
 * are UTF-8, so other input is skipped). Whenever ee_pyassert_convert
 * accepts it, the embedded interpreter checks it with ast and compile()
 * exactly as the harness compiles a test; any disagreement aborts with the
 * reason. The same for ee_pyprogram_convert and a check program: every
 * call it takes must be an assert of that program, in order. */
#include <Python.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyvalue/pyliteral.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

/* The interpreter's own allocations live until exit; they are not leaks of
 * the code under test. */
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

/* Python's view of a converted assert or program: returns None when it
 * agrees, else the reason. conv is the C reader's JSON: {"fn", "calls":
 * [{"args", "kwargs", "expected"}, ...], "program": bool}. */
static const char ORACLE[] =
        "import ast, json\n"
        "def canon(v):\n"
        "    t = type(v)\n"
        "    if v is None or t is bool or t is str: return v\n"
        "    if t is int: return {'int': str(v)}\n"
        "    if t is float: return {'float': repr(v)}\n"
        "    if t in (list, tuple): return {t.__name__: [canon(x) for x in v]}\n"
        "    if t in (set, frozenset): return {t.__name__: sorted((canon(x) for x in v), key=json.dumps)}\n"
        "    if t is dict: return {'dict': [[canon(k), canon(x)] for k, x in v.items()]}\n"
        "    return {'other': t.__name__}\n"
        "def norm(c):\n"
        "    if type(c) is dict:\n"
        "        (tag, val), = c.items()\n"
        "        if tag in ('set', 'frozenset'): return {tag: sorted((norm(x) for x in val), "
        "key=json.dumps)}\n"
        "        if tag in ('list', 'tuple'): return {tag: [norm(x) for x in val]}\n"
        "        if tag == 'dict': return {tag: [[norm(k), norm(x)] for k, x in val]}\n"
        "    return c\n"
        "def lit(node):\n"
        "    return canon(ast.literal_eval(node))\n"
        "def same(c, node, what):\n"
        "    try: py = lit(node)\n"
        "    except Exception as e: return '%s: Python reads no literal (%r)' % (what, e)\n"
        "    if json.dumps(py) != json.dumps(norm(c)):\n"
        "        return '%s: C %s, Python %s' % (what, json.dumps(norm(c)), json.dumps(py))\n"
        "def one(st, fn, call):\n"
        "    if type(st) is not ast.Assert: return 'not an assert'\n"
        "    if st.msg is not None:\n"
        "        try: ast.literal_eval(st.msg)\n"
        "        except Exception: return 'message is not a literal'\n"
        "    t = st.test\n"
        "    if type(t) is not ast.Compare or len(t.ops) != 1 or type(t.ops[0]) is not ast.Eq: return 'not "
        "one =='\n"
        "    for c, e in ((t.left, t.comparators[0]), (t.comparators[0], t.left)):\n"
        "        if type(c) is ast.Call and type(c.func) is ast.Name and c.func.id == fn:\n"
        "            if len(c.args) != len(call['args']) or len(c.keywords) != len(call['kwargs']):\n"
        "                return 'argument count'\n"
        "            for i, (a, ca) in enumerate(zip(c.args, call['args'])):\n"
        "                if type(a) is ast.Starred: return 'starred argument'\n"
        "                r = same(ca, a, 'argument %d' % i)\n"
        "                if r: return r\n"
        "            for k, (name, cv) in zip(c.keywords, call['kwargs']):\n"
        "                if k.arg != name: return 'keyword %r is %r in Python' % (name, k.arg)\n"
        "                r = same(cv, k.value, 'keyword ' + name)\n"
        "                if r: return r\n"
        "            return same(call['expected'], e, 'expected')\n"
        "    return 'no call of %s' % fn\n"
        "def oracle(code, conv):\n"
        "    conv = json.loads(conv)\n"
        "    try:\n"
        "        tree = ast.parse(code)\n"
        "        compile(code, '<fuzz>', 'exec', dont_inherit=True)\n"
        "    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:\n"
        "        return 'Python refuses it: %r' % e\n"
        "    if not conv['program']:\n"
        "        if len(tree.body) != 1: return '%d statements' % len(tree.body)\n"
        "        return one(tree.body[0], conv['fn'], conv['calls'][0])\n"
        "    defs = [s for s in tree.body if type(s) is ast.FunctionDef]\n"
        "    if len(defs) != 1: return '%d defs' % len(defs)\n"
        "    d = defs[0]\n"
        "    if len(d.args.args) != 1: return 'parameters'\n"
        "    def noop(s):\n"
        "        try: return bool(ast.literal_eval(s.test))\n"
        "        except Exception: return False\n"
        "    asserts = [s for s in d.body if type(s) is ast.Assert and not noop(s)]\n"
        "    if len(asserts) != len(conv['calls']): return '%d asserts, %d calls' % (len(asserts), "
        "len(conv['calls']))\n"
        "    last = tree.body[-1]\n"
        "    if type(last) is not ast.Expr or type(last.value) is not ast.Call or len(last.value.args) != 1 "
        "\\\n"
        "            or type(last.value.args[0]) is not ast.Name or last.value.args[0].id != conv['fn']:\n"
        "        return 'the final call'\n"
        "    for st, call in zip(asserts, conv['calls']):\n"
        "        r = one(st, d.args.args[0].arg, call)\n"
        "        if r: return 'line %d: %s' % (st.lineno, r)\n";

static PyObject *oracle;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	PyConfig config;

	PyConfig_InitIsolatedConfig(&config);
	config.site_import = 0;
	PyStatus st = Py_InitializeFromConfig(&config);
	PyConfig_Clear(&config);
	if (PyStatus_Exception(st))
		abort();
	PyObject *ns = PyDict_New();
	PyObject *done = ns ? PyRun_String(ORACLE, Py_file_input, ns, ns) : NULL;
	oracle = done ? PyDict_GetItemString(ns, "oracle") : NULL;
	if (!oracle) {
		PyErr_Print();
		abort();
	}
	Py_INCREF(oracle);
	Py_DECREF(done);
	Py_DECREF(ns);
	return 0;
}

static void ask_python(const char *code, json_t *conv)
{
	char *text = json_dumps(conv, JSON_COMPACT);
	PyObject *src = PyUnicode_DecodeUTF8(code, (Py_ssize_t)strlen(code), "strict");
	PyObject *arg = text ? PyUnicode_FromString(text) : NULL;
	PyObject *why = src && arg ? PyObject_CallFunctionObjArgs(oracle, src, arg, NULL) : NULL;

	if (!why) {
		PyErr_Print();
		abort();
	}
	if (why != Py_None) {
		fprintf(stderr, "converted, but %s\ncode: %s\nC: %s\n", PyUnicode_AsUTF8(why), code, text);
		abort();
	}
	Py_DECREF(why);
	Py_DECREF(arg);
	Py_DECREF(src);
	free(text);
}

static void check_assert(const char *code)
{
	struct ee_pycall c;

	if (ee_pyassert_convert(code, &c) == 1) {
		json_t *call =
		        json_pack("{sOsOsO}", "args", c.args, "kwargs", c.kwargs, "expected", c.expected);
		json_t *conv = json_pack("{sss[o]sb}", "fn", c.fn, "calls", call, "program", 0);
		if (!conv)
			abort();
		ask_python(code, conv);
		json_decref(conv);
	}
	ee_pycall_free(&c);
}

static void check_program(const char *code)
{
	struct ee_pyprogram p;

	if (ee_pyprogram_convert(code, &p) == 1) {
		json_t *conv = json_pack("{sssOsb}", "fn", p.fn, "calls", p.calls, "program", 1);
		if (!conv)
			abort();
		ask_python(code, conv);
		json_decref(conv);
	}
	ee_pyprogram_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nul = memchr(data, '\0', size);
	size_t n = nul ? (size_t)(nul - (const char *)data) : size;
	char *code = malloc(n + 1);

	if (!code)
		return 0;
	memcpy(code, data, n);
	code[n] = '\0';
	PyObject *utf8 = PyUnicode_DecodeUTF8(code, (Py_ssize_t)n, "strict");
	if (utf8) {
		Py_DECREF(utf8);
		check_assert(code);
		check_program(code);
	} else {
		PyErr_Clear();
	}
	free(code);
	return 0;
}
