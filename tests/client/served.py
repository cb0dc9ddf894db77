"""The real `execeval serve` a client test module runs against: one per
module (`serve --listen 127.0.0.1:0 -j 2`, tests/e2e/serve_client.py),
which must exit 0 and leave no sandbox process or cgroup behind.
Import the fixture by name: `from served import server`."""
import pytest

import conftest as e2e  # tests/e2e/conftest.py (on sys.path), for its checks
from serve_client import Server


@pytest.fixture(scope="module")
def server():
    s = Server(jobs=2)
    yield s
    assert s.stop() == 0, s.stderr[-3000:]
    assert e2e.wait_no_leftovers() == []
    assert e2e.wait_no_cgroups() == []
