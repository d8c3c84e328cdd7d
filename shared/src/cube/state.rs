//! A whole cube position: corners and edges.

use super::geometry::{CORNER_FACES, EDGE_FACES, FACE_LETTERS, FACE_NORMALS};
use super::pieces::{Corners, Edges};
use std::fmt;

/// A cube position (or any element of the cube group: a move, a sequence, a symmetry's
/// action is kept separately in `symmetry`). Composition is "self, then other".
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Cube {
    pub corners: Corners,
    pub edges: Edges,
}

impl Cube {
    pub const SOLVED: Cube = Cube { corners: Corners::IDENTITY, edges: Edges::IDENTITY };

    /// `self`, then `other`.
    #[inline]
    pub fn compose(&self, other: &Cube) -> Cube {
        Cube { corners: self.corners.compose(&other.corners), edges: self.edges.compose(&other.edges) }
    }

    #[inline]
    pub fn inverse(&self) -> Cube {
        Cube { corners: self.corners.inverse(), edges: self.edges.inverse() }
    }

    /// A reachable position: valid pieces and equal corner and edge permutation parity.
    pub fn is_solvable(&self) -> bool {
        self.corners.is_valid() && self.edges.is_valid() && self.corners.parity() == self.edges.parity()
    }
}

fn face_letter(normal: [i8; 3]) -> char {
    let face = FACE_NORMALS.iter().position(|&n| n == normal).expect("a face normal");
    FACE_LETTERS[face]
}

/// Reid's notation: for each position in Kociemba's order, the cubie there named by the home
/// faces of its stickers, starting from the position's reference sticker. Solved prints
/// `UR UF UL UB DR DF DL DB FR FL BL BR URF UFL ULB UBR DFR DLF DBL DRB`.
impl fmt::Display for Cube {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let edges = self.edges.to_stickers();
        let corners = self.corners.to_stickers();
        let mut words = Vec::with_capacity(20);
        for i in 0..12 {
            words.push((0..2).map(|k| edge_sticker_letter(edges[2 * i + k])).collect::<String>());
        }
        for i in 0..8 {
            words.push((0..3).map(|k| corner_sticker_letter(corners[3 * i + k])).collect::<String>());
        }
        f.write_str(&words.join(" "))
    }
}

impl fmt::Debug for Cube {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cube({self})")
    }
}

fn edge_sticker_letter(slot: u8) -> char {
    face_letter(EDGE_FACES[slot as usize / 2][slot as usize % 2])
}

fn corner_sticker_letter(slot: u8) -> char {
    face_letter(CORNER_FACES[slot as usize / 3][slot as usize % 3])
}
