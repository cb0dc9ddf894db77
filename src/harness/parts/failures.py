# --------------------------------------------------------------------------
# Describing failures.


def _message(text):
    """Free text for an event: bounded, and without NUL, which the supervisor's
    JSON parser refuses (judged values, stdout and str, keep theirs)."""
    return str.replace(text, "\0", "\\0")[:_MAX_MESSAGE]


def _text(exc):
    """str(exc), or a placeholder when the exception's own __str__ misbehaves."""
    try:
        text = str(exc)
        return str.__str__(text)[:_MAX_MESSAGE]
    except BaseException:
        return "<unprintable %s>" % _type_name(type(exc))


def _failing_line(exc, filename, source):
    """' (line N: text)' for the last line of `filename` the failure went through."""
    lineno = None
    if type(exc) in _SYNTAX_TYPES and exc.filename == filename:
        lineno = exc.lineno
    tb, steps = _exc_traceback(exc), 0
    while tb is not None and steps < 10000:
        if tb.tb_frame.f_code.co_filename == filename:
            lineno = tb.tb_lineno
        tb, steps = tb.tb_next, steps + 1
    lines = str.splitlines(source)
    if type(lineno) is not int or not 0 < lineno <= len(lines):
        return ""
    return " (line %d: %s)" % (lineno, str.strip(lines[lineno - 1])[:200])


def _error_fields(exc, policy, filename=None, source=""):
    """error_type, message, denied and exit for a failure, as event fields."""
    etype = _type_name(type(exc))
    if type(exc) in _SYNTAX_TYPES:
        text = str.__str__(exc.msg) if type(exc.msg) is str else _text(exc)
    else:
        text = _text(exc)
    message = etype + ": " + text if text else etype
    if filename is not None:
        message += _failing_line(exc, filename, source)
    fields = {"error_type": etype, "message": _message(message)}
    denied = _denial(exc, policy)
    if denied is not None:
        fields["denied"] = denied
    if issubclass(type(exc), _EXIT_TYPES):
        fields["exit"] = True
    return fields


def _traceback_text(exc, source, fallback):
    """What python3 prints for an uncaught exception of a script: the
    traceback (chained ones too, carets and all) from the candidate's own
    frames on, the frame of the harness that ran it left out, its lines
    from the candidate's source.  The traceback module does it, as the
    interpreter's own hook cannot show a "<candidate>" line; `fallback`
    when that fails (a candidate that broke the module)."""
    try:
        import linecache
        import traceback

        lines = str.splitlines(source, True)
        linecache.cache["<candidate>"] = (len(source), None, lines, "<candidate>")
        tb = _exc_traceback(exc)
        while tb is not None and tb.tb_frame.f_code.co_filename != "<candidate>":
            tb = tb.tb_next  # the harness's frames: python3 has none above <module>
        text = "".join(traceback.format_exception(type(exc), exc, tb))
        return text if type(text) is str else fallback
    except BaseException:
        return fallback


def _ms(start):
    return round((_now() - start) * 1000.0, 3)


def _flush_std():
    """Flush whatever sys.stdout/sys.stderr are now, then the real streams
    (through their C type, in case the candidate patched the objects)."""
    for stream in (_sys.stdout, _sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    for stream in _STREAMS:
        try:
            type(stream).flush(stream)
        except BaseException:
            pass


