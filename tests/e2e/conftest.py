"""Black-box fixtures for execeval's end-to-end tests.

Every candidate here, hostile or not, runs only through the execeval binary
(env EXECEVAL, default build/execeval at the repository root); nothing runs a
candidate with python directly. The whole suite must run inside the outer
safety net:

    tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/e2e

which gives it its own pid namespace (pytest is pid 1 there) and a memory and
pids cgroup. The suite refuses to start anywhere else.

Fixtures:
  run        run(candidate, asserts=[...], task=None, args=[...], stdin=None,
             env=None) -> RunResult (a tuple (code, record, stderr), with
             .stdout, .elapsed and .argv too)
  isolation_args()  ["--isolation", VALUE] when the environment variable
             EXECEVAL_ISOLATION is set (warm, cold or auto), else []: the
             run fixture and clean_up_after_a_dead_execeval add it to every
             `run`/`eval` command line, and so should any test that builds
             its own (with_isolation(argv) does it), so one variable runs
             a whole suite under another isolation:
                 EXECEVAL_ISOLATION=warm tests/e2e/safety-net ... test_hostile.py
  secret     a random string exported as EXECEVAL_TEST_SECRET into every
             execeval's environment; run() asserts that it never appears in
             execeval's stdout or stderr
  accepted(listener)  connections waiting on a non-blocking listener
             (accepted and closed): what a hostile probe reached
  marker     a unique string per test, for hostile candidates to put into
             file names and argv; the host-evidence check looks for it
  host_evidence (autouse) after every test: no surviving sandbox process (a
             sandbox uid: is_sandbox_uid(), the harness's command line, an execeval process, the
             marker), no execeval.* cgroup left, no new mount, no new file
             owned by the sandbox's uid (or named with the marker) in the
             host's /tmp, /var/tmp or /dev/shm.

The run history: eval stores every run in a history database, by default
under the caller's home ($XDG_DATA_HOME, else ~/.local/share). The suite
points XDG_DATA_HOME at a private directory for its whole run (removed at the
end), so no test writes into the real home; tests about the history pass
--history/--no-history or build their own environment (HOME, XDG_DATA_HOME).
"""
import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXECEVAL = os.path.abspath(os.environ.get("EXECEVAL") or str(REPO / "build" / "execeval"))
OUTER_TIMEOUT = 60
NOBODY = 65534
# As root each sandbox runs as a host uid/gid of its own from this range
# (src/sandbox/uid.h); unprivileged, as the caller (65534 inside).
SANDBOX_UID_BASE = int(os.environ.get("EXECEVAL_UID_BASE") or "0x7ee00000", 0)
SANDBOX_UID_COUNT = 65536
SECRET = "ee-secret-" + secrets.token_hex(16)
HOST_TMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
ISOLATION = os.environ.get("EXECEVAL_ISOLATION") or None
# EXECEVAL_BACKEND=gvisor runs a suite's run/eval command lines under gVisor
# (--backend gvisor, added as isolation_args() adds --isolation).
BACKEND = os.environ.get("EXECEVAL_BACKEND") or None


def pytest_configure(config):
    if os.getpid() != 1 and not os.environ.get("EXECEVAL_E2E_I_AM_IN_A_NET"):
        pytest.exit("refusing to run: the e2e suite runs hostile candidates and must run inside "
                    "the safety net: tests/e2e/safety-net /usr/bin/python3 -m pytest -q tests/e2e",
                    returncode=4)
    if not os.access(EXECEVAL, os.X_OK):
        pytest.exit("no execeval binary at %s (make build/execeval, or set EXECEVAL)" % EXECEVAL,
                    returncode=4)
    if ISOLATION not in (None, "warm", "cold", "auto"):
        pytest.exit("EXECEVAL_ISOLATION must be warm, cold or auto, not %r" % ISOLATION, returncode=4)
    if BACKEND not in (None, "native", "gvisor"):
        pytest.exit("EXECEVAL_BACKEND must be native or gvisor, not %r" % BACKEND, returncode=4)
    # Every execeval inherits this: eval's default history lands here, not in ~.
    config.execeval_data_home = tempfile.mkdtemp(prefix="execeval-e2e-data-")
    os.environ["XDG_DATA_HOME"] = config.execeval_data_home


def pytest_unconfigure(config):
    data_home = getattr(config, "execeval_data_home", None)
    if data_home:
        shutil.rmtree(data_home, ignore_errors=True)


def pytest_report_header(config):
    return "execeval: %s, isolation: %s, backend: %s" % (EXECEVAL, ISOLATION or "each command's default",
                                                          BACKEND or "native")


def isolation_args():
    """["--isolation", EXECEVAL_ISOLATION] when that variable is set, and
    ["--backend", EXECEVAL_BACKEND] when that one is; else []."""
    return (["--isolation", ISOLATION] if ISOLATION else []) + (["--backend", BACKEND] if BACKEND else [])


def with_isolation(argv):
    """argv (an `execeval run|eval ...` command line, as a list) with
    isolation_args() inserted after the subcommand, unless it already says
    --isolation. Other subcommands are returned unchanged."""
    argv = list(argv)
    if len(argv) >= 2 and argv[1] in ("run", "eval") and not any(
            str(a) == "--isolation" or str(a).startswith("--isolation=") for a in argv):
        argv[2:2] = isolation_args()
    return argv


def judged_inline(run):
    """The `run` fixture's function with `--judge inline` added unless the
    call names a judge: for files that test the inline harness itself."""
    def run_(*a, args=(), **k):
        if "--judge" not in args:
            args = ("--judge", "inline") + tuple(args)
        return run(*a, args=args, **k)
    return run_


# ---------------------------------------------------------------------------
# Running execeval.


class RunResult(tuple):
    """(code, record, stderr); .stdout is execeval's raw stdout."""

    def __new__(cls, code, record, stderr, stdout, elapsed, argv):
        self = tuple.__new__(cls, (code, record, stderr))
        self.stdout, self.elapsed, self.argv = stdout, elapsed, argv
        return self

    code = property(lambda self: self[0])
    record = property(lambda self: self[1])
    stderr = property(lambda self: self[2])

    def __repr__(self):
        return "RunResult(code=%r, record=%r, stderr=%r)" % self[:3]


def parse_record(stdout):
    """The one-line JSON record execeval printed, or None."""
    lines = stdout.splitlines()
    if len(lines) != 1:
        return None
    try:
        rec = json.loads(lines[0])
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None


def execeval_env(env=None):
    e = dict(os.environ)
    e["EXECEVAL_TEST_SECRET"] = SECRET
    if env:
        e.update(env)
    return e


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("runs")


@pytest.fixture
def run(runs_dir):
    counter = [0]

    def run_(candidate, asserts=None, task=None, args=(), stdin=None, env=None, *,
             task_text=None, candidate_path=None, timeout=OUTER_TIMEOUT, command="run"):
        """Runs `execeval run [args] --assert.../--task F CANDIDATE`.

        candidate: program text (written to a file), or None to pass "-" and
        feed `stdin` to execeval. task: a dict written as JSON; task_text: a
        task file's raw text."""
        counter[0] += 1
        # mkdtemp, not a random name: every test's first run is r0001, and a
        # 3-byte suffix collided once in ~300 tests (birthday odds).
        d = Path(tempfile.mkdtemp(prefix="r%04d-" % counter[0], dir=runs_dir))
        argv = [EXECEVAL, command]
        for a in asserts or ():
            argv += ["--assert", a]
        if task is not None or task_text is not None:
            tf = d / "task.json"
            tf.write_text(task_text if task_text is not None else json.dumps(task))
            argv += ["--task", str(tf)]
        argv += list(args)
        argv = with_isolation(argv)
        if candidate_path is not None:
            argv.append(str(candidate_path))
        elif candidate is not None:
            cf = d / "candidate.py"
            cf.write_text(candidate)
            argv.append(str(cf))
        else:
            argv.append("-")
        t0 = time.monotonic()
        p = subprocess.run(argv, input=(stdin or "").encode(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=execeval_env(env), timeout=timeout, cwd=d)
        elapsed = time.monotonic() - t0
        out = p.stdout.decode("utf-8", "replace")
        err = p.stderr.decode("utf-8", "replace")
        assert SECRET not in out and SECRET not in err, "the caller's secret leaked"
        record = parse_record(out)
        if p.returncode in (0, 1):
            assert record is not None, "exit %d without exactly one JSON record line:\n%s\n%s" % (
                p.returncode, out, err)
            assert (record["status"] == "pass") == (p.returncode == 0), record
        return RunResult(p.returncode, record, err, out, elapsed, argv)

    return run_


@pytest.fixture(scope="session")
def secret():
    return SECRET


# ---------------------------------------------------------------------------
# Host evidence.


def _read(path, mode="rb"):
    try:
        with open(path, mode) as f:
            return f.read()
    except OSError:
        return None


def processes():
    """[(pid, state, uids, cmdline bytes, exe)] of every live process we can see."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        status = _read("/proc/%d/status" % pid, "r")
        if status is None:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        state = fields.get("State", "?").split()[0] if fields.get("State") else "?"
        uids = tuple(int(u) for u in fields.get("Uid", "").split())
        cmdline = _read("/proc/%d/cmdline" % pid) or b""
        try:
            exe = os.readlink("/proc/%d/exe" % pid)
        except OSError:
            exe = ""
        out.append((pid, state, uids, cmdline, exe))
    return out


def is_sandbox_uid(uid):
    """A uid sandboxes run as: the range's, or 65534 (execeval run as nobody)."""
    return uid == NOBODY or SANDBOX_UID_BASE <= uid < SANDBOX_UID_BASE + SANDBOX_UID_COUNT


def reap_zombies():
    """pytest is pid 1 of the net's namespace: orphans end up as its zombies."""
    if os.getpid() != 1:
        return
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# How the sandbox starts the harness (python3 -I -S -B -c SOURCE, or a script fd).
HARNESS_ARGV = b"/usr/bin/python3\0-I\0-S\0-B\0"


def sandbox_leftovers(markers=(), exclude=()):
    """Live processes that belong to a sandbox, or carry one of the markers."""
    me = os.getpid()
    real_execeval = os.path.realpath(EXECEVAL)
    bad = []
    for pid, state, uids, cmdline, exe in processes():
        if pid == me or pid in exclude or state in ("Z", "X"):
            continue
        why = None
        if any(is_sandbox_uid(u) for u in uids):
            why = "runs as a sandbox's uid %s" % (uids,)
        elif cmdline.startswith(HARNESS_ARGV):
            why = "is a harness"
        elif exe and os.path.realpath(exe.replace(" (deleted)", "")) == real_execeval:
            why = "is execeval or a sandbox init"
        for m in markers:
            if m.encode() in cmdline:
                why = "carries the marker %s" % m
        if why:
            bad.append("pid %d %s: %r" % (pid, why, cmdline[:200]))
    return bad


def wait_no_leftovers(markers=(), exclude=(), seconds=3.0):
    """Leftovers still there after `seconds` (the kernel needs a moment to
    finish killing a namespace)."""
    deadline = time.monotonic() + seconds
    while True:
        reap_zombies()
        bad = sandbox_leftovers(markers, exclude)
        if not bad or time.monotonic() > deadline:
            return bad
        time.sleep(0.05)


def sandbox_running():
    """Live processes of a sandbox's uid."""
    return [pid for pid, state, uids, _, _ in processes()
            if any(is_sandbox_uid(u) for u in uids) and state not in ("Z", "X")]


def _pool_in_use(d):
    """A warm pool whose worker cgroup holds a process: live, even when its
    candidate cgroup is empty between candidates (as execeval's own sweep
    judges it; the pid in its name may be another namespace's execeval)."""
    procs = _read(os.path.join(d, "worker", "cgroup.procs"), "r") or ""
    return bool(procs.split())


def clean_up_after_a_dead_execeval(dead_pids=()):
    """When execeval itself died (killed, or a bug), its sandbox and cgroups
    may be left: kill what is left (ours: it runs in our namespace) by pid,
    remove the empty cgroups of the execevals whose pids are in dead_pids
    (execeval's own sweep leaves cgroups younger than 10 s alone, since their
    pid may be a live execeval in another pid namespace), and let one trivial
    run sweep older empty ones. Then host_evidence judges the next test, not
    this leftover. Returns that run (CompletedProcess)."""
    real_execeval = os.path.realpath(EXECEVAL)
    for _ in range(50):
        # The sandbox's uid, and (warm) a worker or a candidate's init: root
        # processes running execeval's image.
        left = set(sandbox_running())
        for pid, state, _, _, exe in processes():
            if pid != os.getpid() and state not in ("Z", "X") and exe and \
                    os.path.realpath(exe.replace(" (deleted)", "")) == real_execeval:
                left.add(pid)
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)
        reap_zombies()
    # A killed process leaves its cgroup a moment after it is reaped: retry
    # for a while (what is still there then, host_evidence reports).
    deadline = time.monotonic() + 5
    while True:
        left = []
        for pid in dead_pids:
            for d in sorted(execeval_cgroups_of(pid), key=len, reverse=True):
                if _pool_in_use(d):  # its worker may still be dying; or it is another
                    left.append(d)   # suite's execeval of the same pid: not ours to remove
                    continue
                for sub, _, _ in sorted(os.walk(d), key=lambda w: -len(w[0])):
                    try:
                        os.rmdir(sub)
                    except FileNotFoundError:
                        pass
                    except OSError:
                        left.append(sub)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return subprocess.run(with_isolation([EXECEVAL, "run", "--assert", "assert 1", "-"]), input=b"x = 1\n",
                          capture_output=True, env=execeval_env(), timeout=OUTER_TIMEOUT)


def cgroup_roots():
    """The directories of this process's own cgroups, for every hierarchy."""
    mounts = {}
    for line in (_read("/proc/self/mountinfo", "r") or "").splitlines():
        left, right = line.split(" - ", 1)
        mnt = left.split()[4]
        fstype, _, opts = right.split()[:3]
        if fstype == "cgroup2":
            mounts.setdefault("", mnt)
        elif fstype == "cgroup":
            for o in opts.split(","):
                mounts.setdefault(o, mnt)
    roots = set()
    for line in (_read("/proc/self/cgroup", "r") or "").splitlines():
        _, ctrls, path = line.split(":", 2)
        for c in ctrls.split(",") if ctrls else [""]:
            if c in mounts:
                roots.add(os.path.normpath(mounts[c] + path))
    return sorted(roots)


def execeval_cgroups(max_depth=4):
    """execeval.* cgroup directories under our own cgroups."""
    found = []
    for root in cgroup_roots():
        base = root.count(os.sep)
        for d, subdirs, _ in os.walk(root):
            if d.count(os.sep) - base >= max_depth:
                subdirs[:] = []
            for s in subdirs:
                if s.startswith("execeval."):
                    found.append(os.path.join(d, s))
    return found


def execeval_cgroups_of(pid):
    """The execeval.* cgroups named by the execeval whose pid is pid (as our
    namespace sees it; a warm pool's holds worker/ and candidate/)."""
    return [c for c in execeval_cgroups() if os.path.basename(c).startswith("execeval.%d." % pid)]


def wait_no_cgroups(seconds=2.0):
    deadline = time.monotonic() + seconds
    while True:
        found = execeval_cgroups()
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def mounts():
    return set((_read("/proc/self/mountinfo", "r") or "").splitlines())


def host_tmp_entries(markers=()):
    """{path: uid} of the top-level entries of the host's temp dirs that are
    owned by the sandbox's uid or named with a marker."""
    found = {}
    for d in HOST_TMP_DIRS:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            p = os.path.join(d, n)
            try:
                uid = os.lstat(p).st_uid
            except OSError:
                continue
            if is_sandbox_uid(uid) or any(m in n for m in markers):
                found[p] = uid
    return found


def accepted(listener):
    """Connections waiting on a non-blocking listener (accepts and closes
    them): a hostile candidate's or session's connection that got through."""
    n = 0
    while True:
        try:
            c, _ = listener.accept()
        except (BlockingIOError, InterruptedError):
            return n
        c.close()
        n += 1


class Marker(str):
    pass


@pytest.fixture
def marker():
    return Marker("eemark" + secrets.token_hex(6))


@pytest.fixture(autouse=True)
def host_evidence(request):
    """After every test: nothing of any sandbox is left on the host."""
    m = request.getfixturevalue("marker")
    extra_markers = []
    request.node.extra_markers = extra_markers
    before_mounts = mounts()
    before_tmp = host_tmp_entries()
    yield
    markers = [m] + extra_markers
    problems = []
    left = wait_no_leftovers(markers, getattr(request.node, "allowed_pids", ()))
    if left:
        problems.append("processes left: %s" % left)
        for line in left:  # kill them (ours: they run in our namespace), by pid
            try:
                os.kill(int(line.split()[1]), signal.SIGKILL)
            except OSError:
                pass
    cgs = wait_no_cgroups()
    if cgs:
        problems.append("cgroups left: %s" % cgs)
    new_mounts = mounts() - before_mounts
    if new_mounts:
        problems.append("new mounts: %s" % sorted(new_mounts))
    new_tmp = {p: u for p, u in host_tmp_entries(markers).items() if p not in before_tmp}
    if new_tmp:
        problems.append("files the sandbox made in the host's temp dirs: %s" % new_tmp)
    assert not problems, "host evidence: " + "; ".join(problems)
