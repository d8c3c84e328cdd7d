//! `coordinator enumerate cube` and `enumerate edges --method product`: the product
//! enumeration of [`shared::product`], run embedded with progress on stderr.

use crate::enumerate::EnumerateConfig;
use crate::progress::Reporter;
use crate::resources;
use anyhow::Result;
use shared::bfs::DepthCounts;
use shared::product::{self, CosetSpace, Layers};
use shared::report::thousands;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Runs the enumeration to `max_depth` and returns the per-depth counts.
pub fn run(space: &dyn CosetSpace, config: &EnumerateConfig, max_depth: u32) -> Result<Vec<DepthCounts>> {
    let moves = config.moves.moves();
    let start = Instant::now();
    let k = product::stored_depth(max_depth);
    let layers = Layers::build(space, &moves, k);
    let largest = |d: u32| {
        let a = d.min(k);
        layers.layers[a as usize].len() as u64 * layers.layers[(d - a) as usize].len() as u64
    };
    // Each thread holds one coset's products (8 bytes each, sorted in place) and the keys seen
    // so far; twice the average share of a coset allows for uneven cosets.
    let per_thread = 2 * 8 * 2 * largest(max_depth) / space.coset_count() as u64;
    let memory = layers.bytes() + per_thread * rayon::current_num_threads() as u64;
    tracing::info!(
        "stored P[0..={k}] ({} positions) in {:.1} s; about {:.2} GiB in all",
        thousands(layers.layers.iter().map(|l| l.len() as u64).sum::<u64>()),
        start.elapsed().as_secs_f64(),
        memory as f64 / (1u64 << 30) as f64
    );
    resources::check(memory, 0, None, config.mem_limit)?;
    let classes = product::coset_classes(space);
    let reps: Vec<u32> = (0..classes.class_count() as u32).map(|c| classes.rep(c)).collect();
    tracing::info!(
        "{} cosets of {} positions in {} classes under the 48 symmetries: one task each",
        thousands(space.coset_count() as u64),
        thousands((space.order() / space.coset_count() as u128) as u64),
        thousands(reps.len() as u64)
    );
    let reporter = Reporter::new(reps.len() as u64).with_unit("cosets");
    reporter.progress.depth.store(max_depth, Ordering::Relaxed);
    let results = std::thread::scope(|scope| {
        scope.spawn(|| reporter.display_loop());
        let results = product::enumerate_cosets(
            space,
            &layers,
            &classes,
            &reps,
            max_depth,
            Some(&reporter.progress.rows_done),
        );
        reporter.finish();
        results
    });
    let counts = product::merge(&classes, &results, max_depth);
    let seconds = start.elapsed().as_secs_f64();
    for (d, c) in counts.depths.iter().enumerate() {
        let ratio = counts.products[d] as f64 / counts.rep_positions[d].max(1) as f64;
        tracing::info!(
            "depth {d:>2}: {} positions; {} products for the {} positions of the representative cosets ({ratio:.2} per position)",
            thousands(c.positions),
            thousands(counts.products[d]),
            thousands(counts.rep_positions[d])
        );
    }
    tracing::info!("{} products in {seconds:.1} s", thousands(counts.products.iter().sum::<u64>()));
    Ok(counts.depths)
}
