#!/usr/bin/env python3
"""Plot positions per depth on a log scale, one SVG per metric, from the enumeration JSON files
in results/ (plain SVG, no plotting library needed).

usage: plot.py [RESULTS_DIR]   (writes RESULTS_DIR/positions-htm.svg and positions-qtm.svg)
"""
import json
import math
import os
import sys

COLORS = {"edges": "#1f77b4", "corners": "#d62728"}
W, H = 720, 420
LEFT, RIGHT, TOP, BOTTOM = 80, 150, 40, 50


def load(results, space, metric):
    path = os.path.join(results, f"{space}-{metric}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def plot(results, metric):
    series = {s: load(results, s, metric) for s in ("edges", "corners")}
    series = {s: d for s, d in series.items() if d}
    if not series:
        return None
    max_depth = max(r["depth"] for d in series.values() for r in d["depths"])
    top = max(r["positions"] for d in series.values() for r in d["depths"])
    decades = math.ceil(math.log10(top))
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
    x = lambda depth: LEFT + pw * depth / max_depth
    y = lambda v: TOP + ph * (1 - math.log10(v) / decades)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="15">Positions per depth, {metric.upper()} (log scale)</text>']
    for k in range(decades + 1):
        yy = y(10 ** k)
        out.append(f'<line x1="{LEFT}" y1="{yy:.1f}" x2="{LEFT + pw}" y2="{yy:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{yy + 4:.1f}" text-anchor="end">1e{k}</text>')
    for dpt in range(max_depth + 1):
        out.append(f'<text x="{x(dpt):.1f}" y="{TOP + ph + 18}" text-anchor="middle">{dpt}</text>')
    out.append(f'<text x="{LEFT + pw / 2}" y="{H - 10}" text-anchor="middle">depth</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="black"/>')
    for i, (space, d) in enumerate(series.items()):
        pts = " ".join(f'{x(r["depth"]):.1f},{y(r["positions"]):.1f}' for r in d["depths"])
        c = COLORS[space]
        out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2"/>')
        for r in d["depths"]:
            out.append(f'<circle cx="{x(r["depth"]):.1f}" cy="{y(r["positions"]):.1f}" r="3" fill="{c}"/>')
        ly = TOP + 20 + 20 * i
        out.append(f'<line x1="{LEFT + pw + 15}" y1="{ly}" x2="{LEFT + pw + 35}" y2="{ly}" stroke="{c}" stroke-width="2"/>')
        out.append(f'<text x="{LEFT + pw + 40}" y="{ly + 4}">{space} ({d["order"]:.2e})</text>')
    out.append("</svg>")
    path = os.path.join(results, f"positions-{metric}.svg")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return path


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results")
    for metric in ("htm", "qtm"):
        path = plot(results, metric)
        if path:
            print("wrote", path)


if __name__ == "__main__":
    main()
