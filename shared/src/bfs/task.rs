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
/// the frontier (`frontier` holds every row). Writes `out` (just those rows).
pub fn pull_rows<I: RowIndex>(
    space: &I,
    moves: &[Move],
    rows: Range<u32>,
    visited: &[u64],
    frontier: &[u64],
    out: &mut [u64],
) {
    let words = (space.column_count() as usize).div_ceil(64);
    let columns = space.column_count();
    for ((r, seen), out) in rows.zip(visited.chunks(words)).zip(out.chunks_mut(words)) {
        if seen.iter().all(|&w| w == u64::MAX) {
            continue;
        }
        let neighbours: Vec<_> = moves.iter().map(|&m| space.transition(r, m)).collect();
        for c in 0..columns {
            if test_bit(seen, c) {
                continue;
            }
            let reached = neighbours
                .iter()
                .any(|(target, map)| test_bit(&frontier[*target as usize * words..][..words], map.apply(c)));
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

/// A level's whole frontier as a worker holds it: the words, and one bit per row telling whether
/// the row has any entry, so a forward task skips empty sources without reading them (on sparse
/// levels most sources are empty, and each row is a source of 18 others).
pub struct Frontier {
    pub words: Vec<u64>,
    occupied: Vec<u64>,
}

impl Frontier {
    pub fn new(words: Vec<u64>, words_per_row: usize) -> Self {
        use rayon::prelude::*;
        let rows = words.len() / words_per_row.max(1);
        let occupied = (0..rows.div_ceil(64))
            .into_par_iter()
            .map(|k| {
                let mut bits = 0u64;
                for r in k * 64..(k * 64 + 64).min(rows) {
                    let row = &words[r * words_per_row..][..words_per_row];
                    bits |= (row.iter().any(|&w| w != 0) as u64) << (r % 64);
                }
                bits
            })
            .collect();
        Frontier { words, occupied }
    }

    #[inline]
    pub fn has_entries(&self, row: u32) -> bool {
        test_bit(&self.occupied, row)
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
    frontier: &Frontier,
    out: &mut [u64],
) {
    let words = (space.column_count() as usize).div_ceil(64);
    for (t, row) in targets.zip(out.chunks_mut(words)) {
        for &(r, mi) in sources.of(t) {
            if !frontier.has_entries(r) {
                continue;
            }
            let bits = &frontier.words[r as usize * words..][..words];
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
