#!/usr/bin/python3
"""evalplus_ref.py - checks the table of tests/unit/test_generated.c
(evalplus_cases) against EvalPlus's own rule, run with numpy:

    PYTHONPATH=<a numpy> /usr/bin/python3 tests/unit/evalplus_ref.py

The rule, as evalplus/eval/__init__.py's unsafe_execute states it (read at
evalplus/evalplus 6eb1e19; restated here, not copied): the output passes
when `out == exp`; else, when the task's atol is 0 and the expected value is
a float or a non-empty list or tuple of floats, atol becomes 1e-6; with an
atol still 0 it fails; else it passes only when type(out) is type(exp), a
list or tuple has the expected length, and numpy's allclose(out, exp,
rtol=1e-7, atol=atol) holds; anything numpy raises on fails. Prints each
row where the table and this rule disagree; exits 1 if any.
"""
import ast
import json
import re
import sys
from pathlib import Path

import numpy as np

ROW = re.compile(r'\{ ("(?:[^"\\]|\\.)*"), ("(?:[^"\\]|\\.)*"), ([-+0-9.e]+), (true|false),')


def value(c_string):
    src = json.loads(c_string)  # a C string literal of this table reads as JSON
    if src.startswith("="):
        v = json.loads(src[1:])
        return complex(float(v["complex"][0]), float(v["complex"][1]))
    return ast.literal_eval(src)


def floats(x):
    if isinstance(x, float):
        return True
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(isinstance(i, float) for i in x)


def evalplus_passes(exp, out, atol):
    if out == exp:
        return True
    if atol == 0 and floats(exp):
        atol = 1e-6
    if atol == 0:
        return False
    try:
        if type(out) is not type(exp):
            return False
        if isinstance(exp, (list, tuple)) and len(out) != len(exp):
            return False
        return bool(np.allclose(out, exp, rtol=1e-07, atol=atol))
    except Exception:
        return False


def main():
    text = (Path(__file__).parent / "test_generated.c").read_text()
    table = text[text.index("evalplus_cases[] = {"):]
    table = table[:table.index("\n};")]
    rows, bad = 0, 0
    for m in ROW.finditer(table):
        exp, out, atol, want = value(m.group(1)), value(m.group(2)), float(m.group(3)), m.group(4) == "true"
        got = evalplus_passes(exp, out, atol)
        rows += 1
        if got != want:
            bad += 1
            print("disagree: %r against %r, atol %g: EvalPlus %s, table %s" % (exp, out, atol, got, want))
    print("%d rows, %d disagree (numpy %s)" % (rows, bad, np.__version__))
    return 1 if bad or rows == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
