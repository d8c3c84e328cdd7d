//! Row ownership checked against the engine: N simulated workers, each owning some parts of the
//! rows, make every level by exchanging messages (encoded and decoded as they travel between
//! real workers), and every level's entries and counts must be the engine's, whichever way each
//! forward level's images are made. The backward levels read only unvisited entries and
//! frontier rows, the forward ones only frontier rows (and a part's own unvisited entries):
//! their agreement with the engine's single array checks the exchange's claims (a part's new
//! entries are the union of what its owner gathers, whoever sends what).

use shared::bfs::cut::PartCut;
use shared::bfs::owned::{open_rows_for, pull_hits, push_images, EveryColumn, OwnedFrontier, OwnedPart};
use shared::bfs::task::{Counting, FullRows, Sources};
use shared::bfs::{self, BfsOptions, Direction};
use shared::coord::corner_tetrads;
use shared::coord::h48::H48Coords;
use shared::cube::{Move, MoveSet};
use shared::shard::{Codec, ShardKey};
use shared::space::{KociembaSpace, RowCounts, RowIndex, RowSpace, SymProductSpace};
use shared::wire::SparseRows;

/// The levels (entries of each, as full arrays) and counts of an owned-rows search with the
/// parts of `cut` owned by `owner[k]` among `workers` simulated workers.
fn owned_search<I: RowIndex>(
    space: &I,
    moves: &[Move],
    cut: PartCut,
    owner: &[usize],
    workers: usize,
    counting: Counting,
) -> Vec<(Direction, RowCounts, Vec<u64>)> {
    let words = (space.column_count() as usize).div_ceil(64);
    let sources = Sources::build(space, moves);
    // parts[w]: worker w's parts.
    let mut parts: Vec<Vec<OwnedPart>> = (0..workers)
        .map(|w| {
            (0..cut.parts())
                .filter(|&k| owner[k as usize] == w)
                .map(|k| OwnedPart::fresh(space, cut, k))
                .collect()
        })
        .collect();
    // Every codec, on different links.
    let codec = |from: usize| [Codec::Raw, Codec::Lz4, Codec::Zstd][from % 3];
    let key = |depth: u32, k: u32, from: usize| ShardKey {
        job: 9,
        task: k as u64,
        attempt: from as u32,
        level: depth,
    };
    let full_of = |parts: &Vec<Vec<OwnedPart>>, next: bool| {
        let mut full = vec![0u64; cut.rows as usize * words];
        for p in parts.iter().flatten() {
            let at = p.rows.start as usize * words;
            let bits = if next { &p.next } else { &p.frontier.bits };
            full[at..at + bits.len()].copy_from_slice(bits);
        }
        full
    };
    let mut levels = Vec::new();
    let mut listed = false;
    // Rows questions found closed, over all backward levels.
    let (mut closed_rows, mut backward_levels) = (0, 0);
    // A level is kept with its rows' entries as its start or finish counted them.
    let counted_as_made = |parts: &Vec<Vec<OwnedPart>>, depth: u32| {
        for p in parts.iter().flatten() {
            let ones: Vec<u32> =
                p.next.chunks(words).map(|r| r.iter().map(|w| w.count_ones()).sum()).collect();
            assert_eq!(p.level_ones(), ones, "depth {depth}: each row's entries as made");
        }
    };
    let mut counts =
        parts.iter_mut().flatten().map(|p| p.start(space, counting)).fold(RowCounts::default(), |a, b| a + b);
    counted_as_made(&parts, 0);
    levels.push((Direction::Start, counts, full_of(&parts, true)));
    parts.iter_mut().flatten().for_each(|p| p.commit());
    while counts.entries > 0 {
        let depth = levels.len() as u32;
        let unvisited: u64 = parts.iter().flatten().map(|p| p.unvisited_entries()).sum();
        let frontier: u64 = parts.iter().flatten().map(|p| p.frontier.entries()).sum();
        assert_eq!(frontier, counts.entries);
        // The engine's weight, so that each level goes the engine's way (both ways are checked).
        let direction = Direction::choose(unvisited, frontier, space.pull_weight());
        backward_levels += usize::from(direction == Direction::Backward);
        // Messages: (to worker, part, bytes).
        let mut mail: Vec<(usize, u32, bytes::Bytes)> = Vec::new();
        match direction {
            Direction::Forward => {
                // Each way a worker may make its images, in turn by depth: pushed; pulled over
                // every column; pulled into its own parts against their unvisited entries
                // (pushed into the others'). Each must give the engine's level.
                let every = EveryColumn::new(space.column_count());
                for (from, own) in parts.iter().enumerate() {
                    let view = OwnedFrontier::new(cut, own.iter().map(|p| p.frontier.clone()));
                    for k in 0..cut.parts() {
                        let rows = cut.range(k);
                        let mut out = vec![0u64; rows.len() * words];
                        let mine = own.iter().find(|p| p.part == k);
                        match (depth % 3, mine) {
                            (1, _) => pull_hits(space, moves, rows, &every, &view, &mut out),
                            (2, Some(p)) => {
                                let open = FullRows::at(rows.start, &p.unvisited, words);
                                pull_hits(space, moves, rows, &open, &view, &mut out);
                            }
                            _ => {
                                push_images(space, moves, rows, &sources, &view, &mut out);
                            }
                        }
                        let bytes =
                            SparseRows::encode_rows(key(depth, k, from), &out, words, &|_| true, codec(from));
                        mail.push((owner[k as usize], k, bytes));
                    }
                }
            }
            _ => {
                // Each owner asks the owners of its open rows' neighbour rows in turn (itself
                // first), sending only the entries earlier answers left unreached, and merges
                // each answer before the next question, as a worker does: rows a question found
                // closed are not tested again.
                let views: Vec<OwnedFrontier> = parts
                    .iter()
                    .map(|own| OwnedFrontier::new(cut, own.iter().map(|p| p.frontier.clone())))
                    .collect();
                for (to, own) in parts.iter_mut().enumerate() {
                    for p in own.iter_mut() {
                        let (rows, mut closed) = (cut.range(p.part), Vec::new());
                        for peer in (0..workers).map(|i| (to + i) % workers) {
                            let next_to_peer = |r: u32| {
                                open_rows_for(space, moves, r, |s| {
                                    owner[(s / cut.rows_per_part) as usize] == peer
                                })
                            };
                            let mut misses = vec![0u64; rows.len() * words];
                            let wrote = p.misses(&mut closed, next_to_peer, &mut misses);
                            let asked = key(depth, p.part, to);
                            let bytes =
                                SparseRows::encode_rows(asked, &misses, words, &|i| wrote[i], codec(to));
                            let open = SparseRows::decode_rows(&bytes, asked, rows.len(), words).unwrap();
                            let open = open.to_rows();
                            let mut out = vec![0u64; rows.len() * words];
                            let open = FullRows::at(rows.start, &open, words);
                            pull_hits(space, moves, rows.clone(), &open, &views[peer], &mut out);
                            let answered = key(depth, p.part, peer);
                            let hits = SparseRows::encode_rows(answered, &out, words, &|_| true, codec(peer));
                            let hits = SparseRows::decode_rows(&hits, answered, rows.len(), words).unwrap();
                            hits.or_into(&mut p.next);
                        }
                        closed_rows += closed.iter().filter(|&&c| c).count();
                    }
                }
            }
        }
        // Delivered in an order unrelated to the senders'.
        mail.reverse();
        for (to, k, bytes) in mail {
            let part = parts[to].iter_mut().find(|p| p.part == k).expect("sent to the owner");
            let rows = part.rows.len();
            let set = (0..workers as u32)
                .find_map(|from| {
                    SparseRows::decode_rows(&bytes, key(depth, k, from as usize), rows, words).ok()
                })
                .expect("a message from some worker");
            set.or_into(&mut part.next);
        }
        counts = parts
            .iter_mut()
            .flatten()
            .map(|p| match direction {
                Direction::Backward => p.finish_backward(space, counting),
                _ => p.finish_forward(space, counting),
            })
            .fold(RowCounts::default(), |a, b| a + b);
        counted_as_made(&parts, depth);
        if counts.entries > 0 {
            levels.push((direction, counts, full_of(&parts, true)));
        }
        parts.iter_mut().flatten().for_each(|p| p.commit());
        // What a commit counts (the direction rule's input) is what the level counted.
        let found: u64 = parts.iter().flatten().map(|p| p.frontier_entries()).sum();
        assert_eq!(found, counts.entries, "depth {depth}: entries the commits found");
        listed |= parts.iter().flatten().any(|p| p.frontier.is_listed());
    }
    // Sparse frontiers are pushed from their column lists (where columns fit in 16 bits).
    assert!(listed || space.column_count() > 1 << 16, "no frontier was listed");
    assert!(backward_levels == 0 || closed_rows > 0, "no question found a closed row");
    levels
}

/// Ownerships as (parts, workers, interleaved): parts interleaved among the workers or in runs.
const EVERY_CUT: [(u32, usize, bool); 4] = [(1, 1, true), (5, 2, false), (7, 3, true), (16, 4, false)];

/// The two of [`EVERY_CUT`] with more than one part a worker, for the spaces whose searches
/// take seconds.
const TWO_CUTS: [(u32, usize, bool); 2] = [(7, 3, true), (16, 4, false)];

/// Checks the owned search against the engine for the ownerships `cuts` of `space`: the owner
/// of a part changes nothing.
fn agrees_with_engine<I: RowIndex>(
    space: &I,
    moves: &[Move],
    counting: Counting,
    cuts: &[(u32, usize, bool)],
) {
    let options = BfsOptions { positions_only: counting == Counting::Positions, ..Default::default() };
    let mut expected = Vec::new();
    bfs::run(space, moves, &options, |report, bits| {
        expected.push((report.direction, report.entries, bits.to_vec()))
    })
    .unwrap();
    let rows = space.row_count();
    let words = (space.column_count() as usize).div_ceil(64);
    for &(parts, workers, interleaved) in cuts {
        let cut = PartCut::new(rows, rows.div_ceil(parts));
        let n = cut.parts() as usize;
        let owner: Vec<usize> =
            (0..n).map(|k| if interleaved { k % workers } else { k * workers / n }).collect();
        let levels = owned_search(space, moves, cut, &owner, workers, counting);
        assert_eq!(levels.len(), expected.len(), "{workers} workers: depth");
        for (d, ((dir, counts, bits), (e_dir, e_entries, e_bits))) in levels.iter().zip(&expected).enumerate()
        {
            assert_eq!((dir, counts.entries), (e_dir, *e_entries), "{workers} workers, depth {d}");
            let (a, b) = (FullRows::new(bits, words), FullRows::new(e_bits, words));
            for r in 0..rows {
                use shared::bfs::task::RowBits;
                assert_eq!(a.row(r), b.row(r), "{workers} workers, depth {d}, row {r}");
            }
        }
    }
}

#[test]
fn corners_owned_levels_are_the_engines() {
    let space = RowSpace::new(corner_tetrads());
    agrees_with_engine(&space, &MoveSet::Htm.moves(), Counting::Classes, &EVERY_CUT);
    agrees_with_engine(&space, &MoveSet::Qtm.moves(), Counting::Classes, &EVERY_CUT);
}

#[test]
#[ignore = "full tier: 34 s on 2 cores (scripts/test-full.sh); corners and h48h0 in CI check the same owned levels"]
fn hprime_owned_levels_are_the_engines() {
    let space = KociembaSpace::new(false);
    agrees_with_engine(&space, &MoveSet::KociembaH.moves(), Counting::Classes, &TWO_CUTS);
}

#[test]
fn h48h0_owned_levels_are_the_engines() {
    let space = SymProductSpace::h0(&H48Coords);
    agrees_with_engine(&space, &MoveSet::Htm.moves(), Counting::Positions, &TWO_CUTS);
}
