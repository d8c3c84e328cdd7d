//! The runtime's protocols under the deterministic simulator (`shared::runtime::sim`): every
//! seed draws a job, a cluster and its faults, and must end with the embedded result. A failing
//! seed is printed with its last events; it replays alone with
//! `cargo run --release -p shared --example simulate -- rows SEED` (or `leases SEED`).

use shared::runtime::sim::{run_leases, run_rows, Outcome};

/// Runs `seeds` on two threads; fails with every failing seed's report.
fn all_pass(seeds: std::ops::Range<u64>, run: fn(u64) -> Result<Outcome, String>) -> Vec<Outcome> {
    let mid = seeds.start + (seeds.end - seeds.start) / 2;
    let halves = [seeds.start..mid, mid..seeds.end];
    let results: Vec<Vec<Result<Outcome, String>>> = std::thread::scope(|s| {
        let handles: Vec<_> =
            halves.into_iter().map(|h| s.spawn(move || h.map(run).collect::<Vec<_>>())).collect();
        handles.into_iter().map(|h| h.join().expect("a simulation thread")).collect()
    });
    let (ok, failed): (Vec<_>, Vec<_>) = results.into_iter().flatten().partition(|r| r.is_ok());
    let failed: Vec<String> = failed.into_iter().filter_map(Result::err).collect();
    assert!(failed.is_empty(), "{} seeds failed:\n\n{}", failed.len(), failed.join("\n\n"));
    ok.into_iter().map(|r| r.expect("ok")).collect()
}

#[test]
fn ten_thousand_row_searches_end_with_the_embedded_counts_and_bytes() {
    let outcomes = all_pass(0..10_000, run_rows);
    // The seeds do exercise what they are for.
    let faults: u64 = outcomes.iter().map(|o| o.faults).sum();
    let epochs: u64 = outcomes.iter().map(|o| o.changes).sum();
    assert!(faults > 10_000 && epochs > 20_000, "{faults} faults, {epochs} epochs");
}

#[test]
fn leased_tasks_end_with_the_embedded_results() {
    all_pass(0..2_000, run_leases);
}
