#!/usr/bin/env bash
# The whole cube to half-turn depth 12: some 31,000 CPU seconds (docs/product.md), more than one
# sitting on a machine whose disk is not kept between sittings. The job journal (one redb file:
# 2.6 MB, 144 KB compressed, with 16 of 62 chunks) carries the finished chunks from one sitting
# to the next through the repository, in results/state/cube-htm-12.redb.
#
#   scripts/bench/cube-htm-12.sh run [SECONDS]   # a sitting: resume from the carried journal
#   scripts/bench/cube-htm-12.sh save            # a run stopped by hand: its journal carried
#
# `run` measures the sitting into results/BENCHMARKS.md (label `cube-htm-12 sitting`). Stopped
# after SECONDS (default: none), or earlier by `pkill -TERM -f "measure.py cube-htm-12"` (not by
# killing the coordinator, which ends the sitting as a failure), it carries the journal; when
# the count completes it writes
# results/cube-htm.json and .md and removes the carried journal. $STATE (default
# target/cube-htm-12) holds the live journal. The job's arguments are fixed: a journal is
# refused by a job of other tasks.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
carried=results/state/cube-htm-12.redb
state=${STATE:-target/cube-htm-12}

save() {
    [ -e "$state/journal.redb" ] || { echo "error: no journal in $state" >&2; exit 1; }
    mkdir -p "$(dirname "$carried")"
    cp "$state/journal.redb" "$carried.partial"
    mv "$carried.partial" "$carried"
    echo "carried: $carried"
}

case "${1:-}" in
    run)
        cargo build --release --locked -p coordinator
        mkdir -p "$state" results/logs
        if [ ! -e "$state/journal.redb" ] && [ -e "$carried" ]; then
            cp "$carried" "$state/journal.redb"
        fi
        args=(enumerate cube --metric htm --max-depth 12 --mem-limit 9G --state-dir "$state"
            --json results/cube-htm.json)
        limit=()
        [ -z "${2:-}" ] || limit=(--stop-after "$2")
        status=0
        python3 scripts/bench/measure.py "cube-htm-12 sitting" "${limit[@]}" -- \
            target/release/coordinator "${args[@]}" 2> >(tee -a results/logs/cube-htm-12.log >&2) || status=$?
        if [ "$status" = 75 ]; then
            save
            exit 0
        fi
        [ "$status" = 0 ] || exit "$status"
        python3 scripts/results_md.py results/cube-htm.json "coordinator ${args[*]}" results/logs/cube-htm-12.log
        printf '\nCounted over one or more sittings, each resuming from the journal: the wall time above is\n%s\n' \
            "the last sitting's; every sitting is a \`cube-htm-12 sitting\` row of results/BENCHMARKS.md." \
            >> results/cube-htm.md
        rm -f "$carried"
        ;;
    save)
        if pgrep -f "coordinator enumerate cube --metric htm --max-depth 12" > /dev/null; then
            echo "error: the count is still running; stop it first (a journal copied while written may be torn)" >&2
            exit 1
        fi
        save
        ;;
    *)
        echo "usage: cube-htm-12.sh run [SECONDS] | save" >&2
        exit 1
        ;;
esac
