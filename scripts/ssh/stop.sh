#!/usr/bin/env bash
# Stop the workers recorded by scripts/ssh/start.sh (SIGTERM: they stop cleanly).
set -euo pipefail
pids=${PIDS_FILE:-cubefarm-workers.pids}
[ -f "$pids" ] || { echo "no $pids"; exit 0; }
while read -r host pid; do
    ssh "$host" "kill $pid" && echo "stopped worker $pid on $host" || echo "worker $pid on $host already gone"
done < "$pids"
rm -f "$pids"
