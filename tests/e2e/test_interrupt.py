"""Interrupting execeval itself mid-run (Ctrl-C, SIGTERM, ...): it exits
promptly with 128 + signo, prints no record, and leaves no sandbox process
and no execeval.* cgroup behind (the autouse host_evidence fixture checks
both again after each test)."""
import signal
import subprocess
import time

import pytest

from conftest import EXECEVAL, ISOLATION, clean_up_after_a_dead_execeval, execeval_cgroups, execeval_env, \
    sandbox_running, wait_no_cgroups, wait_no_leftovers, with_isolation

SLEEPER = "import time\ndef f():\n    return 1\ntime.sleep(20)\n"
STUBBORN = ("import os, signal, time\n"
            "for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):\n"
            "    signal.signal(s, signal.SIG_IGN)\n"
            "def f():\n    return 1\n"
            "for _ in range(3):\n"
            "    if os.fork() == 0:\n"
            "        break\n"
            "time.sleep(20)\n")


def start(tmp_path, code):
    cf = tmp_path / "sleeper.py"
    cf.write_text(code)
    argv = with_isolation([EXECEVAL, "run", "--timeout", "30", "--assert", "assert f() == 1", str(cf)])
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=execeval_env())


def wait_until_settled(code, t0):
    """Until the candidate sleeps in its top level: the harness and
    (STUBBORN) its three children run as the sandbox's uid, and so does a cold
    sandbox's init (a warm candidate's init is the worker's, root, with no
    code of the candidate's); and at least 0.5 s after the start."""
    want = (4 if code is STUBBORN else 1) + (0 if ISOLATION in ("warm", "auto") else 1)
    deadline = time.monotonic() + 10
    while len(sandbox_running()) < want and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(sandbox_running()) >= want, "the sandbox never started"
    time.sleep(max(0.2, 0.5 - (time.monotonic() - t0)))


@pytest.mark.parametrize("code", [SLEEPER, STUBBORN], ids=["sleeper", "stubborn_tree"])
@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT],
                         ids=["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"])
def test_interrupt_mid_run_leaves_nothing(tmp_path, signo, code):
    t0 = time.monotonic()
    p = start(tmp_path, code)
    try:
        wait_until_settled(code, t0)
        assert execeval_cgroups(), "no execeval.* cgroup while a sandbox runs"
        t1 = time.monotonic()
        p.send_signal(signo)
        out, err = p.communicate(timeout=5)
        took = time.monotonic() - t1
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 128 + signo, (p.returncode, err)
    assert took < 5
    assert out == b"", "no record for an interrupted run"
    assert b"interrupted" in err, err
    # Host evidence, right after exit: no sandbox process, no cgroup.
    assert wait_no_leftovers(seconds=1.0) == []
    assert wait_no_cgroups(seconds=1.0) == []


def test_sigkill_of_execeval_takes_the_sandbox_down(tmp_path):
    """SIGKILL cannot be caught: the sandbox's init must die with its parent
    (PR_SET_PDEATHSIG), which ends the whole pid namespace. The cgroups are
    left for a later execeval to sweep (it removes stale empty ones once
    they are 10 s old); here the clean-up removes them at once."""
    t0 = time.monotonic()
    p = start(tmp_path, STUBBORN)
    try:
        wait_until_settled(STUBBORN, t0)
        p.kill()
        p.wait(timeout=5)
        assert p.returncode == -signal.SIGKILL
        left = wait_no_leftovers(seconds=3.0)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        # Whatever survived is killed here (by pid), so the verdict of this
        # test is its own and the next tests start clean; the dead run's
        # cgroups are removed (each must be empty by now).
        sweep = clean_up_after_a_dead_execeval(dead_pids=[p.pid])
        assert sweep.returncode == 0, sweep.stderr
    assert left == [], "the sandbox outlived execeval: %s" % left
    assert wait_no_cgroups(seconds=2.0) == []
