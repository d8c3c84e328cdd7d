//! Classes of a raw coordinate under a group of symmetries acting by conjugation.
//!
//! For every raw value: its class, and a symmetry that brings it to the class representative
//! (the smallest raw value of the class). For every class: the representative and its
//! stabilizer (the symmetries that fix it) as a bit mask. A class with a non-trivial stabilizer
//! is *self-symmetric*: its size is |G| / |stabilizer|, and anything built on top of it (a row of
//! a BFS, a pruning table slice) must treat the stabilizer's images of an entry as the same
//! position class (the H48 solver's "nasty symmetries").

use crate::cube::{Symmetry, SymmetryGroup};
use rayon::prelude::*;

const UNSET: u32 = u32::MAX;

/// Symmetry classes of a coordinate.
#[derive(Clone, Debug)]
pub struct SymClasses {
    group: SymmetryGroup,
    /// Per raw value (empty once [`Self::drop_tables`] ran: see [`Self::classify`]).
    class_of: Vec<u32>,
    to_rep: Vec<u8>,
    raw_count: usize,
    reps: Vec<u32>,
    stabilizers: Vec<u64>,
    /// The classes by increasing representative, when they are numbered otherwise (see
    /// [`Self::renumbered`]); empty when class numbers increase with their representatives.
    by_rep: Vec<u32>,
}

impl SymClasses {
    /// Builds the classes of `0..size` where `conj(s, v)` is the raw value of `s v s^-1`.
    /// Raw values are visited in increasing order, so the first member of each new class is its
    /// smallest and classes are numbered by increasing representative: the result does not depend
    /// on thread count or anything else.
    pub fn build(size: u32, group: SymmetryGroup, conj: impl Fn(Symmetry, u32) -> u32) -> Self {
        let mut class_of = vec![UNSET; size as usize];
        let mut to_rep = vec![0u8; size as usize];
        let mut reps = Vec::new();
        let mut stabilizers = Vec::new();
        for raw in 0..size {
            if class_of[raw as usize] != UNSET {
                continue;
            }
            let class = reps.len() as u32;
            let mut stab = 0u64;
            for s in group.members() {
                let image = conj(s, raw);
                assert!(image < size, "conjugate {image} of {raw} out of range");
                if image == raw {
                    stab |= 1 << s.index();
                }
                let slot = &mut class_of[image as usize];
                if *slot == UNSET {
                    *slot = class;
                    to_rep[image as usize] = s.inverse().0;
                } else {
                    assert_eq!(*slot, class, "conjugation is not a group action on this coordinate");
                }
            }
            reps.push(raw);
            stabilizers.push(stab);
        }
        SymClasses {
            group,
            raw_count: class_of.len(),
            class_of,
            to_rep,
            reps,
            stabilizers,
            by_rep: Vec::new(),
        }
    }

    /// Classes numbered and represented as another program numbers them: per raw value its
    /// class (`u32::MAX` for a value that does not occur) and a symmetry to the representative,
    /// and per class its representative. Stabilizers are computed; the parts are checked to be
    /// consistent with `conj`.
    pub fn from_representatives(
        group: SymmetryGroup,
        class_of: Vec<u32>,
        to_rep: Vec<u8>,
        reps: Vec<u32>,
        conj: impl Fn(Symmetry, u32) -> u32,
    ) -> Self {
        for (raw, (&class, &s)) in class_of.iter().zip(&to_rep).enumerate() {
            if class != UNSET {
                assert_eq!(conj(Symmetry(s), raw as u32), reps[class as usize], "to_rep of {raw}");
            }
        }
        let stabilizers = reps
            .iter()
            .map(|&rep| {
                group.members().filter(|&s| conj(s, rep) == rep).fold(0u64, |m, s| m | 1 << s.index())
            })
            .collect();
        let by_rep = increasing_order(&reps);
        SymClasses { group, raw_count: class_of.len(), class_of, to_rep, reps, stabilizers, by_rep }
    }

    /// Classes as [`Self::drop_tables`] leaves them, from their parts: `raw_count` raw values,
    /// and per class its representative (all distinct) and stabilizer.
    pub fn from_parts(group: SymmetryGroup, raw_count: usize, reps: Vec<u32>, stabilizers: Vec<u64>) -> Self {
        let by_rep = increasing_order(&reps);
        SymClasses { group, raw_count, class_of: Vec::new(), to_rep: Vec::new(), reps, stabilizers, by_rep }
    }

    /// The per-raw-value tables (class, symmetry to the representative) and the classes'
    /// representatives, as [`Self::from_tables`] takes them back.
    pub(crate) fn tables(&self) -> (&[u32], &[u8], &[u32]) {
        (&self.class_of, &self.to_rep, &self.reps)
    }

    /// Classes of all 48 symmetries read back from their tables and stabilizers, checked as far
    /// as they can be without the action: every raw value in a class or in none (`u32::MAX`),
    /// symmetries and representatives in range, each representative in its own class, the
    /// identity in every stabilizer.
    pub(crate) fn from_tables(
        class_of: Vec<u32>,
        to_rep: Vec<u8>,
        reps: Vec<u32>,
        stabilizers: Vec<u64>,
    ) -> Result<Self, &'static str> {
        let group = SymmetryGroup::Full;
        let classes = reps.len();
        let fits = class_of.len() == to_rep.len()
            && stabilizers.len() == classes
            && class_of.iter().all(|&c| c == UNSET || (c as usize) < classes)
            && to_rep.iter().all(|&s| (s as usize) < group.len())
            && reps.iter().enumerate().all(|(c, &r)| class_of.get(r as usize) == Some(&(c as u32)))
            && stabilizers.iter().all(|&s| s & 1 == 1 && s >> group.len() == 0);
        if !fits {
            return Err("the classes' tables");
        }
        let by_rep = increasing_order(&reps);
        Ok(SymClasses { group, raw_count: class_of.len(), class_of, to_rep, reps, stabilizers, by_rep })
    }

    /// The same classes numbered in another order: class `k` of the result is class `order[k]`
    /// of `self` (`order` a permutation of the classes). A space renumbers its rows this way to
    /// keep together rows that its moves join.
    pub fn renumbered(&self, order: &[u32]) -> Self {
        assert_eq!(order.len(), self.reps.len(), "an order of every class");
        let mut new_of = vec![UNSET; self.reps.len()];
        for (k, &old) in order.iter().enumerate() {
            assert_eq!(new_of[old as usize], UNSET, "class {old} twice in the order");
            new_of[old as usize] = k as u32;
        }
        let reps: Vec<u32> = order.iter().map(|&c| self.reps[c as usize]).collect();
        SymClasses {
            group: self.group,
            raw_count: self.raw_count,
            class_of: self
                .class_of
                .iter()
                .map(|&c| if c == UNSET { UNSET } else { new_of[c as usize] })
                .collect(),
            to_rep: self.to_rep.clone(),
            by_rep: increasing_order(&reps),
            reps,
            stabilizers: order.iter().map(|&c| self.stabilizers[c as usize]).collect(),
        }
    }

    /// Whether the class tables of every raw value are here (else [`Self::classify`]
    /// conjugates).
    pub fn has_tables(&self) -> bool {
        !self.class_of.is_empty()
    }

    /// Drops the per-raw-value tables (5 bytes per raw value): [`Self::classify`] then finds
    /// a value's class by conjugating it, for a process that locates few values (a worker
    /// counting self-inverse classes) and needs the memory for rows.
    pub fn drop_tables(&mut self) {
        self.class_of = Vec::new();
        self.to_rep = Vec::new();
    }

    /// The class of `raw` and a symmetry `s` with `s raw s^-1` its representative: from the
    /// tables, or, without them, as the smallest conjugate (the representative, whose class is
    /// found by bisection among the representatives in increasing order). `conj` is
    /// the action the classes were built with. Either way the symmetry may differ from
    /// [`Self::to_rep`]'s by a member of the stabilizer.
    pub fn classify(&self, raw: u32, conj: impl Fn(Symmetry, u32) -> u32) -> (u32, Symmetry) {
        if !self.class_of.is_empty() {
            return (self.class_of(raw), self.to_rep(raw));
        }
        let (rep, s) = self
            .group
            .members()
            .map(|s| (conj(s, raw), s))
            .min_by_key(|&(image, s)| (image, s.index()))
            .expect("a group has members");
        let class = if self.by_rep.is_empty() {
            self.reps.binary_search(&rep).map(|c| c as u32)
        } else {
            self.by_rep.binary_search_by_key(&rep, |&c| self.reps[c as usize]).map(|i| self.by_rep[i])
        };
        (class.expect("the smallest conjugate is a representative"), s)
    }

    pub fn group(&self) -> SymmetryGroup {
        self.group
    }

    pub fn class_count(&self) -> usize {
        self.reps.len()
    }

    pub fn raw_count(&self) -> usize {
        self.raw_count
    }

    #[inline]
    pub fn class_of(&self, raw: u32) -> u32 {
        self.class_of[raw as usize]
    }

    /// A symmetry `s` with `s raw s^-1` = the representative of `raw`'s class.
    #[inline]
    pub fn to_rep(&self, raw: u32) -> Symmetry {
        Symmetry(self.to_rep[raw as usize])
    }

    #[inline]
    pub fn rep(&self, class: u32) -> u32 {
        self.reps[class as usize]
    }

    /// Bit `s` is set when symmetry `s` fixes the representative.
    #[inline]
    pub fn stabilizer(&self, class: u32) -> u64 {
        self.stabilizers[class as usize]
    }

    /// Number of raw values in the class: |G| / |stabilizer|.
    #[inline]
    pub fn class_size(&self, class: u32) -> u32 {
        self.group.len() as u32 / self.stabilizer(class).count_ones()
    }

    /// Histogram of stabilizer sizes: (size, number of classes), increasing size.
    pub fn stabilizer_histogram(&self) -> Vec<(u32, usize)> {
        let mut counts = std::collections::BTreeMap::new();
        for &s in &self.stabilizers {
            *counts.entry(s.count_ones()).or_insert(0usize) += 1;
        }
        counts.into_iter().collect()
    }
}

/// The classes in increasing order of their representatives, or nothing when their numbers
/// already are (the order [`SymClasses::build`] gives).
fn increasing_order(reps: &[u32]) -> Vec<u32> {
    if reps.is_sorted() {
        return Vec::new();
    }
    let mut order: Vec<u32> = (0..reps.len() as u32).collect();
    order.sort_unstable_by_key(|&c| reps[c as usize]);
    order
}

/// Number of classes by Burnside's lemma: the average over the group of the number of raw values
/// each symmetry fixes. It shares nothing with [`SymClasses::build`] but the action itself.
pub fn burnside_class_count(
    size: u32,
    group: SymmetryGroup,
    conj: impl Fn(Symmetry, u32) -> u32 + Sync,
) -> u64 {
    let fixed: u64 =
        group.members().map(|s| (0..size).into_par_iter().filter(|&v| conj(s, v) == v).count() as u64).sum();
    assert_eq!(fixed % group.len() as u64, 0, "Burnside's sum must divide by the group order");
    fixed / group.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coord::rank::{factorial, perm_rank, perm_unrank};
    use crate::cube::Corners;

    fn conj(s: Symmetry, raw: u32) -> u32 {
        let mut c = Corners::IDENTITY;
        perm_unrank(raw, &mut c.perm);
        perm_rank(&s.conjugate_corners(&c).perm)
    }

    /// Renumbered classes locate every value in the class the order says, with their tables
    /// and, once dropped, by bisection among the representatives.
    #[test]
    fn renumbered_classes_classify_with_and_without_tables() {
        let classes = SymClasses::build(factorial(8), SymmetryGroup::UdAxis, conj);
        let n = classes.class_count() as u32;
        let order: Vec<u32> = (0..n).map(|k| (k * 7 + 3) % n).collect();
        assert_ne!(n % 7, 0, "7 is prime to the class count, so the order is a permutation");
        let renumbered = classes.renumbered(&order);
        let mut shrunk = renumbered.clone();
        shrunk.drop_tables();
        let rebuilt = SymClasses::from_parts(
            SymmetryGroup::UdAxis,
            classes.raw_count(),
            (0..n).map(|k| renumbered.rep(k)).collect(),
            (0..n).map(|k| renumbered.stabilizer(k)).collect(),
        );
        for raw in (0..factorial(8)).step_by(7) {
            let old = classes.class_of(raw);
            let new = renumbered.class_of(raw);
            assert_eq!(order[new as usize], old);
            for c in [&renumbered, &shrunk, &rebuilt] {
                let (class, s) = c.classify(raw, conj);
                assert_eq!(class, new);
                assert_eq!(conj(s, raw), c.rep(new));
            }
        }
    }
}
