"""SandboxFusion's POST /run_jupyter (docs/api.md "POST /run_jupyter"): the
cells of one request run in order in one fresh session, which is ended
before the answer comes, in SandboxFusion's shape.

Every case talks to a real `execeval serve` on 127.0.0.1; the autouse
host_evidence fixture checks that nothing of any run is left on the host
afterwards (processes, cgroups, files, mounts).
"""
import base64
import json
import threading
import time

from serve_client import serve  # noqa: F401 (fixture)

TOP_KEYS = {"status", "message", "driver", "cells", "executor_pod_name", "files", "execeval"}
DRIVER_KEYS = {"status", "execution_time", "return_code", "stdout", "stderr"}
CELL_KEYS = {"stdout", "stderr", "display", "error"}


def jupyter(srv, body, status=200, **kw):
    a = srv.post("/run_jupyter", body, **kw)
    if status is None:
        return a.status
    assert a.status == status, a
    if status == 200:
        assert set(a.json) == TOP_KEYS, a.json
        for c in a.json["cells"]:
            assert set(c) == CELL_KEYS, c
    return a.json


def test_cells_share_state_and_an_exception_does_not_stop_the_next_cell(serve):
    srv = serve()
    a = jupyter(srv, {"cells": ["a = 123\n# display\na", "print(a)\nimport sys\nsys.stderr.write(str(a))",
                                "raise ValueError('boom %d' % a)", "b = a + 1\nb", "None"],
                      "kernel": "python3"})
    assert (a["status"], a["message"], a["executor_pod_name"], a["files"]) == ("Success", "", None, {}), a
    assert set(a["driver"]) == DRIVER_KEYS and a["driver"]["status"] == "Finished", a
    assert a["driver"]["return_code"] == 0 and a["driver"]["execution_time"] > 0, a
    c = a["cells"]
    assert len(c) == 5, a
    assert c[0] == {"stdout": "", "stderr": "", "display": [{"text/plain": "123"}], "error": []}
    # sys.stderr.write returns 3: the trailing expression is displayed, as in Jupyter.
    assert c[1] == {"stdout": "123\n", "stderr": "123", "display": [{"text/plain": "3"}], "error": []}
    err = c[2]["error"]
    assert c[2]["display"] == [] and len(err) == 1, c[2]
    assert (err[0]["ename"], err[0]["evalue"]) == ("ValueError", "boom 123"), err
    tb = err[0]["traceback"]
    assert isinstance(tb, list) and all(isinstance(x, str) for x in tb), tb
    assert any("raise ValueError" in x for x in tb) and not any("harness" in x for x in tb), tb
    # The cell after the exception ran, on the state before it.
    assert c[3] == {"stdout": "", "stderr": "", "display": [{"text/plain": "124"}], "error": []}
    assert c[4]["display"] == []  # None is not displayed
    facts = a["execeval"]
    assert [f["status"] for f in facts["cells"]] == ["ok", "ok", "error", "ok", "ok"]
    assert facts["stopped"] is None


def test_a_cell_timeout_stops_the_run_at_that_cell(serve):
    srv = serve()
    t = time.monotonic()
    a = jupyter(srv, {"cells": ["x = 1\nprint('before')", "print('started', flush=True)\nwhile True: pass",
                                "print('never')"], "cell_timeout": 1})
    assert time.monotonic() - t < 8
    assert a["status"] == "Failed" and a["message"] == "", a
    assert a["driver"]["status"] == "TimeLimitExceeded" and a["driver"]["return_code"] is None, a
    assert len(a["cells"]) == 2, a  # the third never ran
    assert a["cells"][0]["stdout"] == "before\n"
    stopped = a["cells"][1]
    assert stopped["stdout"] == "started\n" and stopped["error"][0]["ename"] == "timeout", stopped
    assert a["execeval"]["stopped"] == {"cell": 1, "why": "cell_timeout"}, a
    assert a["execeval"]["cells"][1]["rolled_back"] is True and a["files"] == {}


def test_the_total_timeout_bounds_the_cells_together(serve):
    srv = serve()
    t = time.monotonic()
    # Each cell is within its own clock; the third would pass the total.
    a = jupyter(srv, {"cells": ["import time\ntime.sleep(0.6)"] * 4 + ["'never'"], "cell_timeout": 5,
                      "total_timeout": 1.5})
    assert time.monotonic() - t < 8
    assert a["status"] == "Failed" and a["driver"]["status"] == "TimeLimitExceeded", a
    assert a["execeval"]["stopped"] == {"cell": 2, "why": "total_timeout"}, a
    assert len(a["cells"]) == 3 and a["cells"][2]["error"][0]["ename"] == "timeout", a
    # What the third cell had left was its clock: less than its own 5 s.
    assert a["execeval"]["cells"][2]["clock_s"] < 0.5, a


def test_a_crashing_cell_is_a_failed_run(serve):
    srv = serve()
    a = jupyter(srv, {"cells": ["1", "import os\nos._exit(3)", "2"]})
    assert a["status"] == "Failed" and a["driver"]["status"] == "Finished", a
    assert a["driver"]["return_code"] == 3 and a["execeval"]["stopped"] == {"cell": 1, "why": "crashed"}, a
    assert a["cells"][1]["error"][0]["ename"] == "crashed" and len(a["cells"]) == 2, a


def test_files_and_fetch_files(serve):
    srv = serve()
    enc = lambda s: base64.b64encode(s.encode()).decode()  # noqa: E731
    # Files are written under the cwd, their directories made, as SandboxFusion's restore_files does.
    a = jupyter(srv, {"cells": ["data = open('a/in.txt').read()", "open('out.txt', 'w').write(data * 2)",
                                "raise KeyError('last')"],
                      "files": {"a/in.txt": enc("hi")}, "fetch_files": ["out.txt", "missing.txt"]})
    assert a["status"] == "Success", a  # an exception in the last cell is still a finished run
    assert a["files"] == {"out.txt": enc("hihi")}, a
    # Without cells, the files are still written and fetched.
    a = jupyter(srv, {"cells": [], "files": {"x.bin": enc("x")}, "fetch_files": ["x.bin"]})
    assert (a["status"], a["cells"], a["files"]) == ("Success", [], {"x.bin": enc("x")}), a


def test_bad_fields_are_422_naming_them(serve):
    srv = serve()
    for body, field in [
        ({}, "cells"),
        ({"cells": "print(1)"}, "cells"),
        ({"cells": ["1", 2]}, "cells[1]"),
        ({"cells": ["1"], "cell_timeout": -1}, "cell_timeout"),
        ({"cells": ["1"], "total_timeout": 0}, "total_timeout"),
        ({"cells": ["1"], "total_timeout": "45"}, "total_timeout"),
        ({"cells": ["1"], "memory_limit_MB": 0}, "memory_limit_MB"),
        ({"cells": ["1"], "kernel": "ir"}, "kernel"),
        ({"cells": ["1"], "files": {"/etc/x": "aGk="}}, "files./etc/x"),
        ({"cells": ["1"], "files": {"a": "not base64!"}}, "files.a"),
        ({"cells": ["1"], "fetch_files": ["../x"]}, "fetch_files.0"),
        ({"cells": ["1"] * 1001}, "cells"),
        ([], "body"),
    ]:
        a = jupyter(srv, body, status=422)
        assert a["field"] == field and a["detail"][0]["loc"] == ["body", field], (body, a)
    a = srv.post("/run_jupyter", b"{not json")
    assert a.status == 422 and a.json["field"] == "body", a
    assert srv.request("GET", "/run_jupyter").status == 405
    # Unknown fields are ignored, as SandboxFusion's model does.
    assert jupyter(srv, {"cells": ["1"], "whatever": 1})["status"] == "Success"


def test_max_sessions_and_the_token(serve, tmp_path):
    tf = tmp_path / "token"
    tf.write_text("tok-run-jupyter-0123456789\n")
    srv = serve("--max-sessions", "1", "--token-file", str(tf))
    assert srv.post("/run_jupyter", {"cells": ["1"]}).status == 401
    tok = "tok-run-jupyter-0123456789"
    sid = srv.post("/v1/sessions", {}, token=tok)
    assert sid.status == 200, sid
    a = srv.post("/run_jupyter", {"cells": ["1"]}, token=tok)
    assert a.status == 429 and a.header("Retry-After"), a
    assert srv.request("DELETE", "/v1/sessions/%s" % sid.json["id"], token=tok).status == 200
    for _ in range(40):  # the deleted session's place is free once its sandbox is gone
        if jupyter(srv, {"cells": []}, token=tok, status=None) != 429:
            break
        time.sleep(0.05)
    # A run holds its place while it runs: a session cannot be made meanwhile.
    slow = {}
    t = threading.Thread(target=lambda: slow.update(a=srv.post(
        "/run_jupyter", {"cells": ["import time\ntime.sleep(1)", "'done'"]}, token=tok)))
    t.start()
    time.sleep(0.4)
    assert srv.post("/v1/sessions", {}, token=tok).status == 429
    t.join()
    assert slow["a"].status == 200 and json.loads(slow["a"].body)["cells"][1]["display"] == [
        {"text/plain": "'done'"}]
    # Its place was given back with its answer.
    assert jupyter(srv, {"cells": ["1"]}, token=tok)["status"] == "Success"


def test_a_client_that_goes_away_leaves_nothing_and_frees_its_place(serve):
    srv = serve("--max-sessions", "1")
    body = json.dumps({"cells": ["import time\ntime.sleep(1)", "1"]}).encode()
    s = srv.raw_socket(timeout=10)
    s.sendall(b"POST /run_jupyter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body) + body)
    time.sleep(0.3)
    s.close()
    deadline = time.monotonic() + 10
    while jupyter(srv, {"cells": ["2"]}, status=None) == 429:
        assert time.monotonic() < deadline, "the abandoned run never gave its place back"
        time.sleep(0.1)
    assert jupyter(srv, {"cells": ["2"]})["cells"][0]["display"] == [{"text/plain": "2"}]


def test_sigterm_finishes_a_run_in_flight_and_a_forced_stop_answers_a_sandbox_error(serve):
    for grace, cells, want in [("30", ["import time\ntime.sleep(1)", "'done'"], "Success"),
                               ("0.5", ["import time\ntime.sleep(20)"], "SandboxError")]:
        srv = serve("--grace", grace)
        got = {}
        t = threading.Thread(target=lambda: got.update(a=srv.post("/run_jupyter", {"cells": cells})))
        t.start()
        time.sleep(0.4)
        assert srv.stop() == 0
        t.join(10)
        a = got["a"]
        assert a.status == 200 and a.json["status"] == want, a
        if want == "SandboxError":
            assert "shutting down" in a.json["message"] and a.json["driver"] is None, a
