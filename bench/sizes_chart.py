#!/usr/bin/env python3
"""Draws bench/lifecycle.sh's sizes.csv as an SVG with no library: megabytes on the primary over minutes, one line
per table family (above), and the transfers on the primary (below).

    python3 bench/sizes_chart.py sizes.csv sizes.svg "title"
"""
import csv
import sys

W, PANEL_H, LEFT, RIGHT, TOP, GAP = 900, 300, 70, 170, 40, 70
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#7f7f7f", "#d62728"]


def nice_max(v):
    step = 1
    while step * 10 <= v:
        step *= 10
    for m in (1, 2, 5, 10):
        if m * step >= v:
            return m * step
    return 10 * step


def panel(out, top, series, unit, x_max):
    ph = PANEL_H
    pw = W - LEFT - RIGHT
    y_max = nice_max(max([max(v for _, v in pts) for _, pts in series] + [1e-9]))
    out.append(f'<rect x="{LEFT}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
    for i in range(6):
        v = y_max * i / 5
        y = top + ph - ph * i / 5
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{v:g}</text>')
    for m in range(0, int(x_max) + 1, 5):
        x = LEFT + pw * m / x_max
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#eee"/>')
        out.append(f'<text x="{x:.1f}" y="{top + ph + 15}" text-anchor="middle" font-size="11">{m}</text>')
    out.append(f'<text x="{LEFT - 55}" y="{top + ph / 2}" font-size="12" transform="rotate(-90 {LEFT - 55} {top + ph / 2})"'
               f' text-anchor="middle">{unit}</text>')
    for i, (label, pts) in enumerate(series):
        c = COLORS[i % len(COLORS)]
        path = " ".join(f"{LEFT + pw * t / x_max:.1f},{top + ph - ph * v / y_max:.1f}" for t, v in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"/>')
        out.append(f'<text x="{LEFT + pw + 10}" y="{top + 15 + 18 * i}" font-size="12" fill="{c}">{label}</text>')


def main(src, dst, title):
    with open(src) as f:
        rows = [r for r in csv.DictReader(f) if r.get("transfers_heap")]
    mb = lambda r, *cols: sum(float(r[c] or 0) for c in cols) / 1e6
    t = [float(r["t"]) / 60 for r in rows]
    families = [
        ("transfers", ("transfers_heap", "transfers_index")),
        ("transfer_events", ("events_heap", "events_index")),
        ("transfer_keys", ("keys_total",)),
        ("ledger_entries (kept)", ("ledger_total",)),
    ]
    sizes = [(label, [(t[i], mb(r, *cols)) for i, r in enumerate(rows)]) for label, cols in families]
    hot = [(t[i], mb(r, "transfers_heap", "transfers_index", "events_heap", "events_index", "keys_total"))
           for i, r in enumerate(rows)]
    sizes.insert(0, ("hot tables, total", hot))
    counts = [("transfers", [(t[i], float(r["transfers_rows"]) / 1000) for i, r in enumerate(rows)]),
              ("keys", [(t[i], float(r["keys_rows"]) / 1000) for i, r in enumerate(rows)])]
    x_max = max(5, -(-max(t + [1]) // 5) * 5)
    height = TOP + 2 * PANEL_H + GAP + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" font-family="sans-serif">',
           f'<rect width="{W}" height="{height}" fill="white"/>',
           f'<text x="{W / 2}" y="24" text-anchor="middle" font-size="15">{title}</text>']
    panel(out, TOP, sizes, "MB on the primary", x_max)
    panel(out, TOP + PANEL_H + GAP, counts, "rows on the primary (thousands)", x_max)
    out.append(f'<text x="{LEFT + (W - LEFT - RIGHT) / 2}" y="{height - 8}" text-anchor="middle" font-size="12">minutes</text>')
    out.append("</svg>")
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:4])
