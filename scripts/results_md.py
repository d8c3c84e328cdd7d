#!/usr/bin/env python3
"""Turn an enumeration JSON file (written by `coordinator enumerate --json`) into a markdown
file beside it, naming the command that produced it. With the run's stderr log, the table also
gets each depth's direction (forward/backward) and seconds.

usage: results_md.py FILE.json "COMMAND" [RUN.log]
"""
import json
import re
import sys


def level_times(log_path):
    """depth -> (direction, seconds) from the coordinator's per-depth stderr lines."""
    times = {}
    pattern = re.compile(r"^depth\s+(\d+):.*\((\w+), ([0-9.]+) s\)\s*$")
    with open(log_path) as f:
        for line in f:
            m = pattern.match(line.strip())
            if m:
                times[int(m.group(1))] = (m.group(2), float(m.group(3)))
    return times


def product_work(log_path):
    """depth -> (products, positions of the representative cosets) from a product enumeration's
    log lines."""
    work = {}
    pattern = re.compile(r"depth\s+(\d+): [0-9,]+ positions; ([0-9,]+) products for the ([0-9,]+) positions")
    with open(log_path) as f:
        for line in f:
            m = pattern.search(line)
            if m:
                work[int(m.group(1))] = (int(m.group(2).replace(",", "")), int(m.group(3).replace(",", "")))
    return work


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    path, command = sys.argv[1], sys.argv[2]
    times = level_times(sys.argv[3]) if len(sys.argv) == 4 else {}
    work = product_work(sys.argv[3]) if len(sys.argv) == 4 else {}
    with open(path) as f:
        d = json.load(f)
    metric = "moves of H" if d["metric"] == "h" else d["metric"].upper()
    group = "the 16 symmetries that preserve H" if d["metric"] == "h" else "the 48 cube symmetries M"
    lines = [
        f"# {d['space']}, {metric}: {d['order']:,} positions",
        "",
        f"`classes_sym`: classes under {group}; `classes_sym_inv`: classes under those and inversion.",
        "",
        f"Produced by `{command}` in {d['elapsed_s']:.2f} s wall, peak RSS "
        f"{d['peak_rss_bytes'] / 2**20:.1f} MiB.",
        "",
        "| depth | positions | classes_sym | classes_sym_inv |" + (" direction | seconds |" if times else "")
        + (" products | products per position |" if work else ""),
        "|---:|---:|---:|---:|" + ("---|---:|" if times else "") + ("---:|---:|" if work else ""),
    ]
    if work:
        lines[2:2] = [
            "Product enumeration: `products` counts the products formed in the representative cosets",
            "at each depth, and the ratio divides it by the positions those cosets hold at that depth.",
            "",
        ]
    for r in d["depths"]:
        row = f"| {r['depth']} | {r['positions']:,} | {r['classes_sym']:,} | {r['classes_sym_inv']:,} |"
        if times:
            direction, secs = times.get(r["depth"], ("?", float("nan")))
            row += f" {direction} | {secs:.2f} |"
        if work:
            products, positions = work.get(r["depth"], (0, 0))
            row += f" {products:,} | {products / max(positions, 1):.2f} |"
        lines.append(row)
    total = lambda k: sum(r[k] for r in d["depths"])
    lines.append(f"| total | {total('positions'):,} | {total('classes_sym'):,} | {total('classes_sym_inv'):,} |"
                 + (f" | {sum(t for _, t in times.values()):.2f} |" if times else "")
                 + (f" {sum(p for p, _ in work.values()):,} | |" if work else ""))
    with open(path[:-5] + ".md" if path.endswith(".json") else path + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
