#!/usr/bin/env bash
# The h11 search run end to end for its first levels on this 24 GiB machine: the three 30.1 GB
# bit arrays are sparse files under target/h11-state (a few GB of real pages at depth 5, the
# rest holes), checked against a brute-force BFS over whole cubes and against the h0 table's
# own BFS (h0 folded out of the h11 levels). Output: results/h11-shallow.txt, a row in
# results/BENCHMARKS.md.
#
#   scripts/bench/h11-shallow.sh [DEPTH]    (default 5)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
depth="${1:-5}"
cargo build --release --locked -p shared --example h11_shallow
state=target/h11-state
rm -rf "$state"
python3 scripts/bench/measure.py "h11 search to depth $depth, state in sparse files" -- \
    target/release/examples/h11_shallow "$state" "$depth" | tee results/h11-shallow.txt
rm -rf "$state"
