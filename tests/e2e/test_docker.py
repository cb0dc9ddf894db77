"""The container command (`execeval docker-command`, issue 18 §2).

No Docker engine runs on these machines: these cases check the command
execeval prints, argument by argument (the unit test test_docker_argv.c
checks the builder itself): least privilege, the task's limits, the image,
nothing of the host, and the exit status 2 of bad input. No candidate runs
here."""
import json
import shlex
import subprocess

import pytest

from conftest import EXECEVAL, execeval_env

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
