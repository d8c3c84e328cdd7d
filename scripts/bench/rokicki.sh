#!/usr/bin/env bash
# Benchmark: build Rokicki's tables (the phase-2 table and nxopt's tables), measured (wall, CPU,
# peak RSS) into results/BENCHMARKS.md, each verified, described in results/<table>.md/.json.
# Tables are written under target/bench-rokicki/ (EO2EP2 is 7.8 GB).
#
#   scripts/bench/rokicki.sh [TABLE ...]     (default: phase2 nxopt-EO1EP1 .. nxopt-EO3EP1)
#
# With REFERENCE=DIR, where DIR holds cube20src's programs, each reference program is measured
# right after our build of the same table, one thread, in an empty directory, and the two files'
# MD5s are recorded. To make DIR outside this tree: fetch cube20src, tangle its CWEB sources
# (`ctangle ./nxopt.w` and so on; ctangle is in texlive-binaries), build nxopt11 .. nxopt34 with
# its makefile-nxopt, and build phase2prune through a main that only calls phase2prune::init,
# named p2build (g++ -std=c++11 -O3 -DHALF -DLEVELCOUNTS -DTHREADS with cubepos and kocsymm).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
cargo build --release --locked -p coordinator
out=target/bench-rokicki
mkdir -p "$out" results/logs
bin=target/release/coordinator
tables=("$@")
[ ${#tables[@]} -gt 0 ] || tables=(phase2 nxopt-EO1EP1 nxopt-EO2EP1 nxopt-EO1EP2 nxopt-EO1EP3 nxopt-EO3EP1)
for t in "${tables[@]}"; do
    file="$out/$t.dat"
    python3 scripts/bench/measure.py "build $t" -- "$bin" build "$t" --out "$file" \
        > "$out/$t.out" 2> >(tee "results/logs/$t-build.log" >&2)
    "$bin" verify "$file" --samples 200
    "$bin" info "$file" --json > "$out/$t.json"
    ours=$(md5sum "$file" | cut -d' ' -f1)
    ref=()
    if [ -n "${REFERENCE:-}" ]; then
        refdir=$(mktemp -d "$out/ref-XXXX")
        if [ "$t" = phase2 ]; then
            (cd "$refdir" && python3 ../../../scripts/bench/measure.py "reference cube20src phase2prune (one thread)" \
                -- "$REFERENCE/p2build" > /dev/null)
        else
            code=${t#nxopt-EO}; code=${code/EP/}
            (cd "$refdir" && python3 ../../../scripts/bench/measure.py "reference nxopt$code (one thread)" \
                -- "$REFERENCE/nxopt$code" -t 1 - < /dev/null > /dev/null)
        fi
        ref=("$(md5sum "$refdir"/*.dat | cut -d' ' -f1)")
        rm -rf "$refdir"
    fi
    python3 scripts/rokicki_results.py "$t" "$out/$t.out" "$out/$t.json" "$ours" "${ref[@]}" "results/$t"
done
