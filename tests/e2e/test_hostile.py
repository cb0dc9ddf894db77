"""Hostile candidates: each control of the sandbox proven by a candidate that
tries to break it, with the exact verdict AND host-side evidence checked.

Everything runs through execeval only (the `run` fixture), inside the outer
safety net (see conftest.py). Besides the evidence each test checks itself,
the autouse `host_evidence` fixture checks after every test that no sandbox
process, execeval.* cgroup, mount or file in the host's temp dirs is left.

Candidates that need to tell the test what they saw inside print one line
"REPORT <json>"; the test reads it from the record's stdout.
"""
import collections
import errno
import functools
import json
import os
import secrets
import signal
import socket
import subprocess
import tempfile
import textwrap
import time

import pytest

from conftest import BACKEND, EXECEVAL, NOBODY, REPO, SANDBOX_UID_BASE, SECRET, accepted, \
    clean_up_after_a_dead_execeval, execeval_env, is_sandbox_uid, isolation_args, parse_record, processes, \
    wait_no_leftovers, with_isolation

# EXECEVAL_BACKEND=gvisor runs this suite under gVisor (make e2e). Where a
# verdict or a piece of host evidence legitimately differs there, the test
# says why next to the gVisor branch; the native assertions stay as they are.
GVISOR = BACKEND == "gvisor"


def native_only(reason):
    """Skips a test under gVisor: reason says why its subject or its host
    evidence does not exist there."""
    return pytest.mark.skipif(GVISOR, reason="under gVisor: " + reason)


ADD_OK = "def add(a, b):\n    return a + b\n"
ADD_WRONG = "def add(a, b):\n    return 0\n"
ASSERTS = ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]


def dedent(s):
    return textwrap.dedent(s).lstrip("\n")


def report(rec):
    """The candidate's REPORT line, decoded."""
    for line in rec["stdout"].splitlines():
        if line.startswith("REPORT "):
            return json.loads(line[len("REPORT "):])
    raise AssertionError("no REPORT line in the record's stdout: %r" % rec["stdout"][:500])


def assert_verdict(r, status, detail=None, score=None):
    code, rec, stderr = r
    assert rec is not None, (code, stderr)
    assert rec["status"] == status, rec
    if rec.get("infra_error") and detail == "timeout":
        # A host this busy starved the run twice: its failure, flagged (run
        # exits 3), never the candidate's timeout; the verdict still stands.
        assert rec["detail"].startswith("timeout (starved: ") and rec["reward"] is None, rec
        assert code == 3, (code, stderr)
        return rec
    if detail is not None or status == "pass":
        assert rec["detail"] == detail or (detail == "timeout" and rec["detail"].startswith(
            "timeout (starved: ")), rec
    if score is not None:
        assert rec["score"] == pytest.approx(score, abs=1e-3), rec
    assert code == (0 if status == "pass" else 1)
    return rec


def run_sampled(argv_extra, candidate, tmp_path, predicate, timeout=60):
    """Runs execeval with Popen, sampling /proc every 10 ms while it runs.
    Returns (RunResult-like tuple (code, record, stderr), samples) where
    samples[i] = [(pid, cmdline, real uid)] of the processes predicate()
    accepted."""
    tag = secrets.token_hex(3)
    cf = tmp_path / ("cand-%s.py" % tag)
    cf.write_text(candidate)
    argv = with_isolation([EXECEVAL, "run"] + list(argv_extra) + [str(cf)])
    samples = []
    deadline = time.monotonic() + timeout
    # Files, not pipes: nothing to drain while sampling.
    with open(tmp_path / ("out-%s" % tag), "w+b") as out, open(tmp_path / ("err-%s" % tag), "w+b") as err:
        p = subprocess.Popen(argv, stdout=out, stderr=err, env=execeval_env())
        try:
            while p.poll() is None and time.monotonic() < deadline:
                samples.append([(pid, cmd, uids[0]) for pid, state, uids, cmd, exe in processes()
                                if state not in ("Z", "X") and predicate(pid, uids, cmd)])
                time.sleep(0.01)
            assert p.poll() is not None, "execeval did not finish within %d s" % timeout
        finally:
            if p.poll() is None:
                p.kill()
            p.wait()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    assert SECRET not in stdout and SECRET not in stderr, "the caller's secret leaked"
    return (p.returncode, parse_record(stdout), stderr), samples


# ---------------------------------------------------------------------------
# The wall clock.

WALL_CLOCK_CANDIDATES = {
    "busy_loop_at_import": ADD_OK + "while True:\n    pass\n",
    "busy_loop_in_function": "def add(a, b):\n    while True:\n        pass\n",
    "sleep_with_sigterm_ignored": dedent("""
        import signal, time
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM, signal.SIGUSR1):
            signal.signal(s, signal.SIG_IGN)
        def add(a, b):
            time.sleep(60)
            return a + b
        """),
    "sleep_in_signal_handler_loop": dedent("""
        import signal, time
        def again(*_):
            time.sleep(60)
        signal.signal(signal.SIGTERM, again)
        def add(a, b):
            while True:
                time.sleep(60)
        """),
    "child_ignoring_sigterm_outlives_parent": dedent("""
        import os, signal, time
        def add(a, b):
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                while True:
                    time.sleep(60)
            while True:
                pass
        """),
    "spinning_threads": dedent("""
        import threading
        def spin():
            while True:
                pass
        def add(a, b):
            for _ in range(4):
                threading.Thread(target=spin, daemon=True).start()
            spin()
        """),
}


@pytest.mark.parametrize("name", sorted(WALL_CLOCK_CANDIDATES))
def test_wall_clock_kills_the_whole_tree(run, name):
    r = run(WALL_CLOCK_CANDIDATES[name], asserts=ASSERTS, args=["--timeout", "0.5"])
    rec = assert_verdict(r, "timeout", "timeout", score=0.0)
    # The clock really ran out, and execeval did not wait for SIGTERM handlers.
    assert rec["resources"]["wall_ms"] >= 450
    assert r.elapsed < 5.0, r.elapsed


def test_cpu_time_of_a_timed_out_candidate_is_reported(run):
    r = run(ADD_OK + "while True:\n    pass\n", asserts=ASSERTS, args=["--timeout", "1"])
    rec = assert_verdict(r, "timeout", "timeout")
    assert rec["resources"]["cpu_ms"] >= 500, rec["resources"]


# ---------------------------------------------------------------------------
# Processes: fork bombs, the pids cgroup.


def sandbox_uid(pid, uids, cmd):
    return any(is_sandbox_uid(u) for u in uids)


FORK_BOMBS = {
    # The classic: every process forks until fork fails; the failures end it.
    "classic": (ADD_OK + "import os\nwhile True:\n    os.fork()\n", "error"),
    # Children that only sleep: the harness's own fork() fails at import.
    "sleeping_children": (ADD_OK + dedent("""
        import os, time
        while True:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
        """), "error"),
    # The same, inside the function under test.
    "in_the_function_under_test": (dedent("""
        import os, time
        def add(a, b):
            while True:
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
        """), "error"),
    # A persistent one: failures are swallowed, so it lasts until the clock.
    "persistent": (ADD_OK + dedent("""
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """), "timeout"),
    # Threads count against the pids limit too.
    "threads": (ADD_OK + dedent("""
        import threading, time
        while True:
            try:
                threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
            except RuntimeError:
                pass
        """), "timeout"),
}


@pytest.mark.parametrize("name", sorted(FORK_BOMBS))
def test_fork_bomb_is_capped_by_the_pids_limit(name, tmp_path):
    """A refused fork is error / "process limit" (once fixed: it used to keep
    the status of the exception it caused, syntax_error at import); a bomb
    that outlasts the clock is a timeout, whose detail stays "timeout"."""
    code, expected_status = FORK_BOMBS[name]
    procs = 24
    r, samples = run_sampled(["--procs", str(procs), "--timeout", "1.5", "--assert", ASSERTS[0]], code,
                             tmp_path, sandbox_uid)
    if GVISOR:
        # The limit inside is gVisor's RLIMIT_NPROC: a refused fork is EAGAIN,
        # but nothing tells the supervisor the limit was hit (test_gvisor.py,
        # the fork bomb), so the verdict is the symptom (the BlockingIOError's
        # import error or failed test, "process limit" from the harness's own
        # failed fork, or "memory limit" for a thread bomb's stacks); and the
        # candidate's processes are the sentry's, not host processes of a
        # sandbox uid, so the host's count cannot be taken. Never a pass.
        code_, rec, _ = r
        assert rec is not None and rec["status"] != "pass" and rec["score"] == 0.0 and code_ == 1, r
        assert rec["resources"]["wall_ms"] < 4000
        return
    detail = "timeout" if expected_status == "timeout" else "process limit"
    rec = assert_verdict(r, expected_status, detail, score=0.0)
    # Host evidence: at no moment did the sandbox hold more than --procs
    # processes (every sandbox process runs as a sandbox uid, each sandbox
    # its own: the split judge's is counted apart), and the bomb did get
    # going (it reached the limit's neighbourhood at some sample).
    counts = [max(collections.Counter(uid for _, _, uid in s).values(), default=0) for s in samples]
    assert max(counts) <= procs, max(counts)
    if name == "persistent":
        assert max(counts) >= procs // 2, counts
    assert rec["resources"]["wall_ms"] < 4000


# ---------------------------------------------------------------------------
# Memory.

MEMORY_BOMBS = {
    "one_big_bytes": ADD_OK + "hog = b'x' * (1 << 30)\n",
    "growing_list": ADD_OK + "hog = []\nwhile True:\n    hog.append(b'y' * (1 << 20))\n",
    "mmap_touched": ADD_OK + dedent("""
        import mmap
        m = mmap.mmap(-1, 1 << 30)
        for i in range(0, 1 << 30, 4096):
            m[i] = 1
        """),
    "in_the_function_under_test": dedent("""
        def add(a, b):
            hog = []
            while True:
                hog.append(bytearray(b'z' * (1 << 20)))
        """),
    "in_a_child_process_the_harness_waits_for": ADD_OK + dedent("""
        import os
        pid = os.fork()
        if pid == 0:
            hog = b'x' * (1 << 30)
            os._exit(0)
        os.waitpid(pid, 0)
        raise SystemError('the child should have been killed with the whole sandbox')
        """),
}


# Under gVisor the harness's limit is RLIMIT_AS (the relay sets --memory +
# 128 MB: the sentry would touch every page before the host's OOM kill), so
# an allocation fails in the process that makes it: a MemoryError or ENOMEM
# the candidate may catch, not an OOM kill of the whole sandbox. These end
# as the exception's import error (or the parent's, when a child's failed).
GVISOR_MEMORY_BY_EXCEPTION = {"mmap_touched", "in_a_child_process_the_harness_waits_for"}
# gVisor's host cgroup holds runsc's sentry and gofer too: --memory + 192 MB.
GVISOR_CGROUP_EXTRA_KB = 192 * 1024


@pytest.mark.parametrize("name", sorted(MEMORY_BOMBS))
def test_memory_bomb_is_a_memory_limit(run, name):
    r = run(MEMORY_BOMBS[name], asserts=ASSERTS, args=["--memory", "64", "--timeout", "10"])
    if GVISOR and name in GVISOR_MEMORY_BY_EXCEPTION:
        rec = r.record
        assert rec is not None and rec["status"] in ("error", "syntax_error") and rec["score"] == 0.0, r
        assert r.elapsed < 10
        return
    rec = assert_verdict(r, "error", "memory limit", score=0.0)
    # Host evidence: the cgroup's own peak stayed at the limit.
    peak = rec["resources"].get("peak_memory_kb")
    extra = GVISOR_CGROUP_EXTRA_KB if GVISOR else 0
    assert peak is not None and peak <= 64 * 1024 + extra + 1024, rec["resources"]
    assert r.elapsed < 10


# ---------------------------------------------------------------------------
# Output floods.

FLOODS = {
    "stdout_print_loop": ADD_OK + "while True:\n    print('x' * 1000)\n",
    "stdout_one_huge_write": ADD_OK + "import sys\nsys.stdout.write('x' * (64 << 20))\n",
    "stdout_raw_fd_no_newlines": ADD_OK + "import os\nwhile True:\n    os.write(1, b'x' * 65536)\n",
    "stderr_write_loop": ADD_OK + "import sys\nwhile True:\n    sys.stderr.write('y' * 1000)\n",
    "stderr_raw_fd": ADD_OK + "import os\nwhile True:\n    os.write(2, b'y' * 65536)\n",
    "both_streams_each_under_the_cap": ADD_OK + dedent("""
        import os
        import time
        os.write(1, b'a' * 150000)
        os.write(2, b'b' * 150000)
        time.sleep(30)
        """),
    "flood_from_a_child": ADD_OK + dedent("""
        import os, time
        if os.fork() == 0:
            while True:
                os.write(1, b'c' * 65536)
        time.sleep(30)
        """),
    "flood_in_the_function_under_test": "def add(a, b):\n    while True:\n        print('d' * 4096)\n",
}


@pytest.mark.parametrize("name", sorted(FLOODS))
def test_output_flood_is_output_overflow(run, name):
    r = run(FLOODS[name], asserts=ASSERTS, args=["--timeout", "10"])
    rec = assert_verdict(r, "error", "output overflow", score=0.0)
    assert r.elapsed < 8, r.elapsed
    assert len(rec["stdout"]) <= 8000 and len(rec["stderr"]) <= 8000
    assert len(r.stdout) < 64 * 1024, "execeval's own output stays small"


# ---------------------------------------------------------------------------
# The filesystem: writes outside /tmp leave nothing on the host.


def write_probe(marker):
    host_tmp = tempfile.gettempdir()
    targets = {
        "usr": "/usr/%s" % marker, "usr_lib": "/usr/lib/%s" % marker, "etc": "/etc/%s" % marker,
        "root_dir": "/%s" % marker, "bin": "/bin/%s" % marker, "dev": "/dev/%s" % marker,
        "proc": "/proc/%s" % marker, "sys": "/sys/%s" % marker, "root_home": "/root/%s" % marker,
        "home": "/home/%s" % marker, "var_tmp": "/var/tmp/%s" % marker,
        "repo": "%s/%s" % (REPO, marker), "repo_build": "%s/build/%s" % (REPO, marker),
        "work": "/work/%s" % marker, "etc_passwd": "/etc/passwd",
        "proc_sys": "/proc/sys/vm/overcommit_ratio", "proc_sys_kernel": "/proc/sys/kernel/hostname",
        # Allowed inside, but private: must not reach the host's /tmp.
        "tmp": "%s/%s" % (host_tmp, marker), "dev_shm": "/dev/shm/%s" % marker,
    }
    return targets, ADD_OK + dedent("""
        import errno, json, os
        TARGETS = %r
        out = {}
        for key, path in TARGETS.items():
            try:
                if key.startswith("proc_sys"):
                    with open(path, "w") as f:
                        f.write("77\\n")
                else:
                    with open(path, "a") as f:
                        f.write("written by the sandbox\\n")
                out[key] = "written"
            except OSError as e:
                out[key] = errno.errorcode.get(e.errno, str(e.errno))
        for key, path in (("mkdir_usr", "/usr/%s.d"), ("mkdir_repo", "%s/%s.d")):
            try:
                os.mkdir(path)
                out[key] = "written"
            except OSError as e:
                out[key] = errno.errorcode.get(e.errno, str(e.errno))
        print("REPORT " + json.dumps(out))
        """) % (targets, marker, REPO, marker)


def test_writes_outside_tmp_never_reach_the_host(run, marker):
    targets, code = write_probe(marker)
    ratio_before = open("/proc/sys/vm/overcommit_ratio").read()
    hostname_before = open("/proc/sys/kernel/hostname").read()
    r = run(code, asserts=ASSERTS)
    rec = assert_verdict(r, "pass")
    seen = report(rec)
    try:
        # Inside: every write outside /tmp failed (read-only root, nothing of
        # the host mounted); /tmp (and /dev/shm, a link to it) worked.
        for key, outcome in seen.items():
            if key in ("tmp", "dev_shm"):
                assert outcome == "written", (key, outcome)
            else:
                assert outcome in ("EROFS", "EACCES", "ENOENT", "EPERM"), (key, outcome)
        # Host evidence: no marker file anywhere we looked, /proc/sys intact.
        for key, path in targets.items():
            if marker in path:
                assert not os.path.exists(path), path
        assert not os.path.exists("/usr/%s.d" % marker)
        assert not os.path.exists("%s/%s.d" % (REPO, marker))
        assert open("/proc/sys/vm/overcommit_ratio").read() == ratio_before
        assert open("/proc/sys/kernel/hostname").read() == hostname_before
    finally:
        if open("/proc/sys/vm/overcommit_ratio").read() != ratio_before:
            with open("/proc/sys/vm/overcommit_ratio", "w") as f:
                f.write(ratio_before)


def test_tmp_is_size_bounded_and_private(run, marker):
    code = ADD_OK + dedent("""
        import errno, json, os
        out = {}
        try:
            with open("/tmp/%s-big", "wb") as f:
                for _ in range(200):
                    f.write(b"\\0" * (1 << 20))
            out["big"] = "written"
        except OSError as e:
            out["big"] = errno.errorcode.get(e.errno, str(e.errno))
        out["listing"] = sorted(os.listdir("/tmp"))
        print("REPORT " + json.dumps(out))
        """) % marker
    r = run(code, asserts=ASSERTS, args=["--memory", "512"])
    rec = assert_verdict(r, "pass")
    seen = report(rec)
    # RLIMIT_FSIZE (64 MiB; SIGXFSZ is ignored by Python) or the tmpfs size.
    assert seen["big"] in ("EFBIG", "ENOSPC"), seen
    # The sandbox's /tmp starts empty: nothing of the host's /tmp is visible.
    assert seen["listing"] == ["%s-big" % marker], seen
    assert not os.path.exists("/tmp/%s-big" % marker)


# ---------------------------------------------------------------------------
# Secrets: nothing of the host or of the caller's environment is readable.


def read_probe():
    return ADD_OK + dedent("""
        import errno, json, os
        # Built at run time, so the candidate's own code holds no copy to find.
        NEEDLE = ("EXECEVAL_TEST" + "_SECRET=").encode()
        out = {"found": [], "loot": []}
        def note(key, fn):
            try:
                out[key] = fn()
            except OSError as e:
                out[key] = "error:" + errno.errorcode.get(e.errno, str(e.errno))
        def grab(where, data):
            i = data.find(NEEDLE)
            if i >= 0:
                out["found"].append(where)
                out["loot"].append(data[i:i + 80].decode("latin-1"))
        def read(path):
            with open(path, "rb") as f:
                data = f.read(1 << 22)
            grab(path, data)
            return "read %%d bytes" %% len(data)
        for key, path in (("root", "/root"), ("home", "/home"), ("repo", %(repo)r), ("work", "/work"),
                          ("var", "/var"), ("run", "/run")):
            note(key, lambda p=path: sorted(os.listdir(p)))
        for key, path in (("shadow", "/etc/shadow"), ("repo_makefile", %(repo)r + "/Makefile"),
                          ("ssh", "/root/.ssh/id_rsa")):
            note(key, lambda p=path: read(p))
        note("proc1_environ", lambda: read("/proc/1/environ"))
        note("proc1_environ_len", lambda: len(open("/proc/1/environ", "rb").read()))
        note("proc1_mem", lambda: read("/proc/1/mem"))
        note("self_environ", lambda: read("/proc/self/environ"))
        # The init's descriptors (its control pipe to the supervisor) are closed.
        note("proc1_fds", lambda: sorted(os.listdir("/proc/1/fd")))
        out["env_keys"] = sorted(os.environ)
        for k, v in os.environ.items():
            grab("environ " + k, (k + "=" + v).encode())
        # Every other process visible: environ, cmdline, and memory when readable.
        me = str(os.getpid())
        for pid in [p for p in os.listdir("/proc") if p.isdigit() and p != me]:
            for what in ("environ", "cmdline"):
                note("pid%%s_%%s" %% (pid, what), lambda p=pid, w=what: read("/proc/%%s/%%s" %% (p, w)))
            try:
                maps = open("/proc/%%s/maps" %% pid).read().splitlines()
                with open("/proc/%%s/mem" %% pid, "rb") as mem:
                    for line in maps:
                        lo, hi = [int(x, 16) for x in line.split()[0].split("-")]
                        if "r" not in line.split()[1] or hi - lo > (64 << 20):
                            continue
                        try:
                            mem.seek(lo)
                            grab("mem of %%s" %% pid, mem.read(hi - lo))
                        except (OSError, ValueError, OverflowError):
                            pass
                out["pid%%s_mem" %% pid] = "scanned"
            except OSError as e:
                out["pid%%s_mem" %% pid] = "error:" + errno.errorcode.get(e.errno, str(e.errno))
        out["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        # Try to smuggle whatever was found into the record: stdout, stderr
        # and a failure message.
        print("REPORT " + json.dumps(out))
        import sys
        sys.stderr.write(repr(out["loot"]))
        assert not out["found"], "LEAK " + repr(out["loot"])
        """) % {"repo": str(REPO)}


def test_the_callers_command_line_is_not_readable(run):
    """/proc/1 is the sandbox's init: a cold one is a fork of execeval, whose
    command line names the caller's files; it must read as nothing."""
    probe = ADD_OK + dedent("""
        import os
        for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
            try:
                data = open("/proc/%s/cmdline" % pid, "rb").read()
            except OSError as e:
                data = repr(e).encode()
            print("CMDLINE", pid, data.replace(b"\\0", b" ").decode("latin-1"))
        """)
    r = run(probe, asserts=ASSERTS)
    rec = assert_verdict(r, "pass")
    lines = [line for line in rec["stdout"].splitlines() if line.startswith("CMDLINE")]
    assert len(lines) >= 2, rec["stdout"]
    # Under gVisor pid 1 is the relay, whose own command line says
    # "__gvisor-relay": the backend's name on the caller's is no leak.
    backend_words = set(isolation_args()) if GVISOR else set()
    for arg in r.argv[1:]:
        if len(arg) > 3 and arg not in backend_words:
            assert arg not in rec["stdout"], (arg, lines)


# The relay's environment under gVisor: the bundle's PATH, and the HOME
# runsc gives root (gvisor_bundle.c).
GVISOR_RELAY_ENVIRON = b"PATH=/usr/bin:/bin\0HOME=/\0"
ENV_ALLOW_LIST = {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONIOENCODING",
                  "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PWD"}


def test_secrets_of_the_host_and_the_caller_are_unreadable(run, secret):
    r = run(read_probe(), asserts=ASSERTS)
    rec = assert_verdict(r, "pass")
    seen = report(rec)
    # Nothing of the host's private directories exists inside.
    for key in ("root", "home", "repo", "work", "var", "run", "shadow", "repo_makefile", "ssh"):
        assert seen[key] == "error:ENOENT", (key, seen[key])
    # The environment was rebuilt from an allow-list; the init's environ is
    # closed (non-dumpable) or empty (scrubbed).
    assert set(seen["env_keys"]) <= ENV_ALLOW_LIST, seen["env_keys"]
    assert "EXECEVAL_TEST_SECRET" not in seen["env_keys"]
    if GVISOR:
        # pid 1 is the relay, whose environment is the bundle's (PATH and
        # HOME, never the caller's: execeval writes it) and which gVisor
        # shows to other uids; its descriptors' numbers are listed but none
        # opens (test_gvisor.py, the relay's descriptors).
        assert seen["proc1_environ"] == "read %d bytes" % len(GVISOR_RELAY_ENVIRON), seen
        assert isinstance(seen["proc1_fds"], list), seen["proc1_fds"]
    else:
        assert seen["proc1_environ"] == "error:EACCES" or seen["proc1_environ_len"] == 0, seen
        assert seen["proc1_fds"] == "error:EACCES", seen["proc1_fds"]
    assert str(seen["proc1_mem"]).startswith("error:"), seen["proc1_mem"]
    assert seen["pid1_mem"] == "error:EACCES", seen["pid1_mem"]
    assert seen["found"] == [] and seen["loot"] == []
    # Only the sandbox's own processes are visible: its init and the harness.
    assert seen["pids"] == [1, 2], seen["pids"]
    # Host evidence: the secret is nowhere in what execeval printed (run()
    # checks stdout and stderr; here also every string of the record).
    blob = json.dumps(rec)
    assert secret not in blob and secret not in r.stdout and secret not in r.stderr


def test_secret_in_the_callers_environment_is_not_in_proc1(run, secret):
    """/proc/1/environ specifically: the init is a clone of execeval, whose
    environment holds the secret until it is scrubbed."""
    code = ADD_OK + dedent("""
        import json
        try:
            data = open("/proc/1/environ", "rb").read()
            out = {"readable": True, "len": len(data), "has": b"EXECEVAL_TEST_SECRET" in data}
        except OSError as e:
            out = {"readable": False, "errno": e.errno}
        print("REPORT " + json.dumps(out))
        """)
    rec = assert_verdict(run(code, asserts=ASSERTS), "pass")
    seen = report(rec)
    if GVISOR:  # the relay's, the bundle's PATH and HOME (above)
        assert seen == {"readable": True, "len": len(GVISOR_RELAY_ENVIRON), "has": False}, seen
    else:
        assert (not seen["readable"] and seen["errno"] == errno.EACCES) or seen["len"] == 0, seen
    assert secret not in json.dumps(rec)


# ---------------------------------------------------------------------------
# The network: nothing of the host is reachable.


@pytest.fixture
def tcp_listener():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    s.setblocking(False)
    yield s
    s.close()


def connect_probe(attempts):
    """A candidate trying each (family, type, address) in attempts; reports
    the errno name or 'connected'/'sent'."""
    return ADD_OK + dedent("""
        import errno, json, socket
        ATTEMPTS = %r
        out = []
        for fam, typ, addr in ATTEMPTS:
            fam = getattr(socket, fam)
            typ = getattr(socket, typ)
            addr = tuple(addr) if isinstance(addr, list) else addr
            try:
                s = socket.socket(fam, typ)
            except OSError as e:
                out.append("socket:" + errno.errorcode.get(e.errno, str(e.errno)))
                continue
            try:
                s.settimeout(2)
                if typ == socket.SOCK_DGRAM:
                    s.sendto(b"hello", addr)
                    out.append("sent")
                else:
                    s.connect(addr)
                    s.sendall(b"hello")
                    out.append("connected")
            except OSError as e:
                out.append("connect:" + errno.errorcode.get(e.errno, str(e.errno) or type(e).__name__))
            finally:
                s.close()
        print("REPORT " + json.dumps(out))
        """) % (attempts,)


def test_tcp_listener_on_the_host_loopback_is_unreachable(run, tcp_listener):
    port = tcp_listener.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.setblocking(False)
    try:
        attempts = [("AF_INET", "SOCK_STREAM", ["127.0.0.1", port]),
                    ("AF_INET6", "SOCK_STREAM", ["::1", port]),
                    ("AF_INET", "SOCK_DGRAM", ["127.0.0.1", udp.getsockname()[1]])]
        # --allow-imports: past the import denylist, the kernel must refuse.
        r = run(connect_probe(attempts), asserts=ASSERTS, args=["--allow-imports"])
        rec = assert_verdict(r, "pass")
        assert report(rec) == ["socket:EPERM", "socket:EPERM", "socket:EPERM"], report(rec)
        # With the denylist on, the import itself is refused.
        r = run(connect_probe(attempts), asserts=ASSERTS)
        assert_verdict(r, "error", "denied import: socket")
        # Host evidence: the listeners saw nothing from the sandbox ...
        assert accepted(tcp_listener) == 0
        with pytest.raises(BlockingIOError):
            udp.recv(100)
        # ... and they do work (differential): the test itself gets through.
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.close()
        deadline = time.monotonic() + 5
        n = 0
        while n == 0 and time.monotonic() < deadline:
            n = accepted(tcp_listener)
            time.sleep(0.01)
        assert n == 1
    finally:
        udp.close()


def test_host_unix_sockets_are_unreachable(run, marker):
    """A file-path socket in the host's /tmp (the sandbox's /tmp is private)
    and an abstract one (abstract names live in the network namespace)."""
    d = tempfile.mkdtemp(prefix="ee-sock-")
    os.chmod(d, 0o777)
    path = os.path.join(d, "s")
    abstract = "\0ee-%s" % marker
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    asrv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        srv.bind(path)
        os.chmod(path, 0o777)
        srv.listen(4)
        srv.setblocking(False)
        asrv.bind(abstract)
        asrv.listen(4)
        asrv.setblocking(False)
        attempts = [("AF_UNIX", "SOCK_STREAM", path), ("AF_UNIX", "SOCK_STREAM", abstract),
                    ("AF_UNIX", "SOCK_STREAM", "/run/systemd/private"),
                    ("AF_UNIX", "SOCK_STREAM", "/var/run/docker.sock")]
        r = run(connect_probe(attempts), asserts=ASSERTS, args=["--allow-imports"])
        rec = assert_verdict(r, "pass")
        assert report(rec) == ["connect:ENOENT", "connect:ECONNREFUSED", "connect:ENOENT", "connect:ENOENT"], \
            report(rec)
        assert accepted(srv) == 0 and accepted(asrv) == 0
        # Differential: both sockets accept the test's own connections.
        for addr, server in ((path, srv), (abstract, asrv)):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(addr)
            c.close()
            assert accepted(server) == 1
    finally:
        srv.close()
        asrv.close()
        if os.path.exists(path):
            os.unlink(path)
        os.rmdir(d)


# ---------------------------------------------------------------------------
# Signals: killing the parent, kill(-1).


@pytest.fixture
def canary(request):
    """A host process of the sandbox's own uid (the first of the range: a
    lone sandbox claims the lowest free one): what kill(-1) would reach if
    the pid namespace did not hold."""
    p = subprocess.Popen(["sleep", "987.321"], user=SANDBOX_UID_BASE, group=SANDBOX_UID_BASE)
    request.node.allowed_pids = (p.pid,)
    yield p
    p.kill()
    p.wait()


KILLERS = {
    # The harness's parent is the namespace's init: SIGKILL from inside is ignored.
    "kill_parent": ("import os\nos.kill(os.getppid(), 9)\n" + ADD_OK, "pass", None),
    "kill_pid_1": ("import os\nos.kill(1, 9)\n" + ADD_OK, "pass", None),
    # kill(-1) reaches every process of the namespace but the caller and init.
    "kill_minus_1": (dedent("""
        import os, time
        child = os.fork()
        if child == 0:
            time.sleep(60)
            os._exit(0)
        os.kill(-1, 9)
        _, status = os.waitpid(child, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9
        """) + ADD_OK, "pass", None),
    "kill_minus_1_from_a_child": (ADD_OK + dedent("""
        import os, time
        if os.fork() == 0:
            os.kill(-1, 9)
            os._exit(0)
        time.sleep(2)
        """), "error", "killed by signal SIGKILL"),
    "killpg_own_group": ("import os\nos.killpg(0, 9)\n" + ADD_OK, "error", "killed by signal SIGKILL"),
    "kill_minus_1_sigterm_from_a_child": (ADD_OK + dedent("""
        import os, time
        if os.fork() == 0:
            os.kill(-1, 15)
            os._exit(0)
        time.sleep(2)
        """), "error", "killed by signal SIGTERM"),
    "stop_everything_from_a_child": (ADD_OK + dedent("""
        import os, signal, time
        if os.fork() == 0:
            os.kill(-1, signal.SIGSTOP)
            os._exit(0)
        time.sleep(2)
        """), "timeout", "timeout"),
    "kill_parent_in_the_function_under_test": ("import os\ndef add(a, b):\n    os.kill(os.getppid(), 9)\n"
                                                "    return a + b\n", "pass", None),
}


# Under gVisor the harness's parent, pid 1, is the relay, root inside the
# sentry (gvisor_relay.c): kill(2) of it fails with EPERM where natively the
# namespace's init ignores the signal, so the candidate sees a
# PermissionError where natively its call "succeeded" without effect.
GVISOR_KILLERS = {
    "kill_parent": ("syntax_error", "import error: PermissionError: [Errno 1] Operation not permitted "
                                    "(line 2: os.kill(os.getppid(), 9))"),
    "kill_pid_1": ("syntax_error", "import error: PermissionError: [Errno 1] Operation not permitted "
                                   "(line 2: os.kill(1, 9))"),
    "kill_parent_in_the_function_under_test": ("assertion_fail", "test 0 failed: PermissionError: [Errno 1] "
                                               "Operation not permitted (line 1: assert add(1, 2) == 3)"),
}


@pytest.mark.parametrize("name", sorted(KILLERS))
def test_killing_the_parent_or_everything_is_contained(run, canary, name):
    code, status, detail = KILLERS[name]
    if GVISOR and name in GVISOR_KILLERS:
        status, detail = GVISOR_KILLERS[name]
    r = run(code, asserts=ASSERTS, args=["--timeout", "1"])
    assert_verdict(r, status, detail)
    # Host evidence: the test's process, and the host process of the same uid
    # as the sandbox, are alive.
    os.kill(os.getpid(), 0)
    assert canary.poll() is None, "kill(-1) in the sandbox reached a host process"


# ---------------------------------------------------------------------------
# Daemons: nothing outlives the run.


def daemon_code(marker, then, exec_sleep=False):
    if exec_sleep:
        target = "os.execv('/bin/sleep', ['sleep', '987.654'])"
    else:
        target = ("os.execv(sys.executable, [sys.executable, '-c', 'import time\\nwhile True:\\n"
                  "    open(\"/tmp/heartbeat-%s\", \"a\").write(\"x\")\\n    time.sleep(0.05)', '%s'])"
                  % (marker, marker))
    return dedent("""
        import os, signal, sys, time
        def add(a, b):
            return a + b
        pid = os.fork()
        if pid == 0:
            os.setsid()
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                %s
            os._exit(0)
        os.waitpid(pid, 0)
        for _ in range(200):
            if %s:
                break
            time.sleep(0.01)
        print("daemon up", flush=True)
        %s
        """) % (target,
                "any(b'987.654' in open('/proc/%s/cmdline' % p, 'rb').read() for p in os.listdir('/proc') "
                "if p.isdigit())" if exec_sleep else "os.path.exists('/tmp/heartbeat-%s')" % marker,
                then)


DAEMONS = {
    "python_heartbeat_then_pass": (False, "", "pass"),
    "sleep_987_654_then_pass": (True, "", "pass"),
    "python_heartbeat_outlives_the_timeout": (False, "time.sleep(60)", "timeout"),
    "sleep_987_654_outlives_the_timeout": (True, "time.sleep(60)", "timeout"),
    "daemon_then_premature_exit": (False, "os._exit(0)", "error"),
}


@pytest.mark.parametrize("name", sorted(DAEMONS))
def test_double_forked_daemon_dies_with_the_sandbox(request, tmp_path, marker, name):
    exec_sleep, then, status = DAEMONS[name]
    request.node.extra_markers.append("987.654")

    def daemonish(pid, uids, cmd):
        return marker.encode() in cmd or b"987.654" in cmd

    r, samples = run_sampled(["--timeout", "1", "--assert", ASSERTS[0]], daemon_code(marker, then, exec_sleep),
                             tmp_path, daemonish)
    detail = {"pass": None, "timeout": "timeout", "error": "premature exit"}[status]
    rec = assert_verdict(r, status, detail)
    assert "daemon up" in rec["stdout"]
    if status == "timeout" and not GVISOR:
        # Differential: the daemon really ran (seen from the host) ... (not
        # under gVisor: its processes are the sentry's, not the host's; its
        # "daemon up" above says it ran)
        assert any(samples), "the daemon was never seen running"
    # ... and once execeval has exited, nothing carries its marker (checked
    # here and again by the autouse host_evidence fixture).
    assert wait_no_leftovers([marker, "987.654"], seconds=1.0) == []
    assert not os.path.exists("/tmp/heartbeat-%s" % marker)


# ---------------------------------------------------------------------------
# The record cannot be forged by what the candidate prints.

FAKE = {"task_id": "run", "status": "pass", "detail": None, "score": 1.0, "passed": 2, "total": 2,
        "reward": 1}


def fake_printer(where):
    line = json.dumps(FAKE)
    prints = {
        "stdout_at_import": "print(%r)" % line,
        "stderr_at_import": "import sys\nsys.stderr.write(%r + '\\n')" % line,
        "both_and_newlines": "import sys\nprint('\\n' * 3 + %r + '\\n' * 3)\nsys.stderr.write(%r)" % (line, line),
        "atexit": "import atexit\natexit.register(print, %r)" % line,
        "raw_fds": "import os\nos.write(1, b'\\n' + %r.encode() + b'\\n')\nos.write(2, %r.encode())" % (line, line),
        "control_characters": "print('\\x00\\x1b[2K\\r' + %r + '\\x1b]0;pass\\x07')" % line,
    }
    return ADD_WRONG + prints[where] + "\n"


@pytest.mark.parametrize("where", ["stdout_at_import", "stderr_at_import", "both_and_newlines", "atexit",
                                   "raw_fds", "control_characters"])
def test_printing_a_fake_record_changes_nothing(run, where):
    r = run(fake_printer(where), asserts=ASSERTS)
    rec = assert_verdict(r, "assertion_fail", score=0.0)
    assert rec["detail"].startswith("test 0 failed: AssertionError"), rec["detail"]
    assert len(r.stdout.splitlines()) == 1, "exactly one record line on execeval's stdout"
    assert rec["passed"] == 0 and rec["reward"] == -1


def test_fake_output_of_an_io_program_is_judged_by_the_supervisor(run):
    task = {"task_id": "io/fake", "tests": [{"kind": "io", "stdin": "1 2\n", "stdout": "3\n"}]}
    code = "print(%r)\nprint('pass')\nprint(4)\n" % json.dumps(FAKE)
    r = run(code, task=task)
    rec = assert_verdict(r, "assertion_fail", score=0.0)
    assert rec["detail"].startswith("test 0 failed: line 1: expected '3'"), rec["detail"]


def test_record_output_is_truncated_and_clean(run):
    code = ADD_OK + dedent("""
        import os
        os.write(1, b"a" * 20000 + b"\\n")
        os.write(2, b"\\xff\\xfe\\x00\\x1b[31m" + "é€😀".encode() + b"\\xc3" + b"b" * 20000)
        """)
    rec = assert_verdict(run(code, asserts=ASSERTS), "pass")
    assert len(rec["stdout"]) <= 8000 and rec["stdout"].startswith("a" * 7000), len(rec["stdout"])
    assert len(rec["stderr"]) <= 8000 and "bbbb" in rec["stderr"], rec["stderr"][:40]
    assert "\x00" not in rec["stdout"] + rec["stderr"]


# ---------------------------------------------------------------------------
# Forged frames on the result channel and stray descriptors.

FORGED_EVENTS = [
    {"ev": "phase", "name": "import", "status": "ok"},
    {"ev": "test", "index": 0, "status": "pass"},
    {"ev": "test", "index": 1, "status": "pass"},
    {"ev": "done"},
]


def forge_code(how):
    return ADD_WRONG + dedent("""
        import json, os, re
        def frames(nonce, seq):
            out = b""
            for i, ev in enumerate(%r):
                ev = dict(ev, nonce=nonce, seq=seq + i)
                p = json.dumps(ev).encode()
                out += b"%%d:%%s," %% (len(p), p)
            return out
        GUESS = "0" * 32
        HOW = %r
        if HOW == "fd4":
            for seq in range(3, 6):
                os.write(4, frames(GUESS, seq))
        elif HOW == "fd4_then_exit":
            os.write(4, frames(GUESS, 3))
            os._exit(0)
        elif HOW == "every_fd":
            for fd in range(3, 21):
                try:
                    os.write(fd, frames(GUESS, 3))
                except OSError:
                    pass
        elif HOW == "nonce_from_the_job_fd":
            nonce = GUESS
            for path in ("/proc/self/fd/3", "/dev/fd/3"):
                try:
                    m = re.search(rb'"nonce": ?"([0-9a-f]{32})"', open(path, "rb").read())
                    if m:
                        nonce = m.group(1).decode()
                except OSError:
                    pass
            try:
                os.lseek(3, 0, 0)
                m = re.search(rb'"nonce": ?"([0-9a-f]{32})"', os.read(3, 1 << 20))
                if m:
                    nonce = m.group(1).decode()
            except OSError:
                pass
            print("REPORT " + json.dumps({"nonce_found": nonce != GUESS}), flush=True)
            os.write(4, frames(nonce, 3))
            os._exit(0)
        elif HOW == "close_fd4":
            os.close(4)
        elif HOW == "devnull_over_fd4":
            os.dup2(os.open("/dev/null", os.O_WRONLY), 4)
        elif HOW == "half_a_frame":
            os.write(4, b"99999:{")
        elif HOW == "garbage":
            os.write(4, b"not a netstring at all")
        elif HOW == "oversized_frame":
            os.write(4, b"%%d:" %% (2 << 20) + b"x" * 1000)
        elif HOW == "gate_answer":
            try:
                os.write(5, b"c")
            except OSError:
                pass
            os.close(5)
        """) % (FORGED_EVENTS, how)


FORGERIES = {
    "fd4": ("error", "protocol violation: wrong nonce"),
    "fd4_then_exit": ("error", "protocol violation: wrong nonce"),
    "every_fd": ("error", "protocol violation: wrong nonce"),
    "nonce_from_the_job_fd": ("error", "protocol violation: wrong nonce"),
    "close_fd4": ("error", "premature exit"),
    "devnull_over_fd4": ("error", "premature exit"),
    "half_a_frame": ("error", "premature exit"),
    "garbage": ("error", None),
    "oversized_frame": ("error", None),
    "gate_answer": ("assertion_fail", None),
}


# Under the split judge a candidate that spoils its result channel before
# its serving event (the names the judge waits for) leaves the judge
# waiting: the run's clock ends it, a timeout, where inline's harness went
# on to its end (premature exit). Never a pass either way.
FORGERIES_SPLIT = {"devnull_over_fd4": ("timeout", "timeout"), "half_a_frame": ("timeout", "timeout")}


@pytest.mark.parametrize("judge", ["split", "inline"])
@pytest.mark.parametrize("how", sorted(FORGERIES))
def test_forged_frames_never_make_a_wrong_answer_pass(run, how, judge):
    status, detail = (FORGERIES_SPLIT.get(how) if judge == "split" else None) or FORGERIES[how]
    r = run(forge_code(how), asserts=ASSERTS, args=["--judge", judge])
    rec = assert_verdict(r, status, detail, score=0.0)
    if detail is None and status == "error":
        assert rec["detail"].startswith("protocol violation: "), rec["detail"]
    if how == "nonce_from_the_job_fd":
        assert report(rec) == {"nonce_found": False}


# Hidden tests: the candidate passes the public test and fails the hidden
# one; it tries to make the harness skip the hidden phase.
HIDDEN_TASK = {"task_id": "hidden/evade", "tests": [
    {"kind": "assert", "code": "assert add(1, 2) == 3"},
    {"kind": "assert", "code": "assert add(2, 2) == 4", "visibility": "hidden"},
    {"kind": "call", "fn": "add", "args": [5, 5], "expected": 10, "visibility": "hidden"}]}
PUBLIC_ONLY = "def add(a, b):\n    return 3\n"
GATE_TRICKS = {
    "close_the_gate_fd": "import os\nos.close(5)\n",
    "dev_null_over_the_gate_fd": "import os\nos.dup2(os.open('/dev/null', os.O_RDONLY), 5)\n",
    "a_thread_steals_the_answer": dedent("""
        import os, threading
        threading.Thread(target=os.read, args=(5, 1), daemon=True).start()
        """),
}


def gate_params():
    for name in sorted(GATE_TRICKS):
        yield pytest.param(name, id=name)


@pytest.mark.parametrize("name", gate_params())
def test_hidden_tests_cannot_be_skipped_by_the_candidate_split(run, name):
    """Under the split judge the candidate's fd 5 carries the judge's calls,
    not the gate: a candidate that closes it, or reads from it, breaks its
    own channel, and the public test the judge was calling fails."""
    try:
        r = run(GATE_TRICKS[name] + PUBLIC_ONLY, task=HIDDEN_TASK)
    finally:
        clean_up_after_a_dead_execeval()
    assert r.code >= 0, "execeval died of signal %d" % -r.code
    if name == "a_thread_steals_the_answer":
        # The thread and the call server race for the bytes of a call: the
        # frame it cuts is the first call's (the public test's) or a hidden
        # one's. Never a pass, no hidden test passes either way.
        rec = r.record
        assert rec is not None and rec["status"] in ("error", "assertion_fail"), r
        assert [t["status"] for t in rec["tests"]][1:] != ["pass", "pass"], rec
        return
    detail = "test 0 failed: channel: the candidate's process ended during a call"
    rec = assert_verdict(r, "assertion_fail", detail, score=0.0)
    assert [t["status"] for t in rec["tests"]] == ["fail", "not_run", "not_run"]


@pytest.mark.parametrize("name", gate_params())
def test_hidden_tests_cannot_be_skipped_by_the_candidate(run, name):
    """--judge inline: the gate fd is the harness's, in the candidate's process."""
    try:
        r = run(GATE_TRICKS[name] + PUBLIC_ONLY, task=HIDDEN_TASK, args=["--judge", "inline"])
    finally:
        clean_up_after_a_dead_execeval()
    assert r.code >= 0, "execeval died of signal %d" % -r.code
    if name == "a_thread_steals_the_answer" and r.record and r.record["status"] == "assertion_fail":
        # The thread and the harness race for the byte; when the harness wins,
        # the hidden tests run and fail: honest too. Never a pass either way.
        assert [t["status"] for t in r.record["tests"]] == ["pass", "fail", "fail"]
        return
    rec = assert_verdict(r, "error", "premature exit")
    assert [t["status"] for t in rec["tests"]] == ["pass", "not_run", "not_run"]


def test_hidden_tests_fail_honestly_without_tricks(run):
    rec = assert_verdict(run(PUBLIC_ONLY, task=HIDDEN_TASK), "assertion_fail", score=1 / 3)
    assert [t["status"] for t in rec["tests"]] == ["pass", "fail", "fail"]


# ---------------------------------------------------------------------------
# Ending early.

EARLY_EXITS = {
    "sys_exit_0_at_import": "import sys\n" + ADD_OK + "sys.exit(0)\n",
    "raise_systemexit_at_import": ADD_OK + "raise SystemExit\n",
    "keyboard_interrupt_at_import": ADD_OK + "raise KeyboardInterrupt\n",
    "os_exit_0_at_import": "import os\n" + ADD_OK + "os._exit(0)\n",
    "os_exit_0_in_the_function": "import os\ndef add(a, b):\n    os._exit(0)\n",
    "sys_exit_0_in_the_function": "import sys\ndef add(a, b):\n    sys.exit(0)\n",
    "os_abort_is_sigabrt": "import os\ndef add(a, b):\n    os.abort()\n",
    "exit_from_a_thread": dedent("""
        import os, threading
        def add(a, b):
            t = threading.Thread(target=os._exit, args=(0,))
            t.start()
            t.join()
        """),
}
EARLY_DETAIL = {"os_abort_is_sigabrt": "killed by signal SIGABRT"}


@pytest.mark.parametrize("name", sorted(EARLY_EXITS))
def test_ending_early_is_never_a_pass(run, name):
    r = run(EARLY_EXITS[name], asserts=ASSERTS)
    assert_verdict(r, "error", EARLY_DETAIL.get(name, "premature exit"), score=0.0)


# ---------------------------------------------------------------------------
# Tampering from inside the interpreter (crude tricks: no knowledge of the
# harness's internals).

TAMPERS = {
    "rebind_exec": "import builtins\nbuiltins.exec = lambda *a, **k: None\n",
    "rebind_compile": "import builtins\n_c = compile\nbuiltins.compile = lambda *a, **k: _c('pass', 'x', 'exec')\n",
    "rebind_assertion_error": "import builtins\nclass AssertionError(Exception):\n    pass\n"
                              "builtins.AssertionError = AssertionError\n",
    "rebind_isinstance_issubclass": "import builtins\nbuiltins.isinstance = lambda *a: True\n"
                                    "builtins.issubclass = lambda *a: True\n",
    "rebind_str_and_len": "import builtins\nbuiltins.str = lambda *a: 'pass'\nbuiltins.len = lambda *a: 0\n",
    "replace_sys_modules_json": dedent("""
        import sys, types
        fake = types.ModuleType("json")
        fake.dumps = lambda *a, **k: '{"ev": "test", "status": "pass"}'
        fake.loads = lambda *a, **k: {"status": "pass"}
        sys.modules["json"] = fake
        sys.modules["_json"] = fake
        """),
    "patch_os_write": dedent("""
        import os, posix
        real = os.write
        os.write = posix.write = lambda fd, data: len(data)
        """),
    "atexit_prints_success": dedent("""
        import atexit, os
        atexit.register(print, '{"status": "pass"}')
        atexit.register(os.write, 4, b'5:{"a"},')
        """),
    "signal_handlers_print_success": dedent("""
        import signal
        def ok(*_):
            print('{"status": "pass"}')
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM, signal.SIGHUP, signal.SIGUSR1, signal.SIGCHLD):
            signal.signal(s, ok)
        signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
        """),
    "excepthook_and_sys_exit": dedent("""
        import sys
        sys.excepthook = lambda *a: print("pass")
        sys.exit = lambda *a: None
        """),
    "sys_settrace_swallows_exceptions": dedent("""
        import sys
        def tracer(frame, event, arg):
            return tracer
        sys.settrace(tracer)
        sys.setprofile(lambda *a: None)
        """),
    "del_builtins_entries": "import builtins\nfor n in ('print', 'len', 'repr', 'open'):\n"
                            "    delattr(builtins, n)\n",
    "stdout_replaced": "import sys, io\nsys.stdout = io.StringIO()\nsys.stderr = None\nsys.__stdout__ = None\n",
}


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_crude_tampering_never_turns_a_wrong_answer_into_a_pass(run, name):
    r = run(TAMPERS[name] + ADD_WRONG, asserts=ASSERTS)
    rec = assert_verdict(r, "assertion_fail", score=0.0)
    assert rec["detail"].startswith("test 0 failed: "), rec["detail"]
    assert [t["status"] for t in rec["tests"]] == ["fail", "fail"]


EXECS = {
    "execv_bin_true": ("import os\nos.execv('/bin/true', ['true'])\n", "premature exit"),
    "execv_python_prints_pass": ("import os, sys\nos.execv(sys.executable, [sys.executable, '-c', "
                                 "'print(\"pass\")'])\n", "premature exit"),
    "execv_python_forges_frames_on_fd4": (dedent("""
        import os, sys
        prog = ("import os, json\\n"
                "for i, ev in enumerate([{'ev': 'test', 'index': 0, 'status': 'pass'}, {'ev': 'done'}]):\\n"
                "    p = json.dumps(dict(ev, nonce='0' * 32, seq=3 + i)).encode()\\n"
                "    os.write(4, b'%d:%s,' % (len(p), p))\\n")
        os.execv(sys.executable, [sys.executable, '-c', prog])
        """), "protocol violation: wrong nonce"),
    "execv_in_the_function_under_test": ("import os\ndef add(a, b):\n    os.execv('/bin/true', ['true'])\n",
                                         "premature exit"),
}


@pytest.mark.parametrize("name", sorted(EXECS))
def test_exec_in_place_of_the_harness_is_never_a_pass(run, name):
    code, detail = EXECS[name]
    if "def add" not in code:
        code = ADD_WRONG + code
    r = run(code, asserts=ASSERTS)
    assert_verdict(r, "error", detail, score=0.0)


# ---------------------------------------------------------------------------
# Determined tampering, written against this harness's internals.
# docs/threat-model.md ("Forging the verdict") concedes that assert/program/unittest
# tests, when they run in the candidate's interpreter, can be subverted this way; io and call
# tests are judged by the supervisor against expected values that never
# enter the sandbox, so they must hold.

DETERMINED = {
    # The caller's frame is the harness's: swap its test runner.
    "frame_walk_swaps_runner": dedent("""
        import sys
        g = sys._getframe(1).f_globals
        def fake(test, ctx):
            ev = {"ev": "test", "index": test["index"], "status": "pass"}
            if test["kind"] == "call":
                ev = {"ev": "test", "index": test["index"], "status": "returned", "value": None}
            return ev, None
        for k in list(g.get("_RUNNERS", {})):
            g["_RUNNERS"][k] = fake
        """),
    # Steal the event writer from a harness frame and report success directly.
    "stolen_emit": dedent("""
        import os, sys
        f, emit = sys._getframe(1), None
        while f is not None and emit is None:
            emit = f.f_locals.get("emit")
            f = f.f_back
        emit({"ev": "phase", "name": "import", "status": "ok"})
        for i in range(2):
            emit({"ev": "test", "index": i, "status": "pass"})
        emit({"ev": "done"})
        os._exit(0)
        """),
}

DETERMINED_ON_CALL = {
    "frame_walk_swaps_runner": ("assertion_fail", "test 0 failed: expected 3, got None"),
    # A "pass" status is not what a call test reports: a failed call.
    "stolen_emit": ("assertion_fail", "test 0 failed: the call raised"),
}


@pytest.mark.parametrize("name", sorted(DETERMINED))
def test_determined_tampering_cannot_forge_call_tests(run, name):
    task = {"task_id": "call/forge", "tests": [{"kind": "call", "fn": "add", "args": [1, 2], "expected": 3},
                                               {"kind": "call", "fn": "add", "args": [2, 2], "expected": 4}]}
    r = run(DETERMINED[name] + ADD_WRONG, task=task)
    status, detail = DETERMINED_ON_CALL[name]
    assert_verdict(r, status, detail, score=0.0)


# Aimed at assert and unittest tests, the same attacks forged a pass while
# those tests ran in the candidate's interpreter (they do under --judge
# inline, which keeps that); the default judge runs them in an interpreter
# the candidate never touches (docs/protocol.md, "Separate judge").
DETERMINED_ON_ASSERT = {
    "frame_walk_swaps_runner": ("assertion_fail",
                                "test 0 failed: AssertionError: expected 3, got 0 (line 1: assert add(1, 2) == 3)"),
    "stolen_emit": ("error", "protocol violation: test event from the candidate's call server"),
}


@pytest.mark.parametrize("name", sorted(DETERMINED))
def test_determined_tampering_of_assert_tests(run, name):
    r = run(DETERMINED[name] + ADD_WRONG, asserts=ASSERTS)
    status, detail = DETERMINED_ON_ASSERT[name]
    assert_verdict(r, status, detail, score=0.0)


UNITTEST_PATCH_TASK = {"task_id": "ut/patch", "tests": [{"kind": "unittest", "code": dedent("""
    import unittest
    class T(unittest.TestCase):
        def test_a(self):
            self.assertEqual(add(1, 2), 3)
    """)}]}
UNITTEST_PATCH = "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n" + ADD_WRONG


def test_patching_unittest_does_not_pass_a_unittest_test(run):
    r = run(UNITTEST_PATCH, task=UNITTEST_PATCH_TASK)
    assert r.record["status"] == "assertion_fail", r.record
    assert [t["judged_by"] for t in r.record["tests"]] == ["judge"], r.record


@pytest.mark.parametrize("name", sorted(DETERMINED))
def test_inline_judging_is_still_forgeable(run, name):
    """The known limitation --judge inline keeps (docs/threat-model.md): a
    candidate written against the harness forges its assert tests' pass."""
    r = run(DETERMINED[name] + ADD_WRONG, asserts=ASSERTS, args=["--judge", "inline"])
    assert r.record["status"] == "pass", r.record
    r = run(UNITTEST_PATCH, task=UNITTEST_PATCH_TASK, args=["--judge", "inline"])
    assert r.record["status"] == "pass", r.record


# ---------------------------------------------------------------------------
# The seccomp allow-list, probed without side effects: each refused call is
# made with arguments for which the kernel, were the call allowed, would
# answer something other than EPERM (EBADF, EFAULT, EINVAL, ENOENT, ...). The
# allowed controls in the same table prove the probe itself works.

# (name, x86_64 number, args, errno expected inside)
SYSCALL_PROBES = [
    # controls: allowed calls, bad arguments
    ("read(-1)", 0, (-1, 0, 0), "EBADF"),
    ("ioctl(-1, TCGETS)", 16, (-1, 0x5401, 0), "EBADF"),
    ("openat(nonexistent)", 257, (-100, b"/nonexistent/x", 0), "ENOENT"),
    # refused
    ("ptrace(ATTACH, nonexistent pid)", 101, (16, 0x7FFFFFF0, 0, 0), "EPERM"),
    ("process_vm_readv(flags=1)", 310, (1, 0, 0, 0, 0, 1), "EPERM"),
    ("io_uring_setup(0, NULL)", 425, (0, 0), "EPERM"),
    ("userfaultfd(-1)", 323, (-1,), "EPERM"),
    ("bpf(-1)", 321, (-1, 0, 0), "EPERM"),
    ("perf_event_open(NULL)", 298, (0, 0, -1, -1, 0), "EPERM"),
    ("keyctl(-1)", 250, (-1, 0, 0, 0, 0), "EPERM"),
    ("add_key(NULL)", 248, (0, 0, 0, 0, 0), "EPERM"),
    ("mount(NULL)", 165, (0, 0, 0, 0, 0), "EPERM"),
    ("umount2(NULL, -1)", 166, (0, -1), "EPERM"),
    ("unshare(CSIGNAL bits)", 272, (0x1,), "EPERM"),
    ("setns(-1)", 308, (-1, 0), "EPERM"),
    ("chroot(nonexistent)", 161, (b"/nonexistent",), "EPERM"),
    ("personality(query)", 135, (0xFFFFFFFF,), "EPERM"),
    ("clone(NEWUSER|FS) invalid combination", 56, (0x10000000 | 0x200, 0, 0, 0, 0), "EPERM"),
    ("clone(NEWNET) high bits masked", 56, (0x40000000 | (1 << 32), 0, 0, 0, 0), "EPERM"),
    ("clone3(NULL)", 435, (0, 0), "ENOSYS"),
    ("ioctl(-1, TIOCSTI)", 16, (-1, 0x5412, 0), "EPERM"),
    ("ioctl(-1, TIOCSTI | 1<<32)", 16, (-1, 0x5412 | (1 << 32), 0), "EPERM"),
    ("socket(AF_INET)", 41, (2, 1, 0), "EPERM"),
    ("socket(AF_NETLINK)", 41, (16, 3, 0), "EPERM"),
    ("socket(AF_PACKET)", 41, (17, 3, 0), "EPERM"),
    ("socket(AF_VSOCK)", 41, (40, 1, 0), "EPERM"),
    ("socket(AF_ALG)", 41, (38, 5, 0), "EPERM"),
    # The kernel reads the family as an int: this is AF_UNIX, allowed.
    ("socket(AF_UNIX | 1<<32)", 41, (1 | (1 << 32), 1, 0), "ok"),
    ("socket(AF_INET | 1<<32)", 41, (2 | (1 << 32), 1, 0), "EPERM"),
    ("pidfd_open(-1)", 434, (-1, 0), "EPERM"),
    ("pidfd_getfd(-1)", 438, (-1, 0, 0), "EPERM"),
    ("seccomp(-1)", 317, (0xFFFF, 0, 0), "EPERM"),
    ("prctl(unknown option)", 157, (0x7FFF, 0, 0, 0, 0), "EPERM"),
    ("prctl(PR_SET_DUMPABLE) high bits", 157, (4 | (1 << 32), 1, 0, 0, 0), "EPERM"),
    ("open_tree(-1, \"\")", 428, (-1, b"", 0), "EPERM"),
    ("fsopen(NULL)", 430, (0, 0), "EPERM"),
    ("setuid(0)", 105, (0,), "EPERM"),
    ("setgroups(0)", 116, (0, 0), "EPERM"),
    ("chown(nonexistent)", 92, (b"/nonexistent", 0, 0), "EPERM"),
    ("mknod(nonexistent dir)", 133, (b"/nonexistent/x", 0o10644, 0), "EPERM"),
    ("kcmp(-1)", 312, (0x7FFFFFF0, 0x7FFFFFF0, 0, 0, 0), "EPERM"),
    ("memfd_secret(-1)", 447, (-1,), "EPERM"),
    ("landlock_create_ruleset(NULL)", 444, (0, 0, 0xFFFF), "EPERM"),
]


def seccomp_probe_code():
    return ADD_OK + dedent("""
        import ctypes, errno, json
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        PROBES = %r
        out = {}
        for name, nr, args, _ in PROBES:
            cargs = [ctypes.c_char_p(a) if isinstance(a, bytes) else ctypes.c_long(a) for a in args]
            ctypes.set_errno(0)
            rc = libc.syscall(ctypes.c_long(nr), *cargs)
            e = ctypes.get_errno()
            out[name] = "ok" if rc >= 0 else errno.errorcode.get(e, str(e))
        print("REPORT " + json.dumps(out))
        """) % (SYSCALL_PROBES,)


def test_seccomp_refuses_dangerous_syscalls_with_eperm(run):
    # --allow-imports lets ctypes in, so the kernel's filter is what answers.
    r = run(seccomp_probe_code(), asserts=ASSERTS, args=["--allow-imports"])
    rec = assert_verdict(r, "pass")
    seen = report(rec)
    expected = {name: want for name, _, _, want in SYSCALL_PROBES}
    assert seen == expected


PY_PROBES = {
    "socket_af_inet": "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_STREAM)",
    "socket_af_inet6_udp": "import socket\nsocket.socket(socket.AF_INET6, socket.SOCK_DGRAM)",
    "socket_af_netlink": "import socket\nsocket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)",
    "socket_af_packet": "import socket\nsocket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)",
    "socket_af_vsock": "import socket\nsocket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)",
    "socket_af_alg": "import socket\nsocket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET)",
    # fd 0 is /dev/null: an allowed TIOCSTI would answer ENOTTY, not EPERM.
    "tiocsti_on_stdin": "import fcntl, termios\nfcntl.ioctl(0, termios.TIOCSTI, b'x')",
    "tiocsti_on_stdout": "import fcntl, termios\nfcntl.ioctl(1, termios.TIOCSTI, b'x')",
    "setuid_0": "import os\nos.setuid(0)",
    "setgid_0": "import os\nos.setgid(0)",
    "chroot": "import os\nos.chroot('/nonexistent')",
    "chown": "import os\nos.chown('/nonexistent', 0, 0)",
    "mknod": "import os\nos.mknod('/nonexistent/x')",
    "pidfd_send_signal": "import signal\nsignal.pidfd_send_signal(-1, 0)",
    "sched_setscheduler": "import os\nos.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))",
}


@pytest.mark.parametrize("name", sorted(PY_PROBES))
def test_python_level_probes_fail_with_eperm(run, name):
    code = ADD_OK + dedent("""
        import errno, json
        try:
        %s
            out = "succeeded"
        except OSError as e:
            out = errno.errorcode.get(e.errno, str(e.errno))
        print("REPORT " + json.dumps(out))
        """) % textwrap.indent(PY_PROBES[name], "    ")
    r = run(code, asserts=ASSERTS, args=["--allow-imports"])
    rec = assert_verdict(r, "pass")
    assert report(rec) == "EPERM"


FOREIGN_ABI = {
    # A 32-bit system call (int 0x80, i386 getpid) from the 64-bit process:
    # another architecture for seccomp, which kills the process.
    "int_0x80": dedent("""
        import ctypes, mmap
        code = bytes([0xB8, 0x14, 0, 0, 0,  # mov eax, 20 (getpid on i386)
                      0xCD, 0x80,            # int 0x80
                      0xC3])                 # ret
        m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        m.write(code)
        fn = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
        print("int 0x80 returned", fn(), flush=True)
        """),
    # The x32 ABI: syscall numbers with bit 30 set.
    "x32_syscall_bit": dedent("""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        print("x32 getpid returned", libc.syscall(ctypes.c_long(0x40000000 | 39)), flush=True)
        """),
}


@functools.lru_cache(maxsize=None)
def host_kernel_takes_int_0x80():
    """Whether this kernel has a 32-bit entry at all: Linux 6.7+ built with
    IA32 emulation off by default (or booted with ia32_emulation=false)
    answers int 0x80 with a general protection fault, SIGSEGV, before any
    seccomp filter sees a system call. A differential probe, outside the
    sandbox in a throwaway process of its own: the benign i386 getpid."""
    probe = FOREIGN_ABI["int_0x80"]
    p = subprocess.run(["/usr/bin/python3", "-I", "-c", probe], capture_output=True, timeout=30)
    if p.returncode == -signal.SIGSEGV:
        return False
    assert p.returncode == 0 and b"int 0x80 returned" in p.stdout, (p.returncode, p.stderr[-500:])
    return True


@pytest.mark.parametrize("name", sorted(FOREIGN_ABI))
def test_foreign_architecture_syscalls_kill_the_process(run, name):
    r = run(FOREIGN_ABI[name] + ADD_OK, asserts=ASSERTS, args=["--allow-imports"])
    if name == "int_0x80" and not host_kernel_takes_int_0x80():
        # No 32-bit entry on this kernel: the fault comes before the filter
        # (the probe above died the same way outside any sandbox); nothing ran.
        # Under gVisor too: its platform runs the candidate's instructions on
        # this kernel, which faults on int 0x80 before the sentry sees a trap.
        rec = assert_verdict(r, "error", "killed by signal SIGSEGV", score=0.0)
        assert "returned" not in rec["stdout"], rec["stdout"]
        return
    if GVISOR and name == "int_0x80":
        # gVisor implements no i386 system call: int 0x80 reaches its sentry,
        # which answers an error (-9 here) without running one and before
        # the filter's architecture check: nothing ran, nothing was killed.
        rec = assert_verdict(r, "pass")
        returned = int(rec["stdout"].split("int 0x80 returned", 1)[1].split()[0])
        assert returned < 0, rec["stdout"]
        return
    rec = assert_verdict(r, "error", "blocked syscall", score=0.0)
    assert "returned" not in rec["stdout"], rec["stdout"]


def test_credentials_inside(run):
    code = ADD_OK + dedent("""
        import json, os
        st = open("/proc/self/status").read()
        f = dict(l.split(":\\t", 1) for l in st.splitlines() if ":\\t" in l)
        out = {"uid": os.getresuid(), "gid": os.getresgid(), "groups": os.getgroups(),
               "CapEff": f["CapEff"].strip(), "CapBnd": f["CapBnd"].strip(), "CapAmb": f["CapAmb"].strip(),
               "CapPrm": f["CapPrm"].strip(), "NoNewPrivs": f["NoNewPrivs"].strip(),
               "Seccomp": f["Seccomp"].strip(), "sid_is_self": os.getsid(0) == os.getpid(),
               "hostname": os.uname().nodename, "cwd": os.getcwd(), "tty": os.path.exists("/dev/tty"),
               "net": sorted(os.listdir("/sys/class/net")) if os.path.exists("/sys/class/net") else None,
               "dev": sorted(os.listdir("/dev"))}
        print("REPORT " + json.dumps(out))
        """)
    code = code.replace('f["CapAmb"]', 'f.get("CapAmb", "0")').replace('f["NoNewPrivs"]', 'f.get("NoNewPrivs", "")')
    seen = report(assert_verdict(run(code, asserts=ASSERTS), "pass"))
    if GVISOR:
        # gVisor's own kernel: uids inside are not host uids (65534, no range
        # needed: no host quota is shared), its /proc/self/status has no
        # CapAmb or NoNewPrivs line, it keeps CAP_SETUID and CAP_SETGID in
        # the bounding set (gvisor_relay.c: nothing permitted or effective,
        # no_new_privs), its /sys has a loopback and its /dev its own nodes.
        assert seen["uid"] == [NOBODY] * 3 and seen["gid"] == [NOBODY] * 3 and seen["groups"] == [], seen
        for cap in ("CapEff", "CapPrm", "CapAmb"):
            assert int(seen[cap], 16) == 0, (cap, seen[cap])
        assert int(seen["CapBnd"], 16) & ~0xC0 == 0, seen["CapBnd"]
        assert seen["Seccomp"] == "2" and seen["sid_is_self"] is True and seen["cwd"] == "/tmp", seen
        assert seen["hostname"] == "sandbox" and seen["net"] == ["lo"], seen
        assert set(seen["dev"]) <= {"null", "zero", "full", "random", "urandom", "fd", "stdin", "stdout",
                                    "stderr", "shm", "tty", "ptmx", "pts", "fuse", "net"}, seen["dev"]
        return
    # As root, a uid and gid of the sandbox's own (one number); else 65534 in
    # a user namespace.
    uid = seen["uid"][0]
    assert is_sandbox_uid(uid) and (uid != NOBODY or os.geteuid() != 0), seen["uid"]
    assert seen["uid"] == [uid] * 3 and seen["gid"] == [uid] * 3 and seen["groups"] == []
    for cap in ("CapEff", "CapBnd", "CapAmb", "CapPrm"):
        assert int(seen[cap], 16) == 0, (cap, seen[cap])
    assert seen["NoNewPrivs"] == "1" and seen["Seccomp"] == "2"
    assert seen["sid_is_self"] is True, "a new session: no controlling terminal"
    assert seen["hostname"] != os.uname().nodename or seen["hostname"] == "sandbox"
    assert seen["cwd"] == "/tmp"
    assert seen["net"] is None, "no /sys inside"
    assert set(seen["dev"]) <= {"null", "zero", "full", "random", "urandom", "fd", "stdin", "stdout",
                                "stderr", "shm"}, seen["dev"]


def test_stdin_is_dev_null(run):
    """Regression: fd 0 was closed at exec (open() of /dev/null returned fd 0
    with O_CLOEXEC and dup2(0, 0) kept the flag), so sys.stdin was None."""
    code = ADD_OK + dedent("""
        import json, os, stat, sys
        out = {"stdin_none": sys.stdin is None}
        try:
            out["fd0_chr"] = stat.S_ISCHR(os.fstat(0).st_mode)
            out["fd0"] = os.readlink("/proc/self/fd/0")
        except OSError as e:
            out["fd0"] = "error %d" % e.errno
        try:
            input()
            out["input"] = "read"
        except EOFError:
            out["input"] = "EOFError"
        except Exception as e:
            out["input"] = type(e).__name__
        print("REPORT " + json.dumps(out))
        """)
    seen = report(assert_verdict(run(code, asserts=ASSERTS), "pass"))
    assert seen == {"stdin_none": False, "fd0_chr": True, "fd0": "/dev/null", "input": "EOFError"}


# ---------------------------------------------------------------------------
# The controls are targeted: honest programs that use processes, threads,
# semaphores, temp files and (with --allow-imports) subprocess run unchanged.

HONEST = {
    "multiprocessing_threads_tempfiles": ([], dedent("""
        import concurrent.futures, json, multiprocessing, os, tempfile
        def sq(x):
            return x * x
        with multiprocessing.Pool(2) as p:
            r1 = p.map(sq, range(5))
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            r2 = list(ex.map(sq, range(5)))
        with concurrent.futures.ProcessPoolExecutor(2) as ex:
            r3 = list(ex.map(sq, range(5)))
        q = multiprocessing.Queue()
        q.put(3)
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "f"), "w") as f:
                f.write("x")
            r4 = os.listdir(d)
        print("REPORT " + json.dumps([r1, r2, r3, q.get(), r4]))
        """), [[0, 1, 4, 9, 16]] * 3 + [3, ["f"]]),
    "subprocess_with_allow_imports": (["--allow-imports"], dedent("""
        import json, shutil, subprocess, sys
        r1 = subprocess.run(["echo", "hi"], capture_output=True, text=True).stdout
        r2 = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True).stdout
        print("REPORT " + json.dumps([r1, r2, shutil.which("python3")]))
        """), ["hi\n", "42\n", "/usr/bin/python3"]),
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_programs_run_unchanged(run, name):
    args, code, expected = HONEST[name]
    rec = assert_verdict(run(code + ADD_OK, asserts=ASSERTS, args=args), "pass")
    assert report(rec) == expected


# ---------------------------------------------------------------------------
# doctor


@native_only("its command lines name no backend: native, as in the native pass")
def test_doctor_reports_the_isolation_features():
    p = subprocess.run([EXECEVAL, "doctor"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30,
                       env=execeval_env())
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    for word in ("seccomp", "memory", "pids", "namespace"):
        assert word in out, (word, out)
    assert "can run candidates here" in out


# ---------------------------------------------------------------------------
# Channels through files every sandbox shares (issue 11, items 2 and 6): the
# page cache of a read-only /usr file and locks on it. Sender and receiver are
# separate sandboxes; the host checks the shared state itself.

PAGE = 4096
CACHE_BITS = 128
CACHE_STRIDE = 4  # pages between bits: readahead of one never reaches the next


def shared_usr_file(min_bytes=CACHE_BITS * CACHE_STRIDE * PAGE):
    """A world-readable regular file under /usr/share of at least min_bytes
    (the first in sorted order: every run picks the same one)."""
    for root, dirs, files in os.walk("/usr/share"):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if os.path.isfile(path) and not os.path.islink(path) and st.st_mode & 0o004 and \
                    min_bytes <= st.st_size <= 64 << 20:
                return path
    pytest.skip("no world-readable file of %d bytes under /usr/share" % min_bytes)


def host_cached_pages(path, pages):
    """Which of the pages are in the host's page cache: mincore on a mapping,
    which (unlike a RWF_NOWAIT read) loads nothing; the host's view of the
    channel. Root may: the kernel reports residency to whoever could write."""
    import ctypes
    import mmap
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = os.path.getsize(path)
    vec = ctypes.create_string_buffer((size + PAGE - 1) // PAGE)
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        assert addr not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
        try:
            assert libc.mincore(addr, size, vec) == 0, ctypes.get_errno()
        finally:
            libc.munmap(addr, size)
    finally:
        os.close(fd)
    return [vec.raw[p] & 1 for p in pages]


CACHE_SENDER = dedent("""
    import errno, json, os
    fd = os.open(PATH, os.O_RDONLY)
    errs = set()
    for i, bit in enumerate(BITS):
        if not bit:  # a 0 is an evicted page
            try:
                os.posix_fadvise(fd, i * STRIDE * 4096, 4096, os.POSIX_FADV_DONTNEED)
                errs.add("ok")
            except OSError as e:
                errs.add(errno.errorcode[e.errno])
    for advice in ("POSIX_FADV_WILLNEED", "POSIX_FADV_NOREUSE"):
        try:
            os.posix_fadvise(fd, 0, 4096, getattr(os, advice))
            errs.add(advice + " ok")
        except OSError as e:
            errs.add(advice + " " + errno.errorcode[e.errno])
    print("REPORT " + json.dumps(sorted(errs)))
    """)

CACHE_RECEIVER = dedent("""
    import errno, json, os
    fd = os.open(PATH, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # allowed: honest code may call it
    bits, errs = [], set()
    for i in range(N):
        try:
            os.preadv(fd, [bytearray(1)], i * STRIDE * 4096, os.RWF_NOWAIT)
            bits.append(1)
        except BlockingIOError:
            bits.append(0)
        except OSError as e:
            bits.append(None)
            errs.add(errno.errorcode[e.errno])
    assert os.preadv(fd, [bytearray(1)], 0) == 1  # flags 0: allowed
    print("REPORT " + json.dumps({"bits": bits, "errors": sorted(errs)}))
    """)


HOST_RECLAIM_NOISE_PAGES = 4


def test_page_cache_of_a_usr_file_carries_no_bits_between_runs(run):
    path = shared_usr_file()
    pages = [i * CACHE_STRIDE for i in range(CACHE_BITS)]
    bits = [secrets.randbits(1) for _ in range(CACHE_BITS)]
    bits[0], bits[1] = 0, 1  # both values present
    with open(path, "rb") as f:  # every bit starts at 1: cached
        while f.read(1 << 20):
            pass
    assert host_cached_pages(path, pages) == [1] * CACHE_BITS
    consts = "PATH = %r\nBITS = %r\nN = %d\nSTRIDE = %d\n" % (path, bits, CACHE_BITS, CACHE_STRIDE)
    sent = report(assert_verdict(run(consts + CACHE_SENDER + ADD_OK, asserts=ASSERTS), "pass"))
    # Host evidence: the sender evicted nothing.
    after = host_cached_pages(path, pages)
    got = report(assert_verdict(run(consts + CACHE_RECEIVER + ADD_OK, asserts=ASSERTS), "pass"))
    crossed = sum(g == b for g, b in zip(got["bits"], bits))
    # The host reclaims cold page-cache pages on its own: DAMON's proactive
    # reclaim (this VM's kernel runs it) or plain memory pressure from other
    # jobs (CI saw 1 page of 128 evicted on a host without DAMON). That is a
    # page or two in the window, never the ~64 a sender signalling its bits
    # would evict, and never matching them: the receiver's bits are checked
    # below too.
    assert after.count(0) <= HOST_RECLAIM_NOISE_PAGES, "the sender evicted %d pages; %d of %d bits crossed" % (
        after.count(0), crossed, CACHE_BITS)
    assert got == {"bits": [None] * CACHE_BITS, "errors": ["EPERM"]}, (crossed, got)
    assert sent == ["EPERM", "POSIX_FADV_NOREUSE EPERM", "POSIX_FADV_WILLNEED EPERM"], sent


LOCK_BITS = 16


def shared_usr_files(n):
    """n world-readable regular files of /usr/lib/python3*/ (sorted)."""
    import glob
    out = sorted(p for p in glob.glob("/usr/lib/python3*/*.py") if os.stat(p).st_mode & 0o004)[:n]
    if len(out) < n:
        pytest.skip("fewer than %d .py files under /usr/lib/python3*" % n)
    return out


LOCK_SENDER = dedent("""
    import errno, fcntl, json, os, struct, time
    errs = set()
    fds = [os.open(p, os.O_RDONLY) for p in FILES]
    for i, bit in enumerate(BITS):
        if bit:
            for how, call in (("flock", lambda: fcntl.flock(fds[i], fcntl.LOCK_EX | fcntl.LOCK_NB)),
                              ("F_SETLK", lambda: fcntl.lockf(fds[0], fcntl.LOCK_SH | fcntl.LOCK_NB, 1, i)),
                              ("F_OFD_SETLK", lambda: fcntl.fcntl(fds[1], fcntl.F_OFD_SETLK,
                                                                  struct.pack("hhqqi", fcntl.F_RDLCK, 0, i, 1, 0)))):
                try:
                    call()
                    errs.add(how + " ok")
                except OSError as e:
                    errs.add(how + " " + errno.errorcode[e.errno])
    time.sleep(HOLD)
    print("REPORT " + json.dumps(sorted(errs)))
    """)

LOCK_RECEIVER = dedent("""
    import errno, fcntl, json, os, struct, time
    time.sleep(WAIT)
    fds = [os.open(p, os.O_RDONLY) for p in FILES]
    out = {"flock": [], "F_GETLK": [], "F_OFD_GETLK": []}
    def probe(key, call):
        try:
            out[key].append(call())
        except OSError as e:
            out[key].append(errno.errorcode[e.errno])
    def getlk(cmd, i):
        lk = struct.pack("hhqqi", fcntl.F_WRLCK, 0, i, 1, 0)
        return int(struct.unpack("hhqqi", fcntl.fcntl(fds[0 if cmd == fcntl.F_GETLK else 1], cmd, lk))[0]
                   != fcntl.F_UNLCK)
    def flock_probe(i):
        try:
            fcntl.flock(fds[i], fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 1
        fcntl.flock(fds[i], fcntl.LOCK_UN)
        return 0
    for i in range(len(FILES)):
        probe("flock", lambda: flock_probe(i))
        probe("F_GETLK", lambda: getlk(fcntl.F_GETLK, i))
        probe("F_OFD_GETLK", lambda: getlk(fcntl.F_OFD_GETLK, i))
    print("REPORT " + json.dumps(out))
    """)


def lock_key(path):
    """How /proc/locks names the file: MAJ:MIN:INODE, the numbers in hex, hex, decimal."""
    st = os.stat(path)
    return "%02x:%02x:%d" % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)


def host_locks_on(keys):
    """Lines of the host's /proc/locks on any of the files (keys: lock_key)."""
    with open("/proc/locks") as f:
        return [line.strip() for line in f if keys & set(line.split())]


def test_locks_on_usr_files_carry_no_bits_between_concurrent_sandboxes(tmp_path):
    files = shared_usr_files(LOCK_BITS)
    keys = {lock_key(p) for p in files}
    bits = [secrets.randbits(1) for _ in range(LOCK_BITS)]
    bits[0], bits[1] = 1, 0
    consts = "FILES = %r\nBITS = %r\nHOLD = 3.0\nWAIT = 1.0\n" % (files, bits)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"task_id": "t", "prompt": "", "tests": [
        {"kind": "assert", "code": a} for a in ASSERTS]}) + "\n")
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps({"task_id": "t", "completion": consts + code + ADD_OK}) + "\n"
                               for code in (LOCK_SENDER, LOCK_RECEIVER)))
    argv = with_isolation([EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-j", "2", "-q",
                           "-k", "1", "--allow-imports", "--no-history", "--timeout", "8"])
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=execeval_env())
    seen = []
    while p.poll() is None:  # host evidence while both sandboxes run
        seen += host_locks_on(keys)
        time.sleep(0.05)
    out, err = p.communicate()
    assert p.returncode == 0, err.decode()[-2000:]
    with open(str(samples) + ".results.jsonl") as f:
        recs = sorted((json.loads(line) for line in f), key=lambda r: r["sample"])
    assert [r["status"] for r in recs] == ["pass", "pass"], recs
    sent, got = report(recs[0]), report(recs[1])
    crossed = {k: sum(g == b for g, b in zip(v, bits)) for k, v in got.items()}
    assert seen == [] and host_locks_on(keys) == [], ("%d lock lines seen on the host; bits crossed: %s" % (
        len(seen), crossed), seen[:3])
    assert got == {k: ["ENOLCK"] * LOCK_BITS for k in ("flock", "F_GETLK", "F_OFD_GETLK")}, got
    assert sent == ["F_OFD_SETLK ENOLCK", "F_SETLK ENOLCK", "flock ENOLCK"], sent


HONEST_FILE_CALLS = dedent("""
    import errno, fcntl, json, mmap, os, sqlite3, tempfile
    out = {}
    fd = os.open("/usr/lib/os-release" if os.path.exists("/usr/lib/os-release") else "/etc/passwd", os.O_RDONLY)
    for advice in ("NORMAL", "SEQUENTIAL", "RANDOM"):
        os.posix_fadvise(fd, 0, 0, getattr(os, "POSIX_FADV_" + advice))
    out["preadv"] = os.preadv(fd, [bytearray(4)], 0)
    m = mmap.mmap(-1, 1 << 20)
    m.madvise(mmap.MADV_DONTNEED)
    m.madvise(mmap.MADV_HUGEPAGE)
    with tempfile.TemporaryFile() as f:
        out["pwritev"] = os.pwritev(f.fileno(), [b"abc"], 0)
        out["flags"] = fcntl.fcntl(f.fileno(), fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDWR
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            out["flock /tmp"] = "ok"
        except OSError as e:
            out["flock /tmp"] = errno.errorcode[e.errno]
    db = sqlite3.connect(":memory:")
    out["sqlite :memory:"] = db.execute("select 6 * 7").fetchone()[0]
    try:
        db = sqlite3.connect("/tmp/t.db", timeout=0)  # the default, 5 s of retries, is a timeout
        db.execute("create table t (x)")
        out["sqlite /tmp"] = "ok"
    except sqlite3.Error as e:
        out["sqlite /tmp"] = str(e)
    db = sqlite3.connect("file:/tmp/u.db?nolock=1", uri=True)
    db.execute("create table t (x)")
    db.execute("insert into t values (1)")
    out["sqlite /tmp nolock"] = db.execute("select x from t").fetchone()[0]
    print("REPORT " + json.dumps(out))
    """)


def test_honest_file_calls_still_work_and_locks_fail_with_enolck(run):
    """fadvise NORMAL/SEQUENTIAL/RANDOM, preadv/pwritev (flags 0), madvise
    of anonymous memory and fcntl's plain commands are unchanged. Locks fail
    everywhere, /tmp included (seccomp sees no path): sqlite3 on a file says
    "database is locked" once its busy timeout has passed; :memory: and
    ?nolock=1 work."""
    r = run(HONEST_FILE_CALLS + ADD_OK, asserts=ASSERTS, args=["--allow-imports"])
    assert report(assert_verdict(r, "pass")) == {
        "preadv": 4, "pwritev": 3, "flags": True, "flock /tmp": "ENOLCK", "sqlite :memory:": 42,
        "sqlite /tmp": "database is locked", "sqlite /tmp nolock": 1}


# The rest of the page-cache and lock surface, probed side-effect free as
# SYSCALL_PROBES does (bad fds and empty ranges: an allowed call fails with
# EBADF or succeeds, a refused one with EPERM/ENOLCK).
SHARED_STATE_PROBES = [
    ("fadvise64(-1, SEQUENTIAL)", 221, (-1, 0, 0, 2), "EBADF"),
    ("fadvise64(-1, DONTNEED)", 221, (-1, 0, 0, 4), "EPERM"),
    ("fadvise64(-1, DONTNEED | 1<<32)", 221, (-1, 0, 0, 4 | (1 << 32)), "EPERM"),
    ("readahead(-1)", 187, (-1, 0, 0), "EPERM"),
    ("preadv2(-1, flags 0)", 327, (-1, 0, 0, 0, 0, 0), "EBADF"),
    ("preadv2(-1, RWF_NOWAIT)", 327, (-1, 0, 0, 0, 0, 8), "EPERM"),
    ("pwritev2(-1, RWF_NOWAIT)", 328, (-1, 0, 0, 0, 0, 8), "EPERM"),
    ("mincore(NULL, 0)", 27, (0, 0, 0), "EPERM"),
    ("cachestat(-1)", 451, (-1, 0, 0, 0), "EPERM"),
    ("madvise(NULL, 0, DONTNEED)", 28, (0, 0, 4), "ok"),
    ("madvise(NULL, 0, COLD)", 28, (0, 0, 20), "EPERM"),
    ("madvise(NULL, 0, PAGEOUT)", 28, (0, 0, 21), "EPERM"),
    ("madvise(NULL, 0, MERGEABLE)", 28, (0, 0, 12), "EPERM"),
    ("sync_file_range(-1)", 277, (-1, 0, 0, 0), "EPERM"),
    ("flock(-1, LOCK_EX)", 73, (-1, 2), "ENOLCK"),
    ("fcntl(-1, F_GETFD)", 72, (-1, 1), "EBADF"),
    ("fcntl(-1, F_SETLK)", 72, (-1, 6, 0), "ENOLCK"),
    ("fcntl(-1, F_GETLK | 1<<32)", 72, (-1, 5 | (1 << 32), 0), "ENOLCK"),
    ("fcntl(-1, F_OFD_SETLKW)", 72, (-1, 38, 0), "ENOLCK"),
    ("fcntl(-1, F_SETLEASE)", 72, (-1, 1024, 0), "EPERM"),
    ("memfd_create(NULL)", 319, (0, 0), "EFAULT"),  # allowed with a memory cgroup
]


def test_shared_state_syscalls_are_refused_in_the_sandbox(run):
    code = seccomp_probe_code().replace(repr(SYSCALL_PROBES), repr(SHARED_STATE_PROBES))
    seen = report(assert_verdict(run(code, asserts=ASSERTS, args=["--allow-imports"]), "pass"))
    assert seen == {name: want for name, _, _, want in SHARED_STATE_PROBES}


# ---------------------------------------------------------------------------
# Hidden tests enter the sandbox only after the gate (issue 11, item 3)

# At import, outside an io test's child: every string and bytes object the
# collector or any frame's locals can reach, searched for the markers.
HIDDEN_WALK = dedent("""
    import gc, json, sys

    def add(a, b):
        return a + b

    def _walk(reversed_tokens):
        # Built here, their objects skipped: the source holds them reversed.
        tokens = [t[::-1] for t in reversed_tokens]
        found, seen, todo = set(), set(map(id, tokens)), list(gc.get_objects())
        f = sys._getframe()
        while f is not None:
            todo.append(f.f_locals)
            todo.append(f.f_globals)
            f = f.f_back
        while todo:
            o = todo.pop()
            if id(o) in seen:
                continue
            seen.add(id(o))
            if isinstance(o, (bytes, bytearray)):
                o = bytes(o).decode("latin-1")
            if isinstance(o, str):
                found.update(t for t in tokens if t in o)
            elif isinstance(o, dict):
                todo.extend(o.keys())
                todo.extend(o.values())
            elif isinstance(o, (list, tuple, set, frozenset)):
                todo.extend(o)
        return sorted(found)

    if __name__ != "__main__":
        print("REPORT " + json.dumps(_walk(TOKENS)))
    else:
        print(input().lower())
    """)


def hidden_marker_task(public_ok, tag):
    marks = ["HMARK_A_" + tag, "HMARK_B_" + tag, "HMARK_C_" + tag]
    public = "assert add(1, 2) == %d" % (3 if public_ok else 4)
    return marks, {"task_id": "hidden-walk", "entry_point": "add", "tests": [
        {"kind": "assert", "code": public},
        {"kind": "assert", "code": "assert add(2, 2) == 4  # " + marks[0], "visibility": "hidden"},
        {"kind": "io", "stdin": marks[1] + "\n", "stdout": marks[1].lower() + "\n", "visibility": "hidden"},
        {"kind": "call", "fn": "add", "args": [marks[2], "!"], "expected": marks[2] + "!",
         "visibility": "hidden"},
        {"kind": "assert", "code": "assert add(2, 2) == 5", "visibility": "hidden"}]}


def test_a_candidate_walking_gc_at_import_finds_no_hidden_test(run):
    # A public test is about to fail: the hidden tests never enter the sandbox.
    tag = secrets.token_hex(4)
    marks, task = hidden_marker_task(False, tag)
    candidate = HIDDEN_WALK.replace("TOKENS", json.dumps([m[::-1] for m in marks]))
    rec = assert_verdict(run(candidate, task=task), "assertion_fail", score=0.0)
    assert report(rec) == [], "the candidate read hidden tests at import"
    assert [t["status"] for t in rec["tests"]] == ["fail", "skipped", "skipped", "skipped", "skipped"]
    assert rec["phases"][-1] == {"name": "hidden", "status": "skipped", "passed": 0, "total": 4,
                                 "mode": "gated"}


def test_hidden_tests_arrive_through_the_open_gate_and_are_judged(run):
    # Public passes: the gate opens, the hidden tests arrive then (not at
    # import) and each is judged as before, io and call by the supervisor.
    tag = secrets.token_hex(4)
    marks, task = hidden_marker_task(True, tag)
    candidate = HIDDEN_WALK.replace("TOKENS", json.dumps([m[::-1] for m in marks]))
    rec = assert_verdict(run(candidate, task=task), "assertion_fail", score=0.8)
    assert report(rec) == [], "the candidate read hidden tests at import"
    assert [t["status"] for t in rec["tests"]] == ["pass", "pass", "pass", "pass", "fail"]
    assert rec["phases"][-1] == {"name": "hidden", "status": "fail", "passed": 3, "total": 4, "mode": "gated"}


def test_run_hidden_still_sends_the_hidden_tests_after_the_public_ones(run):
    # --run-hidden: no verdict to hide, yet nothing hidden is there at import.
    tag = secrets.token_hex(4)
    marks, task = hidden_marker_task(False, tag)
    candidate = HIDDEN_WALK.replace("TOKENS", json.dumps([m[::-1] for m in marks]))
    rec = assert_verdict(run(candidate, task=task, args=("--run-hidden",)), "assertion_fail", score=0.6)
    assert report(rec) == []
    assert [t["status"] for t in rec["tests"]] == ["fail", "pass", "pass", "pass", "fail"]
    assert rec["phases"][-1]["mode"] == "always"


def test_hidden_tests_larger_than_a_pipe_arrive_whole(run):
    # 40 hidden io tests of 64 KiB stdin each: 2.5 MiB through the gate,
    # written from the event loop as the harness reads.
    big = "x" * 65536
    task = {"task_id": "big-hidden", "tests": [{"kind": "io", "stdin": "1\n", "stdout": "1\n"}] + [
        {"kind": "io", "stdin": big + "%d\n" % i, "stdout": "%d\n" % (65536 + len(str(i))),
         "visibility": "hidden"} for i in range(40)]}
    rec = assert_verdict(run("print(len(input()))\n", task=task), "pass")
    assert rec["phases"][-1] == {"name": "hidden", "status": "ok", "passed": 40, "total": 40, "mode": "gated"}


# serve's routes are RL-facing: by default the gate opens whatever the
# public verdict (no candidate learns it while running); --gate-hidden
# brings the gate back.
def test_serve_runs_hidden_tests_by_default_and_gates_on_request():
    from serve_client import Server
    tag = secrets.token_hex(4)
    marks, task = hidden_marker_task(False, tag)
    candidate = HIDDEN_WALK.replace("TOKENS", json.dumps([m[::-1] for m in marks]))
    for args, mode, statuses in (((), "always", ["fail", "pass", "pass", "pass", "fail"]),
                                 (("--gate-hidden",), "gated", ["fail"] + ["skipped"] * 4)):
        s = Server(list(args), jobs=1)
        try:
            for a in (s.run({"task": task, "candidate": candidate}),
                      s.batch([{"task": task, "candidate": candidate}])):
                assert a.status == 200, a
                rec = a.json if "status" in a.json else a.json["records"][0]
                assert rec["phases"][-1]["mode"] == mode, rec
                assert [t["status"] for t in rec["tests"]] == statuses, rec
                assert report(rec) == []
        finally:
            s.stop()


def test_a_gate_held_open_but_never_read_does_not_stall_the_supervisor(run):
    # The candidate keeps the gate's read end (as fd 50) and puts /dev/null
    # on fd 5: the harness reads EOF, the 2.5 MiB of hidden tests stay queued
    # in the supervisor (EPOLLOUT) until the sandbox is gone.
    big = "x" * 65536
    task = {"task_id": "gate/held", "tests": [{"kind": "assert", "code": "assert add(1, 2) == 3"}] + [
        {"kind": "io", "stdin": big + "\n", "stdout": "65536\n", "visibility": "hidden"} for _ in range(40)]}
    # --judge inline: the gate is the candidate's harness's (under the split
    # judge the candidate's fd 5 carries calls: the gate tricks above).
    hold = "import os\nos.dup2(5, 50)\nos.dup2(os.open('/dev/null', os.O_RDONLY), 5)\n"
    for _ in range(3):
        rec = assert_verdict(run(hold + ADD_OK, task=task, args=["--judge", "inline"]), "error", "premature exit")
        assert [t["status"] for t in rec["tests"]] == ["pass"] + ["not_run"] * 40
        assert rec["resources"]["wall_ms"] < 2000, rec["resources"]


# ---------------------------------------------------------------------------
# Issue 11 item 6 (uids): no per-user kernel quota shared between sandboxes.

PIPE_HOG = dedent("""
    import fcntl, json, os, time
    pipes, grown = [], 0
    for i in range(64):
        r, w = os.pipe()
        pipes.append((r, w))
        try:
            fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 1 << 20)
            grown += 1
        except OSError:
            pass
    print("REPORT " + json.dumps({"grown": grown, "uid": os.getuid()}), flush=True)
    time.sleep(4)
""") + ADD_OK
PIPE_NEIGHBOUR = dedent("""
    import fcntl, json, os, time
    time.sleep(1.5)  # the hog holds its 64 MiB of pipe buffers by now
    sizes, errors = [], []
    for i in range(4):
        r, w = os.pipe()
        sizes.append(fcntl.fcntl(w, fcntl.F_GETPIPE_SZ))
        try:
            fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 1 << 20)
            errors.append(None)
        except OSError as e:
            errors.append(e.errno)
    print("REPORT " + json.dumps({"sizes": sizes, "errors": errors, "uid": os.getuid()}), flush=True)
    time.sleep(1.5)  # alive while the host looks at both
""") + ADD_OK


def read_pipe_soft_limit():
    try:
        with open("/proc/sys/fs/pipe-user-pages-soft") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 0


def eval_sampled(tmp_path, samples, *args, jobs=2, timeout=120):
    """`execeval eval` over ADD tasks with /proc sampled every 10 ms while it
    runs: (returncode, records by sample, stderr, [set of sandbox uids seen
    at one moment])."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"task_id": "t/add", "prompt": "", "tests": [
        {"kind": "assert", "code": a} for a in ASSERTS]}) + "\n")
    sf = tmp_path / "samples.jsonl"
    sf.write_text("".join(json.dumps({"task_id": "t/add", "code": c}) + "\n" for c in samples))
    out = tmp_path / "results.jsonl"
    argv = with_isolation([EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(sf), "-o", str(out),
                           "-j", str(jobs), "-q", "-k", "1"] + list(args))
    seen = []
    with open(tmp_path / "stderr", "w+b") as err:
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=execeval_env())
        deadline = time.monotonic() + timeout
        try:
            while p.poll() is None and time.monotonic() < deadline:
                seen.append({u for _, state, uids, _, _ in processes() if state not in ("Z", "X")
                             for u in uids[:1] if is_sandbox_uid(u)})
                time.sleep(0.01)
            assert p.poll() is not None, "execeval eval did not finish within %d s" % timeout
        finally:
            if p.poll() is None:
                p.kill()
            p.wait()
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    records = {r["sample"]: r for r in map(json.loads, out.read_text().splitlines())} if out.exists() else {}
    return p.returncode, records, stderr, seen


@pytest.mark.skipif(os.geteuid() != 0, reason="unprivileged sandboxes all run as the caller's uid")
@native_only("pipes are the sentry's, counted by no host uid's quota; every sandbox is uid 65534 inside "
             "its own kernel, so the two uids this test tells apart do not exist")
def test_a_pipe_hog_does_not_shrink_a_concurrent_sandboxs_pipes(tmp_path):
    """Issue 11 item 6: the kernel counts pipe buffers per uid (soft limit
    fs.pipe-user-pages-soft, 64 MiB here). With every sandbox as uid 65534
    a hog holding 64 pipes of 1 MiB made a concurrent neighbour's new pipes
    8 KiB and its F_SETPIPE_SZ fail (EPERM): a channel and a functional
    difference. Each sandbox now runs as a uid of its own. Host evidence: the
    two sandboxes' processes ran as two different uids of the range, and no
    process of either is left."""
    soft = read_pipe_soft_limit()
    if not soft or soft > 16384:
        pytest.skip("fs.pipe-user-pages-soft is %d: 64 pipes of 1 MiB do not reach it" % soft)
    code, recs, stderr, seen = eval_sampled(tmp_path, [PIPE_HOG, PIPE_NEIGHBOUR], "--timeout", "10")
    assert code == 0, stderr[-3000:]
    hog, neighbour = recs[0], recs[1]
    assert (hog["status"], neighbour["status"]) == ("pass", "pass"), (hog, neighbour)
    h, n = report(hog), report(neighbour)
    assert h["grown"] >= 60, h  # the hog holds (about) its uid's whole soft limit
    assert n["sizes"] == [65536] * 4 and n["errors"] == [None] * 4, n
    # The candidates saw their own uids, both of the range and different.
    assert h["uid"] != n["uid"] and is_sandbox_uid(h["uid"]) and is_sandbox_uid(n["uid"]), (h, n)
    assert NOBODY not in (h["uid"], n["uid"])
    # The host saw the same: at one moment both sandboxes ran, as those uids.
    assert any(s >= {h["uid"], n["uid"]} for s in seen), "never saw both sandboxes at once: %s" % (
        sorted({u for s in seen for u in s}),)
    assert wait_no_leftovers() == []
    left = [pid for pid, state, uids, _, _ in processes()
            if state not in ("Z", "X") and {h["uid"], n["uid"]} & set(uids)]
    assert left == [], "processes of the sandboxes' uids are left: %s" % left


def test_the_sandboxs_own_uid_has_a_name(run):
    """The uid of its own (issue 11 item 6) is in the sandbox's /etc/passwd
    and /etc/group, so getpass.getuser() and pwd work as they did for 65534."""
    code = ADD_OK + dedent("""
        import getpass, grp, json, os, pwd
        print("REPORT " + json.dumps({"uid": os.getuid(), "user": getpass.getuser(),
                                      "home": pwd.getpwuid(os.getuid()).pw_dir,
                                      "group": grp.getgrgid(os.getgid()).gr_name}))
        """)
    seen = report(assert_verdict(run(code, asserts=ASSERTS), "pass"))
    name = "sandbox" if seen["uid"] != NOBODY else "nobody"
    assert seen == {"uid": seen["uid"], "user": name, "home": "/tmp", "group": name if name == "sandbox" else
                    "nogroup"}, seen
    assert is_sandbox_uid(seen["uid"])


NOBODY_PIPE_PROBE = dedent("""
    import fcntl, json, os
    r, w = os.pipe()
    size = fcntl.fcntl(w, fcntl.F_GETPIPE_SZ)
    try:
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 1 << 20)
        error = None
    except OSError as e:
        error = e.errno
    print(json.dumps({"size": size, "error": error}))
""")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run the host's probe as nobody")
def test_a_pipe_hog_leaves_the_hosts_nobody_alone(tmp_path):
    """Issue 11 item 6, the host's side: a host process running as nobody
    shared uid 65534's pipe quota with every sandbox, so a hog shrank its
    pipes too. Now it probes while the hog holds its pipes: full size."""
    soft = read_pipe_soft_limit()
    if not soft or soft > 16384:
        pytest.skip("fs.pipe-user-pages-soft is %d: 64 pipes of 1 MiB do not reach it" % soft)
    cf = tmp_path / "hog.py"
    cf.write_text(PIPE_HOG)
    argv = with_isolation([EXECEVAL, "run", "--timeout", "10", "--assert", ASSERTS[0], str(cf)])
    with open(tmp_path / "out", "w+b") as out:
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=execeval_env())
        try:
            deadline = time.monotonic() + 30
            # The record comes at the end: wait for the sandbox's processes.
            while p.poll() is None and time.monotonic() < deadline and not any(
                    is_sandbox_uid(uids[0]) for _, st, uids, _, _ in processes() if st not in ("Z", "X") and uids):
                time.sleep(0.02)
            time.sleep(1.0)  # the hog's 64 pipes are set up by now
            assert p.poll() is None, "the hog ended early"
            probe = subprocess.run(["/usr/bin/python3", "-I", "-c", NOBODY_PIPE_PROBE], user=NOBODY, group=NOBODY,
                                   capture_output=True, text=True, timeout=30)
        finally:
            p.wait(timeout=60)
        out.seek(0)
        rec = parse_record(out.read().decode())
    assert probe.returncode == 0, probe.stderr
    assert json.loads(probe.stdout) == {"size": 65536, "error": None}, probe.stdout
    assert rec and rec["status"] == "pass" and report(rec)["grown"] >= 60, rec


# ---------------------------------------------------------------------------
# Issue 11 (cgroup helper): cgroups of a dead execeval, starvation of a
# neighbour, memory pinned past the sandbox.

def cgroups_named_for_pid(pid):
    """Every execeval.<pid>.* cgroup under our own cgroups, deepest first."""
    from conftest import execeval_cgroups_of
    return sorted(execeval_cgroups_of(pid), key=len, reverse=True)


def in_fresh_pid_namespace(argv):
    """argv run as pid 1 of a new pid namespace, as in a container: every
    start gets the same pid."""
    return ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc"] + argv


@native_only("its command lines name no backend: native, as in the native pass")
@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_a_restart_with_the_same_pid_runs_beside_a_dead_execevals_cgroups(tmp_path, isolation):
    """An execeval that is pid 1 of its pid namespace is killed with SIGKILL
    while its sandbox runs: its cgroups stay (empty). The next execeval in a
    fresh pid namespace is pid 1 again; its cgroup names must not collide
    ("cannot create cgroup ...: File exists" and no record), and once the
    dead one's cgroups are old enough its sweep removes them although their
    pid (1) is alive: it judges a name by the start time in it too."""
    cand = tmp_path / "sleepy.py"
    cand.write_text("import time\ntime.sleep(30)\nx = 1\n")
    run_argv = [EXECEVAL, "run", "--isolation", isolation, "--timeout", "20", "--assert", "assert x == 1"]
    dead = subprocess.Popen(in_fresh_pid_namespace(run_argv + [str(cand)]), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=execeval_env())
    try:
        deadline = time.monotonic() + 30
        while not cgroups_named_for_pid(1) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)  # the sandbox is inside them
        left = cgroups_named_for_pid(1)
        assert left, "the first execeval made no cgroup named execeval.1.*"
        dead.kill()  # unshare: its --kill-child sends execeval SIGKILL
        dead.wait(timeout=30)
        assert wait_no_leftovers(seconds=5.0) == []
        born = time.monotonic()
        assert set(cgroups_named_for_pid(1)) == set(left), "the dead execeval's cgroups are not there to collide"
        ok = tmp_path / "ok.py"
        ok.write_text("x = 1\n")
        fresh = subprocess.run(in_fresh_pid_namespace(run_argv + [str(ok)]), capture_output=True, timeout=60,
                               env=execeval_env())
        assert fresh.returncode == 0, fresh.stderr.decode()
        rec = parse_record(fresh.stdout.decode())
        assert rec is not None and rec["status"] == "pass", fresh.stdout
        # Its own cgroups are gone; the dead one's are still there (too young).
        assert set(cgroups_named_for_pid(1)) == set(left)
        time.sleep(max(0.0, born + 10.5 - time.monotonic()))
        sweeper = subprocess.run(in_fresh_pid_namespace(run_argv + [str(ok)]), capture_output=True, timeout=60,
                                 env=execeval_env())
        assert sweeper.returncode == 0, sweeper.stderr.decode()
        assert cgroups_named_for_pid(1) == [], "the sweep left a dead pid-1 execeval's cgroups"
    finally:
        if dead.poll() is None:
            dead.kill()
            dead.wait()
        for d in cgroups_named_for_pid(1):
            for sub, _, _ in sorted(os.walk(d), key=lambda w: -len(w[0])):
                try:
                    os.rmdir(sub)
                except OSError:
                    pass


# CPU starvation of a neighbour: each sandbox is one session, so the
# scheduler's autogroups give it one share, but setsid() is allowed: 50
# children that each call setsid() and spin took 50 of 51 shares from an
# honest concurrent candidate (before: it timed out with 38 ms of CPU in
# 3 s). It needs 0.5 s of CPU in 4 s: when a busy host makes it time out
# anyway, it got less than a quarter of its wall time, and its detail must
# say it was starved. Each sandbox (warm: each slot) is in a cpu cgroup: equal shares, at
# most one CPU.
SPINNER = dedent("""
    import os, time
    for _ in range(50):
        if os.fork() == 0:
            os.setsid()
            while True:
                pass
    time.sleep(60)
    """) + ADD_OK
CPU_BOUND = dedent("""
    import time
    time.sleep(0.3)  # the spinner's children are up by now
    while time.process_time() < 0.5:
        pass
    """) + ADD_OK


def cpu_controls(pid):
    """{cgroup: (shares, quota_us, n_tasks)} of the cpu-controller cgroups of
    the execeval of that pid (v1 cpu.shares/cpu.cfs_quota_us; v2 cpu.weight/
    cpu.max), read now."""
    from conftest import execeval_cgroups_of
    found = {}
    for top in execeval_cgroups_of(pid):
        for d, _, files in os.walk(top):
            if "cpu.shares" in files:
                share, quota = "cpu.shares", "cpu.cfs_quota_us"
            elif "cpu.weight" in files:
                share, quota = "cpu.weight", "cpu.max"
            else:
                continue
            try:
                with open(os.path.join(d, share)) as f1, open(os.path.join(d, quota)) as f2:
                    with open(os.path.join(d, "cgroup.procs" if share == "cpu.weight" else "tasks")) as f3:
                        found[d] = (f1.read().strip(), f2.read().strip(), len(f3.read().split()))
            except OSError:
                pass  # removed meanwhile
    return found


@native_only("its command lines name no backend: native, as in the native pass")
@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_a_spinner_with_setsid_children_cannot_starve_its_neighbour(tmp_path, isolation):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"task_id": "cpu/add", "prompt": "", "tests": [
        {"kind": "assert", "code": a} for a in ASSERTS]}) + "\n")
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps({"task_id": "cpu/add", "code": c}) + "\n" for c in (SPINNER, CPU_BOUND)))
    out = tmp_path / "results.jsonl"
    argv = [EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-o", str(out), "-j", "2", "-q",
            "--timeout", "4", "--isolation", isolation]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=execeval_env())
    seen = {}
    try:
        deadline = time.monotonic() + 60
        while p.poll() is None and time.monotonic() < deadline:
            for d, v in cpu_controls(p.pid).items():
                if v[2] >= seen.get(d, (0, 0, -1))[2]:
                    seen[d] = v
            time.sleep(0.05)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    recs = {json.loads(line)["sample"]: json.loads(line) for line in out.read_text().splitlines()}
    spinner, honest = recs[0], recs[1]
    # On a loaded host even the spinner gets less than its CPU: "starved" is
    # a fact about the CPU it got, not about the candidate.
    assert spinner["status"] == "timeout" and spinner["detail"].startswith("timeout"), spinner
    if honest["status"] == "timeout":  # a loaded host: then it must say so
        assert honest["detail"].startswith("timeout (starved: "), honest
    else:
        assert (honest["status"], honest["detail"]) == ("pass", None), honest
        assert honest["resources"]["cpu_ms"] >= 490, honest["resources"]
    # Host evidence, read while it ran: every sandbox (cold) or slot (warm)
    # had equal shares and a quota of one CPU; the spinner's children were
    # inside one of them (20 or more at once: an ASan build forks slowly).
    limited = {d: v for d, v in seen.items() if v[0] in ("1024", "100") and v[1] in ("100000", "100000 100000")}
    assert limited, "no cpu cgroup with shares and a one-CPU quota was seen: %s" % seen
    assert all(v[0] in ("1024", "100") for v in seen.values()), seen
    crowded = [d for d, v in seen.items() if v[2] >= 20]
    assert crowded, "the spinner's children were in no cpu cgroup of execeval: %s" % seen
    # ... and each cgroup holding them is a limited one or lies below one.
    assert all(any(c == d or c.startswith(d + os.sep) for d in limited) for c in crowded), seen
