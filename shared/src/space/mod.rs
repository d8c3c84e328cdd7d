//! Index spaces: the rows x columns a search runs on. Rows are symmetry classes of one
//! coordinate, columns the rest of a position; per (row, move) an index gives the target row
//! and a column map, per row the stabilizer's column maps. [`RowIndex`] is what the engines in
//! `bfs` and `h48` read; one file per family of spaces implements it.
//!
//! - [`kind`]: the spaces by name ([`Space`]), parsed once for the command line, job names and
//!   workers.
//! - [`index`]: the trait and what every index shares (closure, canonical columns, counts,
//!   class rows of a raw coordinate).
//! - [`blocks`]: block rows (corners, edges: docs/row-bfs.md).
//! - [`kociemba`]: Kociemba's H and H' (Rokicki's phase2prune).
//! - [`locality`]: row orders that keep together rows the moves join (fewer bytes between a
//!   cluster's owners).
//! - [`h48`]: the product spaces of the H48 tables (the H48 solver's documentation).
//! - [`nxopt`]: the index of nxopt's tables (Rokicki's nxopt), a product space whose columns are
//!   nxopt's with the flips innermost.

/// The version of the spaces' row and column numbering, part of a search journal's identity: a
/// state directory written under another numbering holds other rows or columns, and is refused,
/// not resumed. Version 2: H and H' in the locality order of [`locality`], and corners and edges
/// too in a distributed search. Version 3: nxopt's columns with the flips innermost.
pub const ROW_NUMBERING: u32 = 3;

pub mod blocks;
pub mod h48;
pub mod index;
pub mod kind;
pub mod kociemba;
pub mod locality;
pub mod nxopt;
pub(crate) mod reader;
mod s4;

pub use blocks::{ColumnMap, Contributions, IndexBytesError, RowSpace, Transition, Transitions};
pub use h48::{Columns, EoEsepSpace, SymProductSpace};
pub use index::{
    close_rows, close_under, count_positions, count_rows, for_each_bit, set_bit, test_bit, AnyColumn,
    ClassRows, InverseFilter, Inverses, RowCounts, RowIndex,
};
pub use kind::{Space, UnknownSpace};
pub use kociemba::KociembaSpace;
pub use locality::RowOrder;
pub use nxopt::nxopt_space;
