"""The container command (`execeval docker-command`) and the Docker
backend (`--backend docker`), issue 18 §2.

No Docker engine runs on these machines. docker-command's cases check the
command execeval prints, argument by argument (the unit test
test_docker_argv.c checks the builder itself): least privilege, the task's
limits, the image, nothing of the host, exit status 2 on bad input.

The backend's cases put a stand-in `docker` first on PATH
(tests/e2e/data/docker-standin): it refuses, exit 125, any argv that is not
exactly the least-privilege command, logs it, and runs the container's
command (execeval's relay) as uid 65534 with no capabilities in fresh
network/mount namespaces inside the sandbox's own cgroup and pid namespace;
so the whole path (argv, the job framed on stdin, the frames back, the
verdict, the wall clock, the output cap, the `docker kill` of a killed
sandbox's container) runs. The backend needs root (its init's
namespaces)."""
import datetime
import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from conftest import EXECEVAL, execeval_env

STANDIN = Path(__file__).resolve().parent / "data" / "docker-standin"

NEVER = {"-v", "--volume", "--mount", "--privileged", "--cap-add", "--device", "--pid", "--ipc", "--userns",
         "-e", "--env", "--env-file", "-t", "--tty"}


@pytest.fixture
def files(tmp_path):
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"task_id": "t", "tests": [{"kind": "assert", "code": "assert add(1, 2) == 3"}]}))
    cand = tmp_path / "cand.py"
    cand.write_text("def add(a, b):\n    return a + b\n")
    return task, cand


def docker_command(*args):
    p = subprocess.run([EXECEVAL, "docker-command", *map(str, args)], capture_output=True, text=True,
                       env=execeval_env(), timeout=30)
    return p.returncode, p.stdout, p.stderr


def flags(argv):
    """{--flag: [values]} of a docker run argv (every flag here takes a value
    but --rm, -i and --read-only)."""
    out, i = {}, 2
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] in ("--rm", "-i", "--read-only"):
            out.setdefault(argv[i], []).append(None)
            i += 1
        else:
            out.setdefault(argv[i], []).append(argv[i + 1])
            i += 2
    return out, argv[i:]


def test_the_command_drops_every_privilege(files):
    code, out, err = docker_command("--task", files[0], "--candidate", files[1])
    assert code == 0, err
    assert out.count("\n") == 1
    argv = shlex.split(out)
    assert argv[:2] == ["docker", "run"]
    f, rest = flags(argv)
    assert rest == ["execeval:latest", "__gvisor-relay", "/usr/bin/python3", "640"]
    assert f["--network"] == ["none"] and f["--user"] == ["65534:65534"] and f["--cap-drop"] == ["ALL"]
    assert f["--security-opt"] == ["no-new-privileges"] and f["--read-only"] and f["--rm"] and f["-i"]
    assert f["--tmpfs"] == ["/tmp:rw,noexec,nosuid,nodev,size=64m,mode=1777"]
    assert f["--memory"] == f["--memory-swap"] == ["512m"]
    assert f["--pids-limit"] == ["64"] and f["--cpus"] == ["1"] and f["--pull"] == ["never"]
    assert f["--entrypoint"] == ["/usr/local/bin/execeval"]
    assert f["--name"][0].startswith("execeval-") and len(f["--name"][0]) == 25
    assert not NEVER & set(argv), NEVER & set(argv)
    assert "host" not in argv


def test_each_container_has_a_name_of_its_own(files):
    names = {flags(shlex.split(docker_command("--task", files[0], "--candidate", files[1])[1]))[0]["--name"][0]
             for _ in range(3)}
    assert len(names) == 3


def test_the_options_and_the_tasks_limits(files, tmp_path):
    code, out, err = docker_command("--task", files[0], "--candidate", files[1], "--memory", "256", "--procs",
                                    "8", "--tmp-size", "16", "--image", "registry.example/execeval:0.1.0")
    assert code == 0, err
    f, rest = flags(shlex.split(out))
    assert f["--memory"] == f["--memory-swap"] == ["256m"] and f["--pids-limit"] == ["8"]
    assert f["--tmpfs"] == ["/tmp:rw,noexec,nosuid,nodev,size=16m,mode=1777"]
    assert rest[0] == "registry.example/execeval:0.1.0" and rest[-1] == "384"
    own = tmp_path / "own.json"
    own.write_text(json.dumps({"task_id": "o", "limits": {"memory_mb": 128, "procs": 4},
                               "tests": [{"kind": "assert", "code": "assert True"}]}))
    code, out, err = docker_command("--task", own, "--candidate", files[1], "--memory", "256")
    assert code == 0, err
    f, _ = flags(shlex.split(out))
    assert f["--memory"] == ["128m"] and f["--pids-limit"] == ["4"]


@pytest.mark.parametrize("args", [
    ["--candidate", "CAND"],
    ["--task", "TASK"],
    ["--task", "TASK", "--candidate", "/nonexistent/c.py"],
    ["--task", "/nonexistent/t.json", "--candidate", "CAND"],
    ["--task", "TASK", "--candidate", "CAND", "--image", "--privileged"],
    ["--task", "TASK", "--candidate", "CAND", "--image", "a b"],
    ["--task", "TASK", "--candidate", "CAND", "--memory", "lots"],
    ["--task", "TASK", "--candidate", "CAND", "extra"],
    ["--task", "TASK", "--candidate", "CAND", "--backend", "native"],
])
def test_bad_input_is_exit_2(files, args):
    args = [str(files[0]) if a == "TASK" else str(files[1]) if a == "CAND" else a for a in args]
    code, out, err = docker_command(*args)
    assert code == 2, (code, out, err)
    assert out == "" and err.startswith("execeval docker-command: ")


# ---- --backend docker, through the stand-in -------------------------------

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="--backend docker needs root here")
# --judge inline: one container per candidate, as these tests count them
# (the split judge adds a judge container of its own per evaluation under
# this backend).
DK = ["--backend", "docker", "--judge", "inline"]


@pytest.fixture
def standin(tmp_path):
    """env for execeval: the stand-in first on PATH, its config, its log."""
    bin_dir, cfg = tmp_path / "bin", tmp_path / "docker-config"
    bin_dir.mkdir()
    cfg.mkdir()
    (bin_dir / "docker").symlink_to(STANDIN)
    log = tmp_path / "standin.log"
    (cfg / "standin.json").write_text(json.dumps({"execeval": EXECEVAL, "log": str(log)}))

    class S:
        env = {"PATH": "%s:%s" % (bin_dir, os.environ.get("PATH", "")), "DOCKER_CONFIG": str(cfg),
               "EXECEVAL_DOCKER": ""}

        @staticmethod
        def entries():
            return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return S


def runs_and_kills(s):
    e = s.entries()
    return [x["run"] for x in e if "run" in x], [x["kill"] for x in e if "kill" in x]


ADD = "def add(a, b):\n    return a + b\n"


@root_only
def test_a_pass_through_the_container_says_backend_docker(run, standin):
    r = run(ADD, asserts=["assert add(1, 2) == 3"], args=DK, env=standin.env)
    assert r.code == 0, r
    assert r.record["status"] == "pass" and r.record["backend"] == "docker"
    runs, kills = runs_and_kills(standin)
    assert len(runs) == 1 and kills == []
    argv = runs[0]
    assert not NEVER & set(argv) and "host" not in argv
    f, rest = flags(["docker"] + argv)
    assert f["--memory"] == ["512m"] and rest[0] == "execeval:latest"


@root_only
def test_a_failure_and_the_limits_and_image_given(run, standin):
    r = run("def add(a, b):\n    return a - b\n", asserts=["assert add(1, 2) == 3"],
            args=DK + ["--memory", "300", "--procs", "16", "--tmp-size", "8", "--image", "my/execeval:2"],
            env=standin.env)
    assert r.code == 1, r
    assert r.record["status"] == "assertion_fail" and r.record["backend"] == "docker"
    f, rest = flags(["docker"] + runs_and_kills(standin)[0][0])
    assert f["--memory"] == f["--memory-swap"] == ["300m"] and f["--pids-limit"] == ["16"]
    assert f["--tmpfs"] == ["/tmp:rw,noexec,nosuid,nodev,size=8m,mode=1777"] and rest[0] == "my/execeval:2"


@root_only
def test_the_candidate_is_nobody_without_network_in_a_noexec_tmp(run, standin):
    probe = ("import os, socket\n"
             "print(os.getuid(), os.getgid())\n"
             "print(open('/proc/self/status').read().split('CapBnd:')[1].split()[0])\n"
             "print(sorted(l.split(':')[0].strip() for l in open('/proc/self/net/dev').readlines()[2:]))\n"
             "print([l.split()[3] for l in open('/proc/self/mounts') if l.split()[1] == '/tmp'][-1])\n")
    r = run(probe, asserts=["assert True"], args=DK + ["--allow-imports"], env=standin.env)
    assert r.code == 0, r
    out = r.record["stdout"].splitlines()
    assert out[0] == "65534 65534" and out[1] == "0000000000000000", out
    assert out[2] == "['lo']", out
    assert "noexec" in out[3].split(",") and "size=65536k" in out[3].split(","), out


@root_only
def test_a_timeout_kills_the_container_too(run, standin):
    r = run("import time\ntime.sleep(30)\n", asserts=["assert True"], args=DK + ["--timeout", "1"],
            env=standin.env)
    assert r.record["status"] == "timeout" and r.record["backend"] == "docker", r
    runs, kills = runs_and_kills(standin)
    name = flags(["docker"] + runs[0])[0]["--name"][0]
    assert kills == [name]


@root_only
def test_the_output_cap_kills_the_container_too(run, standin):
    r = run("while True:\n    print('x' * 1000)\n", asserts=["assert True"],
            args=DK + ["--output-cap", "65536"], env=standin.env)
    assert r.record["status"] == "error" and r.record["detail"] == "output overflow", r
    runs, kills = runs_and_kills(standin)
    assert kills == [flags(["docker"] + runs[0])[0]["--name"][0]]


def slow_kill(standin, seconds):
    cfg = Path(standin.env["DOCKER_CONFIG"]) / "standin.json"
    c = json.loads(cfg.read_text())
    c["kill_delay_s"] = seconds
    cfg.write_text(json.dumps(c))


def iso_epoch(stamp):
    return datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


@root_only
def test_a_slow_docker_kill_does_not_delay_the_other_slots_records(standin, tmp_path):
    """A timed-out candidate's `docker kill` takes 4 s (a slow engine): it
    runs beside the loop, so the other slot's candidate, which ends well
    within those 4 s, is judged and written meanwhile (it used to wait
    for the kill: the loop was blocked up to 5 s). The killed one's slot
    is held until the kill answers."""
    slow_kill(standin, 4)
    tasks, samples, out = tmp_path / "t.jsonl", tmp_path / "s.jsonl", tmp_path / "r.jsonl"
    # The sleeper's clock is 1 s, the other's 6 s: it ends (~2 s) while the kill runs (~1-5 s).
    tasks.write_text("".join(json.dumps({"task_id": t, "limits": {"timeout_s": s},
                                         "tests": [{"kind": "assert", "code": "assert x == 1"}]}) + "\n"
                             for t, s in (("slow", 1), ("ok", 6))))
    samples.write_text("".join(json.dumps({"task_id": t, "sample": i, "code": c}) + "\n" for i, (t, c) in enumerate((
        ("slow", "import time\ntime.sleep(30)\nx = 1\n"), ("ok", "import time\ntime.sleep(1.5)\nx = 1\n")))))
    p = subprocess.run([EXECEVAL, "eval", "--tasks", str(tasks), "--samples", str(samples), "-o", str(out),
                        "-j", "2", "-q", "--no-history"] + DK,
                       capture_output=True, text=True, env=execeval_env(standin.env), timeout=120)
    assert p.returncode == 0, p.stderr
    recs = {r["sample"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert recs[0]["status"] == "timeout" and recs[1]["status"] == "pass", recs
    runs, kills = runs_and_kills(standin)
    kill = [e for e in standin.entries() if "kill" in e]
    assert len(runs) == 2 and len(kills) == 1 and kills[0] in [flags(["docker"] + r)[0]["--name"][0] for r in runs]
    assert len(kill) == 1 and kill[0]["ended"] - kill[0]["began"] >= 3.9, kill
    # The other slot's record was finished while the kill still ran.
    assert iso_epoch(recs[1]["finished_at"]) < kill[0]["ended"] - 1.0, (recs[1]["finished_at"], kill)


@root_only
def test_a_docker_kill_that_never_answers_is_given_up_after_5_s(run, standin):
    slow_kill(standin, 60)
    r = run("import time\ntime.sleep(30)\n", asserts=["assert True"], args=DK + ["--timeout", "1"],
            env=standin.env, timeout=60)
    assert r.record["status"] == "timeout", r
    assert "no answer in 5000 ms" in r.stderr, r.stderr
    assert r.elapsed < 20, r.elapsed
    assert [e for e in standin.entries() if "kill" in e] == [], "the abandoned kill was not killed"


@root_only
def test_no_docker_is_exit_3_naming_it(run, tmp_path):
    r = run(ADD, asserts=["assert add(1, 2) == 3"], args=DK, env={"PATH": str(tmp_path), "EXECEVAL_DOCKER": ""})
    assert r.code == 3, r
    assert "no docker on PATH" in r.stderr, r.stderr


def test_doctor_names_docker(standin, tmp_path):
    p = subprocess.run([EXECEVAL, "doctor", "--backend", "docker"], capture_output=True, text=True,
                       env=execeval_env({"PATH": str(tmp_path), "EXECEVAL_DOCKER": ""}), timeout=120)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "docker (client)        no" in p.stdout and "--backend docker" in p.stdout
    p = subprocess.run([EXECEVAL, "doctor", "--backend", "docker"], capture_output=True, text=True,
                       env=execeval_env(standin.env), timeout=120)
    assert "docker (client)        yes" in p.stdout, p.stdout


@pytest.mark.parametrize("change", ["--privileged", "-v", "--cap-add", "--network host", "no --cap-drop",
                                    "no --memory-swap", "swap", "--mount", "no --read-only"])
def test_the_standin_refuses_any_privilege(standin, change):
    """The checker itself: each hostile change to a good argv is refused
    before anything runs (exit 125, the argument named)."""
    _, out, _ = docker_command("--task", _task(standin), "--candidate", _task(standin))
    argv = shlex.split(out)[1:]
    i = argv.index("--cap-drop")
    if change == "--privileged":
        argv.insert(1, "--privileged")
    elif change == "-v":
        argv[1:1] = ["-v", "/:/host"]
    elif change == "--mount":
        argv[1:1] = ["--mount", "type=bind,src=/,dst=/h"]
    elif change == "--cap-add":
        argv[1:1] = ["--cap-add", "SYS_ADMIN"]
    elif change == "--network host":
        argv[argv.index("--network") + 1] = "host"
    elif change == "no --cap-drop":
        del argv[i:i + 2]
    elif change == "no --memory-swap":
        j = argv.index("--memory-swap")
        del argv[j:j + 2]
    elif change == "swap":
        argv[argv.index("--memory-swap") + 1] = "1024m"
    elif change == "no --read-only":
        argv.remove("--read-only")
    p = subprocess.run([str(STANDIN)] + argv, capture_output=True, text=True, env=execeval_env(standin.env),
                       timeout=30)
    assert p.returncode == 125, (change, p.stderr)
    assert "docker-standin: refused" in p.stderr
    assert runs_and_kills(standin) == ([], [])


def _task(standin):
    t = Path(standin.env["DOCKER_CONFIG"]) / "t.json"
    t.write_text(json.dumps({"task_id": "t", "tests": [{"kind": "assert", "code": "assert True"}]}))
    return t
