//! Rokicki's `cubepos` numbering (cube20src): its corner and edge
//! ids, and the phase-2 coordinates of Kociemba's H that its tables are indexed by.
//!
//! `cubepos` arrays are slot -> cubie, as ours are position -> cubie ([`Pieces`]), so a relabelling
//! of slots and cubies maps one onto the other: cubepos corner id i is our corner `CORNER[i]`, edge
//! id i our edge `EDGE[i]`. In H every piece is oriented, so twists and flips play no part here.

use super::rank::{perm_rank, perm_unrank};
use crate::cube::{Corners, Edges, Pieces};

/// cubepos corners UBL URB ULF UFR DLB DBR DFL DRF as our positions.
const CORNER: [u8; 8] = [2, 3, 1, 0, 6, 7, 5, 4];
/// cubepos edges UB UL UR UF LB RB LF RF DB DL DR DF as our positions.
const EDGE: [u8; 12] = [3, 2, 0, 1, 10, 11, 9, 8, 7, 6, 4, 5];
/// The cubepos edge slots of the U and D layers, in increasing order.
const UD_EDGE_SLOTS: [usize; 8] = [0, 1, 2, 3, 8, 9, 10, 11];

/// Number of values of either phase-2 coordinate: 8!.
pub const PHASE2_VALUES: u32 = 40320;

/// The index of an 8-bit mask with four bits set among such masks in increasing order (70).
fn four_of_eight_rank(mask: u8) -> u32 {
    (0..mask).filter(|m| m.count_ones() == 4).count() as u32
}

/// cubepos's S4 index of four values 0..3 in slot order: the lexicographic rank `cc` of the
/// inverse sequence, then `cc ^ ((cc >> 1) & 1)`, which makes bit 0 the parity.
fn s4_index(seq: [u8; 4]) -> u32 {
    let mut inverse = [0u8; 4];
    for (i, &v) in seq.iter().enumerate() {
        inverse[v as usize] = i as u8;
    }
    let cc = perm_rank(&inverse);
    cc ^ ((cc >> 1) & 1)
}

/// The cubepos cubie id at each cubepos slot, for a relabelling `map` (cubepos id -> ours).
fn cubepos_slots<const N: usize, const O: u8>(x: &Pieces<N, O>, map: &[u8; N]) -> [u8; N] {
    let mut ours_to_cubepos = [0u8; N];
    for (i, &o) in map.iter().enumerate() {
        ours_to_cubepos[o as usize] = i as u8;
    }
    std::array::from_fn(|slot| ours_to_cubepos[x.perm[map[slot] as usize] as usize])
}

/// The phase-2 coordinate of a corner permutation in H: `(c8_4 * 24 + ctp) * 24 + cbp`, with
/// c8_4 the rank of the mask of slots holding U corners, ctp and cbp the S4 indices of the U
/// corners and of the D corners in slot order.
pub fn corner_coord(x: &Corners) -> u32 {
    let slots = cubepos_slots(x, &CORNER);
    let mask = (0..8).filter(|&s| slots[s] < 4).fold(0u8, |m, s| m | 1 << s);
    let mut up = slots.iter().filter(|&&c| c < 4).copied();
    let mut down = slots.iter().filter(|&&c| c >= 4).map(|&c| c - 4);
    let up: [u8; 4] = std::array::from_fn(|_| up.next().expect("four U corners"));
    let down: [u8; 4] = std::array::from_fn(|_| down.next().expect("four D corners"));
    (four_of_eight_rank(mask) * 24 + s4_index(up)) * 24 + s4_index(down)
}

/// The phase-2 coordinate of the U/D-layer edges in H (the E-slice edges are not part of it):
/// `(e8_4 * 24 + etp) * 24 + ebp`, the mask over slots 0..3 and 8..11 of those holding U edges.
pub fn edge_coord(x: &Edges) -> u32 {
    let slots = cubepos_slots(x, &EDGE);
    let ud = UD_EDGE_SLOTS.map(|s| slots[s]);
    let mask = (0..8).filter(|&k| ud[k] < 4).fold(0u8, |m, k| m | 1 << k);
    let mut up = ud.iter().filter(|&&e| e < 4).copied();
    let mut down = ud.iter().filter(|&&e| e >= 8).map(|&e| e - 8);
    let up: [u8; 4] = std::array::from_fn(|_| up.next().expect("four U edges"));
    let down: [u8; 4] = std::array::from_fn(|_| down.next().expect("four D edges"));
    (four_of_eight_rank(mask) * 24 + s4_index(up)) * 24 + s4_index(down)
}

/// For every corner coordinate, a corner permutation with that coordinate (oriented).
pub fn corners_by_coord() -> Vec<Corners> {
    let mut out = vec![Corners::IDENTITY; PHASE2_VALUES as usize];
    for rank in 0..PHASE2_VALUES {
        let mut x = Corners::IDENTITY;
        perm_unrank(rank, &mut x.perm);
        out[corner_coord(&x) as usize] = x;
    }
    out
}

/// For every edge coordinate, edges with that coordinate (oriented, E-slice edges at home).
pub fn edges_by_coord() -> Vec<Edges> {
    let mut out = vec![Edges::IDENTITY; PHASE2_VALUES as usize];
    for rank in 0..PHASE2_VALUES {
        // Our edges 0..7 are the U and D layers' (UR UF UL UB DR DF DL DB).
        let mut x = Edges::IDENTITY;
        perm_unrank(rank, &mut x.perm[..8]);
        out[edge_coord(&x) as usize] = x;
    }
    out
}

/// Whether a cubepos edge id (or slot) is in the E slice (ids 4..7).
pub fn in_e_slice(id: u8) -> bool {
    (4..8).contains(&id)
}

/// The corners as cubepos sees them: per cubepos slot, the cubepos corner id there and its
/// twist. Both programs measure the twist from the U/D facelet, in the same direction.
pub fn corner_slots(x: &Corners) -> [(u8, u8); 8] {
    let ids = cubepos_slots(x, &CORNER);
    std::array::from_fn(|slot| (ids[slot], x.ori[CORNER[slot] as usize]))
}

/// The edges as cubepos sees them: per cubepos slot, the cubepos edge id there and its flip.
/// Our flips change under F and B quarter turns, cubepos's under R and L ones; the two differ
/// exactly when one of slot and cubie is in the E slice and the other is not.
pub fn edge_slots(x: &Edges) -> [(u8, u8); 12] {
    let ids = cubepos_slots(x, &EDGE);
    std::array::from_fn(|slot| {
        let flip = x.ori[EDGE[slot] as usize] ^ (in_e_slice(slot as u8) != in_e_slice(ids[slot])) as u8;
        (ids[slot], flip)
    })
}

/// Inverse of [`corner_slots`].
pub fn corners_from_slots(slots: &[(u8, u8); 8]) -> Corners {
    let mut x = Corners::IDENTITY;
    for (slot, &(id, twist)) in slots.iter().enumerate() {
        x.perm[CORNER[slot] as usize] = CORNER[id as usize];
        x.ori[CORNER[slot] as usize] = twist;
    }
    x
}

/// Inverse of [`edge_slots`].
pub fn edges_from_slots(slots: &[(u8, u8); 12]) -> Edges {
    let mut x = Edges::IDENTITY;
    for (slot, &(id, flip)) in slots.iter().enumerate() {
        x.perm[EDGE[slot] as usize] = EDGE[id as usize];
        x.ori[EDGE[slot] as usize] = flip ^ (in_e_slice(slot as u8) != in_e_slice(id)) as u8;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{Cube, MoveSet, SplitMix64};

    #[test]
    fn coordinates_are_bijections_and_the_identity_is_zero() {
        let corners = corners_by_coord();
        let edges = edges_by_coord();
        for c in 0..PHASE2_VALUES {
            assert_eq!(corner_coord(&corners[c as usize]), c);
            assert_eq!(edge_coord(&edges[c as usize]), c);
        }
        // The solved cube: U corners in slots 0..3 (mask 0b1111, rank 0), both S4 orders 0.
        assert_eq!(corner_coord(&Cube::SOLVED.corners), 0);
        assert_eq!(edge_coord(&Cube::SOLVED.edges), 0);
        // S4 indices: bit 0 is the parity.
        assert_eq!(s4_index([1, 0, 2, 3]) & 1, 1);
        assert_eq!(s4_index([1, 2, 0, 3]) & 1, 0);
    }

    #[test]
    fn moves_of_h_change_both_coordinates_and_keep_the_slice() {
        let moves = MoveSet::KociembaH.moves();
        let mut rng = SplitMix64::new(20);
        let mut x = Cube::SOLVED;
        for _ in 0..200 {
            x = x.compose(moves[rng.below(moves.len() as u64) as usize].cube());
            assert!(corner_coord(&x.corners) < PHASE2_VALUES && edge_coord(&x.edges) < PHASE2_VALUES);
            assert!(x.edges.perm[8..].iter().all(|&e| e >= 8));
        }
        // U turns the U corners among the U slots: the mask stays, the order changes.
        let u = moves[0].cube();
        assert_eq!(corner_coord(&u.corners) / 576, 0);
        assert_ne!(corner_coord(&u.corners), 0);
    }
}
