"""The Python client (clients/python, imported as `execeval`), black-box.

Against a real `execeval serve` (one for the module: `serve --listen
127.0.0.1:0 -j 2`, started and stopped as tests/e2e/serve_client.py does,
which must exit 0 and leave no sandbox process or cgroup behind), and
against stub servers (stub.py) for what a real server will not do on cue:
429 then 200, 503s, 401, a count of connections.

Run it inside the safety net (the real server runs candidates):
    tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/client
"""
import asyncio
import os
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "clients" / "python"), str(REPO / "tests" / "e2e")]

import execeval  # noqa: E402
from execeval import AsyncClient, Client, InputError, ServerError, Unauthorized, Unavailable  # noqa: E402
from serve_client import Server  # noqa: E402
from served import server  # noqa: E402,F401 - the module's real server
from stub import Stub, error, ok  # noqa: E402
from test_serve import ADD_BAD, ADD_OK, ADD_TASK, sleeper  # noqa: E402 - tests/e2e's candidates

if os.getpid() != 1 and not os.environ.get("EXECEVAL_E2E_I_AM_IN_A_NET"):
    pytest.exit("refusing to run: these tests start execeval serve; run them inside the safety net: "
                "tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/client", returncode=4)

FENCED = "Here it is:\n```python\ndef add(a, b):\n    return a + b\n```\n"


@pytest.fixture
def url(server):
    return "http://%s:%d" % (server.connect_host, server.port)


@pytest.fixture
def stubs():
    made = []

    def make(answers, **kw):
        s = Stub(answers, **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.stop()


def closed_port():
    """A 127.0.0.1 port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- against the real server ---------------------------------------------------


def test_run_records(url):
    c = Client(url)
    rec = c.run(ADD_TASK, ADD_OK, model="m1", sample=3, timeout_s=2)
    assert (rec["status"], rec["passed"], rec["total"], rec["model"], rec["sample"]) == ("pass", 2, 2, "m1", 3)
    assert c.run(ADD_TASK, candidate=ADD_BAD)["status"] == "assertion_fail"
    rec = c.run(ADD_TASK, generation=FENCED)
    assert rec["status"] == "pass", rec
    assert c.health()["status"] == "ok"


def test_batch_in_order(url):
    c = Client(url)
    recs = c.batch(ADD_TASK, [ADD_OK, {"candidate": ADD_BAD, "sample": 1},
                              {"candidate": "def add(a, b)\n", "sample": 2}], model="m2", timeout_s=2)
    assert [r["status"] for r in recs] == ["pass", "assertion_fail", "syntax_error"]
    assert [r["sample"] for r in recs] == [0, 1, 2]
    assert {r["model"] for r in recs} == {"m2"}
    recs = c.batch(ADD_TASK, [{"generation": FENCED}, {"completion": "    return a + b\n"}])
    assert [r["status"] for r in recs] == ["pass", "syntax_error"]  # ADD_TASK has no prompt: a body alone


def test_run_code(url):
    a = Client(url).run_code("print(input() * 2)", stdin="ab\n")
    assert a["status"] == "Success", a
    assert a["run_result"]["stdout"] == "abab\n"


def test_input_error_carries_the_servers_message(url):
    bad = dict(ADD_TASK, tests=[{"kind": "bogus", "code": "x"}])
    with pytest.raises(InputError) as e:
        Client(url).run(bad, ADD_OK)
    assert e.value.status == 400
    assert e.value.field == "task.tests[0].kind"
    assert "bogus" in e.value.message


def test_map_keeps_input_order(url):
    # Later samples finish first (shorter sleeps): the order is the input's.
    samples = [{"task": ADD_TASK, "candidate": sleeper(0.05 * (6 - i)), "sample": i} for i in range(6)]
    recs = list(Client(url).map(samples, max_in_flight=3))
    assert [r["sample"] for r in recs] == list(range(6))
    assert {r["status"] for r in recs} == {"pass"}


def test_failover_past_a_closed_port(url):
    c = Client(["http://127.0.0.1:%d" % closed_port(), url], cooldown=0.5)
    for i in range(4):
        assert c.run(ADD_TASK, ADD_OK, sample=i)["status"] == "pass"
    dead, live = c.replicas
    assert dead.failures == 1 and dead.answers == 0  # tried once, then skipped while cooling down
    assert live.answers == 4
    # Cool-down over: one of the next two requests probes the dead one
    # (ties between replicas go round-robin), which fails again.
    time.sleep(max(0.0, dead.down_until - time.monotonic()) + 0.01)
    for i in range(2):
        assert c.run(ADD_TASK, ADD_OK)["status"] == "pass"
    assert dead.failures == 2 and live.answers == 6


def test_token(tmp_path):
    token = "client-test-token-0123456789"
    (tmp_path / "token").write_text(token + "\n")
    s = Server(["--token-file", tmp_path / "token"], jobs=1)
    try:
        url = "http://%s:%d" % (s.connect_host, s.port)
        assert Client(url, token=token).run(ADD_TASK, ADD_OK)["status"] == "pass"
        for wrong in (None, token + "x"):
            with pytest.raises(Unauthorized) as e:
                Client(url, token=wrong).run(ADD_TASK, ADD_OK)
            assert e.value.status == 401
    finally:
        assert s.stop() == 0, s.stderr[-3000:]


def test_async_client(url):
    async def main():
        async with AsyncClient(url, max_in_flight=2) as ac:
            rec = await ac.run(ADD_TASK, ADD_OK)
            recs = await ac.batch(ADD_TASK, [ADD_OK, ADD_BAD])
            got = [r["sample"] async for r in ac.map(
                [{"task": ADD_TASK, "candidate": sleeper(0.05 * (4 - i)), "sample": i} for i in range(4)])]
            code = await ac.run_code("print(1)")
            return rec, recs, got, code

    rec, recs, got, code = asyncio.run(main())
    assert rec["status"] == "pass"
    assert [r["status"] for r in recs] == ["pass", "assertion_fail"]
    assert got == [0, 1, 2, 3]
    assert code["run_result"]["stdout"] == "1\n"


# -- against stubs ---------------------------------------------------------------


def test_429_waits_for_retry_after(stubs):
    s = stubs([error(429, "the queue is full", headers={"Retry-After": "1"}), ok()])
    t0 = time.monotonic()
    assert Client(s.url).run(ADD_TASK, ADD_OK) == {"status": "pass"}
    elapsed = time.monotonic() - t0
    assert len(s.requests) == 2
    gap = s.requests[1][2] - s.requests[0][2]
    assert 1.0 <= gap <= 1.5 + 0.3, gap  # Retry-After, plus at most half of it in jitter
    assert elapsed < 2.5


def test_503_and_504_are_retried_with_backoff(stubs):
    s = stubs([error(503, "draining", headers={"Retry-After": "1"}), error(504, "no sandbox"), ok()])
    t0 = time.monotonic()
    assert Client(s.url, backoff=0.05).run_code("print(1)") == {"status": "pass"}
    assert len(s.requests) == 3
    assert time.monotonic() - t0 >= 1.0


def test_gives_up_as_unavailable(stubs):
    s = stubs([error(503, "draining")])
    with pytest.raises(Unavailable) as e:
        Client(s.url, retries=2, backoff=0.01).run(ADD_TASK, ADD_OK)
    assert e.value.status == 503 and "draining" in e.value.message
    assert len(s.requests) == 3


@pytest.mark.parametrize("status,exc", [(400, InputError), (413, InputError), (422, InputError),
                                        (401, Unauthorized), (500, ServerError)])
def test_no_retry_on_errors_of_the_request(stubs, status, exc):
    s = stubs([error(status, "bad sample", field="sample"), ok()])
    with pytest.raises(exc) as e:
        Client(s.url, backoff=0.01).run(ADD_TASK, ADD_OK, sample=1)
    assert (e.value.status, e.value.message, e.value.field) == (status, "bad sample", "sample")
    assert isinstance(e.value, execeval.ExecevalError)
    assert len(s.requests) == 1


def test_request_fields(stubs):
    s = stubs([ok(lambda body: dict(body, records=[]))])
    c = Client(s.url + "/prefix", token="t0ken-t0ken-t0ken")
    sent = c.run(ADD_TASK, completion="    return a + b\n", stop=["\ndef"], memory_mb=64, model="m")
    assert sent.pop("records") == []
    assert sent == {"task": ADD_TASK, "completion": "    return a + b\n", "stop": ["\ndef"],
                    "limits": {"memory_mb": 64}, "model": "m"}
    sent = c.run(ADD_TASK, generation=FENCED)
    assert sent["generation"] == FENCED and "candidate" not in sent and "extract" not in sent
    assert c.batch(ADD_TASK, [{"completion": "x"}], limits={"timeout_s": 1}) == []
    assert s.requests[0][0] == "/prefix/v1/run" and s.requests[2][0] == "/prefix/v1/batch"
    assert s.requests[2][1] == {"task": ADD_TASK, "runs": [{"completion": "x"}], "limits": {"timeout_s": 1}}
    with pytest.raises(TypeError):
        c.run(ADD_TASK, ADD_OK, completion="x")


def test_a_deadline_is_sent_as_the_seconds_left(stubs):
    """A call's deadline goes to the server on /v1/run, /v1/batch and
    /get_reward as Execeval-Deadline: the seconds left when each try is
    sent, so that the server starts it only if it can answer in time."""
    s = stubs([error(504, "no sandbox in time"), ok(), ok({"records": []}), ok({"rewards": []}), ok()])
    c = Client(s.url, backoff=0.01)
    deadline = time.monotonic() + 30
    assert list(c.map([{"task": ADD_TASK, "candidate": ADD_OK}], deadline=deadline)) == [{"status": "pass"}]
    assert list(c.map([{"task": ADD_TASK, "runs": []}], deadline=deadline)) == [[]]
    assert c.post("/get_reward", {"query": []}, deadline) == {"rewards": []}
    c.post("/run_code", {"code": "1"}, deadline)  # its own rule: compile_timeout + run_timeout + 10 s
    sent = [h.get("Execeval-Deadline") for h in s.headers]
    assert len(sent) == 5 and sent[4] is None, sent
    left = [float(x) for x in sent[:4]]
    assert all(0 < x <= 30 for x in left) and left == sorted(left, reverse=True), left  # the retry: less
    c.run(ADD_TASK, ADD_OK)
    assert "Execeval-Deadline" not in s.headers[5], "no deadline, no header"


def test_keep_alive(stubs):
    s = stubs([ok()])
    c = Client(s.url)
    for _ in range(5):
        c.run(ADD_TASK, ADD_OK)
    assert s.connections == 1


def test_a_connection_closed_while_idle_is_replaced(stubs):
    s = stubs([ok()], close_after_answer=True)
    c = Client(s.url, retries=0)
    for _ in range(3):
        assert c.run(ADD_TASK, ADD_OK) == {"status": "pass"}
        time.sleep(0.05)  # the stub's close has arrived
    assert (len(s.requests), s.connections, c.replicas[0].failures) == (3, 3, 0)


def test_503_moves_to_another_replica(stubs):
    draining = stubs([error(503, "the server is shutting down", headers={"Retry-After": "1"})])
    other = stubs([ok()])
    c = Client([draining.url, other.url])
    t0 = time.monotonic()
    for _ in range(3):
        assert c.run(ADD_TASK, ADD_OK) == {"status": "pass"}
    assert time.monotonic() - t0 < 0.5  # the other replica answered at once: no Retry-After wait
    assert len(draining.requests) <= 1 and len(other.requests) == 3


def test_map_bounds_what_is_in_flight_and_read(stubs):
    # Answers in a scrambled order of delays; the samples come from a
    # generator that counts how far it was read.
    delays = [0.09, 0.01, 0.05, 0.03, 0.07, 0.02, 0.08, 0.04, 0.06, 0.0]
    s = stubs([ok(lambda body: {"sample": body["sample"]}, delay=d) for d in delays])
    read = []

    def samples():
        for i in range(len(delays)):
            read.append(i)
            yield {"task": ADD_TASK, "candidate": ADD_OK, "sample": i}

    results = Client(s.url).map(samples(), max_in_flight=3)
    first = next(results)
    assert first == {"sample": 0} and len(read) <= 3
    assert [r["sample"] for r in results] == list(range(1, 10))
    assert s.max_concurrent == 3


def test_map_failures(stubs):
    s = stubs([ok({"sample": 0}), error(400, "bad"), ok({"sample": 2})])
    c = Client(s.url)
    out = list(c.map([{"candidate": "x"}] * 3, max_in_flight=1, return_exceptions=True))
    assert out[0] == {"sample": 0} and isinstance(out[1], InputError) and out[2] == {"sample": 2}
    s = stubs([error(400, "bad"), ok()])
    with pytest.raises(InputError):
        list(Client(s.url).map([{"candidate": "x"}] * 2, max_in_flight=1))


def test_least_outstanding_spreads_and_a_replica_comes_back(stubs):
    a = stubs([ok(delay=0.05)])
    port = closed_port()
    c = Client([a.url, "http://127.0.0.1:%d" % port], cooldown=0.2)
    assert len(list(c.map([{"candidate": "x"}] * 4, max_in_flight=2))) == 4
    assert c.replicas[1].failures == 1 and len(a.requests) == 4
    b = stubs([ok(delay=0.05)], port=port)  # the replica is back
    time.sleep(0.25)
    assert len(list(c.map([{"candidate": "x"}] * 8, max_in_flight=2))) == 8
    assert len(b.requests) >= 3 and len(a.requests) >= 4 + 3, (len(a.requests), len(b.requests))


def test_all_replicas_down(stubs):
    c = Client(["http://127.0.0.1:%d" % closed_port()], retries=2, backoff=0.01)
    with pytest.raises(Unavailable) as e:
        c.run(ADD_TASK, ADD_OK)
    assert e.value.status is None and "no answer" in e.value.message


def test_thread_safety(stubs):
    s = stubs([ok(lambda body: {"sample": body["sample"]}, delay=0.01)])
    c = Client(s.url)
    got, threads = {}, []
    for t in range(8):
        def work(t=t):
            got[t] = [c.run(ADD_TASK, ADD_OK, sample=t * 10 + i)["sample"] for i in range(5)]
        threads.append(threading.Thread(target=work))
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    assert got == {t: [t * 10 + i for i in range(5)] for t in range(8)}
    assert s.connections <= 8


def test_closing_an_unfinished_map_does_not_wait_for_its_requests(stubs):
    # An unfinished map generator is closed by whoever drops it last, often
    # the garbage collector in any thread (it is in a cycle when a traceback
    # holds it): joining its threads there can deadlock the interpreter
    # (a join inside threading's own bookkeeping). So close() only cancels
    # and lets the requests in flight finish on their own.
    release = threading.Event()

    # By the request's sample, not by arrival: the two requests in flight
    # race to the stub (a CI run once had sample 1's arrive first).
    def answer(body):
        if body["sample"] == 0:
            return {"sample": 0}
        release.wait(30)
        return {"sample": body["sample"]}

    s = stubs([ok(answer)])
    gen = Client(s.url).map(({"candidate": "x", "sample": i} for i in range(3)), max_in_flight=2)
    assert next(gen) == {"sample": 0}  # the second request is now held by the stub
    closer = threading.Thread(target=gen.close)
    closer.start()
    closer.join(10)  # a liveness bound, not a speed assertion: it would hang until release
    done = not closer.is_alive()
    release.set()
    closer.join(30)
    assert done, "closing the map waited for a request in flight"
