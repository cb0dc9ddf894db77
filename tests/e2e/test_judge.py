"""--judge (issue 17): inline is today's judging, and a mode it does not
know is refused naming the choices. separate (run, eval and serve, cold
and warm) is tested in test_judge_separate.py, its harness side in
tests/harness/test_judge.py."""

ADD = "def add(a, b):\n    return a + b\n"


def test_judge_inline_is_todays_judging(run):
    r = run(ADD, asserts=["assert add(1, 2) == 3"], args=["--judge", "inline"])
    assert r.code == 0 and r.record["status"] == "pass", r


def test_judge_unknown_mode_names_the_choices(run):
    r = run(ADD, asserts=["assert add(1, 2) == 3"], args=["--judge", "apart"])
    assert r.code == 2 and "--judge: expected split, separate or inline, got 'apart'" in r.stderr, r.stderr
