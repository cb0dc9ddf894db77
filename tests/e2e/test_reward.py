"""--reward end to end: a record's reward from a formula or a preset.

Every candidate runs through execeval; this file runs inside the safety net:

    tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/e2e/test_reward.py

What is checked: each preset and a custom formula on real verdicts (a
partial pass, a syntax error, a timeout) through run, eval and serve; the
default (binary) record has no reward_formula and its integer reward, a
custom one records its formula; the summary's reward block; a bad formula
is a usage error (exit 2) naming --reward and the position; compare refuses
two runs judged with different formulas.
"""
import json
import subprocess

from conftest import EXECEVAL, REPO, parse_record, with_isolation
from serve_client import serve  # noqa: F401 (a fixture)

TASKS = REPO / "examples" / "tasks.jsonl"
SAMPLES = REPO / "examples" / "samples.jsonl"

# A task of four call tests: HALF passes exactly one of them.
TASK = {"task_id": "rw/inc", "entry_point": "inc",
        "tests": [{"kind": "call", "fn": "inc", "args": [a], "expected": a + 1} for a in (0, 1, 2, 3)]}
HALF = "def inc(x):\n    return 1 if x == 0 else x\n"
GOOD = "def inc(x):\n    return x + 1\n"
SYNTAX = "def inc(x:\n    return x\n"
SLOW = "def inc(x):\n    while True:\n        pass\n"


def execeval(*args, timeout=300, **kw):
    return subprocess.run(with_isolation([EXECEVAL, *map(str, args)]), capture_output=True, text=True,
                          timeout=timeout, **kw)


def run_record(tmp_path, program, *args):
    task = tmp_path / "task.json"
    task.write_text(json.dumps(TASK))
    cand = tmp_path / "cand.py"
    cand.write_text(program)
    r = execeval("run", "--task", task, cand, "--timeout", "1", *args)
    assert r.returncode in (0, 1), r.stderr
    return parse_record(r.stdout)


def test_the_default_reward_is_binary_and_records_no_formula(tmp_path):
    rec = run_record(tmp_path, HALF)
    assert (rec["status"], rec["passed"], rec["total"], rec["reward"]) == ("assertion_fail", 1, 4, -1), rec
    assert "reward_formula" not in rec and "infra_error" not in rec
    rec = run_record(tmp_path, GOOD, "--reward", "binary")
    assert rec["reward"] == 1 and isinstance(rec["reward"], int) and "reward_formula" not in rec, rec


def test_presets_on_a_partial_pass(tmp_path):
    want = {"fraction": (0.25, "score"),
            "partial": (0.25, "if(syntax_error,0,passed/max(total,1))"),
            "timeout-half": (0.25, "if(timeout,tests_score/2,score)"),
            "correctness-first": (0.25, "if(syntax_error,-1,if(blocked,-0.5,0.5*public_score+0.5*hidden_score))")}
    for preset, (reward, formula) in want.items():
        rec = run_record(tmp_path, HALF, "--reward", preset)
        assert (rec["reward"], rec["reward_formula"]) == (reward, formula), (preset, rec)


def test_presets_on_a_syntax_error_and_a_timeout(tmp_path):
    assert run_record(tmp_path, SYNTAX, "--reward", "correctness-first")["reward"] == -1
    assert run_record(tmp_path, SYNTAX, "--reward", "partial")["reward"] == 0
    rec = run_record(tmp_path, SLOW, "--reward", "timeout-half")
    assert (rec["status"], rec["reward"]) == ("timeout", 0), rec
    rec = run_record(tmp_path, SLOW, "--reward", "if(timeout, -0.5, score)")
    assert (rec["reward"], rec["reward_formula"]) == (-0.5, "if(timeout,-0.5,score)"), rec


def test_a_custom_formula_reads_the_records_facts(tmp_path):
    rec = run_record(tmp_path, HALF, "--reward", "2*passed - total + (passed < total) + min(1, max(0, score))")
    assert rec["reward"] == 2 * 1 - 4 + 1 + 0.25, rec
    rec = run_record(tmp_path, HALF, "--reward", "passed / (total - 4)")
    assert rec["reward"] is None and "not finite" in rec["reward_error"], rec


def test_a_bad_formula_is_a_usage_error_naming_the_option_and_the_position(tmp_path):
    task = tmp_path / "task.json"
    task.write_text(json.dumps(TASK))
    for formula, msg in (("1 +", "--reward: at 4: expected a fact"), ("if(pass, 1)", "--reward: at 11: expected ','"),
                         ("correctness", "--reward: at 1: unknown fact")):
        r = execeval("run", "--task", task, "--reward", formula, "-", input=GOOD)
        assert r.returncode == 2 and msg in r.stderr, (formula, r.returncode, r.stderr)
        r = execeval("eval", "--tasks", TASKS, "--samples", SAMPLES, "--reward", formula, "-q", "-o",
                     tmp_path / "x.jsonl")
        assert r.returncode == 2 and msg in r.stderr, (formula, r.returncode, r.stderr)


def evaluate(tmp_path, name, *args):
    """A run of the examples' first 12 tasks (48 samples: passes, failures
    with partial scores, syntax errors, timeouts): formulas see every kind."""
    rows = TASKS.read_text().splitlines(keepends=True)[:12]
    ids = {json.loads(row)["task_id"] for row in rows}
    tasks, samples = tmp_path / "tasks.jsonl", tmp_path / "samples.jsonl"
    tasks.write_text("".join(rows))
    samples.write_text("".join(line for line in SAMPLES.read_text().splitlines(keepends=True)
                               if json.loads(line)["task_id"] in ids))
    results, summary = tmp_path / (name + ".jsonl"), tmp_path / (name + ".json")
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-j", 2, "-q", "-k", 1, "--no-history",
                 "-o", results, "--summary-json", summary, *args)
    assert r.returncode == 0, r.stderr[-2000:]
    return results, summary


def test_eval_records_and_summary_and_compare_refusing_different_formulas(tmp_path):
    base, base_summary = evaluate(tmp_path, "binary")
    new, new_summary = evaluate(tmp_path, "fraction", "--reward", "fraction")
    every = [json.loads(line) for line in new.read_text().splitlines()]
    # A timeout a busy host starved twice is its infra_error: reward null,
    # counted in infra_errors and in no other figure (docs/summary.md).
    infra = [r for r in every if r.get("infra_error")]
    recs = [r for r in every if not r.get("infra_error")]
    assert all(r["reward"] is None for r in infra), infra
    assert len(recs) > len(every) // 2, "the host starved most of the run"
    assert all(r["reward_formula"] == "score" and r["reward"] == r["score"] for r in recs)
    reward = json.loads(new_summary.read_text())["reward"]
    mean = sum(r["score"] for r in recs) / len(recs)
    assert reward["formula"] == "score" and reward["samples"] == len(recs) and reward["infra_errors"] == len(infra)
    assert abs(reward["mean"] - mean) < 1e-9 and reward["sd"] > 0
    assert 0 < len(reward["values"]) <= 21 and abs(sum(reward["values"].values()) - 1) < 1e-4
    binary = json.loads(base_summary.read_text())["reward"]
    assert binary["formula"] == "if(pass,1,-1)" and set(binary["values"]) <= {"1", "-1"}
    # --allow-infra-errors: compare refuses a side with infra_error records
    # before it looks at formulas; the formulas are what this asks of it.
    for a, b in ((base_summary, new_summary), (base, new)):
        r = execeval("compare", a, b, "--allow-infra-errors")
        assert r.returncode == 2 and "reward" in r.stderr and "differ" in r.stderr, r.stderr
    r = execeval("compare", new_summary, new_summary, "--allow-infra-errors")
    assert r.returncode == 0, r.stderr


def test_serve_takes_reward_for_every_evaluation(serve):
    s = serve("--reward", "fraction")
    a = s.run({"task": TASK, "candidate": HALF})
    assert a.status == 200, a
    rec = a.json
    assert (rec["reward"], rec["reward_formula"]) == (0.25, "score"), rec


def test_a_requests_reward_field_over_the_servers(serve):
    s = serve("--reward", "fraction")
    a = s.run({"task": TASK, "candidate": HALF, "reward": "partial"})
    assert a.status == 200, a
    assert (a.json["reward"], a.json["reward_formula"]) == (0.25, "if(syntax_error,0,passed/max(total,1))")
    a = s.run({"task": TASK, "candidate": HALF, "reward": "binary"})
    assert a.status == 200 and a.json["reward"] == -1 and "reward_formula" not in a.json, a
    # a batch's reward is each run's that has none of its own
    a = s.post("/v1/batch", {"task": TASK, "reward": "2*score",
                             "runs": [{"candidate": HALF}, {"candidate": HALF, "reward": "passed"}]})
    assert a.status == 200, a
    assert [r["reward"] for r in a.json["records"]] == [0.5, 1.0], a.json
    a = s.run({"task": TASK, "candidate": HALF, "reward": "1 +"})
    assert a.status == 400, a
    assert a.json["field"] == "reward" and "--reward: at 4" in a.json["error"], a.json


def test_resume_refuses_another_formula(tmp_path):
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(SAMPLES.read_text().splitlines(keepends=True)[:6]))
    out = tmp_path / "r.jsonl"
    args = ("eval", "--tasks", TASKS, "--samples", samples, "-q", "--no-history", "-o", out)
    assert execeval(*args, "--reward", "fraction").returncode == 0
    r = execeval(*args, "--resume", "--reward", "partial")
    assert r.returncode == 2 and "options.reward was score" in r.stderr, r.stderr
    assert execeval(*args, "--resume", "--reward", "fraction").returncode == 0
