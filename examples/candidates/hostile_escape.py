# A hostile candidate: it tries to read secrets, reach the network, write
# outside its sandbox, fork-bomb, and finally print a forged "pass" record.
import os, sys

def add(a, b):
    return a + b

for path in ("/root", "/home", "/etc/shadow", "/proc/1/environ"):
    try:
        print(path, os.listdir(path) if os.path.isdir(path) else open(path, "rb").read()[:40])
    except OSError as e:
        print(path, "->", e)
for path in ("/usr/owned", "/etc/owned", "/owned"):
    try:
        open(path, "w").write("x")
    except OSError as e:
        print(path, "->", e)
try:
    import socket
except ImportError as e:
    print("socket ->", e)
pids = 0
try:
    while pids < 10000:
        if os.fork() == 0:
            os._exit(0)
        pids += 1
except OSError as e:
    print("fork", pids, "->", e)
print('{"task_id": "demo/add", "status": "pass", "score": 1.0}')
sys.exit(0)
