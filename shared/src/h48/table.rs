//! Packed pruning tables.
//!
//! Two bits per entry relative to a base b (the H48 solver's documentation, after nxopt):
//! 0 = at most b, 1 = b+1, 2 = b+2, 3 = at least b+3. 254 entries fill 508 bits of a 64-byte
//! line, entry k of a line at bits 2k..2k+1 (little-endian within bytes); the high nibble of the
//! line's last byte holds the smallest absolute distance in the line (capped at 15), the
//! fallback when an entry reads 0.
//! Entries past the end of the last line read 3 and do not count in its minimum.
//!
//! Four-bit tables (the edge fallback) store min(distance, 15), entry k in byte k/2, low nibble
//! first.

use rayon::prelude::*;

pub const LINE_BYTES: usize = 64;
pub const LINE_ENTRIES: usize = 254;
/// A per-entry distance that was not reached within the depths computed.
pub use crate::bfs::DEEPER;

/// Bucket of a distance: 0..=3 as above; `DEEPER` counts as at least base + 3 only when the
/// search went to base + 2 at least (the caller's duty).
#[inline]
pub fn bucket(depth: u8, base: u8) -> u8 {
    if depth <= base {
        0
    } else {
        (depth - base).min(3)
    }
}

/// Number of 64-byte lines for `entries` entries.
pub fn line_count(entries: u64) -> u64 {
    entries.div_ceil(LINE_ENTRIES as u64)
}

/// Packs per-entry distances into lines. A line's minimum counts the entries at most base + 2
/// (the solver's rule), and is 15 where there are none.
pub fn pack_two_bit(depths: &[u8], base: u8) -> Vec<u8> {
    let lines = line_count(depths.len() as u64) as usize;
    let mut out = vec![0u8; lines * LINE_BYTES];
    out.par_chunks_mut(LINE_BYTES).zip(depths.par_chunks(LINE_ENTRIES)).for_each(|(line, entries)| {
        let mut min = 15u8;
        for k in 0..LINE_ENTRIES {
            let b = match entries.get(k) {
                Some(&d) => {
                    if d <= base + 2 {
                        min = min.min(d);
                    }
                    bucket(d, base)
                }
                None => 3,
            };
            line[k / 4] |= b << (2 * (k % 4));
        }
        line[LINE_BYTES - 1] |= min.min(15) << 4;
    });
    out
}

/// The 2-bit value of entry `i`.
#[inline]
pub fn two_bit_entry(lines: &[u8], i: u64) -> u8 {
    let (line, k) = ((i / LINE_ENTRIES as u64) as usize, (i % LINE_ENTRIES as u64) as usize);
    lines[line * LINE_BYTES + k / 4] >> (2 * (k % 4)) & 3
}

/// The stored minimum of line `line`.
#[inline]
pub fn line_min(lines: &[u8], line: usize) -> u8 {
    lines[line * LINE_BYTES + LINE_BYTES - 1] >> 4
}

/// Counts of the four 2-bit values over the first `entries` entries.
pub fn bucket_counts(lines: &[u8], entries: u64) -> [u64; 4] {
    (0..line_count(entries))
        .into_par_iter()
        .map(|l| {
            let mut c = [0u64; 4];
            let first = l * LINE_ENTRIES as u64;
            for i in first..(first + LINE_ENTRIES as u64).min(entries) {
                c[two_bit_entry(lines, i) as usize] += 1;
            }
            c
        })
        .reduce(|| [0; 4], |a, b| std::array::from_fn(|k| a[k] + b[k]))
}

/// Packs distances into nibbles, min(distance, 15).
pub fn pack_nibbles(depths: &[u8]) -> Vec<u8> {
    depths.chunks(2).map(|p| p[0].min(15) | p.get(1).map_or(0, |&d| d.min(15)) << 4).collect()
}

#[inline]
pub fn nibble(bytes: &[u8], i: u64) -> u8 {
    bytes[(i / 2) as usize] >> (4 * (i % 2)) & 15
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::SplitMix64;

    #[test]
    fn two_bit_lines_hold_buckets_and_minima() {
        let mut rng = SplitMix64::new(5);
        let depths: Vec<u8> = (0..1000).map(|_| 6 + rng.below(8) as u8).collect();
        let lines = pack_two_bit(&depths, 8);
        assert_eq!(lines.len(), 4 * LINE_BYTES);
        for (i, &d) in depths.iter().enumerate() {
            let want = if d <= 8 { 0 } else { (d - 8).min(3) };
            assert_eq!(two_bit_entry(&lines, i as u64), want, "entry {i} at depth {d}");
        }
        for l in 0..4 {
            let chunk = &depths[l * LINE_ENTRIES..((l + 1) * LINE_ENTRIES).min(depths.len())];
            let min = chunk.iter().copied().filter(|&d| d <= 10).min().unwrap_or(15);
            assert_eq!(line_min(&lines, l), min);
        }
        // Padding of the last line reads 3; the counts cover real entries only.
        assert_eq!(two_bit_entry(&lines, 1000), 3);
        let counts = bucket_counts(&lines, 1000);
        assert_eq!(counts.iter().sum::<u64>(), 1000);
        assert_eq!(counts[0], depths.iter().filter(|&&d| d <= 8).count() as u64);
    }

    #[test]
    fn a_line_of_deep_entries_has_minimum_15() {
        let depths = vec![DEEPER; LINE_ENTRIES];
        let lines = pack_two_bit(&depths, 10);
        assert_eq!(line_min(&lines, 0), 15);
        assert_eq!(bucket_counts(&lines, LINE_ENTRIES as u64), [0, 0, 0, LINE_ENTRIES as u64]);
    }

    #[test]
    fn nibbles_round_trip_and_cap_at_15() {
        let depths = [0u8, 3, 15, 20, 7];
        let packed = pack_nibbles(&depths);
        let back: Vec<u8> = (0..5).map(|i| nibble(&packed, i)).collect();
        assert_eq!(back, [0, 3, 15, 15, 7]);
    }
}
