#!/usr/bin/env python3
"""The report of bench/peer.sh, in Markdown, from its JSON lines.
Usage: peer_report.py JSONL COMMAND PEER_DESC OURS_DESC LOAD_START LOAD_END CLEAN_IDLE"""
import json
import sys

path, command, peer_desc, ours_desc, load_start, load_end, clean_idle = sys.argv[1:8]
clean_idle = float(clean_idle)
rows = [json.loads(line) for line in open(path) if line.strip()]
windows = [r for r in rows if r.get("scenario") == "replay" and r["round"] > 0]
after = [r for r in rows if r.get("scenario") == "after"]
calibration = [r for r in rows if r["round"] == 0 and r["name"] != "redis-get"]
floor = [r for r in rows if r["name"] == "redis-get"]


slot_after = {(r["name"], r["round"], r["connections"]): r for r in after}


def kind(r):
    """clean: the service was quiet (under CLEAN_IDLE cores) in the second before the window and in the seconds after
    it, so during it too (the peer's busy threads, once started, kept on until it was stopped), with under 1 % errors;
    clean at the start: quiet only before it."""
    if r["errors"] >= 0.01 * (r["ok"] + r["errors"]) or r["idleCoresBefore"] >= clean_idle:
        return "not clean"
    return "clean" if slot_after.get((r["name"], r["round"], r["connections"]), {}).get("afterCores", 9) < clean_idle \
        else "clean at the start"


def span(values, digits):
    lo, hi = min(values), max(values)
    f = (lambda v: f"{v:,.0f}") if digits == 0 else (lambda v: f"{v:,.{digits}f}")
    return f(lo) if f(lo) == f(hi) else f"{f(lo)}–{f(hi)}"


def mean(values):
    return sum(values) / len(values) if values else None


print(f"# The replay path beside the Quarkus idempotency peer\n\n`{command}`\n")
print(f"- peer: {peer_desc}\n- ours: {ours_desc}")
print(f"- 1/5/15-min load: {load_start} before the run, {load_end} after it; each window's 1-min load is listed below.")
print("- Each cell: min–max over the windows named; ours/peer: the ratio of the means, against the peer's clean"
      f" windows (quiet, under {clean_idle} cores, in the second before the window and in the seconds after it; under"
      " 1 % errors), or, where it has none, its windows clean at the start (quiet only before).\n")
print("| replays | measure | peer, clean windows | peer, every window | ours, every window | ours/peer (clean) |\n"
      "|---|---|---:|---:|---:|---:|")
measures = [("answers/s", "achieved", 0), ("p50 ms", "p50", 2), ("p99 ms", "p99", 2),
            ("service CPU µs/answer", "svcUs", 0), ("Redis CPU µs/answer", "redisUs", 1), ("errors", "errors", 0)]
ratios = {}
for c in (32, 4):
    peer_all = [r for r in windows if r["name"] == "peer" and r["connections"] == c]
    peer = [r for r in peer_all if kind(r) == "clean"]
    which = "clean"
    if not peer:
        peer, which = [r for r in peer_all if kind(r) == "clean at the start"], "clean at the start"
    ours = [r for r in windows if r["name"] == "ours" and r["connections"] == c]
    for label, field, digits in measures:
        p, a, o = ([r[field] for r in rs] for rs in (peer, peer_all, ours))
        ratio = f"{mean(o) / mean(p):.2f}" if p and o and mean(p) else "–"
        note = "" if which == "clean" or not p else " (clean at the start)"
        print(f"| c{c} | {label} | {(span(p, digits) + note) if p else '–'} | {span(a, digits) if a else '–'} | "
              f"{span(o, digits) if o else '–'} | {ratio} |")
    if ours and peer_all:
        ours_mean = mean([r["achieved"] for r in ours])
        ratios[c] = (ours_mean / mean([r["achieved"] for r in peer]) if peer else None, which,
                     ours_mean / max(r["achieved"] for r in peer_all), ours_mean / min(r["achieved"] for r in peer_all))

print("\nThe services' CPU in the seconds after each slot's window, with nothing sent (cores):\n")
print("| service | after c32 | after c4 |\n|---|---:|---:|")
for name in ("peer", "ours"):
    cells = [[r["afterCores"] for r in after if r["name"] == name and r["connections"] == c] for c in (32, 4)]
    cells = [span(v, 2) if v else "–" for v in cells]
    print(f"| {name} | {cells[0]} | {cells[1]} |")

print("\nCalibration, the driver against the static responder with each service's request: "
      + "; ".join(f"{r['name']} c{r['connections']} {r['achieved']:,.0f}/s (p99 {r['p99']} ms, driver"
                  f" {r['driverUsPerRequest']} µs CPU/request)" for r in calibration) + ".")

if floor:
    print("\nRedis's floor in the same run, redis-benchmark's plain GET of a 1,800-byte value: "
          + ", ".join(f"c{r['connections']} {r['achieved']:,.0f}/s, {r['redisUs']:.1f} µs of Redis CPU per GET" for r in floor) + ".")

print("\nWindows in order:")
for r in windows:
    a = slot_after.get((r["name"], r["round"], r["connections"]), {})
    print(f"- round {r['round']} {r['name']} c{r['connections']}: {r['achieved']:,.0f}/s, p50 {r['p50']} ms, p99 {r['p99']} ms, "
          f"service {r['svcUs']:.0f} µs, Redis {r['redisUs']:.1f} µs, errors {r['errors']} {json.dumps(r['errorKinds'])}, "
          f"{r['logErrors']} ERROR log lines, {r['idleCoresBefore']:.2f} cores busy before, "
          f"{a.get('afterCores', float('nan')):.2f} after; load {r['load']}" + (f": **{kind(r)}**" if r["name"] == "peer" else ""))

print("\nTargets:")
for c, (by_clean, which, by_best, by_worst) in sorted(ratios.items(), reverse=True):
    if by_clean is None:   # no clean window: judged against the peer's lowest window, unstable as it was
        verdict = "**not met** (below 2× even the peer's lowest window)" if by_worst < 2 else "– (no clean window to judge by)"
    else:
        verdict = "**met**" if by_clean >= 2 else "**not met**"
    clean_text = "no such window" if by_clean is None else f"{by_clean:.2f}"
    print(f"- replays/s at {c} connections ≥ 2× the peer's clean windows: ours/peer {clean_text} (the means; the peer's"
          f" windows {which}) → {verdict}; ours' mean over the peer's best window of any kind: {by_best:.2f}")
ours32 = [r for r in windows if r["name"] == "ours" and r["connections"] == 32]
if ours32:
    svc, redis = max(r["svcUs"] for r in ours32), max(r["redisUs"] for r in ours32)
    print(f"- service CPU per replay ≤ 40 µs (c32, the highest window): {svc:.0f} µs → {'**met**' if svc <= 40 else '**not met**'}")
    print(f"- Redis CPU per replay ≤ 10 µs (c32, the highest window): {redis:.1f} µs → {'**met**' if redis <= 10 else '**not met**'}")
