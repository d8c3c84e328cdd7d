//! Breadth-first enumeration over symmetry-reduced row spaces, and a slow reference method.

mod bitmap;
mod depths;
mod engine;
mod levels;
pub mod owned;
pub mod reference;
pub mod task;

pub use bitmap::BitStore;
pub use depths::{bfs_depths, DepthRecorder, Depths, DEEPER};
pub use engine::{
    level_report, run, state_bytes, BfsError, BfsOptions, Direction, Journal, JournalError, LevelRecord,
    LevelReport, Progress,
};
pub use levels::{run_levels, LevelMaker, Standing};
