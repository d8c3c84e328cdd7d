//! Published tables the integration tests compare against.

use shared::report::DepthCounts;

/// Bryan's edges-only report, face turns, depths 0..=10: positions,
/// representatives under M, under M and inversion.
pub const EDGES_HTM: [(u64, u64, u64); 11] = [
    (1, 1, 1),
    (18, 2, 2),
    (243, 9, 8),
    (3240, 75, 48),
    (42807, 925, 505),
    (555866, 11684, 6018),
    (7070103, 147680, 74618),
    (87801812, 1830601, 918432),
    (1050559626, 21890847, 10960057),
    (11588911021, 241449652, 120788522),
    (110409721989, 2300251615, 1150428080),
];

/// Bryan's edges-only report, quarter turns, depths 0..=11.
pub const EDGES_QTM: [(u64, u64, u64); 12] = [
    (1, 1, 1),
    (12, 1, 1),
    (114, 5, 5),
    (1068, 25, 17),
    (9819, 215, 128),
    (89392, 1886, 986),
    (807000, 16902, 8652),
    (7209384, 150442, 75740),
    (63624107, 1326326, 665398),
    (552158812, 11505339, 5759523),
    (4643963023, 96755918, 48408203),
    (36003343336, 750089528, 375164394),
];

/// A published table's first rows as depth counts.
pub fn expected(table: &[(u64, u64, u64)]) -> Vec<DepthCounts> {
    table
        .iter()
        .enumerate()
        .map(|(d, &(positions, classes_sym, classes_sym_inv))| DepthCounts {
            depth: d as u32,
            positions,
            classes_sym,
            classes_sym_inv,
        })
        .collect()
}
