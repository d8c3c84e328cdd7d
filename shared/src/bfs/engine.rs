//! The level-synchronous breadth-first search over a [`RowSpace`].
//!
//! State: three bit arrays of one bit per entry (visited, frontier, next), each row padded to
//! whole 64-bit words, in memory maps (see [`BitStore`]). In memory (no state directory) the
//! level is made in the frontier's own array wherever the frontier need not stay as bits: a
//! pull never reads it, and a push reads it as column lists while it is sparse
//! ([`ColumnLists`]), so the third array is written only by a push from a dense frontier.
//!
//! A level either pushes the frontier forward (every target row gathers the images of the
//! frontier rows that land in it, so rows fill in parallel without atomics and the result is a
//! set union, independent of scheduling) or, once fewer entries are unvisited than in the
//! frontier, pulls (for every unvisited entry: is a neighbour visited? That is the same as "in
//! the frontier", see `task.rs`; each row writes only its own bits). Pushing with one chosen
//! symmetry per target row misses the stabilizer images in self-symmetric rows, so rows are
//! closed under their stabilizer after a push; a pull needs no closure, as the visited set
//! already is closed. The task that owns a range of rows
//! does all of that and counts them, so the engine only ORs levels into `visited` and sums.
//!
//! Cost model: a push touches frontier x moves entries, a pull at most unvisited x moves; per
//! entry the column map is three table lookups and two adds (see [`Contributions`]), then one bit
//! test or set in a row that stays in cache while one source row is mapped through one move.

use super::bitmap::BitStore;
use super::levels::{run_levels, LevelMaker, Standing};
use super::lists::ColumnLists;
use super::report::{BfsError, Direction, JournalError, LevelReport, Progress};
use super::task::{backward_rows, by_row_chunks, forward_rows, Counting, FullRows, Sources, Visited};
use crate::cube::Move;
use crate::report::DepthCounts;
use crate::space::{close_rows, set_bit, RowCounts, RowIndex};
use rayon::prelude::*;
use std::path::PathBuf;

use std::sync::OnceLock;

/// Options of [`run`].
#[derive(Default)]
pub struct BfsOptions<'a> {
    /// Stop after this depth.
    pub max_depth: Option<u32>,
    /// Keep the bit arrays in files in this directory instead of anonymous memory.
    pub state_dir: Option<PathBuf>,
    pub progress: Option<&'a Progress>,
    /// Records finished levels (needs `state_dir`), so a killed search can resume.
    pub journal: Option<&'a dyn Journal>,
    /// Continue after the last level of a previous run in the same `state_dir`.
    pub resume: Option<LevelRecord>,
    /// Counts of the levels before `resume` (reported again through the result).
    pub resumed_counts: Vec<DepthCounts>,
    /// Count entries and positions only, not classes (their columns read 0): for a table
    /// build, which needs distances, not class counts.
    pub positions_only: bool,
}

/// What is known durably after a level: its counts, its entries, and which of the two slot
/// files holds it as the frontier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LevelRecord {
    pub counts: DepthCounts,
    pub entries: u64,
    /// Entries visited up to and including this level.
    pub visited_entries: u64,
    pub frontier_slot: u8,
}

/// Durable record of finished levels. [`run`] calls it after a level's frontier and the
/// visited array (up to the previous level) are flushed and before `visited` is updated, so on
/// resume `visited |= frontier` (idempotent) restores a consistent state whatever the moment of
/// the crash.
pub trait Journal: Sync {
    fn level_done(&self, record: &LevelRecord) -> Result<(), JournalError>;
}

/// Bytes of state the search maps for a space of `rows` x `columns`: three bit arrays.
pub fn state_bytes(rows: u64, columns: u64) -> u64 {
    3 * 8 * rows * columns.div_ceil(64)
}

/// A push's frontier: the bit array, or its column lists.
pub(crate) enum FrontierInput<'a> {
    Bits(&'a [u64]),
    Lists(&'a ColumnLists),
    /// A pull reads no frontier.
    None,
}

/// What a level reads: the depth being computed, `visited` and `frontier` (rows of
/// `words_per_row` words), what to count, and the progress counters to advance.
pub(crate) struct LevelInput<'a> {
    pub visited: &'a [u64],
    pub frontier: FrontierInput<'a>,
    pub words_per_row: usize,
    pub counting: Counting,
    pub progress: &'a Progress,
}

/// Expands levels on this process's rayon threads with the task functions of `task.rs` (a
/// search on workers runs the same functions there: see the coordinator's `cluster::search`);
/// it keeps the sources of the search's rows under its moves once the first forward level has
/// built them.
#[derive(Default)]
pub(crate) struct Expander {
    sources: OnceLock<Sources>,
}

impl Expander {
    /// Sets in `next` (zeroed) the new entries of the level, closed under the rows'
    /// stabilizers, and returns their counts. Forward: the unvisited images of the frontier.
    /// Backward: the unvisited entries with a neighbour in the frontier.
    pub(crate) fn expand<I: RowIndex>(
        &self,
        space: &I,
        moves: &[Move],
        direction: Direction,
        level: &LevelInput,
        next: &mut BitStore,
    ) -> RowCounts {
        let (words, counting) = (level.words_per_row, level.counting);
        let visited = Visited { words: level.visited, words_per_row: words };
        let done = Some(&level.progress.rows_done);
        match direction {
            Direction::Backward => by_row_chunks(next.words_mut(), words, 0, done, |rows, out| {
                backward_rows(space, moves, rows, &visited, counting, out)
            }),
            _ => {
                let sources = self.sources.get_or_init(|| Sources::build(space, moves));
                let out = next.words_mut();
                match level.frontier {
                    FrontierInput::Bits(bits) => {
                        let frontier = FullRows::new(bits, words);
                        by_row_chunks(out, words, 0, done, |rows, out| {
                            forward_rows(space, moves, rows, sources, &frontier, &visited, counting, out)
                        })
                    }
                    FrontierInput::Lists(lists) => by_row_chunks(out, words, 0, done, |rows, out| {
                        forward_rows(space, moves, rows, sources, lists, &visited, counting, out)
                    }),
                    FrontierInput::None => unreachable!("a push is given its frontier"),
                }
            }
        }
    }
}

/// Runs the search in this process from the solved position until no new entry appears or
/// `max_depth` is done, calling `on_level` after each depth with its report and
/// its entries (one bit per entry, rows of `column_count.div_ceil(64)` words). A resumed search
/// first calls it again with the last journaled level (a consumer killed while taking it gets it
/// twice, so its writes must be idempotent). Returns the counts
/// of every depth reached. The move set must be closed under inverses and under conjugation by
/// the symmetries of the index (HTM and QTM are), or the class columns would not mean what they
/// say.
pub fn run<I: RowIndex>(
    space: &I,
    moves: &[Move],
    options: &BfsOptions,
    mut on_level: impl FnMut(&LevelReport, &[u64]),
) -> Result<Vec<DepthCounts>, BfsError> {
    let rows = space.row_count() as usize;
    let words = (space.column_count() as usize).div_ceil(64);
    let resume = options.resume;
    let store = |name: &str| match (&options.state_dir, resume.is_some()) {
        (Some(dir), true) => BitStore::open_existing(&dir.join(name), rows * words),
        (Some(dir), false) => BitStore::file(&dir.join(name), rows * words),
        (None, _) => BitStore::anonymous(rows * words),
    };
    let mut visited = store("visited.bits")?;
    let slots = [store("slot0.bits")?, store("slot1.bits")?];
    let no_progress = Progress::default();
    let progress = options.progress.unwrap_or(&no_progress);
    let (standing, slot) = match resume {
        Some(r) => {
            // The frontier is durable; `visited` may lack it (crash before the OR): redo it.
            or_into(visited.words_mut(), slots[r.frontier_slot as usize].words());
            let mut depths = options.resumed_counts.clone();
            depths.truncate(r.counts.depth as usize);
            depths.push(r.counts);
            let report = LevelReport {
                counts: r.counts,
                entries: r.entries,
                direction: Direction::Start,
                seconds: 0.0,
            };
            // The consumer may have been killed while taking this level: it gets it again.
            on_level(&report, slots[r.frontier_slot as usize].words());
            let standing = Standing { depths, visited: r.visited_entries, frontier: r.entries };
            (standing, r.frontier_slot as usize)
        }
        None => (Standing::default(), 0),
    };
    let mut levels = Levels {
        space,
        moves,
        options,
        counting: if options.positions_only { Counting::Positions } else { Counting::Classes },
        progress,
        expander: Expander::default(),
        words,
        visited,
        slots,
        slot,
        made: slot,
        frontier_entries: standing.frontier,
        on_level,
    };
    run_levels(&mut levels, space.entry_count(), space.pull_weight(), standing, options.max_depth, progress)
}

/// The levels of [`run`]: the frontier in one slot, the level being made in the other.
struct Levels<'a, I, F> {
    space: &'a I,
    moves: &'a [Move],
    options: &'a BfsOptions<'a>,
    counting: Counting,
    progress: &'a Progress,
    expander: Expander,
    words: usize,
    visited: BitStore,
    slots: [BitStore; 2],
    /// The slot of the frontier (the last level kept).
    slot: usize,
    /// The slot of the level just made.
    made: usize,
    /// Entries of the frontier.
    frontier_entries: u64,
    on_level: F,
}

impl<I: RowIndex, F: FnMut(&LevelReport, &[u64])> LevelMaker for Levels<'_, I, F> {
    type Error = BfsError;

    fn make(&mut self, depth: u32, direction: Direction) -> Result<RowCounts, BfsError> {
        let (space, words, counting) = (self.space, self.words, self.counting);
        if depth == 0 {
            mark_unreachable(space, self.visited.words_mut(), words);
            let level = &mut self.slots[0];
            let (row0, col0) = space.start();
            set_bit(&mut level.words_mut()[row0 as usize * words..][..words], col0);
            self.made = 0;
            return Ok(by_row_chunks(level.words_mut(), words, 0, None, |rows, out| {
                close_rows(space, rows.clone(), out);
                counting.count(space, rows, out)
            }));
        }
        // In memory, the level goes into the frontier's own array when the frontier is not
        // needed as bits (with a state directory the frontier's file must survive the level).
        let in_memory = self.options.state_dir.is_none();
        let array_bytes = (self.visited.words().len() * 8) as u64;
        let lists = (in_memory
            && direction == Direction::Forward
            && ColumnLists::fit(space.column_count(), self.frontier_entries, array_bytes))
        .then(|| ColumnLists::of(self.slots[self.slot].words(), words));
        let reuse = in_memory && (direction == Direction::Backward || lists.is_some());
        self.made = if reuse { self.slot } else { 1 - self.slot };
        let [a, b] = &mut self.slots;
        let (own, other) = if self.slot == 0 { (a, b) } else { (b, a) };
        let (frontier, next) = match &lists {
            Some(lists) => (FrontierInput::Lists(lists), own),
            None if reuse => (FrontierInput::None, own),
            None => (FrontierInput::Bits(own.words()), other),
        };
        next.clear()?;
        let level = LevelInput {
            visited: self.visited.words(),
            frontier,
            words_per_row: words,
            counting,
            progress: self.progress,
        };
        let counts = self.expander.expand(space, self.moves, direction, &level, next);
        debug_assert!(next.words().iter().zip(self.visited.words()).all(|(n, v)| n & v == 0));
        Ok(counts)
    }

    fn keep(&mut self, report: &LevelReport, visited: u64) -> Result<(), BfsError> {
        let level = &self.slots[self.made];
        record(self.options, &self.visited, level, report, visited, self.made as u8)?;
        or_into(self.visited.words_mut(), level.words());
        (self.on_level)(report, level.words());
        self.slot = self.made;
        self.frontier_entries = report.entries;
        Ok(())
    }
}

/// Makes a finished level durable: flushes its frontier and `visited`, then journals it.
fn record(
    options: &BfsOptions,
    visited: &BitStore,
    frontier: &BitStore,
    report: &LevelReport,
    visited_entries: u64,
    frontier_slot: u8,
) -> Result<(), BfsError> {
    if let Some(journal) = options.journal {
        frontier.flush()?;
        visited.flush()?;
        journal
            .level_done(&LevelRecord {
                counts: report.counts,
                entries: report.entries,
                visited_entries,
                frontier_slot,
            })
            .map_err(BfsError::Journal)?;
    }
    Ok(())
}

/// `dst |= src`, writing only where `src` has bits (a sparse level leaves `dst`'s other pages
/// untouched).
pub(crate) fn or_into(dst: &mut [u64], src: &[u64]) {
    dst.par_iter_mut().zip(src.par_iter()).for_each(|(d, &s)| {
        if s != 0 {
            *d |= s;
        }
    });
}

fn mark_unreachable<I: RowIndex>(space: &I, bits: &mut [u64], words: usize) {
    bits.par_chunks_mut(words).enumerate().for_each(|(r, row)| space.mark_unreachable(r as u32, row));
}
