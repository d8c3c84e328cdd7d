#!/usr/bin/env bash
# Benchmark: the complete corners-only enumeration in both metrics; writes results/corners-*.json
# and .md and appends wall/CPU/peak RSS rows to results/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
cargo build --release --locked -p coordinator
for metric in htm qtm; do
    python3 scripts/bench/measure.py "corners $metric" -- \
        target/release/coordinator enumerate corners --metric "$metric" --json "results/corners-$metric.json"
    python3 scripts/results_md.py "results/corners-$metric.json" \
        "coordinator enumerate corners --metric $metric --json results/corners-$metric.json"
done
