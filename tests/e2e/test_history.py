"""The run history end to end: `eval --history`, the default file under
HOME, `execeval history` (table, --json, filters, trends) and `history show`.

Every candidate runs through execeval (this file runs inside the safety net
with the rest of tests/e2e). The two evals of examples/ are shared by the
tests of one module (a fixture), since each takes seconds.
"""
import hashlib
import json
import os
import re
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import EXECEVAL, REPO, execeval_env, with_isolation

TASKS = REPO / "examples" / "tasks.jsonl"
SAMPLES = REPO / "examples" / "samples.jsonl"


def execeval(*args, env=None, check=None, timeout=600):
    argv = with_isolation([EXECEVAL, *map(str, args)])
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                       env=env if env is not None else execeval_env())
    if check is not None:
        assert r.returncode == check, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    return r


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def rows(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def same_json(a, b):
    """Equal, floats to 12 significant digits (the summary file has 15, the
    history 17)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            abs(a - b) <= 1e-12 * max(1.0, abs(a), abs(b))
    return a == b


def history_json(db, *args):
    r = execeval("history", "--db", db, "--json", *args, check=0)
    return json.loads(r.stdout)


def home_env(home, xdg=None):
    """execeval's environment with HOME = home and XDG_DATA_HOME as given
    (None: unset, so the default falls back to HOME)."""
    e = execeval_env()
    e.pop("XDG_DATA_HOME", None)
    e["HOME"] = str(home)
    if xdg is not None:
        e["XDG_DATA_HOME"] = str(xdg)
    return e


def tiny_dataset(d):
    """Three tasks in two classes, samples of two models: fast to evaluate."""
    d.mkdir(parents=True, exist_ok=True)
    tasks = [
        {"task_id": "t/add", "class": "math", "tests": [{"kind": "assert", "code": "assert add(1, 2) == 3"}]},
        {"task_id": "t/sub", "class": "math", "tests": [{"kind": "assert", "code": "assert sub(3, 2) == 1"}]},
        {"task_id": "t/up", "class": "strings", "tests": [{"kind": "assert", "code": "assert up('a') == 'A'"}]},
    ]
    samples = [
        {"task_id": "t/add", "model": "m1", "code": "def add(a, b):\n    return a + b\n"},
        {"task_id": "t/sub", "model": "m1", "code": "def sub(a, b):\n    return a + b\n"},
        {"task_id": "t/up", "model": "m2", "code": "def up(s):\n    return s.upper()\n"},
    ]
    (d / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    (d / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    return d / "tasks.jsonl", d / "samples.jsonl"


# ---------------------------------------------------------------------------
# Two evals of examples/ into one history.


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Run 1: all of examples/samples.jsonl. Run 2: only demo-good's
    samples (a better pass@1 on the same tasks file: a positive trend)."""
    d = tmp_path_factory.mktemp("history")
    db = d / "deep" / "dir" / "history.db"
    good = d / "good.jsonl"
    good.write_text("".join(line + "\n" for line in SAMPLES.read_text().splitlines()
                            if json.loads(line).get("model") == "demo-good"))
    runs = []
    for i, samples in enumerate((SAMPLES, good), 1):
        summary = d / ("summary%d.json" % i)
        argv = ["eval", "--tasks", TASKS, "--samples", samples, "-j", 2, "-k", "1,3",
                "-o", d / ("results%d.jsonl" % i), "--summary-json", summary, "--history", db, "--timeout", 2]
        r = execeval(*argv, check=0)
        assert "run %d stored in %s" % (i, db) in r.stderr, r.stderr
        runs.append({"argv": [str(a) for a in argv], "samples": samples,
                     "summary": json.loads(summary.read_text())})
    return db, runs


def test_eval_creates_the_history_private(two_runs):
    db, _ = two_runs
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(db.parent.parent.stat().st_mode) == 0o700
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)
        assert c.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_the_stored_run_has_every_field(two_runs):
    db, runs = two_runs
    version = execeval("--version", check=0).stdout.split()[-1]
    with sqlite3.connect(db) as c:
        c.row_factory = sqlite3.Row
        stored = c.execute("SELECT * FROM runs ORDER BY id").fetchall()
    assert [r["id"] for r in stored] == [1, 2]
    for row, run in zip(stored, runs):
        assert json.loads(row["command_line"]) == ["execeval"] + with_isolation(["x"] + run["argv"])[1:]
        assert row["tasks_path"] == str(TASKS.resolve())
        assert row["tasks_sha256"] == sha256(TASKS)
        assert row["samples_path"] == str(Path(run["samples"]).resolve())
        assert row["samples_sha256"] == sha256(run["samples"])
        models = sorted({s["model"] for s in rows(run["samples"])})
        assert json.loads(row["models"]) == models
        limits = json.loads(row["limits"])
        assert limits["timeout_s"] == 2.0 and limits["memory_mb"] == 512 and limits["procs"] == 64
        assert row["execeval_version"] == version
        assert same_json(json.loads(row["summary"]), run["summary"])
        for when in (row["started_at"], row["finished_at"]):
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", when), when
        assert row["started_at"] <= row["finished_at"]
    assert json.loads(stored[0]["models"]) == ["demo-bad", "demo-good", "demo-mediocre"]
    assert json.loads(stored[1]["models"]) == ["demo-good"]


def figures(summary):
    return {"samples": summary["samples"], "k": 1, "pass_at_k": summary["pass_at_k"]["1"],
            "mean_score": summary["mean_score"],
            "timeout_rate": summary["statuses"]["timeout"] / summary["samples"]}


MODELS = ["demo-bad", "demo-good", "demo-mediocre"]  # of run 1; run 2 is demo-good's samples alone


def test_history_lists_each_runs_models_with_their_figures_and_trend(two_runs):
    """A run of several models is a row per model (issue 35: a pass@k pooled
    over models is no model's); a trend compares a model with itself."""
    db, runs = two_runs
    listed = history_json(db)
    assert [(r["id"], r["model"]) for r in listed] == [(2, "demo-good")] + [(1, m) for m in MODELS], \
        "newest first, a row per model"
    wants = [runs[1]["summary"]] + [runs[0]["summary"]["models"][m] for m in MODELS]
    for row, want in zip(listed, wants):
        for key, value in figures(want).items():
            assert row[key] == pytest.approx(value, abs=1e-12), (key, row)
        assert row["lint_pass_rate"] is None  # no --lint: absent, not 0
        assert row["tasks_sha256"] == sha256(TASKS)
        assert row["class"] is None
    # demo-good against demo-good: the same samples, the same figures
    assert listed[0]["previous_id"] == 1
    assert listed[0]["pass_at_k_delta"] == pytest.approx(0.0, abs=1e-12)
    assert all(r["previous_id"] is None and r["pass_at_k_delta"] is None for r in listed[1:])
    assert [r["id"] for r in history_json(db, "--limit", 1)] == [2]


def test_history_table(two_runs):
    db, runs = two_runs
    out = execeval("history", "--db", db, check=0).stdout
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["id", "started", "(UTC)", "models"], out
    assert "pass@1" in lines[0] and "timeouts" in lines[0] and "trend" in lines[0]
    body = [line.split() for line in lines[1:]]
    assert [cells[:1] + cells[3:4] for cells in body] == [["2", "demo-good"]] + [["1", m] for m in MODELS], out
    short = "tasks.jsonl@" + sha256(TASKS)[:8]
    wants = [runs[1]["summary"]] + [runs[0]["summary"]["models"][m] for m in MODELS]
    for cells, s in zip(body, wants):
        assert short in cells
        assert str(s["samples"]) in cells
        assert "%.4f" % s["pass_at_k"]["1"] in cells
        assert "%.4f" % s["mean_score"] in cells
        assert "%.1f%%" % (100.0 * s["statuses"]["timeout"] / s["samples"]) in cells
    assert body[0][-1] == "+0.0000" and [cells[-1] for cells in body[1:]] == ["-"] * 3, out


def test_history_filters_by_model_and_task_class(two_runs):
    db, runs = two_runs
    assert [r["id"] for r in history_json(db, "--model", "demo-bad")] == [1]
    assert [r["id"] for r in history_json(db, "--model", "demo-good")] == [2, 1]
    assert history_json(db, "--model", "nobody") == []
    by_class = history_json(db, "--task-class", "math")
    # run 1 holds three models: a row per model with its own figures of the class (issue 35)
    with_math = [m for m in MODELS if "math" in runs[0]["summary"]["models"][m]["classes"]]
    assert [(r["id"], r["model"]) for r in by_class] == [(2, "demo-good")] + [(1, m) for m in with_math]
    wants = [runs[1]["summary"]["classes"]["math"]] + [runs[0]["summary"]["models"][m]["classes"]["math"]
                                                        for m in with_math]
    for row, want in zip(by_class, wants):
        assert row["class"] == "math"
        for key in ("samples", "pass_at_k", "mean_score"):
            value = want[key]["1"] if key == "pass_at_k" else want[key]
            assert row[key] == pytest.approx(value, abs=1e-12), (key, row)
    # demo-good's math against demo-good's math: the same samples
    assert by_class[0]["previous_id"] == 1 and by_class[0]["pass_at_k_delta"] == pytest.approx(0.0, abs=1e-12)
    assert history_json(db, "--task-class", "no-such-class") == []
    # Both filters, and the table says which class it shows.
    assert [r["id"] for r in history_json(db, "--task-class", "io", "--model", "demo-bad")] == [1]
    table = execeval("history", "--db", db, "--task-class", "math", check=0).stdout
    assert table.splitlines()[0] == "figures of class math"
    assert "%.4f" % runs[1]["summary"]["classes"]["math"]["pass_at_k"]["1"] in table
    assert "demo-good" in table.splitlines()[2]
    none = execeval("history", "--db", db, "--model", "nobody", check=0).stdout
    assert "(no runs match)" in none


def test_history_show_prints_the_stored_summary(two_runs):
    db, runs = two_runs
    for i, run in enumerate(runs, 1):
        shown = json.loads(execeval("history", "show", i, "--db", db, check=0).stdout)
        assert shown == run["summary"]
    r = execeval("history", "show", 99, "--db", db, check=2)
    assert "no run 99" in r.stderr and str(db) in r.stderr
    assert "positive integer" in execeval("history", "show", "x", "--db", db, check=2).stderr


# ---------------------------------------------------------------------------
# The default file, and failures that must not cost the results.


def test_eval_without_history_flags_writes_under_home(tmp_path):
    tasks, samples = tiny_dataset(tmp_path / "data")
    home = tmp_path / "home"
    home.mkdir()
    env = home_env(home)
    execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "-k", 1, env=env, check=0)
    db = home / ".local" / "share" / "execeval" / "history.db"
    assert db.exists()
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert stat.S_IMODE((home / ".local").stat().st_mode) == 0o700
    # `execeval history` finds it without --db, under the same HOME.
    listed = json.loads(execeval("history", "--json", env=env, check=0).stdout)
    assert [(r["id"], r["model"]) for r in listed] == [(1, "m1"), (1, "m2")], "a row per model"
    assert listed[0]["models"] == ["m1", "m2"]
    assert [r["pass_at_k"] for r in listed] == [pytest.approx(1 / 2), pytest.approx(1.0)]
    # XDG_DATA_HOME, when set, wins over HOME.
    xdg = tmp_path / "xdg"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "-k", 1, "--force", env=home_env(home, xdg),
             check=0)
    assert (xdg / "execeval" / "history.db").exists()
    assert {r["id"] for r in history_json(db)} == {1}


def test_no_history_writes_nothing(tmp_path):
    tasks, samples = tiny_dataset(tmp_path / "data")
    home = tmp_path / "home"
    home.mkdir()
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "--no-history", env=home_env(home),
                 check=0)
    assert not (home / ".local").exists()
    assert "history" not in r.stderr
    # The last of --history and --no-history decides.
    db = tmp_path / "h.db"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "--no-history", "--history", db, "--force",
             check=0)
    assert db.exists()


def test_eval_without_a_home_stores_nothing_and_succeeds(tmp_path):
    tasks, samples = tiny_dataset(tmp_path / "data")
    env = execeval_env()
    env.pop("XDG_DATA_HOME", None)
    env.pop("HOME", None)
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, env=env, check=0)
    assert "history" not in r.stderr, r.stderr
    r = execeval("history", env=env, check=2)
    assert "neither XDG_DATA_HOME nor HOME" in r.stderr


@pytest.mark.parametrize("kind", ["under-a-file", "not-a-database", "newer-schema"])
def test_a_history_that_cannot_be_written_warns_and_keeps_the_results(tmp_path, kind):
    tasks, samples = tiny_dataset(tmp_path / "data")
    if kind == "under-a-file":
        (tmp_path / "file").write_text("x")
        db = tmp_path / "file" / "history.db"
        why = "Not a directory"
    elif kind == "not-a-database":
        db = tmp_path / "history.db"
        db.write_text("this is not SQLite\n" * 100)
        why = "not an SQLite database"
    else:
        db = tmp_path / "history.db"
        with sqlite3.connect(db) as c:
            c.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            c.execute("INSERT INTO meta VALUES ('schema_version', '7')")
        why = "schema version 7 is newer than this execeval's (1)"
    before = db.read_bytes() if db.exists() else None
    out, summary = tmp_path / "out.jsonl", tmp_path / "summary.json"
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "-k", 1, "-o", out,
                 "--summary-json", summary, "--history", db, check=0)
    assert "warning: the run was not stored in the history" in r.stderr, r.stderr
    assert str(db) in r.stderr and why in r.stderr, r.stderr
    assert len(rows(out)) == 3 and json.loads(summary.read_text())["samples"] == 3
    assert "pass@1" in r.stdout
    if before is not None:
        assert db.read_bytes() == before, "a refused history was changed"
    if kind != "under-a-file":
        r = execeval("history", "--db", db, check=2)
        assert why in r.stderr and str(db) in r.stderr


def test_history_usage_errors(tmp_path):
    assert "no such file" in execeval("history", "--db", tmp_path / "none.db", check=2).stderr
    assert not (tmp_path / "none.db").exists()
    assert "unknown or incomplete option" in execeval("history", "--bogus", check=2).stderr
    assert "--limit" in execeval("history", "--limit", "-1", check=2).stderr
    assert "unexpected argument" in execeval("history", "list", check=2).stderr
    r = execeval("history", "--help", check=0)
    assert "--task-class" in r.stdout and "show ID" in r.stdout
    assert "--no-history" in execeval("eval", "--help", check=0).stdout


def test_models_stored_are_capped(tmp_path):
    """300 distinct model names (samples for an unknown task: invalid under
    --skip-invalid, so no sandbox runs for them; one valid sample, since a
    run that evaluates nothing is an error) store the first 256 seen, sorted."""
    tasks, _ = tiny_dataset(tmp_path / "data")
    samples = tmp_path / "many.jsonl"
    names = ["model-%03d" % i for i in range(300)]
    samples.write_text("".join(json.dumps({"task_id": "nope", "model": m, "code": "x = 1"}) + "\n"
                               for m in names)
                       + json.dumps({"task_id": "t/add", "model": names[0],
                                     "code": "def add(a, b):\n    return a + b\n"}) + "\n")
    db = tmp_path / "h.db"
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "--skip-invalid", "--history", db, check=0)
    assert "more than 256 models; 256 are stored" in r.stderr, r.stderr
    listed = history_json(db)
    assert {r["id"] for r in listed} == {1} and listed[0]["models"] == names[:256]
    assert sum(r["samples"] for r in listed) == 301, "a row per model kept (64 and the rest)"


def test_file_names_that_are_not_utf8_are_stored_readably(tmp_path):
    tasks, samples = tiny_dataset(tmp_path / "data")
    odd = os.path.join(os.fsencode(tmp_path), b"s\xff.jsonl")
    with open(odd, "wb") as f:
        f.write(samples.read_bytes())
    db = tmp_path / "h.db"
    argv = with_isolation([EXECEVAL, "eval", "--tasks", str(tasks), "--samples", odd, "-q", "--history", str(db)])
    r = subprocess.run(argv, capture_output=True, timeout=120, env=execeval_env())
    assert r.returncode == 0 and b"warning" not in r.stderr, r.stderr
    row = history_json(db)[0]
    assert row["samples_path"] == str(tmp_path) + "/s\ufffd.jsonl"
    assert row["samples_sha256"] == sha256(samples)
    with sqlite3.connect(db) as c:
        command_line = json.loads(c.execute("SELECT command_line FROM runs").fetchone()[0])
    assert str(tmp_path) + "/s\ufffd.jsonl" in command_line
