# --------------------------------------------------------------------------
# JSON out: our own encoder, so a patched json module cannot touch events.

_ESCAPES = {i: "\\u%04x" % i for i in range(0x20)}
_ESCAPES.update({0x22: '\\"', 0x5C: "\\\\", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"})


class _Raw(str):
    """JSON text already encoded (a canonical value), written as is."""


def _json_str(s):
    return '"' + str.translate(s, _ESCAPES) + '"'


def _members(obj):
    """The inside of a JSON object, for the harness's own dicts."""
    return ",".join([_json_str(k) + ":" + _encode(v) for k, v in obj.items()])


def _encode(value):
    """JSON text of event data the harness built: exact types only."""
    t = type(value)
    if t is str:
        return _json_str(value)
    if t is _Raw:
        return str.__str__(value)
    if value is None:
        return "null"
    if t is bool:
        return "true" if value else "false"
    if t is int:
        return int.__repr__(value)
    if t is float:
        return float.__repr__(value)
    if t is list:
        return "[" + ",".join([_encode(v) for v in value]) + "]"
    if t is dict:
        return "{" + _members(value) + "}"
    raise _HarnessError("cannot encode a " + _type_name(t))


def _event_writer(fd, nonce):
    """Returns emit(event, fallback=None), which frames one event as a netstring.

    The nonce and seq live only in this closure.  An event over the 1 MiB
    frame limit is replaced by `fallback` when one is given.  A process the
    candidate forked that returns into harness code leaves quietly instead of
    repeating events."""
    head = ',"nonce":' + _json_str(nonce) + ","
    seq = 0
    pid = _getpid()
    # Told of a fork rather than asking getpid() at every event (a system
    # call per event, and per relayed call under --backend gvisor).
    forked = [False]
    _posix.register_at_fork(after_in_child=lambda: list.__setitem__(forked, 0, True))

    def encode(event):
        text = '{"seq":' + int.__repr__(seq) + head + _members(event) + "}"
        return str.encode(text, "utf-8", "replace")

    def emit(event, fallback=None):
        nonlocal seq
        if forked[0] and _getpid() != pid:
            _exit(0)
        payload = encode(event)
        if len(payload) > _MAX_FRAME and fallback is not None:
            payload = encode(fallback)
        if len(payload) > _MAX_FRAME:
            raise _HarnessError("event over the frame limit")
        frame = b"%d:%b," % (len(payload), payload)
        while frame:
            frame = frame[_write(fd, frame):]
        seq += 1

    return emit


# A warm worker puts the same writer in C here first (zygote_native.c): the
# same bytes without a str built per value and member, each of whose
# allocations and reference counts would copy a page of the worker's heap in
# the candidate's process.  The nonce and seq then live in C memory only.
if "_c_event_writer" in globals():
    def _event_writer(fd, nonce, _native=globals()["_c_event_writer"]):  # noqa: F811 (replaces it, above)
        return _native(fd, nonce, _Raw, _HarnessError, _MAX_FRAME)
