//! `coordinator enumerate cube` and `enumerate edges --method product`: the product
//! enumeration of [`shared::product`], embedded on rayon or as coset tasks for workers, with
//! progress on stderr.
//!
//! A coset too big for one thread's share of memory is cut into parts (`shared::product::Part`),
//! one task each. The tasks run in chunks (at least 8, of at most 128 tasks), one after the
//! other; with `--state-dir` each finished chunk's counters are journaled, and the same command
//! run again after a kill computes only the chunks still missing. (`--sample-tasks` runs a
//! sample of the tasks instead: [`super::sample`].)

use super::chunks::Chunks;
use crate::cluster::{with_cluster, CosetWords, Traffic};
use crate::config::EnumerateConfig;
use crate::progress::Reporter;
use crate::resources;
use anyhow::{Context, Result};
use shared::product::{Part, ProductJob, ProductSpec};
use shared::report::thousands;
use shared::report::DepthCounts;
use shared::wire;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Chunks of tasks a job runs in (and journals) one after the other: at least this many...
const MIN_CHUNKS: u32 = 8;
/// ...and no more tasks than this in one, so that a kill loses little of a long job (at HTM
/// depth 12, 128 tasks are about 5 minutes on 2 cores).
const MAX_TASKS_PER_CHUNK: u32 = 128;

/// The task ranges of the chunks, in order.
fn chunk_ranges(tasks: u32) -> Vec<Range<u32>> {
    let chunks = tasks.div_ceil(MAX_TASKS_PER_CHUNK).max(MIN_CHUNKS);
    let per_chunk = tasks.div_ceil(chunks).max(1);
    (0..tasks).step_by(per_chunk as usize).map(|a| a..(a + per_chunk).min(tasks)).collect()
}

/// Bytes a task holds per product pair of an average coset at its deepest level: the
/// products and the buffer they are sorted into (8 bytes each) and the keys seen at smaller
/// depths with the merge's spare, with room for cosets and parts larger than the average
/// (`--sample-tasks` measures the peak of real tasks: docs/product.md).
const BYTES_PER_PAIR: u64 = 32;

/// A product job ready to run: its stored positions, and its cosets cut into parts so that one
/// task fits the memory budget of a thread.
pub(super) struct Prepared {
    pub job: ProductJob,
    /// Estimated bytes of one task.
    pub per_task: u64,
}

/// Stores P[0..=k], chooses the parts per coset and checks the memory.
pub(super) fn prepare(spec: ProductSpec, config: &EnumerateConfig) -> Result<Prepared> {
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
    let pairs = layers.pairs_per_coset(max_depth, space.coset_count());
    let threads = rayon::current_num_threads() as u64;
    let layers_bytes = layers.bytes();
    tracing::info!(
        "stored P[0..={k}] ({} positions, {}) and the coset classes in {:.1} s",
        thousands(layers.layers.iter().map(|l| l.len() as u64).sum::<u64>()),
        resources::gib(layers_bytes),
        start.elapsed().as_secs_f64(),
    );
    // The fewest parts per coset whose tasks fit the memory left per thread: of --mem-limit,
    // else of 90 % of the machine's memory (not of what happens to be free, so that a resumed
    // job cuts its cosets as its journal did).
    let limit = config.mem_limit.or_else(|| resources::memory_total().map(|m| m / 10 * 9));
    let budget = limit.map(|l| l.saturating_sub(layers_bytes) / threads);
    let per_task = |parts: u32| BYTES_PER_PAIR * pairs / parts as u64;
    let parts = match budget {
        None => 1,
        // Divisors of 12 only, so that every part holds as many places of cubie 0.
        Some(budget) => (1..=Part::MAX_COUNT)
            .filter(|p| Part::MAX_COUNT.is_multiple_of(*p))
            .find(|&p| per_task(p) <= budget)
            .with_context(|| {
                format!(
                    "depth {max_depth} needs about {} per task even with each coset cut into {} parts, \
                     but {} of memory{} leaves {} per thread for {threads} threads after the {} of \
                     stored positions (fewer --threads or more memory)",
                    resources::gib(per_task(Part::MAX_COUNT)),
                    Part::MAX_COUNT,
                    resources::gib(limit.unwrap_or(0)),
                    if config.mem_limit.is_some() { " (--mem-limit)" } else { " (90 % of this machine's)" },
                    resources::gib(budget),
                    resources::gib(layers_bytes),
                )
            })?,
    };
    let job = job.with_parts(parts);
    resources::check_memory(layers_bytes + per_task(parts) * threads, config.mem_limit, "")?;
    let classes = &job.classes;
    let symmetric = (0..classes.class_count() as u32).filter(|&c| classes.stabilizer(c) != 1).count();
    tracing::info!(
        "{} cosets of {} positions in {} classes under the 48 symmetries ({symmetric} of them \
         self-symmetric), {} enumerated (the others are their inverses), {parts} part(s) each: {} \
         tasks of about {} each ({threads} at a time), about {} products at depth {max_depth}",
        thousands(job.space().coset_count() as u64),
        thousands((job.space().order() / job.space().coset_count() as u128) as u64),
        thousands(classes.class_count() as u64),
        thousands(job.reps.len() as u64),
        thousands(job.task_count() as u64),
        resources::gib(per_task(parts)),
        thousands(pairs * job.reps.len() as u64),
    );
    Ok(Prepared { job, per_task: per_task(parts) })
}

/// Runs the job and returns the space's order, the per-depth counts and, on workers, what the
/// job moved.
pub fn run(spec: ProductSpec, config: &EnumerateConfig) -> Result<(u128, Vec<DepthCounts>, Option<Traffic>)> {
    let start = Instant::now();
    let Prepared { job, .. } = prepare(spec, config)?;
    let (space, max_depth) = (job.space(), spec.max_depth);
    let spec = job.spec;
    let chunks = chunk_ranges(job.task_count());
    // The task count names the task list (it shrank when inverse classes were paired), so a
    // journal of another numbering is refused rather than misread.
    let identity = format!("{spec} tasks={} chunks={}", job.task_count(), chunks.len());
    let mut chunks = Chunks::open(chunks, config.state_dir.as_deref(), &identity, "tasks")?;
    let reporter = Reporter::new(job.task_count() as u64).with_unit("tasks");
    reporter.progress.depth.store(max_depth, Ordering::Relaxed);
    let done = &reporter.progress.rows_done;
    let cluster = &config.cluster;
    let traffic = reporter.showing(|| {
        if cluster.distributed() {
            with_cluster(cluster, spec.to_string(), &reporter, |hub| {
                // Each chunk is a level of its own, named by the chunk's index.
                chunks.run(&reporter, &mut |chunk, range| {
                    Ok(hub.run_cosets(
                        chunk,
                        range,
                        CosetWords::Exactly(wire::product::words_per_task(&job)),
                        0,
                        done,
                    )?)
                })?;
                Ok(Some(hub.traffic()))
            })
        } else {
            chunks
                .run(&reporter, &mut |_, range| Ok(wire::product::encode_counts(&job.run(range, Some(done)))))
                .map(|()| None)
        }
    })?;
    let words = chunks.into_words();
    let counts = job.merge(&wire::product::decode_counts(&job, 0..job.task_count(), &words)?);
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
    Ok((space.order(), counts.depths, traffic))
}
