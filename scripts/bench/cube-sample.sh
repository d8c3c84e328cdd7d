#!/usr/bin/env bash
# Benchmark: a random sample of a product job's tasks (default: 1 % of the whole cube's HTM
# depth-12 tasks, cosets cut into 12 parts by a 9 GiB limit), measured (wall, CPU, peak RSS)
# into results/BENCHMARKS.md, with the projection of the whole job in results/NAME.json and .md.
#
#   scripts/bench/cube-sample.sh [METRIC DEPTH TASKS MEM_LIMIT]    (default: htm 12 79 9G)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
metric=${1:-htm}
depth=${2:-12}
tasks=${3:-79}
limit=${4:-9G}
name="cube-$metric-$depth-sample"
cargo build --release --locked -p coordinator
mkdir -p results/logs
args=(enumerate cube --metric "$metric" --max-depth "$depth" --mem-limit "$limit" --sample-tasks "$tasks"
    --json "results/$name.json")
python3 scripts/bench/measure.py "sample $name" -- target/release/coordinator "${args[@]}" \
    2> >(tee "results/logs/$name.log" >&2)
python3 scripts/sample_md.py "results/$name.json" "coordinator ${args[*]}" > "results/$name.md"
