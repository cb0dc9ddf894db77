"""The process tree of docs/sandbox.md, checked against a live sandbox.

docs/sandbox.md states, for each process execeval has, its uid, its
namespaces, its cgroups, its seccomp filter, its capabilities, its limits,
its mounts and its descriptors. This file checks the facts that are cheap
to check, on a live sandbox, cold, warm and unprivileged (execeval dropped
to uid 65534 with setpriv), so the page cannot go stale
silently: a candidate that writes what it sees of itself to its /tmp and
waits; meanwhile the test reads every process of the tree from the host
side (/proc/<pid>/...), then lets it finish.

Run as a script (inside the safety net) it prints what it saw, the values
the page quotes:

    tests/e2e/safety-net /usr/bin/python3 tests/e2e/test_process_tree.py [cold|warm|unprivileged]

Where the page describes a gap rather than a guarantee, the test that
would fail is a strict xfail naming it.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import EXECEVAL, SANDBOX_UID_BASE, SANDBOX_UID_COUNT
from serve_client import serve  # noqa: F401 (fixture)

NAMESPACES = ("user", "pid", "mnt", "net", "ipc", "uts", "cgroup", "time")
TIMEOUT_S = 20  # the sandbox's clock; the candidate waits for the test's word, at most 15 s

# What the candidate reports of itself: written to its own /tmp, read by the
# test through /proc/<pid>/root (no 8000-character cap as on stdout).
CANDIDATE = r'''
import json, os, time

def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        return "error %d" % e.errno

def readlink(path):
    try:
        return os.readlink(path)
    except OSError as e:
        return "error %d" % e.errno

def listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError as e:
        return "error %d" % e.errno

fds = {}
for fd in listdir("/proc/self/fd"):
    fds[fd] = readlink("/proc/self/fd/" + fd)  # the listing's own fd reads "error 2"
view = {
    "status": read("/proc/self/status"),
    "uid_map": read("/proc/self/uid_map"),
    "gid_map": read("/proc/self/gid_map"),
    # by name: warm, the directory is root's and unreadable (non-dumpable)
    "ns": {n: readlink("/proc/self/ns/" + n) for n in ("user", "pid", "mnt", "net", "ipc", "uts", "cgroup", "time")},
    "ns_dir": listdir("/proc/self/ns"),
    "cgroup": read("/proc/self/cgroup"),
    "limits": read("/proc/self/limits"),
    "mountinfo": read("/proc/self/mountinfo"),
    "fds": fds,
    "ids": {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(), "groups": os.getgroups(),
            "pid": os.getpid(), "ppid": os.getppid(), "sid": os.getsid(0), "pgid": os.getpgid(0)},
    "hostname": os.uname().nodename,
    "cwd": os.getcwd(),
    "env": dict(os.environ),
    "root": listdir("/"),
    "init_status": read("/proc/1/status"),
    "init_fd": listdir("/proc/1/fd"),
    "init_environ": read("/proc/1/environ"),
    "pids": [p for p in listdir("/proc") if p.isdigit()],
}
with open("/tmp/view.part", "w") as f:
    json.dump(view, f)
os.rename("/tmp/view.part", "/tmp/view.json")
deadline = time.monotonic() + 15
while os.path.exists("/tmp/view.json") and time.monotonic() < deadline:  # the test's word
    time.sleep(0.01)
'''


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def status_fields(text):
    """/proc/<pid>/status as {field: value}."""
    return dict((k, v.strip()) for k, v in (line.split(":", 1) for line in (text or "").splitlines() if ":" in line))


def parse_limits(text):
    """/proc/<pid>/limits as {name: (soft, hard)}."""
    out = {}
    for line in (text or "").splitlines()[1:]:
        m = re.match(r"(.+?)\s{2,}(\S+)\s+(\S+)", line)
        if m:
            out[m.group(1).strip()] = (m.group(2), m.group(3))
    return out


def parse_cgroup(text):
    """/proc/<pid>/cgroup as {controllers: path} ("" for v2)."""
    out = {}
    for line in (text or "").splitlines():
        _, ctrls, path = line.split(":", 2)
        out[ctrls] = path
    return out


def children(pid):
    """Live children of pid, from /proc/*/stat."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = _read("/proc/%s/stat" % name)
        if not stat:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid and fields[0] not in "ZX":
            out.append(int(name))
    return sorted(out)


def host_view(pid):
    """What the host sees of a process."""
    fds = {}
    try:
        for fd in sorted(os.listdir("/proc/%d/fd" % pid), key=int):
            try:
                fds[fd] = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                pass
    except OSError:
        pass
    ns = {}
    for n in NAMESPACES:
        try:
            ns[n] = os.readlink("/proc/%d/ns/%s" % (pid, n))
        except OSError:
            ns[n] = None
    cmdline = (_read("/proc/%d/cmdline" % pid) or "").split("\0")
    try:
        exe = os.readlink("/proc/%d/exe" % pid)
    except OSError:
        exe = None
    return {
        "pid": pid,
        "status": status_fields(_read("/proc/%d/status" % pid)),
        "ns": ns,
        "cgroup": parse_cgroup(_read("/proc/%d/cgroup" % pid)),
        "limits": parse_limits(_read("/proc/%d/limits" % pid)),
        "uid_map": _read("/proc/%d/uid_map" % pid),
        "fds": fds,
        "cmdline": cmdline,
        "exe": exe,
        "threads": len(os.listdir("/proc/%d/task" % pid)),
    }


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.01)
    raise AssertionError("timed out waiting for " + what)


def cgroup_mounts():
    """{controller or "" (v2): mount point} from our mountinfo."""
    out = {}
    for line in (_read("/proc/self/mountinfo") or "").splitlines():
        left, right = line.split(" - ", 1)
        fstype, _, opts = right.split()[:3]
        if fstype == "cgroup2":
            out.setdefault("", left.split()[4])
        elif fstype == "cgroup":
            for o in opts.split(","):
                out.setdefault(o, left.split()[4])
    return out


# The limit files cgroup.c writes (setup_memory, setup_pids, setup_cpu), per hierarchy.
LIMIT_FILES = {"memory": ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"), "pids": ("pids.max",),
               "cpu": ("cpu.shares", "cpu.cfs_period_us", "cpu.cfs_quota_us"),
               "": ("memory.max", "memory.swap.max", "memory.oom.group", "pids.max", "cpu.weight", "cpu.max")}


def cgroup_limit_files(cgroup, warm):
    """{file: value} of the payload's cgroups; warm, the cpu limits are its
    slot's top cgroup's (the parent of worker/)."""
    mnt, out = cgroup_mounts(), {}
    for ctrls, files in LIMIT_FILES.items():
        if ctrls not in cgroup or ctrls not in mnt or (ctrls == "" and "memory" in cgroup):
            continue
        d = mnt[ctrls] + cgroup[ctrls]
        for f in files:
            where = os.path.dirname(d) if warm and f.startswith("cpu.") else d
            value = _read(os.path.join(where, f))
            if value is not None:
                out[f] = value.strip()
    return out


# "unprivileged": cold, execeval dropped to uid/gid 65534 (as
# test_unprivileged.py does), so in a user namespace and without cgroups.
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


def observe(isolation):
    """Runs the candidate under `execeval run --isolation ISOLATION` (or
    "unprivileged") and returns {role: host view} for supervisor, init,
    payload (and worker, warm), the candidate's own view ("inside") and the
    record."""
    # --judge inline: one sandbox, the candidate's, whose tree this reads
    # (a split judge's sandbox is made by the same code, src/sandbox).
    argv = [EXECEVAL, "run", "--judge", "inline", "--timeout", str(TIMEOUT_S), "--assert", "assert True", "-"]
    if isolation == "unprivileged":
        argv = AS_NOBODY + argv[:2] + ["--weak-limits"] + argv[2:]
    else:
        argv[2:2] = ["--isolation", isolation]
    # The candidate on stdin: nothing needs to be readable by uid 65534.
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/")
    p.stdin.write(CANDIDATE.encode())
    p.stdin.close()
    p.stdin = None  # for communicate()
    tree = {"supervisor": p.pid}
    try:
        def payload_ready():
            # cold: supervisor -> init -> payload; warm: supervisor -> worker -> init -> payload
            chain = [p.pid]
            for _ in range(3 if isolation == "warm" else 2):
                kids = children(chain[-1])
                if len(kids) != 1:
                    return None
                chain.append(kids[0])
            return chain if os.path.exists("/proc/%d/root/tmp/view.json" % chain[-1]) else None

        chain = wait_for(payload_ready, 15, "the candidate's view")
        roles = ["supervisor", "worker", "init", "payload"] if isolation == "warm" else \
            ["supervisor", "init", "payload"]
        tree = dict(zip(roles, chain))
        seen = {role: host_view(pid) for role, pid in tree.items()}
        with open("/proc/%d/root/tmp/view.json" % tree["payload"]) as f:
            seen["inside"] = json.load(f)
        seen["payload"]["mountinfo"] = _read("/proc/%d/mountinfo" % tree["payload"])
        seen["limit_files"] = cgroup_limit_files(seen["payload"]["cgroup"], isolation == "warm")
        # Removed, not a file made: in a user namespace without root a file
        # of the host's root could not be created (EOVERFLOW).
        os.unlink("/proc/%d/root/tmp/view.json" % tree["payload"])
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    seen["record"] = json.loads(out.decode()) if out.strip() else None
    seen["stderr"] = err.decode("utf-8", "replace")
    seen["exit"] = p.returncode
    return seen


# ---------------------------------------------------------------------------
# What the page states, as checks.


def is_sandbox_uid(uid):
    return SANDBOX_UID_BASE <= uid < SANDBOX_UID_BASE + SANDBOX_UID_COUNT


def ids(view, field):
    return [int(x) for x in view["status"][field].split()]


def capsets(view):
    return {k: int(view["status"][k], 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}


def mounts(mountinfo):
    """{mount point: (per-mount options set, fs type)} from a mountinfo text."""
    out = {}
    for line in mountinfo.splitlines():
        left, right = line.split(" - ", 1)
        f = left.split()
        out[f[4]] = (set(f[5].split(",")), right.split()[0])
    return out


@pytest.fixture(scope="module", params=["cold", "warm"])
def tree(request):
    if os.geteuid() != 0:
        pytest.skip("the page's table is of execeval as root")
    seen = observe(request.param)
    seen["isolation"] = request.param
    assert seen["exit"] == 0 and seen["record"]["status"] == "pass", (seen["record"], seen["stderr"])
    return seen


def test_supervisor_is_one_thread_without_filter(tree):
    s = tree["supervisor"]
    assert s["threads"] == 1
    assert s["status"]["Seccomp"] == "0"
    assert ids(s, "Uid") == [0, 0, 0, 0]


def test_payload_runs_as_its_own_uid_without_groups(tree):
    uid = ids(tree["payload"], "Uid")
    assert len(set(uid)) == 1 and is_sandbox_uid(uid[0]), uid
    assert ids(tree["payload"], "Gid") == uid
    assert tree["payload"]["status"]["Groups"] == ""
    # As root no user namespace: the candidate sees the host's number.
    inside = tree["inside"]["ids"]
    assert inside["uid"] == inside["euid"] == inside["gid"] == uid[0] and inside["groups"] == []
    assert tree["inside"]["uid_map"].split() == ["0", "0", "4294967295"]
    # The init runs as the same uid, cold and warm.
    assert ids(tree["init"], "Uid") == uid


def test_namespaces(tree):
    s, init, pay = tree["supervisor"]["ns"], tree["init"]["ns"], tree["payload"]["ns"]
    # Never new: user (as root) and time.
    for n in ("user", "time"):
        assert pay[n] == init[n] == s[n], n
    for n in ("pid", "mnt", "ipc", "uts", "net", "cgroup"):
        assert pay[n] != s[n], n
    if tree["isolation"] == "cold":
        # The payload is a plain fork of its init: one set of namespaces, but
        # the init entered its cgroup namespace after the clone.
        for n in ("pid", "mnt", "net", "ipc", "uts", "cgroup"):
            assert pay[n] == init[n], n
    else:
        w = tree["worker"]["ns"]
        assert pay["net"] == w["net"]  # shared by the worker's candidates
        for n in ("pid", "mnt", "ipc", "uts", "cgroup"):
            assert pay[n] != w[n], n
        # The init is pid 1 of the candidate's pid namespace but stays in
        # the worker's mount, ipc, uts, net and cgroup namespaces; the
        # worker never leaves the supervisor's cgroup namespace.
        assert init["pid"] == pay["pid"] != w["pid"]
        for n in ("mnt", "ipc", "uts", "net", "cgroup"):
            assert init[n] == w[n], n
        for n in ("pid", "mnt", "net", "ipc", "uts"):
            assert w[n] != s[n], n
        assert w["cgroup"] == s["cgroup"]
    # The candidate's own view names the same namespaces.
    assert tree["inside"]["ns"] == pay
    # Every sandbox process makes itself non-dumpable (child.c:drop_privileges);
    # a cold payload's exec undoes it, a warm one never execs: its /proc/<pid>
    # entries are root's, and its ns directory unreadable.
    expect = "error 13" if tree["isolation"] == "warm" else sorted(
        n for n in NAMESPACES + ("pid_for_children", "time_for_children"))
    assert tree["inside"]["ns_dir"] == expect
    # pid 1 inside is the init, and the payload its child.
    assert tree["inside"]["ids"]["ppid"] == 1
    assert tree["payload"]["status"]["NSpid"].split()[-1] == str(tree["inside"]["ids"]["pid"])
    assert tree["init"]["status"]["NSpid"].split()[-1] == "1"
    # A new session of its own (no controlling terminal).
    assert tree["inside"]["ids"]["sid"] == tree["inside"]["ids"]["pid"]


def test_payload_has_filter_no_capabilities_no_new_privs(tree):
    st = tree["payload"]["status"]
    assert st["Seccomp"] == "2" and st["NoNewPrivs"] == "1"
    assert capsets(tree["payload"]) == dict.fromkeys(("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"), 0)
    assert status_fields(tree["inside"]["status"])["Seccomp"] == "2"
    assert tree["payload"]["status"]["Seccomp_filters"] == "1"


def test_init_has_no_capabilities(tree):
    assert capsets(tree["init"]) == dict.fromkeys(("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"), 0)
    # Non-dumpable: the candidate, of the same uid, cannot open its fds.
    assert tree["inside"]["init_fd"] == "error 13"
    assert tree["inside"]["init_environ"] in ("", "error 13")


def test_cold_init_has_the_filter(tree):
    if tree["isolation"] != "cold":
        pytest.skip("cold only")
    st = tree["init"]["status"]
    assert st["Seccomp"] == "2" and st["NoNewPrivs"] == "1"


def test_warm_init_has_the_filter_too(tree):
    if tree["isolation"] != "warm":
        pytest.skip("cold: holds (test_cold_init_has_the_filter)")
    st = tree["init"]["status"]
    assert st["Seccomp"] == "2" and st["NoNewPrivs"] == "1"


def test_warm_worker(tree):
    if tree["isolation"] != "warm":
        pytest.skip("warm only")
    w = tree["worker"]
    assert w["cmdline"][:2] == ["execeval", "__worker"]
    assert ids(w, "Uid") == [0, 0, 0, 0]
    assert w["status"]["Seccomp"] == "0" and capsets(w)["CapBnd"] == 0
    assert w["status"]["NSpid"].split()[-1] == "1"
    assert w["fds"]["4"].startswith("socket:")


CG_NAME = r"execeval\.%d\.\d+-[0-9a-f]{8}\.\d+"


def test_cgroups(tree):
    """One cgroup per cold sandbox; warm, the slot's: memory, pids and
    cpuacct in top/candidate, the cpu controller in top/worker (v1)."""
    sup, pay = tree["supervisor"]["cgroup"], tree["payload"]["cgroup"]
    warm = tree["isolation"] == "warm"
    name = CG_NAME % tree["supervisor"]["pid"]
    if "memory" in sup:  # v1: one line per hierarchy
        leaf = {"memory": "/candidate", "pids": "/candidate", "cpuacct": "/candidate", "cpu": "/worker"}
        for ctrls in [c for c in leaf if c in sup]:
            pattern = re.escape(sup[ctrls].rstrip("/")) + "/" + name + (leaf[ctrls] if warm else "")
            assert re.fullmatch(pattern, pay[ctrls]), (ctrls, pay[ctrls], pattern)
    else:  # v2: the supervisor may have moved itself to a leaf of its own
        parent = re.sub(r"/execeval\.supervisor\.\d+$", "", sup[""].rstrip("/"))
        pattern = re.escape(parent) + "/" + name + ("/candidate" if warm else "")
        assert re.fullmatch(pattern, pay[""]), (pay[""], pattern)
    # Inside, a cgroup namespace rooted at the sandbox's cgroup.
    for line in tree["inside"]["cgroup"].splitlines():
        ctrls, path = line.split(":", 2)[1:]
        if ctrls in ("memory", "pids", "cpuacct") or (ctrls == "" and "memory" not in sup):
            assert path == "/", line


def test_cgroup_limits(tree):
    """The defaults (--memory 512, --procs 64), one CPU, equal shares."""
    got = tree["limit_files"]
    if "memory.limit_in_bytes" in got:
        assert got["memory.limit_in_bytes"] == str(512 << 20)
        assert got.get("memory.memsw.limit_in_bytes", str(512 << 20)) == str(512 << 20)
        assert got["cpu.shares"] == "1024" and got["cpu.cfs_quota_us"] == got["cpu.cfs_period_us"] == "100000"
    else:
        assert got["memory.max"] == str(512 << 20) and got["memory.swap.max"] == "0"
        assert got.get("cpu.max", "100000 100000") == "100000 100000"
    assert got["pids.max"] == "64"


def test_mounts(tree):
    m = mounts(tree["inside"]["mountinfo"])
    # Nothing of the host but the plan's table (mount.c:host_paths).
    assert {"dev", "etc", "proc", "tmp", "usr"} <= set(tree["inside"]["root"]) <= {
        "bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "tmp", "usr"}
    assert "ro" in m["/"][0] and m["/"][1] == "tmpfs"
    assert {"ro", "nosuid", "nodev"} <= m["/usr"][0]
    assert {"ro", "nosuid"} <= m["/dev"][0]
    assert {"rw", "nosuid", "nodev"} <= m["/tmp"][0] and m["/tmp"][1] == "tmpfs"
    assert {"nosuid", "nodev", "noexec"} <= m["/proc"][0] and m["/proc"][1] == "proc"
    for dev in ("null", "zero", "full", "random", "urandom"):
        assert {"nosuid", "noexec"} <= m["/dev/" + dev][0]
    for point, (opts, _) in m.items():
        if point not in ("/tmp", "/proc") and not point.startswith("/dev/"):
            assert "ro" in opts, point
    assert tree["inside"]["cwd"] == "/tmp" and tree["inside"]["hostname"] == "sandbox"


def test_payload_descriptors(tree):
    fds = {fd: target for fd, target in tree["inside"]["fds"].items() if not target.startswith("error")}
    assert fds["0"] == "/dev/null"
    for fd in ("1", "2", "4", "5"):
        assert fds[fd].startswith("pipe:"), (fd, fds[fd])
    # The job (3) was read and closed by the harness; cold, 6 is the
    # harness's pyc memfd the interpreter was started from.
    cold_extra = {"6": "/memfd:execeval-harness.pyc (deleted)"} if tree["isolation"] != "warm" else {}
    assert {fd: t for fd, t in fds.items() if fd not in ("0", "1", "2", "4", "5")} == cold_extra
    # The host sees the same pipes.
    assert tree["payload"]["fds"] == fds


def test_payload_limits(tree):
    lim = tree["payload"]["limits"]
    assert lim["Max cpu time"] == (str(TIMEOUT_S + 2), str(TIMEOUT_S + 3))
    assert lim["Max file size"] == (str(64 << 20), str(64 << 20))
    assert lim["Max open files"] == ("256", "256")
    assert lim["Max core file size"] == ("0", "0")
    assert lim["Max locked memory"] == ("0", "0")
    assert lim["Max address space"] == ("unlimited", "unlimited")  # a memory cgroup holds it


def test_clean_environment(tree):
    env = tree["inside"]["env"]
    assert env.get("HOME") == "/tmp" and env.get("PATH") == "/usr/local/bin:/usr/bin:/bin"
    assert set(env) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONIOENCODING", "OPENBLAS_NUM_THREADS",
                        "OMP_NUM_THREADS", "LC_CTYPE"}


@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_serve_is_one_thread_and_its_workers(serve, isolation):  # noqa: F811 (fixture)
    """serve drives libmicrohttpd from its own loop: no thread of its own;
    warm, its children are the workers, two per -j slot (the candidate's
    and the split judge's; the sessions' two come at the first session,
    test_sessions.py); cold, while idle, at most the slots' long-lived
    judges (the start-up check left one); with --judge inline, the -j
    workers, or none."""
    if os.geteuid() != 0:
        pytest.skip("warm needs root")
    for judge, workers in (("split", 4), ("inline", 2)):
        s = serve("--isolation", isolation, "--judge", judge, jobs=2)
        assert host_view(s.pid)["threads"] == 1
        kids = children(s.pid)
        # The workers warm up after the server listens: each is a clone
        # until it has exec'd `execeval __worker`.
        deadline = time.monotonic() + 30
        while isolation == "warm" and time.monotonic() < deadline and not (
                len(kids) == workers and all(host_view(k)["cmdline"][1:2] == ["__worker"] for k in kids)):
            time.sleep(0.05)
            kids = children(s.pid)
        if isolation == "warm":
            assert len(kids) == workers, (judge, kids)
            for k in kids:
                v = host_view(k)
                assert v["cmdline"][:2] == ["execeval", "__worker"] and v["status"]["NSpid"].split()[-1] == "1"
        else:
            assert len(kids) <= (2 if judge == "split" else 0), (judge, kids)
        s.stop()


# ---------------------------------------------------------------------------
# Unprivileged: a user namespace, no cgroup, the rlimits stand in.


@pytest.fixture(scope="module")
def unprivileged():
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to drop to uid 65534")
    seen = observe("unprivileged")
    seen["isolation"] = "unprivileged"
    if seen["exit"] == 3 and "user namespace" in seen["stderr"]:
        pytest.skip("user namespaces are off here: " + seen["stderr"])
    assert seen["exit"] == 0 and seen["record"]["status"] == "pass", (seen["record"], seen["stderr"])
    return seen


def test_unprivileged_user_namespace_maps_65534_to_the_caller(unprivileged):
    t = unprivileged
    assert t["payload"]["ns"]["user"] == t["init"]["ns"]["user"] != t["supervisor"]["ns"]["user"]
    assert t["inside"]["uid_map"].split() == ["65534", "65534", "1"]  # sandbox.c:write_id_maps, the caller 65534
    assert t["inside"]["ids"]["uid"] == t["inside"]["ids"]["gid"] == 65534
    for role in ("init", "payload"):
        st = t[role]["status"]
        assert st["Seccomp"] == "2" and st["NoNewPrivs"] == "1", role
        assert capsets(t[role]) == dict.fromkeys(("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"), 0), role
    for n in ("pid", "mnt", "net", "ipc", "uts"):
        assert t["payload"]["ns"][n] != t["supervisor"]["ns"][n], n


def test_unprivileged_no_cgroup_rlimits_stand_in(unprivileged):
    t = unprivileged
    # No cgroup of its own, so no cgroup namespace either: the sandbox
    # stays in (and sees the path of) the supervisor's cgroups.
    assert t["payload"]["cgroup"] == t["supervisor"]["cgroup"]
    assert t["payload"]["ns"]["cgroup"] == t["supervisor"]["ns"]["cgroup"]
    lim = t["payload"]["limits"]
    assert lim["Max address space"] == (str((512 + 128) << 20),) * 2  # child.c:set_rlimits
    assert lim["Max processes"] == ("64", "64")
    # --weak-limits fits file size x open files inside --memory
    # (resource_limits.c:ee_limits_fit_weak): 512 MiB / 256 files.
    assert lim["Max file size"] == (str(2 << 20),) * 2 and lim["Max open files"] == ("256", "256")


def test_unprivileged_mounts_descriptors_environment(unprivileged):
    test_mounts(unprivileged)
    test_payload_descriptors(unprivileged)
    test_clean_environment(unprivileged)


def summarize(seen):
    """The page's figures: per role, ids, namespaces (new or whose), cgroups, filter, caps, limits, fds."""
    out = {}
    for role in ("supervisor", "worker", "init", "payload"):
        v = seen.get(role)
        if not v:
            continue
        owners = {}
        for n in NAMESPACES:
            same = [r for r in ("supervisor", "worker", "init") if r in seen and r != role
                    and seen[r]["ns"][n] == v["ns"][n]]
            owners[n] = v["ns"][n] + (" = " + ",".join(same) if same else " (new)")
        out[role] = {
            "pid": v["pid"], "NSpid": v["status"].get("NSpid"), "Uid": v["status"]["Uid"], "Gid": v["status"]["Gid"],
            "Groups": v["status"]["Groups"], "Seccomp": v["status"]["Seccomp"],
            "NoNewPrivs": v["status"]["NoNewPrivs"], "caps": {k: hex(x) for k, x in capsets(v).items()},
            "threads": v["threads"], "cmdline": v["cmdline"][:5], "exe": v["exe"], "ns": owners,
            "cgroup": v["cgroup"], "fds": v["fds"],
            "limits": {k: x for k, x in v["limits"].items()
                       if k in ("Max cpu time", "Max file size", "Max open files", "Max core file size",
                                "Max locked memory", "Max address space", "Max processes")},
        }
    inside = seen["inside"]
    keys = ("uid_map", "ns", "ns_dir", "cgroup", "fds", "ids", "hostname", "cwd", "env", "root", "pids")
    out["inside"] = {k: inside[k] for k in keys}
    out["inside"]["status"] = {k: status_fields(inside["status"]).get(k) for k in
                               ("Uid", "Gid", "Groups", "NSpid", "Seccomp", "NoNewPrivs", "CapEff", "CapBnd")}
    out["inside"]["init_status"] = {k: status_fields(inside["init_status"]).get(k) for k in
                                    ("Name", "Uid", "NSpid", "Seccomp", "NoNewPrivs", "CapEff", "CapBnd")}
    out["inside"]["init_fd"] = inside["init_fd"]
    out["inside"]["mounts"] = {p: sorted(o) + [t] for p, (o, t) in mounts(inside["mountinfo"]).items()}
    out["limit_files"] = seen["limit_files"]
    out["record_status"] = seen["record"] and seen["record"]["status"]
    out["kernel"] = os.uname().release
    return out


if __name__ == "__main__":
    if os.getpid() != 1:
        sys.exit("run inside the safety net: tests/e2e/safety-net /usr/bin/python3 %s" % sys.argv[0])
    for iso in sys.argv[1:] or ["cold", "warm", "unprivileged"]:
        print(json.dumps({iso: summarize(observe(iso))}, indent=1))
