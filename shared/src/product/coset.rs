//! One coset's share of a product enumeration: every position of the coset up to the job's
//! depth, found as products `s t` of stored positions, each counted at the first depth that
//! reaches it.
//!
//! For depth `d` the task forms the products of P[a] and P[b] with `a = min(k, d)` and
//! `b = d - a`: every position at distance `d` splits an optimal word into a first part of
//! length `a` and a second of length `b`, so it is such a product. Products also land on
//! positions nearer start; those are dropped against the keys already seen (see `sieve`).
//! The join loops over the second factors `t` (the smaller layer) and finds the first factors
//! with one lookup each: `s t` lies in coset `c` exactly when `s` lies in the coset of
//! `y t^-1` for any member `y` of `c`. Where cosets multiply (the cube's corner permutations)
//! that coset is the same for all `t` of one coset, so one lookup serves a whole bucket.
//!
//! Symmetry: the task runs only for a class representative coset `c`; the `48 / |S|` cosets
//! of its class hold as many positions at every depth (`S` = the symmetries fixing `c`). The
//! classes of positions under M that meet `c` are the orbits of `S` on its positions, counted
//! by testing each position for being the smallest key of its orbit. A class `C` is
//! self-inverse (`C^-1 = C`) when the inverse of its smallest member, moved back into coset
//! `c` by a symmetry, has the same smallest key: those counts give the classes under M and
//! inversion as `(classes + self-inverse classes) / 2`.
//!
//! Parts: a coset too big for one task's memory is enumerated in parts, by the place of edge
//! cubie 0 (a [`Part`] takes a run of the 12 places). The place of cubie 0 in `s t` is place
//! `i` exactly when `s` holds cubie 0 on place `t(i)` (the place `t` brings to `i`), and the
//! stored layers group each coset's positions by that place, so a part forms its own products
//! and no others: the parts of a coset split its products, its positions and its duplicates
//! exactly, and their counts add up to the coset's.

use super::cosets::CosetSpace;
use super::layers::{Layer, Layers, CELLS};
use super::orbits::CosetOrbits;
use super::sieve::Sieve;
use crate::coord::SymClasses;
use std::ops::Range;

/// One of `count` parts of a coset: its positions with edge cubie 0 on places [`Part::places`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Part {
    pub index: u32,
    pub count: u32,
}

impl Part {
    /// The whole coset.
    pub const WHOLE: Part = Part { index: 0, count: 1 };
    /// The finest cut: one place each.
    pub const MAX_COUNT: u32 = CELLS as u32;

    /// Part `index` of `count` (`index < count <= 12`).
    pub fn new(index: u32, count: u32) -> Part {
        assert!(index < count && count <= Self::MAX_COUNT, "part {index} of {count}");
        Part { index, count }
    }

    /// The places of edge cubie 0 this part holds: the `index`-th of `count` near-equal runs.
    pub fn places(self) -> Range<usize> {
        let at = |i: u32| (i * Self::MAX_COUNT / self.count) as usize;
        at(self.index)..at(self.index + 1)
    }
}

/// What one coset contributes at one depth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CosetDepth {
    /// Positions of the coset at this distance.
    pub positions: u64,
    /// Orbits of the coset's stabilizer on them (classes under M meeting this coset).
    pub classes: u64,
    /// Those classes that equal their inverse class.
    pub self_inverse: u64,
    /// Products formed.
    pub products: u64,
}

/// Scratch vectors a thread reuses from coset to coset.
#[derive(Default)]
pub struct Scratch {
    products: Vec<u64>,
    sieve: Sieve,
    partners: Vec<u32>,
    /// Bytes the last task needed at its peak (its vectors' contents at their largest).
    peak_bytes: u64,
}

impl Scratch {
    /// Bytes the last task needed at its peak: the products' vector as reserved, the buffer
    /// they are scattered into, the keys seen before and after, and the sieve's hash set.
    /// (The vectors keep their capacity from task to task, so a thread holds its largest
    /// task's need. Where cosets do not multiply, the products' vector is not reserved ahead
    /// and may hold up to twice its count here.)
    pub fn peak_bytes(&self) -> u64 {
        self.peak_bytes
    }
}

/// Counts the positions of part `part` of representative coset `coset` at depths
/// `0..=max_depth`.
pub fn enumerate_coset(
    space: &dyn CosetSpace,
    layers: &Layers,
    classes: &SymClasses,
    (coset, part): (u32, Part),
    max_depth: u32,
    scratch: &mut Scratch,
) -> Vec<CosetDepth> {
    let k = layers.depth();
    assert!(max_depth <= 2 * k, "depth {max_depth} needs P[{}] stored", max_depth.div_ceil(2));
    let y = space.member(coset);
    let orbits = CosetOrbits::new(space, classes, coset);
    let Scratch { products, sieve, partners, peak_bytes } = scratch;
    let deepest = layers.pairs_per_coset(max_depth, space.coset_count()) / part.count as u64;
    sieve.start(space.key_prefix(), deepest);
    *peak_bytes = 0;
    // Where cosets multiply: the coset of `y t^-1` for the coset of `t`, found once.
    const UNKNOWN: u32 = u32::MAX;
    partners.clear();
    if space.cosets_multiply() {
        partners.resize(space.coset_count() as usize, UNKNOWN);
    }
    let mut out = Vec::with_capacity(max_depth as usize + 1);
    for d in 0..=max_depth {
        let (first, second) = layers.split(d);
        let last = d == max_depth;
        products.clear();
        // The products with second factors `t` of coset `c`, all of whose inverses send `y` to
        // the same coset (the partner): that coset's stored positions are the first factors.
        let mut partner = |c: u32| {
            if partners[c as usize] == UNKNOWN {
                partners[c as usize] = space.coset(&y.compose(&second.inverses[second.range(c).start]));
            }
            partners[c as usize]
        };
        // Where cosets multiply, the pairs are counted first, so that the products' vector is
        // allocated once at its size (doubling could take twice the memory).
        let mut pairs = 0;
        if space.cosets_multiply() {
            for &c in second.cosets() {
                pair_runs(first, second, second.range(c), partner(c), part, |_, firsts| {
                    pairs += firsts.len()
                });
            }
            products.reserve_exact(pairs);
        }
        // Products whose factors' optimal words meet in a shorter word are skipped (`Cuts`).
        let mut join = |t: usize, firsts: Range<usize>| {
            let (s, cuts) = (&first.positions[firsts.clone()], &first.cut_starts[firsts]);
            let t_starts = second.starts[t];
            let t = &second.positions[t];
            debug_assert!(s.iter().all(|s| space.coset(&s.compose(t)) == coset));
            space.append_product_keys(s, cuts, t, t_starts, products);
        };
        if space.cosets_multiply() {
            for &c in second.cosets() {
                pair_runs(first, second, second.range(c), partner(c), part, &mut join);
            }
        } else {
            for (i, t_inv) in second.inverses.iter().enumerate() {
                pair_runs(first, second, i..i + 1, space.coset(&y.compose(t_inv)), part, &mut join);
            }
        }
        let formed = products.len() as u64;
        let seen_before = sieve.seen_len();
        // After the last depth nothing is looked up in the seen keys again.
        let fresh = sieve.sift(products, !last);
        // The products (as reserved) and the buffer they were scattered into, the keys seen
        // before and their union with the new ones, and the hash set.
        let held = pairs.max(formed as usize)
            + formed as usize
            + seen_before
            + if last { 0 } else { sieve.seen_len() };
        *peak_bytes = (*peak_bytes).max(8 * held as u64 + sieve.table_bytes());
        let mut depth = CosetDepth { positions: fresh as u64, products: formed, ..CosetDepth::default() };
        if orbits.trivial() {
            depth.classes = depth.positions;
        } else {
            for key in sieve.fresh() {
                let (smallest, self_inverse) = orbits.classify(key);
                depth.classes += smallest as u64;
                depth.self_inverse += self_inverse as u64;
            }
        }
        out.push(depth);
    }
    out
}

/// Calls `f(t, firsts)` for each second factor `t` of `ts` (whose inverses all send the coset's
/// member to coset `partner`) with the stored first factors `s` that make `s t` a position of
/// the coset's part: the whole partner coset, or with parts the cells holding cubie 0 where `t`
/// takes it from for each place of the part.
#[inline]
fn pair_runs(
    first: &Layer,
    second: &Layer,
    ts: Range<usize>,
    partner: u32,
    part: Part,
    mut f: impl FnMut(usize, Range<usize>),
) {
    if part == Part::WHOLE {
        let all = first.range(partner);
        for t in ts {
            f(t, all.clone());
        }
        return;
    }
    for t in ts {
        let perm = &second.positions[t].edges.perm;
        for place in part.places() {
            let cell = first.cell(partner, perm[place] as usize);
            if !cell.is_empty() {
                f(t, cell);
            }
        }
    }
}
