"""The man page (build/execeval.1, made by `make` from docs/execeval.1.in
and the options table) says all the binary takes: every command of
`execeval --help` has its section, every option of a command's --help is in
that section, every key of docs/record.md's record and run-file tables is
in THE RESULT RECORD, and groff renders the page without a warning.

No sandbox, no candidate: after `make all`, run with

    /usr/bin/python3 -m pytest -q tests/docs/test_man.py

(env EXECEVAL overrides the binary, default build/execeval).
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXECEVAL = os.path.abspath(os.environ.get("EXECEVAL") or str(REPO / "build" / "execeval"))
PAGE = REPO / "build" / "execeval.1"


@pytest.fixture(scope="module")
def page():
    for need in (EXECEVAL, PAGE):
        if not os.path.exists(need):
            pytest.fail(f"{need} is missing: run `make all` first")
    return PAGE.read_text()


def plain(roff):
    """roff source as the words it prints: no font changes or zero-width
    marks, \\- as -, \\e as a backslash."""
    text = re.sub(r"\\f[BIRP]|\\&", "", roff)
    return text.replace("\\-", "-").replace("\\e", "\\").replace("\\(dq", '"')


def sections(roff, macro):
    """{heading: body} of every `.SH`/`.SS` heading (macro) of roff."""
    parts = re.split(r"^\.%s +(.*)$" % macro, roff, flags=re.M)
    return {plain(parts[i]).strip('"'): parts[i + 1] for i in range(1, len(parts), 2)}


def help_text(*args):
    p = subprocess.run([EXECEVAL, *args], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, (args, p.stderr)
    return p.stdout


def commands():
    """The commands `execeval --help` lists: its lines "  NAME  what"."""
    return re.findall(r"^  ([a-z][a-z-]*)  ", help_text("--help"), re.M)


def help_options(text):
    """The options a --help lists: the flags (-x, --name) of each line that
    starts with one, before its description (two spaces or more)."""
    found = []
    for spec in re.findall(r"^ {2,}(-[^\s].*?)(?: {2,}|$)", text, re.M):
        found += re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", spec)
    return found


def mentions(text, word):
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(word), text) is not None


def command_section(roff, cmd):
    """The COMMANDS subsections of cmd ("execeval history ..." and "execeval
    history show ..." alike), as the words they print."""
    subs = sections(sections(roff, "SH")["COMMANDS"], "SS")
    bodies = [body for head, body in subs.items() if head.split()[:2] == ["execeval", cmd]]
    assert bodies, f"no section 'execeval {cmd}' in the man page"
    return plain("".join(bodies))


def test_the_commands_and_their_options_are_found():
    cmds = commands()
    assert {"run", "eval", "serve", "history", "doctor"} <= set(cmds), cmds
    assert {"--timeout", "--memory", "--task", "--model"} <= set(help_options(help_text("run", "--help")))
    assert {"-o", "--out", "-j", "--jobs", "--tasks", "--samples"} <= set(
        help_options(help_text("eval", "--help")))


@pytest.mark.parametrize("cmd", commands())
def test_every_option_of_a_commands_help_is_in_its_section(page, cmd):
    section = command_section(page, cmd)
    missing = [o for o in help_options(help_text(cmd, "--help")) if not mentions(section, o)]
    assert not missing, f"execeval {cmd} --help lists options its man page section lacks: {missing}"


def test_the_top_level_options_are_on_the_page(page):
    text = plain(page)
    missing = [o for o in help_options(help_text("--help")) if not mentions(text, o)]
    assert not missing, missing


def record_keys():
    """The keys of docs/record.md's key tables (the record, the run file):
    the code spans of each row's first cell."""
    keys = []
    text = (REPO / "docs" / "record.md").read_text()
    for table in re.findall(r"^\| key \|.*?\n((?:\|.*\n?)+)", text, re.M):
        for row in table.splitlines()[1:]:
            keys += re.findall(r"`([^`]+)`", row.split("|")[1])
    return keys


def test_every_record_key_is_on_the_page(page):
    keys = record_keys()
    assert {"task_id", "status", "resources", "execeval_version", "tasks_sha256"} <= set(keys), keys
    section = plain(sections(page, "SH")["THE RESULT RECORD"])
    missing = [k for k in keys if not mentions(section, k)]
    assert not missing, f"keys of docs/record.md missing from THE RESULT RECORD: {missing}"


def test_every_exit_status_of_the_contract_is_on_the_page(page):
    text = (REPO / "docs" / "contract.md").read_text()
    table = re.search(r"^## Exit codes\n(.*?)^## ", text, re.M | re.S).group(1)
    codes = re.findall(r"^\| (\d[\d+N]*) \|", table, re.M)
    assert codes[:4] == ["0", "1", "2", "3"], codes
    section = plain(sections(page, "SH")["EXIT STATUS"])
    listed = re.findall(r"^\.TP\n\.B (\S+)$", section, re.M)
    assert listed == codes


def test_groff_renders_the_page_without_a_warning(page):
    groff = shutil.which("groff")
    if not groff:
        pytest.fail("groff is missing: scripts/install-deps --test installs groff-base")
    p = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", str(PAGE)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    # Every request the page makes is one of man(7)'s macros or a basic one,
    # so man-db, mandoc and groff alike render it.
    known = {"TH", "SH", "SS", "TP", "TQ", "PP", "B", "I", "BR", "BI", "IR", "RB", "RI", "IB", "br", "nh"}
    used = set(re.findall(r"^\.([A-Za-z]+)", page, re.M))
    assert used <= known, used - known
