//! Breadth-first enumeration over symmetry-reduced row spaces, and a slow reference method.

mod bitmap;
mod engine;
mod index;
pub mod job;
mod kociemba;
pub mod reference;
mod rows;
mod s4;
pub mod task;

pub use bitmap::BitStore;
pub use engine::{
    run, run_with, state_bytes, BfsError, BfsOptions, DepthCounts, Direction, Expander, Journal, LevelInput,
    LevelRecord, LevelReport, LocalExpander, Progress,
};
pub use index::{close_under, for_each_bit, ColumnMapper, RowCounts, RowIndex};
pub use kociemba::KociembaSpace;
pub use rows::{ColumnMap, Contributions, InverseFilter, RowSpace, Transition};
