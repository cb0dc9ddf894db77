"""io comparison rules and test budgets end to end (docs/compare.md): a
task's own "compare", `--compare`, `--max-tests` with `--test-pick`, what the
record says, and the traps other harnesses fall into. Every candidate runs
through execeval, inside the safety net."""
import json
import subprocess

import pytest

from conftest import EXECEVAL, with_isolation
from serve_client import serve  # noqa: F401 (fixture)

RULES = ["exact", "rstrip", "lines", "tokens", "numeric", "lines:ci", "tokens:ci", "numeric:abs=0.5,ci"]

ECHO_SPLIT = "import sys\nprint('\\n'.join(sys.stdin.read().split()))\n"


def io_task(tests, **extra):
    return {"task_id": "t", "tests": tests, **extra}


def test_a_tasks_own_compare_decides_and_the_record_names_it(run):
    tests = [{"kind": "io", "stdin": "1 2 3", "stdout": "1 2 3\n"}]
    r = run(ECHO_SPLIT, task=io_task(tests))
    assert r.record["status"] == "assertion_fail", r.record
    assert "compare" not in r.record["tests"][0], "the default rule leaves the record as it was"
    assert "test_budget" not in r.record
    r = run(ECHO_SPLIT, task=io_task(tests, compare="tokens"))
    assert r.record["status"] == "pass", r.record
    assert r.record["tests"][0]["compare"] == "tokens"


def test_compare_on_the_command_line_is_for_tasks_without_their_own(run):
    tests = [{"kind": "io", "stdin": "YES no", "stdout": "yes NO"}]
    assert run(ECHO_SPLIT, task=io_task(tests)).record["status"] == "assertion_fail"
    r = run(ECHO_SPLIT, task=io_task(tests), args=["--compare", "tokens:ci"])
    assert r.record["status"] == "pass", r.record
    assert r.record["tests"][0]["compare"] == "tokens:ci"
    r = run(ECHO_SPLIT, task=io_task(tests, compare="tokens"), args=["--compare", "tokens:ci"])
    assert r.record["status"] == "assertion_fail", "the task's own rule wins"
    assert r.record["tests"][0]["compare"] == "tokens"
    assert "token 1: expected 'yes', got 'YES'" in r.record["tests"][0]["message"]


def test_numeric_tolerances_on_the_command_line(run):
    tests = [{"kind": "io", "stdin": "", "stdout": "0.5 10\n"}]
    prog = "print(0.5004, 10)\n"
    assert run(prog, task=io_task(tests), args=["--compare", "numeric"]).record["status"] == "assertion_fail"
    r = run(prog, task=io_task(tests), args=["--compare", "numeric:abs=1e-3"])
    assert r.record["status"] == "pass", r.record
    assert r.record["tests"][0]["compare"] == "numeric:abs=0.001,rel=0"


def test_numeric_tolerances_are_for_the_expected_floats_only(run):
    # an integer expected is an integer: a float near it fails under any tolerance
    tests = [{"kind": "io", "stdin": "", "stdout": "24 0.5\n"}]
    for rule in ("numeric", "numeric:abs=1", "numeric:rel=0.5"):
        r = run("print(24.000009, 0.5)\n", task=io_task(tests, compare=rule))
        assert r.record["status"] == "assertion_fail", (rule, r.record)
        assert r.record["tests"][0]["message"] == "token 1: expected '24', got '24.000009'", r.record
        assert run("print(24, 0.5000004)\n", task=io_task(tests, compare=rule)).record["status"] == "pass", rule
    r = run("print(24.0, 0.5)\n", task=io_task(tests, compare="numeric"))
    assert r.record["status"] == "assertion_fail", r.record


def test_a_bad_rule_is_refused_naming_the_flag_or_the_field(run):
    tests = [{"kind": "io", "stdin": "", "stdout": "1"}]
    r = run("print(1)\n", task=io_task(tests), args=["--compare", "words"])
    assert r.code == 2 and "--compare: expected exact, rstrip, lines, tokens or numeric, got 'words'" in r.stderr
    r = run("print(1)\n", task=io_task(tests, compare="numeric:abs=-1"))
    assert r.code == 2 and "task.json:1: compare: 'abs=-1': expected a number >= 0" in r.stderr, r.stderr
    r = run("print(1)\n", task=io_task([dict(tests[0], float_tol=0.1)], compare="exact"))
    assert r.code == 2 and "tests[0].float_tol: compare 'exact' does not use it" in r.stderr, r.stderr


@pytest.mark.parametrize("rule", RULES)
def test_printing_only_the_first_expected_line_fails_under_every_rule(run, rule):
    """open-r1 zips the output's lines with the expected ones: a prefix passes there."""
    tests = [{"kind": "io", "stdin": "", "stdout": "1\n2\n3\n"}]
    r = run("print(1)\n", task=io_task(tests, compare=rule))
    assert r.record["status"] == "assertion_fail", r.record
    assert r.record["tests"][0]["status"] == "fail"


@pytest.mark.parametrize("rule", RULES)
def test_a_raising_program_fails_an_empty_expected_output_under_every_rule(run, rule):
    """verl's call wrapper exits 0 after an exception: empty output "passes"."""
    tests = [{"kind": "io", "stdin": "x", "stdout": ""},
             {"kind": "call", "fn": "f", "args": [], "expected": None}]
    prog = "import sys\ndef f():\n    raise ValueError('boom')\nif __name__ == '__main__':\n    f()\n"
    r = run(prog, task=io_task(tests, compare=rule))
    assert r.record["passed"] == 0, r.record
    assert [t["status"] for t in r.record["tests"]] == ["fail", "fail"], r.record
    assert "boom" in r.record["tests"][0]["message"]


MAX_TESTS_TASK = io_task([
    {"kind": "io", "stdin": "1", "stdout": "1"},
    {"kind": "io", "stdin": "22222", "stdout": "22222"},
    {"kind": "io", "stdin": "333", "stdout": "333"},
    {"kind": "io", "stdin": "4444444", "stdout": "wrong"},
])


def test_max_tests_first_and_longest_and_the_record_says_so(run):
    prog = "print(input())\n"
    r = run(prog, task=MAX_TESTS_TASK)
    assert (r.record["passed"], r.record["total"]) == (3, 4)
    r = run(prog, task=MAX_TESTS_TASK, args=["--max-tests", "2"])
    assert r.record["status"] == "pass" and r.record["total"] == 2, r.record
    assert r.record["test_budget"] == {"max": 2, "pick": "first", "tests": 4}
    assert [t["index"] for t in r.record["tests"]] == [0, 1]
    assert [t["task_index"] for t in r.record["tests"]] == [0, 1]
    r = run(prog, task=MAX_TESTS_TASK, args=["--max-tests", "2", "--test-pick", "longest"])
    assert r.record["test_budget"] == {"max": 2, "pick": "longest", "tests": 4}
    assert (r.record["passed"], r.record["total"]) == (1, 2), r.record
    assert [t["task_index"] for t in r.record["tests"]] == [1, 3], "the longest two, in task order"
    assert r.record["tests"][1]["message"].startswith("line 1: expected 'wrong'")
    r = run(prog, task=MAX_TESTS_TASK, args=["--max-tests", "10"])
    assert r.record["total"] == 4 and r.record["test_budget"] == {"max": 10, "pick": "first", "tests": 4}
    assert "task_index" not in r.record["tests"][0], "nothing cut: the index is the task's"


def test_eval_takes_compare_and_max_tests_for_every_task(tmp_path):
    tasks = tmp_path / "t.jsonl"
    tasks.write_text(json.dumps(dict(MAX_TESTS_TASK, task_id="a")) + "\n"
                     + json.dumps(io_task([{"kind": "io", "stdin": "A b", "stdout": "a\nB"}],
                                          task_id="b")) + "\n")
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "a", "code": "print(input())\n"}) + "\n"
                       + json.dumps({"task_id": "b", "code": ECHO_SPLIT}) + "\n")
    argv = with_isolation([EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-q",
                           "--compare", "lines:ci", "--max-tests", "3", "--test-pick", "longest"])
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    recs = {r["task_id"]: r for r in map(json.loads, open(str(samples) + ".results.jsonl"))}
    assert recs["a"]["test_budget"] == {"max": 3, "pick": "longest", "tests": 4}
    assert [t["task_index"] for t in recs["a"]["tests"]] == [1, 2, 3]
    assert (recs["a"]["passed"], recs["a"]["total"]) == (2, 3)
    assert recs["b"]["status"] == "pass" and recs["b"]["tests"][0]["compare"] == "lines:ci"
    assert recs["b"]["test_budget"] == {"max": 3, "pick": "longest", "tests": 1}


def test_resume_refuses_another_rule_or_budget(tmp_path):
    """A rule or a budget changes verdicts: --resume must not mix two."""
    tasks = tmp_path / "t.jsonl"
    tasks.write_text(json.dumps(dict(MAX_TESTS_TASK, task_id="a")) + "\n")
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "a", "code": "print(input())\n"}) + "\n")
    out = tmp_path / "r.jsonl"
    base = [EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-o", str(out), "-q",
            "--no-history"]
    p = subprocess.run(with_isolation(base), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    run = json.loads((tmp_path / "r.jsonl.run.json").read_text())
    assert "compare" not in run["options"] and "test_budget" not in run["options"], "run files as before"
    for extra, says in ((["--compare", "tokens"], "options.compare"),
                        (["--max-tests", "2"], "options.test_budget")):
        p = subprocess.run(with_isolation(base + ["--resume"] + extra), capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 2 and says in p.stderr and "--resume-anyway" in p.stderr, p.stderr


def test_serve_applies_its_compare_and_max_tests_to_every_requests_task(serve):
    s = serve("--compare", "tokens:ci", "--max-tests", "3", "--test-pick", "longest")
    a = s.run({"task": io_task([{"kind": "io", "stdin": "YES no", "stdout": "yes NO"}]), "candidate": ECHO_SPLIT})
    assert a.status == 200, a
    assert a.json["status"] == "pass" and a.json["tests"][0]["compare"] == "tokens:ci", a.json
    a = s.batch([{"task": MAX_TESTS_TASK, "candidate": "print(input())\n"}])
    assert a.status == 200, a
    rec = a.json["records"][0]
    assert rec["test_budget"] == {"max": 3, "pick": "longest", "tests": 4}, rec
    assert [t["task_index"] for t in rec["tests"]] == [1, 2, 3]
    assert (rec["passed"], rec["total"]) == (2, 3)
