"""A host that cannot hold a sandbox: missing capabilities, cgroups mounted
below their root.

As root the sandbox needs exactly SYS_ADMIN, SETUID, SETGID, SETPCAP and
KILL. `setpriv` drops one at a time from the bounding and inheritable sets
(so the exec'd execeval has it in no set): every subcommand must refuse up
front with exit 3 and a message naming the capability and how to grant it,
before any candidate runs; never a candidate verdict (warm without SETUID
used to report every candidate `error`/`premature exit`), never a candidate
left running past its timeout (without KILL a cold one ran on for its whole
sleep). With exactly the five, cold and warm pass and time out on time.

The cgroup cases bind-mount a directory of the memory hierarchy over its
mount point in a private mount namespace (`unshare --mount`), so mountinfo
shows a root other than "/", as in a container without its own cgroup
namespace. Nothing is mounted in the test's namespace.
"""
import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import EXECEVAL, execeval_env

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the capabilities are root's"),
    pytest.mark.skipif(not shutil.which("setpriv"), reason="setpriv (util-linux) not installed"),
]

NEEDED = {"SYS_ADMIN": 21, "SETUID": 7, "SETGID": 6, "SETPCAP": 8, "KILL": 5}
ADD = "def add(a, b):\n    return a + b\n"
SLEEPER = ADD + "import time\ntime.sleep(20)\n"
OUTER = 60  # no command here may take longer: a hang fails the test


def without(cap):
    return ["setpriv", "--inh-caps=-" + cap.lower(), "--bounding-set=-" + cap.lower(), "--"]


def only_the_five():
    keep = ",".join("+" + c.lower() for c in NEEDED)
    return ["setpriv", "--inh-caps=-all", "--bounding-set=-all," + keep, "--"]


def cap_eff(prefix):
    """CapEff of a process started under prefix, as the kernel shows it."""
    out = subprocess.run(prefix + ["cat", "/proc/self/status"], capture_output=True, text=True,
                         timeout=OUTER, check=True).stdout
    return int(next(line.split()[1] for line in out.splitlines() if line.startswith("CapEff:")), 16)


def execeval(prefix, *args, stdin=""):
    t0 = time.monotonic()
    p = subprocess.run(prefix + [EXECEVAL, *map(str, args)], input=stdin, capture_output=True, text=True,
                       timeout=OUTER, env=execeval_env(), cwd="/")
    return p, time.monotonic() - t0


def assert_refused(p, cap, elapsed):
    """Exit 3 naming the capability and the fix; no record on stdout."""
    assert p.returncode == 3, (p.returncode, p.stdout[-500:], p.stderr[-2000:])
    assert '"status"' not in p.stdout, p.stdout[-2000:]
    assert "root without the capabilities " + cap in p.stderr, p.stderr
    assert "--cap-add" in p.stderr and "securityContext.capabilities.add" in p.stderr, p.stderr
    assert elapsed < 15, elapsed  # refused before any candidate ran, not after its sleep


@pytest.mark.parametrize("cap", list(NEEDED))
def test_setpriv_drops_exactly_that_capability(cap):
    """The tests below prove something only if execeval really lacks it."""
    full = cap_eff([])
    assert all(full >> bit & 1 for bit in NEEDED.values()), hex(full)
    assert cap_eff(without(cap)) == full & ~(1 << NEEDED[cap]), cap


@pytest.mark.parametrize("isolation", ["cold", "warm"])
@pytest.mark.parametrize("cap", list(NEEDED))
def test_run_refuses_without_a_needed_capability(cap, isolation):
    p, elapsed = execeval(without(cap), "run", "--isolation", isolation, "--timeout", "1",
                          "--assert", "assert add(1, 2) == 3", "-", stdin=SLEEPER)
    assert_refused(p, cap, elapsed)


@pytest.mark.parametrize("cap", list(NEEDED))
def test_eval_refuses_without_a_needed_capability(cap, tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"task_id": "t/add", "prompt": "", "entry_point": "add",
                                 "tests": [{"kind": "assert", "code": "assert add(1, 2) == 3"}]}) + "\n")
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps({"task_id": "t/add", "code": c}) + "\n" for c in (ADD, SLEEPER)))
    out = tmp_path / "results.jsonl"
    p, elapsed = execeval(without(cap), "eval", "--tasks", tasks, "--samples", samples, "-o", out,
                          "--timeout", "1", "-j", "2", "-q", "--no-history")
    assert_refused(p, cap, elapsed)
    assert not out.exists() or out.read_text() == "", out.read_text()


@pytest.mark.parametrize("cap", list(NEEDED))
def test_doctor_names_the_missing_capability_and_runs_nothing(cap):
    p, _ = execeval(without(cap), "doctor")
    assert p.returncode == 3, (p.returncode, p.stdout, p.stderr)
    lines = p.stdout.splitlines()
    mine = [line for line in lines if line.startswith("CAP_" + cap + " ")]
    assert len(mine) == 1 and " no " in mine[0] and "refuses to run" in mine[0], p.stdout
    others = [line for line in lines if line.startswith("CAP_") and not line.startswith("CAP_" + cap + " ")]
    assert not others, p.stdout
    assert not any(line.startswith("live check") for line in lines), p.stdout
    assert "execeval cannot run candidates here: root without the capabilities " + cap in p.stdout, p.stdout


@pytest.mark.parametrize("isolation", ["cold", "warm", "auto"])
@pytest.mark.parametrize("cap", list(NEEDED))
def test_serve_refuses_at_start(cap, isolation):
    p, elapsed = execeval(without(cap), "serve", "--listen", "127.0.0.1:0", "-j", "1", "--isolation",
                          isolation)
    assert "listening on" not in p.stderr, p.stderr
    assert_refused(p, cap, elapsed)


def test_doctor_with_exactly_the_five():
    p, _ = execeval(only_the_five(), "doctor")
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert "capabilities           yes" in p.stdout, p.stdout
    assert "live check             yes" in p.stdout and "live check, warm       yes" in p.stdout, p.stdout


@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_exactly_the_five_pass_and_time_out_on_time(isolation):
    """The positive control: KILL ends a sleeping candidate at its timeout."""
    prefix = only_the_five()
    p, _ = execeval(prefix, "run", "--isolation", isolation, "--assert", "assert add(1, 2) == 3", "-",
                    stdin=ADD)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert json.loads(p.stdout)["status"] == "pass"
    p, elapsed = execeval(prefix, "run", "--isolation", isolation, "--timeout", "1",
                          "--assert", "assert add(1, 2) == 3", "-", stdin=SLEEPER)
    rec = json.loads(p.stdout)
    assert (p.returncode, rec["status"], rec["detail"]) == (1, "timeout", "timeout"), p.stderr
    assert elapsed < 8, elapsed  # the candidate sleeps 20 s


# ---------------------------------------------------------------------------
# cgroup hierarchies mounted below their root


def memory_hierarchy():
    """(mount point, this process's cgroup path, version) of the memory
    controller, read as the sandbox's host probe does; None when absent or
    not mounted at its root here."""
    own = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            for c in ctrls.split(",") if ctrls else [""]:
                own[c] = path
    v2 = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ", 1)
            root, point = left.split()[3:5]
            fstype, _, opts = right.split()[:3]
            if fstype == "cgroup" and "memory" in opts.split(",") and "memory" in own:
                return (point, own["memory"], 1) if root == "/" else None
            if fstype == "cgroup2" and root == "/" and "" in own and v2 is None:
                v2 = (point, own[""], 2)
    if v2:
        with open(os.path.join(v2[0] + v2[1], "cgroup.controllers")) as f:
            return v2 if "memory" in f.read().split() else None
    return None


def doctor_with_bind(source, target):
    """`execeval doctor` in a private mount namespace where source is
    bind-mounted over target."""
    script = 'mount --bind "$1" "$2" && exec "$3" doctor'
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                           source, target, EXECEVAL], capture_output=True, text=True, timeout=OUTER,
                          env=execeval_env(), cwd="/")


def memory_line(out):
    return next(line for line in out.splitlines() if line.startswith("memory "))


needs_memory = pytest.mark.skipif(memory_hierarchy() is None or not shutil.which("unshare"),
                                  reason="no memory cgroup mounted at its root, or no unshare")


@needs_memory
def test_a_mount_rooted_at_this_process_cgroup_is_used():
    """As in a container without its own cgroup namespace: the mount shows
    this process's cgroup, /proc/self/cgroup its full path. Mount point
    plus full path does not exist; the cgroup is the mount point itself."""
    point, own, version = memory_hierarchy()
    p = doctor_with_bind(point + own, point)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert memory_line(p.stdout).split() == ["memory", "yes", "cgroup", "v%d" % version, "at", point], p.stdout
    assert "live check             yes" in p.stdout, p.stdout


@needs_memory
def test_a_cgroup_outside_the_mount_is_unusable_and_said_so(marker):
    point, own, _ = memory_hierarchy()
    sibling = os.path.join(os.path.dirname(point + own), "ee-outside-" + marker)
    os.mkdir(sibling)
    try:
        p = doctor_with_bind(sibling, point)
    finally:
        os.rmdir(sibling)
    # The rlimit fallback runs candidates, but only with --weak-limits (exit 3).
    assert p.returncode == 3, (p.stdout, p.stderr)
    line = memory_line(p.stdout)
    assert line.split()[:2] == ["memory", "no"], line
    assert "%s is outside the hierarchy's mount at %s" % (own, point) in line, line
    assert "--cgroupns=private" in line and "RLIMIT_AS" in line and "--weak-limits" in line, line
    assert "live check             yes" in p.stdout, p.stdout
    assert "only with --weak-limits" in p.stdout, p.stdout
