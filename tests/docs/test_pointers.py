"""What the docs point at exists: every `file:function` pointer in README.md,
HACKING.md and docs/*.md names a source file of the repository and a name
that occurs in it; every path of the repository that the docs, the sources,
the scripts and the tests cite exists, and so does every page the code names
(nothing the code cites lives outside the repository); every .c file under
src/ has its line in HACKING.md's layout map, and the map lists no file that
is gone.

No sandbox, no candidate: run with

    /usr/bin/python3 -m pytest -q tests/docs/test_pointers.py
"""
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", REPO / "HACKING.md", *sorted((REPO / "docs").glob("*.md"))]
# Where a pointer's file may live: the library, and the client's adapters.
SOURCE_ROOTS = ["src", "clients/python", "tools", "bench"]

# `start.c:clone_child`, `src/sandbox/worker.c:ee_pool_supported`,
# `tests.py:_run_io`, `execeval/verl.py:compute_score`; not `one.json:4:`.
POINTER = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.(?:c|h|py)):([A-Za-z_]\w*)")

# A path of the repository written out: src/..., docs/..., tests/... with a
# file extension. Generated files (build/) are not the repository's.
TOP = r"(?:src|docs|tests|bench|scripts|tools|examples|clients)"
PATH = re.compile(r"(?<![\w/.-])(" + TOP + r"/[\w./-]*\w\.(?:c|h|py|md|sh|in|S|jsonl|json|txt))(?![\w/-])")
# Not the repository's files: what eval writes (results, summaries), a
# placeholder (src/harness/parts/NAME.py), another project's source.
NOT_OURS = re.compile(r"results\.jsonl$|^examples/summary\.json$|/[A-Z]+(?:\.|/)")
ELSEWHERE = {"src/open_r1/rewards.py"}  # huggingface/open-r1's, in docs/compare.md's table
# Files whose text cites paths (what `make` builds is left out: build/).
CITING = [*DOCS, REPO / "NEWS.md", REPO / "Makefile",
          *sorted(p for root in ("src", "scripts", "tests", "bench", "tools", "clients", "examples")
                  for p in (REPO / root).rglob("*")
                  if p.is_file() and p.suffix in (".c", ".h", ".py", ".md", ".sh", ".in", ".S", "")
                  and "corpus" not in p.parts and "__pycache__" not in p.parts
                  and p != Path(__file__).resolve())]


def source_files(name):
    """The files of the source trees whose path ends with name."""
    found = []
    for root in SOURCE_ROOTS:
        for p in (REPO / root).rglob(Path(name).name):
            if p.is_file() and p.as_posix().endswith("/" + name):
                found.append(p)
    return found


def pointers(text):
    return POINTER.findall(text)


def unresolved_pointers(text):
    bad = []
    for name, ident in pointers(text):
        files = source_files(name)
        if not files:
            bad.append(f"{name}:{ident}: no such source file")
        elif not any(re.search(r"\b%s\b" % re.escape(ident), f.read_text(errors="replace")) for f in files):
            where = ", ".join(str(f.relative_to(REPO)) for f in files)
            bad.append(f"{name}:{ident}: {ident} does not occur in {where}")
    return bad


def test_the_docs_have_pointers_to_check():
    assert sum(len(pointers(p.read_text())) for p in DOCS) > 20


def test_a_stale_pointer_is_caught():
    assert unresolved_pointers("see `start.c:ee_sandbox_start` and `worker.c:ee_pool_supported`") == []
    assert unresolved_pointers("`start.c:no_such_function_here`") != []
    assert unresolved_pointers("`no_such_file.c:main`") != []
    assert pointers("a line `one.json:4:` and a time 12:30") == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_file_function_pointer_resolves(doc):
    bad = unresolved_pointers(doc.read_text())
    assert not bad, bad


def missing_paths(path):
    text = path.read_text(errors="replace")
    return sorted({p for p in PATH.findall(text)
                   if not (REPO / p).exists() and not NOT_OURS.search(p) and p not in ELSEWHERE})


def test_a_missing_path_is_caught(tmp_path):
    f = tmp_path / "x.md"
    f.write_text("see docs/layout.md and src/base/err.h, not examples/s.results.jsonl\n")
    assert missing_paths(f) == ["docs/layout.md"]


def test_every_cited_path_of_the_repository_exists():
    bad = {str(p.relative_to(REPO)): m for p in CITING for m in [missing_paths(p)] if m}
    assert not bad, bad


# A page the code names by itself ("see STYLE.md", "CONTRACT.md's name"): it
# must be a page of the repository, found by its path's ending.
MD_NAME = re.compile(r"(?<![\w/.-])([\w][\w./-]*\.md)\b")
PAGES = {p.relative_to(REPO).as_posix() for p in REPO.rglob("*.md")
         if "build" not in p.relative_to(REPO).parts and ".git" not in p.parts}
CODE = [p for p in CITING if p.suffix != ".md" and p.parent != Path(__file__).resolve().parent]


def missing_pages(text):
    return sorted({m for m in MD_NAME.findall(text)
                   if not any(page == m or page.endswith("/" + m) for page in PAGES)})


def test_a_missing_page_is_caught():
    assert missing_pages("/* see STYLE.md, docs/record.md and record.md */") == ["STYLE.md"]


def test_every_page_the_code_names_is_in_the_repository():
    bad = {str(p.relative_to(REPO)): m for p in CODE for m in [missing_pages(p.read_text(errors="replace"))] if m}
    assert not bad, bad


# ---- HACKING.md's layout map ---------------------------------------------------


def layout_map(text):
    """{"src/dir/name.c", ...}: the files HACKING.md's "## Layout" lists, each
    a list item "- `name.c`: ..." under a "### src/dir/" heading."""
    section = re.search(r"^## Layout\n(.*?)(?=^## )", text, re.M | re.S).group(1)
    listed, folder = set(), None
    for line in section.splitlines():
        heading = re.match(r"^### (src/[\w/]+/)\s*$", line)
        if heading:
            folder = heading.group(1)
        elif line.startswith("### "):
            folder = None
        item = re.match(r"^- `([\w-]+\.c)`", line)
        if item and folder:
            listed.add(folder + item.group(1))
    return listed


def test_the_layout_map_is_read():
    text = "## Layout\n### src/base/\n- `buf.c`: buffers\n### Outside src/\n- `x.c`: no\n## Words\n"
    assert layout_map(text) == {"src/base/buf.c"}


def test_every_source_file_is_in_the_layout_map():
    listed = layout_map((REPO / "HACKING.md").read_text())
    present = {p.relative_to(REPO).as_posix() for p in (REPO / "src").rglob("*.c")}
    assert not present - listed, ("not in HACKING.md's layout map", sorted(present - listed))
    assert not listed - present, ("in HACKING.md's layout map but gone", sorted(listed - present))
