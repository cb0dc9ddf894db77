/* zygote_native.h - the harness's helpers written in C, for a warm worker.
 *
 * In a candidate forked from the worker every Python object the harness
 * touches is a copy-on-write page fault (CPython 3.11 writes a reference
 * count on each), so a walk over all of sys.modules costs ~50 faults. These
 * functions read such objects through borrowed references and write none
 * (_c_loaded_under), or do in one C buffer what Python does with a str per
 * value (_c_event_writer: events.py's writer, the same bytes). One more
 * does what the harness may not import a module for: _c_unix_gc_kick
 * (apart.py). The worker
 * puts them into the harness's namespace before the harness runs
 * (zygote.c); the harness has the same functions in Python for a cold
 * start and uses these when it finds them (policy.py, events.py);
 * tests/unit/test_zygote_native.c holds the two versions to each other.
 */
#ifndef EE_ZYGOTE_NATIVE_H
#define EE_ZYGOTE_NATIVE_H

#include <Python.h>

/* Adds the helpers to globals (borrowed); 0, or -1 with a Python error set. */
int ee_zygote_add_native(PyObject *globals);

#endif
