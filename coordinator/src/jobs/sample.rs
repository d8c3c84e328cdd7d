//! `coordinator enumerate ... --sample-tasks N`: a product job too long to run here, measured
//! on a random sample of its tasks and projected, with error bars from the sample's spread.

use super::product::{prepare, Prepared};
use crate::config::EnumerateConfig;
use crate::progress::Reporter;
use crate::resources;
use anyhow::Result;
use rayon::prelude::*;
use shared::product::ProductSpec;
use shared::report::thousands;
use std::sync::atomic::Ordering;
use std::time::Instant;

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
pub fn run(spec: ProductSpec, config: &EnumerateConfig, count: u32) -> Result<()> {
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
    let sampled: Vec<SampledTask> = reporter.showing(|| {
        chosen
            .par_iter()
            .with_max_len(1)
            .map(|&task| {
                let begun = Instant::now();
                let (counts, bytes) = job.run_task(task);
                let seconds = begun.elapsed().as_secs_f64();
                done.fetch_add(1, Ordering::Relaxed);
                let (coset, part) = job.task(task);
                let weight = job.weight(coset);
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
            .collect()
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
