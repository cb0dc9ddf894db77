"""Another execeval on the host never breaks a running one (issue 34).

Every execeval sweeps the cgroups that killed execevals left behind. Whether
a cgroup's owner is alive must be decided by something every namespace sees
the same way: a neighbour in its own pid namespace cannot see a live
server's processes in `cgroup.procs`, and on cgroup v1 an empty cgroup (a
warm pool's candidate cgroup between candidates) is removed by a plain
rmdir. execeval decides by a flock each owner holds on its cgroups'
directories (cgroup_name.c). Here a live `serve` (warm, idle then busy) and
two `eval`s (cold and warm) run while neighbours start and end candidates
beside them, in a new pid namespace, a new mount namespace, a user
namespace and the safety net, past the sweep's minimum age (10 s), and the
first execevals' answers stay right. Neighbours run only `execeval run`
with a benign candidate, through execeval's own sandbox.
"""
import json
import shutil
import subprocess
import time

from conftest import EXECEVAL, REPO, execeval_env, execeval_cgroups_of
from serve_client import serve  # noqa: F401 (fixture)

SWEEP_MIN_AGE_S = 10  # cgroup_name.c

ADD_TASK = {"task_id": "n/add", "prompt": "", "entry_point": "add",
            "tests": [{"kind": "assert", "code": "assert add(1, 2) == 3"}]}
# Slow enough that both evals are still running when the neighbours sweep.
SLOW_ADD = "import time\ntime.sleep(0.25)\ndef add(a, b):\n    return a + b\n  # %d\n"

NEIGHBOUR_RUN = [EXECEVAL, "run", "--assert", "assert f() == 1", "-"]
NEIGHBOUR_CODE = b"def f():\n    return 1\n"


def neighbours():
    """(name, argv prefix) of each way another execeval is started beside us."""
    unshare = shutil.which("unshare")
    assert unshare, "util-linux's unshare is missing (scripts/install-deps installs it)"
    return [
        ("pid namespace", [unshare, "--pid", "--fork", "--mount-proc"]),
        ("pid namespace, warm", [unshare, "--pid", "--fork", "--mount-proc"]),
        ("mount namespace", [unshare, "--mount"]),
        ("user namespace", [unshare, "--user", "--map-root-user", "--pid", "--fork", "--mount-proc"]),
        ("safety net", [str(REPO / "tests" / "e2e" / "safety-net")]),
    ]


def run_neighbour(name, prefix):
    argv = prefix + NEIGHBOUR_RUN + (["--isolation", "warm"] if name.endswith("warm") else [])
    r = subprocess.run(argv, input=NEIGHBOUR_CODE, capture_output=True, timeout=120, env=execeval_env())
    assert r.returncode == 0, "%s: exit %d: %s" % (name, r.returncode, r.stderr.decode(errors="replace"))
    assert json.loads(r.stdout)["status"] == "pass", (name, r.stdout)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def start_eval(tmp_path, tag, isolation, n):
    tasks = write_jsonl(tmp_path / ("tasks-%s.jsonl" % tag), [ADD_TASK])
    samples = write_jsonl(tmp_path / ("samples-%s.jsonl" % tag),
                          [{"task_id": "n/add", "code": SLOW_ADD % i} for i in range(n)])
    out = tmp_path / ("results-%s.jsonl" % tag)
    argv = [EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-o", str(out), "-q",
            "-j", "1", "-k", "1", "--isolation", isolation]
    err = open(tmp_path / ("stderr-%s" % tag), "w+b")
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=execeval_env()), out, err


def finish_eval(p, out, err, n):
    code = p.wait(timeout=300)
    err.seek(0)
    assert code == 0, err.read().decode(errors="replace")
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == n
    assert {r["status"] for r in records} == {"pass"}, [r for r in records if r["status"] != "pass"][:2]


def kill_after_one_record(tmp_path):
    """A warm eval SIGKILLed after its first record: its pooled cgroups are
    left, for the neighbours' sweeps. Returns its pid."""
    p, out, err = start_eval(tmp_path, "dead", "warm", 200)
    try:
        deadline = time.monotonic() + 60
        while not (out.exists() and out.read_bytes().count(b"\n") >= 1) and time.monotonic() < deadline:
            time.sleep(0.05)
        p.kill()
    finally:
        p.wait(timeout=60)
    assert execeval_cgroups_of(p.pid), "the killed eval left no cgroups to sweep"
    return p.pid


def ask_add(srv):
    a = srv.run({"task": ADD_TASK, "candidate": "def add(a, b):\n    return a + b\n"})
    assert a.status == 200, a
    assert a.json["status"] == "pass", a.json
    return a


def test_neighbours_in_other_namespaces_never_break_a_live_server_or_eval(serve, tmp_path):  # noqa: F811
    """The reproduction of issue 34 (before the fix every request after the
    pid-namespace neighbour answered 500, "warm worker: start a candidate:
    No such device", for good), widened: every kind of neighbour, three
    rounds, beside a server and two evals that run on; and what a killed
    eval left is still swept."""
    srv = serve("--isolation", "warm", jobs=1)
    ask_add(srv)
    own = execeval_cgroups_of(srv.pid)
    assert own, "the server made no cgroups to protect"
    cold = start_eval(tmp_path, "cold", "cold", 80)
    warm = start_eval(tmp_path, "warm", "warm", 80)
    dead = kill_after_one_record(tmp_path)
    time.sleep(SWEEP_MIN_AGE_S + 1.5)  # every cgroup above is now old enough to sweep
    for _ in range(3):
        for name, prefix in neighbours():
            run_neighbour(name, prefix)
            ask_add(srv)
    assert set(own) <= set(execeval_cgroups_of(srv.pid)), "a neighbour removed a live server's cgroup"
    # The lock protects, not a pid: a killed eval's pool was swept.
    assert execeval_cgroups_of(dead) == [], "a dead execeval's cgroups were not swept"
    for p, out, err in (cold, warm):
        finish_eval(p, out, err, 80)
    h = srv.request("GET", "/healthz")
    assert h.status == 200, h


def test_the_demos_data_gets_its_statuses_beside_a_neighbour_in_a_loop():
    """`make demo`'s data set (examples/: 45 tasks, every test kind, samples
    from correct to hostile, each carrying the status it is meant to get)
    through one `execeval eval -j 2` (examples/check.py --eval compares),
    while another execeval in its own pid namespace starts and ends
    candidates beside it in a loop. Before the fix the eval stopped with
    exit 3, "warm worker: start a candidate: No such device"."""
    loop = subprocess.Popen(["/bin/sh", "-c", 'while :; do printf "%s" "$1" | unshare --pid --fork '
                             '--mount-proc "$2" run --assert "assert f() == 1" - >/dev/null || exit 9; done',
                             "sh", NEIGHBOUR_CODE.decode(), EXECEVAL], env=execeval_env())
    try:
        r = subprocess.run(["/usr/bin/python3", str(REPO / "examples" / "check.py"), "--eval", "-j", "2"],
                           capture_output=True, text=True, timeout=600, env=dict(execeval_env(), EXECEVAL=EXECEVAL))
    finally:
        loop.terminate()
        loop.wait(timeout=60)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert loop.returncode in (-15, 0), "the neighbour itself failed: exit %s" % loop.returncode
