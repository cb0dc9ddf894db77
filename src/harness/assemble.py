"""assemble.py - builds the one harness the supervisor embeds from its parts.

The harness (src/harness/parts/*.py, in the order of PARTS below) is one
module: its parts share one namespace and run top to bottom as if they were
one file.  They are kept apart only for reading, and a traceback names the
part and the line in it, whichever form runs:

  pyc     each part compiled under its own name (src/harness/parts/NAME.py),
          the code objects joined by a module whose line N executes part N
          (named "<execeval harness>"): one code object, no compile at run
          time.  Written as an unchecked hash-based pyc, like py_compile's.
  source  for an interpreter the pyc does not fit (`python3 -c SOURCE`, or a
          warm worker whose magic number differs): the parts as string
          literals, each compiled under its own name as the module runs.
  joined  never run: the parts as one plain file, two blank lines apart, for
          `make lint` (a part uses names another defines, which only the
          whole module shows a linter).

Usage: assemble.py source OUT | pyc OUT | joined OUT  (run by the Makefile with $(PYTHON)).
"""

import importlib._bootstrap_external as _external
import importlib.util
import os
import sys

PARTS = (
    "prelude",    # theory of operation, bound builtins and limits
    "events",     # JSON out: the encoder and the event writer
    "canonical",  # canonical values of call tests
    "job",        # the job (fd 3) and the hidden tests (gate fd)
    "policy",     # denied imports and who imports
    "scan",       # the best-effort AST lint
    "failures",   # describing failures
    "tests",      # the test runners: assert, call, calls, unittest, io, program
    "iorunner",   # io tests, several to one forked child
    "apart",      # /run_code scripts, several to one sandbox, each in its own process
    "callserve",  # the separate judge's candidate side: the call server, the value decoder
    "judge",      # the separate judge's test side: stubs, replies
    "phases",     # the phases, in order
    "session",    # sessions: a live interpreter across cells, a fork per cell
    "cold",       # cold start
    "warm",       # warm start (src/sandbox/zygote.c)
)
PARTS_DIR = "src/harness/parts"
JOINED_NAME = "<execeval harness>"
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def part_names():
    """The parts' names as their code objects carry them, in order; an error
    when the folder holds a part PARTS does not list, or lacks one."""
    on_disk = {f[:-3] for f in os.listdir(os.path.join(_ROOT, PARTS_DIR)) if f.endswith(".py")}
    if on_disk != set(PARTS):
        raise SystemExit("assemble.py: %s holds %s, PARTS lists %s"
                         % (PARTS_DIR, sorted(on_disk), sorted(PARTS)))
    return ["%s/%s.py" % (PARTS_DIR, p) for p in PARTS]


def read_parts():
    """[(name, source text)] in order."""
    parts = []
    for name in part_names():
        with open(os.path.join(_ROOT, name), encoding="utf-8") as f:
            parts.append((name, f.read()))
    return parts


def source():
    """The source form: the parts as literals, compiled one by one."""
    lines = ["# The execeval harness, assembled from %s/ by src/harness/assemble.py." % PARTS_DIR,
             "_PARTS = ("]
    lines += ["    (%r, %r)," % part for part in read_parts()]
    lines += [")",
              "for _part_name, _part_source in _PARTS:",
              "    exec(compile(_part_source, _part_name, \"exec\", dont_inherit=True))",
              "del _PARTS, _part_name, _part_source",
              ""]
    return "\n".join(lines)


def joined():
    """The joined form: the parts' text in order, as one module's source."""
    return "\n\n\n".join(text.rstrip("\n") for _, text in read_parts()) + "\n"


def code():
    """The pyc form's one code object: a module whose line N runs part N."""
    parts = read_parts()
    placeholders = ["\0execeval-part-%d" % i for i in range(len(parts))]
    joined = compile("\n".join("exec(%r)" % p for p in placeholders) + "\n", JOINED_NAME, "exec",
                     dont_inherit=True)
    codes = dict(zip(placeholders, [compile(text, name, "exec", dont_inherit=True)
                                    for name, text in parts]))
    consts = tuple(codes.get(c, c) if type(c) is str else c for c in joined.co_consts)
    if sum(1 for c in consts if type(c) is type(joined)) != len(parts):
        raise SystemExit("assemble.py: the joined module lost a part")
    return joined.replace(co_consts=consts)


def pyc():
    """An unchecked hash-based pyc of code(), keyed on the parts' text."""
    text = "".join(t for _, t in read_parts()).encode("utf-8")
    return bytes(_external._code_to_hash_pyc(code(), importlib.util.source_hash(text), checked=False))


def _write(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main(argv):
    forms = {"source": lambda: source().encode("utf-8"), "pyc": pyc, "joined": lambda: joined().encode("utf-8")}
    if len(argv) != 3 or argv[1] not in forms:
        raise SystemExit("usage: assemble.py source OUT | pyc OUT | joined OUT")
    _write(argv[2], forms[argv[1]]())


if __name__ == "__main__":
    main(sys.argv)
