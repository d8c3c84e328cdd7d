#!/usr/bin/env bash
# Benchmark: the same job embedded and with a coordinator plus two local worker processes on
# loopback. Every process is timed on its own: the embedded run and the coordinator through
# measure.py, each worker through /usr/bin/time; all rows go to results/BENCHMARKS.md. Each run
# prints the coordinator's share of the job's CPU, total CPU and wall against the embedded run
# just before it; with RUNS > 1 the pairs alternate (embedded, cluster, embedded, ...) so that a
# drift of the machine's speed touches both, and the medians of the ratios close the output.
# Both coordinator logs of the last run (per-level times; the cluster one with the bytes sent to
# and received from workers) are kept in results/logs/.
#
#   scripts/bench/cluster.sh [SPACE] [extra coordinator args...]     (default: h)
#   WORKER_THREADS=1 scripts/bench/cluster.sh cube --max-depth 11    (threads per worker; default all cores)
#   RUNS=3 scripts/bench/cluster.sh h                                (pairs of runs; default 1)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
space=${1:-h}
shift || true
runs=${RUNS:-1}
command -v /usr/bin/time > /dev/null || { echo "cluster.sh needs /usr/bin/time (GNU time)" >&2; exit 1; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "RUNS must be a positive whole number, not '$runs'" >&2; exit 1; }
cargo build --release --locked -p coordinator -p worker
out=target/bench-cluster
mkdir -p results/logs "$out"
rm -f "$out"/ratios
token=$out/token
echo "bench-token-$$" > "$token"
port=${PORT:-7890}
threads=${WORKER_THREADS:+ of $WORKER_THREADS thread(s)}
for run in $(seq 1 "$runs"); do
    python3 scripts/bench/measure.py "enumerate $space embedded" -- \
        target/release/coordinator enumerate "$space" "$@" --json "$out/$space-embedded.json" \
        2> "results/logs/$space-embedded.log" | tee "$out/$space-embedded.row"
    (sleep 1
     for i in 1 2; do
         /usr/bin/time -f "%e %U %S %M" -o "$out/worker-$i.time" \
             target/release/worker --coordinator "http://127.0.0.1:$port" --token-file "$token" \
             ${WORKER_THREADS:+--threads "$WORKER_THREADS"} 2> "$out/worker-$i.log" &
     done
     wait) &
    python3 scripts/bench/measure.py "enumerate $space, coordinator of 2 local worker processes$threads (this process only)" -- \
        target/release/coordinator enumerate "$space" "$@" --listen "127.0.0.1:$port" --token-file "$token" \
        --json "$out/$space-cluster.json" 2> "results/logs/$space-cluster.log" | tee "$out/$space-cluster.row"
    wait
    python3 - "$space" "$out" "${WORKER_THREADS:-}" <<'PY'
import datetime, json, subprocess, sys
sys.path.insert(0, "scripts/bench")
import measure
space, out, threads = sys.argv[1], sys.argv[2], sys.argv[3]
worker_command = f"target/release/worker --threads {threads}" if threads else "target/release/worker"
a = json.load(open(f"{out}/{space}-embedded.json"))
b = json.load(open(f"{out}/{space}-cluster.json"))
assert a["depths"] == b["depths"], "cluster result differs from the embedded one"
def cells(path):
    c = open(path).read().split("|")
    return float(c[5]), float(c[6])
embedded_wall, embedded_cpu = cells(f"{out}/{space}-embedded.row")
cluster_wall, coordinator_cpu = cells(f"{out}/{space}-cluster.row")
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
day = datetime.date.today().isoformat()
worker_cpu = 0.0
for i in (1, 2):
    wall, user, system, rss_kib = open(f"{out}/worker-{i}.time").read().split()[-4:]
    cpu = float(user) + float(system)
    worker_cpu += cpu
    measure.insert_row(f"| {day} | {commit} | {measure.machine()} | enumerate {space}, worker process {i} of 2 | "
                       f"{float(wall):.2f} | {cpu:.2f} | {int(rss_kib) / 1024:.1f} | `{worker_command}` |\n")
total = coordinator_cpu + worker_cpu
share, cpu_ratio, wall_ratio = coordinator_cpu / total, total / embedded_cpu, cluster_wall / embedded_wall
with open(f"{out}/ratios", "a") as f:
    f.write(f"{share} {cpu_ratio} {wall_ratio}\n")
print(f"identical depths; coordinator {coordinator_cpu:.1f} CPU s = {100 * share:.1f} % of the job's "
      f"{total:.1f}; total CPU / embedded = {cpu_ratio:.2f}; wall / embedded = {wall_ratio:.2f}")
PY
done
python3 - "$out/ratios" <<'PY'
import statistics, sys
runs = [list(map(float, line.split())) for line in open(sys.argv[1])]
if len(runs) > 1:
    share, cpu, wall = (statistics.median(column) for column in zip(*runs))
    print(f"{len(runs)} pairs, medians: coordinator {100 * share:.1f} % of the job's CPU; "
          f"total CPU / embedded = {cpu:.2f}; wall / embedded = {wall:.2f}")
PY
