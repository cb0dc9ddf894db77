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

Every run-level case runs under both isolations (the `sep` fixture:
--isolation cold, then warm: each sandbox a fork of a warm worker of its
own, two per slot), with the same exact verdict; the attacks run once more
through `serve --judge separate` (/v1/run, /v1/batch, /get_reward). Then
warm against cold on the bundled example set, and nothing of one
evaluation (a module global, a sys.modules entry, a file in /tmp, on the
candidate's side or the judge's) reaching the next.
"""
import collections
import json
import os
import pathlib
import signal
import subprocess
import textwrap

import pytest

from conftest import EXECEVAL, REPO
from serve_client import serve  # noqa: F401 (fixture)

ADD_WRONG = "def add(a, b):\n    return 0\n"
ADD_OK = "def add(a, b):\n    return a + b\n"
ASSERTS = ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]
ISOLATIONS = ("cold", "warm")
HUMANEVAL = pathlib.Path("/work/shared/datasets/humaneval/HumanEval.jsonl")


def dedent(s):
    return textwrap.dedent(s).lstrip("\n")


def verdict(r):
    assert r.record is not None, (r.code, r.stderr)
    return r.record["status"], r.record["detail"]


def judged_by(r):
    return [t.get("judged_by") for t in r.record["tests"]]


@pytest.fixture(params=ISOLATIONS)
def sep(request):
    """The flags of --judge separate under each isolation."""
    return ["--judge", "separate", "--isolation", request.param]


def isolation_of(args):
    return args[args.index("--isolation") + 1]


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


def test_frame_walk_runner_swap_is_defeated(run, sep):
    r = run(FRAME_WALK + ADD_WRONG, asserts=ASSERTS, args=sep)
    assert verdict(r) == ("assertion_fail",
                          "test 0 failed: AssertionError: expected 3, got 0 (line 1: assert add(1, 2) == 3)")
    assert r.record["score"] == 0.0
    assert judged_by(r) == ["judge", "judge"]


def test_stolen_emitter_is_defeated(run, sep):
    r = run(STOLEN_EMIT + ADD_WRONG, asserts=ASSERTS, args=sep)
    assert verdict(r) == ("error", "protocol violation: test event from the candidate's call server")
    assert r.record["score"] == 0.0


UNITTEST_TASK = {"task_id": "ut/patch", "tests": [{"kind": "unittest", "code": dedent("""
    import unittest
    class T(unittest.TestCase):
        def test_a(self):
            self.assertEqual(add(1, 2), 3)
    """)}]}


PATCH_UNITTEST = "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n" + ADD_WRONG


def test_patching_unittest_is_defeated(run, sep):
    r = run(PATCH_UNITTEST, task=UNITTEST_TASK, args=sep)
    assert r.record["status"] == "assertion_fail", r.record
    assert judged_by(r) == ["judge"]
    # Inline, the same candidate forges the pass (the xfail of test_hostile.py).
    inline = run(PATCH_UNITTEST, task=UNITTEST_TASK, args=["--judge", "inline", "--isolation", isolation_of(sep)])
    assert inline.record["status"] == "pass"


KINDS_TASK = {"task_id": "kinds", "tests": [
    {"kind": "assert", "code": "assert add(1, 2) == 3"},
    {"kind": "program",
     "code": "def check(f):\n    assert f(2, 2) == 4\n    assert abs(f(0.1, 0.2) - 0.3) < 1e-9\ncheck(add)\n"},
    {"kind": "unittest", "code": UNITTEST_TASK["tests"][0]["code"]},
    {"kind": "assert", "code": "assert add(5, 5) == 10", "visibility": "hidden"}]}


def test_honest_candidate_passes_every_kind(run, sep):
    r = run(ADD_OK, task=KINDS_TASK, args=sep)
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
        """), "assertion_fail",
        "test 0 failed: AssertionError: expected 3, got <remote A> (line 1: assert add(1, 2) == 3)"),
    "sys_exit_in_call": ("import sys\ndef add(a, b):\n    sys.exit(0)\n", "error", "premature exit"),
    "os_exit_in_call": ("import os\ndef add(a, b):\n    os._exit(0)\n", "error", "premature exit"),
    "keyboard_interrupt_in_call": ("def add(a, b):\n    raise KeyboardInterrupt\n", "error", "premature exit"),
    # past what streams (32 Mi characters): a clean channel error
    "huge_return": ("def add(a, b):\n    return 'x' * 40_000_000\n", "assertion_fail", None),
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
        """) + ADD_WRONG, "assertion_fail",
     "test 0 failed: AssertionError: expected 3, got 0 (line 1: assert add(1, 2) == 3)"),
    # frames on the result channel under a guessed nonce: a violation
    "forged_frames_on_fd4": (dedent("""
        import json, os
        for i, ev in enumerate([{"ev": "test", "index": 0, "status": "pass"}, {"ev": "done"}]):
            p = json.dumps(dict(ev, nonce="0" * 32, seq=3 + i)).encode()
            os.write(4, b"%d:%s," % (len(p), p))
        """) + ADD_WRONG, "error", "protocol violation: wrong nonce"),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_channel_attack(run, sep, name):
    code, status, detail = ATTACKS[name]
    r = run(code, asserts=ASSERTS, args=sep)
    assert r.record["status"] == status, r.record
    if detail is not None:
        assert r.record["detail"] == detail, r.record
    assert r.record["score"] == 0.0


HUGE_MESSAGE = "channel: the returned value is too large or too deep for the channel"


def test_huge_value_fails_cleanly_with_the_channel_named(run, sep):
    r = run(ATTACKS["huge_return"][0], asserts=ASSERTS, args=sep)
    assert r.record["tests"][0]["message"] == HUGE_MESSAGE


NEVER_ANSWERS = "def add(a, b):\n    while True:\n        pass\n"


def test_candidate_that_never_answers_is_a_timeout(run, sep):
    r = run(NEVER_ANSWERS, asserts=ASSERTS, args=sep + ["--timeout", "1"])
    assert r.record["status"] == "timeout", r.record  # "(starved: ...)" on a loaded machine
    assert r.record["score"] == 0.0
    # The clock covers both sides: the test in flight is not run, as inline
    # (not a "channel" failure because the candidate's timer fired first).
    assert [t["status"] for t in r.record["tests"]] == ["not_run", "not_run"], r.record["tests"]


ENDS_IN_A_CALL = {
    "exit": "import os\ndef add(a, b):\n    os._exit(0)\n",
    "signal": "import os, signal\ndef add(a, b):\n    os.kill(os.getpid(), signal.SIGKILL)\n",
}


@pytest.mark.parametrize("name", sorted(ENDS_IN_A_CALL))
def test_a_candidate_ending_its_process_in_a_call_has_the_test_not_run(run, sep, name):
    """Inline, the harness dies in the test: it is not run. The judge's
    test in flight fails on its channel ("channel_ended"), and the
    supervisor counts it not run, as inline (not "fail")."""
    inline = run(ENDS_IN_A_CALL[name], asserts=ASSERTS, args=["--judge", "inline"]).record
    split = run(ENDS_IN_A_CALL[name], asserts=ASSERTS, args=sep).record
    assert (split["status"], split["detail"]) == (inline["status"], inline["detail"]), (split, inline)
    assert [t["status"] for t in split["tests"]] == [t["status"] for t in inline["tests"]] == ["not_run"] * 2
    assert [t["judged_by"] for t in split["tests"]] == ["judge"] * 2, split["tests"]


def test_an_operation_the_channel_cannot_carry_fails_the_test(run, sep):
    # An instance of the candidate's class, asked for its length: only
    # calls, attribute reads, sets and method calls cross, and == against a
    # builtin value (unequal). The test fails, in the judge, saying why;
    # it is never judged in the candidate's interpreter (issue 33).
    code = "class P:\n    def __len__(self):\n        return 3\ndef make():\n    return P()\n"
    r = run(code, asserts=["assert len(make()) == 3"], args=sep)
    assert verdict(r) == ("assertion_fail", "test 0 failed: channel: an operation on a remote P cannot cross")
    assert judged_by(r) == ["judge"]


def test_a_refused_test_fails_alone(run, sep):
    # Only the test the channel cannot carry fails; the others keep the
    # judge's verdicts, and a name it bound before the refusal stays bound.
    code = "class P:\n    def __len__(self):\n        return 3\ndef make():\n    return P()\n" + ADD_OK
    asserts = ["assert add(1, 2) == 3", "p = make()\nassert len(p) == 3", "assert add(2, 2) == 5",
               "assert p is not None", "assert add(2, 2) == 4"]
    r = run(code, asserts=asserts, args=sep)
    assert [t["status"] for t in r.record["tests"]] == ["pass", "fail", "fail", "pass", "pass"], r.record
    assert judged_by(r) == ["judge"] * 5
    assert verdict(r) == ("assertion_fail", "test 1 failed: channel: an operation on a remote P cannot cross")


FORCED_FALLBACKS = {
    # The tested name is not callable: Python's own error, in the judge.
    "not_callable": ("add = 0\n", "test 0 failed: TypeError: 'int' object is not callable "
                                   "(line 1: assert add(1, 2) == 3)"),
    # A value the channel carries by its type's name only, inside a set: no hash here.
    "opaque_in_a_set": ("class O:\n    def __eq__(self, o): return True\n    __hash__ = object.__hash__\n"
                        "def add(a, b):\n    return {O()}\n",
                        "test 0 failed: channel: a O of the candidate's, known by its type's name only cannot cross"),
    # Its truth, asked of an object of the candidate's.
    "truth": ("class P:\n    def __bool__(self): return True\ndef add(a, b):\n    return P()\n",
              "test 0 failed: AssertionError: expected 3, got <remote P> (line 1: assert add(1, 2) == 3)"),
}


@pytest.mark.parametrize("name", sorted(FORCED_FALLBACKS))
def test_a_forced_fallback_with_a_runner_swap_never_passes(run, sep, name):
    # Issue 33's forgery: the frame walk swaps the inline runners, then the
    # candidate makes the channel refuse; every test (hidden ones too) used
    # to be judged inline, where the swap passed it. Now each fails in the
    # judge, and the summary's counts say "judge" only.
    tail, detail = FORCED_FALLBACKS[name]
    task = {"task_id": "forced", "entry_point": "add", "tests": [
        {"kind": "assert", "code": "assert add(1, 2) == 3"},
        {"kind": "program", "code": "def check(candidate):\n    assert candidate(2, 2) == 4\ncheck(add)\n"},
        {"kind": "unittest", "code": "import unittest\nclass T(unittest.TestCase):\n"
                                     "    def test_a(self):\n        self.assertEqual(add(1, 2), 3)\n"},
        {"kind": "assert", "code": "assert add(5, 5) == 10", "visibility": "hidden"}]}
    r = run(FRAME_WALK + tail, task=task, args=sep)
    assert verdict(r) == ("assertion_fail", detail), r.record
    assert r.record["reward"] == -1 and r.record["score"] == 0.0
    assert [t["status"] for t in r.record["tests"]] == ["fail", "fail", "fail", "skipped"], r.record
    assert judged_by(r) == ["judge"] * 4


def test_hidden_tests_follow_the_public_verdict(run, sep):
    # A public test the channel refuses fails: the hidden ones are skipped.
    code = "class P:\n    def __len__(self):\n        return 3\ndef make():\n    return P()\n" + ADD_OK
    task = {"task_id": "gate", "tests": [
        {"kind": "assert", "code": "assert len(make()) == 3"},
        {"kind": "assert", "code": "assert add(1, 2) == 3"},
        {"kind": "assert", "code": "assert add(5, 5) == 10", "visibility": "hidden"}]}
    r = run(code, task=task, args=sep)
    assert [(t["status"], t["judged_by"]) for t in r.record["tests"]] == [
        ("fail", "judge"), ("pass", "judge"), ("skipped", "judge")], r.record


def test_an_unfinished_pair_is_the_verdict_without_an_inline_run(run, sep):
    # A refused test, then a call that never returns: the pair's timeout
    # is the verdict, and no inline run judges anything of the judge's.
    code = FRAME_WALK + "class P:\n    pass\ndef make():\n    return P()\n" + NEVER_ANSWERS
    r = run(code, asserts=["assert make()", "assert add(1, 2) == 3"],
            args=sep + ["--timeout", "1"])
    assert r.record["status"] == "timeout", r.record
    assert [(t["status"], t["judged_by"]) for t in r.record["tests"]] == [("fail", "judge"),
                                                                          ("not_run", "judge")]


COMPLEX_AND_TYPES = dedent("""
    import cmath
    def angle_complex(a, b):
        return cmath.phase(a + b)
    def polar_rect(x, y):
        return (abs(complex(x, y)), cmath.rect(2, cmath.pi))
    def remove_datatype(xs, t):
        return [x for x in xs if not isinstance(x, t)]
    """)


def test_complex_numbers_and_builtin_types_are_the_judges(run, sep):
    # MBPP 124, 590 and 533's shapes: they crossed by name only and made
    # the whole task fall back; now values, judged as Python does.
    asserts = ["assert angle_complex(0, 1j) == 1.5707963267948966",
               "assert polar_rect(3, 4) == (5.0, (-2+2.4492935982947064e-16j))",
               "assert remove_datatype((4, 5, 4.5), int) == [4.5]",
               "assert polar_rect(3, 4)[1] == -2"]
    r = run(COMPLEX_AND_TYPES, asserts=asserts, args=sep)
    assert [t["status"] for t in r.record["tests"]] == ["pass", "pass", "pass", "fail"], r.record
    assert judged_by(r) == ["judge"] * 4


def test_a_call_test_returning_a_complex_is_judged_as_python(run):
    # A call test's supervisor: 2+0j == 2, abs() of a complex is a float.
    code = "def f(x):\n    return complex(x, 0)\ndef g(x):\n    return complex(x, 1)\n"
    task = {"task_id": "cplx", "tests": [{"kind": "call", "fn": "f", "args": [2], "expected": 2},
                                         {"kind": "call", "fn": "g", "args": [2], "expected": 2}]}
    r = run(code, task=task)
    assert [(t["status"], t["message"]) for t in r.record["tests"]] == [
        ("pass", None), ("fail", "expected 2, got (2+1j)")], r.record


MIXED_TASK = {"task_id": "mixed", "prompt": "", "tests": [
    {"kind": "io", "stdin": "", "stdout": "ready\n"},
    {"kind": "call", "fn": "add", "args": [1, 2], "expected": 3},
    {"kind": "assert", "code": "assert add(2, 2) == 4"},
    {"kind": "program", "code": "def check(f):\n    assert f(3, 3) == 6\ncheck(add)\n"},
    {"kind": "assert", "code": "assert add(5, 5) == 10", "visibility": "hidden"},
    {"kind": "call", "fn": "add", "args": [5, 6], "expected": 11, "visibility": "hidden"}]}
MIXED_BY = ["supervisor", "supervisor", "judge", "judge", "judge", "supervisor"]


def test_a_mixed_task_has_each_test_judged_by_the_strongest_judge(run, sep):
    # io and call tests by the supervisor, assert and program tests by the
    # judge: not the whole task inline.
    r = run("print('ready')\n" + ADD_OK, task=MIXED_TASK, args=sep)
    assert verdict(r) == ("pass", None), r.record
    assert judged_by(r) == MIXED_BY
    # The frame walk forges the assert and program tests inline (its fake
    # runner's "pass" is no value to the supervisor's call test); here they
    # fail, and the supervisor's verdicts stand.
    forged = run("print('ready')\n" + FRAME_WALK + "def add(a, b):\n    return 3\n", task=MIXED_TASK, args=sep)
    assert [t["status"] for t in forged.record["tests"]] == ["pass", "fail", "fail", "fail", "skipped", "skipped"], \
        forged.record
    assert judged_by(forged) == MIXED_BY


# A mixed task whose supervisor's tests are io only: the third run's job
# holds those alone (never the judge's tests), yet its import phase runs,
# as inline's does with the assert tests in its job: the record's phases,
# statuses and verdict are inline's.
IO_MIXED_TASK = {"task_id": "io-mixed", "prompt": "", "tests": [
    {"kind": "assert", "code": "assert add(1, 2) == 3"},
    {"kind": "io", "stdin": "1 2\n", "stdout": "3\n"},
    {"kind": "io", "stdin": "2 2\n", "stdout": "4\n", "visibility": "hidden"},
    {"kind": "assert", "code": "assert add(5, 5) == 10", "visibility": "hidden"}]}
IO_MAIN = "if __name__ == '__main__':\n    print(sum(map(int, input().split())))\n"


@pytest.mark.parametrize("code", [ADD_OK + IO_MAIN, "def add(a, b):\n    return a - b\n" + IO_MAIN],
                         ids=["right", "wrong"])
def test_a_mixed_task_of_io_tests_reads_as_inline(run, sep, code):
    inline = run(code, task=IO_MIXED_TASK, args=["--isolation", isolation_of(sep)])
    r = run(code, task=IO_MIXED_TASK, args=sep)

    def seen(rec):
        return (rec["status"], rec["detail"], [(p["name"], p["status"]) for p in rec["phases"]],
                [t["status"] for t in rec["tests"]])
    assert seen(r.record) == seen(inline.record), (r.record, inline.record)
    assert ("import", "ok") in seen(r.record)[2]
    assert judged_by(r) == ["judge", "supervisor", "supervisor", "judge"]


# A mixed task whose public tests are all the supervisor's: the judge's
# gate opens at once, so its hidden assert runs while the public call test
# is still unjudged. A candidate that ends its process in that assert's
# call must get inline's verdict, decided by the public call test (the
# examples' ex/flatten and ex/merge_sorted hostile samples).
AHEAD_TASK = {"task_id": "ahead", "prompt": "", "tests": [
    {"kind": "call", "fn": "f", "args": [1], "expected": 1},
    {"kind": "assert", "code": "assert f(2) == 2", "visibility": "hidden"}]}
AHEAD = {
    # ends in every call: inline, in the public call test
    "exit_in_every_call": ("import os\ndef f(x):\n    os._exit(0)\n",
                           ("error", "premature exit"), ["not_run", "not_run"]),
    # wrong on the public test, ends only in the hidden one's call: inline,
    # the gate closes before it
    "exit_in_the_hidden_call": ("import os\ndef f(x):\n    if x == 2:\n        os._exit(0)\n    return 0\n",
                                ("assertion_fail", "test 0 failed: expected 1, got 0"), ["fail", "skipped"]),
    # a memory bomb in every call: inline, in the public call test
    "memory_bomb_in_every_call": ("def f(x):\n    h = []\n    while True:\n        h.append(b'x' * (32 << 20))\n",
                                  ("error", "memory limit"), ["not_run", "not_run"]),
}


@pytest.mark.parametrize("name", sorted(AHEAD))
def test_a_candidate_ending_in_a_hidden_test_run_ahead_gets_inlines_verdict(run, sep, name):
    code, want, statuses = AHEAD[name]
    task = dict(AHEAD_TASK, limits={"memory_mb": 128})
    inline = run(code, task=task, args=["--isolation", isolation_of(sep)])
    assert (verdict(inline), [t["status"] for t in inline.record["tests"]]) == (want, statuses), inline.record
    r = run(code, task=task, args=sep)
    assert (verdict(r), [t["status"] for t in r.record["tests"]]) == (want, statuses), r.record
    assert judged_by(r) == ["supervisor", "judge"]
    assert r.record["score"] == 0.0


def test_a_candidate_ending_in_a_hidden_test_after_a_public_pass_ends_the_run(run, sep):
    # The public call test passes: the gate opens inline too, and the
    # hidden assert's call ends the candidate, whichever side ran it.
    code = "import os\ndef f(x):\n    if x == 2:\n        os._exit(0)\n    return x\n"
    r = run(code, task=AHEAD_TASK, args=sep)
    assert verdict(r) == ("error", "premature exit"), r.record
    assert r.record["tests"][0]["status"] == "pass", r.record
    assert judged_by(r) == ["supervisor", "judge"]


def test_the_candidates_objects_are_used_through_the_channel(run, sep):
    # Attribute reads, sets and method calls of the candidate's objects are
    # calls: judged by the judge, a wrong method still caught.
    code = ("class Counter:\n    def __init__(self):\n        self.n = 0\n"
            "    def bump(self, by=1):\n        self.n += by\n        return self.n\n")
    asserts = ["c = Counter()\nc.bump()\nc.bump(by=2)\nassert c.n == 3",
               "c = Counter()\nc.n = 10\nassert c.bump() == 11",
               "assert Counter().bump(5) == 6"]
    r = run(code, asserts=asserts, args=sep)
    assert [t["status"] for t in r.record["tests"]] == ["pass", "pass", "fail"], r.record
    assert judged_by(r) == ["judge"] * 3


def test_io_tasks_stay_inline(run, sep):
    task = {"task_id": "io", "tests": [{"kind": "io", "stdin": "", "stdout": "hi\n"}]}
    r = run("print('hi')\n", task=task, args=sep)
    assert verdict(r) == ("pass", None)


def eval_statuses(tmp_path, rows, mode, isolation="cold"):
    tasks = tmp_path / "tasks.jsonl"
    samples = tmp_path / "samples.jsonl"
    tasks.write_text("".join(json.dumps(r) + "\n" for r in rows))
    samples.write_text("".join(json.dumps({"task_id": r["task_id"], "completion": r["canonical_solution"]}) + "\n"
                               for r in rows))
    out = tmp_path / ("results-%s-%s.jsonl" % (mode, isolation))
    p = subprocess.run([EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-o", str(out),
                        "--judge", mode, "--isolation", isolation, "--no-history", "-j", "2"],
                       capture_output=True, timeout=1800)
    assert p.returncode in (0, 1), p.stderr.decode()[-2000:]
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    return {r["task_id"]: (r["status"], r["score"], tuple(t.get("judged_by") for t in r["tests"])) for r in recs}


@pytest.mark.skipif(not HUMANEVAL.exists(), reason="no HumanEval copy")
@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_humaneval_canonical_parity(tmp_path, isolation):
    rows = [json.loads(line) for line in HUMANEVAL.read_text().splitlines() if line.strip()]
    if os.environ.get("EXECEVAL_PARITY") != "1":
        rows = rows[::16]  # 11 tasks in make test; all 164 behind the variable
    inline = eval_statuses(tmp_path, rows, "inline", isolation)
    separate = eval_statuses(tmp_path, rows, "separate", isolation)
    assert set(inline) == set(separate)
    differ = {t: (inline[t][:2], separate[t][:2]) for t in inline if inline[t][:2] != separate[t][:2]}
    assert not differ
    assert all(by == ("judge",) for _, _, by in separate.values())


PHASE_FAILURES = {
    "syntax": "def add(a, b:\n",
    "import_raises": "raise ValueError('x')\ndef add(a, b):\n    return a + b\n",
    "denied_import": "import socket\ndef add(a, b):\n    return a + b\n",
    "exit_at_import": "import os\nos._exit(0)\n",
}


@pytest.mark.parametrize("name", sorted(PHASE_FAILURES))
def test_phase_failures_read_as_inline(run, sep, name):
    got = {}
    for mode in ("inline", "separate"):
        r = run(PHASE_FAILURES[name], asserts=["assert add(1, 2) == 3"],
                args=["--judge", mode, "--isolation", isolation_of(sep)])
        got[mode] = (r.record["status"], r.record["detail"], r.record["score"],
                     [t["status"] for t in r.record["tests"]])
    assert got["separate"] == got["inline"]


# ---------------------------------------------------------------------------
# serve --judge separate: the same attacks, the same exact verdicts as run.

SERVE_TASK = {"task_id": "sep/add", "prompt": "", "tests": [{"kind": "assert", "code": a} for a in ASSERTS]}
SERVE_CASES = dict(
    {name: (code, SERVE_TASK, status, detail) for name, (code, status, detail) in ATTACKS.items()},
    frame_walk=(FRAME_WALK + ADD_WRONG, SERVE_TASK, "assertion_fail",
                "test 0 failed: AssertionError: expected 3, got 0 (line 1: assert add(1, 2) == 3)"),
    stolen_emit=(STOLEN_EMIT + ADD_WRONG, SERVE_TASK, "error",
                 "protocol violation: test event from the candidate's call server"),
    patch_unittest=(PATCH_UNITTEST, UNITTEST_TASK, "assertion_fail", None),
    never_answers=(NEVER_ANSWERS, dict(SERVE_TASK, limits={"timeout_s": 1}), "timeout", None),
    honest=(ADD_OK, KINDS_TASK, "pass", None),
)


def essence(rec):
    """What must agree between two judgings of one candidate (a timeout's
    detail may say "(starved: ...)" under load: left out)."""
    return (rec["status"], rec["detail"] if rec["status"] != "timeout" else None, rec["score"],
            [(t["status"], t.get("message"), t.get("judged_by")) for t in rec["tests"]])


def serve_banner_isolation(s):
    return s.banner.split(" isolation")[0].rsplit(" ", 1)[-1]


def test_serve_judges_separately_with_the_verdicts_of_run(serve, run):
    s = serve("--judge", "separate")
    if os.environ.get("EXECEVAL_ISOLATION") in (None, "auto", "warm"):
        assert serve_banner_isolation(s) == "warm", s.banner  # auto picks warm as root
    wrong = {}
    for name, (code, task, status, detail) in sorted(SERVE_CASES.items()):
        a = s.run({"task": task, "candidate": code})
        assert a.status == 200, (name, a)
        rec = a.json
        if rec["status"] != status or (detail is not None and rec["detail"] != detail):
            wrong[name] = ("expected", status, detail, "got", rec["status"], rec["detail"])
            continue
        cold = run(code, task=task, args=["--judge", "separate", "--isolation", "cold"]).record
        if essence(rec) != essence(cold):
            wrong[name] = ("serve", essence(rec), "run, cold", essence(cold))
    assert not wrong, wrong
    assert s.run({"task": SERVE_TASK, "candidate": ATTACKS["huge_return"][0]}).json["tests"][0]["message"] \
        == HUGE_MESSAGE


def test_serve_batch_is_judged_separately(serve):
    s = serve("--judge", "separate")
    runs = [{"task": SERVE_TASK, "candidate": FRAME_WALK + ADD_WRONG if i % 2 else ADD_OK, "sample": i}
            for i in range(8)]
    a = s.batch(runs)
    assert a.status == 200, a
    got = [(r["sample"], r["status"], [t["judged_by"] for t in r["tests"]]) for r in a.json["records"]]
    assert got == [(i, "assertion_fail" if i % 2 else "pass", ["judge", "judge"]) for i in range(8)], got


def test_get_reward_is_judged_separately(serve):
    # MBPP's shape as a label: its asserts go to the judge; the frame walk
    # forges its pass inline and is caught separately.
    label = {"task_id": 7, "text": "add", "code": "", "test_list": ASSERTS}
    fence = "```python\n%s```"
    body = {"query": [fence % (FRAME_WALK + ADD_WRONG), fence % ADD_OK], "labels": [label, label]}
    assert serve("--judge", "separate").post("/get_reward", body).json["rewards"] == [-1.0, 1.0]
    assert serve("--judge", "inline").post("/get_reward", body).json["rewards"] == [1.0, 1.0]


# ---------------------------------------------------------------------------
# Warm against cold, and nothing kept from one evaluation to the next.


def eval_records(tmp_path, tasks, samples, args, name):
    out = tmp_path / ("%s.jsonl" % name)
    p = subprocess.run([EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-o", str(out),
                        "--no-history", "-q"] + args, capture_output=True, timeout=1800)
    assert p.returncode in (0, 1), p.stderr.decode()[-2000:]
    return [json.loads(line) for line in out.read_text().splitlines()]


JUDGE_KINDS = ("assert", "program", "unittest")


def test_warm_and_cold_agree_on_the_example_set(tmp_path):
    """examples/ as it is (only 2 of its 45 tasks are of the judge's kinds
    alone, both class-based: the judge uses their objects through the
    channel), and its judge-kind view: each task's assert, program and
    unittest tests only (33 tasks), which the judge does judge."""
    examples = REPO / "examples"
    tasks = [json.loads(line) for line in (examples / "tasks.jsonl").read_text().splitlines()]
    view = [dict(t, tests=[x for x in t["tests"] if x["kind"] in JUDGE_KINDS]) for t in tasks]
    view = [t for t in view if t["tests"]]
    kept = {t["task_id"] for t in view}
    samples = [json.loads(line) for line in (examples / "samples.jsonl").read_text().splitlines()]
    sets = {"as_is": (examples / "tasks.jsonl", examples / "samples.jsonl"),
            "judge_kinds": (write_rows(tmp_path / "view-tasks.jsonl", view),
                            write_rows(tmp_path / "view-samples.jsonl",
                                       [x for x in samples if x["task_id"] in kept]))}
    for name, (task_file, sample_file) in sets.items():
        got = {}
        for isolation in ISOLATIONS:
            recs = eval_records(tmp_path, task_file, sample_file,
                                ["--judge", "separate", "--isolation", isolation, "-j", "2"], name + isolation)
            got[isolation] = {(r["task_id"], r["sample"]): essence(r) for r in recs}
        assert got["cold"] and set(got["cold"]) == set(got["warm"]), name
        differ = {k: (got["cold"][k], got["warm"][k]) for k in got["cold"] if got["cold"][k] != got["warm"][k]}
        assert not differ, (name, differ)
        by = collections.Counter(b for e in got["warm"].values() for _, _, b in e[3])
        if name == "as_is":
            assert len(got["cold"]) == 172 and by["judge"] >= 20, by  # the LRU cache's and min stack's
        else:
            assert by["judge"] > 100, by  # the separate judge did judge (171 of 209 tests here)


# What one evaluation leaves in its interpreter and its /tmp, on either
# side; each side of a later one lists what it can see of it.
LEAVE = dedent("""
    import builtins, json, sys
    json.EE_LEAK_{side} = 1
    builtins.EE_LEAK_{side} = 1
    sys.modules["ee_leak_{side}"] = json
    with open("/tmp/ee-leak-{side}", "w") as f:
        f.write("x")
    """)
SEEN = dedent("""
    import builtins, json, os, sys
    def {name}():
        return [what for what, hit in (
            ("module global", any(hasattr(json, "EE_LEAK_" + s) for s in ("c", "j"))),
            ("builtins", any(hasattr(builtins, "EE_LEAK_" + s) for s in ("c", "j"))),
            ("sys.modules", any("ee_leak_" + s in sys.modules for s in ("c", "j"))),
            ("/tmp", any(os.path.exists("/tmp/ee-leak-" + s) for s in ("c", "j")))) if hit]
    """)
EVERYTHING = ["module global", "builtins", "sys.modules", "/tmp"]


def leak_task(task_id, leave, expect):
    code = (LEAVE.format(side="j") if leave else "") + SEEN.format(name="judge_seen") + \
        "assert judge_seen() == %r, judge_seen()\nassert seen() == %r, seen()\n" % (expect, expect)
    return {"task_id": task_id, "tests": [{"kind": "program", "code": code}]}


def leak_candidate(task_id, leave):
    return {"task_id": task_id, "code": (LEAVE.format(side="c") if leave else "") + SEEN.format(name="seen")}


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_nothing_of_one_evaluation_reaches_the_next(tmp_path, isolation):
    # -j 1: every evaluation on the same slot, one after the other. "write"
    # leaves everything and sees it in its own two interpreters (so the
    # checks can fail); "read", next each time, must see nothing of it on
    # either side.
    tasks = write_rows(tmp_path / "tasks.jsonl", [leak_task("leak/write", True, EVERYTHING),
                                                  leak_task("leak/read", False, [])])
    order = ["write", "read", "write", "read"]
    samples = write_rows(tmp_path / "samples.jsonl", [leak_candidate("leak/" + n, n == "write") for n in order])
    recs = eval_records(tmp_path, tasks, samples, ["--judge", "separate", "--isolation", isolation, "-j", "1"],
                        isolation)
    got = [(r["task_id"], r["status"], [t.get("message") for t in r["tests"]], [t["judged_by"] for t in r["tests"]])
           for r in recs]
    assert got == [("leak/" + n, "pass", [None], ["judge"]) for n in order], got


def write_rows(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def kept_judge_records(tmp_path, task_id, program, n, args=()):
    """n honest candidates of one task whose one test is `program`, judged
    one after another by one slot's kept judge (-j 1): the records, for
    each isolation in turn."""
    tasks = write_rows(tmp_path / "tasks.jsonl", [{"task_id": task_id,
                                                   "tests": [{"kind": "program", "code": program}]}])
    samples = write_rows(tmp_path / "samples.jsonl", [{"task_id": task_id, "code": ADD_OK}] * n)
    for isolation in ISOLATIONS:
        yield eval_records(tmp_path, tasks, samples,
                           ["--judge", "separate", "--isolation", isolation, "-j", "1", *args], isolation)


@pytest.mark.parametrize("side", [0, 1], ids=["candidates_worker", "judges_worker"])
def test_a_lost_worker_reruns_both_sides(tmp_path, side):
    """-j 1 warm: the slot's two workers, the candidate's (started first,
    the lower pid) and the judge's; one is killed once 5 records are
    written. Both sides of the evaluation it held run again on new
    workers: every sample one record, from one run (its RAN line), a pass."""
    from test_warm import SLEEPY, Eval, all_workers, lose_a_worker, report_lines, wait_no_own_cgroups
    n = 30
    task = {"task_id": "warm/add", "prompt": "", "tests": [{"kind": "assert", "code": a} for a in ASSERTS]}
    e = Eval(tmp_path, [task], [{"task_id": "warm/add", "code": SLEEPY % i} for i in range(n)],
             "--timeout", 2, "--judge", "separate")
    victim = lose_a_worker(e, signal.SIGKILL, workers=2, which=side, timeout=60)
    assert e.finished_in_time, "the eval hung on a lost worker"
    assert e.code == 0, e.stderr
    assert victim in e.workers and len(e.workers) >= 3, "the worker was not replaced: %s" % e.workers
    recs = e.records()
    assert sorted(r["sample"] for r in recs) == list(range(n))
    for r in recs:
        assert not r.get("sandbox_error") and r["status"] == "pass", r
        assert [t["judged_by"] for t in r["tests"]] == ["judge", "judge"], r
        assert report_lines(r, "RAN") == [str(r["sample"])], r["stdout"]
    assert all_workers() == []
    assert wait_no_own_cgroups(e.p.pid) == []


# ---------------------------------------------------------------------------
# The long-lived judge (src/engine/judge_host.c; docs/protocol.md, "The
# long-lived judge"): one judge per slot judges one evaluation after
# another, each in a fresh namespace; whatever an evaluation's test code
# could leave behind that the judge can see ends that judge after it, so
# the next evaluation gets a fresh one. Each case leaves one thing in the
# judge ("write", whose own check proves the probe can fail), then two
# evaluations on the same slot must see nothing of it ("read").

LEFT_IN_THE_JUDGE = {
    "module_global": ("import json\njson.EE_LEAK = 1\n", "import json\nseen = hasattr(json, 'EE_LEAK')\n"),
    "builtins": ("import builtins\nbuiltins.EE_LEAK = 1\n", "import builtins\nseen = hasattr(builtins, 'EE_LEAK')\n"),
    "rebound_builtin": ("import builtins\nbuiltins.len = lambda x: 0\n", "seen = len([1]) != 1\n"),
    "sys_modules": ("import json, sys\nsys.modules['ee_leak'] = json\n",
                    "import sys\nseen = 'ee_leak' in sys.modules\n"),
    "sys_path": ("import sys\nsys.path.append('/ee-leak')\n", "import sys\nseen = '/ee-leak' in sys.path\n"),
    "tmp_file": ("open('/tmp/ee-leak', 'w').close()\n", "import os\nseen = os.path.exists('/tmp/ee-leak')\n"),
    "cwd": ("import os\nos.chdir('/')\n", "import os\nseen = os.getcwd() != '/tmp'\n"),
    "signal_handler": ("import signal\nsignal.signal(signal.SIGUSR1, lambda *a: None)\n",
                       "import signal\nseen = signal.getsignal(signal.SIGUSR1) is not signal.SIG_DFL\n"),
    "thread": ("import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n",
               "import threading\nseen = threading.active_count() > 1\n"),
    "recursion_limit": ("import sys\nsys.setrecursionlimit(123)\n",
                        "import sys\nseen = sys.getrecursionlimit() == 123\n"),
}


@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize("what", sorted(LEFT_IN_THE_JUDGE))
def test_what_an_evaluation_leaves_in_the_judge_never_reaches_the_next(tmp_path, isolation, what):
    leave, probe = LEFT_IN_THE_JUDGE[what]
    tasks = write_rows(tmp_path / "tasks.jsonl", [
        {"task_id": "left/write", "tests": [{"kind": "program", "code": leave + probe + "assert seen\n"}]},
        {"task_id": "left/read", "tests": [{"kind": "program", "code": probe + "assert not seen\n"}]}])
    order = ["write", "read", "read"]
    samples = write_rows(tmp_path / "samples.jsonl",
                         [{"task_id": "left/" + n, "code": ADD_OK} for n in order])
    recs = eval_records(tmp_path, tasks, samples, ["--judge", "separate", "--isolation", isolation, "-j", "1"],
                        isolation)
    got = [(r["task_id"], r["status"], [t["judged_by"] for t in r["tests"]]) for r in recs]
    assert got == [("left/" + n, "pass", ["judge"]) for n in order], recs


def test_the_judge_is_kept_from_one_evaluation_to_the_next(tmp_path):
    """The evidence that one judge judged all three (and the one thing it
    keeps, docs/threat-model.md): test code that changes a module's state
    in place (here a list of the json module) is seen by the next
    evaluation on that slot. No honest benchmark's test does this."""
    probe = ("import json\nseen = json.__all__.count('ee-probe')\njson.__all__.append('ee-probe')\n"
             "assert seen == 0, seen\n")
    for recs in kept_judge_records(tmp_path, "kept/probe", probe, 3):
        assert [r["status"] for r in recs] == ["pass", "assertion_fail", "assertion_fail"], recs
        assert recs[2]["tests"][0]["message"].startswith("AssertionError: 2"), recs[2]


def test_the_cpu_of_earlier_evaluations_never_ends_a_kept_judge(tmp_path):
    """-j 1, --timeout 1: a sandbox's RLIMIT_CPU is 3 s, and each
    evaluation's test code takes 0.3 s of the judge's CPU. The kept judge
    used to die of SIGXCPU once its evaluations had used 3 s in all: an
    honest candidate's "premature exit". Now each evaluation gets its 3 s
    on top of what the judge used before."""
    # 0.3 s of the judge's CPU however fast the machine is today (a loop of
    # fixed length took 0.17-0.3 s: 14 of them fell short of 3 s once).
    burn = ("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3:\n    pass\n"
            "assert add(1, 2) == 3\n")
    for recs in kept_judge_records(tmp_path, "burn/add", burn, 14, ["--timeout", "1"]):
        assert [(r["status"], r.get("detail")) for r in recs] == [("pass", None)] * 14, recs
        assert sum(r["resources"]["cpu_ms"] for r in recs) > 3000, [r["resources"] for r in recs]


def test_a_judges_cpu_limit_is_the_runs_not_its_start_allowance(tmp_path):
    """The 10 s a judge's start may take is its wall clock's only: each
    evaluation's RLIMIT_CPU soft limit is what the judge used + 1 s of
    rounding + --timeout + 2 s (here 4 s past what it used), not 14 s
    as when the allowance raised the judge's timeout."""
    probe = ("import os, resource\nsoft, hard = resource.getrlimit(resource.RLIMIT_CPU)\n"
             "used = sum(os.times()[:2])\nassert 3 < soft - used <= 4 < hard, (soft, used, hard)\n")
    for recs in kept_judge_records(tmp_path, "cpu/limit", probe, 3, ["--timeout", "1"]):
        assert [(r["status"], r["tests"][0]["judged_by"]) for r in recs] == [("pass", "judge")] * 3, recs


def test_an_attack_leaves_nothing_for_the_next_candidate(tmp_path):
    """-j 1, one slot: each channel attack, then an honest candidate and a
    wrong one; the attack gets its verdict as when run alone, the two after
    it theirs, whatever the attack did to its judge's channel."""
    task = {"task_id": "after/add", "tests": [{"kind": "assert", "code": a} for a in ASSERTS]}
    tasks = write_rows(tmp_path / "tasks.jsonl", [task])
    names = sorted(ATTACKS)
    rows = []
    for name in names:
        rows += [{"task_id": "after/add", "code": ATTACKS[name][0]}, {"task_id": "after/add", "code": ADD_OK},
                 {"task_id": "after/add", "code": ADD_WRONG}]
    samples = write_rows(tmp_path / "samples.jsonl", rows)
    for isolation in ISOLATIONS:
        recs = eval_records(tmp_path, tasks, samples, ["--judge", "separate", "--isolation", isolation, "-j", "1",
                                                       "--timeout", "5"], isolation)
        assert len(recs) == 3 * len(names)
        for k, name in enumerate(names):
            attack, honest, wrong = recs[3 * k:3 * k + 3]
            assert attack["status"] == ATTACKS[name][1], (name, attack)
            assert honest["status"] == "pass" and honest["score"] == 1.0, (name, honest)
            assert wrong["status"] == "assertion_fail", (name, wrong)
            assert wrong["detail"] == ("test 0 failed: AssertionError: expected 3, got 0 "
                                       "(line 1: assert add(1, 2) == 3)"), (name, wrong)


def test_a_candidates_value_crosses_as_a_value(run, sep):
    """A global of the candidate's module that is not a function (a
    constant, an instance) is read through the channel when a test that
    mentions it starts, and compared in the judge as any returned value."""
    code = "LIMIT = 5\n" + ADD_OK
    r = run(code, asserts=["assert LIMIT == 5", "assert add(LIMIT, 1) == 6", "assert add(1, 2) == 3"], args=sep)
    assert verdict(r) == ("pass", None)
    assert judged_by(r) == ["judge"] * 3
    r = run(code, asserts=["assert LIMIT == 6"], args=sep)
    assert verdict(r) == ("assertion_fail",
                          "test 0 failed: AssertionError: expected 6, got 5 (line 1: assert LIMIT == 6)")
    assert judged_by(r) == ["judge"]


SLOW_ADD = "import time\ndef add(a, b):\n    time.sleep(1.0)\n    return a + b\n"


def test_a_judge_starting_slowly_costs_the_candidate_none_of_its_clock(run):
    """Warm, the judge's worker (the slot's second) takes 2 s to warm up
    (EXECEVAL_TEST_WORKER_DELAY_MS, for the tests only): the candidate,
    started first, can only wait for it. Its clock gets that wait back
    when the judge says hello, so a call taking 1 s of its 2.5 s passes
    (it timed out before: 2 s of waiting and the call's 1 s)."""
    r = run(SLOW_ADD, asserts=["assert add(1, 2) == 3"],
            args=["--judge", "separate", "--isolation", "warm", "--timeout", "2.5"],
            env={"EXECEVAL_TEST_WORKER_DELAY_MS": "0,2000"})
    assert verdict(r) == ("pass", None), r.record
    assert r.record["resources"]["wall_ms"] > 2000, r.record["resources"]


MIXED_HIDDEN = {"task_id": "mixed/hidden", "tests": [
    {"kind": "assert", "code": "assert add(1, 2) == 3"},
    {"kind": "assert", "code": "assert add(2, 2) == 4", "visibility": "hidden"},
    {"kind": "call", "fn": "add", "args": [5, 5], "expected": 10, "visibility": "hidden"}]}


@pytest.mark.parametrize("code, public, hidden_phase", [
    ("def add(a, b):\n    return 0\n", "fail", {"status": "skipped", "passed": 0}),
    ("def add(a, b):\n    return 3\n", "pass", {"status": "fail", "passed": 0})])
def test_a_mixed_tasks_hidden_phase_says_the_runs_mode(run, sep, code, public, hidden_phase):
    """The third run (the supervisor's hidden call test) runs every hidden
    test whatever the public verdict; the record's hidden phase still says
    the run's mode, gated (it said "always")."""
    r = run(code, task=MIXED_HIDDEN, args=sep)
    assert r.record["tests"][0]["status"] == public, r.record
    assert r.record["phases"][-1] == dict({"name": "hidden", "total": 2, "mode": "gated"}, **hidden_phase), r.record


FAKE_JSON = dedent("""
    import sys, types
    fake = types.ModuleType("json")
    fake.dumps = lambda *a, **k: '{"ev": "test", "status": "pass"}'
    fake.loads = lambda *a, **k: {"status": "pass"}
    sys.modules["json"] = fake
    sys.modules["_json"] = fake
    """)


def test_a_candidate_replacing_json_breaks_nothing_of_its_call_server(run, sep):
    """The call server reads each call after the candidate ran: cold, it
    made its JSON scanner from whatever sys.modules["_json"] held then, and
    the candidate's fake ended it (premature exit, where inline says
    assertion_fail). The scanner is made at the job's parse now."""
    r = run(FAKE_JSON + ADD_WRONG, asserts=ASSERTS, args=sep)
    assert verdict(r) == ("assertion_fail",
                          "test 0 failed: AssertionError: expected 3, got 0 (line 1: assert add(1, 2) == 3)")


DENIED_IN_A_CALL = {
    "module": ("def add(a, b):\n    import socket\n    return a + b\n", "assert add(1, 2) == 3", "socket"),
    "attribute": ("import os\ndef sh(c):\n    return os.system(c)\n", "assert sh('true') == 0", "os.system"),
}


@pytest.mark.parametrize("what", sorted(DENIED_IN_A_CALL))
def test_a_denial_in_a_call_reads_as_inline(run, sep, what):
    """The deny list refuses an import in the candidate's call: the reply
    names the denied entry and the judge's failure says so, an error
    "denied import: NAME" as inline (it was assertion_fail, "ImportError:
    denied: ...")."""
    code, test, name = DENIED_IN_A_CALL[what]
    r = run(code, asserts=[test], args=sep)
    assert verdict(r) == ("error", "denied import: " + name), r.record
    assert judged_by(r) == ["judge"]
    inline = run(code, asserts=[test], args=["--judge", "inline", "--isolation", isolation_of(sep)])
    assert verdict(inline) == verdict(r)


def test_a_judge_starting_slower_than_the_whole_clock_costs_the_candidate_nothing(run):
    """The judge's worker takes 4 s to warm up, longer than the run's whole
    2.5 s clock: the candidate's clock is held until the judge's hello
    (it used to run out meanwhile: timeout), and the judge's own clock
    starts at it, so the 1 s call passes."""
    r = run(SLOW_ADD, asserts=["assert add(1, 2) == 3"],
            args=["--judge", "separate", "--isolation", "warm", "--timeout", "2.5"],
            env={"EXECEVAL_TEST_WORKER_DELAY_MS": "0,4000"})
    assert verdict(r) == ("pass", None), r.record
    assert r.record["resources"]["wall_ms"] > 4000, r.record["resources"]


def test_a_candidate_stuck_while_its_judge_starts_still_times_out(run):
    """The held clock is given back, not forgiven: a top level that never
    ends, while the judge takes 2 s to start, times out on the candidate's
    own clock once the judge says hello."""
    r = run("import time\ntime.sleep(100)\n", asserts=["assert True"],
            args=["--judge", "separate", "--isolation", "warm", "--timeout", "1"],
            env={"EXECEVAL_TEST_WORKER_DELAY_MS": "0,2000"})
    assert r.record["status"] == "timeout", r.record
    # Held, then its own 1 s: about 3 s (2,998.7 ms seen: the record's wall
    # starts a little after the worker's delay does); not held: about 1 s.
    assert r.record["resources"]["wall_ms"] > 2500, r.record["resources"]


def test_a_busy_top_level_runs_only_once_its_judge_is_ready(run):
    """A busy loop at the top level while the judge takes 4 s to start, at
    --timeout 1 (RLIMIT_CPU 3 s): the candidate's code waits for the
    supervisor's go (the judge's hello), so it times out on its own clock,
    as inline; it used to spin through the hold and die of its CPU limit
    ("cpu limit") before its clock had started."""
    r = run("while True:\n    pass\n", asserts=["assert True"],
            args=["--judge", "separate", "--isolation", "warm", "--timeout", "1"],
            env={"EXECEVAL_TEST_WORKER_DELAY_MS": "0,4000"})
    assert r.record["status"] == "timeout", r.record
    assert r.record["resources"]["wall_ms"] > 4000, r.record["resources"]
    assert r.record["resources"]["cpu_ms"] < 2500, r.record["resources"]  # its clock's 1 s, not the hold
    inline = run("while True:\n    pass\n", asserts=["assert True"],
                 args=["--judge", "inline", "--isolation", "warm", "--timeout", "1"])
    assert inline.record["status"] == "timeout", inline.record


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_pairs_two_sides_share_one_cpu(tmp_path, isolation):
    """The supervisor places each pair on a CPU (engine.c
    ee_engine_pair_cpu) that both sides pin themselves to, the judge from
    its job, the candidate from its go, before its code runs: a relayed
    call's wake-ups stay on one CPU (docs/performance.md). The test reads
    the judge's CPUs and, through a call, the candidate's."""
    tasks = write_rows(tmp_path / "tasks.jsonl", [{
        "task_id": "pin/cpus", "entry_point": "cpus",
        "tests": [{"kind": "assert", "code": "import os\nmine = sorted(os.sched_getaffinity(0))\n"
                                             "assert len(mine) == 1 and cpus() == mine, (mine, cpus())"}]}])
    samples = write_rows(tmp_path / "samples.jsonl", [{
        "task_id": "pin/cpus", "code": "import os\ndef cpus():\n    return sorted(os.sched_getaffinity(0))\n"}] * 4)
    recs = eval_records(tmp_path, tasks, samples, ["--judge", "separate", "--isolation", isolation, "-j", "2"],
                        isolation)
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: nothing to place")
    assert [(r["status"], r["tests"][0]["judged_by"]) for r in recs] == [("pass", "judge")] * 4, \
        [r["tests"][0].get("message") for r in recs]
