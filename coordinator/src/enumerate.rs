//! `coordinator enumerate`: runs an exact enumeration and prints (and optionally saves) the
//! distribution.

use crate::cli::{EnumerateArgs, Metric, Space};
use crate::output::{peak_rss_bytes, OutputFile};
use anyhow::{ensure, Result};
use shared::bfs::{self, LevelReport, RowSpace};
use shared::coord::corner_tetrads;
use shared::cube::MoveSet;
use shared::report::{thousands, Distribution};
use std::path::PathBuf;
use std::time::Instant;

/// A validated enumeration request.
#[derive(Debug, Clone)]
pub struct EnumerateConfig {
    pub space: Space,
    pub metric: Metric,
    pub max_depth: Option<u32>,
    pub json: Option<PathBuf>,
}

impl From<EnumerateArgs> for EnumerateConfig {
    fn from(a: EnumerateArgs) -> Self {
        EnumerateConfig { space: a.space, metric: a.metric, max_depth: a.max_depth, json: a.json }
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
        }
    }
}

/// Runs the enumeration, prints the table on stdout and per-level progress on stderr.
pub fn run(config: EnumerateConfig) -> Result<()> {
    let json = config.json.as_deref().map(OutputFile::prepare).transpose()?;
    let distribution = compute(&config, |level| {
        let c = &level.counts;
        eprintln!(
            "depth {:>2}: {:>20} positions {:>16} classes  ({}, {:.2} s)",
            c.depth,
            thousands(c.positions),
            thousands(c.classes_sym),
            level.direction,
            level.seconds
        );
    })?;
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

/// Computes the distribution of a space; `on_level` sees each depth as it completes.
pub fn compute(config: &EnumerateConfig, on_level: impl FnMut(&LevelReport)) -> Result<Distribution> {
    let start = Instant::now();
    let (order, depths) = match config.space {
        Space::Corners => {
            let space = RowSpace::new(corner_tetrads(), config.metric.move_set().moves());
            let order = space.layout().row_count() as u64 * space.column_count() as u64;
            (
                order,
                bfs::run(
                    &space,
                    &bfs::BfsOptions { max_depth: config.max_depth, ..Default::default() },
                    on_level,
                )?,
            )
        }
    };
    let distribution = Distribution {
        space: config.space.name().to_string(),
        metric: config.metric.move_set().name().to_string(),
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
