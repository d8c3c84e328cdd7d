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
use super::coords::{EoEsepColumns, H48Coords, EO, ESEP};
use super::levels::{ColumnSet, Level};
use super::space::SymProductSpace;
use super::table::{LINE_BYTES, LINE_ENTRIES};
use crate::bfs::{close_under, ColumnMapper, RowIndex};
use crate::cube::Move;
use std::sync::atomic::{AtomicU64, Ordering};

/// h11 columns per row: 34,650 esep values x 2048 eo values.
pub const H11_COLUMNS: u32 = ESEP * EO;

/// The h11 index with, per target row, the (source row, move) pairs that move into it.
pub struct H11Rows {
    space: SymProductSpace<EoEsepColumns>,
    incoming: Vec<Vec<(u32, Move)>>,
}

/// Per-thread buffers of level and table rows.
#[derive(Default)]
pub struct RowScratch {
    keys: Vec<u32>,
    dense: Vec<u64>,
    old: Vec<u32>,
    b0: Vec<u64>,
    b1: Vec<u64>,
    b2: Vec<u64>,
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

    /// Number of images gathered into `target` from a level.
    pub fn pushes(&self, target: u32, level: &Level) -> u64 {
        self.incoming[target as usize].iter().map(|&(r, _)| level.rows[r as usize].len()).sum()
    }

    /// Calls `f` with the image of every entry of `level` in the rows that move into `target`
    /// (with repeats, not closed under the stabilizer).
    #[inline]
    fn gather(&self, target: u32, level: &Level, mut f: impl FnMut(u32)) {
        for &(r, m) in &self.incoming[target as usize] {
            let set = &level.rows[r as usize];
            if set.is_empty() {
                continue;
            }
            let (_, map) = self.space.transition(r, m);
            set.for_each(|c| f(map.apply(c)));
        }
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
        let stab = self.space.stabilizer_maps(target);
        let olds = [Some(&prev.rows[t]), before.map(|b| &b.rows[t])];
        if pushes * (1 + stab.len() as u64) < (H11_COLUMNS / 256) as u64 {
            s.keys.clear();
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
            for old in olds.into_iter().flatten() {
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
        } else {
            s.dense.clear();
            s.dense.resize(H11_COLUMNS.div_ceil(64) as usize, 0);
            let bits = &mut s.dense;
            self.gather(target, prev, |c| bits[c as usize / 64] |= 1 << (c % 64));
            close_under(bits, &stab);
            for old in olds.into_iter().flatten() {
                old.for_each(|c| bits[c as usize / 64] &= !(1 << (c % 64)));
            }
            ColumnSet::from_bitmap(bits, H11_COLUMNS)
        }
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

    /// Table row `target` of hN from the levels 0 ..= base + 1 (`levels[d]` at depth d).
    pub fn table_row(&self, target: u32, h: u8, levels: &[Level], s: &mut RowScratch) -> RowLines {
        let base = base_for(h);
        assert!(levels.len() == base as usize + 2, "h48h{h} needs the h11 levels 0 ..= {}", base + 1);
        let shift = 11 - h as u32;
        let per_row = (ESEP as u64) << h;
        let words = per_row.div_ceil(64) as usize;
        for b in [&mut s.b0, &mut s.b1, &mut s.b2] {
            b.clear();
            b.resize(words, 0);
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
            let (b0, b1, mins) = (&mut s.b0, &mut s.b1, &mut s.mins);
            let mut new = 0u64;
            level.rows[target as usize].for_each(|c| {
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
        let stab = self.space.stabilizer_maps(target);
        let b2 = &mut s.b2;
        self.gather(target, &levels[base as usize + 1], |c| {
            let i = (c >> shift) as usize;
            b2[i / 64] |= 1 << (i % 64);
            for map in &stab {
                let i = (map.apply(c) >> shift) as usize;
                b2[i / 64] |= 1 << (i % 64);
            }
        });
        counts[base as usize + 2] =
            (0..words).map(|k| (s.b2[k] & !(s.b0[k] | s.b1[k])).count_ones() as u64).sum();
        let deeper = per_row - counts.iter().sum::<u64>();

        let entries = super::file::main_entries(h);
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
                let (x0, x1, x2) = (bits_at(&s.b0, i), bits_at(&s.b1, i), bits_at(&s.b2, i));
                let lo = !x0 & (x1 | !x2) & mask;
                let hi = !x0 & !x1 & mask;
                any_two |= hi & !lo != 0;
                or_codes(&mut line, 2 * (g - line_start) as usize, lo, hi);
                g += n as u64;
            }
            // The table's last line: slots past the last entry read 3.
            if line_start + LINE_ENTRIES as u64 > entries && g1 == entries {
                for slot in (entries - line_start) as usize..LINE_ENTRIES {
                    line[slot / 32] |= 3 << (2 * (slot % 32));
                }
            }
            let min = match s.mins[k] {
                15 if any_two => base + 2,
                m => m,
            };
            line[7] |= (min as u64) << 60;
            for (w, chunk) in line.iter().zip(out.chunks_exact_mut(8)) {
                chunk.copy_from_slice(&w.to_le_bytes());
            }
        }
        RowLines { first_line, bytes, counts, deeper }
    }
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

    #[test]
    fn codes_land_in_their_slots() {
        let mut line = [0u64; 8];
        // Slots 3 and 4 from bit 6: codes 1 (lo) and 2 (hi).
        or_codes(&mut line, 6, 0b01, 0b10);
        assert_eq!(line[0], 1 << 6 | 2 << 8);
        let mut line = [0u64; 8];
        or_codes(&mut line, 2 * 250, u64::MAX, 0);
        // Slots 250..253 only: bits 500..507.
        assert_eq!(line[7], 0x55 << 52);
        assert!(line[..7].iter().all(|&w| w == 0));
    }
}
