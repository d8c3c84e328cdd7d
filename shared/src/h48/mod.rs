//! The H48 solver's pruning tables (seed 000): coordinates, the BFS indexes that give exact
//! distances, 2-bit packing with per-line minima, the edge fallback and cocsep tables, their
//! file layouts, and an independent direct search to verify entries.
//!
//! Only h0 (no edge orientation) and the edge fallback are true quotient spaces on which a BFS
//! gives exact distances; hN for N > 0 needs the exact h11 distances (docs/h48-tables.md).

mod builder;
mod coords;
mod file;
mod reduce;
mod search;
mod space;
pub mod table;

pub use builder::{
    base_for, bfs_depths, cocsep_section, eoesep_section, h48_section, plain_depths, plain_eoesep_depths,
    small_sections, DepthRecorder, Depths, Section, SectionKind,
};
pub use coords::{EoEsepColumns, EoEsepMap, H48Coords, RawCoord, COCSEP, EO, ESEP};
pub use file::{read_tables, write_tables, Format, TableFileError, INFO_BYTES, TABLE_VERSION};
pub use reduce::HnRecorder;
pub use search::DirectSearch;
pub use space::{Columns, EoEsepSpace, SymProductSpace};

#[cfg(test)]
mod tests;
