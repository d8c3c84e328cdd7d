#!/usr/bin/env bash
# Side by side with cube20src's coset solver: the same cosets solved exactly to depth D by
# `hcoset -t THREADS -d D` and by `coordinator coset --exact-to D`, both measured (wall, CPU,
# peak RSS) into results/BENCHMARKS.md, and their per-depth counts compared (hcoset's "lev"
# column, the positions new at each depth).
#
#   scripts/bench/hcoset.sh SOLVER_DIR [DEPTH] [COSET ...]
#   SEARCH_TO=S scripts/bench/hcoset.sh SOLVER_DIR [BOUND] [COSET ...]
#
# With SEARCH_TO set, both run as a proof does instead: every position within BOUND moves found,
# phase 1 searched to S moves (`hcoset -S S -d BOUND -L BOUND+1 -f SING` against `coordinator
# coset --bound BOUND --search-to S --unreached FILE`), and the positions each leaves unreached
# are compared as well as the per-depth counts.
#
# SOLVER_DIR holds cube20src's sources (https://github.com/rokicki/cube20src, outside this
# repository); hcoset is built there with its makefile (ctangle from texlive-binaries, a C++
# compiler). Cosets are given in cube20src's notation (hcoset reads no spaces); the default is
# the identity coset (U2U2) and R1U1F1. hcoset builds its phase-1 table p1p1h.dat (680 MB) the
# first time; that run is not measured. Ours is kept in a file likewise (`--phase1-table`,
# $PHASE1_TABLE, default /tmp/coset-phase1.tbl), made before the measured runs.
set -euo pipefail
dir=${1:?usage: hcoset.sh SOLVER_DIR [DEPTH] [COSET ...]}
depth=${2:-10}
shift $(( $# >= 2 ? 2 : 1 ))
cosets=("$@")
[ ${#cosets[@]} -gt 0 ] || cosets=(U2U2 R1U1F1)
source "$(dirname "${BASH_SOURCE[0]}")/hcoset-setup.sh"
status=0
search=${SEARCH_TO:-}
for coset in "${cosets[@]}"; do
    if [ -n "$search" ]; then
        name="$coset-$depth-S$search"
        log="results/logs/hcoset-$name.log"
        (cd "$dir" && python3 "$OLDPWD/scripts/bench/measure.py" "hcoset -S $search -d $depth $coset" -- \
            ./hcoset -t "$threads" -S "$search" -d "$depth" -L $((depth + 1)) -f "/tmp/hcoset-sing-$name.txt" \
            "$coset") > "$log"
        json="results/coset-$name.json"
        python3 scripts/bench/measure.py "coset --bound $depth --search-to $search $coset" -- \
            target/release/coordinator coset --threads "$threads" --phase1-table "$phase1" --bound "$depth" --search-to "$search" "$coset" \
            --json "$json" --unreached "/tmp/coset-sing-$name.txt" > /dev/null 2> "results/logs/coset-$name.log"
        if cmp -s <(sort "/tmp/hcoset-sing-$name.txt") <(sort "/tmp/coset-sing-$name.txt"); then
            echo "$coset, bound $depth, phase 1 to $search: the same $(wc -l < "/tmp/coset-sing-$name.txt") unreached position(s)"
        else
            echo "$coset, bound $depth, phase 1 to $search: DIFFERENT unreached positions" >&2
            status=1
        fi
        rm -f "/tmp/hcoset-sing-$name.txt" "/tmp/coset-sing-$name.txt"
    else
        log="results/logs/hcoset-$coset-$depth.log"
        (cd "$dir" && python3 "$OLDPWD/scripts/bench/measure.py" "hcoset -d $depth $coset" -- \
            ./hcoset -t "$threads" -d "$depth" "$coset") > "$log"
    fi
    # "Tests at D N in T uniq U lev L ...": L positions new at depth D (depths before the first
    # position found are not printed: zero).
    theirs=$(awk -v max="$depth" '$1 == "Tests" && $2 == "at" { for (i = 1; i <= NF; i++) if ($i == "lev") c[$3] = $(i + 1) }
        END { for (d = 0; d <= max; d++) printf "%s ", (d in c) ? c[d] : 0 }' "$log")
    if [ -z "$search" ]; then
        json="results/coset-$coset-$depth.json"
        python3 scripts/bench/measure.py "coset --exact-to $depth $coset" -- \
            target/release/coordinator coset --threads "$threads" --phase1-table "$phase1" --exact-to "$depth" "$coset" --json "$json" \
            > /dev/null 2> "results/logs/coset-$coset-$depth.log"
    fi
    ours=$(python3 -c "import json,sys; print(' '.join(map(str, json.load(open(sys.argv[1]))['cosets'][0]['counts'])))" "$json")
    if [ "${theirs% }" = "$ours" ]; then
        echo "$coset to $depth: the same counts ($ours)"
    else
        echo "$coset to $depth: DIFFERENT: hcoset ${theirs% }, ours $ours" >&2
        status=1
    fi
done
grep -F -e "hcoset -" -e "coset --" results/BENCHMARKS.md | tail -n $(( 2 * ${#cosets[@]} ))
exit $status
