#!/usr/bin/env python3
"""Folds `perf script` output of `syscalls:sys_enter_write` samples taken with -g (bench/wakes.sh, STACKS=1) into the
frames that asked for each write: Netty's own wake-up plumbing (the executor's execute, the loop's wakeup, the eventfd
write and the C library below it) is skipped, and the next DEPTH frames name the caller. Prints the callers by share."""
import collections
import re
import sys

DEPTH = int(sys.argv[1]) if len(sys.argv) > 1 else 6
PLUMBING = re.compile(r"eventFdWrite|EpollEventLoop::wakeup|EpollEventLoop\.wakeup|SingleThreadEventExecutor|"
                      r"AbstractScheduledEventExecutor|__write|write@@|\[unknown\]|^0x|libc\.so|libpthread|"
                      r"entry_SYSCALL|do_syscall|__x64_sys|ksys_write|syscall_trace|perf_")
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")


def callers(lines):
    stack, total = [], 0
    for line in lines:
        if not line.strip():
            if stack:
                total += 1
                yield stack
            stack = []
            continue
        m = FRAME.match(line)
        if m:
            name = re.sub(r"\+0x[0-9a-f]+$", "", m.group(1))
            if not PLUMBING.search(name) and not PLUMBING.search(m.group(2)):
                stack.append(name)
    if stack:
        yield stack


counts = collections.Counter()
n = 0
for stack in callers(sys.stdin):
    n += 1
    counts[" <- ".join(stack[:DEPTH])] += 1
for folded, count in counts.most_common(20):
    print(f"{100.0 * count / max(n, 1):5.1f}%  {folded}")
print(f"{n} writes")
