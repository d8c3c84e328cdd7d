//! The work of one level on a range of rows, as functions of exactly the data they read: the
//! engine in `engine.rs` cuts every level into such ranges, and the workers of a distributed
//! search run the same push and pull on the rows they own (`owned.rs`).
//!
//! A forward task owns a range of target rows and gathers into them the images of the frontier
//! rows that land there (see [`Sources`]): each task writes only its own rows, so no atomics,
//! and a target row stays in cache while its sources are mapped into it. A backward task asks,
//! for every unvisited entry of its rows, whether a neighbour is visited: for an entry at
//! distance at least d, whose neighbours are at distance at least d - 1, a visited neighbour is
//! exactly a neighbour in the frontier of depth d - 1. So a pull reads only the visited bits.
//!
//! A task finishes its rows: a forward one removes the visited images (see [`Seen`]) and closes
//! its rows under their stabilizers, and both count what they found ([`Counting`]), so the
//! process that owns the level only ORs rows in and sums counters.

use crate::coord::ColumnMapper;
use crate::cube::Move;
use crate::space::{count_positions, count_rows, RowCounts, RowIndex};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which counts a level reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counting {
    /// Every column: entries, positions, classes and self-inverse classes (an enumeration).
    Classes,
    /// Entries and positions only (a table build, which needs distances, not classes).
    Positions,
}

impl Counting {
    /// Counts the entries of `rows` (`bits` holds just those rows).
    pub fn count<I: RowIndex>(self, space: &I, rows: Range<u32>, bits: &[u64]) -> RowCounts {
        match self {
            Counting::Classes => count_rows(space, rows, bits),
            Counting::Positions => count_positions(space, rows, bits),
        }
    }
}

/// The most rows of one parallel work unit: large enough to amortize scheduling, small enough
/// to balance and to keep a unit's target rows in cache.
pub const ROW_CHUNK: usize = 64;

/// Runs `task` on the rows `first..` held in `out` (rows of `words` words) in parallel, in
/// units of at most [`ROW_CHUNK`] rows and at least four per thread (a worker's task may hold
/// fewer rows than one unit of the whole level), and returns the sum of their counts (integers:
/// the same for any cut and thread count). `done` counts finished rows.
pub fn by_row_chunks(
    out: &mut [u64],
    words: usize,
    first: u32,
    done: Option<&AtomicU64>,
    task: impl Fn(Range<u32>, &mut [u64]) -> RowCounts + Sync,
) -> RowCounts {
    use rayon::prelude::*;
    let rows = out.len() / words.max(1);
    let unit = (rows / (4 * rayon::current_num_threads())).clamp(1, ROW_CHUNK);
    out.par_chunks_mut(words * unit)
        .enumerate()
        .map(|(k, out)| {
            let n = out.len() / words;
            let start = first + (k * unit) as u32;
            let counts = task(start..start + n as u32, out);
            if let Some(done) = done {
                done.fetch_add(n as u64, Ordering::Relaxed);
            }
            counts
        })
        .reduce(RowCounts::default, |a, b| a + b)
}

/// What a forward task knows to be visited in its target rows (the engine's visited array).
pub trait Seen: Sync {
    /// Removes from `row` (images that landed in row `r`) the entries known to be visited.
    fn remove(&self, r: u32, row: &mut [u64]);
}

/// A forward task's work on `rows`: gathers the images of the frontier that land there, removes
/// the visited ones, closes the rows under their stabilizers (a push with one symmetry per row
/// misses the stabilizer images; the visited set is closed, so masking first changes nothing)
/// and counts them. `out` holds those rows, zeroed; it ends holding the level's new entries.
#[allow(clippy::too_many_arguments)]
pub fn forward_rows<I: RowIndex>(
    space: &I,
    moves: &[Move],
    rows: Range<u32>,
    sources: &Sources,
    frontier: &impl PushSource,
    seen: &impl Seen,
    counting: Counting,
    out: &mut [u64],
) -> RowCounts {
    let words = (space.column_count() as usize).div_ceil(64);
    push_into_rows(space, moves, rows.clone(), sources, frontier, out);
    for (r, row) in rows.clone().zip(out.chunks_mut(words)) {
        if row.iter().any(|&w| w != 0) {
            seen.remove(r, row);
            if row.iter().any(|&w| w != 0) {
                space.close_row(r, row);
            }
        }
    }
    counting.count(space, rows, out)
}

/// A backward task's work on `rows`: the new entries ([`pull_rows`]), counted.
pub fn backward_rows<I: RowIndex, V: VisitedRows>(
    space: &I,
    moves: &[Move],
    rows: Range<u32>,
    visited: &V,
    counting: Counting,
    out: &mut [u64],
) -> RowCounts {
    pull_rows(space, moves, rows.clone(), visited, out);
    counting.count(space, rows, out)
}

/// Rows of a bit array by row number, as a task reads them: the engine's full array, or a
/// worker's sparse copy.
pub trait RowBits: Sync {
    /// The row's words, or `None` when the row is known to have no entry.
    fn row(&self, r: u32) -> Option<&[u64]>;
}

/// A frontier as a push reads it: which rows hold entries, and their images under a map.
/// Every [`RowBits`] is one; the engine's frontier may also be column lists ([`ColumnLists`]).
///
/// [`ColumnLists`]: super::lists::ColumnLists
pub trait PushSource: Sync {
    /// Whether row `r` holds entries.
    fn holds(&self, r: u32) -> bool;
    /// ORs into `out` the image under `map` of every entry of row `r`.
    fn or_images_of<M: ColumnMapper>(&self, r: u32, map: &M, out: &mut [u64]);
}

impl<T: RowBits> PushSource for T {
    #[inline]
    fn holds(&self, r: u32) -> bool {
        self.row(r).is_some()
    }

    #[inline]
    fn or_images_of<M: ColumnMapper>(&self, r: u32, map: &M, out: &mut [u64]) {
        if let Some(bits) = self.row(r) {
            map.or_images(bits, out);
        }
    }
}

/// The visited entries, as a pull reads them.
pub trait VisitedRows: Sync {
    /// Whether rows hold the unvisited entries (a worker's sparse copy) rather than the visited
    /// ones (the engine's array).
    const HOLDS_UNVISITED: bool;
    /// The row's words, or `None` when every entry of the row is visited.
    fn row(&self, r: u32) -> Option<&[u64]>;
}

/// The most moves a pull looks through (the face turns).
const MAX_MOVES: usize = Move::COUNT;

/// The new entries of `rows`: unvisited ones with a visited neighbour (see the module doc).
/// Writes `out` (just those rows).
fn pull_rows<I: RowIndex, V: VisitedRows>(
    space: &I,
    moves: &[Move],
    rows: Range<u32>,
    visited: &V,
    out: &mut [u64],
) {
    assert!(moves.len() <= MAX_MOVES, "a pull looks through at most {MAX_MOVES} moves");
    let words = (space.column_count() as usize).div_ceil(64);
    let tail = tail_mask(space.column_count());
    let mut left = vec![0u64; words];
    for (r, out) in rows.zip(out.chunks_mut(words)) {
        let Some(own) = visited.row(r) else { continue };
        // The row's unvisited entries, word by word.
        let open = |w: usize| {
            let bits = if V::HOLDS_UNVISITED { own[w] } else { !own[w] };
            if w + 1 == words {
                bits & tail
            } else {
                bits
            }
        };
        if (0..words).all(|w| open(w) == 0) {
            continue;
        }
        let mut neighbours: [Option<(&[u64], I::Mapper<'_>)>; MAX_MOVES] = std::array::from_fn(|_| None);
        let mut all_visited = false;
        for (slot, &m) in neighbours.iter_mut().zip(moves) {
            let (target, map) = space.transition(r, m);
            match visited.row(target) {
                Some(bits) => *slot = Some((bits, map)),
                None => all_visited = true,
            }
        }
        if all_visited {
            // A neighbour row with nothing unvisited: every open entry has a visited neighbour.
            for (w, o) in out.iter_mut().enumerate() {
                *o = open(w);
            }
            continue;
        }
        for (w, l) in left.iter_mut().enumerate() {
            *l = open(w);
        }
        reach(&mut left, &neighbours[..moves.len()], V::HOLDS_UNVISITED, out);
    }
}

/// A row's pull: moves from `open` (its entries not reached yet) to `out` those with a
/// neighbour set in the neighbour's row (clear, where `unset`: rows of unvisited entries), by
/// whole groups where the maps can ([`ColumnMapper::pull_row`]), else one entry at a time.
pub(crate) fn reach<M: ColumnMapper>(
    open: &mut [u64],
    neighbours: &[Option<(&[u64], M)>],
    unset: bool,
    out: &mut [u64],
) {
    if M::pull_row(neighbours, unset, open, out) {
        return;
    }
    for (row, map) in neighbours.iter().flatten() {
        crate::coord::pull_entries(map, row, unset, open, out);
    }
}

/// The mask of the columns in a row's last word.
pub(crate) fn tail_mask(columns: u32) -> u64 {
    match columns % 64 {
        0 => u64::MAX,
        k => (1u64 << k) - 1,
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
        Self::build_from(space, moves, |_| true)
    }

    /// The sources among the rows `from` accepts only: what a worker that pushes its own rows'
    /// frontier reads (`owned.rs`), a share of the whole.
    pub fn build_from<I: RowIndex>(space: &I, moves: &[Move], from: impl Fn(u32) -> bool + Sync) -> Self {
        use rayon::prelude::*;
        let rows = space.row_count() as usize;
        let sources: Vec<u32> = (0..rows as u32).into_par_iter().filter(|&r| from(r)).collect();
        let targets: Vec<u32> = sources
            .par_iter()
            .flat_map_iter(|&r| moves.iter().map(move |&m| space.transition(r, m).0))
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
            pairs[*slot as usize] = (sources[k / moves.len()], (k % moves.len()) as u8);
            *slot += 1;
        }
        Sources { offsets, pairs }
    }

    /// Bytes one source row takes under `moves` moves (a pair per move).
    pub fn bytes_per_row(moves: usize) -> u64 {
        (moves * std::mem::size_of::<(u32, u8)>()) as u64
    }

    /// The (source row, index into the move list) pairs that land in row `target`.
    pub fn of(&self, target: u32) -> &[(u32, u8)] {
        &self.pairs[self.offsets[target as usize] as usize..self.offsets[target as usize + 1] as usize]
    }

    pub fn memory_bytes(&self) -> u64 {
        (self.offsets.len() * 8 + self.pairs.len() * std::mem::size_of::<(u32, u8)>()) as u64
    }
}

/// Which rows of a full array satisfy `occupied`, one bit per row.
pub(crate) fn row_bits(
    full: &[u64],
    words_per_row: usize,
    occupied: impl Fn(usize, &[u64]) -> bool + Sync,
) -> Vec<u64> {
    use rayon::prelude::*;
    let rows = full.len() / words_per_row.max(1);
    (0..rows.div_ceil(64))
        .into_par_iter()
        .map(|k| {
            (k * 64..(k * 64 + 64).min(rows))
                .filter(|&r| occupied(r, &full[r * words_per_row..][..words_per_row]))
                .fold(0u64, |bits, r| bits | 1 << (r % 64))
        })
        .collect()
}

/// A full array (the engine's frontier) with a bit per row telling which rows have entries, so
/// a forward task skips the empty sources of a sparse level without reading them.
pub struct FullRows<'a> {
    first: u32,
    words: &'a [u64],
    words_per_row: usize,
    occupied: Vec<u64>,
}

impl<'a> FullRows<'a> {
    pub fn new(words: &'a [u64], words_per_row: usize) -> Self {
        Self::at(0, words, words_per_row)
    }

    /// The rows `first..` held in `words` (a part of an array).
    pub fn at(first: u32, words: &'a [u64], words_per_row: usize) -> Self {
        let occupied = row_bits(words, words_per_row, |_, row| row.iter().any(|&w| w != 0));
        FullRows { first, words, words_per_row, occupied }
    }
}

impl RowBits for FullRows<'_> {
    #[inline]
    fn row(&self, r: u32) -> Option<&[u64]> {
        let i = r.checked_sub(self.first)? as usize;
        (self.occupied.get(i / 64)? >> (i % 64) & 1 == 1)
            .then(|| &self.words[i * self.words_per_row..][..self.words_per_row])
    }
}

/// The engine's visited array, as a pull reads it.
pub struct Visited<'a> {
    pub words: &'a [u64],
    pub words_per_row: usize,
}

impl VisitedRows for Visited<'_> {
    const HOLDS_UNVISITED: bool = false;
    #[inline]
    fn row(&self, r: u32) -> Option<&[u64]> {
        Some(&self.words[r as usize * self.words_per_row..][..self.words_per_row])
    }
}

impl Seen for Visited<'_> {
    fn remove(&self, r: u32, row: &mut [u64]) {
        for (o, v) in row.iter_mut().zip(&self.words[r as usize * self.words_per_row..]) {
            *o &= !v;
        }
    }
}

/// A forward step organised by target: sets in `out` (just the rows `targets`) every image of a
/// frontier entry that lands in those rows (visited entries included). Tasks owning disjoint
/// target rows need no atomics and return nothing twice.
pub(crate) fn push_into_rows<I: RowIndex>(
    space: &I,
    moves: &[Move],
    targets: Range<u32>,
    sources: &Sources,
    frontier: &impl PushSource,
    out: &mut [u64],
) -> bool {
    let words = (space.column_count() as usize).div_ceil(64);
    let mut any = false;
    for (t, row) in targets.zip(out.chunks_mut(words)) {
        for &(r, mi) in sources.of(t) {
            if !frontier.holds(r) {
                continue;
            }
            let (target, map) = space.transition(r, moves[mi as usize]);
            debug_assert_eq!(target, t);
            frontier.or_images_of(r, &map, row);
            any = true;
        }
    }
    any
}
