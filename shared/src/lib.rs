//! The library behind the `coordinator` and `worker` binaries: cube algebra, coordinates,
//! symmetry classes, the breadth-first enumeration engines and their result formats.
//!
//! # Layout
//! - [`cube`]: positions, moves, the 48 symmetries, notation.
//! - [`coord`]: ranks of permutations, combinations and orientations; move tables; symmetry
//!   classes of coordinates.
//! - [`bfs`]: the symmetry-reduced row BFS engine and the plain reference method.
//! - [`product`]: product enumeration over cosets (seed 004's method), for the whole cube.
//! - [`report`]: enumeration results as text, markdown and JSON.
//! - [`checksum`], [`shard`]: CRC-32, and the checked, compressed unit of work results.

pub mod bfs;
pub mod checksum;
pub mod coord;
pub mod cube;
pub mod h48;
pub mod product;
pub mod report;
pub mod shard;
