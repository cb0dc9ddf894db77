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
import json
import os
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
