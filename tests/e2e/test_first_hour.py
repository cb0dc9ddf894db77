"""A new user's first hour, on the README's own commands, re-run (issue 35).

In a clone's copy of examples/: the README's first `eval` as written, the
same command again (the up arrow: it must not overwrite what the first
run wrote), then with `--resume`, then the README's `report`, `compare` and
`metrics` of the results. Nothing is lost, and nothing a user would quote
is wrong: the three models of the example set are never pooled into one
pass@k, and `syntax_error` is split into programs that do not parse and
programs that raised at import.

Runs inside the safety net like the rest of tests/e2e (one eval of the
example set, a few seconds).
"""
import json
import os
import re
import shlex
import shutil
import subprocess

import pytest

from conftest import EXECEVAL, REPO, with_isolation


def readme_commands():
    """The README's `execeval` command lines, by subcommand (the first of each)."""
    found = {}
    for block in re.findall(r"```sh\n(.*?)```", (REPO / "README.md").read_text(), re.S):
        for line in block.splitlines():
            try:
                words = shlex.split(line, comments=True)
            except ValueError:  # a line of a command over several (curl -d '...)
                continue
            if len(words) > 1 and os.path.basename(words[0]) == "execeval":
                found.setdefault(words[1], words[1:])
    return found


def run(argv, cwd, env):
    return subprocess.run([EXECEVAL, *argv], cwd=cwd, capture_output=True, text=True, timeout=600, env=env)


@pytest.fixture(scope="module")
def first_hour(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("first-hour")
    clone = tmp / "clone"
    shutil.copytree(REPO / "examples", clone / "examples",
                    ignore=shutil.ignore_patterns("*.results.jsonl", "*.run.json", "summary.json"))
    env = dict(os.environ, XDG_DATA_HOME=str(tmp / "data"))
    return clone, env, readme_commands()


def test_the_readmes_commands_lose_nothing_and_quote_nothing_wrong(first_hour):
    clone, env, cmds = first_hour
    assert {"eval", "report", "compare"} <= set(cmds), cmds
    first = with_isolation(cmds["eval"])
    r = run(first, clone, env)
    assert r.returncode == 0, (first, r.stderr[-2000:])
    results = clone / "examples" / "samples.jsonl.results.jsonl"
    kept = results.read_bytes()
    n_samples = sum(1 for line in (clone / "examples" / "samples.jsonl").open() if line.strip())
    assert kept.count(b"\n") == n_samples

    # Quote nothing wrong: three models, no pooled pass@k anywhere in the table.
    assert re.search(r"^  pass@k, scores +per model, below \(the records hold 3 models\)$", r.stdout, re.M)
    assert not re.search(r"^  pass@\d+ +\d", r.stdout, re.M), r.stdout
    assert re.search(r"^syntax_error +10 .*\n  does not parse +7 .*\n  fails at import +3 ", r.stdout, re.M), \
        r.stdout

    # The up arrow: the same command again refuses, naming the file and --resume; nothing is lost.
    again = run(first, clone, env)
    assert again.returncode == 2, again.stderr
    assert "samples.jsonl.results.jsonl" in again.stderr and "--resume" in again.stderr, again.stderr
    assert results.read_bytes() == kept
    resumed = run(first + ["--resume"], clone, env)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "%d already in" % n_samples in resumed.stdout, resumed.stdout
    assert results.read_bytes() == kept

    # The README's report, of these results: each model's cards, never a pooled one.
    report = [results if w == "samples.jsonl.results.jsonl" else w for w in cmds["report"]]
    r = run(report, clone, env)
    assert r.returncode == 0, r.stderr
    page = (clone / "report.html").read_text(encoding="utf-8")
    cards = re.findall(r'<div class="card"><b>[^<]*</b><span>(pass@\d+[^<]*)</span>', page)
    assert cards and all(" \u00b7 " in c for c in cards), cards  # "pass@1 · demo-good"
    assert 'id="syntax-split"' in page

    # The README's compare (this run against itself): gated model by model.
    compare = [str(results) if w.endswith(".results.jsonl") else w for w in cmds["compare"]]
    r = run(compare, clone, env)
    if b'"infra_error":true' in kept:  # a host so busy it starved a timeout twice: said, not gated
        assert r.returncode == 2 and "--allow-infra-errors" in r.stderr, r.stderr
    else:
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr
        assert [m for m in re.findall(r"^== model (\S+)$", r.stdout, re.M)] == \
            ["demo-bad", "demo-good", "demo-mediocre"], r.stdout
        assert "verdict over 3 models: ok" in r.stdout

    # metrics says what eval said.
    r = run(["metrics", str(results), "-k", "1,3", "--json", str(clone / "m.json")], clone, env)
    assert r.returncode == 0, r.stderr
    summary = json.loads((clone / "m.json").read_text())
    assert summary["pass_at_k"] == {} and set(summary["models"]) == {"demo-bad", "demo-good", "demo-mediocre"}
    assert summary["syntax_error_details"] == {"syntax error": 7, "import error": 3}
