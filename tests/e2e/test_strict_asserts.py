"""--strict-asserts: literal asserts judged by the supervisor.

Every hostile candidate here runs inside execeval's sandbox. The tests show
(1) the frame-walking attacks that forge in-sandbox asserts (test_hostile.py,
DETERMINED) forge a pass without the flag and fail with it; (2) a forged
__eq__ passes the in-sandbox assert and fails the strict one (the documented
difference; collections' Counter, OrderedDict and defaultdict are compared by
content, as Python's == against a dict literal does); (3) for honest candidates the verdict is the same with and
without the flag, rule by rule of Python's ==; (4) on MBPP, the reference
solutions and two perturbed variants get the same status and score either
way.
"""
import json
import subprocess

import pytest

from conftest import EXECEVAL, judged_inline
from test_eval import find_datasets
from test_hostile import ADD_WRONG, ASSERTS, DETERMINED, assert_verdict


@pytest.fixture
def run(run):
    """This file sets --strict-asserts against the in-sandbox asserts of the
    inline harness (where the attacks are live): --judge inline unless a
    test names a judge (the split judge's verdicts are
    test_judge_separate.py's)."""
    return judged_inline(run)


ADD_RIGHT = "def add(a, b):\n    return a + b\n"
STRICT = ("--strict-asserts",)


def outcomes(r):
    return [(t["status"], t.get("judged_by"), t["message"]) for t in r.record["tests"]]


# ---------------------------------------------------------------------------
# Attacks on the harness.


@pytest.mark.parametrize("name", sorted(DETERMINED))
def test_attacks_forge_in_sandbox_asserts_without_the_flag(run, name):
    """The control: the attack is live, so the strict result below means something."""
    r = run(DETERMINED[name] + ADD_WRONG, asserts=ASSERTS)
    assert r.record["status"] == "pass", r.record


DETERMINED_STRICT = {
    "frame_walk_swaps_runner": "test 0 failed: expected 3, got None",
    "stolen_emit": "test 0 failed: the call raised",
}


@pytest.mark.parametrize("name", sorted(DETERMINED))
def test_attacks_cannot_forge_strict_asserts(run, name):
    r = run(DETERMINED[name] + ADD_WRONG, asserts=ASSERTS, args=STRICT)
    rec = assert_verdict(r, "assertion_fail", DETERMINED_STRICT[name], score=0.0)
    assert [t["judged_by"] for t in rec["tests"]] == ["supervisor", "supervisor"]


FORGED_EQ = """
class Liar(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__

def add(a, b):
    return Liar(0)
"""


def test_forged_eq_passes_in_sandbox_but_not_strict(run):
    assert run(FORGED_EQ, asserts=ASSERTS).record["status"] == "pass"
    r = run(FORGED_EQ, asserts=ASSERTS, args=STRICT)
    assert_verdict(r, "assertion_fail", "test 0 failed: expected 3, got 0", score=0.0)


DICT_LIKE = """
from collections import Counter, OrderedDict, defaultdict

class Counterfeit(dict):
    def __eq__(self, other):
        return True
    __hash__ = None
Counterfeit.__name__ = Counterfeit.__qualname__ = "Counter"
Counterfeit.__module__ = "collections"

class SubCounter(Counter):
    pass

def f(kind):
    d = defaultdict(int)
    d["a"] += 2
    return {"counter": Counter("aab"), "ordered": OrderedDict([("b", 1), ("a", 2)]), "default": d,
            "zero": Counter(a=0), "fake": Counterfeit(a=1), "sub": SubCounter("ab"),
            "nested": [Counter("a"), (OrderedDict(x=1),)]}[kind]
"""

# (assert, Python's verdict, strict's verdict): collections' dict types are
# dicts by content; a class dressed up as collections.Counter is judged by
# what it holds (its lying __eq__ passes only in the sandbox); a subclass
# of Counter, as every subclass of a builtin type, by its builtin value.
DICT_LIKE_ASSERTS = [
    ("assert f('counter') == {'a': 2, 'b': 1}", True, True),
    ("assert f('counter') == {'a': 2}", False, False),
    ("assert f('ordered') == {'a': 2, 'b': 1}", True, True),
    ("assert f('default') == {'a': 2}", True, True),
    ("assert f('zero') == {}", False, False),
    ("assert f('zero') == {'a': 0}", True, True),
    ("assert f('nested') == [{'a': 1}, ({'x': 1},)]", True, True),
    ("assert f('fake') == {'b': 7}", True, False),
    ("assert f('fake') == {'a': 1}", True, True),
    ("assert f('sub') == {'a': 1, 'b': 1}", True, True),
]


def test_collections_dict_types_compare_by_content(run):
    asserts = [a for a, _, _ in DICT_LIKE_ASSERTS]
    plain = run(DICT_LIKE, asserts=asserts).record
    strict = run(DICT_LIKE, asserts=asserts, args=STRICT).record
    assert [t["status"] for t in plain["tests"]] == ["pass" if p else "fail" for _, p, _ in DICT_LIKE_ASSERTS]
    assert [t["status"] for t in strict["tests"]] == ["pass" if s else "fail" for _, _, s in DICT_LIKE_ASSERTS]
    assert {t["judged_by"] for t in strict["tests"]} == {"supervisor"}
    assert strict["tests"][-1]["status"] == "pass", strict["tests"][-1]  # a subclass: by its dict


def test_right_and_wrong_answers(run):
    assert_verdict(run(ADD_RIGHT, asserts=ASSERTS, args=STRICT), "pass", score=1.0)
    r = run(ADD_WRONG, asserts=ASSERTS, args=STRICT)
    assert_verdict(r, "assertion_fail", score=0.0)
    assert outcomes(r) == [("fail", "supervisor", "expected 3, got 0"), ("fail", "supervisor", "expected 4, got 0")]


def test_a_raising_call_fails_like_the_assert(run):
    code = "def add(a, b):\n    raise ValueError('no')\n"
    r = run(code, asserts=ASSERTS[:1], args=STRICT)
    assert_verdict(r, "assertion_fail", score=0.0)
    assert r.record["tests"][0]["message"].startswith("ValueError: no")


# ---------------------------------------------------------------------------
# Python's ==, rule by rule: the same verdicts with and without the flag.

SEMANTICS = """
def f(kind):
    return {
        "tuple": (4, 5), "list": [4, 5], "one": 1, "true": True, "onef": 1.0, "nan": float("nan"),
        "inf": float("inf"), "sum": 0.1 + 0.2, "big": 10 ** 40, "neg": -7,
        "dict": {"b": 2, "a": 1}, "numkeys": {1.0: "x", 2: "y"}, "set": {3, 1, 2}, "fset": frozenset({1, 2}),
        "nested": [(1, [2, {3: (4,)}]), None], "str": "it's\\n", "none": None, "empty": (),
    }[kind]

def g(a, b=0, *, c=0):
    return (a, b, c)
"""

# (assert, Python's verdict)
SEMANTIC_ASSERTS = [
    ("assert f('tuple') == (4, 5)", True),
    ("assert f('tuple') == [4, 5]", False),
    ("assert f('list') == [4, 5]", True),
    ("assert [4, 5] == f('tuple')", False),
    ("assert f('one') == 1.0", True),
    ("assert f('one') == True", True),
    ("assert f('true') == 1", True),
    ("assert f('onef') == True", True),
    ("assert f('nan') == 1e400", False),
    ("assert f('inf') == 1e400", True),
    ("assert f('sum') == 0.3", False),
    ("assert f('sum') == 0.30000000000000004", True),
    ("assert f('big') == 10000000000000000000000000000000000000000", True),
    ("assert f('big') == 1e40", False),
    ("assert f('neg') == -7", True),
    ("assert f('dict') == {'a': 1, 'b': 2}", True),
    ("assert f('dict') == {'a': 1, 'b': 3}", False),
    ("assert f('numkeys') == {True: 'x', 2.0: 'y'}", True),
    ("assert f('set') == {1, 2, 3}", True),
    ("assert f('set') == {1, 2}", False),
    ("assert f('fset') == {2, 1}", True),
    ("assert f('set') == [1, 2, 3]", False),
    ("assert f('nested') == [(1, [2, {3: (4,)}]), None]", True),
    ("assert f('nested') == [(1, [2, {3: [4]}]), None]", False),
    ("assert f('str') == \"it's\\n\"", True),
    ("assert f('str') == r\"it's\\n\"", False),
    ("assert f('none') == None", True),
    ("assert f('empty') == ()", True),
    ("assert g(1, c=3) == (1, 0, 3)", True),
    ("assert g(1, 2,) == (1, 2, 0), 'a message'", True),
    ("assert (1, 5, 0) == g(1, b=5)", True),
    ("assert len('abc') == 3", True),
]


def test_python_equality_rule_by_rule(run):
    asserts = [a for a, _ in SEMANTIC_ASSERTS]
    plain = run(SEMANTICS, asserts=asserts).record
    strict = run(SEMANTICS, asserts=asserts, args=STRICT).record
    want = ["pass" if ok else "fail" for _, ok in SEMANTIC_ASSERTS]
    assert [t["status"] for t in plain["tests"]] == want, plain["tests"]
    assert [t["status"] for t in strict["tests"]] == want, strict["tests"]
    assert {t["judged_by"] for t in strict["tests"]} == {"supervisor"}
    assert {t["judged_by"] for t in plain["tests"]} == {"sandbox"}  # --judge inline (the fixture)
    assert (plain["status"], plain["score"]) == (strict["status"], strict["score"])


def test_other_shapes_stay_in_the_sandbox(run):
    asserts = ["assert f('one')", "assert abs(f('sum') - 0.3) < 1e-9", "assert set(f('set')) == {1, 2, 3}",
               "assert f('one') == 1", "assert f(b'x'[:0] or 'one') == 1"]
    r = run(SEMANTICS, asserts=asserts, args=STRICT)
    assert_verdict(r, "pass")
    assert [t["judged_by"] for t in r.record["tests"]] == ["sandbox", "sandbox", "sandbox", "supervisor", "sandbox"]


@pytest.mark.parametrize("code", ["assert add(1, 2) == 3\\\n", "assert add(1, 2) == 3\\",
                                  "assert add(1, 2) == 3\\\n\\\n", "assert add(1, 2) == 3\\\nadd(0, 0)\n"])
def test_a_test_python_refuses_fails_with_and_without_the_flag(run, code):
    """A trailing backslash continuation is a SyntaxError in Python 3.11: the
    test fails in the sandbox by default, and must not pass under the flag."""
    plain = run(ADD_RIGHT, asserts=[code])
    strict = run(ADD_RIGHT, asserts=[code], args=STRICT)
    assert_verdict(plain, "assertion_fail", score=0.0)
    assert_verdict(strict, "assertion_fail", score=0.0)
    assert plain.record["tests"][0]["message"] == strict.record["tests"][0]["message"]
    assert strict.record["tests"][0]["judged_by"] == "sandbox"
    assert "SyntaxError" in strict.record["tests"][0]["message"], strict.record["tests"][0]


def test_native_task_keeps_index_visibility_weight_tier(run):
    task = {"task_id": "strict/native", "tests": [
        {"kind": "assert", "code": "assert add(1, 2) == 3", "weight": 2.0, "tier": "edge"},
        {"kind": "io", "stdin": "", "stdout": ""},
        {"kind": "assert", "code": "assert add(2, 2) == 5", "visibility": "hidden"},
        {"kind": "assert", "code": "assert add(2, 2) > 3"},
    ]}
    r = run(ADD_RIGHT, task=task, args=STRICT + ("--run-hidden",))
    rec = assert_verdict(r, "assertion_fail")
    got = [(t["index"], t["kind"], t["visibility"], t["weight"], t["tier"], t["status"], t["judged_by"])
           for t in rec["tests"]]
    assert got == [(0, "assert", "public", 2.0, "edge", "pass", "supervisor"),
                   (1, "io", "public", 1.0, "canonical", "pass", "supervisor"),
                   (2, "assert", "hidden", 1.0, "canonical", "fail", "supervisor"),
                   (3, "assert", "public", 1.0, "canonical", "pass", "sandbox")]
    assert rec["tests"][2]["message"] == "expected 5, got 4"


# ---------------------------------------------------------------------------
# MBPP: the same status and score for every task, with and without the flag.

MBPP = find_datasets() / "mbpp" / "mbpp.jsonl"

# Perturbations appended to each reference solution; NAME is the function
# the task's asserts call. Python's own == decides whether they still pass.
FLIP_TYPES = """
_orig_{name} = {name}
def {name}(*a, **k):
    r = _orig_{name}(*a, **k)
    t = type(r)
    if t is tuple: return list(r)
    if t is list: return tuple(r)
    if t is int and not isinstance(r, bool): return float(r)
    if t is set: return frozenset(r)
    if t is bool: return int(r)
    return r
"""
OFF_BY_ONE = """
_orig_{name} = {name}
def {name}(*a, **k):
    r = _orig_{name}(*a, **k)
    if type(r) in (int, float): return r + 1
    if type(r) is str: return r + "x"
    if type(r) is list and r: return r[:-1]
    return r
"""


def called_name(task):
    import re
    for a in task["test_list"]:
        m = re.match(r"assert\s+([A-Za-z_]\w*)\s*\(", a)
        if m:
            return m.group(1)
    return None


def plain_and_strict(tmp_path, tasks, rows):
    """The samples `rows` (with a "variant" each) evaluated without and with
    --strict-asserts: ({"plain": records, "strict": records} keyed by (task,
    sample), the samples whose status or score differ). A timeout on one
    side only is the clock, not the judge (MBPP/123's and HumanEval/75's
    references are slow), so it is not a difference."""
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = {}
    for mode, extra in (("plain", []), ("strict", ["--strict-asserts"])):
        path = tmp_path / ("%s.jsonl" % mode)
        r = subprocess.run([EXECEVAL, "eval", "--tasks", tasks, "--samples", samples, "-o", path, "-j", "2", "-q",
                            "-k", "1", *extra], capture_output=True, text=True, timeout=1800)
        assert r.returncode == 0, r.stderr[-2000:]
        out[mode] = {(x["task_id"], x["sample"]): x for x in map(json.loads, path.read_text().splitlines())}
    assert out["plain"].keys() == out["strict"].keys()
    plain, strict = out["plain"], out["strict"]
    diffs = [(k, plain[k]["status"], plain[k]["score"], strict[k]["status"], strict[k]["score"],
              strict[k]["variant"]) for k in plain
             if (plain[k]["status"], plain[k]["score"]) != (strict[k]["status"], strict[k]["score"])
             and "timeout" not in (plain[k]["status"], strict[k]["status"])]
    return out, diffs


@pytest.mark.skipif(not MBPP.exists(), reason="MBPP not found")
def test_mbpp_same_verdicts_with_and_without_strict(tmp_path):
    tasks = [json.loads(line) for line in MBPP.read_text().splitlines()]
    rows = []
    for t in tasks:
        rows.append({"task_id": t["task_id"], "code": t["code"], "variant": "reference"})
        name = called_name(t)
        if name:
            for variant, tpl in (("flip", FLIP_TYPES), ("off_by_one", OFF_BY_ONE)):
                rows.append({"task_id": t["task_id"], "code": t["code"] + "\n" + tpl.format(name=name),
                             "variant": variant})
    out, diffs = plain_and_strict(tmp_path, MBPP, rows)
    # Tasks 40, 88, 902 (Counter) and 653 (defaultdict) differed until
    # collections' dict types were compared by content (_like_a_dict).
    assert diffs == []
    judged = [t["judged_by"] for x in out["strict"].values() if x["variant"] == "reference"
              for t in x["tests"]]
    converted, total = judged.count("supervisor"), len(judged)
    print("MBPP: %d of %d assert tests converted (%.1f%%)" % (converted, total, 100.0 * converted / total))
    assert converted > 0.8 * total


# ---------------------------------------------------------------------------
# Sibling code that holds a converted literal (issue 11, item 3).

# No implementation: f answers from a table found in any test code the
# process holds (the harness's parsed tests, reached through gc).
TABLE_THIEF = '''
import gc, re

def f(x):
    # Dicts of strings only are not tracked by gc: look in the lists too.
    for o in gc.get_objects():
        for d in (o if isinstance(o, list) else [o]):
            if isinstance(d, dict) and isinstance(d.get("code"), str) and "TABLE" in d["code"]:
                m = re.search(r"TABLE = (\\{.*?\\})", d["code"])
                if m:
                    return eval(m.group(1)).get(x)
    return None
'''


def sibling_task(unittest_visibility, tag):
    table = {1: "alpha-" + tag, 2: "beta-" + tag}
    return {"task_id": "strict/sibling", "tests": [
        {"kind": "assert", "code": "assert f(1) == %r" % table[1]},
        {"kind": "assert", "code": "assert f(2) == %r" % table[2], "visibility": "hidden"},
        {"kind": "unittest", "visibility": unittest_visibility, "code":
            "import unittest\nTABLE = %r\nclass T(unittest.TestCase):\n"
            "    def test_a(self):\n        for k, v in TABLE.items(): self.assertEqual(f(k), v)\n" % table}]}


def test_a_hidden_siblings_literals_are_not_there_for_public_strict_asserts(run):
    import secrets
    task = sibling_task("hidden", secrets.token_hex(4))
    # Before the fix every hidden test was in the job: the thief passed all three.
    rec = assert_verdict(run(TABLE_THIEF, task=task, args=STRICT), "assertion_fail", score=0.0)
    assert [(t["status"], t["judged_by"], t.get("expected_visible")) for t in rec["tests"]] == [
        ("fail", "supervisor", False), ("skipped", "supervisor", True), ("skipped", "sandbox", None)]
    assert rec["tests"][0]["message"].startswith("expected 'alpha-"), rec["tests"][0]


def test_a_public_siblings_literals_stay_visible_and_the_record_says_so(run):
    import secrets
    task = sibling_task("public", secrets.token_hex(4))
    # The leak that remains: the table is test code the sandbox must run.
    rec = assert_verdict(run(TABLE_THIEF, task=task, args=STRICT), "pass")
    assert [(t["judged_by"], t.get("expected_visible")) for t in rec["tests"]] == [
        ("supervisor", True), ("supervisor", True), ("sandbox", None)]
