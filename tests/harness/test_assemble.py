"""The harness assembled from its parts (src/harness/assemble.py): one module
whose tracebacks name the part and the line in it, in both embedded forms."""

import json
import subprocess

import pytest

import drive

assemble = drive.assemble

# Loads the harness as a warm worker does (a namespace that is not __main__),
# makes one of its functions fail and prints the traceback's frames.
PROBE = r"""
import json, marshal, sys, traceback
form, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
code = marshal.loads(data[16:]) if form == "pyc" else compile(data, "<string>", "exec")
ns = {"__name__": "execeval_harness"}
exec(code, ns)
try:
    ns["_parse_job"](b"not json")
except Exception as exc:
    frames = traceback.extract_tb(exc.__traceback__)
    print(json.dumps([[f.filename, f.lineno] for f in frames]))
"""


def harness_frames(form, path):
    out = subprocess.run([drive.PYTHON, "-I", "-S", "-c", PROBE, form, str(path)],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    return json.loads(out)


def built(form, tmp_path):
    path = tmp_path / ("harness." + form)
    path.write_bytes(assemble.pyc() if form == "pyc" else assemble.source().encode())
    return path


def part_line(filename, lineno):
    return (drive.ROOT / filename).read_text().splitlines()[lineno - 1]


@pytest.mark.parametrize("form", ["pyc", "source"])
def test_a_traceback_names_the_part_and_its_line(form, tmp_path):
    frames = harness_frames(form, built(form, tmp_path))
    filename, lineno = frames[-1]
    assert filename == "src/harness/parts/job.py", frames
    assert 'raise _HarnessError("the job is not valid JSON")' in part_line(filename, lineno)


def test_the_parts_make_one_module_in_order():
    names = assemble.part_names()
    assert names == ["src/harness/parts/%s.py" % p for p in assemble.PARTS]
    code = assemble.code()
    parts = [c.co_filename for c in code.co_consts if type(c) is type(code)]
    assert code.co_filename == assemble.JOINED_NAME and parts == names
    # The source form holds each part's text exactly.
    ns = {}
    exec(assemble.source().split("\nfor _part_name")[0], ns)
    assert [name for name, _ in ns["_PARTS"]] == names
    assert [text for _, text in ns["_PARTS"]] == [(drive.ROOT / n).read_text() for n in names]


def test_a_part_missing_from_the_list_is_an_error(monkeypatch):
    monkeypatch.setattr(assemble, "PARTS", assemble.PARTS[:-1])
    with pytest.raises(SystemExit, match="PARTS lists"):
        assemble.part_names()


def test_the_build_embeds_what_assemble_writes():
    """The Makefile's build/harness.py is assemble.py's source form (when built)."""
    build = drive.ROOT / "build"
    if not (build / "harness.py").exists():
        pytest.skip("not built")
    assert (build / "harness.py").read_text() == assemble.source()
