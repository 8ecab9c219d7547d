#!/usr/bin/env python3
"""A flame graph (SVG, no dependencies) from `jfr print --events jdk.ExecutionSample` output.

Each sample's stack, root first, is folded into collapsed stacks; the SVG draws one box per frame, as wide as the
samples under it, with the frame's name and share in its tooltip. Frames are shortened to Class.method (the package is
kept in the tooltip). Boxes are coloured by what the frame is, so the big ones can be told apart at a glance:
service code, JSON, Redis client, PostgreSQL client, HTTP/Netty, security (JWT), hashing, JDK, other.

Usage: flame.py samples.txt out.svg "title" [collapsed.txt]
"""
import collections
import html
import re
import sys

FRAME = re.compile(r'^\s+([\w$.<>]+)\(')

COLOURS = [
    ("dev.ledgerline", "#e8743b", "service code"),
    ("com.fasterxml.jackson", "#9b59b6", "JSON (Jackson)"),
    ("io.vertx.core.json", "#9b59b6", "JSON (Jackson)"),
    ("io.vertx.redis", "#c0392b", "Redis client"),
    ("io.quarkus.redis", "#c0392b", "Redis client"),
    ("io.vertx.pgclient", "#2980b9", "PostgreSQL client"),
    ("io.vertx.sqlclient", "#2980b9", "PostgreSQL client"),
    ("io.netty", "#27ae60", "HTTP / Netty"),
    ("io.vertx.core.http", "#27ae60", "HTTP / Netty"),
    ("org.jboss.resteasy.reactive", "#16a085", "Quarkus REST"),
    ("io.quarkus.resteasy.reactive", "#16a085", "Quarkus REST"),
    ("io.smallrye.jwt", "#f1c40f", "security (JWT)"),
    ("io.quarkus.security", "#f1c40f", "security (JWT)"),
    ("io.quarkus.smallrye.jwt", "#f1c40f", "security (JWT)"),
    ("sun.security.provider", "#d35400", "hashing"),
    ("io.micrometer", "#7f8c8d", "metrics"),
    ("io.smallrye.mutiny", "#95a5a6", "Mutiny"),
    ("java.", "#bdc3c7", "JDK"),
    ("jdk.", "#bdc3c7", "JDK"),
    ("sun.", "#bdc3c7", "JDK"),
]


def colour(frame):
    for prefix, c, _ in COLOURS:
        if frame.startswith(prefix):
            return c
    return "#dcdcaa"


def short(frame):
    parts = frame.split(".")
    return ".".join(parts[-2:]) if len(parts) >= 2 else frame


def samples(path):
    out, current = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("jdk.ExecutionSample"):
                current = []
                out.append(current)
            elif current is not None:
                m = FRAME.match(line)
                if m:
                    current.append(m.group(1))
    return [list(reversed(s)) for s in out if s]  # root first


def tree(stacks):
    root = {"n": 0, "c": collections.OrderedDict()}
    for s in stacks:
        root["n"] += 1
        node = root
        for fr in s:
            node = node["c"].setdefault(fr, {"n": 0, "c": collections.OrderedDict()})
            node["n"] += 1
    return root


def svg(root, title, width=1800, row=16):
    total = root["n"]
    rects = []
    depth_max = [0]

    def walk(node, x, depth):
        for name, child in sorted(node["c"].items(), key=lambda kv: kv[0]):
            w = child["n"] / total * width
            if w >= 3.0:  # narrower boxes (under 0.2 % of the samples) are not readable and only make the file large
                rects.append((x, depth, w, name, child["n"]))
                depth_max[0] = max(depth_max[0], depth)
                walk(child, x, depth + 1)
            x += w

    walk(root, 0.0, 0)
    height = (depth_max[0] + 4) * row + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="monospace" font-size="11">',
           f'<rect width="100%" height="100%" fill="#ffffff"/>',
           f'<text x="8" y="18" font-size="14">{html.escape(title)} — {total} samples; width = share of samples, '
           f'root at the bottom; hover a box for its full name</text>']
    legend_x = 8
    seen = set()
    for _, c, label in COLOURS:
        if label in seen:
            continue
        seen.add(label)
        out.append(f'<rect x="{legend_x}" y="26" width="10" height="10" fill="{c}"/>'
                   f'<text x="{legend_x + 13}" y="35">{html.escape(label)}</text>')
        legend_x += 14 + 7 * len(label) + 14
    for x, depth, w, name, n in rects:
        y = height - (depth + 1) * row - 4
        pct = 100.0 * n / total
        label = short(name)
        chars = int((w - 4) / 6.6)
        text = label if len(label) <= chars else (label[:chars - 2] + ".." if chars > 3 else "")
        out.append(f'<g><title>{html.escape(name)} — {n} samples, {pct:.1f} %</title>'
                   f'<rect x="{x:.1f}" y="{y}" width="{max(w - 0.5, 0.1):.1f}" height="{row - 1}" fill="{colour(name)}" rx="1"/>'
                   + (f'<text x="{x + 2:.1f}" y="{y + row - 4}">{html.escape(text)}</text>' if text else "") + '</g>')
    out.append("</svg>")
    return "\n".join(out)


def main():
    stacks = samples(sys.argv[1])
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(svg(tree(stacks), sys.argv[3]))
    if len(sys.argv) > 4:
        folded = collections.Counter(";".join(s) for s in stacks)
        with open(sys.argv[4], "w", encoding="utf-8") as f:
            for k, v in folded.most_common():
                f.write(f"{k} {v}\n")


if __name__ == "__main__":
    main()
