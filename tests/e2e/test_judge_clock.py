"""The clocks of the separate judge (issue 33; docs/protocol.md, "The clocks
of a call"): the candidate's clock runs while a call is in its hands, and
between calls only for the CPU its processes use; the judge's runs while
the test is in its hands. Neither pays for the other's turns, and a
candidate cannot buy time with them: a thread that computes between calls
costs it what it costs inline.

Verdicts only: no timed assertion (the speed is bench/judge-overhead's).
Cold, warm and under gVisor. ex/fib runs cold and warm only: under gVisor
(ptrace platform) a crossing costs ~1.5 ms, and the candidate's side of
each (~0.8 ms, its own process's system calls) is on its clock: its 900
calls pass on a quiet host (they always timed out before) but can still
time out on a loaded one (docs/performance-notebook.md).
"""
import json
import os
import shutil
import textwrap

import pytest

from conftest import REPO

RUNSC = shutil.which("runsc") or ("/usr/bin/runsc" if os.path.exists("/usr/bin/runsc") else None)
SIDES = {"cold": ["--isolation", "cold"], "warm": ["--isolation", "warm"], "gvisor": ["--backend", "gvisor"]}


def dedent(s):
    return textwrap.dedent(s).lstrip("\n")


@pytest.fixture(params=sorted(SIDES))
def sep(request):
    if request.param == "gvisor" and (RUNSC is None or os.geteuid() != 0):
        pytest.skip("runsc missing or not root")
    return ["--judge", "split"] + SIDES[request.param]


def example(task_id, model):
    tasks = [json.loads(line) for line in (REPO / "examples" / "tasks.jsonl").read_text().splitlines() if line.strip()]
    samples = [json.loads(line) for line in (REPO / "examples" / "samples.jsonl").read_text().splitlines()
               if line.strip()]
    task = next(t for t in tasks if t["task_id"] == task_id)
    sample = next(s for s in samples if s["task_id"] == task_id and s["model"] == model and "completion" in s)
    return task, task["prompt"] + sample["completion"]


def test_ex_fib_passes_under_the_default_judge_with_its_clock(run, sep):
    """ex/fib's property test is 900 relayed calls on a 1 s clock."""
    if "gvisor" in sep:
        pytest.skip("too close to its clock under gVisor on a loaded host (the module's comment)")
    task, program = example("ex/fib", "demo-good")
    assert task["limits"]["timeout_s"] == 1
    r = run(program, task=task, args=sep)
    assert (r.record["status"], r.record["detail"]) == ("pass", None), r.record
    assert [t["status"] for t in r.record["tests"]] == ["pass"] * 6


# Each side takes 1.2 s of a 2 s clock: the candidate in its calls, the
# test between them. On one clock (before issue 33) that was 2.4 s, a
# timeout; each on its own, both pass.
SHARED_TASK = {"task_id": "clock/shared", "entry_point": "f", "limits": {"timeout_s": 2}, "tests": [
    {"kind": "program", "code": dedent("""
        import time
        def check(f):
            for i in range(3):
                time.sleep(0.4)
                assert f(i) == i
        check(f)
        """)}]}
SLOW_BUT_IN_TIME = dedent("""
    import time
    def f(i):
        time.sleep(0.4)
        return i
    """)


def test_the_judges_turns_are_not_the_candidates_clock(run, sep):
    r = run(SLOW_BUT_IN_TIME, task=SHARED_TASK, args=sep)
    assert (r.record["status"], r.record["detail"]) == ("pass", None), r.record


def test_the_candidates_turns_still_end_it(run, sep):
    slow = SLOW_BUT_IN_TIME.replace("0.4", "0.8")  # 2.4 s in its hands
    r = run(slow, task=SHARED_TASK, args=sep)
    assert (r.record["status"], r.record["detail"]) == ("timeout", "timeout"), r.record


# A thread that computes while the test has the turn (the judge sleeps
# 1.7 s between calls) and a last call that takes 1.2 s in the candidate's
# hands: 1.2 s plus the CPU the thread used between calls is more than the
# 2 s clock, a timeout, as inline; a clock that left that CPU out would stop
# at ~1.2 s, a pass. The spinner stops when told, not after so much of its
# own CPU time: under gVisor thread_time/process_time are the sentry's and
# run ahead of the host CPU the cgroup charges when the host is loaded
# (spinning "2.3 s" of it passed once on CI).
SPIN_TASK = {"task_id": "clock/spin", "entry_point": "f", "limits": {"timeout_s": 2}, "tests": [
    {"kind": "program", "code": dedent("""
        import time
        def check(f):
            for i in range(10):
                time.sleep(0.17)
                assert f(i) == i
        check(f)
        """)}]}
SPINNER = dedent("""
    import threading, time
    stop = False
    def work():
        while not stop:
            pass
    threading.Thread(target=work, daemon=True).start()
    def f(i):
        global stop
        if i == 9:
            stop = True
            time.sleep(1.2)
        return i
    """)
# The same with the work in a child process (its CPU is the cgroup's too).
FORKER = dedent("""
    import os, signal, time
    child = os.fork()
    if child == 0:
        while True:
            pass
    def f(i):
        if i == 9:
            os.kill(child, signal.SIGKILL)
            time.sleep(1.2)
        return i
    """)


@pytest.mark.parametrize("program", [SPINNER, FORKER], ids=["thread", "child"])
def test_computing_between_calls_costs_the_candidate_its_clock(run, sep, program):
    r = run(program, task=SPIN_TASK, args=sep + ["--procs", "64"])
    assert (r.record["status"], r.record["detail"]) == ("timeout", "timeout"), r.record
    inline = run(program, task=SPIN_TASK, args=["--judge", "inline"] + sep[2:])
    assert (inline.record["status"], inline.record["detail"]) == ("timeout", "timeout"), inline.record
