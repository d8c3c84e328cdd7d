//! A product enumeration named by a string ("product/cube/htm/10", or
//! "product/cube/htm/12/parts=12" when each coset is enumerated in parts), so that a worker
//! builds the same stored positions and coset classes as the coordinator, and the job built
//! from it: the parts of the representative cosets are its tasks, numbered `0..task_count()`.

use super::coset::{enumerate_coset, CosetDepth, Part};
use super::cosets::{CosetSpace, CubeCosets, EdgeCosets};
use super::job::{
    class_weight, coset_classes, enumerate_cosets, enumerated, inverse_classes, merge, stored_depth,
    with_thread_scratch, ProductCounts,
};
use super::layers::Layers;
use crate::coord::SymClasses;
use crate::cube::MoveSet;
use crate::space::Space;
use std::ops::Range;
use std::sync::atomic::AtomicU64;

/// The coset family of a product space (see [`Space::has_cosets`]).
fn coset_space(space: Space) -> Box<dyn CosetSpace + Send> {
    match space {
        Space::Cube => Box::new(CubeCosets),
        Space::Edges => Box::new(EdgeCosets::default()),
        other => unreachable!("{other} has no product method (checked when its spec is made)"),
    }
}

/// A space, its move set, the depth to reach, and the parts each coset is cut into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProductSpec {
    /// The cube or the edges ([`Space::has_cosets`]).
    pub space: Space,
    pub moves: MoveSet,
    pub max_depth: u32,
    /// Parts per coset, 1 ..= [`Part::MAX_COUNT`].
    pub parts: u32,
}

impl ProductSpec {
    /// Whole cosets, one task each.
    pub const fn new(space: Space, moves: MoveSet, max_depth: u32) -> Self {
        ProductSpec { space, moves, max_depth, parts: 1 }
    }
}

/// Deepest depth accepted from a spec string (P[8] of the cube would not fit any machine).
const MAX_SPEC_DEPTH: u32 = 16;

impl std::fmt::Display for ProductSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "product/{}/{}/{}", self.space, self.moves.name(), self.max_depth)?;
        if self.parts != 1 {
            write!(f, "/parts={}", self.parts)?;
        }
        Ok(())
    }
}

/// Text that is not a product job's spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadProductSpec {
    #[error("bad product job spec {0:?} (expected product/SPACE/METRIC/DEPTH[/parts=N])")]
    Shape(String),
    #[error("unknown space {0:?} in product job spec")]
    Space(String),
    #[error("unknown metric {0:?} in product job spec")]
    Metric(String),
}

impl std::str::FromStr for ProductSpec {
    type Err = BadProductSpec;
    fn from_str(s: &str) -> Result<Self, BadProductSpec> {
        let bad = || BadProductSpec::Shape(s.to_string());
        let mut fields = s.split('/');
        let (Some("product"), Some(space), Some(moves), Some(depth), cut, None) =
            (fields.next(), fields.next(), fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(bad());
        };
        let parts = match cut {
            None => 1,
            Some(cut) => cut
                .strip_prefix("parts=")
                .and_then(|n| n.parse().ok())
                .filter(|n| (1..=Part::MAX_COUNT).contains(n))
                .ok_or_else(bad)?,
        };
        let space = Space::parse(space)
            .filter(|s| s.has_cosets())
            .ok_or_else(|| BadProductSpec::Space(space.to_string()))?;
        let moves = MoveSet::METRICS
            .into_iter()
            .find(|m| m.name() == moves)
            .ok_or_else(|| BadProductSpec::Metric(moves.to_string()))?;
        let max_depth = depth.parse().ok().filter(|&d| d <= MAX_SPEC_DEPTH).ok_or_else(bad)?;
        Ok(ProductSpec { space, moves, max_depth, parts })
    }
}

/// Everything a product job's tasks read: built the same way from the spec on every process.
pub struct ProductJob {
    pub spec: ProductSpec,
    space: Box<dyn CosetSpace + Send>,
    pub layers: Layers,
    pub classes: SymClasses,
    /// The class of the inverse cosets of each class (see [`super::job::inverse_classes`]).
    pub inverse: Vec<u32>,
    /// The representative coset of each enumerated class (of a class and its inverse class,
    /// the first), in class order: task `i` is part `i % parts` of coset `reps[i / parts]`.
    pub reps: Vec<u32>,
}

impl ProductJob {
    pub fn build(spec: ProductSpec) -> ProductJob {
        let space = coset_space(spec.space);
        let layers = Layers::build(&*space, &spec.moves.moves(), stored_depth(spec.max_depth));
        let classes = coset_classes(&*space);
        let inverse = inverse_classes(&*space, &classes);
        let reps = enumerated(&inverse).map(|c| classes.rep(c)).collect();
        ProductJob { spec, space, layers, classes, inverse, reps }
    }

    /// The cosets whose positions a representative coset's stand for (see
    /// [`super::job::class_weight`]).
    pub fn weight(&self, coset: u32) -> u64 {
        class_weight(&self.classes, &self.inverse, self.classes.class_of(coset))
    }

    pub fn space(&self) -> &dyn CosetSpace {
        &*self.space
    }

    /// Number of tasks: one per part of an enumerated class of cosets.
    pub fn task_count(&self) -> u32 {
        self.reps.len() as u32 * self.spec.parts
    }

    /// The coset and part of task `task`.
    pub fn task(&self, task: u32) -> (u32, Part) {
        let parts = self.spec.parts;
        (self.reps[(task / parts) as usize], Part::new(task % parts, parts))
    }

    /// Runs tasks `range` on the rayon pool; `done` counts them as they finish.
    pub fn run(&self, range: Range<u32>, done: Option<&AtomicU64>) -> Vec<(u32, Vec<CosetDepth>)> {
        let tasks: Vec<(u32, Part)> = range.map(|t| self.task(t)).collect();
        enumerate_cosets(&*self.space, &self.layers, &self.classes, &tasks, self.spec.max_depth, done)
    }

    /// Runs one task on this thread (with the thread's scratch vectors, as in a whole run):
    /// its counts and the bytes it needed at its peak.
    pub fn run_task(&self, task: u32) -> (Vec<CosetDepth>, u64) {
        with_thread_scratch(|scratch| {
            let (space, max_depth) = (&*self.space, self.spec.max_depth);
            let counts =
                enumerate_coset(space, &self.layers, &self.classes, self.task(task), max_depth, scratch);
            (counts, scratch.peak_bytes())
        })
    }

    /// The same job with each coset cut into `parts` tasks (the stored positions do not change).
    pub fn with_parts(mut self, parts: u32) -> ProductJob {
        assert!((1..=Part::MAX_COUNT).contains(&parts), "{parts} parts per coset");
        self.spec.parts = parts;
        self
    }

    /// The whole job on this process's rayon pool.
    pub fn enumerate(&self) -> ProductCounts {
        self.merge(&self.run(0..self.task_count(), None))
    }

    /// Adds up the counts of all tasks.
    pub fn merge(&self, results: &[(u32, Vec<CosetDepth>)]) -> ProductCounts {
        merge(&self.classes, &self.inverse, results, self.spec.max_depth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_and_bad_ones_are_refused() {
        let spec = ProductSpec::new(Space::Cube, MoveSet::Qtm, 11);
        assert_eq!(spec.to_string(), "product/cube/qtm/11");
        assert_eq!(spec.to_string().parse::<ProductSpec>(), Ok(spec));
        let cut = ProductSpec { parts: 12, ..spec };
        assert_eq!(cut.to_string(), "product/cube/qtm/11/parts=12");
        assert_eq!(cut.to_string().parse::<ProductSpec>(), Ok(cut));
        for bad in [
            "cube/htm/10",
            "product/cube/htm",
            "product/teapot/htm/3",
            "product/cube/h/3",
            "product/cube/htm/99",
            "product/cube/htm/9/parts=0",
            "product/cube/htm/9/parts=13",
            "product/cube/htm/9/3",
            "product/cube/htm/9/parts=2/x",
        ] {
            assert!(bad.parse::<ProductSpec>().is_err(), "{bad}");
        }
    }
}
