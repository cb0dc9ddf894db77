# --------------------------------------------------------------------------
# Warm start (src/sandbox/zygote.c): a worker embeds the interpreter, runs
# this module once, calls warm_up(), and forks a child per candidate that
# calls warm_main().  Each child is a copy of the worker as warm_up() left it:
# nothing a candidate changes reaches the worker or the next candidate.

# Imported once by the worker.  Never a module the default deny list names,
# nor one that imports such a module at its top level (tempfile imports
# shutil): the policy could stub a denied attribute, but a candidate's
# `import socket` would then find it loaded.  Not random (nor statistics,
# which imports it): its at-fork hook would reseed it in every child, about
# 40 page faults whether the candidate uses it or not; a candidate that
# imports it seeds it then, as on a cold start. binascii: the harness
# imports it for every /run_code job (job.py, _parse_script): loading it in
# each child wrote ~45 pages (bench/cow-pages --script).
_WARM_MODULES = ("abc", "array", "binascii", "bisect", "cmath", "collections", "collections.abc", "copy",
                 "dataclasses", "datetime", "decimal", "enum", "fractions", "functools", "hashlib",
                 "heapq", "inspect", "itertools", "json", "math", "numbers", "operator", "re", "string",
                 "struct", "textwrap", "typing", "unittest")


def warm_up(lint_source=None, deny=None, preload=""):
    """In the worker, before any candidate: sys.path as a cold start has it,
    the usual modules imported (and the lint tools, given lint.py), the AST
    types built, the import policy of `deny` (names, one a line: the list
    every job of this worker holds) installed as a candidate would install
    it, then every object moved out of the collector's reach so children do
    not copy pages by merely collecting (gc.freeze)."""
    import gc
    global _warm_lint, _json_scanner, _warm_policy
    _extend_sys_path()
    for name in _WARM_MODULES:
        try:
            __import__(name)
        except Exception:
            pass
    if lint_source:
        namespace = {"__name__": "__execeval_lint__", "__builtins__": _builtins}
        try:
            exec(compile(lint_source, "<execeval-lint>", "exec", dont_inherit=True), namespace)
            # A dry run loads what the tools load lazily (plugins, entry points).
            namespace["run"]("x = 1\n", compile("x = 1\n", "<warm>", "exec", _ONLY_AST, dont_inherit=True))
            namespace["prepare"]()
            _warm_lint = (lint_source, namespace)
        except Exception:
            pass  # the candidate's lint phase will say what is missing
    for name in str.split(preload, "\n"):  # a session pool's --session-preload: its cells find them
        if name:
            __import__(name)
    compile("pass", "<warm>", "exec", _ONLY_AST, dont_inherit=True)
    _json_scanner = _new_json_scanner()
    if deny is not None:  # last: nothing of the worker's own imports after it
        _warm_policy = _Policy(str.split(deny, "\n")[:-1])
        _prepare_interpreter(_warm_policy)
    gc.collect()
    gc.freeze()


def warm_main():
    """In a candidate's process forked from the worker: as main()."""
    _sys.argv[:] = [""]
    main(warm=True)


def _report_failure(message):
    """A harness failure goes to fd 2 (the supervisor keeps the candidate's stderr)."""
    try:
        _write(2, str.encode("execeval harness: " + message + "\n", "utf-8", "replace"))
    except OSError:
        pass


if __name__ == "__main__":
    main()
