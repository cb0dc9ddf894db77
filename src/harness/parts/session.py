# --------------------------------------------------------------------------
# Sessions (job role "session": engine/session.c, docs/protocol.md
# "Sessions"): a live interpreter that keeps its state from cell to cell.
#
# Three kinds of process, all inside the session's one sandbox, as its uid:
# - the keeper (this process, the sandbox's pid 2) runs no code of the
#   agent's. It alone holds the result channel and the gate; it passes
#   each cell to the state, forwards the cell's output, ends a cell when
#   the supervisor says so (the supervisor keeps every clock) and puts
#   /tmp back after a cell that did not answer.
# - the state holds the session's globals and runs no cell itself: it
#   forks one process per cell and waits.
# - the cell runs the code. When it answers (a value, or an exception: as
#   in Jupyter, what it did before raising stays), it becomes the state and
#   the old state exits. When it ends without answering (killed at the
#   timeout or the output cap, the memory limit, os._exit, a signal), the
#   keeper kills every process but the state, restores /tmp, and the old
#   state goes on: the cell never happened ("rolled_back").
# The state and the cells are the agent's: whatever they do harms only
# their own session's answers, never the keeper's framing (the supervisor
# checks it) nor a clock or a limit (the supervisor's and the cgroup's).

_SESSION_MAX_CODE = 1 << 20        # a cell's code and its stdin, each
_SESSION_MAX_MESSAGE = 8 << 20     # one message between state, cell and keeper
_SESSION_MAX_RESULT = 64 << 10     # chars of a trailing expression's repr
_SESSION_OUT_CHUNK = 64 << 10      # bytes of output per event
_SESSION_TMP_SNAPSHOT = 16 << 20   # /tmp bytes a rollback can put back
_SESSION_FETCH_MAX = 1 << 20       # bytes of one file read back after a cell
_SESSION_STATE_GRACE_S = 5.0       # the state's report after its cell was killed


def _session_job(raw):
    """Role "session": the checked fields of the job."""
    deny = _field(raw, "deny_imports", list, [])
    preload = _field(raw, "preload", list, [])
    if [n for n in deny + preload if type(n) is not str or not n]:
        raise _HarnessError("job: deny_imports and preload hold module names")
    files = _field(raw, "files", dict, {})
    if [p for p, b in dict.items(files) if not _relative_path(p) or type(b) is not str]:
        raise _HarnessError("job: bad session file")
    cap = _field(raw, "output_cap", int, 262144)
    if cap <= 0:
        raise _HarnessError("job: output_cap must be > 0")
    return {"role": "session", "nonce": _field(raw, "nonce", str), "deny": deny, "preload": preload,
            "files": files, "output_cap": cap}


def _frame(obj):
    data = str.encode(_encode(obj), "utf-8", "surrogatepass")
    return b"%d:%b," % (len(data), data)


def _write_all(fd, data):
    while data:
        data = data[_write(fd, data):]


class _Frames:
    """Netstring frames from a pipe, buffered; `next()` -> dict, None for
    "need more", and a _HarnessError for a broken stream."""

    def __init__(self, fd, cap):
        self.fd, self.cap, self.buf, self.eof = fd, cap, b"", False

    def fill(self):
        chunk = _read(self.fd, 1 << 16)
        if not chunk:
            self.eof = True
        self.buf += chunk
        if len(self.buf) > self.cap + 16:
            raise _HarnessError("a session message over its cap")

    def next(self):
        digits, colon, rest = bytes.partition(self.buf, b":")
        if not colon:
            if len(digits) > 12:
                raise _HarnessError("bad session frame")
            return None
        if not digits or not _DIGITS.issuperset(digits) or int(digits) > self.cap:
            raise _HarnessError("bad session frame")
        need = int(digits)
        if len(rest) < need + 1:
            return None
        if rest[need] != 44:  # ","
            raise _HarnessError("bad session frame")
        self.buf = rest[need + 1:]
        value = _json_loads(bytes.decode(rest[:need], "utf-8", "surrogatepass"))
        if type(value) is not dict:
            raise _HarnessError("a session message is not an object")
        return value

    def read(self):
        """Blocking: the next frame, None at EOF."""
        while True:
            msg = self.next()
            if msg is not None:
                return msg
            if self.eof:
                return None
            self.fill()


# ---- the cell --------------------------------------------------------------


def _cell_traceback(exc, own):
    """Python's traceback of exc without the harness's frames (each part
    is compiled under its path, own's directory: the import policy's, say)."""
    import traceback
    parts = str.rpartition(own, "/")[0] + "/"
    top = te = traceback.TracebackException(type(exc), exc, _exc_traceback(exc))
    for _ in range(16):  # the chained exceptions too
        if te is None:
            break
        te.stack = traceback.StackSummary.from_list(
            [f for f in te.stack if not str.startswith(f.filename, parts)])
        te = te.__cause__ or te.__context__
    return str.join("", list(top.format()))


def _run_cell(msg):
    """Runs one cell in the session's __main__: its answer (a dict)."""
    import ast
    import linecache
    name = "<cell-%d>" % msg["n"]
    code = msg["code"]
    linecache.cache[name] = (len(code), None, str.splitlines(code, True), name)
    ns = _modules["__main__"].__dict__
    answer = {"status": "ok", "result": None, "error": None}
    try:
        tree = compile(code, name, "exec", _ONLY_AST, dont_inherit=True)
        last = None
        if tree.body and type(tree.body[-1]) is ast.Expr:
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, name, "exec", dont_inherit=True), ns)
        if last is not None:
            value = eval(compile(last, name, "eval", dont_inherit=True), ns)
            if value is not None:
                text = repr(value)
                if type(text) is not str:
                    text = "<repr did not return a str>"
                if len(text) > _SESSION_MAX_RESULT:
                    text = text[:_SESSION_MAX_RESULT] + "... (%d chars)" % len(text)
                answer["result"] = str.encode(text, "utf-8", "replace").decode("utf-8")
    except BaseException as exc:  # an exception is an answer, SystemExit too
        answer["status"] = "error"
        try:
            message = _text(exc)
        except BaseException:
            message = "<unprintable>"
        answer["error"] = {"type": _type_name(type(exc)), "message": message[:_MAX_MESSAGE * 8],
                           "traceback": _cell_traceback(exc, _run_cell.__code__.co_filename)[:1 << 16]}
    _flush_std()
    t = _posix.times()
    answer["cpu_ms"] = round((t[0] + t[1] + t[2] + t[3]) * 1000.0, 3)
    return answer


def _oom_first():
    """The cell goes first when the session's memory runs out (the kernel
    kills the largest score): never the state it would roll back to."""
    try:
        fd = _open_fd("/proc/self/oom_score_adj", _posix.O_WRONLY)
        try:
            _write(fd, b"1000")
        finally:
            _close(fd)
    except OSError:
        pass


# ---- the state -------------------------------------------------------------


def _session_state(cmd, up_w):
    """The session's interpreter: forks a cell per "run"; never returns.
    A cell that answers goes on here as the next state."""
    me = _getpid()
    while True:
        msg = cmd.read()
        if msg is None:
            _exit(0)
        do = msg.get("do")
        if do == "retire" and msg.get("pid") == me:
            _exit(0)  # the cell that answered is the state now
        if do == "copy" and me != 1 and _getpid() == 1:
            cmd, up_w = _session_copy(msg)  # in the copy's new state
            me = _getpid()
            continue
        if do != "run":
            continue
        cell = _start_cell(msg, cmd, up_w)
        if cell == 0:  # in the cell, which answered and now is the state
            me = _getpid()


def _fork_keeping_random():
    """os.fork, but the child's `random` goes on from the parent's state:
    CPython reseeds it in every fork child (random.py registers an
    at-fork hook), which a session that seeded it must not see."""
    rnd = _modules.get("random")
    state = rnd.getstate() if rnd is not None and hasattr(rnd, "getstate") else None
    pid = _fork()
    if pid == 0 and state is not None:
        try:
            rnd.setstate(state)
        except Exception:
            pass
    return pid


def _start_cell(msg, cmd, up_w):
    """Forks the cell. In the state: waits for the keeper's word, returns
    its pid. In the cell: runs it, answers, waits for the old state to
    go, and returns 0."""
    life_r, life_w = _pipe()
    in_r, in_w = _pipe()
    sig_r, sig_w = _pipe()
    pid = _fork_keeping_random()
    if pid == 0:
        _close(life_w)
        _close(in_w)
        _close(sig_r)
        _close(sig_w)
        _dup2(in_r, 0)
        _close(in_r)
        _oom_first()
        answer = _run_cell(msg)
        _close(0)
        _open_fd("/dev/null", _posix.O_RDONLY)
        answer["pid"] = _getpid()
        _write_all(up_w, _frame({"answer": answer}))
        while _read(life_r, 1):  # EOF: the old state is gone
            pass
        _close(life_r)
        _write_all(up_w, _frame({"ready": answer["pid"]}))  # the next "run" is ours
        return 0
    _close(life_r)
    _close(in_r)
    _write_all(up_w, _frame({"forked": pid}))
    _wait_cell(pid, msg.get("stdin", ""), in_w, sig_r, sig_w, cmd)
    _close(life_w)
    return pid


def _wait_cell(pid, stdin, in_w, sig_r, sig_w, cmd):
    """The state while its cell runs: feeds its stdin, then waits for the
    keeper's word (retire: the cell answered; resume: it was ended) or
    for the cell to die, which it reports."""
    _set_blocking(sig_w, False)
    _set_blocking(in_w, False)
    old = _set_handler(_signal.SIGCHLD, lambda signo, frame: None)
    _signal.set_wakeup_fd(sig_w, warn_on_full_buffer=False)
    data = str.encode(stdin, "utf-8", "surrogatepass")
    me = _getpid()
    reported = False
    try:
        while True:
            p = _poll()
            p.register(cmd.fd, _POLLIN)
            p.register(sig_r, _POLLIN)
            if in_w >= 0:
                p.register(in_w, 4)  # POLLOUT
            for fd, ev in p.poll():
                if fd == in_w:
                    try:
                        data = data[_write(in_w, data[:1 << 16]):] if data else data
                    except OSError:
                        data = b""
                    if not data:
                        _close(in_w)
                        in_w = -1
                elif fd == sig_r:
                    _read(sig_r, 256)
                elif fd == cmd.fd:
                    cmd.fill()
            while True:
                msg = cmd.next()
                if msg is None:
                    break
                if msg.get("do") == "retire" and msg.get("pid") == me:
                    _exit(0)
                if msg.get("do") == "resume":
                    return
            if cmd.eof:
                _exit(0)
            if not reported:
                done, status = _waitpid(pid, _WNOHANG)
                if done == pid:
                    reported = True
                    _write_all(cmd.up_w, _frame({"died": status}))
    finally:
        _signal.set_wakeup_fd(-1)
        _set_handler(_signal.SIGCHLD, old)
        for fd in (sig_r, sig_w, in_w):
            if fd >= 0:
                _close(fd)
        try:
            _waitpid(pid, _WNOHANG)
        except OSError:
            pass


# ---- the keeper ------------------------------------------------------------


def _tmp_listing(root):
    """(path, is_dir, mode, size, mtime_ns) of everything under root, sorted."""
    out = []
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            entries = list(_posix.scandir(d))
        except OSError:
            continue
        for e in entries:
            st = e.stat(follow_symlinks=False)
            kind = st.st_mode & 0o170000
            out.append((e.path, kind, st.st_mode & 0o7777, st.st_size, st.st_mtime_ns))
            if kind == 0o040000:
                stack.append(e.path)
    out.sort()
    return out


class _TmpSnapshot:
    """/tmp as it was before a cell: read only when it changed since the
    last snapshot; None when it holds more than the cap (not restorable)."""

    def __init__(self):
        self.listing, self.files = None, None

    def take(self):
        listing = _tmp_listing("/tmp")
        if listing == self.listing:
            return
        self.listing, self.files = listing, {}
        total = 0
        for path, kind, mode, size, _ in listing:
            if kind == 0o100000:
                total += size
                if total > _SESSION_TMP_SNAPSHOT:
                    self.files = None
                    return
                with _io_open(path, "rb") as f:
                    self.files[path] = f.read()
            elif kind == 0o120000:
                self.files[path] = _posix.readlink(path)

    def restore(self):
        """Puts /tmp back; False when it could not be."""
        if self.files is None:
            return False
        now = _tmp_listing("/tmp")
        if now == self.listing:
            return True
        for path, kind, _, _, _ in sorted(now, reverse=True):
            try:
                if kind == 0o040000:
                    _posix.rmdir(path)
                else:
                    _posix.unlink(path)
            except OSError:
                pass
        for path, kind, mode, _, mtime in self.listing:
            try:
                if kind == 0o040000:
                    _posix.mkdir(path, mode)
                elif kind == 0o120000:
                    _posix.symlink(self.files[path], path)
                elif kind == 0o100000:
                    with _io_open(path, "wb") as f:
                        f.write(self.files[path])
                    _posix.chmod(path, mode)
                    _posix.utime(path, ns=(mtime, mtime))
            except OSError:
                return False
        return _tmp_listing("/tmp") == self.listing


def _alive(pid):
    """Not a zombie (one waits for its parent's wait, killed already)."""
    try:
        with _io_open("/proc/%d/stat" % pid, "rb") as f:
            return bytes.rpartition(f.read(), b")")[2][1:2] != b"Z"
    except OSError:
        return False


def _kill_all_but(keep):
    """SIGKILL to every process of the sandbox but pid 1 and keep, until
    none is left (a fork bomb races the loop; its pids limit bounds it)."""
    keep = (1,) + tuple(keep)
    for _ in range(200):
        others = [int(n) for n in _posix.listdir("/proc") if str.isdigit(n) and int(n) not in keep]
        others = [pid for pid in others if _alive(pid)]
        if not others:
            return True
        for pid in others:
            try:
                _kill(pid, 9)
            except OSError:
                pass
        _time.sleep(0.001)
    return False


class _Keeper:
    def __init__(self, job, emit, gate_fd, cmd_w, up, out_r, err_r, state):
        import codecs
        self.job, self.emit, self.cmd_w, self.up = job, emit, cmd_w, up
        self.gate = _Frames(gate_fd, _SESSION_MAX_MESSAGE)
        self.outs = {out_r: "stdout", err_r: "stderr"}
        self.decoders = {fd: codecs.getincrementaldecoder("utf-8")("replace") for fd in self.outs}
        self.state, self.cell, self.n = state, None, 0
        self.snapshot = _TmpSnapshot()
        self.ending = None   # why the running cell was ended (timeout, output cap)
        self.ended_at = 0.0
        self.handover = False  # a cell answered: no next cell until it says it is the state

    def send(self, obj):
        _write_all(self.cmd_w, _frame(obj))

    def run(self):
        while True:
            p = _poll()
            for fd in (self.gate.fd, self.up.fd) + tuple(self.outs):
                p.register(fd, _POLLIN)
            wait = None
            if self.ending is not None:
                wait = max(0, int((self.ended_at + _SESSION_STATE_GRACE_S - _now()) * 1000))
            ready = p.poll(wait)
            self.reap()
            for fd, _ in ready:
                if fd in self.outs:
                    self.output(fd, _read(fd, _SESSION_OUT_CHUNK))
                elif fd == self.gate.fd:
                    self.gate.fill()
                else:
                    self.up.fill()
            while True:
                msg = self.up.next()
                if msg is None:
                    break
                self.from_session(msg)
            if self.up.eof:
                self.lost("the session's interpreter ended")
            if self.ending is not None and _now() - self.ended_at > _SESSION_STATE_GRACE_S:
                self.lost("the session's interpreter did not come back after its cell was ended")
            while self.cell is None and not self.handover:
                msg = self.gate.next()
                if msg is None:
                    break
                self.from_supervisor(msg)
            if self.cell is not None:  # a stop may follow its cell on the gate
                msg = self.gate.next()
                if msg is not None:
                    self.from_supervisor(msg)
            if self.gate.eof:
                _kill_all_but((_getpid(),))
                _exit(0)

    def reap(self):
        """The first state is this process's child (later ones are init's)."""
        try:
            while _waitpid(-1, _WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass

    def from_supervisor(self, msg):
        do = msg.get("do")
        if do == "cell" and self.cell is None:
            code, stdin = msg.get("code"), msg.get("stdin", "")
            if type(code) is not str or type(stdin) is not str:
                raise _HarnessError("session: a cell's code and stdin are strings")
            self.n += 1
            self.snapshot.take()
            self.cell = {"started": _now(), "out": 0, "pid": None, "fetch": msg.get("fetch", [])}
            self.send({"do": "run", "n": self.n, "code": code, "stdin": stdin})
        elif do == "stop":
            # The supervisor's clock ran out; the cell may have answered
            # meanwhile (its answer crossed the stop): then nothing to end.
            if self.cell is not None and self.ending is None:
                self.end_cell(str(msg.get("why", "stopped")))
        else:
            raise _HarnessError("session: %r out of turn" % do)

    def output(self, fd, data):
        if self.cell is None or self.ending is not None:
            return  # between cells (a leftover thread): nobody's answer
        cap = self.job["output_cap"] - self.cell["out"]
        self.cell["out"] += len(data)
        text = self.decoders[fd].decode(data[:max(cap, 0)])
        if text:
            self.emit({"ev": "out", "stream": self.outs[fd], "text": text})
        if self.cell["out"] > self.job["output_cap"]:
            self.end_cell("output overflow")

    def drain(self):
        for fd in self.outs:
            _set_blocking(fd, False)
            try:
                while self.cell is not None and self.ending is None:
                    data = _read(fd, _SESSION_OUT_CHUNK)
                    if not data:
                        break
                    self.output(fd, data)
            except BlockingIOError:
                pass
            finally:
                _set_blocking(fd, True)

    def from_session(self, msg):
        if "forked" in msg and self.cell is not None:
            self.cell["pid"] = msg["forked"]
        elif "ready" in msg and self.handover and msg["ready"] == self.state:
            self.handover = False
        elif "answer" in msg and self.cell is not None and self.ending is None:
            answer = msg["answer"]
            if type(answer) is not dict or type(answer.get("pid")) is not int:
                raise _HarnessError("session: a bad answer")
            self.drain()
            if self.ending is not None:  # the drain passed the output cap
                return
            old, self.state, self.handover = self.state, answer["pid"], True
            self.send({"do": "retire", "pid": old})
            self.answer({"status": answer.get("status"), "result": answer.get("result"),
                         "error": answer.get("error"), "cpu_ms": answer.get("cpu_ms"),
                         "rolled_back": False})
        elif "died" in msg and self.cell is not None:
            if self.ending is None:
                status = msg["died"]
                if type(status) is not int:
                    raise _HarnessError("session: a bad death")
                self.drain()
                why = ("exit code %d" % _exitcode(status)) if _exitcode(status) >= 0 \
                    else "killed by signal %d" % -_exitcode(status)
                self.ending = why
            self.roll_back()

    def end_cell(self, why):
        """The supervisor's stop or the output cap: every process but the
        state dies; the state's report of its cell's death follows."""
        self.ending, self.ended_at = why, _now()
        _kill_all_but((_getpid(), self.state))

    def roll_back(self):
        _kill_all_but((_getpid(), self.state))
        restored = self.snapshot.restore()
        self.send({"do": "resume"})
        why, self.ending = self.ending, None
        self.answer({"status": "ended", "detail": why, "result": None, "error": None, "cpu_ms": None,
                     "rolled_back": True, "tmp_restored": restored})

    def answer(self, fields):
        cell, self.cell = self.cell, None
        fields["n"] = self.n
        fields["duration_ms"] = round((_now() - cell["started"]) * 1000.0, 3)
        fields["files"] = self.fetch(cell["fetch"]) if fields["rolled_back"] is False else {}
        self.emit({"ev": "answer", "answer": fields})

    def fetch(self, paths):
        import binascii
        files = {}
        for path in paths if type(paths) is list else []:
            if not _relative_path(path):
                continue
            try:
                with _io_open("/tmp/" + path, "rb") as f:
                    data = f.read(_SESSION_FETCH_MAX + 1)
            except OSError:
                continue
            if len(data) <= _SESSION_FETCH_MAX:
                files[path] = bytes.decode(binascii.b2a_base64(data, newline=False), "ascii")
        return files

    def lost(self, why):
        self.emit({"ev": "lost", "why": why})
        _kill_all_but((_getpid(),))
        _flush_std()
        _exit(0)


def _fork_state(keeper_fds, fork):
    """The session's state forked from its keeper over four pipes (cells,
    answers, stdout, stderr). In the state: (0, its cell channel), the
    keeper's descriptors closed and its output on the pipes. In the keeper:
    (the state's pid, its ends: cmd_w, the answers' frames, out_r, err_r)."""
    cmd_r, cmd_w = _pipe()
    up_r, up_w = _pipe()
    out_r, out_w = _pipe()
    err_r, err_w = _pipe()
    state = fork()
    if state == 0:
        for fd in tuple(keeper_fds) + (cmd_w, up_r, out_r, err_r):
            _close(fd)
        _dup2(out_w, 1)
        _dup2(err_w, 2)
        _close(out_w)
        _close(err_w)
        cmd = _Frames(cmd_r, _SESSION_MAX_MESSAGE)
        cmd.up_w = up_w
        return 0, cmd
    for fd in (cmd_r, up_w, out_w, err_w):
        _close(fd)
    return state, (cmd_w, _Frames(up_r, _SESSION_MAX_MESSAGE), out_r, err_r)


def _keep(job, emit, gate_fd, state, ends):
    """The keeper from its hello on; returns never. It lives as long as the
    session: its CPU limit is the session's life (the job's hard limit); the
    state and cells keep a cell's."""
    import resource
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
    emit({"ev": "hello", "python": _PYTHON})
    cmd_w, up, out_r, err_r = ends
    _Keeper(job, emit, gate_fd, cmd_w, up, out_r, err_r, state).run()
    _exit(0)


def _session_copy(msg):
    """In a copy of the session (copy.c made it: the state's read() returned
    this message in the copy, pid 1 of namespaces of its own, which holds
    only its own channels: 0 /dev/null, 1 and 2 its output, 3 its result
    channel, 4 its gate). It becomes the copy's keeper, as pid 1, and forks
    the copy's state, which returns (cmd, up_w) to go on as the state.
    Unlike a session's keeper, a copy's is a fork of the agent's state: an
    agent that rewrote the harness can spoil its own copy's answers, and
    nothing else (the supervisor keeps the clocks, limits and framing)."""
    nonce, cap = msg.get("nonce"), msg.get("output_cap")
    if type(nonce) is not str or type(cap) is not int or cap <= 0:
        _exit(3)
    job = {"role": "session", "nonce": nonce, "deny": [], "preload": [], "files": {}, "output_cap": cap}
    emit = _event_writer(3, nonce)
    state, ends = _fork_state((3, 4), _fork_keeping_random)
    if state == 0:
        return ends, ends.up_w
    _keep(job, emit, 4, state, ends)


def _session_serve(job, fds):
    """Role "session": the keeper; returns never."""
    import binascii
    if _getpid() != 2 or _posix.getppid() != 1:  # it kills every other process it sees
        raise _HarnessError("session: not a sandbox's first process")
    emit = _event_writer(fds[0], job["nonce"])
    for name in job["preload"]:
        __import__(name)
    for path, b64 in dict.items(job["files"]):  # under the cwd, /tmp (mount.c), directories made
        _write_file(path, binascii.a2b_base64(b64))
    state, ends = _fork_state((fds[0], fds[1]), _fork)
    if state == 0:
        _prepare_interpreter(_job_policy(job["deny"]))
        _session_state(ends, ends.up_w)
    _keep(job, emit, fds[1], state, ends)
