# --------------------------------------------------------------------------
# The judge: the test side of the separate judge (job role "judge", --judge
# split, the default; docs/protocol.md, "Separate judge").  This
# interpreter never runs a line of the candidate's code: it runs the test
# code (assert, program, unittest) in a namespace where the candidate's
# names are stubs.  Calling a stub emits a "call" event, which the
# supervisor relays to the candidate's call server (callserve.py), and
# reads the reply it relays back on the gate fd; values arrive as
# canonical data through the strict decoder, so every comparison the test
# makes runs on real builtin values here, out of the candidate's reach.
# What the channel cannot carry fails the test (_Refused): no test is ever
# handed back to the candidate's interpreter, whatever it returns or binds.
# A name the test calls that is a builtin's is the judge's builtin, not a
# stub, whatever the candidate defines (but the task's entry point).


class _ChannelBroken(BaseException):
    """The candidate's side cannot answer (it ended, or sent what the
    decoder refuses): the test fails and the run ends cleanly. ended:
    its process ended without a reply (the test's event says so, and the
    supervisor counts the test not run, as inline's harness died in it)."""

    ended = False


class _CandidateEnded(BaseException):
    """A call tried to end the candidate's interpreter (SystemExit & co)."""


class _JudgeState:
    """The channel's state, shared by the stubs of one run."""

    __slots__ = ("emit", "fd", "calls", "broken", "ended", "values", "policy", "streamed", "kept")

    def __init__(self, emit, fd):
        self.emit, self.fd, self.calls = emit, fd, 0
        self.broken = self.ended = None
        self.streamed = 0  # call arguments streamed so far (their numbers)
        self.kept = {}  # id -> (number, list, its copy): what the candidate keeps (callserve.py _Streams)
        self.values = frozenset()  # the candidate's globals that are values (_judge_read_values)
        self.policy = _JudgePolicy()


class _JudgePolicy(_Policy):
    """The judge denies nothing itself; a failure it reports says "denied"
    (an error, as inline) when it comes from an exception the candidate's
    deny list raised in a call (the reply's "denied"), and only then."""

    def __init__(self):
        _Policy.__init__(self, ())
        self.seen = set()

    def denies(self, name):
        return name in self.seen


def _judge_args(state, args, kwargs):
    """Canonical texts of a call's arguments, and the flat text of those
    past the canonical bounds (streamed before the call, in order);
    _Refused for what cannot cross."""
    streams = []
    out = [_judge_arg(state, value, streams) for value in args]
    pairs = [[k, _judge_arg(state, v, streams)] for k, v in dict.items(kwargs)]
    return out, pairs, "".join(streams)


_ATOMS = frozenset((int, float, str, bool, type(None)))


def _judge_arg(state, value, streams):
    text = _canonical(value, False, _Remote, True)  # [Pair(1, 2), ...]: a list of handles (MBPP 601)
    if text == _TOO_LARGE:  # 3,000 levels deep, 1,000,000 ints: streamed
        # A list of plain values the candidate still keeps, unchanged since
        # (compared at C speed with a copy): named, not streamed again.
        atoms = type(value) is list and set(map(type, value)) <= _ATOMS
        seen = state.kept.get(id(value)) if atoms else None
        if seen is not None and seen[1] is value and seen[0] >= state.streamed - _KEEP_STREAMED \
                and list.__eq__(value, seen[2]):
            return _Raw('{"kept":%d}' % seen[0])
        text = _flat(value, False, _Remote)
        if text is None:
            raise _Refused("an argument too large for the channel")
        streams.append(text)
        if atoms:
            state.kept[id(value)] = (state.streamed, value, list.copy(value))
        for key in [k for k, v in state.kept.items() if v[0] < state.streamed - _KEEP_STREAMED + 1]:
            del state.kept[key]
        state.streamed += 1
        return _Raw('{"stream":true}')
    if str.startswith(text, '{"other":'):
        raise _Refused("an argument of type %s" % _type_name(type(value)))
    return _Raw(text)


def _judge_call(state, target, args, kwargs):
    """One call through the supervisor: the decoded result, or the
    candidate's exception raised here."""
    for sticky in (state.broken, state.ended):
        if sticky is not None:
            raise sticky  # a test that swallowed it does not get to call on
    wire_args, wire_kwargs, stream = _judge_args(state, args, kwargs)
    number = state.calls
    state.calls += 1
    event = {"ev": "call", "call": number, "args": wire_args, "kwargs": wire_kwargs}
    event.update(target)
    if stream:
        _send_stream(state.emit, stream)
    state.emit(event)
    reply = _wire_read(state.fd)
    if reply is None or reply.get("call") != number:
        state.broken = _ChannelBroken("the candidate's process ended during a call"
                                      if reply is None else "a reply out of turn")
        state.broken.ended = reply is None
        raise state.broken
    status = reply.get("status")
    if status == "returned":
        try:
            streamed = _streamed(reply)
            value = _wire_decode(reply.get("value"), None, streamed)
            for key, changed in reply.get("changed", []):
                _judge_apply(args, kwargs, key, _wire_decode(changed, None, streamed))
            if streamed.next() is not _MISSING:
                raise _WireValueError("a streamed value nothing names")
        except _WireValueError as exc:
            state.broken = _ChannelBroken("the reply did not decode: " + _text(exc))
            raise state.broken
        return value
    if status == "method" and "attr" in target:
        return _RemoteMethod(state, target["handle"], target["attr"])
    if status == "handle" and type(reply.get("handle")) is int:
        return _Remote(state, reply["handle"], str(reply.get("type", "?")), reply.get("callable") is True)
    if status == "raised":
        if type(reply.get("denied")) is str:
            state.policy.seen.add(reply["denied"])
        if reply.get("exit"):
            state.ended = _CandidateEnded(reply.get("message", "SystemExit"))
            raise state.ended
        raise _judge_exception(str(reply.get("error_type", "Exception")), str(reply.get("text", "")))
    reason = {"too_large": "the returned value is too large or too deep for the channel"}.get(
        status, "an unexpected reply")
    state.broken = _ChannelBroken(reason)
    raise state.broken


def _judge_apply(args, kwargs, key, value):
    """A mutable argument the call changed: the judge's copy changes the same
    way, in place, so `f(xs); assert xs == [...]` holds."""
    target = args[key] if type(key) is int and 0 <= key < len(args) else kwargs.get(key)
    if type(target) is not type(value):
        raise _WireValueError("a changed argument changed type")
    if type(target) is list:
        target[:] = value
    else:
        target.clear()
        target.update(value)


class _RemoteError(Exception):
    """The candidate raised an exception of its own class (named in the message)."""


def _judge_exception(type_name, text):
    """The candidate's exception as the judge's builtin type of that name
    (`except ValueError` works), else _RemoteError; str(exc) as its text."""
    cls = _builtins.__dict__.get(type_name)
    if type(cls) is type and issubclass(cls, Exception):
        try:
            return cls(text)
        except BaseException:
            pass
    return _RemoteError("%s: %s" % (type_name, text))


class _Stub:
    """A name of the candidate's module, on the judge's side."""

    __slots__ = ("state", "name")

    def __init__(self, state, name):
        self.state, self.name = state, name

    def __call__(*args, **kwargs):  # no named self: a keyword "self" is the candidate's
        return _judge_call(args[0].state, {"fn": args[0].name}, args[1:], kwargs)

    def __getattr__(self, attr):
        # A class's attribute (Color.RED, Point.origin): read in the
        # candidate's process, a value or a handle as any call's result.
        if str.startswith(attr, "__"):
            raise _Refused("attribute %s of the candidate's %s" % (attr, self.name))
        return _judge_call(self.state, {"handle": 2}, (self.name, attr), {})

    def __repr__(self):
        return "<candidate function %s>" % self.name


_PLAIN_TYPES = (type(None), bool, int, float, complex, str, list, tuple, dict, set, frozenset)


def _plain(value):
    """Whether value is one the channel carries as data: a remote object
    compared with it is never equal (the candidate's __eq__ is not asked)."""
    t = type(value)
    return t in _PLAIN_TYPES or (t is type and _BUILTIN_TYPES.get(_type_name(value)) is value)


class _Remote:
    """An object that stays in the candidate's process (an instance of its
    class, a function it returned): calling it is a call, reading or
    setting an attribute too; compared with a builtin value it is unequal;
    anything else fails the test (_Refused), never guessed."""

    __slots__ = ("state", "handle", "type_name", "is_callable")

    def __init__(self, state, handle, type_name, is_callable):
        for name, value in (("state", state), ("handle", handle), ("type_name", type_name),
                            ("is_callable", is_callable)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        # A call too (obj.left = Node(2) in MBPP's setups): the value crosses as an argument.
        if str.startswith(name, "__"):
            raise _Refused("setting attribute %s of a remote %s" % (name, self.type_name))
        _judge_call(self.state, {"handle": self.handle, "setattr": name}, (value,), {})

    def __call__(*args, **kwargs):
        return _judge_call(args[0].state, {"handle": args[0].handle}, args[1:], kwargs)

    def _refuse(self, *args):
        raise _Refused("an operation on a remote %s" % self.type_name)

    def __eq__(self, other):
        # Against a builtin value, as strict asserts judge `other`: never
        # equal (an always-equal __eq__ in the candidate is not asked).
        # Two of the candidate's objects (a dataclass, an Enum member, a
        # Node the test built with its class): Python's == between them,
        # run in the candidate's process, as inline; it must answer a bool.
        if _plain(other):
            return False
        if type(other) is not _Remote or other.state is not self.state:
            self._refuse()
        answer = _judge_call(self.state, {"handle": 1}, (self, other), {})
        if type(answer) is not bool:
            raise _Refused("a comparison of two remote %s answered by a %s"
                           % (self.type_name, _type_name(type(answer))))
        return answer

    def __ne__(self, other):
        return not self.__eq__(other)

    __lt__ = __le__ = __gt__ = __ge__ = __bool__ = __hash__ = _refuse
    __len__ = __iter__ = __getitem__ = __contains__ = _refuse

    def __getattr__(self, name):
        # A read is a call; a method comes back named only (_RemoteMethod).
        # Dunder names are Python's protocol, not the candidate's API.
        if str.startswith(name, "__"):
            raise _Refused("attribute %s of a remote %s" % (name, self.type_name))
        return _judge_call(self.state, {"handle": self.handle, "attr": name}, (), {})

    def __repr__(self):
        return "<remote %s>" % self.type_name


class _RemoteMethod:
    """obj.m of a remote obj whose m is callable: calling it is one call,
    which reads m again in the candidate's process at that time; anything
    else done with it is not judged here."""

    __slots__ = ("state", "handle", "name")

    def __init__(self, state, handle, name):
        self.state, self.handle, self.name = state, handle, name

    def __call__(*args, **kwargs):
        self = args[0]
        return _judge_call(self.state, {"handle": self.handle, "method": self.name}, args[1:], kwargs)

    def _refuse(self, *args):
        raise _Refused("an operation on method %s of a remote object" % self.name)

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __bool__ = __hash__ = _refuse

    # A bound method's name, as a test's message reads it (method.__name__).
    __name__ = property(lambda self: self.name)

    def __repr__(self):
        return "<remote method %s>" % self.name


# What a failed comparison says. The judge's values are real builtin
# values (or its own remote handles), so its asserts can say what they
# compared, as the supervisor's converted asserts do ("expected (4, 5), got
# [4, 5]"): each `assert a == b` without a message of the test's code is
# compiled as `l = a; r = b; if not l == r: raise _ee_explain_(l, r)`, the
# two sides evaluated once and in order, the comparison and its truth test
# exactly the assert's, on the assert's line. Never in the candidate's
# interpreter, where showing a value would run the candidate's __repr__.

_EXPLAIN = "_ee_explain_"
_EXPLAIN_SIDES = ("_ee_left_", "_ee_right_")
_EXPLAIN_REPR = 200


def _judged_repr(value):
    """repr of a judged value, bounded (a builtin's, or a handle's own)."""
    try:
        text = repr(value)
    except BaseException:  # e.g. an int past the digits limit
        return "<%s>" % _type_name(type(value))
    return text if len(text) <= _EXPLAIN_REPR else text[:_EXPLAIN_REPR - 3] + "..."


def _explain(got, expected):
    return AssertionError("expected %s, got %s" % (_judged_repr(expected), _judged_repr(got)))


# These walk `_ast` trees by hand: ast's walk, copy_location and
# NodeTransformer would cost a cold judge ~20 ms to import ast (a warm one
# has it through inspect), for work this small.


def _has_call(node, ast):
    """Whether the expression holds a call; stops at the first it meets
    (the root first: `candidate(x) == y` is decided at once)."""
    stack = [node]
    while stack:
        node = stack.pop()
        if type(node) is ast.Call:
            return True
        for field in node._fields:
            stack.extend(_children(getattr(node, field, None), ast))
    return False


def _children(value, ast):
    if type(value) is list:
        return [v for v in value if isinstance(v, ast.AST)]
    return [value] if isinstance(value, ast.AST) else []


def _walk(node, ast):
    stack, out = [node], []
    while stack:
        node = stack.pop()
        kids = [c for field in node._fields for c in _children(getattr(node, field, None), ast)]
        out.extend(kids)
        stack.extend(kids)
    return out


def _explained_assert(node, ast):
    """The statements an `assert a == b` (no message) becomes; else [node].
    The nodes made here take the assert's location (the sides keep their
    own), as compile() needs one on each."""
    test = node.test
    if node.msg is not None or type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.Eq:
        return [node]
    left, right = _EXPLAIN_SIDES
    # `assert f(x) == 6` is HumanEval's order; `assert 6 == f(x)` the other.
    swap = not _has_call(test.left, ast) and _has_call(test.comparators[0], ast)
    got, expected = (right, left) if swap else (left, right)
    at = {"lineno": node.lineno, "col_offset": node.col_offset,
          "end_lineno": node.end_lineno, "end_col_offset": node.end_col_offset}

    def load(name):
        return ast.Name(id=name, ctx=ast.Load(), **at)

    def store(name, value):
        return ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store(), **at)], value=value, type_comment=None,
                          **at)

    failed = ast.UnaryOp(op=ast.Not(), operand=ast.Compare(left=load(left), ops=[ast.Eq()], comparators=[load(right)],
                                                           **at), **at)
    raise_ = ast.Raise(exc=ast.Call(func=load(_EXPLAIN), args=[load(got), load(expected)], keywords=[], **at),
                       cause=None, **at)
    return [store(left, test.left), store(right, test.comparators[0]),
            ast.If(test=failed, body=[raise_], orelse=[], **at)]


# A long-lived judge judges a task's tests once per sample (a GRPO group is
# 8-64 samples of one prompt): the code each test compiles to is kept,
# keyed by its source and name.  A code object is immutable and made from
# the task's source alone, so nothing of one evaluation reaches another.
_EXPLAINED_KEPT = 512
_explained_kept = {}


def _explained(source, filename):
    """The test's code compiled with its `a == b` asserts explaining."""
    key = (source, filename)
    code = dict.get(_explained_kept, key)
    if code is None:
        code = _explained_compile(source, filename)
        if len(_explained_kept) >= _EXPLAINED_KEPT:
            dict.clear(_explained_kept)
        _explained_kept[key] = code
    return code


def _explained_compile(source, filename):
    import _ast as ast
    tree = compile(source, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    stack = [tree]
    while stack:
        node = stack.pop()
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list and value and isinstance(value[0], ast.stmt):
                body = []
                for stmt in value:
                    body.extend(_explained_assert(stmt, ast) if type(stmt) is ast.Assert else [stmt])
                setattr(node, field, body)
            # Statements live only in statements, handlers and match cases.
            stack.extend(c for c in _children(getattr(node, field, None), ast)
                         if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case)))
    return compile(tree, filename, "exec", dont_inherit=True)


def _judge_test(test, ctx, state):
    """(event, go on) for one test, judged here."""
    _mark_new_modules()  # what the harness loaded for it (a long-lived judge)
    list.clear(_refusals)
    try:
        _judge_read_values(state, ctx, test["code"])
    except BaseException as exc:  # the channel's state is checked below
        event = _test_event(test, "fail")
        event.update(_error_fields(exc, ctx.policy))
    else:
        if test["kind"] == "unittest":
            event, _ = _run_unittest(test, ctx)
        else:
            event, _ = _run_assert(test, ctx, explain=True)
    if _refusals:  # raised during the test, even if the test caught it
        event = _test_event(test, "fail")
        what = "channel: " + _text(_refusals[0])
        event.update({"error_type": "ChannelError", "channel": _message(_text(_refusals[0])),
                      "message": _message(what)})
        list.clear(_refusals)
        return event, state.broken is None and state.ended is None
    if state.broken is not None:
        event = _test_event(test, "fail")
        event.update({"error_type": "ChannelError", "channel": _message(_text(state.broken)),
                      "channel_ended": state.broken.ended,
                      "message": _message("channel: " + _text(state.broken))})
        return event, False
    if state.ended is not None:
        event = _test_event(test, "fail")
        event.update({"error_type": "SystemExit", "exit": True,
                      "message": _message("the candidate tried to end its interpreter in a call")})
        return event, False
    return event, True


def _judge_run(emit, job, fds):
    """The judge's run: the candidate's names (relayed from its serving
    event), the setup, then each test; the gate for hidden ones as inline.
    Returns its channel's state (None when the candidate never served)."""
    _pin_cpu(job["cpu"])
    first = _wire_read(fds[1])
    if first is None:
        return None  # the candidate never served (syntax, import): nothing to judge
    names = first.get("names")
    if type(names) is not list or [n for n in names if type(n) is not str]:
        raise _HarnessError("judge: bad names")
    state = _JudgeState(emit, fds[1])
    ctx = _Context()
    module = _ModuleType("__judge__")
    module.__builtins__ = _builtins
    ctx.globals, ctx.policy, ctx.code, ctx.source = module.__dict__, state.policy, None, ""
    ctx.io_cap, ctx.channel_fds = job["io_cap"], fds
    kinds = [t["kind"] for t in job["tests"]] + job["hidden_kinds"]
    ctx.unittest = _UnittestKit() if "unittest" in kinds else None
    mine = _shadowing(job["entry_point"])
    for name in names:
        if not mine(name):
            ctx.globals[name] = _Stub(state, name)
    values = first.get("values", [])
    if type(values) is not list or [n for n in values if type(n) is not str]:
        raise _HarnessError("judge: bad values")
    state.values = frozenset(n for n in values if not mine(n))
    ctx.globals[_EXPLAIN] = _explain
    _judge_modules(ctx, first.get("modules"), mine)
    tests = [t for t in job["tests"] if not t["hidden"]]
    if job["setup"]:
        try:
            _judge_read_values(state, ctx, job["setup"])
            exec(compile(job["setup"], "<setup>", "exec", dont_inherit=True), ctx.globals)
        except BaseException as exc:
            # Every test fails, marked "setup": the supervisor makes it the
            # import phase's failure, as inline ("setup failed: ..."),
            # and nothing is judged anywhere else.
            fields = _error_fields(exc, ctx.policy, "<setup>", job["setup"])
            if _refusals:
                fields = {"error_type": "ChannelError", "message": "channel: " + _text(_refusals[0])}
            for test in tests:
                event = _test_event(test, "fail")
                event.update({"error_type": fields.get("error_type", "Exception"), "setup": True,
                              "message": _message("setup: " + fields["message"])})
                emit(event)
            return state
    if not _judge_tests(emit, tests, ctx, state):
        return state
    hidden = [t for t in job["tests"] if t["hidden"]]
    if job["gate"] and (hidden or job["hidden_kinds"]):
        emit({"ev": "gate"})
        more = _read_hidden(fds[1])
        if more is None:
            return state
        hidden += more
    _judge_tests(emit, hidden, ctx, state)
    return state


def _judge_modules(ctx, modules, mine):
    """The modules the candidate's module holds, imported here by name (the
    judge's own copy, never an object of the candidate's); one the judge
    cannot or may not import stays unbound, its name a NameError."""
    if type(modules) is not list:
        raise _HarnessError("judge: bad modules")
    for pair in modules:
        if type(pair) is not list or len(pair) != 2 or [x for x in pair if type(x) is not str]:
            raise _HarnessError("judge: bad modules")
        if mine(pair[0]):
            continue
        try:
            _real_import(pair[1])
            ctx.globals[pair[0]] = _modules[pair[1]]
        except BaseException:
            pass


def _judge_tests(emit, tests, ctx, state):
    """Each test in turn, until one ends the run (a broken channel, the
    candidate ending its interpreter)."""
    for test in tests:
        if test["kind"] not in ("assert", "program", "unittest"):
            raise _HarnessError("judge: a %s test is the supervisor's" % test["kind"])
        event, go_on = _judge_test(test, ctx, state)
        emit(event)
        if not go_on:
            return False
    return True


def _judge_read_values(state, ctx, code):
    """The candidate's globals that are values (LIMIT = 5, add = 0) and that
    code mentions, read now through the channel (handle 0, the candidate's
    globals: callserve.py _Globals) and bound here as any returned value:
    a test of `add = 0` meets an int, and calling it is Python's TypeError.
    Nothing to do, and no parse, for a candidate with no such global."""
    if not state.values:
        return
    import _ast as ast
    try:
        tree = compile(code, "<names>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except BaseException:
        return  # the test fails to compile on its own
    wanted = {n.id for n in _walk(tree, ast) if type(n) is ast.Name} & state.values
    for name in sorted(wanted):
        ctx.globals[name] = _judge_call(state, {"handle": 0, "attr": name}, (), {})


# The long-lived judge (job role "judges"; docs/protocol.md, "The
# long-lived judge"): one sandbox per slot that judges one evaluation after
# another, so that an evaluation pays for no judge's start.  Each
# evaluation is a role "judge" job the supervisor sends on the gate fd as a
# netstring, with a nonce of its own: its events are a stream of their own,
# hello to done, in a fresh namespace.  Only test code and canonical values
# ever run or land here, never the candidate's code; still, anything an
# evaluation could leave behind for the next (a thread, a timer, a signal
# handler, a rebound builtin, sys attribute or module name, a module put in
# sys.modules, a file in /tmp or the working directory, another working
# directory) or a channel that failed (a reply that did not decode) ends the judge
# after that evaluation's "done", which says so ("reuse": false), as does
# the gate's EOF (the supervisor closes it when the candidate ended first).

_MAX_JOB_FRAME = 1 << 28
_JUDGE_REUSE_MAX = 200  # evaluations per judge: what the heap keeps stays bounded


class _CpuBudget:
    """RLIMIT_CPU across evaluations. The supervisor sets the soft limit
    to one evaluation's (the run's timeout + 2 s, as any sandbox's; the
    10 s a judge's start may take is its wall clock's only) and the
    hard one to the judge's whole life (resource_limits.h, cpu_life_s):
    each evaluation gets one evaluation's on top of what the judge used so
    far, so the CPU of earlier evaluations never kills a later one (it did:
    "premature exit" for an honest candidate once the judge had used
    timeout + 2 s in all). A judge that could not give the next evaluation
    its whole budget ends."""

    def __init__(self, resource):
        self._resource = resource
        self._per, self._hard = resource.getrlimit(resource.RLIMIT_CPU)

    def _next_soft(self):
        used = _posix.times()
        return int(used[0] + used[1]) + 1 + self._per

    def grant(self):
        limit = self._next_soft()
        if self._hard != self._resource.RLIM_INFINITY:
            limit = min(limit, self._hard)
        self._resource.setrlimit(self._resource.RLIMIT_CPU, (limit, self._hard))

    def enough_for_next(self):
        return self._hard == self._resource.RLIM_INFINITY or self._next_soft() <= self._hard


def _listing(path):
    try:
        return sorted(_posix.listdir(path))
    except OSError:
        return None


def _process_state():
    """What an evaluation's test code could change that outlives its
    namespace, as comparable values (each object by identity)."""
    signals = tuple(_signal.getsignal(n) for n in range(1, _signal.NSIG) if n not in (9, 19))
    thread = _modules.get("_thread")
    cwd = _posix.getcwd()
    return (tuple(map(id, _builtins.__dict__.values())), tuple(_builtins.__dict__),
            tuple(map(id, _sys.__dict__.values())), tuple(_sys.path), _sys.getrecursionlimit(),
            _get_int_digits(), cwd, _listing(cwd), _listing("/tmp"),
            _signal.getitimer(_signal.ITIMER_REAL),
            _signal.getitimer(_signal.ITIMER_VIRTUAL), _signal.getitimer(_signal.ITIMER_PROF),
            tuple(map(id, signals)), thread._count() if thread is not None else 0)


def _module_mark(module):
    names = getattr(module, "__dict__", None)
    if type(names) is not dict:
        return None
    return (id(module), len(names), hash(tuple(map(id, dict.values(names)))))


def _module_name(obj, attr):
    name = getattr(obj, attr, None)
    return name if type(name) is str else None


# A long-lived judge marks each module as it is loaded (name -> its object
# and what its names are bound to, by identity): at import, by the test's
# import statements (builtins.__import__, _marking_import), and before each
# test, for what the harness loaded. At the end of an evaluation every
# module must still have its mark, and none may be unmarked: a test that
# rebinds a module's name (math.pi = 3, json.loads = f), removes a module,
# or puts an object of its own in sys.modules, ends the judge. A mutation
# in place (a list appended to, a class attribute set) changes no mark:
# docs/threat-model.md says what that leaves.
_judge_marks = None


def _mark_new_modules(any_name=False):
    marks = _judge_marks
    if marks is None or _dict_len(_modules) == _dict_len(marks):
        return
    for name, module in list(dict.items(_modules)):
        # Under its own name or its spec's (_collections_abc calls itself
        # collections.abc): an import, not an object put there by a test.
        # What the judge started with is as it is (os.path).
        if name not in marks and (any_name or name in (_module_name(module, "__name__"),
                                                       _module_name(getattr(module, "__spec__", None), "name"))):
            marks[name] = _module_mark(module)


_import_depth = [0]


def _marking_import(name, globals=None, locals=None, fromlist=(), level=0):
    # Marked when the outermost import returns: an inner one returns while
    # the modules that asked for it are still being initialised.
    _import_depth[0] += 1
    try:
        module = _real_import(name, globals, locals, fromlist, level)
    finally:
        _import_depth[0] -= 1
    if _import_depth[0] == 0:
        _mark_new_modules()
    return module


def _modules_kept():
    """Whether every module is loaded, and bound, as it was marked."""
    marks = _judge_marks
    if _dict_len(marks) != _dict_len(_modules):
        return False
    for name, module in list(dict.items(_modules)):
        if name not in marks or marks[name] != _module_mark(module):
            return False
    return True


def _judge_serve(fds):
    """Role "judges": each job from the gate fd judged in turn, until EOF
    or an evaluation after which the judge may not go on."""
    global _judge_marks
    import _ast  # noqa: F401  what compiling a test loads (_explained), before the marks
    import resource
    cpu = _CpuBudget(resource)
    _builtins.__import__ = _marking_import
    _judge_marks = {}
    _mark_new_modules(any_name=True)
    pristine = _process_state()
    for served in range(1, _JUDGE_REUSE_MAX + 1):
        job_bytes = _read_frame(fds[1], _MAX_JOB_FRAME, "job")
        if job_bytes is None:
            return
        job = _parse_job(job_bytes)
        del job_bytes
        if job["role"] != "judge":
            raise _HarnessError("judges: a job of role %r" % job["role"])
        cpu.grant()
        before = _posix.times()
        emit = _event_writer(fds[0], job.pop("nonce"))
        emit({"ev": "hello", "python": _PYTHON})
        state = _judge_run(emit, job, fds)
        del job
        _flush_std()
        after = _posix.times()
        reuse = (served < _JUDGE_REUSE_MAX and state is not None and state.broken is None
                 and state.ended is None and _process_state() == pristine)
        reuse = reuse and _modules_kept() and cpu.enough_for_next()
        emit({"ev": "done", "cpu_ms": round((after[0] + after[1] - before[0] - before[1]) * 1000, 3),
              "reuse": reuse})
        if not reuse:
            return
