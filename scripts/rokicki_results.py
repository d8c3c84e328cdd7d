#!/usr/bin/env python3
"""Write results/<name>.json and .md for a Rokicki table (phase2 or nxopt-EOxEPy) from the
stdout of `coordinator build` (exact entries per depth) and `coordinator info --json` of the
file (value counts, group minima), with the file's MD5 and, when given, the MD5 of the file the
reference program (cube20src's phase2prune or nxopt) wrote.

usage: rokicki_results.py NAME BUILD.out INFO.json MD5 [REFERENCE_MD5] OUT_PREFIX
"""
import json
import re
import sys


def depth_counts(path):
    counts, deeper = {}, None
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*distance\s+(\d+)(\+?):\s+([\d,]+) entries", line)
            if m:
                n = int(m.group(3).replace(",", ""))
                if m.group(2):
                    deeper = (int(m.group(1)), n)
                else:
                    counts[int(m.group(1))] = n
    return [counts[d] for d in sorted(counts)], deeper


def table(rows, head):
    out = [f"| {' | '.join(head)} |", "|" + "---:|" * len(head)]
    out += [f"| {' | '.join(str(c) for c in r)} |" for r in rows]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) not in (6, 7):
        sys.exit(__doc__)
    name, build_out, info_path, md5 = sys.argv[1:5]
    reference = sys.argv[5] if len(sys.argv) == 7 else None
    prefix = sys.argv[-1]
    with open(info_path) as f:
        info = json.load(f)
    depths, deeper = depth_counts(build_out)
    result = {"table": name, "md5": md5, "reference_md5": reference,
              "identical_to_reference": reference == md5 if reference else None,
              "depth_counts": depths, "info": info}
    if deeper:
        result["at_least"] = {"distance": deeper[0], "entries": deeper[1]}
    with open(prefix + ".json", "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    md = [f"# {name}\n",
          f"Built by `coordinator build {name}`; described by `coordinator info --json`.\n",
          f"File MD5 `{md5}`" + (f"; the reference program's own file: `{reference}` ("
                                 + ("identical" if reference == md5 else "DIFFERENT") + ")." if reference else ".") + "\n",
          "## Entries per exact distance\n",
          table([(d, f"{n:,}") for d, n in enumerate(depths)]
                + ([(f"{deeper[0]}+", f"{deeper[1]:,}")] if deeper else []), ["distance", "entries"])]
    if "summary" in info:  # nxopt
        s = info["summary"]
        base = info["base"]
        labels = [f"<= {base}", f"{base + 1}", f"{base + 2}", f">= {base + 3}"]
        md += ["\n## 2-bit values (entries)\n",
               table([(v, labels[v], f"{n:,}") for v, n in enumerate(s["value_counts"])],
                     ["value", "distance", "entries"]),
               "\n## Group minima (16-byte groups of 62 entries)\n",
               table([(m, f"{n:,}") for m, n in enumerate(s["minimum_counts"]) if n],
                     ["minimum (15: beyond base + 2)", "groups"])]
    else:  # phase2
        md += ["\n## 4-bit values (entries)\n",
               table([(v, f"{n:,}") for v, n in enumerate(info["value_counts"]) if n], ["value", "entries"]),
               f"\ncube20src checksum: {info['checksum']} ({'ok' if info['checksum_ok'] else 'WRONG'})\n"]
    with open(prefix + ".md", "w") as f:
        f.write("\n".join(md))


main()
