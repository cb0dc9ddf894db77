"""lint.py - the lint phase, run by the harness inside the sandbox (--lint).

The supervisor sends this file in the job; the harness runs run(source)
after the scan and BEFORE any of the candidate's code has run, so the
findings are static analysis of the text alone, which the candidate cannot
influence. Tools: pyflakes always (an error when it is missing); flake8's
style checks (E, W, C90) and bandit when they are installed. Every finding is
{"tool", "code", "line", "message", "severity"} with severity one of low,
medium, high; whether the candidate passes lint at a threshold is decided by
the supervisor, not here.

Installed tools live in Debian's dist-packages, which the harness's isolated
interpreter (-I -S) does not search: it is put on sys.path for the imports
only, then taken off, so the candidate sees the same sys.path as without lint.

The tools run with a high recursion limit (the AST is no deeper than the
harness's compile() allowed, ~1,000 levels; measured: the tools need well
under 8 MB of C stack at three times that) and under a deadline. A text
that makes a tool raise (RecursionError on a 500-term `0 + 0 + ...` at
Python's default limit) or grind is a finding of its own, `lint-crash` or
`lint-timeout` (high), so lint fails instead of dropping out of the lint
pass rate. The phase fails (lint not_run) only for faults of the sandbox's
own: a tool missing, or a tool that also fails on a trivial program (it is
broken, whatever the candidate wrote). In-process, not in a forked child:
a fork of the interpreter holding the tools cost 15-50 ms a candidate.
"""
import sys

DIST_PACKAGES = "/usr/lib/python3/dist-packages"
MAX_FINDINGS = 200
SCRATCH = "/tmp/.execeval-lint.py"  # the sandbox's private /tmp
TRIVIAL = "x = 1\n"                 # what a working tool never fails on
TRIVIAL_SCRATCH = "/tmp/.execeval-lint-trivial.py"
# Under the supervisor's lint budget (LINT_BUDGET_MS, 10 s, src/engine/evaluate.c):
# a tool that grinds becomes a finding before the clock could end the sandbox.
DEADLINE_S = 8.0
REFIRE_S = 0.05  # past the deadline, again and again: a tool may swallow one
RECURSION_LIMIT = 20000

# pyflakes message classes -> (code, severity). The codes are the ones flake8
# reports for them; high: the program will raise (undefined names, misplaced
# statements), medium: likely a bug, low: untidy.
PYFLAKES = {
    "UnusedImport": ("F401", "low"),
    "ImportShadowedByLoopVar": ("F402", "low"),
    "ImportStarUsed": ("F403", "low"),
    "LateFutureImport": ("F404", "high"),
    "ImportStarUsage": ("F405", "low"),
    "ImportStarNotPermitted": ("F406", "high"),
    "FutureFeatureNotDefined": ("F407", "high"),
    "PercentFormatInvalidFormat": ("F501", "medium"),
    "PercentFormatExpectedMapping": ("F502", "medium"),
    "PercentFormatExpectedSequence": ("F503", "medium"),
    "PercentFormatExtraNamedArguments": ("F504", "medium"),
    "PercentFormatMissingArgument": ("F505", "medium"),
    "PercentFormatMixedPositionalAndNamed": ("F506", "medium"),
    "PercentFormatPositionalCountMismatch": ("F507", "medium"),
    "PercentFormatStarRequiresSequence": ("F508", "medium"),
    "PercentFormatUnsupportedFormatCharacter": ("F509", "medium"),
    "StringDotFormatInvalidFormat": ("F521", "medium"),
    "StringDotFormatExtraNamedArguments": ("F522", "medium"),
    "StringDotFormatExtraPositionalArguments": ("F523", "medium"),
    "StringDotFormatMissingArgument": ("F524", "medium"),
    "StringDotFormatMixingAutomatic": ("F525", "medium"),
    "FStringMissingPlaceholders": ("F541", "low"),
    "MultiValueRepeatedKeyLiteral": ("F601", "medium"),
    "MultiValueRepeatedKeyVariable": ("F602", "medium"),
    "TooManyExpressionsInStarredAssignment": ("F621", "high"),
    "TwoStarredExpressions": ("F622", "high"),
    "AssertTuple": ("F631", "medium"),
    "IsLiteral": ("F632", "medium"),
    "InvalidPrintSyntax": ("F633", "high"),
    "IfTuple": ("F634", "medium"),
    "BreakOutsideLoop": ("F701", "high"),
    "ContinueOutsideLoop": ("F702", "high"),
    "ContinueInFinally": ("F703", "high"),
    "YieldOutsideFunction": ("F704", "high"),
    "ReturnOutsideFunction": ("F706", "high"),
    "DefaultExceptNotLast": ("F707", "high"),
    "DoctestSyntaxError": ("F721", "low"),
    "ForwardAnnotationSyntaxError": ("F722", "medium"),
    "CommentAnnotationSyntaxError": ("F723", "medium"),
    "RedefinedWhileUnused": ("F811", "medium"),
    "UndefinedName": ("F821", "high"),
    "UndefinedExport": ("F822", "high"),
    "UndefinedLocal": ("F823", "high"),
    "DuplicateArgument": ("F831", "high"),
    "UnusedVariable": ("F841", "low"),
    "RaiseNotImplemented": ("F901", "medium"),
}

BANDIT_SEVERITY = {"LOW": "low", "MEDIUM": "medium", "HIGH": "high"}


def _finding(tool, code, line, message, severity):
    return {"tool": tool, "code": str(code)[:16], "line": line if type(line) is int else 0,
            "message": str(message)[:300], "severity": severity}


def _import_tools():
    """{"pyflakes": (api, checker), "flake8": legacy api or None, "bandit": ...}."""
    added = DIST_PACKAGES not in sys.path
    if added:
        sys.path.append(DIST_PACKAGES)
    tools = {}
    try:
        import pyflakes.checker
        tools["pyflakes"] = pyflakes.checker
        for name, load in (("flake8", _load_flake8), ("bandit", _load_bandit)):
            try:
                tools[name] = load()
            except ImportError:
                pass
    finally:
        if added:
            sys.path.remove(DIST_PACKAGES)
    return tools


def _load_flake8():
    from flake8.api import legacy
    from flake8.formatting.base import BaseFormatter
    from flake8.main.options import JobsArgument
    return legacy, BaseFormatter, JobsArgument


def _load_bandit():
    import logging
    from bandit.core import config, manager
    logging.getLogger("bandit").setLevel(logging.CRITICAL + 1)  # it logs to stderr
    return config, manager


def _pyflakes(checker_module, tree):
    checker = checker_module.Checker(tree, filename="<candidate>")
    out = []
    for m in sorted(checker.messages, key=lambda m: m.lineno):
        code, severity = PYFLAKES.get(type(m).__name__, ("F999", "medium"))
        out.append(_finding("pyflakes", code, m.lineno, m.message % m.message_args, severity))
    return out


def _flake8(mods, path):
    legacy, base, jobs = mods
    found = []

    class Collect(base):
        def handle(self, error):
            found.append(error)

        def format(self, error):
            return None

        def start(self):
            pass

        def stop(self):
            pass

        def show_statistics(self, statistics):
            pass

        def show_benchmarks(self, benchmarks):
            pass

    guide = _prepared.pop("flake8", None) or _style_guide(legacy, jobs)
    guide.init_report(Collect)
    guide.check_files([path])
    return [_finding("flake8", e.code, e.line_number, e.text,
                     "medium" if e.code.startswith("E9") else "low") for e in found]


def _style_guide(legacy, jobs):
    # F codes come from pyflakes; here the style and complexity checks.
    guide = legacy.get_style_guide(select=["E", "W", "C90"], max_complexity=10)
    guide._application.options.jobs = jobs("1")  # no multiprocessing in the sandbox
    return guide


# Built once by prepare() in a warm worker, used at most once per process:
# each candidate forked from the worker finds its own unused copy here.
_prepared = {}


def prepare():
    """In a warm worker, after a dry run of run(): build what each call would
    build again. flake8's style guide is most of its cost (option parsing and
    plugin discovery through package metadata: ~50 of ~60 ms per call); it is
    built here, where no candidate has run, and never used by the worker."""
    tools = _import_tools()
    if "flake8" in tools:
        legacy, _, jobs = tools["flake8"]
        _prepared["flake8"] = _style_guide(legacy, jobs)


def _bandit(mods, path):
    config, manager = mods
    m = manager.BanditManager(config.BanditConfig(), "file", quiet=True)
    m.discover_files([path])
    m.run_tests()
    return [_finding("bandit", i.test_id, i.lineno, i.text, BANDIT_SEVERITY.get(i.severity, "medium"))
            for i in m.get_issue_list()]


class _Deadline(BaseException):
    """Raised into a tool past the deadline; not an Exception, so a tool's
    own `except Exception` does not swallow it."""


def _crash(tool, exc):
    return _finding(tool, "lint-crash", 0, "%s crashed on the program: %s: %s" % (tool, type(exc).__name__, exc),
                    "high")


def _checks(tools):
    """(name, check(tools[name], path, tree)) for each tool there is."""
    checks = [("pyflakes", lambda t, path, tree: _pyflakes(t, tree))]
    for name, check in (("flake8", _flake8), ("bandit", _bandit)):
        if name in tools:
            checks.append((name, lambda t, path, tree, c=check: c(t, path)))
    return checks


def _run_tools(tools, tree, findings, ran):
    """Fills findings and ran; raises RuntimeError for a broken tool."""
    for name, check in _checks(tools):
        ran.append(name)
        try:
            findings.extend(check(tools[name], SCRATCH, tree))
        except _Deadline:
            findings.append(_finding(name, "lint-timeout", 0, "%s did not finish on the program in %g s"
                                     % (name, DEADLINE_S), "high"))
            return
        except Exception as exc:
            try:  # the tool's own fault when it fails on a trivial program too
                import ast
                check(tools[name], TRIVIAL_SCRATCH, ast.parse(TRIVIAL))
            except _Deadline:
                findings.append(_crash(name, exc))
                return
            except Exception as broken:
                raise RuntimeError("%s: %s: %s" % (name, type(broken).__name__, broken)) from None
            findings.append(_crash(name, exc))


def run(source, tree):
    """(findings, tools that ran) for the candidate's source and its AST.
    Raises when lint could not run through no fault of the program's."""
    import _signal
    import os

    tools = _import_tools()
    need_files = "flake8" in tools or "bandit" in tools
    findings, ran, armed = [], [], [True]

    def on_alarm(signum, frame):
        if armed[0]:
            raise _Deadline()

    def disarm():
        armed[0] = False  # first: from here a late alarm only returns
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, old_handler)
        sys.setrecursionlimit(old_limit)

    old_limit = sys.getrecursionlimit()
    old_handler = _signal.signal(_signal.SIGALRM, on_alarm)
    try:
        try:
            if need_files:
                for path, text in ((SCRATCH, source), (TRIVIAL_SCRATCH, TRIVIAL)):
                    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                        f.write(text)
            sys.setrecursionlimit(RECURSION_LIMIT)
            _signal.setitimer(_signal.ITIMER_REAL, DEADLINE_S, REFIRE_S)
            _run_tools(tools, tree, findings, ran)
        finally:
            disarm()
    except _Deadline:  # it fired as the tools were done, before disarm() ran
        disarm()
    finally:
        if need_files:
            for path in (SCRATCH, TRIVIAL_SCRATCH):
                try:
                    os.unlink(path)
                except OSError:
                    pass
    return findings[:MAX_FINDINGS], ran
