# --------------------------------------------------------------------------
# The job (fd 3).


class _ScanContext:
    """What _json.make_scanner (the C half of json.loads) reads."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name):
        raise ValueError("JSON constant " + name)


# _json's scanner, made once: by warm_up() in a warm worker (a child that
# made its own would copy the pages of every object make_scanner touches).
_json_scanner = None


def _new_json_scanner():
    import _json

    return _json.make_scanner(_ScanContext)


def _json_loads(text):
    # Cold, made at the job's parse and kept, before any candidate code:
    # the call server reads every call with it after the candidate ran
    # (its sys.modules["_json"] may be anything by then).
    global _json_scanner
    if _json_scanner is None:
        _json_scanner = _new_json_scanner()
    scan = _json_scanner
    text = text.strip(" \t\r\n")
    old = _get_int_digits()
    _set_int_digits(0)  # call args may hold big ints
    try:
        value, end = scan(text, 0)
    except (StopIteration, ValueError):
        raise _HarnessError("the job is not valid JSON") from None
    finally:
        _set_int_digits(old)
    if end != len(text):
        raise _HarnessError("trailing data after the job")
    return value


def _field(obj, key, kind, default=None):
    """obj[key] checked for its exact type; `default` when absent (None = required)."""
    if key not in obj:
        if default is None:
            raise _HarnessError("job: missing %r" % key)
        return default
    value = obj[key]
    if type(value) is not kind:
        raise _HarnessError("job: %r must be a %s" % (key, kind.__name__))
    return value


def _decode(v, depth):
    """A canonical value (docs/protocol.md) back into the Python value: the
    arguments of a strict assert, as the supervisor read them."""
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if t is not dict or len(v) != 1 or depth > _MAX_DEPTH:
        raise _HarnessError("job: bad canonical value")
    ((tag, inner),) = dict.items(v)
    if tag == "int" and type(inner) is str:
        old = _get_int_digits()
        _set_int_digits(0)
        try:
            return int(inner)
        finally:
            _set_int_digits(old)
    if tag == "float" and type(inner) is str:
        return float(inner)
    if type(inner) is not list:
        raise _HarnessError("job: bad canonical value")
    if tag == "dict":
        return {_decode(k, depth + 1): _decode(x, depth + 1) for k, x in inner}
    items = [_decode(x, depth + 1) for x in inner]
    kinds = {"list": list, "tuple": tuple, "set": set}
    if tag not in kinds:
        raise _HarnessError("job: bad canonical value")
    return kinds[tag](items)


def _decode_call(raw):
    """(args, kwargs) of a strict call: canonical "args" and "kwargs" pairs."""
    kwargs = {}
    for pair in _field(raw, "kwargs", list, []):
        if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
            raise _HarnessError("job: bad kwargs")
        kwargs[pair[0]] = _decode(pair[1], 0)
    return [_decode(v, 0) for v in _field(raw, "args", list, [])], kwargs


def _parse_test(raw):
    if type(raw) is not dict:
        raise _HarnessError("job: a test must be an object")
    kind = _field(raw, "kind", str)
    visibility = _field(raw, "visibility", str, "public")
    if visibility not in ("public", "hidden"):
        raise _HarnessError("job: bad visibility %r" % visibility)
    test = {"index": _field(raw, "index", int), "kind": kind, "hidden": visibility == "hidden",
            "timeout_ms": _field(raw, "timeout_ms", int, 0),  # --test-timeout (tests.py)
            "limit_ms": _field(raw, "limit_ms", int, 0)}  # --time-factor's (tests.py)
    if kind in ("assert", "program", "unittest"):
        test["code"] = _field(raw, "code", str)
    elif kind == "call":
        test["fn"] = _field(raw, "fn", str)
        test["args"] = _field(raw, "args", list, [])
        test["strict"] = raw.get("strict") is True
        test["kwargs"] = {}
        test["method_of"] = _field(raw, "method_of", str, "") or None
        if test["strict"]:  # a strict assert: canonical values, keywords
            test["args"], test["kwargs"] = _decode_call(raw)
    elif kind == "calls":  # a check program under --strict-asserts
        test["fn"] = _field(raw, "fn", str)
        test["calls"] = []
        for call in _field(raw, "calls", list):
            if type(call) is not dict:
                raise _HarnessError("job: bad calls")
            test["calls"].append(_decode_call(call))
        if not test["calls"]:
            raise _HarnessError("job: calls must not be empty")
    elif kind == "io":
        if "script" in raw:
            test["script"] = _parse_script(_field(raw, "script", dict))
        if "script" in test and test["script"]["apart"]:
            # Its stdin comes on the gate at its turn (apart.py): only its length here.
            if "stdin" in raw:
                raise _HarnessError("job: an apart script's stdin comes on the gate")
            test["stdin_len"] = _field(raw, "stdin_len", int)
            if test["stdin_len"] < 0:
                raise _HarnessError("job: stdin_len is not negative")
        else:
            test["stdin"] = _field(raw, "stdin", str, "")
    else:
        raise _HarnessError("job: unknown test kind %r" % kind)
    return test


def _parse_script(raw):
    """An io test run as a plain script (serve's /run_code): files to write
    into the cwd first, files to read back after, and the read-back cap.
    The supervisor checked the paths; they are checked again here."""
    import binascii  # built in: no file to load

    files = []
    for path, b64 in dict.items(_field(raw, "files", dict, {})):
        if type(b64) is not str or not _relative_path(path):
            raise _HarnessError("job: bad script file")
        try:
            files.append((path, binascii.a2b_base64(b64)))
        except binascii.Error:
            raise _HarnessError("job: script file is not base64") from None
    fetch = _field(raw, "fetch", list, [])
    if [p for p in fetch if not _relative_path(p)]:
        raise _HarnessError("job: bad fetch path")
    apart = _field(raw, "apart", bool, False)  # one of several requests (apart.py)
    timeout_ms = _field(raw, "timeout_ms", int, 0)
    cpu_limit = _field(raw, "cpu_limit", list, [])  # RLIMIT_CPU (soft, hard) of a sandbox of its own
    release_ms = _field(raw, "release_ms", int, 0)  # the group's time for starting its requests (0: all)
    if apart and (files or fetch or timeout_ms <= 0):
        raise _HarnessError("job: an apart script has a clock and no files")
    if cpu_limit and [n for n in cpu_limit if type(n) is not int or n <= 0] or len(cpu_limit) not in (0, 2):
        raise _HarnessError("job: cpu_limit is [soft, hard] seconds")
    if release_ms < 0:
        raise _HarnessError("job: release_ms is not negative")
    return {"files": files, "fetch": fetch, "fetch_cap": _field(raw, "fetch_cap", int, 0),
            "b64": binascii.b2a_base64, "apart": apart, "timeout_ms": timeout_ms, "cpu_limit": cpu_limit,
            "release_ms": release_ms}


def _relative_path(path):
    return (type(path) is str and path != "" and not str.startswith(path, "/") and "\0" not in path
            and ".." not in str.split(path, "/"))


def _parse_job(job_bytes):
    """The job as a dict of checked fields, defaults filled in."""
    try:
        job = _json_loads(bytes.decode(job_bytes, "utf-8"))
    except UnicodeDecodeError:
        raise _HarnessError("the job is not UTF-8") from None
    if type(job) is not dict or job.get("v") != 1:
        raise _HarnessError("job: not a version 1 job object")
    if job.get("role") == "session":
        return _session_job(job)
    deny = _field(job, "deny_imports", list, [])
    if [n for n in deny if type(n) is not str or not n]:
        raise _HarnessError("job: deny_imports must hold module names")
    scan = _field(job, "scan", str, "report")
    if scan not in ("off", "report", "block"):
        raise _HarnessError("job: bad scan mode %r" % scan)
    packages = _field(job, "packages", str, "host")
    if packages not in ("host", "stdlib"):
        raise _HarnessError("job: bad packages %r" % packages)
    cap = _field(job, "io_output_cap", int, 262144)
    if cap < 0:
        raise _HarnessError("job: io_output_cap must be >= 0")
    return {
        "nonce": _field(job, "nonce", str),
        "code": _job_code(job),
        "setup": _field(job, "setup", str, ""),
        "entry_point": _field(job, "entry_point", str, ""),  # a builtin's name tests may take from the candidate
        "tests": [_parse_test(t) for t in _field(job, "tests", list)],
        "deny": deny,
        "scan": scan,
        "gate": _field(job, "gate", bool, False),
        "hidden_kinds": _hidden_kinds(job),
        # The separate judge's inline runs of a mixed task: the judge's tests
        # are left out, but the import phase runs as it would with them.
        "import_phase": _field(job, "import_phase", bool, False),
        "io_cap": cap,
        "lint": _field(job, "lint", str, ""),  # lint.py's source, "" for no lint phase
        "role": _role(job),  # the separate judge's two sides (callserve.py, judge.py)
        "cpu": _cpu(job),  # the judge's: the CPU it shares with its candidate (_pin_cpu)
        "packages": packages,  # stdlib: no dist-packages for the candidate (cold.py, _stdlib_only)
    }


def _cpu(job):
    """The job's "cpu" (role judge): a CPU number, or None."""
    cpu = _field(job, "cpu", int, -1)
    return cpu if cpu >= 0 else None


_sched_setaffinity = getattr(_posix, "sched_setaffinity", None)


def _pin_cpu(cpu):
    """The split judge's two sides run on the CPU the supervisor gave them
    (the judge's job, the candidate's go), so each of a relayed call's
    wake-ups finds its process on a CPU already awake: a speed hint only,
    and one CPU is what each sandbox's cgroup allows anyway.  Where it
    cannot be had (a CPU this process may not use), nothing changes."""
    if type(cpu) is int and cpu >= 0 and _sched_setaffinity is not None:
        try:
            _sched_setaffinity(0, (cpu,))
        except (OSError, ValueError, OverflowError):
            pass


def _role(job):
    """inline (tests run here), serve (the candidate answers calls), judge,
    or judges (a long-lived judge: judge jobs follow on the gate)."""
    role = _field(job, "role", str, "inline")
    if role not in ("inline", "serve", "judge", "judges"):
        raise _HarnessError("job: bad role %r" % role)
    return role


def _hidden_kinds(job):
    """The kinds of the hidden tests to come (they follow the gate): whether
    the import phase runs and unittest is bound depend on them."""
    kinds = _field(job, "hidden_kinds", list, [])
    if [k for k in kinds if k not in ("assert", "io", "call", "calls", "program", "unittest")]:
        raise _HarnessError("job: bad hidden_kinds")
    return kinds


# Bytes of the gate read ahead of the frame being read: the supervisor may
# put two frames in the pipe at once (the go and the first call), and one
# read of up to 64 KiB takes both.  Every read of the gate goes through
# _gate_read, so none is lost; a frame costs one read, not one per digit.
_gate_ahead = {}


def _gate_read(fd, n):
    """Up to n bytes of fd, those read ahead first; b"" at EOF.  OSError
    as os.read raises it."""
    ahead = dict.pop(_gate_ahead, fd, b"")
    if not ahead:
        ahead = _read(fd, max(n, 1 << 16))
    if len(ahead) > n:
        _gate_ahead[fd] = ahead[n:]
        return ahead[:n]
    return ahead


def _gate_unread(fd, data):
    if data:
        _gate_ahead[fd] = data + dict.pop(_gate_ahead, fd, b"")


def _read_exactly(fd, n):
    chunks, got = [], 0
    while got < n:
        chunk = _gate_read(fd, min(n - got, 1 << 16))
        if not chunk:
            raise _HarnessError("the gate closed in the middle of the hidden tests")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


_DIGITS = frozenset(b"0123456789")


def _frame_length(digits, cap, what):
    """A netstring's length field checked: the payload's length and its comma."""
    if not digits or len(digits) > 12 or not _DIGITS.issuperset(digits) \
            or (len(digits) > 1 and digits[0] == 48) or int(digits) > cap:
        raise _HarnessError("bad %s frame" % what)
    return int(digits) + 1


def _read_frame(fd, cap, what):
    """One netstring's payload (bytes) from fd: the supervisor's framing of
    calls, replies, the hidden tests and a long-lived judge's jobs.  None
    at EOF (or a failed read) before its first byte; a broken frame, one
    over cap bytes or one cut off is a _HarnessError naming `what`."""
    # The common case, a whole frame in what one read brings (a relayed
    # call or reply): no join, no copy but the payload's.
    head = dict.pop(_gate_ahead, fd, b"")
    if not head:
        try:
            head = _read(fd, 1 << 16)
        except OSError:
            return None
        if not head:
            return None
    colon = bytes.find(head, b":", 0, 13)
    if colon > 0:
        end = colon + _frame_length(head[:colon], cap, what)
        if len(head) > end and head[end] == 44:
            if len(head) > end + 1:
                _gate_ahead[fd] = head[end + 1:]
            return head[colon + 1:end]
    while b":" not in head[:13]:
        if len(head) >= 13:
            raise _HarnessError("bad %s frame" % what)
        try:
            more = _gate_read(fd, 1 << 16)
        except OSError:
            more = b""
        if not more:
            if head:
                raise _HarnessError("%s closed in a frame" % what)
            return None
        head += more
    digits, _, rest = bytes.partition(head, b":")
    need = _frame_length(digits, cap, what)
    _gate_unread(fd, rest[need:])
    payload = rest[:need]
    if len(payload) < need:
        payload += _read_exactly(fd, need - len(payload))
    if payload[-1:] != b",":
        raise _HarnessError("bad %s frame" % what)
    return payload[:-1]


def _read_hidden(fd):
    """After the gate event: the supervisor's answer, b"c" then a netstring
    of {"tests": [...]} (the hidden tests, in the job's shape), or anything
    else (b"s", EOF) to skip them.  None when skipped."""
    try:
        answer = _gate_read(fd, 1)
    except OSError:
        answer = b""
    if answer != b"c":
        return None
    payload = _read_frame(fd, 10**12, "hidden-tests")  # 12 digits: no cap of its own
    if payload is None:
        raise _HarnessError("the gate closed in the middle of the hidden tests")
    try:
        raw = _json_loads(bytes.decode(payload, "utf-8"))
    except UnicodeDecodeError:
        raise _HarnessError("the hidden tests are not UTF-8") from None
    if type(raw) is not dict:
        raise _HarnessError("hidden tests: not an object")
    tests = [_parse_test(t) for t in _field(raw, "tests", list)]
    if [t for t in tests if not t["hidden"]]:
        raise _HarnessError("hidden tests: a public test")
    return tests


def _job_code(job):
    """The program: text, or raw bytes when it is not valid UTF-8 (sent as
    code_b64), so that compile() applies Python's own rules to them: a
    coding declaration, else a SyntaxError, exactly as `python3 file.py`."""
    if "code_b64" in job:
        import binascii  # built in: no file to load

        try:
            return binascii.a2b_base64(_field(job, "code_b64", str))
        except binascii.Error:
            raise _HarnessError("job: code_b64 is not base64")
    return _field(job, "code", str)


