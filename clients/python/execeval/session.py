"""Session: a live, sandboxed Python interpreter on `execeval serve` that
keeps its state from cell to cell (docs/api.md, "Sessions").

    with client.session(setup="import numpy as np") as s:
        s.exec("x = np.arange(4)")
        s.exec("x.sum()")["result"]      # '6'
        a, b = s.fork(2)                 # two more, each with x (docs/rl.md)

Theory of operation. Client.session() POSTs /v1/sessions to whichever
replica the Client picks; the Session then sends every later request of
that session to that replica only (Client.exchange(replica=...)), since
the interpreter lives there and nowhere else. Failures, by class:

  429, 503, 504   retried on that replica after Retry-After and back-off, as
                  every request of the Client (the server did not run the
                  cell).
  no answer       create, info and close are retried as usual. A cell is
                  not: it may have run although its answer was lost, and
                  running it again could run it twice (`x += 1`), so exec
                  raises Unavailable at once.
  404             SessionEnded: idle timeout, TTL, DELETE, a restarted
                  server. So is a cell answered `session_ended`.
  409             SessionBusy (another cell of this session is running, or
                  it is being forked): never retried.
  other 4xx       InputError (a failing setup: 422, body["setup"] is its
                  answer); 401 Unauthorized; 5xx ServerError.

A lost answer to the create may leave a session on the server that nobody
holds; it ends at its idle timeout."""
import base64
import json

from .errors import InputError, SessionBusy, SessionEnded

SESSION_LIMIT_KEYS = ("memory_mb", "procs", "tmp_mb", "output_cap", "timeout_s")


def _session_error(e):
    """InputError e as the session's failure class, when it has one."""
    if e.status == 404:
        return SessionEnded(e.message, e.status, e.field, e.body)
    if e.status == 409:
        return SessionBusy(e.message, e.status, e.field, e.body)
    return e


def create_body(setup=None, limits=None, idle_timeout_s=None, ttl_s=None, files=None):
    """The POST /v1/sessions body. files: {relative path: bytes or str}
    (sent base64) for the session's /tmp."""
    body = {}
    if setup is not None:
        body["setup"] = setup
    if limits:
        body["limits"] = dict(limits)
    if idle_timeout_s is not None:
        body["idle_timeout_s"] = idle_timeout_s
    if ttl_s is not None:
        body["ttl_s"] = ttl_s
    if files:
        body["files"] = {path: base64.b64encode(data.encode("utf-8") if isinstance(data, str) else data)
                         .decode("ascii") for path, data in files.items()}
    return body


def exec_body(code, timeout_s=None, stdin=None, fetch_files=None):
    if not isinstance(code, str):
        raise TypeError("code must be a string, not %s" % type(code).__name__)
    body = {"code": code}
    if timeout_s is not None:
        body["timeout_s"] = timeout_s
    if stdin is not None:
        body["stdin"] = stdin
    if fetch_files:
        body["fetch_files"] = list(fetch_files)
    return body


class Session:
    """One session, made by Client.session(); see the module doc.

    id: the server's id; created: the create's answer ({"id", "status",
    "setup", "idle_timeout_s", "ttl_s"}); replica: the server it lives on.
    A context manager: the session is deleted when the block ends, by an
    exception too."""

    def __init__(self, client, body, deadline=None):
        self.client = client
        self.created, self.replica = client.exchange("POST", "/v1/sessions", _json(body), deadline=deadline)
        self.id = self.created["id"]
        self.closed = False

    @classmethod
    def _existing(cls, client, replica, created):
        """A session the server made already (a fork's copy)."""
        self = cls.__new__(cls)
        self.client, self.created, self.replica = client, created, replica
        self.id = created["id"]
        self.closed = False
        return self

    @property
    def setup(self):
        """The setup's cell answer (None without a setup)."""
        return self.created.get("setup")

    def _path(self, suffix=""):
        return "/v1/sessions/%s%s" % (self.id, suffix)

    def exec(self, code, timeout_s=None, stdin=None, fetch_files=None, deadline=None):
        """Runs one cell; returns its answer (a dict: status ok | error |
        timeout | output_overflow | memory_limit | crashed, stdout, stderr,
        result, error, rolled_back, infra_error, files, duration_ms, cpu_ms,
        cell). A cell that raised or was rolled back is an answer, not an
        exception. infra_error true: the host starved the cell of CPU (status
        timeout, detail "timeout (starved: ...)"): rolled back, the host's
        doing and not the code's, so never a penalty; the same cell may be
        sent again."""
        if self.closed:
            raise SessionEnded("session %s: closed by this client" % self.id)
        try:
            answer, _ = self.client.exchange("POST", self._path("/exec"),
                                             _json(exec_body(code, timeout_s, stdin, fetch_files)),
                                             deadline=deadline, replica=self.replica, repeatable=False)
        except InputError as e:
            raise _session_error(e) from None
        if answer.get("status") == "session_ended":
            raise SessionEnded("session %s ended while its cell ran%s" % (
                self.id, ": " + answer["detail"] if answer.get("detail") else ""), 200, None, answer)
        return answer

    def fetch(self, path, deadline=None):
        """The bytes of the file path (relative to /tmp, the working
        directory) as the session has it now: an empty cell with
        fetch_files. FileNotFoundError when there is none (or it is larger
        than the server returns, 1 MiB)."""
        answer = self.exec("", fetch_files=[path], deadline=deadline)
        files = answer.get("files") or {}
        if path not in files:
            raise FileNotFoundError("session %s: no file %r in /tmp (or over 1 MiB)" % (self.id, path))
        return base64.b64decode(files[path])

    def judge(self, task, *, file=None, code=None, deadline=None, **fields):
        """The session's answer judged like any candidate: the program (the
        text of `file` in the session's /tmp, or `code`) goes to POST
        /v1/run with task, in a fresh sandbox, by the server's judge; never
        inside this session, where whatever the agent planted would run
        with the tests. Returns the record, with "session": {"id", "file"}
        added by this client to say where the program came from. Other
        keywords are /v1/run's (model, sample, reward, limits...)."""
        if (file is None) == (code is None):
            raise ValueError("judge: give exactly one of file and code")
        program = code if file is None else self.fetch(file, deadline=deadline).decode("utf-8", "replace")
        record = self.client.run(task, program, **fields)
        record["session"] = {"id": self.id, "file": file}
        return record

    def fork(self, n=1, deadline=None):
        """n copies of this session as it is now, each a Session of its own
        on the same server: the interpreter's globals, modules and objects,
        a seeded `random` that goes on identically, and a copy of /tmp;
        this session goes on unchanged. Each copy is as isolated from the
        others and from this one as two sessions are (its own uid, cgroups,
        namespaces and /tmp); descriptors made before the fork (open files,
        pipes, sockets) are closed in every copy, this one's included.
        Between cells only (409, SessionBusy, while one runs). InputError
        422 when the session holds what a copy would share (a thread, a
        process of its own, a shared memory mapping): its message says
        which; the session goes on. Not retried (a lost answer may have
        made copies nobody holds: they end at their idle timeout)."""
        if self.closed:
            raise SessionEnded("session %s: closed by this client" % self.id)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError("fork: n is a count of copies >= 1, not %r" % (n,))
        try:
            answer, _ = self.client.exchange("POST", self._path("/fork"), _json({"count": n}),
                                             deadline=deadline, replica=self.replica, repeatable=False)
        except InputError as e:
            raise _session_error(e) from None
        created = {"status": "ready", "idle_timeout_s": self.created.get("idle_timeout_s"),
                   "ttl_s": self.created.get("ttl_s")}
        return [Session._existing(self.client, self.replica, dict(created, id=i)) for i in answer["ids"]]

    def info(self, deadline=None):
        """GET: {id, state, cells, age_s, idle_s, idle_timeout_s, ttl_s,
        memory_peak_kb, cpu_ms}."""
        try:
            return self.client.exchange("GET", self._path(), None, deadline=deadline, replica=self.replica)[0]
        except InputError as e:
            raise _session_error(e) from None

    def close(self, retries=None, deadline=None):
        """DELETE (at most once; a session already ended is no error)."""
        if self.closed:
            return
        try:
            self.client.exchange("DELETE", self._path(), None, retries=retries, deadline=deadline,
                                 replica=self.replica)
        except InputError as e:
            if e.status != 404:
                raise
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
            return
        try:  # the block's exception is the one to see: a failed DELETE must not replace it
            self.close(retries=1)
        except Exception:  # noqa: B902 - the session ends at its idle timeout anyway
            pass

    def __repr__(self):
        return "<Session %s on %s%s>" % (self.id, self.replica.url, " closed" if self.closed else "")


def _json(body):
    return json.dumps(body).encode("utf-8")
