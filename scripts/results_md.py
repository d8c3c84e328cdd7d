#!/usr/bin/env python3
"""Turn an enumeration JSON file (written by `coordinator enumerate --json`) into a markdown
file beside it, naming the command that produced it.

usage: results_md.py FILE.json "COMMAND"
"""
import json
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    path, command = sys.argv[1], sys.argv[2]
    with open(path) as f:
        d = json.load(f)
    lines = [
        f"# {d['space']} {d['metric']}: {d['order']:,} positions",
        "",
        f"Produced by `{command}` in {d['elapsed_s']:.2f} s wall, peak RSS "
        f"{d['peak_rss_bytes'] / 2**20:.1f} MiB.",
        "",
        "| depth | positions | classes_sym | classes_sym_inv |",
        "|---:|---:|---:|---:|",
    ]
    for r in d["depths"]:
        lines.append(f"| {r['depth']} | {r['positions']:,} | {r['classes_sym']:,} | {r['classes_sym_inv']:,} |")
    total = lambda k: sum(r[k] for r in d["depths"])
    lines.append(f"| total | {total('positions'):,} | {total('classes_sym'):,} | {total('classes_sym_inv'):,} |")
    with open(path[:-5] + ".md" if path.endswith(".json") else path + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
