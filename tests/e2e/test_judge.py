"""--judge (issue 17): inline is today's judging; separate is refused as
"not yet" until the engine runs the separate judge, never judged inline
behind the user's back. The separate judge's harness side is tested in
tests/harness/test_judge.py."""

import subprocess

import pytest

from conftest import EXECEVAL

ADD = "def add(a, b):\n    return a + b\n"


def test_judge_inline_is_todays_judging(run):
    r = run(ADD, asserts=["assert add(1, 2) == 3"], args=["--judge", "inline"])
    assert r.code == 0 and r.record["status"] == "pass", r


def test_judge_separate_is_refused_as_not_yet(run):
    r = run(ADD, asserts=["assert add(1, 2) == 3"], args=["--judge", "separate"])
    assert r.code == 2 and r.record is None, r
    assert "--judge separate: not yet" in r.stderr, r.stderr


@pytest.mark.parametrize("command", ["eval", "serve"])
def test_eval_and_serve_refuse_it_before_reading_anything(command):
    argv = [EXECEVAL, command, "--judge", "separate"]
    argv += ["--tasks", "/nonexistent", "--samples", "/nonexistent"] if command == "eval" else \
        ["--listen", "127.0.0.1:1"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "--judge separate: not yet" in p.stderr, p


def test_judge_unknown_mode_names_the_choices(run):
    r = run(ADD, asserts=["assert add(1, 2) == 3"], args=["--judge", "split"])
    assert r.code == 2 and "--judge: expected inline or separate, got 'split'" in r.stderr, r.stderr
