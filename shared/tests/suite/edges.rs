//! The edges-only cube (12! x 2^11 = 980,995,276,800 positions) by the row engine, to depth 7
//! in the face-turn metric and depth 8 in the quarter-turn metric, against Jerry Bryan's
//! published tables (Bryan's edges-only report) in all three columns. One test, so the 8 GiB
//! of state is mapped once at a time. The whole distributions in both metrics are ignored
//! tests of the full tier (`scripts/test-full.sh`): 5 minutes and 8.7 GiB each on 2 cores.

use shared::bfs::{self, BfsOptions};
use shared::coord::edge_slices;
use shared::cube::{MoveSet, SplitMix64};
use shared::space::{for_each_bit, InverseFilter, RowIndex, RowSpace};

use crate::common::{expected, EDGES_HTM, EDGES_QTM};

#[test]
fn edges_match_bryans_tables_to_depth_7_htm_and_8_qtm_with_qtm_parity() {
    let mut space = RowSpace::new(edge_slices());
    let words = (space.column_count() as usize).div_ceil(64);

    // The three-probe column maps against locating every image directly.
    let mut rng = SplitMix64::new(5);
    for _ in 0..300 {
        let row = rng.below(space.row_count() as u64) as u32;
        for m in shared::cube::Move::all() {
            let t = space.transition(row, m);
            for _ in 0..20 {
                let c = rng.below(space.column_count() as u64) as u32;
                let y = space.position(row, c).compose(&m.cube().edges);
                assert_eq!(space.locate(&y), (t.target, t.map.apply(c)), "row {row} move {m} column {c}");
            }
        }
    }

    // The inverse filter by groups of 24 columns against testing every set column. Rows of
    // 13,824 columns fill their 216 words, so any bit pattern is a row: sparse, about 12 %,
    // about 63 %, full.
    assert_eq!(space.column_count() % 64, 0);
    let mut rng = SplitMix64::new(23);
    let mut counted = Vec::new();
    for _ in 0..300 {
        let row = rng.below(space.row_count() as u64) as u32;
        let filter = space.inverse_filter(row);
        for ones in [1, 8, 64, 0] {
            let bits: Vec<u64> = (0..words)
                .map(|_| if ones == 0 { u64::MAX } else { (0..ones).fold(0, |w, _| w | 1 << rng.below(64)) })
                .collect();
            let mut by_column = Vec::new();
            for_each_bit(&bits, |c| {
                if filter.candidate(c) {
                    by_column.push(c)
                }
            });
            let mut by_group = Vec::new();
            filter.for_each_candidate(&bits, |c| by_group.push(c));
            assert_eq!(by_group, by_column, "row {row}, {ones} random bits a word");
            counted.push((row, space.count_row(row, &bits), bits));
        }
    }

    let htm = BfsOptions { max_depth: Some(7), ..Default::default() };
    let counts = bfs::run(&space, &MoveSet::Htm.moves(), &htm, |_, _| {}).unwrap();
    assert_eq!(counts, expected(&EDGES_HTM[..=7]));

    // In the quarter-turn metric every move is an odd edge permutation, so a position's depth
    // has the parity of its edge permutation: check a sample of every level's entries.
    let qtm = BfsOptions { max_depth: Some(8), ..Default::default() };
    let mut rng = SplitMix64::new(17);
    let mut checked = 0;
    let counts = bfs::run(&space, &MoveSet::Qtm.moves(), &qtm, |level, bits| {
        let odd = level.counts.depth % 2 == 1;
        // Every entry of small levels, a random sample of entries of large ones.
        let rows = space.row_count() as u64;
        let stride = (rows / 3000).max(1);
        let mut row = rng.below(stride);
        while row < rows {
            let row_bits = &bits[row as usize * words..][..words];
            for (w, &word) in row_bits.iter().enumerate() {
                let mut bitset = word;
                while bitset != 0 {
                    let column = w as u32 * 64 + bitset.trailing_zeros();
                    assert_eq!(
                        space.position(row as u32, column).parity(),
                        odd,
                        "depth {}",
                        level.counts.depth
                    );
                    checked += 1;
                    bitset &= bitset - 1;
                }
            }
            row += if level.entries < 100_000 { 1 } else { stride };
        }
    })
    .unwrap();
    assert_eq!(counts, expected(&EDGES_QTM[..=8]));
    assert!(checked > 20_000, "parity checked on {checked} entries");

    // A worker's shrunk space lists each row's members and locates inverses by conjugation:
    // the same counts, self-inverse classes included.
    space.shrink();
    for (row, whole, bits) in counted {
        assert_eq!(space.count_row(row, &bits), whole, "row {row} shrunk");
    }
}

#[test]
fn small_depths_match_brute_force_canonicalization() {
    // Independent of both the engine and the seed: whole cubes in a hash set, corners cleared.
    let clear_corners =
        |x: &shared::cube::Cube| shared::cube::Cube { corners: shared::cube::Corners::IDENTITY, ..*x };
    for (set, depth) in [(MoveSet::Htm, 4), (MoveSet::Qtm, 5)] {
        let brute = shared::bfs::reference::brute_force_distribution(
            &set.moves(),
            shared::cube::SymmetryGroup::Full,
            depth,
            clear_corners,
        );
        let table = if set == MoveSet::Htm { &EDGES_HTM[..] } else { &EDGES_QTM[..] };
        assert_eq!(brute, expected(&table[..=depth as usize]), "{set:?}");
    }
}

/// Every depth of a whole edges search: the published rows in all three columns, and positions
/// summing to the group order.
fn whole_distribution(moves: MoveSet, published: &[(u64, u64, u64)]) {
    let space = RowSpace::new(edge_slices());
    let counts = bfs::run(&space, &moves.moves(), &BfsOptions::default(), |_, _| {}).unwrap();
    assert_eq!(counts[..published.len()], expected(published)[..]);
    let total: u64 = counts.iter().map(|c| c.positions).sum();
    assert_eq!(total, space.order(), "positions sum to 12! x 2^11");
}

#[test]
#[ignore = "full tier: 5 minutes and 8.7 GiB (scripts/test-full.sh)"]
fn the_whole_edges_distribution_in_face_turns() {
    whole_distribution(MoveSet::Htm, &EDGES_HTM);
}

#[test]
#[ignore = "full tier: 5 minutes and 8.7 GiB (scripts/test-full.sh)"]
fn the_whole_edges_distribution_in_quarter_turns() {
    whole_distribution(MoveSet::Qtm, &EDGES_QTM);
}
