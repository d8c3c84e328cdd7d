#!/usr/bin/env bash
# Benchmark: a cluster job whose bytes cost what they cost on a network: a row search
# (`enumerate SPACE`) or, with `coset`, the batch of 8 cosets of scripts/bench/coset-batch.txt
# (--bound 20 --search-to 15; each worker reads phase 1's table from PHASE1_TABLE, made first). Each worker runs in a
# network namespace of its own, joined to the coordinator's bridge by a veth link whose two
# directions are each limited to RATE (tc, token bucket); the coordinator listens on the
# bridge. Prints the wall time, each worker's bytes, and the model's network term (the most
# bytes one worker sends or receives, over RATE); with LOOPBACK=1 (default) the same job runs
# first on loopback, unlimited, for the difference. Needs root (ip netns, tc). Everything it
# creates (namespaces, links, bridge) is removed on exit, also on failure.
#
#   sudo scripts/bench/netns-cluster.sh [SPACE|coset] [extra coordinator args...]     (default: h)
#   WORKERS=4 RATE=1gbit WORKER_THREADS=1 scripts/bench/netns-cluster.sh h
#   WORKERS=2 RATE=100mbit scripts/bench/netns-cluster.sh coset
#
# The addresses are 10.77.0.1 (coordinator, on the bridge cfbr0) and 10.77.0.11... (workers),
# a private range that this script alone uses; nothing leaves the machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
space=${1:-h}
shift || true
workers=${WORKERS:-4}
rate=${RATE:-1gbit}
threads=${WORKER_THREADS:-1}
loopback=${LOOPBACK:-1}
port=${PORT:-7891}
[[ $workers =~ ^[1-9][0-9]?$ ]] || { echo "WORKERS must be 1 to 99, not '$workers'" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "netns-cluster.sh needs root (ip netns, tc)" >&2; exit 1; }
for tool in ip tc /usr/bin/time python3; do
    command -v "$tool" > /dev/null || { echo "netns-cluster.sh needs $tool" >&2; exit 1; }
done
cargo build --release --locked -p coordinator -p worker
out=target/bench-netns
mkdir -p "$out" results/logs
rm -f "$out"/*.time "$out"/*.json
job=(enumerate "$space")
worker_args=()
if [ "$space" = coset ]; then
    phase1=${PHASE1_TABLE:-/tmp/coset-phase1.tbl}
    target/release/coordinator coset --exact-to 0 U2 --phase1-table "$phase1" > /dev/null 2>&1
    job=(coset --bound 20 --search-to 15 --every-coset --file scripts/bench/coset-batch.txt)
    worker_args=(--phase1-table "$phase1")
else
    job+=(--min-workers "$workers")
fi
token=$out/token
echo "netns-token-$$" > "$token"
chmod 600 "$token"

cleanup() {
    pkill -f "target/release/worker --coordinator http://10.77.0.1:$port" 2> /dev/null || true
    for i in $(seq 1 "$workers"); do
        ip netns del "cfw$i" 2> /dev/null || true
        ip link del "cfh$i" 2> /dev/null || true
    done
    ip link del cfbr0 2> /dev/null || true
}
trap cleanup EXIT
cleanup

ip link add cfbr0 type bridge
ip addr add 10.77.0.1/24 dev cfbr0
ip link set cfbr0 up
for i in $(seq 1 "$workers"); do
    ns=cfw$i
    ip netns add "$ns"
    ip link add "cfh$i" type veth peer name eth0 netns "$ns"
    ip link set "cfh$i" master cfbr0 up
    ip -n "$ns" addr add "10.77.0.$((10 + i))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    # Both directions of the link: the worker's sending (its eth0) and its receiving (the
    # bridge's side of the veth).
    tc -n "$ns" qdisc add dev eth0 root tbf rate "$rate" burst 512kb latency 100ms
    tc qdisc add dev "cfh$i" root tbf rate "$rate" burst 512kb latency 100ms
done

# One run: the coordinator on ADDRESS, worker i started by the command prefix in "$@".
run() {
    local name=$1 coord_addr=$2 worker_host=$3
    shift 3
    rm -f "$out"/worker-*.time
    (sleep 1
     for i in $(seq 1 "$workers"); do
         local host=${worker_host//@/$((10 + i))}
         local prefix=()
         [ "$name" = netns ] && prefix=(ip netns exec "cfw$i")
         "${prefix[@]}" /usr/bin/time -f "%e %U %S %M" -o "$out/worker-$i.time" \
             target/release/worker --coordinator "http://$coord_addr" --token-file "$token" \
             --threads "$threads" --listen "$host:0" "${worker_args[@]}" 2> "$out/worker-$name-$i.log" &
     done
     wait) &
    local start end
    start=$(date +%s.%N)
    local extra=()
    [ "$space" = coset ] && extra=(--unreached "$out/unreached-$name.txt")
    target/release/coordinator "${job[@]}" "$@" "${extra[@]}" --listen "$coord_addr" --token-file "$token" \
        --json "$out/$name.json" 2> "results/logs/$space-netns-$name.log" > /dev/null
    end=$(date +%s.%N)
    wait
    python3 - "$out/$name.json" "$name" "$start" "$end" "$rate" "$out" "$workers" <<'PY'
import json, sys
path, name, start, end, rate, out, workers = sys.argv[1:]
wall = float(end) - float(start)
traffic = json.load(open(path))["traffic"]
units = {"k": 1e3, "m": 1e6, "g": 1e9}
r = rate.lower().rstrip("bit")
bits_per_s = float(r[:-1]) * units[r[-1]] if r[-1] in units else float(r)
most = max(max(w["sent_bytes"], w["received_bytes"]) for w in traffic["workers"])
through = traffic["through_coordinator_bytes"]
cpu = 0.0
for i in range(1, int(workers) + 1):
    e, u, s, m = open(f"{out}/worker-{i}.time").read().split()
    cpu += float(u) + float(s)
print(f"{name}: wall {wall:.1f} s, workers' CPU {cpu:.1f} s; most bytes one worker sent or received "
      f"{most / 2**20:.1f} MiB, through the coordinator {through / 2**20:.1f} MiB; "
      f"network term at {rate} = {most * 8 / bits_per_s:.1f} s")
PY
}

if [ "$loopback" = 1 ]; then
    run loopback "127.0.0.1:$port" 127.0.0.1 "$@"
fi
run netns "10.77.0.1:$port" "10.77.0.@" "$@"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def counts(name):
    try:
        v = json.load(open(f"{out}/{name}.json"))
    except FileNotFoundError:
        return None
    return v["depths"] if "depths" in v else [v["counts"], v["beyond"]]
a, b = counts("loopback"), counts("netns")
if a is not None and a != b:
    sys.exit("the counts on the rate-limited links differ from loopback's")
print("counts identical" if a is not None else "counts not compared (LOOPBACK=0)")
PY
