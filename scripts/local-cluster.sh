#!/usr/bin/env bash
# A coordinator plus N worker processes on loopback, for trying the distributed path on one
# machine. The cores are split between the workers (THREADS=T gives each T threads instead).
# The binaries are taken from ${CARGO_TARGET_DIR:-target}/release, built first when missing
# (BUILD=1 builds them again). If the coordinator fails (a typo in the job, say), the workers
# are stopped with it. PIDs are recorded in $RUN_DIR/pids and `local-cluster.sh stop` ends
# them.
#
#   scripts/local-cluster.sh N enumerate hprime --json results/hprime-cluster.json
#   scripts/local-cluster.sh stop
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUN_DIR=${RUN_DIR:-target/local-cluster}
mkdir -p "$RUN_DIR"

if [[ ${1:-} == stop ]]; then
    [[ -f $RUN_DIR/pids ]] || { echo "no cluster recorded in $RUN_DIR/pids"; exit 0; }
    while read -r pid; do kill "$pid" 2>/dev/null || true; done < "$RUN_DIR/pids"
    rm -f "$RUN_DIR/pids"
    exit 0
fi

n=${1:?usage: local-cluster.sh N COORDINATOR-ARGS... | local-cluster.sh stop}
shift
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "N must be a number of workers (1 or more), got '$n'" >&2; exit 2; }
bin=${CARGO_TARGET_DIR:-target}/release
if [[ ${BUILD:-} == 1 || ! -x $bin/coordinator || ! -x $bin/worker ]]; then
    cargo build --release --locked -p coordinator -p worker
else
    echo "using $bin/coordinator and $bin/worker as built ($(date -r "$bin/worker" '+%F %T')); BUILD=1 builds them again" >&2
fi
cores=$(nproc 2>/dev/null || echo 1)
threads=${THREADS:-$(( cores / n > 0 ? cores / n : 1 ))}
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "THREADS must be a positive whole number, got '$threads'" >&2; exit 2; }
token=$RUN_DIR/token
[[ -f $token ]] || head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$token"
port=${PORT:-7878}
: > "$RUN_DIR/pids"
"$bin/coordinator" "$@" --listen "127.0.0.1:$port" --token-file "$token" &
echo $! >> "$RUN_DIR/pids"
coordinator=$!
workers=()
for i in $(seq 1 "$n"); do
    "$bin/worker" --coordinator "http://127.0.0.1:$port" --token-file "$token" --threads "$threads" \
        2> "$RUN_DIR/worker-$i.log" &
    echo $! >> "$RUN_DIR/pids"
    workers+=($!)
done
status=0
wait "$coordinator" || status=$?
if [[ $status != 0 ]]; then
    # Nothing will tell the workers the job is over: they would wait --connect-timeout.
    kill "${workers[@]}" 2>/dev/null || true
    echo "the coordinator failed (exit $status); workers stopped (logs in $RUN_DIR)" >&2
fi
wait || true
rm -f "$RUN_DIR/pids"
exit $status
