//! `coordinator enumerate cube` and `enumerate edges --method product`: the product
//! enumeration of [`shared::product`], embedded on rayon or as coset tasks for workers, with
//! progress on stderr.
//!
//! A coset too big for one thread's share of memory is cut into parts (`shared::product::Part`),
//! one task each. The tasks run in [`CHUNKS`] chunks, one after the other; with `--state-dir`
//! each finished chunk's counters are journaled, and the same command run again after a kill
//! computes only the chunks still missing. `--sample-tasks N` runs N random tasks instead and
//! projects the whole job's cost from them.

use crate::cluster::with_cluster;
use crate::config::EnumerateConfig;
use crate::journal::RedbJournal;
use crate::progress::Reporter;
use crate::resources;
use anyhow::{anyhow, Context, Result};
use shared::product::{Part, ProductJob, ProductSpec};
use shared::report::thousands;
use shared::report::DepthCounts;
use shared::wire;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Chunks of tasks a job runs in (and journals) one after the other.
pub const CHUNKS: u32 = 8;

/// The task ranges of the chunks, in order.
fn chunk_ranges(tasks: u32) -> Vec<Range<u32>> {
    let per_chunk = tasks.div_ceil(CHUNKS).max(1);
    (0..tasks).step_by(per_chunk as usize).map(|a| a..(a + per_chunk).min(tasks)).collect()
}

/// Bytes a task holds per product pair of an average coset at its deepest level: the
/// products and the buffer they are sorted into (8 bytes each) and the keys seen at smaller
/// depths with the merge's spare, with room for cosets and parts larger than the average
/// (`--sample-tasks` measures the peak of real tasks: docs/product.md).
const BYTES_PER_PAIR: u64 = 32;

/// A product job ready to run: its stored positions, and its cosets cut into parts so that one
/// task fits the memory budget of a thread.
struct Prepared {
    job: ProductJob,
    /// Estimated bytes of one task.
    per_task: u64,
}

/// Stores P[0..=k], chooses the parts per coset and checks the memory.
fn prepare(spec: ProductSpec, config: &EnumerateConfig) -> Result<Prepared> {
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
    let pairs = first.len() as u64 * second.len() as u64 / space.coset_count() as u64;
    let threads = rayon::current_num_threads() as u64;
    let layers_bytes = layers.bytes();
    tracing::info!(
        "stored P[0..={k}] ({} positions, {}) and the coset classes in {:.1} s",
        thousands(layers.layers.iter().map(|l| l.len() as u64).sum::<u64>()),
        resources::gib(layers.bytes()),
        start.elapsed().as_secs_f64(),
    );
    // The fewest parts per coset whose tasks fit the memory left per thread: of --mem-limit,
    // else of 90 % of the machine's memory (not of what happens to be free, so that a resumed
    // job cuts its cosets as its journal did).
    let limit = config.mem_limit.or_else(|| resources::memory_total().map(|m| m / 10 * 9));
    let budget = limit.map(|l| l.saturating_sub(layers.bytes()) / threads);
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
                    resources::gib(layers.bytes()),
                )
            })?,
    };
    let job = job.with_parts(parts);
    resources::check_memory(layers_bytes + per_task(parts) * threads, config.mem_limit, "")?;
    let classes = &job.classes;
    let symmetric = (0..classes.class_count() as u32).filter(|&c| classes.stabilizer(c) != 1).count();
    tracing::info!(
        "{} cosets of {} positions in {} classes under the 48 symmetries ({symmetric} of them \
         self-symmetric), {parts} part(s) each: {} tasks of about {} each ({threads} at a time), \
         about {} products at depth {max_depth}",
        thousands(job.space().coset_count() as u64),
        thousands((job.space().order() / job.space().coset_count() as u128) as u64),
        thousands(classes.class_count() as u64),
        thousands(job.task_count() as u64),
        resources::gib(per_task(parts)),
        thousands(pairs * classes.class_count() as u64),
    );
    Ok(Prepared { job, per_task: per_task(parts) })
}

/// Runs the job and returns the space's order and the per-depth counts.
pub fn run(spec: ProductSpec, config: &EnumerateConfig) -> Result<(u128, Vec<DepthCounts>)> {
    let start = Instant::now();
    let Prepared { job, .. } = prepare(spec, config)?;
    let (space, max_depth) = (job.space(), spec.max_depth);
    let spec = job.spec;
    let journal = match &config.state_dir {
        Some(dir) => Some(RedbJournal::open(dir, &format!("{spec} chunks={CHUNKS}"))?.0),
        None => None,
    };
    let mut finished = journal.as_ref().map(RedbJournal::chunks).transpose()?.unwrap_or_default();
    let chunks = chunk_ranges(job.task_count());
    if !finished.is_empty() {
        tracing::info!("resuming: {} of {} chunks of tasks are in the journal", finished.len(), chunks.len());
    }
    let reporter = Reporter::new(job.task_count() as u64).with_unit("tasks");
    reporter.progress.depth.store(max_depth, Ordering::Relaxed);
    let done = &reporter.progress.rows_done;
    let cluster = &config.cluster;
    // Runs the chunks not yet finished, journaling each; `run` computes one chunk's counters
    // (given the chunk's index and its tasks).
    let mut run_chunks = |run: &mut dyn FnMut(u32, Range<u32>) -> Result<Vec<u64>>| -> Result<()> {
        for (i, range) in chunks.iter().enumerate() {
            done.store(range.start as u64, Ordering::Relaxed);
            if finished.contains_key(&(i as u32)) {
                continue;
            }
            let words = run(i as u32, range.clone())?;
            if let Some(journal) = &journal {
                journal.chunk_done(i as u32, &words)?;
                tracing::info!("chunk {} of {} (tasks {range:?}) done and journaled", i + 1, chunks.len());
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

/// One sampled task: what it found at the deepest level and what it cost.
#[derive(serde::Serialize)]
struct SampledTask {
    task: u32,
    coset: u32,
    part: u32,
    /// Cosets in the coset's class (its positions count this many times).
    weight: u64,
    positions: u64,
    products: u64,
    seconds: f64,
    /// Bytes the task needed at its peak.
    bytes: u64,
}

/// A projection from a sample: the sample's mean times the number of tasks, and the half-width
/// of its 95 % interval (normal approximation, with the finite-population correction).
#[derive(serde::Serialize)]
struct Projection {
    total: f64,
    error: f64,
}

impl Projection {
    fn of(values: &[f64], population: u64) -> Projection {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        let correction = (1.0 - n / population as f64).max(0.0);
        let total = mean * population as f64;
        Projection { total, error: 1.96 * population as f64 * (variance / n * correction).sqrt() }
    }
}

/// What `--sample-tasks` reports (and writes with `--json`).
#[derive(serde::Serialize)]
struct Sample {
    spec: String,
    threads: u64,
    tasks: u32,
    sampled: Vec<SampledTask>,
    stored_bytes: u64,
    estimated_task_bytes: u64,
    setup_seconds: f64,
    /// CPU seconds of all tasks (each task runs on one thread).
    task_seconds: Projection,
    /// Positions at the deepest level.
    positions: Projection,
    peak_rss_bytes: u64,
}

/// Runs `count` tasks of the job chosen at random (seeded, so the same command samples the
/// same tasks), each on one thread as in a whole run, and projects the whole job's task
/// time and deepest-level positions from them.
pub fn sample(spec: ProductSpec, config: &EnumerateConfig, count: u32) -> Result<()> {
    let start = Instant::now();
    let Prepared { job, per_task } = prepare(spec, config)?;
    let setup_seconds = start.elapsed().as_secs_f64();
    let total = job.task_count();
    anyhow::ensure!(
        (2..=total).contains(&count),
        "--sample-tasks {count}: the job has {total} tasks; sample between 2 and {total}"
    );
    // A partial Fisher-Yates shuffle, then in task order.
    let mut rng = shared::cube::SplitMix64::new(0x5a3b1e);
    let mut order: Vec<u32> = (0..total).collect();
    for i in 0..count as usize {
        let j = i + (rng.next_u64() % (total as u64 - i as u64)) as usize;
        order.swap(i, j);
    }
    let mut chosen = order[..count as usize].to_vec();
    chosen.sort_unstable();
    tracing::info!(
        "sampling {count} of {} tasks ({:.2} %)",
        thousands(total as u64),
        100.0 * count as f64 / total as f64
    );
    let reporter = Reporter::new(count as u64).with_unit("tasks");
    reporter.progress.depth.store(spec.max_depth, Ordering::Relaxed);
    let done = &reporter.progress.rows_done;
    let max_depth = spec.max_depth as usize;
    let sampled: Vec<SampledTask> = std::thread::scope(|scope| {
        scope.spawn(|| reporter.display_loop());
        use rayon::prelude::*;
        let sampled = chosen
            .par_iter()
            .with_max_len(1)
            .map(|&task| {
                let begun = Instant::now();
                let (counts, bytes) = job.run_task(task);
                let seconds = begun.elapsed().as_secs_f64();
                done.fetch_add(1, Ordering::Relaxed);
                let (coset, part) = job.task(task);
                let weight = job.classes.class_size(job.classes.class_of(coset)) as u64;
                let deepest = counts[max_depth];
                SampledTask {
                    task,
                    coset,
                    part: part.index,
                    weight,
                    positions: deepest.positions,
                    products: deepest.products,
                    seconds,
                    bytes,
                }
            })
            .collect();
        reporter.finish();
        sampled
    });
    let seconds: Vec<f64> = sampled.iter().map(|t| t.seconds).collect();
    let positions: Vec<f64> = sampled.iter().map(|t| (t.weight * t.positions) as f64).collect();
    let report = Sample {
        spec: job.spec.to_string(),
        threads: rayon::current_num_threads() as u64,
        tasks: total,
        stored_bytes: job.layers.bytes(),
        estimated_task_bytes: per_task,
        setup_seconds,
        task_seconds: Projection::of(&seconds, total as u64),
        positions: Projection::of(&positions, total as u64),
        peak_rss_bytes: crate::output::peak_rss_bytes(),
        sampled,
    };
    let max = |f: fn(&SampledTask) -> f64| report.sampled.iter().map(f).fold(0.0, f64::max);
    let min = |f: fn(&SampledTask) -> f64| report.sampled.iter().map(f).fold(f64::INFINITY, f64::min);
    println!("{}: {count} of {} tasks sampled", report.spec, thousands(total as u64));
    println!(
        "task time: {:.1} to {:.1} s; all {} tasks: {:.0} +- {:.0} CPU s ({:.1} +- {:.1} CPU hours, 95 %)",
        min(|t| t.seconds),
        max(|t| t.seconds),
        thousands(total as u64),
        report.task_seconds.total,
        report.task_seconds.error,
        report.task_seconds.total / 3600.0,
        report.task_seconds.error / 3600.0
    );
    println!(
        "task memory: up to {} measured ({} estimated up front); stored positions {}",
        resources::gib(max(|t| t.bytes as f64) as u64),
        resources::gib(per_task),
        resources::gib(report.stored_bytes)
    );
    println!(
        "depth {max_depth}: about {:.4e} +- {:.2e} positions (95 %)",
        report.positions.total, report.positions.error
    );
    if let Some(path) = &config.json {
        let out = crate::output::OutputFile::prepare(path)?;
        out.write(format!("{}\n", serde_json::to_string(&report)?).as_bytes())?;
        tracing::info!("wrote {}", out.path().display());
    }
    Ok(())
}
