#!/usr/bin/env bash
# Starts a cubefarm job over ssh: copies the binaries and the token (a 0600 file, never on a
# command line) to every host, starts the coordinator on HEAD and one worker on each WORKER,
# and records what it started for scripts/ssh/stop.sh.
#
#   scripts/ssh/start.sh HEAD WORKER... -- COORDINATOR-ARGUMENTS...
#   scripts/ssh/start.sh head node1 node2 -- enumerate edges --metric htm --json edges.json
#
# The coordinator runs `coordinator COORDINATOR-ARGUMENTS --listen 0.0.0.0:$PORT --token-file
# TOKEN` in $REMOTE_DIR on HEAD (relative paths in its arguments are relative to that
# directory); workers connect to $HEAD_ADDR:$PORT. Environment:
#   CUBEFARM_BIN     local directory holding `coordinator` and `worker` (default target/release)
#   TOKEN_FILE       local token file (default: a new random token in $STATE/token)
#   TLS_CERT, TLS_KEY  serve the workers over TLS with this certificate and key (PEM); workers
#                    trust the certificate (--ca), so it must name HEAD_ADDR
#   SSH_OPTS         extra options for ssh and scp (e.g. "-p 2222 -i key")
#   REMOTE_DIR       directory on every host (default cubefarm-run, relative to the home)
#   PORT             the coordinator's port (default 7878)
#   HEAD_ADDR        the address workers reach HEAD at (default HEAD without any user@)
#   WORKER_ARGS      extra worker arguments (e.g. "--threads 8 --mem-limit 60G")
#   STATE            local directory for the record of started processes (default .cubefarm-ssh)
set -euo pipefail

usage() { echo "usage: $0 HEAD WORKER... -- COORDINATOR-ARGUMENTS..." >&2; exit 2; }
[ $# -ge 3 ] || usage
head_host=$1
shift
workers=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do workers+=("$1"); shift; done
[ "${1:-}" = "--" ] || usage
shift
[ ${#workers[@]} -ge 1 ] && [ $# -ge 1 ] || usage

bin=${CUBEFARM_BIN:-target/release}
state=${STATE:-.cubefarm-ssh}
remote=${REMOTE_DIR:-cubefarm-run}
port=${PORT:-7878}
head_addr=${HEAD_ADDR:-${head_host#*@}}
read -r -a ssh_opts <<< "${SSH_OPTS:-}"
read -r -a worker_args <<< "${WORKER_ARGS:-}"
for b in coordinator worker; do
    [ -x "$bin/$b" ] || { echo "error: no $bin/$b (build with cargo build --release, or set CUBEFARM_BIN)" >&2; exit 1; }
done
if [ -n "${TLS_CERT:-}${TLS_KEY:-}" ] && { [ ! -f "${TLS_CERT:-}" ] || [ ! -f "${TLS_KEY:-}" ]; }; then
    echo "error: TLS_CERT and TLS_KEY must both name PEM files" >&2; exit 1
fi
mkdir -p "$state"
if [ -s "$state/started" ]; then
    echo "error: $state/started lists a job still recorded: run scripts/ssh/stop.sh first" >&2; exit 1
fi
token=${TOKEN_FILE:-$state/token}
if [ ! -s "$token" ]; then
    (umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$token")
fi

run() { ssh "${ssh_opts[@]}" -o BatchMode=yes "$1" "$2"; }

# Copy the binaries, the token and the TLS material once per distinct host (scp's -P for a port).
scp_opts=()
for ((i = 0; i < ${#ssh_opts[@]}; i++)); do
    if [ "${ssh_opts[$i]}" = "-p" ]; then scp_opts+=(-P "${ssh_opts[$((i + 1))]}"); i=$((i + 1));
    else scp_opts+=("${ssh_opts[$i]}"); fi
done
copy() {
    local host=$1
    run "$host" "mkdir -p '$remote' && chmod 700 '$remote'"
    scp "${scp_opts[@]}" -o BatchMode=yes -q "$bin/coordinator" "$bin/worker" "$host:$remote/"
    scp "${scp_opts[@]}" -o BatchMode=yes -q "$token" "$host:$remote/token.tmp"
    run "$host" "cd '$remote' && chmod 600 token.tmp && mv -f token.tmp token"
    if [ -n "${TLS_CERT:-}" ]; then
        scp "${scp_opts[@]}" -o BatchMode=yes -q "$TLS_CERT" "$host:$remote/cert.pem"
    fi
}
declare -A copied=()
for host in "$head_host" "${workers[@]}"; do
    if [ -z "${copied[$host]:-}" ]; then copy "$host"; copied[$host]=1; fi
done
if [ -n "${TLS_KEY:-}" ]; then
    scp "${scp_opts[@]}" -o BatchMode=yes -q "$TLS_KEY" "$head_host:$remote/key.pem.tmp"
    run "$head_host" "cd '$remote' && chmod 600 key.pem.tmp && mv key.pem.tmp key.pem"
fi

# The coordinator, then its address in the workers' form once it listens.
quoted=$(printf ' %q' "$@")
tls=""
scheme=http
if [ -n "${TLS_CERT:-}" ]; then tls=" --tls-cert cert.pem --tls-key key.pem"; scheme=https; fi
pid=$(run "$head_host" "cd '$remote' || exit 1; nohup ./coordinator$quoted --listen 0.0.0.0:$port --token-file token$tls \
    > coordinator.log 2>&1 < /dev/null & echo \$!")
echo "$head_host $pid coordinator" >> "$state/started"
echo "started the coordinator (pid $pid) on $head_host; its log: $remote/coordinator.log there"
listening=0
for _ in $(seq 1 600); do
    if run "$head_host" "grep -q 'serving workers on' '$remote/coordinator.log'"; then listening=1; break; fi
    if ! run "$head_host" "kill -0 $pid 2>/dev/null"; then
        echo "error: the coordinator stopped:" >&2
        run "$head_host" "tail -n 20 '$remote/coordinator.log'" >&2
        exit 1
    fi
    sleep 1
done
if [ $listening = 0 ]; then
    echo "error: the coordinator (pid $pid on $head_host) has not said 'serving workers on' in 600 s;" \
        "its log ends:" >&2
    run "$head_host" "tail -n 20 '$remote/coordinator.log'" >&2
    echo "it is still running: scripts/ssh/stop.sh stops it" >&2
    exit 1
fi
ca=""
[ -n "${TLS_CERT:-}" ] && ca=" --ca cert.pem"
extra=$(printf ' %q' "${worker_args[@]}")
[ ${#worker_args[@]} -eq 0 ] && extra=""
n=0
for host in "${workers[@]}"; do
    n=$((n + 1))
    pid=$(run "$host" "cd '$remote' || exit 1; nohup ./worker --coordinator $scheme://$head_addr:$port --token-file token$ca$extra \
        > worker-$n.log 2>&1 < /dev/null & echo \$!")
    echo "$host $pid worker-$n" >> "$state/started"
    echo "started worker $n (pid $pid) on $host; its log: $remote/worker-$n.log there"
done
# A worker that cannot reach the coordinator (a wrong HEAD_ADDR, a firewall) or is refused
# stops within seconds, saying why: look once they had time to.
sleep "${CHECK_AFTER:-3}"
dead=0
while read -r host pid what; do
    [ "$what" = coordinator ] && continue
    if ! run "$host" "kill -0 $pid 2>/dev/null" < /dev/null; then
        echo "error: $what on $host stopped:" >&2
        run "$host" "tail -n 5 '$remote/$what.log'" < /dev/null >&2
        dead=$((dead + 1))
    fi
done < "$state/started"
if [ $dead -gt 0 ]; then
    echo "error: $dead of ${#workers[@]} workers stopped; scripts/ssh/stop.sh stops the rest" >&2
    exit 1
fi
echo "follow the job: ssh $head_host tail -f $remote/coordinator.log; stop it: scripts/ssh/stop.sh"
