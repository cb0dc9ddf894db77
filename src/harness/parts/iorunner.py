# --------------------------------------------------------------------------
# io tests, several to one forked child.
#
# A fork of the candidate's interpreter costs ~4 ms here (every page it
# touches is a fault), which was most of an io test's cost.  So a run of
# consecutive io tests goes to one forked child, the runner, which runs them
# in turn, each as a fresh __main__ on its own stdin (a memfd) and its own
# stdout pipe, read and capped here as _run_io does.  The runner goes on to
# the next test only while its process is as a fresh fork would find it
# (_unchanged: no thread, child, fork, extra or replaced fd, signal handler,
# mask, timer, cwd, tracer, ... left behind; sys settings put back); when it
# is not, or the test died, timed out, overflowed or its cleanup ran long,
# the next test gets a new runner forked from this process, which candidate
# code of an io test never touched.  The worst case is one fork per test.
#
# The runner tells this process on a status pipe, in order: "B" (the test's
# code starts; its fds are in place), "E" + exit status (1 byte) + trailer
# length (4 bytes, little-endian) + trailer (the test ended; its stdout is
# what reached the pipe before "E"), "F" before "E" instead of nothing when
# the test forked (its stdout then runs to EOF, as a forked child's does),
# "R" (cleaned up, unchanged: the next test may start).  Exiting instead of
# "R" means "give the next test a new runner".  The candidate can write on
# this pipe too; what it can forge is its own exit status, which it chooses
# anyway.

import gc as _gc_module

_gc_collect = _gc_module.collect
_gc_enable, _gc_isenabled = _gc_module.enable, _gc_module.isenabled
_gc_get_threshold, _gc_set_threshold = _gc_module.get_threshold, _gc_module.set_threshold
_listdir = _posix.listdir
_fstat = _posix.fstat
_getcwd = _posix.getcwd
_umask = _posix.umask
_register_at_fork = _posix.register_at_fork
_getsignal, _NSIG = _signal.getsignal, _signal.NSIG
_sigmask, _SIG_BLOCK = _signal.pthread_sigmask, _signal.SIG_BLOCK
_getitimer = _signal.getitimer
_TIMERS = (_signal.ITIMER_REAL, _signal.ITIMER_VIRTUAL, _signal.ITIMER_PROF)
_set_wakeup_fd = _signal.set_wakeup_fd
_getrecursionlimit, _setrecursionlimit = _sys.getrecursionlimit, _sys.setrecursionlimit
_gettrace, _getprofile = _sys.gettrace, _sys.getprofile
_SYS_HOOKS = ("excepthook", "displayhook", "unraisablehook", "breakpointhook")

_RUNNER_TESTS = 16  # tests per runner: each holds a pipe (2 fds) until its turn
# A runner's cleanup between two tests, at most, else a new runner; under
# --test-timeout less, within the supervisor's slack on each test's clock
# (events.c), which counts it.
_TIDY_S, _TIDY_CLOCKED_S = 0.5, 0.05
# A test that grew the process by more than this leaves it (freeing that
# much, object by object, can take longer than a new fork).
_GROWTH_PAGES = (64 << 20) // _posix.sysconf("SC_PAGE_SIZE")


def _run_io_tests(emit, tests, ctx):
    """Consecutive io tests (no script), one event each, in as few runners as
    their programs allow; a lone test (or no fds to spare) forks as _run_io."""
    i = 0
    while i < len(tests):
        done = _run_batch(emit, tests[i:i + _RUNNER_TESTS], ctx) if len(tests) - i > 1 else 0
        if not done:  # one test left, or a runner that could not start one
            event, fallback = _run_io(tests[i], ctx)
            emit(event, fallback)
            del event, fallback  # nor its output
            done = 1
        for test in tests[i:i + done]:
            test["stdin"] = None  # later runners and forks cannot find a judged test's input
        i += done


def _open_pipes(n):
    """Up to n stdout pipes, fewer when the fd limit is near."""
    pipes = []
    try:
        while len(pipes) < n:
            pipes.append(_pipe())
    except OSError:
        pass
    return pipes


class _Batch:
    """The parent's side of one runner: its pid, status pipe, and whether it was reaped."""

    __slots__ = ("pid", "status_r", "wait", "poller")

    def reap(self, kill):
        if self.wait is None:
            if kill:
                _kill_quietly(self.pid)
            self.wait = _waitpid(self.pid, 0)[1]
        return self.wait


def _run_batch(emit, tests, ctx):
    """One runner for tests (2 or more): how many of them got their event."""
    pipes = _open_pipes(len(tests))
    try:
        status_r, status_w = _pipe() if len(pipes) > 1 else (None, None)
    except OSError:
        status_r = None
    if status_r is None:
        for fd in [fd for pair in pipes for fd in pair]:
            _close(fd)
        return 0
    tests = tests[:len(pipes)]
    _flush_std()
    pid = _fork()
    if pid == 0:
        _runner(ctx, tests, pipes, status_w, status_r)
    for _, w in pipes:
        _close(w)
    _close(status_w)
    batch = _Batch()
    batch.pid, batch.status_r, batch.wait, batch.poller = pid, status_r, None, _poll()
    done = 0
    try:
        for k, test in enumerate(tests):
            tidy = _TIDY_CLOCKED_S if test["timeout_ms"] else _TIDY_S
            if k and _status_bytes(batch, 1, _now() + tidy) != b"R":
                break  # changed, died or slow in its cleanup: a new runner
            result = _collect_test(test, pipes[k][0], batch, ctx)
            if result is None:  # it stopped before this test began
                break
            emit(result[0], result[1])
            done += 1
            if batch.wait is not None:
                break
    finally:
        for r, _ in pipes:
            _close_quietly(r)
        _close(status_r)
        batch.reap(True)
    return done


def _status_bytes(batch, n, deadline):
    """n bytes of the status pipe; fewer at its EOF; _TIMED_OUT past the
    deadline (None: no deadline)."""
    data = b""
    batch.poller.register(batch.status_r, _POLLIN)
    try:
        while len(data) < n:
            if deadline is not None:
                left = deadline - _now()
                if left <= 0 or not batch.poller.poll(int(left * 1000) + 1):
                    return _TIMED_OUT
            chunk = _read(batch.status_r, n - len(data))
            if not chunk:
                break
            data += chunk
    finally:
        batch.poller.unregister(batch.status_r)
    return data


class _Output:
    """A test's stdout as it arrives, up to the cap."""

    __slots__ = ("fd", "chunks", "total", "cap", "eof")

    def __init__(self, fd, cap):
        self.fd, self.chunks, self.total, self.cap, self.eof = fd, [], 0, cap, False

    def take(self):
        """Read what is there; False once past the cap."""
        chunk = _read(self.fd, 65536)
        if not chunk:
            self.eof = True
            return True
        self.total += len(chunk)
        self.chunks.append(chunk)
        return self.total <= self.cap

    def drain(self):
        """What already reached the pipe, without waiting; False past the cap."""
        _set_blocking(self.fd, False)
        try:
            while not self.eof:
                if not self.take():
                    return False
        except BlockingIOError:
            pass
        finally:
            _set_blocking(self.fd, True)
        return True


def _until_status(batch, out, deadline):
    """Read stdout while waiting for the next status byte: the byte, b"" at
    EOF, _TIMED_OUT, or None past the output cap."""
    poller = _poll()
    poller.register(batch.status_r, _POLLIN)
    if not out.eof:
        poller.register(out.fd, _POLLIN)
    while True:
        wait = -1 if deadline is None else int(max(deadline - _now(), 0) * 1000) + 1
        if deadline is not None and deadline <= _now():
            return _TIMED_OUT
        ready = [fd for fd, _ in poller.poll(wait)]
        if out.fd in ready:
            if not out.take():
                return None
            if out.eof:
                poller.unregister(out.fd)
            continue
        if batch.status_r in ready:
            return _read(batch.status_r, 1)


def _collect_test(test, out_r, batch, ctx):
    """(event, fallback) of the runner's current test, reaping the runner
    when the test ended it; None when it exited before the test began."""
    deadline = _now() + test["timeout_ms"] / 1000.0 if test["timeout_ms"] else None
    out = _Output(out_r, ctx.io_cap)
    began = _until_status(batch, out, deadline)
    if began == b"":
        batch.reap(False)
        return None
    state = began if began in (None, _TIMED_OUT) else _until_status(batch, out, deadline)
    forked = state == b"F"
    if forked:
        state = _until_status(batch, out, deadline)
    if state is _TIMED_OUT:
        batch.reap(True)
        return _test_event(test, "timeout"), None
    overflow = _test_event(test, "overflow")
    if state is None or began != b"B" or not out.drain():
        batch.reap(True)
        return overflow, None
    if state != b"E":  # it died in the test (or wrote on the status pipe itself)
        if state:
            _kill_quietly(batch.pid)
        stdout = _rest_of_output(out, deadline)
        if stdout is _TIMED_OUT:
            batch.reap(True)
            return _test_event(test, "timeout"), None
        exit_code, trailer = _exitcode(batch.reap(False)), b""
    else:
        head = _status_bytes(batch, 5, deadline)
        if head is _TIMED_OUT or len(head) < 5 or int.from_bytes(head[1:], "little") > 65536:
            batch.reap(True)
            return (_test_event(test, "timeout"), None) if head is _TIMED_OUT else (overflow, None)
        trailer = _status_bytes(batch, int.from_bytes(head[1:], "little"), deadline)
        stdout = _rest_of_output(out, deadline) if forked else b"".join(out.chunks)
        if trailer is _TIMED_OUT or stdout is _TIMED_OUT:
            batch.reap(True)
            return _test_event(test, "timeout"), None
        exit_code = head[0]
    if stdout is None:
        batch.reap(True)
        return overflow, None
    return _io_event(test, stdout, exit_code, trailer), overflow


def _rest_of_output(out, deadline):
    """The test's stdout to EOF (its forked children may hold the pipe):
    bytes, None past the cap, _TIMED_OUT."""
    poller = _poll()
    poller.register(out.fd, _POLLIN)
    while not out.eof:
        if deadline is not None:
            left = deadline - _now()
            if left <= 0 or not poller.poll(int(left * 1000) + 1):
                return _TIMED_OUT
        if not out.take():
            return None
    return b"".join(out.chunks)


# ---- the runner (the forked child) -------------------------------------------


class _Snapshot:
    """What the runner's process looks like before its first test: each test
    must leave it so (or put back) for the next to run in this process."""

    def __init__(self, outs, status_w, null):
        self.pid = _getpid()
        self.forked = [False]
        _register_at_fork(after_in_parent=lambda: self.forked.__setitem__(0, True))
        self.fd_count = len(_listdir("/proc/self/fd"))  # one of them the listing's own
        self.ours = [status_w, null, 2]
        self.inodes = {fd: _inode(fd) for fd in outs + self.ours}
        self.cwd = _getcwd()
        self.umask = _umask(0o022)
        _umask(self.umask)
        self.handlers = [_getsignal(n) for n in range(1, _NSIG)]
        self.mask = _sigmask(_SIG_BLOCK, ())
        self.recursion, self.int_digits = _getrecursionlimit(), _get_int_digits()
        self.gc = (_gc_isenabled(), _gc_get_threshold())
        self.path, self.argv = list(_sys.path), list(_sys.argv)
        self.hooks = [getattr(_sys, name) for name in _SYS_HOOKS]
        self.builtins = dict(_builtins.__dict__)
        self.resource = "resource" in _modules
        self.environ = {_fsdecode(k): _fsdecode(v) for k, v in _posix.environ.items()}
        self.main = _modules.get("__main__")
        self.resident = _resident()


def _resident():
    """This process's resident pages, from /proc/self/statm."""
    fd = _open_fd("/proc/self/statm", _posix.O_RDONLY | _posix.O_CLOEXEC)
    try:
        return int(bytes.split(_read(fd, 200))[1])
    finally:
        _close(fd)


def _fsdecode(raw):
    return bytes.decode(raw, "utf-8", "surrogateescape") if type(raw) is bytes else raw


def _inode(fd):
    try:
        st = _fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _runner(ctx, tests, pipes, status_w, status_r):
    """The forked child that runs tests in turn: never returns."""
    status = 0  # what it exits with: the last test's, should its "E" not get through
    try:
        outs = [_move_high(w) for _, w in pipes]
        status_w = _move_high(status_w)
        for fd in [r for r, _ in pipes] + [status_r] + list(ctx.channel_fds):
            _close_quietly(fd)
        null = _move_high(_open_fd("/dev/null", _posix.O_RDWR | _posix.O_CLOEXEC))
        snap = _Snapshot(outs, status_w, null)
        for k, test in enumerate(tests):
            if k:
                if not _unchanged(snap, outs[k:], k):
                    break
                _write(status_w, b"R")
            stdin_fd = _move_high(_stdin_file(test["stdin"]))
            test["stdin"] = None  # the next tests cannot find it in this process
            files = (_inode(stdin_fd), snap.inodes[outs[k]])
            _dup2(stdin_fd, 0)
            _close(stdin_fd)
            _dup2(outs[k], 1)
            _close(outs[k])
            _reopen_std()
            _write(status_w, b"B")
            status, trailer = _run_main(ctx, True)
            if _getpid() != snap.pid:  # a child the test forked came back here
                _exit(status)
            _dup2(null, 1)  # the test's stdout ends here (and its stdin)
            _dup2(null, 0)
            copies = _null_copies(files, null)
            _write(status_w, (b"F" if snap.forked[0] else b"") + b"E" + bytes((status,))
                   + int.to_bytes(len(trailer), 4, "little") + trailer)
            if copies or len(_listdir("/proc/self/task")) != 1 or _resident() - snap.resident > _GROWTH_PAGES:
                break  # leave now, as a forked child would, with its threads
            _tidy(snap, null)
    except BaseException:
        pass  # before a test began: that test goes to a new runner or _run_io
    finally:
        _exit(status)


def _null_copies(files, null):
    """Point every other fd on the test's stdin or stdout (dups the candidate
    made) at /dev/null, so that nothing it buffered reaches the pipe after
    "E" nor a later test its stdin; how many there were."""
    copies = 0
    for name in _listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd != null and _inode(fd) in files:
            _dup2(null, fd)
            copies += 1
    return copies


def _tidy(snap, null):
    """After a test: what it left behind collected (its finalisers writing
    to /dev/null, as a forked child's never run), the settings a fresh fork
    would have put back."""
    _modules["__main__"] = snap.main
    stream = _io_open(null, "w", -1, "utf-8", "replace", closefd=False)
    for name in ("stdin", "stdout", "stderr"):
        setattr(_sys, name, stream)
        setattr(_sys, "__%s__" % name, stream)
    for name, hook in zip(_SYS_HOOKS, snap.hooks):
        setattr(_sys, name, hook)
    _gc_collect()
    _dup2(null, 0)  # a finaliser may have closed them
    _dup2(null, 1)
    _setrecursionlimit(snap.recursion)
    _set_int_digits(snap.int_digits)
    if not _gc_isenabled() and snap.gc[0]:
        _gc_enable()
    _gc_set_threshold(*snap.gc[1])
    _sys.path[:] = snap.path
    _sys.argv[:] = snap.argv
    if _builtins.__dict__ != snap.builtins:
        _builtins.__dict__.clear()
        _builtins.__dict__.update(snap.builtins)


def _unchanged(snap, outs, closed):
    """Whether the process is as the first test found it, for the next test
    (outs: the stdout pipes still to use; closed: how many were used)."""
    if snap.forked[0] or _gettrace() is not None or _getprofile() is not None:
        return False
    try:
        _waitpid(-1, _WNOHANG)
        return False  # a child of the test's, alive or not
    except ChildProcessError:
        pass
    if len(_listdir("/proc/self/task")) != 1:
        return False
    threading = _modules.get("threading")
    if threading is not None and not _threads_quiet(threading, True):
        return False
    if len(_listdir("/proc/self/fd")) != snap.fd_count - closed:
        return False
    if [_inode(fd) for fd in outs + snap.ours] != [snap.inodes[fd] for fd in outs + snap.ours]:
        return False
    mask = _umask(snap.umask)
    if mask != snap.umask or _getcwd() != snap.cwd or _sigmask(_SIG_BLOCK, ()) != snap.mask:
        return False
    if [_getsignal(n) for n in range(1, _NSIG)] != snap.handlers:
        return False
    if [t for t in _TIMERS if _getitimer(t) != (0.0, 0.0)]:
        return False
    wakeup = _set_wakeup_fd(-1)
    if wakeup != -1:
        _set_wakeup_fd(wakeup)
        return False
    if "resource" in _modules and not snap.resource:  # its limits may have changed
        return False
    os_module = _modules.get("os")
    if os_module is not None and dict(os_module.environ) != snap.environ:
        return False
    return True


def _threads_quiet(threading, after_shutdown=False):
    """No thread but this one, nothing for threading._shutdown() to join
    (the main thread's own lock aside) or call (nor, after_shutdown, has it
    run): skipping it changes nothing."""
    try:
        main = threading._main_thread
        others = [lock for lock in threading._shutdown_locks if lock is not main._tstate_lock]
        quiet = not (others or threading._threading_atexits)
        if after_shutdown:
            quiet = quiet and not main._is_stopped
    except AttributeError:  # another Python's threading: assume the worst
        return False
    return quiet and len(_listdir("/proc/self/task")) == 1
