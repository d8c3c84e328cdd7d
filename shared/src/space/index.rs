//! What a search needs from an index of rows x columns, and the parts every index shares: the
//! stabilizer closure of a row, the canonical column of a class, the per-row counts, and the
//! per-(row, move) targets of a space whose rows are symmetry classes of a raw coordinate.

pub use crate::coord::for_each_bit;
use crate::coord::{ColumnMapper, SymClasses};
use crate::cube::{Move, Symmetry};
use rayon::prelude::*;
use std::ops::Range;

/// Per-row counts of one depth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowCounts {
    /// Entries set in the row.
    pub entries: u64,
    /// Positions they stand for.
    pub positions: u64,
    /// Classes under the index's symmetry group.
    pub classes: u64,
    /// Those classes that contain the inverses of their members.
    pub self_inverse: u64,
}

impl std::ops::Add for RowCounts {
    type Output = RowCounts;
    fn add(self, o: RowCounts) -> RowCounts {
        RowCounts {
            entries: self.entries + o.entries,
            positions: self.positions + o.positions,
            classes: self.classes + o.classes,
            self_inverse: self.self_inverse + o.self_inverse,
        }
    }
}

/// Which class columns of a row may hold a self-inverse class.
pub enum Inverses<F> {
    /// The space has no inverses (a coset space): the self-inverse column repeats the class
    /// column, and nothing reports it.
    Undefined,
    /// No class of the row contains the inverses of its members.
    Never,
    /// Classes whose column passes the filter are located and compared.
    Test(F),
}

/// A cheap pre-test of [`Inverses::Test`]: false only when the inverse is certainly elsewhere.
pub trait InverseFilter {
    fn candidate(&self, column: u32) -> bool;

    /// Calls `f` with every set column of `bits` (one row) that passes [`Self::candidate`], in
    /// increasing order. A filter with structure can skip whole groups of columns at once.
    fn for_each_candidate(&self, bits: &[u64], mut f: impl FnMut(u32))
    where
        Self: Sized,
    {
        for_each_bit(bits, |c| {
            if self.candidate(c) {
                f(c)
            }
        });
    }
}

/// The filter that lets every column through.
pub struct AnyColumn;

impl InverseFilter for AnyColumn {
    #[inline]
    fn candidate(&self, _: u32) -> bool {
        true
    }
}

/// A symmetry-reduced index: rows are classes of a coordinate, columns the rest of a position.
pub trait RowIndex: Sync {
    /// Column map of a move.
    type Mapper<'a>: ColumnMapper
    where
        Self: 'a;
    /// Column map of a member of a row's stabilizer.
    type Symmetric<'a>: ColumnMapper
    where
        Self: 'a;
    /// See [`Inverses::Test`].
    type Filter<'a>: InverseFilter
    where
        Self: 'a;

    fn row_count(&self) -> u32;
    fn column_count(&self) -> u32;
    /// Number of entries that stand for positions (some columns may be unreachable by parity).
    fn entry_count(&self) -> u64;
    /// (row, column) of the solved position.
    fn start(&self) -> (u32, u32);
    /// Target row and column map of `row` under the move `m`.
    fn transition(&self, row: u32, m: Move) -> (u32, Self::Mapper<'_>);
    /// Positions one entry of the row stands for (the size of the row's class).
    fn row_weight(&self, row: u32) -> u64;
    /// How much cheaper an unvisited entry is to pull than a frontier entry to push, as the
    /// one-process search weighs directions ([`crate::bfs::Direction::choose`]): 1 where both
    /// go entry by entry; more where the maps pull whole groups of entries.
    fn pull_weight(&self) -> u64 {
        1
    }
    /// Column maps of the non-identity members of the row's stabilizer: the columns of one
    /// position class within the row.
    fn stabilizer(&self, row: u32) -> Vec<Self::Symmetric<'_>>;
    /// How the row's classes are tested for self-inverse ones.
    fn inverses(&self, row: u32) -> Inverses<Self::Filter<'_>>;
    /// (row, column) of the inverse of the position at (row, column), for
    /// [`Inverses::Test`] (unused otherwise).
    fn locate_inverse(&self, row: u32, column: u32) -> (u32, u32);
    /// The column of the inverse of the position at (row, column) when the inverse lies in
    /// the same row, else `None`: all a self-inverse test needs, and cheaper where another
    /// row is costly to find.
    fn inverse_in_row(&self, row: u32, column: u32) -> Option<u32> {
        let (r, c) = self.locate_inverse(row, column);
        (r == row).then_some(c)
    }
    /// Sets the bits of a row's columns that stand for no position (`entry_count` leaves them
    /// out): the search marks them visited once, so no pull looks at them again. None by
    /// default.
    fn mark_unreachable(&self, _row: u32, _bits: &mut [u64]) {}

    /// Adds to a row's set bits their images under the row's stabilizer.
    fn close_row(&self, row: u32, bits: &mut [u64]) {
        close_under(bits, &self.stabilizer(row));
    }

    /// Counts a row's set bits: positions weigh each entry by the row's class size; classes
    /// are canonical columns; self-inverse classes are filtered, then located and compared.
    fn count_row(&self, row: u32, bits: &[u64]) -> RowCounts {
        let entries = crate::ones::ones(bits);
        let mut counts =
            RowCounts { entries, positions: entries * self.row_weight(row), ..Default::default() };
        let maps = self.stabilizer(row);
        counts.classes = if maps.is_empty() {
            entries
        } else {
            let mut classes = 0;
            for_each_bit(bits, |c| classes += (canonical(&maps, c) == c) as u64);
            classes
        };
        match self.inverses(row) {
            Inverses::Undefined => counts.self_inverse = counts.classes,
            Inverses::Never => {}
            Inverses::Test(filter) => filter.for_each_candidate(bits, |c| {
                if maps.is_empty() || canonical(&maps, c) == c {
                    let same = self.inverse_in_row(row, c);
                    counts.self_inverse += same.is_some_and(|c2| canonical(&maps, c2) == c) as u64;
                }
            }),
        }
        counts
    }
}

/// The smallest column related to `column` by `maps` (a stabilizer without its identity): the
/// canonical column of the position's class.
#[inline]
pub fn canonical<M: ColumnMapper>(maps: &[M], column: u32) -> u32 {
    maps.iter().map(|m| m.apply(column)).fold(column, u32::min)
}

#[inline]
pub fn set_bit(row: &mut [u64], column: u32) {
    row[column as usize / 64] |= 1 << (column % 64);
}

#[inline]
pub fn test_bit(row: &[u64], column: u32) -> bool {
    row[column as usize / 64] >> (column % 64) & 1 == 1
}

/// Closes a row under a list of column maps (the non-identity stabilizer members).
pub fn close_under<M: ColumnMapper>(bits: &mut [u64], maps: &[M]) {
    if maps.is_empty() || bits.iter().all(|&w| w == 0) {
        return;
    }
    let original = bits.to_vec();
    for m in maps {
        m.or_images(&original, bits);
    }
}

/// Closes every row of `rows` (`bits` holds just those rows) under its stabilizer.
pub fn close_rows<I: RowIndex>(space: &I, rows: Range<u32>, bits: &mut [u64]) {
    let words = (space.column_count() as usize).div_ceil(64);
    for (r, row) in rows.zip(bits.chunks_mut(words)) {
        space.close_row(r, row);
    }
}

/// Counts the entries of `rows` (`bits` holds just those rows).
pub fn count_rows<I: RowIndex>(space: &I, rows: Range<u32>, bits: &[u64]) -> RowCounts {
    let words = (space.column_count() as usize).div_ceil(64);
    rows.zip(bits.chunks(words))
        .filter(|(_, row)| row.iter().any(|&w| w != 0))
        .map(|(r, row)| space.count_row(r, row))
        .fold(RowCounts::default(), |a, b| a + b)
}

/// Counts the entries of `rows` and the positions they stand for, not their classes.
pub fn count_positions<I: RowIndex>(space: &I, rows: Range<u32>, bits: &[u64]) -> RowCounts {
    let words = (space.column_count() as usize).div_ceil(64);
    rows.zip(bits.chunks(words))
        .map(|(r, row)| {
            let entries = crate::ones::ones(row);
            RowCounts { entries, positions: entries * space.row_weight(r), ..Default::default() }
        })
        .fold(RowCounts::default(), |a, b| a + b)
}

/// Rows that are the symmetry classes of a raw coordinate: per (row, move) the target row and
/// the symmetry that brings the image to its representative, per row the non-identity members
/// of its stabilizer.
pub struct ClassRows {
    pub classes: SymClasses,
    moves: usize,
    targets: Vec<(u32, u8)>,
    stabilizers: Vec<Vec<Symmetry>>,
}

impl ClassRows {
    /// `apply(m, v)` is the coordinate of `x m` for x with coordinate `v`; `moves` are the
    /// moves of the space, indexed by their slot in the list.
    pub fn build(classes: SymClasses, moves: &[Move], apply: impl Fn(Move, u32) -> u32 + Sync) -> Self {
        let rows = classes.class_count() as u32;
        let targets = (0..rows)
            .into_par_iter()
            .flat_map_iter(|r| {
                let rep = classes.rep(r);
                let (classes, apply) = (&classes, &apply);
                moves.iter().map(move |&m| {
                    let raw = apply(m, rep);
                    (classes.class_of(raw), classes.to_rep(raw).0)
                })
            })
            .collect();
        let stabilizers = stabilizer_lists(&classes);
        ClassRows { classes, moves: moves.len(), targets, stabilizers }
    }

    /// Every (row, move slot)'s target row and symmetry, row after row, as
    /// [`Self::from_targets`] takes them back.
    pub(crate) fn targets(&self) -> &[(u32, u8)] {
        &self.targets
    }

    /// The moves of the space (the slots of each row).
    pub(crate) fn move_count(&self) -> usize {
        self.moves
    }

    /// Rows read back from [`Self::targets`] of `moves` slots a row: targets among the
    /// classes, symmetries among the 48.
    pub(crate) fn from_targets(
        classes: SymClasses,
        moves: usize,
        targets: Vec<(u32, u8)>,
    ) -> Result<Self, &'static str> {
        let rows = classes.class_count();
        let fits = targets.len() == rows * moves
            && targets
                .iter()
                .all(|&(t, s)| (t as usize) < rows && (s as usize) < crate::cube::SYMMETRY_COUNT);
        if !fits {
            return Err("the rows' transitions");
        }
        let stabilizers = stabilizer_lists(&classes);
        Ok(ClassRows { classes, moves, targets, stabilizers })
    }

    pub fn row_count(&self) -> u32 {
        self.classes.class_count() as u32
    }

    /// Target row of `row` under the move in `slot`, and the symmetry to its representative.
    #[inline]
    pub fn target(&self, row: u32, slot: usize) -> (u32, Symmetry) {
        let (t, s) = self.targets[row as usize * self.moves + slot];
        (t, Symmetry(s))
    }

    /// The non-identity members of the row's stabilizer.
    #[inline]
    pub fn stabilizer(&self, row: u32) -> &[Symmetry] {
        &self.stabilizers[row as usize]
    }

    #[inline]
    pub fn class_size(&self, row: u32) -> u64 {
        self.classes.class_size(row) as u64
    }
}

/// Per class, the non-identity members of its stabilizer.
fn stabilizer_lists(classes: &SymClasses) -> Vec<Vec<Symmetry>> {
    (0..classes.class_count() as u32)
        .map(|r| {
            Symmetry::all()
                .filter(|s| *s != Symmetry::IDENTITY && classes.stabilizer(r) >> s.index() & 1 == 1)
                .collect()
        })
        .collect()
}
