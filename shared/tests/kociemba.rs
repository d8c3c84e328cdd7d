//! Kociemba's H and H' by the row engine: H' complete against seed 003's table, H to depth 12
//! against it, and the class columns (under the 16 symmetries of H) against a brute-force
//! search that canonicalizes whole cubes.

use shared::bfs::{self, reference, BfsOptions, DepthCounts, KociembaSpace};
use shared::cube::{Cube, MoveSet, SymmetryGroup};

/// Seed 003: positions of H and of H' at distances 0..18 in H's moves.
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
fn h_prime_is_complete_and_matches_seed_003() {
    let space = KociembaSpace::new(false);
    let counts = run(&space, None);
    let positions: Vec<u64> = counts.iter().map(|d| d.positions).collect();
    assert_eq!(positions, H_PRIME);
    assert_eq!(positions.iter().sum::<u64>(), space.order());
    assert_eq!(space.order(), 40320 * 40320);
}

#[test]
fn h_to_depth_12_matches_seed_003() {
    let space = KociembaSpace::new(true);
    let positions: Vec<u64> = run(&space, Some(12)).iter().map(|d| d.positions).collect();
    assert_eq!(positions, H[..13]);
    assert_eq!(H.iter().sum::<u64>(), space.order(), "seed 003's column sums to 8!·8!·4!/2");
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
