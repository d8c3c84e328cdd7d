//! What the engine needs from an index of rows x columns: the interface that the block-row
//! space (corners, edges) and Kociemba's H share.

use crate::cube::Move;

/// Maps the columns of one source row into its target row under one move.
pub trait ColumnMapper {
    fn apply(&self, column: u32) -> u32;
}

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

/// A symmetry-reduced index: rows are classes of a coordinate, columns the rest of a position.
pub trait RowIndex: Sync {
    type Mapper<'a>: ColumnMapper
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
    /// Adds to a row's set bits their images under the row's stabilizer.
    fn close_row(&self, row: u32, bits: &mut [u64]);
    /// Counts a row's set bits.
    fn count_row(&self, row: u32, bits: &[u64]) -> RowCounts;
    /// Sets the bits of a row's columns that stand for no position (`entry_count` leaves them
    /// out): the search marks them visited once, so no pull looks at them again. None by
    /// default.
    fn mark_unreachable(&self, _row: u32, _bits: &mut [u64]) {}
}

/// Calls `f` for every set bit of a row.
#[inline]
pub fn for_each_bit(row: &[u64], mut f: impl FnMut(u32)) {
    for (w, &word) in row.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            f(w as u32 * 64 + bits.trailing_zeros());
            bits &= bits - 1;
        }
    }
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
    for_each_bit(&original, |c| {
        for m in maps {
            set_bit(bits, m.apply(c));
        }
    });
}
