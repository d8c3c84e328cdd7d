#!/usr/bin/env bash
# Start one worker on each host over ssh (binaries already installed at $CUBEFARM_BIN on every
# host, default ~/cubefarm/target/release), recording "host pid" lines in cubefarm-workers.pids.
#
#   CUBEFARM_TOKEN=... scripts/ssh/start.sh http://head:7878 host1 host2 ...
set -euo pipefail
coordinator=${1:?usage: start.sh COORDINATOR-URL HOST...}
shift
: "${CUBEFARM_TOKEN:?set CUBEFARM_TOKEN (the same token as the coordinator)}"
bin=${CUBEFARM_BIN:-'~/cubefarm/target/release'}
pids=${PIDS_FILE:-cubefarm-workers.pids}
for host in "$@"; do
    pid=$(ssh "$host" "CUBEFARM_TOKEN='$CUBEFARM_TOKEN' nohup $bin/worker --coordinator '$coordinator' \
        > cubefarm-worker.log 2>&1 < /dev/null & echo \$!")
    echo "$host $pid" >> "$pids"
    echo "started worker $pid on $host"
done
