//! What a level reports and how a search stops, whichever way its levels are made (the engine
//! of this process, or workers that own the rows): the level's direction and counts, the
//! progress counters, the errors.

use crate::report::DepthCounts;
use crate::space::RowCounts;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// How a level was computed, for progress display and benchmarks.
#[derive(Clone, Copy, Debug)]
pub struct LevelReport {
    pub counts: DepthCounts,
    /// Entries (row, column) set at this depth.
    pub entries: u64,
    pub direction: Direction,
    pub seconds: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Start,
    Forward,
    Backward,
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Direction::Start => "start",
            Direction::Forward => "forward",
            Direction::Backward => "backward",
        })
    }
}

/// Live progress of a running search, readable from another thread.
#[derive(Debug, Default)]
pub struct Progress {
    /// Depth being computed.
    pub depth: AtomicU32,
    /// Rows of the current depth's expansion done so far.
    pub rows_done: AtomicU64,
}

/// Whatever a [`Journal`] fails with (its storage is the caller's).
pub type JournalError = Box<dyn std::error::Error + Send + Sync>;

/// Why a search stopped.
#[derive(Debug, thiserror::Error)]
pub enum BfsError {
    #[error("the search's bit arrays: {0}")]
    State(#[from] std::io::Error),
    #[error("journaling a level: {0}")]
    Journal(#[source] JournalError),
    #[error("depth {depth}: {classes} classes and {self_inverse} self-inverse ones do not pair up under inversion")]
    Unpaired { depth: u32, classes: u64, self_inverse: u64 },
}

/// A level's report from its counts; classes under symmetry and inversion are (classes +
/// self-inverse classes) / 2, so those two must pair up (counts that come from workers are
/// checked here).
pub fn level_report(total: RowCounts, depth: u32, direction: Direction) -> Result<LevelReport, BfsError> {
    let (classes, self_inverse) = (total.classes, total.self_inverse);
    if (classes + self_inverse) % 2 != 0 {
        return Err(BfsError::Unpaired { depth, classes, self_inverse });
    }
    Ok(LevelReport {
        counts: DepthCounts {
            depth,
            positions: total.positions,
            classes_sym: classes,
            classes_sym_inv: (classes + self_inverse) / 2,
        },
        entries: total.entries,
        direction,
        seconds: 0.0,
    })
}
