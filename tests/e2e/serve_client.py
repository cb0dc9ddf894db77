"""A black-box client for `execeval serve`, shared by test_serve.py and
test_serve_load.py (stdlib only).

  Server      one `execeval serve` process: started with `--listen
              127.0.0.1:0` (or what the test says), ready once its stderr
              says `listening on http://HOST:PORT`; its stderr and stdout are
              read by threads for its whole life so the pipes never fill.
  serve       fixture: serve(*args, **kw) -> a started Server; every server
              still running at the end of the test is stopped with SIGTERM
              and must exit 0 (else SIGKILL, clean-up, failure).
  Answer      one HTTP answer: .status, .headers, .body, .json.
  parse_metrics(text) -> Metrics: the Prometheus text format, strictly.

Every answer is checked for the caller's secret (conftest.SECRET, in the
server's environment through execeval_env()).
"""
import http.client
import json
import math
import re
import signal
import socket
import subprocess
import threading

import pytest

from conftest import EXECEVAL, SECRET, clean_up_after_a_dead_execeval, execeval_env, isolation_args

READY_TIMEOUT = 30
STOP_TIMEOUT = 40
CLIENT_TIMEOUT = 60
LISTENING = re.compile(r"listening on http://(\[[0-9A-Fa-f:.]+\]|[0-9.]+):(\d+)")


class Answer:
    def __init__(self, status, reason, headers, body):
        self.status, self.reason, self.headers, self.body = status, reason, headers, body
        try:
            self.json = json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            self.json = None

    def header(self, name):
        return self.headers.get(name)

    def __repr__(self):
        return "Answer(%d %s, %r, %r)" % (self.status, self.reason, dict(self.headers), self.body[:3000])


def check_answer(a):
    assert SECRET.encode() not in a.body, "the server's secret leaked into an answer: %r" % a
    for k, v in a.headers.items():
        assert SECRET not in k and SECRET not in v, "the server's secret leaked into a header"
    return a


def answer_of(resp):
    body = resp.read()
    return check_answer(Answer(resp.status, resp.reason, resp.headers, body))


def auth_headers(token):
    return {"Authorization": "Bearer " + token} if token is not None else {}


class Server:
    def __init__(self, args=(), listen="127.0.0.1:0", jobs=2, env=None, wait_ready=True):
        self.argv = [EXECEVAL, "serve"]
        if listen is not None:
            self.argv += ["--listen", listen]
        if jobs is not None:
            self.argv += ["-j", str(jobs)]
        if not any(str(a) == "--isolation" or str(a).startswith("--isolation=") for a in args):
            self.argv += isolation_args()
        self.argv += [str(a) for a in args]
        self.stderr_lines, self.stdout_chunks = [], []
        self._ready = threading.Event()
        self.host = self.port = None
        self.banner = None
        self.code = None
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=execeval_env(env))
        self.pid = self.proc.pid
        self._threads = [threading.Thread(target=self._read_stderr, daemon=True),
                         threading.Thread(target=self._read_stdout, daemon=True)]
        for t in self._threads:
            t.start()
        if wait_ready:
            self.wait_ready()

    # -- process ------------------------------------------------------------

    def _read_stderr(self):
        for raw in iter(self.proc.stderr.readline, b""):
            line = raw.decode("utf-8", "replace")
            self.stderr_lines.append(line)
            m = LISTENING.search(line)
            if m and not self._ready.is_set():
                self.host, self.port, self.banner = m.group(1), int(m.group(2)), line.strip()
                self._ready.set()
        self._ready.set()  # EOF: wake a waiter up

    def _read_stdout(self):
        for chunk in iter(lambda: self.proc.stdout.read1(65536), b""):
            self.stdout_chunks.append(chunk)

    @property
    def stderr(self):
        return "".join(self.stderr_lines)

    @property
    def stdout(self):
        return b"".join(self.stdout_chunks).decode("utf-8", "replace")

    def wait_ready(self, timeout=READY_TIMEOUT):
        self._ready.wait(timeout)
        if self.port is None:
            try:  # stderr ended: the process is exiting
                self.proc.wait(5 if self._ready.is_set() else 0.01)
            except subprocess.TimeoutExpired:
                pass
            if self.proc.poll() is None:
                self.kill_and_clean()
                pytest.fail("execeval serve did not say `listening on` within %d s; stderr:\n%s"
                            % (timeout, self.stderr))
            for t in self._threads:
                t.join(5)
            pytest.fail("execeval serve exited %s before listening; stderr:\n%s" % (self.proc.returncode, self.stderr))
        return self

    def finished_output(self):
        for t in self._threads:
            t.join(10)
        return self.stderr

    def send_signal(self, signo=signal.SIGTERM):
        self.proc.send_signal(signo)

    def wait(self, timeout):
        """The exit code, or None when still running after timeout seconds."""
        try:
            self.code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self.finished_output()
        return self.code

    def kill_and_clean(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.code = self.proc.returncode
        clean_up_after_a_dead_execeval([self.pid])

    def stop(self, signo=signal.SIGTERM, timeout=STOP_TIMEOUT):
        """SIGTERM and wait; SIGKILL, clean-up and a failure when it does not
        exit within timeout. Returns the exit code."""
        if self.proc.poll() is not None:
            self.code = self.proc.returncode
            self.finished_output()
            return self.code
        self.send_signal(signo)
        code = self.wait(timeout)
        if code is None:
            self.kill_and_clean()
            pytest.fail("execeval serve did not exit within %d s of signal %d; stderr:\n%s"
                        % (timeout, signo, self.stderr[-5000:]))
        return code

    def rss_kib(self):
        try:
            with open("/proc/%d/status" % self.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            return None
        return None

    # -- HTTP -----------------------------------------------------------------

    @property
    def connect_host(self):
        h = self.host.strip("[]")
        return "127.0.0.1" if h == "0.0.0.0" else ("::1" if h == "::" else h)

    def connection(self, timeout=CLIENT_TIMEOUT):
        return http.client.HTTPConnection(self.connect_host, self.port, timeout=timeout)

    def raw_socket(self, timeout=CLIENT_TIMEOUT):
        s = socket.create_connection((self.connect_host, self.port), timeout=timeout)
        return s

    def request(self, method, path, body=None, headers=None, token=None, conn=None, timeout=CLIENT_TIMEOUT):
        """One request; body: bytes, str, or an object sent as JSON. On a
        fresh connection unless conn is given (then kept open)."""
        hdrs = dict(auth_headers(token))
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
            hdrs["Content-Type"] = "application/json"
        if isinstance(body, str):
            body = body.encode("utf-8")
        hdrs.update(headers or {})
        own = conn is None
        c = conn or self.connection(timeout)
        try:
            c.request(method, path, body=body, headers=hdrs)
            return answer_of(c.getresponse())
        finally:
            if own:
                c.close()

    def post(self, path, body, **kw):
        return self.request("POST", path, body, **kw)

    def run(self, body, **kw):
        return self.post("/v1/run", body, **kw)

    def batch(self, runs, **kw):
        return self.post("/v1/batch", {"runs": runs}, **kw)

    def healthz(self, **kw):
        return self.request("GET", "/healthz", **kw)

    def metrics(self, **kw):
        a = self.request("GET", "/metrics", **kw)
        assert a.status == 200, a
        return parse_metrics(a.body.decode("utf-8"))


def raw_exchange(server, data, timeout=15):
    """Sends bytes as they are on a fresh connection, reads one HTTP answer."""
    s = server.raw_socket(timeout)
    try:
        if data:
            s.sendall(data)
        resp = http.client.HTTPResponse(s, method="POST")
        resp.begin()
        return answer_of(resp)
    finally:
        s.close()


# ---------------------------------------------------------------------------
# Prometheus text format 0.0.4.

METRIC_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*"'
VALUE = r"[+-]?(?:Inf|inf|NaN|nan|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+\.)"
SAMPLE = re.compile(r"^(%s)(?:\{((?:%s)(?:,(?:%s))*,?)?\})? (%s)(?: -?[0-9]+)?$" % (METRIC_NAME, LABEL, LABEL, VALUE))
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"')
TYPE_RE = re.compile(r"^# TYPE (%s) (counter|gauge|histogram|summary|untyped)$" % METRIC_NAME)
HELP_RE = re.compile(r"^# HELP (%s)(?: .*)?$" % METRIC_NAME)


def to_float(v):
    return float(v.replace("Inf", "inf").replace("NaN", "nan"))


class Metrics:
    def __init__(self, samples, types, text):
        self.samples, self.types, self.text = samples, types, text

    def get(self, name, **labels):
        """The value of the sample with exactly these labels, or None."""
        return self.samples.get((name, frozenset(labels.items())))

    def value(self, name, **labels):
        """As get, 0 when absent (a counter not yet incremented may be absent)."""
        v = self.get(name, **labels)
        return 0.0 if v is None else v

    def series(self, name):
        """[(labels dict, value)] of every sample of that name."""
        return [(dict(k[1]), v) for k, v in self.samples.items() if k[0] == name]

    def total(self, name, **labels):
        """Sum over the samples of that name whose labels include these."""
        return sum(v for lab, v in self.series(name) if all(lab.get(k) == x for k, x in labels.items()))

    def histogram(self, name, **labels):
        """(buckets [(le, cumulative count)] sorted by le, sum, count)."""
        buckets = []
        for lab, v in self.series(name + "_bucket"):
            le = lab.pop("le", None)
            assert le is not None, "a %s_bucket sample without le" % name
            if lab == labels:
                buckets.append((to_float(le), v))
        buckets.sort()
        return buckets, self.get(name + "_sum", **labels), self.get(name + "_count", **labels)


def parse_metrics(text):
    """Every line is a comment (# HELP / # TYPE / other #), blank, or
    `name value` / `name{labels} value`; raises AssertionError otherwise."""
    samples, types = {}, {}
    for n, line in enumerate(text.split("\n"), 1):
        if line == "":
            continue
        if line.startswith("#"):
            m = TYPE_RE.match(line)
            if m:
                assert m.group(1) not in types, "line %d: a second TYPE for %s" % (n, m.group(1))
                types[m.group(1)] = m.group(2)
            elif line.startswith("# TYPE") or line.startswith("# HELP"):
                assert HELP_RE.match(line), "line %d: malformed: %r" % (n, line)
            continue
        m = SAMPLE.match(line)
        assert m, "line %d is not `name{labels} value`: %r" % (n, line)
        labels = frozenset(LABEL_RE.findall(m.group(2) or ""))
        key = (m.group(1), labels)
        assert key not in samples, "line %d: a duplicate sample %r" % (n, line)
        samples[key] = to_float(m.group(3))
    return Metrics(samples, types, text)


def check_histogram(metrics, name, **labels):
    """Buckets cumulative (monotonic in le), a +Inf bucket equal to _count,
    a _sum >= 0; returns _count."""
    buckets, total, count = metrics.histogram(name, **labels)
    assert buckets, "no buckets of %s%r:\n%s" % (name, labels, metrics.text)
    assert count is not None and total is not None, "no _count/_sum of %s%r" % (name, labels)
    les = [le for le, _ in buckets]
    assert len(set(les)) == len(les), les
    counts = [c for _, c in buckets]
    assert counts == sorted(counts), "buckets of %s%r not monotonic: %r" % (name, labels, buckets)
    assert les[-1] == math.inf, "no +Inf bucket in %s%r" % (name, labels)
    assert counts[-1] == count, "+Inf bucket %r != _count %r (%s)" % (counts[-1], count, name)
    assert total >= 0 and not math.isnan(total)
    assert metrics.types.get(name) == "histogram", (name, metrics.types.get(name))
    return count


# ---------------------------------------------------------------------------
# The fixture.


def start_session(srv, **body):
    """POST /v1/sessions: the new session's id (it must answer 200, ready)."""
    a = srv.post("/v1/sessions", body)
    assert a.status == 200, a
    assert a.json["status"] == "ready"
    return a.json["id"]


def run_cell(srv, sid, code, **kw):
    """POST /v1/sessions/{sid}/exec: the cell's answer (it must answer 200)."""
    a = srv.post("/v1/sessions/%s/exec" % sid, dict(code=code, **kw))
    assert a.status == 200, a
    return a.json


@pytest.fixture
def serve():
    servers = []

    def start(*args, **kw):
        s = Server(args, **kw)
        servers.append(s)
        return s

    yield start
    problems = []
    for s in servers:
        # Shown by pytest when the test fails.
        print("--- execeval serve %r (pid %d) stderr:\n%s" % (s.argv[2:], s.pid, s.stderr[-6000:]))
        if s.code is None and s.proc.poll() is None:
            code = s.stop()
            if code != 0:
                problems.append("execeval serve exited %s after SIGTERM (expected 0); stderr:\n%s"
                                % (code, s.stderr[-3000:]))
        else:
            s.finished_output()
        if SECRET in s.stderr or SECRET in s.stdout:
            problems.append("the secret leaked into the server's output")
    assert not problems, "\n".join(problems)
