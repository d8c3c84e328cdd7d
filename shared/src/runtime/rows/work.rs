//! What a worker's core asks of its process and hears back: the computations on its data
//! ([`Work`], run by [`super::Parts`]) and their results ([`Done`]), the other actions
//! ([`WorkerAction`]) and the events it takes ([`WorkerEvent`]).

use super::{Message, Note, Plan};
use crate::bfs::Direction;
use crate::runtime::{Epoch, WorkerId};
use crate::space::RowCounts;
use bytes::Bytes;

/// A computation on the worker's data ([`super::Parts`] runs them). Works that put a part in
/// memory carry a *tag*, larger for each: a late one never replaces newer content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Work {
    /// Build the job's index and list what the disk holds of the job.
    Build,
    /// Part `part` with no level.
    Fresh { part: u32, tag: u64 },
    /// Part `part` with levels `0 .. depth`, from this worker's disk.
    Load { part: u32, depth: u32, tag: u64 },
    /// Part `part` with levels `0 .. depth`, from a `Levels` message (stored on this disk too).
    Import { part: u32, depth: u32, tag: u64, payload: Bytes },
    /// Levels `0 .. depth` of `part`, from this disk, for worker `to` (a `Fetch`).
    Export { part: u32, depth: u32, to: WorkerId, epoch: Epoch },
    /// Part `part` leaves memory (its levels stay on disk).
    Release { part: u32, tag: u64 },
    /// The level `depth` made in `part` becomes its frontier.
    Commit { part: u32, depth: u32 },
    /// Arm the `targets` for level `depth` of `epoch`, and read level `depth - 1` of the
    /// `others` (held at a later depth) from the disk: together, the rows this worker maps.
    /// `owner`: the owner of every part (whom a backward level asks about which rows).
    Prepare { depth: u32, epoch: Epoch, targets: Vec<u32>, others: Vec<u32>, owner: Vec<WorkerId> },
    /// This worker's own share of a target part: the start entry (level 0), its images
    /// (forward) or its hits among the part's unvisited entries (backward).
    Local { part: u32, depth: u32, epoch: Epoch, direction: Direction },
    /// Images of this worker's rows in target part `part` of worker `to`.
    Push { part: u32, depth: u32, epoch: Epoch, to: WorkerId },
    /// The entries of target part `part` still unreached that worker `peer` could reach.
    Ask { part: u32, depth: u32, epoch: Epoch, peer: WorkerId },
    /// The hits of this worker's rows among an `Open` message's entries.
    Answer { note: Note, payload: Bytes },
    /// An `Images` or `Hits` message into its part's level.
    Merge { note: Note, payload: Bytes },
    /// Count the level made in `part`, store it on disk (and encode it for the coordinator if
    /// `upload`).
    Finish { part: u32, depth: u32, epoch: Epoch, direction: Direction, upload: bool },
}

/// What a [`Work`] gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Done {
    /// The index is built; `room` bytes are left for parts; the disk holds levels `0 .. d` of
    /// each listed part.
    Built {
        room: u64,
        stored: Vec<(u32, u32)>,
    },
    /// A part is in memory (Fresh, Load, Import).
    Held {
        part: u32,
        tag: u64,
        depth: u32,
    },
    /// A part could not be read (Load, Import: a damaged or missing file or message).
    Unreadable {
        part: u32,
        tag: u64,
        why: String,
    },
    Exported {
        part: u32,
        depth: u32,
        to: WorkerId,
        epoch: Epoch,
        payload: Vec<u8>,
    },
    Committed {
        part: u32,
        depth: u32,
    },
    Prepared {
        depth: u32,
        epoch: Epoch,
    },
    Local {
        part: u32,
        depth: u32,
        epoch: Epoch,
    },
    Pushed {
        part: u32,
        depth: u32,
        epoch: Epoch,
        to: WorkerId,
        payload: Bytes,
    },
    /// `None`: nothing to ask of `peer`.
    Asked {
        part: u32,
        depth: u32,
        epoch: Epoch,
        peer: WorkerId,
        payload: Option<Bytes>,
    },
    Answered {
        note: Note,
        payload: Bytes,
    },
    Merged {
        note: Note,
    },
    /// A message failed its checks: its sender is told, and sends it again.
    Damaged {
        note: Note,
        why: String,
    },
    Finished {
        part: u32,
        depth: u32,
        epoch: Epoch,
        counts: RowCounts,
        upload: Option<Vec<u8>>,
    },
    /// The worker cannot go on.
    Failed {
        why: String,
    },
}

/// What the worker's process does for the core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerAction {
    Work(Work),
    /// Deliver `message` to worker `to`; report `Acked` when it answers, `SendFailed` when the
    /// link fails (after a pause: the core sends again while the message matters).
    Send {
        to: WorkerId,
        message: Message,
    },
    /// Answer the delivery of a message: taken (`ok`), or refused as damaged.
    Ack {
        to: WorkerId,
        note: Note,
        ok: bool,
    },
    /// Send a finished level of a part to the coordinator; report `Uploaded`.
    Upload {
        part: u32,
        depth: u32,
        epoch: Epoch,
        payload: Vec<u8>,
    },
    /// The status changed: tell the coordinator.
    Report,
}

/// What happens to the worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerEvent {
    Plan(Plan),
    Done(Done),
    Message(Message),
    Acked {
        to: WorkerId,
        note: Note,
        ok: bool,
    },
    SendFailed {
        to: WorkerId,
        message: Message,
    },
    Uploaded {
        part: u32,
        depth: u32,
        epoch: Epoch,
    },
    /// Time passes (about a second): a fetch unanswered for a while is sent again.
    Tick,
}
