//! Phase 1 of the two-phase method, as a coset solver needs it: every move sequence of a given
//! length that takes a position into H = <U, D, R2, L2, F2, B2>.
//!
//! A position is in H when every corner and edge is oriented and the four middle-slice edges
//! (cubies 8..11) sit in the middle slice. Its phase-1 coordinate is the corner twist (3^7),
//! the edge flip (2^11) and the places of the slice edges (12 choose 4 = 495); each moves by a
//! table. The search prunes with two exact distance tables, twist x slice and flip x slice
//! (about a million entries each, made by a breadth-first search at start): the larger of the
//! two never overestimates.

use crate::cube::{Cube, Move};

const TWISTS: usize = 2187;
const FLIPS: usize = 2048;
const SLICES: usize = 495;
const UNSEEN: u8 = u8::MAX;

/// Phase-1 coordinates, their move tables and the two pruning tables.
pub struct Phase1 {
    twist_move: Vec<[u16; Move::COUNT]>,
    flip_move: Vec<[u16; Move::COUNT]>,
    slice_move: Vec<[u16; Move::COUNT]>,
    twist_slice: Vec<u8>,
    flip_slice: Vec<u8>,
    /// The slice coordinate of H (slice edges in the slice).
    goal_slice: u16,
}

/// A phase-1 coordinate: (twist, flip, slice).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coord {
    pub twist: u16,
    pub flip: u16,
    pub slice: u16,
}

fn twist_of(x: &Cube) -> u16 {
    x.corners.ori[..7].iter().fold(0u16, |t, &o| 3 * t + o as u16)
}

fn flip_of(x: &Cube) -> u16 {
    x.edges.ori[..11].iter().fold(0u16, |f, &o| 2 * f + o as u16)
}

/// Rank of the set of places holding slice edges, in colexicographic order.
fn slice_of(x: &Cube) -> u16 {
    let mut rank = 0u32;
    let mut k = 0u32;
    for (place, &cubie) in x.edges.perm.iter().enumerate() {
        if cubie >= 8 {
            k += 1;
            rank += binomial(place as u32, k);
        }
    }
    rank as u16
}

fn binomial(n: u32, k: u32) -> u32 {
    if k > n {
        return 0;
    }
    (0..k).fold(1u32, |acc, i| acc * (n - i) / (i + 1))
}

/// Orientations from their coordinate: all but the last in base `m`, most significant first;
/// the last makes the sum a multiple of `m`.
fn orientations(value: u16, ori: &mut [u8], m: u32) {
    let (last, digits) = ori.split_last_mut().expect("pieces");
    let (mut v, mut sum) = (value as u32, 0u32);
    for o in digits.iter_mut().rev() {
        *o = (v % m) as u8;
        sum += v % m;
        v /= m;
    }
    *last = ((m - sum % m) % m) as u8;
}

/// A cube with the given twist (other pieces solved).
fn with_twist(t: u16) -> Cube {
    let mut x = Cube::SOLVED;
    orientations(t, &mut x.corners.ori, 3);
    x
}

/// A cube with the given flip (other pieces solved).
fn with_flip(f: u16) -> Cube {
    let mut x = Cube::SOLVED;
    orientations(f, &mut x.edges.ori, 2);
    x
}

/// A cube whose slice edges sit at the places of slice rank `s` (the other edges in order).
fn with_slice(s: u16) -> Cube {
    let mut x = Cube::SOLVED;
    let mut rank = s as u32;
    let mut places = [false; 12];
    let mut k = 4;
    for place in (0..12u32).rev() {
        if k > 0 && binomial(place, k) <= rank {
            rank -= binomial(place, k);
            places[place as usize] = true;
            k -= 1;
        }
    }
    let (mut slice, mut other) = (8u8, 0u8);
    for (place, &is_slice) in places.iter().enumerate() {
        if is_slice {
            x.edges.perm[place] = slice;
            slice += 1;
        } else {
            x.edges.perm[place] = other;
            other += 1;
        }
    }
    x
}

fn move_table(
    size: usize,
    make: impl Fn(u16) -> Cube,
    read: impl Fn(&Cube) -> u16,
) -> Vec<[u16; Move::COUNT]> {
    (0..size as u16)
        .map(|c| {
            let x = make(c);
            std::array::from_fn(|m| read(&x.compose(Move::from_index(m).cube())))
        })
        .collect()
}

/// Distances from the goal of a product of two coordinates (breadth-first over all 18 moves,
/// which are closed under inverses, so the distance to the goal is the distance from it).
fn distances(a: &[[u16; Move::COUNT]], b: &[[u16; Move::COUNT]], goal: (u16, u16)) -> Vec<u8> {
    let nb = b.len();
    let mut dist = vec![UNSEEN; a.len() * nb];
    dist[goal.0 as usize * nb + goal.1 as usize] = 0;
    let mut frontier = vec![(goal.0, goal.1)];
    let mut depth = 0u8;
    while !frontier.is_empty() {
        depth += 1;
        let mut next = Vec::new();
        for &(x, y) in &frontier {
            for m in 0..Move::COUNT {
                let (x2, y2) = (a[x as usize][m], b[y as usize][m]);
                let slot = &mut dist[x2 as usize * nb + y2 as usize];
                if *slot == UNSEEN {
                    *slot = depth;
                    next.push((x2, y2));
                }
            }
        }
        frontier = next;
    }
    dist
}

/// Whether `m` is one of H's moves (U, D, or a half turn of R, F, L, B).
pub fn in_h(m: Move) -> bool {
    m.face() == 0 || m.face() == 3 || m.turns() == 2
}

impl Phase1 {
    pub fn new() -> Self {
        let twist_move = move_table(TWISTS, with_twist, twist_of);
        let flip_move = move_table(FLIPS, with_flip, flip_of);
        let slice_move = move_table(SLICES, with_slice, slice_of);
        let goal_slice = slice_of(&Cube::SOLVED);
        let twist_slice = distances(&twist_move, &slice_move, (0, goal_slice));
        let flip_slice = distances(&flip_move, &slice_move, (0, goal_slice));
        Phase1 { twist_move, flip_move, slice_move, twist_slice, flip_slice, goal_slice }
    }

    pub fn coord(&self, x: &Cube) -> Coord {
        Coord { twist: twist_of(x), flip: flip_of(x), slice: slice_of(x) }
    }

    fn apply(&self, c: Coord, m: Move) -> Coord {
        let i = m.index();
        Coord {
            twist: self.twist_move[c.twist as usize][i],
            flip: self.flip_move[c.flip as usize][i],
            slice: self.slice_move[c.slice as usize][i],
        }
    }

    /// A lower bound on the moves that take a position of coordinate `c` into H.
    pub fn bound(&self, c: Coord) -> u8 {
        let s = c.slice as usize;
        self.twist_slice[c.twist as usize * SLICES + s].max(self.flip_slice[c.flip as usize * SLICES + s])
    }

    pub fn is_goal(&self, c: Coord) -> bool {
        c.twist == 0 && c.flip == 0 && c.slice == self.goal_slice
    }

    /// Hands `found` the positions `start . v` for every move sequence `v` of exactly `length`
    /// moves whose last move is not a move of H and that takes `start` into H, up to sequences
    /// that differ only in the order of two commuting opposite-face turns (which reach the same
    /// position); length 0: `start` itself when it is in H. A sequence ending in a move of H is
    /// left out: its position is one of length - 1 times that move (the coset solver's levels
    /// add those). Branches by first move run in parallel; each hands over batches of positions.
    pub fn solutions(&self, start: &Cube, length: u32, found: &(dyn Fn(&[Cube]) + Sync)) {
        use rayon::prelude::*;
        let c = self.coord(start);
        if length == 0 {
            if self.is_goal(c) {
                found(&[*start]);
            }
            return;
        }
        if self.bound(c) as u32 > length {
            return;
        }
        (0..Move::COUNT).into_par_iter().for_each(|first| {
            let mut batch = Vec::with_capacity(BATCH);
            // The first move as a branch of its own: the search below it as below any move.
            self.branch(start, c, None, Move::from_index(first), length, &mut batch, found);
            if !batch.is_empty() {
                found(&batch);
            }
        });
    }

    /// Takes move `m` from `x` (of coordinate `c`, reached by a last move `last`) when the
    /// sequence may go on that way with `left` moves to go, `m` included; the position is
    /// composed only for moves whose coordinate survives the bound, so a pruned move costs
    /// three table lookups.
    #[allow(clippy::too_many_arguments)]
    fn branch(
        &self,
        x: &Cube,
        c: Coord,
        last: Option<Move>,
        m: Move,
        left: u32,
        batch: &mut Vec<Cube>,
        found: &(dyn Fn(&[Cube]) + Sync),
    ) {
        // One turn per face in a row; of two opposite faces, the lower one first.
        if last.is_some_and(|l| m.face() == l.face() || m.face() + 3 == l.face()) {
            return;
        }
        let next = self.apply(c, m);
        if left == 1 {
            if self.is_goal(next) && !in_h(m) {
                batch.push(x.compose(m.cube()));
                if batch.len() == BATCH {
                    found(batch);
                    batch.clear();
                }
            }
            return;
        }
        if self.bound(next) as u32 > left - 1 {
            return;
        }
        let y = x.compose(m.cube());
        for n in Move::all() {
            self.branch(&y, next, Some(m), n, left - 1, batch, found);
        }
    }
}

/// Positions handed over at a time by [`Phase1::solutions`].
const BATCH: usize = 4096;

impl Default for Phase1 {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{apply_moves, parse_moves, SplitMix64};

    #[test]
    fn coordinates_round_trip_and_move_like_cubes() {
        let p = Phase1::new();
        for t in [0u16, 1, 1000, 2186] {
            assert_eq!(twist_of(&with_twist(t)), t);
        }
        for f in [0u16, 1, 1000, 2047] {
            assert_eq!(flip_of(&with_flip(f)), f);
        }
        for s in 0..SLICES as u16 {
            assert_eq!(slice_of(&with_slice(s)), s);
        }
        let mut rng = SplitMix64::new(3);
        let mut x = Cube::SOLVED;
        let mut c = p.coord(&x);
        for _ in 0..200 {
            let m = Move::from_index(rng.below(18) as usize);
            x = x.compose(m.cube());
            c = p.apply(c, m);
            assert_eq!(c, p.coord(&x));
        }
    }

    #[test]
    fn the_bound_is_zero_exactly_in_h_and_never_overestimates() {
        let p = Phase1::new();
        assert!(p.is_goal(p.coord(&apply_moves(&parse_moves("U R2 D' F2 L2").unwrap()))));
        assert_eq!(p.bound(p.coord(&apply_moves(&parse_moves("R").unwrap()))), 1);
        // R U F needs three moves to reach H: no pruning table may say more.
        assert!(p.bound(p.coord(&apply_moves(&parse_moves("R U F").unwrap()))) <= 3);
    }
}
