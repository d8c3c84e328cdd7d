#!/usr/bin/env python3
"""Check an exact H48 table against the entries the solver's generator leaves too high, and
derive that effect for the smaller tables of the same base.

The H48 solver's generator never searches from its last hash slot (h11 key 189,880,194,105).
results/h48-skip/hN.tsv lists, for hN, every entry where that changes the solver's value: the
entry, its exact value and the solver's value, as found by replaying the generator's search from
that position with the solver's own code (outside this project; docs/h48-tables.md). This script

1. reads each listed entry of TABLE (a table hN built here, either layout) and checks that it
   holds the listed exact value: the list and the table come from different programs;
2. with --fold M ..., derives the solver's error for hM (M < N, same base and same search
   depth as hN): an hM entry is the minimum of the 2^(N-M) hN entries whose coordinate drops
   the lowest N-M orientation bits, both in the exact table and in the solver's (its marks do
   not depend on M for these M), so the solver's hM value is that minimum with the listed
   entries at their solver value. Prints exact minus solver per 2-bit value.

Writes a JSON summary to --json if given.

usage: h48_skip_check.py TABLE results/h48-skip/hN.tsv [--fold M ...] [--json OUT]
"""
import argparse
import json
import mmap
import sys

LINE_BYTES = 64
SLOTS = 254
# Offset of the main table: the cubefarm layout's 4096-byte header area plus the cocsep
# section (aligned to 64), or the solver's layout's info block, cocsep section and info block.
COCSEP_PAYLOAD = 1_119_744
INFO_BYTES = 512
MAGIC = b"CFTABLE\0"


def main_offset(head):
    if head.startswith(MAGIC):
        return (4096 + COCSEP_PAYLOAD + 63) // 64 * 64
    return INFO_BYTES + COCSEP_PAYLOAD + INFO_BYTES


def read_list(path):
    rows = []
    with open(path) as f:
        next(f)
        for line in f:
            entry, exact, solver = line.split()
            rows.append((int(entry), int(exact), int(solver)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("table")
    ap.add_argument("list")
    ap.add_argument("--fold", type=int, nargs="*", default=[])
    ap.add_argument("--json")
    a = ap.parse_args()
    n = int(a.list.rsplit("h", 1)[1].split(".")[0])
    listed = read_list(a.list)
    try:
        with open(a.table, "rb") as f:
            blob = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as e:
        sys.exit(f"{a.table}: cannot map the table: {e}")
    main = main_offset(blob[:8])

    def value(i):
        line, slot = divmod(i, SLOTS)
        return blob[main + line * LINE_BYTES + slot // 4] >> (2 * (slot % 4)) & 3

    wrong = [(e, x, value(e)) for e, x, _ in listed if value(e) != x]
    delta = [0, 0, 0, 0]
    for _, x, s in listed:
        delta[x] += 1
        delta[s] -= 1
    print(f"h{n}: {len(listed)} listed entries, {len(listed) - len(wrong)} hold the listed exact value;"
          f" exact minus solver {delta}")
    for e, x, got in wrong[:10]:
        print(f"  entry {e}: listed exact {x}, table holds {got}")
    summary = {"h": n, "listed": len(listed), "mismatches": len(wrong), "exact_minus_solver": delta,
               "derived": {}}
    solver = {e: s for e, _, s in listed}
    for m in a.fold:
        if not 0 < m < n:
            sys.exit(f"--fold {m}: must be between 1 and {n - 1}")
        shift = n - m
        d = [0, 0, 0, 0]
        for p in sorted({e >> shift for e, _, _ in listed}):
            kids = range(p << shift, (p + 1) << shift)
            exact = min(value(k) for k in kids)
            theirs = min(solver.get(k, value(k)) for k in kids)
            if exact != theirs:
                d[exact] += 1
                d[theirs] -= 1
        print(f"h{m} derived from the h{n} list: exact minus solver {d}")
        summary["derived"][m] = d
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=1)
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
