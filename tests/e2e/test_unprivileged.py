"""execeval run by an unprivileged user: user namespaces, rlimit fallbacks.

As root, `setpriv` drops the test's execeval to uid/gid 65534 with no
groups; execeval then builds its sandbox in a user namespace, cannot write
cgroups, and falls back to RLIMIT_AS and RLIMIT_NPROC (counted per user
namespace). Candidates reach it on stdin, so no file needs to be readable by
that user. Skipped where the test does not run as root or user namespaces are
off. The autouse host-evidence check of conftest applies here too.
"""
import json
import os
import shutil
import subprocess
from textwrap import dedent

import pytest

from conftest import EXECEVAL, SECRET, execeval_env

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to uid 65534 with setpriv"),
    pytest.mark.skipif(not shutil.which("setpriv"), reason="setpriv (util-linux) not installed"),
]

AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
ADD = "def add(a, b):\n    return a + b\n"


def run_unprivileged(candidate, *args, asserts=("assert add(1, 2) == 3",)):
    argv = AS_NOBODY + [EXECEVAL, "run", *args]
    for a in asserts:
        argv += ["--assert", a]
    argv.append("-")
    r = subprocess.run(argv, input=candidate, capture_output=True, text=True, timeout=60, env=execeval_env(),
                       cwd="/")
    assert SECRET not in r.stdout and SECRET not in r.stderr
    rec = json.loads(r.stdout) if r.stdout.strip() else None
    return r.returncode, rec, r.stderr


def test_doctor_as_an_unprivileged_user_names_the_fallbacks():
    r = subprocess.run(AS_NOBODY + [EXECEVAL, "doctor"], capture_output=True, text=True, timeout=60, cwd="/")
    if "user namespaces        no" in r.stdout:
        pytest.skip("user namespaces are disabled on this host")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "RLIMIT_AS" in r.stdout and "RLIMIT_NPROC" in r.stdout
    assert "live check             yes" in r.stdout


def test_a_correct_candidate_passes_as_uid_65534_inside():
    code, rec, err = run_unprivileged(ADD + "import os\nprint(os.getuid(), os.getgid(), os.getgroups())\n")
    assert code == 0, err
    assert rec["status"] == "pass"
    assert rec["stdout"].split()[:2] == ["65534", "65534"]


def test_the_wall_clock_still_kills_the_tree():
    code, rec, err = run_unprivileged(ADD + "while True:\n    pass\n", "--timeout", "0.5")
    assert (code, rec["status"], rec["detail"], rec["score"]) == (1, "timeout", "timeout", 0.0), err


def test_rlimit_nproc_bounds_a_fork_bomb_per_user_namespace():
    bomb = ADD + dedent("""
        import os, time
        n = 0
        try:
            while True:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                n += 1
        except OSError as e:
            print("forks", n, e.errno)
        """)
    code, rec, err = run_unprivileged(bomb, "--procs", "16", "--timeout", "5")
    assert rec["status"] == "pass", (rec["status"], rec["detail"], err)
    forks, errno = rec["stdout"].split()[1:3]
    assert int(forks) <= 16 and errno == "11", rec["stdout"]  # EAGAIN from RLIMIT_NPROC


def test_rlimit_as_turns_a_memory_bomb_into_memory_limit():
    code, rec, err = run_unprivileged(ADD + "x = bytearray(512 << 20)\n", "--memory", "64")
    assert (rec["status"], rec["detail"]) == ("error", "memory limit"), err


def test_no_network_no_host_files_no_secret():
    probe = ADD + dedent("""
        import os, socket
        for fam in (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK):
            try:
                socket.socket(fam, socket.SOCK_DGRAM if fam == socket.AF_NETLINK else socket.SOCK_STREAM)
                print("socket", fam, "OPENED")
            except OSError as e:
                print("socket", fam, e.errno)
        for path in ("/root", "/home", "/work", "/etc/shadow"):
            print(path, os.path.exists(path))
        try:
            open("/usr/x", "w")
        except OSError as e:
            print("write /usr", e.errno)
        print(sorted(os.environ))
        """)
    code, rec, err = run_unprivileged(probe, "--allow-imports")
    out = rec["stdout"]
    assert rec["status"] == "pass", (rec["detail"], err)
    assert "OPENED" not in out and out.count(" 1\n") >= 3  # EPERM from seccomp
    assert "/root False" in out and "/home False" in out and "/work False" in out and "/etc/shadow False" in out
    assert "write /usr 30" in out  # EROFS
    assert "EXECEVAL_TEST_SECRET" not in out
