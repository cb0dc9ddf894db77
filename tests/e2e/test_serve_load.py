"""`execeval serve` under load: many concurrent clients against `serve -j 2
--queue 64` (so 429s happen), for EXECEVAL_LOAD_SECONDS (default 60) with
EXECEVAL_LOAD_CLIENTS (default 200) client threads.

Each client loops: POST /v1/run with a small task (a trivial passing one, a
failing one, or a HumanEval task with its canonical solution, in turn)
carrying a unique id in "model"; on 429 it sleeps min(Retry-After, 0.2 s)
and retries with a new id. Checked:
  - every request got an answer, 200 or 429 (no other code, no connection
    error, no client timeout (60 s));
  - every 200 record carries its own request's id and the status its kind
    of candidate must get; no id is answered twice;
  - /metrics afterwards: the evaluations counted are exactly the 200s, the
    queue_full rejections exactly the 429s;
  - the server's VmRSS, sampled every second: at most 200 MiB, and no growth
    (max of the last third <= max of the first third + 16 MiB);
  - SIGTERM: exit 0; nothing left (host_evidence).
Prints (pytest -s) and writes build/serve-load.json: requests/s, 200/s,
p50/p99 latency of the 200 answers, max RSS.

Run it alone, inside the safety net:
    tests/e2e/safety-net /usr/bin/python3 -m pytest -q -s tests/e2e/test_serve_load.py
"""
import http.client
import json
import os
import socket
import subprocess
import threading
import time

from conftest import REPO, wait_no_cgroups, wait_no_leftovers
from serve_client import answer_of, serve  # noqa: F401 (fixture)
from test_eval import HUMANEVAL

SECONDS = float(os.environ.get("EXECEVAL_LOAD_SECONDS") or 60)
CLIENTS = int(os.environ.get("EXECEVAL_LOAD_CLIENTS") or 200)
CLIENT_TIMEOUT = 60
RSS_LIMIT_KIB = 200 * 1024
RSS_GROWTH_KIB = 16 * 1024
REPORT = REPO / "build" / "serve-load.json"

ADD_TASK = {"task_id": "load/add", "prompt": "",
            "tests": [{"kind": "assert", "code": "assert add(1, 2) == 3"},
                      {"kind": "assert", "code": "assert add(2, 2) == 4"}]}


def kinds():
    """[(name, task, candidate, expected status, expected task_id)]."""
    out = [("pass", ADD_TASK, "def add(a, b):\n    return a + b\n", "pass", "load/add"),
           ("fail", ADD_TASK, "def add(a, b):\n    return a * b\n", "assertion_fail", "load/add")]
    if HUMANEVAL.exists():
        t = json.loads(HUMANEVAL.read_text().splitlines()[13])
        assert t["task_id"] == "HumanEval/13"
    else:  # the same shape, inline
        t = {"task_id": "HumanEval/13", "entry_point": "greatest_common_divisor",
             "prompt": "def greatest_common_divisor(a: int, b: int) -> int:\n",
             "canonical_solution": "    while b:\n        a, b = b, a % b\n    return a\n",
             "test": "def check(candidate):\n    assert candidate(3, 7) == 1\n    assert candidate(10, 15) == 5\n"}
    out.append(("humaneval", t, t["prompt"] + t["canonical_solution"], "pass", "HumanEval/13"))
    return out


def percentile(sorted_values, q):
    if not sorted_values:
        return None
    i = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[i]


class Client(threading.Thread):
    def __init__(self, server, index, kinds, deadline):
        super().__init__(daemon=True)
        self.server, self.index, self.kinds, self.deadline = server, index, kinds, deadline
        self.ok = []          # (id, kind index, record status, record model, record task_id, latency)
        self.rejected = 0
        self.bad = []         # (id, what)
        self.ids = []
        self.start()

    def run(self):
        conn = self.server.connection(CLIENT_TIMEOUT)
        n = 0
        try:
            while time.monotonic() < self.deadline:
                k = (self.index + n) % len(self.kinds)
                _, task, cand, _, _ = self.kinds[k]
                rid = "c%d-%d" % (self.index, n)
                n += 1
                self.ids.append(rid)
                body = json.dumps({"task": task, "candidate": cand, "model": rid}).encode()
                t0 = time.monotonic()
                try:
                    conn.request("POST", "/v1/run", body=body, headers={"Content-Type": "application/json"})
                    a = answer_of(conn.getresponse())
                except Exception as e:  # noqa: B902 - every failure is reported
                    self.bad.append((rid, "%s: %s" % (type(e).__name__, e)))
                    conn.close()
                    conn = self.server.connection(CLIENT_TIMEOUT)
                    continue
                latency = time.monotonic() - t0
                if a.status == 200:
                    rec = a.json or {}
                    self.ok.append((rid, k, rec.get("status"), rec.get("model"), rec.get("task_id"), latency))
                elif a.status == 429:
                    self.rejected += 1
                    ra = (a.header("Retry-After") or "").strip()
                    if not ra.isdigit() or int(ra) < 1:
                        self.bad.append((rid, "429 without an integer Retry-After >= 1: %r" % a))
                        ra = "1"
                    time.sleep(min(int(ra), 0.2))
                else:
                    self.bad.append((rid, repr(a)))
        finally:
            conn.close()


def test_load(serve):
    s = serve("--queue", "64", jobs=2)
    ks = kinds()
    # Warm up, and check that every kind gets its status on an idle server.
    for name, task, cand, want, tid in ks:
        a = s.run({"task": task, "candidate": cand, "model": "warmup-" + name})
        assert a.status == 200 and (a.json["status"], a.json["task_id"]) == (want, tid), a
    base = s.metrics()
    base_evals = base.total("execeval_evaluations_total")
    base_rejected = base.value("execeval_rejected_total", reason="queue_full")

    rss = []  # (t, kib)
    sampling = threading.Event()

    def sample_rss():
        while not sampling.is_set():
            v = s.rss_kib()
            if v is not None:
                rss.append((time.monotonic(), v))
            sampling.wait(1.0)

    sampler = threading.Thread(target=sample_rss, daemon=True)
    sampler.start()
    t0 = time.monotonic()
    deadline = t0 + SECONDS
    clients = [Client(s, i, ks, deadline) for i in range(CLIENTS)]
    for c in clients:
        c.join(SECONDS + CLIENT_TIMEOUT + 30)
    elapsed = time.monotonic() - t0
    hung = [c.index for c in clients if c.is_alive()]
    sampling.set()
    sampler.join(5)

    ok = [x for c in clients for x in c.ok]
    bad = [x for c in clients for x in c.bad]
    rejected = sum(c.rejected for c in clients)
    requests = len(ok) + rejected + len(bad)
    latencies = sorted(x[5] for x in ok)
    max_rss = max(v for _, v in rss) if rss else None
    third = max(1, len(rss) // 3)
    first_max = max(v for _, v in rss[:third]) if rss else None
    last_max = max(v for _, v in rss[-third:]) if rss else None
    report = {"seconds": round(elapsed, 2), "clients": CLIENTS, "requests": requests, "answered_200": len(ok),
              "answered_429": rejected, "failures": len(bad),
              "requests_per_s": round(requests / elapsed, 1), "ok_per_s": round(len(ok) / elapsed, 1),
              "p50_latency_s": percentile(latencies, 0.5), "p99_latency_s": percentile(latencies, 0.99),
              "max_latency_s": latencies[-1] if latencies else None,
              "max_rss_kib": max_rss, "first_third_max_rss_kib": first_max, "last_third_max_rss_kib": last_max,
              "rss_samples": len(rss), "first_failures": bad[:20]}
    metrics_text = None
    if not hung:
        m = s.metrics()
        metrics_text = m.text
        report["metrics_evaluations"] = m.total("execeval_evaluations_total") - base_evals
        report["metrics_queue_full"] = m.value("execeval_rejected_total", reason="queue_full") - base_rejected
        report["metrics_by_status"] = {lab["status"]: v for lab, v in m.series("execeval_evaluations_total")}
    os.makedirs(REPORT.parent, exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=2) + "\n")
    print("\nserve load: %s" % json.dumps(report, indent=2))

    assert not hung, "clients still waiting %d s after the end: %r" % (CLIENT_TIMEOUT + 30, hung[:20])
    assert not bad, "%d requests without a 200/429 answer, first: %r" % (len(bad), bad[:20])
    assert ok, "no request was answered 200"
    assert rejected > 0, "no 429 at all: the load did not fill the queue (%r)" % report

    # Each record is its own request's, with the status of its kind; each id once.
    wrong = [(rid, ks[k][0], st, model, tid) for rid, k, st, model, tid, _ in ok
             if model != rid or st != ks[k][3] or tid != ks[k][4]]
    assert not wrong, "%d records not matching their request, first: %r" % (len(wrong), wrong[:20])
    models = [x[3] for x in ok]
    assert len(set(models)) == len(models), "an id answered twice"
    all_ids = [i for c in clients for i in c.ids]
    assert len(set(all_ids)) == len(all_ids)

    # The server counted exactly what it answered.
    assert report["metrics_evaluations"] == len(ok), (report, metrics_text)
    assert report["metrics_queue_full"] == rejected, (report, metrics_text)

    # Memory: bounded, no growth.
    assert len(rss) >= 3, rss
    assert max_rss <= RSS_LIMIT_KIB, report
    assert last_max <= first_max + RSS_GROWTH_KIB, report

    code = s.stop()
    assert code == 0, (code, s.stderr[-3000:])
    assert wait_no_leftovers() == []
    assert wait_no_cgroups() == []


# ---------------------------------------------------------------------------
# Amplification (issue 11, items 7 and 8): small or slow requests must not
# make the server hold much memory, stall its loop, or lock others out.
# Each runs a real `execeval serve` with the default limits unless it says.

MIB = 1 << 20


WATCH_SCRIPT = r"""
import http.client, json, select, sys, time
pid, host, port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
rss, lat, errors, t_start = [], [], [], time.monotonic()
conn = http.client.HTTPConnection(host, port, timeout=30)
while not select.select([sys.stdin], [], [], 0.05)[0]:
    try:
        with open("/proc/%d/status" % pid) as f:
            rss += [int(l.split()[1]) for l in f if l.startswith("VmRSS:")]
    except OSError:
        pass
    t0 = time.monotonic()
    try:
        conn.request("GET", "/healthz")
        r = conn.getresponse()
        r.read()
        if r.status != 200:
            errors.append("healthz %d" % r.status)
    except Exception as e:
        errors.append("%s: %s" % (type(e).__name__, e))
        conn.close()
        conn = http.client.HTTPConnection(host, port, timeout=30)
    lat.append(time.monotonic() - t0)
    if lat[-1] > 0.5:
        errors.append("slow /healthz at %.2f s: %.3f s" % (t0 - t_start, lat[-1]))
print(json.dumps({"rss": rss, "lat": lat, "errors": errors}))
"""


class Watch:
    """Samples the server's VmRSS and /healthz's latency every 50 ms, from
    another process (this one's GIL is busy reading big answers), on its
    own keep-alive connection as a readiness probe does."""

    def __init__(self, server):
        import sys
        self.proc = subprocess.Popen([sys.executable, "-c", WATCH_SCRIPT, str(server.pid), server.connect_host,
                                      str(server.port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        time.sleep(0.2)

    def finish(self):
        out, _ = self.proc.communicate(b"stop\n", timeout=60)
        v = json.loads(out)
        self.rss, self.health_s, self.errors = v["rss"], v["lat"], v["errors"]
        return {"max_rss_mib": round(max(self.rss) / 1024, 1) if self.rss else None,
                "max_healthz_s": round(max(self.health_s), 3) if self.health_s else None,
                "healthz_probes": len(self.health_s)}


def io_task(n, pad=270):
    """n io tests with ~pad bytes of stdin each: 2000 of them are 0.68 MB."""
    return {"task_id": "amp/io", "tests": [{"kind": "io", "stdin": "%d %s\n" % (i, "x" * pad), "stdout": "%d\n" % i}
                                            for i in range(n)]}


def test_a_batch_sharing_one_big_task_is_bounded(serve):
    """1000 runs sharing one task of 2000 io tests (0.68 MB): 2,000,000 test
    records, over --max-request-tests (500000): 413 naming "runs", at once,
    with no memory held. Then 200 runs of that task (400000 tests, within
    the bounds): the task is parsed once, the records are held as text and
    charged; the server stays under 160 MiB (before: the task parsed 200
    times and 200 jansson trees of 2000-test records, ~480 MiB) and
    /healthz answers within 1 s throughout."""
    s = serve(jobs=2)
    base = s.rss_kib()
    task = io_task(2000)
    big = json.dumps({"task": task, "runs": [{"candidate": "x = (\n", "sample": i} for i in range(1000)]}).encode()
    assert 0.6 * MIB < len(big) < 0.8 * MIB, len(big)
    w = Watch(s)
    t0 = time.monotonic()
    a = s.post("/v1/batch", big, headers={"Content-Type": "application/json"}, timeout=120)
    took = time.monotonic() - t0
    time.sleep(0.5)
    seen = w.finish()
    print("\n1000 x 2000 batch: %s in %.3f s, %s (base %d KiB)" % (a.status, took, seen, base))
    assert a.status == 413 and a.json["field"] == "runs", a
    assert "2000000 tests" in a.json["error"] and "--max-request-tests (500000)" in a.json["error"], a
    assert took < 2, took
    assert seen["max_rss_mib"] < 100, seen
    assert seen["max_healthz_s"] < 1, (seen, w.errors)
    assert not [e for e in w.errors if not e.startswith("slow")], w.errors[:5]

    runs = 200
    fits = json.dumps({"task": task, "runs": [{"candidate": "x = (\n", "sample": i} for i in range(runs)]}).encode()
    w = Watch(s)
    t0 = time.monotonic()
    a = s.post("/v1/batch", fits, headers={"Content-Type": "application/json"}, timeout=300)
    took = time.monotonic() - t0
    seen = w.finish()
    print("200 x 2000 batch: %s in %.1f s, %s" % (a.status, took, seen))
    assert a.status == 200, a
    recs = a.json["records"]
    assert [(r["sample"], r["status"], r["total"], len(r["tests"])) for r in recs] == \
        [(i, "syntax_error", 2000, 2000) for i in range(runs)], recs[:1]
    assert seen["max_rss_mib"] < 160, seen
    assert seen["max_healthz_s"] < 1, (seen, w.errors)
    assert not [e for e in w.errors if not e.startswith("slow")], w.errors[:5]
    m = s.metrics()
    assert m.get("execeval_buffered_bytes") == 0, m.text


def test_a_run_with_400k_tests_is_413_at_once(serve):
    """One /v1/run whose task has 400000 tests (15 MB, under --max-body):
    413 naming task.tests, counted before any test is built (before: 2 s of
    the only thread and ~360 MiB)."""
    s = serve(jobs=2)
    task = {"task_id": "amp/400k", "tests": [{"kind": "io", "stdin": "", "stdout": ""}] * 400000}
    b = json.dumps({"task": task, "candidate": "print()\n"}, separators=(",", ":")).encode()
    assert 14 * MIB < len(b) < 16 * MIB, len(b)
    w = Watch(s)
    t0 = time.monotonic()
    a = s.post("/v1/run", b, headers={"Content-Type": "application/json"}, timeout=120)
    took = time.monotonic() - t0
    time.sleep(0.3)
    seen = w.finish()
    print("\n400k-test run: %s in %.3f s, %s" % (a.status, took, seen))
    assert a.status == 413, a
    assert a.json["field"] == "task.tests", a
    assert "400000 tests" in a.json["error"] and "--max-tests-per-task (10000)" in a.json["error"], a
    assert took < 2, took
    assert seen["max_healthz_s"] < 1, seen
    m = s.metrics()
    assert m.value("execeval_rejected_total", reason="too_large") == 1, m.text
    assert m.get("execeval_buffered_bytes") == 0, m.text
    # The server is still itself.
    a = s.run({"task": ADD_TASK, "candidate": "def add(a, b):\n    return a + b\n"})
    assert a.status == 200 and a.json["status"] == "pass", a


def trickler(server, length=16 * MIB):
    sock = server.raw_socket(60)
    sock.sendall(b"POST /v1/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n{" % length)
    return sock


def closed_within(sock, seconds):
    """Trickles a byte every 2 s until the server answers or closes; returns
    (seconds it took, what it sent back) or (None, b"") when still open."""
    t0 = time.monotonic()
    sock.settimeout(2)
    while time.monotonic() - t0 < seconds:
        try:
            data = sock.recv(4096)
            return time.monotonic() - t0, data  # b"": closed; else an answer
        except socket.timeout:
            pass
        except (ConnectionResetError, BrokenPipeError):
            return time.monotonic() - t0, b""
        try:
            sock.sendall(b" ")
        except (ConnectionResetError, BrokenPipeError):
            return time.monotonic() - t0, b""
    return None, b""


def test_tricklers_declaring_16_mib_do_not_lock_others_out(serve):
    """17 connections declaring 16 MiB bodies (272 MiB > --max-buffered 256)
    and trickling a byte every 2 s: another client's POST is served (before:
    429 for as long as they ran), nothing is reserved for them
    (execeval_buffered_bytes, VmRSS), and each is closed once its body falls
    under --body-min-rate (16 KiB/s) after --body-grace (10 s)."""
    s = serve(jobs=2)
    socks = [trickler(s) for _ in range(17)]
    t0 = time.monotonic()
    try:
        time.sleep(1)
        a = s.run({"task": ADD_TASK, "candidate": "def add(a, b):\n    return a + b\n", "model": "other"})
        assert a.status == 200 and (a.json["status"], a.json["model"]) == ("pass", "other"), a
        m = s.metrics()
        held = m.get("execeval_buffered_bytes")
        rss = s.rss_kib()
        print("\nwith 17 tricklers: buffered %s bytes, VmRSS %d KiB" % (held, rss))
        assert held is not None and held < 1024, m.text
        assert rss < 100 * 1024, rss
        results = [None] * len(socks)

        def watch(i):
            results[i] = closed_within(socks[i], 30)

        threads = [threading.Thread(target=watch, args=(i,), daemon=True) for i in range(len(socks))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(40)
    finally:
        for c in socks:
            c.close()
    print("tricklers closed after %r s of watching (%.1f s since connecting)"
          % ([r and r[0] and round(r[0], 1) for r in results], time.monotonic() - t0))
    assert all(r is not None and r[0] is not None for r in results), results
    # Grace 10 s from the headers (1 s before watching began), + the 2 s trickle step and slack.
    assert all(r[0] < 10 + 2 + 3 for r in results), results
    assert all(r[1] == b"" or r[1].startswith(b"HTTP/1.1 408") for r in results), results
    m = s.metrics()
    assert m.get("execeval_buffered_bytes") == 0, m.text
    assert m.value("execeval_rejected_total", reason="too_slow") == 17, m.text


def test_one_address_holds_at_most_its_share(serve):
    """--max-buffered 4 (MiB): one address (127.0.0.2) holds at most a
    quarter of it (1 MiB) in bodies; its next body is 429 naming the share,
    while 127.0.0.1 is still served."""
    s = serve("--max-buffered", "4", jobs=2)
    run = {"task": ADD_TASK, "candidate": "def add(a, b):\n    return a + b\n"}

    def padded_body(model, size):
        text = json.dumps(dict(run, model=model)).encode()
        return text[:-1] + b" " * (size - len(text)) + b"}"

    def exchange(source, data):
        sock = socket.create_connection((s.connect_host, s.port), timeout=30, source_address=(source, 0))
        sock.sendall(data)
        return sock

    def read_answer(sock):
        resp = http.client.HTTPResponse(sock, method="POST")
        resp.begin()
        a = answer_of(resp)
        sock.close()
        return a

    def request(body):
        return (b"POST /v1/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(body))

    hog_body = padded_body("hog", 900 * 1024)
    hog = exchange("127.0.0.2", request(hog_body) + hog_body[:800 * 1024])
    time.sleep(0.5)
    second = padded_body("second", 300 * 1024)
    a = read_answer(exchange("127.0.0.2", request(second) + second))
    assert a.status == 429 and "--max-buffered-per-ip" in a.json["error"], a
    assert (a.header("Retry-After") or "").strip().isdigit(), a
    other = padded_body("other", 300 * 1024)
    a = read_answer(exchange("127.0.0.1", request(other) + other))
    assert a.status == 200 and a.json["model"] == "other", a
    hog.sendall(hog_body[800 * 1024:])
    a = read_answer(hog)
    assert a.status == 200 and a.json["model"] == "hog", a
    m = s.metrics()
    assert m.value("execeval_rejected_total", reason="over_budget") == 1, m.text
    assert m.get("execeval_buffered_bytes") == 0, m.text


def test_records_are_charged_to_max_buffered(serve):
    """--max-buffered 1 (MiB). A batch whose records could never fit (12 runs
    of a 1000-test task: at least 12 x 96 KB) is a 413 naming runs before
    anything runs; 80 runs whose records (each ~16 KB of stdout and stderr)
    outgrow the budget while they run get a 503 with Retry-After, not an
    unbounded answer; the server holds nothing afterwards and serves the
    next request."""
    s = serve("--max-buffered", "1", jobs=2)
    task = {"task_id": "amp/1000", "tests": [{"kind": "io", "stdout": "%d\n" % i} for i in range(1000)]}
    a = s.post("/v1/batch", {"task": task, "runs": [{"candidate": "x = (\n", "sample": i} for i in range(12)]})
    assert a.status == 413 and a.json["field"] == "runs", a
    assert "more than this server's --max-buffered" in a.json["error"], a
    m = s.metrics()
    assert m.total("execeval_evaluations_total") == 0, m.text

    loud = "import sys\nprint('o' * 9000)\nprint('e' * 9000, file=sys.stderr)\ndef add(a, b):\n    return a + b\n"
    a = s.post("/v1/batch", {"task": ADD_TASK, "runs": [{"candidate": loud, "sample": i} for i in range(80)]},
               timeout=300)
    assert a.status == 503, a
    assert "outgrew the server's --max-buffered" in a.json["error"], a
    assert (a.header("Retry-After") or "").strip().isdigit(), a
    m = s.metrics()
    assert m.total("execeval_evaluations_total") == 80, m.text
    assert m.value("execeval_rejected_total", reason="over_budget") == 1, m.text
    assert m.get("execeval_buffered_bytes") == 0, m.text
    # Fewer runs fit.
    a = s.post("/v1/batch", {"task": ADD_TASK, "runs": [{"candidate": loud, "sample": i} for i in range(8)]})
    assert a.status == 200 and [r["status"] for r in a.json["records"]] == ["pass"] * 8, a
    assert len(a.json["records"][0]["stdout"]) >= 8000, a.json["records"][0]["stdout"][:100]
