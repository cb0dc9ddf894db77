"""Hostile sessions: a session's cells are the agent's code, so each case
below is a cell trying to reach the host, another session, or to take its
own session down, with the answer it must get and host-side evidence (the
autouse host_evidence fixture: nothing left of any sandbox afterwards).
"""
import os
import signal
import socket
import tempfile
import threading
import time

import pytest

from conftest import accepted
from serve_client import run_cell as cell, start_session as start
from serve_client import serve  # noqa: F401 (fixture)


PROBE = """
import errno, socket
def probe(fam, typ, addr):
    try:
        s = socket.socket(fam, typ)
    except OSError as e:
        return "socket:" + errno.errorcode[e.errno]
    try:
        s.settimeout(2)
        s.connect(addr)
        return "connected"
    except OSError as e:
        return "connect:" + errno.errorcode.get(e.errno, str(e.errno))
    finally:
        s.close()
"""


def test_a_session_reaches_no_host_socket(serve, marker):
    """With --allow-imports a cell gets past the import deny list: the
    kernel must refuse. Differential: the host reaches each listener."""
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(4)
    tcp.setblocking(False)
    d = tempfile.mkdtemp(prefix="ee-sess-")
    os.chmod(d, 0o777)
    path = os.path.join(d, "s")
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(path)
    os.chmod(path, 0o777)
    unix.listen(4)
    unix.setblocking(False)
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind("\0ee-%s" % marker)
    abstract.listen(4)
    abstract.setblocking(False)
    try:
        srv = serve("--allow-imports")
        sid = start(srv)
        a = cell(srv, sid, PROBE + "[probe(socket.AF_INET, socket.SOCK_STREAM, ('127.0.0.1', %d)), "
                 "probe(socket.AF_UNIX, socket.SOCK_STREAM, %r), probe(socket.AF_UNIX, socket.SOCK_STREAM, %r)]"
                 % (tcp.getsockname()[1], path, "\0ee-" + marker))
        assert a["result"] == "['socket:EPERM', 'connect:ENOENT', 'connect:ECONNREFUSED']", a
        assert accepted(tcp) == accepted(unix) == accepted(abstract) == 0
        for s, addr in ((tcp, ("127.0.0.1", tcp.getsockname()[1])), (unix, path), (abstract, "\0ee-" + marker)):
            c = socket.socket(s.family, socket.SOCK_STREAM)
            c.connect(addr)
            c.close()
            deadline = time.monotonic() + 5
            while accepted(s) == 0:
                assert time.monotonic() < deadline
                time.sleep(0.01)
    finally:
        for s in (tcp, unix, abstract):
            s.close()
        os.unlink(path)
        os.rmdir(d)


def test_two_sessions_share_no_socket_file_or_process(serve, marker):
    srv = serve("--allow-imports")
    a, b = start(srv), start(srv)
    # A listens on an abstract name and a file in its /tmp, and names its pids.
    r = cell(srv, a, "import os, socket\nL = socket.socket(socket.AF_UNIX)\nL.bind('\\0%s')\nL.listen(1)\n"
             "P = socket.socket(socket.AF_UNIX)\nP.bind('/tmp/%s.sock')\nP.listen(1)\n"
             "open('/tmp/%s', 'w').write('a')\nsorted(int(p) for p in os.listdir('/proc') if p.isdigit())"
             % (marker, marker, marker))
    assert r["status"] == "ok", r
    pids_a = eval(r["result"])
    r = cell(srv, b, PROBE + "import os\n[probe(socket.AF_UNIX, socket.SOCK_STREAM, '\\0%s'), "
             "probe(socket.AF_UNIX, socket.SOCK_STREAM, '/tmp/%s.sock'), os.path.exists('/tmp/%s')]"
             % (marker, marker, marker))
    assert r["result"] == "['connect:ECONNREFUSED', 'connect:ENOENT', False]", r
    # B signals every pid A has (its own namespace's numbers): A is unharmed.
    cell(srv, b, "import os\nfor p in %r:\n    try:\n        os.kill(p, 9)\n    except OSError:\n        pass\n"
         % [p for p in pids_a if p > 2])
    r = cell(srv, a, "L.getsockname() == b'\\0%s'" % marker)
    assert (r["status"], r["result"]) == ("ok", "True"), r


def test_a_fork_bomb_cell_is_rolled_back(serve):
    srv = serve("--procs", "32")
    sid = start(srv)
    cell(srv, sid, "x = 1")
    r = cell(srv, sid, "import os, time\nx = 2\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n"
             "        time.sleep(0.01)", timeout_s=1)
    assert (r["status"], r["rolled_back"]) == ("timeout", True), r
    r = cell(srv, sid, "import os\nx, len([p for p in os.listdir('/proc') if p.isdigit()])")
    assert r["status"] == "ok" and eval(r["result"])[0] == 1 and eval(r["result"])[1] <= 4, r


def test_a_cell_that_kills_its_keeper_ends_only_its_session(serve):
    srv = serve()
    sid, other = start(srv), start(srv)
    cell(srv, other, "kept = 42")
    r = cell(srv, sid, "import os, signal\nos.kill(2, signal.SIGKILL)\nimport time\ntime.sleep(5)")
    assert r["status"] == "session_ended", r
    assert srv.post("/v1/sessions/%s/exec" % sid, {"code": "1"}).status == 404
    assert cell(srv, other, "kept")["result"] == "42"


def test_a_session_that_cannot_be_restored_ends_with_an_answer(serve):
    """The cell kills the interpreter it would roll back to, then spins:
    at its timeout there is nothing to restore; the session ends, said."""
    srv = serve()
    sid = start(srv)
    t = time.monotonic()
    r = cell(srv, sid, "import os\nos.kill(os.getppid(), 9)\nwhile True: pass", timeout_s=1)
    assert r["status"] == "session_ended" and r["detail"], r
    assert time.monotonic() - t < 20
    assert srv.request("GET", "/v1/sessions/%s" % sid).status == 404


def test_sigterm_ends_every_session_cleanly(serve):
    srv = serve()
    ids = [start(srv) for _ in range(3)]
    got = {}
    t = threading.Thread(target=lambda: got.update(a=srv.post("/v1/sessions/%s/exec" % ids[0],
                                                                 {"code": "while True: pass", "timeout_s": 20})))
    t.start()
    time.sleep(0.5)
    srv.send_signal(signal.SIGTERM)
    assert srv.wait(30) == 0
    t.join(30)
    assert got["a"].status == 200 and got["a"].json["status"] == "session_ended", got


@pytest.mark.parametrize("code", [
    "open('/etc/shadow').read()",
    "import os\nos.listdir('/root')",
    "open('/proc/1/environ').read()",
])
def test_host_files_stay_out_of_reach(serve, code):
    srv = serve()
    sid = start(srv)
    r = cell(srv, sid, code)
    assert r["status"] == "error" and r["error"]["type"] in ("PermissionError", "FileNotFoundError"), r


def test_a_warm_sessions_keeper_is_closed_to_its_cells(serve):
    """Forked from a warm worker, the keeper never execs: non-dumpable, its
    memory and descriptors (the result channel) are root's, not the cells'.
    The differential: the cell's own /proc/self/fd is its own."""
    srv = serve("--isolation", "warm")
    sid = start(srv)
    for path in ("/proc/2/mem", "/proc/2/fd/4", "/proc/2/environ"):
        r = cell(srv, sid, "open(%r, 'rb').read(1)" % path)
        assert r["status"] == "error" and r["error"]["type"] == "PermissionError", (path, r)
    r = cell(srv, sid, "import os\nlen(os.listdir('/proc/self/fd')) > 0")
    assert r["result"] == "True", r
