#!/usr/bin/env python3
"""Render `coordinator info --json` of an H48 table set as markdown.

usage: h48_md.py TABLE.json > TABLE.md
"""
import json
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        info = json.load(f)
    name = f"h48h{info['h']}"
    print(f"# {name}: exact distances\n")
    print(f"Built by `coordinator build {name}`; {info['entries']:,} entries, {info['bytes']:,} bytes "
          f"at 2 bits per entry (base {info['base']}), {info['format']} layout.\n")
    print("2-bit values (0 = at most base, 1 = base+1, 2 = base+2, 3 = at least base+3): "
          + " / ".join(f"{b:,}" for b in info["buckets"]) + "\n")
    for section in info["sections"]:
        counts = section["depth_counts"]
        total = sum(counts) + section["deeper"]
        print(f"## {section['name']}\n")
        print(f"{section['entries']:,} entries, {section['bytes']:,} bytes.\n")
        print("| depth | entries | share |")
        print("|---:|---:|---:|")
        for d, c in enumerate(counts):
            print(f"| {d} | {c:,} | {100 * c / total:.4f} % |")
        if section["deeper"]:
            print(f"| deeper | {section['deeper']:,} | |")
        print(f"| total | {total:,} | |\n")


if __name__ == "__main__":
    main()
