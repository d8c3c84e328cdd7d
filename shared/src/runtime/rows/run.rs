//! The state of the level a worker makes: per target part it owns, what is in and what it
//! waits for (`level.rs` moves it on).

use crate::bfs::Direction;
use crate::runtime::{Epoch, WorkerId};
use crate::space::RowCounts;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// What a finished level reports: the counts of the target parts, in part order.
pub(super) type PartCounts = Vec<(u32, RowCounts)>;

/// One target part's state in the level.
#[derive(Debug, Default)]
pub(super) struct Target {
    /// This worker's own share is in.
    pub(super) local: bool,
    /// Forward: senders whose images are merged, and those being merged.
    pub(super) merged: BTreeSet<WorkerId>,
    pub(super) merging: BTreeSet<WorkerId>,
    /// Backward: the other owners in the order they are asked; how many have answered; whether
    /// one is being asked (its question made or sent, its answer not merged yet).
    pub(super) peers: Vec<WorkerId>,
    pub(super) answered: usize,
    pub(super) asking: bool,
    pub(super) finishing: bool,
    pub(super) counts: Option<RowCounts>,
    pub(super) uploading: bool,
}

/// The level being made (or made, until the next begins) in the plan's epoch.
#[derive(Debug)]
pub(super) struct LevelRun {
    pub(super) depth: u32,
    pub(super) epoch: Epoch,
    pub(super) direction: Direction,
    pub(super) upload: bool,
    pub(super) prepared: bool,
    pub(super) senders: BTreeSet<WorkerId>,
    pub(super) mine: BTreeMap<u32, Target>,
    /// Forward: other owners' target parts whose images are still to be made, and the image
    /// messages in flight to each destination.
    pub(super) queue: VecDeque<(u32, WorkerId)>,
    pub(super) flight: BTreeMap<WorkerId, usize>,
}

impl LevelRun {
    /// The counts of every target part this worker owns, once all are finished.
    pub(super) fn finished(&self) -> Option<(u32, PartCounts)> {
        let counts = self
            .mine
            .iter()
            .map(|(&k, t)| t.counts.filter(|_| !t.uploading).map(|c| (k, c)))
            .collect::<Option<Vec<_>>>()?;
        Some((self.depth, counts))
    }
}
