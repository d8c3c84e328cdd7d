//! Phase 1's coordinates (twist, flip, slice), the cubes that have them and their move tables.

use crate::cube::{Cube, Move};

pub(super) const TWISTS: usize = 2187;
pub(super) const FLIPS: usize = 2048;
pub(super) const SLICES: usize = 495;

/// A phase-1 coordinate: (twist, flip, slice).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Coord {
    pub twist: u16,
    pub flip: u16,
    pub slice: u16,
}

pub(super) fn twist_of(x: &Cube) -> u16 {
    x.corners.ori[..7].iter().fold(0u16, |t, &o| 3 * t + o as u16)
}

pub(super) fn flip_of(x: &Cube) -> u16 {
    x.edges.ori[..11].iter().fold(0u16, |f, &o| 2 * f + o as u16)
}

/// Rank of the set of places holding slice edges, in colexicographic order.
pub(super) fn slice_of(x: &Cube) -> u16 {
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

pub(super) fn binomial(n: u32, k: u32) -> u32 {
    if k > n {
        return 0;
    }
    (0..k).fold(1u32, |acc, i| acc * (n - i) / (i + 1))
}

/// Orientations from their coordinate: all but the last in base `m`, most significant first;
/// the last makes the sum a multiple of `m`.
pub(super) fn orientations(value: u16, ori: &mut [u8], m: u32) {
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
pub(super) fn with_twist(t: u16) -> Cube {
    let mut x = Cube::SOLVED;
    orientations(t, &mut x.corners.ori, 3);
    x
}

/// A cube with the given flip (other pieces solved).
pub(super) fn with_flip(f: u16) -> Cube {
    let mut x = Cube::SOLVED;
    orientations(f, &mut x.edges.ori, 2);
    x
}

/// A cube whose slice edges sit at the places of slice rank `s` (the other edges in order).
pub(super) fn with_slice(s: u16) -> Cube {
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

pub(super) fn move_table(
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

/// A cube with the given flip and slice coordinates (other pieces solved).
pub(super) fn with_flip_slice(raw: u32) -> Cube {
    let mut x = with_slice((raw % SLICES as u32) as u16);
    x.edges.ori = with_flip((raw / SLICES as u32) as u16).edges.ori;
    x
}

/// The phase-1 coordinate of a position (no tables needed): two positions with the same one
/// are in the same coset of H.
pub fn coord_of(x: &Cube) -> Coord {
    Coord { twist: twist_of(x), flip: flip_of(x), slice: slice_of(x) }
}

/// Whether `m` is one of H's moves (U, D, or a half turn of R, F, L, B).
pub fn in_h(m: Move) -> bool {
    m.face() == 0 || m.face() == 3 || m.turns() == 2
}
