"""Generated tests end to end (docs/generated.md, issue 19): a native task's
`reference` and `generate` give seeded inputs whose expected values come
from the reference, run in a sandbox before any candidate; the candidate's
results are judged by the supervisor. Every candidate, reference and
generator runs through execeval, inside the safety net."""
import json
import subprocess
from pathlib import Path

import pytest

from conftest import EXECEVAL, with_isolation
from test_eval import HUMANEVAL, needs_humaneval

# A sorting task whose fixed test is the docstring's example.
SORT = {
    "task_id": "demo/sort", "entry_point": "f", "prompt": "def f(xs):\n",
    "tests": [{"kind": "assert", "code": "assert f([3, 1, 2]) == [1, 2, 3]"}],
    "reference": "def f(xs):\n    return sorted(xs)\n",
    "generate": "def generate(rng, n):\n"
                "    return [[[rng.randint(-9, 9) for _ in range(rng.randint(0, 6))]] for _ in range(n)]\n",
    "n_generated": 10,
}
GOOD = "def f(xs):\n    return sorted(xs)\n"
HARD_CODED = "def f(xs):\n    if xs == [3, 1, 2]:\n        return [1, 2, 3]\n    return xs\n"


def generated(record):
    return [t for t in record["tests"] if t["tier"] == "property"]


def test_a_hard_coded_answer_passes_the_fixed_test_and_fails_generated_ones(run):
    r = run(HARD_CODED, task=SORT, args=["--seed", "1"])
    assert r.code == 1, (r.stderr, r.record)
    assert r.record["tests"][0]["status"] == "pass" and r.record["tests"][0]["tier"] == "canonical"
    gen = generated(r.record)
    assert len(gen) == 10 and any(t["status"] == "fail" for t in gen), r.record
    assert all(t["kind"] == "call" and t["judged_by"] == "supervisor" for t in gen), gen
    assert r.record["seed"] == 1
    assert r.record["generated"] == {"asked": 10, "tests": 10, "dropped": 0, "hidden": 0}
    assert r.record["tiers"]["canonical"] == {"passed": 1, "total": 1}


def test_the_reference_itself_passes_everything(run):
    r = run(GOOD, task=SORT, args=["--seed", "1"])
    assert r.code == 0 and r.record["passed"] == 11, (r.stderr, r.record)


def test_same_seed_same_inputs_and_verdicts_other_seed_other_inputs(run):
    def verdicts(seed):
        r = run(HARD_CODED, task=SORT, args=["--seed", str(seed)])
        return [(t["status"], t["message"]) for t in r.record["tests"]]
    a, b = verdicts(5), verdicts(5)
    assert a == b
    assert any(verdicts(s) != a for s in (6, 7, 8)), "other seeds draw other inputs"


def test_seed_random_draws_one_and_records_it(run):
    seeds = {run(GOOD, task=SORT, args=["--seed", "random"]).record["seed"] for _ in range(2)}
    assert len(seeds) == 2 and all(isinstance(s, int) and 0 <= s < 2 ** 63 for s in seeds), seeds


def test_default_seed_is_0(run):
    assert run(GOOD, task=SORT).record["seed"] == 0


@pytest.mark.parametrize("bad", ["-1", "x", "18446744073709551616", ""])
def test_a_bad_seed_is_a_usage_error(run, bad):
    r = run(GOOD, task=SORT, args=["--seed", bad])
    assert r.code == 2 and "--seed" in r.stderr, r.stderr


def test_an_input_the_reference_raises_on_is_dropped_and_counted(run):
    task = dict(SORT, n_generated=30,
                reference="def f(xs):\n    if not xs:\n        raise ValueError('empty')\n    return sorted(xs)\n")
    r = run(GOOD, task=task, args=["--seed", "1"])
    g = r.record["generated"]
    assert g["dropped"] > 0 and g["tests"] + g["dropped"] == 30, g
    assert len(generated(r.record)) == g["tests"] and r.code == 0, r.record


def test_a_reference_failing_its_own_tests_is_the_tasks_error_before_any_candidate(run):
    task = dict(SORT, reference="def f(xs):\n    return list(xs)\n")
    r = run(GOOD, task=task)
    assert r.code == 2 and r.record is None, r.stdout
    assert "task demo/sort: the reference fails its own test 0: AssertionError" in r.stderr, r.stderr


@pytest.mark.parametrize("generate, why", [
    ("def generate(rng, n):\n    return [[object()]]\n", "generate: input 0: expected a list of plain values"),
    ("def generate(rng, n):\n    return 3\n", "generate failed"),
    ("def generate(rng, n):\n    raise RuntimeError('no')\n", "generate failed"),
    ("def generate(rng, n:\n", "generate failed: syntax_error"),
])
def test_a_broken_generator_is_the_tasks_error(run, generate, why):
    r = run(GOOD, task=dict(SORT, generate=generate))
    assert r.code == 2 and why in r.stderr, r.stderr


def test_hidden_fraction_hides_a_seeded_part(run):
    def hidden(seed):
        r = run(GOOD, task=SORT, args=["--seed", str(seed), "--hidden-fraction", "0.5"])
        assert r.record["generated"]["hidden"] == 5, r.record
        return [t["visibility"] for t in generated(r.record)]
    a = hidden(3)
    assert a.count("hidden") == 5 and hidden(3) == a
    assert run(GOOD, task=SORT, args=["--hidden-fraction", "1.5"]).code == 2


def test_float_tolerance_of_generated_tests(run):
    task = {"task_id": "f", "entry_point": "half",
            "tests": [{"kind": "assert", "code": "assert abs(half(1) - 0.5) < 1e-6"}],
            "reference": "def half(x):\n    return x / 2\n",
            "generate": "def generate(rng, n):\n    return [[rng.random()] for _ in range(n)]\n",
            "n_generated": 5}
    close = "def half(x):\n    return x / 2 + 1e-9\n"
    assert run(close, task=task).code == 1
    assert run(close, task=dict(task, generated_float_tol=1e-6)).code == 0


def test_tuples_and_sets_keep_their_type(run):
    task = {"task_id": "t", "entry_point": "f", "tests": [{"kind": "assert", "code": "assert f(1) == (1, {1})"}],
            "reference": "def f(x):\n    return (x, {x})\n",
            "generate": "def generate(rng, n):\n    return [(i,) for i in range(n)]\n", "n_generated": 3}
    assert run("def f(x):\n    return (x, {x})\n", task=task).code == 0
    r = run("def f(x):\n    return [x, {x}]\n", task=task)
    assert r.code == 1 and "expected (0, {0}), got [0, {0}]" in generated(r.record)[0]["message"], r.record


# ---------------------------------------------------------------------------
# HumanEval with hand-written generators for a handful of tasks (test data in
# data/humaneval_generators.jsonl, not the shipped data set; bench/differential
# reads it too). The fixed tests are the docstrings' examples.

# task_id -> (generate, the docstring's examples as (args, expected)).
GENERATORS = {r["task_id"]: (r["generate"], [(e["args"], e["expected"]) for e in r["examples"]])
              for r in map(json.loads, (Path(__file__).parent / "data" / "humaneval_generators.jsonl")
                           .read_text().splitlines())}


def humaneval_with_generators():
    rows = {}
    for line in HUMANEVAL.read_text().splitlines():
        row = json.loads(line)
        if row["task_id"] in GENERATORS:
            rows[row["task_id"]] = row
    tasks, samples = [], []
    for tid, (gen, examples) in GENERATORS.items():
        row, ep = rows[tid], rows[tid]["entry_point"]
        asserts = [{"kind": "assert", "code": "assert %s(*%r) == %r" % (ep, args, out)} for args, out in examples]
        tasks.append({"task_id": tid, "prompt": row["prompt"], "entry_point": ep, "tests": asserts,
                      "reference": row["prompt"] + row["canonical_solution"], "generate": gen,
                      "generated_float_tol": 1e-9})
        table = {repr(list(args)): out for args, out in examples}
        hard = "def %s(*args):\n    return %r.get(repr(list(args)))\n" % (ep, table)
        samples.append({"task_id": tid, "code": row["prompt"] + row["canonical_solution"], "model": "canonical"})
        samples.append({"task_id": tid, "code": hard, "model": "hard-coded"})
    return tasks, samples


@needs_humaneval
def test_humaneval_hard_coded_examples_fail_generated_tests_canonical_passes_for_20_seeds(tmp_path):
    tasks, samples = humaneval_with_generators()
    tf, sf = tmp_path / "tasks.jsonl", tmp_path / "samples.jsonl"
    tf.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    sf.write_text("".join(json.dumps(s) + "\n" for s in samples))
    for seed in range(20):
        out, summary = tmp_path / ("r%d.jsonl" % seed), tmp_path / ("s%d.json" % seed)
        p = subprocess.run(with_isolation([EXECEVAL, "eval", "--tasks", str(tf), "--samples", str(sf), "-o",
                                           str(out), "-q", "-j", "2", "-k", "1", "--seed", str(seed),
                                           "--summary-json", str(summary), "--no-history"]),
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        for rec in map(json.loads, out.read_text().splitlines()):
            fixed = [t for t in rec["tests"] if t["tier"] == "canonical"]
            gen = [t for t in rec["tests"] if t["tier"] == "property"]
            assert rec["seed"] == seed and len(gen) == 20 and all(t["status"] == "pass" for t in fixed), rec
            if rec["model"] == "canonical":
                assert rec["status"] == "pass", (seed, rec)
            else:
                assert rec["status"] == "assertion_fail", (seed, rec["task_id"])
                assert any(t["status"] == "fail" for t in gen)
        s = json.loads(summary.read_text())
        g = s["generated"]
        assert g["seed"] == seed and g["tasks"] == 5 and g["tests"] == 100 and g["dropped"] == 0, g
        # two models: each its own canonical-tier pass@1, none pooled (issue 35)
        assert g["pass_at_k_canonical"] == {}, g
        for model in ("canonical", "hard-coded"):
            assert s["models"][model]["generated"]["pass_at_k_canonical"]["1"] == 1.0, s["models"][model]
        assert s["models"]["canonical"]["pass_at_k"]["1"] == 1.0 and s["models"]["hard-coded"]["pass_at_k"]["1"] == 0


# ---------------------------------------------------------------------------
# EvalPlus's rows (HumanEval+, MBPP+), hand-made in their format, not copied
# from the data sets: expected outputs come from the reference.

HE_PLUS = {"task_id": "HumanEval/demo",
           "prompt": "def add(x: int, y: int):\n    \"\"\"Add two numbers x and y\n"
                     "    >>> add(2, 3)\n    5\n    \"\"\"\n",
           "entry_point": "add", "canonical_solution": "    return x + y\n",
           "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
           "contract": "\n    assert type(x) is int\n",
           "base_input": [[2, 3], [5, 7]], "plus_input": [[0, 0], [-1, 1], [1000000000000, 1]], "atol": 0}
MBPP_PLUS = {"task_id": "Mbpp/2",
             "prompt": "\"\"\"\nWrite a function to find the shared elements from the given two lists.\n"
                       "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))\n\"\"\"\n",
             "code": "def similar_elements(test_tup1, test_tup2):\n  return tuple(set(test_tup1) & set(test_tup2))\n",
             "source_file": "Benchmark Questions Verification V2.ipynb", "test_imports": [],
             "test_list": ["assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))"],
             "test": "", "entry_point": "similar_elements",
             "canonical_solution": "\ndef similar_elements(test_tup1, test_tup2):\n"
                                   "  return tuple(set(test_tup1) & set(test_tup2))\n",
             "base_input": [[[3, 4, 5, 6], [5, 7, 4, 10]]], "plus_input": [[[1, 2], [3]], [[7], [7, 8]]], "atol": 0,
             "assertion": "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))"}
MEAN_PLUS = {"task_id": "HumanEval/mean", "prompt": "def mean(xs: list):\n", "entry_point": "mean",
             "canonical_solution": "    return sum(xs) / len(xs)\n",
             "base_input": [[[1.0, 2.0]]], "plus_input": [[[0.1, 0.2, 0.3]]], "atol": 1e-3}


def evalplus_eval(tmp_path, samples, tasks=(HE_PLUS, MBPP_PLUS)):
    tf, sf, out, summary = (tmp_path / n for n in ("t.jsonl", "s.jsonl", "r.jsonl", "s.json"))
    tf.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    sf.write_text("".join(json.dumps(s) + "\n" for s in samples))
    p = subprocess.run(with_isolation([EXECEVAL, "eval", "--tasks", str(tf), "--samples", str(sf), "-o", str(out),
                                       "-q", "-k", "1", "--summary-json", str(summary), "--no-history"]),
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return [json.loads(line) for line in out.read_text().splitlines()], json.loads(summary.read_text())


def test_evalplus_rows_base_and_plus_reported_apart(tmp_path):
    recs, summary = evalplus_eval(tmp_path, [
        {"task_id": "HumanEval/demo", "solution": "def add(x, y):\n    return x + y\n"},
        {"task_id": "HumanEval/demo", "solution": "def add(x, y):\n    return abs(x) + abs(y)\n"},
        {"task_id": "Mbpp/2", "solution": "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n"},
        {"task_id": "Mbpp/2", "solution": "def similar_elements(a, b):\n    return (4, 5)\n"},
    ])
    status = [(r["task_id"], r["status"]) for r in recs]
    assert sorted(status) == sorted([("HumanEval/demo", "pass"), ("HumanEval/demo", "assertion_fail"),
                                     ("Mbpp/2", "pass"), ("Mbpp/2", "assertion_fail")]), status
    for r in recs:
        assert r["tiers"]["canonical"]["passed"] == r["tiers"]["canonical"]["total"], r
        assert "seed" not in r and r["generated"]["dropped"] == 0, r
        assert all(t["judged_by"] == "supervisor" and t["kind"] == "call" for t in r["tests"])
    he = next(r for r in recs if r["task_id"] == "HumanEval/demo")
    assert he["tiers"] == {"canonical": {"passed": 2, "total": 2}, "property": {"passed": 3, "total": 3}}
    assert summary["pass_at_k"]["1"] == 0.5, "base + plus"
    assert summary["generated"]["pass_at_k_canonical"]["1"] == 1.0, "base only"
    assert summary["generated"]["tests"] == 8 and summary["generated"]["tasks"] == 2


def test_evalplus_a_list_is_not_the_references_tuple(tmp_path):
    recs, _ = evalplus_eval(tmp_path, [
        {"task_id": "Mbpp/2", "solution": "def similar_elements(a, b):\n    return list(set(a) & set(b))\n"}],
        tasks=[MBPP_PLUS])
    assert recs[0]["status"] == "assertion_fail" and "expected (" in recs[0]["tests"][0]["message"], recs[0]


def test_evalplus_atol_is_the_float_tolerance(tmp_path):
    near = "def mean(xs):\n    return sum(xs) / len(xs) + 1e-4\n"
    far = "def mean(xs):\n    return sum(xs) / len(xs) + 1e-2\n"
    recs, _ = evalplus_eval(tmp_path, [{"task_id": "HumanEval/mean", "solution": near},
                                       {"task_id": "HumanEval/mean", "solution": far}], tasks=[MEAN_PLUS])
    assert [r["status"] for r in sorted(recs, key=lambda r: r["sample"])] == ["pass", "assertion_fail"], recs


FACT_PLUS = {"task_id": "HumanEval/fact", "prompt": "def fact(n: int):\n", "entry_point": "fact",
             "canonical_solution": "    r = 1\n    for i in range(2, n + 1):\n        r *= i\n    return r\n",
             "base_input": [[1], [2], [3], [4]], "atol": 0}
AREA_PLUS = {"task_id": "HumanEval/area", "prompt": "def area(a: float, b: float):\n", "entry_point": "area",
             "canonical_solution": "    return -1 if a <= 0 else round(a * b, 2)\n",
             "base_input": [[0, 1], [1.5, 2.0]], "plus_input": [[2.25, 3.0]], "atol": 1e-6}


def test_evalplus_a_float_near_an_int_fails_as_evalplus_fails_it(tmp_path):
    gamma = "import math\ndef fact(n):\n    return math.gamma(n + 1) * (1 + 4e-7)\n"
    recs, _ = evalplus_eval(tmp_path, [
        {"task_id": "HumanEval/fact", "solution": gamma},
        {"task_id": "HumanEval/fact", "solution": "import math\ndef fact(n):\n    return math.factorial(n)\n"},
        # EvalPlus's `out == exp` first: 24.0 == 24 passes there, and here
        {"task_id": "HumanEval/fact", "solution": "import math\ndef fact(n):\n    return float(math.factorial(n))\n"},
    ], tasks=[FACT_PLUS])
    recs.sort(key=lambda r: r["sample"])
    assert [r["status"] for r in recs] == ["assertion_fail", "pass", "pass"], recs
    assert recs[0]["detail"] == "test 0 failed: expected 1, got 1.0000004", recs[0]
    assert [t["message"] for t in recs[0]["tests"]] == [
        "expected 1, got 1.0000004", "expected 2, got 2.0000008", "expected 6, got 6.0000024",
        "expected 24, got 24.0000096"], recs[0]


def test_evalplus_with_an_atol_the_type_is_the_references(tmp_path):
    honest = "def area(a, b):\n    return -1 if a <= 0 else round(a * b, 2) + 1e-7\n"
    as_float = "def area(a, b):\n    return -1.0000001 if a <= 0 else round(a * b, 2)\n"
    exact_float = "def area(a, b):\n    return -1.0 if a <= 0 else round(a * b, 2)\n"
    recs, _ = evalplus_eval(tmp_path, [{"task_id": "HumanEval/area", "solution": s}
                                       for s in (honest, as_float, exact_float)], tasks=[AREA_PLUS])
    recs.sort(key=lambda r: r["sample"])
    assert [r["status"] for r in recs] == ["pass", "assertion_fail", "pass"], recs
    assert recs[1]["tests"][0]["message"] == "expected -1, got -1.0000001 (float, not int)", recs[1]


def test_generated_tests_compare_as_evalplus(run):
    task = {"task_id": "fact", "entry_point": "fact", "tests": [{"kind": "assert", "code": "assert fact(3) == 6"}],
            "reference": "import math\ndef fact(n):\n    return math.factorial(n)\n",
            "generate": "def generate(rng, n):\n    return [[i] for i in range(1, n + 1)]\n",
            "n_generated": 4, "generated_float_tol": 1e-6}
    r = run("import math\ndef fact(n):\n    return round(math.gamma(n + 1)) * (1 + 1e-9)\n", task=task)
    assert r.record["status"] == "assertion_fail", r.record
    assert [t["message"] for t in generated(r.record)] == [
        "expected %d, got %r (float, not int)" % (f, f * (1 + 1e-9)) for f in (1, 2, 6, 24)], r.record
    assert run("import math\ndef fact(n):\n    return math.factorial(n)\n", task=task).code == 0
    assert run("import math\ndef fact(n):\n    return float(math.factorial(n))\n", task=task).code == 0


def test_evalplus_row_errors_name_the_field(run):
    r = run("x = 1\n", task=dict(HE_PLUS, base_input=[1]))
    assert r.code == 2 and "base_input[0]: expected an array of arguments" in r.stderr, r.stderr
    r = run("x = 1\n", task=dict(HE_PLUS, atol=-1))
    assert r.code == 2 and "atol: expected a number >= 0" in r.stderr, r.stderr


def test_resume_keeps_the_seed(tmp_path):
    tf, sf, out = tmp_path / "t.jsonl", tmp_path / "s.jsonl", tmp_path / "r.jsonl"
    tf.write_text(json.dumps(SORT) + "\n")
    sf.write_text(json.dumps({"task_id": "demo/sort", "code": GOOD}) + "\n")

    def ev(*extra):
        return subprocess.run(with_isolation([EXECEVAL, "eval", "--tasks", str(tf), "--samples", str(sf), "-o",
                                              str(out), "-q", "--no-history", *extra]),
                              capture_output=True, text=True, timeout=600)
    assert ev("--seed", "5").returncode == 0
    p = ev("--seed", "6", "--resume")
    assert p.returncode == 2 and "options.seed was 5, now 6" in p.stderr, p.stderr
    assert ev("--seed", "5", "--resume").returncode == 0
