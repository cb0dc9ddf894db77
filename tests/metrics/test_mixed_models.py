"""A results file of two models with different samples per task (issue 35):
every place a pass@k is shown gives each model's own figures and never one
pooled over both (`metrics`' table and JSON, the report's cards, charts and
model table, `compare`'s gate). `eval`'s own summary and `history` are
checked end to end in tests/e2e/test_models.py.

No sandbox: the records are written here. Run with

    /usr/bin/python3 -m pytest -q tests/metrics
"""
import json
import os
import re
import subprocess
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXECEVAL = os.path.abspath(os.environ.get("EXECEVAL") or str(REPO / "build" / "execeval"))

# big: 4 samples of each task, small: 2. Pooled, every task has 6 samples,
# so a pooled pass@5 exists though no model has one: it must appear nowhere.
PASSES = {"big": {"t/a": 3, "t/b": 1, "t/c": 0}, "small": {"t/a": 2, "t/b": 0, "t/c": 1}}
N = {"big": 4, "small": 2}


def run(*args, check=0):
    p = subprocess.run([EXECEVAL, *map(str, args)], capture_output=True, text=True, timeout=60)
    if check is not None:
        assert p.returncode == check, (args, p.returncode, p.stderr)
    return p


def records(passes=PASSES):
    out = []
    for model, tasks in passes.items():
        for task, c in tasks.items():
            for i in range(N[model]):
                ok = i < c
                out.append({"task_id": task, "sample": len([r for r in out if r["task_id"] == task]),
                            "model": model, "status": "pass" if ok else "assertion_fail",
                            "detail": None if ok else "test 0 failed", "score": 1.0 if ok else 0.0,
                            "tests": []})
    return out


def write(path, recs):
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def pass_at_k(n, c, k):
    return 1 - Fraction(comb(n - c, k), comb(n, k)) if n - c >= k else Fraction(1)


def model_pass_at_k(model, k):
    tasks = PASSES[model]
    return float(sum(pass_at_k(N[model], c, k) for c in tasks.values()) / len(tasks))


@pytest.fixture
def mixed(tmp_path):
    return write(tmp_path / "mixed.jsonl", records())


def test_the_summary_json_has_each_models_figures_and_no_pooled_one(mixed, tmp_path):
    out = tmp_path / "s.json"
    run("metrics", mixed, "-k", "1,2,4,5", "--json", out)
    s = json.loads(out.read_text())
    assert s["samples"] == 18 and s["tasks"] == 3
    assert s["pass_at_k"] == {} and s["pass_at_k_ci"] == {}, "no pooled pass@k"
    assert s["mean_score"] is None and s["median_task_score"] is None and s["p10_task_score"] is None
    assert [d["k"] for d in s["pass_at_k_dropped"]] == [1, 2, 4, 5]
    assert all("the records hold 2 models" in d["reason"] for d in s["pass_at_k_dropped"])
    for cls in s["classes"].values():
        assert cls["pass_at_k"] == {} and cls["mean_score"] is None, "nor per class"
    big, small = s["models"]["big"], s["models"]["small"]
    assert big["samples_per_task"] == {"min": 4, "max": 4}
    assert small["samples_per_task"] == {"min": 2, "max": 2}
    assert sorted(big["pass_at_k"]) == ["1", "2", "4"], "its own n per task: 4"
    assert sorted(small["pass_at_k"]) == ["1", "2"], "its own n per task: 2"
    for model, block in (("big", big), ("small", small)):
        for k, v in block["pass_at_k"].items():
            assert v == pytest.approx(model_pass_at_k(model, int(k)), abs=1e-12), (model, k)
    assert [d["k"] for d in small["pass_at_k_dropped"]] == [4, 5]


def test_the_table_shows_each_model_and_no_pooled_figure(mixed):
    out = run("metrics", mixed, "-k", "1,2,4,5").stdout
    assert re.search(r"^  pass@k, scores +per model, below \(the records hold 2 models\)$", out, re.M), out
    assert not re.search(r"^  pass@\d", out, re.M), "no pooled pass@k line"
    assert not re.search(r"^  mean score", out, re.M)
    assert re.search(r"^model +tasks +samples +n/task +pass@1 +pass@2 +pass@4 +mean", out, re.M), out
    assert re.search(r"^big +3 +12 +4 +%.4f +%.4f +%.4f " % tuple(model_pass_at_k("big", k) for k in (1, 2, 4)),
                     out, re.M), out
    assert re.search(r"^small +3 +6 +2 +%.4f +%.4f +- " % tuple(model_pass_at_k("small", k) for k in (1, 2)),
                     out, re.M), out
    assert "small: pass@4 dropped: 3 of 3 tasks have fewer than 4 samples (min 2)" in out
    assert "pass@5" not in out.split("\nmodel ")[1].split("\n")[0], "no model has 5 samples per task"
    # the class table keeps its counts and shows no pooled figure
    assert re.search(r"^class +tasks +samples$", out, re.M), out


def test_one_model_prints_as_before(tmp_path):
    """The same file with one model: the headline lines, and no model table."""
    one = write(tmp_path / "one.jsonl", [r for r in records() if r["model"] == "big"])
    out = run("metrics", one, "-k", "1,2").stdout
    assert re.search(r"^  pass@1 +%.4f   95%% CI" % model_pass_at_k("big", 1), out, re.M), out
    assert re.search(r"^  mean score +\d", out, re.M)
    assert not re.search(r"^model ", out, re.M) and "pass@k, scores" not in out


def test_the_reports_cards_and_charts_are_per_model(mixed, tmp_path):
    page = tmp_path / "r.html"
    run("report", mixed, "-o", page, "-k", "1,2,4,5")
    html = page.read_text()
    cards = re.findall(r'<div class="card"><b>([^<]*)</b><span>([^<]*)</span>', html)
    shown = {label.split(" (CI")[0]: value for value, label in cards}
    assert shown["pass@1 \xb7 big"] == "%.3f" % model_pass_at_k("big", 1)
    assert shown["pass@4 \xb7 big"] == "%.3f" % model_pass_at_k("big", 4)
    assert shown["pass@2 \xb7 small"] == "%.3f" % model_pass_at_k("small", 2)
    assert "pass@4 \xb7 small" not in shown and not any(k.startswith("pass@5") for k in shown)
    assert not any(k.startswith("pass@") and "\xb7" not in k for k in shown), "no pooled card"
    assert "mean score" not in shown and "mean score \xb7 big" in shown
    chart = re.search(r'<svg class="chart" id="chart-pass-at-k".*?</svg>', html, re.S).group(0)
    assert "big \xb7 pass@4" in chart and "small \xb7 pass@4" not in chart and "pass@5" not in chart
    table = re.search(r'<table id="model-table">.*?</table>', html, re.S).group(0)
    assert "<th class=\"n\">n/task</th>" in table and "<th class=\"n\">pass@5</th>" not in table
    assert "small: pass@4 not reported" in html


def test_compare_gates_each_model_by_name(mixed, tmp_path):
    worse = dict(PASSES, small={"t/a": 0, "t/b": 0, "t/c": 0})
    new = write(tmp_path / "new.jsonl", records(worse))
    r = run("compare", mixed, new, check=1)
    assert "== model big" in r.stdout and "== model small" in r.stdout
    assert "verdict over 2 models: REGRESSION: pass@1 (small)" in r.stdout, r.stdout
    rep = json.loads(run("compare", mixed, new, "--json", check=1).stdout)
    assert rep["regressions"] == ["pass@1 (small)"]
    assert rep["models"]["big"]["metrics"][0]["base"] == pytest.approx(model_pass_at_k("big", 1))
    assert rep["models"]["small"]["metrics"][0]["new"] == 0.0
    # the same data, model by model: no regression
    run("compare", mixed, mixed, check=0)
    # --model: that model alone, against a file of it alone
    big = write(tmp_path / "big.jsonl", [r for r in records() if r["model"] == "big"])
    r = run("compare", mixed, big, "--model", "big", check=0)
    assert "(model big)" in r.stdout
    # a gated pass@4 is big's; small has no pass@4: an input error naming it
    run("compare", mixed, mixed, "--metric", "pass@4", "--model", "big", check=0)


def test_compare_refuses_one_number_of_several_models(mixed, tmp_path):
    big = write(tmp_path / "big.jsonl", [r for r in records() if r["model"] == "big"])
    r = run("compare", mixed, big, check=2)
    assert "BASE holds several models (big, small) and NEW one" in r.stderr and "--model M" in r.stderr
    other = write(tmp_path / "other.jsonl", [dict(r, model="huge" if r["model"] == "big" else r["model"])
                                            for r in records()])
    r = run("compare", mixed, other, check=2)
    assert "BASE holds the models big, small and NEW huge, small" in r.stderr, r.stderr
    r = run("compare", mixed, big, "--model", "nobody", check=2)
    assert "--model nobody: BASE holds no such model (its models: big, small)" in r.stderr, r.stderr
    # a summary of several models (metrics --json) is refused the same way
    summary = tmp_path / "s.json"
    run("metrics", mixed, "--json", summary)
    assert "holds several models" in run("compare", summary, big, check=2).stderr


def test_each_model_has_its_own_figures_per_class(tmp_path):
    """Classes pool models like the whole set would: a model's figures of a
    class are under its block; the report draws them per class and model."""
    classes = {"t/a": "x", "t/b": "x", "t/c": "y"}
    path = write(tmp_path / "c.jsonl", [dict(r, **{"class": classes[r["task_id"]]}) for r in records()])
    out = tmp_path / "s.json"
    run("metrics", path, "-k", "1,2", "--json", out)
    s = json.loads(out.read_text())
    assert s["classes"]["x"]["pass_at_k"] == {} and s["classes"]["x"]["samples"] == 12
    for model in N:
        for cls in ("x", "y"):
            tasks = [t for t in PASSES[model] if classes[t] == cls]
            want = sum(pass_at_k(N[model], PASSES[model][t], 1) for t in tasks) / len(tasks)
            block = s["models"][model]["classes"][cls]
            assert block["tasks"] == len(tasks) and block["samples"] == N[model] * len(tasks)
            assert block["pass_at_k"]["1"] == pytest.approx(float(want), abs=1e-12), (model, cls)
    page = tmp_path / "c.html"
    run("report", path, "-o", page, "-k", "1")
    chart = re.search(r'<svg class="chart" id="chart-classes".*?</svg>', page.read_text(), re.S).group(0)
    for label in ("x \xb7 big", "y \xb7 big", "x \xb7 small", "y \xb7 small"):
        assert label in chart, label
