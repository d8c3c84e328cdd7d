#!/usr/bin/env bash
# Puts an H48 table built by this project where the H48 solver (nissy-core) looks for it, and
# solves with it.
#
#   scripts/solvers/nissy.sh SOLVER_DIR [h48hN]      (default h48h2)
#
# SOLVER_DIR holds nissy-core's sources (https://github.com/sebastianotronto/nissy-core, outside
# this repository); its shell `run` is built there (`CC=gcc THREADS=2 ./build.sh shell`, needs a
# C compiler with AVX2). The table is written as `SOLVER_DIR/tables/h48hN` in the solver's own
# layout (`--format h48`); the script checks that the solver found a solution for every scramble
# and left the file unchanged.
set -euo pipefail
dir=${1:?usage: nissy.sh SOLVER_DIR [h48hN]}
table=${2:-h48h2}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bin=${CUBEFARM_BIN:-$PWD/target/release}
[ -f "$dir/build.sh" ] && [ -d "$dir/src" ] || { echo "error: $dir is not nissy-core's source tree" >&2; exit 1; }
[ -x "$bin/coordinator" ] || cargo build --release -q -p coordinator
[ -x "$dir/run" ] || (cd "$dir" && CC=${CC:-gcc} THREADS=${THREADS:-2} ./build.sh shell > /dev/null)

mkdir -p "$dir/tables"
start=$SECONDS
"$bin/coordinator" build "$table" --format h48 --out "$dir/tables/$table" > "$dir/build.log" 2>&1
echo "built $dir/tables/$table ($(stat -c %s "$dir/tables/$table") bytes) in $((SECONDS - start)) s"
before=$(md5sum < "$dir/tables/$table")
scrambles=("R U F" "R U2 F' L D2 B" "L' U2 R F2 D2 U2 R' B F' D2 B' U'")
solved=0
for s in "${scrambles[@]}"; do
    t0=$(date +%s%N)
    out=$(cd "$dir" && ./run solve_scramble -solver "$table" -n 1 -O 0 -t 2 -moves "$s" 2>&1)
    ms=$((($(date +%s%N) - t0) / 1000000))
    solution=$(echo "$out" | grep -E "^[URFDLB][2']?( [URFDLB][2']?)*$" | head -n 1 || true)
    printf '%-40s -> %-40s %d ms\n' "$s" "${solution:-(none)}" "$ms"
    [ -n "$solution" ] && solved=$((solved + 1))
done
[ "$(md5sum < "$dir/tables/$table")" = "$before" ] || { echo "FAIL: the solver changed $table" >&2; exit 1; }
[ "$solved" = ${#scrambles[@]} ] || { echo "FAIL: $solved of ${#scrambles[@]} scrambles solved; the solver said:" >&2; echo "$out" >&2; exit 1; }
echo "ok: the H48 solver loaded $table built here and solved ${#scrambles[@]} scrambles"
