#!/usr/bin/env python3
"""Compare the exact H48 tables built here (results/h48hN.json) with the 2-bit counts the H48
solver publishes for its own files (../shared/h48-blob.md 6.5), and with what its generator's one
skipped position predicts (measured with the solver's own code, outside this project: see
docs/h48-tables.md). Writes results/h48-solver.md.

usage: h48_solver_compare.py
"""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# h48-blob.md 6.5: the solver's expected 2-bit counts (values 0..3) for h48h0 .. h48h11.
PUBLISHED = {
    0: [5473562, 34776317, 68566704, 8750867],
    1: [6012079, 45822302, 142018732, 41281787],
    2: [6391286, 55494785, 252389935, 155993794],
    3: [6686828, 63867852, 392789689, 477195231],
    4: [77147213, 543379415, 1139570251, 120982321],
    5: [82471284, 687850732, 2345840746, 645995638],
    6: [85941099, 804752968, 4077248182, 2556374551],
    7: [88529761, 897323475, 6126260791, 7936519573],
    8: [1051579940, 8136021316, 19024479822, 1885186122],
    9: [1102038189, 9888265242, 38299375805, 10904855164],
    10: [1133240039, 11196285614, 64164702961, 43894840186],
    11: [1150763161, 12045845660, 91163433330, 136418095449],
}

# The entries the solver's generator leaves too high because it never searches from its
# last hash slot (h11 key 189,880,194,105): exact minus solver, per 2-bit value, as counted by
# replaying the generator's search from that position with the solver's own code (N = 8 and 9
# were not counted).
SKIPPED = {
    0: [0, 0, 0, 0], 1: [0, 0, 0, 0], 2: [0, 2, 0, -2], 3: [0, 3, 15, -18], 4: [3, 30, -28, -5],
    5: [5, 62, -7, -60], 6: [6, 89, 109, -204], 7: [10, 111, 436, -557], 10: [161, 1549, 3196, -4906],
    11: [159, 1689, 7691, -9539],
}


def main():
    rows = []
    for n in range(12):
        path = os.path.join(ROOT, "results", f"h48h{n}.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            ours = json.load(f)["buckets"]
        diff = [a - b for a, b in zip(ours, PUBLISHED[n])]
        model = SKIPPED.get(n)
        verdict = "not counted" if model is None else ("yes" if model == diff else "NO")
        rows.append(f"| h48h{n} | {' / '.join(f'{x:,}' for x in ours)} | "
                    f"{' / '.join(f'{x:+,}' for x in diff)} | {verdict} |")
    out = ["# The exact tables against the solver's published counts\n",
           "2-bit counts (values 0 / 1 / 2 / 3) of the tables built here, and their difference from the "
           "counts the H48 solver publishes for its own files (`../shared/h48-blob.md` 6.5). The last "
           "column says whether the difference is exactly the set of entries that only the solver "
           "generator's one skipped position (h11 key 189,880,194,105, class 2675, distance 8) reaches "
           "below their value in the solver's files, counted by replaying the generator's search from "
           "that position with the solver's own code (`docs/h48-tables.md`).\n",
           "| table | exact 2-bit counts (here) | here minus solver | explained by the skipped position |",
           "|---|---:|---:|---|"] + rows
    with open(os.path.join(ROOT, "results", "h48-solver.md"), "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
