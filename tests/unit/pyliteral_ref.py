#!/usr/bin/python3
"""pyliteral_ref.py - Python itself as the oracle for src/pyvalue/pyliteral.c and
ee_judge_pyeq (src/pyvalue/judge_pyeq.c). Writes tests/unit/pyliteral_cases.h:

    PYTHONHASHSEED=0 /usr/bin/python3 -W ignore tests/unit/pyliteral_ref.py > tests/unit/pyliteral_cases.h
    clang-format -i tests/unit/pyliteral_cases.h

- lit_cases: literal sources Python's ast.literal_eval reads, with the
  canonical form of the value it gives (an independent serialiser below);
  the C reader must give an equal value (exactly equal when no set is in it).
- bad_cases: sources Python refuses (checked here); the C reader must refuse.
- declined_cases: valid Python expressions (compile() takes them) that the C
  reader declines on purpose (bytes, f-strings, \\N{...}, concatenation,
  duplicate keys, ...): such asserts stay in the sandbox.
- pyeq_cases: an expected literal, an actual value's canonical form, and
  Python's own `expected == actual`; ee_judge_pyeq must agree, except that a
  value holding "other" (a subclass, Decimal, ...) never matches (strict
  mode's one intended difference, flagged `other`).
- shape_cases: assert statements and whether they have the convertible
  shape, decided here with Python's ast.
"""
import ast
import collections
import decimal
import fractions
import sys


def canon(v):
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if t is int:
        return {"int": str(v)}
    if t is float:
        return {"float": repr(v)}
    if t is list or t is tuple or t is set or t is frozenset:
        return {t.__name__: [canon(x) for x in v]}
    if t is dict:
        return {"dict": [[canon(k), canon(x)] for k, x in v.items()]}
    return {"other": t.__name__}


def has_other(v):
    t = type(v)
    if t in (list, tuple, set, frozenset):
        return any(has_other(x) for x in v)
    if t is dict:
        return any(has_other(k) or has_other(x) for k, x in v.items())
    return t not in (type(None), bool, int, float, str)


def has_set(v):
    t = type(v)
    if t in (set, frozenset):
        return True
    if t in (list, tuple):
        return any(has_set(x) for x in v)
    if t is dict:
        return any(has_set(k) or has_set(x) for k, x in v.items())
    return False


def c_str(s):
    out = []
    for b in s.encode("utf-8"):
        ch = chr(b)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= b < 0x7F and ch != "?":
            out.append(ch)
        else:
            out.append("\\%03o" % b)
    return '"' + "".join(out) + '"'


def json_text(v):
    import json

    return json.dumps(v, ensure_ascii=True)


LITERALS = [
    "None", "True", "False", "0", "00", "-0", "7", "-7", "- 7", "+7", "123456789012345678901234567890",
    "-98765432109876543210987654321098765432109876543210", "1" * 4300,
    "0.5", ".5", "5.", "1e3", "1E-3", "1.5e+10", "-2.5", "1e400", "-1e400", "1e-400", "0.1", "1e16",
    "1e15", "123456789.0", "0.0001", "0.00001", "-0.0", "2.5e-07", "1" * 60 + ".0",
    "''", '""', "'abc'", '"a\'b"', "'a\\'b'", "'\\n\\t\\r\\a\\b\\f\\v\\\\'", "'\\x41\\x7f'",
    "'\\u00e9\\u4e2d'", "'\\U0001F600'", "'\\0'", "'\\101\\0012'", "'\\777'", "'é中😀'",
    "'''a\nb'''", '"""x"y""z"""', "r'a\\nb'", "R'\\d+'", "r'\\''", "u'x'", "U\"y\"",
    "'a\\\nb'", "'''a\\\nb'''", "'tab\there'",
    "()", "(1,)", "(1)", "((1))", "(1, 2)", "(1, 2,)", "[]", "[1]", "[1,]", "[1, [2, [3, []]]]",
    "{}", "{1: 2}", "{'a': 1, 'b': [1, 2]}", "{(1, 2): 'x', None: 0, 1.5: 'f'}", "{1: 'a', 2: 'b',}",
    "{1}", "{1, 2, 3}", "{'b', 'a'}", "{(1, 'a'), (2,)}", "{1, 2,}",
    "[\n 1,\n 2  # two\n]", "(1,\n 2)", "[-1, +2, - 3.5]", "[True, False, None]",
    "[" * 50 + "]" * 50, "  [1]  ", "[1] # comment",
]

BAD = [
    "", "   ", "[", "]", "(1, 2", "[1 2]", "{1: }", "{:1}", "{1: 2, 3}", "{1, 2: 3}", "'abc", '"abc',
    "'''abc''", "'a\nb'", "012", "1.2.3", "1e", "1e+", "--1", "1 2", "[1,,2]", "[,]", "(,)",
    "'\\x4'", "'\\u12'", "'\\U00110000'", "x", "true", "none", "'a' +", "1 +", "{[1]: 2}", "{[1]}",
    "{{1}}", "'a\rb'", "{1: 2}[1]", "1if 1 else 2", "(1)(2)", "'a'.upper()", "1 == 1",
]

DECLINED = [
    "b'x'", "B'x'", "f'x'", "rb'x'", "br'x'", "'\\N{EM DASH}'", "'\\d'", "'a' 'b'", "'a' \"b\"",
    "0x10", "0o7", "0b1", "1_000", "1.5_0", "1j", "2.5J", "'\\ud800'", "'\\udfff'", "[" * 51 + "]" * 51,
    "1" * 4301, "{1: 'a', 1: 'b'}", "{1: 'a', True: 'b'}", "{1, 1.0}", "{(1, 2), (1.0, 2)}",
    "1,", "-True", "-(1)", "[1, 2][0]", "'\\\r\n'",
]

# (expected literal, actual Python expression)
PAIRS = [
    ("1", "True"), ("True", "1"), ("1.0", "True"), ("1", "1.0"), ("True", "1.0"), ("False", "0"),
    ("False", "0.0"), ("False", "-0.0"), ("0", "-0.0"), ("-0.0", "0"), ("2", "2.5"), ("2.5", "2"),
    ("0.3", "0.1 + 0.2"), ("0.30000000000000004", "0.1 + 0.2"), ("1e400", "float('inf')"),
    ("-1e400", "float('-inf')"), ("1e400", "float('-inf')"), ("1", "float('nan')"),
    ("1e400", "float('nan')"), ("1000000000000000000000000000000", "10**30"),
    ("1000000000000000000000000000000", "1e30"), ("1000000000000000019884624838656", "1e30"),
    ("9007199254740993", "9007199254740993.0"), ("9007199254740992", "9007199254740993.0"),
    ("-5", "-5"), ("-5", "5"), ("None", "None"), ("None", "0"), ("None", "False"), ("0", "None"),
    ("None", "''"), ("'abc'", "'abc'"), ("'abc'", "'abd'"), ("'abc'", "'ab'"), ("'1'", "1"),
    ("1", "'1'"), ("'a\\nb'", "'a\\nb'"), ("r'a\\nb'", "'a\\\\nb'"), ("'\\x41\\u00e9\\U0001F600'", "'Aé😀'"),
    ("'\\0'", "'\\x00'"), ("''", "''"), ("'é'", "'e\\u0301'"),
    ("[4, 5]", "(4, 5)"), ("(4, 5)", "[4, 5]"), ("(4, 5)", "(4, 5)"), ("[4, 5]", "[4, 5]"),
    ("[]", "[]"), ("()", "()"), ("[]", "()"), ("(1,)", "(1,)"), ("(1)", "1"), ("(1)", "(1,)"),
    ("[1, [2, (3,)]]", "[1, [2, (3,)]]"), ("[1, [2, (3,)]]", "[1, [2, [3]]]"), ("[1, 2]", "[1.0, True + 1]"),
    ("[1, 2]", "[1, 2, 3]"), ("[1, 2, 3]", "[1, 2]"), ("[[]]", "[[]]"), ("[[]]", "[()]"),
    ("[True, 2]", "[1, 2.0]"), ("[None]", "[None]"), ("[1]", "[float('nan')]"),
    ("{1: 'a', 2: 'b'}", "{2: 'b', 1: 'a'}"), ("{1: 'a'}", "{1.0: 'a'}"), ("{1: 'a'}", "{True: 'a'}"),
    ("{True: 'a'}", "{1: 'a'}"), ("{'a': 1}", "{'a': 1, 'b': 2}"), ("{'a': 1, 'b': 2}", "{'a': 1}"),
    ("{'a': [1]}", "{'a': (1,)}"), ("{'a': [1]}", "{'a': [1.0]}"), ("{(1, 2): 3}", "{(1.0, 2): 3}"),
    ("{(1, 2): 3}", "{(1, 2, 3): 3}"), ("{}", "{}"), ("{}", "set()"), ("{}", "[]"), ("{None: 1}", "{None: 1}"),
    ("{'a': 1, 'b': 2}", "{'a': 1, 'c': 2}"), ("{'a': 1, 'b': 2}", "{'b': 2, 'a': 1}"),
    ("{0.5: 1}", "{0.5: 1}"), ("{0.5: 1}", "{0.25: 1}"), ("{1: {2: 3}}", "{1: {2: 3}}"),
    ("{1: {2: 3}}", "{1: {2: 4}}"), ("{'x': None}", "{'x': 0}"), ("{(): 1}", "{(): 1}"),
    ("{1, 2, 3}", "{3, 2, 1}"), ("{1, 2}", "frozenset({1, 2})"), ("{1, 2}", "{1.0, 2}"), ("{1}", "{True}"),
    ("{1, 2}", "{1, 3}"), ("{1, 2}", "{1}"), ("{1, 2}", "{1, 2, 3}"), ("{1, 2}", "[1, 2]"),
    ("[1, 2]", "{1, 2}"), ("{(1, 2)}", "{(1, 2)}"), ("{(1, 2)}", "{(1, 2.0)}"), ("{'a', 'b'}", "{'b', 'a'}"),
    ("{1.5}", "{1.5}"), ("{1.5}", "{float('nan')}"), ("{'a'}", "{'a', None}"), ("[{1: (2, {3})}]", "[{1.0: (2, {3})}]"),
    ("1", "Decimal(1)"), ("1", "Fraction(1)"), ("1.5", "Fraction(3, 2)"), ("5", "MyInt(5)"),
    ("[1]", "MyList([1])"), ("'a'", "MyStr('a')"), ("{1: 2}", "OrderedDict({1: 2})"),
    ("(1, 2)", "NT(1, 2)"), ("1", "1 + 0j"), ("[1]", "[Decimal(1)]"), ("{1: 2}", "{1: Decimal(2)}"),
    ("5", "Forged()"), ("[5]", "[Forged()]"), ("{1}", "{frozenset()}"), ("1", "MyFloat(1.0)"),
]

SHAPES = [
    "assert f(1) == 2", "assert f(1)==2", "assert 2 == f(1)", "assert f() == None", "assert f (1, 'a') == [1]",
    "assert f(1, 2,) == (3,)", "assert f(x=1) == 2", "assert f(1, y=[2]) == {3}", "assert f(1) == 2, 'msg'",
    "assert f(1) == 2  # note", "assert f(1) == 2\n", "assert f(1) == 2\n\n# end\n", "assert f(\n 1,\n 2) == 3",
    "assert f(1) == \\\n 2", "assert\tf(1) == 2", "assert f([1, 2], {'a': (1,)}) == {1: 'x'}",
    "assert True == f(1)", "assert (1, 2) == f()", "assert 'a' == f('b')", "assert r'a' == f()",
    "assert g_2(1) == -3.5",
    # backslash continuations: Python 3.11 refuses one at the end of the text
    "assert f(1) == 1\\\n", "assert f(1) == 1\\", "assert f(1) == 1 \\\n", "assert f(1) == 1\\\n\\\n",
    "assert f(1) == 1\\\nx = 1\n", "assert f(1) \\\n== 1\n", "assert f(1) == \\\n  1\n",
    "assert \\\n f(1) == 1", "assert f(\\\n1) == 1\n", "assert f(1) == 1, \\\n'm'\n",
    # not the shape
    "assert f(1)", "assert not f(1)", "assert f(1) != 2", "assert f(1) == 2 == 2", "assert f(1) == g(2)",
    "assert f(x) == 2", "assert f(1)[0] == 2", "assert f(1).a == 2", "assert f(1)(2) == 3", "assert m.f(1) == 2",
    "assert abs(f(1) - 1) < 1e-9", "assert set(f(1)) == {1}", "assert f(1) == 2 or True", "assert f(1) == 2; x = 1",
    "assert f(1) == 2\nx = 1", "assert f(*a) == 2", "assert f(**k) == 2", "assert f(x=1, 2) == 3",
    "assert f(x=1, x=2) == 3", "assert f(1) == 2, f'm'", "assert f(1) == 2, msg",
    " assert f(1) == 2", "assert f(1) == 2 if c else 3", "assert f(1) == [1, 2][0]",
    "assert f(1) == 'a'.upper()", "assert not(1) == 2", "assert lambda(1) == 2", "assert f(1) ==2,",
    "assert f(1) == 2,\n", "assert f(1) is None", "assert f(1) in [2]", "asserts f(1) == 2", "assertf(1) == 2",
    "assert f(1) == -f(2)", "assert f(lambda: 1) == 2", "assert f(1) === 2", "assert f(1) == 1 + 2",
    "assert f(1) == 2 ** 3", "assert f(1) == -2 ** 2",
]

# Python's shape, declined on purpose by the C reader (they stay in the sandbox).
DECLINED_SHAPES = [
    "assert (f(1) == 2)", "assert f(1) == b'x'", "assert f(1) == 'a' 'b'", "assert f(0x10) == 16",
    "assert f(1) == {1: 2, 1: 3}", "assert f(1) == 2, 'a' 'b'", "assert f('\\d') == 1",
    # continuations Python takes but the reader cannot be sure of
    "assert f(1) == 1\\\n\n", "assert f(1) == 1\\\n# c\n", "assert f(1) == 1\\\n   ",
]


class MyInt(int):
    pass


class MyFloat(float):
    pass


class MyList(list):
    pass


class MyStr(str):
    pass


class Forged:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


NT = collections.namedtuple("NT", "a b")
ENV = {"Decimal": decimal.Decimal, "Fraction": fractions.Fraction, "MyInt": MyInt, "MyList": MyList,
       "MyStr": MyStr, "MyFloat": MyFloat, "OrderedDict": collections.OrderedDict, "NT": NT, "Forged": Forged}


def literal(src):
    return ast.literal_eval(src)


def is_literal_node(node):
    try:
        ast.literal_eval(node)
        return True
    except Exception:
        return False


def shape(code):
    """Python's view: one assert of Compare(Call(Name, literal args), [Eq], [literal]) either way."""
    try:
        tree = ast.parse(code)
        compile(code, "<shape>", "exec")
    except SyntaxError:
        return False
    if len(tree.body) != 1 or type(tree.body[0]) is not ast.Assert:
        return False
    st = tree.body[0]
    if st.msg is not None and not is_literal_node(st.msg):
        return False
    cmp = st.test
    if type(cmp) is not ast.Compare or len(cmp.ops) != 1 or type(cmp.ops[0]) is not ast.Eq:
        return False
    for call, lit in ((cmp.left, cmp.comparators[0]), (cmp.comparators[0], cmp.left)):
        if type(call) is ast.Call and type(call.func) is ast.Name and is_literal_node(lit) \
                and all(is_literal_node(a) and type(a) is not ast.Starred for a in call.args) \
                and all(k.arg is not None and is_literal_node(k.value) for k in call.keywords):
            return True
    return False


def main():
    sys.set_int_max_str_digits(5000)
    out = ["/* pyliteral_cases.h - generated by tests/unit/pyliteral_ref.py; do not edit. */", ""]
    out.append("static const struct lit_case lit_cases[] = {")
    for src in LITERALS:
        sys.set_int_max_str_digits(4300)
        v = literal(src)
        out.append("\t{ %s, %s, %d }," % (c_str(src), c_str(json_text(canon(v))), has_set(v)))
    out.append("};")
    for name, table, want_ok in (("bad_cases", BAD, False), ("declined_cases", DECLINED, True)):
        out.append("static const char *const %s[] = {" % name)
        for src in table:
            sys.set_int_max_str_digits(4300)
            try:
                if want_ok:  # valid Python that we decline
                    sys.set_int_max_str_digits(5000)
                    compile(src, "<declined>", "eval")
                else:  # not a literal to Python
                    literal(src)
                ok = True
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                ok = False
            assert ok == want_ok, (name, src)
            out.append("\t%s," % c_str(src))
        out.append("};")
    sys.set_int_max_str_digits(5000)
    out.append("static const struct pyeq_case pyeq_cases[] = {")
    for exp_src, act_src in PAIRS:
        e = literal(exp_src)
        a = eval(act_src, ENV)
        py = bool(e == a)
        other = has_other(a)
        want = py and not other
        out.append("\t{ %s, %s, %d, %d }, /* %s */" % (c_str(exp_src), c_str(json_text(canon(a))), want,
                                                      py != want, act_src.replace("*/", "* /")))
    out.append("};")
    out.append("static const struct shape_case shape_cases[] = {")
    for code in SHAPES:
        out.append("\t{ %s, %d }," % (c_str(code), shape(code)))
    for code in DECLINED_SHAPES:
        assert shape(code), code
        out.append("\t{ %s, 0 }, /* Python's shape, declined */" % c_str(code))
    out.append("};")
    print("\n".join(out))


if __name__ == "__main__":
    main()
