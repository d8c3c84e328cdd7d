//! Why cluster work stopped or a worker's message was refused.

use shared::wire::Malformed;

/// What ends a level's wait, or refuses a worker's result.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The job was aborted: a worker reported a failure it cannot go past, or a job thread gave
    /// up (the reason says which).
    #[error("{0}")]
    Aborted(String),
    #[error("no row search is running")]
    NoSearch,
    #[error("no task {0}")]
    NoTask(u64),
    #[error("counts of {words} words for {cosets} cosets (expected {per_coset:?} each)")]
    WrongCounts { words: usize, cosets: usize, per_coset: super::work::CosetWords },
    /// A worker keeping rows that the level's tasks read was lost: the rows must be made again.
    #[error("worker {0}, which keeps rows this level reads, is lost")]
    InputsLost(u64),
    /// The job's thread could not take a result (e.g. its output cannot be written).
    #[error("{0:#}")]
    Fatal(anyhow::Error),
    #[error(transparent)]
    Malformed(#[from] Malformed),
}
