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
"""
import sys

DIST_PACKAGES = "/usr/lib/python3/dist-packages"
MAX_FINDINGS = 200
SCRATCH = "/tmp/.execeval-lint.py"  # the sandbox's private /tmp

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


def run(source, tree):
    """(findings, tools that ran) for the candidate's source and its AST."""
    tools = _import_tools()
    findings = _pyflakes(tools["pyflakes"], tree)
    ran = ["pyflakes"]
    if "flake8" in tools or "bandit" in tools:
        with open(SCRATCH, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(source)
        try:
            for name, check in (("flake8", _flake8), ("bandit", _bandit)):
                if name in tools:
                    findings.extend(check(tools[name], SCRATCH))
                    ran.append(name)
        finally:
            import os
            os.unlink(SCRATCH)
    return findings[:MAX_FINDINGS], ran
