//! Kociemba's H and H' by the row engine: both complete against Rokicki's published table, and the
//! class columns (under the 16 symmetries of H) against a brute-force search that canonicalizes
//! whole cubes.

use shared::bfs::{self, reference, BfsOptions};
use shared::cube::{Cube, MoveSet, SplitMix64, SymmetryGroup};
use shared::report::DepthCounts;
use shared::space::{KociembaSpace, RowIndex};

/// Rokicki's phase2prune: positions of H and of H' at distances 0..18 in H's moves.
const H: [u64; 19] = [
    1, 10, 67, 456, 3079, 19948, 123074, 736850, 4185118, 22630733, 116767872, 552538680, 2176344160,
    5627785188, 7172925794, 3608731814, 224058996, 1575608, 1352,
];
const H_PRIME: [u64; 19] = [
    1, 10, 67, 420, 2335, 12260, 61038, 291004, 1327429, 5821374, 24141784, 89480354, 262907144, 485409604,
    508704668, 232904952, 14508468, 129376, 112,
];

fn run(space: &KociembaSpace, max_depth: Option<u32>) -> Vec<DepthCounts> {
    bfs::run(space, space.moves(), &BfsOptions { max_depth, ..Default::default() }, |_, _| {}).unwrap()
}

#[test]
fn h_prime_is_complete_and_matches_rokickis_phase2prune() {
    let space = KociembaSpace::new(false);
    let counts = run(&space, None);
    let positions: Vec<u64> = counts.iter().map(|d| d.positions).collect();
    assert_eq!(positions, H_PRIME);
    assert_eq!(positions.iter().sum::<u64>(), space.order());
    assert_eq!(space.order(), 40320 * 40320);
}

#[test]
#[ignore = "full tier: 40 s on 2 cores (scripts/test-full.sh); H' in CI runs the same engine"]
fn h_is_complete_and_matches_rokickis_phase2prune() {
    let space = KociembaSpace::new(true);
    let positions: Vec<u64> = run(&space, None).iter().map(|d| d.positions).collect();
    assert_eq!(positions, H);
    assert_eq!(H.iter().sum::<u64>(), space.order(), "Rokicki's published column sums to 8!·8!·4!/2");
}

#[test]
fn the_columns_marked_unreachable_are_those_of_the_wrong_parity() {
    let space = KociembaSpace::new(true);
    let words = (space.column_count() as usize).div_ceil(64);
    let mut rng = SplitMix64::new(5);
    for row in [0, 1, 2, 100, 2767] {
        let mut bits = vec![0u64; words];
        space.mark_unreachable(row, &mut bits);
        assert_eq!(bits.iter().map(|w| w.count_ones()).sum::<u32>(), space.column_count() / 2);
        for _ in 0..2000 {
            let column = rng.below(space.column_count() as u64) as u32;
            let x = space.position(row, column);
            let unreachable = x.corners.parity() != x.edges.parity();
            assert_eq!(bits[column as usize / 64] >> (column % 64) & 1 == 1, unreachable, "{row} {column}");
        }
    }
}

#[test]
fn class_columns_match_brute_force_canonicalization() {
    let moves = MoveSet::KociembaH.moves();
    let h = reference::brute_force_distribution(&moves, SymmetryGroup::UdAxis, 6, |x| *x);
    assert_eq!(run(&KociembaSpace::new(true), Some(6)), h);
    let forget_slice = |x: &Cube| {
        let mut y = *x;
        y.edges.perm[8..].copy_from_slice(&[8, 9, 10, 11]);
        y
    };
    let h_prime = reference::brute_force_distribution(&moves, SymmetryGroup::UdAxis, 6, forget_slice);
    assert_eq!(run(&KociembaSpace::new(false), Some(6)), h_prime);
}
