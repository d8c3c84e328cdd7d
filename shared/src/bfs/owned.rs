//! Row ownership: the state a worker keeps for the parts of the rows it owns for a whole search,
//! and the work of a level on them, as functions of exactly the data they read (so a worker and
//! the in-memory check of `shared/tests/suite/owned.rs` run the same code).
//!
//! The rows are cut into parts ([`PartCut`]); each part has one owner. An owner keeps, per part,
//! the *unvisited* entries (every reachable entry at the start), the frontier (the entries of
//! the last level) and the level being made (`next`). A level is made in one of two ways, the
//! engine's direction rule choosing (see [`super::Direction::choose`]):
//!
//! - **Forward** (push): every worker maps its own frontier rows through the moves into every
//!   part ([`push_images`]) and sends each part's images to its owner, which ORs them into
//!   `next` and keeps the unvisited ones ([`OwnedPart::finish_forward`]). Images of one sender
//!   into one part are ORed before they travel, so a part receives at most one message per
//!   sender. A worker may instead pull its images where the engine's direction rule finds
//!   that cheaper: into a part it owns, by testing the part's unvisited entries against its
//!   own frontier rows ([`pull_hits`], [`OwnedPart::pulls_own_images`]); into another
//!   owner's part, by testing every column ([`EveryColumn`], [`pulls_images`]). Either way
//!   the part's level is the same set, so no message's meaning depends on the choice.
//! - **Backward** (pull): an unvisited entry is new when a neighbour is in the frontier (it is at
//!   distance at least d, so a visited neighbour is at d - 1). The owner sends each part's
//!   unvisited rows to every worker that owns a neighbour row of them ([`open_rows_for`]); each
//!   tests those entries against its own frontier rows ([`pull_hits`]) and sends the hits back.
//!
//! Either way a part's new entries are the union of what its owner computed and received, which
//! does not depend on who sent what or in which order, so the bytes of every level are the
//! engine's for any number of workers.

use super::cut::PartCut;
use super::lists::ColumnLists;
use super::task::{row_bits, tail_mask, Counting, PushSource, RowBits};
use crate::coord::{for_each_bit, ColumnMapper};
use crate::cube::Move;
use crate::space::{RowCounts, RowIndex};
use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// One owned part of the rows: its unvisited entries, its frontier and the level being made,
/// each as whole rows of `words` words. The frontier does not change while a level is made, so
/// it is shared ([`PartFrontier`]) with whatever maps it.
pub struct OwnedPart {
    pub part: u32,
    pub rows: Range<u32>,
    words: usize,
    pub unvisited: Vec<u64>,
    pub frontier: Arc<PartFrontier>,
    pub next: Vec<u64>,
    /// Entries of each row of `next` as the last start or finish left it ([`Self::level_ones`]).
    level_ones: Vec<AtomicU32>,
    /// Entries of `unvisited` and of the frontier, kept as levels are committed (what
    /// [`Self::pulls_own_images`] weighs, without reading the arrays).
    open: u64,
    last: u64,
}

/// A part's frontier: its entries, and one bit per row telling whether the row has any; while
/// sparse, also its entries as column lists, which pushes read (see [`OwnedPart::commit`]).
pub struct PartFrontier {
    pub part: u32,
    pub rows: Range<u32>,
    words: usize,
    pub bits: Vec<u64>,
    occupied: Vec<u64>,
    lists: Option<ColumnLists>,
}

impl PartFrontier {
    pub fn new(part: u32, rows: Range<u32>, words: usize, bits: Vec<u64>) -> Self {
        let occupied = row_bits(&bits, words.max(1), |_, row| row.iter().any(|&w| w != 0));
        PartFrontier { part, rows, words, bits, occupied, lists: None }
    }

    /// Row `r` (of this part), if it has entries.
    #[inline]
    fn row(&self, r: u32) -> Option<&[u64]> {
        let i = (r - self.rows.start) as usize;
        (self.occupied[i / 64] >> (i % 64) & 1 == 1).then(|| &self.bits[i * self.words..][..self.words])
    }

    /// Its entries.
    pub fn entries(&self) -> u64 {
        crate::ones::ones(&self.bits)
    }

    /// Whether its entries are also kept as column lists.
    pub fn is_listed(&self) -> bool {
        self.lists.is_some()
    }

    /// Whether it has no entry.
    pub fn is_empty(&self) -> bool {
        self.occupied.iter().all(|&b| b == 0)
    }

    /// ORs into `out` the images under `map` of row `r` (of this part): from its column list
    /// where the frontier has lists, else from its bits.
    #[inline]
    fn or_images_of<M: ColumnMapper>(&self, r: u32, map: &M, out: &mut [u64]) {
        match &self.lists {
            Some(lists) => lists.or_images_of(r - self.rows.start, map, out),
            None => {
                if let Some(bits) = self.row(r) {
                    map.or_images(bits, out);
                }
            }
        }
    }

    /// Its array, zeroed: only the rows that have entries are written.
    pub fn into_cleared(mut self) -> Vec<u64> {
        let (words, bits) = (self.words, &mut self.bits);
        for_each_bit(&self.occupied, |i| bits[i as usize * words..][..words].fill(0));
        self.bits
    }
}

impl OwnedPart {
    /// Part `k` at the start of a search: every reachable entry unvisited, nothing found.
    pub fn fresh<I: RowIndex>(space: &I, cut: PartCut, k: u32) -> Self {
        let rows = cut.range(k);
        let words = (space.column_count() as usize).div_ceil(64);
        let mut unvisited = crate::huge::zeroed_words(rows.len() * words);
        let tail = tail_mask(space.column_count());
        for (r, row) in rows.clone().zip(unvisited.chunks_mut(words.max(1))) {
            space.mark_unreachable(r, row);
            row.iter_mut().for_each(|w| *w = !*w);
            if let Some(last) = row.last_mut() {
                *last &= tail;
            }
        }
        let n = rows.len() * words;
        OwnedPart {
            part: k,
            rows: rows.clone(),
            words,
            open: crate::ones::ones(&unvisited),
            unvisited,
            level_ones: (0..rows.len()).map(|_| AtomicU32::new(0)).collect(),
            frontier: Arc::new(PartFrontier::new(k, rows, words, crate::huge::zeroed_words(n))),
            next: crate::huge::zeroed_words(n),
            last: 0,
        }
    }

    /// The part after the levels `found` (their entries, oldest first, each this part's rows
    /// only): its frontier is the last of them. How a part moves to a new owner.
    pub fn restore<I: RowIndex>(space: &I, cut: PartCut, k: u32, found: &[&[u64]]) -> Self {
        let mut part = OwnedPart::fresh(space, cut, k);
        for level in found {
            part.next.copy_from_slice(level);
            part.commit();
        }
        part
    }

    /// Level 0 in this part: the start entry, closed under its row's stabilizer, if its row is
    /// here; counted. It is the part's `next` until committed. (A part starts at depth 0, whose
    /// rows' counts in [`Self::level_ones`] are all zero but, after a start, the start row's.)
    pub fn start<I: RowIndex>(&mut self, space: &I, counting: Counting) -> RowCounts {
        let (row, column) = space.start();
        if !self.rows.contains(&row) {
            return RowCounts::default();
        }
        let i = (row - self.rows.start) as usize;
        let bits = &mut self.next[i * self.words..][..self.words];
        crate::space::set_bit(bits, column);
        space.close_row(row, bits);
        self.level_ones[i].store(crate::ones::ones(bits) as u32, Ordering::Relaxed);
        counting.count(space, row..row + 1, bits)
    }

    /// Keeps the new entries among the images gathered in `next` (the unvisited ones), closes
    /// their rows under their stabilizers and counts them (each row's: [`Self::level_ones`]).
    pub fn finish_forward<I: RowIndex>(&mut self, space: &I, counting: Counting) -> RowCounts {
        let words = self.words;
        let rows = self.rows.clone();
        let (unvisited, level_ones) = (&self.unvisited, &self.level_ones);
        super::task::by_row_chunks(&mut self.next, words, rows.start, None, |sub, out| {
            let at = (sub.start - rows.start) as usize * words;
            let open = &unvisited[at..at + out.len()];
            for ((r, row), open) in sub.clone().zip(out.chunks_mut(words)).zip(open.chunks(words)) {
                let mut ones = 0;
                if row.iter().any(|&w| w != 0) {
                    row.iter_mut().zip(open).for_each(|(o, u)| *o &= u);
                    if row.iter().any(|&w| w != 0) {
                        space.close_row(r, row);
                        ones = crate::ones::ones(row) as u32;
                    }
                }
                level_ones[(r - rows.start) as usize].store(ones, Ordering::Relaxed);
            }
            counting.count(space, sub, out)
        })
    }

    /// Counts the hits gathered in `next` (unvisited entries with a neighbour in the frontier:
    /// closed already, as the unvisited set and the frontier are).
    pub fn finish_backward<I: RowIndex>(&mut self, space: &I, counting: Counting) -> RowCounts {
        let words = self.words;
        let rows = self.rows.clone();
        let (unvisited, level_ones) = (&self.unvisited, &self.level_ones);
        super::task::by_row_chunks(&mut self.next, words, rows.start, None, |sub, out| {
            let at = (sub.start - rows.start) as usize * words;
            // A hit is an unvisited entry by construction; masking makes a bad message harmless.
            let open = unvisited[at..].chunks(words);
            for (r, (row, open)) in sub.clone().zip(out.chunks_mut(words).zip(open)) {
                row.iter_mut().zip(open).for_each(|(o, u)| *o &= u);
                level_ones[(r - rows.start) as usize].store(crate::ones::ones(row) as u32, Ordering::Relaxed);
            }
            counting.count(space, sub, out)
        })
    }

    /// Each row's entries in `next` as the last start or finish counted them (to keep its level).
    pub fn level_ones(&self) -> Vec<u32> {
        self.level_ones.iter().map(|n| n.load(Ordering::Relaxed)).collect()
    }

    /// Writes into `misses` (this part's rows, zeroed) the entries of each row that `wanted`
    /// accepts (given its row number) that are unvisited and not yet in `next`, and returns
    /// which rows it wrote. `closed` marks the rows found to have none, for the level being
    /// made: `next` only grows while it is made, so a closed row is not tested again.
    pub fn misses(
        &self,
        closed: &mut Vec<bool>,
        wanted: impl Fn(u32) -> bool,
        misses: &mut [u64],
    ) -> Vec<bool> {
        let words = self.words.max(1);
        closed.resize(self.rows.len(), false);
        let mut wrote = vec![false; self.rows.len()];
        let sides = self.unvisited.chunks(words).zip(self.next.chunks(words));
        for (i, (row, (u, n))) in misses.chunks_mut(words).zip(sides).enumerate() {
            if closed[i] {
                continue;
            }
            if !crate::ones::any_outside(u, n) {
                closed[i] = true;
            } else if wanted(self.rows.start + i as u32) {
                wrote[i] = true;
                row.iter_mut().zip(u).zip(n).for_each(|((m, u), n)| *m = u & !n);
            }
        }
        wrote
    }

    /// Makes `next` the frontier: its entries leave the unvisited set, and `next` is cleared for
    /// the level after (in the old frontier's memory when nothing else holds it).
    pub fn commit(&mut self) {
        let n = self.next.len();
        let bits = std::mem::take(&mut self.next);
        let mut frontier = PartFrontier::new(self.part, self.rows.clone(), self.words, bits);
        // Rows without new entries leave the unvisited set as it is, and the old frontier's
        // array is cleared where it has entries: a sparse level costs its rows, not the part.
        let (words, unvisited) = (self.words, &mut self.unvisited);
        let mut found = 0;
        // The entries found are counted through a small buffer by the processor's fastest
        // popcount (`u64::count_ones` is the portable sequence in the baseline build).
        let mut both = [0u64; 64];
        for_each_bit(&frontier.occupied, |i| {
            let at = i as usize * words;
            let new = frontier.bits[at..at + words].chunks(both.len());
            for (open, new) in unvisited[at..at + words].chunks_mut(both.len()).zip(new) {
                let both = &mut both[..new.len()];
                for ((b, u), n) in both.iter_mut().zip(open.iter_mut()).zip(new) {
                    *b = *u & n;
                    *u &= !n;
                }
                found += crate::ones::ones(both);
            }
        });
        self.open -= found;
        self.last = found;
        // A sparse frontier is also listed, as the engine lists its own: a push then reads two
        // bytes an entry, where from bits each (row, move) counted and scanned the whole row.
        let bytes = (frontier.bits.len() * 8) as u64;
        if ColumnLists::fit((words * 64) as u32, found, bytes) && found > 0 {
            frontier.lists = Some(ColumnLists::of(&frontier.bits, words));
        }
        let old = std::mem::replace(&mut self.frontier, Arc::new(frontier));
        self.next = match Arc::try_unwrap(old) {
            Ok(old) => old.into_cleared(),
            Err(_) => crate::huge::zeroed_words(n),
        };
    }

    /// Forgets the level being made.
    pub fn discard(&mut self) {
        self.next.iter_mut().for_each(|w| *w = 0);
    }

    /// Unvisited entries.
    pub fn unvisited_entries(&self) -> u64 {
        self.open
    }

    /// Entries of its frontier (the level committed last).
    pub fn frontier_entries(&self) -> u64 {
        self.last
    }

    /// Whether, in a forward level, this part's owner finds the part's images of its own
    /// frontier rows cheaper by pulling them (testing the part's unvisited entries against
    /// those rows, [`pull_hits`]) than by pushing them: the engine's direction rule on the
    /// part's own counts. Either way the part's level is the same set (a pulled hit is an
    /// image that is unvisited, and [`Self::finish_forward`] keeps only those), so the choice
    /// is the owner's alone; images from other owners' rows still come pushed.
    pub fn pulls_own_images(&self, pull_weight: u64) -> bool {
        super::Direction::choose(self.open, self.last, pull_weight) == super::Direction::Backward
    }
}

/// The frontier rows of the parts one worker owns, by row number: what its pushes map and its
/// pulls test against (rows of other owners read as empty).
pub struct OwnedFrontier {
    rows_per_part: u32,
    parts: Vec<Option<Arc<PartFrontier>>>,
}

impl OwnedFrontier {
    /// The view of `parts` (any order) in a cut of `cut.parts()` parts.
    pub fn new(cut: PartCut, parts: impl IntoIterator<Item = Arc<PartFrontier>>) -> Self {
        let mut slots = vec![None; cut.parts() as usize];
        for p in parts {
            let k = p.part as usize;
            slots[k] = Some(p);
        }
        OwnedFrontier { rows_per_part: cut.rows_per_part, parts: slots }
    }

    /// Whether no owned part has a frontier entry.
    pub fn is_empty(&self) -> bool {
        self.parts.iter().flatten().all(|p| p.is_empty())
    }
}

impl RowBits for OwnedFrontier {
    #[inline]
    fn row(&self, r: u32) -> Option<&[u64]> {
        self.parts[(r / self.rows_per_part) as usize].as_ref()?.row(r)
    }
}

/// An [`OwnedFrontier`] as a push reads it: each part's rows from its column lists where it
/// has them.
struct Listed<'a>(&'a OwnedFrontier);

impl PushSource for Listed<'_> {
    #[inline]
    fn holds(&self, r: u32) -> bool {
        self.0.row(r).is_some()
    }

    #[inline]
    fn or_images_of<M: ColumnMapper>(&self, r: u32, map: &M, out: &mut [u64]) {
        if let Some(part) = &self.0.parts[(r / self.0.rows_per_part) as usize] {
            part.or_images_of(r, map, out);
        }
    }
}

/// Sets in `out` (the rows `targets`, zeroed) every image of a frontier row of `frontier` that
/// lands in those rows; returns whether any did. The forward step of a level, from one
/// worker's rows into one part. Only rows for which [`images_reach`] holds are written.
pub fn push_images<I: RowIndex>(
    space: &I,
    moves: &[Move],
    targets: Range<u32>,
    sources: &super::task::Sources,
    frontier: &OwnedFrontier,
    out: &mut [u64],
) -> bool {
    let words = (space.column_count() as usize).div_ceil(64);
    let frontier = Listed(frontier);
    super::task::by_row_chunks(out, words, targets.start, None, |sub, out| {
        let wrote = super::task::push_into_rows(space, moves, sub, sources, &frontier, out);
        RowCounts { entries: wrote as u64, ..Default::default() }
    })
    .entries
        > 0
}

/// Whether images of `frontier` land in row `target` (a source row of it, among those of
/// `sources`, has entries): the rows [`push_images`] writes, so that a sender reads, encodes
/// and clears only those rows of its buffer.
pub fn images_reach(target: u32, sources: &super::task::Sources, frontier: &impl RowBits) -> bool {
    sources.of(target).iter().any(|&(r, _)| frontier.row(r).is_some())
}

/// Sets in `out` (the rows `rows`, zeroed) the entries of `open` (unvisited entries of those
/// rows) that have a neighbour in `frontier`: the backward step of a level, one worker's
/// frontier rows tested for one part's unvisited entries.
pub fn pull_hits<I: RowIndex>(
    space: &I,
    moves: &[Move],
    rows: Range<u32>,
    open: &impl RowBits,
    frontier: &impl RowBits,
    out: &mut [u64],
) {
    assert!(moves.len() <= Move::COUNT, "a pull looks through at most {} moves", Move::COUNT);
    let words = (space.column_count() as usize).div_ceil(64);
    super::task::by_row_chunks(out, words, rows.start, None, |sub, out| {
        let mut left = vec![0u64; words];
        for (r, out) in sub.zip(out.chunks_mut(words)) {
            let Some(own) = open.row(r) else { continue };
            let mut neighbours: [Option<(&[u64], I::Mapper<'_>)>; Move::COUNT] =
                std::array::from_fn(|_| None);
            let mut any = false;
            for (slot, &m) in neighbours.iter_mut().zip(moves) {
                let (target, map) = space.transition(r, m);
                if let Some(bits) = frontier.row(target) {
                    *slot = Some((bits, map));
                    any = true;
                }
            }
            if !any {
                continue;
            }
            left.copy_from_slice(own);
            super::task::reach(&mut left, &neighbours[..moves.len()], false, out);
        }
        RowCounts::default()
    });
}

/// Every column of every row, as the entries a sender tests when it pulls its images into
/// another owner's part ([`pull_hits`] against its own frontier rows), whose unvisited entries
/// it does not know: the hits are then exactly its images there.
pub struct EveryColumn {
    row: Vec<u64>,
}

impl EveryColumn {
    pub fn new(columns: u32) -> Self {
        let mut row = vec![u64::MAX; (columns as usize).div_ceil(64)];
        if let Some(last) = row.last_mut() {
            *last = tail_mask(columns);
        }
        EveryColumn { row }
    }
}

impl RowBits for EveryColumn {
    #[inline]
    fn row(&self, _: u32) -> Option<&[u64]> {
        Some(&self.row)
    }
}

/// Whether a worker whose parts hold `entries` entries, `frontier` of them in the frontier,
/// finds its images in other owners' parts cheaper by pulling them over every column
/// ([`EveryColumn`]) than by pushing its frontier: the engine's direction rule, with every
/// entry counted as open.
pub fn pulls_images(entries: u64, frontier: u64, pull_weight: u64) -> bool {
    super::Direction::choose(entries, frontier, pull_weight) == super::Direction::Backward
}

/// Whether row `r` has a neighbour row (under `moves`) that `owned` accepts: a backward level
/// sends a row's unvisited entries only to the owners of its neighbour rows.
pub fn open_rows_for<I: RowIndex>(space: &I, moves: &[Move], r: u32, owned: impl Fn(u32) -> bool) -> bool {
    moves.iter().any(|&m| owned(space.transition(r, m).0))
}

/// What an owned-rows search needs of its index: the functions above on parts. Every
/// [`RowIndex`] is one; so is the job registry's `AnyIndex`, which dispatches to its index.
pub trait PartIndex: Sync + Send {
    fn row_count(&self) -> u32;
    fn column_count(&self) -> u32;
    fn words_per_row(&self) -> usize;
    /// Entries the space counts (reachable ones).
    fn entry_count(&self) -> u64;
    /// See [`RowIndex::pull_weight`].
    fn pull_weight(&self) -> u64;
    /// Part `k` of `cut` at the start of a search.
    fn fresh_part(&self, cut: PartCut, k: u32) -> OwnedPart;
    /// Level 0 in `part` (see [`OwnedPart::start`]).
    fn start_part(&self, part: &mut OwnedPart, counting: Counting) -> RowCounts;
    /// Finishes a level in `part`: its gathered images or hits become its new entries, counted.
    fn finish_part(&self, part: &mut OwnedPart, direction: super::Direction, counting: Counting)
        -> RowCounts;
    /// See [`push_images`].
    fn push_images(
        &self,
        moves: &[Move],
        targets: Range<u32>,
        sources: &super::task::Sources,
        frontier: &OwnedFrontier,
        out: &mut [u64],
    ) -> bool;
    /// See [`pull_hits`].
    fn pull_hits(
        &self,
        moves: &[Move],
        rows: Range<u32>,
        open: &impl RowBits,
        frontier: &OwnedFrontier,
        out: &mut [u64],
    );
    /// See [`open_rows_for`].
    fn open_rows_for(&self, moves: &[Move], r: u32, owned: impl Fn(u32) -> bool) -> bool;
    /// The sources among the rows `from` accepts (see [`super::task::Sources::build_from`]).
    fn sources_from(&self, moves: &[Move], from: impl Fn(u32) -> bool + Sync) -> super::task::Sources;
}

impl<I: RowIndex + Send> PartIndex for I {
    fn row_count(&self) -> u32 {
        RowIndex::row_count(self)
    }

    fn column_count(&self) -> u32 {
        RowIndex::column_count(self)
    }

    fn words_per_row(&self) -> usize {
        (RowIndex::column_count(self) as usize).div_ceil(64)
    }

    fn entry_count(&self) -> u64 {
        RowIndex::entry_count(self)
    }

    fn pull_weight(&self) -> u64 {
        RowIndex::pull_weight(self)
    }

    fn fresh_part(&self, cut: PartCut, k: u32) -> OwnedPart {
        OwnedPart::fresh(self, cut, k)
    }

    fn start_part(&self, part: &mut OwnedPart, counting: Counting) -> RowCounts {
        part.start(self, counting)
    }

    fn finish_part(
        &self,
        part: &mut OwnedPart,
        direction: super::Direction,
        counting: Counting,
    ) -> RowCounts {
        match direction {
            super::Direction::Backward => part.finish_backward(self, counting),
            _ => part.finish_forward(self, counting),
        }
    }

    fn push_images(
        &self,
        moves: &[Move],
        targets: Range<u32>,
        sources: &super::task::Sources,
        frontier: &OwnedFrontier,
        out: &mut [u64],
    ) -> bool {
        push_images(self, moves, targets, sources, frontier, out)
    }

    fn pull_hits(
        &self,
        moves: &[Move],
        rows: Range<u32>,
        open: &impl RowBits,
        frontier: &OwnedFrontier,
        out: &mut [u64],
    ) {
        pull_hits(self, moves, rows, open, frontier, out)
    }

    fn open_rows_for(&self, moves: &[Move], r: u32, owned: impl Fn(u32) -> bool) -> bool {
        open_rows_for(self, moves, r, owned)
    }

    fn sources_from(&self, moves: &[Move], from: impl Fn(u32) -> bool + Sync) -> super::task::Sources {
        super::task::Sources::build_from(self, moves, from)
    }
}
