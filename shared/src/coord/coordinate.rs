//! Raw coordinates: a position's place in `0..size` for some part of its state, with the tables
//! that act on it (moves, symmetries).

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

/// The row value of a [`BlockLayout`] as a coordinate (e.g. seed 000's cocsep).
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

/// cocsep: corner tetrad separation and corner orientation, 70 x 3^7 values (seed 000).
pub fn cocsep() -> BlockRowCoord<8, 3> {
    BlockRowCoord { name: "cocsep", layout: corner_tetrads() }
}

/// nxopt's corner rows: which corners are in the U layer, and corner orientation (seed 002).
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

/// `table[raw * moves.len() + i]` = coordinate of `decode(raw) * moves[i]`.
pub fn move_table(coord: &dyn Coordinate, moves: &[Move]) -> Vec<u32> {
    (0..coord.size())
        .into_par_iter()
        .flat_map_iter(|raw| {
            let x = coord.decode(raw);
            moves.iter().map(move |m| coord.encode(&x.compose(m.cube())))
        })
        .collect()
}

/// `table[s * size + raw]` = coordinate of `s decode(raw) s^-1`, for the group's members.
pub fn conjugation_table(coord: &dyn Coordinate, group: SymmetryGroup) -> Vec<u32> {
    let size = coord.size();
    group
        .members()
        .flat_map(|s| {
            (0..size)
                .into_par_iter()
                .map(move |raw| coord.encode(&s.conjugate(&coord.decode(raw))))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Looks up a [`conjugation_table`].
pub fn conj_lookup(table: &[u32], size: u32) -> impl Fn(Symmetry, u32) -> u32 + Sync + '_ {
    move |s, raw| table[s.index() * size as usize + raw as usize]
}
