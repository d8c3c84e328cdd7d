#!/usr/bin/env bash
# Where a cluster run's CPU goes: builds the coordinator and worker with frame pointers, records
# one `cluster.sh` run whole with call graphs (`perf record -F 499 -a -g`) and splits the
# workers' samples by the code they lie under, in seconds and per byte the workers received
# (`exchange_split.py`: the exchange's coding, merging, questions, gRPC and sockets; levels kept
# on disk; the index's reading; the search). The profiled run's rows and logs are not kept: its
# CPU includes perf's own.
#
#   WORKERS=4 WORKER_MEM=3G WORKER_THREADS=1 scripts/bench/profile-exchange.sh edges --metric htm
#   WORKERS=2 WORKER_THREADS=1 scripts/bench/profile-exchange.sh h
#       (cluster.sh's variables; EMBEDDED=0 unless set)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
command -v perf > /dev/null || { echo "profile-exchange.sh needs perf (the linux-tools package)" >&2; exit 1; }
space=${1:-h}
target=target/frame-pointers
RUSTFLAGS="-C force-frame-pointers=yes" CARGO_TARGET_DIR=$target \
    cargo build --release --locked -p coordinator -p worker
out=target/bench-profile
mkdir -p "$out"
# The run appends rows and writes logs; what was there before is put back.
kept=$(mktemp -d)
cp -a results/BENCHMARKS.md results/logs "$kept/"
put_back() {
    cp -a "$kept/BENCHMARKS.md" results/
    rm -rf results/logs && cp -a "$kept/logs" results/
    rm -rf "$kept" "$out/perf.data" "$out/perf.txt"
}
trap put_back EXIT
perf record -q -F 499 -a -g -o "$out/perf.data" -- \
    env BIN="$target/release" BENCH_COMMIT=profiled EMBEDDED="${EMBEDDED:-0}" scripts/bench/cluster.sh "$@"
perf script -F comm,pid,time,ip,sym -i "$out/perf.data" > "$out/perf.txt" 2> /dev/null
python3 scripts/bench/exchange_split.py "$out/perf.txt" "target/bench-cluster/$space-cluster.json"
