//! Cosets of H up to the 16 symmetries that keep the UD axis, as the proof that every position
//! is within 20 moves reduced its 2,217,093,120 cosets (docs/coset.md).
//!
//! Such a symmetry `s` maps H to itself (`s H s^-1 = H`) and a face turn to a face turn, so it
//! maps the coset `H r` onto the coset `H (s r s^-1)` position by position, each position to
//! one at the same distance: the two cosets have the same counts at every depth, in an exact
//! run and in a bound run alike (the bound run's phase-1 sequences and H's moves are mapped
//! onto each other too), and the unreached positions of one are the conjugates of the other's.
//! So one coset of each class is solved and the others are read from it. Inversion is not used:
//! it maps the coset `H r` to `r^-1 H`, which is not a coset of this kind.

use super::pages::{Layout, PAGE_BITS};
use super::phase1::{coord_of, Coord};
use super::unreached_position;
use crate::cube::{Cube, Symmetry, SymmetryGroup};
use std::collections::HashMap;

/// Where a coset's result comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Solved itself.
    Solved,
    /// The same as the earlier coset `of` (an index into the list), through the symmetry
    /// `through`: this coset is `H (s r s^-1)` for `of`'s representative `r`.
    Conjugate { of: usize, through: Symmetry },
}

/// A list of cosets grouped into classes: which to solve, and how each other one follows.
#[derive(Clone, Debug)]
pub struct Classes {
    /// Per coset of the list: where its result comes from.
    pub sources: Vec<Source>,
    /// Per coset of the list: how many cosets (of all of them) its class holds, `16 / |the
    /// symmetries that map it to itself|`: its weight in a sum over every coset.
    pub class_sizes: Vec<u32>,
}

impl Classes {
    /// The classes of `reps` (each a representative of its coset, no coset twice): the first
    /// coset of each class in the list is solved. With `reduce` false every coset is solved (to
    /// check the reduction, or to time every coset).
    pub fn of(reps: &[Cube], reduce: bool) -> Classes {
        let mut first_of_class: HashMap<Coord, usize> = HashMap::new();
        let mut sources = Vec::with_capacity(reps.len());
        let mut class_sizes = Vec::with_capacity(reps.len());
        for (i, rep) in reps.iter().enumerate() {
            let images: Vec<Coord> =
                SymmetryGroup::UdAxis.members().map(|s| coord_of(&s.conjugate(rep))).collect();
            let mut distinct = images.clone();
            distinct.sort_unstable();
            distinct.dedup();
            class_sizes.push(distinct.len() as u32);
            let key = distinct[0];
            let source = match first_of_class.get(&key) {
                Some(&of) if reduce => {
                    // The symmetry that takes the solved coset onto this one.
                    let own = coord_of(rep);
                    let through = SymmetryGroup::UdAxis
                        .members()
                        .find(|s| coord_of(&s.conjugate(&reps[of])) == own)
                        .expect("a class holds the images of its first coset");
                    Source::Conjugate { of, through }
                }
                _ => {
                    first_of_class.entry(key).or_insert(i);
                    Source::Solved
                }
            };
            sources.push(source);
        }
        Classes { sources, class_sizes }
    }

    /// The cosets to solve, as indices into the list.
    pub fn solved(&self) -> Vec<usize> {
        (0..self.sources.len()).filter(|&i| self.sources[i] == Source::Solved).collect()
    }
}

/// The index of an element of H (as in [`super::CosetDistances::unreached`]).
pub fn element_index(layout: &Layout, y: &Cube) -> u64 {
    let place = layout.place(y);
    place.page as u64 * PAGE_BITS as u64 + place.byte as u64 * 8 + place.bit as u64
}

/// The unreached positions of the coset of `to` (as element indices, increasing), from those
/// of the coset of `from`, where the coset of `to` is that of `s from s^-1`: each position `g`
/// of `from`'s becomes `s g s^-1`.
pub fn conjugate_unreached(
    layout: &Layout,
    from: &Cube,
    to: &Cube,
    s: Symmetry,
    unreached: &[u64],
) -> Vec<u64> {
    let mut out: Vec<u64> = unreached
        .iter()
        .map(|&index| {
            let g = s.conjugate(&unreached_position(layout, from, index));
            // g = y^-1 to, so y = to g^-1 (see `unreached_position`).
            element_index(layout, &to.compose(&g.inverse()))
        })
        .collect();
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coset::phase1::in_h;
    use crate::cube::{apply_moves, parse_moves, random_cube, SplitMix64};

    fn cube(moves: &str) -> Cube {
        apply_moves(&parse_moves(moves).unwrap())
    }

    #[test]
    fn cosets_related_by_a_symmetry_of_h_share_a_class_and_others_do_not() {
        // R, L, R' and L' are one class (mirrors and the half turn about UD); U's coset is H's.
        let reps: Vec<Cube> =
            ["R", "L", "F'", "U", "R U", "R U F", "L' U' F'"].iter().map(|m| cube(m)).collect();
        let classes = Classes::of(&reps, true);
        assert_eq!(classes.solved(), [0, 3, 4, 5]);
        for (i, source) in classes.sources.iter().enumerate() {
            if let Source::Conjugate { of, through } = *source {
                assert_eq!(coord_of(&through.conjugate(&reps[of])), coord_of(&reps[i]), "coset {i}");
            }
        }
        // H's coset is fixed by every symmetry; R's class holds R, L, F, B (R' is R's coset).
        assert_eq!(classes.class_sizes[3], 1);
        assert_eq!(classes.class_sizes[0], 4);
        let all = Classes::of(&reps, false);
        assert_eq!(all.solved(), (0..reps.len()).collect::<Vec<_>>());
        assert_eq!(all.class_sizes, classes.class_sizes);
    }

    #[test]
    fn class_sizes_count_the_distinct_images_and_sum_to_the_cosets_over_each_class() {
        // Every coset of a class has the class's size, and the class holds exactly that many.
        let mut rng = SplitMix64::new(5);
        for _ in 0..20 {
            let x = random_cube(&mut rng);
            let images: Vec<Cube> = SymmetryGroup::UdAxis.members().map(|s| s.conjugate(&x)).collect();
            let mut coords: Vec<Coord> = images.iter().map(coord_of).collect();
            coords.sort_unstable();
            coords.dedup();
            let distinct: Vec<Cube> =
                coords.iter().map(|c| *images.iter().find(|y| coord_of(y) == *c).unwrap()).collect();
            let classes = Classes::of(&distinct, true);
            assert_eq!(classes.solved(), [0]);
            assert!(classes.class_sizes.iter().all(|&n| n as usize == distinct.len()));
            assert_eq!(16 % distinct.len(), 0, "an orbit's size divides the group's order");
        }
    }

    #[test]
    fn unreached_positions_map_to_the_conjugate_cosets_positions_in_its_own_numbering() {
        let layout = Layout::new();
        let mut rng = SplitMix64::new(9);
        let from = random_cube(&mut rng);
        let indices: Vec<u64> = (0..200).map(|_| rng.below(super::super::COSET_SIZE)).collect();
        for s in SymmetryGroup::UdAxis.members() {
            // Another representative of the conjugate coset: an element of H times it.
            let h = cube("U R2 D' F2 B2 L2 U2");
            assert!(parse_moves("U R2 D' F2 B2 L2 U2").unwrap().iter().all(|&m| in_h(m)));
            let to = h.compose(&s.conjugate(&from));
            assert_eq!(coord_of(&to), coord_of(&s.conjugate(&from)), "the same coset");
            let mapped = conjugate_unreached(&layout, &from, &to, s, &indices);
            let mut expected: Vec<Cube> =
                indices.iter().map(|&i| s.conjugate(&unreached_position(&layout, &from, i))).collect();
            let mut got: Vec<Cube> = mapped.iter().map(|&i| unreached_position(&layout, &to, i)).collect();
            expected.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, expected, "symmetry {s:?}");
            assert!(mapped.windows(2).all(|w| w[0] < w[1]), "increasing, no index twice");
        }
    }

    #[test]
    fn element_index_inverts_the_numbering() {
        let layout = Layout::new();
        let mut rng = SplitMix64::new(3);
        for _ in 0..1000 {
            let index = rng.below(super::super::COSET_SIZE);
            let y = layout.element((index / PAGE_BITS as u64) as u16, (index % PAGE_BITS as u64) as u32);
            assert_eq!(element_index(&layout, &y), index);
        }
    }
}
