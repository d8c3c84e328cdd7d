#!/usr/bin/env bash
# Benchmark: the h11 index per row, push, pull and the fold into h7 (the rates behind the h48h11
# projection in docs/h48-tables.md). Every row holds random bits at the given density;
# 16 rows are expanded each way. The full h11 search does not fit
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
    python3 scripts/bench/measure.py "h11 rows: push, pull, fold; 16 rows, density $density" -- "$bin" 16 "$density" \
        | tee -a results/h11-rows.txt
done
