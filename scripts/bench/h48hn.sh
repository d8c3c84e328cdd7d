#!/usr/bin/env bash
# Benchmark: build, verify and describe H48 tables h48hN (N = 1..11), one build per table,
# measured (wall, CPU, peak RSS) into results/BENCHMARKS.md; the tables' exact counts go to
# results/h48hN.json and results/h48hN.md (with the h11 level counts from the build's log).
# Each table is written to target/bench-h48/ and deleted after it is verified (h48h11 takes
# 60.7 GB of disk) unless KEEP=1.
#
#   scripts/bench/h48hn.sh 1 2 3
#   STATE_DIR=DIR VERIFY_SAMPLES=20 scripts/bench/h48hn.sh 9   # keep or reuse the h11 levels in DIR
#   KEEP=1 scripts/bench/h48hn.sh 7                             # keep target/bench-h48/h48h7.cft
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[ $# -gt 0 ] || { echo "usage: $0 N [N ...]" >&2; exit 2; }
cargo build --release --locked -p coordinator
out=target/bench-h48
mkdir -p "$out" results/logs
bin=target/release/coordinator
for n in "$@"; do
    table="$out/h48h$n.cft"
    python3 scripts/bench/measure.py "build h48h$n${STATE_DIR:+ (levels from --state-dir)}" \
        -- "$bin" build "h48h$n" --out "$table" ${STATE_DIR:+--state-dir "$STATE_DIR"} \
        2> >(tee "results/logs/h48h$n-build.log" >&2)
    python3 scripts/bench/measure.py "verify h48h$n (${VERIFY_SAMPLES:-100} samples)" -- "$bin" verify "$table" \
        --samples "${VERIFY_SAMPLES:-100}" \
        | tee "results/logs/h48h$n-verify.log"
    "$bin" info "$table" --json > "$out/h48h$n.json"
    python3 scripts/h48_results.py "$out/h48h$n.json" "results/logs/h48h$n-build.log" "results/h48h$n"
    [ "${KEEP:-0}" = 1 ] || rm -f "$table"
done
