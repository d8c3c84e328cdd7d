//! A whole product enumeration: the coset classes, one task per part of a representative
//! coset, and the merge of their counts into the three columns.

use super::coset::{enumerate_coset, CosetDepth, Part, Scratch};
use super::cosets::CosetSpace;
use super::layers::Layers;
use crate::coord::SymClasses;
use crate::cube::SymmetryGroup;
use crate::report::DepthCounts;
use rayon::prelude::*;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// The cosets' classes under the 48 symmetries.
pub fn coset_classes(space: &dyn CosetSpace) -> SymClasses {
    let members: Vec<_> = (0..space.coset_count()).map(|c| space.member(c)).collect();
    SymClasses::build(space.coset_count(), SymmetryGroup::Full, |s, c| {
        space.coset(&s.conjugate(&members[c as usize]))
    })
}

/// The stored depth a job to `max_depth` needs.
pub fn stored_depth(max_depth: u32) -> u32 {
    max_depth.div_ceil(2)
}

/// The counts of a product enumeration, with its work.
#[derive(Clone, Debug, PartialEq)]
pub struct ProductCounts {
    pub depths: Vec<DepthCounts>,
    /// Products formed at each depth, over the representative cosets.
    pub products: Vec<u64>,
    /// Positions at each depth in the representative cosets (what the products were for).
    pub rep_positions: Vec<u64>,
}

/// The class of the inverse cosets of each class: where cosets multiply, the inverses of the
/// cosets of one class make up one class (`(m x m^-1)^-1 = m x^-1 m^-1`); elsewhere no class
/// is known to pair with another, and each stands for itself.
pub fn inverse_classes(space: &dyn CosetSpace, classes: &SymClasses) -> Vec<u32> {
    (0..classes.class_count() as u32)
        .map(|c| {
            if space.cosets_multiply() {
                classes.class_of(space.coset(&space.member(classes.rep(c)).inverse()))
            } else {
                c
            }
        })
        .collect()
}

/// The classes a job enumerates: of two classes that are each other's inverses, the first.
/// Inversion maps the positions of the one onto those of the other at every depth, and their
/// classes under M onto classes, none of them self-inverse (the inverse of a position lies in
/// the other class of cosets); so the first is counted twice and the second is not run.
pub fn enumerated(inverse: &[u32]) -> impl Iterator<Item = u32> + '_ {
    (0..inverse.len() as u32).filter(|&c| c <= inverse[c as usize])
}

/// How many classes of cosets the enumerated class `class` stands for: itself and its inverse.
pub fn stands_for(inverse: &[u32], class: u32) -> u64 {
    if inverse[class as usize] == class {
        1
    } else {
        2
    }
}

/// The cosets whose positions one of class `class`'s stand for: the class's, and its inverse
/// class's where that is another.
pub fn class_weight(classes: &SymClasses, inverse: &[u32], class: u32) -> u64 {
    stands_for(inverse, class) * classes.class_size(class) as u64
}

/// Adds up the representative cosets' counts (each coset's parts as they come): positions
/// weighted by the size of each coset's class, and with classes and self-inverse classes
/// counted once more for a class that also stands for its inverse class (`inverse`, see
/// [`inverse_classes`]).
pub fn merge(
    classes: &SymClasses,
    inverse: &[u32],
    results: &[(u32, Vec<CosetDepth>)],
    max_depth: u32,
) -> ProductCounts {
    let n = max_depth as usize + 1;
    let mut positions = vec![0u64; n];
    let mut sym = vec![0u64; n];
    let mut self_inverse = vec![0u64; n];
    let mut products = vec![0u64; n];
    let mut rep_positions = vec![0u64; n];
    for (coset, depths) in results {
        let class = classes.class_of(*coset);
        let twins = stands_for(inverse, class);
        let weight = class_weight(classes, inverse, class);
        for (d, c) in depths.iter().enumerate() {
            assert!(
                twins == 1 || c.self_inverse == 0,
                "a class whose inverse is another has no self-inverse classes"
            );
            positions[d] += weight * c.positions;
            sym[d] += twins * c.classes;
            self_inverse[d] += c.self_inverse;
            products[d] += c.products;
            rep_positions[d] += c.positions;
        }
    }
    let depths = (0..n)
        .map(|d| {
            assert_eq!((sym[d] + self_inverse[d]) % 2, 0, "inversion pairs the classes of depth {d}");
            DepthCounts {
                depth: d as u32,
                positions: positions[d],
                classes_sym: sym[d],
                classes_sym_inv: (sym[d] + self_inverse[d]) / 2,
            }
        })
        .collect();
    ProductCounts { depths, products, rep_positions }
}

/// Runs the given parts of representative cosets on the rayon pool, one task each; `done`
/// counts them as they finish. The results come in the order of `tasks`, named by coset.
pub fn enumerate_cosets(
    space: &dyn CosetSpace,
    layers: &Layers,
    classes: &SymClasses,
    tasks: &[(u32, Part)],
    max_depth: u32,
    done: Option<&AtomicU64>,
) -> Vec<(u32, Vec<CosetDepth>)> {
    tasks
        .par_iter()
        .with_max_len(1)
        .map(|&(coset, part)| {
            let counts =
                with_thread_scratch(|s| enumerate_coset(space, layers, classes, (coset, part), max_depth, s));
            if let Some(done) = done {
                done.fetch_add(1, Ordering::Relaxed);
            }
            (coset, counts)
        })
        .collect()
}

/// Runs `f` with this thread's scratch: one per thread for the whole run, so its vectors keep
/// their capacity (and their pages) from task to task.
pub fn with_thread_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    thread_local!(static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default()));
    SCRATCH.with(|s| f(&mut s.borrow_mut()))
}
