#!/usr/bin/env python3
"""Write results/h48hN.json and .md from `coordinator info --json` of an H48 table and,
optionally, the log of the build that made it (for the exact h11 entries per depth, which the
hN builds print as they make the levels).

usage: h48_results.py INFO.json [BUILD.log] OUT_PREFIX     (writes OUT_PREFIX.json, .md)
"""
import json
import re
import sys


def h11_levels(log_path):
    levels = {0: 1}
    with open(log_path) as f:
        for line in f:
            m = re.match(r"depth\s+(\d+):\s+([\d,]+) h11 entries", line)
            if m:
                levels[int(m.group(1))] = int(m.group(2).replace(",", ""))
    return [levels[d] for d in sorted(levels)] if len(levels) > 1 else []


def table(rows, head):
    out = [f"| {' | '.join(head)} |", "|" + "---:|" * len(head)]
    out += [f"| {' | '.join(r)} |" for r in rows]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        info = json.load(f)
    if len(sys.argv) == 4:
        info["h11_levels"] = h11_levels(sys.argv[2])
    prefix = sys.argv[-1]
    with open(prefix + ".json", "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")
    h, base = info["h"], info["base"]
    md = [f"# h48h{h}: exact distances\n",
          f"Built by `coordinator build h48h{h}`: {info['entries']:,} entries, {info['bytes']:,} bytes at "
          f"2 bits per entry (base {base}), {info['format']} layout. Each entry is the smallest h11 "
          f"distance over the 2^{11 - h} h11 entries that differ only in the eo bits h48h{h} drops.\n",
          "2-bit values (0 = at most base, 1 = base + 1, 2 = base + 2, 3 = at least base + 3):\n",
          table([[str(k), f"{c:,}"] for k, c in enumerate(info["buckets"])], ["value", "entries"])]
    counts = info["depth_counts"]
    if counts:
        total = sum(counts) + info["deeper"]
        rows = [[str(d), f"{c:,}", f"{100 * c / total:.6f} %"] for d, c in enumerate(counts)]
        rows.append([f"> {len(counts) - 1}", f"{info['deeper']:,}", f"{100 * info['deeper'] / total:.6f} %"])
        md += [f"\nh48h{h} entries per exact depth (to base + 2 = {base + 2}):\n",
               table(rows, ["depth", "entries", "share"])]
    levels = info.get("h11_levels", [])
    if levels:
        md += [f"\nh11 entries per exact depth, the levels this build computed (symmetry-reduced "
               f"entries: 3,393 cocsep classes x 70,963,200 eoesep values):\n",
               table([[str(d), f"{c:,}"] for d, c in enumerate(levels)], ["depth", "h11 entries"])]
    with open(prefix + ".md", "w") as f:
        f.write("\n".join(md))


if __name__ == "__main__":
    main()
