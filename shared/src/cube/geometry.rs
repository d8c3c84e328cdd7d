//! Sticker geometry: every move and every symmetry is derived from 3D vectors, not typed in.
//!
//! A *slot* is a sticker place on the solved cube: a cubie position (a sum of face normals) and
//! the normal of the face the sticker looks at. Corner slots are numbered `3 * position + k` and
//! edge slots `2 * position + k`, with the positions in Kociemba's order and the stickers of a
//! position listed starting from its reference face (U/D, or F/B for the middle-layer edges) and
//! going clockwise as seen from outside. Both kinds therefore have exactly 24 slots, which is
//! also the 24-letter alphabet of Bryan's edges-only report.
//!
//! A geometric map `g` (a face turn or a cube symmetry) sends the sticker in slot `t` to slot
//! `g(t)`. As a permutation in the "replaced-by" convention used throughout (`x[t]` = the home
//! slot of the sticker now in `t`) that map is `perm[g(t)] = t`.

/// A vector with small integer coordinates (x = R, y = U, z = F).
pub type Vec3 = [i8; 3];

pub const UP: Vec3 = [0, 1, 0];
pub const DOWN: Vec3 = [0, -1, 0];
pub const RIGHT: Vec3 = [1, 0, 0];
pub const LEFT: Vec3 = [-1, 0, 0];
pub const FRONT: Vec3 = [0, 0, 1];
pub const BACK: Vec3 = [0, 0, -1];

/// Face normals in move order U, R, F, D, L, B.
pub const FACE_NORMALS: [Vec3; 6] = [UP, RIGHT, FRONT, DOWN, LEFT, BACK];
/// Face letters in move order.
pub const FACE_LETTERS: [char; 6] = ['U', 'R', 'F', 'D', 'L', 'B'];

/// Corner positions URF, UFL, ULB, UBR, DFR, DLF, DBL, DRB with their stickers clockwise.
pub const CORNER_FACES: [[Vec3; 3]; 8] = [
    [UP, RIGHT, FRONT],
    [UP, FRONT, LEFT],
    [UP, LEFT, BACK],
    [UP, BACK, RIGHT],
    [DOWN, FRONT, RIGHT],
    [DOWN, LEFT, FRONT],
    [DOWN, BACK, LEFT],
    [DOWN, RIGHT, BACK],
];

/// Edge positions UR, UF, UL, UB, DR, DF, DL, DB, FR, FL, BL, BR, reference sticker first.
pub const EDGE_FACES: [[Vec3; 2]; 12] = [
    [UP, RIGHT],
    [UP, FRONT],
    [UP, LEFT],
    [UP, BACK],
    [DOWN, RIGHT],
    [DOWN, FRONT],
    [DOWN, LEFT],
    [DOWN, BACK],
    [FRONT, RIGHT],
    [FRONT, LEFT],
    [BACK, LEFT],
    [BACK, RIGHT],
];

/// A 3x3 integer matrix acting on column vectors (rows as arrays).
pub type Mat3 = [[i8; 3]; 3];

pub fn apply(m: &Mat3, v: Vec3) -> Vec3 {
    let mut out = [0i8; 3];
    for (r, row) in m.iter().enumerate() {
        out[r] = row[0] * v[0] + row[1] * v[1] + row[2] * v[2];
    }
    out
}

pub fn det(m: &Mat3) -> i8 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn dot(a: Vec3, b: Vec3) -> i8 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// The quarter turn of the face with outward normal `axis`, clockwise seen from outside:
/// a rotation by -90 degrees about `axis`, v -> a (a.v) - a x v.
fn quarter_turn(axis: Vec3, v: Vec3) -> Vec3 {
    let along = dot(axis, v);
    let c = cross(axis, v);
    [axis[0] * along - c[0], axis[1] * along - c[1], axis[2] * along - c[2]]
}

/// One sticker slot: (position vector, normal).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Slot {
    pos: Vec3,
    normal: Vec3,
}

fn corner_slots() -> Vec<Slot> {
    CORNER_FACES
        .iter()
        .flat_map(|faces| {
            let pos = add(add(faces[0], faces[1]), faces[2]);
            faces.iter().map(move |&normal| Slot { pos, normal })
        })
        .collect()
}

fn edge_slots() -> Vec<Slot> {
    EDGE_FACES
        .iter()
        .flat_map(|faces| {
            let pos = add(faces[0], faces[1]);
            faces.iter().map(move |&normal| Slot { pos, normal })
        })
        .collect()
}

/// The replaced-by permutation of a geometric map on a slot list; `None` if `g` does not map
/// the slot set onto itself.
fn slot_perm(slots: &[Slot], g: impl Fn(Slot) -> Slot) -> Option<[u8; 24]> {
    let mut perm = [u8::MAX; 24];
    for (t, &slot) in slots.iter().enumerate() {
        let image = g(slot);
        let target = slots.iter().position(|&s| s == image)?;
        perm[target] = t as u8;
    }
    Some(perm)
}

/// Sticker permutations (corners, edges) of the clockwise quarter turn of face `face` (0..6).
pub fn face_turn_stickers(face: usize) -> ([u8; 24], [u8; 24]) {
    let axis = FACE_NORMALS[face];
    let g = |s: Slot| {
        if dot(s.pos, axis) == 1 {
            Slot { pos: quarter_turn(axis, s.pos), normal: quarter_turn(axis, s.normal) }
        } else {
            s
        }
    };
    let corners = slot_perm(&corner_slots(), g).expect("a face turn permutes corner stickers");
    let edges = slot_perm(&edge_slots(), g).expect("a face turn permutes edge stickers");
    (corners, edges)
}

/// Sticker permutations (corners, edges) of the symmetry given by a signed permutation matrix.
pub fn symmetry_stickers(m: &Mat3) -> ([u8; 24], [u8; 24]) {
    let g = |s: Slot| Slot { pos: apply(m, s.pos), normal: apply(m, s.normal) };
    let corners = slot_perm(&corner_slots(), g).expect("a cube symmetry permutes corner stickers");
    let edges = slot_perm(&edge_slots(), g).expect("a cube symmetry permutes edge stickers");
    (corners, edges)
}

/// All 48 signed permutation matrices (the symmetry group of the cube, mirrors included).
pub fn signed_permutation_matrices() -> Vec<Mat3> {
    const AXIS_ORDERS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
    let mut out = Vec::with_capacity(48);
    for order in AXIS_ORDERS {
        for signs in 0..8u8 {
            let mut m = [[0i8; 3]; 3];
            for (row, &col) in order.iter().enumerate() {
                m[row][col] = if signs >> row & 1 == 1 { -1 } else { 1 };
            }
            out.push(m);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corner_stickers_are_listed_with_one_handedness() {
        // Clockwise seen from outside for every corner: the three normals have the same
        // determinant sign, so orientation arithmetic mod 3 is consistent across corners.
        for faces in CORNER_FACES {
            assert_eq!(det(&faces), -1);
        }
    }

    #[test]
    fn slots_are_distinct_and_24_each() {
        for slots in [corner_slots(), edge_slots()] {
            assert_eq!(slots.len(), 24);
            for (i, a) in slots.iter().enumerate() {
                assert!(slots[i + 1..].iter().all(|b| b != a));
            }
        }
    }

    #[test]
    fn forty_eight_distinct_matrices_half_of_them_mirrors() {
        let ms = signed_permutation_matrices();
        assert_eq!(ms.len(), 48);
        assert_eq!(ms.iter().filter(|m| det(m) == -1).count(), 24);
    }
}
