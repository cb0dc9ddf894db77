"""The lint phase (--lint, --lint-severity) and the composite score (--composite).

Lint runs inside the sandbox before any candidate code, so it is tested
through execeval like everything else: known-bad code gets its findings and
verdict, the functional verdict never changes because of lint (nor its
timeout), a candidate cannot clean its own lint report, and the summary
gains the lint pass rate, the codes and the composite score.
"""
import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import EXECEVAL, REPO, with_isolation

ISOLATIONS = ["cold", "warm"]
TOOLS_INSTALLED = all(Path("/usr/lib/python3/dist-packages", t).exists() for t in ("flake8", "bandit"))


def run_lint(tmp_path, code, asserts=("assert True",), args=(), isolation="cold"):
    cand = tmp_path / "cand.py"
    cand.write_text(code)
    argv = [EXECEVAL, "run", "--isolation", isolation, "--lint", *args]
    for a in asserts:
        argv += ["--assert", a]
    r = subprocess.run(argv + [str(cand)], capture_output=True, text=True, timeout=60)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def codes(rec, tool=None):
    return sorted(f["code"] for f in rec["lint"]["findings"] if tool in (None, f["tool"]))


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_known_bad_code_gets_its_findings_and_verdict(tmp_path, isolation):
    code = ("import os\n"
            "def f(x):\n"
            "    unused = 1\n"
            "    return undefined_name + x\n")
    rec = run_lint(tmp_path, code, isolation=isolation)
    lint = rec["lint"]
    assert lint["tools"][0] == "pyflakes"
    assert codes(rec, "pyflakes") == ["F401", "F821", "F841"], lint
    by_code = {f["code"]: f for f in lint["findings"] if f["tool"] == "pyflakes"}
    assert by_code["F821"] == {"tool": "pyflakes", "code": "F821", "line": 4, "severity": "high",
                               "message": "undefined name 'undefined_name'"}
    assert by_code["F401"]["severity"] == "low" and by_code["F401"]["line"] == 1
    # An undefined name is high: lint fails at the default threshold (medium).
    assert (lint["status"], lint["severity"]) == ("fail", "medium")
    # The functional verdict is the tests': they pass.
    assert rec["status"] == "pass", rec


def test_the_threshold_decides(tmp_path):
    code = "import os\n\n\ndef f():\n    return 1\n"  # one low finding: an unused import
    assert run_lint(tmp_path, code)["lint"]["status"] == "pass"
    assert run_lint(tmp_path, code, args=["--lint-severity", "low"])["lint"]["status"] == "fail"
    rec = run_lint(tmp_path, code, args=["--lint-severity", "high"])
    assert (rec["lint"]["status"], rec["lint"]["severity"]) == ("pass", "high")
    assert codes(rec, "pyflakes") == ["F401"]


@pytest.mark.skipif(not TOOLS_INSTALLED, reason="python3-flake8 and python3-bandit are not installed")
def test_flake8_and_bandit_when_installed(tmp_path):
    code = ("def f(x):\n"
            "  return eval(x)\n")  # E302? no: E111 indentation; bandit B307 eval
    rec = run_lint(tmp_path, code)
    assert rec["lint"]["tools"] == ["pyflakes", "flake8", "bandit"]
    assert "E111" in codes(rec, "flake8"), rec["lint"]
    b307 = [f for f in rec["lint"]["findings"] if f["code"] == "B307"]
    assert b307 and b307[0]["tool"] == "bandit" and b307[0]["severity"] == "medium" and b307[0]["line"] == 2
    assert rec["lint"]["status"] == "fail"


@pytest.mark.skipif(not TOOLS_INSTALLED, reason="python3-flake8 and python3-bandit are not installed")
def test_warm_lint_matches_cold_and_carries_nothing_between_candidates(tmp_path):
    """A warm worker builds flake8's style guide once (lint.prepare) and each
    candidate forked from it uses its own unused copy: the findings equal a
    cold start's, and a clean candidate after a dirty one on the same worker
    (-j 1) has none of the dirty one's."""
    dirty = "import os\ndef f(x):\n  return eval(x)   \n"
    clean = "def f(x):\n    return x\n"
    t = tmp_path / "tasks.jsonl"
    t.write_text(json.dumps({"task_id": "lint/f", "entry_point": "f",
                             "tests": [{"kind": "assert", "code": "assert True"}]}) + "\n")
    s = tmp_path / "samples.jsonl"
    s.write_text("".join(json.dumps({"task_id": "lint/f", "code": dirty if i % 2 == 0 else clean}) + "\n"
                         for i in range(6)))
    found = {}
    for isolation in ISOLATIONS:
        out = tmp_path / (isolation + ".jsonl")
        r = subprocess.run([EXECEVAL, "eval", "-q", "-j", "1", "--no-history", "--lint", "--isolation", isolation,
                            "--tasks", str(t), "--samples", str(s), "-o", str(out)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        recs = sorted(map(json.loads, out.read_text().splitlines()), key=lambda x: x["sample"])
        assert all(x["lint"]["tools"] == ["pyflakes", "flake8", "bandit"] for x in recs), recs
        found[isolation] = [[(f["tool"], f["code"], f["line"]) for f in x["lint"]["findings"]] for x in recs]
    assert found["warm"] == found["cold"]
    for i, findings in enumerate(found["warm"]):
        codes_ = sorted(c for _, c, _ in findings)
        if i % 2:
            assert codes_ == [], (i, findings)
        else:
            assert {"E111", "W291", "B307", "F401"} <= set(codes_), (i, findings)


def test_no_lint_phase_without_the_flag_and_not_run_on_a_syntax_error(tmp_path):
    cand = tmp_path / "c.py"
    cand.write_text("import os\n")
    r = subprocess.run([EXECEVAL, "run", "--assert", "assert True", str(cand)], capture_output=True, text=True)
    assert "lint" not in json.loads(r.stdout)
    rec = run_lint(tmp_path, "def (:\n")
    assert rec["status"] == "syntax_error"
    assert rec["lint"]["status"] == "not_run" and rec["lint"]["findings"] == []


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_candidate_cannot_clean_its_own_lint_report(tmp_path, isolation):
    """Lint runs before the candidate's top level: patching the tools, the
    harness or the report from the candidate's code comes too late."""
    code = ("import sys\n"
            "for name in list(sys.modules):\n"
            "    if name.startswith(('pyflakes', 'flake8', 'bandit')):\n"
            "        sys.modules[name] = None\n"
            "print('{\"ev\": \"phase\", \"name\": \"lint\", \"status\": \"ok\", \"findings\": []}')\n"
            "def f():\n"
            "    return not_defined\n")
    rec = run_lint(tmp_path, code, isolation=isolation)
    assert "F821" in codes(rec, "pyflakes"), rec["lint"]
    assert rec["lint"]["status"] == "fail"


def test_lint_time_is_not_taken_from_the_candidates_timeout(tmp_path):
    """A candidate that needs most of its timeout still passes with --lint:
    the lint phase's time is given back to the clock; and a spinning one
    times out after its own timeout, lint not counted."""
    rec = run_lint(tmp_path, "import time\ntime.sleep(0.6)\n", args=["--timeout", "0.8"])
    assert rec["status"] == "pass", rec
    rec = run_lint(tmp_path, "while True:\n    pass\n", args=["--timeout", "0.5"])
    assert rec["status"] == "timeout", rec
    assert rec["lint"]["status"] == "pass"
    cpu_wall = rec["resources"]["wall_ms"] - rec["lint"]["duration_ms"]
    assert 450 <= cpu_wall < 2500, rec["resources"]


def eval_examples(tmp_path, name, *args, n_tasks=12):
    tasks = [json.loads(l) for l in (REPO / "examples" / "tasks.jsonl").read_text().splitlines()][:n_tasks]
    ids = {t["task_id"] for t in tasks}
    samples = [l for l in (REPO / "examples" / "samples.jsonl").read_text().splitlines()
               if json.loads(l)["task_id"] in ids]
    t = tmp_path / "tasks.jsonl"
    s = tmp_path / "samples.jsonl"
    t.write_text("".join(json.dumps(x) + "\n" for x in tasks))
    s.write_text("\n".join(samples) + "\n")
    out, summ = tmp_path / (name + ".jsonl"), tmp_path / (name + ".summary.json")
    argv = with_isolation([EXECEVAL, "eval", "-q", "-j", "2", "--tasks", t, "--samples", s, "-o", out,
                           "--summary-json", summ, *args])
    r = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    recs = {(x["task_id"], x["sample"]): x for x in map(json.loads, out.read_text().splitlines())}
    return recs, json.loads(summ.read_text()), r.stdout


def test_lint_never_changes_the_functional_verdict_and_fills_the_summary(tmp_path):
    # --lint runs its tasks inline (docs/protocol.md): so does the plain run.
    plain, _, _ = eval_examples(tmp_path, "plain", "--judge", "inline")
    linted, summary, table = eval_examples(tmp_path, "lint", "--lint", "--composite", "0.7*correctness + 0.3*lint")
    assert plain.keys() == linted.keys()
    # A timeout's "(starved: N ms of CPU)" says how busy the host was during
    # that run (docs/statuses.md), not what the candidate did: not compared.
    host = re.compile(r" \(starved: \d+ ms of CPU\)$")
    for k in plain:
        a, b = plain[k], linted[k]
        assert (a["status"], host.sub("", a["detail"] or ""), a["score"]) == \
            (b["status"], host.sub("", b["detail"] or ""), b["score"]), k
        assert "lint" in b and "lint" not in a
    # A timeout a busy host starved twice is its infra_error (reward null),
    # in no figure of the summary (docs/summary.md, Infrastructure errors):
    # the lint figures are over the judged records.
    infra = [r for r in linted.values() if r.get("infra_error")]
    assert all(r["reward"] is None for r in infra), infra
    assert summary["infra_errors"] == len(infra)
    ran = [r for r in linted.values() if r["lint"]["status"] != "not_run" and not r.get("infra_error")]
    passed = sum(r["lint"]["status"] == "pass" for r in ran)
    assert summary["lint"]["samples"] == len(ran)
    assert summary["lint"]["pass_rate"] == pytest.approx(passed / len(ran))
    want_codes = {}
    for r in ran:
        for f in r["lint"]["findings"]:
            want_codes[f["code"]] = want_codes.get(f["code"], 0) + 1
    assert summary["lint"]["codes"] == want_codes
    correctness = summary["statuses"]["pass"] / summary["samples"]
    comp = summary["composite"]
    assert (comp["formula"], comp["version"]) == ("0.7*correctness+0.3*lint", 1)
    assert comp["value"] == pytest.approx(0.7 * correctness + 0.3 * summary["lint"]["pass_rate"])
    for name, cls in summary["classes"].items():
        assert "composite" in cls, name
    assert "lint pass rate" in table and "composite" in table


def test_metrics_recomputes_lint_and_composite_and_refuses_bad_formulas(tmp_path):
    linted, summary, _ = eval_examples(tmp_path, "lint", "--lint", n_tasks=4)
    out = tmp_path / "m.json"
    r = subprocess.run([EXECEVAL, "metrics", str(tmp_path / "lint.jsonl"), "--json", str(out),
                        "--composite", "mean_score - timeout_rate"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    m = json.loads(out.read_text())
    assert m["lint"] == summary["lint"]
    # examples/ holds three models: each has its composite, from its own metrics; the
    # top level has no figure over tasks to compute one from (issue 35)
    assert len(m["models"]) >= 2 and m["composite"]["value"] is None
    for block in m["models"].values():
        assert block["composite"]["value"] == pytest.approx(
            block["mean_score"] - block["statuses"]["timeout"] / block["samples"])
    for bad, text in [("0.7*correctnes", "unknown metric"), ("__import__('os')", "expected a metric"),
                      ("(" * 50 + "1" + ")" * 50, "nested too deeply")]:
        r = subprocess.run([EXECEVAL, "metrics", str(tmp_path / "lint.jsonl"), "--composite", bad],
                           capture_output=True, text=True)
        assert r.returncode == 2 and text in r.stderr, (bad, r.returncode, r.stderr)
    # lint asked for in a formula but absent from the results: null with a reason, not a crash.
    plain = subprocess.run([EXECEVAL, "metrics", str(tmp_path / "lint.jsonl"), "--composite", "pass@1000"],
                           capture_output=True, text=True)
    assert plain.returncode == 0 and "pass@1000 is not in the summary" in plain.stdout, plain.stdout


# ---------------------------------------------------------------------------
# A program that crashes or stalls the linters fails lint; it cannot drop out.

DEEP_SUM = "x = " + " + ".join(["0"] * 500) + "\n"


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_crashing_the_linters_does_not_dodge_the_lint_pass_rate(tmp_path, isolation):
    """A 500-term `0 + 0 + ...` made pyflakes, flake8 and bandit raise
    RecursionError: lint was not_run for the bad samples and the pass rate
    counted the clean ones only (3 clean + 3 bad: 1.0, composite 1.0). Now
    the tools finish on the lint child's big stack and the findings count."""
    clean = "def f(x):\n    return x\n"
    bad = DEEP_SUM + "def f(x):\n    return undefined_name\n"
    t = tmp_path / "tasks.jsonl"
    t.write_text(json.dumps({"task_id": "lint/deep", "entry_point": "f",
                             "tests": [{"kind": "assert", "code": "assert True"}]}) + "\n")
    s = tmp_path / "samples.jsonl"
    s.write_text("".join(json.dumps({"task_id": "lint/deep", "code": bad if i % 2 else clean}) + "\n"
                         for i in range(6)))
    out, summ = tmp_path / "out.jsonl", tmp_path / "summary.json"
    r = subprocess.run([EXECEVAL, "eval", "-q", "-j", "2", "--no-history", "--lint", "--isolation", isolation,
                        "--composite", "0.5*correctness + 0.5*lint", "--tasks", str(t), "--samples", str(s),
                        "-o", str(out), "--summary-json", str(summ)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    recs = sorted(map(json.loads, out.read_text().splitlines()), key=lambda x: x["sample"])
    assert [x["status"] for x in recs] == ["pass"] * 6
    assert [x["lint"]["status"] for x in recs] == ["pass", "fail"] * 3, [x["lint"] for x in recs]
    for x in recs[1::2]:
        assert "F821" in codes(x, "pyflakes"), x["lint"]
    summary = json.loads(summ.read_text())
    assert (summary["lint"]["samples"], summary["lint"]["pass_rate"]) == (6, 0.5)
    assert summary["composite"]["value"] == pytest.approx(0.75)


@pytest.mark.skipif(not TOOLS_INSTALLED, reason="python3-bandit is not installed")
def test_a_program_that_stalls_a_linter_gets_lint_timeout(tmp_path):
    """bandit needs 1-4 s per 950-term sum (the deepest the harness compiles;
    it depends on the machine): forty of them, never done in 8 s, are cut off
    at the lint deadline (8 s, inside the lint budget), the finding is high,
    and the functional verdict and the candidate's own timeout are untouched."""
    code = "".join("x%d = " % i + " + ".join(["0"] * 950) + "\n" for i in range(40)) + "def f():\n    return 1\n"
    rec = run_lint(tmp_path, code, asserts=["assert f() == 1"])
    assert rec["status"] == "pass", rec
    timeouts = [f for f in rec["lint"]["findings"] if f["code"] == "lint-timeout"]
    assert [(f["tool"], f["severity"]) for f in timeouts] == [("bandit", "high")], rec["lint"]
    assert rec["lint"]["status"] == "fail"
    assert rec["lint"]["tools"] == ["pyflakes", "flake8", "bandit"]
    assert 7500 <= rec["lint"]["duration_ms"] < 9900, rec["lint"]
