"""A timeout the host caused is never the candidate's verdict (issue 39).

A sandbox that waited for a CPU most of its clock and got less than a
quarter of it (score.c: "starved") timed out because the machine was busy,
not because the program was slow. Its evaluation runs again once, from the
start; starved again, it is an infrastructure error: `reward: null`,
`infra_error: true`, the status and detail saying what happened. Here the
host is made busy for real: execeval runs in a cpu cgroup of the test's own
with a quota of 3% of a CPU, so that every sandbox below it starves. Needs
root (the cgroup) and a cpu controller.
"""
import json
import os
import secrets
import subprocess
import time

import pytest

from conftest import EXECEVAL, cgroup_roots, execeval_env, with_isolation
from serve_client import serve  # noqa: F401 (fixture)

# Needs 0.5 s of CPU: in a 1 s clock with a whole CPU it passes.
SLOW_BUT_FINE = "import time\nwhile time.process_time() < 0.5:\n    pass\ndef f():\n    return True\n"


def cpu_root():
    """Our own cpu cgroup directory and its version, or None."""
    for root in cgroup_roots():
        if os.path.exists(os.path.join(root, "cpu.cfs_quota_us")):
            return root, 1
        if os.path.exists(os.path.join(root, "cpu.max")) and os.path.exists(os.path.join(root, "cgroup.procs")):
            return root, 2
    return None


@pytest.fixture
def starved_cgroup():
    """A cpu cgroup with 3% of a CPU; yields the file a process writes its
    pid to to join it. Removed afterwards (every process in it has ended)."""
    found = cpu_root()
    if os.geteuid() != 0 or not found:
        pytest.skip("needs root and a cpu cgroup controller")
    root, version = found
    d = os.path.join(root, "ee-starved-" + secrets.token_hex(4))
    os.mkdir(d)
    try:
        if version == 1:
            with open(os.path.join(d, "cpu.cfs_period_us"), "w") as f:
                f.write("100000")
            with open(os.path.join(d, "cpu.cfs_quota_us"), "w") as f:
                f.write("3000")
            yield os.path.join(d, "tasks")
        else:
            with open(os.path.join(d, "cpu.max"), "w") as f:
                f.write("3000 100000")
            yield os.path.join(d, "cgroup.procs")
    finally:
        for sub, _, _ in sorted(os.walk(d), key=lambda w: -len(w[0])):
            deadline = time.monotonic() + 5
            while True:
                try:
                    os.rmdir(sub)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)


def run_in(join, argv, stdin):
    """argv as a process of the starved cgroup (it joins, then execs)."""
    shell = ['/bin/sh', '-c', 'echo $$ > "$0" && exec "$@"', join] + argv
    t0 = time.monotonic()
    r = subprocess.run(shell, input=stdin, capture_output=True, timeout=120, env=execeval_env())
    return r, time.monotonic() - t0


@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_a_starved_timeout_runs_again_then_is_the_hosts_not_the_candidates(starved_cgroup, isolation):
    argv = with_isolation([EXECEVAL, "run", "--timeout", "1", "--isolation", isolation,
                           "--assert", "assert f()", "-"])
    r, took = run_in(starved_cgroup, argv, SLOW_BUT_FINE.encode())
    rec = json.loads(r.stdout)
    assert (rec["status"], rec["reward"], rec.get("infra_error")) == ("timeout", None, True), rec
    assert rec["detail"].startswith("timeout (starved: "), rec
    assert r.returncode == 3, r
    assert b"starved the candidate of CPU twice" in r.stderr, r.stderr
    assert took >= 2.0, "it ran once (%.2f s), not twice" % took


def test_a_hanging_program_is_still_a_timeout_on_a_quiet_host():
    """The rule takes nothing from a real timeout: a sleeper waits on no
    run queue, so it is the candidate's timeout, reward -1."""
    r = subprocess.run(with_isolation([EXECEVAL, "run", "--timeout", "0.5", "--assert", "assert f()", "-"]),
                       input=b"import time\ntime.sleep(30)\ndef f():\n    return True\n", capture_output=True,
                       timeout=60, env=execeval_env())
    rec = json.loads(r.stdout)
    assert (rec["status"], rec["detail"], rec["reward"], rec.get("infra_error")) == \
        ("timeout", "timeout", -1, None), rec
    assert r.returncode == 1


@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_a_starved_cell_is_rolled_back_and_said_to_be_the_hosts(starved_cgroup, serve, isolation):  # noqa: F811
    """A session cannot run a cell again (its state): a cell the host
    starved is rolled back as any timeout, its answer marked the host's
    (docs/api.md, Sessions). The server joins the starved cgroup before its
    first session: that session's processes (cold: cloned by the server;
    warm: forked by the sessions' workers, made at the first session) are
    starved with it."""
    # The server starts in it (its sandboxes' cgroups are made under the
    # cgroups it starts in): this process joins it for the fork, then leaves.
    root, version = cpu_root()
    home = os.path.join(root, "tasks" if version == 1 else "cgroup.procs")
    with open(starved_cgroup, "w") as f:
        f.write(str(os.getpid()))
    try:
        srv = serve("--isolation", isolation, jobs=1)
    finally:
        with open(home, "w") as f:
            f.write(str(os.getpid()))
    a = srv.post("/v1/sessions", {})
    assert a.status == 200, a
    sid = a.json["id"]
    assert srv.post("/v1/sessions/%s/exec" % sid, {"code": "x = 1"}).json["status"] == "ok"
    a = srv.post("/v1/sessions/%s/exec" % sid, {"code": "x = 2\nwhile True:\n    pass", "timeout_s": 1}).json
    assert (a["status"], a["rolled_back"], a["infra_error"]) == ("timeout", True, True), a
    assert a["detail"].startswith("timeout (starved: "), a
    a = srv.post("/v1/sessions/%s/exec" % sid, {"code": "x"}).json
    assert (a["status"], a["result"], a["infra_error"]) == ("ok", "1", False), a
