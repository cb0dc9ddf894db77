import sys, os, subprocess, time, json, re
sys.path.insert(0, "clients/python")
from execeval import Client
srv = subprocess.Popen(["build/execeval", "serve", "--listen", "127.0.0.1:18932"], stderr=open("/tmp/ct/srv.err","w"))
time.sleep(1.5)
c = Client("http://127.0.0.1:18932")
s = c.session()
print(s.exec("x = 42; open('/tmp/a','w').write('hi'); import os; (os.getpid(), os.getuid())")["result"])
uidpid = s.exec("os.getpid()")
# find state host pid: processes whose uid is the session uid
uid = int(s.exec("os.getuid()")["result"])
ps = subprocess.run(["ps", "-eo", "pid,uid"], capture_output=True, text=True).stdout.split("\n")[1:]
pids = [int(l.split()[0]) for l in ps if l.strip() and int(l.split()[1]) == uid]
cg = open("/proc/%d/cgroup" % pids[0]).read()
pidsline = [l for l in cg.splitlines() if ":pids:" in l][0].split(":", 2)[2]
procs = "/sys/fs/cgroup/pids" + pidsline + "/cgroup.procs"
print("procs", procs, open(procs).read().split())
p = subprocess.run(["/tmp/ct/try", str(srv.pid), procs, "61234"], input="\n", capture_output=True, text=True, timeout=30)
print(p.stdout, p.stderr)
try:
    print(s.exec("x")) 
except Exception as e:
    print("parent after:", type(e).__name__, e)
srv.terminate(); srv.wait()
