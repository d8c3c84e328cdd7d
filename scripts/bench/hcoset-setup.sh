# Sourced by scripts/bench/hcoset.sh and hcoset-cover.sh (with $dir, cube20src's source tree,
# set): from the repository root, builds the coordinator and hcoset, and makes both programs'
# phase-1 tables before anything is measured (hcoset's p1p1h.dat in $dir; ours in
# $PHASE1_TABLE, default /tmp/coset-phase1.tbl). Sets $threads and $phase1.
threads=${THREADS:-$(nproc)}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[ -f "$dir/hcoset.w" ] || { echo "error: $dir is not cube20src's source tree" >&2; exit 1; }
command -v ctangle > /dev/null || { echo "error: ctangle is missing (apt-get install texlive-binaries)" >&2; exit 1; }
cargo build --release --locked -q -p coordinator
(cd "$dir" && make -s hcoset) > /dev/null
[ -f "$dir/p1p1h.dat" ] || (cd "$dir" && ./hcoset -t "$threads" -d 0 U2U2 > /dev/null)
phase1=${PHASE1_TABLE:-/tmp/coset-phase1.tbl}
target/release/coordinator coset --exact-to 0 U2 --phase1-table "$phase1" > /dev/null 2>&1
mkdir -p results/logs
