"""`execeval serve`, the HTTP API, black-box (spec: docs/api.md).

Each test starts its own server (`serve --listen 127.0.0.1:0 -j 2 ...`,
ready once stderr says `listening on http://HOST:PORT`) and stops it with
SIGTERM at the end (the `serve` fixture of serve_client.py; it must exit 0).
Every candidate runs only through the server (or, to compare, through
`execeval run`). The autouse host_evidence fixture of conftest.py checks
after every test that no sandbox process, worker, cgroup, mount or file is
left. Every answer is checked for the caller's secret.

Run it (alone, inside the safety net):
    tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/e2e/test_serve.py
"""
import base64
import contextlib
import http.client
import json
import re
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import EXECEVAL, ISOLATION, SECRET, execeval_env, wait_no_cgroups, wait_no_leftovers
from serve_client import answer_of, check_histogram, parse_metrics, raw_exchange, serve  # noqa: F401 (fixture)
from test_eval import HUMANEVAL, MBPP, needs_humaneval, needs_mbpp

ADD_TASK = {"task_id": "serve/add", "prompt": "",
            "tests": [{"kind": "assert", "code": "assert add(1, 2) == 3"},
                      {"kind": "assert", "code": "assert add(2, 2) == 4"}]}
ADD_OK = "def add(a, b):\n    return a + b\n"
ADD_BAD = "def add(a, b):\n    return a - b\n"
ADD_SYNTAX = "def add(a, b)\n    return a + b\n"
SPIN = "def add(a, b):\n    return a + b\nwhile True:\n    pass\n"
DENIED = "import socket\n" + ADD_OK
FENCED = ("Sure! Here is the function:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\n"
          "It adds `a` and `b`. Example:\n```\n>>> add(1, 2)\n3\n```\n")


def sleeper(seconds):
    return "import time\ntime.sleep(%r)\n%s" % (seconds, ADD_OK)


def body(candidate, task=ADD_TASK, **extra):
    b = {"task": task, "candidate": candidate}
    b.update(extra)
    return b


def ok_record(a):
    """The record of a 200 answer (checks the status code and content type)."""
    assert a.status == 200, a
    assert (a.header("Content-Type") or "").startswith("application/json"), a
    assert isinstance(a.json, dict), a
    return a.json


def error_of(a, status):
    """The {"error", "field"} object of an error answer with that status."""
    assert a.status == status, a
    assert (a.header("Content-Type") or "").startswith("application/json"), a
    assert isinstance(a.json, dict) and isinstance(a.json.get("error"), str) and a.json["error"], a
    assert "field" in a.json, a
    return a.json


def health(server, **kw):
    a = server.healthz(**kw)
    assert a.status == 200, a
    return a.json


def wait_health(server, pred, timeout=15, **kw):
    """Polls /healthz until pred(answer json) holds; returns it."""
    deadline = time.monotonic() + timeout
    while True:
        h = health(server, **kw)
        if pred(h):
            return h
        assert time.monotonic() < deadline, "never reached: last /healthz %r" % h
        time.sleep(0.02)


class Background(threading.Thread):
    """fn(*args) in a thread; .result or .error after join()."""

    def __init__(self, fn, *args, **kw):
        super().__init__(daemon=True)
        self.fn, self.args, self.kw = fn, args, kw
        self.result = self.error = None
        self.start()

    def run(self):
        try:
            self.result = self.fn(*self.args, **self.kw)
        except BaseException as e:  # noqa: B902 - reported by the test
            self.error = e

    def get(self, timeout=60):
        self.join(timeout)
        assert not self.is_alive(), "the request did not finish within %d s" % timeout
        return self.result


def essence(rec):
    """What must agree between two evaluations of one candidate."""
    return {"status": rec["status"], "detail": rec["detail"], "score": rec["score"], "passed": rec["passed"],
            "total": rec["total"], "reward": rec["reward"], "task_id": rec["task_id"],
            "phases": [(p["name"], p["status"], p.get("passed"), p.get("total")) for p in rec["phases"]],
            "tests": [(t["index"], t["kind"], t["visibility"], t["status"], t["weight"], t.get("message"))
                      for t in rec["tests"]]}


def load_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def humaneval(task_id):
    return next(t for t in load_jsonl(HUMANEVAL) if t["task_id"] == task_id)


def mbpp(task_id):
    return next(t for t in load_jsonl(MBPP) if t["task_id"] == task_id)


# ---------------------------------------------------------------------------
# POST /v1/run


def test_run_pass_copies_model_and_sample(serve):
    s = serve()
    rec = ok_record(s.run(body(ADD_OK, model="model-7", sample=7)))
    assert (rec["status"], rec["detail"], rec["score"], rec["passed"], rec["total"], rec["reward"]) == \
        ("pass", None, 1.0, 2, 2, 1), rec
    assert (rec["task_id"], rec["model"], rec["sample"]) == ("serve/add", "model-7", 7), rec
    assert [t["status"] for t in rec["tests"]] == ["pass", "pass"]
    for key in ("phases", "stdout", "stderr", "resources", "sandbox_id", "started_at", "finished_at",
                "execeval_version"):
        assert key in rec, key


def test_run_assertion_fail_and_syntax_error(serve):
    s = serve()
    rec = ok_record(s.run(body(ADD_BAD, model="m", sample=0)))
    assert (rec["status"], rec["score"], rec["passed"], rec["total"], rec["reward"]) == \
        ("assertion_fail", 0.0, 0, 2, -1), rec
    assert rec["detail"].startswith("test 0 failed"), rec["detail"]
    assert rec["tests"][0]["status"] == "fail"

    rec = ok_record(s.run(body(ADD_SYNTAX)))
    assert (rec["status"], rec["score"], rec["passed"], rec["total"]) == ("syntax_error", 0.0, 0, 2), rec
    assert rec["detail"].startswith("syntax error: "), rec["detail"]


def test_run_timeout_from_the_requests_limits(serve):
    s = serve()
    t0 = time.monotonic()
    rec = ok_record(s.run(body(SPIN, limits={"timeout_s": 0.5})))
    took = time.monotonic() - t0
    assert (rec["status"], rec["detail"], rec["score"], rec["passed"]) == ("timeout", "timeout", 0.0, 0), rec
    # The request's 0.5 s, not the default 3 s.
    assert took < 2.5, took
    assert 400 <= rec["resources"]["wall_ms"] < 2500, rec["resources"]


def test_server_options_are_the_defaults_of_every_evaluation(serve):
    s = serve("--timeout", "0.5", "--extract", "none")
    t0 = time.monotonic()
    rec = ok_record(s.run(body(SPIN)))
    assert (rec["status"], rec["detail"]) == ("timeout", "timeout"), rec
    assert time.monotonic() - t0 < 2.5
    # The request's own limits and extraction win, below the server's ceiling.
    rec = ok_record(s.run(body(SPIN, limits={"timeout_s": 0.2})))
    assert (rec["status"], rec["detail"]) == ("timeout", "timeout"), rec
    assert rec["resources"]["wall_ms"] < 450, rec["resources"]
    assert ok_record(s.run(body(FENCED)))["status"] == "syntax_error"
    assert ok_record(s.run(body(FENCED, extract="auto")))["status"] == "pass"


def test_limits_above_the_servers_are_refused_naming_the_field(serve):
    """The command line's limits are the ceiling of what a request or its
    task may ask for: above it, a 400 that says so (a limit silently cut
    would change the verdict)."""
    s = serve("--timeout", "2", "--memory", "256", "--procs", "32")
    cases = [
        (body(ADD_OK, limits={"timeout_s": 2.5}), "limits.timeout_s", "ceiling 2"),
        (body(ADD_OK, limits={"memory_mb": 257}), "limits.memory_mb", "ceiling 256"),
        (body(ADD_OK, limits={"procs": 33}), "limits.procs", "ceiling 32"),
        (dict(body(ADD_OK), task=dict(ADD_TASK, limits={"timeout_s": 5})), "task.limits.timeout_s", "ceiling 2"),
    ]
    for b, field, text in cases:
        err = error_of(s.run(b), 400)
        assert err["field"] == field, err
        assert text in err["error"], err
    # At the ceiling: accepted.
    rec = ok_record(s.run(body(ADD_OK, limits={"timeout_s": 2, "memory_mb": 256, "procs": 32})))
    assert rec["status"] == "pass", rec
    a = s.batch([body(ADD_OK), body(ADD_OK, limits={"timeout_s": 9})])
    assert error_of(a, 400)["field"] == "runs[1].limits.timeout_s"


def test_run_fenced_generation_is_extracted(serve):
    s = serve()
    rec = ok_record(s.run(body(FENCED)))
    assert (rec["status"], rec["passed"], rec["total"]) == ("pass", 2, 2), rec
    rec = ok_record(s.run(body(FENCED, extract="fenced")))
    assert rec["status"] == "pass", rec
    # "none": the text as it is, which does not parse.
    rec = ok_record(s.run(body(FENCED, extract="none")))
    assert rec["status"] == "syntax_error", rec
    # "fenced" with no fence and a failing program: the documented detail.
    rec = ok_record(s.run(body("def add(a, b)\n", extract="fenced")))
    assert (rec["status"], rec["detail"]) == ("error", "no code block"), rec


@needs_humaneval
def test_run_humaneval_task_objects_with_canonical_solutions(serve):
    s = serve()
    for tid in ("HumanEval/0", "HumanEval/2", "HumanEval/13"):
        t = humaneval(tid)
        rec = ok_record(s.run(body(t["prompt"] + t["canonical_solution"], task=t, model="he")))
        assert (rec["task_id"], rec["status"], rec["detail"], rec["score"], rec["passed"], rec["total"]) == \
            (tid, "pass", None, 1.0, 1, 1), rec
        assert rec["tests"][0]["kind"] == "program", rec["tests"]
    # The prompt alone (a docstring, no body) fails.
    t = humaneval("HumanEval/13")
    rec = ok_record(s.run(body(t["prompt"] + "    return None\n", task=t)))
    assert (rec["status"], rec["passed"], rec["total"]) == ("assertion_fail", 0, 1), rec


@needs_mbpp
def test_run_mbpp_task_objects_with_reference_code(serve):
    s = serve()
    t = mbpp(2)
    rec = ok_record(s.run(body(t["code"], task=t)))
    assert (rec["task_id"], rec["status"], rec["passed"], rec["total"]) == ("2", "pass", 3, 3), rec
    # Task 11 has challenge tests: the standard protocol scores test_list only
    t = mbpp(11)
    rec = ok_record(s.run(body(t["code"], task=t)))
    assert (rec["task_id"], rec["status"], rec["passed"], rec["total"]) == ("11", "pass", 3, 3), rec
    # serve --mbpp-challenge adds them: hidden, run after the public ones pass.
    s = serve("--mbpp-challenge")
    rec = ok_record(s.run(body(t["code"], task=t)))
    assert (rec["task_id"], rec["status"], rec["passed"], rec["total"]) == ("11", "pass", 5, 5), rec
    assert [x["visibility"] for x in rec["tests"]] == ["public"] * 3 + ["hidden"] * 2
    # serve runs hidden tests whatever the public verdict (mode always):
    # one challenge test passes for this wrong candidate.
    rec = ok_record(s.run(body("def remove_Occ(s, ch):\n    return s\n", task=t)))
    assert (rec["status"], rec["passed"], rec["phases"][-1]["mode"]) == ("assertion_fail", 1, "always"), rec


def test_keep_alive_connection_serves_many_requests(serve):
    s = serve()
    c = s.connection()
    try:
        for i in range(5):
            a = s.run(body(ADD_OK if i % 2 == 0 else ADD_BAD, model="ka-%d" % i, sample=i), conn=c)
            rec = ok_record(a)
            assert (rec["model"], rec["sample"]) == ("ka-%d" % i, i)
            assert rec["status"] == ("pass" if i % 2 == 0 else "assertion_fail")
            assert (a.header("Connection") or "").lower() != "close", a
        assert health(s, conn=c)["status"] == "ok"
    finally:
        c.close()


def test_unicode_and_large_bodies(serve):
    s = serve()
    model = "mod\u00e8le-\u6a21\u578b-\U0001f600"
    cand = "# \u00e9\u00e8 \u6587\u5b57\n" + ADD_OK + "print('\u00e9t\u00e9 \U0001f600')\n"
    rec = ok_record(s.run(body(cand, model=model)))
    assert (rec["status"], rec["model"]) == ("pass", model), rec
    assert rec["stdout"] == "\u00e9t\u00e9 \U0001f600\n", rec["stdout"]
    # A 2 MiB candidate (a long comment): read whole, evaluated.
    big = "# " + "x" * (2 << 20) + "\n" + ADD_OK
    rec = ok_record(s.run(body(big, model="big")))
    assert (rec["status"], rec["model"]) == ("pass", "big"), rec


def test_a_batch_of_64_on_two_workers(serve):
    s = serve()
    runs = [body(ADD_OK if i % 3 else ADD_BAD, model="n%02d" % i, sample=i) for i in range(64)]
    a = s.batch(runs)
    assert a.status == 200, a
    got = [(r["model"], r["sample"], r["status"]) for r in a.json["records"]]
    assert got == [("n%02d" % i, i, "pass" if i % 3 else "assertion_fail") for i in range(64)], got
    assert s.metrics().total("execeval_evaluations_total") == 64


def test_slow_clients_do_not_block_others(serve):
    """Connections that send half a request and stall (slowloris) must not
    keep the server from answering everyone else."""
    s = serve()
    stalled = []
    try:
        for i in range(8):
            c = s.raw_socket()
            if i % 2:
                c.sendall(b"POST /v1/run HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{\"task\"")
            else:
                c.sendall(b"POST /v1/run HTTP/1.1\r\nHost: x\r\nContent-Ty")
            stalled.append(c)
        t0 = time.monotonic()
        a = s.batch([body(ADD_OK, model="s%d" % i) for i in range(4)])
        assert [r["status"] for r in a.json["records"]] == ["pass"] * 4, a
        assert ok_record(s.run(body(ADD_OK)))["status"] == "pass"
        assert health(s)["status"] == "ok"
        assert time.monotonic() - t0 < 5
    finally:
        for c in stalled:
            c.close()


# ---------------------------------------------------------------------------
# The server's record is `execeval run`'s.


def agreement_cases():
    cases = [("ok", ADD_TASK, ADD_OK), ("bad", ADD_TASK, ADD_BAD), ("syntax", ADD_TASK, ADD_SYNTAX),
             ("fenced", ADD_TASK, FENCED), ("denied_import", ADD_TASK, DENIED),
             ("premature_exit", ADD_TASK, "raise SystemExit(3)\n"),
             ("import_error", ADD_TASK, "import no_such_module_xyz\n" + ADD_OK),
             ("raises", ADD_TASK, "def add(a, b):\n    raise ValueError('boom %d' % a)\n"),
             ("native_kinds", {"task_id": "serve/kinds", "prompt": "", "entry_point": "add", "tests": [
                 {"kind": "call", "fn": "add", "args": [1, 2], "expected": 3},
                 {"kind": "call", "fn": "add", "args": [1, 1], "expected": 3, "visibility": "hidden"},
                 {"kind": "io", "stdin": "4 5\n", "stdout": "9\n"},
                 {"kind": "unittest", "code": "import unittest\nclass T(unittest.TestCase):\n"
                                              "    def test_a(self): self.assertEqual(add(1, 2), 3)\n"}]},
              "import sys\ndef add(a, b):\n    return a + b\nif __name__ == '__main__':\n"
              "    a, b = map(int, sys.stdin.read().split())\n    print(add(a, b))\n")]
    if HUMANEVAL.exists():
        t = humaneval("HumanEval/0")
        cases += [("humaneval_ok", t, t["prompt"] + t["canonical_solution"]),
                  ("humaneval_bad", t, t["prompt"] + "    return False\n")]
    if MBPP.exists():
        t = mbpp(11)
        cases += [("mbpp_ok", t, t["code"])]
    return cases


def test_server_and_execeval_run_agree(serve, run):
    s = serve()
    mismatches = []
    for name, task, cand in agreement_cases():
        served = ok_record(s.run(body(cand, task=task)))
        local = run(cand, task=task)
        assert local.code in (0, 1), (name, local)
        if essence(served) != essence(local.record):
            mismatches.append("%s:\n  serve: %r\n  run:   %r" % (name, essence(served), essence(local.record)))
        # Same keys, same defaults for model and sample.
        if sorted(served) != sorted(local.record) or served.get("sample") != local.record.get("sample") \
                or served.get("model") != local.record.get("model"):
            mismatches.append("%s: keys only in serve's %r, only in run's %r; model %r/%r, sample %r/%r" % (
                name, sorted(set(served) - set(local.record)), sorted(set(local.record) - set(served)),
                served.get("model"), local.record.get("model"), served.get("sample"), local.record.get("sample")))
    assert not mismatches, "\n".join(mismatches)


# ---------------------------------------------------------------------------
# POST /v1/batch


def test_batch_records_in_request_order(serve):
    s = serve()
    runs = [body(ADD_OK, model="b0", sample=10),
            body(ADD_BAD, model="b1", sample=11),
            body(sleeper(0.3), model="b2", sample=12),  # finishes after the ones behind it have started
            body(ADD_SYNTAX, model="b3", sample=13),
            body(SPIN, model="b4", sample=14, limits={"timeout_s": 0.5}),
            body(FENCED, model="b5", sample=15),
            body(DENIED, model="b6", sample=16)]
    a = s.batch(runs)
    assert a.status == 200, a
    recs = a.json["records"]
    assert [(r["model"], r["sample"], r["status"]) for r in recs] == [
        ("b0", 10, "pass"), ("b1", 11, "assertion_fail"), ("b2", 12, "pass"), ("b3", 13, "syntax_error"),
        ("b4", 14, "timeout"), ("b5", 15, "pass"), ("b6", 16, "error")], recs
    assert recs[6]["detail"] == "denied import: socket", recs[6]


@pytest.mark.parametrize("bad_run, field", [
    ({"task": ADD_TASK, "candidate": 42}, "runs[1].candidate"),
    ({"task": ADD_TASK}, "runs[1].candidate"),
    ({"candidate": ADD_OK}, "runs[1].task"),
    ({"task": dict(ADD_TASK, tests=[{"kind": "assert", "code": "assert 1"}, {"kind": "nope", "code": "x"}]),
      "candidate": ADD_OK}, "runs[1].task.tests[1].kind"),
    ({"task": ADD_TASK, "candidate": ADD_OK, "limits": {"timeout_s": "slow"}}, "runs[1].limits.timeout_s"),
], ids=["candidate_type", "candidate_missing", "task_missing", "test_kind", "limits"])
def test_batch_with_an_invalid_run_is_400_and_runs_nothing(serve, bad_run, field):
    s = serve()
    before = s.metrics()
    a = s.batch([body(ADD_OK, model="x0"), bad_run, body(ADD_OK, model="x2")])
    err = error_of(a, 400)
    assert err["field"] == field, err
    after = s.metrics()
    assert after.total("execeval_evaluations_total") == before.total("execeval_evaluations_total"), \
        "an invalid batch was (partly) evaluated"


def test_batch_with_one_task_for_many_candidates(serve):
    """n samples of one prompt: the task (and limits, model, extract) sent
    once for the batch; a run's own field wins over the batch's."""
    s = serve()
    runs = [{"candidate": ADD_OK if i % 3 else ADD_BAD, "sample": i} for i in range(12)]
    runs.append({"candidate": SPIN, "sample": 12})
    runs.append({"candidate": ADD_OK, "sample": 13, "model": "own", "limits": {"timeout_s": 2}})
    runs.append({"candidate": "def mul(a, b):\n    return a * b\n", "sample": 14,
                 "task": {"task_id": "serve/mul", "tests": [{"kind": "assert", "code": "assert mul(2, 3) == 6"}]}})
    a = s.post("/v1/batch", {"task": ADD_TASK, "limits": {"timeout_s": 0.5}, "model": "shared",
                             "extract": "auto", "runs": runs})
    assert a.status == 200, a
    recs = a.json["records"]
    assert [r["sample"] for r in recs] == list(range(15))
    assert [r["task_id"] for r in recs] == ["serve/add"] * 14 + ["serve/mul"]
    assert [r["status"] for r in recs[:12]] == ["assertion_fail" if i % 3 == 0 else "pass" for i in range(12)]
    assert recs[12]["status"] == "timeout" and recs[12]["resources"]["wall_ms"] < 1500, recs[12]
    assert [r["model"] for r in recs] == ["shared"] * 13 + ["own", "shared"]
    assert recs[13]["status"] == "pass" and recs[14]["status"] == "pass", recs[13:]


def test_batch_default_errors_name_the_batch_field(serve):
    s = serve()
    bad_task = dict(ADD_TASK, tests=[{"kind": "nope", "code": "x"}])
    cases = [({"task": bad_task, "runs": [{"candidate": ADD_OK}]}, "task.tests[0].kind"),
             ({"task": ADD_TASK, "limits": {"timeout_s": 99}, "runs": [{"candidate": ADD_OK}]}, "limits.timeout_s"),
             ({"task": ADD_TASK, "sample": 1, "runs": [{"candidate": ADD_OK}]}, "sample"),
             ({"runs": [{"candidate": ADD_OK}]}, "runs[0].task")]
    for req, field in cases:
        assert error_of(s.post("/v1/batch", req), 400)["field"] == field, req


def test_batch_body_errors(serve):
    s = serve()
    assert error_of(s.batch([]), 400)["field"] == "runs"
    assert error_of(s.post("/v1/batch", {"runs": "x"}), 400)["field"] == "runs"
    assert error_of(s.post("/v1/batch", {}), 400)["field"] == "runs"
    assert error_of(s.post("/v1/batch", {"runs": [body(ADD_OK)], "extra": 1}), 400)["field"] == "extra"
    assert error_of(s.post("/v1/batch", {"runs": [5]}), 400)["field"] == "runs[0]"


# ---------------------------------------------------------------------------
# GET /healthz, GET /metrics


def test_healthz(serve):
    s = serve()
    a = s.healthz()
    h = ok_record(a)
    m = re.search(r"\((\d+) workers, (\w+) isolation, queue (\d+)\)", s.banner)
    assert m, s.banner
    assert (m.group(1), m.group(3)) == ("2", "1024"), s.banner
    want = {"status": "ok", "workers": 2, "isolation": m.group(2), "running": 0, "queued": 0,
            "queue_capacity": 1024}
    assert {k: h.get(k) for k in want} == want, h
    assert h["isolation"] in ("warm", "cold"), h
    if ISOLATION in ("warm", "cold"):
        assert h["isolation"] == ISOLATION, h
    s2 = serve("--queue", "7", "--isolation", "cold", jobs=1)
    h2 = health(s2)
    assert {k: h2.get(k) for k in want} == dict(want, workers=1, isolation="cold", queue_capacity=7), h2
    assert "(1 workers, cold isolation, queue 7)" in s2.banner or "(1 worker, cold isolation, queue 7)" in \
        s2.banner, s2.banner


def test_metrics_count_exactly_what_ran(serve):
    s = serve()
    raw = s.request("GET", "/metrics")
    assert raw.status == 200, raw
    ctype = raw.header("Content-Type") or ""
    assert ctype.replace(" ", "") == "text/plain;version=0.0.4;charset=utf-8", ctype
    m0 = parse_metrics(raw.body.decode())

    statuses = {"pass": 0, "assertion_fail": 0, "syntax_error": 0, "timeout": 0, "error": 0}
    for cand, extra, want in [(ADD_OK, {}, "pass"), (FENCED, {}, "pass"), (ADD_BAD, {}, "assertion_fail"),
                              (ADD_SYNTAX, {}, "syntax_error"), (SPIN, {"limits": {"timeout_s": 0.3}}, "timeout"),
                              (DENIED, {}, "error")]:
        assert ok_record(s.run(body(cand, **extra)))["status"] == want
        statuses[want] += 1
    a = s.batch([body(ADD_OK), body(ADD_BAD)])
    assert [r["status"] for r in a.json["records"]] == ["pass", "assertion_fail"], a
    statuses["pass"] += 1
    statuses["assertion_fail"] += 1
    assert error_of(s.post("/v1/run", b"{oops"), 400)["field"] is None
    assert s.request("GET", "/nowhere").status == 404
    m1 = s.metrics()

    def d(name, **labels):
        return m1.value(name, **labels) - m0.value(name, **labels)

    for st, n in statuses.items():
        assert d("execeval_evaluations_total", status=st) == n, (st, m1.text)
    assert m1.total("execeval_evaluations_total") - m0.total("execeval_evaluations_total") == 8
    assert d("execeval_http_requests_total", endpoint="/v1/run", code="200") == 6, m1.text
    assert d("execeval_http_requests_total", endpoint="/v1/batch", code="200") == 1, m1.text
    assert d("execeval_http_requests_total", endpoint="/v1/run", code="400") == 1, m1.text
    assert d("execeval_http_requests_total", endpoint="other", code="404") == 1, m1.text
    assert d("execeval_rejected_total", reason="bad_request") == 1, m1.text
    assert m1.value("execeval_sandbox_failures_total") == 0
    for name in ("execeval_http_requests_total", "execeval_evaluations_total", "execeval_sandbox_failures_total",
                 "execeval_rejected_total"):
        assert m1.types.get(name) == "counter", (name, m1.types.get(name))
    gauges = {"execeval_queue_depth": 0, "execeval_queue_capacity": 1024, "execeval_evaluations_running": 0,
              "execeval_workers": 2, "execeval_draining": 0}
    for name, v in gauges.items():
        assert m1.types.get(name) == "gauge", (name, m1.types.get(name))
        assert m1.get(name) == v, (name, m1.get(name))
    assert check_histogram(m1, "execeval_request_duration_seconds", endpoint="/v1/run") - \
        (m0.histogram("execeval_request_duration_seconds", endpoint="/v1/run")[2] or 0) == 6
    assert check_histogram(m1, "execeval_request_duration_seconds", endpoint="/v1/batch") - \
        (m0.histogram("execeval_request_duration_seconds", endpoint="/v1/batch")[2] or 0) == 1
    assert check_histogram(m1, "execeval_evaluation_duration_seconds") - \
        (m0.histogram("execeval_evaluation_duration_seconds")[2] or 0) == 8
    # The timeout's evaluation took >= 0.3 s: some bucket below 0.3 s does not hold all 8.
    buckets, total, _ = m1.histogram("execeval_evaluation_duration_seconds")
    assert total >= 0.3, total


def test_a_run_is_answered_while_another_slots_worker_is_starting(serve):
    """Issue 13 item 6 (test_warm.py has the eval side): slot 1's warm
    worker takes SLOW_START_MS to warm up (EXECEVAL_TEST_WORKER_DELAY_MS,
    for the tests only). A run sleeping 1 s holds slot 0; the next one goes
    to slot 1 and waits for its worker. Before, that wait blocked the
    server's one loop, and the first run was answered only once the slow
    worker was up; now it is answered while that worker is still starting
    (it cannot be ready before SLOW_START_MS after the server started)."""
    slow_start_ms = 6000
    spawned = time.monotonic()
    # --judge inline: one worker per slot, the second slot's the slow one
    # (the split judge's start is test_judge_separate.py's).
    s = serve("--isolation", "warm", "--judge", "inline",
              env={"EXECEVAL_TEST_WORKER_DELAY_MS": "0,%d" % slow_start_ms})
    first = Background(s.run, body(sleeper(1), model="first"))
    wait_health(s, lambda h: h["running"] == 1)
    second = Background(s.run, body(ADD_OK, model="second"))
    rec = ok_record(first.get())
    answered_after = time.monotonic() - spawned
    assert (rec["status"], rec["model"]) == ("pass", "first"), rec
    assert answered_after < slow_start_ms / 1000, \
        "the first run waited for the other slot's worker (%.1f s)" % answered_after
    assert second.is_alive(), "the second run did not wait for its slow worker"
    rec = ok_record(second.get())
    assert (rec["status"], rec["model"]) == ("pass", "second"), rec
    # Timed from its own start, not from its worker's warm-up.
    assert rec["resources"]["wall_ms"] < slow_start_ms / 2, rec["resources"]


# ---------------------------------------------------------------------------
# Errors


def with_tests(*kinds):
    return dict(ADD_TASK, tests=[{"kind": k, "code": "assert add(1, 2) == 3"} for k in kinds])


BAD_REQUESTS = [
    ("not_json", b"{not json", None),
    ("empty_body", b"", None),
    ("not_an_object", b"[1, 2]", None),
    ("invalid_utf8", b'{"task": {"task_id": "\xff\xfe"}, "candidate": "x = 1"}', None),
    ("trailing_garbage", json.dumps(body(ADD_OK)).encode() + b" x", None),
    ("task_missing", {"candidate": ADD_OK}, "task"),
    ("task_not_object", {"task": "add", "candidate": ADD_OK}, "task"),
    ("candidate_missing", {"task": ADD_TASK}, "candidate"),
    ("candidate_type", {"task": ADD_TASK, "candidate": ["x"]}, "candidate"),
    ("test_kind_0", body(ADD_OK, task=with_tests("bogus")), "task.tests[0].kind"),
    ("test_kind_2", body(ADD_OK, task=with_tests("assert", "assert", "bogus")), "task.tests[2].kind"),
    ("unknown_field", body(ADD_OK, colour="blue"), "colour"),
    ("limits_type", body(ADD_OK, limits={"timeout_s": "fast"}), "limits.timeout_s"),
    ("limits_not_object", body(ADD_OK, limits=3), "limits"),
    ("sample_negative", body(ADD_OK, sample=-1), "sample"),
    ("sample_type", body(ADD_OK, sample="3"), "sample"),
    ("model_type", body(ADD_OK, model=5), "model"),
    ("extract_value", body(ADD_OK, extract="sometimes"), "extract"),
]


def test_bad_requests_are_400_naming_the_field(serve):
    s = serve()
    wrong = []
    for name, b, field in BAD_REQUESTS:
        a = s.post("/v1/run", b)
        if a.status != 400 or not isinstance(a.json, dict) or a.json.get("field", "absent") != field \
                or not a.json.get("error"):
            wrong.append("%s: expected 400 field %r, got %r" % (name, field, a))
        elif not (a.header("Content-Type") or "").startswith("application/json"):
            wrong.append("%s: content type %r" % (name, a.header("Content-Type")))
    assert not wrong, "\n".join(wrong)
    a = s.post("/v1/run", b"{not json")
    assert re.match(r"body: line 1 column \d+: ", a.json["error"]), a
    a = s.post("/v1/run", b'{"task": {},\n "candidate": }')
    assert re.match(r"body: line 2 column \d+: ", a.json["error"]), a
    a = s.post("/v1/run", body(ADD_OK, colour="blue"))
    assert "colour" in a.json["error"], a
    m = s.metrics()
    assert m.value("execeval_rejected_total", reason="bad_request") == len(BAD_REQUESTS) + 3, m.text
    assert m.total("execeval_evaluations_total") == 0, m.text


def test_unknown_path_404_and_wrong_method_405(serve):
    s = serve()
    for method, path in [("GET", "/"), ("GET", "/v1"), ("POST", "/v1/runs"), ("GET", "/v2/run"),
                         ("GET", "/healthz/x")]:
        a = s.request(method, path, b"{}" if method == "POST" else None)
        err = error_of(a, 404)
        assert err["field"] is None, (method, path, a)
    for method, path, allow in [("GET", "/v1/run", "POST"), ("PUT", "/v1/run", "POST"),
                                ("DELETE", "/v1/batch", "POST"), ("GET", "/v1/batch", "POST"),
                                ("POST", "/healthz", "GET"), ("POST", "/metrics", "GET")]:
        a = s.request(method, path, b"{}" if method in ("POST", "PUT") else None)
        err = error_of(a, 405)
        assert err["field"] is None, a
        allowed = [x.strip() for x in (a.header("Allow") or "").split(",")]
        assert allow in allowed, (method, path, a)
        assert method not in allowed, (method, path, a)


def padded(b, size):
    """The JSON body b, padded with spaces to exactly size bytes."""
    text = json.dumps(b).encode()
    assert len(text) <= size and text.endswith(b"}")
    return text[:-1] + b" " * (size - len(text)) + b"}"


def chunked_request(path, payload, chunk=100):
    head = ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" % path).encode()
    parts = [b"%x\r\n%s\r\n" % (len(payload[i:i + chunk]), payload[i:i + chunk]) for i in range(0, len(payload), chunk)]
    return head + b"".join(parts) + b"0\r\n\r\n"


def test_body_over_max_body_is_413(serve):
    s = serve("--max-body", "1000")
    # At the limit: evaluated.
    rec = ok_record(s.post("/v1/run", padded(body(ADD_OK, model="at-limit"), 1000)))
    assert (rec["status"], rec["model"]) == ("pass", "at-limit")
    # One byte over, with Content-Length.
    err = error_of(s.post("/v1/run", padded(body(ADD_OK), 1001)), 413)
    assert err["field"] is None, err
    # Judged on Content-Length before the body is read: the headers alone get the answer.
    t0 = time.monotonic()
    a = raw_exchange(s, b"POST /v1/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 100000000\r\n\r\n", timeout=10)
    assert error_of(a, 413)["field"] is None
    assert time.monotonic() - t0 < 5
    # Chunked: under the limit evaluated, over it 413 while reading.
    small = json.dumps(body(ADD_OK, model="chunked")).encode()
    assert len(small) < 1000
    rec = ok_record(raw_exchange(s, chunked_request("/v1/run", small)))
    assert (rec["status"], rec["model"]) == ("pass", "chunked")
    a = raw_exchange(s, chunked_request("/v1/run", padded(body(ADD_OK), 1001)))
    assert error_of(a, 413)["field"] is None
    a = raw_exchange(s, chunked_request("/v1/batch", padded({"runs": [body(ADD_OK)] * 3}, 1500)))
    assert error_of(a, 413)["field"] is None
    m = s.metrics()
    assert m.value("execeval_rejected_total", reason="too_large") == 4, m.text
    assert m.total("execeval_evaluations_total") == 2, m.text


def test_batch_larger_than_the_queue_is_413(serve):
    s = serve("--queue", "3")
    err = error_of(s.batch([body(ADD_OK, model="q%d" % i) for i in range(4)]), 413)
    assert err["field"] in ("runs", None), err
    a = s.batch([body(ADD_OK, model="q%d" % i) for i in range(3)])
    assert a.status == 200, a
    assert [(r["model"], r["status"]) for r in a.json["records"]] == [("q0", "pass"), ("q1", "pass"), ("q2", "pass")]
    m = s.metrics()
    assert m.value("execeval_rejected_total", reason="too_large") == 1, m.text
    assert m.total("execeval_evaluations_total") == 3, m.text


def test_full_queue_is_429_with_retry_after(serve):
    s = serve("--timeout", "30", "--queue", "1", jobs=1)
    slow = [Background(s.run, body(sleeper(2), model="slow%d" % i, limits={"timeout_s": 10})) for i in range(2)]
    wait_health(s, lambda h: h["running"] == 1 and h["queued"] == 1)
    a = s.run(body(ADD_OK, model="third"))
    err = error_of(a, 429)
    assert err["field"] is None, err
    ra = a.header("Retry-After")
    assert ra is not None and ra.strip().isdigit() and int(ra) >= 1, a
    a = s.batch([body(ADD_OK, model="third-batch")])
    assert error_of(a, 429)["field"] is None
    assert (a.header("Retry-After") or "").strip().isdigit(), a
    # Never fits: too large, not "later" (checked at the end).
    too_large = s.batch([body(ADD_OK), body(ADD_OK)])
    m = s.metrics()
    assert m.value("execeval_rejected_total", reason="queue_full") + \
        m.value("execeval_rejected_total", reason="too_large") == 3, m.text
    assert m.value("execeval_rejected_total", reason="queue_full") == (2 if too_large.status == 413 else 3), m.text
    assert m.value("execeval_http_requests_total", endpoint="/v1/run", code="429") == 1, m.text
    assert m.value("execeval_http_requests_total", endpoint="/v1/batch", code="429") == \
        (1 if too_large.status == 413 else 2), m.text
    assert m.get("execeval_queue_depth") == 1 and m.get("execeval_evaluations_running") == 1, m.text
    for i, b in enumerate(slow):
        a = b.get(30)
        assert b.error is None, b.error
        rec = ok_record(a)
        assert (rec["model"], rec["status"]) == ("slow%d" % i, "pass"), rec
    # Room again.
    assert ok_record(s.run(body(ADD_OK)))["status"] == "pass"
    assert s.metrics().total("execeval_evaluations_total") == 3
    assert error_of(too_large, 413)["field"] in ("runs", None), \
        "a batch of 2 runs with --queue 1 can never fit: 413, not %r" % too_large


@contextlib.contextmanager
def open_connections(s, n):
    """n keep-alive connections, each shown served by a /healthz."""
    conns = [s.connection() for _ in range(n)]
    try:
        for c in conns:
            assert health(s, conn=c)["status"] == "ok"
        yield conns
    finally:
        for c in conns:
            c.close()


def test_max_connections(serve):
    """Over --max-connections, a new connection waits in the listen backlog
    (TCP backpressure, docs/api.md) and is served as soon as one closes."""
    s = serve("--max-connections", "4")
    with open_connections(s, 4) as conns:
        extra = s.connection(timeout=10)
        try:
            extra.connect()
            extra.sock.settimeout(1.5)
            extra.request("GET", "/healthz")
            with pytest.raises(socket.timeout):
                extra.getresponse()  # not served while four are open
            extra.sock.settimeout(10)
            conns.pop().close()
            a = extra.getresponse()
            assert a.status == 200, a.status
            assert json.loads(a.read())["status"] == "ok"
        finally:
            extra.close()
        assert ok_record(s.run(body(ADD_OK)))["status"] == "pass"
        for c in conns:
            assert health(s, conn=c)["status"] == "ok"


def test_max_connections_per_ip(serve):
    """Over --max-connections-per-ip, a further connection from the same
    address is closed at once; another address (127.0.0.2) is still served,
    and so is the first address once one of its connections closes."""
    s = serve("--max-connections-per-ip", "2")
    with open_connections(s, 2) as conns:
        third = s.connection(timeout=10)
        try:
            with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)):
                third.request("GET", "/healthz")
                third.getresponse()
        finally:
            third.close()
        other = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10, source_address=("127.0.0.2", 0))
        try:
            other.request("GET", "/healthz")
            a = other.getresponse()
            assert a.status == 200 and json.loads(a.read())["status"] == "ok"
        finally:
            other.close()
        conns.pop().close()
        deadline = time.monotonic() + 10
        while True:  # the server notices the close on its next loop turn
            try:
                assert ok_record(s.run(body(ADD_OK)))["status"] == "pass"
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                assert time.monotonic() < deadline, "a closed connection's place was never given back"
                time.sleep(0.05)


# ---------------------------------------------------------------------------
# Token


def test_token(serve, tmp_path):
    token = "tok-" + base64.b16encode(SECRET[-8:].encode()).decode().lower() + "-x9"
    tf = tmp_path / "token"
    tf.write_text(token + "\n")
    s = serve("--token-file", str(tf))
    unauthorized = 0

    def denied(a):
        nonlocal unauthorized
        err = error_of(a, 401)
        assert err["field"] is None, err
        assert (a.header("WWW-Authenticate") or "").startswith("Bearer"), a
        unauthorized += 1

    denied(s.run(body(ADD_OK)))
    denied(s.batch([body(ADD_OK)]))
    wrong_same_length = token[:-1] + ("y" if token[-1] != "y" else "z")
    assert len(wrong_same_length) == len(token)
    for wrong in (wrong_same_length, token[:-1], token + "9", "x", token.upper()):
        denied(s.run(body(ADD_OK), token=wrong))
    denied(s.run(body(ADD_OK), headers={"Authorization": "Basic " + base64.b64encode(b"u:" + token.encode()).decode()}))
    denied(s.run(body(ADD_OK), headers={"Authorization": token}))
    denied(s.run(body(ADD_OK), headers={"Authorization": "Bearer"}))
    # No token: not even the body is judged.
    denied(s.post("/v1/run", b"{not json"))
    # /healthz needs none; /metrics does.
    assert s.healthz().status == 200
    assert s.healthz(token="wrong").status == 200
    denied(s.request("GET", "/metrics"))
    denied(s.request("GET", "/metrics", token=wrong_same_length))
    rec = ok_record(s.run(body(ADD_OK, model="authorized"), token=token))
    assert (rec["status"], rec["model"]) == ("pass", "authorized")
    a = s.request("GET", "/metrics", token=token)
    assert a.status == 200, a
    m = parse_metrics(a.body.decode())
    assert m.value("execeval_rejected_total", reason="unauthorized") == unauthorized, (unauthorized, m.text)
    assert m.total("execeval_evaluations_total") == 1, m.text
    assert token not in s.stderr


def usage_run(args, timeout=20):
    """`execeval serve ARGS` that must not start: (code, stderr). A server
    that does start is stopped and reported."""
    p = subprocess.Popen([EXECEVAL, "serve", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=execeval_env())
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGTERM)
        try:
            out, err = p.communicate(timeout=40)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        pytest.fail("execeval serve %r started instead of refusing; stderr: %r" % (args, err[-2000:]))
    return p.returncode, err.decode("utf-8", "replace")


def test_bad_token_files_are_usage_errors(tmp_path):
    empty = tmp_path / "empty-token"
    empty.write_text("")
    newline = tmp_path / "newline-token"
    newline.write_text("\n")
    missing = tmp_path / "missing-token"
    for f in (empty, newline, missing):
        code, err = usage_run(["--listen", "127.0.0.1:0", "--token-file", str(f)])
        assert code == 2, (f.name, code, err)
        assert str(f) in err, (f.name, err)


@pytest.mark.parametrize("value", ["nonsense", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
                                   "127.0.0.1:80x", "256.1.1.1:80", "1.2.3:80", "[::1", "[::1]", "[zz::1]:80",
                                   "::1:80", ""])
def test_bad_listen_is_a_usage_error(value):
    code, err = usage_run(["--listen", value])
    assert code == 2, (value, code, err)
    assert "listen" in err, (value, err)


@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_a_host_that_cannot_run_sandboxes_fails_at_start_not_per_request(isolation):
    """Without CAP_SETPCAP in its bounding set execeval cannot set up a
    sandbox: serve must say so and exit 3 before listening (a server that
    listened would pass readiness probes and answer every request 500).
    The host probe refuses it before the self-check (test_host_caps.py
    covers each capability)."""
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) not found")
    p = subprocess.run(["setpriv", "--bounding-set", "-setpcap", "--inh-caps", "-setpcap", EXECEVAL, "serve",
                        "--listen", "127.0.0.1:0", "-j", "1", "--isolation", isolation],
                       capture_output=True, text=True, timeout=60, env=execeval_env())
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert "listening on" not in p.stderr, p.stderr
    assert "root without the capabilities SETPCAP" in p.stderr, p.stderr


@pytest.mark.parametrize("args", [["--bogus-flag"], ["--max-body", "abc"], ["--queue", "-5"], ["-j", "x"],
                                  ["--grace", "soon"], ["--listen"], ["--isolation", "tepid"],
                                  ["--max-tests-per-task", "0"], ["--max-request-tests", "x"],
                                  ["--max-body-values", "0"], ["--max-buffered-per-ip", "0"],
                                  ["--body-min-rate", "0"], ["--body-grace", "-1"]],
                         ids=["bogus", "max_body", "queue", "jobs", "grace", "listen_no_value", "isolation",
                              "max_tests", "request_tests", "body_values", "per_ip", "min_rate", "body_grace"])
def test_bad_flags_are_usage_errors(args):
    code, err = usage_run(["--listen", "127.0.0.1:0"] + args if args != ["--listen"] else args)
    assert code == 2, (args, code, err)
    assert err.strip(), args


def test_port_in_use_is_exit_3(serve):
    s = serve()
    code, err = usage_run(["--listen", "127.0.0.1:%d" % s.port, "-j", "1"], timeout=30)
    assert code == 3, (code, err)
    assert str(s.port) in err or "bind" in err or "listen" in err, err
    assert health(s)["status"] == "ok"


# ---------------------------------------------------------------------------
# Binding


def test_help_documents_the_loopback_default():
    p = subprocess.run([EXECEVAL, "serve", "--help"], capture_output=True, timeout=20)
    assert p.returncode == 0, p
    text = (p.stdout + p.stderr).decode()
    assert "127.0.0.1:8080" in text, text
    for flag in ("--listen", "--queue", "--max-body", "--token-file", "--grace", "-j"):
        assert flag in text, (flag, text)


def warnings_of(server):
    return [line for line in server.stderr.splitlines()
            if line.strip() != server.banner and re.search(r"warn|token", line, re.I)]


def test_non_loopback_without_token_warns(serve, tmp_path):
    lo = serve()
    assert lo.host == "127.0.0.1", lo.banner
    wide = serve(listen="0.0.0.0:0")
    assert wide.host == "0.0.0.0", wide.banner
    tf = tmp_path / "token"
    tf.write_text("t0k3n-0123456789abcdef\n")
    wide_token = serve("--token-file", str(tf), listen="0.0.0.0:0")
    assert health(wide)["status"] == "ok"
    assert health(wide_token)["status"] == "ok"
    assert warnings_of(lo) == [], lo.stderr
    assert warnings_of(wide_token) == [], wide_token.stderr
    assert len(warnings_of(wide)) >= 1, wide.stderr
    assert ok_record(wide.run(body(ADD_OK)))["status"] == "pass"


def test_ipv6_loopback(serve):
    try:
        socket.socket(socket.AF_INET6).bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    s = serve(listen="[::1]:0")
    assert s.host == "[::1]", s.banner
    assert ok_record(s.run(body(ADD_OK)))["status"] == "pass"
    assert warnings_of(s) == [], s.stderr


# ---------------------------------------------------------------------------
# Shutdown


def send_and_wait(server, b):
    """(t_sent, answer or exception, t_answer); t_sent is None when the
    request could not be sent (connection refused, ...)."""
    c = server.connection()
    try:
        c.request("POST", "/v1/run", body=json.dumps(b).encode(), headers={"Content-Type": "application/json"})
        t_sent = time.monotonic()
        try:
            return t_sent, answer_of(c.getresponse()), time.monotonic()
        except (OSError, http.client.HTTPException) as e:
            return t_sent, e, time.monotonic()
    except (OSError, http.client.HTTPException) as e:
        return None, e, time.monotonic()
    finally:
        c.close()


def closed_or_503(fn):
    """fn() on a connection opened before SIGTERM: a 503 answer, or the
    connection closed. Returns the answer or None (closed)."""
    try:
        a = fn()
    except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine, BrokenPipeError):
        return None
    assert a.status == 503, a
    return a


def test_graceful_shutdown_finishes_accepted_work(serve):
    s = serve("--timeout", "30")
    keep_health, keep_run = s.connection(), s.connection()
    assert health(s, conn=keep_health)["status"] == "ok"
    assert ok_record(s.run(body(ADD_OK), conn=keep_run))["status"] == "pass"
    clients = [Background(send_and_wait, s, body(sleeper(1), model="g%d" % i, limits={"timeout_s": 10}))
               for i in range(8)]
    wait_health(s, lambda h: h["running"] == 2 and h["running"] + h["queued"] == 8)
    t_term = time.monotonic()
    s.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    assert s.proc.poll() is None, "exited before finishing its accepted work"
    # Open connections: 503 (draining) or closed.
    a = closed_or_503(lambda: s.healthz(conn=keep_health))
    print("GET /healthz on an open connection while draining: %r" % a)
    if a is not None:
        assert isinstance(a.json, dict) and a.json.get("status") == "draining", a
        assert a.json.get("workers") == 2 and "running" in a.json and "queued" in a.json, a
    a = closed_or_503(lambda: s.run(body(ADD_OK), conn=keep_run))
    print("POST /v1/run on an open connection while draining: %r" % a)
    if a is not None:
        assert error_of(a, 503)["field"] is None
        assert (a.header("Retry-After") or "").strip().isdigit(), a
    # New connections: refused.
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((s.connect_host, s.port), timeout=5).close()
    code = s.wait(40)
    took = time.monotonic() - t_term
    keep_health.close()
    keep_run.close()
    assert code == 0, (code, s.stderr)
    assert took < 15, took
    for i, c in enumerate(clients):
        t_sent, a, _ = c.get(10)
        assert t_sent is not None and t_sent < t_term
        assert not isinstance(a, Exception), "request g%d sent before the SIGTERM: %r" % (i, a)
        rec = ok_record(a)
        assert (rec["model"], rec["status"]) == ("g%d" % i, "pass"), rec
    assert wait_no_leftovers() == []
    assert wait_no_cgroups() == []


def test_shutdown_while_clients_keep_sending(serve):
    """8 clients loop; SIGTERM lands while several requests are in flight.
    Whatever the server had accepted before the SIGTERM gets its record; a
    request still being sent around the SIGTERM may get 503 or a
    refused/closed connection; afterwards connections are refused."""
    s = serve("--timeout", "30")
    stop = threading.Event()
    results = []  # (client, n, t_sent, answer or exception, t_answer)
    lock = threading.Lock()

    def client(i):
        n = 0
        while not stop.is_set():
            t_sent, a, t_answer = send_and_wait(s, body(sleeper(0.5), model="k%d-%d" % (i, n),
                                                        limits={"timeout_s": 10}))
            with lock:
                results.append((i, n, t_sent, a, t_answer))
            n += 1
            if isinstance(a, Exception) or a.status != 200:
                return

    threads = [Background(client, i) for i in range(8)]
    wait_health(s, lambda h: h["running"] == 2 and h["queued"] >= 4)
    t_snapshot = time.monotonic()
    h = health(s)
    in_flight = h["running"] + h["queued"]
    t_term = time.monotonic()
    s.send_signal(signal.SIGTERM)
    code = s.wait(40)
    stop.set()
    for t in threads:
        t.get(20)
    assert code == 0, (code, s.stderr)
    problems = []
    answered_200_after = 0
    finished_between = 0
    for i, n, t_sent, a, t_answer in results:
        if not isinstance(a, Exception) and a.status == 200:
            rec = a.json
            if (rec.get("model"), rec.get("status")) != ("k%d-%d" % (i, n), "pass"):
                problems.append("k%d-%d got %r" % (i, n, rec))
            if t_answer >= t_term:
                answered_200_after += 1
            elif t_answer >= t_snapshot:
                finished_between += 1
            continue
        # Not a record: only for a request sent around or after the SIGTERM.
        if t_sent is not None and t_sent < t_term - 0.2:
            problems.append("k%d-%d sent %.3f s before the SIGTERM got %r" % (i, n, t_term - t_sent, a))
        if isinstance(a, Exception):
            if not isinstance(a, (ConnectionError, http.client.RemoteDisconnected, BrokenPipeError)):
                problems.append("k%d-%d: %r" % (i, n, a))
        elif a.status != 503:
            problems.append("k%d-%d: %r" % (i, n, a))
    assert not problems, "\n".join(problems)
    # Everything in flight at the SIGTERM was answered with its record.
    assert answered_200_after >= in_flight - finished_between, (in_flight, finished_between, answered_200_after)
    # Every client ended with a refused connection (or a 503) after the SIGTERM.
    assert len({r[0] for r in results if isinstance(r[3], Exception) or r[3].status != 200}) == 8, results
    assert wait_no_leftovers() == []


def test_second_sigterm_forces_the_stop(serve):
    s = serve("--timeout", "30")
    clients = [Background(send_and_wait, s, body(sleeper(20), model="f%d" % i, limits={"timeout_s": 30}))
               for i in range(4)]
    wait_health(s, lambda h: h["running"] == 2 and h["queued"] == 2)
    time.sleep(0.3)
    s.send_signal(signal.SIGTERM)
    time.sleep(1.0)
    assert s.proc.poll() is None, "the first SIGTERM must drain, not stop"
    t0 = time.monotonic()
    s.send_signal(signal.SIGTERM)
    code = s.wait(15)
    took = time.monotonic() - t0
    if code is None:
        s.kill_and_clean()
        pytest.fail("a second SIGTERM did not stop the server within 15 s")
    assert code == 128 + signal.SIGTERM, (code, s.stderr)
    assert took < 5, took
    got = []
    for i, c in enumerate(clients):
        _, a, _ = c.get(10)
        got.append(("f%d" % i, a.status if not isinstance(a, Exception) else repr(a)))
    assert got == [("f%d" % i, 503) for i in range(4)], got
    assert wait_no_leftovers() == []
    assert wait_no_cgroups() == []


def test_grace_expiry_kills_the_running_candidates(serve):
    s = serve("--timeout", "30", "--grace", "1")
    clients = [Background(send_and_wait, s, body(sleeper(20), model="e%d" % i, limits={"timeout_s": 30}))
               for i in range(2)]
    wait_health(s, lambda h: h["running"] == 2)
    time.sleep(0.3)
    t0 = time.monotonic()
    s.send_signal(signal.SIGTERM)
    code = s.wait(15)
    took = time.monotonic() - t0
    if code is None:
        s.kill_and_clean()
        pytest.fail("--grace 1 did not stop the server within 15 s")
    print("--grace 1 expired: exit %r after %.2f s" % (code, took))
    assert 0.8 <= took < 6, took
    assert code in (0, 128 + signal.SIGTERM), (code, s.stderr)
    got = [c.get(10)[1] for c in clients]
    assert [a.status if not isinstance(a, Exception) else repr(a) for a in got] == [503, 503], got
    assert wait_no_leftovers() == []
    assert wait_no_cgroups() == []


# ---------------------------------------------------------------------------
# Hostile candidates


LEAKER = r'''
import os, sys
out = ["LEAK-BEGIN", repr(dict(os.environ))]
for p in ["/proc/1/environ", "/proc/self/environ", "/proc/%d/environ" % os.getppid(), "/proc/1/cmdline"]:
    try:
        out.append(open(p, "rb").read().decode("latin-1"))
    except Exception as e:
        out.append("ERR %s %r" % (p, e))
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            out.append(open("/proc/%s/environ" % d, "rb").read().decode("latin-1"))
        except Exception:
            pass
text = "\n".join(out)
print(text)
print(text, file=sys.stderr)
def add(a, b):
    return a + b
'''
LEAK_TASK = {"task_id": "serve/leak", "prompt": "",
             "tests": [{"kind": "assert", "code": "assert add(1, 2) == 3"},
                       {"kind": "assert", "code": "import os\nassert False, repr(dict(os.environ)) + "
                                                  "open('/proc/1/environ', 'rb').read().decode('latin-1')"}]}


def test_the_secret_never_appears_in_an_answer(serve):
    s = serve()
    assert SECRET in execeval_env()["EXECEVAL_TEST_SECRET"]
    rec = ok_record(s.run(body(LEAKER, task=LEAK_TASK)))  # ok_record: the answer was checked for the secret
    assert rec["status"] == "assertion_fail", rec
    assert "LEAK-BEGIN" in rec["stdout"] and "LEAK-BEGIN" in rec["stderr"], rec
    assert rec["tests"][1]["message"], rec["tests"][1]
    a = s.batch([body(LEAKER, task=LEAK_TASK, model="l%d" % i) for i in range(3)])
    assert a.status == 200 and len(a.json["records"]) == 3, a
    assert all("LEAK-BEGIN" in r["stdout"] for r in a.json["records"])
    gen = "Here:\n```python\n" + LEAKER + "```\n"
    assert ok_record(s.run(body(gen, task=LEAK_TASK)))["status"] == "assertion_fail"
    assert SECRET not in s.metrics().text
    assert SECRET not in s.stderr


def test_bombs_do_not_make_the_server_unusable(serve):
    s = serve()
    fork_bomb = ADD_OK + "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    memory_bomb = ADD_OK + "x = []\nwhile True:\n    x.append(bytearray(16 << 20))\n"
    flood = ADD_OK + "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n"
    rec = ok_record(s.run(body(fork_bomb, limits={"timeout_s": 2, "procs": 16})))
    assert rec["status"] in ("timeout", "error") and rec["detail"] in ("timeout", "process limit"), rec
    rec = ok_record(s.run(body(memory_bomb, limits={"memory_mb": 128})))
    assert (rec["status"], rec["detail"]) == ("error", "memory limit"), rec
    rec = ok_record(s.run(body(flood)))
    assert (rec["status"], rec["detail"]) == ("error", "output overflow"), rec
    # Both workers at once, then normal work.
    a = s.batch([body(fork_bomb, limits={"timeout_s": 1}), body(memory_bomb, limits={"memory_mb": 128})])
    assert a.status == 200 and [r["status"] for r in a.json["records"]][1] == "error", a
    t0 = time.monotonic()
    rec = ok_record(s.run(body(ADD_OK, model="after")))
    assert (rec["status"], rec["model"]) == ("pass", "after"), rec
    assert time.monotonic() - t0 < 5
    a = s.batch([body(ADD_OK, model="a%d" % i) for i in range(6)])
    assert [r["status"] for r in a.json["records"]] == ["pass"] * 6, a
    h = health(s)
    assert (h["status"], h["workers"], h["running"], h["queued"]) == ("ok", 2, 0, 0), h
