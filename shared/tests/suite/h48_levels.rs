//! The hN builder against other methods: its h11 levels against a hash-set BFS over whole cubes
//! projected onto their h11 coset, and its whole reduction (levels to depth 9, folded onto h0's
//! columns row by row, lines merged at the row boundaries) against the h0 table the row BFS of
//! the (cocsep class, esep) index makes: a different index, engine and packer.

use shared::bfs::reference::brute_force_distribution;
use shared::bfs::{bfs_depths, BfsOptions};
use shared::coord::h48::H48Coords;
use shared::cube::{MoveSet, SymmetryGroup};
use shared::h48::table::{line_count, LINE_BYTES};
use shared::h48::{h48_section, merge_line, H11Rows, Level, RowScratch};
use shared::space::SymProductSpace;
use std::sync::atomic::AtomicU64;

#[test]
fn h11_levels_and_h0_folded_out_of_them_agree_with_independent_methods() {
    let coords = H48Coords;
    let index = H11Rows::new(&coords);
    let done = AtomicU64::new(0);
    let mut levels: Vec<Level> = vec![index.first_level()];
    for _ in 1..=9 {
        let n = levels.len();
        let next = index.next_level(&levels[n - 1], n.checked_sub(2).map(|k| &levels[k]), &done);
        levels.push(next);
    }

    // Coset values per depth (entries weighted by their row's class size) against a hash-set
    // BFS over whole cubes projected onto (cocsep, eoesep), to depth 5.
    let classes = &index.space().classes();
    let project = |x: &shared::cube::Cube| coords.position(coords.cocsep(x), coords.eoesep(x));
    let brute = brute_force_distribution(&MoveSet::Htm.moves(), SymmetryGroup::Full, 5, project);
    for c in &brute {
        let level = &levels[c.depth as usize];
        let values: u64 = level
            .rows
            .iter()
            .enumerate()
            .map(|(r, set)| set.len() * classes.class_size(r as u32) as u64)
            .sum();
        assert_eq!(values, c.positions, "h11 values at depth {}", c.depth);
    }

    // h0 made as hN tables are made, against the h0 row BFS.
    let space = SymProductSpace::h0(&coords);
    let depths = bfs_depths(&space, &MoveSet::Htm.moves(), &BfsOptions::default()).unwrap();
    let want = h48_section(0, &depths);
    let mut table = vec![0u8; line_count(want.info.entries) as usize * LINE_BYTES];
    let mut written = vec![false; table.len() / LINE_BYTES];
    let mut s = RowScratch::default();
    let mut counts = vec![0u64; 11];
    for row in 0..index.rows() {
        let lines = index.table_row(row, 0, &levels, None, &mut s);
        for (c, r) in counts.iter_mut().zip(&lines.counts) {
            *c += r;
        }
        for k in 0..lines.line_count() as usize {
            let l = lines.first_line as usize + k;
            let at = &mut table[l * LINE_BYTES..][..LINE_BYTES];
            if written[l] {
                merge_line(at, lines.line(k));
            } else {
                at.copy_from_slice(lines.line(k));
                written[l] = true;
            }
        }
    }
    assert_eq!(counts, want.info.depth_counts[..11], "h0 entries per depth to 10");
    assert!(table == want.data, "h0 folded out of the h11 levels differs from the h0 BFS table");
}
