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


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    path, command = sys.argv[1], sys.argv[2]
    times = level_times(sys.argv[3]) if len(sys.argv) == 4 else {}
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
        "| depth | positions | classes_sym | classes_sym_inv |" + (" direction | seconds |" if times else ""),
        "|---:|---:|---:|---:|" + ("---|---:|" if times else ""),
    ]
    for r in d["depths"]:
        row = f"| {r['depth']} | {r['positions']:,} | {r['classes_sym']:,} | {r['classes_sym_inv']:,} |"
        if times:
            direction, secs = times.get(r["depth"], ("?", float("nan")))
            row += f" {direction} | {secs:.2f} |"
        lines.append(row)
    total = lambda k: sum(r[k] for r in d["depths"])
    lines.append(f"| total | {total('positions'):,} | {total('classes_sym'):,} | {total('classes_sym_inv'):,} |"
                 + (f" | {sum(t for _, t in times.values()):.2f} |" if times else ""))
    with open(path[:-5] + ".md" if path.endswith(".json") else path + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
