//! The self-inverse pre-test of a row ([`RowSpace::inverse_filter`]): which of a column's
//! block orderings can make x^-1 one of the row's class members, decided from per-block keys.

use super::{ColumnMap, RowSpace};
use crate::coord::Part;
use crate::cube::Pieces;
use crate::space::index::InverseFilter;

impl<const N: usize, const O: u8> RowSpace<N, O>
where
    Pieces<N, O>: Part,
{
    /// A fast pre-test of self-inverse classes over a whole row: x^-1 can only be in the class
    /// if its row value is one of the class's raw values, which is decided block by block from
    /// the per-block inverse keys.
    pub fn inverse_filter(&self, row: u32) -> BlockFilter {
        let rep = self.classes.rep(row);
        let blocks = self.blocks();
        let mut inverse = [[u16::MAX; 24]; 3];
        for (b, keys) in inverse.iter_mut().enumerate().take(blocks) {
            *keys = self.layout.inverse_keys(rep, b);
        }
        // Each member's key against a block's 24 inverse keys at once: up to 48 members, no
        // sort, no search.
        let mut compat = [[0u64; 24]; 3];
        self.each_member(row, |i, m| {
            let keys = self.layout.row_keys(m);
            for b in 0..blocks {
                let mut hits = matching_orders(&inverse[b], keys[b]);
                while hits != 0 {
                    compat[b][hits.trailing_zeros() as usize] |= 1 << i;
                    hits &= hits - 1;
                }
            }
        });
        for table in compat.iter_mut().skip(blocks) {
            *table = [u64::MAX; 24];
        }
        BlockFilter { blocks, compat }
    }
}

/// The orderings `o` with `keys[o] == key`, as bits of a mask. On x86-64, three 8-lane compares
/// (SSE2, which every x86-64 processor has); elsewhere, one compare per ordering.
#[inline]
fn matching_orders(keys: &[u16; 24], key: u16) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86-64 baseline; the loads read 3 x 8 of the 24 keys.
        unsafe {
            let k = _mm_set1_epi16(key as i16);
            let lanes = |at: usize| _mm_cmpeq_epi16(_mm_loadu_si128(keys.as_ptr().add(at).cast()), k);
            let low = _mm_movemask_epi8(_mm_packs_epi16(lanes(0), lanes(8))) as u32;
            let high = _mm_movemask_epi8(_mm_packs_epi16(lanes(16), _mm_setzero_si128())) as u32;
            low | high << 16
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        matching_orders_portable(keys, key)
    }
}

#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn matching_orders_portable(keys: &[u16; 24], key: u16) -> u32 {
    keys.iter().enumerate().fold(0, |hits, (o, &k)| hits | ((k == key) as u32) << o)
}

/// See [`RowSpace::inverse_filter`].
pub struct BlockFilter {
    blocks: usize,
    compat: [[u64; 24]; 3],
}

impl InverseFilter for BlockFilter {
    #[inline]
    fn candidate(&self, column: u32) -> bool {
        let d = ColumnMap::digits(self.blocks, column);
        self.compat[0][d[0] as usize] & self.compat[1][d[1] as usize] & self.compat[2][d[2] as usize] != 0
    }

    /// By groups of 24 columns (the last block's 24 orderings under one value of the others): a
    /// group whose row bits are all clear, or whose other blocks already exclude every class
    /// member, costs one test; otherwise the last block's orderings allowed by the remaining
    /// members form one 24-bit mask for the whole group. Per column, that replaces two
    /// divisions, three lookups and a test by a share of one AND.
    fn for_each_candidate(&self, bits: &[u64], mut f: impl FnMut(u32)) {
        let last = self.blocks - 1;
        // The last block's orderings allowed by member i, made when first needed.
        let mut allowed = [0u32; 64];
        let mut made = 0u64;
        for group in 0..24u32.pow(last as u32) {
            let first = group * 24;
            let (w, shift) = ((first / 64) as usize, first % 64);
            let mut word = bits[w] >> shift;
            if shift > 40 {
                word |= bits[w + 1] << (64 - shift);
            }
            let set = word as u32 & 0xFF_FFFF;
            if set == 0 {
                continue;
            }
            let mut members = u64::MAX;
            let mut rest = group;
            for b in (0..last).rev() {
                members &= self.compat[b][(rest % 24) as usize];
                rest /= 24;
            }
            let mut mask = 0u32;
            while members != 0 {
                let i = members.trailing_zeros() as usize;
                members &= members - 1;
                if made >> i & 1 == 0 {
                    allowed[i] =
                        (0..24).filter(|&o| self.compat[last][o] >> i & 1 == 1).fold(0, |m, o| m | 1 << o);
                    made |= 1 << i;
                }
                mask |= allowed[i];
            }
            let mut hits = set & mask;
            while hits != 0 {
                f(first + hits.trailing_zeros());
                hits &= hits - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::SplitMix64;

    #[test]
    fn matching_orders_agrees_with_one_compare_per_ordering() {
        let mut rng = SplitMix64::new(11);
        for round in 0..20_000 {
            // Few distinct values, so that keys repeat and a key matches several orderings.
            let spread = [2, 5, 65_536][round % 3];
            let keys: [u16; 24] = std::array::from_fn(|_| rng.below(spread) as u16);
            let key = if round % 2 == 0 { keys[rng.below(24) as usize] } else { rng.below(spread) as u16 };
            let expected = matching_orders_portable(&keys, key);
            assert_eq!(matching_orders(&keys, key), expected, "{keys:?} {key}");
            assert_eq!(expected.count_ones() as usize, keys.iter().filter(|&&k| k == key).count());
        }
    }
}
