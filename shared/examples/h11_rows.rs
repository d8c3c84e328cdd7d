//! Measures the h11 index per row, the numbers the h48h11 projection in docs/h48-tables.md
//! rests on. Every row holds the same random bits at a given density; then
//! - push: a few target rows gather their images under every HTM move (the engine's forward
//!   level, the bits as frontier);
//! - pull: the same rows look for a visited neighbour of each unvisited entry (a backward
//!   level, the bits as the unvisited entries);
//! - fold: the rows, as one level's entries, folded into h7 by `HnRecorder`.
//!
//! Run by scripts/bench/h11-rows.sh.
//!
//!     cargo run --release -p shared --example h11_rows -- [TARGET_ROWS] [DENSITY]

use rayon::prelude::*;
use shared::bfs::task::{pull_rows, push_into_rows, RowBits, Sources, VisitedRows};
use shared::bfs::RowIndex;
use shared::cube::{MoveSet, SplitMix64};
use shared::h48::{H48Coords, HnRecorder, SymProductSpace, ESEP};
use std::time::Instant;

/// Every row holds the same words.
struct SameRow(Vec<u64>);

impl RowBits for SameRow {
    fn row(&self, _r: u32) -> Option<&[u64]> {
        Some(&self.0)
    }
}

/// Every row holds the same unvisited entries.
struct SameOpen(Vec<u64>);

impl VisitedRows for SameOpen {
    const HOLDS_UNVISITED: bool = true;
    fn row(&self, _r: u32) -> Option<&[u64]> {
        Some(&self.0)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let targets: u32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(8);
    let density: f64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(0.3);
    let start = Instant::now();
    let coords = H48Coords::default();
    let space = SymProductSpace::h11(&coords);
    let moves = MoveSet::Htm.moves();
    let sources = Sources::build(&space, &moves);
    let words = (space.column_count() as usize).div_ceil(64);
    println!(
        "h11 index: {} rows x {} columns, built in {:.1} s",
        space.row_count(),
        space.column_count(),
        start.elapsed().as_secs_f64()
    );

    let threshold = (density * u64::MAX as f64) as u64;
    let row: Vec<u64> = (0..words)
        .into_par_iter()
        .map(|w| {
            let mut rng = SplitMix64::new(w as u64);
            (0..64).fold(0u64, |acc, b| acc | ((rng.next_u64() < threshold) as u64) << b)
        })
        .collect();
    let per_row: u64 = row.iter().map(|w| w.count_ones() as u64).sum();
    let frontier = SameRow(row);

    // Target rows spread over the index, two per rayon task as the engine's chunks would be.
    let step = space.row_count() / targets;
    let picked: Vec<u32> = (0..targets).map(|k| k * step).collect();
    let start = Instant::now();
    let entry_moves: u64 = picked
        .par_iter()
        .map(|&t| {
            let mut out = vec![0u64; words];
            push_into_rows(&space, &moves, t..t + 1, &sources, &frontier, &mut out);
            std::hint::black_box(&out);
            sources.of(t).len() as u64 * per_row
        })
        .sum();
    let seconds = start.elapsed().as_secs_f64();
    let threads = rayon::current_num_threads() as f64;
    println!(
        "push, {targets} target rows, density {density}: {entry_moves} entry-moves in {seconds:.2} s on {threads} \
         threads: {:.2} ns per entry-move per core, {:.2} s per target row per core",
        seconds * threads * 1e9 / entry_moves as f64,
        seconds * threads / targets as f64
    );

    let open = SameOpen(frontier.0);
    let start = Instant::now();
    let found: u64 = picked
        .par_iter()
        .map(|&t| {
            let mut out = vec![0u64; words];
            pull_rows(&space, &moves, t..t + 1, &open, &mut out);
            out.iter().map(|w| w.count_ones() as u64).sum::<u64>()
        })
        .sum();
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "pull, {targets} rows, unvisited density {density}: {} unvisited entries ({found} with a visited \
         neighbour) in {seconds:.2} s: {:.2} ns per unvisited entry per core, {:.2} s per row per core",
        per_row * targets as u64,
        seconds * threads * 1e9 / (per_row * targets as u64) as f64,
        seconds * threads / targets as f64
    );

    let level: Vec<u64> = (0..targets).flat_map(|_| open.0.iter().copied()).collect();
    let mut recorder = HnRecorder::new(7, targets, ESEP as usize);
    let start = Instant::now();
    recorder.record(9, &level);
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "fold into h7, {targets} rows: {seconds:.2} s, {:.2} s per row per core",
        seconds * threads / targets as f64
    );
}
