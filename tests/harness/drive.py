"""Runs the harness (src/harness/parts/, assembled by src/harness/assemble.py)
the way the supervisor does, without the sandbox.

The harness expects fixed fds (3 = job memfd, 4 = result pipe, 5 = gate
pipe).  subprocess cannot place fds at given numbers safely (its own pipes
may sit on 3-5), so the child is forked here and dup2()s everything into
place before execve().  The parent then reads stdout, stderr and the result
channel together, answers the gate, and checks the framing strictly.

Only benign candidates belong here: nothing isolates them.

Usage as a script: drive.py JOB.json  (prints events, stdout, stderr, status)
"""

import itertools
import json
import os
import pathlib
import select
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src" / "harness"))
import assemble  # noqa: E402  (the build's own assembler, so the tests run what is embedded)

PYTHON = "/usr/bin/python3"
# The source form, assembled afresh from the parts for this test session.
HARNESS = pathlib.Path(tempfile.mkdtemp(prefix="execeval-harness-")) / "harness.py"
HARNESS.write_text(assemble.source())
MAX_FRAME = 1 << 20


class FrameError(Exception):
    """The result channel broke the netstring framing of docs/protocol.md."""


class Run:
    """What one harness run produced."""

    def __init__(self, events, stdout, stderr, returncode, raw):
        self.events = events
        self.stdout = stdout
        self.stderr = stderr
        self.returncode = returncode
        self.raw = raw

    def named(self, ev, name=None):
        return [e for e in self.events if e["ev"] == ev and (name is None or e.get("name") == name)]

    def phase(self, name):
        found = self.named("phase", name)
        assert len(found) == 1, (name, self.events)
        return found[0]

    def tests(self):
        """Test events by index."""
        return {e["index"]: e for e in self.events if e["ev"] == "test"}

    def __repr__(self):
        return "Run(rc=%r, events=%r, stdout=%r, stderr=%r)" % (
            self.returncode, self.events, self.stdout, self.stderr)


def parse_netstrings(data, complete=True):
    """Decode result-stream bytes into payload dicts; raises FrameError.

    complete=False stops quietly at a frame that has not fully arrived and
    returns (events, bytes consumed) instead."""
    events, pos = [], 0
    while pos < len(data):
        colon = data.find(b":", pos)
        digits = data[pos:colon] if colon >= 0 else data[pos:]
        if not digits.isdigit() and (digits or colon >= 0) or len(digits) > 8 \
                or (len(digits) > 1 and digits[:1] == b"0"):
            raise FrameError("bad length at byte %d" % pos)
        if colon < 0:
            if complete:
                raise FrameError("truncated frame at byte %d" % pos)
            break
        length = int(digits)
        if length > MAX_FRAME:
            raise FrameError("frame over 1 MiB")
        end = colon + 1 + length
        if end >= len(data) and not complete:
            break
        if data[end:end + 1] != b",":
            raise FrameError("missing ',' after frame at byte %d" % pos)
        events.append(json.loads(data[colon + 1:end].decode("utf-8")))
        pos = end + 1
    return events if complete else (events, pos)


def _high(fd):
    """A close-on-exec copy of fd numbered >= 10, so dup2 onto 0-5 cannot clobber it."""
    import fcntl

    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return new


def source_file(source):
    """A file holding source, beside the assembled harness."""
    path = HARNESS.parent / ("source-%d-%d.py" % (os.getpid(), next(_SOURCES)))
    path.write_text(source)
    return path


_SOURCES = itertools.count()


def run(job, gate="c", timeout=30.0, cwd=None, job_bytes=None, source=None, script=None):
    """Run the harness on `job` (a dict, or raw `job_bytes`).

    The interpreter runs a file, as the supervisor's /proc/self/fd/6: the
    assembled harness, or `source` written to a file when given, or
    `script` (such as a compiled pyc, the supervisor's way when the host
    has the build's interpreter).

    gate: "c" or "s" is written when the gate event arrives, "eof" closes the
    pipe, None leaves it open (the harness then waits until `timeout`)."""
    hidden = b""
    if job_bytes is None:
        job, hidden = _split_hidden(job)
        job_bytes = json.dumps(job).encode()
    job_fd = os.memfd_create("job", os.MFD_CLOEXEC)
    os.write(job_fd, job_bytes)
    os.lseek(job_fd, 0, os.SEEK_SET)
    result_r, result_w = os.pipe()
    gate_r, gate_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    devnull = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
    child_fds = [_high(fd) for fd in (devnull, out_w, err_w, job_fd, result_w, gate_r)]
    if script is None:  # a file, as the supervisor serves it: past 128 KiB, -c SOURCE is E2BIG
        script = HARNESS if source is None else source_file(source)
    argv = [PYTHON, "-I", "-S", "-B", str(script)]
    env = {"PATH": "/usr/bin:/bin"}
    workdir = str(cwd) if cwd is not None else "/tmp"

    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            os.chdir(workdir)
            for target, fd in enumerate(child_fds):
                os.dup2(fd, target)
            os.execve(PYTHON, argv, env)
        finally:
            os._exit(127)
    for fd in child_fds:
        os.close(fd)
    return _collect(pid, result_r, out_r, err_r, gate_w, gate, timeout, hidden)


def _split_hidden(job):
    """As the supervisor does: a gated job's hidden tests leave the job and
    follow the gate's "c" as a netstring of {"tests": [...]}."""
    hidden = [t for t in job.get("tests", []) if t.get("visibility") == "hidden"]
    if not job.get("gate") or not hidden or type(job.get("tests")) is not list:
        return job, b""
    job = dict(job, tests=[t for t in job["tests"] if t.get("visibility") != "hidden"])
    kinds = []
    for t in hidden:
        if t["kind"] not in kinds:
            kinds.append(t["kind"])
    job["hidden_kinds"] = kinds
    payload = json.dumps({"tests": hidden}).encode()
    return job, b"%d:%s," % (len(payload), payload)


def _collect(pid, result_r, out_r, err_r, gate_w, gate, timeout, hidden=b""):
    buffers = {result_r: bytearray(), out_r: bytearray(), err_r: bytearray()}
    open_fds = set(buffers)
    gate_answered = False
    deadline = time.monotonic() + timeout
    try:
        while open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, 9)
                raise TimeoutError("harness did not finish in %.1f s" % timeout)
            ready, _, _ = select.select(list(open_fds), [], [], left)
            for fd in ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    open_fds.discard(fd)
                buffers[fd] += chunk
            events, _ = parse_netstrings(bytes(buffers[result_r]), complete=False)
            if not gate_answered and [e for e in events if e.get("ev") == "gate"]:
                gate_answered = True
                if gate in ("c", "s"):
                    os.write(gate_w, gate.encode() + (hidden if gate == "c" else b""))
                if gate is not None:
                    os.close(gate_w)
                    gate_w = None
    finally:
        if gate_w is not None:
            os.close(gate_w)
        for fd in buffers:
            os.close(fd)
        _, status = os.waitpid(pid, 0)
    raw = bytes(buffers[result_r])
    return Run(parse_netstrings(raw), bytes(buffers[out_r]).decode("utf-8", "replace"),
               bytes(buffers[err_r]).decode("utf-8", "replace"),
               os.waitstatus_to_exitcode(status), raw)


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: drive.py JOB.json")
    result = run(json.loads(pathlib.Path(argv[1]).read_text()))
    for event in result.events:
        print(json.dumps(event))
    print("stdout:", repr(result.stdout))
    print("stderr:", repr(result.stderr))
    print("exit:", result.returncode)


if __name__ == "__main__":
    main(sys.argv)
