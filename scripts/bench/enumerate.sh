#!/usr/bin/env bash
# Benchmark: complete enumerations, each measured (wall, CPU, peak RSS) into results/BENCHMARKS.md,
# with the tool's JSON and a markdown table in results/.
#
#   scripts/bench/enumerate.sh                 # corners, hprime, h, edges (htm and qtm)
#   scripts/bench/enumerate.sh edges:qtm h     # a selection (SPACE or SPACE:METRIC)
#   scripts/bench/enumerate.sh cube:htm:10 cube:qtm:11 edges:htm:9:product
#                                              # SPACE:METRIC:MAX_DEPTH[:METHOD]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(corners:htm corners:qtm hprime h edges:htm edges:qtm)
cargo build --release --locked -p coordinator
mkdir -p results/logs
for job in "${jobs[@]}"; do
    space=${job%%:*}
    metric=""
    name=$space
    args=(enumerate "$space")
    IFS=: read -r _ metric depth method <<<"$job"
    if [ -n "$metric" ]; then
        name="$space-$metric"
        args+=(--metric "$metric")
    fi
    [ -z "${depth:-}" ] || args+=(--max-depth "$depth")
    if [ -n "${method:-}" ]; then
        name="$name-$method"
        args+=(--method "$method")
    fi
    args+=(--json "results/$name.json")
    echo "== $name"
    python3 scripts/bench/measure.py "enumerate $name" -- target/release/coordinator "${args[@]}" \
        2> >(tee "results/logs/$name.log" >&2)
    python3 scripts/results_md.py "results/$name.json" "coordinator ${args[*]}" "results/logs/$name.log"
done
python3 scripts/plot.py results
