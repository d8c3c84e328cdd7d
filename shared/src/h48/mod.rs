//! The H48 solver's pruning tables, as its documentation describes them: coordinates, the BFS
//! indexes that give exact distances, 2-bit packing with per-line minima, the edge fallback and
//! cocsep tables, their file layouts, and an independent direct search to verify entries.
//!
//! Only h0 (no edge orientation) and the edge fallback are true quotient spaces on which a BFS
//! gives exact distances; hN for N > 0 needs the exact h11 distances (docs/h48-tables.md).

mod blocks;
mod builder;
mod file;
mod hn;
mod index_bytes;
mod levels;
mod lines;
mod resume;
mod search;
pub mod table;
mod table_rows;
mod verify;

pub use builder::{
    base_for, cocsep_section, eoesep_section, h48_section, plain_depths, plain_eoesep_depths, small_sections,
    small_sections_from,
};
pub use file::{main_entries, Layout, NotAnH48Format, TableFile, TableWriter, INFO_BYTES};
pub use hn::{H11Rows, RowScratch, H11_COLUMNS};
pub use levels::{ColumnSet, Level};
pub use lines::{merge_line, RowLines};
pub use resume::{RowLog, RowsWriter, SharedFile};
pub use search::DirectSearch;
pub use table_rows::Marks;
pub use verify::{verify, CannotVerify};

#[cfg(test)]
mod tests;
