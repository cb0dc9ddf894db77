"""execeval run by an unprivileged user: user namespaces, rlimit fallbacks.

As root, `setpriv` drops the test's execeval to uid/gid 65534 with no
groups; execeval then builds its sandbox in a user namespace, cannot write
cgroups, and refuses to run unless --weak-limits is given: then it falls back
to RLIMIT_AS and RLIMIT_NPROC (counted per user namespace), refuses
memfd_create and fits /tmp and file size x open files inside --memory.
Candidates reach it on stdin, so no file needs to be readable by that user.
Skipped where the test does not run as root or user namespaces are off. The
autouse host-evidence check of conftest applies here too.
"""
import json
import os
import shutil
import subprocess
import time
from textwrap import dedent

import pytest

from conftest import EXECEVAL, REPO, SECRET, execeval_env

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to uid 65534 with setpriv"),
    pytest.mark.skipif(not shutil.which("setpriv"), reason="setpriv (util-linux) not installed"),
]

AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
ADD = "def add(a, b):\n    return a + b\n"


def run_unprivileged(candidate, *args, asserts=("assert add(1, 2) == 3",), weak=True):
    argv = AS_NOBODY + [EXECEVAL, "run", *(["--weak-limits"] if weak else []), *args]
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
    # Without a memory cgroup the default options cannot run (exit 3); the
    # live check shows that --weak-limits would.
    assert r.returncode == 3, r.stdout + r.stderr
    assert "RLIMIT_AS" in r.stdout and "RLIMIT_NPROC" in r.stdout
    assert "refuses to run without --weak-limits" in r.stdout
    assert "live check             yes" in r.stdout
    assert "only with --weak-limits" in r.stdout


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


# ---------------------------------------------------------------------------
# Without a memory cgroup --memory is only RLIMIT_AS, which file pages never
# touch (issue 11, item 10): refused by default, bounded under --weak-limits.


def test_without_a_memory_cgroup_it_refuses_unless_weak_limits():
    code, rec, err = run_unprivileged(ADD, weak=False)
    assert (code, rec) == (3, None), err
    assert "no writable memory cgroup" in err and "--weak-limits" in err and "Delegate=yes" in err, err


def test_weak_limits_fit_tmp_and_file_sizes_inside_memory():
    probe = ADD + dedent("""
        import errno, os, resource
        try:
            os.memfd_create("x")
            memfd = "ok"
        except OSError as e:
            memfd = errno.errorcode[e.errno]
        st = os.statvfs("/tmp")
        print(memfd, resource.getrlimit(resource.RLIMIT_FSIZE)[0] >> 20,
              resource.getrlimit(resource.RLIMIT_NOFILE)[0], st.f_blocks * st.f_frsize >> 20)
        """)
    code, rec, err = run_unprivileged(probe, "--allow-imports", "--memory", "128")
    assert rec["status"] == "pass", (rec["detail"], err)
    memfd, fsize_mb, nofile, tmp_mb = rec["stdout"].split()
    assert memfd == "EPERM"
    assert (int(fsize_mb), int(nofile), int(tmp_mb)) == (1, 128, 64)  # 1 x 128 <= 128; 64 <= 128


HOG = dedent("""
    import errno, os, sys, time
    # What --memory 128 once let through: memfds of RLIMIT_FSIZE each (960 MB),
    # then files in /tmp until it is full.
    chunk, held, fds, stops = b"x" * (1 << 20), 0, [], set()
    def fill(fd):
        global held
        while held < (960 << 20):
            try:
                os.write(fd, chunk)
            except OSError as e:
                stops.add(errno.errorcode[e.errno])
                return e.errno
            held += len(chunk)
    for i in range(64):
        try:
            fd = os.memfd_create("hog%d" % i)
        except OSError as e:
            stops.add("memfd " + errno.errorcode[e.errno])
            break
        fds.append(fd)
        if fill(fd) != errno.EFBIG:
            break
    for i in range(256):
        fd = os.open("/tmp/hog%d" % i, os.O_WRONLY | os.O_CREAT, 0o600)
        fds.append(fd)
        if fill(fd) != errno.EFBIG:
            break
    print("held", held >> 20, sorted(stops), flush=True)
    time.sleep(2)
    """)


def shmem_kb():
    with open("/proc/meminfo") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("Shmem:"))


def test_weak_limits_hold_shmem_within_memory():
    before = shmem_kb()
    argv = AS_NOBODY + [EXECEVAL, "run", "--weak-limits", "--allow-imports", "--memory", "128", "--timeout", "10",
                        "--assert", "assert add(1, 2) == 3", "-"]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=execeval_env(), cwd="/")
    p.stdin.write((ADD + HOG).encode())
    p.stdin.close()
    peak = before
    while p.poll() is None:  # host evidence while the candidate holds what it could
        peak = max(peak, shmem_kb())
        time.sleep(0.02)
    out, err = p.stdout.read(), p.stderr.read()
    p.wait()
    after = shmem_kb()
    rec = json.loads(out)
    assert rec["status"] == "pass", (rec["detail"], err.decode())
    held = rec["stdout"].split()
    assert held[0] == "held" and int(held[1]) <= 64, rec["stdout"]  # the /tmp of 64 MB, no more
    assert "memfd EPERM" in rec["stdout"] and "ENOSPC" in rec["stdout"], rec["stdout"]
    # Other processes move Shmem a little; 960 MB would not hide in that.
    assert (peak - before) >> 10 < 128, ("Shmem grew by %d MB under --memory 128" % ((peak - before) >> 10))
    assert (after - before) >> 10 < 32, ("Shmem still %d MB higher after the run" % ((after - before) >> 10))


def test_eval_and_serve_refuse_too_and_accept_weak_limits():
    # uid 65534 reads the files and writes the results: a directory it can
    # reach, outside the host temp dirs the host-evidence check watches.
    import tempfile
    from pathlib import Path
    tmp_path = Path(tempfile.mkdtemp(prefix="unpriv-eval-", dir=str(REPO / "build")))
    os.chmod(tmp_path, 0o777)
    try:
        eval_and_serve(tmp_path)
    finally:
        shutil.rmtree(tmp_path)


def eval_and_serve(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"task_id": "t", "prompt": "", "tests": [
        {"kind": "assert", "code": "assert add(1, 2) == 3"}]}) + "\n")
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps({"task_id": "t", "completion": ADD}) + "\n")
    for f in (tasks, samples):
        os.chmod(f, 0o644)
    argv = AS_NOBODY + [EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-q", "-k", "1",
                        "--no-history", "--isolation", "cold"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=execeval_env(), cwd="/")
    assert r.returncode == 3 and "--weak-limits" in r.stderr, (r.returncode, r.stderr)
    r = subprocess.run(argv + ["--weak-limits"], capture_output=True, text=True, timeout=60, env=execeval_env(),
                       cwd="/")
    assert r.returncode == 0, r.stderr
    with open(str(samples) + ".results.jsonl") as f:
        assert [json.loads(line)["status"] for line in f] == ["pass"]

    serve = AS_NOBODY + [EXECEVAL, "serve", "--listen", "127.0.0.1:0", "--isolation", "cold", "-j", "1"]
    r = subprocess.run(serve, capture_output=True, text=True, timeout=60, env=execeval_env(), cwd="/")
    assert r.returncode == 3 and "--weak-limits" in r.stderr, (r.returncode, r.stderr)
    p = subprocess.Popen(serve + ["--weak-limits"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=execeval_env(), cwd="/")
    try:
        line = p.stderr.readline().decode()
        while line and "listening on" not in line:
            line = p.stderr.readline().decode()
        assert "listening on http://127.0.0.1:" in line, line
    finally:
        p.terminate()
        p.wait(timeout=60)
