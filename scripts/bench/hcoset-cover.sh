#!/usr/bin/env bash
# The proof of 20's own cosets, several to a process, side by side with cube20src's hcoset:
# `hcoset -r FIRST COUNT` solves cosets FIRST .. FIRST+COUNT-1 of its cover (the 55,882,296
# cosets the proof ran) at bound 20 with phase 1 searched to S moves; `coordinator coset` then
# solves the same representatives, read from hcoset's log, in one process. Both are measured
# (wall, CPU, peak RSS) into results/BENCHMARKS.md; their per-coset counts at every depth and
# the positions they leave unreached must be the same. With several cosets a process, the
# difference between a run of COUNT cosets and a run of one is the steady cost of a coset, as in
# a cluster's long-lived workers (tables built once, memory reused).
#
#   scripts/bench/hcoset-cover.sh SOLVER_DIR [FIRST] [COUNT] [S]
#
# Defaults: FIRST 1000000, COUNT 4, S 15 (at 14 these cosets leave millions of positions
# unreached, more than a bound run lists). SOLVER_DIR is cube20src's source tree, as for
# scripts/bench/hcoset.sh.
set -euo pipefail
dir=${1:?usage: hcoset-cover.sh SOLVER_DIR [FIRST] [COUNT] [S]}
first=${2:-1000000}
count=${3:-4}
search=${4:-15}
source "$(dirname "${BASH_SOURCE[0]}")/hcoset-setup.sh"
name="cover-$first-$count-S$search"
log="results/logs/hcoset-$name.log"
theirs_sing=$(mktemp) ours_sing=$(mktemp)
trap 'rm -f "$theirs_sing" "$ours_sing"' EXIT
(cd "$dir" && python3 "$OLDPWD/scripts/bench/measure.py" "hcoset -r $first $count -S $search -d 20" -- \
    ./hcoset -t "$threads" -S "$search" -d 20 -L 21 -f "$theirs_sing" -r "$first" "$count") > "$log"
mapfile -t reps < <(awk '/^Coset representative/ { print $4 }' "$log")
[ ${#reps[@]} -eq "$count" ] || { echo "error: hcoset's log names ${#reps[@]} cosets, not $count" >&2; exit 1; }
json="results/coset-$name.json"
python3 scripts/bench/measure.py "coset --bound 20 --search-to $search (hcoset -r $first $count)" -- \
    target/release/coordinator coset --threads "$threads" --phase1-table "$phase1" --bound 20 --search-to "$search" "${reps[@]}" \
    --json "$json" --unreached "$ours_sing" > /dev/null 2> "results/logs/coset-$name.log"
status=0
# Per coset, hcoset's "lev" at each depth it prints (a depth that completes the coset is not
# printed: the rest of the coset) against our counts.
if python3 - "$log" "$json" <<'PY'
import json, re, sys
theirs, levs = [], None
for line in open(sys.argv[1]):
    if line.startswith("Coset representative"):
        levs = {}
        theirs.append(levs)
    m = re.match(r"Tests at (\d+) .* lev (\d+)", line)
    if m and levs is not None:
        levs[int(m[1])] = int(m[2])
size = 19508428800
for levs, ours in zip(theirs, json.load(open(sys.argv[2]))["cosets"]):
    counts = ours["counts"]
    for d, n in enumerate(counts):
        expected = levs.get(d, size - sum(levs.values()) if d == len(counts) - 1 and ours["beyond"] == 0 else 0)
        if n != expected:
            sys.exit(f"{ours['representative']} at depth {d}: hcoset {expected}, ours {n}")
    if len(theirs) != len(json.load(open(sys.argv[2]))["cosets"]):
        sys.exit("not the same number of cosets")
PY
then
    echo "cosets $first..$((first + count - 1)): the same counts at every depth"
else
    echo "cosets $first..$((first + count - 1)): DIFFERENT counts" >&2
    status=1
fi
if cmp -s <(sed 's/^SING //' "$theirs_sing" | sort) <(sed 's/^SING //' "$ours_sing" | sort); then
    echo "cosets $first..$((first + count - 1)): the same $(wc -l < "$ours_sing") unreached positions"
else
    echo "cosets $first..$((first + count - 1)): DIFFERENT unreached positions" >&2
    status=1
fi
grep -F -e "hcoset -r $first $count" -e "(hcoset -r $first $count)" results/BENCHMARKS.md | tail -n 2
exit $status
