#!/usr/bin/python3
"""pyprogram_ref.py - Python's ast as the oracle for ee_pyprogram_convert
(src/pyvalue/pyprogram.c): which `program` tests have the check-program shape, and
the calls and expected values Python reads in them. Writes
build/unit/pyprogram_cases.h at build time (the Makefile):

    PYTHONHASHSEED=0 /usr/bin/python3 tests/unit/pyprogram_ref.py \\
        HumanEval.jsonl|- > build/unit/pyprogram_cases.h

- prog_cases: every HumanEval test program, run as execeval runs it
  (`{test}\\ncheck({entry_point})\\n`; HumanEval is MIT-licensed, (c) OpenAI),
  then hand-written hostile ones. For each: the entry name and the calls
  ([{"args", "kwargs", "expected"}] in canonical form) when Python's ast
  sees the shape, else NULL. The C reader must agree exactly.

The shape, decided on the ast: the module is top-level `NAME = literal`
assignments and string expressions, exactly one plain `def F(P):` (no
decorators, defaults, annotations), and last `F(X)`; F's body is strings,
`assert <true literal>` and `assert P(literal args) == literal` (either
way round), each with an optional literal message; at least one call; X is
neither F nor a name the module assigns. On top of the ast, the textual
narrowness the C reader keeps on purpose (it refuses rather than guess):
spaces-only indentation, no carriage return, no `;`, no body on the def's
line, `assert` followed by a blank, no parentheses around an assert's test
or the call, and the literal forms pyliteral_ref.py declines.
"""
import ast
import io
import json
import sys
import tokenize

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import pyliteral_ref as lit  # noqa: E402


def literal_ok(node, src):
    """A literal the C reader accepts: literal_eval takes it and it uses no
    declined form (prefixes but r/u, concatenation, non-decimal numbers,
    \\N escapes, duplicate keys or elements, nesting over 50)."""
    try:
        ast.literal_eval(node)
    except Exception:
        return False
    text = ast.get_source_segment(src, node, padded=False)
    if text is None:
        return False
    try:
        toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.ENDMARKER)]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return False
    prev = None
    for t in toks:
        if t.type == tokenize.STRING:
            prefix = t.string[:len(t.string) - len(t.string.lstrip("rRuUbBfF"))]
            if prefix not in ("", "r", "R", "u", "U") or prev == tokenize.STRING:
                return False
            if not prefix.lower() == "r" and ("\\N" in t.string or "\r" in t.string):
                return False
        if t.type == tokenize.NUMBER and any(c in t.string for c in "xXoObB_jJ"):
            return False
        prev = t.type
    return distinct(node) and depth(node) <= 50


def depth(node):
    kids = [depth(c) for c in ast.iter_child_nodes(node)]
    return (1 if type(node) in (ast.List, ast.Tuple, ast.Dict, ast.Set) else 0) + max(kids, default=0)


def distinct(node):
    for n in ast.walk(node):
        if type(n) is ast.Dict:
            keys = [ast.literal_eval(k) for k in n.keys]
            if len(set(map(key_of, keys))) != len(keys):
                return False
        if type(n) is ast.Set:
            elts = [ast.literal_eval(e) for e in n.elts]
            if len(set(map(key_of, elts))) != len(elts):
                return False
    return True


def starts_with(src, node, text):
    line = src.splitlines()[node.lineno - 1]
    return line[node.col_offset:].startswith(text)


def first_after(src, node, skip):
    """The character after `skip` at node's start, past blanks."""
    line = src.splitlines()[node.lineno - 1]
    return line[node.col_offset + len(skip):].lstrip(" ")[:1]


def is_str(node):
    return type(node) is ast.Expr and type(node.value) is ast.Constant and type(node.value.value) is str


def body_call(st, param, src):
    """The call of one body assert, None for a true constant, False otherwise."""
    line = src.splitlines()[st.lineno - 1]
    after = len(line) - len(line[st.col_offset + 6:].lstrip(" "))
    if not starts_with(src, st, "assert") or line[st.col_offset + 6:][:1] not in (" ", "\\") \
            or (st.test.lineno, st.test.col_offset) != (st.lineno, after):
        return False  # `assert(...)`, or parentheses around the whole test
    if st.msg is not None and not literal_ok(st.msg, src):
        return False
    test = st.test
    if type(test) is not ast.Compare:
        return None if literal_ok(test, src) and ast.literal_eval(test) else False
    if len(test.ops) != 1 or type(test.ops[0]) is not ast.Eq:
        return False
    for call, want in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        if type(call) is ast.Call and type(call.func) is ast.Name and call.func.id == param \
                and literal_ok(want, src) \
                and all(type(a) is not ast.Starred and literal_ok(a, src) for a in call.args) \
                and all(k.arg is not None and literal_ok(k.value, src) for k in call.keywords):
            return {"args": [lit.canon(ast.literal_eval(a)) for a in call.args],
                    "kwargs": [[k.arg, lit.canon(ast.literal_eval(k.value))] for k in call.keywords],
                    "expected": lit.canon(ast.literal_eval(want))}
    return False


def textual_ok(src):
    if "\r" in src:
        return False
    for line in src.split("\n"):
        stripped = line.lstrip(" \t\f")
        if not stripped or stripped.startswith("#"):
            continue
        indent = line[:len(line) - len(stripped)]
        if indent.strip(" ") or stripped.startswith("\\") or len(indent) > 100:
            return False
    return True


def shape(src):
    """(entry name, calls) when Python sees the shape, else None."""
    try:
        tree = ast.parse(src)
        compile(src, "<program>", "exec")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not textual_ok(src) or not tree.body:
        return None
    last, lines = tree.body[-1], set()
    for st in ast.walk(tree):
        if isinstance(st, ast.stmt):
            if st.lineno in lines:
                return None  # `;`, or a body on the def's line
            lines.add(st.lineno)
    if type(last) is not ast.Expr or type(last.value) is not ast.Call:
        return None
    call = last.value
    if type(call.func) is not ast.Name or len(call.args) != 1 or call.keywords \
            or type(call.args[0]) is not ast.Name or first_after(src, call, call.func.id) != "(":
        return None
    fname, entry = call.func.id, call.args[0].id
    assigned, defs, calls = set(), [], []
    for st in tree.body[:-1]:
        if type(st) is ast.Assign and len(st.targets) == 1 and type(st.targets[0]) is ast.Name \
                and literal_ok(st.value, src):
            assigned.add(st.targets[0].id)
        elif is_str(st) and starts_with(src, st, ("'", '"')[src.splitlines()[st.lineno - 1][st.col_offset] == '"']):
            pass
        elif type(st) is ast.FunctionDef:
            defs.append(st)
        else:
            return None
    if len(defs) != 1:
        return None
    d = defs[0]
    a = d.args
    if d.name != fname or d.decorator_list or d.returns or a.posonlyargs or a.vararg or a.kwonlyargs \
            or a.kwarg or a.defaults or len(a.args) != 1 or a.args[0].annotation is not None \
            or getattr(d, "type_params", None):
        return None
    header = src.splitlines()[d.lineno - 1]
    if not header.rstrip().endswith(":") and "#" not in header:
        return None
    param = a.args[0].arg
    for st in d.body:
        if is_str(st):
            continue
        if type(st) is not ast.Assert:
            return None
        c = body_call(st, param, src)
        if c is False:
            return None
        if c is not None:
            calls.append(c)
    if not calls or len(calls) > 1000 or entry == fname or entry in assigned or fname in assigned:
        return None
    return entry, calls


HOSTILE = [
    # read as Python reads them
    "def check(candidate):\n    assert candidate(1, 2) == 3\ncheck(add)\n",
    "X = 1\n'doc'\n\ndef check(c):\n    '''doc'''\n\n    # c(9) == 9\n    assert True\n    assert c(k=1) == 2, 'm'\n"
    "    assert [1,\n  2] == c(\n1)\n  # odd comment\n\n    assert (1,), 'always'\ncheck(f)\n# tail\n",
    "def check(candidate):\n        assert candidate('a\\\nb') == '''x\ny'''\ncheck(g)",
    "def check(candidate):\n    assert candidate({1: (2,)}, x=None) == {3, 4}\ncheck(f)\n\n\n",
    # refused: hostile or unsure
    "def check(candidate):\n\tassert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1\n\tassert candidate(2) == 2\ncheck(f)\n",
    "def check(candidate):\n  \tassert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1\n\n  assert candidate(2) == 2\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1\n\n      assert candidate(2) == 2\ncheck(f)\n",
    "def check(candidate=print):\n    assert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate, x=1):\n    assert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate: int):\n    assert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate) -> None:\n    assert candidate(1) == 1\ncheck(f)\n",
    "def check(*candidate):\n    assert candidate(1) == 1\ncheck(f)\n",
    "@staticmethod\ndef check(candidate):\n    assert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1\ndef check(candidate):\n    assert True\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1\ndef other(c):\n    pass\ncheck(f)\n",
    "def check(candidate):\n    def inner():\n        pass\n    assert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate):\n    global candidate\n    assert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1; assert candidate(2) == 2\ncheck(f)\n",
    "def check(candidate): assert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1\ncheck(f)\nprint('after')\n",
    "def check(candidate):\n    assert candidate(1) == 1\ncheck(f); check(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1\ncheck(check)\n",
    "f = 1\ndef check(candidate):\n    assert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1\ncheck = 2\ncheck(f)\n",
    "def check(candidate):\n    assert True\ncheck(f)\n",
    "def check(candidate):\n    assert False\n    assert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate):\n    assert 0.0, 'never'\n    assert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1\n",
    "def check(candidate):\n    assert other(1) == 1\ncheck(f)\n",
    "def check(candidate):\n    assert abs(candidate(1) - 1) < 1e-6\ncheck(f)\n",
    "def check(candidate):\n    assert (candidate(1) == 1)\ncheck(f)\n",
    "def check(candidate):\n    assert(candidate(1) == 1)\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1, 'a' 'b'\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1, f'{candidate}'\ncheck(f)\n",
    "def check(candidate):\n    for i in range(3):\n        assert candidate(i) == i\ncheck(f)\n",
    "import math\ndef check(candidate):\n    assert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate):\r\n    assert candidate(1) == 1\r\ncheck(f)\r\n",
    "async def check(candidate):\n    assert candidate(1) == 1\ncheck(f)\n",
    "class check:\n    pass\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1\n(check)(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1\ncheck(f, f)\n",
    "def check(candidate):\n    assert candidate(*[1]) == 1\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(**{'a': 1}) == 1\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1\n    return\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1\n  \ncheck(f)\n    \n",
    "M = {'a': 1, 'a': 2}\ndef check(candidate):\n    assert candidate(1) == 1\ncheck(f)\n",
    "M = b'x'\ndef check(candidate):\n    assert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate):\n    \\\n    assert candidate(1) == 1\ncheck(f)\n",
    "if True:\n    def check(candidate):\n        assert candidate(1) == 1\ncheck(f)\n",
    "def check(candidate):\n    assert candidate(1) == 1\n" + "    assert candidate(2) == 2\n" * 1000 + "check(f)\n",
    "def check(candidate):\n    assert candidate(" + "[" * 60 + "]" * 60 + ") == 1\ncheck(f)\n",
]


def key_of(v):
    t = type(v)
    if t is float and v != v:
        return ("nan", id(v))
    if t is tuple:
        return tuple(key_of(x) for x in v)
    if t in (bool, int, float):
        return ("num", v)
    return (t.__name__, v)


def main():
    """argv[1]: HumanEval.jsonl, or "-" when the data set is not on this
    machine (the table then holds the hostile programs only). The data set is
    read at build time, never copied into the repository."""
    path = sys.argv[1] if len(sys.argv) > 1 else "-"
    cases = []
    if path != "-":
        with open(path) as f:
            for line in f:
                t = json.loads(line)
                cases.append((t["task_id"], "%s\ncheck(%s)\n" % (t["test"], t["entry_point"])))
    humaneval = len(cases)
    cases += [("hostile/%d" % i, code) for i, code in enumerate(HOSTILE)]
    out = ["/* pyprogram_cases.h - generated by tests/unit/pyprogram_ref.py at build time; do not edit.",
           " * The HumanEval programs, when present, are read from the data set (OpenAI's",
           " * github.com/openai/human-eval, MIT licence). */", "",
           "static const struct prog_case prog_cases[] = {"]
    converted = 0
    for name, code in cases:
        got = shape(code)
        if got is None:
            out.append("\t{ %s, %s, NULL, NULL, 0 }," % (lit.c_str(name), lit.c_str(code)))
            continue
        converted += name.startswith("HumanEval/")
        calls = got[1]
        sets = '"set"' in json.dumps(calls) or '"frozenset"' in json.dumps(calls)
        out.append("\t{ %s, %s, %s, %s, %d }," % (lit.c_str(name), lit.c_str(code), lit.c_str(got[0]),
                                                  lit.c_str(json.dumps(calls, ensure_ascii=True)), sets))
    out.append("};")
    out.append("#define PROG_HUMANEVAL_TOTAL %d" % humaneval)
    out.append("#define PROG_HUMANEVAL_CONVERTED %d" % converted)
    print("\n".join(out))


if __name__ == "__main__":
    main()
