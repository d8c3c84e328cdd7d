#!/usr/bin/env bash
# Stops what scripts/ssh/start.sh started (SIGTERM: workers and coordinator stop cleanly),
# workers first. With --clean, also removes $REMOTE_DIR (binaries, token, logs) on every host.
# Takes the same SSH_OPTS, REMOTE_DIR and STATE as start.sh.
set -euo pipefail
state=${STATE:-.cubefarm-ssh}
remote=${REMOTE_DIR:-cubefarm-run}
read -r -a ssh_opts <<< "${SSH_OPTS:-}"
started=$state/started
[ -s "$started" ] || { echo "nothing recorded in $started"; exit 0; }
run() { ssh -n "${ssh_opts[@]}" -o BatchMode=yes "$1" "$2"; }
# Workers first (the last lines), then the coordinator.
# A recorded pid is signalled only while it is still one of ours (a process of that name):
# once ours ended, the number may belong to anything.
tac "$started" | while read -r host pid what; do
    name=${what%%-*}
    if run "$host" "[ \"\$(ps -o comm= -p $pid 2>/dev/null)\" = $name ] && kill $pid 2>/dev/null"; then
        echo "stopped $what (pid $pid) on $host"
    else
        echo "$what (pid $pid) on $host had already ended"
    fi
done
if [ "${1:-}" = "--clean" ]; then
    cut -d' ' -f1 "$started" | sort -u | while read -r host; do
        run "$host" "rm -rf '$remote'" && echo "removed $remote on $host"
    done
fi
rm -f "$started"
