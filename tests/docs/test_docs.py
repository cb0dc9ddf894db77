"""The repository stands on its own: README.md, HACKING.md, NEWS.md and
docs/*.md link only to files of the repository (every relative link
resolves, anchors included),
and the README's Requirements list is what scripts/install-deps installs.

No sandbox, no candidate: run with

    /usr/bin/python3 -m pytest -q tests/docs
"""
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", REPO / "HACKING.md", REPO / "NEWS.md", *sorted((REPO / "docs").glob("*.md"))]
# [text](target) and [label]: target; code spans and fenced blocks hold no links.
INLINE = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", re.M)
EXTERNAL = re.compile(r"^(https?|mailto):", re.I)


def prose(text):
    """text without fenced code blocks and code spans."""
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def links(path):
    text = prose(path.read_text())
    return INLINE.findall(text) + REFERENCE.findall(text)


def slug(heading):
    """GitHub's anchor of a heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", path.read_text(), flags=re.M | re.S)
    return {slug(h) for h in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M)}


def test_the_docs_have_links_to_check():
    assert sum(len(links(p)) for p in DOCS) > 20


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves_inside_the_repository(doc):
    bad = []
    for target in links(doc):
        if EXTERNAL.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if REPO not in dest.parents and dest != REPO:
            bad.append((target, "leaves the repository"))
        elif not dest.exists():
            bad.append((target, "no such file"))
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append((target, "no heading with that anchor"))
    assert not bad, bad


def test_no_doc_mentions_the_workspace_contract():
    for doc in DOCS:
        assert "shared/CONTRACT.md" not in doc.read_text(), doc


def test_docs_contract_is_linked_from_the_readme():
    assert "docs/contract.md" in links(REPO / "README.md")


# ---- Requirements against scripts/install-deps ---------------------------------


def install_deps_list(*flags):
    out = subprocess.run([str(REPO / "scripts" / "install-deps"), *flags, "--list"], capture_output=True,
                         text=True, check=True)
    return out.stdout.split()


def requirements():
    """{"run": [...], "test": [...]}: the packages of the README's
    Requirements list (`name` spans of its "to build and run" and "to test"
    items)."""
    text = (REPO / "README.md").read_text()
    section = re.search(r"^## Requirements\n(.*?)^## ", text, re.M | re.S).group(1)
    items = re.findall(r"^- (to [^:]+):(.*?)(?=^- |^\s*$)", section, re.M | re.S)
    found = {}
    for label, body in items:
        key = "run" if label.startswith("to build") else "test"
        found[key] = re.findall(r"`([a-z0-9][a-z0-9.+-]*)`", body)
    return found


def test_the_requirements_list_is_what_install_deps_installs():
    req = requirements()
    base = install_deps_list()
    full = install_deps_list("--test")
    assert sorted(req["run"]) == sorted(base)
    assert sorted(req["run"] + req["test"]) == sorted(full)
    assert len(set(full)) == len(full)


def test_make_demo_installs_no_test_only_package():
    assert "chromium" not in install_deps_list()
    assert "chromium" in install_deps_list("--test")
    demo = subprocess.run(["make", "-n", "-C", str(REPO), "demo"], capture_output=True, text=True).stdout
    test = subprocess.run(["make", "-n", "-C", str(REPO), "test"], capture_output=True, text=True).stdout
    deps = [l.strip() for l in demo.splitlines() if "install-deps" in l]
    assert deps == ["scripts/install-deps"], demo
    assert "scripts/install-deps --test" in test, test
