//! Breadth-first enumeration over symmetry-reduced row spaces, and a slow reference method.

mod engine;
pub mod reference;
mod rows;

pub use engine::{run, DepthCounts, Direction, LevelReport};
pub use rows::{ColumnMap, RowSpace, Transition};
