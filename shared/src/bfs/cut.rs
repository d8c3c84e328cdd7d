//! How a row search cuts its rows into parts, each with one owner ([`super::owned`]).

use std::ops::Range;

/// How a row search cuts its rows into parts, each with one owner:
/// `rows_per_part` consecutive rows each (the last part may be shorter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartCut {
    pub rows: u32,
    pub rows_per_part: u32,
}

impl PartCut {
    pub fn new(rows: u32, rows_per_part: u32) -> Self {
        PartCut { rows, rows_per_part: rows_per_part.max(1) }
    }

    /// The cut into at most `parts` parts of equal length (`--tasks-per-level`).
    pub fn into_parts(rows: u32, parts: u32) -> Self {
        PartCut::new(rows, rows.div_ceil(parts.max(1)))
    }

    pub fn parts(&self) -> u32 {
        self.rows.div_ceil(self.rows_per_part)
    }

    /// The rows of part `k`.
    pub fn range(&self, k: u32) -> Range<u32> {
        let start = (k * self.rows_per_part).min(self.rows);
        start..(start + self.rows_per_part).min(self.rows)
    }
}
