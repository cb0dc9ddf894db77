"""src/harness/lint.py's runner: a tool that fails on the program's text is a
finding of the program's (lint-crash, lint-timeout), never a lint phase that
did not run; only a tool that is broken whatever the text is not_run.

Run with: /usr/bin/python3 -m pytest -q tests/harness

No candidate code runs here: lint reads program text only. The tools are
stand-ins that crash, grind or die on cue, so each path is hit exactly.
"""
import ast
import importlib.util
import os
import pathlib
import signal
import sys
import time

import pytest

LINT = pathlib.Path(__file__).resolve().parents[2] / "src" / "harness" / "lint.py"
DEEP = "x = " + " + ".join(["0"] * 500) + "\n"


@pytest.fixture
def lint(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("execeval_lint_under_test", LINT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "SCRATCH", str(tmp_path / "scratch.py"))
    monkeypatch.setattr(module, "TRIVIAL_SCRATCH", str(tmp_path / "trivial.py"))
    return module


def only_pyflakes(lint, monkeypatch, fake):
    """lint with pyflakes replaced by fake(tree) and no other tool."""
    monkeypatch.setattr(lint, "_import_tools", lambda: {"pyflakes": None})
    monkeypatch.setattr(lint, "_pyflakes", lambda _mod, tree: fake(tree))


def is_trivial(tree):
    return ast.dump(tree) == ast.dump(ast.parse("x = 1\n"))


def test_the_real_tools_survive_a_deep_expression(lint):
    """A 500-term sum made pyflakes, flake8 and bandit raise RecursionError at
    Python's default limit; on the lint child's stack they finish, and the
    program's real findings are there."""
    source = DEEP + "y = undefined_name\n"
    findings, tools = lint.run(source, ast.parse(source))
    assert tools[0] == "pyflakes"
    assert [f["code"] for f in findings if f["tool"] == "pyflakes"] == ["F821"], findings
    assert not [f for f in findings if f["code"].startswith("lint-")], findings


def test_a_tool_raising_on_the_text_is_a_high_finding(lint, monkeypatch):
    def fake(tree):
        if is_trivial(tree):
            return []
        raise RecursionError("maximum recursion depth exceeded")
    only_pyflakes(lint, monkeypatch, fake)
    findings, tools = lint.run(DEEP, ast.parse(DEEP))
    assert tools == ["pyflakes"]
    assert [(f["tool"], f["code"], f["severity"]) for f in findings] == [("pyflakes", "lint-crash", "high")]
    assert "RecursionError" in findings[0]["message"]


def test_a_tool_broken_on_every_text_is_not_the_programs_fault(lint, monkeypatch):
    def fake(tree):
        raise ImportError("a half-installed plugin")
    only_pyflakes(lint, monkeypatch, fake)
    with pytest.raises(RuntimeError, match="pyflakes: ImportError: a half-installed plugin"):
        lint.run(DEEP, ast.parse(DEEP))


def test_a_tool_that_grinds_is_cut_off_at_the_deadline(lint, monkeypatch):
    monkeypatch.setattr(lint, "DEADLINE_S", 0.5)

    def fake(tree):
        while True:
            pass
    only_pyflakes(lint, monkeypatch, fake)
    start = time.monotonic()
    findings, tools = lint.run(DEEP, ast.parse(DEEP))
    assert time.monotonic() - start < 5
    assert [(f["tool"], f["code"], f["severity"]) for f in findings] == [("pyflakes", "lint-timeout", "high")]
    assert tools == ["pyflakes"]


def test_a_tool_that_swallows_the_deadline_is_cut_off_again(lint, monkeypatch):
    monkeypatch.setattr(lint, "DEADLINE_S", 0.3)

    def fake(tree):
        try:
            while True:
                pass
        except BaseException:
            pass
        while True:
            pass
    only_pyflakes(lint, monkeypatch, fake)
    findings, tools = lint.run(DEEP, ast.parse(DEEP))
    assert [f["code"] for f in findings] == ["lint-timeout"]


def test_the_clock_and_limits_are_restored_and_the_scratch_files_gone(lint, monkeypatch):
    monkeypatch.setattr(lint, "DEADLINE_S", 0.3)
    monkeypatch.setattr(lint, "_import_tools", lambda: {"pyflakes": None, "flake8": None})
    monkeypatch.setattr(lint, "_pyflakes", lambda _m, _t: [])
    monkeypatch.setattr(lint, "_flake8", lambda _m, _p: time.sleep(30))
    limit, handler = sys.getrecursionlimit(), signal.getsignal(signal.SIGALRM)
    findings, tools = lint.run(DEEP, ast.parse(DEEP))
    assert tools == ["pyflakes", "flake8"]
    assert [(f["tool"], f["code"]) for f in findings] == [("flake8", "lint-timeout")]
    assert not os.path.exists(lint.SCRATCH) and not os.path.exists(lint.TRIVIAL_SCRATCH)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert (sys.getrecursionlimit(), signal.getsignal(signal.SIGALRM)) == (limit, handler)
