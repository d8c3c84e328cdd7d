//! A row search whose rows the workers own: its messages, states and rules (docs/distribution.md
//! gives them a page). The rows are cut into parts; each part has one owner, which keeps the
//! part's unvisited entries and frontier in memory and every level of the part it has finished
//! on its own disk.
//!
//! - The coordinator ([`RowsCoordinator`]) assigns the parts (an [`Epoch`]), says which level
//!   to make ([`Plan`]), sums the counts the owners report ([`Status`]), has each new level
//!   journaled and then committed. A part whose owner is lost is made again from nothing by a
//!   new owner, level by level, from the levels every other owner keeps; a worker that joins
//!   takes parts from the others at the next level boundary; a worker that restarts with its
//!   disk reloads its parts.
//! - A worker ([`RowsWorker`]) holds its parts for the plan's epoch, makes the level with the
//!   other owners ([`Message`]s), stores each finished level of its parts, and commits when the
//!   plan says so. Its computations ([`Work`]) run on the data of [`Parts`], which the worker's
//!   process (and the simulator) executes.
//!
//! One rule serves a search's every level, first made or made again: level d is made in the
//! parts whose depth is d (their *targets*), from level d - 1 of every part.

mod assign;
mod buffers;
mod coordinator;
mod level;
mod parts;
mod run;
mod store;
mod work;
mod worker;

pub use assign::capacity;
pub use coordinator::{
    part_weights, CoordinatorAction, CoordinatorEvent, KeptLevel, RowsCoordinator, SearchSettings, Snapshot,
};
pub use parts::{LinkCodec, Parts, LEVEL};
pub use store::{DiskStore, LevelStore, MemoryStore};
pub use work::{Done, Work, WorkerAction, WorkerEvent};
pub use worker::RowsWorker;

use super::{Epoch, WorkerId};
use crate::bfs::Direction;
use crate::space::RowCounts;

/// The most levels a search makes (its messages are bounded by it).
pub const MAX_DEPTH: u32 = 64;

/// What every worker of a row search needs to know of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobInfo {
    pub id: u64,
    /// The job as [`crate::job::JobSpec`] names it ("edges/htm").
    pub spec: String,
    pub rows: u32,
    pub rows_per_part: u32,
    pub positions_only: bool,
}

impl JobInfo {
    pub fn cut(&self) -> crate::bfs::cut::PartCut {
        crate::bfs::cut::PartCut::new(self.rows, self.rows_per_part)
    }

    pub fn parts(&self) -> u32 {
        self.cut().parts()
    }
}

/// The level the owners make now: in the parts whose depth is `depth`, from level `depth - 1`
/// of every part. `upload`: each target part's new level also goes to the coordinator (a table
/// build reads every level; a level made again is not sent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelOrder {
    pub depth: u32,
    pub direction: Direction,
    pub upload: bool,
}

/// What the coordinator asks of the workers: who owns each part in `epoch`, how many levels
/// each part holds, where an owner finds a part it does not hold, and the level to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub epoch: Epoch,
    /// Grows with every change of the plan within its epoch (an older one is ignored).
    pub version: u64,
    /// Per part: its owner.
    pub owner: Vec<WorkerId>,
    /// Per part: the levels it holds (0: none; d: levels 0 .. d - 1).
    pub depth: Vec<u32>,
    /// Per part: the worker whose disk keeps its levels (an owner that does not hold the part
    /// fetches them from there; itself after a restart), or 0: the part is made again.
    pub source: Vec<WorkerId>,
    /// The level to make, once every owner holds its parts.
    pub level: Option<LevelOrder>,
}

impl Plan {
    /// Whether part `k` is a target of the plan's level.
    pub fn is_target(&self, k: u32) -> bool {
        self.level.is_some_and(|l| self.depth[k as usize] == l.depth)
    }

    /// Workers owning at least one part, in order.
    pub fn owners(&self) -> Vec<WorkerId> {
        let mut o = self.owner.clone();
        o.sort_unstable();
        o.dedup();
        o
    }
}

/// What a worker tells the coordinator of itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// It holds the job's index.
    pub ready: bool,
    /// Memory it can give to parts.
    pub room: u64,
    /// The plan it has taken (0: none), and that plan's version: the coordinator answers
    /// with its plan whenever the two differ from its own.
    pub epoch: Epoch,
    pub version: u64,
    /// It holds every part it owns in `epoch` at the plan's depth.
    pub settled: bool,
    /// Parts it owns in `epoch` that it cannot get: neither its disk nor their source has them.
    pub lacking: Vec<u32>,
    /// A level it finished in `epoch`: its depth and the counts of each target part it owns.
    pub finished: Option<(u32, Vec<(u32, RowCounts)>)>,
    /// The level it makes in `epoch` and how far it is, in percent (at most 100; see the
    /// coordinator's progress).
    pub progress: Option<(u32, u8)>,
    /// Why it cannot go on (the job stops with it).
    pub failure: Option<String>,
}

/// What a message between workers is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Images of the sender's rows of level `depth - 1` in one target part (forward).
    Images,
    /// A target part's entries still unreached, for the receiver to test (backward).
    Open,
    /// The answer to `Open`: those entries with a neighbour in the sender's rows.
    Hits,
    /// A request for a part's levels `0 .. depth` (an owner that does not hold the part).
    Fetch,
    /// The answer to `Fetch`: the part's levels `0 .. depth`.
    Levels,
}

/// A message's header: what it is about, and who sent it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Note {
    pub epoch: Epoch,
    pub depth: u32,
    pub part: u32,
    pub from: WorkerId,
    pub kind: Kind,
}

/// A message between workers: its header and its bytes (what the data plane made of it),
/// shared, so that the shell slices them into chunks and hands received chunks on uncopied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub note: Note,
    pub payload: bytes::Bytes,
}
