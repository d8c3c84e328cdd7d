#!/usr/bin/env bash
# Benchmark: forward expansion of the h11 index per target row (the rate behind the h48h11
# projection in docs/h48-tables.md). Every source row holds random bits at the given density;
# 16 target rows gather their images under the 18 HTM moves. The full h11 search does not fit
# this machine (three 30.1 GB bit arrays), so this is what can be measured of it here.
# Output: results/h11-rows.txt, rows in results/BENCHMARKS.md.
#
#   scripts/bench/h11-rows.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
cargo build --release --locked -p shared --example h11_rows
bin=target/release/examples/h11_rows
: > results/h11-rows.txt
for density in 0.3 0.05; do
    python3 scripts/bench/measure.py "h11 push, 16 target rows, density $density" -- "$bin" 16 "$density" \
        | tee -a results/h11-rows.txt
done
