//! `coordinator enumerate`: runs an exact enumeration and prints (and optionally saves) the
//! distribution.

use crate::cli::{EnumerateArgs, Metric, Space};
use crate::output::{peak_rss_bytes, OutputFile};
use crate::progress::Reporter;
use crate::resources;
use anyhow::{ensure, Context, Result};
use shared::bfs::{self, BfsOptions, DepthCounts, KociembaSpace, RowIndex, RowSpace};
use shared::coord::{corner_tetrads, edge_slices, BlockLayout, Part};
use shared::cube::{Move, MoveSet, Pieces};
use shared::report::{thousands, Distribution};
use std::path::PathBuf;
use std::time::Instant;

/// A validated enumeration request.
#[derive(Debug, Clone)]
pub struct EnumerateConfig {
    pub space: Space,
    pub moves: MoveSet,
    pub max_depth: Option<u32>,
    pub json: Option<PathBuf>,
    /// Keep the search's bit arrays in files here instead of anonymous memory.
    pub state_dir: Option<PathBuf>,
    pub mem_limit: Option<u64>,
}

impl TryFrom<EnumerateArgs> for EnumerateConfig {
    type Error = anyhow::Error;

    fn try_from(a: EnumerateArgs) -> Result<Self> {
        let moves = match (a.space, a.metric) {
            (Space::H | Space::Hprime, Some(_)) => {
                anyhow::bail!("{} uses the 10 moves of H; --metric does not apply", a.space.name())
            }
            (Space::H | Space::Hprime, None) => MoveSet::KociembaH,
            (_, metric) => metric.unwrap_or(Metric::Htm).move_set(),
        };
        Ok(EnumerateConfig {
            space: a.space,
            moves,
            max_depth: a.max_depth,
            json: a.json,
            state_dir: a.state_dir,
            mem_limit: a.mem_limit,
        })
    }
}

impl Metric {
    pub fn move_set(self) -> MoveSet {
        match self {
            Metric::Htm => MoveSet::Htm,
            Metric::Qtm => MoveSet::Qtm,
        }
    }
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Corners => "corners",
            Space::Edges => "edges",
            Space::H => "h",
            Space::Hprime => "hprime",
        }
    }
}

/// Runs the enumeration, prints the table on stdout and progress on stderr.
pub fn run(config: EnumerateConfig) -> Result<()> {
    let json = config.json.as_deref().map(OutputFile::prepare).transpose()?;
    if let Some(dir) = &config.state_dir {
        ensure!(dir.is_dir(), "--state-dir {} is not a directory", dir.display());
    }
    let distribution = compute(&config)?;
    print!("{}", distribution.to_text());
    println!(
        "elapsed {:.2} s, peak RSS {:.1} MiB",
        distribution.elapsed_s,
        distribution.peak_rss_bytes as f64 / 1048576.0
    );
    if let Some(out) = json {
        let mut text = serde_json::to_string(&distribution)?;
        text.push('\n');
        out.write(text.as_bytes())?;
        eprintln!("wrote {}", out.path().display());
    }
    Ok(())
}

/// Computes the distribution of a space, reporting progress on stderr.
pub fn compute(config: &EnumerateConfig) -> Result<Distribution> {
    let start = Instant::now();
    let moves = config.moves.moves();
    let (order, depths) = match config.space {
        Space::Corners => run_rows(corner_tetrads(), &moves, config)?,
        Space::Edges => run_rows(edge_slices(), &moves, config)?,
        Space::H | Space::Hprime => {
            let space = KociembaSpace::new(config.space == Space::H);
            eprintln!("classes are counted under the 16 symmetries that preserve H");
            (space.order(), search(&space, &moves, config)?)
        }
    };
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
    Ok(distribution)
}

/// Builds the row space of a block layout (after checking the memory it will take) and runs
/// the search on it.
fn run_rows<const N: usize, const O: u8>(
    layout: BlockLayout<N, O>,
    moves: &[Move],
    config: &EnumerateConfig,
) -> Result<(u64, Vec<DepthCounts>)>
where
    Pieces<N, O>: Part,
{
    let start = Instant::now();
    let classes = RowSpace::build_classes(&layout);
    let rows = classes.class_count() as u64;
    let state = bfs::state_bytes(rows, layout.column_count() as u64);
    let index = RowSpace::<N, O>::memory_bytes(&classes);
    let (memory, disk) = if config.state_dir.is_some() { (index, state) } else { (index + state, 0) };
    eprintln!(
        "classes in {:.1} s; {} rows x {} columns: index {:.2} GiB, bit arrays {:.2} GiB{}",
        start.elapsed().as_secs_f64(),
        thousands(rows),
        thousands(layout.column_count() as u64),
        index as f64 / (1u64 << 30) as f64,
        state as f64 / (1u64 << 30) as f64,
        if config.state_dir.is_some() { " (on disk)" } else { "" }
    );
    resources::check(memory, disk, config.state_dir.as_deref(), config.mem_limit)?;
    let space = RowSpace::with_classes(layout, classes);
    eprintln!("index built in {:.1} s", start.elapsed().as_secs_f64());
    Ok((space.order(), search(&space, moves, config)?))
}

/// Runs the search with live progress on stderr.
fn search<I: RowIndex>(space: &I, moves: &[Move], config: &EnumerateConfig) -> Result<Vec<DepthCounts>> {
    let reporter = Reporter::new(space.row_count() as u64);
    let options = BfsOptions {
        max_depth: config.max_depth,
        state_dir: config.state_dir.clone(),
        progress: Some(&reporter.progress),
    };
    let depths = std::thread::scope(|scope| {
        scope.spawn(|| reporter.display_loop());
        let result = bfs::run(space, moves, &options, |level, _| reporter.level_done(level));
        reporter.finish();
        result
    })
    .context("cannot map the search state")?;
    Ok(depths)
}
