"""Client: the synchronous, thread-safe client of `execeval serve`.

Theory of operation. A Client holds one _Replica per server URL. Each request
picks a replica that is not cooling down, the one with the fewest requests
outstanding (ties go round-robin), takes one of its idle keep-alive
connections (or opens one), sends the body and reads the whole answer; the
connection goes back to that replica's idle list unless the server said it
closes it. A reused connection that turns out closed by the server (its
--idle-timeout) is replaced once, at no cost to the retry budget.

Failures, by class:
  no answer (refused, reset, timed out)  the replica cools down for
      `cooldown` seconds (doubling while it keeps failing, at most 60) and
      the request goes to the next replica at once; with none left, after a
      back-off. A replica whose cool-down is over gets the next request
      again (that request is its probe).
  429, 503, 504                          retried after max(Retry-After,
      back-off) plus up to half of it again in jitter; the back-off doubles
      from `backoff` up to `backoff_cap`. A 503 (draining) also cools its
      replica down, and the retry goes at once to another replica if one
      is live.
  401 -> Unauthorized; other 4xx -> InputError; 500 and other statuses ->
      ServerError: never retried (a retry of the same request cannot help).
After `retries` retries the last failure is raised as Unavailable.
A deadline (map's, a monotonic time) bounds the whole exchange, retries and
waits included: every socket operation blocks at most until it, and past
it the request raises DeadlineExceeded (an Unavailable) at once. Each try
of /v1/run, /v1/batch and /get_reward tells the server the seconds left
(the Execeval-Deadline header), so that the server starts it only if it
can answer in time and otherwise answers 504 while the client still waits
(retried, as any 504, while time is left).

Evaluations have no side effects, so a retry after a lost answer is safe.
"""
import collections
import email.utils
import http.client
import itertools
import json
import random
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

from .errors import DeadlineExceeded, InputError, ServerError, Unauthorized, Unavailable
from .session import Session, create_body

LIMIT_KEYS = ("timeout_s", "memory_mb", "procs", "output_cap")
RETRIED = (429, 503, 504)
MAX_COOLDOWN = 60.0
# The routes that keep a client's deadline (docs/api.md), its header, and
# the longest deadline the server takes.
DEADLINE_PATHS = ("/v1/run", "/v1/batch", "/get_reward")
DEADLINE_HEADER = "Execeval-Deadline"
DEADLINE_MAX_S = 3600.0


class _Replica:
    """One server: its address, its idle connections, its load and health.
    Every field but the address is guarded by the Client's lock."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("not an http(s) URL: %r" % (url,))
        self.url = url.rstrip("/")
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.prefix = parts.path.rstrip("/")
        self.idle = []
        self.outstanding = 0
        self.down_until = 0.0
        self.failures = 0
        self.answers = 0

    def __repr__(self):
        return "<replica %s outstanding=%d answers=%d failures=%d>" % (
            self.url, self.outstanding, self.answers, self.failures)


def _retry_after(value):
    """Seconds from a Retry-After header (delta-seconds or an HTTP date), or 0."""
    if not value:
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return 0.0


def _error_body(data):
    try:
        body = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


class Client:
    """Client(url_or_urls, token=None, timeout=300, ...): see the module doc.

    url_or_urls: "http://HOST:PORT" (a path prefix is kept), or a list of
    them (replicas). timeout: seconds one socket operation may block: the
    connect, and the wait for the answer (the server sends nothing while it
    evaluates, so this bounds the evaluation's time too). retries: further attempts after the first.
    pool_size: idle connections kept per replica."""

    def __init__(self, url_or_urls, token=None, timeout=300.0, retries=10, backoff=0.1,
                 backoff_cap=10.0, cooldown=5.0, pool_size=32):
        urls = [url_or_urls] if isinstance(url_or_urls, str) else list(url_or_urls)
        if not urls:
            raise ValueError("no server URL")
        self.replicas = [_Replica(u) for u in urls]
        self.timeout, self.retries = timeout, retries
        self.backoff, self.backoff_cap, self.cooldown = backoff, backoff_cap, cooldown
        self.pool_size = pool_size
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token is not None:
            self._headers["Authorization"] = "Bearer " + token
        self._get_headers = {k: v for k, v in self._headers.items() if k != "Content-Type"}
        self._lock = threading.Lock()
        self._turn = itertools.count()

    # -- the evaluations --------------------------------------------------------

    def run(self, task, candidate=None, *, completion=None, generation=None, limits=None, **fields):
        """POST /v1/run; returns the record (a dict).

        Exactly one of candidate (the whole program), completion (the body
        that follows the task's prompt) or generation (a model's free-form
        reply, from which the server extracts the code by its "extract",
        itself auto by default; each is sent as the request field of its
        name). timeout_s, memory_mb, procs, output_cap (or limits={...}) go
        into "limits"; any other keyword (model, sample, extract, ...) is a
        top-level field of the request."""
        return self.post("/v1/run", run_body(task, candidate, completion, generation, limits, fields))

    def batch(self, task, runs, *, limits=None, **fields):
        """POST /v1/batch; returns the records, in the order of runs.

        task: shared by every run that has none (None: each run carries its
        own). runs: each a dict (a /v1/run body, e.g. {"candidate": ...,
        "sample": 3}, {"completion": ...}) or a string (a candidate).
        limits and the other keywords (model, extract, ...) are the batch's."""
        body = {"runs": [{"candidate": r} if isinstance(r, str) else r for r in runs]}
        if task is not None:
            body["task"] = task
        limits = _limits(limits, fields)
        if limits:
            body["limits"] = limits
        body.update(fields)
        return self.post("/v1/batch", body)["records"]

    def run_code(self, code, stdin=None, **fields):
        """POST /run_code (SandboxFusion's shape); returns its answer (a dict).
        Other fields: language, compile_timeout, run_timeout,
        memory_limit_MB, files, fetch_files."""
        body = {"code": code}
        if stdin is not None:
            body["stdin"] = stdin
        body.update(fields)
        return self.post("/run_code", body)

    def session(self, setup=None, limits=None, idle_timeout_s=None, ttl_s=None, files=None, deadline=None):
        """POST /v1/sessions: a live interpreter kept between cells, on one
        of the replicas; returns a Session (a context manager that deletes
        it). limits: {memory_mb, procs, tmp_mb, output_cap, timeout_s}; files:
        {relative path: bytes or str} written into its /tmp; setup: code run
        first (a failing one is InputError 422, .body["setup"] its answer).
        See session.py and docs/api.md, "Sessions"."""
        return Session(self, create_body(setup, limits, idle_timeout_s, ttl_s, files), deadline)

    def health(self):
        """GET /healthz (one attempt: a draining, tripped or unhealthy
        server's 503 is raised as Unavailable at once, not waited out)."""
        return self.request("GET", "/healthz", None, retries=0)

    def map(self, samples, max_in_flight=16, return_exceptions=False, deadline=None):
        """Evaluates samples with at most max_in_flight requests at once and
        yields the results in the order of samples (a generator).

        A sample is a /v1/run body ({"task", "candidate" | "completion",
        ...}: its record is yielded) or a /v1/batch body (it has "runs": its
        list of records is yielded). samples may be any iterable, read as the
        window moves: at most max_in_flight requests and their answers are
        held at once. A failure is raised at its place (the requests still
        running finish first), or yielded as the exception object with
        return_exceptions=True. Closing the generator before its end (or
        dropping it) cancels the requests not yet sent and does not wait for
        those in flight, which finish in the pool's threads. deadline: a
        time.monotonic() value past which no request waits any more: each
        sample not answered by then is DeadlineExceeded (raised or yielded
        as any failure), so that the whole map ends by then."""
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        window = collections.deque()
        pool = ThreadPoolExecutor(max_in_flight, thread_name_prefix="execeval-map")
        try:
            for sample in samples:
                window.append(pool.submit(self._one, sample, deadline))
                if len(window) >= max_in_flight:
                    yield _outcome(window.popleft(), return_exceptions)
            while window:
                yield _outcome(window.popleft(), return_exceptions)
        except GeneratorExit:
            # Closed early, maybe by the garbage collector in whatever thread
            # it runs: never join threads there (a join inside threading's own
            # bookkeeping deadlocks the interpreter).
            for f in window:
                f.cancel()
            pool.shutdown(wait=False)
            raise
        except BaseException:
            for f in window:
                f.cancel()
            pool.shutdown(wait=True)
            raise
        pool.shutdown(wait=True)

    def _one(self, sample, deadline=None):
        if "runs" in sample:
            return self.post("/v1/batch", sample, deadline)["records"]
        return self.post("/v1/run", sample, deadline)

    def close(self):
        """Closes the idle connections (the client stays usable)."""
        with self._lock:
            conns = [c for r in self.replicas for c in r.idle]
            for r in self.replicas:
                r.idle = []
        for c in conns:
            c.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- HTTP with retries and failover -----------------------------------------

    def post(self, path, body, deadline=None):
        """POSTs body (a dict, sent as JSON) to path; the decoded 200 answer."""
        return self.request("POST", path, json.dumps(body).encode("utf-8"), deadline=deadline)

    def request(self, method, path, payload, retries=None, deadline=None):
        """One exchange with retries (see the module doc); payload: bytes or
        None; deadline: a time.monotonic() value that bounds it all."""
        return self.exchange(method, path, payload, retries, deadline)[0]

    def exchange(self, method, path, payload, retries=None, deadline=None, replica=None, repeatable=True):
        """request(), returning (the decoded answer, the replica that gave
        it). replica: send to that replica only, never to another (a
        session lives on the server that made it); a 503 then waits out its
        Retry-After there. repeatable=False: a request that may have been
        carried out although its answer was lost (a session's cell) is not
        sent again: no answer raises Unavailable at once (429, 503 and 504
        say the server did not run it, and are retried)."""
        delay, wait = self.backoff, 0.0
        last = None
        for attempt in range((self.retries if retries is None else retries) + 1):
            if attempt:  # whatever failed last chose the wait (0: another replica, now)
                time.sleep(wait if deadline is None else max(0.0, min(wait, deadline - time.monotonic())))
            if deadline is not None and time.monotonic() >= deadline:
                raise DeadlineExceeded("%s: no answer before the call's deadline%s"
                                       % (path, " (last: %s)" % last if last else ""),
                                       last.status if last else None)
            target = self._pick() if replica is None else self._hold(replica)
            try:
                status, retry_after, data = self._exchange(target, method, path, payload, deadline)
            except (OSError, http.client.HTTPException) as e:
                self._failed(target)
                last = Unavailable("%s%s: no answer: %s" % (target.url, path, str(e) or type(e).__name__))
                if not repeatable:
                    raise last from e
                wait = 0.0 if replica is None and self._any_live() else _jitter(delay)
                delay = min(delay * 2, self.backoff_cap)
                continue
            finally:
                with self._lock:
                    target.outstanding -= 1
            self._answered(target)
            if status == 200:
                try:
                    return json.loads(data.decode("utf-8")), target
                except (ValueError, UnicodeDecodeError):
                    raise ServerError("%s%s: a 200 whose body is not JSON" % (target.url, path), status,
                                      None, None) from None
            body = _error_body(data)
            message = body.get("error") if body and isinstance(body.get("error"), str) else \
                data[:500].decode("utf-8", "replace") or http.client.responses.get(status, "")
            field = body.get("field") if body else None
            if status in RETRIED:
                last = Unavailable("%s%s: %s" % (target.url, path, message), status, field, body)
                wait = _jitter(max(_retry_after(retry_after), delay))
                if status == 503:
                    # Draining: its Retry-After is its own; another replica may answer now.
                    self._failed(target)
                    if replica is None and self._any_live():
                        wait = 0.0
                delay = min(delay * 2, self.backoff_cap)
                continue
            if status == 401:
                raise Unauthorized(message, status, field, body)
            if 400 <= status < 500:
                raise InputError(message, status, field, body)
            raise ServerError(message, status, field, body)
        raise last

    def _exchange(self, replica, method, path, payload, deadline=None):
        """One request and its whole answer: (status, Retry-After, body bytes)."""
        conn, reused = self._take(replica)
        headers = self._headers if payload is not None else self._get_headers
        if deadline is not None:  # no socket operation blocks past it
            left = deadline - time.monotonic()
            conn.timeout = max(0.001, min(self.timeout, left))
            if conn.sock is not None:
                conn.sock.settimeout(conn.timeout)
            if path in DEADLINE_PATHS:  # and the server keeps it (docs/api.md)
                headers = dict(headers)
                headers[DEADLINE_HEADER] = "%.3f" % min(DEADLINE_MAX_S, max(0.001, left))
        try:
            try:
                conn.request(method, replica.prefix + path, body=payload, headers=headers)
                resp = conn.getresponse()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                if not reused:
                    raise
                # The server closed this idle connection: once more, on a new one.
                timeout = conn.timeout
                conn.close()
                conn, reused = self._connect(replica), False
                conn.timeout = timeout
                conn.request(method, replica.prefix + path, body=payload, headers=headers)
                resp = conn.getresponse()
            data = resp.read()
        except BaseException:
            conn.close()
            raise
        if resp.will_close:
            conn.close()
        else:
            if deadline is not None:  # back in the pool with the client's own timeout
                conn.timeout = self.timeout
                if conn.sock is not None:
                    conn.sock.settimeout(self.timeout)
            self._give(replica, conn)
        return resp.status, resp.getheader("Retry-After"), data

    def _connect(self, replica):
        cls = http.client.HTTPSConnection if replica.https else http.client.HTTPConnection
        return cls(replica.host, replica.port, timeout=self.timeout)

    def _take(self, replica):
        with self._lock:
            if replica.idle:
                return replica.idle.pop(), True
        return self._connect(replica), False

    def _give(self, replica, conn):
        with self._lock:
            if len(replica.idle) < self.pool_size:
                replica.idle.append(conn)
                return
        conn.close()

    def _pick(self):
        """The live replica with the fewest outstanding requests (counted as
        one more now); with none live, the one whose cool-down ends first."""
        now = time.monotonic()
        with self._lock:
            live = [r for r in self.replicas if r.down_until <= now]
            if live:
                turn = next(self._turn)
                n = len(live)
                order = live[turn % n:] + live[:turn % n]
                replica = min(order, key=lambda r: r.outstanding)
            else:
                replica = min(self.replicas, key=lambda r: r.down_until)
            replica.outstanding += 1
            return replica

    def _hold(self, replica):
        """replica, counted as one more request outstanding (as _pick does)."""
        with self._lock:
            replica.outstanding += 1
        return replica

    def _any_live(self):
        now = time.monotonic()
        with self._lock:
            return any(r.down_until <= now for r in self.replicas)

    def _failed(self, replica):
        with self._lock:
            replica.failures += 1
            replica.down_until = time.monotonic() + min(
                self.cooldown * 2 ** (replica.failures - 1), MAX_COOLDOWN)
            conns, replica.idle = replica.idle, []
        for c in conns:
            c.close()

    def _answered(self, replica):
        with self._lock:
            replica.answers += 1
            replica.failures = 0
            replica.down_until = 0.0


def _jitter(wait):
    return wait + random.uniform(0, wait / 2)


def _outcome(future, return_exceptions):
    try:
        return future.result()
    except Exception as e:  # noqa: B902 - handed to the caller as asked
        if return_exceptions:
            return e
        raise


def _limits(limits, fields):
    """limits merged with the limit keywords taken out of fields."""
    out = dict(limits or {})
    for k in LIMIT_KEYS:
        if k in fields:
            out[k] = fields.pop(k)
    return out


def run_body(task, candidate, completion, generation, limits, fields):
    """The /v1/run body for Client.run and AsyncClient.run."""
    given = [k for k, v in (("candidate", candidate), ("completion", completion),
                            ("generation", generation)) if v is not None]
    if len(given) != 1:
        raise TypeError("give exactly one of candidate, completion, generation (got %s)"
                        % (", ".join(given) or "none"))
    fields = dict(fields)
    body = {"task": task}
    if candidate is not None:
        body["candidate"] = candidate
    elif completion is not None:
        body["completion"] = completion
    else:
        body["generation"] = generation
    limits = _limits(limits, fields)
    if limits:
        body["limits"] = limits
    body.update(fields)
    return body
