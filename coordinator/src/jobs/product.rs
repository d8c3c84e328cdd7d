//! `coordinator enumerate cube` and `enumerate edges --method product`: the product
//! enumeration of [`shared::product`], embedded on rayon or as coset tasks for workers, with
//! progress on stderr.
//!
//! The representative cosets run in [`CHUNKS`] chunks, one after the other; with `--state-dir`
//! each finished chunk's counters are journaled, and the same command run again after a kill
//! computes only the chunks still missing.

use crate::cluster::with_cluster;
use crate::config::EnumerateConfig;
use crate::journal::RedbJournal;
use crate::progress::Reporter;
use crate::resources;
use anyhow::{anyhow, Context, Result};
use shared::product::{ProductJob, ProductSpec};
use shared::report::thousands;
use shared::report::DepthCounts;
use shared::wire;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Chunks of representative cosets a job runs in (and journals) one after the other.
pub const CHUNKS: u32 = 8;

/// The task ranges of the chunks, in order.
fn chunk_ranges(tasks: u32) -> Vec<Range<u32>> {
    let per_chunk = tasks.div_ceil(CHUNKS).max(1);
    (0..tasks).step_by(per_chunk as usize).map(|a| a..(a + per_chunk).min(tasks)).collect()
}

/// Runs the job and returns the space's order and the per-depth counts.
pub fn run(spec: ProductSpec, config: &EnumerateConfig) -> Result<(u128, Vec<DepthCounts>)> {
    let start = Instant::now();
    // Before storing P[0..=k]: words of length k that never undo their last move bound its
    // size (moves x (moves - 1)^(k - 1) positions at depth k, 80 bytes each, plus the
    // expansion of depth k - 1 at 40 bytes a position).
    let moves = spec.moves.moves().len() as u64;
    let k = shared::product::stored_depth(spec.max_depth);
    let widest = (1..k).fold(moves, |n, _| n.saturating_mul(moves - 1));
    let stored = widest.saturating_mul(80).saturating_add((widest / (moves - 1)).saturating_mul(moves * 40));
    resources::check_memory(stored, config.mem_limit, "").with_context(|| {
        format!("storing the positions up to depth {k} for --max-depth {}", spec.max_depth)
    })?;
    let job = ProductJob::build(spec);
    let (layers, space, max_depth) = (&job.layers, job.space(), spec.max_depth);
    let (first, second) = layers.split(max_depth);
    // Each thread holds one coset's products twice (8 bytes each, and the buffer they are
    // sorted into) and the keys seen so far; twice the average share of a coset allows for
    // uneven cosets.
    let per_thread = 2 * 8 * 3 * (first.len() as u64 * second.len() as u64) / space.coset_count() as u64;
    let memory = layers.bytes() + per_thread * rayon::current_num_threads() as u64;
    tracing::info!(
        "stored P[0..={k}] ({} positions) and the coset classes in {:.1} s; about {:.2} GiB in all",
        thousands(layers.layers.iter().map(|l| l.len() as u64).sum::<u64>()),
        start.elapsed().as_secs_f64(),
        memory as f64 / (1u64 << 30) as f64
    );
    resources::check_memory(memory, config.mem_limit, "")?;
    let classes = &job.classes;
    let symmetric = (0..classes.class_count() as u32).filter(|&c| classes.stabilizer(c) != 1).count();
    tracing::info!(
        "{} cosets of {} positions in {} classes under the 48 symmetries ({symmetric} of them \
         self-symmetric): one task each",
        thousands(space.coset_count() as u64),
        thousands((space.order() / space.coset_count() as u128) as u64),
        thousands(job.task_count() as u64)
    );
    let journal = match &config.state_dir {
        Some(dir) => Some(RedbJournal::open(dir, &format!("{spec} chunks={CHUNKS}"))?.0),
        None => None,
    };
    let mut finished = journal.as_ref().map(RedbJournal::chunks).transpose()?.unwrap_or_default();
    let chunks = chunk_ranges(job.task_count());
    if !finished.is_empty() {
        tracing::info!(
            "resuming: {} of {} chunks of cosets are in the journal",
            finished.len(),
            chunks.len()
        );
    }
    let reporter = Reporter::new(job.task_count() as u64).with_unit("cosets");
    reporter.progress.depth.store(max_depth, Ordering::Relaxed);
    let done = &reporter.progress.rows_done;
    let cluster = &config.cluster;
    // Runs the chunks not yet finished, journaling each; `run` computes one chunk's counters
    // (given the chunk's index and its cosets).
    let mut run_chunks = |run: &mut dyn FnMut(u32, Range<u32>) -> Result<Vec<u64>>| -> Result<()> {
        for (i, range) in chunks.iter().enumerate() {
            done.store(range.start as u64, Ordering::Relaxed);
            if finished.contains_key(&(i as u32)) {
                continue;
            }
            let words = run(i as u32, range.clone())?;
            if let Some(journal) = &journal {
                journal.chunk_done(i as u32, &words)?;
                tracing::info!("chunk {} of {} (cosets {range:?}) done and journaled", i + 1, chunks.len());
            }
            finished.insert(i as u32, words);
        }
        Ok(())
    };
    std::thread::scope(|scope| {
        scope.spawn(|| reporter.display_loop());
        let result = if cluster.distributed() {
            with_cluster(cluster, spec.to_string(), &reporter, |shared| {
                // Each chunk is a level of its own, named by the chunk's index.
                run_chunks(&mut |chunk, range| {
                    shared
                        .run_cosets(chunk, range, wire::product::words_per_task(&job), done)
                        .map_err(|e| anyhow!(e))
                })?;
                let (out, inn) = shared.traffic();
                tracing::info!("traffic: {out} bytes of inputs to workers, {inn} bytes of results back");
                Ok(())
            })
        } else {
            run_chunks(&mut |_, range| Ok(wire::product::encode_counts(&job.run(range, Some(done)))))
        };
        reporter.finish();
        result
    })?;
    let words: Vec<u64> = finished.into_values().flatten().collect();
    let counts =
        job.merge(&wire::product::decode_counts(&job, 0..job.task_count(), &words).map_err(|e| anyhow!(e))?);
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
    Ok((space.order(), counts.depths))
}
