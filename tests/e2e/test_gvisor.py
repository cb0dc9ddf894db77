"""The gVisor backend (--backend gvisor): the native contract under runsc.

Each candidate runs in its own runsc sandbox (docs/sandbox.md, "The gVisor
backend"); these cases check that the record and the verdicts are the
native ones, that the host sees nothing of the candidate afterwards (the
autouse host_evidence fixture: no process, cgroup, mount or file left), and
the failures: no runsc (exit 3 naming the package), warm refused. The
whole data-driven suite runs under gVisor too: `make e2e` runs
test_cases.py with EXECEVAL_BACKEND=gvisor.

Skipped where runsc is missing or execeval is not root (the backend needs
root: runsc makes its own namespaces and mounts)."""
import json
import os
import shutil
import socket
import subprocess
import threading

import pytest

from conftest import EXECEVAL, execeval_env

RUNSC = shutil.which("runsc") or ("/usr/bin/runsc" if os.path.exists("/usr/bin/runsc") else None)
pytestmark = pytest.mark.skipif(RUNSC is None or os.geteuid() != 0,
                                reason="runsc missing (apt-get install runsc) or not root")
GV = ["--backend", "gvisor"]


def verdict(r):
    return r.record["status"], r.record["detail"]


def test_a_pass_says_backend_gvisor(run):
    r = run("def add(a, b):\n    return a + b\n", asserts=["assert add(1, 2) == 3"], args=GV)
    assert r.code == 0, r
    assert r.record["backend"] == "gvisor"
    assert r.record["passed"] == 1 and r.record["reward"] == 1


def test_native_records_carry_no_backend(run):
    r = run("def add(a, b):\n    return a + b\n", asserts=["assert add(1, 2) == 3"],
            args=["--backend", "native"])
    assert r.code == 0 and "backend" not in r.record, r


def test_hidden_tests_pass_through_the_gate(run):
    task = {"task_id": "gv/gate", "entry_point": "add",
            "tests": [{"kind": "assert", "code": "assert add(1, 2) == 3"},
                      {"kind": "assert", "code": "assert add(2, 2) == 4", "visibility": "hidden"},
                      {"kind": "call", "fn": "add", "args": [3, 4], "expected": 7, "visibility": "hidden"}]}
    r = run("def add(a, b):\n    return a + b\n", task=task, args=GV)
    assert r.code == 0 and r.record["passed"] == 3, r


# A big allocation's native OOM kill comes after the kernel zeroed --memory's
# worth of pages: give it time on a loaded machine.
SLOW = {"big allocation": "8"}


@pytest.mark.parametrize("name, program, expect", [
    ("timeout", "while True:\n    pass\n", ("timeout", "timeout")),
    ("flood", "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n", ("error", "output overflow")),
    ("big allocation", "x = bytearray(2 << 30)\n", ("error", "memory limit")),
    ("premature exit", "import os\nos._exit(0)\n", ("error", "premature exit")),
    ("denied import", "import socket\n", ("error", "denied import: socket")),
    ("fake result on stdout", "print('{\"event\": \"test\", \"index\": 0, \"status\": \"pass\"}')\n"
     "raise SystemExit(0)\n", ("error", "premature exit")),
])
def test_hostile_verdicts_are_the_native_ones(run, name, program, expect):
    timeout = ["--timeout", SLOW.get(name, "2")]
    native = run(program, asserts=["assert True"], args=["--backend", "native"] + timeout)
    gv = run(program, asserts=["assert True"], args=GV + timeout)
    assert verdict(native) == expect, native
    assert verdict(gv) == expect, gv


FORK_BOMB = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        os._exit(0)\n"


def test_a_fork_bomb_is_refused_but_named_by_its_symptom(run):
    """Where the verdicts differ today: inside gVisor the process limit is
    gVisor's RLIMIT_NPROC (the host's pids cgroup holds runsc's ~40 tasks
    and ~5 per candidate process under ptrace, so it cannot count the
    candidate's processes exactly); a refused fork is EAGAIN, as natively,
    but nothing tells the supervisor the limit was hit, so the detail is
    the symptom (here the harness's processes all exit: premature exit)
    rather than "process limit". Natively the pids cgroup's count says it."""
    args = ["--procs", "16", "--timeout", "3"]
    native = run(FORK_BOMB, asserts=["assert True"], args=["--backend", "native"] + args)
    gv = run(FORK_BOMB, asserts=["assert True"], args=GV + args)
    assert verdict(native) == ("error", "process limit"), native
    assert gv.record["status"] in ("error", "syntax_error") and gv.code == 1, gv


def test_growing_memory_is_a_timeout_not_an_oom_within_the_clock(run):
    """Where the verdicts legitimately differ: memory grown 50 MB at a time
    stays under RLIMIT_AS until the cgroup's limit, and gVisor's ptrace
    platform touches pages slowly (~0.2 GB/s here), so the wall clock
    usually ends it before the host's OOM kill: a timeout, not "memory
    limit". Either is a refusal; neither may pass."""
    r = run("l = []\nwhile True:\n    l.append(bytearray(50 << 20))\n", asserts=["assert True"],
            args=GV + ["--timeout", "2"])
    assert verdict(r) in {("timeout", "timeout"), ("error", "memory limit")}, r


def test_the_seccomp_allow_list_holds_inside_gvisor(run):
    """The relay loads the native filter: an AF_INET socket, which gVisor's own
    netstack would give, is EPERM, as natively."""
    prog = ("import errno, _socket as s\n"
            "try:\n"
            "    s.socket(s.AF_INET, s.SOCK_STREAM)\n"
            "    got = 'ok'\n"
            "except OSError as e:\n"
            "    got = errno.errorcode[e.errno]\n"
            "print(got)\n")
    native = run(prog, asserts=["assert True"], args=["--backend", "native", "--allow-imports"])
    gv = run(prog, asserts=["assert True"], args=GV + ["--allow-imports"])
    assert native.record["stdout"] == gv.record["stdout"] == "EPERM\n", (native, gv)


def test_no_network_reaches_a_host_listener(run):
    """--network=none: the sandbox's 127.0.0.1 is gVisor's own loopback."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(0.2)
    seen = []

    def accept():
        try:
            seen.append(srv.accept())
        except OSError:
            pass

    port = srv.getsockname()[1]
    prog = ("import _socket as s\n"
            "x = s.socket(s.AF_INET, s.SOCK_STREAM)\n"
            "try:\n"
            "    x.connect(('127.0.0.1', %d))\n"
            "    print('connected')\n"
            "except OSError as e:\n"
            "    print('refused', e.errno)\n" % port)
    r = run(prog, asserts=["assert True"], args=GV + ["--allow-imports"])
    t = threading.Thread(target=accept)
    t.start()
    t.join()
    srv.close()
    assert not seen, "a candidate reached the host's listener"
    assert "connected" not in r.record["stdout"], r


def test_the_host_is_not_visible(run):
    prog = ("import os\n"
            "print(sorted(os.listdir('/')))\n"
            "print(os.getuid(), os.getgid())\n"
            "print(open('/proc/1/environ', 'rb').read() if os.access('/proc/1/environ', os.R_OK) else b'')\n")
    r = run(prog, asserts=["assert True"], args=GV)
    out = r.record["stdout"]
    for host_only in ("'root'", "'home'", "'work'", "'var'", "'run'"):
        assert host_only not in out, out
    assert "65534 65534" in out, out


def test_writes_outside_tmp_fail(run):
    prog = ("for p in ('/usr/x', '/etc/x', '/x'):\n"
            "    try:\n"
            "        open(p, 'w')\n"
            "        print('wrote', p)\n"
            "    except OSError:\n"
            "        pass\n"
            "open('/tmp/ok', 'w').write('fine')\n")
    r = run(prog, asserts=["assert True"], args=GV)
    assert r.code == 0 and "wrote" not in r.record["stdout"], r
    # Not counted under gVisor (docs/record.md, write_outside_tmp): the
    # filter runs in the sentry, where no listener reaches the supervisor.
    assert "violations" not in r.record, r


def test_multiprocessing_has_its_dev_shm(run):
    """POSIX semaphores live in /dev/shm (natively a link to /tmp); gVisor's
    own /dev/shm was root's: multiprocessing.Pool failed with EACCES."""
    prog = ("import multiprocessing\n"
            "with multiprocessing.Pool(2) as p:\n"
            "    print(p.map(abs, [-1, -2]))\n")
    r = run(prog, asserts=["assert True"], args=GV)
    assert r.code == 0 and r.record["stdout"] == "[1, 2]\n", r


def test_no_runsc_is_exit_3_naming_the_package(run):
    r = run("pass\n", asserts=["assert True"], args=GV, env={"EXECEVAL_RUNSC": "/nonexistent/runsc"})
    assert r.code == 3 and r.record is None, r
    assert "apt-get install runsc" in r.stderr, r.stderr


def test_warm_isolation_is_refused(run):
    r = run("pass\n", asserts=["assert True"], args=GV + ["--isolation", "warm"])
    assert r.code == 3 and "--isolation warm" in r.stderr, r


def test_eval_under_gvisor(tmp_path):
    tasks = tmp_path / "t.jsonl"
    samples = tmp_path / "s.jsonl"
    out = tmp_path / "r.jsonl"
    tasks.write_text(json.dumps({"task_id": "a", "entry_point": "f",
                                 "tests": [{"kind": "assert", "code": "assert f() == 1"}]}) + "\n")
    samples.write_text("".join(json.dumps({"task_id": "a", "completion": c}) + "\n" for c in
                               ("def f():\n    return 1\n", "def f():\n    return 2\n",
                                "def f():\n    while True: pass\n")))
    p = subprocess.run([EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-o", str(out),
                        "-j", "2", "-q", "--no-history", "--timeout", "2"] + GV,
                       capture_output=True, text=True, env=execeval_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(x["status"] for x in recs) == ["assertion_fail", "pass", "timeout"], recs
    assert all(x["backend"] == "gvisor" for x in recs)


def test_a_dead_execevals_directory_is_swept_a_live_ones_kept(run, tmp_path):
    """An execeval killed (SIGKILL) before its clean-up leaves its private
    directory; the next gvisor engine removes it, unless its owner still
    holds the directory's flock (it lives, maybe in another pid namespace)."""
    import fcntl
    tmp = tmp_path / "t"
    tmp.mkdir()
    dead = tmp / "execeval-gvisor.dead01"
    live = tmp / "execeval-gvisor.live01"
    for d in (dead, live):
        (d / "rootfs").mkdir(parents=True)
    fd = os.open(live, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        r = run("def add(a, b):\n    return a + b\n", asserts=["assert add(1, 2) == 3"], args=GV,
                env={"TMPDIR": str(tmp)})
        assert r.code == 0, r
        assert not dead.exists() and live.exists()
        assert sorted(p.name for p in tmp.iterdir()) == ["execeval-gvisor.live01"]
    finally:
        os.close(fd)


def test_the_relays_descriptors_and_life_are_out_of_the_candidates_reach(run):
    """gVisor honours the relay's non-dumpability for /proc/1/mem but not
    for /proc/1/fd or kill(2): as the candidate's uid the relay let it open
    its stdin (the gate's bytes, before the relay reads them) and stdout
    (the supervisor's frames), and kill it (*seen*). The relay now runs as
    root inside the sentry, the harness as 65534 (gvisor_relay.c)."""
    prog = ("import json, os, signal\n"
            "out = {}\n"
            "for fd in sorted(os.listdir('/proc/1/fd')):\n"
            "    try:\n"
            "        os.close(os.open('/proc/1/fd/' + fd, os.O_RDONLY | os.O_NONBLOCK))\n"
            "        out[fd] = 'opened'\n"
            "    except OSError as e:\n"
            "        out[fd] = e.errno\n"
            "try:\n"
            "    os.kill(1, signal.SIGKILL)\n"
            "    out['kill'] = 'sent'\n"
            "except OSError as e:\n"
            "    out['kill'] = e.errno\n"
            "print('REPORT ' + json.dumps(out))\n")
    r = run(prog, asserts=["assert True"], args=GV)
    assert r.code == 0 and r.record["status"] == "pass", r
    seen = json.loads(r.record["stdout"].split("REPORT ", 1)[1])
    assert seen.pop("kill") == 1, seen  # EPERM
    assert seen and "opened" not in seen.values(), seen
