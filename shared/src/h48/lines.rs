//! A table row's 2-bit lines: packed from the row's entries by level, each line with the
//! smallest depth of its slots; a row's first and last line may be shared with its neighbours
//! and are merged when both are made.

use super::table::{LINE_BYTES, LINE_ENTRIES};

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

    use crate::cube::SplitMix64;
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
