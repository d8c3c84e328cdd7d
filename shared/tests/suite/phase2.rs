//! Rokicki's phase-2 table against his published distributions: its rows weighted by the
//! size of their corner class give H''s distribution (distances 0 and 1 share value 0, 16 and
//! more value 15), and the checksum cube20src stores is its algorithm over the bytes written.

use shared::bfs::{bfs_depths, BfsOptions, Depths};
use shared::cube::SplitMix64;
use shared::phase2::{self, checksum, entry, value_of, weighted_value_counts, H2Search, FILE_BYTES};
use shared::space::{KociembaSpace, RowIndex};

/// Rokicki's phase2prune: positions of H' at distances 0..18 in H's moves.
const H_PRIME: [u64; 19] = [
    1, 10, 67, 420, 2335, 12260, 61038, 291004, 1327429, 5821374, 24141784, 89480354, 262907144, 485409604,
    508704668, 232904952, 14508468, 129376, 112,
];

/// H''s space and its distances, searched once for both tests.
fn h_prime() -> &'static (KociembaSpace, Depths) {
    static SEARCHED: std::sync::OnceLock<(KociembaSpace, Depths)> = std::sync::OnceLock::new();
    SEARCHED.get_or_init(|| {
        let space = KociembaSpace::new(false);
        let depths = bfs_depths(&space, space.moves(), &BfsOptions::default()).unwrap();
        (space, depths)
    })
}

#[test]
fn the_phase2_table_weighted_by_class_sizes_is_rokickis_h_prime_column() {
    let (space, depths) = h_prime();
    let built = phase2::build(space, depths);
    let mut want = [0u64; 16];
    for (d, &n) in H_PRIME.iter().enumerate() {
        want[value_of(d as u8) as usize] += n;
    }
    assert_eq!(weighted_value_counts(&built.table, &built.class_sizes), want);
    assert_eq!(built.class_sizes.iter().map(|&s| s as u64).sum::<u64>(), 40320);
    assert_eq!(built.value_counts.iter().sum::<u64>(), 2768 * 40320);
    assert_eq!(built.depth_counts.iter().sum::<u64>(), 2768 * 40320);
    // The solved position: row 0 (corner coordinate 0), column 0.
    assert_eq!(entry(&built.table, 0), 0);
    let file = built.file_bytes();
    assert_eq!(file.len(), FILE_BYTES);
    let stored = i32::from_le_bytes(file[FILE_BYTES - 4..].try_into().unwrap());
    assert_eq!(stored, checksum(&file[..FILE_BYTES - 4]));
}

#[test]
fn verify_passes_a_built_table_and_refuses_a_damaged_one_and_the_direct_search_agrees_with_the_bfs() {
    let (space, depths) = h_prime();
    let search = H2Search::default();
    let mut rng = SplitMix64::new(3);
    for _ in 0..20 {
        let (row, column) = (rng.below(2768) as u32, rng.below(40320) as u32);
        let x = space.position(row, column);
        let c = shared::coord::rank::perm_rank(&x.corners.perm);
        let e = shared::coord::rank::perm_rank(&x.edges.perm[..8]);
        let d = depths.values[(row * space.column_count() + column) as usize];
        assert_eq!(search.distance(c, e), d, "row {row} column {column}");
    }
    let mut file = phase2::build(space, depths).file_bytes();
    assert_eq!(phase2::verify(&file, 30, &mut |_, _| {}), Vec::<String>::new());
    file[1000] ^= 0x10;
    let failures = phase2::verify(&file, 0, &mut |_, _| {});
    assert!(failures.iter().any(|f| f.starts_with("checksum")), "{failures:?}");
}
