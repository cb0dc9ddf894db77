"""A reference relay for the separate judge (--judge separate, experimental),
in Python, without the sandbox: what the supervisor's relay is to do.

Two harness processes: the candidate's (job role "serve": syntax, scan,
import, then a call server) and the judge's (role "judge": the tests, with
the candidate's names bound to stubs).  The relay reads both result
channels, checks their framing (nonce, seq), and moves:
  candidate "serving" {names}   -> the judge's gate fd, as its first frame
  judge "call" {...}            -> the candidate's gate fd (ev/seq/nonce dropped)
  candidate "reply" {...}       -> the judge's gate fd
  either's "part" {data}        -> the other's gate fd, as {"part": data}
                                   (a streamed value, before its call or reply)
  judge "gate"                  -> "c" + hidden tests, as drive.py does
  judge "hello"                 -> {"go": true} to the candidate, whose code
                                   runs only then (the judge is ready)
  judge "done"                  -> {"end": true} to the candidate
The candidate ending without a reply closes the judge's gate fd (EOF).

Only benign candidates and the attacks of test_judge.py belong here:
nothing isolates them.
"""

import json
import os
import secrets
import select
import time

import drive

MAX_VALUE_DEPTH = 100  # the supervisor refuses deeper JSON before relaying


def _spawn(job, script=None):
    job_fd = os.memfd_create("job", os.MFD_CLOEXEC)
    os.write(job_fd, json.dumps(job).encode())
    os.lseek(job_fd, 0, os.SEEK_SET)
    result_r, result_w = os.pipe()
    gate_r, gate_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    devnull = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
    child_fds = [drive._high(fd) for fd in (devnull, out_w, err_w, job_fd, result_w, gate_r)]
    argv = [drive.PYTHON, "-I", "-S", "-B", str(script or drive.HARNESS)]
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            os.chdir("/tmp")
            for target, fd in enumerate(child_fds):
                os.dup2(fd, target)
            os.execve(drive.PYTHON, argv, {"PATH": "/usr/bin:/bin"})
        finally:
            os._exit(127)
    for fd in child_fds:
        os.close(fd)
    return {"pid": pid, "result": result_r, "out": out_r, "err": err_r, "gate": gate_w,
            "nonce": job["nonce"], "buf": bytearray(), "events": [], "stdout": bytearray(),
            "stderr": bytearray()}


def _frame(obj):
    payload = json.dumps(obj).encode()
    return b"%d:%s," % (len(payload), payload)


def _depth(v, d=0):
    if isinstance(v, (list, dict)):
        items = v.values() if isinstance(v, dict) else v
        return max([_depth(x, d + 1) for x in items] + [d + 1])
    return d


class Judged:
    """What a separate-judge run produced: both streams and both outputs."""

    def __init__(self, cand, judge):
        self.candidate, self.judge = cand["events"], judge["events"]
        self.candidate_rc, self.judge_rc = cand["rc"], judge["rc"]
        self.stdout = cand["stdout"].decode("utf-8", "replace")
        self.stderr = cand["stderr"].decode("utf-8", "replace")
        self.judge_stderr = judge["stderr"].decode("utf-8", "replace")
        self.violation = cand.get("violation")

    def tests(self):
        return {e["index"]: e for e in self.judge if e["ev"] == "test"}

    def candidate_done(self):
        return bool(self.candidate) and self.candidate[-1]["ev"] == "done"

    def __repr__(self):
        return "Judged(candidate=%r, judge=%r, stdout=%r, stderr=%r, judge_stderr=%r)" % (
            self.candidate, self.judge, self.stdout, self.stderr, self.judge_stderr)


def run(code, tests, setup="", timeout=30.0, deny=(), script=None, entry_point=""):
    """Evaluate `code` against `tests` (dicts of the job's shape, indexes
    filled in here) with the separate judge; returns Judged.  `script`: a
    file the interpreters run instead of the source (the build's pyc);
    `entry_point`: the task's, the one builtin's name a test may take from
    the candidate."""
    tests = [dict({"index": i, "visibility": "public"}, **t) for i, t in enumerate(tests)]
    base = {"v": 1, "deny_imports": list(deny), "scan": "report", "io_output_cap": 262144}
    cand = _spawn(dict(base, nonce=secrets.token_hex(16), code=code, setup="", tests=[],
                       role="serve"), script)
    judge = _spawn(dict(base, nonce=secrets.token_hex(16), code="", setup=setup, entry_point=entry_point,
                        tests=[t for t in tests if t["visibility"] == "public"], role="judge",
                        gate=any(t["visibility"] == "hidden" for t in tests),
                        hidden_kinds=sorted({t["kind"] for t in tests if t["visibility"] == "hidden"})),
                   script)
    hidden = [t for t in tests if t["visibility"] == "hidden"]
    procs = {"cand": cand, "judge": judge}
    open_fds = {}
    for name, p in procs.items():
        for key in ("result", "out", "err"):
            open_fds[p[key]] = (name, key)
    deadline = time.monotonic() + timeout

    def to_gate(p, data):
        if p["gate"] is not None:
            try:
                os.write(p["gate"], data)
            except BrokenPipeError:
                pass

    def close_gate(p):
        if p["gate"] is not None:
            os.close(p["gate"])
            p["gate"] = None

    try:
        while open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                for p in procs.values():
                    os.kill(p["pid"], 9)
                raise TimeoutError("separate judge did not finish in %.1f s" % timeout)
            ready, _, _ = select.select(list(open_fds), [], [], left)
            for fd in ready:
                name, key = open_fds[fd]
                p = procs[name]
                chunk = os.read(fd, 65536)
                if not chunk:
                    del open_fds[fd]
                    os.close(fd)
                    if key == "result" and name == "cand":
                        close_gate(judge)  # no more replies: the judge reads EOF
                    elif key == "result":
                        close_gate(cand)  # no more calls: the candidate reads EOF
                    continue
                if key != "result":
                    p["stdout" if key == "out" else "stderr"].extend(chunk)
                    continue
                p["buf"].extend(chunk)
                events, used = drive.parse_netstrings(bytes(p["buf"]), complete=False)
                del p["buf"][:used]
                for e in events:
                    assert e.pop("nonce") == p["nonce"], e
                    assert e.pop("seq") == len(p["events"]), e
                    p["events"].append(e)
                    _route(name, e, cand, judge, hidden, to_gate, close_gate)
    finally:
        for p in procs.values():
            close_gate(p)
            for key in ("result", "out", "err"):
                if p[key] in open_fds:
                    os.close(p[key])
            _, status = os.waitpid(p["pid"], 0)
            p["rc"] = os.waitstatus_to_exitcode(status)
    return Judged(cand, judge)


def _route(name, e, cand, judge, hidden, to_gate, close_gate):
    payload = {k: v for k, v in e.items() if k != "ev"}
    if name == "cand":
        if e["ev"] in ("serving", "part"):
            to_gate(judge, _frame(payload if e["ev"] == "serving" else {"part": e["data"]}))
        elif e["ev"] == "reply":
            if _depth(payload) > MAX_VALUE_DEPTH + 4:
                close_gate(judge)  # refused: the judge reads EOF
            else:
                to_gate(judge, _frame(payload))
        elif e["ev"] not in ("hello", "phase", "done"):
            cand["violation"] = "%s event from the candidate" % e["ev"]
            close_gate(judge)  # the supervisor kills both: no verdict but error
        elif e["ev"] == "phase" and e["status"] == "fail":
            close_gate(judge)  # nothing to judge
        return
    if e["ev"] == "hello":
        to_gate(cand, _frame({"go": True}))
    elif e["ev"] == "call":
        to_gate(cand, _frame(payload))
    elif e["ev"] == "part":
        to_gate(cand, _frame({"part": e["data"]}))
    elif e["ev"] == "gate":
        to_gate(judge, b"c" + _frame({"tests": hidden}))
    elif e["ev"] == "done":
        to_gate(cand, _frame({"end": True}))
        close_gate(cand)
