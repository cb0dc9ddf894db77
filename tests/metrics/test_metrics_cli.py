"""`execeval metrics RESULTS.jsonl`: black-box checks against an independent
computation in exact rational arithmetic (fractions.Fraction).

No sandbox is involved: these tests only write result files and read the
summary back. Run with

    /usr/bin/python3 -m pytest -q tests/metrics

(env EXECEVAL overrides the binary, default build/execeval).
"""
import json
import math
import os
import random
import re
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXECEVAL = os.path.abspath(os.environ.get("EXECEVAL") or str(REPO / "build" / "execeval"))
STATUSES = ["pass", "assertion_fail", "syntax_error", "timeout", "error"]
TOL = 1e-12


@pytest.fixture(scope="session", autouse=True)
def binary():
    if not os.access(EXECEVAL, os.X_OK):
        pytest.fail(f"{EXECEVAL} is missing: run `make all` first")


def metrics(*args, timeout=60):
    p = subprocess.run([EXECEVAL, "metrics", *map(str, args)], capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


# ---- an independent model of the summary ------------------------------------

def pass_at_k(n, c, k):
    """1 - C(n-c, k) / C(n, k), exactly."""
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def quantile(values, q):
    """numpy.quantile(method="linear"), exactly."""
    v = sorted(values)
    pos = Fraction(q) * (len(v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def detail_class(d):
    if re.fullmatch(r"test \d+ failed(:.*)?", d, re.S):
        return "test failed"
    for prefix in ("syntax error", "import error", "setup failed"):
        if d == prefix or d.startswith(prefix + ":"):
            return prefix
    m = re.match(r"(protocol violation: [^:]*)", d)
    return m.group(1) if m else d


def block(records):
    """The keys shared by the whole set and each class, from records."""
    by_task = {}
    for r in records:
        by_task.setdefault(r["task_id"], []).append(r)
    statuses = {s: 0 for s in STATUSES}
    details = {}
    for r in records:
        statuses[r["status"]] += 1
        if r.get("detail") is not None:
            d = detail_class(r["detail"])
            details[d] = details.get(d, 0) + 1
    means = [sum(Fraction(r["score"]) for r in rs) / len(rs) for rs in by_task.values()]
    return {
        "tasks": len(by_task), "samples": len(records), "by_task": by_task,
        "mean_score": sum(means) / len(means), "median_task_score": quantile(means, Fraction(1, 2)),
        "p10_task_score": quantile(means, Fraction(1, 10)), "statuses": statuses, "details": details,
    }


def expected_pass_at_k(by_task, k):
    ns = [len(rs) for rs in by_task.values()]
    if min(ns) < k:
        return None
    vals = [pass_at_k(len(rs), sum(r["status"] == "pass" for r in rs), k) for rs in by_task.values()]
    return sum(vals) / len(vals)


def expected_tiers(records):
    tiers = {}
    for r in records:
        seen = {}
        for t in r["tests"]:
            name = t.get("tier") or "canonical"
            e = tiers.setdefault(name, {"tests": 0, "tests_passed": 0, "samples": 0, "samples_all_passed": 0})
            e["tests"] += 1
            e["tests_passed"] += t["status"] == "pass"
            seen[name] = seen.get(name, True) and t["status"] == "pass"
        for name, all_passed in seen.items():
            tiers[name]["samples"] += 1
            tiers[name]["samples_all_passed"] += all_passed
    return tiers


# ---- a fabricated results file ----------------------------------------------

DETAILS = {
    "assertion_fail": ["test {i} failed: AssertionError (line 3: assert f({i}) == {i})", "test {i} failed"],
    "syntax_error": ["syntax error: invalid syntax (line {i})", "import error: NameError: name 'x{i}' is not defined"],
    "timeout": ["timeout"],
    "error": ["denied import: socket", "killed by signal SIGSEGV", "premature exit", "memory limit",
              "protocol violation: bad frame: offset {i}", "setup failed: ZeroDivisionError: {i}"],
}


def make_records(seed=7, tasks=14, min_n=4, max_n=11):
    rnd = random.Random(seed)
    records = []
    classes = ["strings", "math", "parsing", None]
    for t in range(tasks):
        cls = classes[t % len(classes)]
        tiers = [rnd.choice(["canonical", "edge", "property", None]) for _ in range(rnd.randint(1, 5))]
        skill = rnd.random()
        for s in range(min_n if t == 0 else rnd.randint(min_n, max_n)):
            status = "pass" if rnd.random() < skill else rnd.choice(STATUSES[1:])
            tests = [{"index": i, "tier": tier, "status": "pass" if status == "pass" or rnd.random() < 0.5
                      else rnd.choice(["fail", "skipped", "not_run"])} for i, tier in enumerate(tiers)]
            for test in tests:
                if test["tier"] is None:
                    del test["tier"]
            passed = sum(x["status"] == "pass" for x in tests)
            score = 1.0 if status == "pass" else (0.0 if status == "timeout" else passed / len(tests) * 0.999)
            rec = {"task_id": f"set/{t}", "sample": s, "status": status,
                   "detail": None if status == "pass" else rnd.choice(DETAILS[status]).format(i=rnd.randint(0, 99)),
                   "score": score, "tests": tests,
                   "resources": {"wall_ms": rnd.uniform(10, 500), "cpu_ms": rnd.uniform(5, 400),
                                 "peak_rss_kb": rnd.randint(9000, 90000)}}
            if cls is not None:
                rec["class"] = cls
            records.append(rec)
    rnd.shuffle(records)  # eval writes records in completion order
    return records


def write(path, records, tail=""):
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    return path


def close(got, want, what):
    assert abs(got - float(want)) < TOL, f"{what}: got {got!r}, want {float(want)!r} ({want})"


# ---- the summary JSON ------------------------------------------------------------

def check_block(got, want, kept, what):
    assert got["tasks"] == want["tasks"], what
    assert got["samples"] == want["samples"], what
    for k in kept:
        close(got["pass_at_k"][str(k)], expected_pass_at_k(want["by_task"], k), f"{what} pass@{k}")
    for key in ("mean_score", "median_task_score", "p10_task_score"):
        close(got[key], want[key], f"{what} {key}")
    assert got["statuses"] == want["statuses"], what
    assert got["details"] == want["details"], what
    counts = list(got["details"].values())
    assert counts == sorted(counts, reverse=True), f"{what}: details not by count"


def test_summary_json_matches_exact_arithmetic(tmp_path):
    records = make_records()
    results = write(tmp_path / "r.jsonl", records)
    out = tmp_path / "s.json"
    code, stdout, stderr = metrics(results, "-k", "1,2,3,4,5,10", "--json", out)
    assert code == 0, stderr
    assert stderr == ""
    got = json.loads(out.read_text())
    want = block(records)
    min_n = min(len(rs) for rs in want["by_task"].values())
    kept = [k for k in (1, 2, 3, 4, 5, 10) if k <= min_n]
    assert kept == [1, 2, 3, 4] and min_n == 4, "the fixture should drop 5 and 10"
    assert [int(k) for k in got["pass_at_k"]] == kept
    short = {k: sum(len(rs) < k for rs in want["by_task"].values()) for k in (5, 10)}
    assert got["pass_at_k_dropped"] == [
        {"k": k, "reason": f"{short[k]} of {want['tasks']} tasks have fewer than {k} samples (min {min_n})"}
        for k in (5, 10)]
    check_block(got, want, kept, "all")

    by_class = {}
    for r in records:
        by_class.setdefault(r.get("class", ""), []).append(r)
    assert sorted(got["classes"]) == sorted(by_class)
    for name, rs in by_class.items():
        check_block(got["classes"][name], block(rs), kept, f"class {name!r}")

    tiers = expected_tiers(records)
    assert set(got["tiers"]) == set(tiers)
    for name, e in tiers.items():
        g = got["tiers"][name]
        for key in e:
            assert g[key] == e[key], f"tier {name} {key}"
        close(g["pass_rate"], Fraction(e["tests_passed"], e["tests"]), f"tier {name} pass rate")
        close(g["all_passed_rate"], Fraction(e["samples_all_passed"], e["samples"]), f"tier {name} all passed")
    walls = [Fraction(r["resources"]["wall_ms"]) for r in records]
    close(got["resources"]["wall_ms_mean"], sum(walls) / len(walls), "wall mean")
    assert got["resources"]["peak_rss_kb_max"] == max(r["resources"]["peak_rss_kb"] for r in records)
    assert "wall_s" not in got, "no timestamps in the fixture: no wall time"


@pytest.mark.parametrize("n,c,k", [(10, 3, 1), (10, 3, 5), (10, 7, 2), (200, 3, 100), (50, 1, 50),
                                   (37, 0, 5), (37, 37, 37), (120, 60, 7)])
def test_pass_at_k_of_one_task(tmp_path, n, c, k):
    records = [{"task_id": "t", "status": "pass" if i < c else "assertion_fail",
                "detail": None if i < c else "test 0 failed", "score": 1.0 if i < c else 0.0, "tests": []}
               for i in range(n)]
    out = tmp_path / "s.json"
    code, _, stderr = metrics(write(tmp_path / "r.jsonl", records), "-k", k, "--json", out)
    assert code == 0, stderr
    close(json.loads(out.read_text())["pass_at_k"][str(k)], pass_at_k(n, c, k), f"pass@{k} n={n} c={c}")


# ---- the printed table -------------------------------------------------------------

def table_value(stdout, label):
    m = re.search(rf"^  {re.escape(label)}\s+(\S+)", stdout, re.M)
    assert m, f"no line for {label!r} in:\n{stdout}"
    return m.group(1)


def test_table_shows_the_same_numbers(tmp_path):
    records = make_records(seed=11)
    code, stdout, stderr = metrics(write(tmp_path / "r.jsonl", records), "-k", "1,3,100")
    assert code == 0, stderr
    want = block(records)
    assert table_value(stdout, "tasks") == str(want["tasks"])
    assert table_value(stdout, "samples") == str(want["samples"])
    for k in (1, 3):
        assert table_value(stdout, f"pass@{k}") == f"{float(expected_pass_at_k(want['by_task'], k)):.4f}"
    assert table_value(stdout, "pass@100") == "dropped:"
    assert table_value(stdout, "mean score") == f"{float(want['mean_score']):.4f}"
    assert table_value(stdout, "median task score") == f"{float(want['median_task_score']):.4f}"
    assert table_value(stdout, "p10 task score") == f"{float(want['p10_task_score']):.4f}"
    # one row per class, "(none)" for records without one; numbers as in the JSON
    rows = {line.split()[0]: line.split()[1:] for line in stdout.splitlines()
            if line.split() and line.split()[0] in ("strings", "math", "parsing", "(none)")}
    assert set(rows) == {"strings", "math", "parsing", "(none)"}
    for name in ("strings", "(none)"):
        rs = [r for r in records if r.get("class", "") == ("" if name == "(none)" else name)]
        b = block(rs)
        tasks, samples, p1 = rows[name][:3]
        assert (int(tasks), int(samples)) == (b["tasks"], b["samples"])
        assert p1 == f"{float(expected_pass_at_k(b['by_task'], 1)):.4f}"
    for status, count in want["statuses"].items():
        assert re.search(rf"^{status}\s+{count}\s", stdout, re.M), f"{status} {count}\n{stdout}"
    assert re.search(r"^test failed\s+\d+", stdout, re.M)


def test_wall_time_from_record_timestamps(tmp_path):
    recs = [{"task_id": "a", "status": "pass", "score": 1, "tests": [],
             "started_at": "2026-11-29T10:00:00.000Z", "finished_at": "2026-11-29T10:00:01.000Z"},
            {"task_id": "a", "status": "pass", "score": 1, "tests": [],
             "started_at": "2026-11-29T10:00:00.500Z", "finished_at": "2026-11-29T10:00:04.000Z"}]
    out = tmp_path / "s.json"
    code, stdout, stderr = metrics(write(tmp_path / "r.jsonl", recs), "--json", out)
    assert code == 0, stderr
    got = json.loads(out.read_text())
    close(got["wall_s"], 4, "wall")
    close(got["throughput_per_s"], Fraction(2, 4), "throughput")
    assert got["wall_from_timestamps"] is True
    assert table_value(stdout, "wall time") == "4.00"
    assert table_value(stdout, "throughput") == "0.50"


# ---- errors ---------------------------------------------------------------------

def test_missing_file(tmp_path):
    missing = tmp_path / "nope.jsonl"
    code, stdout, stderr = metrics(missing)
    assert code == 2
    assert stdout == ""
    assert f"{missing}: No such file or directory" in stderr


def test_malformed_middle_line_names_file_line_and_field(tmp_path):
    good = {"task_id": "a", "status": "pass", "score": 1, "tests": []}
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps(dict(good, score=2)) + "\n" + json.dumps(good) + "\n")
    code, stdout, stderr = metrics(path)
    assert code == 2
    assert stdout == ""
    assert f"{path}:3: score: expected a number in [0, 1], got 2" in stderr


def test_invalid_json_in_the_middle(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"task_id": "a", "status": "pass", "score": 1, "tests": []}\n{"task_id": \n'
                    '{"task_id": "a", "status": "pass", "score": 1, "tests": []}\n')
    code, _, stderr = metrics(path)
    assert code == 2
    assert f"{path}:2: invalid JSON" in stderr


@pytest.mark.parametrize("tail", ['{"task_id": "set/0", "status": "pa', '{"task_id": "set/0", "sta\n\n  \n',
                                  '{"task_id": "set/0"}'])
def test_torn_last_line_warns_and_is_skipped(tmp_path, tail):
    records = make_records(seed=3)
    torn = write(tmp_path / "torn.jsonl", records, tail=tail)
    clean = write(tmp_path / "clean.jsonl", records)
    code, stdout, stderr = metrics(torn, "--json", tmp_path / "torn.json")
    assert code == 0, stderr
    assert re.search(rf"warning: {re.escape(str(torn))}:{len(records) + 1}: .*skipped", stderr), stderr
    code, stdout_clean, _ = metrics(clean, "--json", tmp_path / "clean.json")
    assert code == 0
    assert stdout == stdout_clean
    assert json.loads((tmp_path / "torn.json").read_text()) == json.loads((tmp_path / "clean.json").read_text())


def test_a_whole_last_line_is_never_torn(tmp_path):
    """A last line of whole JSON (newline included) is a record, not a torn
    write: metrics refuses it naming file:line and field, as compare does."""
    records = make_records(seed=3)
    path = write(tmp_path / "r.jsonl", records, tail='{"task_id": "set/0"}\n\n')
    code, stdout, stderr = metrics(path)
    assert code == 2, stderr
    assert f"{path}:{len(records) + 1}: status: missing" in stderr


def test_overlong_line_is_an_error(tmp_path):
    path = tmp_path / "r.jsonl"
    big = json.dumps({"task_id": "a", "status": "pass", "score": 1, "tests": [], "stdout": "x" * (17 << 20)})
    path.write_text(json.dumps({"task_id": "a", "status": "pass", "score": 1, "tests": []}) + "\n" + big + "\n")
    code, _, stderr = metrics(path)
    assert code == 2
    assert f"{path}:2: line longer than 16 MiB" in stderr


@pytest.mark.parametrize("k", ["x", "1,", ",1", "1,,2", "0", "-1", "1.5", " 1", "1,2x", "99999999999999999999", ""])
def test_bad_k_is_a_usage_error(tmp_path, k):
    path = write(tmp_path / "r.jsonl", [])
    code, stdout, stderr = metrics(path, "-k", k)
    assert code == 2
    assert stdout == ""
    assert f"-k: expected comma-separated positive integers, got '{k}'" in stderr


def test_usage_errors(tmp_path):
    assert metrics()[0] == 2
    path = write(tmp_path / "r.jsonl", [])
    assert metrics(path, path)[0] == 2
    assert metrics(path, "--bogus")[0] == 2
    code, stdout, _ = metrics("--help")
    assert code == 0 and "usage: execeval metrics" in stdout


def test_sandbox_errors_and_invalid_samples_count_as_errors(tmp_path):
    recs = [{"task_id": "a", "status": "pass", "score": 1, "tests": []},
            {"task_id": "a", "sandbox_error": "cgroup: permission denied", "execeval_version": "0.1.0"},
            {"task_id": "b", "sample": -1, "status": "error", "detail": "invalid sample", "score": 0.0,
             "passed": 0, "total": 0, "reward": -1, "invalid": True, "line": 4, "message": "x"},
            {"task_id": None, "sample": -1, "status": "error", "detail": "invalid sample", "score": 0.0,
             "invalid": True, "line": 5}]
    out = tmp_path / "s.json"
    code, stdout, stderr = metrics(write(tmp_path / "r.jsonl", recs), "-k", "1", "--json", out)
    assert code == 0, stderr
    got = json.loads(out.read_text())
    assert (got["tasks"], got["samples"], got["samples_without_task"]) == (2, 4, 1)
    assert got["statuses"]["error"] == 3
    assert got["details"] == {"invalid sample": 2, "sandbox error": 1}
    close(got["pass_at_k"]["1"], Fraction(1, 2) / 2, "pass@1")  # a: 1 of 2, b: 0 of 1
    assert table_value(stdout, "samples without task") == "1"


def test_empty_file_is_an_empty_summary(tmp_path):
    out = tmp_path / "s.json"
    code, stdout, stderr = metrics(write(tmp_path / "r.jsonl", []), "--json", out)
    assert code == 0, stderr
    got = json.loads(out.read_text())
    assert got["tasks"] == 0 and got["samples"] == 0 and got["pass_at_k"] == {}
    assert [d["reason"] for d in got["pass_at_k_dropped"]] == ["no tasks"] * 3
    assert table_value(stdout, "tasks") == "0"


def test_json_dash_is_standard_output_as_evals_summary_json_dash(tmp_path):
    """`metrics R --json -` wrote a file named "-" (eval's --summary-json -
    means standard output): stdout now holds the JSON alone, the table goes
    to standard error, and no file "-" is made."""
    path = write(tmp_path / "r.jsonl", make_records())
    r = subprocess.run([EXECEVAL, "metrics", str(path), "-k", "1", "--json", "-"], capture_output=True,
                       text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["samples"] == len(make_records())
    assert r.stderr.startswith("summary\n"), r.stderr
    assert not (tmp_path / "-").exists()
