"""Black-box tests of the harness (src/harness/parts, assembled), driven as the supervisor drives it.

Run with: /usr/bin/python3 -m pytest -q tests/harness

These run the harness WITHOUT the sandbox: every candidate here is benign.
Tampering is limited to the child interpreter (rebinding builtins, replacing
sys.modules entries, atexit/signal handlers); hostile candidates are tested
through the real sandbox in tests/e2e.
"""

import json
import os
import secrets
import sys

import pytest

import drive

sys.set_int_max_str_digits(0)  # the tests build and compare big ints

DENY = ["subprocess", "socket", "ctypes", "shutil", "urllib", "http", "asyncio.subprocess",
        "_socket", "_posixsubprocess", "requests", "os.system", "os.popen"]

ADD = "def add(a, b):\n    return a + b\n"


def make_job(code=ADD, tests=(), **fields):
    """A job with indexes filled in; tests are (kind, dict) or dicts with "kind"."""
    job = {"v": 1, "nonce": secrets.token_hex(16), "code": code, "setup": "",
           "tests": [], "deny_imports": DENY, "scan": "report", "gate": False,
           "io_output_cap": 262144}
    job.update(fields)
    for index, test in enumerate(tests):
        job["tests"].append(dict({"index": index, "visibility": "public"}, **test))
    return job


def run(job, **kw):
    """Run the harness and check what every run must satisfy."""
    result = drive.run(job, **kw)
    assert result.returncode == 0, result
    events = result.events
    assert [e["seq"] for e in events] == list(range(len(events))), events
    assert all(e["nonce"] == job["nonce"] for e in events), events
    assert events[0]["ev"] == "hello" and events[-1]["ev"] == "done", events
    assert [e["ev"] for e in events].count("done") == 1
    reported = [e["index"] for e in events if e["ev"] == "test"]
    assert len(reported) == len(set(reported)), events
    return result


def A(code, **kw):
    return dict({"kind": "assert", "code": code}, **kw)


def call(fn, *args, **kw):
    return dict({"kind": "call", "fn": fn, "args": list(args)}, **kw)


def io(stdin="", **kw):
    return dict({"kind": "io", "stdin": stdin}, **kw)


def value_of(code, *args, fn="f"):
    """The canonical value a call test reports for fn(*args)."""
    result = run(make_job(code, [call(fn, *args)]))
    event = result.tests()[0]
    assert event["status"] == "returned", event
    return event["value"]


# ---------------------------------------------------------------- phases

def test_every_phase_and_kind_passes():
    code = ADD + ('if __name__ == "__main__":\n'
                  "    a, b = map(int, input().split())\n    print(add(a, b))\n")
    tests = [
        A("assert add(1, 2) == 3"),
        io("1 2\n", visibility="hidden"),
        call("add", 1, 2),
        {"kind": "program", "code": "def check(candidate):\n    assert candidate(1, 2) == 3\ncheck(add)\n"},
        {"kind": "unittest", "code": "import unittest\nclass T(unittest.TestCase):\n"
                                     "    def test_a(self):\n        self.assertEqual(add(1, 2), 3)\n"},
    ]
    result = run(make_job(code, tests, gate=True, setup="import math"))
    evs = result.events
    assert evs[0]["python"].startswith("3.")
    assert [(e["ev"], e.get("name")) for e in evs[1:4]] == [
        ("phase", "syntax"), ("phase", "scan"), ("phase", "import")]
    assert result.phase("syntax")["status"] == "ok"
    assert result.phase("scan")["status"] == "ok" and result.phase("scan")["findings"] == []
    assert result.phase("import")["status"] == "ok"
    t = result.tests()
    assert [e["index"] for e in evs if e["ev"] == "test"] == [0, 2, 3, 4, 1]  # public first
    assert t[0]["status"] == t[3]["status"] == t[4]["status"] == "pass"
    assert t[0]["duration_ms"] >= 0
    assert t[2] == dict(t[2], status="returned", value={"int": "3"})
    assert t[1]["status"] == "returned" and t[1]["stdout"] == "3\n" and t[1]["exit_code"] == 0
    assert evs[-3]["ev"] == "gate"


def test_each_kind_fails():
    code = ADD + "def div(a, b):\n    return a / b\n" \
        + "if __name__ == '__main__':\n    raise ValueError('bad input')\n"
    tests = [
        A("assert add(1, 2) == 4"),
        {"kind": "program", "code": "def check(c):\n    assert c(1, 2) == 4, 'wrong sum'\ncheck(add)\n"},
        {"kind": "unittest", "code": "import unittest\nclass T(unittest.TestCase):\n"
                                     "    def test_ok(self): pass\n"
                                     "    def test_bad(self):\n        self.assertEqual(add(1, 2), 4)\n"},
        call("div", 1, 0),
        io(""),
    ]
    t = run(make_job(code, tests)).tests()
    assert t[0]["status"] == "fail" and t[0]["error_type"] == "AssertionError"
    assert t[0]["message"] == "AssertionError (line 1: assert add(1, 2) == 4)"
    assert t[1]["status"] == "fail"
    assert t[1]["message"] == "AssertionError: wrong sum (line 2: assert c(1, 2) == 4, 'wrong sum')"
    assert t[2]["status"] == "fail" and t[2]["error_type"] == "AssertionError"
    assert t[2]["message"].startswith("1 of 2 failed; T.test_bad: AssertionError: 3 != 4")
    assert "line 5" in t[2]["message"]
    assert t[3]["status"] == "raised" and t[3]["error_type"] == "ZeroDivisionError"
    assert t[3]["message"] == "ZeroDivisionError: division by zero (line 4: return a / b)"
    assert t[4]["status"] == "raised" and t[4]["error_type"] == "ValueError"
    assert t[4]["message"].startswith("ValueError: bad input (line 6:")
    assert "stdout" not in t[4] and "exit" not in t[4]


def test_asserts_are_reported_one_by_one():
    tests = [A("assert add(1, 2) == 3"), A("assert add(2, 2) == 5"), A("assert add(0, 0) == 0")]
    t = run(make_job(ADD, tests)).tests()
    assert [t[i]["status"] for i in range(3)] == ["pass", "fail", "pass"]


def test_syntax_error_reports_line_and_ends():
    result = run(make_job("def f(:\n    pass\n", [A("assert True")]))
    syntax = result.phase("syntax")
    assert syntax["status"] == "fail" and syntax["line"] == 1
    assert syntax["message"].startswith("SyntaxError: ")
    assert [e["ev"] for e in result.events] == ["hello", "phase", "done"]


def test_syntax_error_found_by_the_compiler_not_the_parser():
    result = run(make_job("x = 1\nreturn x\n", scan="off"))
    assert result.phase("syntax") == dict(result.phase("syntax"), status="fail", line=2,
                                          message="SyntaxError: 'return' outside function")


def test_null_byte_is_a_syntax_failure_without_line():
    syntax = run(make_job("x = 1\0\n")).phase("syntax")
    assert syntax["status"] == "fail" and "line" not in syntax and "null" in syntax["message"]


def test_import_error_ends_the_run():
    result = run(make_job("x = 1\ny = 1 / 0\n", [A("assert True")]))
    imp = result.phase("import")
    assert imp["status"] == "fail" and imp["error_type"] == "ZeroDivisionError"
    assert imp["message"] == "ZeroDivisionError: division by zero (line 2: y = 1 / 0)"
    assert "setup" not in imp and "exit" not in imp and "denied" not in imp
    assert result.events[-2]["name"] == "import"
    assert result.tests() == {}


def test_setup_runs_in_candidate_globals():
    job = make_job(ADD, [A("assert helper(add) == 5")],
                   setup="def helper(f):\n    return f(2, 3)\n")
    assert run(job).tests()[0]["status"] == "pass"


def test_setup_failure_is_marked():
    imp = run(make_job(ADD, [A("assert True")], setup="import nonexistent_mod_xyz")).phase("import")
    assert imp["status"] == "fail" and imp["setup"] is True
    assert imp["error_type"] == "ModuleNotFoundError"


def test_no_tests_still_imports():
    result = run(make_job("print('top level')\n"))
    assert result.phase("import")["status"] == "ok"
    assert result.stdout == "top level\n"


def test_io_only_skips_import():
    code = "n = int(input())\nprint(n * 2)\n"
    result = run(make_job(code, [io("21\n"), io("5\n")]))
    assert result.phase("import")["status"] == "skipped"
    t = result.tests()
    assert t[0]["stdout"] == "42\n" and t[1]["stdout"] == "10\n"


def test_import_phase_runs_when_the_job_says_so_with_io_only():
    """The separate judge's inline runs of a mixed task leave the judge's
    tests out of the job; the import phase runs as it would with them."""
    code = "print('top level')\n"
    result = run(dict(make_job(code, [io("")]), import_phase=True))
    assert result.phase("import")["status"] == "ok"
    assert result.tests()[0]["stdout"] == "top level\n"


def test_candidate_sees_candidate_name_not_main():
    code = "import sys\nNAME = __name__\nMAIN = sys.modules['__main__']\n"
    tests = [A("assert NAME == '__candidate__'"),
             A("assert not hasattr(MAIN, 'run_job') and not hasattr(MAIN, '_event_writer')"),
             A("import __main__\nassert vars(__main__).get('main') is None")]
    t = run(make_job(code, tests)).tests()
    assert [t[i]["status"] for i in range(3)] == ["pass"] * 3


def test_system_dist_packages_are_on_the_path():
    code = "import os, sys\nDIRS = [p for p in ['/usr/lib/python3/dist-packages'] if os.path.isdir(p)]\n"
    t = run(make_job(code, [A("assert DIRS and all(p in sys.path for p in DIRS)")])).tests()
    assert t[0]["status"] == "pass"


def test_warm_entry_point_with_other_fds():
    """A warm interpreter imports the definitions once and calls run_job(job, fds)."""
    source = (
        "import posix\n"
        "ns = {'__name__': 'execeval_harness'}\n"
        "exec(compile(open(%r).read(), 'harness.py', 'exec'), ns)\n"
        "posix.dup2(4, 7)\nposix.dup2(5, 8)\nposix.close(4)\nposix.close(5)\n"
        "ns['run_job'](ns['_read_job'](3), (7, 8))\n" % str(drive.HARNESS))
    job = make_job(ECHO, [A("import os\nos.fstat(7)"), io("x\n"), A("assert True", visibility="hidden")],
                   gate=True)
    result = run(job, source=source)
    t = result.tests()
    assert t[0]["status"] == "pass" and t[1]["stdout"] == "X\n" and t[2]["status"] == "pass"


# ---------------------------------------------------------------- denied imports

def test_denied_import_at_import_time():
    imp = run(make_job("import socket\n", [A("assert True")])).phase("import")
    assert imp["status"] == "fail" and imp["denied"] == "socket"
    assert imp["error_type"] == "ImportError"
    assert imp["message"].startswith("ImportError: denied: socket (line 1: import socket)")


@pytest.mark.parametrize("stmt, name", [
    ("import subprocess", "subprocess"),
    ("from urllib.request import urlopen", "urllib"),  # the parent package is refused first
    ("import http.client", "http"),
    ("import importlib\nimportlib.import_module('shutil')", "shutil"),
    ("__import__('ctypes')", "ctypes"),
    ("import os\nos.system('true')", "os.system"),
    ("from os import popen\npopen('true')", "os.popen"),
    ("import posix\nposix.system('true')", "os.system"),
])
def test_denied_inside_a_test(stmt, name):
    t = run(make_job(ADD, [A(stmt), A("assert add(1, 1) == 2")], scan="off")).tests()
    assert t[0]["status"] == "fail" and t[0]["denied"] == name, t[0]
    assert t[1]["status"] == "pass"


def test_denial_is_found_through_wrapping_exceptions():
    code = ("def f():\n    try:\n        import socket\n    except ImportError as e:\n"
            "        raise RuntimeError('no network') from e\n"
            "def g():\n    try:\n        import socket\n    except ImportError:\n"
            "        raise ValueError('quiet') from None\n")
    t = run(make_job(code, [A("f()"), call("g")])).tests()
    assert t[0]["error_type"] == "RuntimeError" and t[0]["denied"] == "socket"
    assert t[1]["status"] == "raised" and t[1]["denied"] == "socket"


def test_caught_denial_is_not_reported():
    code = "try:\n    import socket\nexcept ImportError:\n    socket = None\n"
    result = run(make_job(code, [A("assert socket is None")]))
    assert result.phase("import")["status"] == "ok"
    assert result.tests()[0]["status"] == "pass"


def test_forged_denial_of_an_allowed_module_is_not_reported():
    t = run(make_job(ADD, [A("raise ImportError('denied: math')")])).tests()
    assert t[0]["status"] == "fail" and "denied" not in t[0]


def test_empty_deny_list_allows_everything():
    job = make_job("import shutil\n", [A("assert shutil.which")], deny_imports=[])
    assert run(job).tests()[0]["status"] == "pass"


def test_os_still_works_apart_from_denied_attributes():
    code = "import os\n"
    tests = [A("assert os.getcwd() and os.path.join('a', 'b') == 'a/b'"),
             A("assert os.__loader__ is os.__spec__.loader\n"
               "assert type(os.__loader__).__name__ != '_PatchingLoader'"),
             A("assert os.system.__name__ == 'os.system'")]
    t = run(make_job(code, tests)).tests()
    assert [t[i]["status"] for i in range(3)] == ["pass"] * 3


# ------------------------------------------- denied imports: whose import

# The supervisor's default list (src/engine/evaluate.c).
DEFAULT_DENY = ["os.system", "os.popen", "subprocess", "_posixsubprocess", "socket", "_socket",
                "requests", "urllib", "ctypes", "_ctypes", "shutil", "http.client",
                "asyncio.subprocess"]

# Stdlib modules that import denied ones for their own use, and a use of each.
STDLIB_USES = [
    "import pathlib\nassert pathlib.Path('/a b').as_uri() == 'file:///a%20b'",
    "import os, tempfile\nwith tempfile.TemporaryDirectory() as d:\n    os.mkdir(d + '/sub')",
    "import asyncio\nassert asyncio.run(asyncio.sleep(0, 5)) == 5",
    "import multiprocessing\nassert multiprocessing.cpu_count() >= 1",
    "import io, zipfile\nbuf = io.BytesIO()\nwith zipfile.ZipFile(buf, 'w') as z:\n"
    "    z.writestr('a', 'b')\nassert zipfile.ZipFile(buf).read('a') == b'b'",
    "import email.utils\nassert email.utils.parseaddr('A <a@b.c>') == ('A', 'a@b.c')",
    "from unittest import mock\nassert mock.Mock(return_value=3)() == 3",
    "import logging.handlers, xmlrpc.client, http.server",
]


@pytest.mark.parametrize("use", STDLIB_USES)
def test_stdlib_modules_may_import_denied_modules(use):
    """The candidate imports pathlib, which imports urllib.parse: allowed."""
    job = make_job(ADD + use + "\n", [A(use), A("assert add(1, 2) == 3")], deny_imports=DEFAULT_DENY)
    result = run(job)
    assert result.phase("import")["status"] == "ok", result.phase("import")
    t = result.tests()
    assert t[0]["status"] == t[1]["status"] == "pass", t
    assert result.phase("scan")["findings"] == []


def test_stdlib_modules_may_import_denied_modules_in_io_and_unittest():
    code = "import pathlib, asyncio, tempfile\nprint(pathlib.Path('/x').as_uri())\n"
    tests = [io(""), UT("    def test_a(self):\n        from unittest import mock\n"
                        "        import email.utils, zipfile\n")]
    t = run(make_job(code, tests, deny_imports=DEFAULT_DENY)).tests()
    assert t[0]["status"] == "returned" and t[0]["stdout"] == "file:///x\n", t[0]
    assert t[1]["status"] == "pass", t[1]


@pytest.mark.parametrize("first, stmt, cached, name", [
    ("import pathlib", "import urllib.parse", "urllib.parse", "urllib"),
    ("import pathlib", "from urllib import parse", "urllib.parse", "urllib"),
    ("import pathlib", "from urllib.parse import quote", "urllib.parse", "urllib"),
    ("import asyncio", "import socket", "socket", "socket"),
    ("import asyncio", "__import__('socket')", "socket", "socket"),
    ("import asyncio", "import builtins\nbuiltins.__import__('socket')", "socket", "socket"),
    ("import asyncio", "import importlib\nimportlib.import_module('socket')", "socket", "socket"),
    ("import pathlib", "from importlib import import_module\nimport_module('.parse', 'urllib')",
     "urllib.parse", "urllib"),
    ("import asyncio", "from asyncio import subprocess", "asyncio.subprocess", "asyncio.subprocess"),
    ("import asyncio", "import asyncio.subprocess", "asyncio.subprocess", "asyncio.subprocess"),
    ("import xmlrpc.client", "from http import client", "http.client", "http.client"),
    ("import tempfile\ntempfile.TemporaryDirectory().cleanup()", "import shutil", "shutil", "shutil"),
    ("import pathlib", "exec('import urllib.parse')", "urllib.parse", "urllib"),
    ("import pathlib", "g = {'__name__': 'urllib.x', '__package__': 'urllib'}\n"
                       "exec('from . import parse', g)", "urllib.parse", "urllib"),
])
def test_candidate_import_of_a_cached_denied_module_fails(first, stmt, cached, name):
    """An allowed stdlib import left the denied module in sys.modules; the
    candidate's own import of it is still refused."""
    tests = [A("import sys\nassert %r in sys.modules" % cached), A(stmt), A("assert add(1, 1) == 2")]
    t = run(make_job(ADD + first + "\n", tests, deny_imports=DEFAULT_DENY, scan="off")).tests()
    assert t[0]["status"] == "pass", t[0]
    assert t[1]["status"] == "fail" and t[1]["denied"] == name, t[1]
    assert t[1]["message"].startswith("ImportError: denied: " + name), t[1]
    assert t[2]["status"] == "pass"


@pytest.mark.parametrize("stmt, name", [
    ("import urllib.parse", "urllib"),
    ("import importlib\nimportlib.__import__('socket')", "socket"),  # past the wrappers: the finder
    ("from http import client", "http.client"),  # http is allowed, its submodule is not
    ("exec('import socket')", "socket"),
    ("exec(compile('import socket', '/usr/lib/no/such/module.py', 'exec'))", "socket"),
    ("import sys\nexec(compile('import socket', sys._stdlib_dir + '/../x.py', 'exec'))", "socket"),
    ("import threading\nout = []\ndef f():\n    try:\n        import socket\n"
     "    except ImportError as e:\n        out.append(e)\n"
     "t = threading.Thread(target=f)\nt.start()\nt.join()\nraise out[0]", "socket"),
])
def test_candidate_made_imports_are_refused(stmt, name):
    t = run(make_job(ADD, [A(stmt)], deny_imports=DEFAULT_DENY, scan="off")).tests()
    assert t[0]["status"] == "fail" and t[0]["denied"] == name, t[0]


def test_import_module_is_guarded_when_importlib_was_loaded_first():
    """A unittest test makes the harness import unittest (and importlib) before
    the policy: importlib.import_module is guarded in place."""
    tests = [A("import sys\nassert 'importlib' in sys.modules"),
             A("import importlib\nimportlib.import_module('socket')"),
             UT("    def test_a(self):\n        import importlib\n"
                "        importlib.import_module('urllib.parse')\n")]
    t = run(make_job(ADD + "import asyncio, pathlib\n", tests, deny_imports=DEFAULT_DENY)).tests()
    assert t[0]["status"] == "pass", t[0]
    assert t[1]["denied"] == "socket" and t[2]["denied"] == "urllib", t


def test_setup_imports_are_the_candidates():
    ok = run(make_job(ADD, [A("assert pathlib and tempfile")], deny_imports=DEFAULT_DENY,
                      setup="import pathlib, tempfile"))
    assert ok.phase("import")["status"] == "ok" and ok.tests()[0]["status"] == "pass"
    imp = run(make_job(ADD, [A("assert True")], deny_imports=DEFAULT_DENY,
                       setup="import pathlib\nfrom urllib.parse import quote")).phase("import")
    assert imp["status"] == "fail" and imp["setup"] and imp["denied"] == "urllib", imp


def test_module_written_by_the_candidate_is_not_installed(tmp_path):
    """A file the candidate wrote (here in the cwd) imports as the candidate."""
    code = ("import os, sys\nsys.path.insert(0, os.getcwd())\n"
            "with open('helper.py', 'w') as f:\n    f.write('import pathlib\\nimport socket\\n')\n")
    t = run(make_job(code, [A("import helper")], deny_imports=DEFAULT_DENY), cwd=tmp_path).tests()
    assert t[0]["status"] == "fail" and t[0]["denied"] == "socket", t[0]


def test_import_semantics_survive_the_guard():
    tests = [
        A("import os\nassert __import__('os.path') is os"),
        A("assert __import__('os.path', fromlist=['join']).__name__ == 'posixpath'"),
        A("from os import path, sep\nimport os.path as p\nassert p is path"),
        A("try:\n    import no_such_module_xyz\nexcept ModuleNotFoundError as e:\n"
          "    assert e.name == 'no_such_module_xyz'\nelse:\n    raise AssertionError"),
        A("try:\n    from . import x\nexcept ImportError as e:\n    assert 'no known parent' in str(e)\n"
          "else:\n    raise AssertionError"),
        A("try:\n    __import__(5)\nexcept TypeError:\n    pass\nelse:\n    raise AssertionError"),
        A("from os import system, popen\nassert system.__name__ == 'os.system'"),  # a stub, not an import
        A("import importlib\nassert importlib.import_module('json.decoder').__name__ == 'json.decoder'"),
        A("import importlib\nassert importlib.import_module('.decoder', 'json').__name__ == 'json.decoder'"),
    ]
    t = run(make_job(ADD, tests, deny_imports=DEFAULT_DENY)).tests()
    assert [t[i]["status"] for i in range(len(tests))] == ["pass"] * len(tests), t


def test_no_deny_list_leaves_builtin_import_alone():
    test = A("import builtins\nassert type(builtins.__import__).__name__ == 'builtin_function_or_method'")
    assert run(make_job(ADD, [test], deny_imports=[])).tests()[0]["status"] == "pass"
    guarded = run(make_job(ADD, [test], deny_imports=DEFAULT_DENY)).tests()[0]
    assert guarded["status"] == "fail"


def test_denials_hold_when_started_from_a_pyc(tmp_path):
    """The supervisor runs a build-time pyc (its code named after the parts'
    relative paths): the importer check does not depend on the harness's name."""
    pyc = tmp_path / "harness.pyc"
    pyc.write_bytes(drive.assemble.pyc())
    job = make_job(ADD + "import pathlib, asyncio\n",
                   [A("import socket"), A("import urllib.parse"), A("from unittest import mock")],
                   deny_imports=DEFAULT_DENY)
    t = run(job, script=pyc).tests()
    assert t[0]["denied"] == "socket" and t[1]["denied"] == "urllib", t
    assert t[2]["status"] == "pass", t[2]


# ---------------------------------------------------------------- scan

SCAN_CODE = """import socket
import os as o
from os import system
x = eval('1')
exec('y = 2')
m = __import__('json')
o.system('true')
open('out.txt', 'w')
open('in.txt')
import builtins
builtins.print = print
globals()['z'] = 3
"""


def test_scan_findings_are_reported():
    result = run(make_job(SCAN_CODE, [A("assert True")], deny_imports=DENY))
    scan = result.phase("scan")
    assert scan["status"] == "ok"
    got = [(f["line"], f["col"], f["code"], f["severity"]) for f in scan["findings"]]
    assert got == [
        (1, 0, "denied-import", "block"),
        (3, 0, "denied-import", "block"),
        (4, 4, "dynamic-code", "warn"),
        (5, 0, "dynamic-code", "warn"),
        (6, 4, "dynamic-import", "warn"),
        (7, 0, "denied-attribute", "block"),
        (8, 0, "open-write", "warn"),
        (11, 0, "globals-tamper", "warn"),
        (12, 0, "globals-tamper", "warn"),
    ]
    assert scan["findings"][0]["message"] == "import of denied module 'socket'"
    assert scan["findings"][5]["message"] == "use of denied attribute 'os.system'"
    # report mode goes on to import, which the finder then refuses
    assert result.phase("import")["denied"] == "socket"


def test_scan_block_mode_fails_and_ends():
    result = run(make_job("import subprocess\n", [A("assert True")], scan="block"))
    scan = result.phase("scan")
    assert scan["status"] == "fail" and scan["findings"][0]["code"] == "denied-import"
    assert [e["ev"] for e in result.events] == ["hello", "phase", "phase", "done"]


def test_scan_block_mode_ignores_warnings():
    result = run(make_job("x = eval('1 + 1')\n", [A("assert x == 2")], scan="block"))
    assert result.phase("scan")["status"] == "ok"
    assert result.tests()[0]["status"] == "pass"


def test_scan_off_is_skipped():
    scan = run(make_job("import socket\n", scan="off")).phase("scan")
    assert scan == dict(scan, status="skipped") and "findings" not in scan


def test_scan_dynamic_import_of_denied_name_blocks():
    code = "import importlib\nm = importlib.import_module('socket')\n"
    findings = run(make_job(code, scan="block")).phase("scan")["findings"]
    assert findings[0]["code"] == "denied-import" and findings[0]["line"] == 2


def test_scan_findings_are_capped():
    code = "".join("eval('%d')\n" % i for i in range(150))
    assert len(run(make_job(code)).phase("scan")["findings"]) == 100


def harness_namespace():
    """The harness module itself, for the scan's shortcut (its functions only: nothing runs)."""
    ns = {"__name__": "execeval_harness"}
    exec(drive.assemble.code(), ns)
    return ns


# Each a finding of the scan on its own, short and ASCII.
ONE_FINDING = ["import socket\n", "from os import system\n", "x = eval('1')\n", "exec('y = 2')\n",
               "m = __import__('json')\n", "open('out.txt', 'w')\n", "import builtins\nbuiltins.print = print\n",
               "globals()['z'] = 3\n", "vars()['z'] = 3\n", "__builtins__ = {}\n", "setattr(__builtins__, 'a', 1)\n",
               "delattr(__builtins__, 'a')\n", "__builtins__.update(a=1)\n", "compile('1', 'f', 'eval')\n",
               "import importlib\nimportlib.import_module('x')\n"]


def test_the_scan_is_skipped_only_where_it_cannot_find_anything():
    # The shortcut (no tree when _scan_may_find says so) must see every
    # name the scanner matches; nothing else about the records changes.
    ns = harness_namespace()
    tops = ns["_Policy"](DENY).tops
    may_find = lambda code: ns["_scan_may_find"](code, tops)  # noqa: E731
    assert not may_find(ADD) and not may_find("x = [i * 2 for i in range(3)]\nprint(x)\n")
    for code in ONE_FINDING:
        assert may_find(code), code
        assert run(make_job(code, scan="report")).phase("scan")["findings"], code
    names = set(ns["_DYNAMIC_CODE"] + ns["_DYNAMIC_IMPORT"] + ns["_OPEN"]) | {"setattr", "delattr", "globals",
                                                                              "vars", "__builtins__"}
    assert all(may_find("x = %s\n" % name) for name in names), names
    assert may_find("x = \uff45val('1')\n")  # fullwidth: the parser reads it as eval
    assert not may_find("x = 1\n" * 1000)  # length alone no longer sends a source to the tree
    # Plain imports of modules the deny list and the scanner leave alone need no tree...
    for code in ("from typing import List, Tuple\n", "import math\n", "import xml.dom as p, heapq  # x\n",
                 "from collections import (Counter, deque as dq)\n", "from itertools import *\n",
                 "def f():\n    import math\n    return math.pi\n", "s = 'evaluate the opening'\n",
                 "retrieval = 1\n"):
        assert not may_find(code), code
    # ...anything else that says import does, as do names the scanner knows.
    for code in ("import os\nos.system('x')\n", "from os import path\n", "import sys\n", "import io\n",
                 "import builtins as b\n", "from importlib import import_module\n", "x = 1; import math\n",
                 "if True: import math\n", "import math; math.pi\n", "from . import x\n",
                 "from math import (pi,\n e)\n", "import math, \\\n heapq\n", "m = __import__('math')\n",
                 "'''we import numbers'''\n", "from math import pi,\n", "import\n", "x = open\n",
                 "print(vars)\n", "import socketserver as sys, socket\n", "import caf\u00e9\n"):
        assert may_find(code), code


def scanned_findings(ns, code):
    """What the scanner finds in code (None when it does not parse)."""
    try:
        tree = compile(code, "<candidate>", "exec", ns["_ONLY_AST"], dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    import _ast
    return ns["_Scanner"](_ast, ns["_Policy"](DENY)).run(tree)


def dataset_programs():
    """HumanEval's prompts with their solutions, MBPP's references (trusted), where this machine has them."""
    out = []
    for base in (os.environ.get("EE_DATASETS", ""), "../shared/datasets", "/work/shared/datasets"):
        he, mbpp = os.path.join(base, "humaneval", "HumanEval.jsonl"), os.path.join(base, "mbpp", "mbpp.jsonl")
        if base and os.path.exists(he):
            out += [t["prompt"] + t["canonical_solution"] for t in map(json.loads, open(he))]
            if os.path.exists(mbpp):
                out += [t["code"] for t in map(json.loads, open(mbpp))]
            break
    return out


def test_a_source_the_shortcut_passes_has_no_findings():
    # Soundness of the shortcut over real programs, and over each of them
    # with one of the scanner's findings spliced in at every third line
    # start: whatever it waves through, the scanner itself finds nothing in.
    ns = harness_namespace()
    tops = ns["_Policy"](DENY).tops
    programs = dataset_programs() or [ADD]
    skipped = 0
    for program in programs:
        if not ns["_scan_may_find"](program, tops):
            skipped += 1
            assert scanned_findings(ns, program) in ([], None), program
    spliced = 0
    for finding in ONE_FINDING + ["import os\nos.system('x')\n", "from os import system as s\n"]:
        for split in [p.split("\n") for p in programs[::7]]:
            for at in range(0, len(split), 3):
                indent = split[at][:len(split[at]) - len(split[at].lstrip())]
                code = "\n".join(split[:at] + [indent + line for line in finding.splitlines()] + split[at:])
                if scanned_findings(ns, code):
                    spliced += 1
                    assert ns["_scan_may_find"](code, tops), code
    assert spliced > len(ONE_FINDING), "the spliced programs must hold findings"
    if len(programs) > 1:
        assert skipped > len(programs) // 2, "the shortcut should spare most real programs the tree"


def test_a_skipped_scan_reports_as_an_empty_one():
    for scan in ("report", "block"):
        result = run(make_job(ADD, [A("assert add(1, 2) == 3")], scan=scan))
        assert result.phase("scan") == dict(result.phase("scan"), status="ok", findings=[])
        assert result.tests()[0]["status"] == "pass"


def test_a_program_nested_too_deeply_for_the_tree_compiles_as_python_does():
    # Compiling through the tree fails past ~1,000 levels (RecursionError)
    # where compiling the source (python3 file.py) does not, up to ~3,000:
    # such a program compiles from its source, scanned all the same.
    deep = "def add(a, b):\n    return a + b\nx = " + "-" * 2000 + "1\n"
    with pytest.raises(RecursionError):
        compile(compile(deep, "<c>", "exec", 0x400), "<c>", "exec")
    for extra, findings in (("", []), ("y = eval('1')\n", ["dynamic-code"])):
        for scan in ("report", "block", "off"):
            result = run(make_job(extra + deep, [A("assert add(1, 2) == 3")], scan=scan))
            assert result.phase("syntax")["status"] == "ok", (extra, scan)
            if scan == "off":
                assert result.phase("scan")["status"] == "skipped"
            else:
                assert [f["code"] for f in result.phase("scan")["findings"]] == findings, (extra, scan)
            assert result.tests()[0]["status"] == "pass", (extra, scan)


# ---------------------------------------------------------------- canonical values

@pytest.mark.parametrize("expr, expected", [
    ("None", None),
    ("True", True),
    ("False", False),
    ("0", {"int": "0"}),
    ("-123", {"int": "-123"}),
    ("2 ** 100", {"int": str(2 ** 100)}),
    ("0.1", {"float": "0.1"}),
    ("float('nan')", {"float": "nan"}),
    ("float('inf')", {"float": "inf"}),
    ("-float('inf')", {"float": "-inf"}),
    ("-0.0", {"float": "-0.0"}),
    ("1e308 * 10", {"float": "inf"}),
    ("1e300 * 10", {"float": "1e+301"}),
    ("'text'", "text"),
    ("'\\u00e9\\U0001f600\\n\"\\\\\\x00'", "\u00e9\U0001f600\n\"\\\x00"),
    ("'\\ud800'", {"other": "str"}),
    ("[1, [2, 'a']]", {"list": [{"int": "1"}, {"list": [{"int": "2"}, "a"]}]}),
    ("(1, (2,))", {"tuple": [{"int": "1"}, {"tuple": [{"int": "2"}]}]}),
    ("[]", {"list": []}),
    ("()", {"tuple": []}),
    ("{'a': 1, 2: (None,)}", {"dict": [["a", {"int": "1"}], [{"int": "2"}, {"tuple": [None]}]]}),
    ("{}", {"dict": []}),
    ("{1, 2}", {"set": [{"int": "1"}, {"int": "2"}]}),
    ("frozenset()", {"frozenset": []}),
    ("{(1, 'a')}", {"set": [{"tuple": [{"int": "1"}, "a"]}]}),
    ("MySet({1})", {"set": [{"int": "1"}]}),
    ("b'x'", {"other": "bytes"}),
    ("1j", {"complex": ["0.0", "1.0"]}),
    ("complex(-0.0, float('nan'))", {"complex": ["-0.0", "nan"]}),
    ("[int, ValueError]", {"list": [{"type": "int"}, {"type": "ValueError"}]}),
    ("MyInt", {"other": "type"}),
    ("type('int', (), {})", {"other": "type"}),
    ("object()", {"other": "object"}),
    ("len", {"other": "builtin_function_or_method"}),
    # A subclass of a builtin type is its builtin value, read without its
    # code: MyInt's always-true __eq__ is never asked.
    ("MyInt(3)", {"int": "3"}),
    ("MyStr('a')", "a"),
    ("MyList([1])", {"list": [{"int": "1"}]}),
    ("MyDict(a=1)", {"dict": [["a", {"int": "1"}]]}),
    ("MyTuple((1,))", {"tuple": [{"int": "1"}]}),
    ("[MyInt(1)]", {"list": [{"int": "1"}]}),
    ("collections.namedtuple('P', 'x y')(1, 2)", {"tuple": [{"int": "1"}, {"int": "2"}]}),
    ("enum.IntEnum('C', 'A B').B", {"int": "2"}),
    ("enum.Enum('C', 'A B').B", {"other": "C"}),
])
def test_canonical_values(expr, expected):
    code = ("import collections, enum\nclass MyInt(int):\n    def __eq__(self, other):\n        return True\n"
            "class MyStr(str): pass\nclass MyList(list): pass\n"
            "class MyDict(dict): pass\nclass MyTuple(tuple): pass\nclass MySet(set): pass\n"
            "def f():\n    return " + expr + "\n")
    assert value_of(code) == expected


def test_canonical_big_int_past_the_str_digits_limit():
    v = value_of("def f():\n    return 7 ** 20000\n")
    assert v == {"int": str(7 ** 20000)} and len(v["int"]) > 4300


def test_canonical_limits_give_too_large():
    code = ("def deep():\n    x = []\n    for _ in range(150):\n        x = [x]\n    return x\n"
            "def wide():\n    return list(range(200000))\n"
            "def loop():\n    x = []\n    x.append(x)\n    return x\n"
            "def huge_int():\n    return 1 << 400000\n"
            "def huge_str():\n    return 'x' * 2000000\n"
            "def ok_deep():\n    x = []\n    for _ in range(50):\n        x = [x]\n    return x\n")
    names = ["deep", "wide", "loop", "huge_int", "huge_str", "ok_deep"]
    t = run(make_job(code, [call(n) for n in names])).tests()
    for i in range(5):
        assert t[i]["value"] == {"other": "too large"}, (names[i], t[i])
    assert "list" in t[5]["value"]


def test_call_arguments_keep_json_types():
    code = "def f(*args):\n    return [type(a).__name__ for a in args]\n"
    v = value_of(code, [1, 2], {"a": 1}, "s", 1.5, None, True, 10 ** 30)
    assert v == {"list": ["list", "dict", "str", "float", "NoneType", "bool", "int"]}


def test_call_of_missing_function_raises_name_error():
    t = run(make_job(ADD, [call("nope")])).tests()
    assert t[0]["status"] == "raised" and t[0]["error_type"] == "NameError"


def test_call_of_a_method_of_a_fresh_instance():
    code = ("class Solution:\n    made = 0\n    def __init__(self):\n        Solution.made += 1\n"
            "        self.n = Solution.made\n    def twice(self, x):\n        return [2 * x, self.n]\n")
    tests = [call("twice", 3, method_of="Solution"), call("twice", 4, method_of="Solution"),
             call("twice", 1, method_of="Nope"), call("missing", 1, method_of="Solution")]
    t = run(make_job(code, tests)).tests()
    assert t[0]["value"] == {"list": [{"int": "6"}, {"int": "1"}]}
    assert t[1]["value"] == {"list": [{"int": "8"}, {"int": "2"}]}  # one instance per test
    assert t[2]["status"] == "raised" and t[2]["error_type"] == "NameError"
    assert t[3]["status"] == "raised" and t[3]["error_type"] == "AttributeError"


def test_call_of_big_int_argument():
    assert value_of("def f(x):\n    return x + 1\n", 10 ** 5000) == {"int": str(10 ** 5000 + 1)}


# ---------------------------------------------------------------- io tests

ECHO = "import sys\ndata = sys.stdin.read()\nsys.stdout.write(data.upper())\n"


def test_io_stdin_and_stdout():
    t = run(make_job(ECHO, [io("hello\nworld\n"), io("")])).tests()
    assert t[0] == dict(t[0], status="returned", stdout="HELLO\nWORLD\n", exit_code=0)
    assert t[1]["stdout"] == ""


def test_io_large_stdin_does_not_deadlock():
    text = "abc\n" * 100000
    t = run(make_job(ECHO, [io(text)], io_output_cap=1 << 20)).tests()
    assert t[0]["stdout"] == text.upper()


@pytest.mark.parametrize("code, exit_code, stderr", [
    ("import sys\nprint('x')\nsys.exit(3)\n", 3, ""),
    ("import sys\nsys.exit()\n", 0, ""),
    ("import sys\nsys.exit('bye')\n", 1, "bye\n"),
    ("raise SystemExit(256 + 7)\n", 7, ""),
])
def test_io_exit_codes(code, exit_code, stderr):
    result = run(make_job(code, [io()]))
    t = result.tests()[0]
    assert t["status"] == "returned" and t["exit_code"] == exit_code
    assert result.stderr == stderr


def test_io_raised_goes_to_stderr_too():
    result = run(make_job("print('partial')\nx = int(input())\n", [io("nope\n")]))
    t = result.tests()[0]
    assert t["status"] == "raised" and t["error_type"] == "ValueError"
    assert "invalid literal" in t["message"] and "line 2" in t["message"]
    assert "ValueError: invalid literal" in result.stderr


def test_io_denied_import_is_reported():
    t = run(make_job("import socket\nprint(1)\n", [io()])).tests()[0]
    assert t["status"] == "raised" and t["denied"] == "socket"


def test_io_overflow():
    result = run(make_job("print('x' * 5000)\n", [io(), io()], io_output_cap=1000))
    t = result.tests()
    assert t[0] == {k: t[0][k] for k in ("ev", "index", "status", "seq", "nonce")}
    assert t[0]["status"] == "overflow" and t[1]["status"] == "overflow"


def test_io_exactly_at_cap_is_not_overflow():
    code = "import sys\nsys.stdout.write('y' * 1000)\n"
    t = run(make_job(code, [io()], io_output_cap=1000)).tests()
    assert t[0]["status"] == "returned" and len(t[0]["stdout"]) == 1000


def test_io_output_past_the_frame_limit_is_overflow():
    code = "import sys\nsys.stdout.write('\\x01' * 300000)\n"  # 6 bytes each once escaped
    t = run(make_job(code, [io()], io_output_cap=1 << 20)).tests()
    assert t[0]["status"] == "overflow"


def test_io_invalid_utf8_is_replaced():
    code = "import sys\nsys.stdout.buffer.write(b'ok\\xff\\n')\n"
    assert run(make_job(code, [io()])).tests()[0]["stdout"] == "ok\ufffd\n"


def test_io_runs_as_main_with_fresh_globals_and_atexit():
    code = ("import atexit, sys\ncount = globals().get('count', 0) + 1\n"
            "if __name__ == '__main__':\n    atexit.register(lambda: print('bye'))\n"
            "    print(__name__, count, sys.modules['__main__'].count)\n")
    result = run(make_job(code, [A("assert count == 1"), io(), io()]))
    t = result.tests()
    assert t[0]["status"] == "pass"
    assert t[1]["stdout"] == t[2]["stdout"] == "__main__ 1 1\nbye\n"


def test_io_after_candidate_closed_its_stdin():
    code = "import sys\nif __name__ != '__main__':\n    sys.stdin.close()\nelse:\n    print(input())\n"
    t = run(make_job(code, [A("assert True"), io("still here\n")])).tests()
    assert t[1]["stdout"] == "still here\n"


def test_io_stdin_without_memfd_uses_an_unnamed_file(tmp_path):
    source = drive.HARNESS.read_text().replace(
        '_memfd_create = getattr(_posix, "memfd_create", None)', "_memfd_create = None")
    assert "_memfd_create = None" in source
    result = run(make_job(ECHO, [io("abc\n")]), source=source, cwd=tmp_path)
    assert result.tests()[0]["stdout"] == "ABC\n"
    assert list(tmp_path.iterdir()) == []


def test_io_candidate_stdout_during_import_stays_on_fd1():
    code = "print('top')\n"
    result = run(make_job(code, [A("assert True"), io()]))
    assert result.stdout == "top\n"
    assert result.tests()[1]["stdout"] == "top\n"


# ---------------------------------------------------------------- unittest

def UT(body):
    return {"kind": "unittest", "code": "import unittest\nclass T(unittest.TestCase):\n" + body}


def test_unittest_variants():
    tests = [
        UT("    pass\n"),
        UT("    @unittest.skip('no')\n    def test_a(self): pass\n"),
        UT("    def test_a(self):\n        for i in range(3):\n            with self.subTest(i=i):\n"
           "                self.assertLess(i, 2)\n"),
        UT("    @classmethod\n    def setUpClass(cls):\n        raise RuntimeError('fixture')\n"
           "    def test_a(self): pass\n"),
        UT("    def test_a(self):\n        raise KeyError('k')\n"),
        UT("    @unittest.expectedFailure\n    def test_a(self):\n        self.fail('x')\n"),
        UT("    @unittest.expectedFailure\n    def test_a(self): pass\n"),
        {"kind": "unittest", "code": "from unittest import TestCase\n"
                                     "class A(TestCase):\n    def test_x(self): self.assertTrue(add)\n"
                                     "class B(TestCase):\n    def test_y(self): self.assertTrue(True)\n"},
    ]
    t = run(make_job(ADD, tests)).tests()
    assert t[0]["status"] == "fail" and t[0]["message"] == "no tests ran"
    assert t[1]["status"] == "fail" and t[1]["message"] == "no tests ran"
    assert t[2]["status"] == "fail" and "AssertionError: 2 not less than 2" in t[2]["message"]
    assert t[3]["status"] == "fail" and t[3]["error_type"] == "RuntimeError"
    assert t[4]["status"] == "fail" and t[4]["error_type"] == "KeyError"
    assert t[5]["status"] == "pass"
    assert t[6]["status"] == "fail" and t[6]["message"].startswith("unexpected success")
    assert t[7]["status"] == "pass"


def test_unittest_main_in_task_code_is_harmless():
    code = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
            "        self.assertEqual(add(1, 2), 3)\nunittest.main()\n")
    tests = [{"kind": "unittest", "code": code},
             A("import unittest\nassert unittest.main is unittest.TestProgram")]
    result = run(make_job(ADD, tests))
    t = result.tests()
    assert t[0]["status"] == "pass" and "exit" not in t[0] and t[1]["status"] == "pass"
    assert result.stderr == ""


def test_unittest_does_not_print_and_sees_candidate_names():
    result = run(make_job(ADD, [UT("    def test_a(self):\n        self.assertEqual(add(2, 2), 4)\n")]))
    assert result.tests()[0]["status"] == "pass"
    assert result.stdout == "" and result.stderr == ""


def test_unittest_classes_do_not_leak_into_candidate_globals():
    tests = [UT("    def test_a(self): pass\n"), A("assert 'T' not in globals()")]
    t = run(make_job(ADD, tests)).tests()
    assert t[0]["status"] == t[1]["status"] == "pass"


def test_unittest_denied_import():
    t = run(make_job(ADD, [UT("    def test_a(self):\n        import socket\n")])).tests()
    assert t[0]["status"] == "fail" and t[0]["denied"] == "socket"


# ---------------------------------------------------------------- gate

def gated_job():
    return make_job(ADD, [A("assert add(1, 1) == 2"), A("assert add(2, 2) == 4", visibility="hidden"),
                          call("add", 1, 1, visibility="hidden")], gate=True)


def test_gate_continue_runs_hidden_tests():
    result = run(gated_job(), gate="c")
    assert [e["ev"] for e in result.events] == [
        "hello", "phase", "phase", "phase", "test", "gate", "test", "test", "done"]
    assert set(result.tests()) == {0, 1, 2}


@pytest.mark.parametrize("answer", ["s", "eof"])
def test_gate_skip_or_eof_skips_hidden_tests(answer):
    result = run(gated_job(), gate=answer)
    assert [e["ev"] for e in result.events][-3:] == ["test", "gate", "done"]
    assert set(result.tests()) == {0}


def test_no_gate_runs_hidden_without_asking():
    job = gated_job()
    job["gate"] = False
    result = run(job, gate=None)
    assert "gate" not in [e["ev"] for e in result.events]
    assert set(result.tests()) == {0, 1, 2}


def test_gate_without_hidden_tests_is_not_asked():
    result = run(make_job(ADD, [A("assert True")], gate=True), gate=None)
    assert "gate" not in [e["ev"] for e in result.events]


# ---------------------------------------------------------------- exits

def test_sys_exit_at_import():
    result = run(make_job("import sys\nsys.exit(0)\n", [A("assert True")]))
    imp = result.phase("import")
    assert imp["status"] == "fail" and imp["exit"] is True and imp["error_type"] == "SystemExit"
    assert result.events[-1]["ev"] == "done" and result.tests() == {}


@pytest.mark.parametrize("test", [
    A("import sys\nsys.exit(0)"),
    A("raise KeyboardInterrupt"),
    A("exit()"),
    call("bye"),
    UT("    def test_a(self):\n        import sys\n        sys.exit(1)\n"),
])
def test_exit_in_a_test_ends_the_run(test):
    code = ADD + "def bye():\n    raise SystemExit(2)\n"
    result = run(make_job(code, [A("assert True"), test, A("assert True"), io()]))
    t = result.tests()
    assert set(t) == {0, 1}
    assert t[1]["exit"] is True and t[1]["status"] in ("fail", "raised")
    assert result.events[-2]["index"] == 1 and result.events[-1]["ev"] == "done"


def test_generator_exit_counts_as_exit():
    t = run(make_job(ADD, [A("raise GeneratorExit")])).tests()
    assert t[0]["exit"] is True


# ---------------------------------------------------------------- messages

def test_long_messages_are_truncated():
    t = run(make_job(ADD, [A("assert False, 'x' * 5000")])).tests()
    assert t[0]["message"].startswith("AssertionError: xxx") and len(t[0]["message"]) == 1000


def test_broken_str_of_an_exception():
    code = ("class E(Exception):\n    def __str__(self):\n        raise SystemExit('sneaky')\n"
            "class F(Exception):\n    def __str__(self):\n        return 42\n")
    t = run(make_job(code, [A("raise E()"), A("raise F()"), A("assert 1")])).tests()
    assert t[0]["status"] == "fail" and t[0]["message"].startswith("E: <unprintable E>")
    assert "exit" not in t[0]
    assert t[1]["message"].startswith("F: <unprintable F>")
    assert t[2]["status"] == "pass"


def test_unicode_and_control_characters_in_messages():
    t = run(make_job(ADD, [A("assert False, 'caf\\u00e9 \\x00 \\x01 \"q\" \\ud800'")])).tests()
    # NUL is spelled out: the supervisor's JSON parser refuses \u0000 in strings
    assert t[0]["message"].startswith('AssertionError: caf\u00e9 \\0 \x01 "q" ?')


def test_syntax_error_in_test_code():
    t = run(make_job(ADD, [A("assert add(1, 2) ==")])).tests()
    assert t[0]["status"] == "fail" and t[0]["error_type"] == "SyntaxError"
    assert "line 1" in t[0]["message"]


# ---------------------------------------------------------------- tampering (in-interpreter only)

TAMPER = """
import builtins, sys, atexit, signal, types, os
builtins.exec = lambda *a, **k: None
builtins.compile = lambda *a, **k: None
builtins.isinstance = lambda *a: True
builtins.issubclass = lambda *a: True
builtins.AssertionError = type('AssertionError', (Exception,), {})
builtins.BaseException = Exception
builtins.len = lambda x: 0
builtins.str = lambda *a: 'pass'
builtins.type = lambda *a: int
fake = types.ModuleType('json')
fake.dumps = lambda *a, **k: '{"ev":"test","status":"pass"}'
sys.modules['json'] = fake
sys.modules['json.encoder'] = fake
atexit.register(lambda: print('{"ev":"done","status":"pass"}'))
signal.signal(signal.SIGTERM, lambda *a: None)
os.write = lambda fd, data: len(data)
os._exit = lambda code: None
sys.exit = lambda *a: None
"""


def test_tampering_with_builtins_and_modules_changes_no_verdict():
    tests = [A("assert add(1, 2) == 4"), A("assert add(1, 2) == 3"), call("add", 1, 2),
             io(), UT("    def test_a(self):\n        self.assertEqual(add(1, 2), 4)\n")]
    result = run(make_job(ADD + TAMPER, tests))
    t = result.tests()
    assert t[0]["status"] == "fail"
    assert t[1]["status"] == "pass"
    assert t[2]["value"] == {"int": "3"}
    assert t[3]["status"] == "returned"
    assert t[4]["status"] == "fail"
    assert "done" not in result.stdout  # atexit handlers never ran in the harness process


def test_candidate_replacing_stdout_does_not_break_done():
    code = "import sys, io\nsys.stdout = io.StringIO()\nsys.stderr = None\nprint('hidden')\n"
    result = run(make_job(code, [A("assert True")]))
    assert result.tests()[0]["status"] == "pass" and result.stdout == ""


def test_candidate_output_is_flushed_before_exit():
    code = "print('a' * 10000)\nimport sys\nsys.stderr.write('err')\n"
    result = run(make_job(code, [A("print('from test')")]))
    assert result.stdout == "a" * 10000 + "\nfrom test\n" and result.stderr == "err"


def test_candidate_cannot_reach_the_nonce_via_main():
    code = "import __main__\nprint(repr(vars(__main__)))\n"
    job = make_job(code, [A("assert True")])
    result = run(job)
    assert result.tests()[0]["status"] == "pass"
    assert job["nonce"] not in result.stdout


def test_forked_candidate_child_does_not_repeat_events():
    code = ("import os\n"
            "def work():\n    pid = os.fork()\n    if pid:\n        os.waitpid(pid, 0)\n"
            "    return pid\n")
    result = run(make_job(code, [A("work()"), A("assert True")]))
    assert set(result.tests()) == {0, 1}


def test_closed_result_channel_is_a_harness_failure():
    result = drive.run(make_job("import os\nos.close(4)\n", [A("assert True")]))
    assert result.returncode == 70 and result.stderr.startswith("execeval harness: ")
    assert [e["ev"] for e in result.events] == ["hello", "phase", "phase"]


# ---------------------------------------------------------------- bad jobs

@pytest.mark.parametrize("job_bytes", [
    b"not json",
    b"[]",
    b'{"v": 2, "nonce": "n", "code": "", "tests": []}',
    b'{"v": 1, "code": "", "tests": []}',
    b'{"v": 1, "nonce": "n", "code": "", "tests": [{"index": 0, "kind": "bogus"}]}',
    b'{"v": 1, "nonce": "n", "code": "", "tests": [{"index": 0, "kind": "assert"}]}',
    b'{"v": 1, "nonce": "n", "code": "", "tests": [], "scan": "maybe"}',
    b'{"v": 1, "nonce": "n", "code": "", "tests": []} trailing',
    b'{"v": 1, "nonce": "n", "code": "", "tests": [], "deny_imports": [""]}',
    b"\xff\xfe",
    b"",
])
def test_bad_job_exits_70_without_events(job_bytes):
    result = drive.run(None, job_bytes=job_bytes)
    assert result.returncode == 70 and result.events == []
    assert result.stderr.startswith("execeval harness: ")


def test_minimal_job_uses_defaults():
    job = {"v": 1, "nonce": "n0", "code": ADD,
           "tests": [{"index": 7, "kind": "assert", "code": "assert add(1, 1) == 2"}]}
    result = run(job)
    assert result.tests()[7]["status"] == "pass"
    assert result.phase("scan")["status"] == "ok"


def test_frames_parse_strictly():
    job = make_job(ADD, [A("assert True")])
    raw = drive.run(job).raw
    assert drive.parse_netstrings(raw)
    for bad in (raw[:-1], b"01:{}," + raw, b"2:{}" + raw, b"x" + raw):
        with pytest.raises((drive.FrameError, json.JSONDecodeError)):
            drive.parse_netstrings(bad)


# ---------------------------------------------------------------------------
# Programs that are not valid UTF-8 arrive as code_b64 and are read as
# `python3 file.py` reads them.


def b64_job(raw, tests):
    import base64
    job = make_job("", tests)
    del job["code"]
    job["code_b64"] = base64.b64encode(raw).decode()
    return job


@pytest.mark.parametrize("raw, ok", [
    (b"# -*- coding: latin-1 -*-\ndef add(a, b):\n    return a + b  # caf\xe9\n", True),
    (b"#!/usr/bin/python3\n# vim: set fileencoding=latin-1 :\nx = '\xe9'\ndef add(a, b):\n    return a + b\n", True),
    (b"\xef\xbb\xbfdef add(a, b):\n    return a + b\n", True),
    (b"def add(a, b):\n    return a + b  # caf\xe9\n", False),   # invalid UTF-8 even in a comment
    (b"x = 1\n# coding: latin-1\ndef add(a, b):\n    return a + b  # \xe9\n", False),  # too late to declare
    (b"# coding: no-such-codec\ndef add(a, b):\n    return a + b\n", False),
])
def test_program_bytes_follow_python_file_rules(raw, ok):
    result = run(b64_job(raw, [A("assert add(1, 2) == 3")]))
    syntax = result.phase("syntax")
    assert (syntax["status"] == "ok") is ok, syntax
    if ok:
        assert result.tests()[0]["status"] == "pass"


# ------------------------------------------- hidden tests after the gate

def test_hidden_tests_arrive_only_after_the_gate_and_kinds_decide_the_import():
    # Every public test is io and a hidden one is not: the import runs, and
    # unittest is bound, although no hidden test is in the job.
    job = make_job(ADD, [io("1\n"), A("assert add(1, 1) == 2", visibility="hidden"),
                         {"kind": "unittest", "visibility": "hidden", "code":
                          "import unittest\nclass T(unittest.TestCase):\n"
                          "    def test_a(self): self.assertEqual(add(1, 2), 3)\n"}], gate=True)
    result = run(job, gate="c")
    phases = [e for e in result.events if e["ev"] == "phase" and e["name"] == "import"]
    assert phases[0]["status"] == "ok"
    assert [(e["index"], e["status"]) for e in result.events if e["ev"] == "test"][1:] == [
        (1, "pass"), (2, "pass")]


@pytest.mark.parametrize("frame", [b"c", b"c12:{\"tests\":[]}", b"c01:{},", b"cx:{},",
                                   b'c13:{"tests":[1]},', b'c13:{"tests":[]}.'])
def test_a_broken_hidden_tests_frame_is_a_harness_failure(frame):
    job = make_job(ADD, [A("assert True")], gate=True, hidden_kinds=["assert"])
    result = _run_with_gate_bytes(job, frame)
    assert result.returncode == 70, result
    assert result.stderr.startswith("execeval harness: "), result
    assert "done" not in [e["ev"] for e in result.events]


def _run_with_gate_bytes(job, raw):
    """The harness with `raw` written on the gate at the gate event, then EOF."""
    real = drive._split_hidden
    drive._split_hidden = lambda j: (j, raw[1:])
    try:
        return drive.run(job, gate="c", timeout=10)
    finally:
        drive._split_hidden = real


# ---- scripts apart (/run_code requests sharing a sandbox: apart.py) ----------

APART = {"files": {}, "fetch": [], "fetch_cap": 0, "apart": True, "timeout_ms": 5000}


def apart_io(stdin_len=0, **script):
    """An apart script's test: its stdin's length (the bytes come on the gate)."""
    return {"kind": "io", "stdin_len": stdin_len, "script": dict(APART, **script)}


def test_apart_scripts_refuse_to_run_outside_a_sandbox():
    """kill(-1) between two requests is for a sandbox's pid namespace: a
    harness that is not its first process (here, bare on the host) runs
    none of them and asks for each to run again alone."""
    marker = "/tmp/execeval-apart-ran-%d" % os.getpid()
    code = "open(%r, 'w').write('x')\nprint(input())\n" % marker
    job = make_job(code, [apart_io(1), apart_io(1)])
    events = list(run(job).tests().values())
    assert [e["apart"] for e in events] == [{"rerun": True}] * 2, events
    assert all(e["message"] == "not run: not a sandbox's first process" for e in events), events
    assert not os.path.exists(marker)


@pytest.mark.parametrize("script", [
    dict(APART, timeout_ms=0),  # no clock of its own
    dict(APART, files={"a.txt": "eA=="}),  # files: a request of its own
    dict(APART, fetch=["a.txt"]),
])
def test_an_apart_script_has_a_clock_and_no_files(script):
    result = drive.run(make_job("print(1)", [io("", script=script)]))
    assert result.returncode == 70, result
    assert "an apart script has a clock and no files" in result.stderr, result


@pytest.mark.parametrize("cpu_limit", [[5], [0, 6], ["5", 6], [5, 6, 7]])
def test_an_apart_scripts_cpu_limit_is_soft_and_hard_seconds(cpu_limit):
    result = drive.run(make_job("print(1)", [io("", script=dict(APART, cpu_limit=cpu_limit))]))
    assert result.returncode == 70, result
    assert "cpu_limit is [soft, hard] seconds" in result.stderr, result


@pytest.mark.parametrize("release_ms", [-1, "2000", 2.5])
def test_an_apart_scripts_release_is_whole_milliseconds(release_ms):
    result = drive.run(make_job("print(1)", [io("", script=dict(APART, release_ms=release_ms))]))
    assert result.returncode == 70, result
    assert "release_ms" in result.stderr, result


def test_an_apart_scripts_stdin_comes_on_the_gate():
    """Not in the job (every request's child copies the harness): its length only."""
    result = drive.run(make_job("print(1)", [io("a", script=APART)]))
    assert result.returncode == 70, result
    assert "an apart script's stdin comes on the gate" in result.stderr, result
    result = drive.run(make_job("print(1)", [apart_io(-1)]))
    assert result.returncode == 70, result
    assert "stdin_len is not negative" in result.stderr, result
