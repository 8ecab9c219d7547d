"""CPU ticks of one process's threads by kind: `python3 bench/threads.py PID --save FILE` keeps each thread's utime +
stime (/proc/PID/task/*/stat, in clock ticks) in FILE; `python3 bench/threads.py PID --since FILE` prints `jit gc other`,
the ticks each kind of thread used since then, thread by thread (a thread started since counts from zero). Without an
option it prints the totals of the threads alive now. bench/ab-common.sh's window saves before and reads after each
window, so that the JIT compiler's share of a window is a figure of its own: a cost of warming up, not of the requests.
A thread that ended during the window takes its ticks with it (the JVM retires idle compiler threads): a kind never
reads below zero, and what such a thread used stays only in the process's own total, from /proc/PID/stat."""
import json
import os
import re
import sys

JIT = re.compile(r"^C[12] CompilerThre|^JVMCI")
GC = re.compile(r"^(GC Thread|G1 |VM Thread|Parallel GC)")


def threads(pid):
    """Each live thread's id, kind and ticks."""
    out = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # ended meanwhile
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        kind = "jit" if JIT.match(comm) else "gc" if GC.match(comm) else "other"
        out[task] = (kind, int(fields[11]) + int(fields[12]))
    return out


def by_kind(now, before):
    out = {"jit": 0, "gc": 0, "other": 0}
    for task, (kind, used) in now.items():
        out[kind] += used - before.get(task, (kind, 0))[1]
    return out


if __name__ == "__main__":
    pid = int(sys.argv[1])
    now = threads(pid)
    if len(sys.argv) > 3 and sys.argv[2] == "--save":
        with open(sys.argv[3], "w") as f:
            json.dump(now, f)
        sys.exit(0)
    before = {}
    if len(sys.argv) > 3 and sys.argv[2] == "--since":
        with open(sys.argv[3]) as f:
            before = {task: tuple(v) for task, v in json.load(f).items()}
    t = by_kind(now, before)
    print(t["jit"], t["gc"], t["other"])
