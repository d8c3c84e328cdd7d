//! What the hub holds for the job's work now ([`Work`]): a level of leased tasks (the
//! `shared::runtime::leases` task table, and what each result may hold) or a row search (the
//! `shared::runtime::rows` coordinator core). Data only: `leases.rs` and `rows.rs` act on it.

use shared::runtime::leases::TaskTable;
use shared::runtime::rows::RowsCoordinator;
use std::collections::BTreeMap;
use std::ops::Range;

/// What the job's workers do now.
pub enum Work {
    Idle,
    /// A level of independent leased tasks, and what their results may hold.
    Leases {
        table: TaskTable,
        words: ResultWords,
        homes: String,
        /// The memory a worker needs for one task (0: any): a worker whose `--mem-limit` is
        /// less gets none.
        needs: u64,
    },
    /// A row search whose rows the workers own.
    Rows(Box<RowsRun>),
}

/// A row search on the hub: its core, and the parts of levels their owners sent up (a table
/// build), by (depth, part).
pub struct RowsRun {
    pub(super) core: RowsCoordinator,
    pub(super) uploads: BTreeMap<(u32, u32), Vec<u8>>,
    /// The longest part an owner may send up.
    pub(super) max_part_bytes: u64,
}

/// Whether a worker whose memory limit is `limit` (0: unknown) may take a task that needs
/// `needs` bytes of it.
pub(super) fn holds(limit: u64, needs: u64) -> bool {
    limit == 0 || limit >= needs
}

/// What a level's task results may hold.
#[derive(Clone, Copy, Debug)]
pub enum ResultWords {
    /// Coset tasks (of a product job or a coset job): words per coset of the task.
    Cosets(CosetWords),
    /// Row tasks of an H48 build: at most this many words per row.
    H48Rows { max_words_per_row: usize },
}

/// How many words a coset's result takes: always the same (a product job's counters), or at
/// most a number (a coset job's counts and the positions it left unreached).
#[derive(Clone, Copy, Debug)]
pub enum CosetWords {
    Exactly(usize),
    AtMost(usize),
}

impl CosetWords {
    pub(super) fn limit(self) -> usize {
        match self {
            CosetWords::Exactly(n) | CosetWords::AtMost(n) => n,
        }
    }
}

/// What a worker is asked to do.
#[derive(Clone, Debug)]
pub struct Lease {
    pub job: u64,
    pub task: u64,
    pub attempt: u32,
    pub depth: u32,
    /// Representative cosets of a product job, or rows of an H48 build.
    pub rows: Range<u32>,
    pub job_spec: String,
    /// The input naming where the rows the tasks read are kept (H48 levels), or empty.
    pub homes: String,
}
