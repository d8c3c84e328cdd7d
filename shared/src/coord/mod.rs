//! Coordinates: ranks, block coordinates, raw coordinates with move and conjugation tables, and
//! symmetry classes.

mod blocks;
mod coordinate;
pub mod rank;
mod symclass;

pub use blocks::{corner_layers, corner_tetrads, edge_slices, BlockLayout, Part, RowConjugation};
pub use coordinate::{
    cocsep, conj_lookup, conjugation_table, corner_layer_rows, move_table, BlockRowCoord, Coordinate,
    CornerPermutation,
};
pub use symclass::{burnside_class_count, SymClasses};

#[cfg(test)]
mod tests;
