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
//! 2. then each table row (in groups of rows that share sources, each source read once for the
//!    group): the stored levels of the row, folded onto hN's columns, give every entry at most
//!    base + 1 its exact depth; the images of level base + 1 (every one of them is at most
//!    base + 2 away) give the entries at base + 2; the rest read 3. The row's lines go straight
//!    to the output file (the table pass: [`super::table_rows`]).
//!
//! Rows are the cocsep classes in the solver's order, and a row's entries are one contiguous
//! run of the table, so rows can be made in any order and written where they belong.

use super::blocks::for_each_image;
use super::levels::{ColumnSet, Level};
use crate::coord::h48::{CocsepTable, EoEsepColumns, EoEsepMap, H48Coords, EO, ESEP};
use crate::cube::Move;
use crate::space::{close_under, RowIndex, SymProductSpace};
use std::sync::atomic::{AtomicU64, Ordering};

/// h11 columns per row: 34,650 esep values x 2048 eo values.
pub const H11_COLUMNS: u32 = ESEP * EO;

/// The h11 index with, per target row, the (source row, move) pairs that move into it.
pub struct H11Rows {
    pub(super) space: SymProductSpace<EoEsepColumns>,
    /// Per target row, the (source row, move) pairs that move into it.
    pub(super) incoming: Vec<Vec<(u32, Move)>>,
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

    /// Appends the queued columns that are not in `olds` (each sorted) to `out` in increasing
    /// order, without repeats, and empties the queue. A region's old columns are cleared from
    /// its bitmap before it is read back, so they cost their number, not a pass over `out`.
    fn drain_sorted(&mut self, out: &mut Vec<u32>, olds: &[&[u32]]) {
        let mut next_old = [0usize; 2];
        assert!(olds.len() <= next_old.len(), "at most two levels before");
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
            for (old, k) in olds.iter().zip(&mut next_old) {
                // Words outside the summary are zero and stay so.
                while *k < old.len() && old[*k] >> Self::REGION_BITS <= b as u32 {
                    let c = old[*k];
                    if c >= base {
                        self.local[((c & mask) / 64) as usize] &= !(1 << (c % 64));
                    }
                    *k += 1;
                }
            }
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
pub(super) struct HugeBits(Option<crate::bfs::BitStore>);

impl HugeBits {
    /// The bitmap as `words` zero words.
    pub(super) fn zeroed(&mut self, words: usize) -> &mut [u64] {
        match &mut self.0 {
            Some(b) if b.words().len() == words => b.words_mut().fill(0),
            slot => *slot = Some(crate::bfs::BitStore::anonymous(words).expect("memory for a row's bitmap")),
        }
        self.words_mut()
    }

    pub(super) fn words(&self) -> &[u64] {
        self.0.as_ref().map_or(&[], |b| b.words())
    }

    pub(super) fn words_mut(&mut self) -> &mut [u64] {
        self.0.as_mut().map_or(&mut [], |b| b.words_mut())
    }
}

/// Per-thread buffers of level and table rows.
#[derive(Default)]
pub struct RowScratch {
    scatter: Scatter,
    keys: Vec<u32>,
    dense: HugeBits,
    /// A level row's two levels before, decoded.
    old: [Vec<u32>; 2],
    /// A table row's entries at base + 2 as far as its marks say.
    pub(super) b2: HugeBits,
    pub(super) exact: ExactDepths,
    /// The marks of a group's rows ([`H11Rows::table_rows`]).
    pub(super) group: Vec<HugeBits>,
    /// A source row of a group decoded once for the maps that read it.
    pub(super) columns: Vec<u32>,
}

/// A table row's entries at depths up to base + 1 (`b0`: up to base, `b1`: base + 1) and
/// each of its lines' least depth (15: none up to base + 1).
#[derive(Default)]
pub(super) struct ExactDepths {
    pub(super) b0: HugeBits,
    pub(super) b1: HugeBits,
    pub(super) mins: Vec<u8>,
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

    pub(super) fn from_space(space: SymProductSpace<EoEsepColumns>) -> Self {
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
    pub(super) fn gather(&self, target: u32, level: &Level, f: impl FnMut(u32)) {
        self.gather_through(target, level, |r, m| std::iter::once(self.space.transition(r, m).1), f)
    }

    /// [`H11Rows::gather`] closed under the target row's stabilizer: each source read through
    /// the move and then through each member ([`SymProductSpace::closed_transition`]).
    #[inline]
    fn gather_closed(&self, target: u32, level: &Level, f: impl FnMut(u32)) {
        self.gather_through(target, level, |r, m| self.space.closed_transition(r, m), f)
    }

    /// Calls `f` with the image of every entry of `level` in the rows that move into `target`
    /// under each of the maps `maps(source row, move)` gives.
    #[inline]
    fn gather_through<'a, I: Iterator<Item = EoEsepMap<'a>>>(
        &'a self,
        target: u32,
        level: &Level,
        maps: impl Fn(u32, Move) -> I,
        mut f: impl FnMut(u32),
    ) {
        for &(r, m) in &self.incoming[target as usize] {
            let set = &level.rows[r as usize];
            if !set.is_empty() {
                maps(r, m).for_each(|map| for_each_image(set, map, &mut f));
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
        // Images go through the scatter where they are few, else into a dense row: from one
        // image in 64 columns, closure included (measured on h11's levels 10 and 11: level
        // 11's rows, about 6 images in 64 columns, 12.6 ns an image dense against 16 to 21
        // through the scatter). Through the scatter, a row with a stabilizer reads each source
        // through the move followed by each member; a dense row is closed afterwards.
        let olds = [Some(&prev.rows[t]), before.map(|b| &b.rows[t])];
        let images = pushes * (1 + stab.len() as u64);
        if images < (H11_COLUMNS as u64) >> 6 {
            let scatter = &mut s.scatter;
            self.gather_closed(target, prev, |c| scatter.queue(c));
            for (old, buffer) in olds.iter().zip(&mut s.old) {
                buffer.clear();
                if let Some(old) = old {
                    old.for_each(|c| buffer.push(c));
                }
            }
            let [a, b] = &s.old;
            scatter.drain_sorted(&mut s.keys, &[a, b]);
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
}

#[cfg(test)]
mod tests {
    use super::Scatter;
    use crate::cube::SplitMix64;

    /// Columns with repeats, in empty, sparse and dense regions and at both ends of a region,
    /// come out as a sort and dedup puts them, less the old columns; twice over the same
    /// scatter (it is left empty).
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
            // Old columns: some queued (every third, and a region's first and last), some not,
            // some in regions that queue nothing.
            let mut olds: [Vec<u32>; 2] = [vec![0, region - 1, 40 * region + 3], vec![region]];
            olds[0].extend(columns.iter().step_by(3));
            olds[1].extend((0..400).map(|_| rng.below(70_963_200) as u32));
            for old in &mut olds {
                old.sort_unstable();
                old.dedup();
            }
            scatter.drain_sorted(&mut out, &[&olds[0], &olds[1]]);
            columns.sort_unstable();
            columns.dedup();
            columns.retain(|c| olds.iter().all(|old| old.binary_search(c).is_err()));
            assert_eq!(out[0], 7, "appended to what `out` held");
            assert_eq!(out[1..], columns[..], "round {round}");
        }
    }
}
