//! The numbering of H's elements as pages, groups and bits (see [`super`]), and what H's moves
//! do to it: the tables a pass reads, and the order it makes the pages in.

use super::pass::Kernel;
use super::{GROUPS, ORBIT, PAGES};
use crate::coord::rank::perm_rank;
use crate::cube::{Cube, Move, MoveSet};
use crate::space::kociemba::{corners_of, edge_ranks, edges_of};

/// The index of H as pages, groups and bits, and what H's moves do to it.
pub struct Layout {
    /// Page of each corner permutation rank, and the rank of each page.
    page_of_corner: Vec<u16>,
    corner_of_page: Vec<u16>,
    /// Per page: whether its corner permutation is odd.
    pub(super) page_odd: Vec<bool>,
    /// Per page, per move (in [`Layout::moves`] order): the page of its corner permutation
    /// times the move.
    pub(super) neighbours: Vec<[u16; 10]>,
    /// Per U/D-edge permutation rank: its group, and whether it is the odd member.
    group_of: Vec<u16>,
    edge_odd: Vec<bool>,
    /// Per group: the ranks of its even and its odd member.
    members: Vec<[u16; 2]>,
    /// Slot of each slice permutation rank, and the rank in each slot of each parity.
    slot_of: [u8; 24],
    slice_in_slot: [[u8; 12]; 2],
    /// The moves of H in the order the pass reads them: five that exchange the halves and keep
    /// the slots, two that keep both, three that exchange the halves and permute the slots.
    moves: [Move; 10],
    /// Per move, per parity of a slice permutation: the slot of its product with the move, by
    /// its slot (what [`Layout::moved`] reads to move one element without making it).
    slot_moves: [[[u8; 12]; 2]; 10],
    /// Per group, per move, the byte offset of the group of its members times the move, and the
    /// slot maps of R2, L2 and B2: the tables as a pass's kernel reads them.
    pub(super) kernel: Kernel,
    /// Orbits of pages in the order a pass makes them (see [`Pages::extend`]).
    pub(super) pass_order: Vec<u16>,
    /// Per page: how many pages of the next set a pass makes from it (itself and the pages it
    /// is a neighbour of).
    pub(super) readers: Vec<u8>,
}

/// Where an element of H is: page, byte within the page, bit within the byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub page: u16,
    pub byte: u16,
    pub bit: u8,
}

impl Place {
    /// The place of the element in `group`'s odd or even half, at `slot`, of `page`.
    #[inline(always)]
    pub fn new(page: u16, group: u16, odd: bool, slot: u8) -> Place {
        let bit = 12 * odd as u32 + slot as u32;
        Place { page, byte: (3 * group as u32 + bit / 8) as u16, bit: (bit % 8) as u8 }
    }
}

fn slice_rank(x: &Cube) -> usize {
    edge_ranks(&x.edges).1 as usize
}

fn ud_rank(x: &Cube) -> usize {
    edge_ranks(&x.edges).0 as usize
}

fn corner_rank(x: &Cube) -> usize {
    perm_rank(&x.corners.perm) as usize
}

/// The element of H with these ranks (every piece oriented).
fn element(corners: usize, ud: usize, slice: usize) -> Cube {
    Cube { corners: corners_of(corners as u32), edges: edges_of(ud as u32, slice as u32) }
}

impl Layout {
    pub fn new() -> Self {
        let h = MoveSet::KociembaH.moves();
        let parity8 = |rank: usize| element(rank, 0, 0).corners.parity();
        let slice_odd: Vec<bool> = (0..24).map(|s| element(0, 0, s).edges.parity()).collect();
        // Whether a move of H is odd on the U/D edges (it keeps them among themselves).
        let ud_odd = |m: Move| parity8(perm_rank(&m.cube().edges.perm[..8]) as usize);

        // Slots: even slice permutations in rank order; an odd one shares the slot of its
        // product with F2.
        let f2 = Move::from_index(Move::all().position(|m| m.face() == 2 && m.turns() == 2).expect("F2"));
        let mut slot_of = [0u8; 24];
        let mut slice_in_slot = [[0u8; 12]; 2];
        for (slot, s) in (0..24).filter(|&s| !slice_odd[s]).enumerate() {
            slot_of[s] = slot as u8;
            slice_in_slot[0][slot] = s as u8;
        }
        for s in (0..24).filter(|&s| slice_odd[s]) {
            let partner = slice_rank(&element(0, 0, s).compose(f2.cube()));
            slot_of[s] = slot_of[partner];
            slice_in_slot[1][slot_of[s] as usize] = s as u8;
        }

        // The moves by what they do to a group (see the module's documentation).
        let slice_after = |s: usize, m: Move| slice_rank(&element(0, 0, s).compose(m.cube()));
        let keeps_slots = |m: Move| (0..24).all(|s| slot_of[slice_after(s, m)] == slot_of[s]);
        let mut order: Vec<Move> = h.iter().copied().filter(|&m| ud_odd(m) && keeps_slots(m)).collect();
        order.extend(h.iter().copied().filter(|&m| !ud_odd(m)));
        order.extend(h.iter().copied().filter(|&m| ud_odd(m) && !keeps_slots(m)));
        let moves: [Move; 10] = order.try_into().expect("ten moves of H");
        assert!(
            moves[..5].iter().all(|&m| ud_odd(m) && keeps_slots(m))
                && moves[5..7].iter().all(|&m| !ud_odd(m) && keeps_slots(m))
                && moves[7..].iter().all(|&m| ud_odd(m)),
            "H's moves act on groups as the layout expects"
        );
        // A destination bit (slot of s') is read from the source bit of s' . m; per source
        // parity, map each source slot to its destination slot (m is its own inverse on slices).
        let slot_maps: Vec<[Vec<u16>; 2]> = moves[7..]
            .iter()
            .map(|&m| {
                std::array::from_fn(|parity| {
                    let single: Vec<u16> = (0..12)
                        .map(|b| 1u16 << slot_of[slice_after(slice_in_slot[parity][b] as usize, m)])
                        .collect();
                    (0..4096u32)
                        .map(|v| (0..12).filter(|b| v >> b & 1 == 1).fold(0u16, |acc, b| acc | single[b]))
                        .collect()
                })
            })
            .collect();

        // Groups: an edge permutation and its exchange of cubies 6 and 7.
        let mut group_of = vec![u16::MAX; PAGES];
        let mut edge_odd = vec![false; PAGES];
        let mut members = Vec::with_capacity(GROUPS);
        for e in 0..PAGES {
            edge_odd[e] = parity8(e);
            if group_of[e] != u16::MAX {
                continue;
            }
            let mut p = element(0, e, 0).edges.perm;
            for v in &mut p[..8] {
                *v = match *v {
                    6 => 7,
                    7 => 6,
                    v => v,
                };
            }
            let partner = perm_rank(&p[..8]) as usize;
            let g = members.len() as u16;
            group_of[e] = g;
            group_of[partner] = g;
            let (even, odd) = if parity8(e) { (partner, e) } else { (e, partner) };
            members.push([even as u16, odd as u16]);
        }
        assert_eq!(members.len(), GROUPS);
        // Groups renumbered orbit by orbit of <U, D>: the orbit of a group G is G U^a D^b,
        // held at 16 o + 4 b + a. A move of <U, D> then maps each block of sixteen groups to
        // the same block, permuted the same way in every block, and the vector kernel reads
        // its sources as one contiguous load instead of a gather.
        let quarter = |face: usize| *h.iter().find(|m| m.face() == face && m.turns() == 1).expect("U and D");
        let (u, d) = (quarter(0), quarter(3));
        let group_after = |g: usize, m: Move| {
            group_of[ud_rank(&element(0, members[g][0] as usize, 0).compose(m.cube()))] as usize
        };
        let renumber = orbit_order(GROUPS, group_after, u, d);
        let mut renumbered = vec![[0u16; 2]; GROUPS];
        for (g, &n) in renumber.iter().enumerate() {
            renumbered[n] = members[g];
        }
        let members = renumbered;
        for v in group_of.iter_mut() {
            *v = renumber[*v as usize] as u16;
        }
        let sources: Vec<[u16; 10]> = members
            .iter()
            .map(|&[even, _]| {
                let x = element(0, even as usize, 0);
                std::array::from_fn(|i| 3 * group_of[ud_rank(&x.compose(moves[i].cube()))])
            })
            .collect();

        // Pages: orbits of <U, D> in order of their smallest member.
        let corner_after = |c: usize, m: Move| corner_rank(&element(c, 0, 0).compose(m.cube()));
        let position = orbit_order(PAGES, corner_after, u, d);
        let page_of_corner: Vec<u16> = position.iter().map(|&p| p as u16).collect();
        let mut corner_of_page = vec![0u16; PAGES];
        for (c, &p) in position.iter().enumerate() {
            corner_of_page[p] = c as u16;
        }
        let page_odd = corner_of_page.iter().map(|&c| parity8(c as usize)).collect();
        let neighbours: Vec<[u16; 10]> = corner_of_page
            .iter()
            .map(|&c| std::array::from_fn(|i| page_of_corner[corner_after(c as usize, moves[i])]))
            .collect();
        let slot_moves = moves.map(|m| {
            std::array::from_fn(|parity| {
                std::array::from_fn(|b| slot_of[slice_after(slice_in_slot[parity][b] as usize, m)])
            })
        });
        let kernel = Kernel::new(sources, slot_maps);
        let pass_order = pass_order(&neighbours);
        let mut readers = vec![1u8; PAGES];
        for from in &neighbours {
            for &q in from {
                readers[q as usize] += 1;
            }
        }
        Layout {
            page_of_corner,
            corner_of_page,
            page_odd,
            neighbours,
            group_of,
            edge_odd,
            members,
            slot_of,
            slice_in_slot,
            moves,
            slot_moves,
            kernel,
            pass_order,
            readers,
        }
    }

    /// Where the element at bit `index` of `page` is taken by the `k`-th of [`Layout::moves`]:
    /// the place of its product with the move, from the tables the pass reads.
    #[inline]
    pub fn moved(&self, page: u16, index: u32, k: usize) -> Place {
        let (group, bit) = ((index / 24) as usize, index % 24);
        let (odd, slot) = (bit >= 12, (bit % 12) as usize);
        let parity = (self.page_odd[page as usize] ^ odd) as usize;
        // Moves 5 and 6 keep a U/D-edge permutation's parity; the other eight change it.
        let odd_after = odd ^ !(5..7).contains(&k);
        Place::new(
            self.neighbours[page as usize][k],
            self.kernel.source(group, k) / 3,
            odd_after,
            self.slot_moves[k][parity][slot],
        )
    }

    /// The moves of H.
    pub fn moves(&self) -> &[Move; 10] {
        &self.moves
    }

    /// Where an element of H is held.
    pub fn place(&self, y: &Cube) -> Place {
        let (c, (e, s)) = (corner_rank(y), edge_ranks(&y.edges));
        debug_assert_eq!(
            self.page_odd[self.page_of_corner[c] as usize] ^ self.edge_odd[e as usize],
            element(0, 0, s as usize).edges.parity(),
            "an element of H has equal corner and edge parity"
        );
        let (group, odd) = self.group_of_edges(e);
        Place::new(self.page_of_corners(c as u32), group, odd, self.slot_of_slice(s))
    }

    /// The page of a corner permutation rank.
    pub fn page_of_corners(&self, rank: u32) -> u16 {
        self.page_of_corner[rank as usize]
    }

    /// The group of a U/D-edge permutation rank, and whether it is the group's odd member.
    pub fn group_of_edges(&self, rank: u32) -> (u16, bool) {
        (self.group_of[rank as usize], self.edge_odd[rank as usize])
    }

    /// The slot of a slice permutation rank.
    pub fn slot_of_slice(&self, rank: u32) -> u8 {
        self.slot_of[rank as usize]
    }

    /// The element of H held at bit `index` (0 .. 483,840) of `page`.
    pub fn element(&self, page: u16, index: u32) -> Cube {
        let (group, bit) = ((index / 24) as usize, index % 24);
        let half = (bit / 12) as usize;
        let parity = (self.page_odd[page as usize] as usize) ^ half;
        element(
            self.corner_of_page[page as usize] as usize,
            self.members[group][half] as usize,
            self.slice_in_slot[parity][(bit % 12) as usize] as usize,
        )
    }
}

impl Default for Layout {
    fn default() -> Self {
        Self::new()
    }
}

/// Positions for `n` things that <U, D> acts on freely (`after(i, m)`: thing `i` after the turn
/// `m`, U or D), orbit by orbit in order of their first member `x`: the member `x U^a D^b` of
/// the `o`-th orbit at `16 o + 4 b + a`.
fn orbit_order(n: usize, after: impl Fn(usize, Move) -> usize, u: Move, d: Move) -> Vec<usize> {
    let mut position = vec![usize::MAX; n];
    let mut next = 0;
    for first in 0..n {
        if position[first] != usize::MAX {
            continue;
        }
        let mut x = first;
        for b in 0..4 {
            let mut y = x;
            for a in 0..4 {
                assert_eq!(position[y], usize::MAX, "<U, D> acts freely");
                position[y] = next + 4 * b + a;
                y = after(y, u);
            }
            assert_eq!(y, x, "U four times is the identity");
            x = after(x, d);
        }
        assert_eq!(x, first, "D four times is the identity");
        next += ORBIT;
    }
    assert_eq!(next, n, "orbits of sixteen");
    position
}

/// The orbits of pages in breadth-first order over the moves that join them, from orbit 0: a
/// pass that makes them in this order finishes with each page of the last set soon after its
/// first use, and holds at most 1.18 sets at once (1.61 in the orbits' own order).
fn pass_order(neighbours: &[[u16; 10]]) -> Vec<u16> {
    let orbits = PAGES / ORBIT;
    let mut seen = vec![false; orbits];
    let mut order = vec![0u16];
    seen[0] = true;
    let mut i = 0;
    while i < order.len() {
        let o = order[i] as usize;
        let mut joined: Vec<u16> =
            neighbours[o * ORBIT..(o + 1) * ORBIT].iter().flatten().map(|&q| q / ORBIT as u16).collect();
        joined.sort_unstable();
        for w in joined {
            if !std::mem::replace(&mut seen[w as usize], true) {
                order.push(w);
            }
        }
        i += 1;
    }
    assert_eq!(order.len(), orbits, "H's moves join every orbit of pages");
    order
}
