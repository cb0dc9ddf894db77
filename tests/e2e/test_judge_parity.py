"""--judge separate against --judge inline on the bundled example set (issue
17: honest candidates, and the example set's wrong and hostile ones, get the
same verdicts). The example set mixes task shapes: tasks of io and call
tests only run inline under either mode (the supervisor judges those), the
rest through the separate judge, a mixed task's io and call tests still by
the supervisor (from an inline run); so every record must carry the same
status and score, and each test of a judged task says who judged it:
"judge" for its assert, program and unittest tests, "supervisor" for the
rest. Through execeval's sandbox, inside the safety net."""
import json
import subprocess

from conftest import EXECEVAL, REPO

EXAMPLES = REPO / "examples"


def eval_records(tmp_path, mode):
    out = tmp_path / ("results-%s.jsonl" % mode)
    p = subprocess.run([EXECEVAL, "eval", "--tasks", str(EXAMPLES / "tasks.jsonl"),
                        "--samples", str(EXAMPLES / "samples.jsonl"), "-o", str(out),
                        "--judge", mode, "--isolation", "cold", "--no-history", "-j", "2", "-q"],
                       capture_output=True, timeout=900)
    assert p.returncode in (0, 1), p.stderr.decode()[-2000:]
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    return {(r["task_id"], r.get("model"), r["sample"]): r for r in recs}


JUDGE_KINDS = {"assert", "program", "unittest"}


def separately_judged_tasks():
    """{task_id: each test's judge} of the example tasks with a test the
    separate judge takes (the others, of io and call tests only, run inline
    under either mode)."""
    tasks = [json.loads(line) for line in (EXAMPLES / "tasks.jsonl").read_text().splitlines()]
    return {t["task_id"]: ["judge" if x["kind"] in JUDGE_KINDS else "supervisor" for x in t["tests"]]
            for t in tasks if any(x["kind"] in JUDGE_KINDS for x in t["tests"])}


def plain_assert(detail):
    """A failed assert's detail up to its error type: the judge's says the
    values it compared ("AssertionError: expected 3, got 0 (line 1: ...)",
    judge.py), inline's only the line ("AssertionError (line 1: ...)")."""
    if detail and " failed: AssertionError" in detail:
        head, tail = detail.split(" failed: AssertionError", 1)
        if tail.startswith(": expected ") or tail.startswith(" (line "):
            return head + " failed: AssertionError"
    return detail


def verdict(r):
    """Status and score; the detail and each test's status too, but for a
    timeout, whose detail ("starved: ...") and count of tests done before the
    clock ran out depend on the machine's load."""
    if r["status"] == "timeout":
        return r["status"], r["score"]
    return r["status"], r["score"], plain_assert(r["detail"]), [t["status"] for t in r["tests"]]


def test_example_set_same_verdicts_inline_and_separate(tmp_path):
    inline = eval_records(tmp_path, "inline")
    separate = eval_records(tmp_path, "separate")
    assert set(inline) == set(separate) and len(inline) >= 100
    differ = {k: (verdict(inline[k]), verdict(separate[k])) for k in inline
              if verdict(inline[k]) != verdict(separate[k])}
    assert not differ, differ
    # The separate judge took part (a mode that changed nothing would pass
    # the comparison above vacuously): every assert, program and unittest
    # test of those tasks is the judge's, every other test the supervisor's.
    judged = separately_judged_tasks()
    records = [r for k, r in separate.items() if k[0] in judged]
    assert judged and len(records) >= 100, (len(judged), len(records))
    for r in records:
        assert [t.get("judged_by") for t in r["tests"]] == judged[r["task_id"]], r
