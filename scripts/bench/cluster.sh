#!/usr/bin/env bash
# Benchmark: the same job embedded and with a coordinator plus two local worker processes on
# loopback; appends both to results/BENCHMARKS.md and keeps both coordinator logs (per-level
# times; the cluster one with the bytes sent to and received from workers) in results/logs/.
#
#   scripts/bench/cluster.sh [SPACE] [extra coordinator args...]     (default: h)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
space=${1:-h}
shift || true
cargo build --release --locked -p coordinator -p worker
mkdir -p results/logs target/bench-cluster
python3 scripts/bench/measure.py "enumerate $space embedded" -- \
    target/release/coordinator enumerate "$space" "$@" --json "target/bench-cluster/$space-embedded.json" \
    2> "results/logs/$space-embedded.log"
token=target/bench-cluster/token
echo "bench-token-$$" > "$token"
port=${PORT:-7890}
(sleep 1
 for i in 1 2; do
     target/release/worker --coordinator "http://127.0.0.1:$port" --token-file "$token" \
         2> "target/bench-cluster/worker-$i.log" &
 done
 wait) &
python3 scripts/bench/measure.py "enumerate $space, coordinator + 2 worker processes (peak RSS: coordinator only)" -- \
    target/release/coordinator enumerate "$space" "$@" --listen "127.0.0.1:$port" --token-file "$token" \
    --json "target/bench-cluster/$space-cluster.json" 2> "results/logs/$space-cluster.log"
wait
python3 - "$space" <<'PY'
import json, sys
space = sys.argv[1]
a = json.load(open(f"target/bench-cluster/{space}-embedded.json"))
b = json.load(open(f"target/bench-cluster/{space}-cluster.json"))
assert a["depths"] == b["depths"], "cluster result differs from the embedded one"
print(f"identical depths; wall ratio cluster/embedded = {b['elapsed_s'] / a['elapsed_s']:.2f}")
PY
