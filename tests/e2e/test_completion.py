"""Completion mode in `execeval run` and `execeval serve`: a completion is
run as the task's prompt + completion (as eval runs a sample's
"completion"), optionally cut at HumanEval's stop sequences, and the
record's extraction says "completion". A GRPO group is one /v1/batch: a
batch-level task and one run per completion.

Through the safety net, 127.0.0.1 only:

    tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/e2e/test_completion.py
"""
import json
import subprocess

from conftest import EXECEVAL, execeval_env, parse_record, with_isolation
from serve_client import serve  # noqa: F401 (fixture)

# A HumanEval-style task written for this test: the prompt is the
# signature and docstring, the test a check(candidate) function.
TASK = {
    "task_id": "Toy/evens",
    "prompt": "from typing import List\n\n\ndef total_even(xs: List[int]) -> int:\n"
              "    \"\"\"The sum of the even numbers of xs.\"\"\"\n",
    "entry_point": "total_even",
    "test": "def check(candidate):\n    assert candidate([1, 2, 3, 4]) == 6\n"
            "    assert candidate([]) == 0\n    assert candidate([-2, 5]) == -2\n",
    "canonical_solution": "    return sum(x for x in xs if x % 2 == 0)\n",
}
GOOD = "    return sum(x for x in xs if x % 2 == 0)\n"
BAD = "    return sum(xs)\n"
# A completion that runs on past the function, as a sampler without stop
# strings writes it: only HumanEval's stop sequences make it pass.
RAMBLING = GOOD + "\n\nprint(total_even([1, 2]))\nraise SystemExit(3)\n"


def run_completion(tmp_path, completion, *args):
    (tmp_path / "task.json").write_text(json.dumps(TASK))
    (tmp_path / "completion.txt").write_text(completion)
    argv = with_isolation([EXECEVAL, "run", "--task", str(tmp_path / "task.json"),
                           "--completion", str(tmp_path / "completion.txt"), *args])
    p = subprocess.run(argv, capture_output=True, text=True, env=execeval_env(), timeout=120, cwd=tmp_path)
    return p.returncode, parse_record(p.stdout), p.stderr


def test_run_completion_is_prompt_plus_completion(tmp_path):
    code, rec, err = run_completion(tmp_path, GOOD)
    assert code == 0, (rec, err)
    assert (rec["status"], rec["extraction"]) == ("pass", "completion"), rec
    assert rec["program"] == TASK["prompt"] + GOOD
    code, rec, _ = run_completion(tmp_path, BAD)
    assert (code, rec["status"], rec["extraction"]) == (1, "assertion_fail", "completion"), rec


def test_run_stop_cuts_the_completion(tmp_path):
    code, rec, _ = run_completion(tmp_path, RAMBLING)
    assert code == 1 and rec["status"] != "pass", rec
    code, rec, err = run_completion(tmp_path, RAMBLING, "--stop")
    assert code == 0, (rec, err)
    assert rec["program"] == TASK["prompt"] + GOOD + "\n", rec["program"]


def test_run_completion_and_candidate_exclude_each_other(tmp_path):
    (tmp_path / "c.py").write_text("x = 1\n")
    code, rec, err = run_completion(tmp_path, GOOD, str(tmp_path / "c.py"))
    assert (code, rec) == (2, None) and "not both" in err, err
    (tmp_path / "task.json").write_text(json.dumps(TASK))
    p = subprocess.run(with_isolation([EXECEVAL, "run", "--task", str(tmp_path / "task.json"), "--stop",
                                       str(tmp_path / "c.py")]),
                       capture_output=True, text=True, env=execeval_env(), timeout=60)
    assert p.returncode == 2 and "--stop" in p.stderr, p.stderr


def ok(a):
    assert a.status == 200, a
    return a.json


def error_of(a):
    assert a.status == 400, a
    assert isinstance(a.json, dict) and a.json.get("error"), a
    return a.json


def test_serve_run_completion(serve):
    s = serve()
    rec = ok(s.run({"task": TASK, "completion": GOOD}))
    assert (rec["status"], rec["extraction"], rec["program"]) == ("pass", "completion", TASK["prompt"] + GOOD)
    rec = ok(s.run({"task": TASK, "completion": RAMBLING}))
    assert rec["status"] != "pass", rec
    rec = ok(s.run({"task": TASK, "completion": RAMBLING, "stop": True}))
    assert (rec["status"], rec["extraction"]) == ("pass", "completion"), rec
    # A whole program is still a candidate, and a free-form reply a generation.
    whole = TASK["prompt"] + GOOD
    rec = ok(s.run({"task": TASK, "candidate": whole}))
    assert rec["status"] == "pass" and rec["extraction"] != "completion", rec
    rec = ok(s.run({"task": TASK, "generation": "Here:\n```python\n" + whole + "```\n"}))
    assert (rec["status"], rec["extraction"]) == ("pass", "entry-point"), rec


def test_serve_batch_of_16_completions_of_one_task(serve):
    """A GRPO group: one task, 16 completions, records in order."""
    s = serve()
    completions = [GOOD if i % 4 == 0 else BAD if i % 4 == 1 else RAMBLING for i in range(16)]
    runs = [{"completion": c, "sample": i} for i, c in enumerate(completions)]
    runs[3]["stop"] = False  # a run's own stop replaces the batch's
    recs = ok(s.post("/v1/batch", {"task": TASK, "stop": True, "runs": runs}))["records"]
    want = ["fail" if i % 4 == 1 or i == 3 else "pass" for i in range(16)]
    got = ["pass" if r["status"] == "pass" else "fail" for r in recs]
    assert [r["sample"] for r in recs] == list(range(16)), recs
    assert got == want, got
    assert all(r["extraction"] == "completion" for r in recs), [r["extraction"] for r in recs]
    assert all(r["task_id"] == "Toy/evens" for r in recs)


def test_serve_one_text_field_per_run(serve):
    s = serve()
    e = error_of(s.run({"task": TASK, "candidate": "x = 1", "completion": GOOD}))
    assert e["field"] == "completion" and "candidate and completion" in e["error"], e
    e = error_of(s.post("/v1/batch", {"task": TASK, "runs": [{"completion": GOOD}] * 3 + [
        {"completion": GOOD, "generation": "x"}]}))
    assert e["field"] == "runs[3].generation" and "runs[3]" in e["error"], e
    e = error_of(s.run({"task": TASK}))
    assert e["field"] == "candidate" and "completion" in e["error"], e
    e = error_of(s.post("/v1/batch", {"task": TASK, "runs": [{"completion": GOOD}, {"sample": 1}]}))
    assert e["field"] == "runs[1].candidate", e
    e = error_of(s.run({"task": TASK, "candidate": "x = 1", "stop": True}))
    assert e["field"] == "stop", e
    e = error_of(s.run({"task": TASK, "completion": GOOD, "stop": ["\ndef"]}))
    assert e["field"] == "stop", e
