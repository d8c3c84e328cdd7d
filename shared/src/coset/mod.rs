//! Cosets of Kociemba's H = <U, D, R2, L2, F2, B2> solved whole, the method of the proof that
//! every position is within 20 face turns (Rokicki, Kociemba, Davidson and Dethridge; see
//! docs/coset.md): one bit per position of the coset, filled depth by depth from the phase-1
//! solutions and from H's own moves.
//!
//! The coset of a representative `r` is `H r`: the positions `g = h r` (h in H, then r). A
//! sequence `u` of face turns that makes `g` gives `y = r u^-1 = r g^-1`, an element of H, and
//! `g = y^-1 r`; so the coset's positions are held as the elements `y = r v` of H (`v = u^-1`),
//! one bit each, in an index of H with a row per corner permutation ([`KociembaSpace::unreduced`]: a
//! coset is not closed under symmetry). `T_d`, the elements for the positions within `d`
//! moves, grows as
//!
//! `T_d = T_{d-1}  U  T_{d-1} . M_H  U  { r v : |v| = d, r v in H, v's last move not in M_H }`
//!
//! (a sequence whose last move is a move `m` of H reaches `(r v') m` with `r v'` in H already),
//! so each depth is one level of the row BFS over H's ten moves (the engine's kernels, forward
//! or backward by its rule) plus the phase-1 solutions of that length ([`phase1`]). The
//! positions new at depth `d` are exactly those at distance `d`.

pub mod phase1;

use crate::bfs::task::Counting;
use crate::bfs::{or_into, BfsError, BitStore, Direction, Expander, LevelInput, Progress};
use crate::cube::{Cube, Move, MoveSet};
use crate::space::{KociembaSpace, RowIndex};
use phase1::Phase1;
use rayon::prelude::*;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

/// What a coset's exact run found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CosetDistances {
    /// Positions at distance exactly d, for d = 0 ..= the depth asked for (or to the depth
    /// that reached every position, when that came sooner).
    pub counts: Vec<u64>,
    /// Positions farther than the depth asked for.
    pub beyond: u64,
}

/// The index of H and the phase-1 tables, built once for any number of cosets.
pub struct CosetSolver {
    space: KociembaSpace,
    phase1: Phase1,
    moves: Vec<Move>,
}

impl CosetSolver {
    /// A solver for cosets of H, or with `with_slice` false of H' (the middle-slice edges
    /// indistinguishable: 12 times fewer positions and 24 times smaller bit arrays, for checks).
    pub fn new(with_slice: bool) -> Self {
        CosetSolver {
            space: KociembaSpace::unreduced(with_slice),
            phase1: Phase1::new(),
            moves: MoveSet::KociembaH.moves(),
        }
    }

    /// Rows of the index (the progress of a level counts them).
    pub fn row_count(&self) -> u32 {
        self.space.row_count()
    }

    /// Positions in a coset.
    pub fn coset_size(&self) -> u64 {
        self.space.entry_count()
    }

    /// Bytes of the bit arrays a run holds: three bits per element of H (its positions so far,
    /// the last depth's and the next one's), rows padded to whole words.
    pub fn state_bytes(&self) -> u64 {
        crate::bfs::state_bytes(self.space.row_count() as u64, self.space.column_count() as u64)
    }

    /// The exact distance of every position of the coset of `rep` up to `max_depth`, and how
    /// many lie farther. `progress` shows the depth being made.
    pub fn exact(&self, rep: &Cube, max_depth: u32, progress: &Progress) -> Result<CosetDistances, BfsError> {
        let space = &self.space;
        let rows = space.row_count() as usize;
        let words = (space.column_count() as usize).div_ceil(64);
        let total = space.entry_count();
        let mut visited = BitStore::anonymous(rows * words)?;
        let mut frontier = BitStore::anonymous(rows * words)?;
        let mut next = BitStore::anonymous(rows * words)?;
        let expander = Expander::default();
        let (mut counts, mut seen, mut last) = (Vec::new(), 0u64, 0u64);
        for depth in 0..=max_depth {
            progress.depth.store(depth, Ordering::Relaxed);
            progress.rows_done.store(0, Ordering::Relaxed);
            next.clear()?;
            if last > 0 {
                let level = LevelInput {
                    visited: visited.words(),
                    frontier: frontier.words(),
                    words_per_row: words,
                    counting: Counting::Positions,
                    progress,
                };
                let direction = Direction::choose(total - seen, last);
                expander.expand(space, &self.moves, direction, &level, &mut next);
            }
            self.add_phase1(rep, depth, visited.words(), next.words_mut(), words);
            let new: u64 = next.words().par_iter().map(|w| w.count_ones() as u64).sum();
            or_into(visited.words_mut(), next.words());
            std::mem::swap(&mut frontier, &mut next);
            seen += new;
            last = new;
            counts.push(new);
            if seen == total {
                break;
            }
        }
        Ok(CosetDistances { counts, beyond: total - seen })
    }

    /// Sets in `next` the unvisited elements `rep . v` of H for the phase-1 sequences `v` of
    /// `length` moves.
    fn add_phase1(&self, rep: &Cube, length: u32, visited: &[u64], next: &mut [u64], words: usize) {
        let next = Mutex::new(next);
        self.phase1.solutions(rep, length, &|batch: &[Cube]| {
            let located: Vec<(u32, u32)> = batch.iter().map(|y| self.space.locate(y)).collect();
            let mut next = next.lock().unwrap_or_else(|e| e.into_inner());
            for (row, column) in located {
                let i = row as usize * words + column as usize / 64;
                let bit = 1u64 << (column % 64);
                if visited[i] & bit == 0 {
                    next[i] |= bit;
                }
            }
        });
    }
}

/// A coset job: cosets of H (or H') solved to an exact depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CosetSpec {
    pub exact_to: u32,
    pub slice_edges_alike: bool,
}

impl CosetSpec {
    /// Words of one coset's result: its counts to `exact_to`, the count beyond, its milliseconds.
    pub fn words_per_coset(&self) -> usize {
        self.exact_to as usize + 3
    }

    /// Bytes of the bit arrays a run of one coset holds (see [`CosetSolver::state_bytes`]),
    /// known without building the solver.
    pub fn state_bytes(&self) -> u64 {
        let f8 = crate::coord::rank::factorial(8) as u64;
        let per_ud = if self.slice_edges_alike { 1 } else { crate::coord::rank::factorial(4) as u64 };
        crate::bfs::state_bytes(f8, f8 * per_ud)
    }

    /// Positions in a coset: |H| = 8!·8!·4!/2, or |H'| = 8!·8!.
    pub fn coset_size(&self) -> u64 {
        let f8 = crate::coord::rank::factorial(8) as u64;
        if self.slice_edges_alike {
            f8 * f8
        } else {
            f8 * f8 * crate::coord::rank::factorial(4) as u64 / 2
        }
    }
}

impl std::fmt::Display for CosetSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let space = if self.slice_edges_alike { "hprime" } else { "h" };
        write!(f, "coset/{space}/{}", self.exact_to)
    }
}
