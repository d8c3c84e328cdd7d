//! Classes under the 48 symmetries among one representative coset's positions: the orbits of
//! the coset's stabilizer `S`, each counted at its smallest key, and which of them are
//! self-inverse (the class of `x^-1` is the class of `x`).
//!
//! Conjugating a whole position costs about as much as a hundred key comparisons, so the
//! tests start from small tables over the key's prefix (the cube's corner twists, the edges'
//! piece order), which symmetries and inversion map on their own: most positions are decided
//! there, and only ties conjugate the whole position.

use super::cosets::CosetSpace;
use crate::coord::SymClasses;
use crate::cube::{Cube, Symmetry};

/// Marks a prefix whose inverses lie outside this coset's class.
const ELSEWHERE: u16 = u16::MAX;

/// Verdict bit: some member of the stabilizer maps the prefix to a smaller one, so no position
/// with this prefix is the smallest of its orbit.
const NOT_SMALLEST: u8 = 1;
/// Verdict bit: some member maps the prefix to itself, so the conjugate's whole key decides.
const TIE: u8 = 2;
/// Verdict bit: the inverse, moved back into this coset, may lie in the position's orbit.
const MAY_RETURN: u8 = 4;

/// Classifies the positions of one representative coset.
pub struct CosetOrbits<'a> {
    space: &'a dyn CosetSpace,
    classes: &'a SymClasses,
    class: u32,
    member: Cube,
    /// The stabilizer without the identity.
    stabilizer: Vec<Symmetry>,
    shift: u32,
    /// For each member `m` of `stabilizer`: prefix of `m x m^-1` by prefix of `x`.
    conj: Vec<Vec<u16>>,
    /// Per prefix, what the tables say about the positions with it (the bits above); none set:
    /// each is the smallest of its orbit, and its class is not self-inverse.
    verdict: Vec<u8>,
    /// The symmetry that moves the inverses of this coset's positions back into it, where one
    /// does for all of them (cosets multiply, so those inverses share one coset).
    back: Option<Symmetry>,
    /// No position has a self-inverse class.
    no_inverse_returns: bool,
}

impl<'a> CosetOrbits<'a> {
    pub fn new(space: &'a dyn CosetSpace, classes: &'a SymClasses, coset: u32) -> Self {
        let class = classes.class_of(coset);
        debug_assert_eq!(classes.rep(class), coset);
        let mask = classes.stabilizer(class);
        let stabilizer: Vec<Symmetry> = (1..48u8).filter(|&s| mask >> s & 1 == 1).map(Symmetry).collect();
        let member = space.member(coset);
        let (count, shift) = space.key_prefix();
        let low = space.key(&member) & ((1u64 << shift) - 1);
        let prefix_of = |x: &Cube| (space.key(x) >> shift) as u16;
        let with_prefix: Vec<Cube> =
            (0..count as u64).map(|p| space.position_of_key(&member, p << shift | low)).collect();
        let conj: Vec<Vec<u16>> = stabilizer
            .iter()
            .map(|m| with_prefix.iter().map(|x| prefix_of(&m.conjugate(x))).collect())
            .collect();
        // Prefix of `x^-1` moved back into this coset by a symmetry, by prefix of `x`.
        let inverse: Vec<u16> = with_prefix
            .iter()
            .map(|x| {
                let w = x.inverse();
                let wc = space.coset(&w);
                if classes.class_of(wc) == class {
                    prefix_of(&classes.to_rep(wc).conjugate(&w))
                } else {
                    ELSEWHERE
                }
            })
            .collect();
        let no_inverse_returns = inverse.iter().all(|&p| p == ELSEWHERE);
        let verdict = (0..count as usize)
            .map(|own| {
                let images = conj.iter().map(|c| c[own] as usize);
                let mut v = 0;
                if images.clone().any(|p| p < own) {
                    v |= NOT_SMALLEST;
                }
                if images.clone().any(|p| p == own) {
                    v |= TIE;
                }
                let back = inverse[own];
                if back != ELSEWHERE
                    && (back as usize == own || conj.iter().any(|c| c[back as usize] as usize == own))
                {
                    v |= MAY_RETURN;
                }
                v
            })
            .collect();
        let inverse_coset = space.coset(&member.inverse());
        let back = (space.cosets_multiply() && classes.class_of(inverse_coset) == class)
            .then(|| classes.to_rep(inverse_coset));
        CosetOrbits {
            space,
            classes,
            class,
            member,
            stabilizer,
            shift,
            conj,
            verdict,
            back,
            no_inverse_returns,
        }
    }

    /// True when every position is its own class and none is self-inverse: the counts need no
    /// look at the positions.
    pub fn trivial(&self) -> bool {
        self.stabilizer.is_empty() && self.no_inverse_returns
    }

    /// Whether the position with this key is the smallest of its orbit, and if so whether its
    /// class is self-inverse. Most keys are decided by their prefix alone; the position itself
    /// is decoded only when the tables cannot tell.
    #[inline]
    pub fn classify(&self, key: u64) -> (bool, bool) {
        match self.verdict[(key >> self.shift) as usize] {
            0 => (true, false),
            v if v & NOT_SMALLEST != 0 => (false, false),
            v => self.classify_position(key, v),
        }
    }

    /// [`Self::classify`] where the prefix leaves a tie or a possible return of the inverse.
    #[inline(never)]
    fn classify_position(&self, key: u64, verdict: u8) -> (bool, bool) {
        let own = (key >> self.shift) as usize;
        let z = self.space.position_of_key(&self.member, key);
        if verdict & TIE != 0 {
            for (m, conj) in self.stabilizer.iter().zip(&self.conj) {
                if conj[own] as usize == own && self.space.key(&m.conjugate(&z)) < key {
                    return (false, false);
                }
            }
        }
        (true, verdict & MAY_RETURN != 0 && self.is_self_inverse(&z, key))
    }

    /// `z` (the smallest of its orbit) has a self-inverse class when its inverse, moved back
    /// into this coset, lies in the same orbit.
    fn is_self_inverse(&self, z: &Cube, key: u64) -> bool {
        let w = z.inverse();
        let back = self.back.unwrap_or_else(|| {
            let wc = self.space.coset(&w);
            debug_assert_eq!(self.classes.class_of(wc), self.class);
            self.classes.to_rep(wc)
        });
        let back = back.conjugate(&w);
        self.stabilizer
            .iter()
            .map(|m| self.space.key(&m.conjugate(&back)))
            .fold(self.space.key(&back), u64::min)
            == key
    }
}

#[cfg(test)]
mod tests {
    use super::CosetOrbits;
    use crate::coord::SymClasses;
    use crate::cube::{random_cube, Cube, Move, SplitMix64, Symmetry};
    use crate::product::{coset_classes, CosetSpace, CubeCosets};
    use std::collections::HashMap;

    /// The classification of `x` (in a representative coset) by the definitions: the orbit of
    /// the coset's stabilizer conjugated out in full, and the inverse moved back by the symmetry
    /// that takes its coset to the representative.
    fn by_definition(space: &CubeCosets, classes: &SymClasses, x: &Cube) -> (bool, bool) {
        let coset = space.coset(x);
        let class = classes.class_of(coset);
        let stabilizer = classes.stabilizer(class);
        let group: Vec<Symmetry> = (0..48u8).filter(|&s| stabilizer >> s & 1 == 1).map(Symmetry).collect();
        let orbit_keys = |y: &Cube| group.iter().map(|m| space.key(&m.conjugate(y))).collect::<Vec<u64>>();
        let key = space.key(x);
        let smallest = orbit_keys(x).into_iter().min() == Some(key);
        let w = x.inverse();
        let wc = space.coset(&w);
        let returns =
            classes.class_of(wc) == class && orbit_keys(&classes.to_rep(wc).conjugate(&w)).contains(&key);
        (smallest, smallest && returns)
    }

    /// Random positions of every representative coset that is classified at all (half of them
    /// without twist, a prefix every symmetry fixes, so that ties are common), and involutions
    /// `a h a^-1` (h a half turn) moved into their representative cosets, whose classes are
    /// self-inverse.
    #[test]
    fn classify_agrees_with_the_orbits_conjugated_out() {
        let space = CubeCosets;
        let classes = coset_classes(&space);
        let mut rng = SplitMix64::new(17);
        let mut positions = Vec::new();
        for class in 0..classes.class_count() as u32 {
            let member = space.member(classes.rep(class));
            for i in 0..20 {
                let mut x = random_cube(&mut rng);
                if i % 2 == 0 {
                    x.corners.ori = [0; 8];
                }
                x.corners.perm = member.corners.perm;
                if x.edges.parity() != x.corners.parity() {
                    x.edges.perm.swap(0, 1);
                }
                positions.push(x);
            }
        }
        let half_turn = Move::from_index(1).cube();
        assert_eq!(half_turn.compose(half_turn), Cube::SOLVED, "move 1 is a half turn");
        for _ in 0..3_000 {
            let a = random_cube(&mut rng);
            let x = a.compose(half_turn).compose(&a.inverse());
            positions.push(classes.to_rep(space.coset(&x)).conjugate(&x));
        }
        let mut orbits = HashMap::new();
        let (mut checked, mut smallest, mut self_inverse) = (0, 0, 0);
        for x in &positions {
            let coset = space.coset(x);
            let orbits = orbits.entry(coset).or_insert_with(|| CosetOrbits::new(&space, &classes, coset));
            if orbits.trivial() {
                continue;
            }
            let expected = by_definition(&space, &classes, x);
            assert_eq!(orbits.classify(space.key(x)), expected, "coset {coset}, position {x:?}");
            checked += 1;
            smallest += expected.0 as u32;
            self_inverse += expected.1 as u32;
        }
        assert!(
            checked > 8_000 && smallest < checked && self_inverse > 1_000,
            "{checked} {smallest} {self_inverse}"
        );
    }
}
