//! The images of an h11 row's entries an esep block at a time: a column map sends a whole
//! block of 2,048 eo values to one block ([`EoEsepMap::block`]), so a block's image and flips
//! are looked up once for all of its entries, and a table row's marks of one block are
//! gathered in a register (docs/kernels.md, "H48 table pass"); where blocks hold dozens of
//! entries and the processor has AVX-512, a block's 2,048 eo bits are moved whole by one
//! gather and folded onto hN's columns (docs/kernels.md, "Level 11's blocks moved whole").

use super::levels::ColumnSet;
#[cfg(target_arch = "x86_64")]
use crate::coord::flips;
use crate::coord::h48::{EoEsepMap, EO, ESEP};

/// A row's columns in increasing order: a stored row, or one decoded once into a slice so that
/// several maps read it ([`crate::h48::H11Rows::table_rows`]).
pub(super) trait Columns {
    /// Number of columns.
    fn count(&self) -> u64;
    /// Calls `f` with every column, in increasing order.
    fn each(&self, f: impl FnMut(u32));
}

impl Columns for ColumnSet {
    fn count(&self) -> u64 {
        self.len()
    }

    #[inline]
    fn each(&self, f: impl FnMut(u32)) {
        self.for_each(f)
    }
}

impl Columns for [u32] {
    fn count(&self) -> u64 {
        self.len() as u64
    }

    #[inline]
    fn each(&self, f: impl FnMut(u32)) {
        self.iter().copied().for_each(f)
    }
}

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
pub(super) fn mark_blocks<C: Columns + ?Sized>(set: &C, map: EoEsepMap, h: u8, bits: &mut [u64]) {
    match h {
        0..=6 => mark_blocks_in::<u64, C>(set, map, h, bits),
        7 => mark_blocks_in::<u128, C>(set, map, h, bits),
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
fn mark_blocks_in<R: BlockRegister, C: Columns + ?Sized>(set: &C, map: EoEsepMap, h: u8, bits: &mut [u64]) {
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
    set.each(|c| {
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

/// Whether a row of `entries` holds enough of them per esep block on average that collecting
/// each block for the whole-block gather pays (h11's level 11 holds about 100 a block, level
/// 10 about 9).
pub(super) fn whole_blocks(entries: u64) -> bool {
    entries >= 16 * ESEP as u64
}

/// ORs into `bits` (a table row of hN) the images of `set`'s entries under `map` (which has its
/// [`EoEsepMap::inverse`]), folded onto hN's columns: each esep block of at least
/// [`flips::GATHER_FROM`] entries moved whole by the gather of [`crate::coord::flips`] and
/// folded onto the block's 2^N bits, the others entry by entry.
///
/// # Safety
/// The processor must have AVX-512F, BW, VBMI, BITALG and BMI2 ([`flips::available`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,bmi2")]
pub(super) unsafe fn mark_whole_blocks(set: &ColumnSet, map: EoEsepMap, h: u8, bits: &mut [u64]) {
    // SAFETY: the caller's processor has the features.
    unsafe { mark_whole_blocks_into(set, &[(0, map)], h, &mut [bits]) }
}

/// [`mark_whole_blocks`] for several maps of one source row at once (`uses`: the index in
/// `rows` of the table row each map marks): the row is decoded once, and each block it holds
/// is moved by every map. A group of table rows that share sources decodes each source once
/// ([`crate::h48::H11Rows::table_rows`]).
///
/// # Safety
/// As [`mark_whole_blocks`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,bmi2")]
pub(super) unsafe fn mark_whole_blocks_into(
    set: &ColumnSet,
    uses: &[(usize, EoEsepMap)],
    h: u8,
    rows: &mut [&mut [u64]],
) {
    set.for_each_block(|b, source, n| {
        for (k, map) in uses {
            let inverse = map.inverse().expect("a map that moves whole blocks");
            // SAFETY: the caller's processor has the features.
            unsafe { mark_block(source, n, map.block(b), map, inverse, h, rows[*k]) }
        }
    });
}

/// The marks of one source block (`source`, its `n` entries' eo bits) in image block `to`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,bmi2")]
#[inline]
unsafe fn mark_block(
    source: &[u64; 32],
    n: u32,
    (to, xor): (u32, u16),
    map: &EoEsepMap,
    inverse: &flips::FlipInverse,
    h: u8,
    bits: &mut [u64],
) {
    if n < flips::GATHER_FROM {
        let shift = 11 - h as u32;
        for (k, &word) in source.iter().enumerate() {
            let mut w = word;
            while w != 0 {
                let o = k as u32 * 64 + w.trailing_zeros();
                w &= w - 1;
                let i = ((to * EO + map.eo_image(o, xor)) >> shift) as usize;
                bits[i / 64] |= 1 << (i % 64);
            }
        }
        return;
    }
    let c = map.eo_image(0, xor) as u16;
    if h == 11 {
        let out = (&mut bits[to as usize * 32..][..32]).try_into().expect("a block of 32 words");
        // SAFETY: the caller's processor has the features.
        unsafe { flips::or_gathered(source, inverse, c, out) };
    } else {
        let mut image = [0u64; 32];
        // SAFETY: as above.
        unsafe { flips::or_gathered(source, inverse, c, &mut image) };
        // SAFETY: as above.
        unsafe { fold_block(&image, h, to, bits) };
    }
}

/// ORs into `bits` at block `to` (2^N bits from bit `to << N`) the 2,048 eo bits `image`
/// folded onto hN's columns: bit k is set where any of eo values k 2^(11-N) .. (k + 1)
/// 2^(11-N) is.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
#[inline]
unsafe fn fold_block(image: &[u64; 32], h: u8, to: u32, bits: &mut [u64]) {
    let at = (to as usize) << h;
    if h <= 5 {
        // Each bit of the block covers 2^(5 - N) whole words.
        let per = 1usize << (5 - h);
        let v = image
            .chunks_exact(per)
            .enumerate()
            .fold(0u64, |v, (k, ws)| v | ((ws.iter().any(|&w| w != 0) as u64) << k));
        bits[at / 64] |= v << (at % 64);
        return;
    }
    // Each word gives 64 / f bits, f = 2^(11 - N): its groups of f ORed, then their low bits.
    let f = 1u32 << (11 - h);
    let lows = u64::MAX / ((1u64 << f) - 1);
    let out = &mut bits[at / 64..][..1 << (h - 6)];
    for (q, word) in out.iter_mut().enumerate() {
        let mut v = 0u64;
        for r in 0..f as usize {
            let mut y = image[q * f as usize + r];
            let mut s = 1;
            while s < f {
                y |= y >> s;
                s <<= 1;
            }
            v |= std::arch::x86_64::_pext_u64(y, lows) << (r * (64 / f as usize));
        }
        *word |= v;
    }
}

/// ORs into `bits` (a table row of hN, N < 11) the row `row` of h11's columns folded onto hN's.
///
/// # Safety
/// The processor must have BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
pub(super) unsafe fn fold_row(row: &[u64], h: u8, bits: &mut [u64]) {
    for (e, block) in row.chunks_exact(32).enumerate() {
        if block.iter().any(|&w| w != 0) {
            // SAFETY: the caller's processor has BMI2.
            unsafe { fold_block(block.try_into().expect("a block of 32 words"), h, e as u32, bits) };
        }
    }
}

/// Calls `f` with the image under `map` of every entry of `set`, a block at a time where the
/// row's blocks hold several entries each ([`dense_blocks`]).
#[inline]
pub(super) fn for_each_image<C: Columns + ?Sized>(set: &C, map: EoEsepMap, mut f: impl FnMut(u32)) {
    if dense_blocks(set.count()) {
        let mut blocks = BlockImages::new(map);
        set.each(|c| f(blocks.image(c)));
    } else {
        set.each(|c| f(map.apply(c)));
    }
}

/// ORs into `bits` (a table row of hN) the images of `set`'s entries under `map`, folded onto
/// hN's columns: a block at a time in a register for N <= 7 where blocks hold several entries
/// ([`mark_blocks`]), else an entry at a time.
#[inline]
pub(super) fn mark_images<C: Columns + ?Sized>(set: &C, map: EoEsepMap, h: u8, bits: &mut [u64]) {
    if h <= 7 && dense_blocks(set.count()) {
        mark_blocks(set, map, h, bits);
    } else {
        let shift = 11 - h as u32;
        for_each_image(set, map, |c| {
            let i = (c >> shift) as usize;
            bits[i / 64] |= 1 << (i % 64);
        });
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

    /// Whole blocks (the gather, folded onto hN) against the map entry by entry: blocks of
    /// every size around the threshold and full ones, under moves with symmetries and bare
    /// conjugations, for h0 .. h11.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn marks_of_whole_blocks_equal_those_made_entry_by_entry() {
        if !flips::available() {
            eprintln!("no AVX-512 gather on this processor: the entry-by-entry marks stay");
            return;
        }
        let columns = EoEsepColumns::new(&H48Coords);
        let mut rng = SplitMix64::new(24);
        let mut keys: Vec<u32> = Vec::new();
        let mut eos: Vec<u32> = (0..EO).collect();
        for e in 0..4000 {
            let from = flips::GATHER_FROM as usize;
            let n = [0, 1, from - 1, from, from + 1, 100, 700, 2048, rng.below(40) as usize][e % 9];
            for k in 0..n {
                let j = k + rng.below((EO as usize - k) as u64) as usize;
                eos.swap(k, j);
            }
            keys.extend(eos[..n].iter().map(|&o| e as u32 * 7 * EO + o));
        }
        keys.sort_unstable();
        let set = ColumnSet::from_sorted(&keys, H11_COLUMNS);
        let maps = Move::all()
            .step_by(4)
            .zip([0u8, 5, 17, 30, 47])
            .map(|(m, s)| columns.moved(m, Symmetry(s)))
            .chain([1u8, 24, 40].map(|s| columns.conjugated(Symmetry(s))));
        for map in maps {
            for h in [0u8, 1, 4, 5, 6, 7, 8, 9, 10, 11] {
                let words = H11Rows::table_row_words(h);
                let (mut whole, mut by_entry) = (vec![0u64; words], vec![0u64; words]);
                // SAFETY: the processor has the features (checked above).
                unsafe { mark_whole_blocks(&set, map, h, &mut whole) };
                for &c in &keys {
                    let i = (map.apply(c) >> (11 - h)) as usize;
                    by_entry[i / 64] |= 1 << (i % 64);
                }
                assert!(whole == by_entry, "h{h}");
            }
        }
    }
}
