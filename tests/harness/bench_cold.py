"""Cold-start timing of the harness on a one-assert job, through drive.py.

Usage: /usr/bin/python3 tests/harness/bench_cold.py [RUNS] [HARNESS.py ...]

Each harness file (default: the one assembled from src/harness/parts) is timed two ways,
interleaved so that host load hits all alike: its source on the command line
(`-c`) and a pyc of it run as a file (the supervisor's way when the host has
the build's interpreter).  Prints the median and minimum wall time of a run
and the child's CPU time.  Benign job only: nothing isolates it.
"""

import os
import py_compile
import resource
import statistics
import sys
import tempfile
import time

import drive

DENY = ["os.system", "os.popen", "subprocess", "_posixsubprocess", "socket", "_socket",
        "requests", "urllib", "ctypes", "_ctypes", "shutil", "http.client", "asyncio.subprocess"]
JOB = {"v": 1, "nonce": "0" * 32, "code": "def add(a, b):\n    return a + b\n", "setup": "",
       "tests": [{"index": 0, "kind": "assert", "visibility": "public",
                  "code": "assert add(1, 2) == 3"}],
       "deny_imports": DENY, "scan": "report", "gate": False, "io_output_cap": 262144}
WARMUP = 3


def main(argv):
    runs = int(argv[1]) if len(argv) > 1 else 50
    paths = argv[2:] or [str(drive.HARNESS)]
    tmp = tempfile.mkdtemp(prefix="bench-cold-")
    variants = []
    for i, path in enumerate(paths):
        pyc = os.path.join(tmp, "h%d.pyc" % i)
        py_compile.compile(path, cfile=pyc, dfile="harness.py", doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        with open(path) as f:
            variants.append((path + " (-c source)", {"source": f.read()}))
        variants.append((path + " (pyc)", {"script": pyc}))
    wall = {name: [] for name, _ in variants}
    cpu = {name: [] for name, _ in variants}
    for i in range(runs + WARMUP):
        for name, how in variants:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            result = drive.run(JOB, **how)
            elapsed = (time.perf_counter() - start) * 1000
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            assert result.returncode == 0 and result.tests()[0]["status"] == "pass", result
            if i >= WARMUP:
                wall[name].append(elapsed)
                cpu[name].append((after.ru_utime + after.ru_stime
                                  - before.ru_utime - before.ru_stime) * 1000)
    for name, _ in variants:
        print("%-50s wall median %6.2f min %6.2f ms | cpu median %6.2f min %6.2f ms (n=%d)" % (
            name, statistics.median(wall[name]), min(wall[name]),
            statistics.median(cpu[name]), min(cpu[name]), runs))
    for name in os.listdir(tmp):
        os.unlink(os.path.join(tmp, name))
    os.rmdir(tmp)


if __name__ == "__main__":
    main(sys.argv)
