//! A job's index named by a string ("edges/htm", "hprime/h"), so that a worker can build the
//! same index as the coordinator, and the task computations of a worker on it.

use super::index::RowIndex;
use super::kociemba::KociembaSpace;
use super::rows::RowSpace;
use super::task::{pull_rows, push_rows, PushSink};
use crate::coord::{corner_tetrads, edge_slices};
use crate::cube::{Move, MoveSet};
use crate::h48::{H48Coords, SymProductSpace};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// The spaces the enumerations run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpaceKind {
    Corners,
    Edges,
    H,
    Hprime,
    /// Seed 000's h0 coordinate: cocsep classes x esep (the H48 h0 table's space).
    H48h0,
}

impl SpaceKind {
    pub const ALL: [SpaceKind; 5] =
        [SpaceKind::Corners, SpaceKind::Edges, SpaceKind::H, SpaceKind::Hprime, SpaceKind::H48h0];

    pub fn name(self) -> &'static str {
        match self {
            SpaceKind::Corners => "corners",
            SpaceKind::Edges => "edges",
            SpaceKind::H => "h",
            SpaceKind::Hprime => "hprime",
            SpaceKind::H48h0 => "h48h0",
        }
    }
}

/// A space and its move set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobSpec {
    pub space: SpaceKind,
    pub moves: MoveSet,
}

impl std::fmt::Display for JobSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.space.name(), self.moves.name())
    }
}

impl std::str::FromStr for JobSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (space, moves) = s.split_once('/').ok_or_else(|| format!("bad job spec {s:?}"))?;
        let space = SpaceKind::ALL
            .into_iter()
            .find(|k| k.name() == space)
            .ok_or_else(|| format!("unknown space {space:?} in job spec"))?;
        let moves = [MoveSet::Htm, MoveSet::Qtm, MoveSet::KociembaH]
            .into_iter()
            .find(|m| m.name() == moves)
            .ok_or_else(|| format!("unknown move set {moves:?} in job spec"))?;
        Ok(JobSpec { space, moves })
    }
}

/// One of the indexes, built from a [`JobSpec`].
pub enum AnyIndex {
    Corners(RowSpace<8, 3>),
    Edges(RowSpace<12, 2>),
    Kociemba(KociembaSpace),
    Product(SymProductSpace),
}

/// Calls `$f` with the concrete index.
macro_rules! with_index {
    ($any:expr, $i:ident => $f:expr) => {
        match $any {
            AnyIndex::Corners($i) => $f,
            AnyIndex::Edges($i) => $f,
            AnyIndex::Kociemba($i) => $f,
            AnyIndex::Product($i) => $f,
        }
    };
}

impl AnyIndex {
    pub fn build(space: SpaceKind) -> AnyIndex {
        match space {
            SpaceKind::Corners => AnyIndex::Corners(RowSpace::new(corner_tetrads())),
            SpaceKind::Edges => AnyIndex::Edges(RowSpace::new(edge_slices())),
            SpaceKind::H => AnyIndex::Kociemba(KociembaSpace::new(true)),
            SpaceKind::Hprime => AnyIndex::Kociemba(KociembaSpace::new(false)),
            SpaceKind::H48h0 => AnyIndex::Product(SymProductSpace::h0(&H48Coords::default())),
        }
    }

    pub fn words_per_row(&self) -> usize {
        with_index!(self, i => (i.column_count() as usize).div_ceil(64))
    }

    pub fn row_count(&self) -> u32 {
        with_index!(self, i => RowIndex::row_count(i))
    }

    /// A forward task: pushes the frontier rows `rows` and returns the rows reached as records
    /// of (row as u32 LE, row words as u64 LE), in increasing row order.
    pub fn push_task(
        &self,
        moves: &[Move],
        rows: Range<u32>,
        frontier: &[u64],
        scatter: &mut Scatter,
    ) -> Vec<u8> {
        use rayon::prelude::*;
        let words = self.words_per_row();
        scatter.ensure(self.row_count() as usize, words);
        let chunk = 64usize;
        frontier.par_chunks(words * chunk).enumerate().for_each(|(k, bits)| {
            let first = rows.start + (k * chunk) as u32;
            let sub = first..first + (bits.len() / words) as u32;
            with_index!(self, i => push_rows(i, moves, sub, bits, &*scatter));
        });
        scatter.take_records()
    }

    /// A backward task: the new entries of `rows` given their visited bits and the whole
    /// frontier.
    pub fn pull_task(&self, moves: &[Move], rows: Range<u32>, visited: &[u64], frontier: &[u64]) -> Vec<u64> {
        use rayon::prelude::*;
        let words = self.words_per_row();
        let mut out = vec![0u64; visited.len()];
        let chunk = 64usize;
        out.par_chunks_mut(words * chunk).zip(visited.par_chunks(words * chunk)).enumerate().for_each(
            |(k, (out, seen))| {
                let first = rows.start + (k * chunk) as u32;
                let sub = first..first + (out.len() / words) as u32;
                with_index!(self, i => pull_rows(i, moves, sub, seen, frontier, out));
            },
        );
        out
    }
}

/// A worker's scatter buffer for forward tasks: a full-size bit array plus one "touched" bit per
/// row, so only the rows a task reached are sent and cleared.
#[derive(Default)]
pub struct Scatter {
    bits: Vec<AtomicU64>,
    touched: Vec<AtomicU64>,
    words: usize,
}

impl Scatter {
    fn ensure(&mut self, rows: usize, words: usize) {
        if self.words != words || self.bits.len() != rows * words {
            self.bits = zeroed_atomics(rows * words);
            self.touched = (0..rows.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
            self.words = words;
        }
    }

    fn take_records(&mut self) -> Vec<u8> {
        let w = self.words;
        let mut out = Vec::new();
        for (k, t) in self.touched.iter_mut().enumerate() {
            let mut set = std::mem::take(t.get_mut());
            while set != 0 {
                let row = k * 64 + set.trailing_zeros() as usize;
                set &= set - 1;
                out.extend_from_slice(&(row as u32).to_le_bytes());
                for word in &mut self.bits[row * w..(row + 1) * w] {
                    out.extend_from_slice(&std::mem::take(word.get_mut()).to_le_bytes());
                }
            }
        }
        out
    }
}

/// `len` zero atomics from a zeroed allocation, so pages are only committed when touched (a
/// scatter buffer is as large as the whole state, and most of it stays untouched in sparse
/// levels).
fn zeroed_atomics(len: usize) -> Vec<AtomicU64> {
    const _: () = assert!(
        std::mem::size_of::<AtomicU64>() == std::mem::size_of::<u64>()
            && std::mem::align_of::<AtomicU64>() == std::mem::align_of::<u64>()
    );
    let mut words = std::mem::ManuallyDrop::new(vec![0u64; len]);
    // SAFETY: AtomicU64 has the size, alignment and bit validity of u64 (asserted above), so the
    // allocation can change element type; ManuallyDrop hands its ownership over exactly once.
    unsafe { Vec::from_raw_parts(words.as_mut_ptr().cast::<AtomicU64>(), words.len(), words.capacity()) }
}

impl PushSink for Scatter {
    #[inline]
    fn insert(&self, row: u32, column: u32) {
        let r = row as usize;
        self.bits[r * self.words + column as usize / 64].fetch_or(1 << (column % 64), Ordering::Relaxed);
        self.touched[r / 64].fetch_or(1 << (r % 64), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_specs_round_trip() {
        for s in ["corners/htm", "edges/qtm", "h/h", "hprime/h", "h48h0/htm"] {
            assert_eq!(s.parse::<JobSpec>().unwrap().to_string(), s);
        }
        assert!("cube/htm".parse::<JobSpec>().is_err());
        assert!("edges".parse::<JobSpec>().is_err());
    }
}
