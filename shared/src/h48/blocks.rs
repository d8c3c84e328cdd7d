//! The images of an h11 row's entries an esep block at a time: a column map sends a whole
//! block of 2,048 eo values to one block ([`EoEsepMap::block`]), so a block's image and flips
//! are looked up once for all of its entries, and a table row's marks of one block are
//! gathered in a register (docs/kernels.md, "H48 table pass").

use super::levels::ColumnSet;
use crate::coord::h48::{EoEsepMap, EO, ESEP};

/// Whether a row of `entries` has enough of them in an esep block on average that looking a
/// block's image up once for all of them ([`BlockImages`]) pays: where most blocks hold one
/// entry, the test of the block costs more than the lookups it saves.
pub(super) fn dense_blocks(entries: u64) -> bool {
    entries >= 4 * ESEP as u64
}

/// ORs into `bits` (a table row of hN, N <= 7; h0 folds every eo value) the images of `set`'s
/// entries under `map`, folded onto hN's columns. The images of an esep block's entries all
/// land in one block of the row (2^N bits), so they are gathered in a register and ORed into
/// the row once per block: one write to the row per block instead of one per entry. (For N >= 8
/// a register does not hold a block, and a buffer in memory was slower.)
pub(super) fn mark_blocks(set: &ColumnSet, map: EoEsepMap, h: u8, bits: &mut [u64]) {
    match h {
        0..=6 => mark_blocks_in::<u64>(set, map, h, bits),
        7 => mark_blocks_in::<u128>(set, map, h, bits),
        _ => panic!("a block of h48h{h} is wider than a register"),
    }
}

/// A register that holds a block of a table row (2^N bits).
trait BlockRegister: Copy + Default + std::ops::BitOrAssign + std::ops::Shl<u32, Output = Self> {
    const ONE: Self;
    /// The block shifted up by `s` bits (s < 64), as the two words it spans.
    fn words(self, s: u32) -> [u64; 2];
}

impl BlockRegister for u64 {
    const ONE: u64 = 1;
    fn words(self, s: u32) -> [u64; 2] {
        [self << s, 0]
    }
}

impl BlockRegister for u128 {
    const ONE: u128 = 1;
    fn words(self, s: u32) -> [u64; 2] {
        let v = self << s;
        [v as u64, (v >> 64) as u64]
    }
}

#[inline]
fn mark_blocks_in<R: BlockRegister>(set: &ColumnSet, map: EoEsepMap, h: u8, bits: &mut [u64]) {
    let shift = 11 - h as u32;
    let (mut block, mut to, mut xor) = (u32::MAX, 0usize, 0u16);
    let mut acc = R::default();
    let mut flush = |acc: &mut R, to: usize| {
        // Block `to` starts at bit to << h: inside a word, or (N = 7) two whole words.
        let at = to << h;
        let [low, high] = std::mem::take(acc).words((at % 64) as u32);
        bits[at / 64] |= low;
        if high != 0 {
            bits[at / 64 + 1] |= high;
        }
    };
    set.for_each(|c| {
        if c / EO != block {
            flush(&mut acc, to);
            block = c / EO;
            let (t, x) = map.block(block);
            (to, xor) = (t as usize, x);
        }
        acc |= R::ONE << (map.eo_image(c % EO, xor) >> shift);
    });
    flush(&mut acc, to);
}

/// A column map applied to columns that come block by block (most of a block's columns
/// after one another): the image block and flips of the last block seen are kept.
pub(super) struct BlockImages<'a> {
    map: EoEsepMap<'a>,
    block: u32,
    /// The image block's first column, and its flips.
    base: u32,
    xor: u16,
}

impl<'a> BlockImages<'a> {
    pub(super) fn new(map: EoEsepMap<'a>) -> Self {
        BlockImages { map, block: u32::MAX, base: 0, xor: 0 }
    }

    #[inline]
    pub(super) fn image(&mut self, c: u32) -> u32 {
        if c / EO != self.block {
            self.block = c / EO;
            let (to, xor) = self.map.block(self.block);
            (self.base, self.xor) = (to * EO, xor);
        }
        self.base + self.map.eo_image(c % EO, self.xor)
    }
}

/// Calls `f` with the image under `map` of every entry of `set`, a block at a time where the
/// row's blocks hold several entries each ([`dense_blocks`]).
#[inline]
pub(super) fn for_each_image(set: &ColumnSet, map: EoEsepMap, mut f: impl FnMut(u32)) {
    if dense_blocks(set.len()) {
        let mut blocks = BlockImages::new(map);
        set.for_each(|c| f(blocks.image(c)));
    } else {
        set.for_each(|c| f(map.apply(c)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::coord::h48::{EoEsepColumns, H48Coords};
    use crate::cube::{Move, SplitMix64, Symmetry};
    use crate::h48::{H11Rows, H11_COLUMNS};

    #[test]
    fn images_and_marks_made_a_block_at_a_time_equal_those_made_entry_by_entry() {
        let columns = EoEsepColumns::new(&H48Coords);
        let mut rng = SplitMix64::new(2048);
        // Blocks empty, with one entry, with a few and dense, in runs.
        let mut keys: Vec<u32> = Vec::new();
        for e in 0..ESEP {
            let n = match (e / 7) % 4 {
                0 => 0,
                1 => 1,
                2 => 1 + rng.below(8),
                _ => rng.below(600),
            };
            keys.extend((0..n).map(|_| e * EO + rng.below(EO as u64) as u32));
        }
        keys.sort_unstable();
        keys.dedup();
        let set = ColumnSet::from_sorted(&keys, H11_COLUMNS);
        let maps = Move::all()
            .step_by(5)
            .zip([0u8, 17, 30, 47])
            .map(|(m, s)| columns.moved(m, Symmetry(s)))
            .chain([1u8, 24].map(|s| columns.conjugated(Symmetry(s))));
        for map in maps {
            let mut blocks = BlockImages::new(map);
            let mut images = Vec::new();
            set.for_each(|c| images.push((blocks.image(c), map.apply(c))));
            assert!(images.iter().all(|(a, b)| a == b));
            for h in 0..=7u8 {
                let words = H11Rows::table_row_words(h);
                let (mut by_block, mut by_entry) = (vec![0u64; words], vec![0u64; words]);
                mark_blocks(&set, map, h, &mut by_block);
                for &(_, c) in &images {
                    let i = (c >> (11 - h)) as usize;
                    by_entry[i / 64] |= 1 << (i % 64);
                }
                assert!(by_block == by_entry, "h{h}");
            }
        }
    }
}
