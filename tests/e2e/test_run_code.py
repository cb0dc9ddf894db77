"""POST /run_code and GET /v1/ping: SandboxFusion's shapes, as an RL trainer
sends them (docs/api.md, "POST /run_code").

The client below is written from the request and response shapes alone
(stdlib urllib, one connection per request, as verl's client): every
status mapping, the files/fetch_files rules, the 504 back-pressure, and a
mixed burst of 100 requests with timeouts, every one answered. Servers run
through the `serve` fixture (serve_client.py), on 127.0.0.1 only.
"""
import base64
import collections
import json
import threading
import time
import urllib.error
import urllib.request

import pytest

from serve_client import parse_metrics, serve  # noqa: F401 (fixture)

RUN_STATUSES = {"Finished", "TimeLimitExceeded", "Error"}
STATUSES = {"Success", "Failed", "SandboxError"}
EXECEVAL_KEYS = {"status", "detail", "resources", "sandbox_id", "stdout_truncated", "stderr_truncated"}


def url(server, path):
    return "http://127.0.0.1:%d%s" % (server.port, path)


def run_code(server, timeout=90, **request):
    """(HTTP status, JSON answer) of one POST /run_code."""
    data = json.dumps(request).encode()
    req = urllib.request.Request(url(server, "/run_code"), data=data, method="POST",
                                 headers={"Content-Type": "application/json", "Connection": "close"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def ran(server, **request):
    """A 200 answer, checked field by field against SandboxFusion's shape."""
    code, a = run_code(server, **request)
    assert code == 200, a
    assert set(a) == {"status", "message", "compile_result", "run_result", "executor_pod_name", "files",
                      "execeval"}, a
    assert a["status"] in STATUSES and isinstance(a["message"], str)
    assert a["compile_result"] is None and a["executor_pod_name"] is None
    assert isinstance(a["files"], dict)
    if a["status"] != "SandboxError":
        r = a["run_result"]
        assert set(r) == {"status", "execution_time", "return_code", "stdout", "stderr"}, r
        assert r["status"] in RUN_STATUSES
        assert isinstance(r["execution_time"], float) and r["execution_time"] >= 0
        assert r["return_code"] is None or isinstance(r["return_code"], int)
        assert isinstance(r["stdout"], str) and isinstance(r["stderr"], str)
        # "coalesced": the sandbox ran that many requests of the program (docs/api.md)
        assert set(a["execeval"]) - {"coalesced"} == EXECEVAL_KEYS, a["execeval"]
    return a


def outcome(a):
    r = a["run_result"]
    return a["status"], r["status"], r["return_code"]


def metrics(server):
    with urllib.request.urlopen(url(server, "/metrics"), timeout=30) as resp:
        return parse_metrics(resp.read().decode())


def test_ping_answers_pong(serve):
    s = serve()
    with urllib.request.urlopen(url(s, "/v1/ping"), timeout=30) as resp:
        assert resp.status == 200
        assert json.loads(resp.read()) == "pong"


def test_exit_zero_reads_stdin_as_main(serve):
    s = serve()
    a = ran(s, code="import sys\nprint(__name__, sys.stdin.read().upper(), end='')", stdin="abc\n",
            language="python")
    assert outcome(a) == ("Success", "Finished", 0)
    assert a["run_result"]["stdout"] == "__main__ ABC\n"
    assert a["execeval"]["status"] == "pass"
    assert a["execeval"]["stdout_truncated"] is False and a["execeval"]["stderr_truncated"] is False
    # stdin null and no language: empty input, python
    a = ran(s, code="import sys\nprint(repr(sys.stdin.read()))", stdin=None)
    assert outcome(a) == ("Success", "Finished", 0) and a["run_result"]["stdout"] == "''\n"


@pytest.mark.parametrize("code, rc", [
    ("import sys\nprint('out')\nsys.exit(3)", 3),
    ("raise SystemExit(7)", 7),
    ("print('before')\n1/0", 1),
    ("import os\nos.kill(os.getpid(), 11)", -11),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)", -15),
])
def test_non_zero_exits_exceptions_and_signals_are_failed_finished(serve, code, rc):
    s = serve()
    a = ran(s, code=code)
    assert outcome(a) == ("Failed", "Finished", rc), a


def test_uncaught_exception_says_so_on_stderr(serve):
    a = ran(serve(), code="print('before')\nraise ValueError('boom')")
    assert outcome(a) == ("Failed", "Finished", 1)
    assert a["run_result"]["stdout"] == "before\n"
    assert "ValueError: boom" in a["run_result"]["stderr"]


def test_stderr_is_the_interpreters_traceback_and_the_summary_stays_in_execeval(serve):
    """Reward code greps run_result.stderr for what python3 prints (the
    traceback, SandboxFusion's stderr): it was execeval's one-line summary
    ("ValueError: boom 3 (line 6: ...)"), which belongs in execeval.detail."""
    s = serve()
    code = ("import sys\nprint('before')\nsys.stderr.write('own\\n')\n\n"
            "def f(x):\n    raise ValueError('boom %d' % x)\n\nf(3)\n")
    a = ran(s, code=code)
    assert outcome(a) == ("Failed", "Finished", 1)
    assert a["run_result"]["stderr"] == (
        "own\nTraceback (most recent call last):\n"
        '  File "<candidate>", line 8, in <module>\n    f(3)\n'
        '  File "<candidate>", line 6, in f\n    raise ValueError(\'boom %d\' % x)\n'
        "ValueError: boom 3\n"), a["run_result"]["stderr"]
    assert a["execeval"]["detail"].startswith("test 0 failed: ValueError: boom 3 (line 6: "), a["execeval"]
    # chained, as python3 chains them
    a = ran(s, code="try:\n    1/0\nexcept Exception:\n    raise KeyError('k')\n")
    err = a["run_result"]["stderr"]
    assert err.startswith("Traceback (most recent call last):\n") and "ZeroDivisionError: division by zero\n" \
        "\nDuring handling of the above exception, another exception occurred:\n\n" in err, err
    assert err.endswith("    raise KeyError('k')\nKeyError: 'k'\n"), err
    assert "_run_main" not in err and "<harness" not in err  # execeval's own frames are not the program's


def test_syntax_error_is_failed_with_return_code_1(serve):
    a = ran(serve(), code="x = 1\n  def f(:\n    pass\n")
    assert outcome(a) == ("Failed", "Finished", 1)
    # python3's shape: where, the line stripped, the error (no caret: the column is not kept)
    assert a["run_result"]["stderr"] == '  File "<candidate>", line 2\n    def f(:\nIndentationError: ' \
        "unexpected indent\n", a["run_result"]["stderr"]


def test_run_timeout_is_time_limit_exceeded_with_null_return_code(serve):
    s = serve()
    a = ran(s, code="while True:\n    pass\n", run_timeout=1)
    assert outcome(a) == ("Failed", "TimeLimitExceeded", None)
    assert 0.9 <= a["run_result"]["execution_time"] < 10
    assert a["execeval"]["status"] == "timeout"
    # the server's --timeout (3 s by default) is the ceiling of run_timeout
    a = ran(s, code="while True:\n    pass\n", run_timeout=20)
    assert outcome(a) == ("Failed", "TimeLimitExceeded", None)
    assert 2.9 <= a["run_result"]["execution_time"] < 10


def test_memory_limit_is_finished_minus_9(serve):
    s = serve("--memory", "128")
    a = ran(s, code="x = bytearray(100 << 20)\nprint(len(x))", memory_limit_MB=64)
    assert outcome(a) == ("Failed", "Finished", -9), a
    assert a["execeval"]["detail"] == "memory limit"
    # -1: the server's --memory; above it: clamped to it
    for mb in (-1, 4096):
        a = ran(s, code="x = bytearray(200 << 20)\nprint(len(x))", memory_limit_MB=mb)
        assert outcome(a) == ("Failed", "Finished", -9), a
    a = ran(s, code="x = bytearray(20 << 20)\nprint(len(x))", memory_limit_MB=-1)
    assert outcome(a) == ("Success", "Finished", 0), a


def test_output_over_the_cap_is_minus_9_and_flagged_not_cut_silently(serve):
    s = serve("--output-cap", "65536")
    a = ran(s, code="import sys\nsys.stdout.write('x' * 1000000)")
    assert outcome(a) == ("Failed", "Finished", -9)
    assert a["execeval"]["detail"] == "output overflow"
    assert a["execeval"]["stdout_truncated"] is True
    assert 0 < len(a["run_result"]["stdout"]) <= 65536
    assert set(a["run_result"]["stdout"]) == {"x"}
    a = ran(s, code="import sys\nsys.stderr.write('e' * 1000000)")
    assert outcome(a) == ("Failed", "Finished", -9) and a["execeval"]["stderr_truncated"] is True
    # under the cap: all of it, no flag
    a = ran(s, code="import sys\nsys.stdout.write('y' * 30000)\nsys.stderr.write('z' * 30000)")
    assert outcome(a) == ("Success", "Finished", 0)
    assert a["run_result"]["stdout"] == "y" * 30000 and a["run_result"]["stderr"] == "z" * 30000
    assert a["execeval"]["stdout_truncated"] is False and a["execeval"]["stderr_truncated"] is False


def test_process_limit_is_finished_minus_9(serve):
    code = ("import os, time\n"
            "for i in range(200):\n"
            "    if os.fork() == 0:\n"
            "        time.sleep(3)\n"
            "        os._exit(0)\n")
    a = ran(serve(), code=code, run_timeout=10)
    assert outcome(a) == ("Failed", "Finished", -9), a
    assert a["execeval"]["detail"] == "process limit"


def b64(data):
    return base64.b64encode(data).decode()


def test_files_are_written_before_and_fetched_after(serve):
    code = ("import os\n"
            "data = open('dir/sub/in.bin', 'rb').read()\n"
            "open('out.txt', 'wb').write(data[::-1])\n"
            "print(os.path.exists('skipped'), open('top.txt').read())\n")
    a = ran(serve(), code=code, files={"dir/sub/in.bin": b64(b"\x00\x01abc"), "top.txt": b64(b"hi"),
                                       "skipped": None},
            fetch_files=["out.txt", "missing.txt", "dir/sub/in.bin"])
    assert outcome(a) == ("Success", "Finished", 0), a
    assert a["run_result"]["stdout"] == "False hi\n"
    assert a["files"] == {"out.txt": b64(b"cba\x01\x00"), "dir/sub/in.bin": b64(b"\x00\x01abc")}


@pytest.mark.parametrize("files, fetch, field", [
    ({"/etc/passwd": b64(b"x")}, None, "files./etc/passwd"),
    ({"../up": b64(b"x")}, None, "files.../up"),
    ({"a/../../up": b64(b"x")}, None, "files.a/../../up"),
    ({"ok": "not base64!"}, None, "files.ok"),
    ({"ok": 5}, None, "files.ok"),
    ({"big": b64(b"\0" * (5 << 20)), "big2": b64(b"\0" * (4 << 20))}, None, "files.big2"),
    ("not an object", None, "files"),
    (None, ["/etc/passwd"], "fetch_files.0"),
    (None, ["ok", "x/../../y"], "fetch_files.1"),
    (None, "out.txt", "fetch_files"),
])
def test_files_and_fetch_files_refusals_are_422_naming_the_key(serve, files, fetch, field):
    s = serve()
    request = {"code": "SECRET_PROGRAM = 1\nprint(1)"}
    if files is not None:
        request["files"] = files
    if fetch is not None:
        request["fetch_files"] = fetch
    code, a = run_code(s, **request)
    assert code == 422, a
    assert a["field"] == field and a["detail"][0]["loc"] == ["body", field], a
    assert "SECRET_PROGRAM" not in json.dumps(a)


def test_unknown_fields_are_ignored(serve):
    a = ran(serve(), code="print(2)", unknown=[1, {"x": None}], extra_field="x", compile_timeout=5)
    assert outcome(a) == ("Success", "Finished", 0) and a["run_result"]["stdout"] == "2\n"


def test_another_language_is_a_sandbox_error_without_the_code(serve):
    s = serve()
    for lang in ("cpp", "nodejs", "go"):
        a = ran(s, code="SECRET_PROGRAM = 1", language=lang)
        assert a["status"] == "SandboxError" and a["run_result"] is None
        assert "Python only" in a["message"]
        assert "SECRET_PROGRAM" not in json.dumps(a)


@pytest.mark.parametrize("request_, field", [
    ({"code": "1", "language": 5}, "language"),
    ({"code": "1", "language": ["python"]}, "language"),
    ({"language": "python"}, "code"),
    ({"code": 5}, "code"),
    ({"code": "1", "stdin": 3}, "stdin"),
    ({"code": "1", "run_timeout": "ten"}, "run_timeout"),
    ({"code": "1", "memory_limit_MB": 1.5}, "memory_limit_MB"),
])
def test_a_field_of_the_wrong_type_is_422_naming_it(serve, request_, field):
    code, a = run_code(serve(), **request_)
    assert code == 422 and a["field"] == field, a


def test_a_request_that_cannot_start_before_its_deadline_gets_504(serve):
    s = serve("--run-code-deadline", "1", "--timeout", "10", jobs=1)
    slow = {}
    t = threading.Thread(target=lambda: slow.update(a=ran(s, code="import time\ntime.sleep(4)")))
    t.start()
    time.sleep(0.5)
    start = time.monotonic()
    code, a = run_code(s, code="print(1)")
    waited = time.monotonic() - start
    t.join()
    assert code == 504, a
    assert 0.4 <= waited < 3.5, waited  # answered at its deadline, not when the sandbox freed
    assert outcome(slow["a"]) == ("Success", "Finished", 0)
    m = metrics(s)
    assert m.value("execeval_route_timeouts_total", route="/run_code") == 1
    assert m.value("execeval_http_requests_total", endpoint="/run_code", code="504") == 1
    assert m.value("execeval_route_queue_wait_seconds_count", route="/run_code") >= 1


def test_every_answer_reaches_the_client_within_its_wait(serve):
    """verl's all-timeout shape, scaled: more spinning programs at once than
    two sandboxes can run before the clients give up. verl's client reads for
    compile_timeout + run_timeout + 10 s and retries only a 504; each request
    gets a result or its 504 within that wait, none after it (a request that
    started late used to be answered to nobody)."""
    s = serve(jobs=2)
    compile_timeout, run_timeout, n = 1, 1, 32
    wait = compile_timeout + run_timeout + 10
    answers = [None] * n

    def one(i):
        t0 = time.monotonic()
        code, a = run_code(s, timeout=wait, code="while True:\n    pass\n", compile_timeout=compile_timeout,
                           run_timeout=run_timeout)
        answers[i] = (code, a, time.monotonic() - t0)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    late = [(i, took) for i, (_, _, took) in enumerate(answers) if took >= wait]
    assert late == [], late
    codes = collections.Counter(code for code, _, _ in answers)
    assert set(codes) <= {200, 504}, answers
    assert codes[504] >= 1, "two sandboxes ran them all: the load is too small to test this"
    for code, a, took in answers:
        if code == 200 and a["status"] == "SandboxError":  # a busy host: starved twice, never a TLE
            assert "starved the program of CPU twice" in a["execeval"]["detail"], a
        elif code == 200:
            assert outcome(a)[:2] == ("Failed", "TimeLimitExceeded"), a
        else:  # its 504 came when it could no longer start in time
            assert took >= compile_timeout + 9 - 0.5, took
    m = metrics(s)
    assert m.value("execeval_route_timeouts_total", route="/run_code") == codes[504]


def test_past_the_queue_the_answer_is_504_not_429(serve):
    s = serve("--run-code-queue", "1", jobs=1)
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(run_code(s, code="import time\ntime.sleep(2)")))
               for _ in range(2)]
    for t in threads:
        t.start()
        time.sleep(0.4)  # the first runs, the second waits
    assert metrics(s).value("execeval_route_queue_depth", route="/run_code") == 1
    code, a = run_code(s, code="print(1)")
    for t in threads:
        t.join()
    assert code == 504, a
    assert sorted(c for c, _ in answers) == [200, 200]


def test_the_default_queue_holds_a_trainers_burst(serve):
    m = metrics(serve())
    assert m.value("execeval_route_queue_capacity", route="/run_code") >= 256
    assert m.value("execeval_route_queue_depth", route="/run_code") == 0


def test_a_mixed_burst_of_100_with_timeouts_is_all_answered(serve):
    s = serve("--run-code-coalesce", "16", jobs=2)
    kinds = [
        ({"code": "print(int(input()) * 2)", "stdin": "21\n"}, ("Success", "Finished", 0), "42\n"),
        ({"code": "import sys\nsys.exit(3)"}, ("Failed", "Finished", 3), ""),
        ({"code": "1/0"}, ("Failed", "Finished", 1), ""),
        ({"code": "while True:\n    pass\n", "run_timeout": 1}, ("Failed", "TimeLimitExceeded", None), ""),
        ({"code": "print('ok')"}, ("Success", "Finished", 0), "ok\n"),
    ]
    results = [None] * 100

    def one(i):
        request, _, _ = kinds[i % len(kinds)]
        results[i] = run_code(s, timeout=120, **request)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(100)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, (code, a) in enumerate(results):
        _, want, stdout = kinds[i % len(kinds)]
        assert code == 200, (i, a)
        if want[1] == "TimeLimitExceeded" and a["status"] == "SandboxError":
            # a host this busy starved the spinner twice: its failure, said so
            assert "starved the program of CPU twice" in a["execeval"]["detail"], (i, a)
            continue
        assert outcome(a) == want, (i, a)
        if stdout:
            assert a["run_result"]["stdout"] == stdout
    # none lost, none doubled: a sandbox answered as many requests as it ran
    # (a starved spinner's SandboxError, allowed above, names no sandbox)
    ran_in = [a for _, a in results if "sandbox_id" in a["execeval"]]
    by_sandbox = collections.Counter(a["execeval"]["sandbox_id"] for a in ran_in)
    for a in ran_in:
        assert by_sandbox[a["execeval"]["sandbox_id"]] == a["execeval"].get("coalesced", 1), a
    m = metrics(s)
    assert m.value("execeval_http_requests_total", endpoint="/run_code", code="200") == 100
    assert m.value("execeval_route_timeouts_total", route="/run_code") == 0
