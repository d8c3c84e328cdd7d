//! Raw coordinates: a position's place in `0..size` for some part of its state, and
//! [`RawCoord`], its tables of the 18 face turns and the 48 symmetries acting on it.

use super::blocks::{corner_layers, corner_tetrads, BlockLayout, Part};
use super::rank::{factorial, perm_rank, perm_unrank};
use crate::cube::{Corners, Cube, Move, Pieces, Symmetry, SymmetryGroup};
use rayon::prelude::*;

/// A function from positions onto `0..size` that is constant on the cosets of some subgroup.
pub trait Coordinate: Sync {
    fn name(&self) -> &str;
    fn size(&self) -> u32;
    fn encode(&self, x: &Cube) -> u32;
    /// Some position with this coordinate value.
    fn decode(&self, raw: u32) -> Cube;
}

/// The row value of a [`BlockLayout`] as a coordinate (e.g. the H48 solver's cocsep).
pub struct BlockRowCoord<const N: usize, const O: u8> {
    pub name: &'static str,
    pub layout: BlockLayout<N, O>,
}

impl<const N: usize, const O: u8> Coordinate for BlockRowCoord<N, O>
where
    Pieces<N, O>: Part,
{
    fn name(&self) -> &str {
        self.name
    }
    fn size(&self) -> u32 {
        self.layout.row_count()
    }
    fn encode(&self, x: &Cube) -> u32 {
        self.layout.row(Pieces::<N, O>::of(x))
    }
    fn decode(&self, raw: u32) -> Cube {
        self.layout.decode(raw, 0).into_cube()
    }
}

/// cocsep: corner tetrad separation and corner orientation, 70 x 3^7 values (the H48 solver's documentation).
pub fn cocsep() -> BlockRowCoord<8, 3> {
    BlockRowCoord { name: "cocsep", layout: corner_tetrads() }
}

/// nxopt's corner rows: which corners are in the U layer, and corner orientation (Rokicki's nxopt).
pub fn corner_layer_rows() -> BlockRowCoord<8, 3> {
    BlockRowCoord { name: "corner-layers", layout: corner_layers() }
}

/// The corner permutation, 8! values.
pub struct CornerPermutation;

impl Coordinate for CornerPermutation {
    fn name(&self) -> &str {
        "corner-permutation"
    }
    fn size(&self) -> u32 {
        factorial(8)
    }
    fn encode(&self, x: &Cube) -> u32 {
        perm_rank(&x.corners.perm)
    }
    fn decode(&self, raw: u32) -> Cube {
        let mut corners = Corners::IDENTITY;
        perm_unrank(raw, &mut corners.perm);
        corners.into_cube()
    }
}

/// A raw coordinate with its move table (all 18 face turns) and conjugation table.
pub struct RawCoord {
    pub size: u32,
    moves: Vec<u32>,
    conj: Vec<u32>,
}

impl RawCoord {
    /// The tables of a coordinate of `size` values: all 18 face turns, and conjugation by the
    /// members of `group` (a coordinate need not be a function of its conjugates under others).
    /// `apply_move` is called for the quarter turns and `conjugate` for a few generators; the
    /// other tables are composed from theirs.
    pub fn build(
        size: u32,
        group: SymmetryGroup,
        apply_move: impl Fn(Move, u32) -> u32 + Sync,
        conjugate: impl Fn(Symmetry, u32) -> u32 + Sync,
    ) -> Self {
        // A face's quarter turn from positions, its half and inverse turns by repeating it.
        let mut moves: Vec<u32> = Vec::with_capacity(Move::COUNT * size as usize);
        for face in 0..6 {
            let quarter: Vec<u32> =
                (0..size).into_par_iter().map(|v| apply_move(Move::new(face, 1), v)).collect();
            let half: Vec<u32> = quarter.par_iter().map(|&v| quarter[v as usize]).collect();
            let inverse: Vec<u32> = half.par_iter().map(|&v| quarter[v as usize]).collect();
            for table in [quarter, half, inverse] {
                moves.extend_from_slice(&table);
            }
        }
        debug_assert!((0..Move::COUNT).all(|m| Move::from_index(m).face() == m / 3), "moves face by face");
        let conj = conj_tables(size, group, conjugate);
        RawCoord { size, moves, conj }
    }

    /// The value of `x m` for any x with value `v`.
    #[inline]
    pub fn apply(&self, m: Move, v: u32) -> u32 {
        self.moves[m.index() * self.size as usize + v as usize]
    }

    /// The value of `s x s^-1` for any x with value `v`.
    #[inline]
    pub fn conjugate(&self, s: Symmetry, v: u32) -> u32 {
        self.conj[s.index() * self.size as usize + v as usize]
    }

    /// The move table row of `m`: entry v is `apply(m, v)`.
    pub fn move_row(&self, m: Move) -> &[u32] {
        &self.moves[m.index() * self.size as usize..][..self.size as usize]
    }

    /// The conjugation table row of `s`.
    pub fn conj_row(&self, s: Symmetry) -> &[u32] {
        &self.conj[s.index() * self.size as usize..][..self.size as usize]
    }

    /// The move tables of the 18 face turns and the conjugation tables of the 48 symmetries,
    /// each one after another as [`Self::apply`] and [`Self::conjugate`] read them.
    pub(crate) fn tables(&self) -> (&[u32], &[u32]) {
        (&self.moves, &self.conj)
    }

    /// A coordinate of `size` values from [`Self::tables`] read back: both of the right
    /// length, every value below `size`.
    pub(crate) fn from_tables(size: u32, moves: Vec<u32>, conj: Vec<u32>) -> Result<Self, &'static str> {
        let n = size as usize;
        if moves.len() != Move::COUNT * n || conj.len() != crate::cube::SYMMETRY_COUNT * n {
            return Err("a coordinate's table of the wrong length");
        }
        if moves.iter().chain(&conj).any(|&v| v >= size) {
            return Err("a coordinate's table value out of range");
        }
        Ok(RawCoord { size, moves, conj })
    }
}

/// The conjugation tables of `group`'s members, one after another: those of a few generators
/// from `conjugate` (a position a value), every other member's as a generator's table read
/// through a table made already, one lookup a value.
fn conj_tables(size: u32, group: SymmetryGroup, conjugate: impl Fn(Symmetry, u32) -> u32 + Sync) -> Vec<u32> {
    let make = |s: Symmetry| (0..size).into_par_iter().map(|v| conjugate(s, v)).collect::<Vec<u32>>();
    let compose =
        |_, by_g: &Vec<u32>, _, by_w: &Vec<u32>| by_w.par_iter().map(|&v| by_g[v as usize]).collect();
    group.tables_by_generators(make, compose).concat()
}

impl RawCoord {
    /// The tables of a [`Coordinate`], from positions with each value.
    pub fn of(coord: &dyn Coordinate) -> Self {
        let on = |v: u32, f: &dyn Fn(Cube) -> Cube| coord.encode(&f(coord.decode(v)));
        RawCoord::build(
            coord.size(),
            SymmetryGroup::Full,
            |m, v| on(v, &|x| x.compose(m.cube())),
            |s, v| on(v, &|x| s.conjugate(&x)),
        )
    }
}

/// A map of coordinate values (a move or a symmetry acting on a coordinate), as the search's
/// inner loops apply it to columns.
pub trait ColumnMapper {
    fn apply(&self, column: u32) -> u32;

    /// Calls `f` with the image of every set bit of `row` (a map may do this faster than one
    /// [`Self::apply`] per bit).
    #[inline]
    fn for_each_image(&self, row: &[u64], mut f: impl FnMut(u32))
    where
        Self: Sized,
    {
        for_each_bit(row, |c| f(self.apply(c)));
    }

    /// ORs into `out` the image of every set bit of `row` (a map may move whole groups of bits).
    #[inline]
    fn or_images(&self, row: &[u64], out: &mut [u64])
    where
        Self: Sized,
    {
        self.for_each_image(row, |c| out[c as usize / 64] |= 1 << (c % 64));
    }

    /// A row's pull through its neighbours' maps: moves from `open` (the row's entries not
    /// reached yet) to `out` those whose image under a neighbour's map is set in that
    /// neighbour's row (clear, where `unset`: rows of unvisited entries), whole groups of
    /// entries at a time. False, and nothing changed, where the maps move entries only one at
    /// a time: the caller then tests them one by one ([`pull_entries`]).
    #[inline]
    fn pull_row(
        _neighbours: &[Option<(&[u64], Self)>],
        _unset: bool,
        _open: &mut [u64],
        _out: &mut [u64],
    ) -> bool
    where
        Self: Sized,
    {
        false
    }
}

/// A pull through one map, an entry at a time: moves from `open` to `out` the entries whose
/// image under `map` is set in `target` (clear, where `unset`).
pub fn pull_entries(map: &impl ColumnMapper, target: &[u64], unset: bool, open: &mut [u64], out: &mut [u64]) {
    for (w, (o, x)) in open.iter_mut().zip(out.iter_mut()).enumerate() {
        let mut bits = *o;
        while bits != 0 {
            let c = w as u32 * 64 + bits.trailing_zeros();
            bits &= bits - 1;
            let image = map.apply(c);
            if (target[image as usize / 64] >> (image % 64) & 1 == 1) != unset {
                *o &= !(1 << (c % 64));
                *x |= 1 << (c % 64);
            }
        }
    }
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
