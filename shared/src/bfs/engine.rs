//! The level-synchronous breadth-first search over a [`RowSpace`].
//!
//! State: three bitmaps of one bit per entry (visited, frontier, next), each row padded to whole
//! 64-bit words. A level either pushes the frontier forward (for every frontier entry and move,
//! set the image's bit in the target row; atomic OR, so rows are expanded in parallel and the
//! result is a set union, independent of scheduling) or, once fewer entries are unvisited than
//! in the frontier, pulls (for every unvisited entry, is any neighbour in the frontier? Each row
//! writes only its own bits). Pushing with one chosen symmetry per target row misses the
//! stabilizer images in self-symmetric rows, so rows are closed under their stabilizer after a
//! push; a pull needs no closure because the frontier already is closed.
//!
//! Cost model: a push touches frontier x moves entries, a pull at most unvisited x moves; the
//! per-entry work is a column map (a few table lookups) and one bit test.

use super::rows::RowSpace;
use crate::coord::Part;
use crate::cube::Pieces;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Counts of one depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct DepthCounts {
    pub depth: u32,
    /// Positions at this distance.
    pub positions: u64,
    /// Classes under the 48 symmetries M.
    pub classes_sym: u64,
    /// Classes under M and inversion.
    pub classes_sym_inv: u64,
}

/// How a level was computed, for progress display and benchmarks.
#[derive(Clone, Copy, Debug)]
pub struct LevelReport {
    pub counts: DepthCounts,
    /// Entries (row, column) set at this depth.
    pub entries: u64,
    pub direction: Direction,
    pub seconds: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Start,
    Forward,
    Backward,
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Direction::Start => "start",
            Direction::Forward => "forward",
            Direction::Backward => "backward",
        })
    }
}

/// Runs the search from the solved position until no new entry appears or `max_depth` is done,
/// calling `on_level` after each depth. Returns the counts of every depth reached.
pub fn run<const N: usize, const O: u8>(
    space: &RowSpace<N, O>,
    max_depth: Option<u32>,
    mut on_level: impl FnMut(&LevelReport),
) -> Vec<DepthCounts>
where
    Pieces<N, O>: Part,
{
    let rows = space.row_count() as usize;
    let words = (space.column_count() as usize).div_ceil(64);
    let total_entries = rows as u64 * space.column_count() as u64;
    let mut visited = vec![0u64; rows * words];
    let mut frontier = vec![0u64; rows * words];

    let start = Instant::now();
    let (row0, col0) = space.locate(&Pieces::<N, O>::IDENTITY);
    set_bit(&mut frontier[row0 as usize * words..][..words], col0);
    close_under_stabilizers(space, &mut frontier, words);
    let mut out = Vec::new();
    let mut report = level_counts(space, &frontier, words, 0);
    report.seconds = start.elapsed().as_secs_f64();
    on_level(&report);
    or_into(&mut visited, &frontier);
    let mut visited_entries = report.entries;
    out.push(report.counts);

    let mut depth = 0;
    while report.entries > 0 && max_depth.is_none_or(|m| depth < m) {
        let start = Instant::now();
        depth += 1;
        let unvisited = total_entries - visited_entries;
        let (mut next, direction) = if unvisited < report.entries {
            (pull(space, &visited, &frontier, words), Direction::Backward)
        } else {
            let mut next = push(space, &visited, &frontier, words);
            close_under_stabilizers(space, &mut next, words);
            (next, Direction::Forward)
        };
        debug_assert!(next.iter().zip(&visited).all(|(n, v)| n & v == 0));
        or_into(&mut visited, &next);
        std::mem::swap(&mut frontier, &mut next);
        report = level_counts(space, &frontier, words, depth);
        report.direction = direction;
        report.seconds = start.elapsed().as_secs_f64();
        visited_entries += report.entries;
        if report.entries > 0 {
            on_level(&report);
            out.push(report.counts);
        }
    }
    out
}

#[inline]
fn set_bit(row: &mut [u64], column: u32) {
    row[column as usize / 64] |= 1 << (column % 64);
}

#[inline]
fn test_bit(row: &[u64], column: u32) -> bool {
    row[column as usize / 64] >> (column % 64) & 1 == 1
}

fn or_into(dst: &mut [u64], src: &[u64]) {
    dst.par_iter_mut().zip(src.par_iter()).for_each(|(d, s)| *d |= s);
}

/// Calls `f` for every set bit of a row.
#[inline]
fn for_each_bit(row: &[u64], mut f: impl FnMut(u32)) {
    for (w, &word) in row.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            f(w as u32 * 64 + bits.trailing_zeros());
            bits &= bits - 1;
        }
    }
}

fn push<const N: usize, const O: u8>(
    space: &RowSpace<N, O>,
    visited: &[u64],
    frontier: &[u64],
    words: usize,
) -> Vec<u64>
where
    Pieces<N, O>: Part,
{
    let next: Vec<AtomicU64> = (0..visited.len()).map(|_| AtomicU64::new(0)).collect();
    frontier.par_chunks(words).enumerate().for_each(|(r, bits)| {
        if bits.iter().all(|&w| w == 0) {
            return;
        }
        for mi in 0..space.moves().len() {
            let t = space.transition(r as u32, mi);
            let base = t.target as usize * words;
            let seen = &visited[base..base + words];
            for_each_bit(bits, |c| {
                let c2 = t.map.apply(c);
                if !test_bit(seen, c2) {
                    next[base + c2 as usize / 64].fetch_or(1 << (c2 % 64), Ordering::Relaxed);
                }
            });
        }
    });
    next.into_iter().map(AtomicU64::into_inner).collect()
}

fn pull<const N: usize, const O: u8>(
    space: &RowSpace<N, O>,
    visited: &[u64],
    frontier: &[u64],
    words: usize,
) -> Vec<u64>
where
    Pieces<N, O>: Part,
{
    let columns = space.column_count();
    let mut next = vec![0u64; visited.len()];
    next.par_chunks_mut(words).enumerate().for_each(|(r, out)| {
        let seen = &visited[r * words..][..words];
        for c in 0..columns {
            if test_bit(seen, c) {
                continue;
            }
            let reached = (0..space.moves().len()).any(|mi| {
                let t = space.transition(r as u32, mi);
                test_bit(&frontier[t.target as usize * words..][..words], t.map.apply(c))
            });
            if reached {
                set_bit(out, c);
            }
        }
    });
    next
}

fn close_under_stabilizers<const N: usize, const O: u8>(
    space: &RowSpace<N, O>,
    bits: &mut [u64],
    words: usize,
) where
    Pieces<N, O>: Part,
{
    bits.par_chunks_mut(words).enumerate().for_each(|(r, row)| {
        let maps = space.stabilizer_maps(r as u32);
        if maps.is_empty() || row.iter().all(|&w| w == 0) {
            return;
        }
        let original = row.to_vec();
        for_each_bit(&original, |c| {
            for m in maps {
                set_bit(row, m.apply(c));
            }
        });
    });
}

/// Counts the entries of one depth: positions weigh each entry by its row's class size;
/// classes under M count canonical columns; classes under M and inversion are
/// (classes + self-inverse classes) / 2.
fn level_counts<const N: usize, const O: u8>(
    space: &RowSpace<N, O>,
    bits: &[u64],
    words: usize,
    depth: u32,
) -> LevelReport
where
    Pieces<N, O>: Part,
{
    let (entries, positions, classes, self_inverse) = bits
        .par_chunks(words)
        .enumerate()
        .map(|(r, row)| {
            let r = r as u32;
            let n: u64 = row.iter().map(|w| w.count_ones() as u64).sum();
            if n == 0 {
                return (0, 0, 0, 0);
            }
            let mut classes = 0u64;
            let mut self_inverse = 0u64;
            for_each_bit(row, |c| {
                if space.canonical_column(r, c) == c {
                    classes += 1;
                    self_inverse += space.is_self_inverse_class(r, c) as u64;
                }
            });
            (n, n * space.class_size(r) as u64, classes, self_inverse)
        })
        .reduce(|| (0, 0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3));
    assert_eq!((classes + self_inverse) % 2, 0, "classes under inversion must pair up");
    LevelReport {
        counts: DepthCounts {
            depth,
            positions,
            classes_sym: classes,
            classes_sym_inv: (classes + self_inverse) / 2,
        },
        entries,
        direction: Direction::Start,
        seconds: 0.0,
    }
}
