//! The search driver: runs a row search embedded or on workers, with the journal that lets a
//! killed search resume after its last finished level, and live progress on stderr.

use crate::cluster::rows::{self, Durable, SearchRun};
use crate::cluster::{with_cluster, ClusterConfig, Traffic};
use crate::journal::RedbJournal;
use crate::progress::Reporter;
use anyhow::Result;
use shared::bfs::task::Counting;
use shared::bfs::{self, BfsOptions, Direction, LevelReport};
use shared::cube::Move;
use shared::job::{AnyIndex, IndexVisitor, RowJob};
use shared::report::DepthCounts;
use shared::space::RowIndex;
use shared::units::gib;
use std::path::PathBuf;
use std::sync::Arc;

/// What a search needs besides its index: the job's name for workers, limits and placement.
pub struct SearchSettings {
    pub job: RowJob,
    pub max_depth: Option<u32>,
    pub state_dir: Option<PathBuf>,
    pub cluster: ClusterConfig,
    /// Count entries and positions only, not classes (for table builds).
    pub positions_only: bool,
    /// `on_level` reads each level's entries (a table build; an enumeration only counts).
    pub level_bits: bool,
    /// The index packed for workers where the caller has it already (read from
    /// `--index-dir`); else it is packed here when workers receive it.
    pub packed_index: Option<Arc<[u8]>>,
}

/// What a search found: every depth's counts and, on workers, what it moved.
pub struct Searched {
    pub depths: Vec<DepthCounts>,
    pub traffic: Option<Traffic>,
}

/// Runs a search embedded or distributed, with live progress on stderr, calling `on_level` with
/// each level's report and entries. On resume, the levels restored from the journal come first,
/// with no entries (their bits are gone) except the last, which comes with its entries (see
/// [`bfs::run`] and [`search`]).
pub fn search_levels(
    index: &AnyIndex,
    config: &SearchSettings,
    on_level: impl FnMut(&LevelReport, &[u64]),
) -> Result<Searched> {
    /// The search on the index as its own type.
    struct Levels<'a, F> {
        config: &'a SearchSettings,
        index_bytes: Option<&'a Arc<[u8]>>,
        on_level: F,
    }
    impl<F: FnMut(&LevelReport, &[u64])> IndexVisitor for Levels<'_, F> {
        type Output = Result<Searched>;
        fn visit<I: RowIndex>(self, index: &I) -> Result<Searched> {
            search_on(index, &self.config.job.moves.moves(), self.config, self.index_bytes, self.on_level)
        }
    }
    // Workers receive the index instead of building it where it takes seconds to build.
    let packed = match &config.packed_index {
        Some(packed) => Some(packed.clone()),
        None if config.cluster.distributed() => {
            let start = std::time::Instant::now();
            let packed = shared::index_file::pack(index).map(Arc::<[u8]>::from);
            if let Some(p) = &packed {
                tracing::info!(
                    "the index ({}) packed for the workers in {:.1} s",
                    gib(p.len() as u64),
                    start.elapsed().as_secs_f64()
                );
            }
            packed
        }
        None => None,
    };
    index.visit(Levels { config, index_bytes: packed.as_ref(), on_level })
}

fn search_on<I: RowIndex>(
    space: &I,
    moves: &[Move],
    config: &SearchSettings,
    index_bytes: Option<&Arc<[u8]>>,
    mut on_level: impl FnMut(&LevelReport, &[u64]),
) -> Result<Searched> {
    let reporter = Reporter::new(space.row_count() as u64);
    let journal = match &config.state_dir {
        Some(dir) => {
            // A search on workers keeps its levels with them, an embedded one as bit arrays
            // here: a state directory resumes in the way that wrote it.
            let layout = if config.cluster.distributed() { " (rows owned by workers)" } else { "" };
            let identity = format!(
                "{} rows={} columns={} numbering={}{layout}",
                config.job,
                space.row_count(),
                space.column_count(),
                shared::space::ROW_NUMBERING
            );
            Some(RedbJournal::open(dir, &identity)?)
        }
        None => None,
    };
    let finished = journal.as_ref().map(|j| j.1.clone()).unwrap_or_default();
    if let (Some(last), Some(dir)) = (finished.last(), &config.state_dir) {
        tracing::info!("resuming after depth {} from the journal in {}", last.counts.depth, dir.display());
        // The engine delivers the last level again, with its entries; a search on workers
        // delivers none (a table build's consumer has every journaled level already).
        let restored = if config.cluster.distributed() { finished.len() } else { finished.len() - 1 };
        for r in &finished[..restored] {
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
    reporter.showing(|| {
        if distributed {
            run_distributed(
                (space, index_bytes),
                moves,
                config,
                &options,
                journal.as_ref().map(|j| &j.0),
                &reporter,
                &mut on_level,
            )
        } else {
            bfs::run(space, moves, &options, |level, bits| {
                reporter.level_done(level);
                on_level(level, bits);
            })
            .map(|depths| Searched { depths, traffic: None })
            .map_err(anyhow::Error::from)
        }
    })
}

/// Runs a search on workers that own the rows (see [`rows::search`]) inside [`with_cluster`].
fn run_distributed<I: RowIndex>(
    (space, index_bytes): (&I, Option<&Arc<[u8]>>),
    moves: &[Move],
    config: &SearchSettings,
    options: &BfsOptions,
    journal: Option<&RedbJournal>,
    reporter: &Reporter,
    on_level: &mut impl FnMut(&LevelReport, &[u64]),
) -> Result<Searched> {
    let durable = journal.map(|journal| Durable {
        journal,
        resume: options.resume.map(|last| (last, options.resumed_counts.clone())),
    });
    let counting = if options.positions_only { Counting::Positions } else { Counting::Classes };
    let run = SearchRun {
        spec: config.job.to_string(),
        moves: moves.len(),
        max_depth: options.max_depth,
        counting,
        progress: &reporter.progress,
        level_bits: config.level_bits,
        min_workers: config.cluster.min_workers as usize,
        index: index_bytes,
        durable,
    };
    let (result, traffic) = with_cluster(&config.cluster, config.job.to_string(), reporter, |hub| {
        let result = rows::search(hub, space, &run, |level, bits, (sent, received)| {
            reporter.level_done(level);
            on_level(level, bits);
            tracing::info!(
                "depth {}: workers exchanged {} ({} sent, {} received)",
                level.counts.depth,
                gib(sent.max(received)),
                gib(sent),
                gib(received)
            );
        });
        Ok((result, hub.traffic()))
    })?;
    Ok(Searched { depths: result?, traffic: Some(traffic) })
}
