"""The separate judge on wrong candidates (issue 17: "the canonical
solutions plus two perturbed variants of each"): a correct solution says
little about the channel, since every value that crosses it is the right
one. Each data set's reference is wrapped twice, deterministically:

  off_by_one  every result altered, its type kept (a number + 1, a bool
              negated, a string or sequence one element shorter, a dict one
              key fewer), or None for what has no such change: the tests'
              comparisons must fail in the judge exactly as inline;
  raises_3rd  every third call raises ValueError, the others right: an
              exception crossing the channel, and the candidate's own state
              (the counter) kept between the calls of one test run.

The same harness job runs inline (drive.py) and split (relay.py, the
supervisor's rules in Python); each test's status must agree. A subset in make test (every 16th task); all behind
EXECEVAL_PARITY=1 (a few minutes each on a loaded 2-core box). Benign
candidates only: no sandbox here."""

import os
import re

import pytest

from test_judge import _compare, _rows

WRAP = '''
_execeval_orig_{name} = {name}
_execeval_calls = [0]


def {name}(*args, **kwargs):
    _execeval_calls[0] += 1
    {body}
'''

OFF_BY_ONE = '''r = _execeval_orig_{name}(*args, **kwargs)
    if isinstance(r, bool):
        return not r
    if isinstance(r, (int, float)):
        return r + 1
    if isinstance(r, (str, list, tuple)):
        return r[:-1] if r else r + r[:0] + type(r)("x" if isinstance(r, str) else [0])
    if isinstance(r, dict):
        return dict(list(r.items())[:-1]) if r else {{0: 0}}
    return None'''

RAISES_3RD = '''if _execeval_calls[0] % 3 == 0:
        raise ValueError("third call")
    return _execeval_orig_{name}(*args, **kwargs)'''

VARIANTS = {"off_by_one": OFF_BY_ONE, "raises_3rd": RAISES_3RD}


def perturb(code, name, variant):
    return code + WRAP.format(name=name, body=VARIANTS[variant].format(name=name))


def subset(rows):
    return rows if os.environ.get("EXECEVAL_PARITY") == "1" else rows[::16]


def humaneval_cases(variant):
    return [(r["task_id"], perturb(r["prompt"] + r["canonical_solution"], r["entry_point"], variant),
             [{"kind": "program", "code": r["test"] + "\ncheck(%s)\n" % r["entry_point"]}], "",
             r["entry_point"]) for r in subset(_rows("humaneval/HumanEval.jsonl"))]


def mbpp_entry_point(row):
    """The function the asserts call: MBPP rows do not name it."""
    m = re.search(r"assert\s+\(?\s*(?:not\s+)?\(?\s*(?:set\(|math\.isclose\()?\s*([A-Za-z_]\w*)\s*\(",
                  row["test_list"][0])
    return m.group(1) if m else None


def mbpp_cases(variant):
    cases = []
    for r in subset(_rows("mbpp/mbpp.jsonl")):
        name = mbpp_entry_point(r)
        if name and re.search(r"^def %s\b" % re.escape(name), r["code"], re.M):
            cases.append((r["task_id"], perturb(r["code"], name, variant),
                          [{"kind": "assert", "code": a} for a in r["test_list"]],
                          r.get("test_setup_code") or "", name))
    return cases


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_humaneval_perturbed_same_verdict_inline_and_separate(variant):
    differ = _compare(humaneval_cases(variant))
    assert not differ, differ[:10]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_mbpp_perturbed_same_verdict_inline_and_separate(variant):
    cases = mbpp_cases(variant)
    assert len(cases) >= len(subset(_rows("mbpp/mbpp.jsonl"))) * 9 // 10, "entry points not found"
    differ = _compare(cases)
    assert not differ, differ[:10]


def test_the_perturbations_change_verdicts():
    """The variants are wrong candidates: inline, most of them fail (a
    perturbation every test ignores would make the parity above vacuous)."""
    import drive
    from test_judge import PYC
    script = PYC if PYC.exists() else None
    for variant in sorted(VARIANTS):
        failed = 0
        cases = humaneval_cases(variant)
        for task_id, code, tests, setup, _ in cases:
            job = {"v": 1, "nonce": "0" * 32, "code": code, "setup": setup,
                   "tests": [dict(t, index=i) for i, t in enumerate(tests)]}
            events = drive.run(job, script=script, timeout=300).events
            failed += any(e["ev"] == "test" and e["status"] != "pass" for e in events)
        assert failed >= len(cases) * 3 // 4, (variant, failed, len(cases))
