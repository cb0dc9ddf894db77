"""The repository's Dockerfile, checked statically (`make image-check`).

Debian 12 has no hadolint package, so this parses the Dockerfile itself
(instructions joined across line continuations) and checks what the image
promises in docs/scale-out.md and docs/sandbox.md: Debian 12, execeval
built from this tree and installed, python3 and the lint tools, no
download from a URL, apt's lists cleaned in the layer that made them, a
non-root USER by default, the capabilities and seccomp/AppArmor settings
stated next to it, and the image name the Docker backend defaults to."""
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"


def instructions(text):
    """[(INSTRUCTION, argument text)], continuations joined, comments dropped."""
    out, cur = [], ""
    for line in text.splitlines():
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if cur and line.lstrip().startswith("#"):
            continue
        cur += line.rstrip("\\").rstrip() + " " if line.rstrip().endswith("\\") else line
        if not line.rstrip().endswith("\\"):
            word, _, rest = cur.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            cur = ""
    assert not cur, "the Dockerfile ends inside a continued line"
    return out


@pytest.fixture(scope="module")
def text():
    return DOCKERFILE.read_text()


@pytest.fixture(scope="module")
def ins(text):
    return instructions(text)


def stages(ins):
    """[[instructions of stage 0], [stage 1], ...]."""
    out = []
    for word, arg in ins:
        if word == "FROM":
            out.append([])
        assert out, f"{word} before the first FROM"
        out[-1].append((word, arg))
    return out


def test_every_stage_is_debian_12(ins):
    froms = [arg.split()[0] for word, arg in ins if word == "FROM"]
    assert froms, "no FROM"
    for image in froms:
        assert re.fullmatch(r"debian:12(-slim)?(@sha256:[0-9a-f]{64})?", image), image


def test_no_add_and_no_download(ins):
    for word, arg in ins:
        assert word != "ADD", f"ADD {arg}: COPY the tree instead (ADD fetches URLs, unpacks archives)"
        if word == "RUN":
            assert not re.search(r"\b(curl|wget)\b|https?://", arg), f"RUN downloads: {arg}"


def test_apt_lists_are_cleaned_in_the_layer_that_made_them(ins):
    runs = [arg for word, arg in ins if word == "RUN" and "apt-get" in arg]
    assert runs
    for arg in runs:
        if "apt-get install" in arg:
            assert "apt-get update" in arg, f"install without update in the same layer: {arg}"
            assert "--no-install-recommends" in arg, arg
            assert re.search(r"-y\b", arg), arg
            assert "rm -rf /var/lib/apt/lists/*" in arg, f"apt lists kept in the layer: {arg}"


def final(ins):
    return stages(ins)[-1]


def test_the_final_image_has_execeval_python_and_the_lint_tools(ins):
    last = final(ins)
    installs = " ".join(arg for word, arg in last if word == "RUN")
    for pkg in ("python3", "python3-pyflakes", "python3-flake8", "python3-bandit", "libseccomp2", "libjansson4",
                "libmicrohttpd12", "libsqlite3-0"):
        assert re.search(r"(?<![\w-])%s(?![\w.-])" % re.escape(pkg), installs), pkg
    copies = [arg for word, arg in last if word == "COPY"]
    assert any(a.startswith("--from=build") and a.split()[-1].startswith("/usr/local") for a in copies), copies
    build = " ".join(arg for word, arg in stages(ins)[0] if word == "RUN")
    assert "make build/execeval" in build and "make install PREFIX=/usr/local" in build, build
    entry = [arg for word, arg in last if word == "ENTRYPOINT"]
    assert entry == ['["/usr/local/bin/execeval"]'], entry


def test_the_default_user_is_not_root(ins):
    users = [arg for word, arg in final(ins) if word == "USER"]
    assert users, "no USER in the final stage"
    assert users[-1].split(":")[0] not in ("0", "root"), users[-1]


def test_what_the_runtime_must_allow_is_stated_next_to_it(text):
    head = text.split("FROM", 1)[0]
    for cap in ("SYS_ADMIN", "SETUID", "SETGID", "SETPCAP", "KILL"):
        assert cap in head, cap
    assert re.search(r"seccomp", head, re.I) and re.search(r"AppArmor", head), head


def test_the_docker_backends_default_image_is_this_one(text):
    src = (REPO / "src" / "sandbox" / "docker_argv.h").read_text()
    default = re.search(r'#define EE_DOCKER_IMAGE_DEFAULT "([^"]+)"', src).group(1)
    assert f"docker build -t {default} ." in text
    assert re.search(r'#define EE_DOCKER_EXECEVAL "/usr/local/bin/execeval"', src)


def test_the_manifests_name_a_debian_12_execeval_image_and_run_it_as_root():
    doc = (REPO / "docs" / "scale-out.md").read_text()
    images = re.findall(r"image: (\S+)\s+# (.*)", doc)
    assert images
    for image, comment in images:
        assert "execeval" in image and "Debian 12" in comment, (image, comment)
    # The image's USER is 65534: a supervisor manifest must ask for root.
    assert doc.count("runAsUser: 0") >= len(images), "a manifest runs the image without runAsUser: 0"


def test_the_parser_sees_a_broken_dockerfile():
    bad = instructions("FROM ubuntu:22.04\nADD https://x/y /y\nRUN apt-get update && apt-get install -y a\n")
    with pytest.raises(AssertionError):
        test_every_stage_is_debian_12(bad)
    with pytest.raises(AssertionError):
        test_no_add_and_no_download(bad)
    with pytest.raises(AssertionError):
        test_apt_lists_are_cleaned_in_the_layer_that_made_them(bad)
    with pytest.raises(AssertionError):
        test_the_default_user_is_not_root(bad)
