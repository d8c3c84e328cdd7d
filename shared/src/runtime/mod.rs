//! The distributed runtime's protocols as plain data: each side of a protocol is a type whose
//! methods take an event (a message, a finished computation, a worker declared lost) and
//! queue actions (messages to send, computations to run, files to write, results to report).
//! Nothing here spawns a thread, reads a clock or draws a random number: the coordinator's and
//! the worker's async code carry events in and actions out, and [`sim`] runs the same types
//! over a simulated network, clock and disks, with faults, from a seed.
//!
//! - [`rows`]: a row search whose rows the workers own (parts, levels made by exchanging rows
//!   between workers, each level kept on its owner's disk, lost parts made again).
//! - [`leases`]: independent tasks leased to workers (product cosets, cosets of H, the rows of
//!   an H48 build).

pub mod leases;
pub mod rows;
pub mod sim;

/// A worker as the coordinator numbers it (0: nobody).
pub type WorkerId = u64;

/// The number of an assignment of parts to workers. Epochs grow: the coordinator's
/// incarnation (how many times it started on the job's journal) in the high half, a count in
/// the low half, so a coordinator that restarts never reuses one.
pub type Epoch = u64;

/// The first epoch of incarnation `incarnation`.
pub fn first_epoch(incarnation: u32) -> Epoch {
    (incarnation as u64) << 32
}
