"""The trainer adapters (execeval.trl, execeval.verl, execeval.openrlhf),
each called exactly as its framework calls it (the frameworks are not
installed: the calls are written from their published signatures), against
a real `execeval serve` and against stubs (request shapes, infra errors).

  TRL GRPOTrainer   reward_func(prompts=..., completions=..., completion_ids=...,
                    trainer_state=..., **dataset_columns) -> list[float | None];
                    a coroutine function is awaited
  verl              compute_score(data_source=, solution_str=, ground_truth=,
                    extra_info=) -> float | dict with "score" (naive manager);
                    compute_score(data_sources=, solution_strs=, ground_truths=,
                    extra_infos=) -> list (batch manager); the file loaded by
                    its path (custom_reward_function.path)
  OpenRLHF          reward_func(queries, prompts, labels) -> {"rewards",
                    "scores", "extra_logs"}; the file loaded by its path
                    (--remote_rm_url)

Run it inside the safety net (the real server runs candidates):
    tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/client/test_adapters.py
"""
import asyncio
import importlib.util
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PKG = REPO / "clients" / "python" / "execeval"
sys.path[:0] = [str(REPO / "clients" / "python"), str(REPO / "tests" / "e2e")]

from execeval import InputError, Unavailable, _adapt, trl  # noqa: E402
from serve_client import Server  # noqa: E402
from served import server  # noqa: E402,F401 - the module's real server
from stub import Stub, error, ok  # noqa: E402

if os.getpid() != 1 and not os.environ.get("EXECEVAL_E2E_I_AM_IN_A_NET"):
    pytest.exit("refusing to run: these tests start execeval serve; run them inside the safety net: "
                "tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/client", returncode=4)

ENV_KEYS = [k for k in os.environ if k.startswith("EXECEVAL_") and k != "EXECEVAL_E2E_I_AM_IN_A_NET"]


def fenced(code):
    return "Here is my solution:\n```python\n%s```\n" % code


# open-r1: stdin/stdout cases in verification_info (a JSON string, as the data set ships it).
DOUBLE_INFO = json.dumps({"language": "python", "test_cases": [
    {"input": "2\n", "output": "4\n", "type": "stdin_stdout"},
    {"input": "5\n", "output": "10\n", "type": "stdin_stdout"}]})
DOUBLE_OK = fenced("print(int(input()) * 2)\n")
DOUBLE_HALF = fenced("input()\nprint(4)\n")  # right for the first case only
# APPS: call tests of fn_name in input_output.
ADD_IO = json.dumps({"fn_name": "add", "inputs": [[1, 2], [2, 3]], "outputs": [[3], [5]]})
ADD_OK = fenced("def add(a, b):\n    return a + b\n")
ADD_BAD = fenced("def add(a, b):\n    return a - b\n")
SYNTAX = fenced("def add(a, b)\n    return a + b\n")
# verl's ground truths.
GT_ASSERT = json.dumps({"assert_case": ["assert inc(1) == 2", "assert inc(0) == 1"]})
GT_IO = json.dumps({"inputs": ["1 2\n", "5 6\n"], "outputs": ["3\n", "11\n"]})
GT_CALL = json.dumps({"fn_name": "add", "inputs": ["1\n2", "3\n4"], "outputs": ["3", "7"]})
INC_OK = fenced("def inc(x):\n    return x + 1\n")
INC_HALF = fenced("def inc(x):\n    return 2\n")
SUM_OK = fenced("a, b = map(int, input().split())\nprint(a + b)\n")


@pytest.fixture
def url(server, monkeypatch):
    """The real server's URL, also as EXECEVAL_URL (the adapters' only way
    to learn it when a trainer imports them by path); no other EXECEVAL_*."""
    for k in ENV_KEYS:
        monkeypatch.delenv(k, raising=False)
    u = "http://%s:%d" % (server.connect_host, server.port)
    monkeypatch.setenv("EXECEVAL_URL", u)
    return u


@pytest.fixture
def stubs(monkeypatch):
    for k in ENV_KEYS:
        monkeypatch.delenv(k, raising=False)
    made = []

    def make(answers, **kw):
        s = Stub(answers, **kw)
        made.append(s)
        monkeypatch.setenv("EXECEVAL_URL", s.url)
        return s

    yield make
    for s in made:
        s.stop()


def load_by_path(name, module_name):
    """The module as verl (spec_from_file_location("custom_module", path))
    and OpenRLHF load a reward function's file: not as part of a package."""
    spec = importlib.util.spec_from_file_location(module_name, PKG / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def trl_call(func, completions, prompts=None, **columns):
    """As GRPOTrainer._calculate_rewards calls a custom reward function."""
    prompts = prompts or ["Write the program."] * len(completions)
    return func(prompts=prompts, completions=completions, completion_ids=[[1, 2, 3]] * len(completions),
                trainer_state=None, **columns)


def records_of(answer_runs):
    """A stub's /v1/batch answer: one record per run, built by answer_runs(run)."""
    return lambda body: {"records": [answer_runs(r) for r in body["runs"]]}


def passing(run):
    return {"task_id": "t", "sample": run["sample"], "status": "pass", "score": 1.0, "reward": 1}


INFRA = {"task_id": "t", "sandbox_error": "clone: out of memory", "reward": None, "infra_error": True}


# -- TRL ----------------------------------------------------------------------------


def test_trl_reads_each_test_column_format(url):
    rewards = trl_call(trl.code_reward, [DOUBLE_OK, DOUBLE_HALF], verification_info=[DOUBLE_INFO] * 2,
                       source=["open-r1", "open-r1"])
    assert rewards == [1.0, -1.0]  # the server's --reward: binary
    assert trl_call(trl.code_reward, [ADD_OK, ADD_BAD, SYNTAX], input_output=[ADD_IO] * 3) == [1.0, -1.0, -1.0]
    he = {"prompt": "def neg(x):\n", "entry_point": "neg",
          "test": "def check(candidate):\n    assert candidate(1) == -1\n"}
    assert trl_call(trl.code_reward, [fenced("def neg(x):\n    return -x\n")], test=[he["test"]],
                    entry_point=[he["entry_point"]]) == [1.0]
    # A test program that is no HumanEval check(): run as it is, entry_point or not.
    neg_ok, neg_bad = fenced("def neg(x):\n    return -x\n"), fenced("def neg(x):\n    return x\n")
    assert trl_call(trl.code_reward, [neg_ok, neg_bad], test=["assert neg(1) == -1\n"] * 2,
                    entry_point=["neg", None]) == [1.0, -1.0]
    # Completion mode: the completion continues the prompt TRL gives.
    f = trl.make_code_reward(mode="completion")
    assert trl_call(f, ["    return -x\n", "    return x\n"], prompts=[he["prompt"]] * 2, test=[he["test"]] * 2,
                    entry_point=["neg"] * 2) == [1.0, -1.0]
    native = [{"kind": "call", "fn": "inc", "args": [a], "expected": a + 1} for a in (1, 0)]
    assert trl_call(trl.code_reward, [INC_OK, INC_HALF], tests=[native, json.dumps(native)]) == [1.0, -1.0]
    assert trl_call(trl.code_reward, [INC_OK], test_list=[["assert inc(1) == 2"]]) == [1.0]
    # A test column holding a verl ground truth (here as an object).
    assert trl_call(trl.code_reward, [INC_OK], test=[json.loads(GT_ASSERT)]) == [1.0]


def test_trl_conversational_completions_and_the_reward_preset_from_the_environment(url, monkeypatch):
    monkeypatch.setenv("EXECEVAL_REWARD", "partial")
    completions = [[{"role": "assistant", "content": DOUBLE_HALF}],
                   [{"role": "assistant", "content": [{"type": "text", "text": DOUBLE_OK}]}]]
    prompts = [[{"role": "user", "content": "Double a number read from stdin."}]] * 2
    assert trl_call(trl.code_reward, completions, prompts=prompts, verification_info=[DOUBLE_INFO] * 2) == [0.5, 1.0]
    f = trl.make_code_reward(reward="fraction")
    assert trl_call(f, completions, verification_info=[DOUBLE_INFO] * 2) == [0.5, 1.0]
    assert f.__name__ == "code_reward"  # TRL logs each reward function by its name


def test_trl_async_form(url):
    assert asyncio.iscoroutinefunction(trl.code_reward_async)  # what TRL checks to await it

    async def main():
        return await asyncio.gather(
            trl_call(trl.code_reward_async, [ADD_OK, ADD_BAD], input_output=[ADD_IO] * 2),
            trl_call(trl.code_reward_async, [DOUBLE_OK], verification_info=[DOUBLE_INFO]))

    assert asyncio.run(main()) == [[1.0, -1.0], [1.0]]


def test_trl_sends_a_grpo_group_as_one_batch_and_masks_infra_errors(stubs):
    # Two prompts, three completions each (GRPO's repeat: consecutive), the
    # fifth's sandbox failed.
    s = stubs([ok(records_of(lambda r: INFRA if r["sample"] == 4 else passing(r)))])
    texts = ["a", "b", "c", "d", "e", "f"]
    rewards = trl_call(trl.code_reward, texts, input_output=[ADD_IO] * 3 + [GT_IO] * 3)
    assert rewards == [1.0, 1.0, 1.0, 1.0, None, 1.0]  # None: TRL leaves it out
    assert [p for p, _, _ in s.requests] == ["/v1/batch", "/v1/batch"]
    first, second = sorted((b for _, b, _ in s.requests), key=lambda b: b["runs"][0]["sample"])
    assert first["task"]["input_output"] == ADD_IO and second["task"]["input_output"] == GT_IO
    assert first["runs"] == [{"generation": t, "sample": i} for i, t in enumerate("abc")]
    assert [r["sample"] for r in second["runs"]] == [3, 4, 5]
    assert "reward" not in first and "limits" not in first


def test_trl_settings_reach_the_request(stubs, monkeypatch):
    s = stubs([ok(records_of(passing))])
    monkeypatch.setenv("EXECEVAL_TIMEOUT_S", "2.5")
    monkeypatch.setenv("EXECEVAL_BATCH_RUNS", "2")
    f = trl.make_code_reward(reward="correctness-first", mode="completion")
    assert trl_call(f, ["    return -x\n"] * 3, prompts=["def neg(x):\n"] * 3, test=["assert neg(1) == -1"] * 3,
                    entry_point=["neg"] * 3) == [1.0] * 3
    assert len(s.requests) == 2  # at most two runs a batch (sent at once: in either order)
    body = min((b for _, b, _ in s.requests), key=lambda b: b["runs"][0]["sample"])
    assert [r["sample"] for r in body["runs"]] == [0, 1]
    assert body["reward"] == "correctness-first" and body["limits"] == {"timeout_s": 2.5}
    assert body["task"]["prompt"] == "def neg(x):\n" and body["runs"][0] == {"completion": "    return -x\n",
                                                                             "sample": 0}
    with pytest.raises(TypeError):
        trl.make_code_reward(rewrad="binary")  # a typo fails when the function is made


def test_trl_errors(stubs):
    with pytest.raises(ValueError) as e:
        trl_call(trl.code_reward, ["x"], answer=["42"])
    assert "no test column" in str(e.value)
    stubs([error(400, "task: tests[0].kind: bad", field="task.tests[0].kind")])
    with pytest.raises(InputError):  # a bad row is the data's fault: never masked
        trl_call(trl.code_reward, ["x"], tests=[[{"kind": "bogus"}]])


def test_unavailable_raises_or_is_masked(stubs, monkeypatch):
    monkeypatch.setenv("EXECEVAL_URL", "http://127.0.0.1:9")  # nothing listens (discard)
    f = trl.make_code_reward(http_timeout=2)
    client = _adapt.client_for(_adapt.Settings(http_timeout=2))
    client.retries, client.backoff = 1, 0.01
    with pytest.raises(Unavailable):
        trl_call(f, ["x"], input_output=[ADD_IO])
    monkeypatch.setenv("EXECEVAL_UNAVAILABLE", "mask")
    assert trl_call(f, ["x", "y"], input_output=[ADD_IO] * 2) == [None, None]


# -- verl -----------------------------------------------------------------------------


def test_verl_compute_score_as_verls_reward_managers_call_it(url):
    verl = load_by_path("verl.py", "custom_module")
    cases = [(INC_OK, GT_ASSERT, 1.0), (INC_HALF, GT_ASSERT, -1.0), (SUM_OK, GT_IO, 1.0),
             (ADD_OK, GT_CALL, 1.0), (ADD_BAD, GT_CALL, -1.0)]
    for text, gt, want in cases:
        got = verl.compute_score(data_source="codecontests", solution_str=text, ground_truth=gt,
                                 extra_info={"index": 3, "split": "train"})
        assert got == {"score": want, "acc": 1.0 if want > 0 else 0.0, "infra_error": 0.0}, (text, gt)
    # custom_reward_function.reward_kwargs arrive as keywords.
    got = verl.compute_score(data_source="x", solution_str=INC_HALF, ground_truth=json.loads(GT_ASSERT),
                             extra_info=None, reward="partial")
    assert got["score"] == 0.5
    # reward_manager=batch: the plurals, a list of scores back.
    scores = verl.compute_score(data_sources=["a"] * 5, solution_strs=[c[0] for c in cases],
                                ground_truths=[c[1] for c in cases], extra_infos=[{}] * 5)
    assert scores == [c[2] for c in cases]


def test_verl_one_batch_request_per_response_with_every_test(stubs, monkeypatch):
    s = stubs([ok(records_of(lambda r: INFRA if r["generation"] == "lost" else passing(r)))])
    verl = load_by_path("verl.py", "custom_module")
    assert verl.compute_score("apps", "x", GT_CALL, {"task_id": "apps/7"})["score"] == 1.0
    assert len(s.requests) == 1 and s.requests[0][0] == "/v1/batch"
    body = s.requests[0][1]
    assert body["task"] == {"task_id": "apps/7", "reward_model": {"ground_truth": GT_CALL}}
    assert body["runs"] == [{"generation": "x", "sample": 0}]
    # An infra error: verl cannot mask it; the score is EXECEVAL_INFRA_REWARD, and it says so.
    monkeypatch.setenv("EXECEVAL_INFRA_REWARD", "-0.25")
    assert verl.compute_score("apps", "lost", GT_CALL) == {"score": -0.25, "acc": 0.0, "infra_error": 1.0}
    assert verl.compute_score(data_sources=["a", "a"], solution_strs=["lost", "x"],
                              ground_truths=[GT_CALL] * 2, extra_infos=None) == [-0.25, 1.0]
    assert len(s.requests) == 3  # the batch form: one request for the group of one ground truth
    with pytest.raises(TypeError):
        verl.compute_score("apps", "x", GT_CALL, None, sandbox_fusion_url="http://x", colour="red")


class Array:
    """What parquet gives verl through pandas: numpy arrays (numpy is not
    installed here; tolist() is what the adapter relies on)."""

    def __init__(self, items):
        self.items = items

    def tolist(self):
        return list(self.items)


def test_verl_takes_parquets_arrays_and_verls_sandbox_keywords(stubs):
    s = stubs([ok(records_of(passing))])
    verl = load_by_path("verl.py", "custom_module")
    gt = {"inputs": Array(["1 2\n"]), "outputs": Array(["3\n"])}
    got = verl.compute_score(data_source="apps", solution_str="x", ground_truth=gt, extra_info={"index": 0},
                             sandbox_fusion_url=None, concurrent_semaphore=None, memory_limit_mb=256)
    assert got["score"] == 1.0
    body = s.requests[0][1]
    assert body["task"]["reward_model"]["ground_truth"] == {"inputs": ["1 2\n"], "outputs": ["3\n"]}
    assert body["limits"] == {"memory_mb": 256}
    scores = verl.compute_score(data_sources=Array(["apps"] * 2), solution_strs=Array(["x", "y"]),
                                ground_truths=Array([GT_IO, GT_IO]), extra_infos=Array([None, None]))
    assert scores == [1.0, 1.0] and len(s.requests) == 2


# -- OpenRLHF ---------------------------------------------------------------------------


def as_list(v):
    return [float(x) for x in (v.tolist() if hasattr(v, "tolist") else v)]


def test_openrlhf_reward_func_as_openrlhf_calls_it(url):
    rf = load_by_path("openrlhf.py", "reward_func").reward_func
    prompt = "<|user|>Double the number.<|assistant|>"
    labels = [json.dumps({"verification_info": DOUBLE_INFO}), DOUBLE_INFO, GT_ASSERT,
              json.dumps({"task_id": "apps/1", "input_output": ADD_IO})]
    responses = [DOUBLE_OK, DOUBLE_HALF, INC_OK, SYNTAX]
    out = rf([prompt + r for r in responses], [prompt] * 4, labels)
    assert set(out) == {"rewards", "scores", "extra_logs"}
    assert as_list(out["rewards"]) == [1.0, -1.0, 1.0, -1.0]
    assert as_list(out["scores"]) == [1.0, 0.5, 1.0, 0.0]
    assert as_list(out["extra_logs"]["pass"]) == [1.0, 0.0, 1.0, 0.0]
    assert as_list(out["extra_logs"]["infra_error"]) == [0.0] * 4


def test_openrlhf_infra_error_and_lengths(stubs):
    stubs([ok(records_of(lambda r: INFRA if r["generation"] == "lost" else passing(r)))])
    rf = load_by_path("openrlhf.py", "reward_func").reward_func
    out = rf(["p:lost", "p:ok"], ["p:", "p:"], [GT_IO, GT_IO])
    assert as_list(out["rewards"]) == [0.0, 1.0] and as_list(out["extra_logs"]["infra_error"]) == [1.0, 0.0]
    with pytest.raises(ValueError):
        rf(["a", "b"], ["a"], [GT_IO, GT_IO])


# -- a server that stops answering --------------------------------------------------------


class Silent:
    """A server on 127.0.0.1 that accepts every connection, reads what comes
    and never answers: a judge hung mid-call."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.1)  # accept() wakes to see stop()
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.conns, self.stopped = [], False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.conns.append(c)

    def stop(self):
        self.stopped = True
        self.thread.join(5)
        self.sock.close()
        for c in self.conns:
            c.close()


@pytest.mark.parametrize("adapter", ["trl", "verl", "openrlhf"])
def test_a_server_that_never_answers_cannot_hold_the_training_step(monkeypatch, adapter):
    """Each adapter's call returns by EXECEVAL_CALL_DEADLINE_S with the
    samples it could not get as infrastructure errors (TRL None, verl and
    OpenRLHF the infra reward, flagged), though the socket timeout (300 s)
    and the retries would wait far longer, and EXECEVAL_UNAVAILABLE says
    raise."""
    for k in ENV_KEYS:
        monkeypatch.delenv(k, raising=False)
    silent = Silent()
    try:
        monkeypatch.setenv("EXECEVAL_URL", silent.url)
        monkeypatch.setenv("EXECEVAL_CALL_DEADLINE_S", "1.5")
        t0 = time.monotonic()
        if adapter == "trl":
            got = trl_call(trl.make_code_reward(), ["x", "y"], input_output=[ADD_IO] * 2)
            assert got == [None, None]
        elif adapter == "verl":
            verl = load_by_path("verl.py", "custom_module")
            got = verl.compute_score(data_sources=["a"] * 2, solution_strs=["x", "y"],
                                     ground_truths=[GT_IO] * 2, extra_infos=[{}] * 2)
            assert got == [0.0, 0.0]
            one = verl.compute_score(data_source="a", solution_str="x", ground_truth=GT_IO, extra_info={})
            assert one == {"score": 0.0, "acc": 0.0, "infra_error": 1.0}
        else:
            rf = load_by_path("openrlhf.py", "reward_func").reward_func
            out = rf(["p:x", "p:y"], ["p:", "p:"], [GT_IO, GT_IO])
            assert as_list(out["rewards"]) == [0.0, 0.0]
            assert as_list(out["extra_logs"]["infra_error"]) == [1.0, 1.0]
        took = time.monotonic() - t0
        assert took < 20, "the call was held %.1f s past its 1.5 s deadline" % took
        assert silent.conns, "no request reached the silent server"
    finally:
        silent.stop()


def test_the_deadline_must_be_positive(monkeypatch):
    with pytest.raises(ValueError) as e:
        _adapt.Settings(call_deadline_s=0)
    assert "EXECEVAL_CALL_DEADLINE_S" in str(e.value)


# -- the environment: token ------------------------------------------------------------


def test_token_from_the_environment(tmp_path, monkeypatch):
    for k in ENV_KEYS:
        monkeypatch.delenv(k, raising=False)
    token = "adapter-test-token-0123456789"
    (tmp_path / "token").write_text(token + "\n")
    s = Server(["--token-file", tmp_path / "token"], jobs=1)
    try:
        monkeypatch.setenv("EXECEVAL_URL", "http://%s:%d" % (s.connect_host, s.port))
        monkeypatch.setenv("EXECEVAL_TOKEN_FILE", str(tmp_path / "token"))
        assert trl_call(trl.code_reward, [INC_OK], test_list=[["assert inc(1) == 2"]]) == [1.0]
        monkeypatch.delenv("EXECEVAL_TOKEN_FILE")
        monkeypatch.setenv("EXECEVAL_TOKEN", token)
        verl = load_by_path("verl.py", "custom_module")
        assert verl.compute_score("x", INC_OK, GT_ASSERT)["score"] == 1.0
    finally:
        assert s.stop() == 0, s.stderr[-3000:]


def test_verl_memory_limit_above_the_servers_ceiling_is_clamped_with_a_warning(url):
    """verl's sandbox settings carry memory_limit_mb=1024; a server started
    with --memory 512 answered 400 and the exception stopped the training
    step. The limit becomes the server's ceiling, said once."""
    verl = load_by_path("verl.py", "custom_module")
    with pytest.warns(RuntimeWarning, match=r"memory_mb 1024 is above the server's ceiling 512: 512 is used"):
        got = verl.compute_score(data_source="apps", solution_str=ADD_OK, ground_truth=GT_CALL,
                                 extra_info=None, memory_limit_mb=1024)
    assert got == {"score": 1.0, "acc": 1.0, "infra_error": 0.0}
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once: the next call neither warns nor asks twice
        scores = verl.compute_score(data_sources=["a"] * 2, solution_strs=[ADD_OK, ADD_BAD],
                                    ground_truths=[GT_CALL] * 2, extra_infos=None, memory_limit_mb=1024)
    assert scores == [1.0, -1.0]
    # a task's own bad limit is the data's fault: still an error
    with pytest.raises(InputError):
        verl.compute_score(data_source="x", solution_str=ADD_OK, extra_info=None,
                           ground_truth={"tests": [{"kind": "assert", "code": "assert 1"}],
                                         "limits": {"memory_mb": 99999}})
