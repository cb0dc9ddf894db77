# --------------------------------------------------------------------------
# Scripts apart: several /run_code requests of one program in one sandbox.
#
# serve gives the /run_code requests that wait with the same program and
# limits (and no files) one sandbox: the program is compiled once, and each
# request is a script test marked "apart" that runs in a forked process of
# its own, with its own stdin, stdout, stderr and clock, as SandboxFusion
# gives each request a process of its own.  Before the next one starts,
# nothing the last one did is left (_apart_clear): every other process of
# the sandbox is killed (kill(-1) spares the namespace's init and this
# process) and gone, zombies included (a child of this process made with
# clone(CLONE_PARENT) is reaped here); the working directory, /tmp (which
# is also /dev/shm), is emptied; the sandbox's network namespace holds no
# unix socket (an abstract name, or any socket kept alive in flight by an
# SCM_RIGHTS cycle: the kernel's collector is given a moment to end it);
# and what a process of the same uid may set on the two that remain, init
# and this one (rlimits through prlimit, nice, CPU affinity, signals left
# pending on init, which blocks them all), is as it was before the first
# request.  System V IPC, POSIX message queues, inotify, POSIX timers,
# FIFOs and key rings are not in the sandbox's system calls.  When any of
# that does not hold, the tests after it are not run.  A request's stdin
# comes on the gate only at its turn (the job has its length), spliced into
# a file of its own: no child finds another request's in its copy of this
# process's memory.
#
# Each test's event says what its program did ("apart": its stdout and
# stderr in base64, wall and CPU time, peak memory), or that serve must run
# it again in a sandbox of its own ("rerun"): when it was not run (also once
# the group has run past its release_ms: the rest then run side by side in
# sandboxes of their own instead of waiting here in turn), and when
# it ended in a way whose verdict the single sandbox decides (a signal,
# os._exit, output past the cap, a clock that ran out while it barely used
# the CPU), so that every answer is the one a sandbox of its own gives.
# The child can write on its own end pipe; what it can forge there is its
# own status, which it chooses anyway.

_wait4 = _posix.wait4
_splice = _posix.splice
_listdir, _lstat, _unlink, _rmdir, _chmod = (_posix.listdir, _posix.lstat, _posix.unlink,
                                             _posix.rmdir, _posix.chmod)
_APART_END = b"\0execeval:apart-end\0"
# Past this much base64 in one event (the supervisor's frame is 1 MiB) the
# test runs again alone, where the sandbox's own streams carry its output.
_APART_B64_MAX = 900 << 10
_WIPE_MAX = 4096  # entries under /tmp a test may leave: more, and the rest run alone
_REAP_WAIT_S = 0.2  # for the killed processes to be gone before the next test
# For the sockets a test left in the network namespace to be gone: a cycle
# in flight ends when the kernel's unix collector runs, 5-25 ms after a
# unix socket is released here (measured on 6.18); past this, the rest run alone.
_UNIX_GC_WAIT_S = 0.1
_WALL = 0x40000000  # __WALL: a clone child whose exit signal is not SIGCHLD too
# A child's streams quiet this long: has it exited (and left them to a process of its own)?
_QUIET_MS = 50
_sleep = _time.sleep


def _run_apart(test, ctx):
    """One script test in its own process; (event, None)."""
    if _apart_refusal[0] is None:
        _apart_refusal[0] = _apart_refuses()
        if not _apart_refusal[0]:
            _apart_outlivers[0] = _apart_outliver_first_state()
            if _apart_outlivers[0] is None:
                _apart_refusal[0] = "not run: what outlives a test cannot be read"
    if _apart_refusal[0]:
        return _apart_rerun(test, _apart_refusal[0]), None
    script = test["script"]
    if _apart_began[0] is None:
        _apart_began[0] = _now()
    elif script["release_ms"] and (_now() - _apart_began[0]) * 1000.0 > script["release_ms"]:
        # The group has run long (a slow or hanging program): the requests
        # left run in sandboxes of their own, side by side, not in turn here.
        return _apart_rerun(test, "not run: the group ran past its %d ms" % script["release_ms"]), None
    if script["cpu_limit"] and _apart_resource[0] is None:
        try:
            import resource  # once, here: each child lowers its CPU limit with it
        except ImportError:  # the import policy refused it: no child could get its own limit
            _apart_refusal[0] = "not run: the resource module cannot be imported"
            return _apart_rerun(test, _apart_refusal[0]), None
        _apart_resource[0] = resource
    _flush_std()
    stdin_fd = _apart_stdin_file(test["stdin_len"], ctx.channel_fds[1])
    if stdin_fd is None:
        _apart_refusal[0] = "not run: its stdin did not come"
        return _apart_rerun(test, _apart_refusal[0]), None
    out_r, out_w = _pipe()
    err_r, err_w = _pipe()
    end_r, end_w = _pipe()
    own = (stdin_fd, out_w, err_w, end_w)
    start = _now()
    try:
        streams = _apart_std_in_place(own[:3])
        closing = own[:3] + (out_r, err_r, end_r) + _apart_saved[0] + tuple(ctx.channel_fds)
        pid = _fork()
        if pid == 0:
            _apart_child(ctx, end_w, closing, streams, script["cpu_limit"])
    finally:
        _apart_std_back()
    for fd in own:
        _close(fd)
    try:
        event = _apart_collect(test, ctx, pid, (out_r, err_r, end_r), start, script["timeout_ms"])
    finally:
        for fd in (out_r, err_r, end_r):
            _close_quietly(fd)
    if not _apart_clear():
        _apart_refusal[0] = "not run: an earlier program's leftovers could not be cleared"
    return event, None


# Why the tests apart are not run here ("": they are; None: not asked yet).
_apart_refusal = [None]
_apart_began = [None]  # when the first of them started
_apart_outlivers = [None]  # init's and this process's settable state before the first
_apart_resource = [None]


def _apart_stdin_file(n, gate):
    """The next n bytes of the gate (this request's stdin) in a file of its
    own, at its start; None when the gate ended first.  Spliced: they never
    enter this process's memory, which every later child copies."""
    fd = _stdin_file("")
    while n > 0:
        moved = _splice(gate, fd, n)
        if not moved:
            _close(fd)
            return None
        n -= moved
    _lseek(fd, 0, 0)
    return fd


def _apart_refuses():
    """A dumpable process (an exec'd harness: cold isolation) is open to
    processes of its uid through /proc (its fds, its memory): its children
    must not run other requests' programs.  /proc/self of a non-dumpable
    one belongs to root.  And kill(-1) is for a sandbox's pid namespace,
    whose init (1) started this process (2), never for a host's."""
    if _getpid() != 2 or _posix.getppid() != 1:
        return "not run: not a sandbox's first process"
    try:
        if _stat("/proc/self/mem").st_uid == _posix.getuid():
            return "not run: this harness is dumpable"
    except OSError:
        return "not run: /proc/self/mem cannot be checked"
    return ""


def _apart_child(ctx, end_w, closing, streams, cpu_limit):
    """The forked child of one request: never returns.  Its fds 0-2 and the
    streams on them were made ready by the harness before the fork: each
    object a child makes writes pages of a new process, the dearest thing
    here (~190 page faults for the three streams)."""
    status = 70
    try:
        if cpu_limit:  # a sandbox of its own's (the group's is the sum of theirs)
            _apart_resource[0].setrlimit(_apart_resource[0].RLIMIT_CPU, tuple(cpu_limit))
        for fd in closing:
            _close(fd)
        _sys.stdin, _sys.stdout, _sys.stderr = streams
        _sys.__stdin__, _sys.__stdout__, _sys.__stderr__ = streams
        status, trailer = _run_main(ctx)
        _write(end_w, trailer + _APART_END + bytes((status,)))
    except BaseException as exc:
        _report_failure("apart child: " + _type_name(type(exc)) + ": " + _text(exc))
    finally:
        _exit(status)


# The harness's own fds 0-2 (copies, kept while a request's files stand in
# for them around a fork) and the streams made once on those files.
_apart_saved = [()]
_apart_streams = [None]


def _apart_std_in_place(fds):
    """A request's stdin, stdout and stderr on fds 0-2 of this process, for
    the fork; the streams a child takes on them.  Made once, on the first
    request's files: every request's are of the same kinds (a memfd at 0,
    two pipes), so what io.open learns of them (not a tty, seekable or not,
    block size) holds for all, and this process never uses them."""
    if not _apart_saved[0]:  # an error here (fd 0-2 closed) ends the group: the rest run alone
        _apart_saved[0] = tuple(_fcntl(fd, _fcntl_module.F_DUPFD_CLOEXEC, 10) for fd in (0, 1, 2))
    for fd, target in zip(fds, (0, 1, 2)):
        _dup2(fd, target)
    if _apart_streams[0] is None:
        made = []
        for fd, mode, buffering in ((0, "r", -1), (1, "w", -1), (2, "w", 1)):
            model = _STREAMS[fd]
            made.append(_io_open(fd, mode, buffering, getattr(model, "encoding", "utf-8"),
                                 getattr(model, "errors", "strict"), closefd=False))
        _apart_streams[0] = tuple(made)
    return _apart_streams[0]


def _apart_std_back():
    for fd, target in zip(_apart_saved[0], (0, 1, 2)):
        _dup2(fd, target)


def _apart_rerun(test, why):
    event = _test_event(test, "raised")
    event["message"] = why
    event["apart"] = {"rerun": True}
    return event


def _apart_collect(test, ctx, pid, fds, start, timeout_ms):
    """The child's streams and its exit, under its own clock: the event.
    Its exit ends the test, not the end of its streams: a process it left
    may hold them (it is killed before the next test, _apart_clear)."""
    deadline = start + timeout_ms / 1000.0
    poller = _poll()
    chunks = {fd: [] for fd in fds}
    for fd in fds:
        poller.register(fd, _POLLIN)
    open_fds, total, wait = set(fds), [0], None
    while wait is None and total[0] <= ctx.io_cap:
        left = deadline - _now()
        if left <= 0:
            break
        ready = poller.poll(min(int(left * 1000) + 1, _QUIET_MS)) if open_fds else ()
        for fd, _ in ready:
            _apart_take(fd, fds, chunks, poller, open_fds, total)
        if not ready or not open_fds:  # quiet, or all ended: has it exited?
            wait = _apart_reap(pid, deadline, bool(open_fds))
    timed_out = wait is None and total[0] <= ctx.io_cap
    if wait is None:
        _kill_quietly(pid)
        wait = _wait4(pid, 0)
    else:  # what reached its pipes before it ended, without waiting for more
        for fd in list(open_fds):
            _set_blocking(fd, False)
            try:
                while _apart_take(fd, fds, chunks, poller, open_fds, total):
                    pass
            except BlockingIOError:
                pass
    rusage = wait[2]
    facts = {"wall_ms": round((_now() - start) * 1000.0, 3),
             "cpu_ms": round((rusage.ru_utime + rusage.ru_stime) * 1000.0, 3), "rss_kb": rusage.ru_maxrss}
    if total[0] > ctx.io_cap:
        return _apart_rerun(test, "output past the cap: runs again alone")
    if timed_out:
        if facts["cpu_ms"] < 0.25 * facts["wall_ms"]:  # asleep or starved: the sandbox's clock decides
            return _apart_rerun(test, "timed out idle: runs again alone")
        facts["timeout"] = True
        return _apart_event(test, "timeout", chunks[fds[0]], chunks[fds[1]], facts)
    end, status = b"".join(chunks[fds[2]]), wait[1]
    i = bytes.rfind(end, _APART_END)
    if (i < 0 or len(end) != i + len(_APART_END) + 1 or not _posix.WIFEXITED(status)
            or _posix.WEXITSTATUS(status) != end[-1]):
        return _apart_rerun(test, "ended its process: runs again alone")
    raised = _parse_trailer(end[:i])
    event = _apart_event(test, "returned" if raised is None else "raised", chunks[fds[0]],
                         chunks[fds[1]], facts)
    if event["apart"].get("rerun"):
        return event
    event.update(raised or {})
    event["stdout"] = ""
    event["exit_code"] = end[-1]
    return event


def _apart_take(fd, fds, chunks, poller, open_fds, total):
    """One read of fd into chunks (stdout and stderr counted in total[0]):
    False at its end (then unregistered)."""
    chunk = _read(fd, 65536)
    if not chunk:
        poller.unregister(fd)
        open_fds.discard(fd)
        return False
    chunks[fd].append(chunk)
    if fd != fds[2]:
        total[0] += len(chunk)
    return True


def _apart_reap(pid, deadline, once):
    """wait4's answer once the child exited (once: only if it already has;
    else waiting for it until the deadline), else None.  Naps, no spin: the
    sandbox's one CPU is the exiting child's (its exit takes ~4 ms here)."""
    nap = 0.0005
    while _now() < deadline:
        done = _wait4(pid, _WNOHANG)
        if done[0]:
            return done
        if once:
            return None
        _sleep(min(nap, max(deadline - _now(), 0)))
        nap = min(nap * 2, 0.02)
    return None


def _apart_event(test, status, out, err, facts):
    b64 = _apart_b64()
    out_text = bytes.decode(b64(b"".join(out), newline=False), "ascii")
    err_text = bytes.decode(b64(b"".join(err), newline=False), "ascii")
    if len(out_text) + len(err_text) > _APART_B64_MAX:
        return _apart_rerun(test, "output too large to send: runs again alone")
    event = _test_event(test, status)
    facts["stdout"], facts["stderr"] = out_text, err_text
    event["apart"] = facts
    return event


def _apart_b64():
    import binascii  # built in, and imported by the job's parse already

    return binascii.b2a_base64


def _apart_clear():
    """Nothing of the last test left for the next (see the top of this
    part): True, else False (the tests after this one are then not run here)."""
    return (_apart_alone() and _apart_wiped() and _apart_no_unix_sockets()
            and _apart_outliver_state() == _apart_outlivers[0])


def _apart_alone():
    """Every other process of the sandbox killed and gone: no process but
    init and this one in /proc, zombies included (a zombie's name, exit
    status and counters are there to read; one that is this process's
    child is reaped here, the others by init)."""
    me = _getpid()
    limit = _now() + _REAP_WAIT_S
    while True:
        try:
            _kill(-1, 9)
        except ProcessLookupError:  # none but init and this one, zombies included: no scan
            return True
        except OSError:
            return False
        _apart_reap_children()
        if not [n for n in _listdir("/proc") if str.isdigit(n) and int(n) not in (1, me)]:
            return True
        if _now() > limit:
            return False
        _sleep(0.0005)


def _apart_reap_children():
    while True:
        try:
            if not _wait4(-1, _WNOHANG | _WALL)[0]:
                return
        except ChildProcessError:
            return


def _apart_wiped():
    """/tmp empty (at most _WIPE_MAX entries removed)."""
    left = [_WIPE_MAX]
    try:
        names = _listdir("/tmp")
        for name in names:
            _apart_remove("/tmp/" + name, left)
        return not names or not _listdir("/tmp")
    except (OSError, _ApartTooMany):
        return False


def _apart_unix_sockets():
    """How many unix sockets the sandbox's network namespace holds (its
    /proc/net/unix: bound, unbound and in flight), -1 when unreadable.
    This process owns none; the worker's were made in the supervisor's."""
    try:
        fd = _open_fd("/proc/net/unix", _posix.O_RDONLY | _posix.O_CLOEXEC)
    except OSError:
        return -1
    try:
        text = _read(fd, 512)  # a header line alone is 59 bytes
    except OSError:
        return -1
    finally:
        _close(fd)
    return bytes.count(text, b"\n") - 1 if bytes.endswith(text, b"\n") else -1


def _apart_no_unix_sockets():
    """True when no unix socket is left, within _UNIX_GC_WAIT_S.  Once all
    other processes are gone, a socket left is one in flight, held by a
    descriptor cycle (a socket sent over itself, a pair sending each other):
    its name, abstract or a path's, still answers connect and bind
    (EADDRINUSE), one bit at least.  Only the kernel's collector ends it,
    and it runs when a unix socket is released while descriptors are in
    flight: this process releases one."""
    count = _apart_unix_sockets()
    if count == 0:
        return True
    if count < 0:
        return False
    _apart_unix_gc_kick()
    limit = _now() + _UNIX_GC_WAIT_S
    nap = 0.0005
    while _now() < limit:
        _sleep(nap)
        nap = min(nap * 2, 0.005)
        if _apart_unix_sockets() == 0:
            return True
    return False


def _apart_unix_gc_kick():
    """The warm worker's C helper (zygote_native.c; apart tests run only
    there): the deny list names _socket, so this process imports no socket
    module.  Without it, the wait is for another release to run it."""
    kick = globals().get("_c_unix_gc_kick")
    if kick is not None:
        kick()


def _apart_outliver_first_state():
    """The state to compare with after each test.  The kernel sends init a
    SIGCHLD whenever an orphan it adopted dies, an honest program's left
    child too; init blocks it, so it stays pending, one sticky bit: made
    pending here first, it can carry nothing."""
    try:
        _kill(1, _signal.SIGCHLD)
    except OSError:
        return None
    return _apart_outliver_state()


def _apart_outliver_state():
    """What a process of the sandbox's uid can set on init (1) and this
    process, the two a test leaves, for a later test to read or inherit:
    rlimits (prlimit lowers them: /proc/PID/limits), nice, CPU affinity,
    pending signals (init blocks them all: kill queues them there, to be
    read in /proc/1/status).  None when something cannot be read (never
    equal to the first state then, which was read)."""
    state = []
    try:
        for pid in (1, _getpid()):
            state.append(_apart_read_all("/proc/%d/limits" % pid))
            status = _apart_read_all("/proc/%d/status" % pid)
            state.append([line for line in bytes.split(status, b"\n")
                          if bytes.startswith(line, (b"SigQ", b"SigPnd", b"ShdPnd"))])
            state.append(_posix.getpriority(_posix.PRIO_PROCESS, pid))
            state.append(_posix.sched_getaffinity(pid))
    except OSError:
        return None
    return state


def _apart_read_all(path):
    fd = _open_fd(path, _posix.O_RDONLY | _posix.O_CLOEXEC)
    try:
        chunks = []
        while True:
            chunk = _read(fd, 4096)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        _close(fd)


class _ApartTooMany(Exception):
    pass


def _apart_remove(path, left):
    """path and everything under it, at most left[0] entries in all."""
    left[0] -= 1
    if left[0] < 0:
        raise _ApartTooMany()
    st = _lstat(path)
    if st.st_mode & 0o170000 != 0o040000:
        _unlink(path)
        return
    if st.st_mode & 0o700 != 0o700:
        _chmod(path, 0o700)
    for name in _listdir(path):
        _apart_remove(path + "/" + name, left)
    _rmdir(path)
