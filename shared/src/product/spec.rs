//! A product enumeration named by a string ("product/cube/htm/10"), so that a worker builds the
//! same stored positions and coset classes as the coordinator, and the job built from it: the
//! representative cosets are its tasks, numbered `0..task_count()`.

use super::coset::CosetDepth;
use super::cosets::{CosetSpace, CubeCosets, EdgeCosets};
use super::job::{coset_classes, enumerate_cosets, merge, stored_depth, ProductCounts};
use super::layers::Layers;
use crate::coord::SymClasses;
use crate::cube::MoveSet;
use std::ops::Range;
use std::sync::atomic::AtomicU64;

/// The spaces the product method runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProductSpace {
    Cube,
    Edges,
}

impl ProductSpace {
    pub fn name(self) -> &'static str {
        match self {
            ProductSpace::Cube => "cube",
            ProductSpace::Edges => "edges",
        }
    }

    fn build(self) -> Box<dyn CosetSpace + Send> {
        match self {
            ProductSpace::Cube => Box::new(CubeCosets),
            ProductSpace::Edges => Box::new(EdgeCosets::default()),
        }
    }
}

/// A space, its move set and the depth to reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProductSpec {
    pub space: ProductSpace,
    pub moves: MoveSet,
    pub max_depth: u32,
}

/// Deepest depth accepted from a spec string (P[8] of the cube would not fit any machine).
const MAX_SPEC_DEPTH: u32 = 16;

impl std::fmt::Display for ProductSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "product/{}/{}/{}", self.space.name(), self.moves.name(), self.max_depth)
    }
}

impl std::str::FromStr for ProductSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("bad product job spec {s:?} (expected product/SPACE/METRIC/DEPTH)");
        let mut parts = s.split('/');
        let (Some("product"), Some(space), Some(moves), Some(depth), None) =
            (parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let space = [ProductSpace::Cube, ProductSpace::Edges]
            .into_iter()
            .find(|k| k.name() == space)
            .ok_or_else(|| format!("unknown space {space:?} in product job spec"))?;
        let moves = [MoveSet::Htm, MoveSet::Qtm]
            .into_iter()
            .find(|m| m.name() == moves)
            .ok_or_else(|| format!("unknown metric {moves:?} in product job spec"))?;
        let max_depth = depth.parse().ok().filter(|&d| d <= MAX_SPEC_DEPTH).ok_or_else(bad)?;
        Ok(ProductSpec { space, moves, max_depth })
    }
}

/// Everything a product job's tasks read: built the same way from the spec on every process.
pub struct ProductJob {
    pub spec: ProductSpec,
    space: Box<dyn CosetSpace + Send>,
    pub layers: Layers,
    pub classes: SymClasses,
    /// The representative coset of each class, in class order: task `i` is coset `reps[i]`.
    pub reps: Vec<u32>,
}

impl ProductJob {
    pub fn build(spec: ProductSpec) -> ProductJob {
        let space = spec.space.build();
        let layers = Layers::build(&*space, &spec.moves.moves(), stored_depth(spec.max_depth));
        let classes = coset_classes(&*space);
        let reps = (0..classes.class_count() as u32).map(|c| classes.rep(c)).collect();
        ProductJob { spec, space, layers, classes, reps }
    }

    pub fn space(&self) -> &dyn CosetSpace {
        &*self.space
    }

    /// Number of tasks: one per class of cosets.
    pub fn task_count(&self) -> u32 {
        self.reps.len() as u32
    }

    /// Runs tasks `range` on the rayon pool; `done` counts them as they finish.
    pub fn run(&self, range: Range<u32>, done: Option<&AtomicU64>) -> Vec<(u32, Vec<CosetDepth>)> {
        let cosets = &self.reps[range.start as usize..range.end as usize];
        enumerate_cosets(&*self.space, &self.layers, &self.classes, cosets, self.spec.max_depth, done)
    }

    /// The whole job on this process's rayon pool.
    pub fn enumerate(&self) -> ProductCounts {
        self.merge(&self.run(0..self.task_count(), None))
    }

    /// Adds up the counts of all tasks.
    pub fn merge(&self, results: &[(u32, Vec<CosetDepth>)]) -> ProductCounts {
        merge(&self.classes, results, self.spec.max_depth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_and_bad_ones_are_refused() {
        let spec = ProductSpec { space: ProductSpace::Cube, moves: MoveSet::Qtm, max_depth: 11 };
        assert_eq!(spec.to_string(), "product/cube/qtm/11");
        assert_eq!(spec.to_string().parse::<ProductSpec>(), Ok(spec));
        for bad in [
            "cube/htm/10",
            "product/cube/htm",
            "product/teapot/htm/3",
            "product/cube/h/3",
            "product/cube/htm/99",
        ] {
            assert!(bad.parse::<ProductSpec>().is_err(), "{bad}");
        }
    }
}
