//! How a product enumeration cuts its space into cosets, and how a position is named inside
//! its coset.
//!
//! A coset here is a right coset `H y` of a stabilizer subgroup `H`: the positions whose pieces
//! of some kinds sit on the same places as in `y` (Bryan's letter prefixes, read as "which
//! cubie, up to a class of cubies, sits on each place"). The label of `z` lists, for every
//! place, the class of the cubie on it, so for a product `z = s t` ("s, then t") the label of
//! `z` is the label of `s` with its places permuted by `t`. That makes the product join cheap:
//! `s t` lies in the coset of `y` exactly when `s` lies in the coset of `y t^-1`.
//!
//! Both spaces use labels that conjugation by the 48 symmetries maps onto labels (the classes
//! of cubies are unions the symmetries permute), so the symmetries act on the cosets and only
//! one coset per class needs enumerating.
//!
//! - [`CubeCosets`]: the full cube, labelled by the corner permutation (8! = 40,320 cosets, the
//!   eight corner letters up to twist). A key inside a coset holds the corner twists and the
//!   edges; the edge permutation's last two places follow from the corners' parity.
//! - [`EdgeCosets`]: the edges-only cube, labelled by which slice (E, S or M) each edge place
//!   holds a cubie of (34,650 cosets, the H48 solver's esep). A key holds the order of the pieces
//!   within each slice and the flips.

use crate::coord::rank::{factorial, ori_rank, perm_rank, perm_unrank};
use crate::coord::{edge_slices, BlockLayout};
use crate::cube::{Corners, Cube, Edges};

/// A space split into right cosets of a stabilizer subgroup, with names for positions.
pub trait CosetSpace: Sync {
    /// Number of positions in the space.
    fn order(&self) -> u128;
    /// The space's image of a cube position (the edges-only cube forgets the corners).
    fn project(&self, x: &Cube) -> Cube;
    fn coset_count(&self) -> u32;
    /// The coset of a position of this space, in `0..coset_count()`.
    fn coset(&self, x: &Cube) -> u32;
    /// Some position of the coset.
    fn member(&self, coset: u32) -> Cube;
    /// The position's name inside its coset: distinct positions of one coset get distinct keys,
    /// all below 2^63 (the sieve marks its empty slots with `u64::MAX`).
    fn key(&self, x: &Cube) -> u64;
    /// The position with this key in the coset of `member`.
    fn position_of_key(&self, member: &Cube, key: u64) -> Cube;
    /// The key of `s t`; the same as `key(&s.compose(t))`, which spaces may compute faster.
    #[inline]
    fn product_key(&self, s: &Cube, t: &Cube) -> u64 {
        self.key(&s.compose(t))
    }
    /// Appends the key of `s t` for every `s` of `firsts` whose cut starts (`cuts`, one per
    /// first factor) miss `t_starts`, the moves that begin `t` (the join's inner loop: one call
    /// per second factor; see [`super::layers::Cuts`]).
    fn append_product_keys(
        &self,
        firsts: &[Cube],
        cuts: &[u32],
        t: &Cube,
        t_starts: u32,
        out: &mut Vec<u64>,
    ) {
        append_one_by_one(self, firsts, cuts, t, t_starts, out);
    }
    /// Keys begin with a part that conjugation and inversion map on their own (for a position
    /// of a given coset, that part of `m x m^-1` and of `x^-1` depends only on that part of
    /// `x`): the number of its values and the bit where it starts.
    fn key_prefix(&self) -> (u32, u32);
    /// True when the subgroup is normal, so cosets multiply: the coset of `x y` depends only on
    /// the cosets of `x` and `y`, and that of `x^-1` only on that of `x`.
    fn cosets_multiply(&self) -> bool;
}

/// [`CosetSpace::append_product_keys`] one [`CosetSpace::product_key`] at a time.
fn append_one_by_one<S: CosetSpace + ?Sized>(
    space: &S,
    firsts: &[Cube],
    cuts: &[u32],
    t: &Cube,
    t_starts: u32,
    out: &mut Vec<u64>,
) {
    let kept = firsts.iter().zip(cuts).filter(|(_, &cut)| cut & t_starts == 0);
    out.extend(kept.map(|(s, _)| space.product_key(s, t)));
}

/// The cube's edge places 0..10 as 4-bit digits, most significant first, followed by 11 flips.
#[inline]
fn pack_edges(e: &Edges) -> u64 {
    let mut key = 0u64;
    for &p in &e.perm[..CubeCosets::EDGE_PLACES] {
        key = key << 4 | p as u64;
    }
    for &o in &e.ori[..11] {
        key = key << 1 | o as u64;
    }
    key
}

/// Inverse of [`pack_edges`]: the last two places get the remaining cubies in increasing order
/// and the last flip follows from the zero-sum rule.
fn unpack_edges(mut key: u64) -> Edges {
    let places = CubeCosets::EDGE_PLACES;
    let mut e = Edges::IDENTITY;
    let mut flips = 0;
    for i in (0..11).rev() {
        e.ori[i] = (key & 1) as u8;
        flips ^= e.ori[i];
        key >>= 1;
    }
    e.ori[11] = flips;
    let mut used = 0u16;
    for i in (0..places).rev() {
        e.perm[i] = (key & 15) as u8;
        used |= 1 << e.perm[i];
        key >>= 4;
    }
    let mut rest = (0..12u8).filter(|c| used >> c & 1 == 0);
    for slot in &mut e.perm[places..] {
        *slot = rest.next().expect("as many free cubies as free places");
    }
    e
}

/// The full 3x3x3 cube, cosets by corner permutation.
#[derive(Default)]
pub struct CubeCosets;

impl CubeCosets {
    const EDGE_PLACES: usize = 10;
}

impl CosetSpace for CubeCosets {
    fn order(&self) -> u128 {
        // 8! 3^7 12! 2^11 / 2: corner and edge permutations have equal parity.
        factorial(8) as u128 * 2187 * factorial(12) as u128 * 2048 / 2
    }
    fn project(&self, x: &Cube) -> Cube {
        *x
    }
    fn coset_count(&self) -> u32 {
        factorial(8)
    }
    #[inline]
    fn coset(&self, x: &Cube) -> u32 {
        perm_rank(&x.corners.perm)
    }
    fn member(&self, coset: u32) -> Cube {
        let mut x = Cube::SOLVED;
        perm_unrank(coset, &mut x.corners.perm);
        if x.corners.parity() {
            x.edges.perm.swap(10, 11);
        }
        x
    }
    /// Corner twists of places 0..7 in base 3 (12 bits), then edge places 0..10 (40 bits), then
    /// 11 edge flips: 63 bits.
    #[inline]
    fn key(&self, x: &Cube) -> u64 {
        let twist = x.corners.ori[..7].iter().rev().fold(0u64, |acc, &o| acc * 3 + o as u64);
        twist << 51 | pack_edges(&x.edges)
    }
    fn position_of_key(&self, member: &Cube, key: u64) -> Cube {
        let mut corners = Corners { perm: member.corners.perm, ori: [0; 8] };
        let mut twist = key >> 51;
        let mut sum = 0;
        for o in &mut corners.ori[..7] {
            *o = (twist % 3) as u8;
            sum += *o;
            twist /= 3;
        }
        corners.ori[7] = (3 - sum % 3) % 3;
        let mut edges = unpack_edges(key & ((1 << 51) - 1));
        if edges.parity() != corners.parity() {
            edges.perm.swap(10, 11);
        }
        Cube { corners, edges }
    }
    /// Only the parts of `s t` the key holds: corner twists and the first ten edge places.
    #[inline]
    fn product_key(&self, s: &Cube, t: &Cube) -> u64 {
        let (sc, tc) = (&s.corners, &t.corners);
        let mut twist = 0u64;
        for i in (0..7).rev() {
            let o = sc.ori[tc.perm[i] as usize] + tc.ori[i];
            twist = twist * 3 + if o >= 3 { o - 3 } else { o } as u64;
        }
        let (se, te) = (&s.edges, &t.edges);
        let mut key = twist;
        for i in 0..Self::EDGE_PLACES {
            key = key << 4 | se.perm[te.perm[i] as usize] as u64;
        }
        for i in 0..11 {
            key = key << 1 | (se.ori[te.perm[i] as usize] ^ te.ori[i]) as u64;
        }
        key
    }
    fn append_product_keys(
        &self,
        firsts: &[Cube],
        cuts: &[u32],
        t: &Cube,
        t_starts: u32,
        out: &mut Vec<u64>,
    ) {
        if !super::cube_keys::append_keys(firsts, cuts, t, t_starts, out) {
            append_one_by_one(self, firsts, cuts, t, t_starts, out);
        }
    }
    /// The corner twists: the coset fixes the corner permutation.
    fn key_prefix(&self) -> (u32, u32) {
        (2187, 51)
    }
    fn cosets_multiply(&self) -> bool {
        true
    }
}

/// The edges-only cube, cosets by the slice each edge place holds a cubie of.
pub struct EdgeCosets {
    layout: BlockLayout<12, 2>,
}

impl Default for EdgeCosets {
    fn default() -> Self {
        EdgeCosets { layout: edge_slices() }
    }
}

impl CosetSpace for EdgeCosets {
    fn order(&self) -> u128 {
        factorial(12) as u128 * 2048
    }
    fn project(&self, x: &Cube) -> Cube {
        Cube { corners: Corners::IDENTITY, edges: x.edges }
    }
    fn coset_count(&self) -> u32 {
        self.layout.assignment_count()
    }
    #[inline]
    fn coset(&self, x: &Cube) -> u32 {
        self.layout.assignment_of(&x.edges)
    }
    fn member(&self, coset: u32) -> Cube {
        Cube { corners: Corners::IDENTITY, edges: self.layout.decode(coset * self.layout.ori_count(), 0) }
    }
    /// The order of the pieces within each slice (24^3 values, the row BFS's column), then the
    /// flips of places 0..11.
    #[inline]
    fn key(&self, x: &Cube) -> u64 {
        (self.layout.column(&x.edges) as u64) << 11 | ori_rank(&x.edges.ori, 2) as u64
    }
    fn position_of_key(&self, member: &Cube, key: u64) -> Cube {
        let row = self.layout.assignment_of(&member.edges) * self.layout.ori_count() + (key & 2047) as u32;
        Cube { corners: Corners::IDENTITY, edges: self.layout.decode(row, (key >> 11) as u32) }
    }
    /// The piece order: the coset fixes which slice's pieces sit where.
    fn key_prefix(&self) -> (u32, u32) {
        (self.layout.column_count(), 11)
    }
    fn cosets_multiply(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{random_cube, SplitMix64, Symmetry};

    fn check_space(space: &dyn CosetSpace, seed: u64) {
        let mut rng = SplitMix64::new(seed);
        for _ in 0..2000 {
            let z = space.project(&random_cube(&mut rng));
            let c = space.coset(&z);
            assert!(c < space.coset_count());
            assert_eq!(space.position_of_key(&space.member(c), space.key(&z)), z, "key round trip");
            assert_eq!(space.coset(&space.member(c)), c, "member lies in its coset");
            // The product join: s t is in the coset of y exactly when s is in that of y t^-1.
            let (s, t) = (space.project(&random_cube(&mut rng)), space.project(&random_cube(&mut rng)));
            let st = s.compose(&t);
            assert_eq!(space.product_key(&s, &t), space.key(&st));
            // The batch (for the cube, byte shuffles where the processor has them) agrees.
            let firsts: Vec<Cube> = (0..5).map(|_| space.project(&random_cube(&mut rng))).collect();
            let cuts = [0, 1, 6, 8, 3];
            let mut keys = vec![7];
            space.append_product_keys(&firsts, &cuts, &t, 6, &mut keys);
            let expected: Vec<u64> = [0, 1, 3].iter().map(|&i| space.key(&firsts[i].compose(&t))).collect();
            assert_eq!(keys[1..], expected[..]);
            let y = space.member(space.coset(&st));
            assert_eq!(space.coset(&y.compose(&t.inverse())), space.coset(&s));
            // Symmetries map cosets onto cosets: two members of one coset stay together.
            let m = Symmetry((rng.next_u64() % 48) as u8);
            assert_eq!(space.coset(&m.conjugate(&space.member(c))), space.coset(&m.conjugate(&z)));
        }
    }

    #[test]
    fn cube_cosets_name_positions_both_ways() {
        check_space(&CubeCosets, 1);
        assert_eq!(CubeCosets.order(), 43_252_003_274_489_856_000);
    }

    #[test]
    fn edge_cosets_name_positions_both_ways() {
        check_space(&EdgeCosets::default(), 2);
        assert_eq!(EdgeCosets::default().coset_count(), 34_650);
    }

    #[test]
    fn relabelling_within_a_class_keeps_the_coset() {
        let space = EdgeCosets::default();
        let x = crate::cube::apply_moves(&crate::cube::parse_moves("R U F'").unwrap());
        // Relabelling cubies within the E slice (cubies 8..12) keeps the label; R's relabelling
        // mixes the E and S slices and does not.
        let r = crate::cube::apply_moves(&crate::cube::parse_moves("R").unwrap());
        let mut h = Cube::SOLVED;
        h.edges.perm = [0, 1, 2, 3, 4, 5, 6, 7, 9, 8, 11, 10];
        assert_eq!(space.coset(&h.compose(&x)), space.coset(&x));
        assert_ne!(space.coset(&r.compose(&x)), space.coset(&x));
    }
}
