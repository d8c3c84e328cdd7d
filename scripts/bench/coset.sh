#!/usr/bin/env bash
# Benchmark: cosets of H solved exactly to a depth, measured (wall, CPU, peak RSS) into
# results/BENCHMARKS.md, with the tool's JSON in results/.
#
#   scripts/bench/coset.sh                # the identity coset and R U F's to depth 10
#   DEPTH=11 scripts/bench/coset.sh "R U F"
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
depth=${DEPTH:-10}
cosets=("$@")
[ ${#cosets[@]} -gt 0 ] || cosets=("" "R U F")
cargo build --release --locked -p coordinator
mkdir -p results/logs
name="coset-exact-$depth"
python3 scripts/bench/measure.py "coset --exact-to $depth (${#cosets[@]} cosets)" -- \
    target/release/coordinator coset --exact-to "$depth" "${cosets[@]}" --json "results/$name.json" \
    2> >(tee "results/logs/$name.log" >&2)
