# --------------------------------------------------------------------------
# Phases.


def _coding_of(raw):
    """The PEP 263 declaration in the first two lines of raw, or "utf-8"."""
    for line in raw.split(b"\n", 2)[:2]:
        text = line.lstrip(b" \t\f")
        if not text.startswith(b"#"):
            if text.strip():
                break  # code on line 1: line 2 may not declare
            continue
        at = text.find(b"coding")
        if at >= 0 and text[at + 6:at + 7] in (b":", b"="):
            name = text[at + 7:].lstrip(b" \t")
            end = 0
            while end < len(name) and (name[end:end + 1].isalnum() or name[end:end + 1] in b"-_."):
                end += 1
            if end:
                return name[:end].decode("ascii")
    return "utf-8"


def _decode_source(raw):
    """Program bytes to text as `python3 file.py` reads them: a BOM, a coding
    declaration, else strict UTF-8; SyntaxError otherwise (compile() alone
    lets invalid bytes through in comments)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    coding = _coding_of(raw)
    try:
        return raw.decode(coding)
    except LookupError:
        raise SyntaxError("unknown encoding: " + coding)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        err = SyntaxError("(unicode error) '%s' codec can't decode byte 0x%02x on line %d"
                          % (coding, raw[exc.start], line))
        err.lineno = line
        raise err


def _syntax_phase(emit, source, scan, lint, denied_tops):
    """Compile once, through the AST when the scan or lint needs one (a scan
    that can find nothing does not); (code, tree or None), None after a
    failure.  A tree nested past ~1,000 levels does not compile (the
    compiler's RecursionError) where its source does (as `python3 file.py`
    runs it, up to ~3,000 levels): such a program compiles from its source."""
    start = _now()
    tree = None
    try:
        if type(source) is bytes:
            source = _decode_source(source)
        if bool(lint) or scan != "off" and _scan_may_find(source, denied_tops):
            tree = compile(source, "<candidate>", "exec", _ONLY_AST, dont_inherit=True)
            try:
                code = compile(tree, "<candidate>", "exec", dont_inherit=True)
            except RecursionError:
                code = compile(source, "<candidate>", "exec", dont_inherit=True)
        else:
            code = compile(source, "<candidate>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError) as exc:
        event = {"ev": "phase", "name": "syntax", "status": "fail", "duration_ms": _ms(start)}
        event["message"] = _error_fields(exc, _Policy(()))["message"]
        if type(exc) in _SYNTAX_TYPES and type(exc.lineno) is int:
            event["line"] = exc.lineno
        emit(event)
        return None
    emit({"ev": "phase", "name": "syntax", "status": "ok", "duration_ms": _ms(start)})
    return code, tree


def _scan_phase(emit, mode, tree, policy):
    """Lint the AST; False when `block` mode found a blocking finding."""
    if mode == "off":
        emit({"ev": "phase", "name": "scan", "status": "skipped"})
        return True
    if tree is None:  # nothing to find (_scan_may_find)
        emit({"ev": "phase", "name": "scan", "status": "ok", "findings": []})
        return True
    import _ast

    scanner = _Scanner(_ast, policy)
    findings = scanner.run(tree)
    failed = mode == "block" and scanner.blocked
    status = "fail" if failed else "ok"
    emit({"ev": "phase", "name": "scan", "status": status, "findings": findings})
    return not failed


# A warm worker's lint module, loaded and prepared once: (source, namespace).
_warm_lint = None


def _lint_phase(emit, lint_source, source, tree):
    """Static analysis (lint.py, sent in the job) before any candidate code runs.
    A warm candidate uses its copy of the worker's lint module when the job
    sends the same source (always, unless the binary changed under it)."""
    start = _now()
    try:
        if _warm_lint is not None and _warm_lint[0] == lint_source:
            namespace = _warm_lint[1]
        else:
            namespace = {"__name__": "__execeval_lint__", "__builtins__": _builtins}
            exec(compile(lint_source, "<execeval-lint>", "exec", dont_inherit=True), namespace)
        findings, tools = namespace["run"](source, tree)
        event = {"ev": "phase", "name": "lint", "status": "ok", "findings": findings, "tools": tools}
    except Exception as exc:  # a tool missing or failing: no verdict on lint
        event = {"ev": "phase", "name": "lint", "status": "fail",
                 "message": ("%s: %s" % (type(exc).__name__, exc))[:300]}
    event["duration_ms"] = _ms(start)
    emit(event)


def _import_phase(emit, job, ctx):
    """The candidate's top level, then the task's setup, in one fresh namespace."""
    module = _ModuleType("__candidate__")
    module.__builtins__ = _builtins
    _modules["__candidate__"] = module
    ctx.globals = module.__dict__
    start = _now()
    fields = None
    try:
        exec(ctx.code, ctx.globals)
    except BaseException as exc:
        fields = _error_fields(exc, ctx.policy, "<candidate>", ctx.source)
    if fields is None and job["setup"]:
        try:
            exec(compile(job["setup"], "<setup>", "exec", dont_inherit=True), ctx.globals)
        except BaseException as exc:
            fields = _error_fields(exc, ctx.policy, "<setup>", job["setup"])
            fields["setup"] = True
    event = {"ev": "phase", "name": "import", "status": "ok" if fields is None else "fail",
             "duration_ms": _ms(start)}
    if fields is not None:
        event.update(fields)
    emit(event)
    return fields is None


def _is_io(test):
    return test["kind"] == "io" and "script" not in test


def _run_tests(emit, tests, ctx):
    """One event per test; False when a test tried to end the interpreter.
    Consecutive io tests go together to one runner (iorunner.py)."""
    i = 0
    while i < len(tests):
        test, i = tests[i], i + 1
        if _is_io(test):
            j = i
            while j < len(tests) and _is_io(tests[j]):
                j += 1
            _run_io_tests(emit, tests[i - 1:j], ctx)
            i = j
            continue
        if test["kind"] == "calls":
            if not _run_calls(emit, test, ctx):
                return False
            continue
        event, fallback = _RUNNERS[test["kind"]](test, ctx)
        emit(event, fallback)
        if event.get("exit"):
            return False
    return True


def _finish(emit):
    """Send done and leave at once: no atexit handler, finaliser or thread runs after."""
    emit({"ev": "done"})
    _flush_std()
    _exit(0)


# The policy a warm worker installed before forking (warm.py warm_up), or None.
_warm_policy = None


def _job_policy(deny):
    """The job's import policy: the warm worker's when it installed one,
    which must be the job's (the supervisor sends such a worker no other)."""
    if _warm_policy is None:
        return _Policy(deny)
    if _warm_policy.names != frozenset(deny):
        raise _HarnessError("job: deny_imports is not the list the warm worker installed")
    return _warm_policy


def _run_phases(emit, job, fds):
    """Syntax to hidden tests; returns as soon as a phase or test ends the run."""
    policy = _job_policy(job["deny"])
    compiled = _syntax_phase(emit, job["code"], job["scan"], job["lint"], policy.tops)
    if compiled is None:
        return
    if not _scan_phase(emit, job["scan"], compiled[1], policy):
        return
    source = job["code"]
    if type(source) is bytes:  # for quoting lines in messages, and lint
        source = source.decode("utf-8", "replace")
    if job["lint"]:
        _lint_phase(emit, job["lint"], source, compiled[1])
    if job["packages"] == "stdlib":  # after lint, whose tools may live there
        _stdlib_only()

    tests = job["tests"]
    ctx = _Context()
    ctx.globals, ctx.policy, ctx.code, ctx.source = None, policy, compiled[0], source
    ctx.io_cap, ctx.channel_fds = job["io_cap"], fds
    kinds = [t["kind"] for t in tests] + job["hidden_kinds"]
    ctx.unittest = _UnittestKit() if "unittest" in kinds else None
    if policy is not _warm_policy:
        _prepare_interpreter(policy)

    # From here on candidate code runs: under the separate judge, once the
    # judge is ready (its clock and its CPU limit start then; docs/protocol.md).
    if job["role"] == "serve" and not _await_go(fds[1]):
        return
    if kinds and not [k for k in kinds if k != "io"] and not job["import_phase"]:
        emit({"ev": "phase", "name": "import", "status": "skipped"})
    elif not _import_phase(emit, job, ctx):
        return
    if job["role"] == "serve":  # --judge separate: calls only, no test here
        _serve_calls(emit, ctx, fds[1])
        return
    if ctx.globals is not None:
        ctx.globals = _test_namespace(ctx.globals, job["entry_point"])
    if not _run_tests(emit, [t for t in tests if not t["hidden"]], ctx):
        return
    hidden = [t for t in tests if t["hidden"]]  # the supervisor sends none in the job
    if job["gate"] and (hidden or job["hidden_kinds"]):
        emit({"ev": "gate"})
        more = _read_hidden(fds[1])  # the hidden tests enter the process only now
        if more is None:
            return
        hidden += more
    _run_tests(emit, hidden, ctx)


def run_job(job_bytes, fds=(4, 5)):
    """Run one job end to end; leaves the process with exit status 0 after "done".

    fds = (result channel, gate).  Raises on a harness failure (bad job,
    broken result channel); the caller reports it and exits 70."""
    job = _parse_job(job_bytes)
    del job_bytes
    if job["role"] == "session":  # a live interpreter: its cells come on the gate
        _session_serve(job, fds)
    if job["role"] == "judges":  # the long-lived judge: its jobs come on the gate
        _judge_serve(fds)
        _flush_std()
        _exit(0)
    emit = _event_writer(fds[0], job.pop("nonce"))
    emit({"ev": "hello", "python": _PYTHON})
    if job["role"] == "judge":  # --judge separate: no candidate code here
        _judge_run(emit, job, fds)
    else:
        _run_phases(emit, job, fds)
    _finish(emit)


