//! The engine's task functions both ways round: every level of a search recomputed forward
//! (gathering into target rows) and backward (pulling from visited neighbours) must equal the
//! level the engine found, with the level's counts. Forward and backward read different data
//! (the frontier; only the visited set), so their agreement checks the claim that a visited
//! neighbour of an unvisited entry is a frontier neighbour. (The exchange between workers that
//! own the rows is checked against the engine in `owned.rs`.)

use rayon::prelude::*;
use shared::bfs::task::{
    backward_rows, by_row_chunks, forward_rows, Counting, FullRows, RowBits, Seen, Sources, Visited,
    VisitedRows,
};
use shared::bfs::{self, BfsOptions};
use shared::coord::corner_tetrads;
use shared::coord::h48::H48Coords;
use shared::cube::{Move, MoveSet};
use shared::space::{count_rows, KociembaSpace, RowCounts, RowIndex, RowSpace, SymProductSpace};

fn forward<I: RowIndex>(
    space: &I,
    moves: &[Move],
    sources: &Sources,
    frontier: &impl RowBits,
    seen: &impl Seen,
) -> (Vec<u64>, RowCounts) {
    let words = (space.column_count() as usize).div_ceil(64);
    let mut next = vec![0u64; space.row_count() as usize * words];
    let counts = by_row_chunks(&mut next, words, 0, None, |rows, out| {
        forward_rows(space, moves, rows, sources, frontier, seen, Counting::Classes, out)
    });
    (next, counts)
}

/// The pull of every `stride`-th chunk of 64 rows (pulls at early levels visit nearly every
/// entry, so a test samples them), as (first row, words) pairs.
fn backward<I: RowIndex>(
    space: &I,
    moves: &[Move],
    visited: &impl VisitedRows,
    stride: usize,
) -> Vec<(u32, Vec<u64>)> {
    let words = (space.column_count() as usize).div_ceil(64);
    let rows = space.row_count();
    (0..rows)
        .into_par_iter()
        .step_by(64 * stride)
        .map(|first| {
            let chunk = first..rows.min(first + 64);
            let mut out = vec![0u64; chunk.len() * words];
            let counts = backward_rows(space, moves, chunk.clone(), visited, Counting::Classes, &mut out);
            assert_eq!(counts, count_rows(space, chunk, &out));
            (first, out)
        })
        .collect()
}

/// Checks every level up to `max_depth` (all of them if `None`); returns how many it checked.
fn every_level_both_ways<I: RowIndex>(
    space: &I,
    moves: &[Move],
    max_depth: Option<u32>,
    stride: usize,
) -> usize {
    let words = (space.column_count() as usize).div_ceil(64);
    let mut levels: Vec<Vec<u64>> = Vec::new();
    let options = BfsOptions { max_depth, ..Default::default() };
    bfs::run(space, moves, &options, |_, bits| levels.push(bits.to_vec())).unwrap();
    if max_depth.is_none() {
        // After the last level nothing is new.
        levels.push(vec![0; levels[0].len()]);
    }
    let sources = Sources::build(space, moves);
    let mut visited = vec![0u64; levels[0].len()];
    for (r, row) in visited.chunks_mut(words).enumerate() {
        space.mark_unreachable(r as u32, row);
    }
    for pair in levels.windows(2) {
        let (frontier, expected) = (&pair[0], &pair[1]);
        for (v, f) in visited.iter_mut().zip(frontier) {
            *v |= f;
        }
        let expected_counts = count_rows(space, 0..space.row_count(), expected);
        let all = Visited { words: &visited, words_per_row: words };
        let full = FullRows::new(frontier, words);
        assert_eq!(forward(space, moves, &sources, &full, &all), (expected.clone(), expected_counts));
        for (first, out) in backward(space, moves, &all, stride) {
            assert_eq!(out[..], expected[first as usize * words..][..out.len()]);
        }
    }
    levels.len() - 1
}

#[test]
fn corner_levels_agree_forward_and_backward() {
    let space = RowSpace::new(corner_tetrads());
    assert_eq!(every_level_both_ways(&space, &MoveSet::Qtm.moves(), None, 1), 15);
    assert_eq!(every_level_both_ways(&space, &MoveSet::Htm.moves(), None, 1), 12);
}

#[test]
fn kociemba_and_padded_rows_agree_to_a_depth() {
    // H' (Kociemba's index), all its levels, and the H48 h0 space, whose rows end in padding
    // bits, to depth 9; pulls sampled on every 16th chunk of 64 rows.
    let space = KociembaSpace::new(false);
    assert_eq!(every_level_both_ways(&space, space.moves(), None, 16), 19);
    let space = SymProductSpace::h0(&H48Coords);
    assert_ne!(space.column_count() % 64, 0);
    assert_eq!(every_level_both_ways(&space, &MoveSet::Htm.moves(), Some(9), 16), 9);
}
