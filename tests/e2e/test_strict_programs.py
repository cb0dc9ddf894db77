"""--strict-asserts on `program` tests: HumanEval's check programs judged by
the supervisor, call by call.

Every hostile candidate here runs inside execeval's sandbox. The tests show
(1) the frame-walking attacks of test_hostile.py (DETERMINED), aimed at a
HumanEval-style program test, forge a pass without the flag and fail with
it; (2) the converted test stays one test in the record, fails at its
first wrong assert with "assert K of N: ...", and later calls never run
(so a later hang or crash cannot change the verdict); (3) on HumanEval,
the 164 canonical solutions and two perturbed variants of each get the
same status and score with and without the flag.
"""
import json

import pytest

from conftest import judged_inline
from test_eval import find_datasets
from test_hostile import ADD_WRONG, DETERMINED, assert_verdict, dedent
from test_strict_asserts import FLIP_TYPES, OFF_BY_ONE, plain_and_strict


@pytest.fixture
def run(run):
    """This file sets --strict-asserts against the in-sandbox program tests of the
    inline harness (where the attacks are live): --judge inline unless a
    test names a judge (the split judge's verdicts are
    test_judge_separate.py's)."""
    return judged_inline(run)


STRICT = ("--strict-asserts",)
ADD_RIGHT = "def add(a, b):\n    return a + b\n"

# A task in HumanEval's own format: its test is one program test,
# `{test}\ncheck(add)`.
HE_TASK = {"task_id": "he/add", "prompt": "def add(a, b):\n", "entry_point": "add",
           "test": "\n\nMETADATA = {\n    'author': 'jt',\n    'dataset': 'test'\n}\n\n\n"
                   "def check(candidate):\n    \"\"\"Sums.\"\"\"\n    assert candidate(1, 2) == 3\n"
                   "    assert True\n    assert candidate(2, b=2) == 4, 'keywords too'\n\n"}

# The attacks of test_hostile.py, aimed at a task with one program test.
ATTACKS = {
    "frame_walk_swaps_runner": DETERMINED["frame_walk_swaps_runner"],
    "stolen_emit": dedent("""
        import os, sys
        f, emit = sys._getframe(1), None
        while f is not None and emit is None:
            emit = f.f_locals.get("emit")
            f = f.f_back
        emit({"ev": "phase", "name": "import", "status": "ok"})
        emit({"ev": "test", "index": 0, "status": "pass"})
        emit({"ev": "done"})
        os._exit(0)
        """),
    # Knowing the strict path: swap its runner too, and claim values. The
    # expected ones never entered the sandbox, so it can only guess.
    "frame_walk_swaps_the_strict_runner": dedent("""
        import sys
        g = sys._getframe(1).f_globals
        def fake_calls(emit, test, ctx):
            for k in range(len(test["calls"])):
                emit({"ev": "test", "index": test["index"], "call": k, "status": "returned",
                      "value": g["_Raw"]('{"int":"3"}')})
            return True
        def fake(test, ctx):
            return {"ev": "test", "index": test["index"], "status": "pass"}, None
        g["_run_calls"] = fake_calls
        for k in list(g.get("_RUNNERS", {})):
            g["_RUNNERS"][k] = fake
        """),
}

ATTACKS_STRICT = {
    "frame_walk_swaps_runner": "test 0 failed: assert 1 of 2: expected 3, got 0",
    "stolen_emit": "test 0 failed: assert 1 of 2: the call raised",
    # call 0 claims 3 (right), call 1 claims 3 (wrong: 4)
    "frame_walk_swaps_the_strict_runner": "test 0 failed: assert 2 of 2: expected 4, got 3",
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attacks_forge_a_program_test_without_the_flag(run, name):
    """The control: the attack is live on the in-sandbox program test."""
    r = run(ATTACKS[name] + ADD_WRONG, task=HE_TASK)
    assert r.record["status"] == "pass", r.record
    assert r.record["tests"][0]["judged_by"] == "sandbox"  # --judge inline (the fixture)


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attacks_cannot_forge_a_strict_program(run, name):
    r = run(ATTACKS[name] + ADD_WRONG, task=HE_TASK, args=STRICT)
    rec = assert_verdict(r, "assertion_fail", ATTACKS_STRICT[name], score=0.0)
    assert [(t["kind"], t["judged_by"]) for t in rec["tests"]] == [("program", "supervisor")]


def test_the_converted_test_stays_one_program_test(run):
    plain = run(ADD_RIGHT, task=HE_TASK).record
    strict = run(ADD_RIGHT, task=HE_TASK, args=STRICT).record
    for rec in (plain, strict):
        assert (rec["status"], rec["score"], rec["passed"], rec["total"]) == ("pass", 1.0, 1, 1), rec
    t = strict["tests"][0]
    assert (t["index"], t["kind"], t["visibility"], t["tier"], t["weight"], t["status"], t["judged_by"],
            t["duration_ms"], t["message"]) == (0, "program", "public", "canonical", 1.0, "pass", "supervisor",
                                                None, None)


# Prints each call, so the record shows which calls ran.
COUNTING = """
import sys
_n = [0]
def add(a, b):
    _n[0] += 1
    print("call", _n[0])
    return {BODY}
"""


def counting(body):
    return COUNTING.replace("{BODY}", body)


def test_a_wrong_answer_stops_the_test_there(run):
    task = {"task_id": "p/stop", "tests": [{"kind": "program", "code": dedent("""
        def check(candidate):
            assert candidate(1, 1) == 2
            assert candidate(1, 2) == (4, 5)
            assert candidate(2, 2) == 4
        check(add)
        """)}]}
    code = counting("(4, 5) if _n[0] == 9 else [4, 5] if _n[0] == 2 else a + b")
    plain = run(code, task=task).record
    assert (plain["status"], plain["stdout"]) == ("assertion_fail", "call 1\ncall 2\n")
    rec = assert_verdict(run(code, task=task, args=STRICT), "assertion_fail",
                         "test 0 failed: assert 2 of 3: expected (4, 5), got [4, 5]", score=0.0)
    assert rec["stdout"] == "call 1\ncall 2\n", "the third call must not run"


def test_a_hang_after_the_first_failure_is_never_reached(run):
    task = {"task_id": "p/hang", "tests": [{"kind": "program", "code":
            "def check(c):\n    assert c(1, 1) == 2\n    assert c(5, 5) == 10\ncheck(add)\n"}]}
    code = counting("0 if _n[0] == 1 else __import__('time').sleep(100)")
    for args in ((), STRICT):
        assert_verdict(run(code, task=task, args=args, timeout=60), "assertion_fail", score=0.0)


def test_an_exception_fails_the_test_at_that_call(run):
    code = counting("a + b if _n[0] == 1 else 1 // 0")
    rec = assert_verdict(run(code, task=HE_TASK, args=STRICT), "assertion_fail", score=0.0)
    assert rec["tests"][0]["message"].startswith(
        "assert 2 of 2: ZeroDivisionError: integer division or modulo by zero"), rec
    assert rec["stdout"] == "call 1\ncall 2\n"
    assert run(code, task=HE_TASK).record["status"] == "assertion_fail"


def test_a_missing_entry_point_fails_like_check(run):
    code = "def other(a, b):\n    return a + b\n"
    rec = assert_verdict(run(code, task=HE_TASK, args=STRICT), "assertion_fail", score=0.0)
    assert rec["tests"][0]["message"].startswith("assert 1 of 2: NameError: name 'add' is not defined"), rec
    assert run(code, task=HE_TASK).record["status"] == "assertion_fail"


def test_strict_programs_in_public_and_hidden_with_the_gate(run):
    prog = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(%s) == %s\ncheck(add)\n"
    task = {"task_id": "p/gate", "tests": [
        {"kind": "program", "code": prog % ("2, 2", "4")},
        {"kind": "program", "code": prog % ("3, 3", "6"), "visibility": "hidden", "weight": 2.0},
        {"kind": "program", "code": "def check(c):\n    for i in range(3):\n        assert c(i, i) == 2 * i\n"
                                    "check(add)\n", "visibility": "hidden"}]}
    rec = assert_verdict(run(ADD_RIGHT, task=task, args=STRICT), "pass", score=1.0)
    assert [t["judged_by"] for t in rec["tests"]] == ["supervisor", "supervisor", "sandbox"]
    # a public failure: the gate skips the hidden tests
    rec = assert_verdict(run(ADD_WRONG, task=task, args=STRICT), "assertion_fail", score=0.0)
    assert [t["status"] for t in rec["tests"]] == ["fail", "skipped", "skipped"]
    # --run-hidden: every strict program runs and fails at its first call
    rec = assert_verdict(run(ADD_WRONG, task=task, args=STRICT + ("--run-hidden",)), "assertion_fail", score=0.0)
    assert [t["message"] for t in rec["tests"]][:2] == ["assert 1 of 2: expected 3, got 0"] * 2


def test_other_program_shapes_stay_in_the_sandbox(run):
    task = {"task_id": "p/other", "tests": [
        {"kind": "program", "code": "def check(candidate):\n    assert abs(candidate(1, 2) - 3) < 1e-6\n"
                                    "check(add)\n"},
        {"kind": "program", "code": "def check(candidate):\n\tassert candidate(1, 2) == 3\ncheck(add)\n"},
        {"kind": "program", "code": "import math\ndef check(candidate):\n    assert candidate(1, 2) == 3\n"
                                    "check(add)\n"}]}
    rec = assert_verdict(run(ADD_RIGHT, task=task, args=STRICT), "pass")
    assert [t["judged_by"] for t in rec["tests"]] == ["sandbox"] * 3


# ---------------------------------------------------------------------------
# HumanEval: the same status and score for every task, with and without.

HUMANEVAL = find_datasets() / "humaneval" / "HumanEval.jsonl"


@pytest.mark.skipif(not HUMANEVAL.exists(), reason="HumanEval not found")
def test_humaneval_same_verdicts_with_and_without_strict(tmp_path):
    tasks = [json.loads(line) for line in HUMANEVAL.read_text().splitlines()]
    rows = []
    for t in tasks:
        program = t["prompt"] + t["canonical_solution"]
        rows.append({"task_id": t["task_id"], "code": program, "variant": "reference"})
        for variant, tpl in (("flip", FLIP_TYPES), ("off_by_one", OFF_BY_ONE)):
            rows.append({"task_id": t["task_id"], "code": program + "\n" + tpl.format(name=t["entry_point"]),
                         "variant": variant})
    out, diffs = plain_and_strict(tmp_path, HUMANEVAL, rows)
    assert diffs == []
    refs = [x for x in out["strict"].values() if x["variant"] == "reference"]
    converted = sum(x["tests"][0]["judged_by"] == "supervisor" for x in refs)
    failed = {v: sum(x["status"] != "pass" for x in out["strict"].values() if x["variant"] == v)
              for v in ("reference", "flip", "off_by_one")}
    timeouts = sum(x["status"] == "timeout" for m in out.values() for x in m.values())
    print("HumanEval: %d of %d program tests converted; not passing (strict): %s; timeouts: %d"
          % (converted, len(refs), failed, timeouts))
    assert converted == 135  # build/unit/pyprogram_cases.h, from Python's ast
    assert failed["off_by_one"] > 100  # the variants are live


# ---------------------------------------------------------------------------
# No oracle with --run-hidden (issue 11, item 2): the answer after a call
# does not depend on whether its value matched.

# Returns 0 (wrong) first, then prints which calls it saw: a candidate that
# learns "my first value was wrong" by never being called again.
PROBE_ORACLE = dedent("""
    calls = []
    def add(a, b):
        calls.append((a, b))
        print("CALLS %d" % len(calls), flush=True)
        return 0 if len(calls) == 1 else a + b
    """)


def test_run_hidden_answers_strict_program_calls_without_a_verdict(run):
    prog = ("def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(2, 2) == 4\n"
            "    assert candidate(3, 3) == 6\ncheck(add)\n")
    task = {"task_id": "p/oracle", "tests": [{"kind": "program", "code": prog},
                                             {"kind": "assert", "code": "assert True", "visibility": "hidden"}]}
    # gated (the default): check() stops at its first failing assert
    rec = assert_verdict(run(PROBE_ORACLE, task=task, args=STRICT), "assertion_fail", score=0.0)
    assert rec["stdout"] == "CALLS 1\n"
    assert rec["phases"][-1]["mode"] == "gated"
    # --run-hidden: the same 'c' after a mismatch, so every call runs; the
    # verdict is still the first mismatch's
    rec = assert_verdict(run(PROBE_ORACLE, task=task, args=STRICT + ("--run-hidden",)), "assertion_fail",
                         score=0.5)
    assert rec["stdout"] == "CALLS 1\nCALLS 2\nCALLS 3\n", "the candidate learnt its verdict while running"
    assert [t["status"] for t in rec["tests"]] == ["fail", "pass"]
    assert rec["tests"][0]["message"] == "assert 1 of 3: expected 3, got 0"
    assert rec["phases"][-1]["mode"] == "always"
