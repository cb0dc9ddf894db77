"""--test-timeout S end to end (docs/statuses.md, docs/compare.md): each io
and call test has its own clock inside the candidate's --timeout, so one
slow test is a timeout of that test and the others are still judged; a
candidate that catches the harness's exception, ignores SIGALRM or resets
the timer gains nothing. Every candidate runs through execeval, inside the
safety net (cold, and warm under EXECEVAL_ISOLATION=warm)."""
import json
import subprocess

from conftest import EXECEVAL, with_isolation
from serve_client import serve  # noqa: F401 (fixture)

# Loops forever on the input "2", echoes anything else.
ECHO_BUT_2 = "import sys\ns = sys.stdin.read()\nwhile s.strip() == '2':\n    pass\nprint(s.strip())\n"

IO_TESTS = [{"kind": "io", "stdin": str(n), "stdout": "%d\n" % n} for n in (1, 2, 3)]


def statuses(record):
    return [t["status"] for t in record["tests"]]


def test_a_looping_io_test_is_a_timeout_of_that_test_the_others_judged(run):
    r = run(ECHO_BUT_2, task={"task_id": "t", "tests": IO_TESTS},
            args=["--timeout", "10", "--test-timeout", "0.5"])
    assert r.code == 1, (r.stderr, r.record)
    assert statuses(r.record) == ["pass", "timeout", "pass"], r.record
    assert r.record["status"] == "timeout" and r.record["detail"] == "test 1 timed out", r.record
    assert r.record["tests"][1]["message"] == "timed out (--test-timeout 0.5 s)"
    assert r.record["passed"] == 2 and abs(r.record["score"] - 2 / 3) < 1e-9, r.record
    assert r.elapsed < 8, "the slow test's own clock ended it, not the wall clock"


def test_without_the_option_the_wall_clock_ends_the_candidate(run):
    r = run(ECHO_BUT_2, task={"task_id": "t", "tests": IO_TESTS}, args=["--timeout", "1"])
    assert r.record["status"] == "timeout" and r.record["detail"] == "timeout", r.record
    assert r.record["score"] == 0


def test_fast_tests_pass_under_the_clock(run):
    r = run("print(input())\n", task={"task_id": "t", "tests": [t for t in IO_TESTS if t["stdin"] != "2"]},
            args=["--test-timeout", "1"])
    assert r.code == 0 and statuses(r.record) == ["pass", "pass"], r.record


SLEEPY = "import time\ndef f(x):\n    if x == 2:\n        time.sleep(60)\n    return x\n"
CALL_TESTS = [{"kind": "call", "fn": "f", "args": [n], "expected": n} for n in (1, 2, 3)]


def test_a_sleeping_call_test_is_a_timeout_of_that_test(run):
    r = run(SLEEPY, task={"task_id": "c", "tests": CALL_TESTS}, args=["--timeout", "10", "--test-timeout", "0.5"])
    assert statuses(r.record) == ["pass", "timeout", "pass"], r.record
    assert r.record["status"] == "timeout" and r.record["detail"] == "test 1 timed out", r.record
    assert r.elapsed < 8


# Hostile: each turns the harness's clock off inside the slow call, then
# returns the right value late. The supervisor's clock says timeout.
DEFEATS = {
    "catches BaseException": (
        "import time\ndef f(x):\n    if x == 2:\n        end = time.monotonic() + 1.5\n"
        "        while time.monotonic() < end:\n            try:\n                time.sleep(0.05)\n"
        "            except BaseException:\n                pass\n    return x\n"),
    "ignores SIGALRM": (
        "import signal, time\ndef f(x):\n    if x == 2:\n        signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "        time.sleep(1.5)\n    return x\n"),
    "resets the alarm": (
        "import signal, time\ndef f(x):\n    if x == 2:\n        signal.setitimer(signal.ITIMER_REAL, 0)\n"
        "        signal.alarm(0)\n        time.sleep(1.5)\n    return x\n"),
}


def test_a_candidate_cannot_turn_the_slow_call_into_a_pass(run):
    for name, prog in DEFEATS.items():
        r = run(prog, task={"task_id": "c", "tests": CALL_TESTS}, args=["--timeout", "10", "--test-timeout", "0.5"])
        assert r.record["tests"][1]["status"] == "timeout", (name, r.record)
        assert r.record["status"] == "timeout", (name, r.record)
        assert r.record["tests"][0]["status"] == "pass" and r.record["tests"][2]["status"] == "pass", (name, r.record)


def test_an_io_program_that_ignores_signals_is_still_killed(run):
    prog = ("import signal, sys\nfor s in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT):\n"
            "    signal.signal(s, signal.SIG_IGN)\nsignal.setitimer(signal.ITIMER_REAL, 0)\n"
            "s = sys.stdin.read()\nwhile s.strip() == '2':\n    try:\n        pass\n"
            "    except BaseException:\n        pass\nprint(s.strip())\n")
    r = run(prog, task={"task_id": "t", "tests": IO_TESTS}, args=["--timeout", "10", "--test-timeout", "0.5"])
    assert statuses(r.record) == ["pass", "timeout", "pass"], r.record


def test_a_clock_longer_than_the_timeout_is_clamped_to_it(run):
    r = run(ECHO_BUT_2, task={"task_id": "t", "tests": IO_TESTS}, args=["--timeout", "1", "--test-timeout", "5"])
    assert r.code == 1 and r.record["status"] == "timeout", "taken, not refused: %s" % r.record


def test_a_bad_value_is_refused_naming_the_flag(run):
    r = run("print(1)\n", task={"task_id": "t", "tests": IO_TESTS[:1]}, args=["--test-timeout", "-1"])
    assert r.code == 2 and "--test-timeout" in r.stderr, r.stderr
    r = run("print(1)\n", task={"task_id": "t", "tests": IO_TESTS[:1]}, args=["--test-timeout", "soon"])
    assert r.code == 2 and "--test-timeout: expected a number, got 'soon'" in r.stderr, r.stderr


def test_eval_records_the_clock_and_resume_refuses_another(tmp_path):
    tasks = tmp_path / "t.jsonl"
    tasks.write_text(json.dumps({"task_id": "a", "tests": IO_TESTS}) + "\n")
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "a", "code": ECHO_BUT_2}) + "\n")
    out = tmp_path / "r.jsonl"
    base = [EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-o", str(out), "-q",
            "--no-history", "--timeout", "10"]
    p = subprocess.run(with_isolation(base + ["--test-timeout", "0.5"]), capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    record = json.loads(out.read_text())
    assert statuses(record) == ["pass", "timeout", "pass"] and record["status"] == "timeout", record
    run = json.loads((tmp_path / "r.jsonl.run.json").read_text())
    assert run["options"]["test_timeout_s"] == 0.5, run["options"]
    p = subprocess.run(with_isolation(base + ["--resume", "--test-timeout", "2"]), capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2 and "options.test_timeout_s" in p.stderr, p.stderr


def test_serve_applies_its_clock_to_every_request(serve):
    s = serve("--timeout", "10", "--test-timeout", "0.5")
    a = s.run({"task": {"task_id": "c", "tests": CALL_TESTS}, "candidate": DEFEATS["catches BaseException"]})
    assert a.status == 200, a
    record = a.json
    assert statuses(record) == ["pass", "timeout", "pass"] and record["status"] == "timeout", record


def test_hidden_tests_after_the_gate_have_their_clock_too(run):
    tests = [IO_TESTS[0]] + [dict(t, visibility="hidden") for t in IO_TESTS[1:]]
    r = run(ECHO_BUT_2, task={"task_id": "t", "tests": tests}, args=["--timeout", "10", "--test-timeout", "0.5"])
    assert statuses(r.record) == ["pass", "timeout", "pass"], r.record
    assert r.record["detail"] == "test 1 timed out", r.record
