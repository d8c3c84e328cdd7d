#!/usr/bin/env bash
# This machine's memory bandwidth (scripts/bench/bandwidth.c: STREAM's four loops over arrays
# far larger than the caches), on every core and on one: the limit that the kernels' bytes per
# entry are compared with (docs/kernels.md). Needs a C compiler with OpenMP (gcc).
#
#   scripts/bench/bandwidth.sh [MiB per array, default 1024]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mib=${1:-1024}
out=target/bench-bandwidth
mkdir -p "$out" results/logs
cc -O3 -march=native -fopenmp scripts/bench/bandwidth.c -o "$out/bandwidth"
{
    echo "# $(date -u +%F) $(git rev-parse --short HEAD), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    OMP_NUM_THREADS=$(nproc) "$out/bandwidth" "$mib"
    OMP_NUM_THREADS=1 "$out/bandwidth" "$mib"
} | tee results/logs/bandwidth.txt
