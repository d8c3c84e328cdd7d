//! The job registry: every job a coordinator runs, named by one string that the coordinator
//! and its workers parse the same way, and the index a row job builds from it.
//!
//! - a row search, `SPACE/MOVES` ("edges/htm", "hprime/h", "h48h11/htm"): a BFS over an index
//!   of [`crate::space`], cut into row-range tasks;
//! - a product enumeration, `product/SPACE/METRIC/DEPTH` ([`ProductSpec`]): one task per range
//!   of representative cosets;
//! - an H48 table, `h48hN` (N = 1..11): one task per range of table rows, from the h11 levels.

use crate::bfs::owned::PartCut;
use crate::bfs::owned::{self, OwnedFrontier, OwnedPart};
use crate::bfs::task::{Counting, RowBits, Sources};
use crate::bfs::Direction;
use crate::coord::h48::{EoEsepColumns, H48Coords};
use crate::coord::nxopt_columns::NxoptColumns;
use crate::coord::{corner_tetrads, edge_slices};
use crate::cube::{Move, MoveSet};
use crate::product::ProductSpec;
use crate::space::{nxopt_space, KociembaSpace, RowCounts, RowIndex, RowSpace, Space, SymProductSpace};
use std::ops::Range;

/// A job, as the coordinator names it to workers and journals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobSpec {
    Rows(RowJob),
    Product(ProductSpec),
    /// The H48 table hN, N in 1..=11.
    H48Table(u8),
}

impl std::fmt::Display for JobSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JobSpec::Rows(r) => r.fmt(f),
            JobSpec::Product(p) => p.fmt(f),
            JobSpec::H48Table(h) => write!(f, "h48h{h}"),
        }
    }
}

impl std::str::FromStr for JobSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.starts_with("product/") {
            return s.parse().map(JobSpec::Product);
        }
        if !s.contains('/') {
            return s
                .strip_prefix("h48h")
                .and_then(|n| n.parse().ok())
                .filter(|h| (1..=11).contains(h))
                .map(JobSpec::H48Table)
                .ok_or_else(|| {
                    format!("unknown job {s:?} (expected SPACE/MOVES, product/..., or h48h1..h48h11)")
                });
        }
        s.parse().map(JobSpec::Rows)
    }
}

/// A row search: a space and its move set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowJob {
    pub space: Space,
    pub moves: MoveSet,
}

impl RowJob {
    /// Builds the job's index.
    pub fn build_index(&self) -> AnyIndex {
        AnyIndex::build(self.space)
    }
}

impl std::fmt::Display for RowJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.space.name(), self.moves.name())
    }
}

impl std::str::FromStr for RowJob {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (space, moves) = s.split_once('/').ok_or_else(|| format!("bad job spec {s:?}"))?;
        let space: Space = space.parse()?;
        if !space.has_rows() {
            return Err(format!("{space} has no row index: a row job spec names another space"));
        }
        let moves = moves.parse()?;
        Ok(RowJob { space, moves })
    }
}

/// One of the indexes, built from a [`RowJob`].
pub enum AnyIndex {
    Corners(RowSpace<8, 3>),
    Edges(RowSpace<12, 2>),
    Kociemba(KociembaSpace),
    Product(SymProductSpace),
    H11(SymProductSpace<EoEsepColumns>),
    Nxopt(SymProductSpace<NxoptColumns>),
}

/// Calls `$f` with the concrete index.
macro_rules! with_index {
    ($any:expr, $i:ident => $f:expr) => {
        match $any {
            AnyIndex::Corners($i) => $f,
            AnyIndex::Edges($i) => $f,
            AnyIndex::Kociemba($i) => $f,
            AnyIndex::Product($i) => $f,
            AnyIndex::H11($i) => $f,
            AnyIndex::Nxopt($i) => $f,
        }
    };
}

impl AnyIndex {
    fn build(space: Space) -> AnyIndex {
        match space {
            Space::Cube => unreachable!("a row job's space has rows (checked when it is parsed)"),
            Space::Corners => AnyIndex::Corners(RowSpace::new(corner_tetrads())),
            Space::Edges => AnyIndex::Edges(RowSpace::new(edge_slices())),
            Space::H => AnyIndex::Kociemba(KociembaSpace::new(true)),
            Space::Hprime => AnyIndex::Kociemba(KociembaSpace::new(false)),
            Space::H48h0 => AnyIndex::Product(SymProductSpace::h0(&H48Coords)),
            Space::H48h11 => AnyIndex::H11(SymProductSpace::h11(&H48Coords)),
            Space::Nxopt(kind) => AnyIndex::Nxopt(nxopt_space(kind)),
        }
    }

    pub fn column_count(&self) -> u32 {
        with_index!(self, i => i.column_count())
    }

    /// Drops what only building the index needs (see [`RowSpace::shrink`]; other indexes keep
    /// everything): for a worker, whose memory goes to rows.
    pub fn shrink(&mut self) {
        match self {
            AnyIndex::Corners(i) => i.shrink(),
            AnyIndex::Edges(i) => i.shrink(),
            _ => {}
        }
    }

    pub fn words_per_row(&self) -> usize {
        with_index!(self, i => (i.column_count() as usize).div_ceil(64))
    }

    pub fn row_count(&self) -> u32 {
        with_index!(self, i => RowIndex::row_count(i))
    }

    /// The sources of every row under `moves` (what a push reads).
    pub fn sources(&self, moves: &[Move]) -> Sources {
        with_index!(self, i => Sources::build(i, moves))
    }

    /// The sources among the rows `from` accepts (see [`Sources::build_from`]).
    pub fn sources_from(&self, moves: &[Move], from: impl Fn(u32) -> bool + Sync) -> Sources {
        with_index!(self, i => Sources::build_from(i, moves, &from))
    }
}

/// A row search whose rows the workers own (see [`crate::bfs::owned`]): the same functions
/// on any index.
impl AnyIndex {
    /// Part `k` of `cut` at the start of a search.
    pub fn fresh_part(&self, cut: PartCut, k: u32) -> OwnedPart {
        with_index!(self, i => OwnedPart::fresh(i, cut, k))
    }

    /// Part `k` of `cut` after the levels `found` (oldest first; see [`OwnedPart::restore`]).
    pub fn restore_part(&self, cut: PartCut, k: u32, found: &[&[u64]]) -> OwnedPart {
        with_index!(self, i => OwnedPart::restore(i, cut, k, found))
    }

    /// Level 0 in `part` (see [`OwnedPart::start`]).
    pub fn start_part(&self, part: &mut OwnedPart, counting: Counting) -> RowCounts {
        with_index!(self, i => part.start(i, counting))
    }

    /// Finishes a level in `part`: its gathered images or hits become its new entries, counted.
    pub fn finish_part(&self, part: &mut OwnedPart, direction: Direction, counting: Counting) -> RowCounts {
        with_index!(self, i => match direction {
            Direction::Backward => part.finish_backward(i, counting),
            _ => part.finish_forward(i, counting),
        })
    }

    /// See [`owned::push_images`].
    pub fn push_images(
        &self,
        moves: &[Move],
        targets: Range<u32>,
        sources: &Sources,
        frontier: &OwnedFrontier,
        out: &mut [u64],
    ) -> bool {
        with_index!(self, i => owned::push_images(i, moves, targets, sources, frontier, out))
    }

    /// See [`owned::pull_hits`].
    pub fn pull_hits(
        &self,
        moves: &[Move],
        rows: Range<u32>,
        open: &impl RowBits,
        frontier: &OwnedFrontier,
        out: &mut [u64],
    ) {
        with_index!(self, i => owned::pull_hits(i, moves, rows, open, frontier, out))
    }

    /// See [`owned::open_rows_for`].
    pub fn open_rows_for(&self, moves: &[Move], r: u32, owned: impl Fn(u32) -> bool) -> bool {
        with_index!(self, i => owned::open_rows_for(i, moves, r, &owned))
    }

    /// Entries the space counts (reachable ones).
    pub fn entry_count(&self) -> u64 {
        with_index!(self, i => RowIndex::entry_count(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_specs_round_trip() {
        for s in [
            "corners/htm",
            "edges/qtm",
            "h/h",
            "hprime/h",
            "h48h0/htm",
            "h48h11/htm",
            "nxopt-eo2ep1/htm",
            "product/cube/htm/10",
            "product/edges/qtm/8",
            "h48h1",
            "h48h11",
        ] {
            assert_eq!(s.parse::<JobSpec>().unwrap().to_string(), s);
        }
        for bad in [
            "cube/htm",
            "edges",
            "h48h0",
            "h48h12",
            "product/cube/htm",
            "product/teapot/htm/3",
            "nxopt-eo4ep1/htm",
        ] {
            assert!(bad.parse::<JobSpec>().is_err(), "{bad}");
        }
    }
}
