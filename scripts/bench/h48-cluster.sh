#!/usr/bin/env bash
# Benchmark: an H48 table built embedded and by a coordinator with N local worker processes on
# loopback, which keep the h11 level rows they make and fetch the rows their tasks read from
# each other. Checks that both files are the same bytes, and prints per worker its peak RSS
# and the bytes it received (from its exit log), and the bytes through the coordinator (from
# its traffic line). Every process is timed (measure.py, /usr/bin/time); rows go to
# results/BENCHMARKS.md and the coordinator's log to results/logs/.
#
#   scripts/bench/h48-cluster.sh [TABLE]            (default h48h4; WORKERS=2, WORKER_THREADS=1)
#   WORKERS=4 scripts/bench/h48-cluster.sh h48h4
#   EMBEDDED=0 ...                                  (skip the embedded build; no byte check)
#   SHARED_OUT=1 ...                                (the workers write the table's rows: --shared-out)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
table=${1:-h48h4}
workers=${WORKERS:-2}
threads=${WORKER_THREADS:-1}
embedded=${EMBEDDED:-1}
shared=()
[ "${SHARED_OUT:-0}" = 1 ] && shared=(--shared-out)
[[ $table =~ ^h48h([1-9]|1[01])$ ]] || { echo "TABLE must be h48h1 .. h48h11, not '$table'" >&2; exit 1; }
[[ $workers =~ ^[1-9][0-9]*$ ]] || { echo "WORKERS must be a positive whole number, not '$workers'" >&2; exit 1; }
command -v /usr/bin/time > /dev/null || { echo "h48-cluster.sh needs /usr/bin/time (GNU time)" >&2; exit 1; }
cargo build --release --locked -p coordinator -p worker
out=target/bench-h48-cluster
rm -rf "$out"
mkdir -p results/logs "$out"
trap 'rm -f "$out"/*.bin "$out"/'"$table"'*' EXIT
token=$out/token
echo "bench-token-$$" > "$token"
port=${PORT:-7891}
if [ "$embedded" = 1 ]; then
    python3 scripts/bench/measure.py "build $table embedded" -- \
        target/release/coordinator build "$table" --out "$out/$table.embedded" \
        2> "results/logs/$table-embedded.log"
fi
(sleep 1
 for i in $(seq 1 "$workers"); do
     /usr/bin/time -f "%e %U %S %M" -o "$out/worker-$i.time" \
         target/release/worker --coordinator "http://127.0.0.1:$port" --token-file "$token" --threads "$threads" \
         2> "$out/worker-$i.log" &
 done
 wait) &
python3 scripts/bench/measure.py "build $table${shared:+ ${shared[*]}}, coordinator of $workers local worker processes of $threads thread(s) (this process only)" -- \
    target/release/coordinator build "$table" --out "$out/$table.cluster" --listen "127.0.0.1:$port" \
    --token-file "$token" --min-workers "$workers" "${shared[@]}" 2> "results/logs/$table-cluster-$workers.log" \
    | tee "$out/cluster.row"
wait
if [ "$embedded" = 1 ]; then
    cmp "$out/$table.embedded" "$out/$table.cluster"
    echo "the same bytes embedded and on $workers workers"
fi
python3 - "$table" "$out" "$workers" "$threads" <<'PY'
import datetime, re, subprocess, sys
sys.path.insert(0, "scripts/bench")
import measure
table, out, workers, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
day = datetime.date.today().isoformat()
cells = open(f"{out}/cluster.row").read().split("|")
wall, coordinator_cpu = float(cells[5]), float(cells[6])
log = open(f"results/logs/{table}-cluster-{workers}.log").read()
through = re.search(r"traffic: ([\d.]+ \w+) through the coordinator", log).group(1)
worker_cpu, received, peaks = 0.0, [], []
for i in range(1, workers + 1):
    w_wall, user, system, rss_kib = open(f"{out}/worker-{i}.time").read().split()[-4:]
    cpu = float(user) + float(system)
    worker_cpu += cpu
    peaks.append(int(rss_kib) / 1024)
    got = re.findall(r"traffic: ([\d.]+) MiB sent, ([\d.]+) MiB received", open(f"{out}/worker-{i}.log").read())
    received.append(float(got[-1][1]) if got else float("nan"))
    measure.insert_row(f"| {day} | {commit} | {measure.machine()} | build {table}, worker process {i} of {workers} | "
                       f"{float(w_wall):.2f} | {cpu:.2f} | {int(rss_kib) / 1024:.1f} | "
                       f"`target/release/worker --threads {threads}` |\n")
print(f"{workers} workers: through the coordinator {through}; received per worker "
      + ", ".join(f"{r:.1f}" for r in received) + " MiB; worker peak RSS "
      + ", ".join(f"{p:.0f}" for p in peaks) + f" MiB; coordinator {coordinator_cpu:.1f} CPU s, "
      f"workers {worker_cpu:.1f} CPU s, wall {wall:.1f} s")
PY
