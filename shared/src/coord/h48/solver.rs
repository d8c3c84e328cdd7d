//! The H48 solver's own numbering (its source; `docs/references.md`): its corner and
//! edge positions, twist sign, move order and transformation order, and its three coordinates
//! cocsep, esep and eo, computed from this project's [`Cube`].
//!
//! The tables the solver loads are indexed by these coordinates, so every H48 table this
//! project writes uses them: the same entry means the same positions in both programs.
//! Positions are "position holds piece" in both programs, so a relabelling of positions and
//! pieces maps one onto the other; corner twists count the other way round.

use crate::coord::rank::binomial;
use crate::cube::{Cube, Move, Symmetry};

/// The solver's corner position (and piece) i is our position `CORNER[i]`:
/// UFR UBL DFL DBR UFL UBR DFR DBL.
const CORNER: [usize; 8] = [0, 2, 5, 7, 1, 3, 4, 6];
/// The solver's edge position (and piece) i is our position `EDGE[i]`:
/// UF UB DB DF UR UL DL DR FR FL BL BR.
const EDGE: [usize; 12] = [1, 3, 7, 5, 0, 2, 6, 4, 8, 9, 10, 11];
/// The solver's move m (U U2 U' D D2 D' R R2 R' L L2 L' F F2 F' B B2 B') is our move `MOVE[m]`.
const MOVE: [usize; 18] = [0, 1, 2, 9, 10, 11, 3, 4, 5, 12, 13, 14, 6, 7, 8, 15, 16, 17];
/// The solver's transformation t (UFr, ULr, ...; t >= 24 mirrored) is our symmetry `SYM[t]`:
/// its `transform(X, t)` is our `SYM[t].conjugate(X)` (tested on every move's image).
const SYM: [u8; 48] = [
    0, 11, 3, 8, 2, 5, 13, 10, 35, 27, 30, 42, 29, 37, 32, 20, 19, 41, 46, 24, 45, 23, 16, 38, 4, 12, 15, 7,
    14, 6, 1, 9, 33, 21, 28, 36, 31, 43, 34, 26, 47, 40, 18, 25, 17, 22, 44, 39,
];

/// Number of raw cocsep values, occurring or not: 3^7 x 2^7.
pub const COCSEP_RAW: u32 = 2187 * 128;

/// Our move for the solver's move index `m` (0..18).
pub fn solver_move(m: usize) -> Move {
    Move::from_index(MOVE[m])
}

/// Our symmetry for the solver's transformation index `t` (0..48).
pub fn solver_sym(t: usize) -> Symmetry {
    Symmetry(SYM[t])
}

/// Our edge position for the solver's edge position `i` (0..12).
pub fn edge_slot(i: usize) -> usize {
    EDGE[i]
}

/// The solver's transformation index of our symmetry `s`.
pub fn sym_index(s: Symmetry) -> u8 {
    SYM.iter().position(|&x| x == s.0).expect("48 symmetries") as u8
}

/// The solver's corner twist at its position i.
#[inline]
fn twist(x: &Cube, i: usize) -> u32 {
    (3 - x.corners.ori[CORNER[i]] as u32) % 3
}

/// The solver's corner piece at its position i.
#[inline]
fn corner_piece(x: &Cube, i: usize) -> usize {
    CORNER.iter().position(|&p| p == x.corners.perm[CORNER[i]] as usize).expect("a corner")
}

#[inline]
fn edge_piece(x: &Cube, i: usize) -> usize {
    EDGE.iter().position(|&p| p == x.edges.perm[EDGE[i]] as usize).expect("an edge")
}

/// cocsep = 128 x co + csep: twists of positions 0..6 in base 3, and a bit per position 0..6
/// whose corner belongs to the tetrad UFL UBR DFR DBL. 0 .. 279,935, 153,090 values occur.
pub fn cocsep(x: &Cube) -> u32 {
    let (mut co, mut csep) = (0, 0);
    for i in (0..7).rev() {
        co = 3 * co + twist(x, i);
    }
    for i in 0..7 {
        csep |= ((corner_piece(x, i) >= 4) as u32) << i;
    }
    128 * co + csep
}

/// esep = 70 x A + B: which positions hold E-slice edges (A, 0..494) and which of the others
/// hold S-slice edges (B, 0..69), each ranked as the solver ranks them.
pub fn esep(x: &Cube) -> u32 {
    let (mut a, mut b, mut k, mut l, mut j) = (0, 0, 4, 4, 0);
    for i in 0..12 {
        let piece = edge_piece(x, i);
        if piece >= 8 {
            a += binomial(11 - i, k);
            k -= 1;
        } else {
            if piece >= 4 {
                b += binomial(7 - j, l);
                l -= 1;
            }
            j += 1;
        }
    }
    70 * a + b
}

/// eo: bit i - 1 is the flip of the edge at the solver's position i (1..11); position 0 (UF)
/// follows by parity.
pub fn eo(x: &Cube) -> u32 {
    (1..12).fold(0, |acc, i| acc | (x.edges.ori[EDGE[i]] as u32) << (i - 1))
}

/// A position whose cocsep value is `v` (`v` must occur: three or four csep bits set).
/// Its edges are solved.
pub fn cocsep_position(v: u32) -> Cube {
    let (mut co, csep) = (v / 128, v % 128);
    let ones = csep.count_ones();
    assert!(v < COCSEP_RAW && (3..=4).contains(&ones), "cocsep {v} does not occur");
    let csep = csep | ((ones == 3) as u32) << 7;
    let mut x = Cube::SOLVED;
    let (mut low, mut high, mut sum) = (0, 4, 0);
    for (i, &slot) in CORNER.iter().enumerate() {
        let t = if i < 7 { co % 3 } else { (3 - sum % 3) % 3 };
        co /= 3;
        sum += t;
        let piece = if csep >> i & 1 == 1 { &mut high } else { &mut low };
        x.corners.perm[slot] = CORNER[*piece] as u8;
        *piece += 1;
        x.corners.ori[slot] = ((3 - t) % 3) as u8;
    }
    x
}

/// A position whose esep and eo values are `e` and `o`; its corners are solved.
pub fn edge_position(e: u32, o: u32) -> Cube {
    let (mut a, mut b, mut k, mut l, mut j) = (e / 70, e % 70, 4, 4, 0);
    let (mut next_m, mut next_s, mut next_e) = (0, 4, 8);
    let mut x = Cube::SOLVED;
    for (i, &slot) in EDGE.iter().enumerate() {
        let piece = if k > 0 && a >= binomial(11 - i, k) {
            a -= binomial(11 - i, k);
            k -= 1;
            next_e += 1;
            next_e - 1
        } else {
            j += 1;
            if l > 0 && b >= binomial(8 - j, l) {
                b -= binomial(8 - j, l);
                l -= 1;
                next_s += 1;
                next_s - 1
            } else {
                next_m += 1;
                next_m - 1
            }
        };
        x.edges.perm[slot] = EDGE[piece] as u8;
    }
    let flips: u32 = (1..12).map(|i| o >> (i - 1) & 1).sum();
    x.edges.ori[EDGE[0]] = (flips % 2) as u8;
    for (i, &slot) in EDGE.iter().enumerate().skip(1) {
        x.edges.ori[slot] = (o >> (i - 1) & 1) as u8;
    }
    x
}

/// A position with the given cocsep, esep and eo values.
pub fn position(cocsep: u32, esep: u32, eo: u32) -> Cube {
    Cube { corners: cocsep_position(cocsep).corners, edges: edge_position(esep, eo).edges }
}

/// Whether a raw cocsep value occurs (its seven csep bits hold three or four ones).
pub fn cocsep_occurs(v: u32) -> bool {
    v < COCSEP_RAW && (3..=4).contains(&(v % 128).count_ones())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{parse_moves, random_cube, SplitMix64};

    /// docs/h48-tables.md: the images of U, R and F under each transformation, as solver moves.
    const IMAGES: [&str; 48] = [
        "U R F", "U F L", "U L B", "U B R", "D L F", "D B L", "D R B", "D F R", "R F U", "R D F", "R B D",
        "R U B", "L B U", "L U F", "L F D", "L D B", "F L U", "F U R", "F R D", "F D L", "B R U", "B D R",
        "B L D", "B U L", "U' L' F'", "U' F' R'", "U' R' B'", "U' B' L'", "D' R' F'", "D' B' R'", "D' L' B'",
        "D' F' L'", "L' F' U'", "L' D' F'", "L' B' D'", "L' U' B'", "R' B' U'", "R' U' F'", "R' F' D'",
        "R' D' B'", "F' R' U'", "F' U' L'", "F' L' D'", "F' D' R'", "B' L' U'", "B' D' L'", "B' R' D'",
        "B' U' R'",
    ];

    #[test]
    fn transformations_map_moves_as_the_solver_says() {
        for (t, want) in IMAGES.iter().enumerate() {
            let s = solver_sym(t);
            let got: Vec<String> = ["U", "R", "F"]
                .iter()
                .map(|m| s.conjugate_move(parse_moves(m).unwrap()[0]).to_string())
                .collect();
            assert_eq!(got.join(" "), *want, "transformation {t}");
            assert_eq!(sym_index(s), t as u8);
        }
        // The solver's move order: U U2 U' D D2 D' R ... B'.
        let names: Vec<String> = (0..18).map(|m| solver_move(m).to_string()).collect();
        assert_eq!(names.join(" "), "U U2 U' D D2 D' R R2 R' L L2 L' F F2 F' B B2 B'");
    }

    #[test]
    fn coordinates_of_known_positions() {
        let solved = Cube::SOLVED;
        assert_eq!((cocsep(&solved), esep(&solved), eo(&solved)), (112, 0, 0));
        // F flips the four edges it moves: UF (implied), DF (3), FR (8) and FL (9).
        let f = solved.compose(parse_moves("F").unwrap()[0].cube());
        assert_eq!(eo(&f), 1 << 2 | 1 << 7 | 1 << 8);
        // R twists UFR (2), UBR (1), DFR (1) and DBR (2) in the solver's convention:
        // co = 2 + 2 x 27 + 1 x 243 + 1 x 729 at positions 0, 3, 5, 6.
        let r = solved.compose(parse_moves("R").unwrap()[0].cube());
        assert_eq!(cocsep(&r) / 128, 2 + 2 * 27 + 243 + 729);
    }

    #[test]
    fn decoders_invert_the_coordinates() {
        let mut rng = SplitMix64::new(11);
        for _ in 0..2000 {
            let x = random_cube(&mut rng);
            let (c, e, o) = (cocsep(&x), esep(&x), eo(&x));
            assert!(cocsep_occurs(c));
            assert!(e < 34_650 && o < 2048);
            let y = position(c, e, o);
            assert_eq!((cocsep(&y), esep(&y), eo(&y)), (c, e, o));
        }
        let occurring = (0..COCSEP_RAW).filter(|&v| cocsep_occurs(v)).count();
        assert_eq!(occurring, 153_090);
    }
}
