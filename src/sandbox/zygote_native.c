/* zygote_native.c - the harness's helpers in C (see zygote_native.h). */
#define PY_SSIZE_T_CLEAN
#include "sandbox/zygote_native.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/cgroup.h"

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

/* ---- the event writer ---------------------------------------------------
 *
 * _c_event_writer(fd, nonce, raw_type, error_type, max_frame) returns
 * emit(event, fallback=None), the C twin of events.py's _event_writer: the
 * same bytes for the same event (its JSON text, UTF-8 with a lone surrogate
 * written as "?", framed as a netstring), the same fallback and frame limit,
 * the same quiet exit in a process the candidate forked. The Python encoder
 * builds a str per value and per member; this one writes into one buffer
 * and touches no object but the event's own, so a warm candidate copies
 * far fewer of the worker's pages. */

struct out {
	char *data;  /* inline or heap */
	size_t len;  /* bytes the text has, kept or not */
	size_t cap;  /* bytes kept at most: past it only len grows */
	size_t size; /* data's size */
	char inline_data[2048];
};

static void out_init(struct out *o, size_t cap)
{
	o->data = o->inline_data;
	o->len = 0;
	o->cap = cap;
	o->size = sizeof(o->inline_data);
}

static void out_free(struct out *o)
{
	if (o->data != o->inline_data)
		PyMem_RawFree(o->data);
	o->data = o->inline_data;
}

/* Appends n bytes; past the cap the length still counts them (the frame
 * limit is checked on the whole text, as the Python encoder does). */
static int out_put(struct out *o, const char *s, size_t n)
{
	size_t keep = o->len >= o->cap ? 0 : (o->cap - o->len < n ? o->cap - o->len : n);
	if (keep && o->len + keep > o->size) {
		size_t size = o->size;
		while (size < o->len + keep)
			size *= 2;
		char *p = PyMem_RawMalloc(size);
		if (!p) {
			PyErr_NoMemory();
			return -1;
		}
		memcpy(p, o->data, o->len);
		out_free(o);
		o->data = p;
		o->size = size;
	}
	if (keep)
		memcpy(o->data + o->len, s, keep);
	o->len += n;
	return 0;
}

#define OUT_LIT(o, lit) out_put((o), (lit), sizeof(lit) - 1)

/* The two-character escapes of events.py's _ESCAPES, or NULL (then \u00XX). */
static const char *json_escape(Py_UCS4 c)
{
	switch (c) {
	case '"': return "\\\"";
	case '\\': return "\\\\";
	case '\n': return "\\n";
	case '\r': return "\\r";
	case '\t': return "\\t";
	default: return NULL;
	}
}

/* A str's characters as UTF-8, escaped as events.py's _ESCAPES when
 * `escape`; a surrogate, which UTF-8 cannot hold, is "?" ("replace"). */
static int out_text(struct out *o, PyObject *s, int escape)
{
	int kind = PyUnicode_KIND(s);
	const void *data = PyUnicode_DATA(s);
	Py_ssize_t n = PyUnicode_GET_LENGTH(s);
	char b[8];

	for (Py_ssize_t i = 0; i < n; i++) {
		Py_UCS4 c = PyUnicode_READ(kind, data, i);
		size_t len = 0;
		if (escape && (c < 0x20 || c == '"' || c == '\\')) {
			const char *short_form = json_escape(c);
			if (short_form) {
				len = strlen(short_form);
				memcpy(b, short_form, len);
			} else {
				len = (size_t)snprintf(b, sizeof(b), "\\u%04x", (unsigned)c);
			}
		} else if (c < 0x80) {
			b[0] = (char)c;
			len = 1;
		} else if (c < 0x800) {
			b[0] = (char)(0xC0 | (c >> 6));
			b[1] = (char)(0x80 | (c & 0x3F));
			len = 2;
		} else if (c >= 0xD800 && c <= 0xDFFF) {
			b[0] = '?';
			len = 1;
		} else if (c < 0x10000) {
			b[0] = (char)(0xE0 | (c >> 12));
			b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
			b[2] = (char)(0x80 | (c & 0x3F));
			len = 3;
		} else {
			b[0] = (char)(0xF0 | (c >> 18));
			b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
			b[2] = (char)(0x80 | ((c >> 6) & 0x3F));
			b[3] = (char)(0x80 | (c & 0x3F));
			len = 4;
		}
		if (out_put(o, b, len) < 0)
			return -1;
	}
	return 0;
}

static int out_json_str(struct out *o, PyObject *s)
{
	if (!PyUnicode_Check(s)) { /* str.translate(s, ...) refuses it too */
		PyErr_Format(PyExc_TypeError, "a key of an event must be a str, not %.100s",
		             Py_TYPE(s)->tp_name);
		return -1;
	}
	return OUT_LIT(o, "\"") < 0 || out_text(o, s, 1) < 0 || OUT_LIT(o, "\"") < 0 ? -1 : 0;
}

/* repr() through the exact type's own slot, as int.__repr__ and float.__repr__. */
static int out_repr(struct out *o, PyObject *v)
{
	PyObject *r = Py_TYPE(v)->tp_repr(v);
	if (!r)
		return -1;
	int rc = out_text(o, r, 0);
	Py_DECREF(r);
	return rc;
}

struct writer {
	int fd;
	pid_t pid;
	unsigned long long seq;
	PyObject *nonce; /* str */
	PyObject *raw;   /* the harness's _Raw (JSON text written as is) */
	PyObject *error; /* _HarnessError */
	size_t max_frame;
};

static int out_value(struct out *o, const struct writer *w, PyObject *v);

static int out_members(struct out *o, const struct writer *w, PyObject *dict)
{
	PyObject *k, *v;
	Py_ssize_t pos = 0;
	int first = 1;

	while (PyDict_Next(dict, &pos, &k, &v)) {
		if ((!first && OUT_LIT(o, ",") < 0) || out_json_str(o, k) < 0 || OUT_LIT(o, ":") < 0 ||
		    out_value(o, w, v) < 0)
			return -1;
		first = 0;
	}
	return 0;
}

/* events.py's _encode: exact types only. */
static int out_value(struct out *o, const struct writer *w, PyObject *v)
{
	PyTypeObject *t = Py_TYPE(v);
	int rc = 0;

	if (t == &PyUnicode_Type)
		return out_json_str(o, v);
	if (t == (PyTypeObject *)w->raw)
		return out_text(o, v, 0);
	if (v == Py_None)
		return OUT_LIT(o, "null");
	if (t == &PyBool_Type)
		return v == Py_True ? OUT_LIT(o, "true") : OUT_LIT(o, "false");
	if (t == &PyLong_Type || t == &PyFloat_Type)
		return out_repr(o, v);
	if (t != &PyList_Type && t != &PyDict_Type) {
		PyObject *name = PyType_GetName(t);
		if (name) {
			PyErr_Format(w->error, "cannot encode a %U", name);
			Py_DECREF(name);
		}
		return -1;
	}
	if (Py_EnterRecursiveCall(" while encoding an event"))
		return -1;
	if (t == &PyList_Type) {
		rc = OUT_LIT(o, "[");
		for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(v); i++)
			rc = (i && OUT_LIT(o, ",") < 0) || out_value(o, w, PyList_GET_ITEM(v, i)) < 0 ? -1
			                                                                              : 0;
		rc = rc < 0 ? -1 : OUT_LIT(o, "]");
	} else {
		rc = OUT_LIT(o, "{") < 0 || out_members(o, w, v) < 0 || OUT_LIT(o, "}") < 0 ? -1 : 0;
	}
	Py_LeaveRecursiveCall();
	return rc;
}

/* The event's JSON text, as events.py's encode(): seq, nonce, members. */
static int encode_event(struct out *o, const struct writer *w, PyObject *event)
{
	char seq[32];
	int n = snprintf(seq, sizeof(seq), "{\"seq\":%llu", w->seq);

	if (!PyDict_Check(event)) {
		PyErr_SetString(PyExc_TypeError, "an event must be a dict");
		return -1;
	}
	if (out_put(o, seq, (size_t)n) < 0 || OUT_LIT(o, ",\"nonce\":") < 0 ||
	    out_json_str(o, w->nonce) < 0 || OUT_LIT(o, ",") < 0 || out_members(o, w, event) < 0)
		return -1;
	return OUT_LIT(o, "}");
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		PyThreadState *ts = PyEval_SaveThread(); /* as os.write: others run meanwhile */
		ssize_t k = write(fd, p, n);
		int saved = errno;
		PyEval_RestoreThread(ts);
		if (k < 0 && saved == EINTR) {
			if (PyErr_CheckSignals() < 0) /* as os.write: a handler may raise */
				return -1;
			continue;
		}
		if (k < 0) {
			errno = saved;
			PyErr_SetFromErrno(PyExc_OSError);
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The frame's head ("LEN:") is written into the room left before the payload. */
#define FRAME_HEAD 24

static PyObject *emit(PyObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "event", "fallback", NULL };
	struct writer *w = PyCapsule_GetPointer(self, "execeval.event_writer");
	PyObject *event, *fallback = Py_None;
	struct out o;

	if (!w || !PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:emit", kwlist, &event, &fallback))
		return NULL;
	if (getpid() != w->pid) /* a process the candidate forked, back in harness code */
		_exit(0);
	out_init(&o, FRAME_HEAD + w->max_frame + 1);
	o.len = FRAME_HEAD; /* room for the head, written once the length is known */
	int rc = encode_event(&o, w, event);
	if (rc == 0 && o.len - FRAME_HEAD > w->max_frame && fallback != Py_None) {
		o.len = FRAME_HEAD;
		rc = encode_event(&o, w, fallback);
	}
	if (rc == 0 && o.len - FRAME_HEAD > w->max_frame) {
		PyErr_SetString(w->error, "event over the frame limit");
		rc = -1;
	}
	if (rc == 0) {
		char head[FRAME_HEAD];
		int n = snprintf(head, sizeof(head), "%zu:", o.len - FRAME_HEAD);
		memcpy(o.data + FRAME_HEAD - n, head, (size_t)n);
		rc = OUT_LIT(&o, ",");
		if (rc == 0)
			rc = write_all(w->fd, o.data + FRAME_HEAD - n, o.len - FRAME_HEAD + (size_t)n);
	}
	out_free(&o);
	if (rc < 0)
		return NULL;
	w->seq++;
	Py_RETURN_NONE;
}

static void writer_free(PyObject *capsule)
{
	struct writer *w = PyCapsule_GetPointer(capsule, "execeval.event_writer");
	if (!w)
		return;
	Py_XDECREF(w->nonce);
	Py_XDECREF(w->raw);
	Py_XDECREF(w->error);
	PyMem_RawFree(w);
}

static PyMethodDef emit_def = {
	"emit",
	(PyCFunction)(void (*)(void))emit,
	METH_VARARGS | METH_KEYWORDS,
	"emit(event, fallback=None): frame one event as a netstring and write it.",
};

/* _c_event_writer(fd, nonce, raw_type, error_type, max_frame) -> emit */
static PyObject *event_writer(PyObject *self, PyObject *args)
{
	int fd;
	PyObject *nonce, *raw, *error;
	Py_ssize_t max_frame;

	(void)self;
	if (!PyArg_ParseTuple(args, "iUO!O!n", &fd, &nonce, &PyType_Type, &raw, &PyType_Type, &error,
	                      &max_frame))
		return NULL;
	if (max_frame < 0 || !PyType_IsSubtype((PyTypeObject *)raw, &PyUnicode_Type) ||
	    !PyType_IsSubtype((PyTypeObject *)error, (PyTypeObject *)PyExc_Exception)) {
		PyErr_SetString(PyExc_ValueError, "_c_event_writer: bad arguments");
		return NULL;
	}
	struct writer *w = PyMem_RawCalloc(1, sizeof(*w));
	if (!w)
		return PyErr_NoMemory();
	w->fd = fd;
	w->pid = getpid();
	w->max_frame = (size_t)max_frame;
	w->nonce = Py_NewRef(nonce);
	w->raw = Py_NewRef(raw);
	w->error = Py_NewRef(error);
	PyObject *capsule = PyCapsule_New(w, "execeval.event_writer", writer_free);
	if (!capsule) {
		Py_DECREF(w->nonce);
		Py_DECREF(w->raw);
		Py_DECREF(w->error);
		PyMem_RawFree(w);
		return NULL;
	}
	PyObject *fn = PyCFunction_New(&emit_def, capsule);
	Py_DECREF(capsule);
	return fn;
}

static PyMethodDef event_writer_def = {
	"_c_event_writer",
	event_writer,
	METH_VARARGS,
	"_c_event_writer(fd, nonce, raw_type, error_type, max_frame): events.py's writer in C.",
};

/* ---- the unix collector ---------------------------------------------------
 *
 * _c_unix_gc_kick() -> bool: releases a unix socket pair with one end in
 * flight, which schedules the kernel's unix collector (ee_unix_gc_kick).
 * apart.py calls it when a /run_code request left a socket in flight in a
 * descriptor cycle; the harness itself may not import _socket (the deny
 * list names it, and the warm worker loads no module it names). It hands a
 * candidate that finds it nothing: a pair it cannot reach, made and closed. */
static PyObject *unix_gc_kick(PyObject *self, PyObject *args)
{
	(void)self;
	(void)args;
	return PyBool_FromLong(ee_unix_gc_kick() == 0);
}

static PyMethodDef unix_gc_kick_def = {
	"_c_unix_gc_kick",
	unix_gc_kick,
	METH_NOARGS,
	"_c_unix_gc_kick(): schedules the kernel's unix socket collector; True when it could.",
};

static int add(PyObject *globals, PyMethodDef *def)
{
	PyObject *fn = PyCFunction_New(def, NULL);
	int rc = fn ? PyDict_SetItemString(globals, def->ml_name, fn) : -1;
	Py_XDECREF(fn);
	return rc;
}

int ee_zygote_add_native(PyObject *globals)
{
	PyMethodDef *defs[] = { &loaded_under_def, &event_writer_def, &unix_gc_kick_def };
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
		if (add(globals, defs[i]) < 0)
			return -1;
	return 0;
}
