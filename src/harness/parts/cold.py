# --------------------------------------------------------------------------
# Cold start.


def _extend_sys_path():
    """-S skipped site: add the system's dist-packages directories that exist."""
    for path in _DIST_PACKAGES:
        try:
            is_dir = _stat(path).st_mode & 0o170000 == 0o040000
        except OSError:
            continue
        if is_dir and path not in _sys.path:
            _sys.path.append(path)


def _stdlib_only():
    """--packages stdlib: no dist-packages directory on sys.path, and no
    module imported from one (a warm worker's lint tools) in sys.modules, so
    the candidate imports the standard library only."""
    _sys.path[:] = [p for p in _sys.path if p not in _DIST_PACKAGES]
    for name, module in list(_modules.items()):
        path = getattr(module, "__file__", None)
        if type(path) is str and [d for d in _DIST_PACKAGES if str.startswith(path, d + "/")]:
            del _modules[name]


def _read_job(fd):
    chunks = []
    while True:
        chunk = _read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    _close(fd)
    return b"".join(chunks)


def main(warm=False):
    """Cold start with the fds of docs/protocol.md; a harness failure exits 70."""
    try:
        if not warm:
            _extend_sys_path()
        run_job(_read_job(3), (4, 5))
        message = "run_job returned"
    except BaseException as exc:
        message = _type_name(type(exc)) + ": " + _text(exc)
    try:
        _report_failure(message)
    finally:
        _exit(70)


