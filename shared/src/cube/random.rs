//! Seeded random positions: the same seed gives the same positions on every machine.

use super::pieces::Pieces;
use super::state::Cube;

/// SplitMix64: a small, fast, well-distributed generator with a 64-bit state.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0), by rejection so there is no modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let v = self.next_u64();
            if v < zone {
                return v % n;
            }
        }
    }
}

fn random_pieces<const N: usize, const O: u8>(rng: &mut SplitMix64) -> Pieces<N, O> {
    let mut p = Pieces::<N, O>::IDENTITY;
    for i in (1..N).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        p.perm.swap(i, j);
    }
    let mut sum = 0u32;
    for i in 0..N - 1 {
        p.ori[i] = rng.below(O as u64) as u8;
        sum += p.ori[i] as u32;
    }
    p.ori[N - 1] = ((O as u32 - sum % O as u32) % O as u32) as u8;
    p
}

/// A uniformly random solvable position.
pub fn random_cube(rng: &mut SplitMix64) -> Cube {
    let corners = random_pieces::<8, 3>(rng);
    let mut edges = random_pieces::<12, 2>(rng);
    if corners.parity() != edges.parity() {
        edges.perm.swap(10, 11);
    }
    Cube { corners, edges }
}
