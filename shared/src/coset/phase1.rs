//! Phase 1 of the two-phase method, as a coset solver needs it: every move sequence of a given
//! length that takes a position into H = <U, D, R2, L2, F2, B2>.
//!
//! A position is in H when every corner and edge is oriented and the four middle-slice edges
//! (cubies 8..11) sit in the middle slice. Its phase-1 coordinate is the corner twist (3^7),
//! the edge flip (2^11) and the places of the slice edges (12 choose 4 = 495); each moves by a
//! table. The search prunes with the exact distance to H of every coordinate: a row search
//! over (flip, slice) reduced by the 16 symmetries that keep H (64,430 rows) times the twist
//! (2,187 columns), made at start by the row engine, then stored at 32 bits an entry (564 MB)
//! with what each move does to the distance (see [`table`]), so a node looks up only the
//! children it follows, several searches interleaved so that their cache misses overlap
//! ([`lanes`]). The permutation rides along as four-cubie coordinates ([`perm`]).
//!
//! [`perm`]: super::perm

mod coords;
mod lanes;
mod table;
#[cfg(test)]
mod tests;

use super::pages::Place;
use super::perm::{Perm, PermTables};
use crate::bfs::{bfs_depths, BfsError, BfsOptions};
use crate::coord::SymClasses;
use crate::cube::{Cube, Move, Symmetry, SymmetryGroup};
use crate::space::ClassRows;
pub use coords::{coord_of, in_h, Coord};
use coords::{flip_of, move_table, slice_of, twist_of, with_flip, with_flip_slice, with_slice, with_twist};
use coords::{FLIPS, SLICES, TWISTS};
use lanes::LOOKUP_FROM;
pub use table::Entries;
use table::{decode_table, encode_entries, DistanceSpace, Lookup};

/// Phase-1 coordinates, their move tables and the distance table.
pub struct Phase1 {
    twist_move: Vec<[u16; Move::COUNT]>,
    flip_move: Vec<[u16; Move::COUNT]>,
    slice_move: Vec<[u16; Move::COUNT]>,
    /// Per entry of [`DistanceSpace`], row-major, as the [`table`] module encodes it: the distance to H
    /// and what each move does to it.
    entries: Entries,
    /// Per (flip, slice): its row (class) times 64 plus the symmetry that takes it to the
    /// class's representative, in one word so that a lookup misses the cache once.
    row_of: Vec<u32>,
    /// Per symmetry s, per byte of an entry, per byte value: the moves that byte marks as
    /// bringing the coordinate closer to H (low 32 bits) and as keeping its distance (high 32
    /// bits), for the coordinate whose conjugate by s the entry is.
    decode: Vec<[[u64; 256]; 3]>,
    /// `twist_conj[s * TWISTS + t]`: the twist of `s x s^-1` for x of twist t.
    twist_conj: Vec<u16>,
    /// The slice coordinate of H (slice edges in the slice).
    goal_slice: u16,
    /// The coordinates one move from H (a move outside H applied to H's), each with the moves
    /// outside H that take it into H.
    one_away: Vec<(Coord, u32)>,
    /// Per twist: whether a coordinate one move from H has it (a quick first test).
    near_twist: Vec<bool>,
    /// The coordinates two moves from H, by twist, each with the moves that take it one move
    /// from H: those of twist t are `two_away[two_away_at[t]..two_away_at[t + 1]]`.
    two_away: Vec<(Coord, u32)>,
    two_away_at: Vec<u16>,
    /// Per move, the moves that may follow it in a search: one turn per face in a row, and of
    /// two opposite faces the lower first. Entry [`Move::COUNT`]: every move (none before).
    after: [u32; Move::COUNT + 1],
}

impl Phase1 {
    /// The move tables and the distance table (a row search of a few seconds).
    pub fn new() -> Result<Self, BfsError> {
        Self::build(None).map(|p| p.expect("a table made here has its own size"))
    }

    /// The move tables around a distance table made earlier ([`Phase1::entries`]); `None` if
    /// `entries` is not the table's size.
    pub fn with_entries(entries: Entries) -> Result<Option<Self>, BfsError> {
        Self::build(Some(entries))
    }

    /// The distance table's entries (as [`Phase1::with_entries`] takes them).
    pub fn entries(&self) -> &[u32] {
        &self.entries
    }

    fn build(entries: Option<Entries>) -> Result<Option<Self>, BfsError> {
        let twist_move = move_table(TWISTS, with_twist, twist_of);
        let flip_move = move_table(FLIPS, with_flip, flip_of);
        let slice_move = move_table(SLICES, with_slice, slice_of);
        let goal_slice = slice_of(&Cube::SOLVED);
        let group = SymmetryGroup::UdAxis;
        let flip_slice = |x: &Cube| flip_of(x) as u32 * SLICES as u32 + slice_of(x) as u32;
        let conj = |s: Symmetry, x: &Cube| Cube {
            corners: s.conjugate_corners(&x.corners),
            edges: s.conjugate_edges(&x.edges),
        };
        let classes = SymClasses::build((FLIPS * SLICES) as u32, group, |s, raw| {
            flip_slice(&conj(s, &with_flip_slice(raw)))
        });
        let mut twist_conj = vec![0u16; group.len() * TWISTS];
        for s in group.members() {
            for (t, to) in twist_conj[s.index() * TWISTS..][..TWISTS].iter_mut().enumerate() {
                *to = twist_of(&conj(s, &with_twist(t as u16)));
            }
        }
        let entries = match entries {
            Some(entries) if entries.len() == classes.class_count() * TWISTS => entries,
            Some(_) => return Ok(None),
            None => {
                let rows = ClassRows::build(classes.clone(), &Move::all().collect::<Vec<_>>(), |m, raw| {
                    let (f, sl) = (raw as usize / SLICES, raw as usize % SLICES);
                    flip_move[f][m.index()] as u32 * SLICES as u32 + slice_move[sl][m.index()] as u32
                });
                let goal = goal_slice as u32;
                let start_symmetry = classes.to_rep(goal);
                let start = (classes.class_of(goal), twist_conj[start_symmetry.index() * TWISTS] as u32);
                let space = DistanceSpace {
                    rows,
                    twist_move: (0..Move::COUNT).flat_map(|m| twist_move.iter().map(move |t| t[m])).collect(),
                    twist_conj: &twist_conj,
                    start,
                };
                let options = BfsOptions { positions_only: true, ..BfsOptions::default() };
                let distances = bfs_depths(&space, &Move::all().collect::<Vec<_>>(), &options)?.values;
                encode_entries(&space, &distances)?
            }
        };
        let decode = group.members().map(decode_table).collect();
        let row_of = (0..(FLIPS * SLICES) as u32)
            .map(|raw| classes.class_of(raw) << 6 | classes.to_rep(raw).index() as u32)
            .collect();
        let after = std::array::from_fn(|last| {
            Move::all()
                .filter(|m| {
                    last == Move::COUNT || {
                        let last = Move::from_index(last);
                        m.face() != last.face() && m.face() + 3 != last.face()
                    }
                })
                .fold(0u32, |mask, m| mask | 1 << m.index())
        });
        let mut p = Phase1 {
            twist_move,
            flip_move,
            slice_move,
            entries,
            row_of,
            decode,
            twist_conj,
            goal_slice,
            one_away: Vec::new(),
            near_twist: vec![false; TWISTS],
            two_away: Vec::new(),
            two_away_at: Vec::new(),
            after,
        };
        let goal = Coord { twist: 0, flip: 0, slice: goal_slice };
        for m in Move::all().filter(|&m| !in_h(m)) {
            let c = p.apply(goal, m);
            if p.one_away.iter().all(|&(o, _)| o != c) {
                let to_h = Move::all()
                    .filter(|&m| !in_h(m) && p.is_goal(p.apply(c, m)))
                    .fold(0u32, |mask, m| mask | 1 << m.index());
                p.one_away.push((c, to_h));
                p.near_twist[c.twist as usize] = true;
            }
        }
        // Every coordinate two moves from H is a neighbour of one a move from H.
        for i in 0..p.one_away.len() {
            for m in Move::all() {
                let c = p.apply(p.one_away[i].0, m);
                if p.bound(c) == 2 && p.two_away.iter().all(|&(o, _)| o != c) {
                    let toward = Move::all()
                        .filter(|&m| p.to_h(p.apply(c, m)).is_some())
                        .fold(0u32, |mask, m| mask | 1 << m.index());
                    p.two_away.push((c, toward));
                }
            }
        }
        p.two_away.sort_by_key(|&(c, _)| c.twist);
        p.two_away_at = (0..=TWISTS)
            .map(|t| p.two_away.iter().filter(|(c, _)| (c.twist as usize) < t).count() as u16)
            .collect();
        Ok(Some(p))
    }

    fn apply(&self, c: Coord, m: Move) -> Coord {
        let i = m.index();
        Coord {
            twist: self.twist_move[c.twist as usize][i],
            flip: self.flip_move[c.flip as usize][i],
            slice: self.slice_move[c.slice as usize][i],
        }
    }

    /// The fewest moves that take a position of coordinate `c` into H.
    pub fn bound(&self, c: Coord) -> u8 {
        self.lookup(c).distance
    }

    /// The table's entry for `c`.
    #[inline(always)]
    fn lookup(&self, c: Coord) -> Lookup {
        let row = self.row_of[c.flip as usize * SLICES + c.slice as usize];
        let s = (row & 63) as usize;
        let column = self.twist_conj[s * TWISTS + c.twist as usize] as usize;
        self.decode_entry(self.entries[(row >> 6) as usize * TWISTS + column], s)
    }

    /// What the entry `e`, of a coordinate whose conjugate by the symmetry `s` it is, says.
    #[inline(always)]
    fn decode_entry(&self, e: u32, s: usize) -> Lookup {
        let t = &self.decode[s];
        let masks = t[0][(e & 255) as usize] | t[1][(e >> 8 & 255) as usize] | t[2][(e >> 16 & 255) as usize];
        Lookup { distance: (e >> 24) as u8, down: masks as u32, level: (masks >> 32) as u32 }
    }

    /// The moves among `allowed` worth following from a node of entry `look` with `togo`
    /// moves left after them (see [`worth`]).
    #[inline(always)]
    fn worth_following(&self, look: &Lookup, allowed: u32, togo: u32) -> u32 {
        let d = look.distance;
        let up = ALL_MOVES & !look.down & !look.level;
        let mut mask = 0;
        if d > 0 && worth(d - 1, togo) {
            mask |= look.down;
        }
        if worth(d, togo) {
            mask |= look.level;
        }
        if worth(d + 1, togo) {
            mask |= up;
        }
        mask & allowed
    }

    pub fn is_goal(&self, c: Coord) -> bool {
        c.twist == 0 && c.flip == 0 && c.slice == self.goal_slice
    }

    /// Hands `found` the places of the elements `start . v` of H for every move sequence `v` of
    /// exactly `length` moves whose last move is not a move of H and that takes `start` into H,
    /// but for sequences whose elements a set closed under H's moves already holds once it
    /// holds every element of fewer moves (see [`worth`]); and up to sequences that differ only
    /// in the order of two commuting opposite-face turns. Length 0: `start` itself when it is
    /// in H. A sequence ending in a move of H is left out: its element is one of length - 1
    /// times that move (the coset solver's passes add those). The work is split by the first
    /// three moves; the tasks run on every thread, several searches interleaved in each
    /// ([`lanes`]), and hand over batches of places.
    pub fn solutions(
        &self,
        perms: &PermTables,
        start: &Cube,
        length: u32,
        found: &(dyn Fn(&[Place]) + Sync),
    ) {
        use rayon::prelude::*;
        let (perm, slice) = perms.of(start);
        let root = Node { twist: twist_of(start), flip: flip_of(start), slice, perm };
        let look = self.lookup(root.coord());
        let split = if length >= SPLIT + 3 { SPLIT } else { 0 };
        let mut tasks = Vec::new();
        self.prefixes(perms, &root, &look, ALL_MOVES, length, split, &mut tasks);
        let left = length - split;
        if left >= LOOKUP_FROM {
            return self.run_lanes(perms, &tasks, left, found);
        }
        tasks.into_par_iter().for_each(|(node, look, allowed)| {
            let mut leaves = Leaves { places: Vec::with_capacity(BATCH), found };
            self.finish(perms, &node, &look, allowed, left, &mut leaves);
            leaves.flush();
        });
    }

    /// The nodes `moves` moves on from `node` (of entry `look`, with `left` moves to go, to go
    /// on by the moves in `allowed`) that the search follows, each with its entry and the moves
    /// it may go on by.
    #[allow(clippy::too_many_arguments)]
    fn prefixes(
        &self,
        perms: &PermTables,
        node: &Node,
        look: &Lookup,
        allowed: u32,
        left: u32,
        moves: u32,
        out: &mut Vec<(Node, Lookup, u32)>,
    ) {
        if moves == 0 {
            return out.push((*node, *look, allowed));
        }
        for m in moves_in(self.worth_following(look, allowed, left - 1)) {
            let next = self.step(perms, node, m).follow(perms, node, m);
            let look = self.lookup(next.coord());
            self.prefixes(perms, &next, &look, self.after[m.index()], left - 1, moves - 1, out);
        }
    }

    /// The node after the move `m`, but for its permutation (see [`Node::follow`]): the
    /// search looks at the phase-1 coordinate first and follows few of the moves it tries.
    #[inline(always)]
    fn step(&self, perms: &PermTables, n: &Node, m: Move) -> Node {
        let i = m.index();
        Node {
            twist: self.twist_move[n.twist as usize][i],
            flip: self.flip_move[n.flip as usize][i],
            slice: perms.apply_slice(n.slice, m),
            perm: n.perm,
        }
    }

    /// The moves outside H that take a coordinate one move from H into H (none for any other
    /// coordinate).
    #[inline(always)]
    fn to_h(&self, c: Coord) -> Option<u32> {
        if !self.near_twist[c.twist as usize] {
            return None;
        }
        self.one_away.iter().find(|(o, _)| *o == c).map(|&(_, to_h)| to_h)
    }

    /// The moves that take a coordinate two moves from H one move from H (none for any other
    /// coordinate).
    #[inline(always)]
    fn toward_h(&self, c: Coord) -> u32 {
        let t = c.twist as usize;
        let range = self.two_away_at[t] as usize..self.two_away_at[t + 1] as usize;
        self.two_away[range].iter().find(|(o, _)| *o == c).map_or(0, |&(_, toward)| toward)
    }

    /// The last two moves from `node`, by the moves in `allowed` and `first`: the first to one
    /// of the few coordinates one move from H, the second out of H's moves into H. `node`'s
    /// permutation is `from` after the move `via` (made only when a solution needs it).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn last_two(
        &self,
        perms: &PermTables,
        node: &Node,
        from: &Perm,
        via: Option<Move>,
        allowed: u32,
        first: u32,
        leaves: &mut Leaves,
    ) {
        let mut perm = None;
        for m in moves_in(allowed & first) {
            if !self.near_twist[self.twist_move[node.twist as usize][m.index()] as usize] {
                continue;
            }
            let next = self.step(perms, node, m);
            if let Some(to_h) = self.to_h(next.coord()) {
                let own = *perm.get_or_insert_with(|| via.map_or(*from, |v| perms.apply(from, v)));
                let p = perms.apply(&own, m);
                for last in moves_in(to_h & self.after[m.index()]) {
                    leaves.push(perms.place(&perms.apply(&p, last), perms.apply_slice(next.slice, last)));
                }
            }
        }
    }

    /// Every way on from `node` (whose entry is `look`) by the moves in `allowed`, with
    /// exactly `left` moves to go, fewer than [`LOOKUP_FROM`]: what the entry says is enough,
    /// no table is read.
    fn finish(
        &self,
        perms: &PermTables,
        node: &Node,
        look: &Lookup,
        allowed: u32,
        left: u32,
        leaves: &mut Leaves,
    ) {
        match left {
            0 => {
                if look.distance == 0 {
                    leaves.push(perms.place(&node.perm, node.slice));
                }
            }
            1 => {
                if let Some(to_h) = self.to_h(node.coord()) {
                    for m in moves_in(to_h & allowed) {
                        leaves
                            .push(perms.place(&perms.apply(&node.perm, m), perms.apply_slice(node.slice, m)));
                    }
                }
            }
            2 => self.last_two(perms, node, &node.perm, None, allowed, ALL_MOVES, leaves),
            _ => {
                // The children worth following are two moves from H, and the last two moves
                // need no table: the children are not looked up, only found among the few
                // coordinates two moves from H.
                debug_assert_eq!(left, 3, "deeper nodes are the lanes' work");
                for m in moves_in(self.worth_following(look, allowed, 2)) {
                    let next = self.step(perms, node, m);
                    let first = self.toward_h(next.coord());
                    self.last_two(perms, &next, &node.perm, Some(m), self.after[m.index()], first, leaves);
                }
            }
        }
    }
}

/// Moves made before the search splits into parallel tasks (about 3,000 of them, so that no
/// task is a large share of a depth and both threads stay busy to its end).
const SPLIT: u32 = 3;

/// Every move, as a mask.
const ALL_MOVES: u32 = (1 << Move::COUNT) - 1;

/// Whether a search with `togo` moves left after a node `d` moves from H goes on. Besides
/// `d <= togo`: a sequence that ends outside H's moves but still in H, with few moves left, is
/// either impossible or makes an element already reached as a shorter element of H times
/// H's moves, when its node is closer to H than the moves left and the two together are
/// under five (the rule of Rokicki's coset solver for the half-turn metric). Those the passes
/// add; the search skips them.
#[inline(always)]
fn worth(d: u8, togo: u32) -> bool {
    let d = d as u32;
    d == togo || (d < togo && d + togo >= 5)
}

/// The moves of a mask, in index order.
fn moves_in(mask: u32) -> impl Iterator<Item = Move> {
    let mut rest = mask;
    std::iter::from_fn(move || {
        (rest != 0).then(|| {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            Move::from_index(i)
        })
    })
}

/// A node of the search: phase 1's twist and flip, the slice edges' four-cubie coordinate
/// (whose set is phase 1's slice coordinate) and the rest of the permutation.
#[derive(Clone, Copy)]
struct Node {
    twist: u16,
    flip: u16,
    slice: u16,
    perm: Perm,
}

impl Node {
    #[inline(always)]
    fn coord(&self) -> Coord {
        Coord { twist: self.twist, flip: self.flip, slice: self.slice / 24 }
    }

    /// This node (the node `from` after the move `m`, by [`Phase1::step`]) with its
    /// permutation.
    #[inline(always)]
    fn follow(self, perms: &PermTables, from: &Node, m: Move) -> Node {
        Node { perm: perms.apply(&from.perm, m), ..self }
    }
}

/// Places found by a search task, handed over a batch at a time.
struct Leaves<'a> {
    places: Vec<Place>,
    found: &'a (dyn Fn(&[Place]) + Sync),
}

impl Leaves<'_> {
    #[inline(always)]
    fn push(&mut self, place: Place) {
        self.places.push(place);
        if self.places.len() == BATCH {
            (self.found)(&self.places);
            self.places.clear();
        }
    }

    fn flush(mut self) {
        if !self.places.is_empty() {
            (self.found)(&self.places);
            self.places.clear();
        }
    }
}

/// Places handed over at a time by [`Phase1::solutions`].
const BATCH: usize = 4096;
