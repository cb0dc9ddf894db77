"""The adapters agree exactly with `execeval eval` on the same samples: the
same records (but for the fields of the moment: ids, clocks, resources) and
the same rewards.

One tasks file mixes the formats the adapters meet (open-r1
verification_info, APPS input_output, verl ground truths of each shape,
HumanEval, MBPP, native); its samples (free-form generations) go through
`execeval eval --reward partial` and, with EXECEVAL_REWARD=partial, through
each adapter called as its trainer calls it, against `execeval serve` run
with the same options.

    tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/client/test_adapters_agree.py
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "clients" / "python"), str(REPO / "tests" / "e2e"), str(REPO / "tests" / "client")]

import conftest as e2e  # noqa: E402
from execeval import openrlhf, trl, verl  # noqa: E402
from served import server  # noqa: E402,F401 - the module's real server
from test_adapters import (ADD_BAD, ADD_IO, ADD_OK, DOUBLE_HALF, DOUBLE_INFO, DOUBLE_OK, ENV_KEYS,  # noqa: E402
                           GT_ASSERT, GT_CALL, GT_IO, INC_HALF, INC_OK, SUM_OK, SYNTAX, fenced, trl_call)

if os.getpid() != 1 and not os.environ.get("EXECEVAL_E2E_I_AM_IN_A_NET"):
    pytest.exit("refusing to run: these tests start execeval serve; run them inside the safety net",
                returncode=4)

NEG_TEST = "def check(candidate):\n    assert candidate(1) == -1\n    assert candidate(-2) == 2\n"
ROWS = [
    {"task_id": "agree/double", "verification_info": DOUBLE_INFO},
    {"task_id": "agree/add", "input_output": ADD_IO},
    {"task_id": "agree/inc", "reward_model": {"ground_truth": GT_ASSERT}},
    {"task_id": "agree/sum", "reward_model": {"ground_truth": GT_IO}},
    {"task_id": "agree/addv", "reward_model": {"ground_truth": GT_CALL}},
    {"task_id": "agree/neg", "prompt": "def neg(x):\n", "entry_point": "neg", "test": NEG_TEST},
    {"task_id": "agree/mbpp", "test_list": ["assert inc(1) == 2", "assert inc(5) == 6"]},
    {"task_id": "agree/native", "tests": [{"kind": "call", "fn": "inc", "args": [a], "expected": a + 1}
                                          for a in (0, 1, 2, 3)]},
]
GENERATIONS = {
    "agree/double": [DOUBLE_OK, DOUBLE_HALF, SYNTAX],
    "agree/add": [ADD_OK, ADD_BAD, "no code at all"],
    "agree/inc": [INC_OK, INC_HALF],
    "agree/sum": [SUM_OK, fenced("print(3)\n")],
    "agree/addv": [ADD_OK, ADD_BAD],
    "agree/neg": [fenced("def neg(x):\n    return -x\n"), fenced("def neg(x):\n    return abs(x)\n")],
    "agree/mbpp": [INC_OK, INC_HALF],
    "agree/native": [INC_OK, fenced("def inc(x):\n    return 1 if x == 0 else x\n"), SYNTAX],
}
SAMPLES = [(row, k, text) for row in ROWS for k, text in enumerate(GENERATIONS[row["task_id"]])]
# Fields of the moment, and those the adapters number otherwise (sample).
VOLATILE = ("sandbox_id", "started_at", "finished_at", "resources", "duration_ms", "sample")


def steady(value):
    """A record without the fields that differ from one evaluation to the next."""
    if isinstance(value, dict):
        return {k: steady(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [steady(v) for v in value]
    return value


@pytest.fixture(scope="module")
def by_eval(tmp_path_factory):
    """eval's records, by (task_id, sample)."""
    d = tmp_path_factory.mktemp("agree")
    (d / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (d / "samples.jsonl").write_text("".join(json.dumps({"task_id": row["task_id"], "sample": k, "generation": t})
                                             + "\n" for row, k, t in SAMPLES))
    r = subprocess.run(e2e.with_isolation([e2e.EXECEVAL, "eval", "--tasks", str(d / "tasks.jsonl"), "--samples",
                                           str(d / "samples.jsonl"), "--reward", "partial", "-j", "2", "-q",
                                           "--no-history", "-o", str(d / "results.jsonl")]),
                       capture_output=True, text=True, timeout=300, env=e2e.execeval_env())
    assert r.returncode == 0, r.stderr[-3000:]
    recs = [json.loads(line) for line in (d / "results.jsonl").read_text().splitlines()]
    assert len(recs) == len(SAMPLES)
    return {(rec["task_id"], rec["sample"]): rec for rec in recs}


@pytest.fixture
def env(server, monkeypatch):
    for k in ENV_KEYS:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("EXECEVAL_URL", "http://%s:%d" % (server.connect_host, server.port))
    monkeypatch.setenv("EXECEVAL_REWARD", "partial")


def expected(by_eval, samples):
    recs = [by_eval[(row["task_id"], k)] for row, k, _ in samples]
    return [steady(r) for r in recs], [float(r["reward"]) for r in recs]


def check(got_records, got_rewards, by_eval, samples):
    want_records, want_rewards = expected(by_eval, samples)
    assert len(set(want_rewards)) > 2  # the samples do tell the rewards apart
    assert got_rewards == want_rewards
    for got, want, (row, k, _) in zip(got_records, want_records, samples):
        assert steady(got) == want, (row["task_id"], k)


def test_trl_agrees_with_eval(env, by_eval):
    # A TRL dataset has every column on every row: None where a row has none.
    columns = sorted({k for row in ROWS for k in row})
    kw = {c: [row.get(c) for row, _, _ in SAMPLES] for c in columns}
    completions = [[{"role": "assistant", "content": t}] for _, _, t in SAMPLES]
    rewards = trl_call(trl.code_reward, completions, **kw)
    records = trl.records(completions, prompts=None, **kw)
    check(records, rewards, by_eval, SAMPLES)


def test_verl_agrees_with_eval(env, by_eval):
    samples = [s for s in SAMPLES if "reward_model" in s[0]]
    gts = [row["reward_model"]["ground_truth"] for row, _, _ in samples]
    infos = [{"task_id": row["task_id"], "index": i} for i, (row, _, _) in enumerate(samples)]
    texts = [t for _, _, t in samples]
    one_by_one = [verl.compute_score(data_source="agree", solution_str=t, ground_truth=gt, extra_info=ei)["score"]
                  for t, gt, ei in zip(texts, gts, infos)]
    batch = verl.compute_score(data_sources=["agree"] * len(texts), solution_strs=texts, ground_truths=gts,
                               extra_infos=infos)
    assert one_by_one == batch
    check(verl.records(texts, gts, infos), batch, by_eval, samples)


def test_openrlhf_agrees_with_eval(env, by_eval):
    prompt = "<|im_start|>user\nSolve it.<|im_end|>\n<|im_start|>assistant\n"
    queries = [prompt + t for _, _, t in SAMPLES]
    labels = [json.dumps(row) for row, _, _ in SAMPLES]
    out = openrlhf.reward_func(queries, [prompt] * len(queries), labels)
    rewards = [float(x) for x in (out["rewards"].tolist() if hasattr(out["rewards"], "tolist") else out["rewards"])]
    check(openrlhf.records(queries, [prompt] * len(queries), labels), rewards, by_eval, SAMPLES)
