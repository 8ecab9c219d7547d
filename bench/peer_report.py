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
calibration = [r for r in rows if r["round"] == 0]


def clean(r):
    """Nothing left running in the service before the window, and under 1 % of its answers were errors."""
    return r["idleCoresBefore"] < clean_idle and r["errors"] < 0.01 * (r["ok"] + r["errors"])


def span(values, digits):
    lo, hi = min(values), max(values)
    f = (lambda v: f"{v:,.0f}") if digits == 0 else (lambda v: f"{v:,.{digits}f}")
    return f(lo) if f(lo) == f(hi) else f"{f(lo)}–{f(hi)}"


def mean(values):
    return sum(values) / len(values) if values else None


print(f"# The replay path beside the Quarkus idempotency peer\n\n`{command}`\n")
print(f"- peer: {peer_desc}\n- ours: {ours_desc}")
print(f"- 1/5/15-min load: {load_start} before the run, {load_end} after it; each window's 1-min load is listed below.")
print(f"- Each cell: min–max over the windows named; ours/peer: the ratio of the means. The peer's columns use its clean"
      f" windows only (less than {clean_idle} cores busy in the second before the window, under 1 % errors).\n")
print("| replays | measure | peer, clean windows | ours, every window | ours/peer |\n|---|---|---:|---:|---:|")
measures = [("answers/s", "achieved", 0), ("p50 ms", "p50", 2), ("p99 ms", "p99", 2),
            ("service CPU µs/answer", "svcUs", 0), ("Redis CPU µs/answer", "redisUs", 1), ("errors", "errors", 0)]
ratios = {}
for c in (32, 4):
    peer = [r for r in windows if r["name"] == "peer" and r["connections"] == c and clean(r)]
    ours = [r for r in windows if r["name"] == "ours" and r["connections"] == c]
    for label, field, digits in measures:
        p, o = [r[field] for r in peer], [r[field] for r in ours]
        ratio = f"{mean(o) / mean(p):.2f}" if p and o and mean(p) else "–"
        print(f"| c{c} | {label} | {span(p, digits) if p else '–'} | {span(o, digits) if o else '–'} | {ratio} |")
    if peer and ours:
        ratios[c] = (mean([r["achieved"] for r in ours]) / mean([r["achieved"] for r in peer]),
                     min(r["achieved"] for r in ours) / max(r["achieved"] for r in peer))

print("\nThe services' CPU in the seconds after each slot's window, with nothing sent (cores):\n")
print("| service | after c32 | after c4 |\n|---|---:|---:|")
for name in ("peer", "ours"):
    cells = [[r["afterCores"] for r in after if r["name"] == name and r["connections"] == c] for c in (32, 4)]
    cells = [span(v, 2) if v else "–" for v in cells]
    print(f"| {name} | {cells[0]} | {cells[1]} |")

print("\nCalibration, the driver against the static responder with each service's request: "
      + "; ".join(f"{r['name']} c{r['connections']} {r['achieved']:,.0f}/s (p99 {r['p99']} ms, driver"
                  f" {r['driverUsPerRequest']} µs CPU/request)" for r in calibration) + ".")

print("\nWindows in order (clean: the peer's windows that count):")
slot_after = {(r["name"], r["round"], r["connections"]): r for r in after}
for r in windows:
    a = slot_after.get((r["name"], r["round"], r["connections"]), {})
    verdict = ("clean" if clean(r) else "not clean") if r["name"] == "peer" else "ours"
    print(f"- round {r['round']} {r['name']} c{r['connections']}: {r['achieved']:,.0f}/s, p50 {r['p50']} ms, p99 {r['p99']} ms, "
          f"service {r['svcUs']:.0f} µs, Redis {r['redisUs']:.1f} µs, errors {r['errors']} {json.dumps(r['errorKinds'])}, "
          f"{r['logErrors']} ERROR log lines, {r['idleCoresBefore']:.2f} cores busy before, "
          f"{a.get('afterCores', float('nan')):.2f} after; load {r['load']}: {verdict}")

print("\nTargets:")
for c, (by_mean, worst) in sorted(ratios.items(), reverse=True):
    print(f"- replays/s at {c} connections ≥ 2× the peer's clean windows: ours/peer {by_mean:.2f} (the means) → "
          f"{'**met**' if by_mean >= 2 else '**not met**'}; ours' lowest window over the peer's highest clean one: {worst:.2f}")
ours32 = [r for r in windows if r["name"] == "ours" and r["connections"] == 32]
if ours32:
    svc, redis = max(r["svcUs"] for r in ours32), max(r["redisUs"] for r in ours32)
    print(f"- service CPU per replay ≤ 40 µs (c32, the highest window): {svc:.0f} µs → {'**met**' if svc <= 40 else '**not met**'}")
    print(f"- Redis CPU per replay ≤ 10 µs (c32, the highest window): {redis:.1f} µs → {'**met**' if redis <= 10 else '**not met**'}")
