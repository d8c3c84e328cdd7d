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
    /// Forward: the image messages this level makes, and those made.
    pub(super) pushes: usize,
    pub(super) pushed: usize,
}

impl LevelRun {
    /// How far this worker is in the level, in percent rounded down to a multiple of 5 (so
    /// that it changes, and is reported, at most 20 times a level). Its steps: each target
    /// part's own share, each other owner's images or answer, its finish, and each image
    /// message made for another owner.
    pub(super) fn percent(&self) -> u8 {
        let others = if self.direction == Direction::Start { 0 } else { self.senders.len() };
        let all = self.mine.len() * (2 + others) + self.pushes;
        let done: usize = self
            .mine
            .values()
            .map(|t| usize::from(t.local) + t.merged.len() + t.answered + usize::from(t.counts.is_some()))
            .sum::<usize>()
            + self.pushed;
        (20 * done.min(all) / all.max(1) * 5) as u8
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_levels_percent_counts_its_steps_and_reaches_100_only_when_all_are_done() {
        let senders: BTreeSet<WorkerId> = [2, 3].into();
        let mine = [(0, Target::default()), (5, Target::default())].into_iter().collect();
        let mut l = LevelRun {
            depth: 4,
            epoch: 1,
            direction: Direction::Forward,
            upload: false,
            prepared: true,
            senders,
            mine,
            queue: VecDeque::new(),
            flight: BTreeMap::new(),
            pushes: 4,
            pushed: 0,
        };
        // 2 parts x (own share + 2 senders + finish) + 4 pushes: 12 steps.
        let mut seen = vec![l.percent()];
        l.pushed = 3;
        seen.push(l.percent());
        for t in l.mine.values_mut() {
            t.local = true;
            t.merged = [2, 3].into();
        }
        seen.push(l.percent());
        l.pushed = 4;
        l.mine.values_mut().for_each(|t| t.counts = Some(RowCounts::default()));
        seen.push(l.percent());
        assert_eq!(seen, [0, 25, 75, 100]);
        l.pushed = 9; // never past the whole
        assert_eq!(l.percent(), 100);
    }
}
