//! One kind of cubie (corners or edges) in the compact "replaced-by" form.
//!
//! `perm[i]` is the cubie sitting at position `i` and `ori[i]` its twist (mod 3 for corners,
//! mod 2 for edges). Composition `a * b` means "a, then b": `(a*b).perm[i] = a.perm[b.perm[i]]`,
//! `(a*b).ori[i] = a.ori[b.perm[i]] + b.ori[i]`. The sticker form used for symmetries is
//! `stickers[O*i + k] = O*perm[i] + (ori[i] + k) mod O` (see `geometry`).

use std::fmt;

/// N cubies with O orientations each (8/3 for corners, 12/2 for edges).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pieces<const N: usize, const O: u8> {
    pub perm: [u8; N],
    pub ori: [u8; N],
}

/// The corners: 8 cubies, 3 orientations.
pub type Corners = Pieces<8, 3>;
/// The edges: 12 cubies, 2 orientations.
pub type Edges = Pieces<12, 2>;

impl<const N: usize, const O: u8> Pieces<N, O> {
    pub const IDENTITY: Self = {
        let mut perm = [0u8; N];
        let mut i = 0;
        while i < N {
            perm[i] = i as u8;
            i += 1;
        }
        Pieces { perm, ori: [0; N] }
    };

    /// `self`, then `other`.
    #[inline]
    pub fn compose(&self, other: &Self) -> Self {
        let mut out = Self::IDENTITY;
        for i in 0..N {
            let j = other.perm[i] as usize;
            out.perm[i] = self.perm[j];
            out.ori[i] = (self.ori[j] + other.ori[i]) % O;
        }
        out
    }

    #[inline]
    pub fn inverse(&self) -> Self {
        let mut out = Self::IDENTITY;
        for i in 0..N {
            let j = self.perm[i] as usize;
            out.perm[j] = i as u8;
            out.ori[j] = (O - self.ori[i]) % O;
        }
        out
    }

    /// True if `perm` is a permutation and `ori` holds values below O with sum 0 mod O.
    pub fn is_valid(&self) -> bool {
        let mut seen = [false; N];
        for &p in &self.perm {
            if p as usize >= N || seen[p as usize] {
                return false;
            }
            seen[p as usize] = true;
        }
        self.ori.iter().all(|&o| o < O) && self.ori.iter().map(|&o| o as u32).sum::<u32>() % O as u32 == 0
    }

    /// Parity of the permutation (true = odd).
    pub fn parity(&self) -> bool {
        // Inversions: for each cubie, the larger cubies on earlier places.
        let (mut earlier, mut inversions) = (0u32, 0u32);
        for &c in &self.perm {
            inversions += (earlier >> c).count_ones();
            earlier |= 1 << c;
        }
        inversions & 1 == 1
    }

    /// The sticker permutation (24 slots for both kinds).
    pub fn to_stickers(&self) -> [u8; 24] {
        let o = O as usize;
        let mut s = [0u8; 24];
        for i in 0..N {
            for k in 0..o {
                s[o * i + k] = (o * self.perm[i] as usize + (self.ori[i] as usize + k) % o) as u8;
            }
        }
        s
    }

    /// Reads a sticker permutation known to be a position (e.g. a conjugate of one) from its
    /// reference slots only; the full check runs in debug builds.
    #[inline]
    pub fn from_reference_stickers(s: &[u8; 24]) -> Self {
        let o = O as usize;
        let mut out = Self::IDENTITY;
        for i in 0..N {
            let first = s[o * i] as usize;
            out.perm[i] = (first / o) as u8;
            out.ori[i] = (first % o) as u8;
        }
        debug_assert_eq!(Self::from_stickers(s), Some(out));
        out
    }

    /// Reads a sticker permutation back; `None` unless it is an orientation-preserving cubie
    /// permutation (the stickers of each cubie stay together and keep their cyclic order).
    pub fn from_stickers(s: &[u8; 24]) -> Option<Self> {
        let o = O as usize;
        let mut out = Self::IDENTITY;
        for i in 0..N {
            let first = s[o * i] as usize;
            if first >= 24 {
                return None;
            }
            out.perm[i] = (first / o) as u8;
            out.ori[i] = (first % o) as u8;
        }
        if out.perm.iter().any(|&p| p as usize >= N) || out.to_stickers() != *s || !out.is_valid() {
            return None;
        }
        Some(out)
    }
}

impl<const N: usize, const O: u8> Default for Pieces<N, O> {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl<const N: usize, const O: u8> fmt::Debug for Pieces<N, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "perm {:?} ori {:?}", self.perm, self.ori)
    }
}

/// Sticker permutation composition in the replaced-by convention: `a`, then `b`.
pub fn compose_stickers(a: &[u8; 24], b: &[u8; 24]) -> [u8; 24] {
    std::array::from_fn(|t| a[b[t] as usize])
}

pub fn invert_stickers(a: &[u8; 24]) -> [u8; 24] {
    let mut out = [0u8; 24];
    for (t, &v) in a.iter().enumerate() {
        out[v as usize] = t as u8;
    }
    out
}
