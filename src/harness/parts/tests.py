# --------------------------------------------------------------------------
# Tests.  Each runner returns (event, fallback) and never lets a candidate
# exception out.


class _Context:
    """What the test runners share: the candidate's namespace and the job's knobs."""

    __slots__ = ("globals", "policy", "code", "source", "io_cap", "channel_fds", "unittest")


def _test_event(test, status, start=None):
    event = {"ev": "test", "index": test["index"], "status": status}
    if start is not None:
        event["duration_ms"] = _ms(start)
    return event


def _run_assert(test, ctx, explain=False):
    """assert and program tests: the test's code runs in the candidate's
    globals (the judge's namespace under the separate judge, which passes
    explain: its failed `a == b` asserts say both values, judge.py)."""
    filename = "<test %d>" % test["index"]
    start = _now()
    try:
        if explain:
            code = _explained(test["code"], filename)
        else:
            code = compile(test["code"], filename, "exec", dont_inherit=True)
        exec(code, ctx.globals)
    except BaseException as exc:
        event = _test_event(test, "fail", start)
        event.update(_error_fields(exc, ctx.policy, filename, test["code"]))
        return event, None
    return _test_event(test, "pass", start), None


def _shadowing(entry_point):
    """mine(name): whether name is a builtin's that tests keep Python's of,
    whatever the candidate binds to it (def set(...), abs = ...): every
    builtin name but the task's entry point, which is the task's choice."""
    def mine(name):
        return name in _BUILTIN_NAMES and name != entry_point
    return mine


def _test_namespace(names, entry_point):
    """Where inline tests run: the candidate's globals, unless they bind a
    builtin's name or __builtins__; then a copy without those, whose
    builtins are Python's, so a test's `set` or `abs` is never the
    candidate's (its own functions still find its own)."""
    mine = _shadowing(entry_point)
    if dict.get(names, "__builtins__") is _builtins and not [n for n in names if type(n) is str and mine(n)]:
        return names
    out = {k: v for k, v in dict.items(names) if not (type(k) is str and mine(k))}
    out["__builtins__"] = _builtins
    return out


def _callee(ctx, name, builtins):
    """The candidate's global `name`; with builtins, as a Python expression
    would find it (the candidate's globals, then builtins); else _MISSING."""
    fn = ctx.globals.get(name, _MISSING)
    if fn is _MISSING and builtins:
        fn = _builtins.__dict__.get(name, _MISSING)
    return fn


def _call_target(test, ctx):
    """What a call test calls: the candidate's function, or with method_of
    the method of a fresh instance of that class (LeetCode's Solution().f)."""
    name = test.get("method_of") or test["fn"]
    fn = _callee(ctx, name, test["strict"])  # a strict assert finds builtins too
    if fn is _MISSING:
        raise NameError("name '%s' is not defined" % name)
    if test.get("method_of"):
        fn = getattr(fn(), test["fn"])
    return fn


class _TestTimeout(BaseException):
    """Raised into a call test whose own clock (--test-timeout) ran out."""


_alarm_armed = [False]


def _on_alarm(signum, frame):
    if _alarm_armed[0]:  # a late signal finds the clock disarmed: nothing
        raise _TestTimeout()


def _clocked_call(test, ctx, clock_ms):
    """The call under its own clock: SIGALRM raises _TestTimeout into it.
    A candidate that catches it, ignores the signal or resets the timer
    only runs on: the supervisor's clock then calls the test a timeout
    (events.c), or the wall clock the whole candidate."""
    _alarm_armed[0] = True
    try:
        _setitimer(_ITIMER_REAL, clock_ms / 1000.0)
        fn = _call_target(test, ctx)
        return fn(*test["args"], **test["kwargs"])
    finally:
        _alarm_armed[0] = False
        _setitimer(_ITIMER_REAL, 0)


# A calibrated call (limit_ms: --time-factor) runs to its end, so that a
# slow one is told from one that never ends, until one has gone over its
# limit: the verdict is then a timeout already, and the later ones stop
# at their limits so that the rest of the tests still fit in the clock.
_overran = [False]


def _call_clock_ms(test):
    """The call's own clock: its limit once a calibrated call overran, else --test-timeout's."""
    if test["limit_ms"]:
        return test["limit_ms"] if _overran[0] else 0
    return test["timeout_ms"]


def _run_call(test, ctx):
    """call tests: the function's return value, canonically serialised; its
    wall time (duration_ms) the call's alone."""
    clock_ms = _call_clock_ms(test)
    previous = _set_handler(_SIGALRM, _on_alarm) if clock_ms else None
    start = _now()
    try:
        if clock_ms:
            value = _clocked_call(test, ctx, clock_ms)
        else:
            fn = _call_target(test, ctx)
            value = fn(*test["args"], **test["kwargs"])
    except _TestTimeout:
        _overran[0] = _overran[0] or bool(test["limit_ms"])
        return _test_event(test, "timeout", start), None
    except BaseException as exc:
        event = _test_event(test, "raised", start)
        event.update(_error_fields(exc, ctx.policy, "<candidate>", ctx.source))
        return event, None
    finally:
        if previous is not None:  # the candidate's own handler, if it set one
            _set_handler(_SIGALRM, previous)
    event = _test_event(test, "returned", start)
    if test["limit_ms"] and event["duration_ms"] > test["limit_ms"]:
        _overran[0] = True
    event["value"] = _Raw(_canonical(value, test["strict"]))
    fallback = _test_event(test, "returned")
    fallback["value"] = _Raw(_TOO_LARGE)
    return event, fallback


def _run_calls(emit, test, ctx):
    """A check program under --strict-asserts: the entry point, looked up once
    as check(NAME) would, called with each argument list in order; one event
    per call.  After a returned value the supervisor, which alone holds the
    expected values, answers on the gate fd: c (it matched) for the next call,
    anything else to stop, as check() stops at its first failing assert.  An
    exception ends the test at that call.  False when a call tried to end the
    interpreter."""
    calls = test["calls"]
    fn = _callee(ctx, test["fn"], True)
    for number, (args, kwargs) in enumerate(calls):
        event = _test_event(test, "returned")
        event["call"] = number
        try:
            if fn is _MISSING:
                raise NameError("name '%s' is not defined" % test["fn"])
            value = fn(*args, **kwargs)
        except BaseException as exc:
            event["status"] = "raised"
            event.update(_error_fields(exc, ctx.policy, "<candidate>", ctx.source))
            emit(event)
            return not event.get("exit")
        event["value"] = _Raw(_canonical(value, True))
        fallback = dict(event)
        fallback["value"] = _Raw(_TOO_LARGE)
        emit(event, fallback)
        if number + 1 == len(calls):
            break
        try:
            answer = _gate_read(ctx.channel_fds[1], 1)
        except OSError:
            answer = b""
        if answer != b"c":
            break
    return True


class _UnittestKit:
    """unittest's classes, bound when it is imported (before candidate code)."""

    def __init__(self):
        import unittest

        self.module = unittest
        self.real_main = unittest.main
        self.TestCase = unittest.TestCase
        self.TestLoader = unittest.TestLoader
        self.TestSuite = unittest.TestSuite
        self.builtin_cases = (unittest.TestCase, unittest.FunctionTestCase)
        self.Result = _silent_result_class(unittest.TestResult)


def _silent_result_class(TestResult):
    """A result class on the real TestResult, built once unittest is imported."""

    class Result(TestResult):
        """Counts outcomes without printing; keeps the first problem."""

        def __init__(self):
            TestResult.__init__(self)
            self.problems = self.skips = 0
            self.first = None
            self.exited = False

        def problem(self, test, err):
            self.problems += 1
            if self.first is None:
                self.first = (test, err)
            if err is not None and issubclass(err[0], _EXIT_TYPES):
                self.exited = True

        def addError(self, test, err):
            self.problem(test, err)

        def addFailure(self, test, err):
            self.problem(test, err)

        def addUnexpectedSuccess(self, test):
            self.problem(test, None)

        def addSubTest(self, test, subtest, err):
            if err is not None:
                self.problem(subtest, err)

        def addSkip(self, test, reason):
            self.skips += 1

        def addExpectedFailure(self, test, err):
            pass

    return Result


def _no_main(*args, **kwargs):
    """Task code often ends with unittest.main(); _run_unittest does its job."""


def _run_unittest(test, ctx):
    """unittest tests: the TestCase classes the code defines, run silently in a
    namespace layered on the candidate's."""
    kit, filename = ctx.unittest, "<test %d>" % test["index"]
    start = _now()
    namespace = dict(ctx.globals)
    result = kit.Result()
    try:
        kit.module.main = _no_main
        try:
            exec(compile(test["code"], filename, "exec", dont_inherit=True), namespace)
        finally:
            kit.module.main = kit.real_main
        suite, loader = kit.TestSuite(), kit.TestLoader()
        for name, value in list(namespace.items()):
            if (issubclass(type(value), type) and issubclass(value, kit.TestCase)
                    and value not in kit.builtin_cases and ctx.globals.get(name) is not value):
                suite.addTests(loader.loadTestsFromTestCase(value))
        suite.run(result)
    except BaseException as exc:
        event = _test_event(test, "fail", start)
        event.update(_error_fields(exc, ctx.policy, filename, test["code"]))
        return event, None
    ran = result.testsRun - result.skips
    event = _test_event(test, "pass" if ran >= 1 and not result.problems else "fail", start)
    if event["status"] == "fail":
        event.update(_unittest_failure(result, ran, ctx.policy, filename, test["code"]))
    return event, None


def _unittest_failure(result, ran, policy, filename, source):
    """Event fields for a failed unittest test: counts and the first problem."""
    if not result.problems:
        return {"message": "no tests ran"}
    where, err = result.first
    try:
        # The test module's name, inline's or the separate judge's, is execeval's.
        where = str.replace(str.replace(str.__str__(where.id()), "__candidate__.", ""), "__judge__.", "")
    except BaseException:
        where = "?"
    if err is None:
        return {"message": _message("unexpected success: " + where)}
    fields = _error_fields(err[1], policy, filename, source)
    fields["message"] = _message("%d of %d failed; %s: %s" % (
        result.problems, ran, where, fields["message"]))
    if result.exited:
        fields["exit"] = True
    return fields


def _stdin_file(text):
    """An fd positioned at the start of `text`: a memfd, else an unnamed file in the cwd (/tmp)."""
    try:
        fd = _memfd_create("stdin", _posix.MFD_CLOEXEC)
    except (OSError, TypeError):
        fd = _open_fd(".", _posix.O_TMPFILE | _posix.O_RDWR | _posix.O_CLOEXEC, 0o600)
    data = str.encode(text, "utf-8", "replace")
    while data:
        data = data[_write(fd, data):]
    _lseek(fd, 0, 0)
    return fd


def _read_capped(fd, cap):
    """All of fd up to EOF, or None once more than `cap` bytes arrived."""
    chunks, total = [], 0
    while True:
        chunk = _read(fd, 65536)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > cap:
            return None
        chunks.append(chunk)


def _run_io(test, ctx):
    """io tests: the program runs as __main__ in a forked child; its stdout comes back here."""
    if "script" in test:
        return _run_script(test, ctx)
    _flush_std()
    stdin_fd = _stdin_file(test["stdin"])
    out_r, out_w = _pipe()
    trailer_r, trailer_w = _pipe()
    pid = _fork()
    if pid == 0:
        _io_child(ctx, stdin_fd, out_w, trailer_w, (out_r, trailer_r))
    for fd in (stdin_fd, out_w, trailer_w):
        _close(fd)
    wait = None
    try:
        if test["timeout_ms"]:
            stdout, wait = _collect_clocked(pid, out_r, ctx.io_cap, test["timeout_ms"])
        else:
            stdout = _read_capped(out_r, ctx.io_cap)
        if stdout is None:
            _kill_quietly(pid)
    finally:
        _close(out_r)
    if wait is None:
        wait = _waitpid(pid, 0)[1]
    trailer = _read_trailer(trailer_r)
    if stdout is _TIMED_OUT:
        return _test_event(test, "timeout"), None
    overflow = _test_event(test, "overflow")
    if stdout is None:
        return overflow, None
    event = _io_event(test, stdout, _exitcode(wait), trailer)
    return event, (overflow if event["status"] == "returned" else None)


def _io_event(test, stdout, exit_code, trailer):
    """The event of an io test that ran to its end: what it raised (its
    trailer says), else its stdout and exit code. A forked test's and an
    io runner's (iorunner.py) alike."""
    raised = _parse_trailer(trailer)
    if raised is not None:
        event = _test_event(test, "raised")
        event.update(raised)
        return event
    event = _test_event(test, "returned")
    event["stdout"] = bytes.decode(stdout, "utf-8", "replace")
    event["exit_code"] = exit_code
    return event


_TIMED_OUT = object()


def _kill_quietly(pid):
    try:
        _kill(pid, 9)
    except OSError:
        pass


def _collect_clocked(pid, out_r, cap, limit_ms):
    """An io child under its own clock (--test-timeout), which the child
    cannot touch: (stdout, wait status) once its stdout ended and it exited
    in time; (None, None) past the cap, as _read_capped's None (the caller
    kills it); (_TIMED_OUT, wait status) with the child killed when the
    clock ran out first."""
    deadline = _now() + limit_ms / 1000.0
    poller, sleeper = _poll(), _poll()
    poller.register(out_r, _POLLIN)
    chunks, total = [], 0
    while True:  # its stdout, to EOF
        left = deadline - _now()
        if left <= 0 or not poller.poll(int(left * 1000) + 1):
            break
        chunk = _read(out_r, 65536)
        if not chunk:
            break
        total += len(chunk)
        if total > cap:
            return None, None
        chunks.append(chunk)
    # Then its exit, which follows EOF at once (the kernel closes a dying
    # process's files just before it becomes a zombie), so a few yields
    # first; naps (an empty poll sleeps) for one that closed stdout and runs on.
    spins, nap = 0, 1
    while _now() < deadline:
        done, wait = _waitpid(pid, _WNOHANG)
        if done:
            return b"".join(chunks), wait
        spins += 1
        if spins < 200:
            _sched_yield()
        else:
            sleeper.poll(min(nap, max((deadline - _now()) * 1000, 0)))
            nap = min(nap * 2, 20)
    _kill_quietly(pid)
    return _TIMED_OUT, _waitpid(pid, 0)[1]


def _run_script(test, ctx):
    """An io test as a plain script (serve's /run_code): its files written
    into the cwd, then the program as __main__ in this process, the last
    thing it runs (no fork: the sandbox is the script's process, ~4 ms
    less), its stdout and stderr the sandbox's own (the supervisor keeps
    them, up to the output cap); its exit status and the files asked for
    reported.  A script that ends the process (os._exit, a signal) is
    reported by the supervisor from the process's own status."""
    script = test["script"]
    if script["apart"]:
        return _run_apart(test, ctx)
    for path, data in script["files"]:
        _write_file(path, data)
    cwd = _posix.getcwd()
    stdin_fd = _move_high(_stdin_file(test["stdin"]))
    _dup2(stdin_fd, 0)
    _close(stdin_fd)
    _reopen_std()
    status, trailer = _run_main(ctx)
    try:
        _posix.chdir(cwd)  # the files asked for are where the request put them
    except OSError:
        pass
    raised = _parse_trailer(trailer)
    event = _test_event(test, "returned" if raised is None else "raised")
    event.update(raised or {})
    event["stdout"] = ""
    event["exit_code"] = status
    event["files"] = _fetch_files(script)
    return event, None


def _write_file(path, data):
    """path (relative, checked) under the cwd, its directories made."""
    parts = str.split(path, "/")
    for i in range(1, len(parts)):
        try:
            _posix.mkdir("/".join(parts[:i]), 0o755)
        except FileExistsError:
            pass
    fd = _open_fd(path, _posix.O_WRONLY | _posix.O_CREAT | _posix.O_TRUNC | _posix.O_CLOEXEC, 0o644)
    try:
        while data:
            data = data[_write(fd, data):]
    finally:
        _close(fd)


def _fetch_files(script):
    """{path: base64} of the regular files asked for, whole, while their
    total stays under the cap; a missing or unreadable one is left out."""
    files, left = {}, script["fetch_cap"]
    for path in script["fetch"]:
        try:
            fd = _open_fd(path, _posix.O_RDONLY | _posix.O_NONBLOCK | _posix.O_CLOEXEC)
        except OSError:
            continue
        try:
            if _posix.fstat(fd).st_mode & 0o170000 != 0o100000:
                continue  # a regular file only: a FIFO would block, a device mislead
            data = _read_capped(fd, left)
        except OSError:
            continue
        finally:
            _close(fd)
        if data is None:
            break
        left -= len(data)
        files[path] = bytes.decode(script["b64"](data, newline=False), "ascii")
    return files


def _read_trailer(fd):
    """What the exited child left on its trailer pipe (closed here)."""
    _set_blocking(fd, False)
    try:
        trailer = _read(fd, 65536)
    except OSError:
        trailer = b""
    _close(fd)
    return trailer


def _parse_trailer(data):
    """The child's last trailer: {error_type, message[, denied]} or None."""
    i = bytes.rfind(data, _TRAILER)
    if i < 0:
        return None
    parts = bytes.split(data[i + len(_TRAILER):], b"\0", 2)
    if len(parts) != 3:
        return None
    denied, etype, message = [bytes.decode(p, "utf-8", "replace") for p in parts]
    fields = {"error_type": etype, "message": _message(message)}
    if denied:
        fields["denied"] = denied
    return fields


def _close_quietly(fd):
    try:
        _close(fd)
    except OSError:
        pass


def _move_high(fd):
    """The same file on an fd >= 10, the old number closed."""
    high = _fcntl(fd, _fcntl_module.F_DUPFD_CLOEXEC, 10)
    _close(fd)
    return high


def _io_child(ctx, stdin_fd, out_w, trailer_w, parent_fds):
    """The forked child of an io test: never returns."""
    status = 70
    try:
        # The candidate may have closed fd 0 or 1, so the pipes can sit there.
        # out_w None: a script's stdout is the sandbox's own.
        stdin_fd, out_w, trailer_w = [None if fd is None else _move_high(fd)
                                      for fd in (stdin_fd, out_w, trailer_w)]
        for fd in parent_fds + ctx.channel_fds:
            _close_quietly(fd)
        _dup2(stdin_fd, 0)
        _close(stdin_fd)
        if out_w is not None:
            _dup2(out_w, 1)
            _close(out_w)
        _reopen_std()
        status = _run_program(ctx, trailer_w)
    except BaseException as exc:
        _report_failure("io child: " + _type_name(type(exc)) + ": " + _text(exc))
    finally:
        _exit(status)


def _reopen_std():
    """Fresh sys.stdin/stdout/stderr on fds 0-2, encoded like the interpreter's own."""
    for fd, name, mode, buffering in ((0, "stdin", "r", -1), (1, "stdout", "w", -1),
                                      (2, "stderr", "w", 1)):
        model = _STREAMS[fd]
        stream = _io_open(fd, mode, buffering, getattr(model, "encoding", "utf-8"),
                          getattr(model, "errors", "strict"), closefd=False)
        setattr(_sys, name, stream)
        setattr(_sys, "__%s__" % name, stream)


def _run_program(ctx, trailer_w):
    """Run the candidate as a fresh __main__, as `python3 prog.py` would; the exit status."""
    status, trailer = _run_main(ctx)
    if trailer:
        _write(trailer_w, trailer)
    return status


def _run_main(ctx, in_runner=False):
    """The candidate as a fresh __main__: (exit status, trailer bytes).  In
    an io runner (iorunner.py) threading._shutdown() runs only when it has
    something to do: once run, threads cannot start in a later test."""
    module = _ModuleType("__main__")
    module.__builtins__ = _builtins
    _modules["__main__"] = module
    _atexit_clear()  # handlers the parent's import phase (or the last test) registered
    trailer = b""
    try:
        exec(ctx.code, module.__dict__)
        status = 0
    except SystemExit as exc:
        code = _exit_code(exc)
        if code is None or issubclass(type(code), int):
            status = 0 if code is None else int.__and__(code, 0xFF)
        else:
            _write(2, str.encode(_text(code) + "\n", "utf-8", "replace"))
            status = 1
    except BaseException as exc:
        fields = _error_fields(exc, ctx.policy, "<candidate>", ctx.source)
        _flush_std()  # what the program wrote comes first, as python3's own stderr has it
        data = str.encode(_traceback_text(exc, ctx.source, fields["message"] + "\n"), "utf-8", "replace")
        try:
            while data:
                data = data[_write(2, data):]
        except OSError:
            pass  # fd 2 closed by the program: python3 would print nothing either
        parts = [fields.get("denied", ""), fields["error_type"], fields["message"]]
        trailer = _TRAILER + str.encode("\0".join(parts), "utf-8", "replace")
        status = 1
    del module
    threading = _modules.get("threading")
    try:  # what interpreter exit does: join threads, atexit, flush
        if threading is not None and not (in_runner and _threads_quiet(threading)):
            threading._shutdown()
        _atexit_run()
    except BaseException:
        pass
    _flush_std()
    return status, trailer


_RUNNERS = {"assert": _run_assert, "program": _run_assert, "call": _run_call, "io": _run_io,
            "unittest": _run_unittest}


