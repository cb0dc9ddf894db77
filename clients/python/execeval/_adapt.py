"""What the trainer adapters (trl.py, verl.py, openrlhf.py) share.

A trainer imports a reward function by its path and calls it with its own
arguments, so the adapters take their configuration from keyword arguments
where the trainer lets the user give some, else from the environment:

  EXECEVAL_URL            the server, or several (replicas) separated by
                          commas or spaces; required
  EXECEVAL_TOKEN          the bearer token (serve --token-file), or
  EXECEVAL_TOKEN_FILE     a file holding it
  EXECEVAL_REWARD         a --reward preset or formula, sent as each
                          request's "reward" (unset: the server's --reward)
  EXECEVAL_TIMEOUT_S      the candidate's time limit, the request's
                          limits.timeout_s (unset: the task's, the server's)
  EXECEVAL_MEMORY_MB      likewise limits.memory_mb
  EXECEVAL_MODE           generation (default: the text is a model's reply,
                          the code extracted from it) or completion (the
                          text continues the task's prompt)
  EXECEVAL_MAX_IN_FLIGHT  requests outstanding at once (default 8)
  EXECEVAL_BATCH_RUNS     runs per /v1/batch at most (default 64; keep it
                          within the server's queue_capacity)
  EXECEVAL_HTTP_TIMEOUT   seconds a socket operation may block (default 300)
  EXECEVAL_INFRA_REWARD   the reward verl and OpenRLHF get for an
                          infrastructure failure, which they cannot mask
                          (default 0); TRL gets None and skips the sample
  EXECEVAL_UNAVAILABLE    raise (default) or mask: what a request that no
                          replica answered (after the client's retries)
                          becomes: an exception, or infra errors
  EXECEVAL_CALL_DEADLINE_S  seconds one call of a reward function may take
                          in all (default 600): the samples not answered by
                          then are infrastructure errors and the call
                          returns, so a server that stops answering cannot
                          hold the training step (retries and waits count)

A sample's tests come from its dataset row, in any format the server reads
(docs/formats.md): the adapters build the task from the row's columns and
the server parses it, so an adapter judges exactly as `execeval eval` does
on the same row and sample."""
import hashlib
import json
import os
import re
import threading
import time
import warnings

from .client import Client
from .errors import DeadlineExceeded, InputError, ServerError, Unavailable

# A row's test columns, in the order they are looked for, and for each the
# other columns its format reads (docs/formats.md, docs/contract.md).
TEST_COLUMNS = (
    ("verification_info", ("starter_code", "compare")),
    ("input_output", ("starter_code", "compare")),
    ("reward_model", ("compare",)),
    ("public_test_cases", ("private_test_cases", "metadata", "starter_code", "compare")),
    ("private_test_cases", ("metadata", "starter_code", "compare")),
    ("public_tests", ("private_tests", "generated_tests", "compare")),
    ("private_tests", ("generated_tests", "compare")),
    ("generated_tests", ("compare",)),
    ("test_list", ("test_setup_code", "challenge_test_list", "compare")),
    ("tests", ("prompt", "entry_point", "setup", "class", "limits", "compare")),
    ("test", ("prompt", "entry_point", "compare")),
)
ROW_KEYS = tuple(c for c, _ in TEST_COLUMNS)
# A bare ground truth (verl's reward_model.ground_truth, an OpenRLHF label).
GROUND_TRUTH_KEYS = ("inputs", "outputs", "fn_name", "assert_case")
VERIFICATION_KEYS = ("test_cases", "test_case_inputs")

DEFAULTS = {"url": None, "token": None, "token_file": None, "reward": None, "timeout_s": None,
            "memory_mb": None, "mode": "generation", "max_in_flight": 8, "batch_runs": 64,
            "http_timeout": 300.0, "infra_reward": 0.0, "unavailable": "raise", "call_deadline_s": 600.0}
CASTS = {"timeout_s": float, "memory_mb": int, "max_in_flight": int, "batch_runs": int,
         "http_timeout": float, "infra_reward": float, "call_deadline_s": float}


class Settings:
    """The adapters' configuration: keyword overrides over EXECEVAL_* over
    the defaults (the module doc lists them)."""

    def __init__(self, **overrides):
        unknown = set(overrides) - set(DEFAULTS)
        if unknown:
            raise TypeError("unknown execeval setting(s): %s (known: %s)"
                            % (", ".join(sorted(unknown)), ", ".join(DEFAULTS)))
        for key, default in DEFAULTS.items():
            value = overrides.get(key)
            if value is None:
                value = os.environ.get("EXECEVAL_" + key.upper()) or default
            if value is not None and key in CASTS:
                value = CASTS[key](value)
            setattr(self, key, value)
        if self.mode not in ("generation", "completion"):
            raise ValueError("EXECEVAL_MODE: expected generation or completion, got %r" % (self.mode,))
        if self.unavailable not in ("raise", "mask"):
            raise ValueError("EXECEVAL_UNAVAILABLE: expected raise or mask, got %r" % (self.unavailable,))
        if not self.call_deadline_s > 0:
            raise ValueError("EXECEVAL_CALL_DEADLINE_S: expected seconds > 0, got %r" % (self.call_deadline_s,))
        if self.token is None and self.token_file:
            with open(self.token_file, encoding="utf-8") as f:
                self.token = f.read().strip()

    def urls(self):
        if not self.url:
            raise ValueError("no execeval server: set EXECEVAL_URL (or pass url=...)")
        if isinstance(self.url, (list, tuple)):
            return list(self.url)
        return self.url.replace(",", " ").split()

    def limits(self):
        """The request's limits: the settings', each at most the ceiling
        the servers said they have (learn_ceiling)."""
        known = _ceilings.get(tuple(self.urls()), {})
        mine = (("timeout_s", self.timeout_s), ("memory_mb", self.memory_mb))
        return {k: min(v, known.get(k, v)) for k, v in mine if v is not None}


# The servers' ceilings (--timeout, --memory) learnt from their 400s, per
# list of URLs: a trainer's limit above one (verl's sandbox settings carry
# memory_limit_mb=1024, a server's default --memory is 512) is sent as the
# ceiling and said once, not raised: the exception would stop a training step.
_ceilings = {}
_CEILING = re.compile(r"^limits\.(timeout_s|memory_mb): ([0-9.]+) is above this server's ceiling ([0-9.]+)")


def learn_ceiling(settings, error):
    """True when error is a 400 refusing one of settings' limits for being
    above the server's ceiling: the ceiling is kept, and a warning says it."""
    if not isinstance(error, InputError) or error.status != 400:
        return False
    m = _CEILING.match(error.message or "")
    if not m or error.field != "limits." + m.group(1):
        return False
    key, ceiling = m.group(1), CASTS[m.group(1)](float(m.group(3)))
    known = _ceilings.setdefault(tuple(settings.urls()), {})
    if key in known and known[key] <= ceiling:
        return False  # learnt already: the refusal is of something else
    known[key] = ceiling
    warnings.warn("execeval: %s %s is above the server's ceiling %s: %s is used (the server's --%s; "
                  "start it with a larger one to grant more)"
                  % (key, m.group(2), m.group(3), m.group(3), "memory" if key == "memory_mb" else "timeout"),
                  RuntimeWarning, stacklevel=2)
    return True


_clients = {}
_clients_lock = threading.Lock()


def client_for(settings):
    """One Client per process and configuration, shared by every call (its
    keep-alive pool then lasts). Keyed by the pid too: a trainer that forks
    reward workers must not share the parent's sockets."""
    key = (os.getpid(), tuple(settings.urls()), settings.token, settings.http_timeout)
    with _clients_lock:
        c = _clients.get(key)
        if c is None:
            c = _clients[key] = Client(list(key[1]), token=settings.token, timeout=settings.http_timeout)
        return c


def plain(value):
    """value with numpy arrays and scalars (pandas and parquet give them)
    turned into lists and numbers, so that it encodes as JSON."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return plain(value.tolist())
    if hasattr(value, "item") and type(value).__module__ == "numpy":
        return value.item()
    return value


def _decoded(value):
    """A JSON string's value, else value itself."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _task_id(task):
    """A task's own id, or one made of its content, so equal rows share one."""
    blob = json.dumps(task, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return "sha256:" + hashlib.sha256(blob).hexdigest()[:16]


def task_from_row(row, task_id=None):
    """The task of a dataset row (a dict of columns): its test column (the
    first of TEST_COLUMNS it has) and the columns that column's format reads;
    other columns (statements, tags, the trainer's own) are left out."""
    row = {k: plain(v) for k, v in row.items() if v is not None}
    for column, companions in TEST_COLUMNS:
        if column not in row:
            continue
        value = row[column]
        if column in ("test", "tests"):
            inner = _decoded(value)
            if isinstance(inner, (dict, list)) and not (column == "tests" and isinstance(inner, list)
                                                        and all(isinstance(t, dict) for t in inner)):
                # A column holding a whole task, a ground truth or a list of asserts.
                task = task_from_value(inner, task_id or row.get("task_id"))
                if "compare" in row and "compare" not in task:
                    task["compare"] = row["compare"]
                return task
            if column == "tests":
                value = inner
            elif "entry_point" not in row or "def check" not in value:
                # Not HumanEval's check(candidate) with its entry_point (which
                # would get check(entry_point) appended): the program alone.
                task = {"tests": [{"kind": "program", "code": value}]}
                task.update((k, row[k]) for k in ("prompt", "entry_point", "compare") if k in row)
                task["task_id"] = str(task_id or row.get("task_id") or _task_id(task))
                return task
        task = {column: value}
        task.update((k, row[k]) for k in companions if k in row)
        task["task_id"] = str(task_id or row.get("task_id") or _task_id(task))
        return task
    raise ValueError("no test column: expected one of %s" % ", ".join(ROW_KEYS))


def task_from_value(value, task_id=None):
    """The task of a tests value alone: a whole row or task (a dict with a
    test column), a verl ground truth ({"inputs", "outputs"[, "fn_name"]},
    {"assert_case": [...]}), an open-r1 or Prime verification_info, a list of
    native tests or of assert strings; a JSON string of any of these."""
    original = plain(value)
    v = _decoded(original)
    if isinstance(v, dict):
        if any(k in v for k in ROW_KEYS):
            return task_from_row(v, task_id)
        if any(k in v for k in VERIFICATION_KEYS):
            task = {"verification_info": original}
        elif any(k in v for k in GROUND_TRUTH_KEYS):
            task = {"reward_model": {"ground_truth": original}}
        else:
            raise ValueError("tests: a dict with none of %s" % ", ".join(
                ROW_KEYS + GROUND_TRUTH_KEYS + VERIFICATION_KEYS))
    elif isinstance(v, list) and v and all(isinstance(t, str) for t in v):
        task = {"test_list": v}
    elif isinstance(v, list) and v and all(isinstance(t, dict) for t in v):
        task = {"tests": v}
    else:
        raise ValueError("tests: expected a task, a ground truth or a list of tests, got %s"
                         % type(v).__name__)
    task["task_id"] = str(task_id or _task_id(task))
    return task


def text_of(completion):
    """A completion's text: a string as it is; TRL's conversational form (a
    list of message dicts) gives its last assistant message's content (the
    text parts of a content list, joined)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    messages = [m for m in completion if isinstance(m, dict)]
    replies = [m for m in messages if m.get("role", "assistant") == "assistant"] or messages
    if not replies:
        raise TypeError("a completion must be a string or a list of messages, got %r" % (completion,))
    content = replies[-1].get("content") or ""
    if isinstance(content, list):
        content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return content


def _groups(items, most):
    """Runs of consecutive items with the same task (a GRPO group: one
    prompt's completions), each at most `most` long: [(task, [(i, text)])]."""
    out, key = [], None
    for i, (task, text) in enumerate(items):
        k = json.dumps(task, sort_keys=True)
        if out and k == key and len(out[-1][1]) < most:
            out[-1][1].append((i, text))
        else:
            out.append((task, [(i, text)]))
            key = k
    return out


def evaluate(items, settings, client=None):
    """items: [(task, text)]: one record each, in order; a group of
    consecutive runs of one task goes in one /v1/batch (the task sent and
    parsed once). None in place of a record that no replica answered, with
    settings.unavailable "mask"; an error of the request (a bad task) is
    raised whatever it says. The call ends by settings.call_deadline_s: what
    is not answered by then is None (an infra error), whatever
    settings.unavailable says."""
    deadline = time.monotonic() + settings.call_deadline_s
    client = client or client_for(settings)
    field = "completion" if settings.mode == "completion" else "generation"
    groups = _groups(items, max(1, settings.batch_runs))
    bodies = []
    for task, runs in groups:
        body = {"task": task, "runs": [{field: text, "sample": i} for i, text in runs]}
        if settings.reward:
            body["reward"] = settings.reward
        bodies.append(body)
    records = [None] * len(items)
    answers = _send(client, bodies, settings, deadline)
    for (task, runs), answer in zip(groups, answers):
        if isinstance(answer, DeadlineExceeded) or (
                isinstance(answer, (Unavailable, ServerError)) and settings.unavailable == "mask"):
            continue
        if isinstance(answer, BaseException):
            raise answer
        for (i, _), rec in zip(runs, answer):
            records[i] = rec
    return records


def _send(client, bodies, settings, deadline):
    """The answers to bodies (each given the settings' limits), in order;
    those refused for a limit above the server's ceiling sent again within
    it (learn_ceiling), at most once per limit."""
    todo, answers = list(range(len(bodies))), [None] * len(bodies)
    for _ in range(3):
        for i in todo:
            bodies[i].pop("limits", None)
            if settings.limits():
                bodies[i]["limits"] = settings.limits()
        # Every answer before any is looked at: the map generator is then run to
        # its end, never left suspended in a traceback's frame (see Client.map).
        got = list(client.map([bodies[i] for i in todo], max_in_flight=max(1, settings.max_in_flight),
                              return_exceptions=True, deadline=deadline))
        for i, answer in zip(todo, got):
            answers[i] = answer
        learnt = [learn_ceiling(settings, a) for a in got]
        todo = [i for i, a in zip(todo, got) if isinstance(a, InputError) and (
            any(learnt) and _CEILING.match(a.message or ""))]
        if not todo:
            break
    return answers


def is_infra(record):
    """No verdict: the host failed (a sandbox_error record) or no answer."""
    return record is None or bool(record.get("infra_error")) or "sandbox_error" in record


def reward_of(record):
    """The record's reward as a float; None for an infrastructure failure
    (or a formula whose value was not finite: the record's reward_error)."""
    if is_infra(record) or record.get("reward") is None:
        return None
    return float(record["reward"])
