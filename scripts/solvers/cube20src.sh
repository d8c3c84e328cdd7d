#!/usr/bin/env bash
# Puts tables built by this project where cube20src's programs look for them, and solves with
# them: `twophase` with the phase-2 table p2p1h.dat, and `nxopt11` with nxopth11b.dat.
#
#   scripts/solvers/cube20src.sh SOLVER_DIR
#
# SOLVER_DIR holds cube20src's sources (https://github.com/rokicki/cube20src, outside this
# repository); the programs are built there with its makefiles (ctangle, from the texlive-binaries
# package, and a C++ compiler). Our tables are written into SOLVER_DIR under the programs' file
# names; a program that rejected one would rebuild it, so the script checks that each file is
# unchanged after the program ran and that the program did not report a bad or short table.
set -euo pipefail
dir=${1:?usage: cube20src.sh SOLVER_DIR (cube20src sources)}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bin=${CUBEFARM_BIN:-$PWD/target/release}
[ -f "$dir/twophase.w" ] && [ -f "$dir/makefile-nxopt" ] || { echo "error: $dir is not cube20src's source tree" >&2; exit 1; }
command -v ctangle > /dev/null || { echo "error: ctangle is missing (apt-get install texlive-binaries)" >&2; exit 1; }
[ -x "$bin/coordinator" ] || cargo build --release -q -p coordinator

(cd "$dir" && make -s twophase && make -s -f makefile-nxopt nxopt11) > /dev/null
scrambles=("R1 U2 F3" "R1 U2 F3 L1 D2 B1" "L3 U2 R1 F2 D2 U2 R3 B1 F3 D2 B3 U3")

echo "== twophase with p2p1h.dat built by this project"
start=$SECONDS
"$bin/coordinator" build phase2 --out "$dir/p2p1h.dat" > "$dir/build.log" 2>&1
grep -E "bytes\)|^checksum" "$dir/build.log"
echo "built in $((SECONDS - start)) s"
before=$(md5sum < "$dir/p2p1h.dat")
# twophase also needs its phase-1 table p1p1h.dat, which it builds itself the first time.
out=$(cd "$dir" && printf '%s\n' "${scrambles[@]}" | ./twophase -s 20 -t 2 2>&1)
echo "$out" | grep -A1 -E "^Solution" | grep -v "^--$" || true
echo "$out" | grep -E "Verified|Completed|Bad|Out of data" || true
if echo "$out" | grep -q "p2p1h.*\(Bad checksum\|Out of data\)\|Bad checksum\|Out of data in p2p1h"; then
    echo "FAIL: twophase rejected p2p1h.dat" >&2; exit 1
fi
[ "$(md5sum < "$dir/p2p1h.dat")" = "$before" ] || { echo "FAIL: twophase rewrote p2p1h.dat" >&2; exit 1; }
[ "$(echo "$out" | grep -c '^Solution')" = ${#scrambles[@]} ] || { echo "FAIL: not every position solved" >&2; exit 1; }
echo "ok: twophase loaded p2p1h.dat unchanged and solved ${#scrambles[@]} positions"

echo "== nxopt11 with nxopth11b.dat built by this project"
start=$SECONDS
"$bin/coordinator" build nxopt-EO1EP1 --out "$dir/nxopth11b.dat" > "$dir/build.log" 2>&1
grep -E "bytes\)" "$dir/build.log"
echo "built in $((SECONDS - start)) s"
before=$(md5sum < "$dir/nxopth11b.dat")
out=$(cd "$dir" && printf '%s\n' "${scrambles[@]}" | ./nxopt11 -t 2 - 2>&1)
echo "$out" | grep -A1 -E "^Solved" | grep -v "^--$" || true
echo "$out" | grep -E "Overriding|error" || true
if echo "$out" | grep -q "Overriding\|error reading"; then echo "FAIL: nxopt11 did not take the table as it is" >&2; exit 1; fi
[ "$(md5sum < "$dir/nxopth11b.dat")" = "$before" ] || { echo "FAIL: nxopt11 rewrote nxopth11b.dat" >&2; exit 1; }
[ "$(echo "$out" | grep -c '^Solved')" = ${#scrambles[@]} ] || { echo "FAIL: not every position solved" >&2; exit 1; }
echo "ok: nxopt11 loaded nxopth11b.dat unchanged and solved ${#scrambles[@]} positions"
