#!/usr/bin/env bash
# The full test tier: the CI suite (the README's test command), then the long checks it leaves
# out (`#[ignore]`d tests: whole edges distributions in both metrics against Bryan's tables,
# 5 minutes and 8.7 GiB each on 2 cores; cosets of H against Rokicki's published distributions
# and a bound run against hcoset's counts and unreached position, 4.6 GiB; H on four worker
# processes under an operator's faults, coordinator/tests/faults.rs, about 5 minutes; the
# multi-process runs the simulators cover; h48h0 on two workers and h48h1 with its rows written
# by its workers; nxopt's largest factored maps on every column; H's whole distribution, H''s
# owned levels and the cube's product method against a hash set, 30 to 40 s each; h0's
# distances by two indexes, a brute force and a direct search, and H48 table rows made in
# groups against one by one, 21 and 25 s), one at a time so their memory does not add up.
# Run it before recording benchmarks.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo test --release --workspace
cargo test --release --workspace -- --ignored --test-threads 1
