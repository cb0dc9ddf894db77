/* zygote_native.c - the harness's helpers in C (see zygote_native.h). */
#define PY_SSIZE_T_CLEAN
#include "sandbox/zygote_native.h"

/* _c_loaded_under(modules, tops): the keys of the dict `modules`, in order,
 * that are not exact str or whose part before the first "." is in the
 * frozenset `tops`: as _loaded_under in policy.py. */
static PyObject *loaded_under(PyObject *self, PyObject *args)
{
	PyObject *modules, *tops, *key, *value;
	Py_ssize_t pos = 0;

	(void)self;
	if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &modules, &PyFrozenSet_Type, &tops))
		return NULL;
	PyObject *out = PyList_New(0);
	if (!out)
		return NULL;
	while (PyDict_Next(modules, &pos, &key, &value)) {
		int hit = 1;
		if (PyUnicode_CheckExact(key)) {
			Py_ssize_t dot = PyUnicode_FindChar(key, '.', 0, PyUnicode_GET_LENGTH(key), 1);
			if (dot == -2)
				goto fail;
			if (dot < 0) {
				hit = PySet_Contains(tops, key);
			} else {
				PyObject *top = PyUnicode_Substring(key, 0, dot);
				hit = top ? PySet_Contains(tops, top) : -1;
				Py_XDECREF(top);
			}
		}
		if (hit < 0 || (hit && PyList_Append(out, key) < 0))
			goto fail;
	}
	return out;
fail:
	Py_DECREF(out);
	return NULL;
}

static PyMethodDef loaded_under_def = {
	"_c_loaded_under",
	loaded_under,
	METH_VARARGS,
	"The keys of modules that are not str or whose top-level name is in tops.",
};

int ee_zygote_add_native(PyObject *globals)
{
	PyObject *fn = PyCFunction_New(&loaded_under_def, NULL);
	int rc = fn ? PyDict_SetItemString(globals, "_c_loaded_under", fn) : -1;
	Py_XDECREF(fn);
	return rc;
}
