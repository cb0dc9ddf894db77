"""proc_cpu - CPU accounting from /proc shared by the benches that measure a
server's process tree and the host's (bench/rl-shape, bench/rl-client, bench/run-code-cost)."""
import os


def host_busy_s():
    """CPU seconds every core has been busy since boot (/proc/stat: user,
    nice, system, irq, softirq and steal; not idle or iowait): the whole
    machine, other users and the hypervisor's steal included."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (sum(fields[:3]) + sum(fields[5:8])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_s(root):
    """CPU seconds of root and its descendants now alive, each with its reaped
    children's (utime + stime + cutime + cstime, /proc): the server, its
    workers and the candidates they reaped."""
    parent, cpu = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(d)] = int(fields[1])
        cpu[int(d)] = sum(int(x) for x in fields[11:15])
    total = 0
    for pid in cpu:
        p = pid
        while p in parent and p != root and p > 1:
            p = parent[p]
        if p == root:
            total += cpu[pid]
    return total / os.sysconf("SC_CLK_TCK")
