"""execeval harness: runs one candidate program and its tests inside the sandbox.

Theory of operation
-------------------
The supervisor (trusted C) starts `/usr/bin/python3 -I -S -B -c <this file>`,
or a build-time pyc of it as /proc/self/fd/6, with fd 0 = /dev/null, 1/2 =
the candidate's stdout/stderr, 3 = the job (JSON), 4 = the result channel,
5 = the gate.  docs/protocol.md is the contract: the job's fields, the
netstring events, the canonical values.

Phases, in order, each one event: syntax (compile), scan (AST lint), lint
(only with --lint: lint.py, sent in the job, before any candidate code), import
(the candidate's top level, then the task's setup, in one namespace), the
public tests, the gate, the hidden tests, done.  The job holds the public
tests only: the hidden ones arrive on the gate fd when the gate opens (a
netstring after its "c"), so the candidate's process never holds one at
import, during the public phase, or at all when the gate stays shut.
assert/program/unittest tests run in the candidate's namespace, one
try/except each; call tests return a canonical value the supervisor
compares; io tests run the program as __main__ in a forked child with the
test's stdin and a capped stdout pipe.

The candidate runs in this interpreter, so a determined one can reach
anything here; the harness defeats the crude tricks:

* Everything it calls once candidate code has started is bound before: the
  functions below resolve builtins through a private snapshot (CPython binds a
  function's builtins when the function is created), module functions are
  bound to private names at definition time, and events are written by our
  own JSON encoder.  Rebinding builtins.isinstance, os.write or
  sys.modules['json'] changes nothing here.
* The nonce and the sequence number live only in the event writer's closure,
  and sys.modules['__main__'] is swapped for an empty module, so
  `import __main__` does not hand out these globals.
* Candidate code always runs under `except BaseException`.  An attempt to end
  the interpreter (SystemExit, KeyboardInterrupt, GeneratorExit) is reported
  with "exit": true and followed by "done"; after "done" the process leaves
  through posix._exit(0), so no atexit handler or finaliser runs after it.
* Denied imports are a policy on the candidate's own imports, not the
  security boundary: the kernel refuses network, process and privilege
  operations whoever asks.  An import of a denied module (or a submodule) is
  refused when the code asking is the candidate's, the setup's or a test's
  (what the harness compiled), or code the candidate built from strings; it
  is let through when an installed module asks for its own use (pathlib
  imports urllib.parse, asyncio and email.utils socket, tempfile shutil).
  The asker is the first frame outward from the import that is not the
  import system's (importlib._bootstrap*, importlib.import_module, the
  wrappers below); "installed" means a frozen stdlib module or a regular
  file under sys.prefix/sys.base_prefix or the dist-packages directories.
  A finder at sys.meta_path[0] refuses modules not loaded yet; since
  sys.modules answers before any finder, builtins.__import__ and
  importlib.import_module are wrapped to refuse loaded ones too (urllib.parse
  after `import pathlib`).  Denied attributes (os.system) are replaced with
  stubs, for every caller, as their modules load.  A determined candidate
  gets around all of this: through a stdlib module's attribute
  (asyncio.base_events.socket), a stdlib function that imports on its
  behalf, code compiled under an installed file's name, or by removing the
  finder or the wrappers.  A failure is reported as a denial when an
  exception saying "denied: <name>" lies along its __cause__/__context__
  chain.

Speed: the harness imports almost nothing: posix rather than os, the C
scanner of _json rather than json (which pulls in re: ~12 ms), _ast rather
than ast (enum, contextlib, ...: ~5 ms; one parse gives the tree and, compiled,
the code; no tree at all when the scan cannot find anything: _scan_may_find),
unittest only for unittest tests.  Its run costs about 3 ms on a
one-assert job: 1.2 ms of it is the first compile(), which builds the AST
types whatever it compiles, 0.3-0.5 ms loading _json's shared library,
0.4 ms defining this module, 0.1-0.2 ms a phase.  Compiling this source on a cold start costs more
(about 15 ms), which the supervisor's build-time pyc or a warm interpreter
removes: run_job() is the entry point such an interpreter calls once per
forked child.
"""

import _collections
import _imp
import _io
import _signal
import atexit as _atexit
import builtins as _builtins
import fcntl as _fcntl_module
import posix as _posix
import select as _select_module
import sys as _sys
import time as _time

# Every function defined below looks builtins up in this private copy.
__builtins__ = dict(_builtins.__dict__)

_write = _posix.write
_read = _posix.read
_close = _posix.close
_dup2 = _posix.dup2
_fcntl = _fcntl_module.fcntl
_pipe = _posix.pipe
_fork = _posix.fork
_getpid = _posix.getpid
_kill = _posix.kill
_waitpid = _posix.waitpid
# --test-timeout (tests.py): an io test's clock, a call test's
_poll, _POLLIN, _WNOHANG = _select_module.poll, _select_module.POLLIN, _posix.WNOHANG
_sched_yield = _posix.sched_yield
_setitimer, _ITIMER_REAL = _signal.setitimer, _signal.ITIMER_REAL
_set_handler, _SIGALRM = _signal.signal, _signal.SIGALRM
_exitcode = _posix.waitstatus_to_exitcode
_exit = _posix._exit
_set_blocking = _posix.set_blocking
_lseek = _posix.lseek
_memfd_create = getattr(_posix, "memfd_create", None)
_open_fd = _posix.open
_stat = _posix.stat
_now = _time.perf_counter
_modules = _sys.modules
_meta_path = _sys.meta_path
_getframe = _sys._getframe
_is_frozen = _imp.is_frozen
_resolve_name = _sys.modules["_frozen_importlib"]._resolve_name
_real_import = _builtins.__import__
_get_int_digits = _sys.get_int_max_str_digits
_set_int_digits = _sys.set_int_max_str_digits
_ModuleType = type(_sys)
_io_open = _io.open
_STREAMS = (_sys.stdin, _sys.stdout, _sys.stderr)
_atexit_clear = _atexit._clear
_atexit_run = _atexit._run_exitfuncs

# Descriptors read exceptions and types without running a subclass's code.
_exc_args = BaseException.args.__get__
_exc_cause = BaseException.__cause__.__get__
_exc_context = BaseException.__context__.__get__
_exc_traceback = BaseException.__traceback__.__get__
_exit_code = SystemExit.code.__get__
_type_name = type.__dict__["__name__"].__get__
_type_mro = type.__dict__["__mro__"].__get__
_dict_len = dict.__len__
_ORDERED_DICT = _collections.OrderedDict
_DEFAULT_DICT = _collections.defaultdict

_PYTHON = "%d.%d.%d" % _sys.version_info[:3]
_EXIT_TYPES = (SystemExit, KeyboardInterrupt, GeneratorExit)
_SYNTAX_TYPES = (SyntaxError, IndentationError, TabError)
_MAX_FRAME = 1 << 20
_MAX_MESSAGE = 1000
_MAX_FINDINGS = 100
_MAX_DEPTH = 100
_MAX_NODES = 100_000
_MAX_INT_BITS = 332_200  # ~100,000 digits; str() of more takes seconds
_MAX_VALUE_CHARS = 1_000_000
_TOO_LARGE = '{"other":"too large"}'
_ONLY_AST = 0x400  # ast.PyCF_ONLY_AST, without importing ast
_TRAILER = b"\0execeval-io-trailer\0"
_MISSING = object()


class _HarnessError(Exception):
    """The harness cannot go on (bad job, unencodable event): exit 70."""


