//! Row sets as they travel between workers (and, for a table build, to the coordinator): only
//! the rows that hold entries, so early and late levels, which touch few rows, cost little on
//! either side; one part of the rows ([`PartCut`]) per message, checked against the entries it
//! says it holds.

use crate::bfs::task::{row_bits, RowBits};
use crate::shard::{self, ShardKey, WordPart};
use crate::space::RowCounts;
use crate::wire::Malformed;

/// A bit array as it travels to workers and as they hold it: one bit per row telling whether the
/// row has entries, then the words of those rows only. A forward level sends its frontier so,
/// a backward level its unvisited entries; early and late levels touch few rows, so neither
/// side pays for the whole array there.
pub struct SparseRows {
    words_per_row: usize,
    /// The payload: `blocks` words of row bits, then the occupied rows' words in row order.
    payload: Vec<u64>,
    blocks: usize,
    /// Occupied rows before each block of 64 rows.
    before: Vec<u32>,
}

impl SparseRows {
    /// Row bits, rows and counters as one shard.
    fn encode_payload(key: ShardKey, occupied: &[u64], rows: &[WordPart], counts: &RowCounts) -> Vec<u8> {
        let counts = [counts.entries, counts.positions, counts.classes, counts.self_inverse];
        let parts: Vec<WordPart> = std::iter::once(WordPart::plain(occupied))
            .chain(rows.iter().copied())
            .chain(std::iter::once(WordPart::plain(&counts)))
            .collect();
        shard::encode_word_parts(key, &parts)
    }

    /// A message of rows between workers: the rows of `full` (one part's rows) that hold
    /// entries and that `keep` (given the row's index in the part) accepts, with their entry
    /// count, so that the reader checks the rows against it (see [`Self::decode_rows`]).
    pub fn encode_rows(
        key: ShardKey,
        full: &[u64],
        words_per_row: usize,
        keep: &(dyn Fn(usize) -> bool + Sync),
    ) -> Vec<u8> {
        let (occupied, rows) = Self::payload_parts(full, words_per_row, keep);
        let entries = rows.iter().map(|r| r.count_ones()).sum();
        Self::encode_payload(key, &occupied, &rows, &RowCounts { entries, ..Default::default() })
    }

    /// Reads a message of [`Self::encode_rows`] for a part of `rows` rows: refused unless it is
    /// whole, for `key`, within the part's size, and holds the entries it reports.
    pub fn decode_rows(
        bytes: &[u8],
        key: ShardKey,
        rows: usize,
        words_per_row: usize,
    ) -> Result<Self, Malformed> {
        let max = Self::max_result_words(rows, words_per_row);
        let words = shard::decode_words_for(bytes, key, max).map_err(|e| Malformed::new(e.to_string()))?;
        Self::from_part_payload(words, rows, words_per_row)
    }

    /// Reads a part's payload for `rows` rows, its counters dropped once the entries they
    /// report are found to be the entries it holds (the coordinator keeps results without
    /// decoding them, so this is where a result's counts meet its rows).
    pub fn from_part_payload(
        payload: Vec<u64>,
        rows: usize,
        words_per_row: usize,
    ) -> Result<Self, Malformed> {
        Self::result_from_payload(payload, rows, words_per_row).map(|(set, _)| set)
    }

    /// Words a row task's result takes at most (see [`Self::encode_result`]).
    pub fn max_result_words(rows: usize, words_per_row: usize) -> usize {
        rows.div_ceil(64) + rows * words_per_row + RESULT_COUNTERS
    }

    /// Reads a row task's result for `rows` rows: the rows and the counts the task reports. The
    /// entries it reports must be the entries it holds.
    pub fn result_from_payload(
        mut payload: Vec<u64>,
        rows: usize,
        words_per_row: usize,
    ) -> Result<(Self, RowCounts), Malformed> {
        if payload.len() < RESULT_COUNTERS {
            return Err(Malformed::from("a row result without its counts"));
        }
        let c = payload.split_off(payload.len() - RESULT_COUNTERS);
        let counts = RowCounts { entries: c[0], positions: c[1], classes: c[2], self_inverse: c[3] };
        let set = Self::from_payload(payload, rows, words_per_row)?;
        let held: u64 = set.payload[set.blocks..].iter().map(|w| w.count_ones() as u64).sum();
        if held != counts.entries {
            return Err(malformed!("a row result reports {} entries and holds {held}", counts.entries));
        }
        Ok((set, counts))
    }

    /// The row bits, and the parts to be written after them.
    fn payload_parts<'a>(
        full: &'a [u64],
        words_per_row: usize,
        keep: &(dyn Fn(usize) -> bool + Sync),
    ) -> (Vec<u64>, Vec<WordPart<'a>>) {
        // Rows not kept are not read.
        let occupied = row_bits(full, words_per_row, |i, row| keep(i) && row.iter().any(|&w| w != 0));
        let mut parts = Vec::new();
        for (k, &bits) in occupied.iter().enumerate() {
            let mut b = bits;
            while b != 0 {
                let i = b.trailing_zeros() as usize;
                b &= b - 1;
                parts.push(WordPart::plain(&full[(k * 64 + i) * words_per_row..][..words_per_row]));
            }
        }
        (occupied, parts)
    }

    /// Reads a payload for `rows` rows; refuses one whose length does not match its row bits.
    fn from_payload(payload: Vec<u64>, rows: usize, words_per_row: usize) -> Result<Self, Malformed> {
        let blocks = rows.div_ceil(64);
        if payload.len() < blocks {
            return Err(malformed!(
                "row set payload of {} words is shorter than its row bits",
                payload.len()
            ));
        }
        let tail = rows % 64;
        if tail != 0 && payload[blocks - 1] >> tail != 0 {
            return Err(Malformed::from("row set payload marks rows past the end"));
        }
        let mut before = Vec::with_capacity(blocks);
        let mut n = 0u32;
        for &bits in &payload[..blocks] {
            before.push(n);
            n += bits.count_ones();
        }
        if payload.len() != blocks + n as usize * words_per_row {
            return Err(malformed!(
                "row set payload of {} words for {n} occupied rows of {words_per_row} words",
                payload.len()
            ));
        }
        Ok(SparseRows { words_per_row, payload, blocks, before })
    }
}

impl RowBits for SparseRows {
    #[inline]
    fn row(&self, r: u32) -> Option<&[u64]> {
        let (k, bit) = (r as usize / 64, r % 64);
        let bits = self.payload[k];
        if bits >> bit & 1 == 0 {
            return None;
        }
        let index = self.before[k] as usize + (bits & ((1u64 << bit) - 1)).count_ones() as usize;
        Some(&self.payload[self.blocks + index * self.words_per_row..][..self.words_per_row])
    }
}

/// Counters after a row result's rows: entries, positions, classes, self-inverse classes.
const RESULT_COUNTERS: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    /// A part of 10 rows of 2 words (100 columns), some rows empty.
    fn part() -> Vec<u64> {
        (0..20u64).map(|i| if i % 3 == 0 || i / 2 == 4 { 0 } else { (i * 0x9e37) & 0xf_ffff_ffff }).collect()
    }

    const KEY: ShardKey = ShardKey { job: 9, task: 2, attempt: 0, level: 5 };

    #[test]
    fn messages_read_back_with_only_the_rows_kept() {
        let full = part();
        let message = |keep: &(dyn Fn(usize) -> bool + Sync)| {
            SparseRows::decode_rows(&SparseRows::encode_rows(KEY, &full, 2, keep), KEY, 10, 2).unwrap()
        };
        let (all, even) = (message(&|_| true), message(&|i| i % 2 == 0));
        for r in 0..10u32 {
            let expected = &full[r as usize * 2..][..2];
            let held = |s: &SparseRows| s.row(r).map(|w| w.to_vec()).unwrap_or(vec![0, 0]);
            assert_eq!(held(&all), expected, "row {r}");
            if r % 2 == 0 {
                assert_eq!(held(&even), expected, "row {r}");
            } else {
                assert!(even.row(r).is_none(), "row {r} is not kept");
            }
            // An empty row travels as nothing.
            assert_eq!(all.row(r).is_none(), expected == [0, 0]);
        }
    }

    #[test]
    fn damaged_misrouted_or_oversized_messages_are_refused() {
        let bytes = SparseRows::encode_rows(KEY, &part(), 2, &|_| true);
        let other = ShardKey { level: 6, ..KEY };
        assert!(SparseRows::decode_rows(&bytes, other, 10, 2).is_err(), "another level's message");
        let mut damaged = bytes.clone();
        let last = damaged.len() - 3;
        damaged[last] ^= 1;
        assert!(SparseRows::decode_rows(&damaged, KEY, 10, 2).is_err());
        // Read as a part of fewer rows, it holds more than such a part can.
        assert!(SparseRows::decode_rows(&bytes, KEY, 4, 2).is_err());
        // Rows that disagree with the entries the message reports are refused.
        let rows = [1u64, 0];
        let counts = RowCounts { entries: 2, ..Default::default() };
        let lying = SparseRows::encode_payload(KEY, &[1], &[WordPart::plain(&rows)], &counts);
        let err = SparseRows::decode_rows(&lying, KEY, 1, 2).map(|_| ()).unwrap_err();
        assert!(err.0.contains("reports 2 entries"), "{err}");
    }
}
