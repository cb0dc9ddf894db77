"""POST /get_reward: OpenRLHF's remote reward model (--remote_rm_url
http://HOST:PORT/get_reward). OpenRLHF posts {"query": [prompt + response],
"prompts": [prompt], "labels": [label]} and reads {"rewards": [float],
"scores": [float], "extra_logs": {key: [number per sample]}}; here each
label carries the sample's tests (a task in any format the server reads).
The rewards must be the records' own: the same as /v1/batch gives for the
same programs.

Through the safety net, 127.0.0.1 only:

    tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/e2e/test_serve_get_reward.py
"""
import json

from serve_client import serve  # noqa: F401 (fixture)

# A chat prompt as OpenRLHF renders it (Qwen's template), and labels in
# three of the formats a data set gives its tests in.
PROMPT = ("<|im_start|>user\nRead two integers from one line and print their sum.<|im_end|>\n"
          "<|im_start|>assistant\n")
APPS = {"input_output": json.dumps({"inputs": ["1 2\n", "10 -3\n"], "outputs": ["3\n", "7\n"]})}
NATIVE = {"tests": [{"kind": "io", "stdin": "1 2\n", "stdout": "3\n"},
                    {"kind": "io", "stdin": "2 2\n", "stdout": "4\n"}]}
MBPP = {"task_id": 7, "text": "add", "code": "", "test_list": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]}

SUM = "a, b = map(int, input().split())\nprint(a + b)\n"
FENCED_OK = "Here it is:\n```python\n" + SUM + "```<|im_end|>"
FENCED_BAD = "```python\nprint(0)\n```<|im_end|>"
# No fence: only the prompt taken off the query leaves a program.
PLAIN_OK = SUM + "<|im_end|>"
ADD_OK = "```python\ndef add(a, b):\n    return a + b\n```"
ADD_HALF = "```python\ndef add(a, b):\n    return 3\n```"


def get_reward(s, samples, **extra):
    body = {"query": [PROMPT + r for r, _ in samples], "prompts": [PROMPT] * len(samples),
            "labels": [lab for _, lab in samples]}
    body.update(extra)
    return s.post("/get_reward", body)


def ok(a):
    assert a.status == 200, a
    return a.json


def error_of(a, code=400):
    assert a.status == code, a
    assert set(a.json) == {"error", "field"}, a
    return a.json


def test_openrlhf_shape(serve):
    s = serve()
    samples = [(FENCED_OK, APPS), (FENCED_BAD, APPS), (PLAIN_OK, APPS), (PLAIN_OK, json.dumps(NATIVE)),
               (ADD_OK, MBPP), (ADD_HALF, MBPP)]
    a = ok(get_reward(s, samples))
    assert set(a) == {"rewards", "scores", "extra_logs"}, a
    assert a["rewards"] == [1.0, -1.0, 1.0, 1.0, 1.0, -1.0], a
    assert a["scores"] == [1.0, 0.0, 1.0, 1.0, 1.0, 0.5], a
    assert all(isinstance(x, float) for x in a["rewards"] + a["scores"]), a
    logs = a["extra_logs"]
    for key in ("pass", "assertion_fail", "syntax_error", "timeout", "error", "infra_error", "passed", "total"):
        assert len(logs[key]) == len(samples) and all(isinstance(x, int) for x in logs[key]), (key, logs)
    assert logs["pass"] == [1, 0, 1, 1, 1, 0] and logs["infra_error"] == [0] * 6, logs
    assert logs["passed"] == [2, 0, 2, 2, 2, 1] and logs["total"] == [2] * 6, logs
    # Who judged each sample's tests: never the candidate's interpreter by default.
    assert logs["judged_by_sandbox"] == [0] * 6, logs
    assert [a + b for a, b in zip(logs["judged_by_supervisor"], logs["judged_by_judge"])] == logs["total"], logs


def test_a_bare_ground_truth_is_read_as_apps(serve):
    """What an OpenRLHF data set's input_output column and verl's
    ground_truth hold, {"inputs", "outputs"(, "fn_name")}, as an object or
    its text: the same rewards as the APPS row holding it."""
    s = serve()
    bare = json.loads(APPS["input_output"])
    call = {"fn_name": "add", "inputs": [[1, 2], [2, 2]], "outputs": [3, 4]}
    samples = [(FENCED_OK, bare), (FENCED_BAD, bare), (PLAIN_OK, json.dumps(bare)), (FENCED_OK, APPS),
               (ADD_OK, call), (ADD_HALF, json.dumps(call))]
    a = ok(get_reward(s, samples))
    assert a["rewards"] == [1.0, -1.0, 1.0, 1.0, 1.0, -1.0], a
    assert a["scores"] == [1.0, 0.0, 1.0, 1.0, 1.0, 0.5], a
    assert a["extra_logs"]["judged_by_supervisor"] == [2, 2, 2, 2, 2, 2], a
    e = error_of(get_reward(s, [(FENCED_OK, dict(bare, expected=1))]))
    assert e["field"] == "labels[0].expected", e


def test_rewards_are_the_records_of_a_batch(serve):
    """The records behind the rewards ("records": true) are the ones
    /v1/batch gives for the same programs and tasks."""
    s = serve("--reward", "fraction")
    samples = [(FENCED_OK, APPS), (FENCED_BAD, APPS), (ADD_HALF, MBPP), (ADD_OK, MBPP)]
    a = ok(get_reward(s, samples, records=True))
    recs = a["records"]
    assert [r["extraction"] for r in recs] == ["tagged"] * 4, recs
    assert a["rewards"] == [r["reward"] for r in recs] == [1.0, 0.0, 0.5, 1.0], a["rewards"]
    assert [r["sample"] for r in recs] == [0, 1, 2, 3], recs
    # a GRPO group: neighbours with one label share its task (and its id)
    assert [r["task_id"] for r in recs] == ["labels[0]", "labels[0]", "7", "7"], recs
    # The query without its end token, as a candidate, extracts the same
    # block (with the token after it, the fence would not close).
    runs = [{"task": dict(lab, task_id="t%d" % i), "candidate": PROMPT + resp.removesuffix("<|im_end|>")}
            for i, (resp, lab) in enumerate(samples)]
    batch = ok(s.batch(runs))["records"]
    key = ("status", "score", "passed", "total", "reward", "program")
    assert [[r[k] for k in key] for r in batch] == [[r[k] for k in key] for r in recs]


def test_prompts_may_be_absent(serve):
    s = serve()
    a = ok(s.post("/get_reward", {"query": [FENCED_OK], "labels": [APPS]}))
    assert a["rewards"] == [1.0], a
    # without the prompt taken off, a plain response is the whole query: not Python
    a = ok(s.post("/get_reward", {"query": [PROMPT + PLAIN_OK], "labels": [APPS]}))
    assert a["rewards"] == [-1.0] and a["extra_logs"]["syntax_error"] == [1], a


def test_bad_bodies_name_the_field(serve):
    s = serve("--max-tests-per-task", "3")
    cases = [
        ({"query": [FENCED_OK]}, "labels"),
        ({"query": [FENCED_OK], "labels": [APPS, APPS]}, "labels"),
        ({"query": [FENCED_OK], "prompts": [], "labels": [APPS]}, "prompts"),
        ({"query": "x", "labels": [APPS]}, "query"),
        ({"query": [FENCED_OK], "labels": ["no tests here"]}, "labels[0]"),
        ({"query": [FENCED_OK], "labels": [{"tests": [{"kind": "io", "stdout": 3}]}]}, "labels[0].tests[0].stdout"),
    ]
    for body, field in cases:
        assert error_of(s.post("/get_reward", body))["field"] == field, body
    many = {"tests": [{"kind": "io", "stdin": "", "stdout": "%d\n" % i} for i in range(4)]}
    assert error_of(s.post("/get_reward", {"query": [FENCED_OK], "labels": [many]}), 413)["field"] == "labels[0].tests"
    assert s.request("GET", "/get_reward").status == 405


def test_token_and_metrics(serve, tmp_path):
    tf = tmp_path / "token"
    tf.write_text("tok-get-reward-0123456789\n")
    s = serve("--token-file", str(tf))
    body = {"query": [PROMPT + FENCED_OK], "prompts": [PROMPT], "labels": [APPS]}
    denied = s.post("/get_reward", body)
    assert denied.status == 401, denied
    a = s.post("/get_reward", body, token="tok-get-reward-0123456789")
    assert ok(a)["rewards"] == [1.0]
    m = s.metrics(token="tok-get-reward-0123456789")
    assert m.value("execeval_http_requests_total", endpoint="/get_reward", code="200") == 1
    assert m.value("execeval_http_requests_total", endpoint="/get_reward", code="401") == 1
    assert m.value("execeval_request_duration_seconds_count", endpoint="/get_reward") == 1
