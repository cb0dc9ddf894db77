"""--judge separate (issue 17, experimental): the test code runs in a second
sandboxed interpreter that never runs a line of the candidate's code; the
candidate's names there are stubs whose calls the supervisor relays
(src/engine/evaluate_judge.c, src/protocol/relay.c; docs/protocol.md,
"Separate judge").

Each attack of docs/threat-model.md that forges a pass inline (the strict
xfails of test_hostile.py) is defeated here, with the exact verdict; then
the channel's own attacks (always-equal results, ending the interpreter
from a call, huge and deep values, a candidate that never answers, forged
frames), and parity with inline judging on HumanEval's canonical
solutions (a subset; EXECEVAL_PARITY=1 for all 164).

Every run passes --isolation cold: warm isolation refuses --judge separate
for now (exit 2, tested below).
"""
import json
import os
import pathlib
import subprocess
import textwrap

import pytest

from conftest import EXECEVAL

ADD_WRONG = "def add(a, b):\n    return 0\n"
ADD_OK = "def add(a, b):\n    return a + b\n"
ASSERTS = ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]
SEPARATE = ["--judge", "separate", "--isolation", "cold"]
HUMANEVAL = pathlib.Path("/work/shared/datasets/humaneval/HumanEval.jsonl")


def dedent(s):
    return textwrap.dedent(s).lstrip("\n")


def verdict(r):
    assert r.record is not None, (r.code, r.stderr)
    return r.record["status"], r.record["detail"]


def judged_by(r):
    return [t.get("judged_by") for t in r.record["tests"]]


# The three attacks docs/threat-model.md keeps as strict xfails inline
# (test_hostile.py: test_determined_tampering_of_assert_tests[*] and
# test_patching_unittest_does_not_pass_a_unittest_test).
FRAME_WALK = dedent("""
    import sys
    g = sys._getframe(1).f_globals
    def fake(test, ctx):
        return {"ev": "test", "index": test["index"], "status": "pass"}, None
    for k in list(g.get("_RUNNERS", {})):
        g["_RUNNERS"][k] = fake
    """)
STOLEN_EMIT = dedent("""
    import os, sys
    f, emit = sys._getframe(1), None
    while f is not None and emit is None:
        emit = f.f_locals.get("emit")
        f = f.f_back
    emit({"ev": "phase", "name": "import", "status": "ok"})
    for i in range(2):
        emit({"ev": "test", "index": i, "status": "pass"})
    emit({"ev": "done"})
    os._exit(0)
    """)


def test_frame_walk_runner_swap_is_defeated(run):
    r = run(FRAME_WALK + ADD_WRONG, asserts=ASSERTS, args=SEPARATE)
    assert verdict(r) == ("assertion_fail", "test 0 failed: AssertionError (line 1: assert add(1, 2) == 3)")
    assert r.record["score"] == 0.0
    assert judged_by(r) == ["judge", "judge"]


def test_stolen_emitter_is_defeated(run):
    r = run(STOLEN_EMIT + ADD_WRONG, asserts=ASSERTS, args=SEPARATE)
    assert verdict(r) == ("error", "protocol violation: test event from the candidate's call server")
    assert r.record["score"] == 0.0


UNITTEST_TASK = {"task_id": "ut/patch", "tests": [{"kind": "unittest", "code": dedent("""
    import unittest
    class T(unittest.TestCase):
        def test_a(self):
            self.assertEqual(add(1, 2), 3)
    """)}]}


def test_patching_unittest_is_defeated(run):
    code = "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n" + ADD_WRONG
    r = run(code, task=UNITTEST_TASK, args=SEPARATE)
    assert r.record["status"] == "assertion_fail", r.record
    assert judged_by(r) == ["judge"]
    # Inline, the same candidate forges the pass (the xfail of test_hostile.py).
    assert run(code, task=UNITTEST_TASK, args=["--isolation", "cold"]).record["status"] == "pass"


def test_honest_candidate_passes_every_kind(run):
    task = {"task_id": "kinds", "tests": [
        {"kind": "assert", "code": "assert add(1, 2) == 3"},
        {"kind": "program", "code": "def check(f):\n    assert f(2, 2) == 4\n    assert abs(f(0.1, 0.2) - 0.3) < 1e-9\ncheck(add)\n"},
        {"kind": "unittest", "code": UNITTEST_TASK["tests"][0]["code"]},
        {"kind": "assert", "code": "assert add(5, 5) == 10", "visibility": "hidden"}]}
    r = run(ADD_OK, task=task, args=SEPARATE)
    assert verdict(r) == ("pass", None)
    assert judged_by(r) == ["judge"] * 4
    assert r.record["score"] == 1.0


ATTACKS = {
    # always-equal: a handle, never equal to a builtin value
    "always_equal": (dedent("""
        class A:
            def __eq__(self, o): return True
            def __hash__(self): return 0
            def __bool__(self): return True
        def add(a, b):
            return A()
        """), "assertion_fail", "test 0 failed: AssertionError (line 1: assert add(1, 2) == 3)"),
    "sys_exit_in_call": ("import sys\ndef add(a, b):\n    sys.exit(0)\n", "error", "premature exit"),
    "os_exit_in_call": ("import os\ndef add(a, b):\n    os._exit(0)\n", "error", "premature exit"),
    "keyboard_interrupt_in_call": ("def add(a, b):\n    raise KeyboardInterrupt\n", "error", "premature exit"),
    "huge_return": ("def add(a, b):\n    return list(range(200000))\n", "assertion_fail", None),
    "deep_return": (dedent("""
        def add(a, b):
            x = []
            for _ in range(5000):
                x = [x]
            return x
        """), "assertion_fail", None),
    # frames on stdout are only output: the result channel is fd 4
    "forged_frames_on_stdout": (dedent("""
        import json
        for i, ev in enumerate([{"ev": "test", "index": 0, "status": "pass"}, {"ev": "done"}]):
            p = json.dumps(dict(ev, nonce="0" * 32, seq=5 + i))
            print("%d:%s," % (len(p), p), flush=True)
        """) + ADD_WRONG, "assertion_fail", "test 0 failed: AssertionError (line 1: assert add(1, 2) == 3)"),
    # frames on the result channel under a guessed nonce: a violation
    "forged_frames_on_fd4": (dedent("""
        import json, os
        for i, ev in enumerate([{"ev": "test", "index": 0, "status": "pass"}, {"ev": "done"}]):
            p = json.dumps(dict(ev, nonce="0" * 32, seq=3 + i)).encode()
            os.write(4, b"%d:%s," % (len(p), p))
        """) + ADD_WRONG, "error", "protocol violation: wrong nonce"),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_channel_attack(run, name):
    code, status, detail = ATTACKS[name]
    r = run(code, asserts=ASSERTS, args=SEPARATE)
    assert r.record["status"] == status, r.record
    if detail is not None:
        assert r.record["detail"] == detail, r.record
    assert r.record["score"] == 0.0


def test_huge_value_fails_cleanly_with_the_channel_named(run):
    r = run(ATTACKS["huge_return"][0], asserts=ASSERTS, args=SEPARATE)
    assert r.record["tests"][0]["message"] == "channel: the returned value is too large or too deep for the channel"


def test_candidate_that_never_answers_is_a_timeout(run):
    r = run("def add(a, b):\n    while True:\n        pass\n", asserts=ASSERTS, args=SEPARATE + ["--timeout", "1"])
    assert r.record["status"] == "timeout", r.record  # "(starved: ...)" on a loaded machine
    assert r.record["score"] == 0.0


def test_fallback_reruns_inline(run):
    # An instance of the candidate's class, asked for its length: an
    # operation the channel does not carry (only calls, attribute reads,
    # sets and method calls cross), so the task is judged inline and says so.
    code = "class P:\n    def __len__(self):\n        return 3\ndef make():\n    return P()\n"
    r = run(code, asserts=["assert len(make()) == 3"], args=SEPARATE)
    assert verdict(r) == ("pass", None)
    assert judged_by(r) == ["sandbox"]


def test_the_candidates_objects_are_used_through_the_channel(run):
    # Attribute reads, sets and method calls of the candidate's objects are
    # calls: judged by the judge, a wrong method still caught.
    code = ("class Counter:\n    def __init__(self):\n        self.n = 0\n"
            "    def bump(self, by=1):\n        self.n += by\n        return self.n\n")
    asserts = ["c = Counter()\nc.bump()\nc.bump(by=2)\nassert c.n == 3",
               "c = Counter()\nc.n = 10\nassert c.bump() == 11",
               "assert Counter().bump(5) == 6"]
    r = run(code, asserts=asserts, args=SEPARATE)
    assert [t["status"] for t in r.record["tests"]] == ["pass", "pass", "fail"], r.record
    assert judged_by(r) == ["judge"] * 3


def test_io_tasks_stay_inline(run):
    task = {"task_id": "io", "tests": [{"kind": "io", "stdin": "", "stdout": "hi\n"}]}
    r = run("print('hi')\n", task=task, args=SEPARATE)
    assert verdict(r) == ("pass", None)


def test_refused_where_not_built(tmp_path):
    for argv, msg in (([EXECEVAL, "run", "--judge", "separate", "--isolation", "warm", "--assert", "assert 1", "-"],
                       "not with --judge separate yet"),
                      ([EXECEVAL, "eval", "--isolation", "warm", "--judge", "separate", "--tasks", "x", "--samples", "y"],
                       "not with --judge separate yet"),
                      ([EXECEVAL, "serve", "--judge", "separate"], "not yet under serve")):
        p = subprocess.run(argv, input=b"x = 1\n", capture_output=True, timeout=60)
        assert p.returncode == 2, p
        assert msg in p.stderr.decode(), p.stderr


def eval_statuses(tmp_path, rows, mode):
    tasks = tmp_path / "tasks.jsonl"
    samples = tmp_path / "samples.jsonl"
    tasks.write_text("".join(json.dumps(r) + "\n" for r in rows))
    samples.write_text("".join(json.dumps({"task_id": r["task_id"], "completion": r["canonical_solution"]}) + "\n"
                               for r in rows))
    out = tmp_path / ("results-%s.jsonl" % mode)
    p = subprocess.run([EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-o", str(out),
                        "--judge", mode, "--isolation", "cold", "--no-history", "-j", "2"],
                       capture_output=True, timeout=1800)
    assert p.returncode in (0, 1), p.stderr.decode()[-2000:]
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    return {r["task_id"]: (r["status"], r["score"], tuple(t.get("judged_by") for t in r["tests"])) for r in recs}


@pytest.mark.skipif(not HUMANEVAL.exists(), reason="no HumanEval copy")
def test_humaneval_canonical_parity(tmp_path):
    rows = [json.loads(line) for line in HUMANEVAL.read_text().splitlines() if line.strip()]
    if os.environ.get("EXECEVAL_PARITY") != "1":
        rows = rows[::16]  # 11 tasks in make test; all 164 behind the variable
    inline = eval_statuses(tmp_path, rows, "inline")
    separate = eval_statuses(tmp_path, rows, "separate")
    assert set(inline) == set(separate)
    differ = {t: (inline[t][:2], separate[t][:2]) for t in inline if inline[t][:2] != separate[t][:2]}
    assert not differ
    fallbacks = [t for t in separate if "sandbox" in separate[t][2]]
    assert not fallbacks, fallbacks  # the aim: none falls back
    assert all(by == ("judge",) for _, _, by in separate.values())


PHASE_FAILURES = {
    "syntax": "def add(a, b:\n",
    "import_raises": "raise ValueError('x')\ndef add(a, b):\n    return a + b\n",
    "denied_import": "import socket\ndef add(a, b):\n    return a + b\n",
    "exit_at_import": "import os\nos._exit(0)\n",
}


@pytest.mark.parametrize("name", sorted(PHASE_FAILURES))
def test_phase_failures_read_as_inline(run, name):
    got = {}
    for mode in ("inline", "separate"):
        r = run(PHASE_FAILURES[name], asserts=["assert add(1, 2) == 3"],
                args=["--judge", mode, "--isolation", "cold"])
        got[mode] = (r.record["status"], r.record["detail"], r.record["score"],
                     [t["status"] for t in r.record["tests"]])
    assert got["separate"] == got["inline"]
