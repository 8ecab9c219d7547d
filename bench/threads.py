"""CPU ticks of one process's threads by kind, summed over the threads alive now: `python3 bench/threads.py PID`
prints `jit gc other` (utime + stime of /proc/PID/task/*/stat, in clock ticks). bench/ab-common.sh's window takes it
before and after each window, so that the JIT compiler's share of a window is a figure of its own: a cost of warming
up, not of the requests. A thread that ended during the window takes its ticks with it (the JVM retires idle compiler
threads); the process's own total, from /proc/PID/stat, still counts them."""
import os
import re
import sys

JIT = re.compile(r"^C[12] CompilerThre|^JVMCI")
GC = re.compile(r"^(GC Thread|G1 |VM Thread|Parallel GC)")


def ticks(pid):
    out = {"jit": 0, "gc": 0, "other": 0}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # ended meanwhile
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        used = int(fields[11]) + int(fields[12])
        out["jit" if JIT.match(comm) else "gc" if GC.match(comm) else "other"] += used
    return out


if __name__ == "__main__":
    t = ticks(int(sys.argv[1]))
    print(t["jit"], t["gc"], t["other"])
