//! Product enumeration (Bryan's method): store the positions near start, P[0..=k], and find
//! the positions at distance `j + k` as products `s t` of stored ones, one coset of a
//! stabilizer subgroup at a time. Cosets are independent, which makes them the unit of work,
//! and the 48 symmetries act on them, so only one coset per class is enumerated.
//!
//! - [`cosets`]: how a space is cut into cosets and how positions are named inside one.
//! - `cube_keys`: the whole cube's product keys with byte shuffles.
//! - [`layers`]: P[0..=k], grouped by coset.
//! - [`coset`]: one coset's (or one part of a coset's) positions, classes and self-inverse
//!   classes per depth.
//! - `sieve`: a depth's products, repeats and keys seen before dropped, cache-sized run by run.
//! - [`orbits`]: which of a coset's positions stand for a class, and which classes are self-inverse.
//! - [`job`]: the representative cosets, run in parallel, and the merge of their counts.
//! - [`spec`]: a job named by a string, built the same way by the coordinator and by workers.

pub mod coset;
pub mod cosets;
mod cube_keys;
pub mod job;
pub mod layers;
pub mod orbits;
mod sieve;
pub mod spec;

pub use coset::{enumerate_coset, CosetDepth, Part, Scratch};
pub use cosets::{CosetSpace, CubeCosets, EdgeCosets};
pub use job::{
    coset_classes, enumerate_cosets, enumerated, inverse_classes, merge, stored_depth, ProductCounts,
};
pub use layers::{Layer, Layers};
pub use spec::{BadProductSpec, ProductJob, ProductSpec};
