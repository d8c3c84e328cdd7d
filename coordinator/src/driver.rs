//! The search driver: runs a row search embedded or on workers, with the journal that lets a
//! killed search resume after its last finished level, and live progress on stderr.

use crate::cluster::search::{search, Durable, SearchRun};
use crate::cluster::{with_cluster, ClusterConfig};
use crate::journal::RedbJournal;
use crate::progress::Reporter;
use anyhow::Result;
use shared::bfs::task::Counting;
use shared::bfs::{self, BfsOptions, Direction, LevelReport};
use shared::cube::Move;
use shared::job::JobSpec;
use shared::report::DepthCounts;
use shared::space::RowIndex;
use std::path::PathBuf;

/// What a search needs besides its index: the job's name for workers, limits and placement.
pub struct SearchSettings {
    pub job: JobSpec,
    pub max_depth: Option<u32>,
    pub state_dir: Option<PathBuf>,
    pub cluster: ClusterConfig,
    /// Count entries and positions only, not classes (for table builds).
    pub positions_only: bool,
    /// `on_level` reads each level's entries (a table build; an enumeration only counts).
    pub level_bits: bool,
}

/// Runs a search embedded or distributed, with live progress on stderr, calling `on_level` with
/// each level's report and entries. On resume, the levels restored from the journal come first,
/// with no entries (their bits are gone) except the last, which comes with its entries (see
/// [`bfs::run`] and [`search`]).
pub fn search_levels<I: RowIndex>(
    space: &I,
    moves: &[Move],
    config: &SearchSettings,
    mut on_level: impl FnMut(&LevelReport, &[u64]),
) -> Result<Vec<DepthCounts>> {
    let reporter = Reporter::new(space.row_count() as u64);
    let journal = match &config.state_dir {
        Some(dir) => {
            // A search on workers keeps its levels as parts, an embedded one as bit arrays: a
            // state directory resumes in the way that wrote it.
            let layout = if config.cluster.distributed() { " (on workers: parts)" } else { "" };
            let identity =
                format!("{} rows={} columns={}{layout}", config.job, space.row_count(), space.column_count());
            Some(RedbJournal::open(dir, &identity)?)
        }
        None => None,
    };
    let finished = journal.as_ref().map(|j| j.1.clone()).unwrap_or_default();
    if let (Some(last), Some(dir)) = (finished.last(), &config.state_dir) {
        tracing::info!("resuming after depth {} from the journal in {}", last.counts.depth, dir.display());
        for r in &finished[..finished.len() - 1] {
            let report = LevelReport {
                counts: r.counts,
                entries: r.entries,
                direction: Direction::Start,
                seconds: 0.0,
            };
            reporter.level_done(&report);
            on_level(&report, &[]);
        }
    }
    let options = BfsOptions {
        max_depth: config.max_depth,
        state_dir: config.state_dir.clone(),
        progress: Some(&reporter.progress),
        journal: journal.as_ref().map(|j| &j.0 as &dyn shared::bfs::Journal),
        resume: finished.last().copied(),
        resumed_counts: finished.iter().map(|r| r.counts).collect(),
        positions_only: config.positions_only,
    };
    let distributed = config.cluster.distributed();
    let depths = std::thread::scope(|scope| {
        scope.spawn(|| reporter.display_loop());
        let result = if distributed {
            run_distributed(space, moves, config, &options, &reporter, &mut on_level)
        } else {
            bfs::run(space, moves, &options, |level, bits| {
                reporter.level_done(level);
                on_level(level, bits);
            })
            .map_err(|e| anyhow::anyhow!(e))
        };
        reporter.finish();
        result
    })?;
    Ok(depths)
}

/// Runs a search on workers (see [`search`]) inside [`with_cluster`].
fn run_distributed<I: RowIndex>(
    space: &I,
    _moves: &[Move],
    config: &SearchSettings,
    options: &BfsOptions,
    reporter: &Reporter,
    on_level: &mut impl FnMut(&LevelReport, &[u64]),
) -> Result<Vec<DepthCounts>> {
    let durable = match (&config.state_dir, options.journal) {
        (Some(dir), Some(journal)) => Some(Durable {
            parts: dir.join("parts"),
            journal,
            resume: options.resume.map(|last| (last, options.resumed_counts.clone())),
        }),
        _ => None,
    };
    let counting = if options.positions_only { Counting::Positions } else { Counting::Classes };
    let run = SearchRun {
        max_depth: options.max_depth,
        counting,
        progress: &reporter.progress,
        level_bits: config.level_bits,
        durable,
    };
    with_cluster(&config.cluster, config.job.to_string(), reporter, |shared| {
        search(shared, space, &run, |level, bits| {
            reporter.level_done(level);
            on_level(level, bits);
            let (out, inn) = shared.traffic();
            tracing::info!(
                "traffic so far (compressed): {:.1} MiB to workers, {:.1} MiB from workers",
                out as f64 / 1048576.0,
                inn as f64 / 1048576.0
            );
        })
    })
}
