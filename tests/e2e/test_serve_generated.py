"""Generated tests under `execeval serve` (issue 19; docs/api.md,
"Generated tests"): a task with `reference` + `generate`, or an EvalPlus
row, is judged on seeded inputs whose expected values come from the
reference, run in sandboxes through the server's dispatcher before the
request's candidates; one reference run per (task, seed) key, shared by a
batch's runs and by concurrent requests (the /metrics counters say so).
Every candidate, reference and generator runs in the server's sandboxes,
inside the safety net."""
import json
import re
import subprocess
import threading

import pytest

from conftest import EXECEVAL, execeval_env, with_isolation
from serve_client import serve  # noqa: F401  (the fixture)

# The tasks, candidates and reading of eval's own tests, so the two compare.
from test_calibrate import QUADRATIC, SUM
from test_generated import GOOD, HARD_CODED, SORT, generated

HE_PLUS = {"task_id": "HumanEval/demo",
           "prompt": "def add(x: int, y: int):\n    \"\"\"Add two numbers x and y\n"
                     "    >>> add(2, 3)\n    5\n    \"\"\"\n",
           "entry_point": "add", "canonical_solution": "    return x + y\n",
           "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
           "base_input": [[2, 3], [5, 7]], "plus_input": [[0, 0], [-1, 1], [1000000000000, 1]], "atol": 0}


def verdicts(record):
    return [(t["kind"], t["tier"], t["visibility"], t["status"], t["message"]) for t in record["tests"]]


def refs(server):
    m = server.metrics()
    return {"runs": m.value("execeval_reference_runs_total"),
            "sandboxes": m.value("execeval_reference_sandboxes_total"),
            "hit": m.value("execeval_reference_cache_lookups_total", outcome="hit"),
            "join": m.value("execeval_reference_cache_lookups_total", outcome="join"),
            "miss": m.value("execeval_reference_cache_lookups_total", outcome="miss"),
            "evaluations": m.total("execeval_evaluations_total")}


def eval_records(tmp_path, task, programs, *args):
    """`execeval eval` on the same task and programs: its records, by sample."""
    tf, sf, out = tmp_path / "t.jsonl", tmp_path / "s.jsonl", tmp_path / "r.jsonl"
    tf.write_text(json.dumps(task) + "\n")
    sf.write_text("".join(json.dumps({"task_id": task["task_id"], "code": p}) + "\n" for p in programs))
    p = subprocess.run(with_isolation([EXECEVAL, "eval", "--tasks", str(tf), "--samples", str(sf), "-o", str(out),
                                       "-q", "-j", "2", "-k", "1", "--no-history", *args]),
                       capture_output=True, text=True, timeout=600, env=execeval_env())
    assert p.returncode == 0, p.stderr
    return sorted((json.loads(line) for line in out.read_text().splitlines()), key=lambda r: r["sample"])


def test_same_seed_same_inputs_and_verdicts_as_eval(serve, tmp_path):
    s = serve()
    want = eval_records(tmp_path, SORT, [HARD_CODED, GOOD], "--seed", "5")
    for program, rec in zip([HARD_CODED, GOOD], want):
        a = s.run({"task": SORT, "candidate": program, "seed": 5})
        assert a.status == 200, a
        got = a.json
        assert got["seed"] == 5 and got["generated"] == rec["generated"], (got, rec)
        assert verdicts(got) == verdicts(rec), (got["tests"], rec["tests"])
        assert got["status"] == rec["status"] and got["passed"] == rec["passed"]
    other = s.run({"task": SORT, "candidate": HARD_CODED, "seed": 6}).json
    assert other["seed"] == 6 and verdicts(other) != verdicts(want[0]), "another seed draws other inputs"


def test_a_hard_coding_candidate_fails_the_generated_tests_the_reference_passes(serve):
    s = serve()
    a = s.run({"task": SORT, "candidate": HARD_CODED, "seed": 1})
    assert a.status == 200 and a.json["status"] == "assertion_fail", a
    rec = a.json
    assert rec["tests"][0]["status"] == "pass" and rec["tests"][0]["tier"] == "canonical"
    gen = generated(rec)
    assert len(gen) == 10 and any(t["status"] == "fail" for t in gen), rec
    assert all(t["kind"] == "call" and t["judged_by"] == "supervisor" for t in gen), gen
    assert rec["generated"] == {"asked": 10, "tests": 10, "dropped": 0, "hidden": 0}
    good = s.run({"task": SORT, "candidate": GOOD, "seed": 1}).json
    assert good["status"] == "pass" and good["passed"] == 11, good


def test_a_batch_of_16_runs_makes_one_reference_run_and_a_second_batch_none(serve):
    s = serve()
    before = refs(s)
    runs = [{"candidate": HARD_CODED if i % 2 else GOOD, "sample": i} for i in range(16)]
    a = s.post("/v1/batch", {"task": SORT, "seed": 9, "runs": runs})
    assert a.status == 200, a
    recs = a.json["records"]
    assert len(recs) == 16 and all(r["seed"] == 9 and len(generated(r)) == 10 for r in recs), recs
    assert [r["status"] for r in recs] == ["pass", "assertion_fail"] * 8
    # every run was judged on the same inputs
    assert len({json.dumps(verdicts(r)) for r in recs[0::2]}) == 1
    after = refs(s)
    assert after["runs"] - before["runs"] == 1, (before, after)
    assert after["miss"] - before["miss"] == 1 and after["sandboxes"] - before["sandboxes"] == 3, (before, after)
    assert after["evaluations"] - before["evaluations"] == 16
    a = s.post("/v1/batch", {"task": SORT, "seed": 9, "runs": runs})
    assert a.status == 200 and [r["status"] for r in a.json["records"]] == ["pass", "assertion_fail"] * 8
    again = refs(s)
    assert again["runs"] == after["runs"] and again["hit"] - after["hit"] == 1, (after, again)


def test_8_concurrent_requests_of_one_key_share_one_reference_run(serve):
    s = serve("--reference-cache", "0")  # nothing kept: only the run in flight is shared
    task = dict(SORT, generate=SORT["generate"].replace("return", "import time; time.sleep(1.5)\n    return"))
    before = refs(s)
    answers = [None] * 8

    def post(i):
        answers[i] = s.run({"task": task, "candidate": GOOD, "seed": 4, "sample": i})

    threads = [threading.Thread(target=post, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert all(a is not None and a.status == 200 and a.json["status"] == "pass" for a in answers), answers
    assert len({json.dumps(verdicts(a.json)) for a in answers}) == 1
    after = refs(s)
    assert after["runs"] - before["runs"] == 1, (before, after)
    assert after["miss"] - before["miss"] == 1 and after["join"] - before["join"] == 7, (before, after)
    # with nothing kept, the next request runs the reference again
    assert s.run({"task": task, "candidate": GOOD, "seed": 4}).status == 200
    assert refs(s)["runs"] - after["runs"] == 1


def test_a_runs_own_seed_in_a_batch_makes_its_own_inputs(serve):
    s = serve()
    a = s.post("/v1/batch", {"task": SORT, "seed": 1, "runs": [
        {"candidate": HARD_CODED}, {"candidate": HARD_CODED, "seed": 2}, {"candidate": HARD_CODED}]})
    assert a.status == 200, a
    recs = a.json["records"]
    assert [r["seed"] for r in recs] == [1, 2, 1]
    assert verdicts(recs[0]) == verdicts(recs[2]) != verdicts(recs[1])
    assert refs(s)["runs"] == 2


def test_seed_random_is_drawn_and_recorded(serve):
    s = serve()
    seeds = {s.run({"task": SORT, "candidate": GOOD, "seed": "random"}).json["seed"] for _ in range(2)}
    assert len(seeds) == 2 and all(isinstance(x, int) and 0 <= x < 2 ** 63 for x in seeds), seeds
    a = s.post("/v1/batch", {"task": SORT, "seed": "random", "runs": [{"candidate": GOOD}] * 4})
    assert len({r["seed"] for r in a.json["records"]}) == 1, "a batch's random seed is drawn once"
    assert s.run({"task": SORT, "candidate": GOOD}).json["seed"] == 0, "the server's default seed"


def test_the_servers_seed_flag_is_the_default(serve):
    s = serve("--seed", "7", "--hidden-fraction", "0.3")
    rec = s.run({"task": SORT, "candidate": GOOD}).json
    assert rec["seed"] == 7 and rec["generated"]["hidden"] == 3, rec
    assert s.run({"task": SORT, "candidate": GOOD, "seed": 8}).json["seed"] == 8


def test_hidden_fraction_hides_the_same_seeded_count_as_eval(serve, tmp_path):
    s = serve()
    rec = s.run({"task": SORT, "candidate": GOOD, "seed": 3, "hidden_fraction": 0.5}).json
    assert rec["generated"]["hidden"] == 5, rec
    vis = [t["visibility"] for t in generated(rec)]
    assert vis.count("hidden") == 5
    want = eval_records(tmp_path, SORT, [GOOD], "--seed", "3", "--hidden-fraction", "0.5")[0]
    assert vis == [t["visibility"] for t in generated(want)]


def test_time_factor_gives_slow_nx_the_reference_as_eval_does(serve):
    s = serve("--timeout", "10")
    a = s.run({"task": SUM, "candidate": QUADRATIC, "time_floor": 0.2, "time_factor": 4,
               "limits": {"timeout_s": 10}})
    assert a.status == 200, a
    rec = a.json
    assert rec["status"] == "timeout" and re.match(r"^slow: \d+x the reference$", rec["detail"]), rec
    assert rec["calibration"] == {"floor_s": 0.2, "factor": 4.0}, rec
    assert all("limit_ms" in t and "reference_ms" in t for t in generated(rec)), rec
    fast = s.run({"task": SUM, "candidate": SUM["reference"], "time_floor": 0.2, "time_factor": 4}).json
    assert fast["status"] == "pass", fast
    plain = s.run({"task": SUM, "candidate": SUM["reference"]}).json
    assert "calibration" not in plain, "off unless asked"


def test_an_evalplus_row_is_judged_on_its_inputs(serve):
    s = serve()
    rec = s.run({"task": HE_PLUS, "completion": "    return x + y\n"}).json
    assert rec["status"] == "pass" and rec["generated"]["tests"] == 5, rec
    assert "seed" not in rec, "given inputs owe nothing to a seed"
    bad = s.run({"task": HE_PLUS, "completion": "    return 5 if (x, y) == (2, 3) else 12\n"}).json
    assert bad["status"] == "assertion_fail", bad


def test_a_reference_failing_its_own_test_is_a_422_before_any_candidate(serve):
    s = serve()
    before = refs(s)
    a = s.run({"task": dict(SORT, reference="def f(xs):\n    return list(xs)\n"), "candidate": GOOD})
    assert a.status == 422 and a.json["field"] == "task.reference", a
    assert "task demo/sort: the reference fails its own test 0: AssertionError" in a.json["error"], a
    a = s.batch([{"task": SORT, "candidate": GOOD},
                 {"task": dict(SORT, task_id="b", reference="def f(xs):\n    return xs\n"), "candidate": GOOD}])
    assert a.status == 422 and a.json["field"] == "runs[1].task.reference", a
    assert refs(s)["evaluations"] == before["evaluations"], "no candidate ran"


@pytest.mark.parametrize("generate, why", [
    ("def generate(rng, n):\n    return [[object()]]\n", "generate: input 0: expected a list of plain values"),
    ("def generate(rng, n):\n    raise RuntimeError('no')\n", "generate failed"),
    ("def generate(rng, n):\n    return [[1]] * (n + 1)\n", "more than n_generated"),
])
def test_a_broken_generator_is_a_422_naming_task_generate(serve, generate, why):
    s = serve()
    a = s.post("/v1/batch", {"task": dict(SORT, generate=generate), "runs": [{"candidate": GOOD}] * 3})
    assert a.status == 422 and a.json["field"] == "task.generate" and why in a.json["error"], a
    assert refs(s)["evaluations"] == 0


@pytest.mark.parametrize("extra, field", [
    ({"seed": -1}, "seed"), ({"seed": "x"}, "seed"), ({"seed": 1.5}, "seed"),
    ({"seed": None}, "seed"), ({"hidden_fraction": 1.5}, "hidden_fraction"),
    ({"hidden_fraction": "0.5"}, "hidden_fraction"), ({"time_factor": 0.5}, "time_factor"),
    ({"time_floor": 0}, "time_floor"), ({"time_floor": 5}, "time_floor"),
])
def test_bad_generated_test_fields_are_400s_naming_them(serve, extra, field):
    s = serve("--timeout", "3")
    a = s.run(dict({"task": SORT, "candidate": GOOD}, **extra))
    assert a.status == 400 and a.json["field"] == field, a
    a = s.post("/v1/batch", {"task": SORT, "runs": [{"candidate": GOOD}, dict({"candidate": GOOD}, **extra)]})
    assert a.status == 400 and a.json["field"] == "runs[1]." + field, a


def test_generated_tests_count_in_the_servers_test_bounds(serve):
    s = serve("--max-tests-per-task", "50")
    a = s.run({"task": dict(SORT, n_generated=60), "candidate": GOOD})
    assert a.status == 413 and a.json["field"] == "task.tests", a


def test_the_references_time_is_the_fastest_of_three_calls_per_input(serve):
    s = serve("--timeout", "10")
    task = dict(SUM, reference="import time\n_calls = [0]\n\n\ndef total(xs):\n"
                "    _calls[0] += 1\n    if _calls[0] % 3 == 1:\n        time.sleep(0.3)\n"
                "    return sum(xs)\n")
    rec = s.run({"task": task, "candidate": SUM["reference"], "time_factor": 4, "limits": {"timeout_s": 10}}).json
    gen = generated(rec)
    assert rec["status"] == "pass" and len(gen) == 3 and all(0 < t["reference_ms"] < 100 for t in gen), rec
    untimed = s.run({"task": task, "candidate": SUM["reference"], "limits": {"timeout_s": 10}}).json
    assert untimed["status"] == "pass" and refs(s)["runs"] == 2, "timed results are their own key"


def test_get_reward_a_grpo_group_of_one_label_shares_one_reference_run(serve):
    s = serve("--seed", "3")
    prompt = "Sort the list.\n"
    answers = ["```python\n%s```" % (GOOD if i % 2 == 0 else HARD_CODED) for i in range(4)]
    a = s.post("/get_reward", {"query": [prompt + x for x in answers], "prompts": [prompt] * 4,
                               "labels": [json.dumps(SORT)] * 4, "records": True})
    assert a.status == 200, a
    assert a.json["rewards"] == [1.0, -1.0, 1.0, -1.0], a.json
    assert all(r["seed"] == 3 and len(generated(r)) == 10 for r in a.json["records"])
    assert refs(s)["runs"] == 1
    bad = s.post("/get_reward", {"query": ["x"], "labels": [dict(SORT, reference="def f(xs):\n    return xs\n")]})
    assert bad.status == 422 and bad.json["field"] == "labels[0].reference", bad
