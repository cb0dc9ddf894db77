"""The client's sessions (execeval.Session, AsyncSession) and the verl tool
adapter (execeval.verl_tool.ExecevalSessionTool), against a real `execeval
serve` (one for the module, tests/client/served.py) and a stub (which
replica a session sticks to; a lost answer to a cell).

The adapter is driven as verl drives a tool (verl is not installed: the
calls are written from verl's sources, verl-project/verl
verl/tools/base_tool.py and verl/experimental/agent_loop/tool_agent_loop.py):
its SGLang rollout's create once, execute per call, calc_reward and release
at the end; its ToolAgentLoop's create, execute(agent_data=) and release
around every call.

Run it inside the safety net (the real server runs cells):
    tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/client/test_sessions.py
"""
import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "clients" / "python"), str(REPO / "tests" / "e2e")]

from execeval import AsyncClient, Client, InputError, SessionBusy, SessionEnded, Unavailable  # noqa: E402
from execeval.verl_tool import ExecevalSessionTool, ToolResponse  # noqa: E402
from served import server  # noqa: E402,F401 - the module's real server
from stub import Stub, error, ok  # noqa: E402

if os.getpid() != 1 and not os.environ.get("EXECEVAL_E2E_I_AM_IN_A_NET"):
    pytest.exit("refusing to run: these tests start execeval serve; run them inside the safety net: "
                "tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/client", returncode=4)


@pytest.fixture
def url(server):  # noqa: F811 - the fixture imported above
    return "http://%s:%d" % (server.connect_host, server.port)


def sessions_alive(client, ids):
    alive = []
    for sid in ids:
        try:
            client.request("GET", "/v1/sessions/%s" % sid, None, retries=0)
            alive.append(sid)
        except InputError as e:
            assert e.status == 404, e
    return alive


# ---- Session -------------------------------------------------------------------


def test_a_session_keeps_its_state_rolls_a_bad_cell_back_and_is_deleted_at_the_end(url):
    c = Client(url)
    with c.session(setup="import math\nK = 7", files={"data.txt": "3 4\n"}, idle_timeout_s=60) as s:
        assert s.setup["status"] == "ok"
        assert s.exec("x = sum(map(int, open('data.txt').read().split()))")["status"] == "ok"
        a = s.exec("x += 1\nprint('x is', x)\nx * K")
        assert (a["status"], a["stdout"], a["result"], a["rolled_back"]) == ("ok", "x is 8\n", "56", False)
        a = s.exec("x = 100\nopen('out.txt', 'w').write('kept')\nwhile True: pass", timeout_s=1)
        assert (a["status"], a["rolled_back"]) == ("timeout", True), a
        a = s.exec("y = 1\nraise KeyError('k')")
        assert a["status"] == "error" and a["error"]["type"] == "KeyError" and not a["rolled_back"]
        assert s.exec("x, y, math.floor(K / 2)")["result"] == "(8, 1, 3)"  # the timed-out cell never happened
        with pytest.raises(FileNotFoundError):
            s.fetch("out.txt")
        s.exec("open('out.txt', 'wb').write(bytes(range(256)))")
        assert s.fetch("out.txt") == bytes(range(256))
        assert s.exec("input()", stdin="typed\n")["result"] == "'typed'"
        info = s.info()
        assert info["id"] == s.id and info["state"] == "idle" and info["cells"] >= 8, info
        sid = s.id
    assert s.closed and sessions_alive(c, [sid]) == []
    with pytest.raises(SessionEnded) as e:
        s.exec("1")
    s.closed = False  # as a client that did not delete it would see it: the server's 404
    with pytest.raises(SessionEnded) as e:
        s.exec("1")
    assert e.value.status == 404 and "session" in e.value.message
    with pytest.raises(SessionEnded):
        s.info()
    s.close()  # a session already ended is no error


def test_an_exception_in_the_block_still_deletes_the_session(url):
    c = Client(url)
    with pytest.raises(ZeroDivisionError):
        with c.session() as s:
            s.exec("z = 1")
            1 / 0
    assert s.closed and sessions_alive(c, [s.id]) == []


def test_a_failing_setup_is_an_input_error_with_its_answer(url):
    with pytest.raises(InputError) as e:
        Client(url).session(setup="import no_such_module_here")
    assert e.value.status == 422 and e.value.body["setup"]["error"]["type"] == "ModuleNotFoundError"


def test_a_second_cell_while_one_runs_is_busy_not_retried(url):
    c = Client(url)
    with c.session() as s:
        loop = asyncio.new_event_loop()
        try:
            slow = loop.run_in_executor(None, s.exec, "import time\ntime.sleep(1)\n'slow'")
            time.sleep(0.3)
            with pytest.raises(SessionBusy) as e:
                s.exec("1")
            assert e.value.status == 409
            assert loop.run_until_complete(slow)["result"] == "'slow'"
        finally:
            loop.close()


def test_the_async_session(url):
    async def main():
        async with AsyncClient(url, max_in_flight=4) as ac:
            async with ac.session(setup="n = 10") as s:
                assert (await s.exec("n += 5"))["status"] == "ok"
                assert (await s.exec("n"))["result"] == "15"
                a = await s.exec("import os\nos._exit(3)")
                assert (a["status"], a["rolled_back"]) == ("crashed", True), a
                assert (await s.exec("n * 2"))["result"] == "30"
                await s.exec("open('f', 'w').write('abc')")
                assert await s.fetch("f") == b"abc"
                assert (await s.info())["cells"] >= 5
                sid = s.id
            s2 = await ac.session()
            assert (await s2.exec("'n' in globals()"))["result"] == "False"  # sessions are apart
            await s2.close()
            for gone in (sid, s2.id):
                with pytest.raises(InputError) as e:
                    await ac._call(ac.client.request, "GET", "/v1/sessions/%s" % gone, None)
                assert e.value.status == 404
            with pytest.raises(SessionEnded):
                await s.exec("1")

    asyncio.run(main())


@pytest.mark.skipif(os.geteuid() != 0, reason="a fork's copies need root")
def test_fork_gives_sessions_that_go_on_from_the_same_state(url):
    c = Client(url)
    with c.session(setup="import random\nrandom.seed(3)") as s:
        s.exec("acc = [1, 2]\nopen('notes.txt', 'w').write('kept')")
        copies = s.fork(2)
        try:
            assert len({s.id} | {k.id for k in copies}) == 3 and all(k.replica is s.replica for k in copies)
            draws = [x.exec("acc.append(len(acc))\n(acc, open('notes.txt').read(), random.random())")["result"]
                     for x in [s] + copies]
            assert len(set(draws)) == 1 and draws[0].startswith("([1, 2, 2], 'kept', 0."), draws
            copies[0].exec("acc.append('only here')")
            assert s.exec("acc")["result"] == "[1, 2, 2]"
            with pytest.raises(InputError) as e:
                s.fork(0 + 1000)
            assert e.value.status == 400
            with pytest.raises(ValueError):
                s.fork(0)
        finally:
            for k in copies:
                k.close()
        assert sessions_alive(c, [k.id for k in copies]) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="a fork's copies need root")
def test_the_async_fork(url):
    async def main():
        async with AsyncClient(url, max_in_flight=4) as ac:
            async with ac.session(setup="v = 41") as s:
                copies = await s.fork(3)
                got = await asyncio.gather(*(k.exec("v += 1\nv") for k in copies))
                assert [g["result"] for g in got] == ["42"] * 3
                assert (await s.exec("v"))["result"] == "41"
                for k in copies:
                    await k.close()

    asyncio.run(main())


def test_a_session_sticks_to_the_replica_that_made_it():
    sid = "ab" * 16
    a = Stub([ok({"id": sid, "status": "ready", "setup": None}), ok({"status": "ok", "result": "1", "cell": 1}),
              ok({"status": "ok", "result": "2", "cell": 2}), ok({"id": sid, "status": "deleted"})])
    b = Stub([ok({"status": "ok"})] * 10)
    try:
        c = Client([a.url, b.url], retries=0)
        # The first pick goes to the first replica in turn; pin which one by making b look busy.
        c.replicas[1].outstanding = 100
        with c.session() as s:
            c.replicas[1].outstanding = 0  # from now on b would get half of the Client's picks
            assert s.replica is c.replicas[0]
            assert s.exec("1")["result"] == "1"
            assert s.exec("2")["result"] == "2"
        assert [p for p, _, _ in a.requests] == ["/v1/sessions", "/v1/sessions/%s/exec" % sid,
                                                 "/v1/sessions/%s/exec" % sid, "/v1/sessions/%s" % sid]
        assert b.requests == []
    finally:
        a.stop()
        b.stop()


def test_a_cell_is_retried_on_503_but_never_after_a_lost_answer():
    sid = "cd" * 16
    a = Stub([ok({"id": sid, "status": "ready"}), error(503, "draining", headers={"Retry-After": "0"}),
              ok({"status": "ok", "result": "1", "cell": 1}), ok({"status": "ok"}, delay=1.0),
              ok({"id": sid, "status": "deleted"})])
    try:
        # An answer later than the client's timeout is an answer lost.
        c = Client(a.url, timeout=0.3, retries=3, backoff=0.01, cooldown=0.01)
        s = c.session()
        assert s.exec("x = 1\nx")["result"] == "1"
        n = len(a.requests)
        with pytest.raises(Unavailable) as e:
            s.exec("x += 1")
        assert e.value.status is None and len(a.requests) == n + 1  # sent once, not again
        s.close()
        assert a.requests[-1][0] == "/v1/sessions/%s" % sid
    finally:
        a.stop()


# ---- the verl tool adapter -----------------------------------------------------


class AgentData:
    """What verl's ToolAgentLoop passes execute as agent_data (the field read)."""

    def __init__(self, request_id):
        self.request_id = request_id


def tool_of(url, **config):
    return ExecevalSessionTool({"type": "native", "execeval_url": url, **config}, None)


def test_the_tool_has_verls_shape(url, monkeypatch):
    tool = tool_of(url)
    assert tool.name == "code_interpreter"
    schema = tool.get_openai_tool_schema()
    assert schema["function"]["parameters"]["required"] == ["code"]
    monkeypatch.setenv("EXECEVAL_URL", url)
    assert ExecevalSessionTool({"type": "native"}, None).settings.urls() == [url]  # the environment as fallback
    with pytest.raises(TypeError):
        ExecevalSessionTool({"type": "native", "execeval_ulr": url}, None)

    async def shapes():
        iid, resp = await tool.create()
        assert isinstance(iid, str) and isinstance(resp, ToolResponse) and resp.is_empty()
        assert (await tool.create("given"))[0] == "given"
        out = await tool.execute(iid, {"code": "print('hi')"})
        assert len(out) == 3 and out[0].text == "hi" and out[1] == 0.0 and isinstance(out[2], dict)
        assert await tool.calc_reward(iid) == 0.0
        assert await tool.release(iid) is None
        await tool.release("given")
        await tool.close()

    asyncio.run(shapes())


def test_verl_loads_the_tool_by_its_class_path_and_deep_copies_it(url, monkeypatch):
    """As verl's tool_registry does: get_tool_class(class_name) by
    importlib, the constructor (config, tool_schema), then ToolListCache's
    copy.deepcopy of the list; inside verl, its own ToolResponse and schema
    classes (stood in for here by a module of that name: verl is not
    installed)."""
    import copy
    import importlib.util
    import types

    class FakeSchema:
        def __init__(self, d):
            self.d = d
            self.function = types.SimpleNamespace(name=d["function"]["name"])

        @classmethod
        def model_validate(cls, d):
            return cls(d)

    class FakeResponse:
        def __init__(self, text=None, image=None, video=None):
            self.text, self.image, self.video = text, image, video

    fake = types.ModuleType("verl.tools.schemas")
    fake.OpenAIFunctionToolSchema, fake.ToolResponse = FakeSchema, FakeResponse
    monkeypatch.setitem(sys.modules, "verl.tools.schemas", fake)
    module_name, class_name = "execeval.verl_tool.ExecevalSessionTool".rsplit(".", 1)
    spec = importlib.util.find_spec(module_name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tool = copy.deepcopy([getattr(module, class_name)(config={"type": "native", "execeval_url": url},
                                                      tool_schema=None)])[0]
    assert isinstance(tool.tool_schema, FakeSchema) and tool.name == "code_interpreter"

    async def main():
        iid, resp = await tool.create()
        out, _, _ = await tool.execute(iid, {"code": "6 * 7"})
        await tool.release(iid)
        await tool.close()
        return resp, out

    resp, out = asyncio.run(main())
    assert isinstance(resp, FakeResponse) and isinstance(out, FakeResponse) and out.text == "42"


def test_the_tool_driven_as_verls_sglang_rollout_drives_it(url):
    """create once per trajectory, three cells, calc_reward, release: one session."""
    tool = tool_of(url, timeout_s=2, setup="import math")

    async def trajectory():
        iid, _ = await tool.create("req-1", setup="BASE = 10")
        r1, reward, m1 = await tool.execute(iid, {"code": "x = BASE + 1\nprint('x =', x)"})
        assert r1.text == "x = 11" and reward == 0.0 and m1["new_session"] == 1
        r2, _, m2 = await tool.execute(iid, {"code": "def f(n):\n    return n * x\nraise ValueError('oops')"})
        assert "ValueError: oops" in r2.text and "<cell-" in r2.text and m2["error"] == 1, r2.text
        r3, _, m3 = await tool.execute(iid, {"code": "while True:\n    pass"})
        assert "rolled back" in r3.text and "2 s" in r3.text and m3["rolled_back"] == 1, r3.text
        r4, _, m4 = await tool.execute(iid, {"code": "f(2), math.isqrt(x * x)"})
        assert r4.text == "(22, 11)" and m4["new_session"] == 0, r4.text
        sid = tool._held[iid].session.id
        assert await tool.calc_reward(iid) == 0.0
        await tool.release(iid)
        assert iid not in tool._held
        await tool.close()
        return sid

    sid = asyncio.run(trajectory())
    assert sessions_alive(Client(url), [sid]) == []


def test_the_tool_driven_as_verls_tool_agent_loop_drives_it(url):
    """create, execute(agent_data=), release around every call: the session
    is the trajectory's, kept across the calls."""
    tool = tool_of(url, idle_timeout_s=30)

    async def call(request_id, code):
        iid, _ = await tool.create(create_kwargs={})
        try:
            resp, reward, _ = await tool.execute(iid, {"code": code}, agent_data=AgentData(request_id))
        finally:
            await tool.release(iid)
        return resp.text

    async def main():
        assert await call("t1", "acc = []") == "[no output]"
        assert await call("t2", "acc = ['other']") == "[no output]"
        # Two calls of one turn at once (verl's max_parallel_calls): one after the other, no 409.
        texts = await asyncio.gather(call("t1", "acc.append(1)\nlen(acc)"), call("t1", "acc.append(2)\nlen(acc)"))
        assert sorted(texts) == ["1", "2"], texts
        assert await call("t1", "acc") == "[1, 2]"
        assert await call("t2", "acc") == "['other']"
        ids = [h.session.id for h in tool._held.values()]
        await tool.release_trajectory("t1")
        assert len(tool._held) == 1
        await tool.close()
        return ids

    ids = asyncio.run(main())
    assert len(ids) == 2 and sessions_alive(Client(url), ids) == []


def test_a_cell_the_host_starved_is_no_penalty_for_the_model():
    """A starved cell's answer (infra_error: the server's, docs/api.md) is
    neither the code's timeout in what the model reads nor an error in the
    metrics; the Session hands it back as an answer."""
    sid = "ef" * 16
    starved = {"status": "timeout", "detail": "timeout (starved: 30 ms of CPU)", "infra_error": True,
               "rolled_back": True, "tmp_restored": True, "stdout": "", "stderr": "", "result": None,
               "error": None, "duration_ms": 1001.0, "cpu_ms": None, "cell": 1}
    a = Stub([ok({"id": sid, "status": "ready"}), ok(starved), ok({"id": sid, "status": "deleted"})])
    try:
        s = Client(a.url, retries=0).session()
        answer = s.exec("while True:\n    pass", timeout_s=1)
        assert (answer["status"], answer["infra_error"], answer["rolled_back"]) == ("timeout", True, True)
        s.close()
        tool = tool_of(a.url, timeout_s=1)

        async def main():
            iid, _ = await tool.create()
            resp, reward, m = await tool.execute(iid, {"code": "while True:\n    pass"})
            await tool.close()
            return resp, reward, m

        a.requests.clear()
        resp, reward, m = asyncio.run(main())
        assert reward == 0.0 and (m["infra_error"], m["error"]) == (1, 0), m
        assert "too busy" in resp.text and "not the code's doing" in resp.text, resp.text
        assert "time limit" not in resp.text, resp.text
    finally:
        a.stop()


def test_the_tool_tells_the_model_when_its_interpreter_ended(url):
    tool = tool_of(url)
    c = Client(url)

    async def main():
        iid, _ = await tool.create()
        await tool.execute(iid, {"code": "v = 1"})
        c.request("DELETE", "/v1/sessions/%s" % tool._held[iid].session.id, None)  # as an idle timeout would
        resp, _, m = await tool.execute(iid, {"code": "'v' in globals()"})
        assert "interpreter had ended" in resp.text and resp.text.endswith("False") and m["new_session"] == 1
        resp, _, _ = await tool.execute(iid, {"code": "import no_such_module_here"})
        assert "ModuleNotFoundError" in resp.text
        resp, _, _ = await tool.execute(iid, {"code": "print('y' * 50000)"})
        assert len(resp.text) <= 8192 and "characters cut" in resp.text
        await tool.release(iid)
        await tool.close()

    asyncio.run(main())


def test_64_trajectories_of_20_cells_driven_as_verls_agent_loop_every_answer_right(url):
    """The acceptance load of a verl agent loop: 64 trajectories at once
    (the server's --max-sessions), 20 cells each, every call made as
    verl's ToolAgentLoop makes it (create, execute with its agent_data,
    release), each cell building on the earlier ones: every answer must be
    the one its own state implies (nothing lost, nothing crossed between
    sessions), and no session is left at the end."""
    # A clock far above these cells' time: 64 sessions' first cells at once
    # take seconds on a loaded 2-core host (docs/rl.md).
    tool = tool_of(url, idle_timeout_s=120, max_in_flight=64, timeout_s=30)
    cells = 20

    async def call(request_id, code):
        iid, _ = await tool.create(create_kwargs={})
        try:
            resp, _, _ = await tool.execute(iid, {"code": code}, agent_data=AgentData(request_id))
        finally:
            await tool.release(iid)
        return resp.text

    async def trajectory(t):
        rid = "traj-%d" % t
        got = [await call(rid, "T = %d\ntotal = 0\nseen = []" % t)]
        for k in range(1, cells):
            got.append(await call(rid, "total += T * %d\nseen.append(%d)\nprint(T, len(seen))\ntotal" % (k, k)))
        want = ["[no output]"] + ["%d %d\n%d" % (t, k, t * k * (k + 1) // 2) for k in range(1, cells)]
        assert got == want, (t, got)
        sid = tool._held["trajectory:%s" % rid].session.id  # one session the whole trajectory
        await tool.release_trajectory(rid)
        return sid

    async def main():
        ids = await asyncio.gather(*(trajectory(t) for t in range(64)))
        assert not tool._held
        await tool.close()
        return ids

    ids = asyncio.run(main())
    assert len(set(ids)) == 64 and sessions_alive(Client(url), ids) == []


def test_a_sessions_answer_is_judged_in_a_fresh_sandbox_not_in_the_session(url):
    """The agent wrote a right add() to a file and also planted, in its own
    interpreter, a builtins patch that would pass any assert run there: the
    judge runs the file's program in a fresh sandbox, where the plant is
    not, so a wrong program fails and a right one passes."""
    task = {"task_id": "t/add", "entry_point": "add",
            "tests": [{"kind": "assert", "code": "assert add(1, 2) == 3"}]}
    c = Client(url)
    with c.session() as s:
        s.exec("import builtins\nbuiltins.AssertionError = type('Never', (Exception,), {})")
        s.exec("open('good.py', 'w').write('def add(a, b):\\n    return a + b\\n')")
        s.exec("open('bad.py', 'w').write('def add(a, b):\\n    return a - b\\n')")
        good = s.judge(task, file="good.py")
        bad = s.judge(task, file="bad.py")
        assert (good["status"], good["session"]) == ("pass", {"id": s.id, "file": "good.py"}), good
        assert bad["status"] == "assertion_fail", bad
        assert s.judge(task, code="def add(a, b):\n    return 3\n")["status"] == "pass"
        with pytest.raises(FileNotFoundError):
            s.judge(task, file="missing.py")
    c.close()
