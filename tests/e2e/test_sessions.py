"""Sessions (/v1/sessions, docs/api.md "Sessions"): a live interpreter kept
between cells, each cell in a fork of it; a bad cell is rolled back.

Every case talks to a real `execeval serve` on 127.0.0.1; the autouse
host_evidence fixture checks that nothing of any session is left on the
host afterwards (processes, cgroups, files, mounts).
"""
import os
import threading
import time

import pytest

from conftest import isolation_args
from serve_client import run_cell as cell, start_session as start
from serve_client import serve  # noqa: F401 (fixture)


def warm_workers(pid):
    """How many warm workers (`execeval __worker`) the server pid started."""
    n = 0
    for name in os.listdir("/proc"):
        try:
            with open("/proc/%s/status" % name) as f:
                ppid = [line.split()[1] for line in f if line.startswith("PPid:")]
            with open("/proc/%s/cmdline" % name, "rb") as f:
                argv = f.read().split(b"\0")
        except (OSError, ValueError):
            continue
        n += ppid == [str(pid)] and argv[1:2] == [b"__worker"]
    return n


def test_the_sessions_workers_start_at_the_first_session(serve):
    """A server that never gets a session holds no worker for them; the
    first session waits for their warm-up and is forked from one."""
    if os.geteuid() != 0 or "cold" in isolation_args():
        pytest.skip("warm workers need root and warm isolation")
    srv = serve("-j", "1", "--session-preload", "json")
    task = {"task_id": "t", "prompt": "", "tests": [{"kind": "assert", "code": "assert f() == 1"}]}
    a = srv.post("/v1/run", {"task": task, "candidate": "def f():\n    return 1\n"})
    assert a.status == 200 and a.json["status"] == "pass", a
    candidates = warm_workers(srv.pid)  # the candidates' only
    assert candidates >= 1
    sid = start(srv)
    assert warm_workers(srv.pid) == candidates + 2  # and the sessions' two, new
    assert cell(srv, sid, "import sys\n'json' in sys.modules")["result"] == "True"


@pytest.mark.parametrize("isolation", [[], ["--isolation", "cold"]], ids=["warm", "cold"])
def test_state_persists_and_an_exception_keeps_what_ran_before_it(serve, isolation):
    """Forked from a warm worker (as root, the default) or a cold sandbox."""
    srv = serve(*isolation)
    sid = start(srv, setup="import math\nK = 7")
    assert cell(srv, sid, "x = 1")["status"] == "ok"
    a = cell(srv, sid, "x += 1\nprint('x is', x)\nx * K")
    assert (a["status"], a["result"], a["stdout"], a["rolled_back"]) == ("ok", "14", "x is 2\n", False)
    a = cell(srv, sid, "y = 5\nraise ValueError('boom')")
    assert a["status"] == "error" and a["rolled_back"] is False
    assert a["error"]["type"] == "ValueError" and a["error"]["message"] == "boom"
    # The traceback is the cell's own lines, never the harness's.
    assert '"<cell-' in a["error"]["traceback"] and "raise ValueError('boom')" in a["error"]["traceback"]
    assert "session" not in a["error"]["traceback"] and "harness" not in a["error"]["traceback"]
    assert cell(srv, sid, "y, x, math.floor(2.5)")["result"] == "(5, 2, 2)"
    assert cell(srv, sid, "input() + input()", stdin="ab\ncd\n")["result"] == "'abcd'"
    a = cell(srv, sid, "input()")  # stdin is the cell's: nothing left, EOF
    assert a["status"] == "error" and a["error"]["type"] == "EOFError"
    g = srv.request("GET", "/v1/sessions/%s" % sid)
    assert g.status == 200 and g.json["state"] == "idle" and g.json["cells"] == 6


@pytest.mark.parametrize("isolation", [[], ["--isolation", "cold"]], ids=["warm", "cold"])
def test_the_sessions_own_uid_has_a_name(serve, isolation):
    """getpass and pwd name the session's own uid, warm (a detached fork of
    a worker whose root names the worker's slot uid) as cold."""
    srv = serve(*isolation)
    for sid in (start(srv), start(srv)):
        a = cell(srv, sid, "import getpass, grp, os, pwd\n"
                 "(getpass.getuser(), pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name,"
                 " os.getuid() == pwd.getpwnam('sandbox').pw_uid)")
        assert (a["status"], a["result"]) == ("ok", "('sandbox', 'sandbox', 'sandbox', True)"), a
        # Read-only, as the rest of the root.
        a = cell(srv, sid, "open('/etc/passwd', 'a')")
        assert a["status"] == "error" and a["error"]["type"] in ("OSError", "PermissionError"), a


@pytest.mark.parametrize("bad, status, detail", [
    ("while True: pass", "timeout", "timeout"),
    ("import os\nos._exit(3)", "crashed", "exit code 3"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", "crashed", "killed by signal 11"),
    ("print('x' * 100000)", "output_overflow", "output overflow"),
    ("b = bytearray(400 << 20)\nb[::4096] = b'1' * len(b[::4096])", "memory_limit", "memory limit"),
])
def test_a_bad_cell_leaves_the_session_as_it_was(serve, bad, status, detail):
    srv = serve("--memory", "256", "--output-cap", "4096")
    _bad_cell_rolled_back(srv, bad, status, detail)


def test_a_bad_cell_of_a_cold_session_is_rolled_back_too(serve):
    srv = serve("--memory", "256", "--isolation", "cold")
    _bad_cell_rolled_back(srv, "while True: pass", "timeout", "timeout")


# The session's live processes, as (pid, state, name): init, keeper, state
# and this cell once the state an answered cell replaced has exited (it
# retires as the next cell starts: waited for up to 2 s; a leftover child
# of a rolled-back cell sleeps for 60 s, so it would still be there).
LIVE_PROCESSES = """import os, time
def live():
    out = []
    for p in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open('/proc/%s/stat' % p) as f:
                st = f.read().rpartition(')')[2].split()[0]
        except (OSError, IndexError):
            continue
        if st != 'Z':
            out.append((int(p), st))
    return sorted(out)
deadline = time.monotonic() + 2
while len(live()) > 4 and time.monotonic() < deadline:
    time.sleep(0.02)
live()"""


def _bad_cell_rolled_back(srv, bad, status, detail):
    sid = start(srv)
    cell(srv, sid, "x = 1\nopen('kept.txt', 'w').write('before')")
    a = cell(srv, sid, "x = 2\nopen('kept.txt', 'w').write('after')\nopen('new.txt', 'w').write('n')\n"
             "import os, time\nif os.fork() == 0:\n    time.sleep(60)\n" + bad, timeout_s=2)
    assert (a["status"], a["detail"], a["rolled_back"], a.get("tmp_restored")) == (status, detail, True, True), a
    assert a["infra_error"] is False, a  # the cell's doing: on a quiet host, never starved
    a = cell(srv, sid, "import os\nx, open('kept.txt').read(), sorted(os.listdir('.'))")
    assert a["result"] == "(1, 'before', ['kept.txt'])", a
    # The cell's child died with it: the session's only processes are its own.
    a = cell(srv, sid, LIVE_PROCESSES)
    assert a["status"] == "ok" and len(eval(a["result"])) <= 4, a  # init, keeper, state, this cell


def test_one_cell_at_a_time_and_ended_sessions_are_gone(serve):
    srv = serve()
    sid = start(srv)
    slow = {}
    t = threading.Thread(target=lambda: slow.update(a=cell(srv, sid, "import time\ntime.sleep(1)\n'done'",
                                                           timeout_s=10)))
    t.start()
    deadline = time.monotonic() + 30
    while srv.request("GET", "/v1/sessions/%s" % sid).json["state"] != "running":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    a = srv.post("/v1/sessions/%s/exec" % sid, {"code": "1"})
    assert a.status == 409, a
    t.join()
    assert slow["a"]["result"] == "'done'"
    assert srv.request("DELETE", "/v1/sessions/%s" % sid).status == 200
    assert srv.post("/v1/sessions/%s/exec" % sid, {"code": "1"}).status == 404
    assert srv.request("GET", "/v1/sessions/%s" % sid).status == 404
    assert srv.post("/v1/sessions/%s/exec" % ("0" * 32), {"code": "1"}).status == 404


def test_bad_requests_name_the_field(serve):
    srv = serve()
    a = srv.post("/v1/sessions", {"limits": {"memory": 64}})
    assert a.status == 400 and "limits" in a.json["error"] and "memory" in a.json["error"], a
    sid = start(srv)
    a = srv.post("/v1/sessions/%s/exec" % sid, {"cod": "1"})
    assert a.status == 400 and "cod" in a.json["error"], a
    a = srv.post("/v1/sessions/%s/exec" % sid, {"code": 1})
    assert a.status == 400 and a.json.get("field") == "code", a
    assert srv.request("PUT", "/v1/sessions/%s" % sid).status == 405


def test_a_failing_setup_is_no_session(serve):
    srv = serve()
    a = srv.post("/v1/sessions", {"setup": "import no_such_module_here"})
    assert a.status == 422, a
    assert a.json["setup"]["error"]["type"] == "ModuleNotFoundError"


def test_limits_on_sessions(serve):
    srv = serve("--max-sessions", "2")
    ids = [start(srv, idle_timeout_s=1) for _ in range(2)]
    a = srv.post("/v1/sessions", {})
    assert a.status == 429 and a.header("Retry-After"), a
    time.sleep(2.5)  # both idle past their timeout: ended, room again
    for sid in ids:
        assert srv.request("GET", "/v1/sessions/%s" % sid).status == 404
    start(srv)


def test_sessions_cannot_see_or_reach_each_other(serve, marker):
    srv = serve()
    a, b = start(srv), start(srv)
    cell(srv, a, "open('%s', 'w').write('secret')\nimport os\nPID = os.getpid()" % marker)
    got = cell(srv, b, "import os\nsorted(os.listdir('.')), sorted(os.listdir('/tmp'))")
    assert marker not in got["result"], got
    # Each session has its own pid namespace: the other's processes are not there.
    pa = int(cell(srv, a, "PID")["result"])
    got = cell(srv, b, "import os\ntry:\n    os.kill(%d, 9)\nexcept OSError as e:\n    r = type(e).__name__\n"
               "else:\n    r = 'sent'\nr" % pa)
    assert cell(srv, a, "PID")["result"] == str(pa), got  # a lives on whatever b did
    got = cell(srv, b, "import socket\n1")
    assert got["status"] == "error" and "denied" in got["error"]["message"], got


def test_a_seeded_random_goes_on_from_cell_to_cell(serve):
    """Each cell runs in a fork of the session's interpreter, and CPython
    reseeds `random` in every fork child: the harness carries its state
    over, so a seeded generator goes on as in one interpreter."""
    import random
    want = random.Random(7)
    srv = serve()
    sid = start(srv)
    cell(srv, sid, "import random\nrandom.seed(7)")
    assert cell(srv, sid, "random.random()")["result"] == repr(want.random())
    assert cell(srv, sid, "random.randrange(10**9)")["result"] == repr(want.randrange(10**9))
