//! The task functions both ways round: every level of a search recomputed forward (gathering
//! into target rows) and backward (pulling from visited neighbours), each from the engine's full
//! arrays and from the sparse row sets that travel to workers (encoded and decoded as shards),
//! must equal the level the engine found. Forward and backward read different data (the
//! frontier; only the visited set), so their agreement checks the claim that a visited
//! neighbour of an unvisited entry is a frontier neighbour. A forward task on a worker knows
//! the visited entries only from the two inputs it downloads (the frontier and the previous
//! level's input, a frontier or an unvisited set): each way must give the same level, and every
//! task's counts must be the counts of the level it found.

use rayon::prelude::*;
use shared::bfs::task::{
    backward_rows, by_row_chunks, forward_rows, unvisited_rows, Counting, FullRows, RowBits, Seen, Sources,
    Visited, VisitedRows,
};
use shared::bfs::{self, BfsOptions};
use shared::coord::corner_tetrads;
use shared::coord::h48::H48Coords;
use shared::cube::{Move, MoveSet};
use shared::shard::ShardKey;
use shared::space::{
    count_positions, count_rows, KociembaSpace, RowCounts, RowIndex, RowSpace, SymProductSpace,
};
use shared::wire::{Before, KnownVisited, PartCut, PartedRows, PartsDecoder, SparseRows, Unvisited};
use std::ops::Range;

/// How the tests cut a space into parts: 7 uneven parts (or fewer rows).
fn cut_of(rows: u32) -> PartCut {
    PartCut::new(rows, rows.div_ceil(7))
}

/// Reads parts `parts` from their shards sent one after another, fed in uneven pieces as a
/// download delivers them.
fn read_parts(shards: &[Vec<u8>], depth: u32, cut: PartCut, words: usize, parts: Range<u32>) -> PartedRows {
    let mut decoder = PartsDecoder::new(1, depth, cut, words, parts.clone());
    let bytes: Vec<u8> = shards[parts.start as usize..parts.end as usize].concat();
    for piece in bytes.chunks(1009) {
        decoder.push(piece).unwrap();
    }
    decoder.finish().unwrap()
}

/// A full array (or its complement) as a worker receives it: every part, through the shard
/// codec.
fn over_the_wire(full: &[u64], words: usize, columns: u32, complement: bool) -> PartedRows {
    let cut = cut_of((full.len() / words) as u32);
    let shards: Vec<Vec<u8>> = (0..cut.parts())
        .map(|k| PartedRows::encode_part(1, 3, cut, k, full, words, columns, complement))
        .collect();
    read_parts(&shards, 3, cut, words, 0..cut.parts())
}

/// One part of a full array as a worker receives it.
fn part_over_the_wire(full: &[u64], words: usize, columns: u32, complement: bool, k: u32) -> PartedRows {
    let cut = cut_of((full.len() / words) as u32);
    let shards: Vec<Vec<u8>> = (0..cut.parts())
        .map(|k| PartedRows::encode_part(1, 3, cut, k, full, words, columns, complement))
        .collect();
    read_parts(&shards, 3, cut, words, k..k + 1)
}

/// The level after depth `depth` as workers return it (each task's rows with its counts, from
/// any attempt), read back as the next level's input: it must hold `expected`.
fn results_are_next_input(space: &impl RowIndex, depth: u32, expected: &[u64]) {
    let words = (space.column_count() as usize).div_ceil(64);
    let cut = cut_of(space.row_count());
    let shards: Vec<Vec<u8>> = (0..cut.parts())
        .map(|k| {
            let rows = cut.range(k);
            let part = &expected[rows.start as usize * words..rows.end as usize * words];
            let key = ShardKey { job: 1, task: k as u64, attempt: 1 + k % 3, level: depth };
            SparseRows::encode_result(key, part, words, space.column_count(), &count_rows(space, rows, part))
        })
        .collect();
    let input = read_parts(&shards, depth + 1, cut, words, 0..cut.parts());
    let input_rows = FullRows::new(expected, words);
    for r in 0..space.row_count() {
        assert_eq!(input.row(r), input_rows.row(r), "row {r}");
    }
}

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
    let columns = space.column_count();
    let mut levels: Vec<Vec<u64>> = Vec::new();
    let options = BfsOptions { max_depth, ..Default::default() };
    bfs::run(space, moves, &options, |_, bits| levels.push(bits.to_vec())).unwrap();
    if max_depth.is_none() {
        // After the last level nothing is new.
        levels.push(vec![0; levels[0].len()]);
    }
    let sources = Sources::build(space, moves);
    let mut visited = vec![0u64; levels[0].len()];
    let none = vec![0u64; levels[0].len()];
    // The unvisited entries as workers make them (see `unvisited_rows`): after each level, from
    // those before it less its frontier.
    let mut unreachable = vec![0u64; levels[0].len()];
    for (r, row) in unreachable.chunks_mut(words).enumerate() {
        space.mark_unreachable(r as u32, row);
    }
    let mut open: Option<PartedRows> = None;
    for (d, pair) in levels.windows(2).enumerate() {
        let (frontier, expected) = (&pair[0], &pair[1]);
        let previous = if d == 0 { &none } else { &levels[d - 1] };
        // Unvisited before this frontier (the input of a backward level d).
        let unvisited_before = over_the_wire(&visited, words, columns, true);
        for (v, f) in visited.iter_mut().zip(frontier) {
            *v |= f;
        }
        let frontier_rows = over_the_wire(frontier, words, columns, false);
        let made = unvisited(space, open.as_ref(), &[&frontier_rows]);
        assert!(made == complement(space, &visited, &unreachable), "unvisited after depth {d}");
        open = Some(over_the_wire(&made, words, columns, false));
        let expected_counts = count_rows(space, 0..space.row_count(), expected);
        let all = Visited { words: &visited, words_per_row: words };
        let full = FullRows::new(frontier, words);
        assert_eq!(forward(space, moves, &sources, &full, &all), (expected.clone(), expected_counts));
        let sparse = over_the_wire(frontier, words, columns, false);
        let previous = over_the_wire(previous, words, columns, false);
        let unvisited_now = over_the_wire(&visited, words, columns, true);
        for before in [
            Before::Frontier(&previous),
            Before::Unvisited(&unvisited_before),
            Before::Unvisited(&unvisited_now),
        ] {
            let seen = KnownVisited { frontier: &sparse, before };
            assert_eq!(forward(space, moves, &sources, &sparse, &seen), (expected.clone(), expected_counts));
        }
        if d == 0 {
            let seen = KnownVisited { frontier: &sparse, before: Before::Nothing };
            assert_eq!(forward(space, moves, &sources, &sparse, &seen), (expected.clone(), expected_counts));
        }
        // A task downloads only its own part of the second input.
        let cut = cut_of(space.row_count());
        for k in 0..cut.parts() {
            let rows = cut.range(k);
            let own = |full: &[u64], complement| part_over_the_wire(full, words, columns, complement, k);
            let (previous, unvisited) = (own(&levels[d.max(1) - 1], false), own(&visited, true));
            let expected_rows = &expected[rows.start as usize * words..rows.end as usize * words];
            for before in [Before::Frontier(&previous), Before::Unvisited(&unvisited)] {
                let before = if d == 0 { Before::Nothing } else { before };
                let seen = KnownVisited { frontier: &sparse, before };
                let mut out = vec![0u64; rows.len() * words];
                forward_rows(
                    space,
                    moves,
                    rows.clone(),
                    &sources,
                    &sparse,
                    &seen,
                    Counting::Classes,
                    &mut out,
                );
                assert_eq!(out, expected_rows, "rows {rows:?} at depth {d}");
            }
        }
        results_are_next_input(space, d as u32, expected);

        let full = Visited { words: &visited, words_per_row: words };
        let unvisited = over_the_wire(&visited, words, columns, true);
        let pulled =
            [backward(space, moves, &full, stride), backward(space, moves, &Unvisited(&unvisited), stride)];
        for (first, out) in pulled.iter().flatten() {
            assert_eq!(out[..], expected[*first as usize * words..][..out.len()]);
        }
    }
    // From the start, less every frontier at once (`visited` holds all but the last level).
    let frontiers: Vec<PartedRows> =
        levels[..levels.len() - 1].iter().map(|l| over_the_wire(l, words, columns, false)).collect();
    let all: Vec<&PartedRows> = frontiers.iter().collect();
    let from_start = unvisited(space, None, &all);
    assert!(from_start == complement(space, &visited, &unreachable), "unvisited from the start");
    levels.len() - 1
}

/// The unvisited entries of every row as unvisited tasks make them (in 7 parts), checking
/// each task's counts.
fn unvisited(space: &impl RowIndex, base: Option<&PartedRows>, found: &[&PartedRows]) -> Vec<u64> {
    let words = (space.column_count() as usize).div_ceil(64);
    let cut = cut_of(space.row_count());
    let found: Vec<&dyn RowBits> = found.iter().map(|f| *f as &dyn RowBits).collect();
    let mut out = vec![u64::MAX; space.row_count() as usize * words];
    for k in 0..cut.parts() {
        let rows = cut.range(k);
        let part = &mut out[rows.start as usize * words..rows.end as usize * words];
        let counts = unvisited_rows(space, rows.clone(), base.map(|b| b as &dyn RowBits), &found, part);
        assert_eq!(counts, count_positions(space, rows, part));
    }
    out
}

/// The entries of `space` neither in `visited` nor unreachable.
fn complement(space: &impl RowIndex, visited: &[u64], unreachable: &[u64]) -> Vec<u64> {
    let words = (space.column_count() as usize).div_ceil(64);
    let tail = match space.column_count() % 64 {
        0 => u64::MAX,
        k => (1u64 << k) - 1,
    };
    let mut out: Vec<u64> = visited.iter().zip(unreachable).map(|(v, u)| !(v | u)).collect();
    out.chunks_mut(words).for_each(|row| *row.last_mut().unwrap() &= tail);
    out
}

#[test]
fn corner_levels_agree_forward_backward_full_and_sparse() {
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
