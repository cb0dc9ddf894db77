"""Calibrated time limits end to end (docs/generated.md, *Calibrated time
limits*; issue 19): --time-floor S and --time-factor K give each generated
(or EvalPlus) test the limit max(S, K x the reference's time on its input),
at most --timeout. A correct but slow candidate is a timeout "slow: Nx the
reference"; one that never returns stays the wall clock's timeout. Every
candidate runs through execeval, inside the safety net."""
import json
import re
import subprocess

from conftest import EXECEVAL, with_isolation

# The reference is O(n) on lists of 3000 numbers (a few microseconds); the
# slow candidate O(n^2): 10n passes over the list, about 1 s here, several
# times the 0.2 s floor plus the supervisor's slack (x 1.1 + 100 ms) even
# on a fast quiet host (n passes were ~0.3 s, and 3n passes ~0.3 s on the
# 2026-12-05 VM: a quiet host judged the alarm-blocking candidate below
# within its limit both times).
SUM = {
    "task_id": "demo/sum", "entry_point": "total", "prompt": "def total(xs):\n",
    "tests": [{"kind": "assert", "code": "assert total([1, 2, 3]) == 6"}],
    "reference": "def total(xs):\n    return sum(xs)\n",
    "generate": "def generate(rng, n):\n"
                "    return [[[rng.randint(-9, 9) for _ in range(3000)]] for _ in range(n)]\n",
    "n_generated": 3,
}
FAST = "def total(xs):\n    return sum(xs)\n"
QUADRATIC = ("def total(xs):\n"
             "    s = 0\n"
             "    for i in range(10 * len(xs)):\n"
             "        s = 0\n"
             "        for x in xs:\n"
             "            s += x\n"
             "    return s\n")
LOOP = "def total(xs):\n    while True:\n        pass\n"
CALIBRATED = ["--time-floor", "0.2", "--time-factor", "4", "--timeout", "10"]
SLOW = re.compile(r"^slow: (over )?\d+(\.\d)?x the reference")


def generated(record):
    return [t for t in record["tests"] if t["tier"] == "property"]


def test_a_slow_but_correct_candidate_is_a_slow_timeout(run):
    r = run(QUADRATIC, task=SUM, args=CALIBRATED)
    assert r.record["status"] == "timeout", (r.stderr, r.record)
    assert re.match(r"^slow: \d+x the reference$", r.record["detail"]), r.record["detail"]
    gen = generated(r.record)
    assert gen[0]["status"] == "timeout" and gen[0]["message"] == r.record["detail"], gen
    assert all(t["status"] == "timeout" and SLOW.match(t["message"]) for t in gen), gen
    # the later ones are stopped at their limit: the run stays well inside --timeout
    assert all("stopped at its limit" in t["message"] for t in gen[1:]), gen
    assert r.record["tests"][0]["status"] == "pass", "the fixed test has no calibrated limit"
    assert r.record["calibration"] == {"floor_s": 0.2, "factor": 4.0}
    for t in gen:
        assert t["limit_ms"] == max(200.0, -(-4 * t["reference_ms"] // 1)), t
        assert 0 < t["reference_ms"] < 50, t


def test_an_infinite_loop_stays_the_wall_clocks_timeout(run):
    r = run(LOOP, task=SUM, args=CALIBRATED[:-1] + ["2"])
    # "timeout", or on a starved host "timeout (starved: ...)": never "slow"
    assert r.record["status"] == "timeout" and r.record["detail"].startswith("timeout"), r.record


def test_a_fast_candidate_passes_under_calibration(run):
    r = run(FAST, task=SUM, args=CALIBRATED)
    assert r.code == 0 and r.record["status"] == "pass", r.record
    assert all(t["limit_ms"] >= 200 for t in generated(r.record))


def test_off_by_default_changes_nothing(run):
    r = run(QUADRATIC, task=SUM, args=["--timeout", "10"])
    assert r.code == 0 and r.record["status"] == "pass", r.record
    assert "calibration" not in r.record
    assert all("limit_ms" not in t and "reference_ms" not in t for t in r.record["tests"]), r.record


# Wrong on the inputs whose sum is even: which of the seed's inputs those are
# is fixed by the seed, and no verdict here is near a limit (a slow
# candidate's would move with the host's load, the reference's time too).
EVEN_WRONG = "def total(xs):\n    s = sum(xs)\n    return s if s % 2 else s + 1\n"


def test_the_same_seed_gives_the_same_verdicts(run):
    def verdicts(seed):
        r = run(EVEN_WRONG, task=dict(SUM, n_generated=12), args=CALIBRATED + ["--seed", str(seed)])
        assert r.record["calibration"] == {"floor_s": 0.2, "factor": 4.0}, r.record
        return [t["status"] for t in generated(r.record)]
    a = verdicts(3)
    assert a == verdicts(3), a
    assert "fail" in a and "pass" in a, a  # 12 random sums: both parities (p < 0.001 otherwise)
    assert any(verdicts(seed) != a for seed in (4, 5, 6)), "another seed, other inputs"


# A candidate that blocks and ignores SIGALRM, disarms every timer, and
# makes the harness report its calls as instant: only the supervisor's own
# clock is left, and it still sees each call over its limit.
HOSTILE = ("import signal, sys\n"
           "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
           "signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
           + QUADRATIC.replace("    s = 0\n    for i",
                               "    signal.setitimer(signal.ITIMER_REAL, 0)\n"
                               "    signal.signal = lambda *a: None\n"
                               "    try:\n"
                               "        sys._getframe(1).f_globals['_ms'] = lambda start: 0.0\n"
                               "    except Exception:\n"
                               "        pass\n"
                               "    s = 0\n    for i", 1))


def test_a_candidate_that_blocks_the_alarm_is_still_slow(run):
    r = run(HOSTILE, task=SUM, args=CALIBRATED)
    assert r.record["status"] == "timeout", (r.stderr, r.record)
    assert SLOW.match(r.record["detail"]), r.record["detail"]
    gen = generated(r.record)
    assert gen[0]["duration_ms"] == 0.0, "the forged duration reached the record: only the supervisor saw"
    assert all(t["status"] == "timeout" and SLOW.match(t["message"]) for t in gen), gen


def test_hidden_generated_tests_get_their_limits_after_the_gate(run):
    r = run(QUADRATIC, task=SUM, args=CALIBRATED + ["--hidden-fraction", "1"])
    gen = generated(r.record)
    assert all(t["visibility"] == "hidden" and "limit_ms" in t for t in gen), gen
    assert r.record["status"] == "timeout" and SLOW.match(r.record["detail"]), r.record


def test_only_one_flag_takes_evalplus_defaults_for_the_other(run):
    r = run(FAST, task=SUM, args=["--time-factor", "8"])
    assert r.record["calibration"] == {"floor_s": 1.0, "factor": 8.0}, r.record
    r = run(FAST, task=SUM, args=["--time-floor", "0.5"])
    assert r.record["calibration"] == {"floor_s": 0.5, "factor": 4.0}, r.record


def test_the_limit_is_capped_by_the_timeout(run):
    r = run(FAST, task=SUM, args=["--time-floor", "20", "--timeout", "2"])
    assert all(t["limit_ms"] == 2000 for t in generated(r.record)), r.record


def test_bad_values_are_usage_errors(run):
    for args in (["--time-factor", "0.5"], ["--time-floor", "0"], ["--time-floor", "x"]):
        r = run(FAST, task=SUM, args=args)
        assert r.code == 2 and args[0] in r.stderr, (args, r.stderr)


HE_PLUS_SUM = {"task_id": "HumanEval/sum", "prompt": "def total(xs: list):\n", "entry_point": "total",
               "canonical_solution": "    return sum(xs)\n",
               "base_input": [[[1, 2, 3]]], "plus_input": [[list(range(3000))], [list(range(-3000, 0))]],
               "atol": 0}


def test_evalplus_rows_are_calibrated_too_and_the_summary_says_how(tmp_path):
    tf, sf, out, summary = (tmp_path / n for n in ("t.jsonl", "s.jsonl", "r.jsonl", "s.json"))
    tf.write_text(json.dumps(HE_PLUS_SUM) + "\n")
    sf.write_text("".join(json.dumps({"task_id": "HumanEval/sum", "solution": s}) + "\n" for s in (FAST, QUADRATIC)))
    p = subprocess.run(with_isolation([EXECEVAL, "eval", "--tasks", str(tf), "--samples", str(sf), "-o", str(out),
                                       "-q", "-k", "1", "--summary-json", str(summary), "--no-history",
                                       *CALIBRATED]),
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "calibrated limits: max(0.2 s, 4 x the reference)" in p.stdout, p.stdout
    recs = sorted((json.loads(line) for line in out.read_text().splitlines()), key=lambda r: r["sample"])
    assert [r["status"] for r in recs] == ["pass", "timeout"], recs
    assert SLOW.match(recs[1]["detail"]), recs[1]
    assert all("limit_ms" in t for r in recs for t in r["tests"]), recs
    s = json.loads(summary.read_text())
    assert s["generated"]["calibration"] == {"floor_s": 0.2, "factor": 4.0}, s["generated"]
    run_json = json.loads((tmp_path / "r.jsonl.run.json").read_text())
    assert run_json["options"]["calibration"] == {"floor_s": 0.2, "factor": 4.0}, run_json


# The reference's first call on each input sleeps (a cold cache, a
# neighbour's burst): its time is the fastest of its 3 warm calls, not
# that one (docs/generated.md, *What is measured*).
FIRST_CALL_SLOW = dict(SUM, reference="import time\n_calls = [0]\n\n\ndef total(xs):\n"
                       "    _calls[0] += 1\n    if _calls[0] % 3 == 1:\n        time.sleep(0.3)\n"
                       "    return sum(xs)\n")


def test_the_references_time_is_the_fastest_of_three_calls_per_input(run):
    r = run(FAST, task=FIRST_CALL_SLOW, args=CALIBRATED)
    assert r.code == 0, (r.stderr, r.record)
    gen = generated(r.record)
    assert len(gen) == 3 and all(0 < t["reference_ms"] < 100 for t in gen), gen
