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
    /// Prefix of `x^-1` moved back into this coset by a symmetry, by prefix of `x`; ELSEWHERE
    /// when `x^-1` lies outside this coset's class.
    inverse: Vec<u16>,
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
        let conj = stabilizer
            .iter()
            .map(|m| with_prefix.iter().map(|x| prefix_of(&m.conjugate(x))).collect())
            .collect();
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
        CosetOrbits { space, classes, class, member, stabilizer, shift, conj, inverse, no_inverse_returns }
    }

    /// True when every position is its own class and none is self-inverse: the counts need no
    /// look at the positions.
    pub fn trivial(&self) -> bool {
        self.stabilizer.is_empty() && self.no_inverse_returns
    }

    /// Whether the position with this key is the smallest of its orbit, and if so whether its
    /// class is self-inverse. The position itself is decoded only when the tables cannot tell.
    pub fn classify(&self, key: u64) -> (bool, bool) {
        let own = (key >> self.shift) as u16;
        let mut z = None;
        let mut position = || *z.get_or_insert_with(|| self.space.position_of_key(&self.member, key));
        for (m, conj) in self.stabilizer.iter().zip(&self.conj) {
            let image = conj[own as usize];
            if image < own || (image == own && self.space.key(&m.conjugate(&position())) < key) {
                return (false, false);
            }
        }
        let back = self.inverse[own as usize];
        if back == ELSEWHERE || (back != own && !self.conj.iter().any(|c| c[back as usize] == own)) {
            return (true, false);
        }
        (true, self.is_self_inverse(&position(), key))
    }

    /// `z` (the smallest of its orbit) has a self-inverse class when its inverse, moved back
    /// into this coset, lies in the same orbit.
    fn is_self_inverse(&self, z: &Cube, key: u64) -> bool {
        let w = z.inverse();
        let wc = self.space.coset(&w);
        debug_assert_eq!(self.classes.class_of(wc), self.class);
        let back = self.classes.to_rep(wc).conjugate(&w);
        self.stabilizer
            .iter()
            .map(|m| self.space.key(&m.conjugate(&back)))
            .fold(self.space.key(&back), u64::min)
            == key
    }
}
