"""io tests in one runner (docs/protocol.md, "io tests"): consecutive io tests
of a candidate run in one forked child, each as a fresh __main__ on its own
stdin and stdout, and a new runner takes over whenever a test left the
process as a fresh fork would not find it. Verdicts are those of a fork per
test; a test never sees an earlier test's stdin or stdout; what a candidate
keeps between its own tests is its own business. Every candidate runs
through execeval, inside the safety net (under EXECEVAL_ISOLATION too)."""
import pytest

SECRETS = ["secret-%d" % n for n in range(6)]
SECRET_TESTS = [{"kind": "io", "stdin": s + "\n", "stdout": s + "\n"} for s in SECRETS]

# Looks everywhere this process lets it for the input of an earlier test
# (a "secret-N" with N below its own): the objects the collector knows, every
# frame's locals up the stack, every open fd (rewound), its own stdin
# rewound. Prints its own input, then each earlier one it found.
SNOOP = r'''
import gc, os, sys
mine = sys.stdin.readline().strip()
n = int(mine.split("-")[1])
found = set()
def look(value, depth=0):
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        for word in value.replace("\\n", " ").replace('"', " ").split():
            if word.startswith("secret-") and word[7:].isdigit() and int(word[7:]) < n:
                found.add(word)
    elif isinstance(value, dict) and depth < 4:
        for v in list(value.values()):
            look(v, depth + 1)
    elif isinstance(value, (list, tuple)) and depth < 4:
        for v in list(value):
            look(v, depth + 1)
for obj in gc.get_objects():
    if isinstance(obj, (dict, list, tuple)):
        look(obj)
frame = sys._getframe()
while frame is not None:
    look(dict(frame.f_locals))
    frame = frame.f_back
for fd in sorted(int(x) for x in os.listdir("/proc/self/fd")):
    try:
        os.lseek(fd, 0, 0)
    except OSError:
        pass
    try:
        os.set_blocking(fd, False)
        look(os.read(fd, 1 << 16))
    except OSError:
        pass
print(mine)
for word in sorted(found):
    print("LEAK", word)
'''


def test_a_test_cannot_find_an_earlier_tests_input_or_output(run):
    r = run(SNOOP, task={"task_id": "snoop", "tests": SECRET_TESTS})
    leaks = [t["message"] for t in r.record["tests"] if t["status"] != "pass"]
    assert r.record["status"] == "pass", leaks or r.record


# The same snoop after a first test that leaves a thread running: the tests
# after it run in new runners, and still find nothing.
def test_nor_after_a_test_that_sent_the_rest_to_new_runners(run):
    leave_a_thread = "import threading, time\nthreading.Thread(target=time.sleep, args=(0.2,), daemon=True).start()\n"
    r = run(leave_a_thread + SNOOP, task={"task_id": "snoop", "tests": SECRET_TESTS})
    leaks = [t["message"] for t in r.record["tests"] if t["status"] != "pass"]
    assert r.record["status"] == "pass", leaks or r.record


# Each leaves something behind that would change the next test if it ran in
# the same process; each test's output must be what a fresh process prints.
LEFTOVERS = {
    "a signal handler": "import signal\nprint(signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL)\n"
                        "signal.signal(signal.SIGUSR1, lambda *a: None)\n",
    "a changed directory": "import os\nprint(os.getcwd() != '/')\nos.chdir('/')\n",
    "a recursion limit": "import sys\nprint(sys.getrecursionlimit() < 5000)\nsys.setrecursionlimit(10**5)\n",
    "a replaced builtin": "import builtins\nprint(not hasattr(builtins, 'seen'))\nbuiltins.seen = 1\n",
    "gc turned off": "import gc\nprint(gc.isenabled())\ngc.disable()\n",
    "an alarm": "import signal\nprint(signal.getitimer(signal.ITIMER_REAL)[0] == 0)\n"
                "signal.setitimer(signal.ITIMER_REAL, 30)\n",
    "a thread": "import threading, time\nprint(threading.active_count() == 1)\n"
                "threading.Thread(target=time.sleep, args=(0.3,), daemon=True).start()\n",
    "an open file on stdin": "import sys\nprint(sys.stdin.readline().strip() == 'x')\nkeep = open(0)\n"
                             "def f():\n    return keep\n",
    "unflushed output on a dup of stdout": "import os, sys\nprint(sys.stdin.readline().strip() == 'x')\n"
                                           "out = os.fdopen(os.dup(1), 'w')\nout.write('stale\\n')\n",
    "an environment variable": "import os\nprint('SEEN' not in os.environ)\nos.environ['SEEN'] = '1'\n",
    "the harness's fds closed": "import os\nprint(True, flush=True)\nos.closerange(3, 4096)\n",
    "a lot of memory": "print(True)\nkeep = [0] * (12 << 20)\n",
    "a forked child": "import os, time\nprint(True, flush=True)\nif os.fork() == 0:\n    time.sleep(0.2)\n"
                      "    os._exit(0)\n",
}


@pytest.mark.parametrize("what", sorted(LEFTOVERS))
def test_what_a_test_leaves_behind_does_not_reach_the_next(run, what):
    tests = [{"kind": "io", "stdin": "x\n", "stdout": "True\n"} for _ in range(4)]
    r = run(LEFTOVERS[what], task={"task_id": "left", "tests": tests})
    assert [t["status"] for t in r.record["tests"]] == ["pass"] * 4, r.record["tests"]


# What a fork per test reports for a test that ends the process, raises or
# prints too much; the tests after it are judged as usual.
def test_a_test_that_closes_the_runners_fds_keeps_its_exit_status(run):
    program = "import os\nn = int(input())\nprint(n, flush=True)\nos.closerange(3, 4096)\nraise SystemExit(n)\n"
    tests = [{"kind": "io", "stdin": "%d\n" % n, "stdout": "%d\n" % n} for n in (0, 4, 0)]
    r = run(program, task={"task_id": "closes", "tests": tests})
    got = [(t["status"], t["message"]) for t in r.record["tests"]]
    assert got == [("pass", None), ("fail", "exit code 4"), ("pass", None)], got


def test_a_test_that_ends_its_process_is_that_tests_result_only(run):
    program = ("import os, sys\nn = int(input())\nprint(n)\nsys.stdout.flush()\n"
               "if n == 1:\n    os._exit(3)\nif n == 2:\n    os.kill(os.getpid(), 9)\n"
               "if n == 3:\n    raise ValueError('three')\nif n == 4:\n    sys.exit(5)\n"
               "if n == 5:\n    print('x' * 300000)\n")
    tests = [{"kind": "io", "stdin": "%d\n" % n, "stdout": "%d\n" % n} for n in range(7)]
    r = run(program, task={"task_id": "ends", "tests": tests})
    got = [(t["status"], t["message"]) for t in r.record["tests"]]
    assert got[0] == ("pass", None) and got[6] == ("pass", None), got
    assert got[1] == ("fail", "exit code 3"), got
    assert got[2] == ("fail", "exit code -9"), got
    assert got[3][0] == "fail" and "ValueError: three" in got[3][1], got
    assert got[4] == ("fail", "exit code 5"), got
    assert got[5] == ("fail", "output overflow"), got


# The point of it all: honest tests share one process (the runner), where a
# fork per test would show four pids; one that leaves a thread behind sends
# the next test to a new runner.
def test_consecutive_io_tests_share_one_runner_until_one_leaves_something(run):
    tests = [{"kind": "io", "stdin": "%d\n" % n, "stdout": "-\n"} for n in range(4)]
    program = ("import os, threading, time\nprint(os.getpid())\nif input() == '1':\n"
               "    threading.Thread(target=time.sleep, args=(0.2,), daemon=True).start()\n")
    r = run(program, task={"task_id": "pids", "tests": tests})
    pids = [t["message"].split("got ")[1] for t in r.record["tests"]]
    assert pids[0] == pids[1] and pids[2] not in pids[:2] and pids[3] == pids[2], pids
