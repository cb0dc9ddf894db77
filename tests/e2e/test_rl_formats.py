"""The RL code data sets' rows as tasks files (docs/formats.md): APPS/TACO,
CodeContests, verl, LiveCodeBench, open-r1 and Prime Intellect, each
detected by its fields (or forced with --format), evaluated with right and
wrong programs; LeetCode-style `class Solution` methods as call tests; and
the error naming file, line and field of a row that lacks what its format
needs. Every row here was written for these tests.

Runs inside the safety net like the rest of the e2e suite:
    tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/e2e/test_rl_formats.py
"""
import base64
import json
import pickle
import zlib

from conftest import with_isolation
from test_eval import execeval, records, write_jsonl

SUM = "print(sum(map(int, open(0).read().split())))\n"
ZERO = "print(0)\n"


def evaluate(tmp_path, rows, samples, *args, check=None):
    """{(task_id, sample): (status, [(kind, visibility, test status)])} of eval over rows and samples."""
    tasks = write_jsonl(tmp_path / "t.jsonl", rows)
    sample_file = write_jsonl(tmp_path / "s.jsonl", samples)
    out = tmp_path / "r.jsonl"
    r = execeval(*with_isolation(["eval", "--tasks", tasks, "--samples", sample_file, "-o", out, "-q", "-k", 1,
                                  "--no-history", "-j", 2, "--force", *args]))  # r.jsonl anew each time
    assert r.returncode in (0, 1), r.stderr[-2000:]
    return {(x["task_id"], x["sample"]): (x["status"], [(t["kind"], t["visibility"], t["status"])
                                                        for t in x["tests"]])
            for x in records(out)}


def code(task_id, text, sample=None):
    row = {"task_id": task_id, "code": text}
    if sample is not None:
        row["sample"] = sample
    return row


def eval_error(tmp_path, rows, *args):
    """eval's stderr on a tasks file it refuses (exit 2)."""
    tasks = write_jsonl(tmp_path / "bad.jsonl", rows)
    samples = write_jsonl(tmp_path / "s.jsonl", [code("1", ZERO)])
    r = execeval(*with_isolation(["eval", "--tasks", tasks, "--samples", samples, "-o", tmp_path / "r.jsonl",
                                  "-q", "--no-history", "--force", *args]))
    assert r.returncode == 2, (r.returncode, r.stderr)
    return r.stderr


# ---------------------------------------------------------------------------
# APPS / TACO


APPS_ROWS = [
    # stdin: input_output as a JSON string, an input given as a list of lines
    {"problem_id": 4001, "question": "Print the sum of the numbers.",
     "input_output": json.dumps({"inputs": ["1 2\n", ["3", "4 5"]], "outputs": ["3\n", ["12"]]})},
    # call-based: APPS wraps each return value in a one-element list
    {"problem_id": 4002, "question": "Return twice x, and [x, x].",
     "input_output": {"fn_name": "twice", "inputs": [[2], [[1, 2]]], "outputs": [[4], [[1, 2, 1, 2]]]}},
    # LeetCode style: starter_code defines class Solution
    {"problem_id": 4003, "starter_code": "class Solution:\n    def maxOf(self, nums):\n",
     "input_output": {"fn_name": "maxOf", "inputs": [[[1, 5, 2]], [[-3]]], "outputs": [[5], [-3]]}},
]


def test_apps_and_taco_rows_stdin_call_and_solution_methods(tmp_path):
    got = evaluate(tmp_path, APPS_ROWS, [
        code("4001", SUM), code("4001", ZERO),
        code("4002", "def twice(x):\n    return x * 2\n"),
        code("4002", "def twice(x):\n    return [x * 2]\n"),  # the wrapped form is not the value
        code("4003", "class Solution:\n    def maxOf(self, nums):\n        return max(nums)\n"),
        code("4003", "class Solution:\n    def maxOf(self, nums):\n        return min(nums)\n"),
        code("4003", "def maxOf(nums):\n    return max(nums)\n"),  # no class: the call fails
    ])
    assert got[("4001", 0)] == ("pass", [("io", "public", "pass")] * 2)
    assert got[("4001", 1)][0] == "assertion_fail"
    assert got[("4002", 0)] == ("pass", [("call", "public", "pass")] * 2)
    assert got[("4002", 1)][0] == "assertion_fail"
    assert got[("4003", 0)] == ("pass", [("call", "public", "pass")] * 2)
    assert got[("4003", 1)] == ("assertion_fail", [("call", "public", "fail"), ("call", "public", "pass")])
    assert got[("4003", 2)][0] == "assertion_fail"


def test_a_solution_method_that_raises_or_is_missing_fails_its_test(tmp_path):
    got = evaluate(tmp_path, APPS_ROWS[2:], [
        code("4003", "class Solution:\n    def maxOf(self, nums):\n        raise ValueError(nums)\n"),
        code("4003", "class Solution:\n    pass\n"),
        code("4003", "class Solution:\n    def __init__(self):\n        raise SystemExit(0)\n"),
    ])
    assert got[("4003", 0)][0] == "assertion_fail"
    assert got[("4003", 1)][0] == "assertion_fail"
    assert got[("4003", 2)][0] != "pass"


# ---------------------------------------------------------------------------
# CodeContests


CC_ROW = {"name": "1000_A. Add them", "description": "Add two numbers.",
          "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
          "private_tests": {"input": ["10 20\n"], "output": ["30\n"]},
          "generated_tests": {"input": ["-5 5\n", "7 0\n"], "output": ["0\n", "7\n"]}}


def test_codecontests_public_tests_public_private_and_generated_hidden(tmp_path):
    got = evaluate(tmp_path, [CC_ROW], [
        code("1000_A. Add them", SUM),
        code("1000_A. Add them", "print(3)\n"),  # right on the public test only
        code("1000_A. Add them", ZERO),
    ], "--run-hidden")
    assert got[("1000_A. Add them", 0)] == ("pass", [("io", "public", "pass")] + [("io", "hidden", "pass")] * 3)
    assert got[("1000_A. Add them", 1)] == ("assertion_fail", [("io", "public", "pass")] +
                                            [("io", "hidden", "fail")] * 3)
    assert got[("1000_A. Add them", 2)][0] == "assertion_fail"


# ---------------------------------------------------------------------------
# verl


def verl_row(truth, **extra):
    return {"data_source": "codegen", "prompt": [{"role": "user", "content": "?"}], "ability": "code",
            "reward_model": {"style": "rule", "ground_truth": truth}, **extra}


def test_verl_ground_truth_io_json_call_and_assert_cases(tmp_path):
    rows = [
        verl_row(json.dumps({"inputs": ["2 3\n", "4 4\n"], "outputs": ["5\n", "8\n"]}), task_id="v/io"),
        # fn_name: each input newline-separated JSON arguments, each output the JSON of the value
        verl_row({"fn_name": "merge", "inputs": ["[1, 3]\n[2]", "[]\n[]"], "outputs": ["[1, 2, 3]", "[]"]},
                 task_id="v/call"),
        verl_row(json.dumps({"assert_case": ["assert square(3) == 9", "assert square(-2) == 4"]}),
                 task_id="v/assert"),
        verl_row({"inputs": ["1\n"], "outputs": ["1\n"]}),  # no id: its line, 4
    ]
    got = evaluate(tmp_path, rows, [
        code("v/io", SUM), code("v/io", ZERO),
        code("v/call", "def merge(a, b):\n    return sorted(a + b)\n"),
        code("v/call", "def merge(a, b):\n    return a + b\n"),
        code("v/assert", "def square(x):\n    return x * x\n"),
        code("v/assert", "def square(x):\n    return 2 * x\n"),
        code("4", "print(input())\n"),
    ])
    assert got[("v/io", 0)] == ("pass", [("io", "public", "pass")] * 2)
    assert got[("v/io", 1)][0] == "assertion_fail"
    assert got[("v/call", 0)] == ("pass", [("call", "public", "pass")] * 2)
    assert got[("v/call", 1)] == ("assertion_fail", [("call", "public", "fail"), ("call", "public", "pass")])
    assert got[("v/assert", 0)] == ("pass", [("assert", "public", "pass")] * 2)
    assert got[("v/assert", 1)][0] == "assertion_fail"
    assert got[("4", 0)][0] == "pass"


def test_verl_call_that_raises_does_not_pass_an_empty_expected_output(tmp_path):
    # verl's own call wrapper exits 0 after an exception, so a raising function
    # "passes" an expected output that is empty; here the call is judged by value
    rows = [verl_row({"fn_name": "f", "inputs": ["1"], "outputs": ["null"]}, task_id="v/raise")]
    got = evaluate(tmp_path, rows, [code("v/raise", "def f(x):\n    raise RuntimeError('no')\n"),
                                    code("v/raise", "def f(x):\n    return None\n")])
    assert got[("v/raise", 0)][0] == "assertion_fail"
    assert got[("v/raise", 1)][0] == "pass"


# ---------------------------------------------------------------------------
# LiveCodeBench


def lcb_private(cases):
    """As the data set ships private tests: base64 of zlib of a pickled JSON string."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(cases)))).decode()


def test_livecodebench_public_json_private_packed_stdin_and_functional(tmp_path):
    stdin_row = {
        "question_id": "abc900_a", "platform": "atcoder", "starter_code": "", "metadata": "{}",
        "public_test_cases": json.dumps([{"input": "2 3\n", "output": "5\n", "testtype": "stdin"}]),
        # the last one inflates to far more than 4x its packed size (the inflater grows its buffer)
        "private_test_cases": lcb_private([{"input": "10 -4\n", "output": "6\n", "testtype": "stdin"},
                                           {"input": "0 0\n", "output": "0\n", "testtype": "stdin"},
                                           {"input": "1 " * 150000 + "\n", "output": "150000\n",
                                            "testtype": "stdin"}]),
    }
    functional_row = {
        "question_id": "3999", "platform": "leetcode",
        "starter_code": "class Solution:\n    def countEven(self, nums: List[int], k: int) -> int:\n        ",
        "metadata": json.dumps({"func_name": "countEven"}),
        "public_test_cases": json.dumps([{"input": "[1, 2, 4]\n0", "output": "2", "testtype": "functional"}]),
        "private_test_cases": lcb_private([{"input": "[]\n0", "output": "0", "testtype": "functional"},
                                           {"input": "[6]\n1", "output": "2", "testtype": "functional"}]),
    }
    got = evaluate(tmp_path, [stdin_row, functional_row], [
        code("abc900_a", SUM), code("abc900_a", "print(5)\n"),
        code("3999", "class Solution:\n    def countEven(self, nums, k):\n"
                     "        return sum(1 for x in nums if x % 2 == 0) + k\n"),
        code("3999", "class Solution:\n    def countEven(self, nums, k):\n        return len(nums)\n"),
    ], "--run-hidden")
    assert got[("abc900_a", 0)] == ("pass", [("io", "public", "pass")] + [("io", "hidden", "pass")] * 3)
    assert got[("abc900_a", 1)] == ("assertion_fail", [("io", "public", "pass")] + [("io", "hidden", "fail")] * 3)
    assert got[("3999", 0)] == ("pass", [("call", "public", "pass")] + [("call", "hidden", "pass")] * 2)
    assert got[("3999", 1)][0] == "assertion_fail"


def test_livecodebench_private_pickle_of_anything_but_a_string_is_refused(tmp_path):
    # a pickle that would run os.system if unpickled: refused, never run
    evil = b"\x80\x02cposix\nsystem\nX\x04\x00\x00\x00trueq\x00\x85q\x01Rq\x02."
    row = {"question_id": "q1", "public_test_cases": "[]",
           "private_test_cases": base64.b64encode(zlib.compress(evil)).decode()}
    err = eval_error(tmp_path, [row])
    assert "bad.jsonl:1: private_test_cases: not a pickled string: byte 2 (0x63): only a single string" in err
    row["private_test_cases"] = base64.b64encode(zlib.compress(pickle.dumps(["a"], protocol=4))).decode()
    assert "only a single string is accepted" in eval_error(tmp_path, [row])


# ---------------------------------------------------------------------------
# open-r1 and Prime Intellect


def test_open_r1_verification_info(tmp_path):
    rows = [{"problem_id": "or1_7", "source": "codeforces", "task_type": "verifiable_code",
             "verification_info": json.dumps({"language": "python", "test_cases": [
                 {"input": "3\n1 2 3\n", "output": "6\n", "type": "stdin_stdout"},
                 {"input": "1\n-1\n", "output": "-1\n", "type": "stdin_stdout"}]})}]
    got = evaluate(tmp_path, rows, [
        code("or1_7", "input()\nprint(sum(map(int, input().split())))\n"),
        code("or1_7", "print(6)\n"),
    ])
    assert got[("or1_7", 0)] == ("pass", [("io", "public", "pass")] * 2)
    assert got[("or1_7", 1)] == ("assertion_fail", [("io", "public", "pass"), ("io", "public", "fail")])


def test_open_r1_printing_only_the_first_expected_line_fails(tmp_path):
    # open-r1 compares line lists with zip: the first line alone passes there
    rows = [{"problem_id": "or1_zip", "verification_info": {"language": "python", "test_cases": [
        {"input": "", "output": "1\n2\n3\n", "type": "stdin_stdout"}]}}]
    got = evaluate(tmp_path, rows, [code("or1_zip", "print(1)\n"), code("or1_zip", "print(1)\nprint(2)\nprint(3)\n")])
    assert got[("or1_zip", 0)][0] == "assertion_fail"
    assert got[("or1_zip", 1)][0] == "pass"


def test_prime_verification_info_stdin_and_fn_name(tmp_path):
    rows = [
        {"problem_id": "pi_io", "verification_info": {
            "test_case_inputs": [json.dumps("4 5\n"), json.dumps("1 1\n")],
            "test_case_outputs": [json.dumps("9\n"), json.dumps("2\n")], "fn_name": None, "timeout": 5}},
        {"problem_id": "pi_call", "verification_info": json.dumps({
            "test_case_inputs": [json.dumps([3, 4]), json.dumps(["a", "b"])],
            "test_case_outputs": [json.dumps(7), json.dumps("ab")], "fn_name": "join", "timeout": 5})},
    ]
    got = evaluate(tmp_path, rows, [
        code("pi_io", SUM), code("pi_io", ZERO),
        code("pi_call", "def join(a, b):\n    return a + b\n"),
        code("pi_call", "def join(a, b):\n    return str(a) + str(b)\n"),
    ])
    assert got[("pi_io", 0)] == ("pass", [("io", "public", "pass")] * 2)
    assert got[("pi_io", 1)][0] == "assertion_fail"
    assert got[("pi_call", 0)] == ("pass", [("call", "public", "pass")] * 2)
    assert got[("pi_call", 1)] == ("assertion_fail", [("call", "public", "fail"), ("call", "public", "pass")])


# ---------------------------------------------------------------------------
# --format, mixed files, errors


def test_one_tasks_file_may_mix_formats_and_format_forces_one(tmp_path):
    rows = [APPS_ROWS[0], CC_ROW]
    got = evaluate(tmp_path, rows, [code("4001", SUM), code("1000_A. Add them", SUM)])
    assert got[("4001", 0)][0] == got[("1000_A. Add them", 0)][0] == "pass"
    # forced: the CodeContests row read as APPS lacks input_output
    err = eval_error(tmp_path, rows, "--format", "apps")
    assert "bad.jsonl:2: input_output: missing (expected JSON, or a string of JSON)" in err
    got = evaluate(tmp_path, [APPS_ROWS[0]], [code("4001", SUM)], "--format", "apps")
    assert got[("4001", 0)][0] == "pass"
    err = eval_error(tmp_path, rows, "--format", "taco")
    assert ("--format: expected auto, native, humaneval, mbpp, apps, codecontests, verl, livecodebench, "
            "open-r1, prime or evalplus, got 'taco'") in err


def test_a_row_missing_what_its_format_needs_names_file_line_and_field(tmp_path):
    cases = [
        ({"problem_id": 1, "input_output": json.dumps({"inputs": ["1"]})},
         "bad.jsonl:2: input_output.outputs: missing (expected a non-empty array)"),
        ({"name": "x", "public_tests": {"input": ["1"], "output": [2]}},
         "bad.jsonl:2: public_tests.output[0]: expected a string, got number"),
        (verl_row({"fn_name": "f", "inputs": ["{"], "outputs": ["1"]}),
         "bad.jsonl:2: reward_model.ground_truth.inputs[0]: not JSON"),
        ({"question_id": "q", "public_test_cases": json.dumps([{"input": "1", "output": "1",
                                                                "testtype": "functional"}])},
         "bad.jsonl:2: metadata.func_name: missing (public_test_cases[0] is functional)"),
        ({"problem_id": "p", "verification_info": {"language": "cpp", "test_cases": [{"input": "", "output": ""}]}},
         "bad.jsonl:2: verification_info.language: expected python (execeval runs Python only)"),
        ({"problem_id": "p", "verification_info": {"test_case_inputs": ["1"], "test_case_outputs": []}},
         "bad.jsonl:2: verification_info.test_case_outputs: expected a non-empty array of JSON strings"),
    ]
    for row, want in cases:
        assert want in eval_error(tmp_path, [APPS_ROWS[0], row]), want
