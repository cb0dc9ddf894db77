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
import os
import subprocess
import time

import pytest

import serve_client
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
def server_cgroup(monkeypatch):
    """A pids cgroup of the test's own under its own (the safety net's),
    which the next serve starts in; removed at the end (the server must
    have ended by then)."""
    parent = own_cgroup_dir(os.getpid(), "pids")
    if not parent:
        pytest.skip("no pids cgroup (v1) here")
    d = os.path.join(parent, "heal-test.%d" % os.getpid())
    os.mkdir(d)
    real_popen = subprocess.Popen

    def join():
        with open(os.path.join(d, "cgroup.procs"), "w") as f:
            f.write("0")

    def popen(*args, **kw):
        kw.setdefault("preexec_fn", join)
        return real_popen(*args, **kw)

    monkeypatch.setattr(serve_client.subprocess, "Popen", popen)
    yield d
    monkeypatch.undo()
    for _ in range(100):  # the server's own cgroups go with it
        try:
            os.rmdir(d)
            break
        except OSError:
            time.sleep(0.1)
    else:
        pytest.fail("could not remove %s" % d)


def set_pids_max(d, value):
    with open(os.path.join(d, "pids.max"), "w") as f:
        f.write(str(value))


@needs_root
def test_a_server_that_cannot_start_sandboxes_says_so_and_heals(serve, server_cgroup):
    s = serve("--isolation", "warm", jobs=1)
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
    ok_everywhere(s)
    h = s.healthz()
    assert h.status == 200 and h.json["status"] == "ok", h
    m = s.metrics()
    assert m.value("execeval_healthy") == 1 and m.value("execeval_sandbox_start_failures_in_a_row") == 0
    assert m.value("execeval_worker_replacements_total") >= 1
    # The log says it once, not per request, and says when it is over.
    assert s.stderr.count("sandboxes cannot be started") == 1, s.stderr
    assert s.stderr.count("sandboxes start again") == 1, s.stderr
    assert s.stop() == 0
