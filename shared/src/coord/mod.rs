//! Coordinates: ranks, block coordinates, raw coordinates with move and conjugation tables,
//! symmetry classes, and the H48 solver's coordinates in its own numbering ([`h48`]).

mod blocks;
pub mod cubepos;
pub mod flips;
pub mod h48;
pub mod nxopt;
pub mod nxopt_columns;
pub mod rank;
mod raw;
mod symclass;

pub use blocks::{corner_layers, corner_tetrads, edge_slices, BlockLayout, Part, RowConjugation};
pub use raw::{
    cocsep, corner_layer_rows, for_each_bit, pull_entries, BlockRowCoord, ColumnMapper, Coordinate,
    CornerPermutation, RawCoord,
};
pub use symclass::{burnside_class_count, SymClasses};

#[cfg(test)]
mod tests;
