//! The table pass of an hN build: a table row's entries at base + 2 marked from the images of
//! level base + 1 (entry by entry, a block at a time, or whole blocks by the flips gather),
//! its exact depths up to base + 1 from the row's own levels, and its lines; rows made in
//! groups that share sources, so that each source row is decoded once for the group
//! (docs/h48-tables.md; docs/kernels.md, "Table rows made in groups that share sources").

use super::blocks::{dense_blocks, mark_images, BlockImages};
#[cfg(target_arch = "x86_64")]
use super::blocks::{fold_row, mark_whole_blocks, mark_whole_blocks_into, whole_blocks};
use super::builder::base_for;
use super::hn::{ExactDepths, H11Rows, HugeBits, RowScratch, H11_COLUMNS};
use super::levels::{ColumnSet, Level};
use super::lines::{pack_row, RowLevels, RowLines};
use super::table::LINE_ENTRIES;
#[cfg(target_arch = "x86_64")]
use crate::coord::flips;
use crate::coord::h48::{EoEsepMap, ESEP};
use crate::space::{close_under, RowIndex};
use std::collections::BTreeMap;

/// Marks of table rows made elsewhere (by the keepers of some of their sources), by row: ORed
/// into the marks a row's own sources give.
pub type Marks = BTreeMap<u32, Vec<u64>>;

impl H11Rows {
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
                mark_images(&level.rows[r as usize], self.space.transition(r, m).1, h, bits);
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
    /// `levels`), handed to `emit` one at a time. The rows are made together: each source row
    /// of level base + 1 is read once for the group and its entries moved into every row of
    /// the group it moves into (whole blocks where they are dense enough and the processor
    /// can, else from the row decoded once; into a row with a stabilizer once more per member),
    /// so a group whose rows share sources ([`H11Rows::table_groups`]) decodes fewer. Rows
    /// closed under their stabilizer by whole blocks ([`H11Rows::closes_by_blocks`]) are made
    /// one by one.
    pub fn table_rows<L: AsRef<Level>>(
        &self,
        targets: &[u32],
        h: u8,
        levels: &[L],
        marks: &Marks,
        s: &mut RowScratch,
        mut emit: impl FnMut(u32, RowLines),
    ) {
        let base = base_for(h) as usize;
        assert!(levels.len() == base + 2, "h48h{h} needs the h11 levels 0 ..= {}", base + 1);
        let level = levels[base + 1].as_ref();
        let (alone, together): (Vec<u32>, Vec<u32>) =
            targets.iter().partition(|&&t| self.closes_by_blocks(t, level));
        for t in alone {
            emit(t, self.table_row(t, h, levels, marks.get(&t).map(Vec::as_slice), s));
        }
        if together.is_empty() {
            return;
        }
        let words = Self::table_row_words(h);
        if s.group.len() < together.len() {
            s.group.resize_with(together.len(), HugeBits::default);
        }
        let (group, columns) = (&mut s.group, &mut s.columns);
        let mut rows: Vec<&mut [u64]> = group[..together.len()].iter_mut().map(|b| b.zeroed(words)).collect();
        self.mark_group(&together, h, level, columns, &mut rows);
        for (row, t) in rows.iter_mut().zip(&together) {
            if let Some(m) = marks.get(t) {
                assert_eq!(m.len(), words, "marks of an h48h{h} row");
                row.iter_mut().zip(m).for_each(|(b, m)| *b |= m);
            }
        }
        for (k, &t) in together.iter().enumerate() {
            emit(t, self.lines_from_marks(t, h, levels, s.group[k].words(), &mut s.exact));
        }
    }

    /// The marks ([`Self::table_marks`]) of table rows `targets` from `level`, one row of
    /// [`Self::table_row_words`] after another in the order of `targets`: made together as
    /// [`Self::table_rows`] makes them (each source decoded once), rows closed by whole blocks
    /// one by one.
    pub fn table_marks_of(&self, targets: &[u32], h: u8, level: &Level, s: &mut RowScratch) -> Vec<u64> {
        let words = Self::table_row_words(h);
        let mut out = vec![0u64; words * targets.len()];
        let mut together = Vec::new();
        let mut rows = Vec::new();
        for (slot, &t) in out.chunks_mut(words).zip(targets) {
            if self.closes_by_blocks(t, level) {
                self.table_marks(t, h, level, slot);
            } else {
                together.push(t);
                rows.push(slot);
            }
        }
        if !together.is_empty() {
            self.mark_group(&together, h, level, &mut s.columns, &mut rows);
        }
        out
    }

    /// Marks into `rows` (zeroed, one per row of `together`) the images of `level`'s sources
    /// of those rows, each source read once for the group.
    fn mark_group(
        &self,
        together: &[u32],
        h: u8,
        level: &Level,
        columns: &mut Vec<u32>,
        rows: &mut [&mut [u64]],
    ) {
        // (source row, group row, map), by source; a row with a stabilizer reads each source
        // once more per member, through the move followed by the member.
        let mut uses: Vec<(u32, usize, EoEsepMap)> = together
            .iter()
            .enumerate()
            .flat_map(|(k, &t)| {
                self.incoming[t as usize]
                    .iter()
                    .flat_map(move |&(r, m)| self.space.closed_transition(r, m).map(move |map| (r, k, map)))
            })
            .collect();
        uses.sort_by_key(|&(r, k, _)| (r, k));
        for same in uses.chunk_by(|a, b| a.0 == b.0) {
            let set = &level.rows[same[0].0 as usize];
            if set.is_empty() {
                continue;
            }
            #[cfg(target_arch = "x86_64")]
            if flips::available() && whole_blocks(set.len()) {
                let maps: Vec<(usize, EoEsepMap)> = same.iter().map(|&(_, k, map)| (k, map)).collect();
                // SAFETY: the processor has the features (checked above).
                unsafe { mark_whole_blocks_into(set, &maps, h, rows) };
                continue;
            }
            columns.clear();
            set.for_each(|c| columns.push(c));
            for &(_, k, map) in same {
                mark_images(&columns[..], map, h, rows[k]);
            }
        }
    }

    /// Whether table row `target` is made on its own, closed under its stabilizer by whole
    /// blocks after its sources' images are made ([`H11Rows::table_marks`]): where the
    /// processor can and its sources are dense enough, one pass over the row per member costs
    /// less than each source block moved once per member. Every other row is made in a group.
    fn closes_by_blocks(&self, target: u32, level: &Level) -> bool {
        #[cfg(target_arch = "x86_64")]
        if flips::available() && !self.space.stabilizer(target).is_empty() {
            let incoming = self.incoming[target as usize].len() as u64;
            return whole_blocks(self.pushes(target, level) / incoming);
        }
        false
    }

    /// The rows of a group ([`H11Rows::table_groups`]) for `threads` threads making table rows
    /// of hN: up to 32, and the marks of all threads' groups within 576 MiB. (Groups of 16
    /// decode 0.51 of the sources that h11's rows made one by one decode, of 32 0.42, of 64
    /// 0.35: docs/kernels.md.)
    pub fn table_group_size(h: u8, threads: usize) -> usize {
        let row_bytes = Self::table_row_words(h) as u64 * 8;
        ((576u64 << 20) / (threads.max(1) as u64 * row_bytes)).clamp(1, 32) as usize
    }

    /// Every row, in groups of up to 32 that share sources ([`H11Rows::table_groups`]), one
    /// group after another: the order a distributed build cuts its tasks in. A task of
    /// consecutive rows in this order shares sources as the embedded build's groups do,
    /// where a run of the solver's rows shares few (tasks of 54 rows decode 0.48 of the
    /// sources their rows would one by one, against 0.66 for runs of rows; all rows in groups
    /// 0.42: docs/h48-tables.md).
    pub fn task_order(&self) -> Vec<u32> {
        let rows: Vec<u32> = (0..self.rows()).collect();
        self.table_groups(&rows, 32).concat()
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
        // Without a branch on whether an entry is new (many of level base + 1's are not, and
        // which ones cannot be predicted): a line's least depth only falls, and an entry seen
        // before was seen at a depth no greater, in the same line.
        for (d, level) in levels.iter().enumerate() {
            let (b0, b1, mins) = (exact.b0.words_mut(), exact.b1.words_mut(), &mut exact.mins);
            let (depth, up_to_base) = (d as u8, d <= base as usize);
            let mut new = 0u64;
            level.as_ref().rows[target as usize].for_each(|c| {
                let i = (c >> shift) as usize;
                let (w, bit) = (i / 64, 1u64 << (i % 64));
                let (x0, x1) = (b0[w], b1[w]);
                new += ((x0 | x1) & bit == 0) as u64;
                if up_to_base {
                    b0[w] = x0 | bit
                } else {
                    b1[w] = x1 | (bit & !x0)
                }
                let line = ((row_start + i as u64) / LINE_ENTRIES as u64 - first_line) as usize;
                mins[line] = mins[line].min(depth);
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
    } else {
        mark_images(set, map, h, row);
    }
}
