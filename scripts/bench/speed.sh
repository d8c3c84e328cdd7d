#!/usr/bin/env bash
# The kernels' speed in units of this machine: cube20src's `hcoset -t 2 -d 10 U2U2` run three
# times as the yardstick, then each job, every run measured (wall, CPU, peak RSS) into
# results/BENCHMARKS.md, and each job's wall printed over the yardstick's median wall (the
# ratio issue targets are set in, comparable across machines of one kind).
#
#   scripts/bench/speed.sh SOLVER_DIR [JOB ...]
#
# SOLVER_DIR holds cube20src's sources (https://github.com/rokicki/cube20src, outside this
# repository; hcoset is built there, see scripts/bench/hcoset-setup.sh). JOBs, default all but
# the two long ones: edges (`enumerate edges --metric htm`), h48h1, h48h4, cube10 (`enumerate
# cube --metric htm --max-depth 10`), nxopt22 (`build nxopt-EO2EP2`); and h48h11 (`build
# h48h11 --format h48`, 60.7 GB written under $OUT) and cube12 (`enumerate cube --metric htm
# --max-depth 12`, hours; with --state-dir, so a killed run resumes) when named. Tables go to
# $OUT (default target/bench-speed) and are deleted after each job.
set -euo pipefail
dir=${1:?usage: speed.sh SOLVER_DIR [JOB ...]}
shift
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(edges h48h1 h48h4 cube10 nxopt22)
THREADS=2 source "$(dirname "${BASH_SOURCE[0]}")/hcoset-setup.sh"
out=${OUT:-target/bench-speed}
mkdir -p "$out"
bin=target/release/coordinator
wall() { awk -F'|' '{ gsub(/ /, "", $6); print $6 }'; }

walls=()
for i in 1 2 3; do
    row=$(cd "$dir" && python3 "$OLDPWD/scripts/bench/measure.py" "yardstick: hcoset -t 2 -d 10 U2U2" -- \
        ./hcoset -t 2 -d 10 U2U2 2>/dev/null | tail -n 1)
    walls+=("$(echo "$row" | wall)")
done
yard=$(printf '%s\n' "${walls[@]}" | sort -g | sed -n 2p)
echo "yardstick: hcoset -t 2 -d 10 U2U2, walls ${walls[*]} s, median $yard s"

for job in "${jobs[@]}"; do
    case "$job" in
        edges) cmd=("$bin" enumerate edges --metric htm --json "$out/edges.json") ;;
        h48h1) cmd=("$bin" build h48h1 --format h48 --out "$out/h48h1") ;;
        h48h4) cmd=("$bin" build h48h4 --format h48 --out "$out/h48h4") ;;
        # Levels held in memory (about 11 GiB): with a --state-dir's 12 GB of levels beside the
        # 60.7 GB table the job would need 73 GB of disk.
        h48h11) cmd=("$bin" build h48h11 --format h48 --out "$out/h48h11") ;;
        cube10) cmd=("$bin" enumerate cube --metric htm --max-depth 10 --json "$out/cube10.json") ;;
        # The job and journal of scripts/bench/cube-htm-12.sh, which runs it in sittings.
        cube12) cmd=("$bin" enumerate cube --metric htm --max-depth 12 --mem-limit 9G \
                     --state-dir target/cube-htm-12 --json "$out/cube12.json") ;;
        nxopt22) cmd=("$bin" build nxopt-EO2EP2 --out "$out/nxopt22.dat") ;;
        *) echo "error: unknown job $job (edges h48h1 h48h4 h48h11 cube10 cube12 nxopt22)" >&2; exit 1 ;;
    esac
    row=$(python3 scripts/bench/measure.py "speed: $job" -- "${cmd[@]}" 2> "results/logs/speed-$job.log" | tail -n 1)
    w=$(echo "$row" | wall)
    printf '%-8s %9.1f s  ratio %6.2f\n' "$job" "$w" "$(echo "$w / $yard" | bc -l)"
    rm -rf "$out/h48h1" "$out/h48h4" "$out/h48h11" "$out/nxopt22.dat"
done
