//! Bit arrays as they travel between the coordinator and workers: only the rows that hold
//! entries, so early and late levels, which touch few rows, cost little on either side; and cut
//! into parts of one task's row range each, the same cut for every level. A task's result is
//! such a part (with its counts), so the results of one level are, unchanged, the next level's
//! input, and a forward task can fetch just its own rows of the previous level.

use super::WordPool;
use crate::bfs::task::{row_bits, tail_mask, RowBits, Seen, VisitedRows};
use crate::shard::{self, ShardKey, WordPart};
use crate::space::RowCounts;
use std::ops::Range;
use std::sync::Arc;

/// A bit array as it travels to workers and as they hold it: one bit per row telling whether the
/// row has entries, then the words of those rows only. A forward level sends its frontier so,
/// a backward level its unvisited entries; early and late levels touch few rows, so neither
/// side pays for the whole array there.
pub struct SparseRows {
    rows: usize,
    words_per_row: usize,
    /// The payload: `blocks` words of row bits, then the occupied rows' words in row order.
    payload: Vec<u64>,
    blocks: usize,
    /// Occupied rows before each block of 64 rows.
    before: Vec<u32>,
}

impl SparseRows {
    /// A part: the sparse row set of `full` (some rows of `columns` columns), or of its
    /// complement, then four counters (the counts of its rows, at least their entries). See
    /// [`Self::from_part_payload`].
    pub fn encode_part(
        key: ShardKey,
        full: &[u64],
        words_per_row: usize,
        columns: u32,
        complement: bool,
        counts: &RowCounts,
    ) -> Vec<u8> {
        let (occupied, rows) = Self::payload_parts(full, words_per_row, columns, complement, &|_| true);
        Self::encode_payload(key, &occupied, &rows, counts)
    }

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
        columns: u32,
        keep: &(dyn Fn(usize) -> bool + Sync),
    ) -> Vec<u8> {
        let (occupied, rows) = Self::payload_parts(full, words_per_row, columns, false, keep);
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
    ) -> Result<Self, String> {
        let max = Self::max_result_words(rows, words_per_row);
        let words = shard::decode_words_for(bytes, key, max).map_err(|e| e.to_string())?;
        Self::from_part_payload(words, rows, words_per_row)
    }

    /// A row task's result: its new entries (`full` holds just its rows) as a part with their
    /// counts (see [`Self::result_from_payload`]).
    pub fn encode_result(
        key: ShardKey,
        full: &[u64],
        words_per_row: usize,
        columns: u32,
        counts: &RowCounts,
    ) -> Vec<u8> {
        Self::encode_part(key, full, words_per_row, columns, false, counts)
    }

    /// Reads a part's payload for `rows` rows, its counters dropped once the entries they
    /// report are found to be the entries it holds (the coordinator keeps results without
    /// decoding them, so this is where a result's counts meet its rows).
    pub fn from_part_payload(payload: Vec<u64>, rows: usize, words_per_row: usize) -> Result<Self, String> {
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
    fn payload_parts<'a>(
        full: &'a [u64],
        words_per_row: usize,
        columns: u32,
        complement: bool,
        keep: &(dyn Fn(usize) -> bool + Sync),
    ) -> (Vec<u64>, Vec<WordPart<'a>>) {
        let tail = tail_mask(columns);
        let mut occupied = if complement {
            row_bits(full, words_per_row, |row| {
                let (last, rest) = row.split_last().expect("rows have words");
                rest.iter().any(|&w| w != u64::MAX) || !last & tail != 0
            })
        } else {
            row_bits(full, words_per_row, |row| row.iter().any(|&w| w != 0))
        };
        for (k, bits) in occupied.iter_mut().enumerate() {
            let mut b = *bits;
            while b != 0 {
                let i = b.trailing_zeros() as usize;
                b &= b - 1;
                if !keep(k * 64 + i) {
                    *bits &= !(1 << i);
                }
            }
        }
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

    /// The row set of `full` (whole rows of `words_per_row` words), as a worker keeps its own
    /// result: the same rows a decoder reads from that result's shard. It is written into
    /// `buffer` (cleared first; a buffer of a [`super::WordPool`], or `Vec::new()`).
    pub fn from_rows(full: &[u64], words_per_row: usize, buffer: Vec<u64>) -> Self {
        let occupied = row_bits(full, words_per_row, |row| row.iter().any(|&w| w != 0));
        let held: usize = occupied.iter().map(|b| b.count_ones() as usize).sum();
        let mut payload = buffer;
        payload.clear();
        payload.reserve(occupied.len() + held * words_per_row);
        payload.extend_from_slice(&occupied);
        for (k, &bits) in occupied.iter().enumerate() {
            let mut b = bits;
            while b != 0 {
                let r = k * 64 + b.trailing_zeros() as usize;
                b &= b - 1;
                payload.extend_from_slice(&full[r * words_per_row..][..words_per_row]);
            }
        }
        let rows = full.len() / words_per_row.max(1);
        Self::from_payload(payload, rows, words_per_row).expect("a payload built from whole rows")
    }

    /// The payload's memory, for reuse.
    pub fn into_payload(self) -> Vec<u64> {
        self.payload
    }

    /// Rows the set covers.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Reads a payload for `rows` rows; refuses one whose length does not match its row bits.
    fn from_payload(payload: Vec<u64>, rows: usize, words_per_row: usize) -> Result<Self, String> {
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
        Ok(SparseRows { rows, words_per_row, payload, blocks, before })
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

/// A bit array of `rows` rows as parts of `rows_per_part` consecutive rows each (the last may
/// be shorter), starting at row `first`: a whole level input (`first` 0, every part), or one
/// task's part of one.
pub struct PartedRows {
    first: u32,
    rows_per_part: u32,
    parts: Vec<Arc<SparseRows>>,
}

impl PartedRows {
    /// Parts `parts` of `cut`, one row set each (decoded by [`PartsDecoder`], or kept by the
    /// worker that computed them: see [`SparseRows::from_rows`]).
    pub fn new(cut: PartCut, parts: Range<u32>, sets: Vec<Arc<SparseRows>>) -> Result<Self, String> {
        if sets.len() != parts.len() {
            return Err(format!("{} row sets for the {} parts {parts:?}", sets.len(), parts.len()));
        }
        for (k, set) in parts.clone().zip(&sets) {
            if set.rows() != cut.range(k).len() {
                return Err(format!("a row set of {} rows for part {k} of {cut:?}", set.rows()));
            }
        }
        Ok(PartedRows {
            first: parts.start * cut.rows_per_part,
            rows_per_part: cut.rows_per_part,
            parts: sets,
        })
    }

    /// The row set of part `k` of the cut, if held.
    pub fn part(&self, k: u32) -> Option<Arc<SparseRows>> {
        let first = self.first / self.rows_per_part;
        self.parts.get(k.checked_sub(first)? as usize).cloned()
    }

    /// The row sets of the parts, in order.
    pub fn into_parts(self) -> Vec<Arc<SparseRows>> {
        self.parts
    }

    /// Part `k` of a whole array (`full`, or its complement), encoded as the coordinator
    /// serves it for a level of depth `depth` (see [`PartCut::key`]).
    #[allow(clippy::too_many_arguments)]
    pub fn encode_part(
        job: u64,
        depth: u32,
        cut: PartCut,
        k: u32,
        full: &[u64],
        words_per_row: usize,
        columns: u32,
        complement: bool,
    ) -> Vec<u8> {
        let rows = cut.range(k);
        let part = &full[rows.start as usize * words_per_row..rows.end as usize * words_per_row];
        let key = cut.key(job, depth, k);
        let tail = tail_mask(columns);
        let entries = part
            .chunks(words_per_row)
            .map(|row| {
                // The entries held: the words' ones, or their complement's within the columns.
                let (&last, rest) = row.split_last().expect("rows have words");
                let (rest, last) = match complement {
                    false => (rest.iter().map(|w| w.count_ones()).sum::<u32>(), last.count_ones()),
                    true => (rest.iter().map(|w| (!w).count_ones()).sum(), (!last & tail).count_ones()),
                };
                (rest + last) as u64
            })
            .sum();
        let counts = RowCounts { entries, ..Default::default() };
        SparseRows::encode_part(key, part, words_per_row, columns, complement, &counts)
    }
}

/// How a row search cuts its rows into tasks, and so its level inputs into parts:
/// `rows_per_part` consecutive rows each (the last part may be shorter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartCut {
    pub rows: u32,
    pub rows_per_part: u32,
}

impl PartCut {
    pub fn new(rows: u32, rows_per_part: u32) -> Self {
        PartCut { rows, rows_per_part: rows_per_part.max(1) }
    }

    pub fn parts(&self) -> u32 {
        self.rows.div_ceil(self.rows_per_part)
    }

    /// The rows of part `k`.
    pub fn range(&self, k: u32) -> Range<u32> {
        let start = (k * self.rows_per_part).min(self.rows);
        start..(start + self.rows_per_part).min(self.rows)
    }

    /// The shard key of part `k` of an input of depth `depth`: that of task `k` of the level
    /// before, whose result the part is (any attempt; the coordinator's own parts have 0).
    pub fn key(&self, job: u64, depth: u32, k: u32) -> ShardKey {
        ShardKey { job, task: k as u64, attempt: 0, level: depth.wrapping_sub(1) }
    }
}

/// Reads parts `parts` of an input of depth `depth` as they arrive, one shard after another.
pub struct PartsDecoder {
    job: u64,
    depth: u32,
    cut: PartCut,
    words_per_row: usize,
    parts: Range<u32>,
    current: Option<shard::WordsDecoder>,
    done: Vec<Arc<SparseRows>>,
    pool: Option<WordPool>,
}

impl PartsDecoder {
    pub fn new(job: u64, depth: u32, cut: PartCut, words_per_row: usize, parts: Range<u32>) -> Self {
        PartsDecoder { job, depth, cut, words_per_row, parts, current: None, done: Vec::new(), pool: None }
    }

    /// Decodes each part into a buffer of `pool`.
    pub fn with_pool(self, pool: WordPool) -> Self {
        PartsDecoder { pool: Some(pool), ..self }
    }

    fn next_part(&self) -> u32 {
        self.parts.start + self.done.len() as u32
    }

    /// Feeds the next bytes of the stream.
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<(), String> {
        while !bytes.is_empty() {
            let k = self.next_part();
            if k >= self.parts.end {
                return Err(format!("more bytes than the {} parts asked for", self.parts.len()));
            }
            let decoder = self.current.get_or_insert_with(|| {
                let rows = self.cut.range(k).len();
                let max = SparseRows::max_result_words(rows, self.words_per_row);
                let decoder =
                    shard::WordsDecoder::new(self.cut.key(self.job, self.depth, k), max).any_attempt();
                match &self.pool {
                    Some(pool) => decoder.with_buffer(pool.take(max)),
                    None => decoder,
                }
            });
            let take = (decoder.wanted() as usize).min(bytes.len());
            decoder.push(&bytes[..take]).map_err(|e| format!("part {k}: {e}"))?;
            bytes = &bytes[take..];
            if decoder.wanted() == 0 {
                self.finish_part()?;
            }
        }
        Ok(())
    }

    fn finish_part(&mut self) -> Result<(), String> {
        let k = self.next_part();
        let decoder = self.current.take().expect("a part under way");
        let payload = decoder.finish().map_err(|e| format!("part {k}: {e}"))?;
        let rows = self.cut.range(k).len();
        self.done.push(Arc::new(SparseRows::from_part_payload(payload, rows, self.words_per_row)?));
        Ok(())
    }

    /// The parts, once every one has arrived whole.
    pub fn finish(self) -> Result<PartedRows, String> {
        if self.current.is_some() || self.done.len() != self.parts.len() {
            return Err(format!("{} of {} parts arrived", self.done.len(), self.parts.len()));
        }
        PartedRows::new(self.cut, self.parts, self.done)
    }
}

impl RowBits for PartedRows {
    #[inline]
    fn row(&self, r: u32) -> Option<&[u64]> {
        let r = r.checked_sub(self.first)?;
        let k = r / self.rows_per_part;
        self.parts.get(k as usize)?.row(r - k * self.rows_per_part)
    }
}

/// What a forward task on a worker knows to be visited, from what it downloads: the frontier it
/// expands (depth d) and, for its own rows, the input of the level before, which is either the
/// frontier of depth d - 1 or a set of unvisited entries that the visited ones only grew out of
/// since (see `bfs::task::Seen`; at depth 1 nothing else is visited).
pub struct KnownVisited<'a> {
    pub frontier: &'a PartedRows,
    pub before: Before<'a>,
}

/// The second input of [`KnownVisited`], for the task's rows.
pub enum Before<'a> {
    Nothing,
    /// The frontier of depth d - 1: its entries are visited.
    Frontier(&'a PartedRows),
    /// Unvisited entries of an earlier moment: everything else is visited.
    Unvisited(&'a PartedRows),
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

/// A worker's copy of the unvisited entries (the parts of the complement of visited).
pub struct Unvisited<'a>(pub &'a PartedRows);

impl VisitedRows for Unvisited<'_> {
    const HOLDS_UNVISITED: bool = true;
    #[inline]
    fn row(&self, r: u32) -> Option<&[u64]> {
        self.0.row(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three parts of a small array (rows of 2 words, 100 columns) as the coordinator encodes
    /// them for depth 5.
    fn parts() -> (PartCut, Vec<u64>, Vec<Vec<u8>>) {
        let cut = PartCut::new(10, 4);
        let full: Vec<u64> =
            (0..20u64).map(|i| if i % 3 == 0 { 0 } else { (i * 0x9e37) & 0xf_ffff_ffff }).collect();
        let shards =
            (0..cut.parts()).map(|k| PartedRows::encode_part(9, 5, cut, k, &full, 2, 100, false)).collect();
        (cut, full, shards)
    }

    fn read(cut: PartCut, bytes: &[u8], parts: Range<u32>) -> Result<PartedRows, String> {
        let mut decoder = PartsDecoder::new(9, 5, cut, 2, parts);
        for piece in bytes.chunks(7) {
            decoder.push(piece)?;
        }
        decoder.finish()
    }

    #[test]
    fn parts_read_back_whole_or_one_by_one() {
        let (cut, full, shards) = parts();
        assert_eq!((cut.parts(), cut.range(2)), (3, 8..10));
        let all = read(cut, &shards.concat(), 0..3).unwrap();
        let one = read(cut, &shards[1], 1..2).unwrap();
        for r in 0..10u32 {
            let expected = &full[r as usize * 2..][..2];
            let held = |p: &PartedRows| p.row(r).map(|w| w.to_vec()).unwrap_or(vec![0, 0]);
            assert_eq!(held(&all), expected, "row {r}");
            if (4..8).contains(&r) {
                assert_eq!(held(&one), expected, "row {r}");
            } else {
                assert!(one.row(r).is_none(), "row {r} is not in part 1");
            }
        }
    }

    #[test]
    fn a_worker_s_own_rows_stand_for_the_parts_it_would_download() {
        let (cut, full, shards) = parts();
        let all = read(cut, &shards.concat(), 0..3).unwrap();
        let decoded = read(cut, &shards.concat(), 0..3).unwrap().into_parts();
        // Part 1 as its worker keeps it, parts 0 and 2 as downloaded.
        let own = Arc::new(SparseRows::from_rows(&full[8..16], 2, Vec::new()));
        assert_eq!(own.rows(), 4);
        let mixed = PartedRows::new(cut, 0..3, vec![decoded[0].clone(), own, decoded[2].clone()]).unwrap();
        for r in 0..10u32 {
            assert_eq!(mixed.row(r), all.row(r), "row {r}");
        }
        // A row set of the wrong size, or a missing one, is refused.
        let short = Arc::new(SparseRows::from_rows(&full[8..14], 2, Vec::new()));
        assert!(PartedRows::new(cut, 0..3, vec![decoded[0].clone(), short, decoded[2].clone()]).is_err());
        assert!(PartedRows::new(cut, 0..3, decoded[..2].to_vec()).is_err());
    }

    #[test]
    fn missing_reordered_extra_or_damaged_parts_are_refused() {
        let (cut, _, shards) = parts();
        assert!(read(cut, &shards[..2].concat(), 0..3).err().unwrap().contains("2 of 3 parts"));
        let swapped = [shards[1].clone(), shards[0].clone(), shards[2].clone()].concat();
        assert!(read(cut, &swapped, 0..3).is_err());
        let extra = [shards.concat(), shards[2].clone()].concat();
        assert!(read(cut, &extra, 0..3).err().unwrap().contains("more bytes"));
        let mut damaged = shards.concat();
        let last = damaged.len() - 3;
        damaged[last] ^= 1;
        assert!(read(cut, &damaged, 0..3).is_err());
        // Another depth's parts are another input.
        let other: Vec<Vec<u8>> = (0..cut.parts())
            .map(|k| PartedRows::encode_part(9, 6, cut, k, &[0; 20], 2, 100, false))
            .collect();
        assert!(read(cut, &other.concat(), 0..3).is_err());
    }
}
