//! The symmetry-reduced index of rows x columns and the per-(row, move) maps (DESIGN section 3).
//!
//! A position x of one piece kind is stored at (row, column): the row is the symmetry class of
//! its block-row value A(x) (see `coord::blocks`), and the column is the block ordering of
//! `s x s^-1`, where `s` brings A(x) to the class representative. For a row r and a move m, every
//! column of r lands in one target row r' and the columns map through one bijection that acts
//! block by block (each target block's ordering is a fixed function of one source block's
//! ordering), so a [`ColumnMap`] is at most 3 x 24 bytes and is probed once per (row, move).
//!
//! Rows whose representative has a non-trivial stabilizer hold, for one position class, every
//! column the stabilizer relates; `stabilizer_maps` lists those column maps so the engine can
//! close a row after writing it.

use crate::coord::{BlockLayout, Part, SymClasses};
use crate::cube::{Move, Pieces, Symmetry, SymmetryGroup};
use rayon::prelude::*;

/// A block-wise bijection of columns: target block `j` takes its ordering from source block
/// `src[j]` through `table[j]`. Block 0 is the most significant base-24 digit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnMap {
    blocks: u8,
    src: [u8; 3],
    table: [[u8; 24]; 3],
}

impl ColumnMap {
    #[inline]
    pub fn apply(&self, column: u32) -> u32 {
        let nb = self.blocks as usize;
        let mut digits = [0u8; 3];
        let mut c = column;
        for b in (0..nb).rev() {
            digits[b] = (c % 24) as u8;
            c /= 24;
        }
        let mut out = 0u32;
        for j in 0..nb {
            out = out * 24 + self.table[j][digits[self.src[j] as usize] as usize] as u32;
        }
        out
    }

    /// Finds the block-wise map of `f` by probing each source block's 24 orderings with the
    /// other blocks at ordering 0. Panics if `f` is not block-wise (a bug in the space, not input).
    fn probe(blocks: usize, f: impl Fn(u32) -> u32) -> ColumnMap {
        let digits = |c: u32| -> [u8; 3] {
            let mut d = [0u8; 3];
            let mut c = c;
            for b in (0..blocks).rev() {
                d[b] = (c % 24) as u8;
                c /= 24;
            }
            d
        };
        let mut map = ColumnMap { blocks: blocks as u8, src: [0; 3], table: [[0; 24]; 3] };
        let base = digits(f(0));
        let mut claimed = [false; 3];
        for b in 0..blocks {
            let images: Vec<[u8; 3]> =
                (0..24u32).map(|o| digits(f(o * 24u32.pow((blocks - 1 - b) as u32)))).collect();
            let varying: Vec<usize> =
                (0..blocks).filter(|&j| images.iter().any(|d| d[j] != base[j])).collect();
            let j = match varying.as_slice() {
                [j] => *j,
                _ => panic!("column map is not block-wise: source block {b} moves blocks {varying:?}"),
            };
            assert!(!claimed[j], "two source blocks map onto target block {j}");
            claimed[j] = true;
            map.src[j] = b as u8;
            for (o, d) in images.iter().enumerate() {
                map.table[j][o] = d[j];
            }
        }
        map
    }
}

/// Where a row goes under one move.
#[derive(Clone, Copy, Debug)]
pub struct Transition {
    pub target: u32,
    pub map: ColumnMap,
}

/// Rows (symmetry classes of a block-row coordinate) x columns (block orderings), with the
/// move transitions of every row.
pub struct RowSpace<const N: usize, const O: u8> {
    layout: BlockLayout<N, O>,
    classes: SymClasses,
    moves: Vec<Move>,
    transitions: Vec<Transition>,
    stabilizer_maps: Vec<Vec<ColumnMap>>,
}

impl<const N: usize, const O: u8> RowSpace<N, O>
where
    Pieces<N, O>: Part,
{
    /// Builds the classes of the layout's row values under all 48 symmetries and probes every
    /// (row, move) map. The move set must be closed under conjugation by the symmetries.
    pub fn new(layout: BlockLayout<N, O>, moves: Vec<Move>) -> Self {
        let size = layout.row_count();
        let conj_table: Vec<u32> = Symmetry::all()
            .flat_map(|s| {
                let layout = &layout;
                (0..size)
                    .into_par_iter()
                    .map(move |raw| layout.row(&layout.decode(raw, 0).conjugate(s)))
                    .collect::<Vec<_>>()
            })
            .collect();
        let classes = SymClasses::build(size, SymmetryGroup::Full, |s, raw| {
            conj_table[s.index() * size as usize + raw as usize]
        });
        drop(conj_table);
        let mut space =
            RowSpace { layout, classes, moves, transitions: Vec::new(), stabilizer_maps: Vec::new() };
        let rows = space.row_count();
        space.transitions = (0..rows)
            .into_par_iter()
            .flat_map_iter(|r| {
                let space = &space;
                space.moves.iter().map(move |&m| space.probe_transition(r, m))
            })
            .collect();
        space.stabilizer_maps = (0..rows)
            .into_par_iter()
            .map(|r| {
                let stab = space.classes.stabilizer(r);
                Symmetry::all()
                    .filter(|s| *s != Symmetry::IDENTITY && stab >> s.index() & 1 == 1)
                    .map(|s| {
                        ColumnMap::probe(space.layout.block_count(), |c| space.conjugate_column(r, c, s))
                    })
                    .collect()
            })
            .collect();
        space
    }

    fn probe_transition(&self, row: u32, m: Move) -> Transition {
        let step = |c: u32| {
            let y = self.position(row, c).compose(Pieces::<N, O>::of(m.cube()));
            self.locate(&y)
        };
        let (target, _) = step(0);
        let map = ColumnMap::probe(self.layout.block_count(), |c| {
            let (t, col) = step(c);
            assert_eq!(t, target, "a move sends one row to one row");
            col
        });
        Transition { target, map }
    }

    /// Column of `s x s^-1` for x = (row, column), s in the row's stabilizer.
    fn conjugate_column(&self, row: u32, column: u32, s: Symmetry) -> u32 {
        let y = self.position(row, column).conjugate(s);
        debug_assert_eq!(self.layout.row(&y), self.classes.rep(row));
        self.layout.column(&y)
    }

    pub fn layout(&self) -> &BlockLayout<N, O> {
        &self.layout
    }

    pub fn classes(&self) -> &SymClasses {
        &self.classes
    }

    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    pub fn row_count(&self) -> u32 {
        self.classes.class_count() as u32
    }

    pub fn column_count(&self) -> u32 {
        self.layout.column_count()
    }

    /// The position stored at (row, column).
    pub fn position(&self, row: u32, column: u32) -> Pieces<N, O> {
        self.layout.decode(self.classes.rep(row), column)
    }

    /// (row, column) of a position: its class row and the column of its conjugate that lies
    /// in the representative row (one of them, when the row is self-symmetric).
    pub fn locate(&self, x: &Pieces<N, O>) -> (u32, u32) {
        let raw = self.layout.row(x);
        let row = self.classes.class_of(raw);
        let y = x.conjugate(self.classes.to_rep(raw));
        (row, self.layout.column(&y))
    }

    #[inline]
    pub fn transition(&self, row: u32, move_index: usize) -> &Transition {
        &self.transitions[row as usize * self.moves.len() + move_index]
    }

    /// Column maps of the non-identity members of the row's stabilizer.
    #[inline]
    pub fn stabilizer_maps(&self, row: u32) -> &[ColumnMap] {
        &self.stabilizer_maps[row as usize]
    }

    /// Number of raw row values the row stands for (48 / |stabilizer|): each entry of the row
    /// counts for that many positions.
    #[inline]
    pub fn class_size(&self, row: u32) -> u32 {
        self.classes.class_size(row)
    }

    /// The smallest column related to `column` by the row's stabilizer: the canonical column of
    /// the position's class under the 48 symmetries.
    #[inline]
    pub fn canonical_column(&self, row: u32, column: u32) -> u32 {
        self.stabilizer_maps(row).iter().map(|m| m.apply(column)).fold(column, u32::min)
    }

    /// True if the position class of (row, column) contains the inverses of its members.
    pub fn is_self_inverse_class(&self, row: u32, column: u32) -> bool {
        let (r, c) = self.locate(&self.position(row, column).inverse());
        r == row && self.canonical_column(r, c) == self.canonical_column(row, column)
    }
}
