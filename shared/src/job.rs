//! The job registry: every job a coordinator runs, named by one string that the coordinator
//! and its workers parse the same way, and the index a row job builds from it.
//!
//! - a row search, `SPACE/MOVES` ("edges/htm", "hprime/h", "h48h11/htm"): a BFS over an index
//!   of [`crate::space`], cut into row-range tasks;
//! - a product enumeration, `product/SPACE/METRIC/DEPTH` ([`ProductSpec`]): one task per range
//!   of representative cosets;
//! - an H48 table, `h48hN` (N = 1..11): one task per range of table rows, from the h11 levels;
//! - cosets of H, `coset/exact/D` (every position at its exact distance to D) or
//!   `coset/bound/D/search/S` (proved within D, phase 1 searched to S; [`CosetSpec`]): one task
//!   per range of the job's cosets, whose representatives are its input.

use crate::bfs::cut::PartCut;
use crate::bfs::owned::{OwnedFrontier, OwnedPart, PartIndex};
use crate::bfs::task::{Counting, RowBits, Sources};
use crate::bfs::Direction;
use crate::coord::h48::{EoEsepColumns, H48Coords};
use crate::coord::nxopt_columns::NxoptColumns;
use crate::coord::{corner_tetrads, edge_slices, BlockLayout, Part};
use crate::coset::CosetSpec;
use crate::cube::{Move, MoveSet, Pieces, UnknownMoveSet};
use crate::h48::H11Rows;
use crate::product::{BadProductSpec, ProductSpec};
use crate::space::{
    nxopt_space, IndexBytesError, KociembaSpace, RowCounts, RowIndex, RowOrder, RowSpace, Space,
    SymProductSpace, Transitions, UnknownSpace,
};
use std::ops::Range;

/// A job, as the coordinator names it to workers and journals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobSpec {
    Rows(RowJob),
    Product(ProductSpec),
    /// The H48 table hN, N in 1..=11.
    H48Table(u8),
    Cosets(CosetSpec),
}

impl std::fmt::Display for JobSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JobSpec::Rows(r) => r.fmt(f),
            JobSpec::Product(p) => p.fmt(f),
            JobSpec::H48Table(h) => write!(f, "h48h{h}"),
            JobSpec::Cosets(c) => c.fmt(f),
        }
    }
}

/// Text that names no job.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadJobSpec {
    #[error("unknown job {0:?} (expected SPACE/MOVES, product/..., or h48h1..h48h11)")]
    Unknown(String),
    #[error("{0} has no row index: a row job spec names another space")]
    NoRows(Space),
    #[error(transparent)]
    Space(#[from] UnknownSpace),
    #[error(transparent)]
    Moves(#[from] UnknownMoveSet),
    #[error(transparent)]
    Product(#[from] BadProductSpec),
}

impl std::str::FromStr for JobSpec {
    type Err = BadJobSpec;
    fn from_str(s: &str) -> Result<Self, BadJobSpec> {
        if s.starts_with("product/") {
            return Ok(JobSpec::Product(s.parse()?));
        }
        if s.starts_with("coset/") {
            return s.parse().map(JobSpec::Cosets).map_err(|_| BadJobSpec::Unknown(s.to_string()));
        }
        if !s.contains('/') {
            return s
                .strip_prefix("h48h")
                .and_then(|n| n.parse().ok())
                .filter(|h| (1..=11).contains(h))
                .map(JobSpec::H48Table)
                .ok_or_else(|| BadJobSpec::Unknown(s.to_string()));
        }
        s.parse().map(JobSpec::Rows)
    }
}

impl JobSpec {
    /// The index an H48 table job's tasks work on (the h11 level store's rows), the same on
    /// every process.
    pub fn h11_rows() -> H11Rows {
        H11Rows::new(&H48Coords)
    }
}

/// The name under which a coordinator publishes a row search's index for its workers
/// ([`AnyIndex::to_bytes`]).
pub const INDEX_INPUT: &str = "index/0";

/// A row search: a space and its move set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowJob {
    pub space: Space,
    pub moves: MoveSet,
}

/// The size of a row job's index, known before its large tables are built (see
/// [`RowJob::build_index_checked`]).
#[derive(Clone, Copy, Debug)]
pub struct IndexSize {
    pub rows: u64,
    pub columns: u64,
    /// Bytes the index holds once built (its class tables and transitions); 0 where that is
    /// small and fixed.
    pub bytes: u64,
}

/// Code run on a row job's index as its own type (see [`AnyIndex::visit`]): how a search or a
/// table build that is generic over [`RowIndex`] runs on the index the registry built.
pub trait IndexVisitor {
    type Output;
    fn visit<I: RowIndex>(self, index: &I) -> Self::Output;
}

impl RowJob {
    /// Builds the job's index, the same on every process that asks for the same `order`.
    pub fn build_index(&self, order: RowOrder) -> AnyIndex {
        let built: Result<AnyIndex, std::convert::Infallible> =
            AnyIndex::build(self.space, Transitions::Probe, order, |_| Ok(()));
        match built {
            Ok(index) => index,
        }
    }

    /// Whether the job's index is made once and sent to workers ([`AnyIndex::to_bytes`]).
    pub fn sends_index(&self) -> bool {
        matches!(self.space, Space::Corners | Space::Edges)
    }

    /// The job's index from the bytes of [`AnyIndex::to_bytes`], as [`AnyIndex::shrink`] leaves
    /// it; refused (every value is checked) if they are not an index of this job's space.
    pub fn index_from_bytes(&self, bytes: &[u8]) -> Result<AnyIndex, IndexBytesError> {
        match self.space {
            Space::Corners => Ok(AnyIndex::Corners(RowSpace::from_bytes(corner_tetrads(), bytes)?)),
            Space::Edges => Ok(AnyIndex::Edges(RowSpace::from_bytes(edge_slices(), bytes)?)),
            other => Err(IndexBytesError::Space(format!("{} builds its own index", other.name()))),
        }
    }

    /// Builds the job's index after `check` has seen its size (a block space's rows are known
    /// before its tables are built, so a job that would not fit is refused before it takes the
    /// memory). With [`Transitions::Skip`] a block space probes no moves: for a process that
    /// locates and counts but never expands a row.
    pub fn build_index_checked<E>(
        &self,
        transitions: Transitions,
        order: RowOrder,
        check: impl FnOnce(IndexSize) -> Result<(), E>,
    ) -> Result<AnyIndex, E> {
        AnyIndex::build(self.space, transitions, order, check)
    }
}

impl std::fmt::Display for RowJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.space.name(), self.moves.name())
    }
}

impl std::str::FromStr for RowJob {
    type Err = BadJobSpec;
    fn from_str(s: &str) -> Result<Self, BadJobSpec> {
        let (space, moves) = s.split_once('/').ok_or_else(|| BadJobSpec::Unknown(s.to_string()))?;
        let space: Space = space.parse()?;
        if !space.has_rows() {
            return Err(BadJobSpec::NoRows(space));
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

/// A block space built after `check` has seen its size.
fn block_space<const N: usize, const O: u8, E>(
    layout: BlockLayout<N, O>,
    transitions: Transitions,
    order: RowOrder,
    check: impl FnOnce(IndexSize) -> Result<(), E>,
) -> Result<RowSpace<N, O>, E>
where
    Pieces<N, O>: Part,
{
    let classes = RowSpace::build_classes(&layout);
    check(IndexSize {
        rows: classes.class_count() as u64,
        columns: layout.column_count() as u64,
        bytes: RowSpace::<N, O>::memory_bytes(&classes, transitions),
    })?;
    Ok(RowSpace::with_classes(layout, classes, transitions, order))
}

impl AnyIndex {
    /// The one place a space's name becomes its index.
    fn build<E>(
        space: Space,
        transitions: Transitions,
        order: RowOrder,
        check: impl FnOnce(IndexSize) -> Result<(), E>,
    ) -> Result<AnyIndex, E> {
        let built = match space {
            Space::Cube => unreachable!("a row job's space has rows (checked when it is parsed)"),
            // Their class tables are large: checked before they are built.
            Space::Corners => {
                return Ok(AnyIndex::Corners(block_space(corner_tetrads(), transitions, order, check)?))
            }
            Space::Edges => {
                return Ok(AnyIndex::Edges(block_space(edge_slices(), transitions, order, check)?))
            }
            Space::H => AnyIndex::Kociemba(KociembaSpace::new(true)),
            Space::Hprime => AnyIndex::Kociemba(KociembaSpace::new(false)),
            Space::H48h0 => AnyIndex::Product(SymProductSpace::h0(&H48Coords)),
            Space::H48h11 => AnyIndex::H11(SymProductSpace::h11(&H48Coords)),
            Space::Nxopt(kind) => AnyIndex::Nxopt(nxopt_space(kind)),
        };
        // The others' tables are small and fixed: checked once built, before any bit array.
        let (rows, columns) =
            with_index!(&built, i => (RowIndex::row_count(i) as u64, RowIndex::column_count(i) as u64));
        check(IndexSize { rows, columns, bytes: 0 })?;
        Ok(built)
    }

    /// Runs `visitor` on the index as its own type.
    pub fn visit<V: IndexVisitor>(&self, visitor: V) -> V::Output {
        with_index!(self, i => visitor.visit(i))
    }

    /// Positions in the space (the enumerated spaces: corners, edges, H, H'); `None` for the
    /// table indexes, whose entries are not positions one to one.
    pub fn order(&self) -> Option<u128> {
        match self {
            AnyIndex::Corners(i) => Some(i.order() as u128),
            AnyIndex::Edges(i) => Some(i.order() as u128),
            AnyIndex::Kociemba(i) => Some(i.order() as u128),
            _ => None,
        }
    }

    /// Kociemba's H or H' (the phase-2 table's search).
    pub fn kociemba(&self) -> Option<&KociembaSpace> {
        match self {
            AnyIndex::Kociemba(i) => Some(i),
            _ => None,
        }
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

    /// The index as bytes for workers that receive it instead of building it
    /// ([`RowJob::index_from_bytes`]): the corner and edge spaces, whose index takes seconds to
    /// build (edges: 15 CPU seconds); `None` for the others, which each worker builds, and for
    /// an index built without transitions.
    pub fn to_bytes(&self) -> Option<Vec<u8>> {
        match self {
            AnyIndex::Corners(i) if i.has_transitions() => Some(i.to_bytes()),
            AnyIndex::Edges(i) if i.has_transitions() => Some(i.to_bytes()),
            _ => None,
        }
    }

    /// The sources of every row under `moves` (what a push reads).
    pub fn sources(&self, moves: &[Move]) -> Sources {
        with_index!(self, i => Sources::build(i, moves))
    }
}

/// A row search whose rows the workers own (see [`crate::bfs::owned`]): the same functions
/// on any index.
impl PartIndex for AnyIndex {
    fn row_count(&self) -> u32 {
        with_index!(self, i => RowIndex::row_count(i))
    }

    fn column_count(&self) -> u32 {
        with_index!(self, i => RowIndex::column_count(i))
    }

    fn words_per_row(&self) -> usize {
        with_index!(self, i => PartIndex::words_per_row(i))
    }

    fn entry_count(&self) -> u64 {
        with_index!(self, i => RowIndex::entry_count(i))
    }

    fn pull_weight(&self) -> u64 {
        with_index!(self, i => RowIndex::pull_weight(i))
    }

    fn fresh_part(&self, cut: PartCut, k: u32) -> OwnedPart {
        with_index!(self, i => i.fresh_part(cut, k))
    }

    fn start_part(&self, part: &mut OwnedPart, counting: Counting) -> RowCounts {
        with_index!(self, i => i.start_part(part, counting))
    }

    fn finish_part(&self, part: &mut OwnedPart, direction: Direction, counting: Counting) -> RowCounts {
        with_index!(self, i => i.finish_part(part, direction, counting))
    }

    fn push_images(
        &self,
        moves: &[Move],
        targets: Range<u32>,
        sources: &Sources,
        frontier: &OwnedFrontier,
        out: &mut [u64],
    ) -> bool {
        with_index!(self, i => PartIndex::push_images(i, moves, targets, sources, frontier, out))
    }

    fn pull_hits(
        &self,
        moves: &[Move],
        rows: Range<u32>,
        open: &impl RowBits,
        frontier: &OwnedFrontier,
        out: &mut [u64],
    ) {
        with_index!(self, i => PartIndex::pull_hits(i, moves, rows, open, frontier, out))
    }

    fn open_rows_for(&self, moves: &[Move], r: u32, owned: impl Fn(u32) -> bool) -> bool {
        with_index!(self, i => PartIndex::open_rows_for(i, moves, r, &owned))
    }

    fn sources_from(&self, moves: &[Move], from: impl Fn(u32) -> bool + Sync) -> Sources {
        with_index!(self, i => Sources::build_from(i, moves, &from))
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
            "coset/exact/10",
            "coset/bound/20/search/16",
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
            "coset/h/10",
            "coset/exact/21",
            "coset/bound/15/search/16",
            "nxopt-eo4ep1/htm",
            "coset/h/21",
            "coset/g/3",
            "coset/h",
        ] {
            assert!(bad.parse::<JobSpec>().is_err(), "{bad}");
        }
    }
}
