"""A client's deadline on /v1/run, /v1/batch and /get_reward: the header
Execeval-Deadline (seconds from the request's arrival within which the
client wants its answer). A request starts only by that deadline less its
clock and a second's margin; one that could not start by then is never
started and is answered while its client still waits: 504 for /v1/run and
/v1/batch, a 200 whose late samples are infrastructure errors (reward 0.0,
infra_error 1, never a punishment) for /get_reward. /metrics counts them
in execeval_route_timeouts_total.

Each test holds a server's one sandbox (-j 1) with a program that sleeps,
so that what comes next must wait. No timing beyond ordering: an answer
before its client's deadline, a 504 before the held sandbox freed.

Through the safety net, 127.0.0.1 only:

    tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/e2e/test_serve_deadline.py
"""
import threading
import time

import pytest

from serve_client import serve  # noqa: F401 (fixture)
from test_serve import ADD_OK, ADD_TASK, body, sleeper

HEADER = "Execeval-Deadline"
HOLD_S = 6  # the held sandbox's sleep: longer than any short deadline below
NATIVE = {"tests": [{"kind": "io", "stdin": "1 2\n", "stdout": "3\n"}], "limits": {"timeout_s": 1}}
SUM = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"


class Held:
    """A /v1/run of a program sleeping HOLD_S seconds, sent from a thread;
    started() once its sandbox runs (the server's only one)."""

    def __init__(self, server):
        self.server, self.answer, self.done_at = server, None, None
        self.thread = threading.Thread(target=self._run)
        self.thread.start()
        for _ in range(600):
            if server.metrics().value("execeval_evaluations_running") == 1:
                return
            time.sleep(0.05)
        raise AssertionError("the held program never started")

    def _run(self):
        self.answer = self.server.run(body(sleeper(HOLD_S), limits={"timeout_s": 10}))
        self.done_at = time.monotonic()

    def join(self):
        self.thread.join()
        assert self.answer.status == 200 and self.answer.json["status"] == "pass", self.answer
        return self.done_at


def evaluations(server):
    m = server.metrics()
    return sum(m.value("execeval_evaluations_total", status=s)
               for s in ("pass", "assertion_fail", "syntax_error", "timeout", "error"))


def timed_post(server, path, payload, deadline_s):
    t0 = time.monotonic()
    a = server.post(path, payload, headers={HEADER: str(deadline_s)})
    return a, time.monotonic() - t0, time.monotonic()


def start(serve):
    return serve("--timeout", "10", jobs=1)


def test_a_run_that_cannot_start_in_time_gets_504_while_its_client_waits_and_never_runs(serve):
    s = start(serve)
    held = Held(s)
    # Clock 1 s + margin 1 s: it must start within 2 s of its 4 s; the sandbox is held for 6.
    a, took, at = timed_post(s, "/v1/run", body(ADD_OK, limits={"timeout_s": 1}), 4)
    assert a.status == 504, a
    assert set(a.json) == {"error", "field"} and HEADER in a.json["error"], a
    assert took < 4, "answered %.1f s after its arrival, past its client's 4 s" % took
    assert at < held.join(), "its 504 came when the sandbox freed, not when it could no longer start"
    assert evaluations(s) == 1, "only the held program ran: the late request never started"
    m = s.metrics()
    assert m.value("execeval_route_timeouts_total", route="/v1") == 1
    assert m.value("execeval_http_requests_total", endpoint="/v1/run", code="504") == 1


def test_a_run_with_enough_time_waits_and_runs(serve):
    s = start(serve)
    held = Held(s)
    a, took, at = timed_post(s, "/v1/run", body(ADD_OK, limits={"timeout_s": 1}), 60)
    assert a.status == 200 and a.json["status"] == "pass", a
    assert at >= held.join()
    assert evaluations(s) == 2
    assert s.metrics().value("execeval_route_timeouts_total", route="/v1") == 0


def test_a_batch_that_cannot_start_in_time_gets_504_and_none_of_its_runs_runs(serve):
    s = start(serve)
    held = Held(s)
    batch = {"task": ADD_TASK, "limits": {"timeout_s": 1}, "runs": [{"candidate": ADD_OK}] * 3}
    a, took, at = timed_post(s, "/v1/batch", batch, 4)
    assert a.status == 504, a
    assert took < 4 and at < held.join(), took
    assert evaluations(s) == 1
    m = s.metrics()
    assert m.value("execeval_route_timeouts_total", route="/v1") == 1
    assert m.value("execeval_http_requests_total", endpoint="/v1/batch", code="504") == 1


def test_a_batch_answered_504_while_one_of_its_runs_runs_keeps_the_server_whole(serve):
    """Three runs of 0.8 s each on one sandbox, which may start within 1.5 s
    of a 3.5 s deadline (clock 1 s, margin 1 s): the first starts, the third
    cannot (the first two take 1.6 s at least). The batch's 504 comes while
    its client waits, perhaps while its second run still runs (ended
    unread); the third never starts, and the server goes on serving."""
    s = start(serve)
    batch = {"task": ADD_TASK, "limits": {"timeout_s": 1}, "runs": [{"candidate": sleeper(0.8)}] * 3}
    a, took, _ = timed_post(s, "/v1/batch", batch, 3.5)
    assert a.status == 504, a
    assert took < 3.5, took
    for _ in range(600):
        if s.metrics().value("execeval_evaluations_running") == 0:
            break
        time.sleep(0.05)
    assert 1 <= evaluations(s) <= 2, "the third run started after its latest start"
    assert s.run(body(ADD_OK)).json["status"] == "pass"
    assert s.metrics().value("execeval_route_timeouts_total", route="/v1") == 1


def test_a_deadline_shorter_than_the_clock_is_504_at_once(serve):
    """It could never be answered in time: refused before it queues, on an idle server too."""
    s = start(serve)
    a, took, _ = timed_post(s, "/v1/run", body(ADD_OK, limits={"timeout_s": 2}), 2.5)
    assert a.status == 504, a
    assert took < 2.5, took
    assert evaluations(s) == 0


def test_get_reward_samples_that_cannot_start_in_time_are_infra_errors_not_punishments(serve):
    s = start(serve)
    held = Held(s)
    reward = {"query": [SUM, SUM], "labels": [NATIVE, NATIVE]}
    a, took, at = timed_post(s, "/get_reward", reward, 4)
    assert a.status == 200, a
    assert took < 4 and at < held.join(), took
    assert a.json["rewards"] == [0.0, 0.0] and a.json["scores"] == [0.0, 0.0], a.json
    assert a.json["extra_logs"]["infra_error"] == [1, 1], a.json
    assert evaluations(s) == 1, "neither sample ran"
    assert s.metrics().value("execeval_route_timeouts_total", route="/get_reward") == 1
    # With time enough, the same request is judged.
    a = s.post("/get_reward", reward, headers={HEADER: "60"})
    assert a.status == 200 and a.json["rewards"] == [1.0, 1.0], a
    assert a.json["extra_logs"]["infra_error"] == [0, 0], a.json


GENERATED = {"task_id": "demo/sort", "entry_point": "f",
             "tests": [{"kind": "assert", "code": "assert f([3, 1, 2]) == [1, 2, 3]"}],
             "reference": "def f(xs):\n    return sorted(xs)\n",
             "generate": ("def generate(rng, n):\n"
                          "    return [[[rng.randint(-9, 9) for _ in range(5)]] for _ in range(n)]\n"),
             "n_generated": 3}
SORT = "def f(xs):\n    return sorted(xs)\n"


def wait_until(pred, what):
    for _ in range(1200):
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError("never: " + what)


def test_a_request_whose_reference_runs_outlast_its_deadline_is_answered_in_time(serve):
    """A task with generated tests: its reference runs come first, and here
    they wait for the held sandbox too. The requests are answered when
    their candidates can no longer start in time, not when the reference
    runs are done; the reference runs go on (cached), the candidates never
    start."""
    s = start(serve)
    held = Held(s)
    a, took, at_run = timed_post(s, "/v1/run", {"task": GENERATED, "candidate": SORT, "limits": {"timeout_s": 1}},
                                 4)
    assert a.status == 504, a
    assert took < 4, took
    label = dict(GENERATED, limits={"timeout_s": 1})
    r, took, at_reward = timed_post(s, "/get_reward", {"query": [SORT, SORT], "labels": [label, label]}, 3)
    assert r.status == 200, r
    assert took < 3, took
    assert r.json["rewards"] == [0.0, 0.0] and r.json["extra_logs"]["infra_error"] == [1, 1], r.json
    assert max(at_run, at_reward) < held.join()
    wait_until(lambda: s.metrics().value("execeval_reference_cache_entries") >= 1, "the reference runs' results")
    wait_until(lambda: s.metrics().value("execeval_evaluations_running") == 0, "an idle sandbox")
    m = s.metrics()
    assert evaluations(s) == 1, "a candidate of a request answered already started"
    assert m.value("execeval_route_timeouts_total", route="/v1") == 1
    assert m.value("execeval_route_timeouts_total", route="/get_reward") == 1
    a = s.post("/v1/run", {"task": GENERATED, "candidate": SORT, "limits": {"timeout_s": 1}}, headers={HEADER: "30"})
    assert a.status == 200 and a.json["status"] == "pass", a


@pytest.mark.parametrize("value", ["abc", "0", "-1", "1e3", "nan", "inf", "3601", "", "1.5 s"])
@pytest.mark.parametrize("path", ["/v1/run", "/v1/batch", "/get_reward"])
def test_a_bad_deadline_is_400_naming_the_header(serve, path, value):
    s = serve()
    payload = {"/v1/run": body(ADD_OK), "/v1/batch": {"task": ADD_TASK, "runs": [{"candidate": ADD_OK}]},
               "/get_reward": {"query": [SUM], "labels": [NATIVE]}}[path]
    a = s.post(path, payload, headers={HEADER: value})
    assert a.status == 400, a
    assert a.json["field"] == HEADER and HEADER in a.json["error"], a
    assert s.post(path, payload, headers={HEADER: "30.5"}).status == 200
