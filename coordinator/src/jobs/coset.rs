//! `coset`: cosets of H solved whole, each position at its exact distance up to a depth
//! (docs/coset.md), one coset after another on this process's threads.

use crate::config::CosetConfig;
use crate::output::{peak_rss_bytes, OutputFile};
use crate::progress::Reporter;
use crate::resources::check_memory;
use anyhow::{Context, Result};
use shared::coset::CosetSolver;
use shared::cube::apply_moves;
use shared::report::thousands;
use shared::units::gib;
use std::time::Instant;

/// One coset's result, as `--json` writes it.
#[derive(serde::Serialize)]
struct CosetResult {
    representative: String,
    counts: Vec<u64>,
    beyond: u64,
    seconds: f64,
}

/// The JSON of `--json`.
#[derive(serde::Serialize)]
struct CosetsJson<'a> {
    space: &'static str,
    exact_to: u32,
    cosets: &'a [CosetResult],
    /// Sums over the cosets, per depth.
    counts: Vec<u64>,
    beyond: u64,
}

pub fn run(config: &CosetConfig) -> Result<()> {
    let json = config.json.as_deref().map(OutputFile::prepare).transpose()?;
    let start = Instant::now();
    let solver = CosetSolver::new(!config.slice_edges_alike);
    check_memory(solver.state_bytes(), config.mem_limit, "")
        .context("a coset's run holds three bits per position of H")?;
    let space = if config.slice_edges_alike { "hprime" } else { "h" };
    eprintln!(
        "cosets of {space}: {} positions each, {} of bit arrays; tables built in {:.1} s",
        thousands(solver.coset_size()),
        gib(solver.state_bytes()),
        start.elapsed().as_secs_f64()
    );
    let depth = config.exact_to as usize;
    let mut results = Vec::new();
    for (text, moves) in &config.cosets {
        let reporter = Reporter::new(solver.row_count() as u64);
        let t = Instant::now();
        let found = std::thread::scope(|scope| {
            reporter.restart();
            scope.spawn(|| reporter.display_loop());
            let found = solver.exact(&apply_moves(moves), config.exact_to, &reporter.progress);
            reporter.finish();
            found
        })?;
        let mut counts = found.counts;
        counts.resize(depth + 1, 0);
        let seconds = t.elapsed().as_secs_f64();
        println!("coset of {text:?} ({seconds:.1} s)");
        print_counts(&counts, found.beyond, depth);
        results.push(CosetResult { representative: text.clone(), counts, beyond: found.beyond, seconds });
    }
    let sums: Vec<u64> = (0..=depth).map(|d| results.iter().map(|r| r.counts[d]).sum()).collect();
    let beyond = results.iter().map(|r| r.beyond).sum();
    if results.len() > 1 {
        println!("all {} cosets", results.len());
        print_counts(&sums, beyond, depth);
    }
    eprintln!(
        "{} coset(s) in {:.1} s, peak RSS {}",
        results.len(),
        start.elapsed().as_secs_f64(),
        gib(peak_rss_bytes())
    );
    if let Some(out) = json {
        let value = CosetsJson { space, exact_to: config.exact_to, cosets: &results, counts: sums, beyond };
        out.write(serde_json::to_string_pretty(&value)?.as_bytes())?;
    }
    Ok(())
}

fn print_counts(counts: &[u64], beyond: u64, depth: usize) {
    for (d, &n) in counts.iter().enumerate() {
        println!("  distance {d:>2}: {:>15}", thousands(n));
    }
    println!("  beyond {depth:>3}: {:>15}", thousands(beyond));
}
