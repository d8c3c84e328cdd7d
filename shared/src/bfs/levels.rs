//! The level loop of every row search, embedded ([`super::run`]) or on workers that own the
//! rows (the coordinator's `cluster::rows`): which direction each level takes, when the search
//! ends, and what is counted. How a level is made and kept is the caller's ([`LevelMaker`]).

use super::report::{level_report, BfsError, Direction, LevelReport, Progress};
use crate::report::DepthCounts;
use crate::space::RowCounts;
use std::sync::atomic::Ordering;
use std::time::Instant;

impl Direction {
    /// The direction of a level after depth 0: pull once fewer entries are unvisited than in
    /// the frontier times `pull_weight` (a pull costs at most unvisited x moves, a push frontier
    /// x moves, each entry's cost divided by the weight in a pull:
    /// [`crate::space::RowIndex::pull_weight`]).
    pub fn choose(unvisited: u64, frontier: u64, pull_weight: u64) -> Direction {
        if unvisited < frontier.saturating_mul(pull_weight) {
            Direction::Backward
        } else {
            Direction::Forward
        }
    }
}

/// Where a search stands after its last kept level (empty before depth 0).
#[derive(Clone, Debug, Default)]
pub struct Standing {
    /// The counts of every depth kept so far.
    pub depths: Vec<DepthCounts>,
    /// Entries of every depth kept so far.
    pub visited: u64,
    /// Entries of the last depth kept (the frontier).
    pub frontier: u64,
}

/// How one search makes and keeps its levels.
pub trait LevelMaker {
    type Error: From<BfsError>;
    /// Makes level `depth` in `direction` and returns its counts; it is not kept yet.
    fn make(&mut self, depth: u32, direction: Direction) -> Result<RowCounts, Self::Error>;
    /// Keeps the level just made, which has entries: makes it durable and hands it on.
    /// `visited` counts the entries of every depth to it.
    fn keep(&mut self, report: &LevelReport, visited: u64) -> Result<(), Self::Error>;
    /// The level just made has no entries: the search ends without keeping it.
    fn end(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

impl Standing {
    /// The level to make next and its direction, or `None` when the search is over: after the
    /// last kept level had no successor (its frontier is empty) or `max_depth` is kept. `total`
    /// is the index's entry count, `pull_weight` as in [`Direction::choose`].
    pub fn next(&self, total: u64, max_depth: Option<u32>, pull_weight: u64) -> Option<(u32, Direction)> {
        let depth = self.depths.len() as u32;
        if depth == 0 {
            return Some((0, Direction::Start));
        }
        (self.frontier > 0 && max_depth.is_none_or(|m| depth <= m))
            .then(|| (depth, Direction::choose(total - self.visited, self.frontier, pull_weight)))
    }

    /// Takes a level just made with entries; returns the entries of every depth to it.
    pub fn keep(&mut self, report: &LevelReport) -> u64 {
        self.visited += report.entries;
        self.frontier = report.entries;
        self.depths.push(report.counts);
        self.visited
    }
}

/// Makes and keeps levels after `standing` (from depth 0 when it is empty) until a level has
/// no entries or `max_depth` is kept; `total` is the index's entry count, `pull_weight` as in
/// [`Direction::choose`]. Returns the counts of every depth.
pub fn run_levels<M: LevelMaker>(
    maker: &mut M,
    total: u64,
    pull_weight: u64,
    mut standing: Standing,
    max_depth: Option<u32>,
    progress: &Progress,
) -> Result<Vec<DepthCounts>, M::Error> {
    while let Some((depth, direction)) = standing.next(total, max_depth, pull_weight) {
        let start = Instant::now();
        progress.depth.store(depth, Ordering::Relaxed);
        progress.rows_done.store(0, Ordering::Relaxed);
        let counts = maker.make(depth, direction)?;
        let mut report = level_report(counts, depth, direction)?;
        report.seconds = start.elapsed().as_secs_f64();
        if report.entries == 0 {
            maker.end()?;
            break;
        }
        let visited = standing.keep(&report);
        maker.keep(&report, visited)?;
    }
    Ok(standing.depths)
}
