//! Breadth-first enumeration over symmetry-reduced row spaces, and a slow reference method.

mod bitmap;
pub mod cut;
mod depths;
mod engine;
mod levels;
mod lists;
pub mod owned;
pub mod reference;
mod report;
pub mod task;

pub use bitmap::BitStore;
pub use depths::{bfs_depths, DepthRecorder, Depths, DEEPER};
pub use engine::{run, state_bytes, BfsOptions, Journal, LevelRecord};
pub use levels::{run_levels, LevelMaker, Standing};
pub use report::{level_report, BfsError, Direction, JournalError, LevelReport, Progress};
