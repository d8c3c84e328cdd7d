#!/usr/bin/env bash
# Benchmark: build and verify the H48 h0 table set, measured (wall, CPU, peak RSS) into
# results/BENCHMARKS.md; the table's description goes to results/h48h0.json and results/h48h0.md.
# The table itself (31 MB) is written under target/bench-h48/.
#
#   scripts/bench/h48.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
cargo build --release --locked -p coordinator
out=target/bench-h48
mkdir -p "$out" results/logs
bin=target/release/coordinator
python3 scripts/bench/measure.py "build h48h0" -- "$bin" build h48h0 --out "$out/h48h0.tbl" \
    2> >(tee results/logs/h48h0-build.log >&2)
python3 scripts/bench/measure.py "build h48h0 --format h48" -- "$bin" build h48h0 --format h48 \
    --out "$out/h48h0.h48" 2>/dev/null
python3 scripts/bench/measure.py "verify h48h0 (100 samples)" -- "$bin" verify "$out/h48h0.tbl"
"$bin" info "$out/h48h0.tbl" --json > "$out/h48h0.json"
python3 scripts/h48_results.py "$out/h48h0.json" results/h48h0
