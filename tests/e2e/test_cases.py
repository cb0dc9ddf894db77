"""Data-driven cases: one JSON file per case in tests/e2e/cases/.

A case file holds:
  name          the case's name (the file's stem)
  description   optional: what it shows
  candidate     program text, a list of lines (joined with "\\n"), or null
                (then the candidate is "-" and `stdin` is execeval's input, or
                `candidate_path` is given as the CANDIDATE argument)
  asserts       --assert strings, and/or
  task          a task object (written to task.json, passed as --task), or
  task_text     a task file's raw text (for malformed files)
  args          extra command-line arguments
  stdin         execeval's standard input
  xfail         optional: reason (a known execeval bug: strict xfail)
  expect        status, detail (exact; null for pass), detail_prefix, score
                (within 0.001), passed, total, exit_code, record (null: no
                record may be printed), stderr_contains (list), test_statuses
                (tests[i].status in order), phases ({name: status}),
                record_stdout (exact), max_seconds (execeval's wall time),
                fields ({key: value} of other record fields)
"""
import json
from pathlib import Path

import pytest

CASES_DIR = Path(__file__).parent / "cases"
CASE_KEYS = {"name", "description", "candidate", "asserts", "task", "task_text", "args", "stdin",
             "candidate_path", "xfail", "expect"}
EXPECT_KEYS = {"status", "detail", "detail_prefix", "score", "passed", "total", "exit_code", "record",
               "stderr_contains", "test_statuses", "phases", "record_stdout", "max_seconds", "fields"}
STATUSES = {"pass", "assertion_fail", "syntax_error", "timeout", "error"}


def load_cases():
    params = []
    for path in sorted(CASES_DIR.glob("*.json")):
        case = json.loads(path.read_text())
        marks = []
        if case.get("xfail"):
            marks.append(pytest.mark.xfail(strict=True, reason=case["xfail"]))
        params.append(pytest.param(case, id=path.stem, marks=marks))
    return params


def candidate_text(case):
    c = case.get("candidate")
    return "\n".join(c) if isinstance(c, list) else c


def test_case_files_are_well_formed():
    names = set()
    for path in sorted(CASES_DIR.glob("*.json")):
        case = json.loads(path.read_text())
        assert case["name"] == path.stem, path
        assert set(case) <= CASE_KEYS, (path, set(case) - CASE_KEYS)
        assert set(case["expect"]) <= EXPECT_KEYS, (path, set(case["expect"]) - EXPECT_KEYS)
        assert "exit_code" in case["expect"], path
        if "status" in case["expect"]:
            assert case["expect"]["status"] in STATUSES, path
        names.add(case["name"])
    statuses = {json.loads(p.read_text())["expect"].get("status") for p in CASES_DIR.glob("*.json")}
    assert STATUSES <= statuses, "every status is reached by some case"


@pytest.mark.parametrize("case", load_cases())
def test_case(case, run):
    exp = case["expect"]
    r = run(candidate_text(case), asserts=case.get("asserts"), task=case.get("task"),
            task_text=case.get("task_text"), args=case.get("args", ()), stdin=case.get("stdin"),
            candidate_path=case.get("candidate_path"))
    code, rec, stderr = r
    assert code == exp["exit_code"], (code, rec, stderr)
    if "record" in exp and exp["record"] is None:
        assert r.stdout == "", r.stdout
        assert rec is None
    for text in exp.get("stderr_contains", ()):
        assert text in stderr, (text, stderr)
    if "max_seconds" in exp:
        assert r.elapsed < exp["max_seconds"], r.elapsed
    if rec is None:
        assert "status" not in exp, (code, stderr)
        return
    assert rec["status"] == exp["status"], rec
    if "detail" in exp:
        assert rec["detail"] == exp["detail"], rec
    if "detail_prefix" in exp:
        assert (rec["detail"] or "").startswith(exp["detail_prefix"]), rec
    if rec["status"] == "pass":
        assert rec["detail"] is None and rec["reward"] == 1 and rec["score"] == 1.0, rec
    else:
        assert isinstance(rec["detail"], str) and rec["detail"] and rec["reward"] == -1, rec
    if "score" in exp:
        assert rec["score"] == pytest.approx(exp["score"], abs=1e-3), rec
    for key in ("passed", "total"):
        if key in exp:
            assert rec[key] == exp[key], (key, rec)
    if "test_statuses" in exp:
        assert [t["status"] for t in rec["tests"]] == exp["test_statuses"], rec["tests"]
    if "phases" in exp:
        got = {p["name"]: p["status"] for p in rec["phases"]}
        for name, status in exp["phases"].items():
            assert got.get(name) == status, (name, rec["phases"])
    if "record_stdout" in exp:
        assert rec["stdout"] == exp["record_stdout"], rec["stdout"][:200]
    for key, value in exp.get("fields", {}).items():
        assert rec.get(key) == value, (key, rec)
    check_record_shape(rec)


def check_record_shape(rec):
    """The contract's record fields, whatever the status."""
    for key in ("task_id", "status", "detail", "score", "passed", "total", "reward", "phases", "tests",
                "stdout", "stderr", "resources", "sandbox_id", "started_at", "finished_at",
                "execeval_version"):
        assert key in rec, key
    assert 0.0 <= rec["score"] <= 1.0
    assert rec["passed"] <= rec["total"] == len(rec["tests"])
    assert [p["name"] for p in rec["phases"]] == ["syntax", "scan", "import", "public", "hidden"]
    assert [t["index"] for t in rec["tests"]] == list(range(len(rec["tests"])))
    assert sum(t["status"] == "pass" for t in rec["tests"]) == rec["passed"]
    assert len(rec["stdout"]) <= 8000 and len(rec["stderr"]) <= 8000
    assert {"wall_ms", "cpu_ms", "peak_rss_kb"} <= set(rec["resources"])


# ---------------------------------------------------------------------------
# Candidates a JSON case file cannot hold.


def test_invalid_utf8_candidate_is_judged(run, runs_dir):
    path = runs_dir / "latin1.py"
    path.write_bytes(b"def add(a, b):\n    return a + b  # caf\xe9 \xff\xfe\n")
    code, rec, stderr = run(None, asserts=["assert add(1, 2) == 3"], candidate_path=path)
    assert code in (1, 2), (code, stderr)
    if code == 1:
        assert rec["status"] == "syntax_error", rec
    else:
        assert str(path) in stderr, stderr


def test_candidate_over_16_mib_is_an_input_error(run, runs_dir):
    path = runs_dir / "huge.py"
    path.write_bytes(b"#" * (16 << 20) + b"\nx = 1\n")
    code, rec, stderr = run(None, asserts=["assert x == 1"], candidate_path=path)
    assert code == 2 and rec is None, (code, stderr)
    assert str(path) in stderr and "larger than" in stderr, stderr
