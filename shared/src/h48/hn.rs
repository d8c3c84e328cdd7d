//! hN tables (N = 1..11) from exact h11 distances, without dense arrays of the h11 space
//! (docs/h48-tables.md).
//!
//! An hN entry is the minimum, over the 2^(11-N) h11 entries that differ only in the dropped
//! (lowest) eo bits, of their exact h11 distances; its 2-bit value needs those distances up to
//! base + 2 only. So:
//!
//! 1. the h11 levels 0 ..= base + 1 are computed exactly, one target row at a time (the row's
//!    new entries are the images of the previous level's entries of the rows that move into
//!    it, closed under the row's stabilizer, minus the row's two previous levels), and kept in
//!    the level store ([`Level`]: they are sparse, below 6 % of the h11 entries);
//! 2. each table row is then made on its own: the stored levels of the row, folded onto hN's
//!    columns, give every entry at most base + 1 its exact depth; the images of level base + 1
//!    (every one of them is at most base + 2 away) give the entries at base + 2; the rest read
//!    3. The row's lines go straight to the output file.
//!
//! Rows are the cocsep classes in the solver's order, and a row's entries are one contiguous
//! run of the table, so rows can be made in any order and written where they belong.

use super::builder::base_for;
use super::levels::{ColumnSet, Level};
use super::table::{LINE_BYTES, LINE_ENTRIES};
use crate::coord::h48::{EoEsepColumns, EoEsepMap, H48Coords, EO, ESEP};
use crate::cube::Move;
use crate::space::{close_under, RowIndex, SymProductSpace};
use std::sync::atomic::{AtomicU64, Ordering};

/// h11 columns per row: 34,650 esep values x 2048 eo values.
pub const H11_COLUMNS: u32 = ESEP * EO;

/// The h11 index with, per target row, the (source row, move) pairs that move into it.
pub struct H11Rows {
    space: SymProductSpace<EoEsepColumns>,
    incoming: Vec<Vec<(u32, Move)>>,
}

/// Columns of a row, grouped by 128 KB region of the row's bitmap before they are sorted, so
/// that the sorting hits one cache-sized part of the row at a time (a row's full bitmap is
/// 8.9 MB).
#[derive(Default)]
struct Scatter {
    buckets: Vec<Vec<u32>>,
    local: Vec<u64>,
}

impl Scatter {
    const REGION_BITS: u32 = 20;

    #[inline]
    fn queue(&mut self, c: u32) {
        let b = (c >> Self::REGION_BITS) as usize;
        if b >= self.buckets.len() {
            self.buckets.resize_with(b + 1, Vec::new);
        }
        self.buckets[b].push(c);
    }

    /// Appends the queued columns to `out` in increasing order, without repeats, and empties
    /// the queue: each region is sorted on its own, in a region-sized bitmap where it is dense.
    fn drain_sorted(&mut self, out: &mut Vec<u32>) {
        let words = 1usize << (Self::REGION_BITS - 6);
        self.local.resize(words, 0);
        for (b, bucket) in self.buckets.iter_mut().enumerate() {
            if bucket.len() < 4096 {
                bucket.sort_unstable();
                bucket.dedup();
                out.extend_from_slice(bucket);
            } else {
                let base = (b as u32) << Self::REGION_BITS;
                for &c in bucket.iter() {
                    let i = (c - base) as usize;
                    self.local[i / 64] |= 1 << (i % 64);
                }
                for (w, word) in self.local.iter_mut().enumerate() {
                    let mut bits = *word;
                    *word = 0;
                    while bits != 0 {
                        out.push(base + w as u32 * 64 + bits.trailing_zeros());
                        bits &= bits - 1;
                    }
                }
            }
            bucket.clear();
        }
    }
}

/// A row-sized bitmap in huge pages where the kernel gives them: random bit writes into
/// several MB miss the TLB as often as the cache with 4 KiB pages.
#[derive(Default)]
struct HugeBits(Option<crate::bfs::BitStore>);

impl HugeBits {
    /// The bitmap as `words` zero words.
    fn zeroed(&mut self, words: usize) -> &mut [u64] {
        match &mut self.0 {
            Some(b) if b.words().len() == words => b.words_mut().fill(0),
            slot => *slot = Some(crate::bfs::BitStore::anonymous(words).expect("memory for a row's bitmap")),
        }
        self.words_mut()
    }

    fn words(&self) -> &[u64] {
        self.0.as_ref().map_or(&[], |b| b.words())
    }

    fn words_mut(&mut self) -> &mut [u64] {
        self.0.as_mut().map_or(&mut [], |b| b.words_mut())
    }
}

/// Per-thread buffers of level and table rows.
#[derive(Default)]
pub struct RowScratch {
    scatter: Scatter,
    keys: Vec<u32>,
    dense: HugeBits,
    old: Vec<u32>,
    b0: HugeBits,
    b1: HugeBits,
    b2: HugeBits,
    mins: Vec<u8>,
}

/// A finished table row: its lines (the first and last may be shared with the neighbouring
/// rows: they hold only this row's slots, and their minimum covers only those), and its counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowLines {
    pub first_line: u64,
    pub bytes: Vec<u8>,
    /// hN entries of the row at each exact depth 0 ..= base + 2.
    pub counts: Vec<u64>,
    /// Entries deeper than base + 2.
    pub deeper: u64,
}

impl RowLines {
    pub fn line_count(&self) -> u64 {
        (self.bytes.len() / LINE_BYTES) as u64
    }

    /// Line `k` of the row (k = 0 is `first_line`).
    pub fn line(&self, k: usize) -> &[u8] {
        &self.bytes[k * LINE_BYTES..][..LINE_BYTES]
    }

    /// Where the interior lines start in the main table (bytes).
    pub fn interior_offset(&self) -> u64 {
        (self.first_line + 1) * LINE_BYTES as u64
    }

    /// The lines between the first and the last (only this row's), as a file holds them.
    pub fn interior(&self) -> &[u8] {
        &self.bytes[LINE_BYTES..self.bytes.len() - LINE_BYTES]
    }

    /// The row without its interior lines (written into the file by whoever made it): its
    /// first and last line, which neighbouring rows share, and its counts.
    pub fn without_interior(&self) -> RowLines {
        let n = self.line_count() as usize;
        let bytes = [self.line(0), self.line(n - 1)].concat();
        RowLines { first_line: self.first_line, bytes, counts: self.counts.clone(), deeper: self.deeper }
    }
}

/// Merges a partial line into another: the slots of both (each holds zeros where the other
/// has slots), the smaller minimum.
pub fn merge_line(into: &mut [u8], other: &[u8]) {
    let min = (into[LINE_BYTES - 1] >> 4).min(other[LINE_BYTES - 1] >> 4);
    for (a, b) in into.iter_mut().zip(other) {
        *a |= b;
    }
    into[LINE_BYTES - 1] = into[LINE_BYTES - 1] & 15 | min << 4;
}

/// Whether a row of `entries` has enough of them in an esep block on average that looking a
/// block's image up once for all of them ([`BlockImages`]) pays: where most blocks hold one
/// entry, the test of the block costs more than the lookups it saves.
fn dense_blocks(entries: u64) -> bool {
    entries >= 4 * ESEP as u64
}

/// ORs into `bits` (a table row of hN, N <= 7; h0 folds every eo value) the images of `set`'s
/// entries under `map`, folded onto hN's columns. The images of an esep block's entries all
/// land in one block of the row (2^N bits), so they are gathered in a register and ORed into
/// the row once per block: one write to the row per block instead of one per entry. (For N >= 8 a register does not
/// hold a block, and a buffer in memory chains each entry's write to the one before.)
fn mark_blocks(set: &ColumnSet, map: EoEsepMap, h: u8, bits: &mut [u64]) {
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
struct BlockImages<'a> {
    map: EoEsepMap<'a>,
    block: u32,
    /// The image block's first column, and its flips.
    base: u32,
    xor: u16,
}

impl<'a> BlockImages<'a> {
    fn new(map: EoEsepMap<'a>) -> Self {
        BlockImages { map, block: u32::MAX, base: 0, xor: 0 }
    }

    #[inline]
    fn image(&mut self, c: u32) -> u32 {
        if c / EO != self.block {
            self.block = c / EO;
            let (to, xor) = self.map.block(self.block);
            (self.base, self.xor) = (to * EO, xor);
        }
        self.base + self.map.eo_image(c % EO, self.xor)
    }
}

impl H11Rows {
    pub fn new(coords: &H48Coords) -> Self {
        let space = SymProductSpace::h11(coords);
        let mut incoming = vec![Vec::new(); space.row_count() as usize];
        for r in 0..space.row_count() {
            for m in Move::all() {
                incoming[space.transition(r, m).0 as usize].push((r, m));
            }
        }
        H11Rows { space, incoming }
    }

    pub fn rows(&self) -> u32 {
        self.space.row_count()
    }

    pub fn space(&self) -> &SymProductSpace<EoEsepColumns> {
        &self.space
    }

    /// Level 0: the solved entry, closed under its row's stabilizer.
    pub fn first_level(&self) -> Level {
        let (row, column) = self.space.start();
        let rows = (0..self.rows())
            .map(|r| {
                if r != row {
                    return ColumnSet::empty(H11_COLUMNS);
                }
                let mut keys: Vec<u32> = self.space.variants(row, column);
                keys.dedup();
                ColumnSet::from_sorted(&keys, H11_COLUMNS)
            })
            .collect();
        Level { depth: 0, rows }
    }

    /// The rows that move into `target` (its sources: a level row of `target` is made from
    /// their rows of the level before), each once.
    pub fn sources(&self, target: u32) -> impl Iterator<Item = u32> + '_ {
        let incoming = &self.incoming[target as usize];
        incoming
            .iter()
            .enumerate()
            .filter(|(i, (r, _))| incoming[..*i].iter().all(|(q, _)| q != r))
            .map(|(_, (r, _))| *r)
    }

    /// Number of images gathered into `target` from a level.
    pub fn pushes(&self, target: u32, level: &Level) -> u64 {
        self.incoming[target as usize].iter().map(|&(r, _)| level.rows[r as usize].len()).sum()
    }

    /// Calls `f` with the image of every entry of `level` in the rows that move into `target`
    /// (with repeats, not closed under the stabilizer). A row's entries come in column order, so
    /// each esep block's image block and flips are looked up once, and each entry costs one eo
    /// table lookup ([`EoEsepMap::block`]).
    #[inline]
    fn gather(&self, target: u32, level: &Level, mut f: impl FnMut(u32)) {
        for &(r, m) in &self.incoming[target as usize] {
            let set = &level.rows[r as usize];
            if set.is_empty() {
                continue;
            }
            let (_, map) = self.space.transition(r, m);
            if dense_blocks(set.len()) {
                let mut blocks = BlockImages::new(map);
                set.for_each(|c| f(blocks.image(c)));
            } else {
                set.for_each(|c| f(map.apply(c)));
            }
        }
    }

    /// XOR of the images gathered into `target` (measures the gather alone).
    pub fn gather_checksum(&self, target: u32, level: &Level) -> u64 {
        let mut x = 0u64;
        self.gather(target, level, |c| x = x.rotate_left(5) ^ c as u64);
        x
    }

    /// Row `target` of the level after `prev`: the images of `prev`'s entries, closed under the
    /// row's stabilizer, that are in neither `prev` nor `before` (the level before it).
    pub fn next_level_row(
        &self,
        target: u32,
        prev: &Level,
        before: Option<&Level>,
        s: &mut RowScratch,
    ) -> ColumnSet {
        let t = target as usize;
        let pushes = self.pushes(target, prev);
        if pushes == 0 {
            return ColumnSet::empty(H11_COLUMNS);
        }
        let stab = self.space.stabilizer(target);
        s.keys.clear();
        if stab.is_empty() {
            let scatter = &mut s.scatter;
            self.gather(target, prev, |c| scatter.queue(c));
            scatter.drain_sorted(&mut s.keys);
        } else if pushes * (1 + stab.len() as u64) < (H11_COLUMNS / 256) as u64 {
            self.gather(target, prev, |c| s.keys.push(c));
            let n = s.keys.len();
            for i in 0..n {
                for map in &stab {
                    let image = map.apply(s.keys[i]);
                    s.keys.push(image);
                }
            }
            s.keys.sort_unstable();
            s.keys.dedup();
        } else {
            let bits = s.dense.zeroed(H11_COLUMNS.div_ceil(64) as usize);
            self.gather(target, prev, |c| bits[c as usize / 64] |= 1 << (c % 64));
            close_under(bits, &stab);
            crate::space::for_each_bit(bits, |c| s.keys.push(c));
        }
        for old in [Some(&prev.rows[t]), before.map(|b| &b.rows[t])].into_iter().flatten() {
            if old.is_empty() {
                continue;
            }
            s.old.clear();
            old.for_each(|c| s.old.push(c));
            let mut k = 0;
            s.keys.retain(|c| {
                while k < s.old.len() && s.old[k] < *c {
                    k += 1;
                }
                !(k < s.old.len() && s.old[k] == *c)
            });
        }
        ColumnSet::from_sorted(&s.keys, H11_COLUMNS)
    }

    /// The level after `prev` (`before` is the level before `prev`), on rayon's threads;
    /// `rows_done` counts finished rows.
    pub fn next_level(&self, prev: &Level, before: Option<&Level>, rows_done: &AtomicU64) -> Level {
        use rayon::prelude::*;
        let rows = (0..self.rows())
            .into_par_iter()
            .with_max_len(4)
            .map_init(RowScratch::default, |s, t| {
                let row = self.next_level_row(t, prev, before, s);
                rows_done.fetch_add(1, Ordering::Relaxed);
                row
            })
            .collect();
        Level { depth: prev.depth + 1, rows }
    }

    /// Words of a table row of hN's bits (one bit per entry of the row).
    pub fn table_row_words(h: u8) -> usize {
        ((ESEP as u64) << h).div_ceil(64) as usize
    }

    /// The entries of table row `target` of hN at most base + 2 away as far as the sources that
    /// `level` (level base + 1) holds say: the images of their entries, closed under the row's
    /// stabilizer and folded onto hN's columns, OR-ed into `bits` (bit i: entry i of the row;
    /// [`H11Rows::table_row_words`] words). Rows `level` leaves empty add nothing, so the marks
    /// of a row's sources held in different places are the OR of each place's marks.
    pub fn table_marks(&self, target: u32, h: u8, level: &Level, bits: &mut [u64]) {
        let shift = 11 - h as u32;
        let mark = |bits: &mut [u64], c: u32| {
            let i = (c >> shift) as usize;
            bits[i / 64] |= 1 << (i % 64);
        };
        // Bits set directly (measured: grouping them by region first was slower here, even
        // for h11's 8.9 MB rows), or, where the stabilizer is trivial, a block at a time.
        let stab = self.space.stabilizer(target);
        if stab.is_empty() {
            for &(r, m) in &self.incoming[target as usize] {
                let set = &level.rows[r as usize];
                let (_, map) = self.space.transition(r, m);
                if h <= 7 && dense_blocks(set.len()) {
                    mark_blocks(set, map, h, bits);
                } else if dense_blocks(set.len()) {
                    let mut blocks = BlockImages::new(map);
                    set.for_each(|c| mark(bits, blocks.image(c)));
                } else {
                    set.for_each(|c| mark(bits, map.apply(c)));
                }
            }
            return;
        }
        let images = self.pushes(target, level);
        if dense_blocks(images / self.incoming[target as usize].len() as u64) {
            let mut stab: Vec<BlockImages> = stab.into_iter().map(BlockImages::new).collect();
            self.gather(target, level, |c| {
                mark(bits, c);
                for map in &mut stab {
                    mark(bits, map.image(c));
                }
            });
        } else {
            self.gather(target, level, |c| {
                mark(bits, c);
                for map in &stab {
                    mark(bits, map.apply(c));
                }
            });
        }
    }

    /// Table row `target` of hN from the levels 0 ..= base + 1 (`levels[d]` at depth d) and,
    /// if the row's sources at level base + 1 are not all in `levels`, the marks of the others
    /// ([`H11Rows::table_marks`], made where they are kept).
    pub fn table_row<L: AsRef<Level>>(
        &self,
        target: u32,
        h: u8,
        levels: &[L],
        marks: Option<&[u64]>,
        s: &mut RowScratch,
    ) -> RowLines {
        let base = base_for(h);
        assert!(levels.len() == base as usize + 2, "h48h{h} needs the h11 levels 0 ..= {}", base + 1);
        let shift = 11 - h as u32;
        let per_row = (ESEP as u64) << h;
        let words = per_row.div_ceil(64) as usize;
        for b in [&mut s.b0, &mut s.b1, &mut s.b2] {
            b.zeroed(words);
        }
        let row_start = target as u64 * per_row;
        let first_line = row_start / LINE_ENTRIES as u64;
        let last_line = (row_start + per_row - 1) / LINE_ENTRIES as u64;
        let lines = (last_line - first_line + 1) as usize;
        s.mins.clear();
        s.mins.resize(lines, 15);
        let mut counts = vec![0u64; base as usize + 3];
        // Exact depths up to base + 1, from the stored levels in increasing depth.
        for (d, level) in levels.iter().enumerate() {
            let (b0, b1, mins) = (s.b0.words_mut(), s.b1.words_mut(), &mut s.mins);
            let mut new = 0u64;
            level.as_ref().rows[target as usize].for_each(|c| {
                let i = (c >> shift) as usize;
                let bit = 1u64 << (i % 64);
                if (b0[i / 64] | b1[i / 64]) & bit == 0 {
                    if d <= base as usize {
                        b0[i / 64] |= bit
                    } else {
                        b1[i / 64] |= bit
                    }
                    new += 1;
                    let line = ((row_start + i as u64) / LINE_ENTRIES as u64 - first_line) as usize;
                    if mins[line] == 15 {
                        mins[line] = d as u8;
                    }
                }
            });
            counts[d] = new;
        }
        // Level base + 2: the images of level base + 1, closed under the stabilizer.
        let b2 = s.b2.words_mut();
        self.table_marks(target, h, levels[base as usize + 1].as_ref(), b2);
        if let Some(marks) = marks {
            assert_eq!(marks.len(), words, "marks of an h48h{h} row");
            b2.iter_mut().zip(marks).for_each(|(b, m)| *b |= m);
        }
        let (b0, b1, b2) = (s.b0.words(), s.b1.words(), s.b2.words());
        counts[base as usize + 2] = (0..words).map(|k| (b2[k] & !(b0[k] | b1[k])).count_ones() as u64).sum();
        let deeper = per_row - counts.iter().sum::<u64>();

        let levels = RowLevels { b0, b1, b2, mins: &s.mins };
        let bytes = pack_row(&levels, row_start, per_row, super::file::main_entries(h), base);
        RowLines { first_line, bytes, counts, deeper }
    }
}

/// A row's entries by level, for [`pack_row`]: bit i of `b0` if entry i is at most base, of
/// `b1` if it is base + 1, of `b2` if it is at most base + 2 (any of the three may hold entries
/// of the lower ones); per line of the row, the smallest depth at most base + 1 (15 if none).
pub struct RowLevels<'a> {
    pub b0: &'a [u64],
    pub b1: &'a [u64],
    pub b2: &'a [u64],
    pub mins: &'a [u8],
}

/// The lines of a row of `per_row` entries starting at entry `row_start` of a table of
/// `entries`: its first and last line hold only this row's slots (zeros elsewhere) and the
/// minimum of those; slots past the table's end read 3.
pub fn pack_row(levels: &RowLevels, row_start: u64, per_row: u64, entries: u64, base: u8) -> Vec<u8> {
    let first_line = row_start / LINE_ENTRIES as u64;
    let last_line = (row_start + per_row - 1) / LINE_ENTRIES as u64;
    let lines = (last_line - first_line + 1) as usize;
    let mut bytes = vec![0u8; lines * LINE_BYTES];
    for (k, out) in bytes.chunks_exact_mut(LINE_BYTES).enumerate() {
        let line_start = (first_line + k as u64) * LINE_ENTRIES as u64;
        let g0 = line_start.max(row_start);
        let g1 = (line_start + LINE_ENTRIES as u64).min(row_start + per_row);
        let mut line = [0u64; 8];
        let mut any_two = false;
        let mut g = g0;
        while g < g1 {
            let n = (g1 - g).min(64) as u32;
            let i = (g - row_start) as usize;
            let mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
            let (x0, x1, x2) = (bits_at(levels.b0, i), bits_at(levels.b1, i), bits_at(levels.b2, i));
            let lo = !x0 & (x1 | !x2) & mask;
            let hi = !x0 & !x1 & mask;
            any_two |= hi & !lo != 0;
            or_codes(&mut line, 2 * (g - line_start) as usize, lo, hi);
            g += n as u64;
        }
        if line_start + LINE_ENTRIES as u64 > entries && g1 == entries {
            for slot in (entries - line_start) as usize..LINE_ENTRIES {
                line[slot / 32] |= 3 << (2 * (slot % 32));
            }
        }
        let min = match levels.mins[k] {
            15 if any_two => base + 2,
            m => m,
        };
        line[7] |= (min as u64) << 60;
        for (w, chunk) in line.iter().zip(out.chunks_exact_mut(8)) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
    }
    bytes
}

/// 64 bits of a bitmap from bit `i` (zeros past its end).
#[inline]
fn bits_at(words: &[u64], i: usize) -> u64 {
    let (w, s) = (i / 64, i % 64);
    let mut v = words.get(w).copied().unwrap_or(0) >> s;
    if s > 0 {
        v |= words.get(w + 1).copied().unwrap_or(0) << (64 - s);
    }
    v
}

/// Spreads the 32 bits of `x` to the even bits of a u64.
#[inline]
fn spread(x: u32) -> u64 {
    let mut x = x as u64;
    x = (x | x << 16) & 0x0000_FFFF_0000_FFFF;
    x = (x | x << 8) & 0x00FF_00FF_00FF_00FF;
    x = (x | x << 4) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | x << 2) & 0x3333_3333_3333_3333;
    (x | x << 1) & 0x5555_5555_5555_5555
}

/// ORs 2-bit codes (low bits `lo`, high bits `hi`, up to 64 slots) into a 512-bit line at bit
/// `at` (even).
#[inline]
fn or_codes(line: &mut [u64; 8], at: usize, lo: u64, hi: u64) {
    let halves = [
        spread(lo as u32) | spread(hi as u32) << 1,
        spread((lo >> 32) as u32) | spread((hi >> 32) as u32) << 1,
    ];
    for (k, &v) in halves.iter().enumerate() {
        if v == 0 {
            continue;
        }
        let bit = at + 64 * k;
        let (w, s) = (bit / 64, bit % 64);
        if w < 8 {
            line[w] |= v << s;
        }
        if s > 0 && w + 1 < 8 {
            line[w + 1] |= v >> (64 - s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cube::{SplitMix64, Symmetry};
    use crate::h48::table::pack_two_bit;

    #[test]
    fn rows_packed_one_by_one_and_merged_equal_the_whole_table_packed_at_once() {
        let mut rng = SplitMix64::new(254);
        let base = 8u8;
        for (rows, per_row) in [(3u64, 1000u64), (5, 254), (4, 509), (2, 64 * 7 + 3)] {
            let entries = rows * per_row;
            // Mostly deep entries, with runs of shallow ones (some lines hold none at all).
            let depths: Vec<u8> =
                (0..entries).map(|i| if (i / 300) % 3 == 0 { 12 } else { 5 + rng.below(8) as u8 }).collect();
            let mut table = vec![0u8; crate::h48::table::line_count(entries) as usize * LINE_BYTES];
            let mut written = vec![false; table.len() / LINE_BYTES];
            for r in 0..rows {
                let row = &depths[(r * per_row) as usize..][..per_row as usize];
                let words = (per_row as usize).div_ceil(64);
                let mut b = [vec![0u64; words], vec![0u64; words], vec![0u64; words]];
                for (i, &d) in row.iter().enumerate() {
                    for (k, bits) in b.iter_mut().enumerate() {
                        if d <= base + k as u8 && (k != 1 || d == base + 1) {
                            bits[i / 64] |= 1 << (i % 64);
                        }
                    }
                }
                let first = r * per_row / LINE_ENTRIES as u64;
                let last = ((r + 1) * per_row - 1) / LINE_ENTRIES as u64;
                let mins: Vec<u8> = (first..=last)
                    .map(|l| {
                        let (a, z) = ((l * 254).max(r * per_row), ((l + 1) * 254).min((r + 1) * per_row));
                        (a..z).map(|g| depths[g as usize]).filter(|&d| d <= base + 1).min().unwrap_or(15)
                    })
                    .collect();
                let levels = RowLevels { b0: &b[0], b1: &b[1], b2: &b[2], mins: &mins };
                let bytes = pack_row(&levels, r * per_row, per_row, entries, base);
                for (k, line) in bytes.chunks_exact(LINE_BYTES).enumerate() {
                    let l = first as usize + k;
                    let at = &mut table[l * LINE_BYTES..][..LINE_BYTES];
                    if written[l] {
                        merge_line(at, line);
                    } else {
                        at.copy_from_slice(line);
                        written[l] = true;
                    }
                }
            }
            assert!(table == pack_two_bit(&depths, base), "{rows} rows of {per_row}");
        }
    }

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

    #[test]
    fn codes_land_in_their_slots() {
        let mut line = [0u64; 8];
        // Slots 3 and 4 from bit 6: codes 1 (lo) and 2 (hi).
        or_codes(&mut line, 6, 0b01, 0b10);
        assert_eq!(line[0], 1 << 6 | 2 << 8);
        let mut line = [0u64; 8];
        or_codes(&mut line, 2 * 250, 0b1111, 0);
        // Slots 250..253 only: bits 500..507.
        assert_eq!(line[7], 0x55 << 52);
        assert!(line[..7].iter().all(|&w| w == 0));
    }
}
