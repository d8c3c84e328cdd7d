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

use super::blocks::{dense_blocks, for_each_image, mark_blocks, BlockImages};
#[cfg(target_arch = "x86_64")]
use super::blocks::{fold_row, mark_whole_blocks, mark_whole_blocks_into, whole_blocks};
use super::builder::base_for;
use super::levels::{ColumnSet, Level};
use super::lines::{pack_row, RowLevels, RowLines};
use super::table::LINE_ENTRIES;
#[cfg(target_arch = "x86_64")]
use crate::coord::flips;
use crate::coord::h48::EoEsepMap;
use crate::coord::h48::{CocsepTable, EoEsepColumns, H48Coords, EO, ESEP};
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

/// Columns of a row, grouped by 128 KB region of the row's bitmap, then put in order one region
/// at a time through a region-sized bitmap that stays in cache (a row's full bitmap is 8.9 MB).
/// A summary bit per bitmap word marks the words in use, so a region costs its columns, not its
/// size: no sort, and repeats fall out.
#[derive(Default)]
struct Scatter {
    buckets: Vec<Vec<u32>>,
    local: Vec<u64>,
    summary: Vec<u64>,
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
    /// the queue.
    fn drain_sorted(&mut self, out: &mut Vec<u32>) {
        let words = 1usize << (Self::REGION_BITS - 6);
        self.local.resize(words, 0);
        self.summary.resize(words / 64, 0);
        let mask = (1u32 << Self::REGION_BITS) - 1;
        for (b, bucket) in self.buckets.iter_mut().enumerate() {
            if bucket.is_empty() {
                continue;
            }
            for &c in bucket.iter() {
                let w = ((c & mask) / 64) as usize;
                self.local[w] |= 1 << (c % 64);
                self.summary[w / 64] |= 1 << (w % 64);
            }
            let base = (b as u32) << Self::REGION_BITS;
            for (s, used) in self.summary.iter_mut().enumerate() {
                let mut used_words = std::mem::take(used);
                while used_words != 0 {
                    let w = s * 64 + used_words.trailing_zeros() as usize;
                    used_words &= used_words - 1;
                    let mut bits = std::mem::take(&mut self.local[w]);
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
    /// A table row's entries at base + 2 as far as its marks say.
    b2: HugeBits,
    exact: ExactDepths,
    /// The marks of a group's rows ([`H11Rows::table_rows`]).
    group: Vec<HugeBits>,
}

/// A table row's entries at depths up to base + 1 (`b0`: up to base, `b1`: base + 1) and
/// each of its lines' least depth (15: none up to base + 1).
#[derive(Default)]
struct ExactDepths {
    b0: HugeBits,
    b1: HugeBits,
    mins: Vec<u8>,
}

impl H11Rows {
    pub fn new(coords: &H48Coords) -> Self {
        Self::from_space(SymProductSpace::h11(coords))
    }

    /// The index from the cocsep table and h11's column tables, made already: a table build
    /// makes its small sections from the same tables ([`super::small_sections_from`]).
    pub fn from_tables(coords: &H48Coords, cocsep: &CocsepTable, columns: EoEsepColumns) -> Self {
        Self::from_space(SymProductSpace::h11_from(coords, cocsep, columns))
    }

    fn from_space(space: SymProductSpace<EoEsepColumns>) -> Self {
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
            for_each_image(set, map, &mut f);
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
        // Images go through the scatter where they are few, else into a dense row: from one
        // image in 64 columns without a stabilizer (measured on h11's levels 10 and 11: level
        // 11's rows, about 6 images in 64 columns, 12.6 ns an image dense against 16 to 18
        // through the scatter), from one in 256 with one (the closure takes the dense row).
        let olds = [Some(&prev.rows[t]), before.map(|b| &b.rows[t])];
        let images = pushes * (1 + stab.len() as u64);
        if images < (H11_COLUMNS as u64) >> if stab.is_empty() { 6 } else { 8 } {
            let scatter = &mut s.scatter;
            self.gather(target, prev, |c| {
                scatter.queue(c);
                for map in &stab {
                    scatter.queue(map.apply(c));
                }
            });
            scatter.drain_sorted(&mut s.keys);
            for old in olds.into_iter().flatten().filter(|o| !o.is_empty()) {
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
        } else {
            let bits = s.dense.zeroed(H11_COLUMNS.div_ceil(64) as usize);
            self.gather(target, prev, |c| bits[c as usize / 64] |= 1 << (c % 64));
            close_under(bits, &stab);
            for old in olds.into_iter().flatten() {
                old.for_each(|c| bits[c as usize / 64] &= !(1 << (c % 64)));
            }
            crate::space::for_each_bit(bits, |c| s.keys.push(c));
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
        #[cfg(target_arch = "x86_64")]
        if self.marks_by_whole_blocks(target, h, level, bits) {
            return;
        }
        self.table_marks_by_entry(target, h, level, bits)
    }

    /// [`H11Rows::table_marks`] entry by entry (a block's image looked up once where blocks are
    /// dense), whatever the processor.
    pub(crate) fn table_marks_by_entry(&self, target: u32, h: u8, level: &Level, bits: &mut [u64]) {
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
                } else {
                    for_each_image(set, map, |c| mark(bits, c));
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

    /// [`H11Rows::table_marks`] with dense esep blocks moved whole, where the processor can and
    /// the sources hold enough entries a block on average (false otherwise: nothing done). A row with a
    /// stabilizer has its images made in h11's columns, closed under the stabilizer by whole
    /// blocks too, then folded.
    #[cfg(target_arch = "x86_64")]
    fn marks_by_whole_blocks(&self, target: u32, h: u8, level: &Level, bits: &mut [u64]) -> bool {
        let incoming = &self.incoming[target as usize];
        let stab = self.space.stabilizer(target);
        let dense = whole_blocks(self.pushes(target, level) / incoming.len() as u64);
        if !flips::available() || !dense {
            return false;
        }
        if stab.is_empty() {
            for &(r, m) in incoming {
                // SAFETY: the processor has the features (checked above).
                unsafe { mark_source(bits, h, &level.rows[r as usize], self.space.transition(r, m).1) };
            }
            return true;
        }
        // Closed apart from what `bits` holds already (a row's marks are ORed into it).
        let mut row = vec![0u64; H11_COLUMNS as usize / 64];
        for &(r, m) in incoming {
            // SAFETY: as above.
            unsafe { mark_source(&mut row, 11, &level.rows[r as usize], self.space.transition(r, m).1) };
        }
        close_under(&mut row, &stab);
        if h == 11 {
            bits.iter_mut().zip(&row).for_each(|(b, r)| *b |= r);
        } else {
            // SAFETY: as above.
            unsafe { fold_row(&row, h, bits) };
        }
        true
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
        let words = Self::table_row_words(h);
        let b2 = s.b2.zeroed(words);
        self.table_marks(target, h, levels[base as usize + 1].as_ref(), b2);
        if let Some(marks) = marks {
            assert_eq!(marks.len(), words, "marks of an h48h{h} row");
            b2.iter_mut().zip(marks).for_each(|(b, m)| *b |= m);
        }
        self.lines_from_marks(target, h, levels, s.b2.words(), &mut s.exact)
    }

    /// Table rows `targets` of hN, each as [`H11Rows::table_row`] makes it (every source in
    /// `levels`), handed to `emit` one at a time. Rows without a stabilizer whose sources move
    /// whole blocks are made together: each source row of level base + 1 is decoded once and
    /// its blocks moved into every row of the group it moves into, so a group whose rows share
    /// sources ([`H11Rows::table_groups`]) decodes fewer; the other rows are made one by one.
    pub fn table_rows<L: AsRef<Level>>(
        &self,
        targets: &[u32],
        h: u8,
        levels: &[L],
        s: &mut RowScratch,
        mut emit: impl FnMut(u32, RowLines),
    ) {
        let base = base_for(h) as usize;
        assert!(levels.len() == base + 2, "h48h{h} needs the h11 levels 0 ..= {}", base + 1);
        let level = levels[base + 1].as_ref();
        let (together, alone): (Vec<u32>, Vec<u32>) =
            targets.iter().partition(|&&t| self.marks_together(t, level));
        for t in alone {
            emit(t, self.table_row(t, h, levels, None, s));
        }
        debug_assert!(cfg!(target_arch = "x86_64") || together.is_empty());
        #[cfg(target_arch = "x86_64")]
        if !together.is_empty() {
            let words = Self::table_row_words(h);
            if s.group.len() < together.len() {
                s.group.resize_with(together.len(), HugeBits::default);
            }
            let mut rows: Vec<&mut [u64]> =
                s.group[..together.len()].iter_mut().map(|b| b.zeroed(words)).collect();
            // (source row, group row, map), by source.
            let mut uses: Vec<(u32, usize, EoEsepMap)> = together
                .iter()
                .enumerate()
                .flat_map(|(k, &t)| {
                    self.incoming[t as usize].iter().map(move |&(r, m)| (r, k, self.space.transition(r, m).1))
                })
                .collect();
            uses.sort_by_key(|&(r, k, _)| (r, k));
            for same in uses.chunk_by(|a, b| a.0 == b.0) {
                let set = &level.rows[same[0].0 as usize];
                if whole_blocks(set.len()) {
                    let maps: Vec<(usize, EoEsepMap)> = same.iter().map(|&(_, k, map)| (k, map)).collect();
                    // SAFETY: the processor has the features (`marks_together`).
                    unsafe { mark_whole_blocks_into(set, &maps, h, &mut rows) };
                } else {
                    for &(_, k, map) in same {
                        // SAFETY: as above.
                        unsafe { mark_source(rows[k], h, set, map) };
                    }
                }
            }
            for (k, &t) in together.iter().enumerate() {
                emit(t, self.lines_from_marks(t, h, levels, s.group[k].words(), &mut s.exact));
            }
        }
    }

    /// Whether table row `target`'s marks from `level` are made in a group
    /// ([`H11Rows::table_rows`]): no stabilizer, and sources that move whole blocks
    /// ([`H11Rows::table_marks`]' own test).
    fn marks_together(&self, target: u32, level: &Level) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let incoming = self.incoming[target as usize].len() as u64;
            flips::available()
                && self.space.stabilizer(target).is_empty()
                && whole_blocks(self.pushes(target, level) / incoming)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (target, level);
            false
        }
    }

    /// The rows of a group ([`H11Rows::table_groups`]) for `threads` threads making table rows
    /// of hN: up to 32, and the marks of all threads' groups within 576 MiB. (Groups of 16
    /// decode 0.51 of the sources that h11's rows made one by one decode, of 32 0.42, of 64
    /// 0.35: docs/kernels.md.)
    pub fn table_group_size(h: u8, threads: usize) -> usize {
        let row_bytes = Self::table_row_words(h) as u64 * 8;
        ((576u64 << 20) / (threads.max(1) as u64 * row_bytes)).clamp(1, 32) as usize
    }

    /// Groups of at most `size` of `rows` that share sources: each group grows from the first
    /// row not yet taken by the row that shares most sources with it (the lowest such row on
    /// a tie). A source row is read by about 14 table rows, so rows made together
    /// ([`H11Rows::table_rows`]) decode fewer sources the more of them they share.
    pub fn table_groups(&self, rows: &[u32], size: usize) -> Vec<Vec<u32>> {
        let n = self.rows() as usize;
        let sources: Vec<Vec<u32>> = (0..self.rows()).map(|t| self.sources(t).collect()).collect();
        let mut readers = vec![Vec::new(); n];
        for &t in rows {
            for &r in &sources[t as usize] {
                readers[r as usize].push(t);
            }
        }
        let mut free = vec![false; n];
        rows.iter().for_each(|&t| free[t as usize] = true);
        // Per free row, the sources it shares with the group growing (reset after each group).
        let (mut shared, mut touched) = (vec![0u32; n], Vec::new());
        let mut in_group = vec![false; n];
        let mut groups = Vec::new();
        for &seed in rows {
            if !free[seed as usize] {
                continue;
            }
            let mut group = Vec::with_capacity(size);
            let mut next = Some(seed);
            while let Some(t) = next {
                free[t as usize] = false;
                group.push(t);
                for &r in &sources[t as usize] {
                    if !std::mem::replace(&mut in_group[r as usize], true) {
                        for &u in &readers[r as usize] {
                            shared[u as usize] += 1;
                            touched.push(u);
                        }
                    }
                }
                next = None;
                if group.len() < size {
                    let best = touched
                        .iter()
                        .filter(|&&u| free[u as usize])
                        .max_by_key(|&&u| (shared[u as usize], std::cmp::Reverse(u)));
                    next = best.copied();
                }
            }
            for u in touched.drain(..) {
                shared[u as usize] = 0;
            }
            for &t in &group {
                sources[t as usize].iter().for_each(|&r| in_group[r as usize] = false);
            }
            groups.push(group);
        }
        groups
    }

    /// The lines of table row `target` from its entries at base + 2 as far as the marks say
    /// (`b2`) and its exact depths up to base + 1 from `levels`.
    fn lines_from_marks<L: AsRef<Level>>(
        &self,
        target: u32,
        h: u8,
        levels: &[L],
        b2: &[u64],
        exact: &mut ExactDepths,
    ) -> RowLines {
        let base = base_for(h);
        let shift = 11 - h as u32;
        let per_row = (ESEP as u64) << h;
        let words = per_row.div_ceil(64) as usize;
        for b in [&mut exact.b0, &mut exact.b1] {
            b.zeroed(words);
        }
        let row_start = target as u64 * per_row;
        let first_line = row_start / LINE_ENTRIES as u64;
        let last_line = (row_start + per_row - 1) / LINE_ENTRIES as u64;
        let lines = (last_line - first_line + 1) as usize;
        exact.mins.clear();
        exact.mins.resize(lines, 15);
        let mut counts = vec![0u64; base as usize + 3];
        // Exact depths up to base + 1, from the stored levels in increasing depth.
        for (d, level) in levels.iter().enumerate() {
            let (b0, b1, mins) = (exact.b0.words_mut(), exact.b1.words_mut(), &mut exact.mins);
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
        let (b0, b1) = (exact.b0.words(), exact.b1.words());
        counts[base as usize + 2] = (0..words).map(|k| (b2[k] & !(b0[k] | b1[k])).count_ones() as u64).sum();
        let deeper = per_row - counts.iter().sum::<u64>();

        let levels = RowLevels { b0, b1, b2, mins: &exact.mins };
        let bytes = pack_row(&levels, row_start, per_row, super::file::main_entries(h), base);
        RowLines { first_line, bytes, counts, deeper }
    }
}

/// ORs into `row` (a table row of hN) the images of `set`'s entries under `map`: whole blocks
/// where the source has enough entries a block, else a block or an entry at a time.
///
/// # Safety
/// The processor must have the features of [`mark_whole_blocks`] ([`flips::available`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,bmi2")]
unsafe fn mark_source(row: &mut [u64], h: u8, set: &ColumnSet, map: EoEsepMap) {
    if whole_blocks(set.len()) {
        // SAFETY: the caller's processor has the features.
        unsafe { mark_whole_blocks(set, map, h, row) }
    } else if h <= 7 && dense_blocks(set.len()) {
        mark_blocks(set, map, h, row);
    } else {
        for_each_image(set, map, |c| {
            let i = (c >> (11 - h)) as usize;
            row[i / 64] |= 1 << (i % 64);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::Scatter;
    use crate::cube::SplitMix64;

    /// Columns with repeats, in empty, sparse and dense regions and at both ends of a region,
    /// come out as a sort and dedup puts them; twice over the same scatter (it is left empty).
    #[test]
    fn a_scatter_drains_its_columns_sorted_without_repeats() {
        let mut rng = SplitMix64::new(9);
        let mut scatter = Scatter::default();
        for round in 0..2u32 {
            let region = 1u32 << Scatter::REGION_BITS;
            let mut columns: Vec<u32> = vec![0, region - 1, region, 3 * region - 1, 67 * region + 5];
            columns.extend((0..3000).map(|_| region + rng.below(region as u64) as u32));
            columns.extend((0..200_000).map(|_| 5 * region + rng.below(1 << 12) as u32 + round));
            columns.extend((0..500).map(|_| rng.below(70_963_200) as u32));
            let doubled = columns.clone();
            columns.extend(doubled);
            let mut out = vec![7];
            for &c in &columns {
                scatter.queue(c);
            }
            scatter.drain_sorted(&mut out);
            columns.sort_unstable();
            columns.dedup();
            assert_eq!(out[0], 7, "appended to what `out` held");
            assert_eq!(out[1..], columns[..], "round {round}");
        }
    }
}
