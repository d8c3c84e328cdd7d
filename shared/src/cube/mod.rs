//! Cube algebra: cubie states, face turns, the 48 symmetries, notation and word forms.
//!
//! Everything geometric (which stickers a turn moves, how a symmetry permutes stickers) is
//! computed from 3D vectors in [`geometry`], so there is no hand-typed permutation table to get
//! wrong. Positions are kept in the compact cubie form ([`Pieces`]); symmetries act through the
//! 24-slot sticker form, where a mirror is just another permutation.

pub mod geometry;
mod moves;
mod pieces;
mod random;
mod state;
mod symmetry;
mod word;

pub use moves::{apply_moves, format_moves, parse_moves, Move, MoveSet, ParseMovesError, UnknownMoveSet};
pub use pieces::{compose_stickers, invert_stickers, Corners, Edges, Pieces};
pub use random::{random_cube, SplitMix64};
pub use state::{Cube, Singmaster};
pub use symmetry::{Symmetry, SymmetryGroup, SYMMETRY_COUNT, UD_SYMMETRY_COUNT};
pub use word::WordError;

#[cfg(test)]
mod tests;
