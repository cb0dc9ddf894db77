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


