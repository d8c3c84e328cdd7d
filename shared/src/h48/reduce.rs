//! hN tables from the levels of a search at full orientation resolution (h11, or the edge
//! fallback space in tests): an hN entry keeps the low N of the 11 eo bits, and its value is
//! the smallest exact distance over the 2^(11-N) dropped values (seed 000's hN is h11 with its
//! low 11-N bits dropped, see `coords.rs`).
//!
//! A level's entries arrive as rows of groups of 2048 eo columns (one esep value's 32 words).
//! Each group folds to 2^N bits by OR (bit j of the fold: some eo with `eo & (2^N - 1) == j`
//! is at this depth), the fold lands at the entry's place in one contiguous bit array, and
//! whatever was not reached before is new at this depth: its 2-bit value is written into the
//! packed lines at once, and a line's first new entry gives its minimum. Depths arrive in
//! increasing order, so the first depth an entry is seen at is its smallest. State: two bits
//! per entry for the lines and two for the reached and the level arrays (h7: 7.5 GB).

use super::builder::{base_for, Section, SectionKind};
use super::coords::EO;
use super::table::{bucket, bucket_counts, line_count, LINE_BYTES, LINE_ENTRIES};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

const GROUP_WORDS: usize = EO as usize / 64;

/// Builds one hN table from the levels of a search, in increasing depth.
pub struct HnRecorder {
    h: u8,
    base: u8,
    /// Groups of 2048 eo columns per row of the search.
    groups: usize,
    entries: u64,
    reached: Vec<u64>,
    level: Vec<AtomicU64>,
    lines: Vec<u8>,
    counts: Vec<u64>,
    last_depth: u32,
}

impl HnRecorder {
    /// For a search of `rows` rows of `groups` groups of 2048 eo columns.
    pub fn new(h: u8, rows: u32, groups: usize) -> Self {
        assert!(h <= 11, "h48h{h} does not exist");
        let entries = (rows as u64 * groups as u64) << h;
        let words = entries.div_ceil(64) as usize;
        HnRecorder {
            h,
            base: base_for(h),
            groups,
            entries,
            reached: vec![0; words],
            level: (0..words).map(|_| AtomicU64::new(0)).collect(),
            // Every entry starts at 3 (not reached within the depths searched) and every line
            // minimum at 15 (none yet).
            lines: vec![0xFF; line_count(entries) as usize * LINE_BYTES],
            counts: Vec::new(),
            last_depth: 0,
        }
    }

    /// Bytes the recorder holds for an hN table over `rows` rows of `groups` groups.
    pub fn bytes(h: u8, rows: u32, groups: usize) -> u64 {
        let entries = (rows as u64 * groups as u64) << h;
        2 * entries.div_ceil(64) * 8 + line_count(entries) * LINE_BYTES as u64
    }

    /// The depth the search has to reach: base + 2 (deeper entries all read 3).
    pub fn max_depth(&self) -> u32 {
        self.base as u32 + 2
    }

    /// Records one level: `bits` holds the search's entries at `depth`, rows of `groups` x 32
    /// words. Levels must come in increasing depth.
    pub fn record(&mut self, depth: u32, bits: &[u64]) {
        assert!(depth >= self.last_depth, "levels must come in increasing depth");
        let row_words = self.groups * GROUP_WORDS;
        assert_eq!(bits.len() % row_words, 0, "level bits are not whole rows");
        self.last_depth = depth;
        let (h, groups, level) = (self.h as usize, self.groups, &self.level);
        bits.par_chunks(row_words).enumerate().for_each(|(r, row)| {
            for (g, group) in row.chunks(GROUP_WORDS).enumerate() {
                fold_group(group, h, (r * groups + g) << h, level);
            }
        });

        let reached = &mut self.reached;
        let new: u64 = level
            .par_iter()
            .zip(reached.par_iter_mut())
            .map(|(l, seen)| {
                let fresh = l.load(Ordering::Relaxed) & !*seen;
                l.store(fresh, Ordering::Relaxed);
                *seen |= fresh;
                fresh.count_ones() as u64
            })
            .sum();
        if self.counts.len() <= depth as usize {
            self.counts.resize(depth as usize + 1, 0);
        }
        self.counts[depth as usize] += new;

        let (entries, base) = (self.entries, self.base);
        let value = bucket(depth.min(u8::MAX as u32) as u8, base);
        let fresh = |w: usize| level.get(w).map_or(0, |a| a.load(Ordering::Relaxed));
        self.lines.par_chunks_mut(LINE_BYTES).enumerate().for_each(|(l, line)| {
            let first = l as u64 * LINE_ENTRIES as u64;
            let len = (entries - first).min(LINE_ENTRIES as u64) as usize;
            let mut any = false;
            for start in (0..len).step_by(64) {
                let mut w = bits_at(fresh, first + start as u64, (len - start).min(64));
                any |= w != 0;
                while w != 0 {
                    let k = start + w.trailing_zeros() as usize;
                    let shift = 2 * (k % 4);
                    line[k / 4] = (line[k / 4] & !(3 << shift)) | (value << shift);
                    w &= w - 1;
                }
            }
            let last = &mut line[LINE_BYTES - 1];
            if any && *last >> 4 == 15 {
                *last = *last & 0x0F | (depth.min(15) as u8) << 4;
            }
        });
        level.par_iter().for_each(|a| a.store(0, Ordering::Relaxed));
    }

    /// The table: entries not reached read 3, and lines without a reached entry take the
    /// smallest distance their entries may have (one more than the deepest level searched).
    pub fn finish(mut self, searched_to: u32) -> Section {
        let bound = (searched_to + 1).min(15) as u8;
        self.lines.par_chunks_mut(LINE_BYTES).for_each(|line| {
            let last = &mut line[LINE_BYTES - 1];
            if *last >> 4 == 15 {
                *last = *last & 0x0F | bound << 4;
            }
        });
        // Depth counts end at the deepest depth with an entry, as for the other tables.
        while self.counts.last() == Some(&0) {
            self.counts.pop();
        }
        let counted: u64 = self.counts.iter().sum();
        Section {
            kind: SectionKind::H48,
            h: self.h,
            base: self.base,
            entries: self.entries,
            deeper: self.entries - counted,
            buckets: Some(bucket_counts(&self.lines, self.entries)),
            depth_counts: self.counts,
            data: self.lines,
        }
    }
}

/// ORs the fold of one group's 2048 bits (eo 0..2047) to 2^h bits into `out` at bit `at`.
fn fold_group(group: &[u64], h: usize, at: usize, out: &[AtomicU64]) {
    if h >= 6 {
        // 2^(h-6) words: word j collects the group's words k with k = j mod 2^(h-6).
        let n = 1 << (h - 6);
        for j in 0..n {
            let w = group.iter().skip(j).step_by(n).fold(0, |a, &b| a | b);
            if w != 0 {
                out[at / 64 + j].fetch_or(w, Ordering::Relaxed);
            }
        }
    } else {
        let mut w = group.iter().fold(0, |a, &b| a | b);
        let mut width = 64;
        while width > 1 << h {
            width /= 2;
            w = (w | w >> width) & (u64::MAX >> (64 - width));
        }
        if w != 0 {
            out[at / 64].fetch_or(w << (at % 64), Ordering::Relaxed);
        }
    }
}

/// Bits `start .. start + len` (len <= 64) of a bit array given by its words (0 past the end),
/// bit `start` lowest.
fn bits_at(word: impl Fn(usize) -> u64, start: u64, len: usize) -> u64 {
    let (w, s) = ((start / 64) as usize, start % 64);
    let mut v = word(w) >> s;
    if s > 0 {
        v |= word(w + 1) << (64 - s);
    }
    if len < 64 {
        v &= (1 << len) - 1;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::SplitMix64;

    #[test]
    fn a_group_folds_to_the_or_over_dropped_bits() {
        let mut rng = SplitMix64::new(11);
        for h in 0..=11usize {
            let group: Vec<u64> =
                (0..GROUP_WORDS).map(|_| rng.next_u64() & rng.next_u64() & rng.next_u64()).collect();
            let out: Vec<AtomicU64> = (0..(4usize << h).div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
            let at = 3 << h;
            fold_group(&group, h, at, &out);
            let out: Vec<u64> = out.into_iter().map(AtomicU64::into_inner).collect();
            for j in 0..1usize << h {
                let want =
                    (0..EO as usize).any(|o| o & ((1 << h) - 1) == j && group[o / 64] >> (o % 64) & 1 == 1);
                let i = at + j;
                assert_eq!(out[i / 64] >> (i % 64) & 1 == 1, want, "h{h} entry {j}");
            }
            let set: u32 = out.iter().map(|w| w.count_ones()).sum();
            assert!(set <= 1 << h, "h{h}: bits outside the entry's place");
        }
    }

    #[test]
    fn bit_windows_cross_words() {
        let words = [0xF000_0000_0000_0001u64, 0x0000_0000_0000_0003];
        let word = |w: usize| words.get(w).copied().unwrap_or(0);
        assert_eq!(bits_at(word, 60, 6), 0b11_1111);
        assert_eq!(bits_at(word, 0, 1), 1);
        assert_eq!(bits_at(word, 64, 64), 3);
        assert_eq!(bits_at(word, 100, 64), 0);
    }
}
