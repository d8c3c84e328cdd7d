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

/// Singmaster's position notation, as Rokicki's programs print and read it: for the places UF UR
/// UB UL DF DR DB DL FR FL BR BL UFR URB UBL ULF DRF DFL DLB DBR in that order, the cubie there,
/// named by the home faces of the stickers on the faces the place's name lists, in its order.
/// Solved prints the list of places itself.
pub struct Singmaster<'a>(pub &'a Cube);

const SINGMASTER_PLACES: [&str; 20] = [
    "UF", "UR", "UB", "UL", "DF", "DR", "DB", "DL", "FR", "FL", "BR", "BL", "UFR", "URB", "UBL", "ULF",
    "DRF", "DFL", "DLB", "DBR",
];

impl fmt::Display for Singmaster<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let normal =
            |c: char| FACE_NORMALS[FACE_LETTERS.iter().position(|&l| l == c).expect("a face letter")];
        let (edges, corners) = (self.0.edges.to_stickers(), self.0.corners.to_stickers());
        for (i, place) in SINGMASTER_PLACES.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            let faces: Vec<[i8; 3]> = place.chars().map(normal).collect();
            let same_place = |p: &[[i8; 3]]| faces.iter().all(|n| p.contains(n));
            for n in &faces {
                let letter = if faces.len() == 2 {
                    let pos = EDGE_FACES.iter().position(|p| same_place(p)).expect("an edge place");
                    let k = EDGE_FACES[pos].iter().position(|m| m == n).expect("its face");
                    edge_sticker_letter(edges[2 * pos + k])
                } else {
                    let pos = CORNER_FACES.iter().position(|p| same_place(p)).expect("a corner place");
                    let k = CORNER_FACES[pos].iter().position(|m| m == n).expect("its face");
                    corner_sticker_letter(corners[3 * pos + k])
                };
                write!(f, "{letter}")?;
            }
        }
        Ok(())
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
