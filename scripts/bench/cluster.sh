#!/usr/bin/env bash
# Benchmark: the same row search embedded and with a coordinator plus N local worker processes
# on loopback, which own the rows and exchange them with each other. Every process is timed on
# its own: the embedded run and the coordinator through measure.py, each worker through
# /usr/bin/time; all rows go to results/BENCHMARKS.md. Each run checks that the depths are the
# embedded ones and prints: total CPU and wall against the embedded run just before it, the
# bytes through the coordinator against the bytes the workers received (from the run's
# "traffic"), the largest bytes one worker received, and each worker's peak RSS. With RUNS > 1
# the pairs alternate (embedded, cluster, ...) so that a drift of the machine's speed touches
# both. The coordinator logs of the last run are kept in results/logs/.
#
#   scripts/bench/cluster.sh [SPACE] [extra coordinator args...]     (default: h)
#   WORKERS=4 WORKER_THREADS=1 scripts/bench/cluster.sh edges --metric htm
#   WORKER_MEM=3G WORKERS=4 scripts/bench/cluster.sh edges           (each worker's --mem-limit)
#   COMPRESS=zstd scripts/bench/cluster.sh h                         (each worker's --compress)
#   EMBEDDED=0 ...                                                   (skip the embedded runs)
#   RUNS=3 scripts/bench/cluster.sh h                                (pairs of runs; default 1)
#   STAGGER=0.3 WORKERS=8 scripts/bench/cluster.sh h                 (as ssh and Slurm launches do:
#       the search starts with the first worker, the others register one after another, this
#       many seconds apart, and take their share of parts at the next level)
#   BIN=/tmp/old/release BENCH_COMMIT=8692fe8 scripts/bench/cluster.sh h
#       (binaries built elsewhere, for instance from an older commit run alternately with this
#       one; nothing is built, and the rows name BENCH_COMMIT)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
space=${1:-h}
shift || true
runs=${RUNS:-1}
workers=${WORKERS:-2}
embedded=${EMBEDDED:-1}
stagger=${STAGGER:-}
compress=${COMPRESS:-}
command -v /usr/bin/time > /dev/null || { echo "cluster.sh needs /usr/bin/time (GNU time)" >&2; exit 1; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "RUNS must be a positive whole number, not '$runs'" >&2; exit 1; }
[[ $workers =~ ^[1-9][0-9]*$ ]] || { echo "WORKERS must be a positive whole number, not '$workers'" >&2; exit 1; }
[[ -z $stagger || $stagger =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "STAGGER must be seconds, not '$stagger'" >&2; exit 1; }
bin=${BIN:-target/release}
if [ -z "${BIN:-}" ]; then
    cargo build --release --locked -p coordinator -p worker
fi
[ -x "$bin/coordinator" ] && [ -x "$bin/worker" ] || { echo "no coordinator and worker in $bin" >&2; exit 1; }
export BENCH_COMMIT
out=target/bench-cluster
mkdir -p results/logs "$out"
rm -f "$out"/ratios "$out"/worker-*.time
token=$out/token
echo "bench-token-$$" > "$token"
port=${PORT:-7890}
threads=${WORKER_THREADS:+ of $WORKER_THREADS thread(s)}
mem=${WORKER_MEM:+, --mem-limit $WORKER_MEM each}${COMPRESS:+, --compress $COMPRESS}
late=${stagger:+, started $stagger s apart after the search began}
label="enumerate $space${*:+ $*}, coordinator of $workers local worker processes$threads$mem$late (this process only)"
if [ -n "$stagger" ]; then start=(); else start=(--min-workers "$workers"); fi
for run in $(seq 1 "$runs"); do
    if [ "$embedded" = 1 ]; then
        python3 scripts/bench/measure.py "enumerate $space $* embedded" -- \
            "$bin/coordinator" enumerate "$space" "$@" --json "$out/$space-embedded.json" \
            2> "results/logs/$space-embedded.log" | tee "$out/$space-embedded.row"
    fi
    (sleep 1
     for i in $(seq 1 "$workers"); do
         /usr/bin/time -f "%e %U %S %M" -o "$out/worker-$i.time" \
             "$bin/worker" --coordinator "http://127.0.0.1:$port" --token-file "$token" \
             ${WORKER_THREADS:+--threads "$WORKER_THREADS"} ${WORKER_MEM:+--mem-limit "$WORKER_MEM"} \
             ${COMPRESS:+--compress "$COMPRESS"} \
             2> "$out/worker-$i.log" &
         if [ -n "$stagger" ]; then sleep "$stagger"; fi
     done
     wait) &
    python3 scripts/bench/measure.py "$label" -- \
        "$bin/coordinator" enumerate "$space" "$@" --listen "127.0.0.1:$port" --token-file "$token" \
        "${start[@]}" --json "$out/$space-cluster.json" 2> "results/logs/$space-cluster-$workers.log" \
        | tee "$out/$space-cluster.row"
    wait
    python3 - "$space" "$out" "$workers" "$embedded" "${WORKER_THREADS:-}" "${WORKER_MEM:-}" "$*" "$late" "$compress" <<'PY'
import datetime, json, os, subprocess, sys
sys.path.insert(0, "scripts/bench")
import measure
space, out, workers, embedded, threads, mem = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5], sys.argv[6]
job = " ".join([space] + sys.argv[7].split()) + sys.argv[8]
compress = sys.argv[9]
worker_command = os.environ.get("BIN", "target/release") + "/worker" + (f" --threads {threads}" if threads else "") + (f" --mem-limit {mem}" if mem else "") + (f" --compress {compress}" if compress else "")
b = json.load(open(f"{out}/{space}-cluster.json"))
reference = f"{out}/{space}-embedded.json" if embedded else f"results/{space}-{b['metric']}.json"
if not os.path.exists(reference):
    reference = f"results/{space}.json"
a = json.load(open(reference))
# A depth-limited job against the published table: the depths it reached, as published.
limited = not embedded and "--max-depth" in sys.argv[7].split()
expected = a["depths"][:len(b["depths"])] if limited else a["depths"]
assert expected == b["depths"], f"cluster result differs from {reference}"
def cells(path):
    c = open(path).read().split("|")
    return float(c[5]), float(c[6])
cluster_wall, coordinator_cpu = cells(f"{out}/{space}-cluster.row")
commit = os.environ.get("BENCH_COMMIT") or subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
day = datetime.date.today().isoformat()
worker_cpu, peaks = 0.0, []
for i in range(1, workers + 1):
    wall, user, system, rss_kib = open(f"{out}/worker-{i}.time").read().split()[-4:]
    cpu = float(user) + float(system)
    worker_cpu += cpu
    peaks.append(int(rss_kib) / 1024)
    measure.insert_row(f"| {day} | {commit} | {measure.machine()} | enumerate {job}, worker process {i} of {workers} | "
                       f"{float(wall):.2f} | {cpu:.2f} | {int(rss_kib) / 1024:.1f} | `{worker_command}` |\n")
t = b["traffic"]
received = [w["received_bytes"] for w in t["workers"]]
through = t["through_coordinator_bytes"]
total = coordinator_cpu + worker_cpu
line = (f"identical depths; {workers} workers: through the coordinator {through / 2**20:.2f} MiB = "
        f"{100 * through / max(1, sum(received)):.3f} % of the {sum(received) / 2**20:.1f} MiB the workers received; "
        f"largest per worker {max(received) / 2**20:.1f} MiB; rows owned at the end {[w['rows'] for w in t['workers']]}; worker peak RSS {min(peaks):.0f}-{max(peaks):.0f} MiB; "
        f"coordinator {coordinator_cpu:.1f} CPU s, workers {worker_cpu:.1f}, wall {cluster_wall:.1f} s")
if embedded:
    embedded_wall, embedded_cpu = cells(f"{out}/{space}-embedded.row")
    line += f"; total CPU / embedded = {total / embedded_cpu:.2f}; wall / embedded = {cluster_wall / embedded_wall:.2f}"
    # What the exchange costs: the CPU beyond the embedded run's (every worker's own index
    # build included) over the bytes the workers received.
    line += f"; CPU beyond embedded {total - embedded_cpu:.1f} s = {1e9 * (total - embedded_cpu) / max(1, sum(received)):.1f} ns per byte received"
    with open(f"{out}/ratios", "a") as f:
        f.write(f"{total / embedded_cpu} {cluster_wall / embedded_wall}\n")
print(line)
with open(f"{out}/summary", "a") as f:
    f.write(f"{day} {commit} {job} workers={workers}{' threads=' + threads if threads else ''}{' mem=' + mem if mem else ''}: {line}\n")
PY
done
if [ -f "$out/ratios" ]; then
    python3 - "$out/ratios" <<'PY'
import statistics, sys
runs = [list(map(float, line.split())) for line in open(sys.argv[1])]
if len(runs) > 1:
    cpu, wall = (statistics.median(column) for column in zip(*runs))
    print(f"{len(runs)} pairs, medians: total CPU / embedded = {cpu:.2f}; wall / embedded = {wall:.2f}")
PY
fi
