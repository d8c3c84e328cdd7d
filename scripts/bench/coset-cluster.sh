#!/usr/bin/env bash
# Benchmark: a batch of 8 cosets of H proved within 20 moves (phase 1 searched to 15), on a
# coordinator and N local worker processes of one thread each, for each N given (default 1 2;
# a coset holds 2.7 GiB, so N = 4 needs 11 GiB and more cores than this machine's 2 to mean
# anything). Each worker reads phase 1's table from one file (--phase1-table, made first). The
# coordinator is measured through measure.py, each worker through /usr/bin/time, all rows into
# results/BENCHMARKS.md; each run's counts must equal the first run's, and the script prints
# wall, all processes' CPU, bytes through the coordinator and the speed-up over the first N.
#
#   scripts/bench/coset-cluster.sh [N ...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 2)
cargo build --release --locked -q -p coordinator -p worker
out=target/bench-coset-cluster
mkdir -p "$out" results/logs
phase1=${PHASE1_TABLE:-/tmp/coset-phase1.tbl}
target/release/coordinator coset --exact-to 0 U2 --phase1-table "$phase1" > /dev/null 2>&1
token=$out/token
echo "bench-token-$$" > "$token"
port=${PORT:-7891}
batch=scripts/bench/coset-batch.txt
first_wall=""
for n in "${counts[@]}"; do
    rm -f "$out"/worker-*.time
    (sleep 1
     for i in $(seq 1 "$n"); do
         /usr/bin/time -f "%e %U %S %M" -o "$out/worker-$i.time" \
             target/release/worker --coordinator "http://127.0.0.1:$port" --token-file "$token" \
             --threads 1 --phase1-table "$phase1" 2> "$out/worker-$i.log" &
     done
     wait) &
    row=$(python3 scripts/bench/measure.py \
        "coset batch of 8 (--bound 20 --search-to 15), coordinator of $n worker processes of 1 thread (this process only)" -- \
        target/release/coordinator coset --bound 20 --search-to 15 --every-coset --file "$batch" \
        --listen "127.0.0.1:$port" --token-file "$token" --json "$out/cosets-$n.json" \
        --unreached "$out/unreached-$n.txt" 2> "results/logs/coset-cluster-$n.log" | tail -n 1)
    wait
    python3 - "$out" "$n" "$row" "${first_wall:-0}" <<'PY'
import datetime, json, subprocess, sys
sys.path.insert(0, "scripts/bench")
import measure
out, n, row, first = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
cells = row.split("|")
wall, coordinator_cpu = float(cells[5]), float(cells[6])
v = json.load(open(f"{out}/cosets-{n}.json"))
with open(f"{out}/reference.json", "a+") as f:
    f.seek(0)
    text = f.read()
    if not text:
        f.write(json.dumps([v["counts"], v["beyond"]]))
    else:
        assert json.loads(text) == [v["counts"], v["beyond"]], "counts differ from the first run's"
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
day = datetime.date.today().isoformat()
workers_cpu = 0.0
for i in range(1, n + 1):
    w, user, system, rss = open(f"{out}/worker-{i}.time").read().split()[-4:]
    cpu = float(user) + float(system)
    workers_cpu += cpu
    measure.insert_row(f"| {day} | {commit} | {measure.machine()} | coset batch of 8, worker process {i} of {n} | "
                       f"{float(w):.2f} | {cpu:.2f} | {int(rss) / 1024:.1f} | `target/release/worker --threads 1 --phase1-table FILE` |\n")
through = v["traffic"]["through_coordinator_bytes"]
speedup = f"; speed-up over the first run {first / wall:.2f}" if first else ""
print(f"N = {n}: wall {wall:.1f} s, CPU {coordinator_cpu + workers_cpu:.1f} s (coordinator {coordinator_cpu:.1f}), "
      f"through the coordinator {through / 2**20:.2f} MiB{speedup}")
PY
    [ -n "$first_wall" ] || first_wall=$(echo "$row" | awk -F'|' '{ gsub(/ /, "", $6); print $6 }')
done
rm -f "$out/reference.json"
