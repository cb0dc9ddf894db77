"""Forking a live session (POST /v1/sessions/{id}/fork, docs/api.md;
docs/sandbox.md "Forking a session"): copies of the interpreter, each as
isolated from its siblings and its parent as two sessions are.

Correctness: a copy's next cell sees the parent's globals, modules and
/tmp, and a seeded `random` goes on identically in every copy. Isolation:
for each channel a copy could use to reach a sibling or its parent (/tmp,
processes and signals, abstract and path unix sockets, descriptors made
before the fork, shared mappings, uids, cgroups), a copy tries, and the
host checks what each copy got. Every case talks to a real `execeval
serve` on 127.0.0.1; the autouse host_evidence fixture checks that nothing
of any session or copy is left on the host afterwards.
"""
import os
import threading
import time

import pytest

from conftest import SANDBOX_UID_BASE, SANDBOX_UID_COUNT
from serve_client import run_cell as cell, start_session as start
from serve_client import serve  # noqa: F401 (fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a fork's copies need root (ptrace, namespaces)")
ISOLATION = [[], ["--isolation", "cold"]]


def value(srv, sid, code):
    a = cell(srv, sid, code)
    assert a["status"] == "ok", a
    return a["result"]


def fork(srv, sid, count):
    a = srv.post("/v1/sessions/%s/fork" % sid, {"count": count})
    assert a.status == 200, a
    assert a.json["id"] == sid and a.json["status"] == "forked" and len(a.json["ids"]) == count, a
    return [sid] + a.json["ids"]


def host_pids(uid):
    """The host's processes running as uid."""
    pids = []
    for name in os.listdir("/proc"):
        try:
            with open("/proc/%s/status" % name) as f:
                uids = [line.split()[1:] for line in f if line.startswith("Uid:")]
        except (OSError, ValueError):
            continue
        if uids and int(uids[0][0]) == uid:
            pids.append(int(name))
    return pids


def sandbox_uids():
    """The sandbox uids some process of the host runs as."""
    uids = set()
    for name in os.listdir("/proc"):
        try:
            with open("/proc/%s/status" % name) as f:
                uid = [int(line.split()[1]) for line in f if line.startswith("Uid:")][0]
        except (OSError, ValueError, IndexError):
            continue
        if SANDBOX_UID_BASE <= uid < SANDBOX_UID_BASE + SANDBOX_UID_COUNT:
            uids.add(uid)
    return uids


def namespaces(pid):
    return {k: os.stat("/proc/%d/ns/%s" % (pid, k)).st_ino for k in ("user", "pid", "mnt", "net", "ipc", "uts")}


@pytest.mark.parametrize("isolation", ISOLATION, ids=["warm", "cold"])
def test_a_copy_goes_on_from_the_parents_state(serve, isolation):
    srv = serve(*isolation)
    sid = start(srv, setup="import json\nK = 7")
    cell(srv, sid, "import random, os, collections\nrandom.seed(1234)\nx = collections.Counter('abca')\n"
                   "def f(n):\n    return n * K\n"
                   "with open('/tmp/kept.txt', 'w') as fh:\n    fh.write('before the fork')\n")
    ids = fork(srv, sid, 3)
    seen = []
    for i in ids:
        seen.append(value(srv, i, "(x['a'], f(6), json.dumps([1]), open('/tmp/kept.txt').read(), "
                                  "random.random(), random.randrange(10**9))"))
    # Every copy, the parent's included, continues the same seeded stream.
    assert len(set(seen)) == 1, seen
    assert seen[0].startswith("(2, 42, '[1]', 'before the fork', 0.")
    # The parent goes on under its id; each copy is a session of its own.
    assert value(srv, sid, "y = 1\ny") == "1"
    a = cell(srv, ids[1], "y")
    assert a["status"] == "error" and a["error"]["type"] == "NameError", a
    info = srv.request("GET", "/v1/sessions/%s" % ids[2])
    assert info.status == 200 and info.json["state"] == "idle", info


@pytest.mark.parametrize("isolation", ISOLATION, ids=["warm", "cold"])
def test_a_copy_of_a_copy(serve, isolation):
    srv = serve(*isolation)
    sid = start(srv)
    cell(srv, sid, "import random\nrandom.seed(5)\nlevel = 0")
    first = fork(srv, sid, 1)
    cell(srv, first[1], "level = 1")
    second = fork(srv, first[1], 2)
    got = [value(srv, i, "(level, random.random())") for i in second]
    assert len(set(got)) == 1 and got[0].startswith("(1, 0."), got
    assert value(srv, sid, "level") == "0"
    uids = {int(value(srv, i, "import os\nos.getuid()")) for i in first + second[1:]}
    assert len(uids) == 4, uids


def test_each_copy_has_its_own_uid_namespaces_and_tmp_seen_from_the_host(serve):
    srv = serve()
    sid = start(srv)
    cell(srv, sid, "import os\nopen('/tmp/shared', 'w').write('0')")
    ids = fork(srv, sid, 2)
    uids = [int(value(srv, i, "os.getuid()")) for i in ids]
    assert len(set(uids)) == 3 and all(SANDBOX_UID_BASE <= u < SANDBOX_UID_BASE + SANDBOX_UID_COUNT for u in uids)
    seen = {}
    for u in uids:
        # Its keeper, pid 1 of its namespaces, lives as long as it does (a
        # cell's process may be ending meanwhile).
        keepers = []
        for pid in host_pids(u):
            try:
                with open("/proc/%d/status" % pid) as f:
                    status = dict(line.split(":", 1) for line in f if ":" in line)
            except FileNotFoundError:
                continue
            if status["NSpid"].split()[-1] == "1":
                keepers.append((pid, status))
        assert len(keepers) == 1, (u, keepers)
        pid, status = keepers[0]
        assert int(status["CapEff"].strip(), 16) == 0 and int(status["CapPrm"].strip(), 16) == 0, status
        assert status["Gid"].split()[0] == str(u) and not status["Groups"].strip(), status
        seen[u] = namespaces(pid)
        seen[u]["tmp"] = os.stat("/proc/%d/root/tmp" % pid).st_dev
    for kind in ("user", "pid", "mnt", "net", "ipc", "uts", "tmp"):
        assert len({s[kind] for s in seen.values()}) == 3, (kind, seen)


def test_what_a_copy_writes_in_tmp_no_other_sees(serve):
    srv = serve()
    sid = start(srv)
    cell(srv, sid, "import os\nopen('/tmp/common', 'w').write('parent')")
    ids = fork(srv, sid, 2)
    cell(srv, ids[1], "open('/tmp/common', 'w').write('copy 1')\nopen('/tmp/only1', 'w').write('x')")
    for i, want in ((ids[0], "parent"), (ids[2], "parent"), (ids[1], "copy 1")):
        assert value(srv, i, "open('/tmp/common').read()") == repr(want)
    assert value(srv, ids[0], "sorted(os.listdir('/tmp'))") == "['common']"
    assert value(srv, ids[2], "sorted(os.listdir('/tmp'))") == "['common']"


def test_a_copy_sees_and_signals_no_process_of_another(serve):
    srv = serve("--allow-imports")
    sid = start(srv)
    cell(srv, sid, "import os, signal")
    ids = fork(srv, sid, 2)
    others = set()
    for i in (ids[0], ids[2]):
        uid = int(value(srv, i, "os.getuid()"))
        others |= {str(p) for p in host_pids(uid)}
    # Its /proc is its pid namespace's: its own few processes, none of theirs.
    mine = value(srv, ids[1], "sorted(int(p) for p in os.listdir('/proc') if p.isdigit())")
    assert len(eval(mine)) <= 4, mine
    # Every pid it can name, then every process it may signal: its own
    # session dies of it (its keeper and state are among them), no other.
    a = srv.post("/v1/sessions/%s/exec" % ids[1], {
        "code": "for p in range(2, 40000):\n    try:\n        os.kill(p, signal.SIGKILL)\n"
                "    except OSError:\n        pass\nos.kill(-1, signal.SIGKILL)\n"})
    assert a.status == 200 and a.json["status"] in ("ended", "session_ended"), a
    for i in (ids[0], ids[2]):
        assert value(srv, i, "1 + 1") == "2"
    assert others


def test_sockets_of_one_copy_are_not_reachable_from_another(serve):
    srv = serve("--allow-imports")  # the kernel's isolation, not the import policy
    sid = start(srv)
    cell(srv, sid, "import socket, os")
    ids = fork(srv, sid, 2)
    cell(srv, ids[1], "a = socket.socket(socket.AF_UNIX)\na.bind('\\0ee-fork-abstract')\na.listen(1)\n"
                      "p = socket.socket(socket.AF_UNIX)\np.bind('/tmp/ee-fork.sock')\np.listen(1)\n")
    for i in (ids[0], ids[2]):
        a = cell(srv, i, "s = socket.socket(socket.AF_UNIX)\ns.connect('\\0ee-fork-abstract')")
        assert a["status"] == "error" and a["error"]["type"] == "ConnectionRefusedError", a
        a = cell(srv, i, "s = socket.socket(socket.AF_UNIX)\ns.connect('/tmp/ee-fork.sock')")
        assert a["status"] == "error" and a["error"]["type"] == "FileNotFoundError", a
    # The listener's own copy connects to both: the sockets work.
    assert value(srv, ids[1], "s = socket.socket(socket.AF_UNIX)\ns.connect('\\0ee-fork-abstract')\n1") == "1"


def test_descriptors_made_before_the_fork_are_no_channel(serve):
    """A pipe and a socketpair in the parent's globals: closed in every
    copy (the parent's own copy too), so none can write what another reads."""
    srv = serve("--allow-imports")
    sid = start(srv)
    cell(srv, sid, "import os, socket\nr, w = os.pipe()\na, b = socket.socketpair()")
    ids = fork(srv, sid, 2)
    for i in ids:
        res = cell(srv, i, "os.write(w, b'x')")
        assert res["status"] == "error" and res["error"]["type"] == "OSError", res
        assert "Bad file descriptor" in res["error"]["message"], res
        res = cell(srv, i, "a.send(b'x')")
        assert res["status"] == "error" and res["error"]["type"] == "OSError", res
    # From the host: no pipe or socket is held by processes of two of them.
    held = []
    for i in ids:
        uid = int(value(srv, i, "os.getuid()"))
        ends = set()
        for pid in host_pids(uid):
            try:
                fds = os.listdir("/proc/%d/fd" % pid)
            except FileNotFoundError:  # it ended meanwhile (a cell's process): it holds nothing
                continue
            for fd in fds:
                try:
                    target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
                except OSError:
                    continue
                if target.startswith(("pipe:", "socket:")):
                    ends.add(target)
        assert ends, i
        held.append(ends)
    for k in range(len(held)):
        for m in range(k + 1, len(held)):
            assert not held[k] & held[m], (k, m, held[k] & held[m])


@pytest.mark.parametrize("setup, why", [
    ("import mmap\nm = mmap.mmap(-1, 4096)\nm[:2] = b'hi'", "shared memory mapping"),
    ("import threading, time\nt = threading.Thread(target=time.sleep, args=(60,), daemon=True)\nt.start()",
     "threads"),
    ("import os, time\nchild = os.fork()\nif child == 0:\n    time.sleep(60)\n    os._exit(0)", "processes besides"),
], ids=["shared_mapping", "thread", "process"])
def test_what_a_fork_would_share_is_refused_and_the_session_goes_on(serve, setup, why):
    srv = serve("--allow-imports")
    sid = start(srv)
    cell(srv, sid, "z = 3")
    a = cell(srv, sid, setup)
    assert a["status"] == "ok", a
    before = sandbox_uids()
    f = srv.post("/v1/sessions/%s/fork" % sid, {"count": 2})
    assert f.status == 422 and why in f.json["detail"], f
    assert value(srv, sid, "z + 1") == "4"
    assert sandbox_uids() == before  # no copy was left running


def test_a_fork_while_a_cell_runs_is_409_and_bad_counts_are_400(serve):
    srv = serve("--max-sessions", "4")
    sid = start(srv)
    t = threading.Thread(target=cell, args=(srv, sid, "import time\ntime.sleep(3)"))
    t.start()
    deadline = time.monotonic() + 10
    while srv.request("GET", "/v1/sessions/%s" % sid).json["state"] != "running":  # its cell has started
        assert time.monotonic() < deadline
        time.sleep(0.02)
    a = srv.post("/v1/sessions/%s/fork" % sid, {"count": 1})
    assert a.status == 409, a
    t.join()
    for body in ({"count": 0}, {"count": 101}, {"count": "2"}, {"copies": 2}):
        a = srv.post("/v1/sessions/%s/fork" % sid, body)
        assert a.status == 400, (body, a)
    a = srv.post("/v1/sessions/%s/fork" % sid, {"count": 4})
    assert a.status == 429, a
    assert len(fork(srv, sid, 3)) == 4


def test_memory_is_each_copys_own(serve):
    """A copy that fills its memory limit is its own memory_limit: its
    siblings, whose cgroups are their own, go on."""
    srv = serve()
    sid = start(srv, limits={"memory_mb": 128})
    cell(srv, sid, "base = bytearray(20 << 20)")
    ids = fork(srv, sid, 2)
    a = cell(srv, ids[1], "hog = bytearray(200 << 20)")
    assert a["status"] == "memory_limit" and a["rolled_back"] is True, a
    for i in ids:
        assert value(srv, i, "len(base)") == str(20 << 20)
    assert value(srv, ids[2], "more = bytearray(60 << 20)\nlen(more)") == str(60 << 20)


def test_deleting_copies_in_any_order_leaves_nothing(serve):
    srv = serve()
    sid = start(srv)
    ids = fork(srv, sid, 2)
    grand = fork(srv, ids[2], 2)
    for i in (ids[2], sid, grand[1], ids[1], grand[2]):
        assert srv.request("DELETE", "/v1/sessions/%s" % i).status == 200
    # host_evidence (autouse) checks no process, cgroup or file is left.


def test_forks_nested_past_the_kernels_depth_are_refused_and_the_session_goes_on(serve):
    """The parent goes on as a copy, one namespace deeper each time: past
    the kernel's 32 nested pid and user namespaces the clone fails, which
    is a 422 saying so, never a lost session."""
    srv = serve("--max-sessions", "8")
    sid = start(srv)
    cell(srv, sid, "x = 1")
    for k in range(40):
        a = srv.post("/v1/sessions/%s/fork" % sid, {"count": 1})
        if a.status != 200:
            break
        assert srv.request("DELETE", "/v1/sessions/%s" % a.json["ids"][0]).status == 200
    assert a.status == 422 and "32" in a.json["detail"], a
    assert 20 <= k < 32, k
    assert value(srv, sid, "x + 1") == "2"


def test_sysv_and_posix_ipc_are_no_channel_between_copies(serve):
    """SysV shared memory and message queues, POSIX message queues: every
    sandbox's filter refuses them (a copy has a new IPC namespace too)."""
    srv = serve("--allow-imports")
    sid = start(srv)
    cell(srv, sid, "import ctypes, ctypes.util, os\nlibc = ctypes.CDLL(None, use_errno=True)")
    ids = fork(srv, sid, 1)
    for i in ids:
        got = value(srv, i, "r = [libc.shmget(0x4545, 4096, 0o1600), ctypes.get_errno(), "
                            "libc.msgget(0x4546, 0o1600), ctypes.get_errno()]\nr")
        assert got == "[-1, 1, -1, 1]", got  # EPERM, EPERM


def test_a_copys_tmp_is_charged_to_its_own_memory(serve):
    """The state's /tmp copied into a copy's fresh tmpfs is the copy's
    memory (its cgroup's), not the server's that made the copy."""
    srv = serve()
    sid = start(srv, limits={"memory_mb": 256})
    cell(srv, sid, "open('/tmp/big', 'wb').write(b'x' * (40 << 20))")
    ids = fork(srv, sid, 1)
    info = srv.request("GET", "/v1/sessions/%s" % ids[1]).json
    assert info["memory_peak_kb"] >= 40 << 10, info
