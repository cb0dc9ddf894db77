"""A server heals or says it is sick (issue 34).

A warm worker whose slot breaks from outside (another execeval removed its
pooled candidate cgroup: every start then fails with ENODEV) is made again
with fresh cgroups, and the candidate that met the broken slot runs again on
the fresh worker: the client sees its verdict, never the failure. When no
sandbox can be started at all (here: a pids.max of 0 in a cgroup the test
made for the server, a real fault of the host, undone afterwards), /healthz
answers 503 with the reason, /metrics says so, stderr says it once; once the
fault is gone the next request succeeds and /healthz is 200 again.

Warm isolation needs root, as does moving the server into a cgroup of the
test's own: both tests are skipped otherwise.
"""
import glob
import json
import os
import subprocess
import time

import pytest

import serve_client
from conftest import EXECEVAL, execeval_env
from serve_client import serve  # noqa: F401 (fixture)

ADD_OK = "def add(a, b):\n    return a + b\n"
# Both judges: the split judge's assert test, the supervisor's call test.
TASKS = [
    {"task_id": "heal/assert", "prompt": "", "tests": [{"kind": "assert", "code": "assert add(1, 2) == 3"}]},
    {"task_id": "heal/call", "prompt": "", "entry_point": "add",
     "tests": [{"kind": "call", "fn": "add", "args": [1, 2], "expected": 3}]},
]

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="warm isolation and cgroups of the test's own need root")


def own_cgroup_dir(pid, controller):
    """pid's cgroup directory in controller's v1 hierarchy, or None."""
    mnt = "/sys/fs/cgroup/" + controller
    if not os.path.isdir(mnt):
        return None
    with open("/proc/%d/cgroup" % pid) as f:
        for line in f:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            if controller in ctrls.split(","):
                return mnt + path
    return None


def remove_idle_candidate_cgroups(pid):
    """Removes the pooled candidate cgroups of execeval pid in the memory
    hierarchy that hold no task, as a sweep that could not see their owner
    did (a live judge's is busy: rmdir refuses it); returns how many."""
    d = own_cgroup_dir(pid, "memory")
    assert d, "no memory cgroup (v1) here"
    removed = 0
    for c in sorted(glob.glob(os.path.join(d, "execeval.%d.*" % pid, "candidate"))):
        with open(os.path.join(c, "tasks")) as f:
            if f.read().strip():
                continue
        os.rmdir(c)
        removed += 1
    return removed


def ok_everywhere(s):
    for task in TASKS:
        a = s.run({"task": task, "candidate": ADD_OK})
        assert a.status == 200, a
        assert a.json["status"] == "pass" and "infra_error" not in a.json, a


@needs_root
def test_a_worker_whose_candidate_cgroup_vanished_is_made_again(serve):
    s = serve("--isolation", "warm", jobs=1)
    ok_everywhere(s)
    for round_ in range(2):
        assert remove_idle_candidate_cgroups(s.pid) >= 1, "no idle pooled candidate cgroup of pid %d" % s.pid
        # The next requests meet the broken slots: each is retried on a fresh worker.
        ok_everywhere(s)
        h = s.healthz()
        assert h.status == 200 and h.json["status"] == "ok", h
        m = s.metrics()
        assert m.value("execeval_healthy") == 1
        assert m.value("execeval_sandbox_start_failures_in_a_row") == 0
        assert m.value("execeval_worker_replacements_total") >= round_ + 1
        assert m.value("execeval_sandbox_start_failures_total") >= round_ + 1
        assert m.value("execeval_sandbox_failures_total") == 0  # no request saw one
    assert "cannot be started" not in s.stderr


@pytest.fixture
def pids_cgroup():
    """A pids cgroup of the test's own under its own (the safety net's);
    removed at the end (its processes must have ended by then)."""
    parent = own_cgroup_dir(os.getpid(), "pids")
    if not parent:
        pytest.skip("no pids cgroup (v1) here")
    d = os.path.join(parent, "heal-test.%d" % os.getpid())
    os.mkdir(d)
    yield d
    for _ in range(100):  # an execeval's own cgroups go with it
        try:
            os.rmdir(d)
            break
        except OSError:
            time.sleep(0.1)
    else:
        pytest.fail("could not remove %s" % d)


def joiner(d):
    """A preexec_fn: the child joins cgroup d before it execs."""
    def join():
        with open(os.path.join(d, "cgroup.procs"), "w") as f:
            f.write("0")
    return join


@pytest.fixture
def server_cgroup(pids_cgroup, monkeypatch):
    """pids_cgroup, which the next serve starts in."""
    real_popen = subprocess.Popen

    def popen(*args, **kw):
        kw.setdefault("preexec_fn", joiner(pids_cgroup))
        return real_popen(*args, **kw)

    monkeypatch.setattr(serve_client.subprocess, "Popen", popen)
    yield pids_cgroup
    monkeypatch.undo()


def set_pids_max(d, value):
    with open(os.path.join(d, "pids.max"), "w") as f:
        f.write(str(value))


@needs_root
@pytest.mark.parametrize("isolation", ["warm", "cold"])
def test_a_server_that_cannot_start_sandboxes_says_so_and_heals(serve, server_cgroup, isolation):
    s = serve("--isolation", isolation, jobs=1)
    ok_everywhere(s)
    # Every fork in the server's cgroup now fails (EAGAIN): its warm worker
    # cannot start a candidate, and no worker can be made again.
    set_pids_max(server_cgroup, 0)
    try:
        remove_idle_candidate_cgroups(s.pid)
        answers = [s.run({"task": TASKS[1], "candidate": ADD_OK}) for _ in range(3)]
        for a in answers:
            assert a.status == 500 and "sandbox setup failed" in a.json["error"], a
        h = s.healthz()
        assert h.status == 503, h
        assert h.json["status"] == "unhealthy" and "cannot be started" in h.json["reason"], h
        assert h.json["failed_starts_in_a_row"] >= 3, h
        assert s.healthz().status == 503  # it stays so without a success
        m = s.metrics()
        assert m.value("execeval_healthy") == 0
        assert m.value("execeval_sandbox_start_failures_in_a_row") >= 3
        assert m.value("execeval_sandbox_start_failures_total") >= 3
        assert m.value("execeval_sandbox_failures_total") == 3
    finally:
        set_pids_max(server_cgroup, "max")
    # No client request is needed to heal: a probe polling /healthz (as a
    # readiness probe that took the server out of service does) sees 200
    # once a sandbox starts again (the healer's trivial candidate).
    deadline = time.monotonic() + 30
    while (h := s.healthz()).status == 503:
        assert time.monotonic() < deadline, h
        time.sleep(0.1)
    assert h.status == 200 and h.json["status"] == "ok", h
    assert s.metrics().value("execeval_heal_probes_total") >= 1
    ok_everywhere(s)
    m = s.metrics()
    assert m.value("execeval_healthy") == 1 and m.value("execeval_sandbox_start_failures_in_a_row") == 0
    if isolation == "warm":
        assert m.value("execeval_worker_replacements_total") >= 1
    # The log says it once, not per request, and says when it is over.
    assert s.stderr.count("sandboxes cannot be started") == 1, s.stderr
    assert s.stderr.count("sandboxes start again") == 1, s.stderr
    assert s.stop() == 0


# ---- eval: one sandbox failure is one sample's infrastructure error ---------

ADD_TASKS = [{"task_id": "heal/%d" % i, "prompt": "def add(a, b):\n", "entry_point": "add",
              "tests": [{"kind": "call", "fn": "add", "args": [i, 1], "expected": i + 1}]} for i in range(2)]


def sample_line(i):
    return json.dumps({"task_id": "heal/%d" % (i % 2), "completion": "    return a + b\n"}) + "\n"


def eval_argv(tmp_path, samples, *more):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(t) + "\n" for t in ADD_TASKS))
    # Cold: each sandbox is a clone of execeval itself, which the test's
    # pids.max refuses or allows from outside.
    return [EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-o",
            str(tmp_path / "out.jsonl"), "-j", "1", "--isolation", "cold", "--no-history", "-q",
            "--summary-json", str(tmp_path / "summary.json")] + list(more)


def records(tmp_path):
    path = tmp_path / "out.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def wait_for_records(tmp_path, n, proc, timeout=60):
    deadline = time.monotonic() + timeout
    while len(records(tmp_path)) < n:
        assert proc.poll() is None, "eval ended early: %s" % (proc.communicate()[1],)
        assert time.monotonic() < deadline, "no record %d within %d s" % (n, timeout)
        time.sleep(0.02)


def tasks_of(pid):
    return len(os.listdir("/proc/%d/task" % pid))


@needs_root
def test_one_sandbox_failure_is_one_samples_infra_error_and_the_run_goes_on(tmp_path, pids_cgroup):
    proc = subprocess.Popen(eval_argv(tmp_path, "-"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=execeval_env(), preexec_fn=joiner(pids_cgroup))
    try:
        # One sample at a time through a pipe: eval reads the next only
        # once the last one's record is written.
        proc.stdin.write(sample_line(0).encode())
        proc.stdin.flush()
        wait_for_records(tmp_path, 1, proc)
        set_pids_max(pids_cgroup, tasks_of(proc.pid))  # no clone now: the host failed
        proc.stdin.write(sample_line(1).encode())
        proc.stdin.flush()
        wait_for_records(tmp_path, 2, proc)
        set_pids_max(pids_cgroup, "max")
        out, err = proc.communicate((sample_line(2) + sample_line(3)).encode(), timeout=120)
    finally:
        set_pids_max(pids_cgroup, "max")
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out, err = out.decode(), err.decode()
    assert proc.returncode == 0, err
    recs = records(tmp_path)
    assert [r.get("status") for r in recs] == ["pass", None, "pass", "pass"], recs
    bad = recs[1]
    assert bad["infra_error"] is True and bad["reward"] is None, bad
    assert (bad["task_id"], bad["sample"]) == ("heal/1", 0), bad
    assert "Resource temporarily unavailable" in bad["sandbox_error"], bad
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["infra_errors"] == 1 and summary["samples"] == 3, summary
    assert summary["pass_at_k"]["1"] == 1.0, "an infra error is not the model's failure"
    assert "infra errors" in out and "left out of samples and pass@k" in out, out
    # metrics says the same from the file; compare refuses to gate on it.
    m = subprocess.run([EXECEVAL, "metrics", str(tmp_path / "out.jsonl"), "--json", str(tmp_path / "m.json")],
                       capture_output=True, text=True, env=execeval_env())
    assert m.returncode == 0 and "infra errors" in m.stdout, m
    assert json.loads((tmp_path / "m.json").read_text())["infra_errors"] == 1
    c = subprocess.run([EXECEVAL, "compare", str(tmp_path / "out.jsonl"), str(tmp_path / "out.jsonl")],
                       capture_output=True, text=True, env=execeval_env())
    assert c.returncode == 2, c
    assert "has 1 infra_error records" in c.stderr and "--allow-infra-errors" in c.stderr, c.stderr
    c = subprocess.run([EXECEVAL, "compare", str(tmp_path / "out.jsonl"), str(tmp_path / "out.jsonl"),
                        "--allow-infra-errors"], capture_output=True, text=True, env=execeval_env())
    assert c.returncode == 0, c
    assert "--allow-infra-errors: BASE has 1" in c.stderr, c.stderr


@needs_root
def test_a_run_of_sandbox_failures_ends_eval_with_what_to_do(tmp_path, pids_cgroup):
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(sample_line(i) for i in range(8)))
    set_pids_max(pids_cgroup, 1)  # execeval alone: every sandbox's clone fails
    try:
        r = subprocess.run(eval_argv(tmp_path, samples), capture_output=True, text=True, env=execeval_env(),
                           preexec_fn=joiner(pids_cgroup), timeout=120)
    finally:
        set_pids_max(pids_cgroup, "max")
    assert r.returncode == 3, r
    recs = records(tmp_path)
    assert len(recs) == 5 and all(x["infra_error"] is True and x["reward"] is None for x in recs), recs
    keys = [("heal/0", 0), ("heal/1", 0), ("heal/0", 1), ("heal/1", 1), ("heal/0", 2)]
    assert [(x["task_id"], x["sample"]) for x in recs] == keys
    assert "sandbox setup failed for 5 samples in a row" in r.stderr, r.stderr
    assert "execeval doctor" in r.stderr and "--resume" in r.stderr, r.stderr
    assert r.stderr.count("sandboxes cannot be started") == 1, r.stderr
    # The host is back: --resume goes on after the records kept.
    r = subprocess.run(eval_argv(tmp_path, samples, "--resume"), capture_output=True, text=True,
                       env=execeval_env(), timeout=120)
    assert r.returncode == 0, r
    recs = records(tmp_path)
    assert len(recs) == 8 and [x.get("status") for x in recs[5:]] == ["pass"] * 3, recs
    assert "infra errors" in r.stdout, r.stdout
