//! Bit arrays as they travel between the coordinator and workers: only the rows that hold
//! entries, so early and late levels, which touch few rows, cost little on either side.

use crate::bfs::task::{row_bits, tail_mask, RowBits, Seen, VisitedRows};
use crate::shard::{self, ShardKey, WordPart};
use crate::space::RowCounts;

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
    /// A shard holding the sparse row set of a full array (rows of `columns` columns), or of
    /// its complement.
    pub fn encode(
        key: ShardKey,
        full: &[u64],
        words_per_row: usize,
        columns: u32,
        complement: bool,
    ) -> Vec<u8> {
        let (occupied, rows) = Self::payload_parts(full, words_per_row, columns, complement);
        let parts: Vec<WordPart> = std::iter::once(WordPart::plain(&occupied)).chain(rows).collect();
        shard::encode_word_parts(key, &parts)
    }

    /// A row task's result: its rows (`full` holds just them) as a sparse row set, then their
    /// counts (see [`Self::result_from_payload`]).
    pub fn encode_result(
        key: ShardKey,
        full: &[u64],
        words_per_row: usize,
        columns: u32,
        counts: &RowCounts,
    ) -> Vec<u8> {
        let (occupied, rows) = Self::payload_parts(full, words_per_row, columns, false);
        let counts = [counts.entries, counts.positions, counts.classes, counts.self_inverse];
        let parts: Vec<WordPart> = std::iter::once(WordPart::plain(&occupied))
            .chain(rows)
            .chain(std::iter::once(WordPart::plain(&counts)))
            .collect();
        shard::encode_word_parts(key, &parts)
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
    ) -> Result<(Self, RowCounts), String> {
        if payload.len() < RESULT_COUNTERS {
            return Err("a row result without its counts".into());
        }
        let c = payload.split_off(payload.len() - RESULT_COUNTERS);
        let counts = RowCounts { entries: c[0], positions: c[1], classes: c[2], self_inverse: c[3] };
        let set = Self::from_payload(payload, rows, words_per_row)?;
        let held: u64 = set.payload[set.blocks..].iter().map(|w| w.count_ones() as u64).sum();
        if held != counts.entries {
            return Err(format!("a row result reports {} entries and holds {held}", counts.entries));
        }
        Ok((set, counts))
    }

    /// The row bits, and the parts to be written after them.
    fn payload_parts(
        full: &[u64],
        words_per_row: usize,
        columns: u32,
        complement: bool,
    ) -> (Vec<u64>, Vec<WordPart<'_>>) {
        let tail = tail_mask(columns);
        let occupied = if complement {
            row_bits(full, words_per_row, |row| {
                let (last, rest) = row.split_last().expect("rows have words");
                rest.iter().any(|&w| w != u64::MAX) || !last & tail != 0
            })
        } else {
            row_bits(full, words_per_row, |row| row.iter().any(|&w| w != 0))
        };
        let mut parts = Vec::new();
        for (k, &bits) in occupied.iter().enumerate() {
            let mut b = bits;
            while b != 0 {
                let r = k * 64 + b.trailing_zeros() as usize;
                b &= b - 1;
                let row = &full[r * words_per_row..][..words_per_row];
                parts.push(if complement { WordPart::complement(row, tail) } else { WordPart::plain(row) });
            }
        }
        (occupied, parts)
    }

    /// Reads a payload for `rows` rows; refuses one whose length does not match its row bits.
    pub fn from_payload(payload: Vec<u64>, rows: usize, words_per_row: usize) -> Result<Self, String> {
        let blocks = rows.div_ceil(64);
        if payload.len() < blocks {
            return Err(format!("row set payload of {} words is shorter than its row bits", payload.len()));
        }
        let tail = rows % 64;
        if tail != 0 && payload[blocks - 1] >> tail != 0 {
            return Err("row set payload marks rows past the end".into());
        }
        let mut before = Vec::with_capacity(blocks);
        let mut n = 0u32;
        for &bits in &payload[..blocks] {
            before.push(n);
            n += bits.count_ones();
        }
        if payload.len() != blocks + n as usize * words_per_row {
            return Err(format!(
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

/// What a forward task on a worker knows to be visited, from what it downloads: the frontier it
/// expands (depth d) and the input of the level before, which is either the frontier of depth
/// d - 1 or a set of unvisited entries that the visited ones only grew out of since (see
/// `bfs::task::Seen`; at depth 1 nothing else is visited).
pub struct KnownVisited<'a> {
    pub frontier: &'a SparseRows,
    pub before: Before<'a>,
}

/// The second input of [`KnownVisited`].
pub enum Before<'a> {
    Nothing,
    /// The frontier of depth d - 1: its entries are visited.
    Frontier(&'a SparseRows),
    /// Unvisited entries of an earlier moment: everything else is visited.
    Unvisited(&'a SparseRows),
}

impl Seen for KnownVisited<'_> {
    fn remove(&self, r: u32, row: &mut [u64]) {
        let clear = |row: &mut [u64], bits: Option<&[u64]>| {
            if let Some(bits) = bits {
                row.iter_mut().zip(bits).for_each(|(o, b)| *o &= !b);
            }
        };
        clear(row, self.frontier.row(r));
        match &self.before {
            Before::Nothing => {}
            Before::Frontier(f) => clear(row, f.row(r)),
            Before::Unvisited(u) => match u.row(r) {
                Some(open) => row.iter_mut().zip(open).for_each(|(o, b)| *o &= b),
                None => row.fill(0),
            },
        }
    }
}

/// A worker's copy of the unvisited entries (a [`SparseRows`] of the complement of visited).
pub struct Unvisited<'a>(pub &'a SparseRows);

impl VisitedRows for Unvisited<'_> {
    const HOLDS_UNVISITED: bool = true;
    #[inline]
    fn row(&self, r: u32) -> Option<&[u64]> {
        self.0.row(r)
    }
}
