//! The permutation of a position along a phase-1 search, held as four-cubie coordinates that
//! move by table, and, once the search has reached H, the element's place in the coset's pages.
//!
//! A *four-cubie coordinate* says where four given cubies are: the colexicographic rank of the
//! set of their places times 24, plus the rank of the order in which they appear along the
//! places. Among 12 edge places it takes 495 x 24 = 11,880 values, among 8 corner places
//! 70 x 24 = 1,680. A move acts on places alone, so one table serves every four cubies of a
//! kind. The corners are fixed by corners 0..3 and 4..7 (the second's set is the complement of
//! the first's); the edges by the U-layer edges 0..3, the D-layer edges 4..7 and the slice edges
//! 8..11, whose set is phase 1's slice coordinate. A move is then five table lookups (two tables
//! of 60 KB and 427 KB) where composing cubes would touch all 20 cubies, and the element's
//! place is three more.

use super::pages::{Layout, Place};
use crate::coord::rank::{perm_rank, perm_unrank, subset_rank, subset_unrank};
use crate::cube::{Cube, Move};

/// Values of a four-cubie coordinate among the 12 edge places and the 8 corner places.
const EDGE_VALUES: usize = 495 * 24;
const CORNER_VALUES: usize = 70 * 24;

/// Where cubies `first .. first + 4` are in `perm` (place -> cubie).
fn four_cubies(perm: &[u8], first: u8) -> u16 {
    let (mut places, mut order, mut k) = (0u32, [0u8; 4], 0);
    for (place, &cubie) in perm.iter().enumerate() {
        if (first..first + 4).contains(&cubie) {
            places |= 1 << place;
            order[k] = cubie - first;
            k += 1;
        }
    }
    (subset_rank(places) * 24 + perm_rank(&order)) as u16
}

/// A permutation of `n` places whose cubies 0..3 are where `value` says (the others in order).
fn with_four_cubies(value: u16, n: usize) -> Vec<u8> {
    let places = subset_unrank(value as u32 / 24, n, 4);
    let mut order = [0u8; 4];
    perm_unrank(value as u32 % 24, &mut order);
    let (mut k, mut other) = (0, 4u8);
    (0..n)
        .map(|place| {
            if places >> place & 1 == 1 {
                k += 1;
                order[k - 1]
            } else {
                other += 1;
                other - 1
            }
        })
        .collect()
}

/// Per value, the value after each move.
fn move_table(values: usize, n: usize, apply: impl Fn(&[u8], Move) -> Vec<u8>) -> Vec<[u16; Move::COUNT]> {
    (0..values as u16)
        .map(|v| {
            let perm = with_four_cubies(v, n);
            std::array::from_fn(|m| four_cubies(&apply(&perm, Move::from_index(m)), 0))
        })
        .collect()
}

/// The permutation of a position, but for the slice edges (which phase 1's search holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Perm {
    /// Corners 0..3 and 4..7.
    corners: [u16; 2],
    /// U-layer edges 0..3 and D-layer edges 4..7.
    edges: [u16; 2],
}

/// The move tables, and the tables that give an element of H its place.
pub struct PermTables {
    corner_move: Vec<[u16; Move::COUNT]>,
    edge_move: Vec<[u16; Move::COUNT]>,
    /// By corners 0..3's value times 24 plus the order of corners 4..7: the page.
    page: Vec<u16>,
    /// In H, by the U-layer edges' value (below 1,680: their places are U/D places) times 24
    /// plus the order of the D-layer edges: the group times 2, plus 1 for the odd member.
    group: Vec<u16>,
    /// In H, by the order of the slice edges: their slot.
    slot: [u8; 24],
}

impl PermTables {
    pub fn new(layout: &Layout) -> Self {
        let corner_move = move_table(CORNER_VALUES, 8, |perm, m| {
            (0..8).map(|p| perm[m.cube().corners.perm[p] as usize]).collect()
        });
        let edge_move = move_table(EDGE_VALUES, 12, |perm, m| {
            (0..12).map(|p| perm[m.cube().edges.perm[p] as usize]).collect()
        });
        let mut page = vec![0u16; 40320];
        let mut group = vec![0u16; 40320];
        let mut perm = [0u8; 8];
        for rank in 0..40320u32 {
            perm_unrank(rank, &mut perm);
            let index = four_cubies(&perm, 0) as usize * 24 + four_cubies(&perm, 4) as usize % 24;
            page[index] = layout.page_of_corners(rank);
            let (g, odd) = layout.group_of_edges(rank);
            group[index] = 2 * g + odd as u16;
        }
        let slot = std::array::from_fn(|rank| layout.slot_of_slice(rank as u32));
        PermTables { corner_move, edge_move, page, group, slot }
    }

    /// The permutation of `x`, and its slice edges' four-cubie coordinate.
    pub fn of(&self, x: &Cube) -> (Perm, u16) {
        let (c, e) = (&x.corners.perm, &x.edges.perm);
        let perm = Perm {
            corners: [four_cubies(c, 0), four_cubies(c, 4)],
            edges: [four_cubies(e, 0), four_cubies(e, 4)],
        };
        (perm, four_cubies(e, 8))
    }

    /// The permutation after the move `m`.
    #[inline(always)]
    pub fn apply(&self, p: &Perm, m: Move) -> Perm {
        let i = m.index();
        Perm {
            corners: [self.corner_move[p.corners[0] as usize][i], self.corner_move[p.corners[1] as usize][i]],
            edges: [self.edge_move[p.edges[0] as usize][i], self.edge_move[p.edges[1] as usize][i]],
        }
    }

    /// A slice-edge coordinate after the move `m`.
    #[inline(always)]
    pub fn apply_slice(&self, slice: u16, m: Move) -> u16 {
        self.edge_move[slice as usize][m.index()]
    }

    /// The place of an element of H (every piece oriented, slice edges in the slice) with
    /// permutation `p` and slice-edge coordinate `slice`.
    #[inline(always)]
    pub fn place(&self, p: &Perm, slice: u16) -> Place {
        let corners = p.corners[0] as usize * 24 + p.corners[1] as usize % 24;
        let edges = p.edges[0] as usize * 24 + p.edges[1] as usize % 24;
        debug_assert!(p.edges[0] < CORNER_VALUES as u16, "the U-layer edges are in the U/D layers");
        let g = self.group[edges];
        Place::new(self.page[corners], g / 2, g & 1 == 1, self.slot[slice as usize % 24])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{MoveSet, SplitMix64};

    /// Coordinates moved by table are those of the composed cube, and in H the place is the
    /// layout's, on random walks through the whole group and through H.
    #[test]
    fn coordinates_follow_the_cube_and_give_the_layouts_place() {
        let layout = Layout::new();
        let t = PermTables::new(&layout);
        let mut rng = SplitMix64::new(17);
        for moves in [Move::all().collect::<Vec<_>>(), MoveSet::KociembaH.moves().to_vec()] {
            let mut x = Cube::SOLVED;
            let (mut p, mut slice) = t.of(&x);
            for _ in 0..3000 {
                let m = moves[rng.below(moves.len() as u64) as usize];
                x = x.compose(m.cube());
                p = t.apply(&p, m);
                slice = t.apply_slice(slice, m);
                assert_eq!((p, slice), t.of(&x));
                if moves.len() == 10 {
                    assert_eq!(t.place(&p, slice), layout.place(&x));
                }
            }
        }
    }

    #[test]
    fn four_cubie_values_round_trip() {
        for (values, n) in [(CORNER_VALUES, 8), (EDGE_VALUES, 12)] {
            for v in 0..values as u16 {
                assert_eq!(four_cubies(&with_four_cubies(v, n), 0), v);
            }
        }
    }
}
