#!/usr/bin/env bash
# A coordinator plus N worker processes on loopback, for trying the distributed path on one
# machine. PIDs are recorded in $RUN_DIR/pids and `local-cluster.sh stop` ends them.
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
[[ $n =~ ^[0-9]+$ ]] || { echo "N must be a number of workers, got $n" >&2; exit 2; }
cargo build --release --locked -p coordinator -p worker
token=$RUN_DIR/token
[[ -f $token ]] || head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$token"
port=${PORT:-7878}
: > "$RUN_DIR/pids"
target/release/coordinator "$@" --listen "127.0.0.1:$port" --token-file "$token" &
echo $! >> "$RUN_DIR/pids"
coordinator=$!
for i in $(seq 1 "$n"); do
    target/release/worker --coordinator "http://127.0.0.1:$port" --token-file "$token" \
        2> "$RUN_DIR/worker-$i.log" &
    echo $! >> "$RUN_DIR/pids"
done
status=0
wait "$coordinator" || status=$?
wait || true
rm -f "$RUN_DIR/pids"
exit $status
