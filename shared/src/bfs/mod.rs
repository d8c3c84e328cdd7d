//! Breadth-first enumeration over symmetry-reduced row spaces, and a slow reference method.

mod bitmap;
mod engine;
pub mod reference;
pub mod task;

pub use bitmap::BitStore;
pub use engine::{
    run, run_with, state_bytes, BfsError, BfsOptions, Direction, Expander, Journal, LevelInput, LevelRecord,
    LevelReport, LocalExpander, Progress,
};
