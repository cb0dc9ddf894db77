"""Tripwires and the circuit breaker (issue 18, sections 3 and 4).

A candidate's refused attempts are counted in its record's "violations"
(docs/record.md): refused system calls by name, seen by the supervisor
through seccomp's user notification and answered EPERM as before; denied
imports; limits hit. --events FILE logs each sandbox's life. --breaker
"RATE over N" stops eval (exit 4, records kept, --resume continues) and
serve (503 / SandboxError, /healthz "tripped", POST /v1/admin/resume) when
too many of the last N candidates made escape-class attempts.

Hostile candidates run only through execeval (the run fixture and eval),
inside the safety net.
"""
import json
import os
import subprocess
import textwrap
import threading

import pytest

from conftest import EXECEVAL, REPO, execeval_env, with_isolation
from serve_client import serve  # noqa: F401 (fixture)
from test_eval import HUMANEVAL, MBPP, MBPP_KNOWN_FAILURES, needs_humaneval, needs_mbpp

ADD_OK = "def add(a, b):\n    return a + b\n"
ASSERTS = ["assert add(1, 2) == 3"]

# Escape-class attempts, each refused; the candidate reports the errnos it saw.
HOSTILE = textwrap.dedent("""
    import json
    ctypes = __import__("ctypes")
    socket = __import__("socket")
    libc = ctypes.CDLL(None, use_errno=True)
    seen = {}
    for fam in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.socket(fam, socket.SOCK_STREAM)
            seen.setdefault("socket", []).append(0)
        except OSError as e:
            seen.setdefault("socket", []).append(e.errno)
    def call(name, *args):
        r = getattr(libc, name)(*args)
        seen[name] = ctypes.get_errno() if r == -1 else 0
    call("ptrace", 0, 0, 0, 0)
    call("unshare", 0x10000000)
    call("mount", b"none", b"/tmp", b"tmpfs", 0, None)
    call("setuid", 0)
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # allowed: not counted
    u.close()
    print("REPORT " + json.dumps(seen))
""") + ADD_OK

HOSTILE_NET = ("socket = __import__('socket')\n"
               "try:\n    socket.socket(socket.AF_INET, socket.SOCK_STREAM)\nexcept OSError:\n    pass\n"
               + ADD_OK)

TASK = {"task_id": "trip/add", "prompt": "", "tests": [{"kind": "assert", "code": a} for a in ASSERTS]}


def report(rec):
    for line in rec["stdout"].splitlines():
        if line.startswith("REPORT "):
            return json.loads(line[len("REPORT "):])
    raise AssertionError("no REPORT line: %r" % rec["stdout"][:500])


@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_refused_calls_are_counted_by_name_and_still_fail_with_eperm(run, isolation):
    code, rec, stderr = run(HOSTILE, asserts=ASSERTS, args=["--allow-imports", "--isolation", isolation])
    assert rec is not None, stderr
    assert rec["status"] == "pass", rec
    # What the candidate saw is what the filter answered before: EPERM.
    assert report(rec) == {"socket": [1, 1], "ptrace": 1, "unshare": 1, "mount": 1, "setuid": 1}, rec
    assert rec["violations"] == {"socket": 2, "ptrace": 1, "unshare": 1, "mount": 1, "setuid": 1}, rec


def test_a_flood_of_refused_calls_is_capped_then_answered_by_the_kernel(run):
    flood = textwrap.dedent("""
        import json
        ctypes = __import__("ctypes")
        libc = ctypes.CDLL(None, use_errno=True)
        errs = {}
        for i in range(10500):
            libc.syscall(165, 0, 0, 0, 0, 0)  # x86_64 mount
            e = ctypes.get_errno()
            errs[e] = errs.get(e, 0) + 1
        print("REPORT " + json.dumps(errs))
    """) + ADD_OK
    _, rec, stderr = run(flood, asserts=ASSERTS, args=["--allow-imports", "--timeout", "20"])
    assert rec["status"] == "pass", rec
    assert report(rec) == {"1": 10000, "38": 500}, rec  # EPERM, then ENOSYS
    # Paced too (2000 at once, then 1000 a second): it waited.
    assert rec["violations"] == {"mount": 10000, "uncounted": 1, "call_rate_limit": 1}, rec


def test_an_honest_candidate_has_no_violations_key(run):
    code, rec, stderr = run(ADD_OK, asserts=ASSERTS)
    assert rec["status"] == "pass", rec
    assert "violations" not in rec, rec


def test_denied_imports_and_limits_are_counted(run):
    _, rec, _ = run("import socket\n" + ADD_OK, asserts=ASSERTS)
    assert rec["violations"].get("denied_import", 0) >= 1, rec
    _, rec, _ = run(ADD_OK + "while True:\n    pass\n", asserts=ASSERTS, args=["--timeout", "0.5"])
    assert rec["status"] == "timeout" and rec["violations"] == {"time_limit": 1}, rec


# Writes outside /tmp: the read-only mounts refuse them (or the directory
# does not exist inside); each is counted as write_outside_tmp.
OUTSIDE_WRITER = textwrap.dedent("""
    import errno, json, os
    MARK = %r
    out = {}
    def attempt(key, fn):
        try:
            fn()
            out[key] = "written"
        except OSError as e:
            out[key] = errno.errorcode.get(e.errno, str(e.errno))
    for key, path in (("root", "/" + MARK), ("usr", "/usr/" + MARK), ("home", "/home/" + MARK),
                      ("etc", "/etc/" + MARK)):
        attempt(key, lambda p=path: open(p, "w").close())
    attempt("mkdir_usr", lambda: os.mkdir("/usr/" + MARK + ".d"))
    attempt("rename_into_usr", lambda: os.rename("/tmp", "/usr/" + MARK + ".r"))
    os.chdir("/usr/lib")
    attempt("cwd_relative", lambda: open(MARK, "w").close())
    print("REPORT " + json.dumps(out))
""") + ADD_OK

# Writes an honest program makes: /tmp (absolute, relative to its cwd,
# tempfile), /dev/null, /dev/shm (multiprocessing's semaphores).
HONEST_WRITER = textwrap.dedent("""
    import json, multiprocessing, os, tempfile
    open("/tmp/a", "w").write("x")
    open("b", "w").write("y")
    os.mkdir("d")
    os.rename("b", "d/c")
    os.symlink("/tmp/a", "/tmp/l")
    os.chmod("/tmp/a", 0o600)
    os.utime("/tmp/a")
    os.truncate("/tmp/a", 0)
    with tempfile.TemporaryDirectory() as t:
        open(os.path.join(t, "f"), "w").close()
    with tempfile.NamedTemporaryFile() as f:
        f.write(b"z")
    with open(os.devnull, "w") as n:
        n.write("gone")
    lock = multiprocessing.Lock()
    with lock:
        pass
    open("/dev/shm/s", "w").close()
    os.unlink("/tmp/l")
    print("REPORT " + json.dumps(sorted(os.listdir("/tmp"))))
""") + ADD_OK


@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_writes_outside_tmp_are_counted_and_never_reach_the_host(run, marker, isolation):
    code, rec, stderr = run(OUTSIDE_WRITER % str(marker), asserts=ASSERTS, args=["--isolation", isolation])
    assert rec is not None, stderr
    assert rec["status"] == "pass", rec
    seen = report(rec)
    # What the candidate saw: refused by the mounts, not by the counting.
    assert seen == {"root": "EROFS", "usr": "EROFS", "home": "ENOENT", "etc": "EROFS", "mkdir_usr": "EROFS",
                    "rename_into_usr": seen["rename_into_usr"], "cwd_relative": "EROFS"}, seen
    assert seen["rename_into_usr"] in ("EROFS", "EXDEV", "EBUSY"), seen
    # Each attempt counted once; nothing else (no refused call).
    assert rec["violations"] == {"write_outside_tmp": 7}, rec
    # Host evidence: no file of the marker where the candidate aimed.
    for path in ("/%s" % marker, "/usr/%s" % marker, "/home/%s" % marker, "/etc/%s" % marker,
                 "/usr/%s.d" % marker, "/usr/%s.r" % marker, "/usr/lib/%s" % marker):
        assert not os.path.exists(path), path


@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_honest_writes_in_tmp_are_not_violations(run, isolation):
    code, rec, stderr = run(HONEST_WRITER, asserts=ASSERTS, args=["--isolation", isolation])
    assert rec is not None, stderr
    assert rec["status"] == "pass", rec
    assert report(rec) == ["a", "d", "s"], rec  # /dev/shm is /tmp
    assert "violations" not in rec, rec


def test_write_outside_tmp_is_not_escape_class_for_the_breaker(tmp_path, marker):
    """A write outside /tmp is counted (class filesystem) but is not an
    escape-class attempt: "0 over 10" does not trip on it."""
    tasks, samples = write_set(tmp_path, [OUTSIDE_WRITER % str(marker)] * 2)
    out = tmp_path / "out.jsonl"
    p = subprocess.run(eval_cmd(tasks, samples, out, "--breaker", "0 over 10"), capture_output=True, text=True,
                       env=execeval_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    assert [r["violations"] for r in records(out)] == [{"write_outside_tmp": 7}] * 2


def write_set(tmp_path, programs):
    tasks = tmp_path / "tasks.jsonl"
    samples = tmp_path / "samples.jsonl"
    tasks.write_text(json.dumps(TASK) + "\n")
    samples.write_text("".join(json.dumps({"task_id": TASK["task_id"], "sample": i, "model": "m", "code": p}) + "\n"
                               for i, p in enumerate(programs)))
    return tasks, samples


def eval_cmd(tasks, samples, out, *extra):
    return with_isolation([EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-o", str(out),
                           "-q", "--allow-imports", "-j", "1", *extra])


def records(path):
    return [json.loads(line) for line in open(path)]


def test_breaker_stops_eval_with_exit_4_keeps_records_and_resume_continues(tmp_path):
    # samples 3, 5, 6 attack: the third is more than 0.2 of 10 and trips it.
    progs = [HOSTILE_NET if i in (3, 5, 6, 7) else ADD_OK for i in range(12)]
    tasks, samples = write_set(tmp_path, progs)
    out = tmp_path / "out.jsonl"
    events = tmp_path / "events.jsonl"
    p = subprocess.run(eval_cmd(tasks, samples, out, "--breaker", "0.2 over 10", "--events", str(events)),
                       capture_output=True, text=True, env=execeval_env(), timeout=120)
    assert p.returncode == 4, p.stderr
    assert "stopped by the circuit breaker: 3 of the last 7 candidates" in p.stderr, p.stderr
    assert "--resume" in p.stderr
    got = records(out)
    assert [r["sample"] for r in got] == list(range(7)), got
    assert [r["sample"] for r in got if r.get("violations")] == [3, 5, 6]
    assert all(r["violations"] == {"socket": 1} for r in got if r.get("violations"))
    lines = [json.loads(line) for line in open(events)]
    kinds = [e["event"] for e in lines]
    assert kinds.count("provisioned") == 7 and kinds.count("torn_down") == 7, kinds
    assert kinds[-1] == "breaker_tripped", kinds
    v = [e for e in lines if e["event"] == "violation"]
    assert [(e["sample"], e["kind"], e["class"], e["count"]) for e in v] == \
        [(3, "socket", "network", 1), (5, "socket", "network", 1), (6, "socket", "network", 1)]
    ids = {r["sandbox_id"] for r in got}
    assert {e["sandbox_id"] for e in lines if "sandbox_id" in e} == ids
    assert all(e["model"] == "m" and e["task"] == "trip/add" for e in lines if e["event"] != "breaker_tripped")

    # A person looked: --resume starts the window over and finishes the set.
    p = subprocess.run(eval_cmd(tasks, samples, out, "--breaker", "0.2 over 10", "--resume"),
                       capture_output=True, text=True, env=execeval_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    assert [r["sample"] for r in records(out)] == list(range(12))

    # The summary tallies them by class (docs/summary.md).
    js = tmp_path / "summary.json"
    p = subprocess.run([EXECEVAL, "metrics", str(out), "--json", str(js)], capture_output=True, text=True,
                       env=execeval_env(), timeout=60)
    assert p.returncode == 0, p.stderr
    assert "violations           4 samples (4 escape-class): network 4" in p.stdout, p.stdout
    summary = json.loads(js.read_text())
    assert summary["violations"] == {"samples": 4, "escape_samples": 4, "by_class": {"network": 4}}, summary
    assert summary["classes"][""]["violations"] == summary["violations"]


def test_breaker_rejects_a_malformed_spec(tmp_path):
    tasks, samples = write_set(tmp_path, [ADD_OK])
    for bad in ("5 over 10", "0.1 over 0", "0.1 over", "over 10", "0.1 over -3"):
        p = subprocess.run(eval_cmd(tasks, samples, tmp_path / "o.jsonl", "--breaker", bad),
                           capture_output=True, text=True, env=execeval_env(), timeout=60)
        assert p.returncode == 2 and "--breaker: expected \"RATE over N\"" in p.stderr, (bad, p.stderr)


def honest_eval(tmp_path, tasks, samples_rows):
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in samples_rows))
    return breaker_eval(tmp_path, tasks, samples)


def breaker_eval(tmp_path, tasks, samples):
    out = tmp_path / "out.jsonl"
    cmd = with_isolation([EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-o", str(out),
                          "-q", "-j", "2", "-k", "1", "--breaker", "0 over 10"])
    p = subprocess.run(cmd, capture_output=True, text=True, env=execeval_env(), timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    return records(out)


def no_escape(recs):
    for r in recs:
        assert not any(ee_class(k) for k in r.get("violations", {})), r


ESCAPE_KINDS = {"socket", "socketpair", "ptrace", "process_vm_readv", "mount", "umount2", "chroot", "unshare",
                "setns", "clone_namespace", "setuid", "setgid", "setresuid", "capset", "bpf", "keyctl", "ioctl"}


def ee_class(kind):
    return kind in ESCAPE_KINDS


@needs_humaneval
def test_humaneval_references_never_trip_the_breaker_and_make_no_refused_call(tmp_path):
    tasks = [json.loads(line) for line in HUMANEVAL.read_text().splitlines()]
    recs = honest_eval(tmp_path, HUMANEVAL,
                       [{"task_id": t["task_id"], "completion": t["canonical_solution"]} for t in tasks])
    assert len(recs) == len(tasks)
    assert all("violations" not in r for r in recs), [r for r in recs if "violations" in r][:3]


@needs_mbpp
def test_mbpp_references_never_trip_the_breaker(tmp_path):
    tasks = [json.loads(line) for line in MBPP.read_text().splitlines()]
    recs = honest_eval(tmp_path, MBPP, [{"task_id": t["task_id"], "code": t["code"]} for t in tasks])
    assert len(recs) == len(tasks)
    no_escape(recs)
    # Only the known slow reference hits a limit; none is refused a call.
    assert {str(r["task_id"]) for r in recs if "violations" in r} <= set(MBPP_KNOWN_FAILURES)
    assert all(set(r.get("violations", {})) <= {"time_limit"} for r in recs)


def test_the_example_set_never_trips_the_breaker(tmp_path):
    # Its hostile samples (fork and memory bombs, denied imports) are not escape-class.
    recs = breaker_eval(tmp_path, REPO / "examples" / "tasks.jsonl", REPO / "examples" / "samples.jsonl")
    no_escape(recs)
    assert any("violations" in r for r in recs)


def test_serve_breaker_trips_refuses_and_resumes(serve, tmp_path):
    token = "tripwire-token-0123456789"
    tf = tmp_path / "token"
    tf.write_text(token + "\n")
    s = serve("--token-file", str(tf), "--breaker", "0 over 5", "--allow-imports")
    a = s.request("POST", "/v1/run", {"task": TASK, "candidate": ADD_OK}, token=token)
    assert a.status == 200 and "violations" not in a.json, a
    a = s.request("POST", "/v1/run", {"task": TASK, "candidate": HOSTILE_NET}, token=token)
    assert a.status == 200 and a.json["violations"] == {"socket": 1}, a
    h = s.request("GET", "/healthz")
    assert h.status == 503 and h.json["status"] == "tripped" and "circuit breaker" in h.json["reason"], h
    a = s.request("POST", "/v1/run", {"task": TASK, "candidate": ADD_OK}, token=token)
    assert a.status == 503 and "circuit breaker" in a.json["error"], a
    a = s.request("POST", "/run_code", {"code": "print(1)", "language": "python"}, token=token)
    assert a.status == 503 and a.json["status"] == "SandboxError" and "circuit breaker" in a.json["message"], a
    m = s.request("GET", "/metrics", token=token).body.decode()
    assert 'execeval_violations_total{kind="socket",class="network"} 1' in m, m
    assert "execeval_breaker_tripped 1" in m and "execeval_breaker_trips_total 1" in m
    assert 'execeval_rejected_total{reason="tripped"} 2' in m
    # Only with the token.
    assert s.request("POST", "/v1/admin/resume", {}).status == 401
    a = s.request("POST", "/v1/admin/resume", {}, token=token)
    assert a.status == 200 and a.json == {"status": "ok", "was_tripped": True}, a
    assert s.request("GET", "/healthz").json["status"] == "ok"
    a = s.request("POST", "/v1/run", {"task": TASK, "candidate": ADD_OK}, token=token)
    assert a.status == 200 and a.json["status"] == "pass", a


def test_serve_admin_resume_needs_a_token_file(serve):
    s = serve("--breaker", "0 over 5")
    assert s.request("POST", "/v1/admin/resume", {}).status == 403


# A write flood beside an honest neighbour (issue 33): every open-for-write
# is a notification the supervisor's one loop answers. Paced per sandbox
# (src/sandbox/notify.h: 2000 at once, then 1000 a second, however many of
# its processes flood), the flood waits in the kernel on its own clock, and
# serve's own CPU and the neighbour's wall stay as they are beside a
# candidate that only sleeps as long. Both sides in one server, alternating
# (sleep-flood, flood-sleep), so a busy machine slows both alike.
FLOOD_S = 2.5
FLOODERS = 4
FLOOD = textwrap.dedent("""
    import os, time
    t0 = time.monotonic()
    r, w = os.pipe()
    kids = []
    for _ in range(%d):  # processes flood at once: as many cores, unpaced
        pid = os.fork()
        if pid == 0:
            kids = None
            break
        kids.append(pid)
    n = 0
    while time.monotonic() - t0 < %r:
        os.close(os.open("/tmp/f%%d" %% os.getpid(), os.O_WRONLY | os.O_CREAT, 0o600))
        n += 1
    os.write(w, b"%%d\\n" %% n)
    if kids is None:
        os._exit(0)
    for k in kids:
        os.waitpid(k, 0)
    os.close(w)
    print("OPENS %%d" %% sum(int(x) for x in os.fdopen(r).read().split()))
""" % (FLOODERS - 1, FLOOD_S)) + ADD_OK
SLEEPER = "import time\ntime.sleep(%r)\n" % FLOOD_S + ADD_OK
WORK = "def work():\n    s = 0\n    for i in range(1500000):\n        s += i * i\n    return s\n"
WORK_TASK = {"task_id": "trip/work", "prompt": "",
             "tests": [{"kind": "assert", "code": "assert work() == %d" % sum(i * i for i in range(1500000))}]}


def own_cpu_s(pid):
    """utime + stime of pid itself, its children not included."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def beside(s, program):
    """Runs program in one sandbox and, while it runs, the honest work in
    the other, again and again: (serve's CPU seconds, the neighbour's wall
    times in ms, program's record)."""
    box = {}
    cpu0 = own_cpu_s(s.pid)
    t = threading.Thread(target=lambda: box.update(a=s.request(
        "POST", "/v1/run", {"task": TASK, "candidate": program, "limits": {"timeout_s": FLOOD_S + 5}})))
    t.start()
    walls = []
    while t.is_alive() or len(walls) < 3:
        a = s.request("POST", "/v1/run", {"task": WORK_TASK, "candidate": WORK})
        assert a.status == 200 and a.json["status"] == "pass", a
        walls.append(a.json["resources"]["wall_ms"])
    t.join()
    assert box["a"].status == 200, box["a"]
    return own_cpu_s(s.pid) - cpu0, walls, box["a"].json


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def test_a_write_flood_costs_the_candidate_not_the_supervisor(serve):
    s = serve("--timeout", "10")
    s.request("POST", "/v1/run", {"task": WORK_TASK, "candidate": WORK})  # both workers warm
    cpu = {"sleep": 0.0, "flood": 0.0}
    walls = {"sleep": [], "flood": []}
    recs = {"sleep": [], "flood": []}
    for order in ((("sleep", SLEEPER), ("flood", FLOOD)), (("flood", FLOOD), ("sleep", SLEEPER))):
        for side, program in order:
            c, w, rec = beside(s, program)
            assert rec["status"] == "pass", rec
            cpu[side] += c
            walls[side] += w
            recs[side].append(rec)
    opens = [int(r["stdout"].split()[1]) for r in recs["flood"]]
    # serve's own CPU for the flood beyond the sleeper's: under 15% of a
    # core while it ran (about 3% paced; 45-55% before: 2.3-2.8 s for 5 s).
    extra = cpu["flood"] - cpu["sleep"]
    assert extra <= 0.15 * 2 * FLOOD_S, (cpu, opens)
    # The pace: 2000 at once, then 1000 a second (unpaced, 110,000-160,000).
    assert all(n <= 2000 + 1000 * FLOOD_S * 1.5 for n in opens), opens
    # It waited, and the record says so; nothing was refused.
    assert all(r["violations"] == {"call_rate_limit": 1} for r in recs["flood"]), recs["flood"]
    assert all("violations" not in r for r in recs["sleep"]), recs["sleep"]
    # The honest neighbour's wall beside the flood, against beside the
    # sleeper: generous, for a shared machine (1.2-2.3x before, when the
    # flood and the loop took a core or two; 0.8-1.2x paced).
    assert median(walls["flood"]) <= 1.6 * median(walls["sleep"]), walls
