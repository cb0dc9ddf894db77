"""`execeval compare` end to end, on real runs of the bundled examples.

Two `execeval eval` runs of examples/tasks.jsonl: BASE with the bundled
samples, NEW with the passing samples of a few tasks replaced by a program
that fails (a fabricated regression). Every candidate runs through
execeval; this file runs inside the safety net with the rest of tests/e2e:

    tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/e2e/test_compare.py

What is checked: exit 1 on the regression with the flipped tasks listed
(table and --json), exit 0 when equal or improved, the epsilon boundary on
real numbers, the summaries' bootstrap intervals, runs over different data
sets refused (exit 2) unless --allow-different-tasks, which gates on the
paired tasks only, exit 2 with file:line
(results) or file and field (summary) on malformed input, and exit 2 for an
unknown or missing metric.
"""
import json
import subprocess
from pathlib import Path

import pytest

from conftest import EXECEVAL, REPO, with_isolation

TASKS = REPO / "examples" / "tasks.jsonl"
SAMPLES = REPO / "examples" / "samples.jsonl"
# The tasks whose passing samples NEW replaces (each has one at least).
BROKEN = ("ex/reverse_words", "ex/is_palindrome", "ex/int_sqrt", "ex/fib", "ex/gcd_list")
FAILING = "raise AssertionError('regressed')\n"


def execeval(*args, timeout=300):
    return subprocess.run(with_isolation([EXECEVAL, *map(str, args)]), capture_output=True, text=True,
                          timeout=timeout)


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def judged_by_the_clock(sample):
    """The examples' timeouts: programs that spin until the 1 s clock. On a
    busy host a spinner that got less than half a CPU is starved twice and
    its record is the host's (infra_error), which compare refuses: the
    comparisons here are of runs without them (timeouts are test_cases'
    and test_starved's)."""
    return sample.get("expect") == "timeout"


def evaluate(tmp, name, samples, tasks=TASKS):
    """One model's run: examples/ holds three, and a file of several is
    compared model by model (tests/metrics/test_mixed_models.py)."""
    path = tmp / (name + ".samples.jsonl")
    path.write_text("".join(json.dumps(dict(s, model="demo")) + "\n" for s in samples
                            if not judged_by_the_clock(s)))
    results, summary = tmp / (name + ".jsonl"), tmp / (name + ".json")
    r = execeval("eval", "--tasks", tasks, "--samples", path, "-j", 2, "-q", "-k", 1, "-o", results,
                 "--summary-json", summary)
    assert r.returncode == 0, r.stderr[-2000:]
    return results, summary


def rates(results):
    by_task = {}
    for rec in read_jsonl(results):
        n, c = by_task.get(rec["task_id"], (0, 0))
        by_task[rec["task_id"]] = (n + 1, c + (rec["status"] == "pass"))
    return {t: c / n for t, (n, c) in by_task.items()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """BASE and NEW: results and summary of each, from real eval runs."""
    tmp = tmp_path_factory.mktemp("compare")
    samples = read_jsonl(SAMPLES)
    assert {s["task_id"] for s in samples} >= set(BROKEN), "the examples changed: pick other tasks"
    worse = []
    for s in samples:
        if s["task_id"] in BROKEN and s.get("expect") == "pass":
            s = {"task_id": s["task_id"], "model": s.get("model"), "code": FAILING, "expect": "syntax_error"}
        worse.append(s)
    base, base_sum = evaluate(tmp, "base", samples)
    new, new_sum = evaluate(tmp, "new", worse)
    return {"tmp": tmp, "base": base, "new": new, "base_sum": base_sum, "new_sum": new_sum}


def compare(*args):
    return execeval("compare", *args)


def test_regression_exits_1_and_lists_the_flipped_tasks(runs):
    base, new = rates(runs["base"]), rates(runs["new"])
    # what compare must find, computed here from the records themselves
    want_flipped = sorted(t for t in base if base[t] >= 0.5 and new[t] < 0.5)
    want_changed = sorted(t for t in base if base[t] != new[t])
    assert want_flipped, "the fabricated regression should flip some task"
    assert set(want_changed) == set(BROKEN), "only the broken tasks should change"

    r = compare(runs["base"], runs["new"], "--json")
    assert r.returncode == 1, r.stderr
    rep = json.loads(r.stdout)
    assert rep["regressions"] == ["pass@1"]
    assert rep["base"]["kind"] == rep["new"]["kind"] == "results"
    tasks = rep["tasks"]
    assert sorted(tasks["pass_to_fail"]) == want_flipped
    assert tasks["fail_to_pass"] == []
    assert tasks["paired"] == len(base) and tasks["only_base"] == tasks["only_new"] == []
    changed = tasks["changed"]
    assert sorted(c["task_id"] for c in changed) == want_changed
    assert [c["delta"] for c in changed] == sorted(c["delta"] for c in changed), "worst first"
    for c in changed:
        assert c["base"] == pytest.approx(base[c["task_id"]]) and c["new"] == pytest.approx(new[c["task_id"]])
    p1 = next(m for m in rep["metrics"] if m["metric"] == "pass@1")
    base_summary = json.loads(runs["base_sum"].read_text())
    assert p1["base"] == pytest.approx(base_summary["pass_at_k"]["1"], abs=1e-12)
    assert p1["delta"] < -0.01 and p1["regressed"] and p1["gated"]

    table = compare(runs["base"], runs["new"])
    assert table.returncode == 1
    out = table.stdout
    section = out[out.index("pass -> fail:"):out.index("fail -> pass:")]
    assert sorted(line.strip() for line in section.splitlines()[1:]) == want_flipped
    assert "verdict: REGRESSION: pass@1" in out
    assert "FAIL" in out


def test_equal_or_improved_exits_0(runs):
    for a, b in ((runs["base"], runs["base"]), (runs["new"], runs["base"]), (runs["base_sum"], runs["base_sum"]),
                 (runs["new_sum"], runs["base_sum"]), (runs["new"], runs["base_sum"])):
        r = compare(a, b)
        assert r.returncode == 0, (a, b, r.stdout[-1500:], r.stderr)
        assert "verdict: ok" in r.stdout
    base, new = rates(runs["base"]), rates(runs["new"])
    rep = json.loads(compare(runs["new"], runs["base"], "--json").stdout)
    assert sorted(rep["tasks"]["fail_to_pass"]) == sorted(t for t in base if new[t] < 0.5 <= base[t])
    assert rep["tasks"]["fail_to_pass"] and rep["tasks"]["pass_to_fail"] == []
    assert rep["regressions"] == []


def test_summaries_gate_too_without_tasks(runs):
    r = compare(runs["base_sum"], runs["new_sum"], "--json")
    assert r.returncode == 1, r.stderr
    rep = json.loads(r.stdout)
    assert rep["tasks"] is None and rep["base"]["kind"] == "summary"
    p1 = next(m for m in rep["metrics"] if m["metric"] == "pass@1")
    assert len(p1["base_ci"]) == 2 and len(p1["new_ci"]) == 2 and isinstance(p1["ci_overlap"], bool)
    assert "tasks: not compared" in compare(runs["base_sum"], runs["new_sum"]).stdout


def test_epsilon_boundary_on_real_numbers(runs):
    rep = json.loads(compare(runs["base_sum"], runs["new_sum"], "--json").stdout)
    drop = -next(m for m in rep["metrics"] if m["metric"] == "pass@1")["delta"]
    assert compare(runs["base_sum"], runs["new_sum"], "--epsilon", "%.6f" % (drop + 1e-6)).returncode == 0
    assert compare(runs["base_sum"], runs["new_sum"], "--epsilon", "%.6f" % (drop - 1e-4)).returncode == 1


def test_intervals_in_the_summary(runs):
    s = json.loads(runs["base_sum"].read_text())
    assert s["bootstrap"] == {"resamples": 1000, "seed": s["bootstrap"]["seed"], "level": 0.95, "unit": "task"}
    lo, hi = s["pass_at_k_ci"]["1"]
    assert 0 <= lo < s["pass_at_k"]["1"] < hi <= 1
    lo, hi = s["mean_score_ci"]
    assert lo < s["mean_score"] < hi
    for name, c in s["classes"].items():
        assert set(c["pass_at_k_ci"]) == set(c["pass_at_k"]), name
    # the same records give the same intervals (metrics recomputes them from the results)
    again = runs["tmp"] / "again.json"
    r = execeval("metrics", runs["base"], "-k", 1, "--json", again)
    assert r.returncode == 0, r.stderr
    a = json.loads(again.read_text())
    assert a["pass_at_k_ci"]["1"] == pytest.approx(s["pass_at_k_ci"]["1"], abs=1e-12)
    assert "95% CI [" in r.stdout


def test_malformed_inputs_exit_2_naming_file_line_and_field(runs):
    tmp = runs["tmp"]
    lines = runs["base"].read_text().splitlines()
    bad = json.loads(lines[6])
    bad["score"] = "high"
    broken = tmp / "broken.jsonl"
    broken.write_text("\n".join(lines[:6] + [json.dumps(bad)] + lines[7:]) + "\n")
    r = compare(runs["base"], broken)
    assert r.returncode == 2
    assert "%s:7: score: expected a number in [0, 1]" % broken in r.stderr

    not_json = tmp / "not-json.jsonl"
    not_json.write_text("\n".join(lines[:3] + ["{torn"] + lines[3:]) + "\n")
    r = compare(not_json, runs["base"])
    assert r.returncode == 2 and "%s:4:" % not_json in r.stderr, r.stderr

    s = json.loads(runs["base_sum"].read_text())
    s["classes"][sorted(s["classes"])[0]]["mean_score_ci"] = [0.9, 0.1]
    bad_sum = tmp / "bad-summary.json"
    bad_sum.write_text(json.dumps(s, indent=2))
    r = compare(bad_sum, runs["base_sum"])
    assert r.returncode == 2
    assert "%s: classes.%s.mean_score_ci: expected [lo, hi]" % (bad_sum, sorted(s["classes"])[0]) in r.stderr

    syntax = tmp / "syntax.json"
    syntax.write_text('{\n  "statuses": {},\n  "tasks": 3,\n}\n')
    r = compare(runs["base_sum"], syntax)
    assert r.returncode == 2 and "%s:4:1: invalid JSON" % syntax in r.stderr, r.stderr

    r = compare(runs["base_sum"], tmp / "absent.json")
    assert r.returncode == 2 and "absent.json: No such file" in r.stderr


def test_usage_errors_and_missing_metrics_exit_2(runs):
    r = compare(runs["base_sum"], runs["new_sum"], "--metric", "pass@one")
    assert r.returncode == 2 and "unknown metric 'pass@one'" in r.stderr
    r = compare(runs["base_sum"], runs["new_sum"], "--epsilon", "-0.1")
    assert r.returncode == 2 and "--epsilon" in r.stderr
    r = compare(runs["base_sum"])
    assert r.returncode == 2 and "expected two inputs" in r.stderr
    # every task has at least 3 samples, none 7: pass@7 cannot be computed
    r = compare(runs["base"], runs["new"], "--metric", "pass@7")
    assert r.returncode == 2
    assert "gated metric pass@7 missing in BASE" in r.stderr and "fewer than 7 samples" in r.stderr
    r = compare(runs["base_sum"], runs["new_sum"], "--metric", "lint_pass_rate")
    assert r.returncode == 2 and "no lint.pass_rate" in r.stderr
    # a gate on a metric that did not get worse passes, however the others moved
    r = compare(runs["base"], runs["new"], "--metric", "timeout_rate")
    assert r.returncode == 0, r.stdout[-1500:]


def test_history_run_ids_compare_like_their_summaries(runs, tmp_path):
    """BASE and NEW as run ids of a history (numbers that are not files):
    the stored summaries are compared, with the same verdict as the files."""
    db = tmp_path / "h.db"
    for name in ("base", "new"):
        samples = tmp_path / (name + ".samples.jsonl")
        samples.write_text(Path(runs["tmp"] / (name + ".samples.jsonl")).read_text())
        r = execeval("eval", "--tasks", TASKS, "--samples", samples, "-j", 2, "-q", "-k", 1,
                     "-o", tmp_path / (name + ".jsonl"), "--history", db)
        assert r.returncode == 0, r.stderr[-2000:]
    by_ids = compare("1", "2", "--history", db, "--json")
    by_files = compare(runs["base_sum"], runs["new_sum"], "--json")
    assert (by_ids.returncode, by_files.returncode) == (1, 1), (by_ids.stderr, by_files.stderr)
    ids, files = json.loads(by_ids.stdout), json.loads(by_files.stdout)
    assert [r["metric"] for r in ids["metrics"]] == [r["metric"] for r in files["metrics"]]
    for a, b in zip(ids["metrics"], files["metrics"]):
        assert (a["gated"], a["regressed"], a["ci_overlap"]) == (b["gated"], b["regressed"], b["ci_overlap"]), a
        for key in ("base", "new", "delta"):  # the history keeps 17 digits, --summary-json 15
            assert a[key] == pytest.approx(b[key], abs=1e-12), (a, b)
    assert ids["tasks"] is None
    assert compare("2", "2", "--history", db).returncode == 0
    r = compare("1", "7", "--history", db)
    assert r.returncode == 2 and "no run 7" in r.stderr, r.stderr
    r = compare("1", "2", "--history", tmp_path / "missing.db")
    assert r.returncode == 2 and "missing.db" in r.stderr, r.stderr


def test_composite_is_compared_under_one_formula(runs, tmp_path):
    """--composite F computes the score on both sides (results or summaries);
    without it, summaries whose recorded formulas differ are not compared."""
    r = compare(runs["base"], runs["new"], "--metric", "composite", "--composite", "correctness", "--json")
    assert r.returncode == 1, r.stderr  # the fabricated regression lowers correctness
    row = [m for m in json.loads(r.stdout)["metrics"] if m["metric"] == "composite"][0]
    base, new = read_jsonl(runs["base"]), read_jsonl(runs["new"])
    share = lambda recs: sum(x["status"] == "pass" for x in recs) / len(recs)
    assert row["base"] == pytest.approx(share(base)) and row["new"] == pytest.approx(share(new)), row
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for results, out, formula in ((runs["base"], a, "0.5*correctness+0.5*mean_score"),
                                  (runs["new"], b, "correctness")):
        m = execeval("metrics", results, "--json", out, "--composite", formula)
        assert m.returncode == 0, m.stderr
    r = compare(a, b, "--metric", "composite")
    assert r.returncode == 2, r.stdout
    assert "formula '0.5*correctness+0.5*mean_score' and NEW's 'correctness' differ" in r.stderr, r.stderr
    r = compare(a, b, "--metric", "composite", "--composite", "mean_score", "--json")
    assert r.returncode == 1, r.stderr
    row = [m for m in json.loads(r.stdout)["metrics"] if m["metric"] == "composite"][0]
    mean = [m for m in json.loads(r.stdout)["metrics"] if m["metric"] == "mean_score"][0]
    assert (row["base"], row["new"]) == pytest.approx((mean["base"], mean["new"]))
    r = compare(a, b, "--composite", "0.7*correctnes")
    assert r.returncode == 2 and "unknown metric" in r.stderr, r.stderr


def test_different_task_sets_are_refused_unless_allowed(runs, tmp_path):
    """NEW evaluated only some tasks: exit 2 naming how many tasks are only in
    BASE; --allow-different-tasks gates on the paired tasks, where nothing
    changed, and says so."""
    dropped = BROKEN[:2]
    samples = [s for s in read_jsonl(SAMPLES) if s["task_id"] not in dropped]
    subset, _ = evaluate(tmp_path, "subset", samples)
    r = compare(runs["base"], subset)
    assert r.returncode == 2, r.stdout[-1500:]
    assert "cover different tasks: 2 only in BASE (" in r.stderr and "0 only in NEW" in r.stderr, r.stderr
    assert all(t in r.stderr for t in dropped) and "--allow-different-tasks" in r.stderr, r.stderr
    r = compare(runs["base"], subset, "--allow-different-tasks")
    assert r.returncode == 0, r.stdout[-1500:]
    paired = len(rates(subset))
    assert f"compared on {paired} paired tasks; 2 only in BASE, 0 only in NEW" in r.stdout, r.stdout
    assert "paired tasks only" in r.stderr, r.stderr
    report = json.loads(compare(runs["base"], subset, "--allow-different-tasks", "--json").stdout)
    assert report["data_set"]["same"] is False and report["data_set"]["paired_only"] is True
    row = [m for m in report["metrics"] if m["metric"] == "pass@1"][0]
    base = {t: v for t, v in rates(runs["base"]).items() if t not in dropped}
    assert row["base"] == pytest.approx(sum(base.values()) / len(base)), row
    assert row["delta"] == pytest.approx(0.0), row
    assert report["base"]["tasks"] == paired + 2 and report["tasks"]["only_base"] == sorted(dropped)


def test_different_tasks_files_are_refused_by_their_sha256(runs, tmp_path):
    """The same task ids from another tasks file (a test fixed, say): the run
    files' sha256 tell them apart, and the message names both."""
    tasks = tmp_path / "tasks-v2.jsonl"
    tasks.write_text(TASKS.read_text() + "\n")
    other, other_sum = evaluate(tmp_path, "other", read_jsonl(SAMPLES), tasks=tasks)
    assert set(rates(other)) == set(rates(runs["base"]))
    r = compare(runs["base"], other)
    assert r.returncode == 2, r.stdout[-1500:]
    sha = lambda results: json.loads(Path(str(results) + ".run.json").read_text())["tasks_sha256"]
    assert sha(runs["base"]) != sha(other)
    assert "ran on different tasks files" in r.stderr, r.stderr
    assert f"tasks sha256 {sha(runs['base'])} and {sha(other)}" in r.stderr, r.stderr
    r = compare(runs["base"], other, "--allow-different-tasks", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["data_set"]["new_tasks_sha256"] == sha(other)
    # summaries carry it too (eval --summary-json, metrics --json): a CI
    # baseline kept as a summary is checked the same way
    assert json.loads(Path(other_sum).read_text())["tasks_sha256"] == sha(other)
    metrics_sum = tmp_path / "metrics.json"
    assert execeval("metrics", other, "--json", metrics_sum).returncode == 0
    assert json.loads(metrics_sum.read_text())["tasks_sha256"] == sha(other)
    for base, new in ((runs["base_sum"], other_sum), (runs["base"], metrics_sum)):
        r = compare(base, new)
        assert r.returncode == 2 and f"tasks sha256 {sha(runs['base'])} and {sha(other)}" in r.stderr, r.stderr


def test_history_runs_on_different_tasks_files_are_refused(runs, tmp_path):
    """Run ids of the history: its rows' tasks sha256 tell the data sets
    apart; allowed, two summaries cannot be paired and the table says so."""
    # The examples' first 12 tasks: the tasks file's bytes tell the runs
    # apart, not how many tasks it holds.
    rows = TASKS.read_text().splitlines(keepends=True)[:12]
    ids = {json.loads(row)["task_id"] for row in rows}
    db, first, tasks = tmp_path / "h.db", tmp_path / "tasks.jsonl", tmp_path / "tasks-v2.jsonl"
    first.write_text("".join(rows))
    tasks.write_text(first.read_text() + "\n")
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(json.dumps(s) + "\n" for s in read_jsonl(SAMPLES)
                               if s["task_id"] in ids and not judged_by_the_clock(s)))
    for i, t in enumerate((first, tasks)):
        r = execeval("eval", "--tasks", t, "--samples", samples, "-j", 2, "-q", "-k", 1,
                     "-o", tmp_path / ("r%d.jsonl" % i), "--history", db)
        assert r.returncode == 0, r.stderr[-2000:]
    r = compare("1", "2", "--history", db)
    assert r.returncode == 2 and "ran on different tasks files: tasks sha256 " in r.stderr, r.stderr
    r = compare("1", "2", "--history", db, "--allow-different-tasks")
    assert r.returncode in (0, 1), r.stderr
    assert "summaries cannot be paired; each side's metrics are over its own tasks" in r.stdout, r.stdout
