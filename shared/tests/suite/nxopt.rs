//! nxopt's smallest table, EO1EP1, built here and checked without the builder: its group minima
//! against its values, positions and groups against an IDA* over the cosets' raw coordinates
//! (no symmetry, no row BFS), and its level sums against the space's size.

use shared::bfs::{self, BfsOptions};
use shared::coord::nxopt::{NxoptKind, ROWS};
use shared::cube::MoveSet;
use shared::nxopt::{self, summarize, LevelWriter, HEADER_BYTES};
use shared::space::nxopt_space;

fn build(kind: NxoptKind) -> Vec<u8> {
    let space = nxopt_space(kind);
    let mut file = vec![0u8; HEADER_BYTES + kind.table_bytes() as usize];
    file[..HEADER_BYTES].copy_from_slice(&nxopt::header(kind));
    let mut writer = LevelWriter::new(kind, &mut file[HEADER_BYTES..]);
    let options =
        BfsOptions { max_depth: Some(kind.base() as u32 + 2), positions_only: true, ..Default::default() };
    bfs::run(&space, &MoveSet::Htm.moves(), &options, |report, bits| {
        writer.record(report.counts.depth as u8, report.entries, bits)
    })
    .unwrap();
    file
}

#[test]
fn eo1ep1_agrees_with_an_independent_search() {
    let kind = NxoptKind::parse("EO1EP1").unwrap();
    let file = build(kind);
    assert_eq!(nxopt::kind_of_file(&file[..4], file.len() as u64), Some(kind));
    let summary = summarize(kind, &file[HEADER_BYTES..]);
    assert_eq!((summary.bad_minima, summary.bad_unused), (0, 0));
    // Every coset has an entry: 9930 rows x 495 occupancies x 16 flips.
    assert_eq!(summary.value_counts.iter().sum::<u64>(), ROWS as u64 * 495 * 16);
    let mut failures = nxopt::verify(kind, &file, 400, &mut |_, _| {});
    assert!(failures.is_empty(), "{failures:?}");

    // The checks catch damage: one entry of the solved coset's row changed.
    let mut damaged = file.clone();
    damaged[HEADER_BYTES] ^= 0b0011_0000; // row 0, field 2: the identity
    failures = nxopt::verify(kind, &damaged, 40, &mut |_, _| {});
    assert!(!failures.is_empty());
}
