//! `coordinator enumerate`: runs an exact enumeration and prints (and optionally saves) the
//! distribution.

use crate::cluster::Traffic;
use crate::config::{EnumerateConfig, Method};
use crate::driver::{search_levels, SearchSettings, Searched};
use crate::output::{peak_rss_bytes, OutputFile};
use crate::resources;
use anyhow::{ensure, Result};
use shared::bfs;
use shared::coord::{corner_tetrads, edge_slices, BlockLayout, Part};
use shared::cube::{Move, Pieces};
use shared::job::{JobSpec, RowJob};
use shared::product::ProductSpec;
use shared::report::{thousands, DepthCounts, Distribution};
use shared::space::{KociembaSpace, RowIndex, RowSpace, Space, Transitions};
use std::time::Instant;

/// Runs the enumeration, prints the table on stdout and progress on stderr.
pub fn run(config: EnumerateConfig) -> Result<()> {
    let json = config.json.as_deref().map(OutputFile::prepare).transpose()?;
    if let Some(dir) = &config.state_dir {
        ensure!(dir.is_dir(), "--state-dir {} is not a directory", dir.display());
    }
    if let Some(count) = config.sample_tasks {
        return super::sample::run(product_spec(&config), &config, count);
    }
    let (distribution, traffic) = compute(&config)?;
    print!("{}", distribution.to_text());
    println!(
        "elapsed {:.2} s, peak RSS {:.1} MiB",
        distribution.elapsed_s,
        distribution.peak_rss_bytes as f64 / 1048576.0
    );
    if let Some(t) = &traffic {
        let received: u64 = t.workers.iter().map(|w| w.received_bytes).sum();
        println!(
            "traffic: {} through the coordinator, {} received by {} workers",
            resources::gib(t.through_coordinator_bytes),
            resources::gib(received),
            t.workers.len()
        );
    }
    if let Some(out) = json {
        let mut text =
            serde_json::to_string(&WithTraffic { distribution: &distribution, traffic: traffic.as_ref() })?;
        text.push('\n');
        out.write(text.as_bytes())?;
        tracing::info!("wrote {}", out.path().display());
    }
    Ok(())
}

/// The JSON of `--json`: the distribution, and on workers what the job moved.
#[derive(serde::Serialize)]
struct WithTraffic<'a> {
    #[serde(flatten)]
    distribution: &'a Distribution,
    #[serde(skip_serializing_if = "Option::is_none")]
    traffic: Option<&'a Traffic>,
}

/// Computes the distribution of a space, reporting progress on stderr; on workers, also what
/// the job moved.
pub fn compute(config: &EnumerateConfig) -> Result<(Distribution, Option<Traffic>)> {
    let start = Instant::now();
    let moves = config.moves.moves();
    let (order, mut depths, traffic) = match (config.space, config.method) {
        (Space::Cube, _) | (Space::Edges, Method::Product) => {
            super::product::run(product_spec(config), config)?
        }
        (Space::Corners, _) => run_rows(corner_tetrads(), &moves, config)?,
        (Space::Edges, Method::Rows) => run_rows(edge_slices(), &moves, config)?,
        (Space::H | Space::Hprime, _) => {
            let space = KociembaSpace::new(config.space == Space::H);
            tracing::info!("classes are counted under the 16 symmetries that preserve H");
            let searched = search(&space, &moves, config)?;
            (space.order() as u128, searched.depths, searched.traffic)
        }
        (other, _) => anyhow::bail!("{other} is not one of the spaces enumerate counts"),
    };
    // A resumed job's journal may reach deeper than this run's --max-depth.
    if let Some(m) = config.max_depth {
        depths.truncate(m as usize + 1);
    }
    let distribution = Distribution {
        space: config.space.name().to_string(),
        metric: config.moves.name().to_string(),
        order,
        depths,
        elapsed_s: start.elapsed().as_secs_f64(),
        peak_rss_bytes: peak_rss_bytes(),
    };
    if config.max_depth.is_none() {
        ensure!(
            distribution.is_complete(),
            "internal check failed: positions sum to {} but the space has {}",
            distribution.total_positions(),
            order
        );
    }
    Ok((distribution, traffic))
}

/// The product job of a configuration using the product method.
fn product_spec(config: &EnumerateConfig) -> ProductSpec {
    let max_depth = config.max_depth.expect("the product method has a --max-depth");
    ProductSpec::new(config.space, config.moves, max_depth)
}

/// Builds the row space of a block layout (after checking the memory it will take) and runs
/// the search on it.
fn run_rows<const N: usize, const O: u8>(
    layout: BlockLayout<N, O>,
    moves: &[Move],
    config: &EnumerateConfig,
) -> Result<(u128, Vec<DepthCounts>, Option<Traffic>)>
where
    Pieces<N, O>: Part,
{
    let start = Instant::now();
    let classes = RowSpace::build_classes(&layout);
    let rows = classes.class_count() as u64;
    // With workers, this process expands no row and holds no bit array: it closes and counts
    // level 0 and schedules the rest (see `cluster::search`), so it needs no transitions either
    // (the workers build their own index).
    let distributed = config.cluster.distributed();
    let state = if distributed { 0 } else { bfs::state_bytes(rows, layout.column_count() as u64) };
    let transitions = if distributed { Transitions::Skip } else { Transitions::Probe };
    let index = RowSpace::<N, O>::memory_bytes(&classes, transitions);
    let (memory, disk) = if config.state_dir.is_some() { (index, state) } else { (index + state, 0) };
    tracing::info!(
        "classes in {:.1} s; {} rows x {} columns: index {:.2} GiB, {}",
        start.elapsed().as_secs_f64(),
        thousands(rows),
        thousands(layout.column_count() as u64),
        index as f64 / (1u64 << 30) as f64,
        match (distributed, config.state_dir.is_some()) {
            (true, _) => "no bit arrays (the levels stay with the workers, as parts)".to_string(),
            (false, on_disk) => format!(
                "bit arrays {:.2} GiB{}",
                state as f64 / (1u64 << 30) as f64,
                if on_disk { " (on disk)" } else { "" }
            ),
        }
    );
    resources::check(memory, disk, config.state_dir.as_deref(), config.mem_limit)?;
    let mut space = RowSpace::with_classes(layout, classes, transitions);
    if distributed {
        // It counts and expands nothing: the workers do (and hold their own index).
        space.shrink();
    }
    tracing::info!("index built in {:.1} s", start.elapsed().as_secs_f64());
    let searched = search(&space, moves, config)?;
    Ok((space.order() as u128, searched.depths, searched.traffic))
}

/// Runs the search with live progress on stderr.
fn search<I: RowIndex>(space: &I, moves: &[Move], config: &EnumerateConfig) -> Result<Searched> {
    let settings = SearchSettings {
        job: JobSpec::Rows(RowJob { space: config.space, moves: config.moves }),
        max_depth: config.max_depth,
        state_dir: config.state_dir.clone(),
        cluster: config.cluster.clone(),
        positions_only: false,
        level_bits: false,
    };
    search_levels(space, moves, &settings, |_, _| {})
}
