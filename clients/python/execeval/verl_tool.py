"""verl: an execeval session as the agent's code interpreter tool.

    tools:
      - class_name: execeval.verl_tool.ExecevalSessionTool
        config: {type: native, execeval_url: "http://judge-0:8080"}
        tool_schema: {type: function, function: {name: code_interpreter, ...}}

verl loads the class by that path (verl/tools/utils/tool_registry.py,
get_tool_class) and calls it through the interface of its
verl/tools/base_tool.py BaseTool, as it is in verl-project/verl (commit
3e3662a04286): the constructor (config, tool_schema), get_openai_tool_schema(),
`async create(instance_id=None, **kwargs) -> (instance_id, ToolResponse)`,
`async execute(instance_id, parameters, **kwargs) -> (ToolResponse, step
reward, metrics)`, `async calc_reward(instance_id, **kwargs) -> float`,
`async release(instance_id, **kwargs)`. The class does not import verl (the
client needs the standard library only): it answers verl's own
ToolResponse (and makes verl's OpenAIFunctionToolSchema when the config
gives no tool_schema) when verl.tools.schemas is already loaded, which it
is inside verl, and an object with the same fields otherwise.

Which session a call runs in. verl calls tools in two ways:
  - its SGLang rollout (verl/workers/rollout/sglang_rollout) calls create
    once per trajectory (instance_id = the request's id), execute for each
    tool call, then calc_reward and release at the trajectory's end: one
    instance is one trajectory, and one session;
  - its ToolAgentLoop (verl/experimental/agent_loop/tool_agent_loop.py,
    _call_tool) calls create, execute and release around every single tool
    call, passing execute `agent_data=` (whose request_id names the
    trajectory). A session per instance would forget everything between
    the model's cells, so when execute is given agent_data (scope "auto",
    the default; or scope "trajectory") the session belongs to the
    trajectory: made at its first cell, used by all its later cells, and
    ended by the server at its idle timeout (config idle_timeout_s,
    default 120 here), since the loop never says that a trajectory is
    over. scope "instance" always keeps one session per instance.
A session is made at the first execute, not at create (most trajectories
of a batch may never call the tool). Cells of one session run one at a
time (verl may run a turn's parallel tool calls at once).

What the model sees (execute's text): the cell's stdout and stderr, the
repr of its trailing expression, the traceback of its exception, and a
note when it was rolled back (timeout, output cap, memory, a crash: the
session is as it was before that cell), at most max_output_chars (middle
cut). A cell the host starved of CPU (the answer's infra_error: the
machine was busy, not the code slow) is told as such, not as the code's
timeout, and counted in the metrics' infra_error, not as an error. The
step reward is 0.0 and calc_reward returns 0.0: an agent's answer is
judged elsewhere, by the reward function (execeval/verl.py's
compute_score) in a fresh sandbox, never inside the session that wrote it
(whatever the agent planted there would run with the tests).

config keys (all optional; each also read from the environment as
EXECEVAL_<KEY> where _adapt says so):
  execeval_url      the server(s): a string (commas or spaces between
                    replicas) or a list; else EXECEVAL_URL
  token, token_file the bearer token (else EXECEVAL_TOKEN, EXECEVAL_TOKEN_FILE)
  http_timeout      seconds a socket operation may block (default 300)
  timeout_s         a cell's wall clock (default: the server's --timeout)
  limits            the session's {memory_mb, procs, tmp_mb, output_cap}
  idle_timeout_s    default 120; ttl_s: default the server's (3600)
  setup             code every session runs first (a task's imports)
  max_output_chars  default 8192
  max_in_flight     requests at once from this process (default 64)
  scope             auto (default), trajectory or instance (above)
create's keywords (verl's create_kwargs, a row's tools_kwargs) may give a
trajectory's own setup and files ({relative path: str}) for its /tmp."""
import asyncio
import copy
import sys
import time
import uuid

if __package__:
    from . import _adapt
    from .aio import AsyncClient
    from .errors import ExecevalError, InputError, SessionEnded
else:  # loaded by file path: this tree's package
    import os
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from execeval import _adapt
    from execeval.aio import AsyncClient
    from execeval.errors import ExecevalError, InputError, SessionEnded

DEFAULT_SCHEMA = {
    "type": "function",
    "function": {
        "name": "code_interpreter",
        "description": "Runs a Python cell in a persistent interpreter (variables, imports and files in the "
                       "working directory stay from one call to the next) and returns what it printed, the "
                       "value of its last expression, or its traceback.",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "the Python cell to run"}},
            "required": ["code"],
        },
    },
}
CONFIG_KEYS = ("type", "execeval_url", "token", "token_file", "http_timeout", "timeout_s", "limits",
               "idle_timeout_s", "ttl_s", "setup", "max_output_chars", "max_in_flight", "scope")
ROLLED_BACK = {
    "timeout": "it ran past its time limit",
    "output_overflow": "it printed more than the output limit",
    "memory_limit": "it used more than the memory limit",
    "crashed": "it ended the interpreter",
}


class ToolResponse:
    """verl's ToolResponse fields (text, image, video), for use outside verl."""

    def __init__(self, text=None, image=None, video=None):
        self.text, self.image, self.video = text, image, video

    def is_empty(self):
        return not self.text and not self.image and not self.video

    def is_text_only(self):
        return bool(self.text) and not self.image and not self.video

    def model_dump(self, **_):
        return {"text": self.text, "image": self.image, "video": self.video}

    def __repr__(self):
        return "ToolResponse(text=%r)" % (self.text,)


def _verl_schemas():
    """verl.tools.schemas when verl has loaded it (never imported here)."""
    return sys.modules.get("verl.tools.schemas")


def response(text=None):
    """A ToolResponse: verl's own inside verl, else this module's."""
    schemas = _verl_schemas()
    return schemas.ToolResponse(text=text) if schemas is not None else ToolResponse(text=text)


def _schema_name(schema):
    return schema["function"]["name"] if isinstance(schema, dict) else schema.function.name


def cap(text, most):
    """text cut in the middle to at most `most` characters (and a note)."""
    if len(text) <= most:
        return text
    note = "\n...[%d characters cut]...\n" % (len(text) - most)
    head = max(0, (most - len(note)) * 2 // 3)
    tail = max(0, most - len(note) - head)
    return text[:head] + note + (text[len(text) - tail:] if tail else "")


def render(answer, timeout_s=None):
    """What the model sees of a cell's answer (see the module doc)."""
    parts = []
    for key in ("stdout", "stderr"):
        if answer.get(key):
            parts.append(answer[key].rstrip("\n"))
    if answer.get("result") is not None:
        parts.append(answer["result"])
    error = answer.get("error")
    if answer.get("status") == "error" and error:
        parts.append((error.get("traceback") or "").rstrip("\n")
                     or "%s: %s" % (error.get("type"), error.get("message")))
    if answer.get("rolled_back") and answer.get("infra_error"):
        parts.append("[the cell was stopped and rolled back: the machine running it was too busy to give it "
                     "CPU, which is not the code's doing; the interpreter is as it was before this cell, and "
                     "the cell may be run again]")
    elif answer.get("rolled_back"):
        why = ROLLED_BACK.get(answer.get("status"), answer.get("detail") or answer.get("status"))
        if answer.get("status") == "timeout" and timeout_s:
            why = "it ran past its time limit (%g s)" % timeout_s
        parts.append("[the cell was stopped and rolled back: %s (%s); the interpreter is as it was before "
                     "this cell]" % (why, answer.get("detail") or answer.get("status")))
    return "\n".join(parts) if parts else "[no output]"


class _Held:
    """One session this tool holds: made at its first cell, one cell at a time."""

    def __init__(self):
        self.session = None
        self.lock = asyncio.Lock()
        self.last_used = time.monotonic()


class ExecevalSessionTool:
    """verl's BaseTool interface over execeval sessions (the module doc)."""

    def __init__(self, config, tool_schema=None):
        config = dict(config or {})
        unknown = set(config) - set(CONFIG_KEYS)
        if unknown:
            raise TypeError("ExecevalSessionTool: unknown config key(s) %s (known: %s)"
                            % (", ".join(sorted(unknown)), ", ".join(CONFIG_KEYS)))
        self.config = config
        self.tool_schema = tool_schema or self.get_openai_tool_schema()
        self.name = _schema_name(self.tool_schema)
        self.scope = config.get("scope", "auto")
        if self.scope not in ("auto", "trajectory", "instance"):
            raise ValueError("ExecevalSessionTool: scope: expected auto, trajectory or instance, got %r"
                             % (self.scope,))
        url = config.get("execeval_url")
        self.settings = _adapt.Settings(url=",".join(url) if isinstance(url, (list, tuple)) else url,
                                        token=config.get("token"), token_file=config.get("token_file"),
                                        http_timeout=config.get("http_timeout"))
        self.settings.urls()  # no server: an error now, not at the first cell
        self.timeout_s = config.get("timeout_s")
        self.limits = dict(config.get("limits") or {})
        self.idle_timeout_s = float(config.get("idle_timeout_s", 120))
        self.ttl_s = config.get("ttl_s")
        self.setup = config.get("setup")
        self.max_output_chars = int(config.get("max_output_chars", 8192))
        self.max_in_flight = int(config.get("max_in_flight", 64))
        self._client = None
        self._instances = {}  # instance id -> {"setup", "files", "key"}
        self._held = {}  # session key (an instance id, or "trajectory:" + request id) -> _Held

    def __deepcopy__(self, memo):
        """verl deep-copies its cached tool list per agent loop: a fresh tool
        of the same configuration (no connection, no session is copied)."""
        return type(self)(copy.deepcopy(self.config, memo), copy.deepcopy(self.tool_schema, memo))

    def get_openai_tool_schema(self):
        schema = getattr(self, "tool_schema", None)
        if schema is not None:
            return schema
        schemas = _verl_schemas()
        return schemas.OpenAIFunctionToolSchema.model_validate(DEFAULT_SCHEMA) if schemas is not None \
            else copy.deepcopy(DEFAULT_SCHEMA)

    @property
    def client(self):
        if self._client is None:
            self._client = AsyncClient(self.settings.urls(), token=self.settings.token,
                                       timeout=self.settings.http_timeout, max_in_flight=self.max_in_flight)
        return self._client

    # -- verl's BaseTool interface -------------------------------------------------

    async def create(self, instance_id=None, **kwargs):
        """A new instance (no session yet): (instance_id, an empty
        ToolResponse). kwargs: verl's create_kwargs, as keywords (SGLang
        rollout) or as create_kwargs={...} (ToolAgentLoop); "setup" and
        "files" are this trajectory's."""
        kw = dict(kwargs.pop("create_kwargs", None) or {})
        kw.update(kwargs)
        if instance_id is None:
            instance_id = str(uuid.uuid4())
        self._instances[instance_id] = {"setup": kw.get("setup"), "files": kw.get("files"), "key": None}
        self._forget_idle()
        return instance_id, response()

    async def execute(self, instance_id, parameters, **kwargs):
        """Runs parameters["code"] as a cell: (ToolResponse(text=what the
        model sees), 0.0, metrics {duration_ms, rolled_back, error,
        infra_error, new_session})."""
        inst = self._instances.get(instance_id)
        if inst is None:  # never created (or released): as verl's tools do, make it now
            await self.create(instance_id)
            inst = self._instances[instance_id]
        code = parameters.get("code") if isinstance(parameters, dict) else None
        if code is None or code == "":
            return response("Error: no code given (call the tool with {\"code\": \"...\"})"), 0.0, \
                {"duration_ms": 0.0, "rolled_back": 0, "error": 1, "infra_error": 0, "new_session": 0}
        if not isinstance(code, str):
            code = str(code)
        inst["key"] = key = self._key(instance_id, kwargs.get("agent_data"))
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = _Held()
        async with held.lock:
            held.last_used = time.monotonic()
            try:
                text, metrics = await self._run(held, inst, code)
            except ExecevalError as e:
                text = "Error: the code interpreter is unavailable (%s); the cell did not run or its " \
                       "answer was lost" % (e,)
                metrics = {"duration_ms": 0.0, "rolled_back": 0, "error": 0, "infra_error": 1, "new_session": 0}
            held.last_used = time.monotonic()
        return response(cap(text, self.max_output_chars)), 0.0, metrics

    async def calc_reward(self, instance_id, **kwargs):
        """0.0: the trajectory's answer is judged by the reward function, in
        a fresh sandbox, never in the session it was written in."""
        return 0.0

    async def release(self, instance_id, **kwargs):
        """Forgets the instance; deletes its session when the session is the
        instance's own (a trajectory's session outlives its instances: it
        ends at its idle timeout, or with release_trajectory)."""
        inst = self._instances.pop(instance_id, None)
        key = inst["key"] if inst else instance_id
        if key == instance_id:
            await self._drop(key)

    # -- beyond verl's interface ---------------------------------------------------

    async def release_trajectory(self, request_id):
        """Deletes the session of the trajectory request_id now (an agent
        loop that knows when a trajectory ends can call it)."""
        await self._drop("trajectory:%s" % request_id)

    async def close(self):
        """Deletes every session this tool holds and closes its connections."""
        for key in list(self._held):
            await self._drop(key)
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _key(self, instance_id, agent_data):
        request_id = getattr(agent_data, "request_id", None)
        if self.scope == "trajectory" or (self.scope == "auto" and request_id is not None):
            if request_id is None:
                raise ValueError("ExecevalSessionTool: scope trajectory needs execute(..., agent_data=) "
                                 "with a request_id")
            return "trajectory:%s" % request_id
        return instance_id

    async def _run(self, held, inst, code):
        note, new_session = "", 0
        for attempt in (0, 1):
            if held.session is None:
                failed = await self._start(held, inst)
                if failed is not None:
                    return failed, {"duration_ms": 0.0, "rolled_back": 0, "error": 1, "infra_error": 0,
                                    "new_session": 1}
                new_session = 1
            try:
                answer = await held.session.exec(code, timeout_s=self.timeout_s)
                break
            except SessionEnded:
                held.session = None
                if attempt:
                    raise
                note = "[the interpreter had ended (idle timeout or a restart): its variables, imports and " \
                       "files are gone; this cell ran in a new one]\n"
        metrics = {"duration_ms": float(answer.get("duration_ms") or 0.0),
                   "rolled_back": 1 if answer.get("rolled_back") else 0,
                   "error": 1 if answer.get("status") == "error" else 0,
                   "infra_error": 1 if answer.get("infra_error") else 0,
                   "new_session": new_session}
        return note + render(answer, self.timeout_s), metrics

    async def _start(self, held, inst):
        """Makes held's session; the text for the model if its setup failed."""
        setup = "\n".join(s for s in (self.setup, inst.get("setup")) if s) or None
        files = inst.get("files")
        try:
            held.session = await self.client.session(setup=setup, limits=self.limits or None,
                                                     idle_timeout_s=self.idle_timeout_s, ttl_s=self.ttl_s,
                                                     files=files)
        except InputError as e:
            if e.status == 422 and isinstance(e.body, dict) and isinstance(e.body.get("setup"), dict):
                return "Error: the interpreter's setup failed:\n" + render(e.body["setup"])
            raise
        return None

    async def _drop(self, key):
        held = self._held.pop(key, None)
        if held is not None and held.session is not None:
            try:
                await held.session.close(retries=2)
            except ExecevalError:
                pass  # the server ends it at its idle timeout

    def _forget_idle(self):
        """Forgets the sessions idle past their timeout: the server has ended
        them (bounds what this process holds)."""
        now = time.monotonic()
        for key, held in list(self._held.items()):
            if not held.lock.locked() and now - held.last_used > self.idle_timeout_s:
                del self._held[key]
