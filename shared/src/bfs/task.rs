//! The work of one level on a range of rows, as functions of exactly the data they read, so the
//! same code runs on rayon threads inside the coordinator and (with downloaded inputs) in a
//! remote worker. The engine in `engine.rs` cuts every level into such ranges.

use super::index::{for_each_bit, set_bit, test_bit, ColumnMapper, RowCounts, RowIndex};
use crate::cube::Move;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where a push puts the entries it reaches.
pub trait PushSink: Sync {
    fn insert(&self, row: u32, column: u32);
}

/// The in-process sink: atomic OR into the shared `next` array, skipping entries already
/// visited (read-only during a level), so most pushes of a dense level cost one read.
pub struct SharedNext<'a> {
    pub next: &'a [AtomicU64],
    pub visited: &'a [u64],
    pub words_per_row: usize,
}

impl PushSink for SharedNext<'_> {
    #[inline]
    fn insert(&self, row: u32, column: u32) {
        let base = row as usize * self.words_per_row;
        if !test_bit(&self.visited[base..base + self.words_per_row], column) {
            self.next[base + column as usize / 64].fetch_or(1 << (column % 64), Ordering::Relaxed);
        }
    }
}

/// Pushes the frontier entries of `rows` (`frontier` holds just those rows) through `moves`.
pub fn push_rows<I: RowIndex>(
    space: &I,
    moves: &[Move],
    rows: Range<u32>,
    frontier: &[u64],
    sink: &impl PushSink,
) {
    let words = (space.column_count() as usize).div_ceil(64);
    for (r, bits) in rows.zip(frontier.chunks(words)) {
        if bits.iter().all(|&w| w == 0) {
            continue;
        }
        for &m in moves {
            let (target, map) = space.transition(r, m);
            for_each_bit(bits, |c| sink.insert(target, map.apply(c)));
        }
    }
}

/// The new entries of `rows`: unvisited (`visited` holds just those rows) with a neighbour in
/// the frontier. Writes `out` (just those rows).
pub fn pull_rows<I: RowIndex>(
    space: &I,
    moves: &[Move],
    rows: Range<u32>,
    visited: &[u64],
    frontier: &impl FrontierRows,
    out: &mut [u64],
) {
    let words = (space.column_count() as usize).div_ceil(64);
    let columns = space.column_count();
    for ((r, seen), out) in rows.zip(visited.chunks(words)).zip(out.chunks_mut(words)) {
        if seen.iter().all(|&w| w == u64::MAX) {
            continue;
        }
        let neighbours: Vec<_> = moves
            .iter()
            .filter_map(|&m| {
                let (target, map) = space.transition(r, m);
                frontier.row(target).map(|bits| (bits, map))
            })
            .collect();
        if neighbours.is_empty() {
            continue;
        }
        for c in 0..columns {
            if test_bit(seen, c) {
                continue;
            }
            let reached = neighbours.iter().any(|(bits, map)| test_bit(bits, map.apply(c)));
            if reached {
                set_bit(out, c);
            }
        }
    }
}

/// For every target row, the (source row, move) pairs whose transition lands in it: what a
/// forward task that owns a range of target rows reads. Compressed rows: `pairs[offsets[t]..
/// offsets[t + 1]]` are the sources of row t, in increasing (source, move) order.
pub struct Sources {
    offsets: Vec<u64>,
    pairs: Vec<(u32, u8)>,
}

impl Sources {
    pub fn build<I: RowIndex>(space: &I, moves: &[Move]) -> Self {
        use rayon::prelude::*;
        let rows = space.row_count() as usize;
        let targets: Vec<u32> = (0..rows as u32)
            .into_par_iter()
            .flat_map_iter(|r| moves.iter().map(move |&m| space.transition(r, m).0))
            .collect();
        let mut offsets = vec![0u64; rows + 1];
        for &t in &targets {
            offsets[t as usize + 1] += 1;
        }
        for t in 0..rows {
            offsets[t + 1] += offsets[t];
        }
        let mut fill = offsets.clone();
        let mut pairs = vec![(0u32, 0u8); targets.len()];
        for (k, &t) in targets.iter().enumerate() {
            let slot = &mut fill[t as usize];
            pairs[*slot as usize] = ((k / moves.len()) as u32, (k % moves.len()) as u8);
            *slot += 1;
        }
        Sources { offsets, pairs }
    }

    /// The (source row, index into the move list) pairs that land in row `target`.
    pub fn of(&self, target: u32) -> &[(u32, u8)] {
        &self.pairs[self.offsets[target as usize] as usize..self.offsets[target as usize + 1] as usize]
    }

    pub fn memory_bytes(&self) -> u64 {
        (self.offsets.len() * 8 + self.pairs.len() * std::mem::size_of::<(u32, u8)>()) as u64
    }
}

/// Rows of a frontier by row number: the engine's full array, or a worker's sparse copy.
pub trait FrontierRows: Sync {
    /// The row's words, or `None` when the row is known to have no entry.
    fn row(&self, r: u32) -> Option<&[u64]>;
}

/// A full frontier array (every row present, empty or not).
pub struct FullRows<'a> {
    pub words: &'a [u64],
    pub words_per_row: usize,
}

impl FrontierRows for FullRows<'_> {
    #[inline]
    fn row(&self, r: u32) -> Option<&[u64]> {
        Some(&self.words[r as usize * self.words_per_row..][..self.words_per_row])
    }
}

/// A level's frontier as it travels to workers and as they hold it: one bit per row telling
/// whether the row has entries, then the words of those rows only. Early and late levels touch
/// few rows, so neither side pays for the whole array there.
pub struct Frontier {
    words_per_row: usize,
    /// The payload: `blocks` words of row bits, then the occupied rows' words in row order.
    payload: Vec<u64>,
    blocks: usize,
    /// Occupied rows before each block of 64 rows.
    before: Vec<u32>,
}

impl Frontier {
    /// The payload of a full frontier, as slices to be written one after the other.
    pub fn payload_parts(full: &[u64], words_per_row: usize) -> (Vec<u64>, Vec<&[u64]>) {
        use rayon::prelude::*;
        let rows = full.len() / words_per_row.max(1);
        let occupied: Vec<u64> = (0..rows.div_ceil(64))
            .into_par_iter()
            .map(|k| {
                let mut bits = 0u64;
                for r in k * 64..(k * 64 + 64).min(rows) {
                    let row = &full[r * words_per_row..][..words_per_row];
                    bits |= (row.iter().any(|&w| w != 0) as u64) << (r % 64);
                }
                bits
            })
            .collect();
        let mut parts = Vec::new();
        for (k, &bits) in occupied.iter().enumerate() {
            let mut b = bits;
            while b != 0 {
                let r = k * 64 + b.trailing_zeros() as usize;
                b &= b - 1;
                parts.push(&full[r * words_per_row..][..words_per_row]);
            }
        }
        (occupied, parts)
    }

    /// Reads a payload for `rows` rows; refuses one whose length does not match its row bits.
    pub fn from_payload(payload: Vec<u64>, rows: usize, words_per_row: usize) -> Result<Self, String> {
        let blocks = rows.div_ceil(64);
        if payload.len() < blocks {
            return Err(format!("frontier payload of {} words is shorter than its row bits", payload.len()));
        }
        let tail = rows % 64;
        if tail != 0 && payload[blocks - 1] >> tail != 0 {
            return Err("frontier payload marks rows past the end".into());
        }
        let mut before = Vec::with_capacity(blocks);
        let mut n = 0u32;
        for &bits in &payload[..blocks] {
            before.push(n);
            n += bits.count_ones();
        }
        if payload.len() != blocks + n as usize * words_per_row {
            return Err(format!(
                "frontier payload of {} words for {n} occupied rows of {words_per_row} words",
                payload.len()
            ));
        }
        Ok(Frontier { words_per_row, payload, blocks, before })
    }
}

impl FrontierRows for Frontier {
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

/// A forward step organised by target: sets in `out` (just the rows `targets`) every image of a
/// frontier entry (`frontier` holds every row) that lands in those rows. The union is the same
/// as [`push_rows`] over all rows restricted to `targets`, so tasks owning disjoint target rows
/// need no atomics and return nothing twice.
pub fn push_into_rows<I: RowIndex>(
    space: &I,
    moves: &[Move],
    targets: Range<u32>,
    sources: &Sources,
    frontier: &impl FrontierRows,
    out: &mut [u64],
) {
    let words = (space.column_count() as usize).div_ceil(64);
    for (t, row) in targets.zip(out.chunks_mut(words)) {
        for &(r, mi) in sources.of(t) {
            let Some(bits) = frontier.row(r) else { continue };
            let (target, map) = space.transition(r, moves[mi as usize]);
            debug_assert_eq!(target, t);
            for_each_bit(bits, |c| set_bit(row, map.apply(c)));
        }
    }
}

/// Closes every row of `rows` (`bits` holds just those rows) under its stabilizer.
pub fn close_rows<I: RowIndex>(space: &I, rows: Range<u32>, bits: &mut [u64]) {
    let words = (space.column_count() as usize).div_ceil(64);
    for (r, row) in rows.zip(bits.chunks_mut(words)) {
        space.close_row(r, row);
    }
}

/// Counts the entries of `rows` (`bits` holds just those rows).
pub fn count_rows<I: RowIndex>(space: &I, rows: Range<u32>, bits: &[u64]) -> RowCounts {
    let words = (space.column_count() as usize).div_ceil(64);
    rows.zip(bits.chunks(words))
        .filter(|(_, row)| row.iter().any(|&w| w != 0))
        .map(|(r, row)| space.count_row(r, row))
        .fold(RowCounts::default(), |a, b| a + b)
}
