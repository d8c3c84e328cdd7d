//! Rokicki's phase-2 pruning table (cube20src's `phase2prune`): the distance of every
//! position of H' (Kociemba's H with the E-slice permutation forgotten) in H's 10 moves, laid
//! out exactly as cube20src writes `p2p1h.dat` (`docs/rokicki-tables.md`).
//!
//! Rows are the 2768 classes of the corner permutation under the 16 symmetries of H, in the
//! order of each class's smallest cubepos corner coordinate; columns the 40,320 cubepos edge
//! coordinates of the position conjugated onto that smallest member. The distances come from the
//! row BFS of [`KociembaSpace`] (H'), whose rows are the same classes in another numbering and
//! whose self-symmetric rows hold every symmetric variant, so any symmetry that brings a class's
//! smallest member onto our representative reads the same values.

use crate::bfs::Depths;
use crate::coord::cubepos::{corner_coord, corners_by_coord, edges_by_coord, PHASE2_VALUES};
use crate::coord::rank::perm_rank;
use crate::coord::ColumnMapper;
use crate::report::Findings;
use crate::space::{KociembaSpace, RowIndex};
use rayon::prelude::*;

/// Rows: corner permutation classes under the 16 symmetries of H.
pub const ROWS: usize = 2768;
/// Columns: the edge coordinate.
pub const COLUMNS: usize = PHASE2_VALUES as usize;
/// Bytes of the table (4 bits an entry).
pub const TABLE_BYTES: usize = ROWS * COLUMNS / 2;
/// Bytes of cube20src's file: the table, then its checksum.
pub const FILE_BYTES: usize = TABLE_BYTES + 4;

/// The 4-bit value cube20src stores for distance `d`: 0 for 0 and 1, `d - 1` up to 14, 15 from
/// distance 16 on.
pub fn value_of(d: u8) -> u8 {
    d.saturating_sub(1).min(15)
}

/// cube20src's checksum of the table: over its little-endian 32-bit words, `h = 37 h + w`
/// modulo 2^32, read as a signed integer.
pub fn checksum(table: &[u8]) -> i32 {
    table.chunks_exact(4).fold(0u32, |h, w| {
        h.wrapping_mul(37).wrapping_add(u32::from_le_bytes(w.try_into().expect("4 bytes")))
    }) as i32
}

/// The value of entry `offset` (row * 40320 + column) of the table: byte `offset / 2`, the low
/// nibble for an even offset.
pub fn entry(table: &[u8], offset: usize) -> u8 {
    table[offset / 2] >> (4 * (offset % 2)) & 15
}

/// The built table with what was counted while writing it.
pub struct Phase2Table {
    /// The table's bytes, without the trailing checksum.
    pub table: Vec<u8>,
    /// Entries at each exact distance.
    pub depth_counts: Vec<u64>,
    /// Entries holding each 4-bit value.
    pub value_counts: [u64; 16],
    /// Per table row, the number of corner permutations its class holds.
    pub class_sizes: Vec<u32>,
}

impl Phase2Table {
    /// cube20src's file: the table and its checksum.
    pub fn file_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FILE_BYTES);
        out.extend_from_slice(&self.table);
        out.extend_from_slice(&checksum(&self.table).to_le_bytes());
        out
    }
}

/// The table rows: for each, its smallest cubepos corner coordinate, in increasing order.
pub fn row_minima(space: &KociembaSpace) -> Vec<u32> {
    let classes = space.classes();
    let mut minimum = vec![u32::MAX; classes.class_count()];
    for (coord, x) in corners_by_coord().iter().enumerate() {
        let class = classes.class_of(perm_rank(&x.perm)) as usize;
        minimum[class] = minimum[class].min(coord as u32);
    }
    minimum.sort_unstable();
    minimum
}

/// Writes the table from the exact distances of `space` (H', from [`crate::bfs::bfs_depths`]).
pub fn build(space: &KociembaSpace, depths: &Depths) -> Phase2Table {
    assert_eq!(space.column_count() as usize, COLUMNS, "the phase-2 table is over H'");
    let classes = space.classes();
    let minima = row_minima(space);
    assert_eq!(minima.len(), ROWS);
    let corners = corners_by_coord();
    // Our column (the U/D edge rank) of each cubepos edge coordinate, before conjugation.
    let columns: Vec<u32> = edges_by_coord().iter().map(|e| perm_rank(&e.perm[..8])).collect();
    let max_depth = depths.counts.len();
    let mut table = vec![0u8; TABLE_BYTES];
    let per_row: Vec<(Vec<u64>, [u64; 16], u32)> = table
        .par_chunks_mut(COLUMNS / 2)
        .zip(&minima)
        .map(|(out, &coord)| {
            let raw = perm_rank(&corners[coord as usize].perm);
            debug_assert_eq!(corner_coord(&corners[coord as usize]), coord);
            let row = classes.class_of(raw) as usize;
            let map = space.symmetry_map(classes.to_rep(raw));
            let ours = &depths.values[row * COLUMNS..][..COLUMNS];
            let mut counts = vec![0u64; max_depth];
            let mut values = [0u64; 16];
            for (pair, byte) in columns.chunks_exact(2).zip(out.iter_mut()) {
                let d = [ours[map.apply(pair[0]) as usize], ours[map.apply(pair[1]) as usize]];
                let v = d.map(value_of);
                *byte = v[0] | v[1] << 4;
                for k in 0..2 {
                    counts[d[k] as usize] += 1;
                    values[v[k] as usize] += 1;
                }
            }
            (counts, values, classes.class_size(row as u32))
        })
        .collect();
    let mut depth_counts = vec![0u64; max_depth];
    let mut value_counts = [0u64; 16];
    for (counts, values, _) in &per_row {
        depth_counts.iter_mut().zip(counts).for_each(|(a, b)| *a += b);
        value_counts.iter_mut().zip(values).for_each(|(a, b)| *a += b);
    }
    let class_sizes = per_row.iter().map(|r| r.2).collect();
    Phase2Table { table, depth_counts, value_counts, class_sizes }
}

/// Positions of H' per 4-bit value: each row's entries weighted by the size of its class.
pub fn weighted_value_counts(table: &[u8], class_sizes: &[u32]) -> [u64; 16] {
    let mut out = [0u64; 16];
    for (row, &size) in table.chunks_exact(COLUMNS / 2).zip(class_sizes) {
        let mut counts = [0u64; 16];
        for &b in row {
            counts[(b & 15) as usize] += 1;
            counts[(b >> 4) as usize] += 1;
        }
        out.iter_mut().zip(counts).for_each(|(o, c)| *o += c * size as u64);
    }
    out
}

/// An exact search of H' distances that shares nothing with the row BFS: IDA* over (corner
/// permutation, U/D edge permutation) ranks with move tables of H's 10 moves, bounded below by
/// the distances of the two permutations alone (each from a plain BFS over its 8! values).
pub struct H2Search {
    moves: usize,
    corner_moves: Vec<u16>,
    edge_moves: Vec<u16>,
    corner_depth: Vec<u8>,
    edge_depth: Vec<u8>,
}

impl Default for H2Search {
    fn default() -> Self {
        use crate::coord::rank::perm_unrank;
        use crate::cube::{Corners, Edges, MoveSet};
        let moves = MoveSet::KociembaH.moves();
        let corner_moves: Vec<u16> = (0..PHASE2_VALUES)
            .flat_map(|r| {
                let mut x = Corners::IDENTITY;
                perm_unrank(r, &mut x.perm);
                moves
                    .iter()
                    .map(move |m| perm_rank(&x.compose(&m.cube().corners).perm) as u16)
                    .collect::<Vec<_>>()
            })
            .collect();
        let edge_moves: Vec<u16> = (0..PHASE2_VALUES)
            .flat_map(|r| {
                let mut x = Edges::IDENTITY;
                perm_unrank(r, &mut x.perm[..8]);
                moves
                    .iter()
                    .map(move |m| perm_rank(&x.compose(&m.cube().edges).perm[..8]) as u16)
                    .collect::<Vec<_>>()
            })
            .collect();
        let n = moves.len();
        let depth = |table: &[u16]| {
            let mut d = vec![u8::MAX; COLUMNS];
            d[0] = 0;
            let mut frontier = vec![0usize];
            let mut level = 0;
            while !frontier.is_empty() {
                level += 1;
                let mut next = Vec::new();
                for v in frontier {
                    for &w in &table[v * n..][..n] {
                        if d[w as usize] == u8::MAX {
                            d[w as usize] = level;
                            next.push(w as usize);
                        }
                    }
                }
                frontier = next;
            }
            d
        };
        let (corner_depth, edge_depth) = (depth(&corner_moves), depth(&edge_moves));
        H2Search { moves: n, corner_moves, edge_moves, corner_depth, edge_depth }
    }
}

impl H2Search {
    /// The distance in H' of the position with corner rank `c` and U/D edge rank `e` (ranks of
    /// our position -> cubie arrays).
    pub fn distance(&self, c: u32, e: u32) -> u8 {
        let mut bound = self.bound(c as usize, e as usize);
        loop {
            if self.search(c as usize, e as usize, 0, bound) {
                return bound;
            }
            bound += 1;
        }
    }

    fn bound(&self, c: usize, e: usize) -> u8 {
        self.corner_depth[c].max(self.edge_depth[e])
    }

    fn search(&self, c: usize, e: usize, g: u8, bound: u8) -> bool {
        if c == 0 && e == 0 {
            return true;
        }
        if g + self.bound(c, e) > bound {
            return false;
        }
        (0..self.moves).any(|m| {
            let (c2, e2) = (self.corner_moves[c * self.moves + m], self.edge_moves[e * self.moves + m]);
            self.search(c2 as usize, e2 as usize, g + 1, bound)
        })
    }
}

/// Checks a phase-2 table file without trusting the builder: its length and checksum, its values
/// weighted by class size summing to the order of H', and `samples` random entries against
/// [`H2Search`]; each check goes to `report` as it finishes. Returns the failed checks.
pub fn verify(file: &[u8], samples: u32, report: &mut dyn FnMut(bool, &str)) -> Vec<String> {
    use crate::cube::SplitMix64;
    let mut findings = Findings::new(report);
    if file.len() != FILE_BYTES {
        findings.check(false, format!("{} bytes, a phase-2 table file has {FILE_BYTES}", file.len()));
        return findings.into_failures();
    }
    let (table, stored) = file.split_at(TABLE_BYTES);
    let stored = i32::from_le_bytes(stored.try_into().expect("4 bytes"));
    let computed = checksum(table);
    findings.check(stored == computed, format!("checksum {stored} (computed {computed})"));
    let space = KociembaSpace::new(false);
    let minima = row_minima(&space);
    let classes = space.classes();
    let corners = corners_by_coord();
    let sizes: Vec<u32> = minima
        .iter()
        .map(|&c| classes.class_size(classes.class_of(perm_rank(&corners[c as usize].perm))))
        .collect();
    let weighted = weighted_value_counts(table, &sizes);
    findings.check(
        weighted.iter().sum::<u64>() == 40320 * 40320,
        format!("values weighted by class size: {weighted:?}, summing to 8! x 8!"),
    );
    findings.check(entry(table, 0) == 0, "the solved position reads 0".into());
    let search = H2Search::default();
    let edges = edges_by_coord();
    let mut rng = SplitMix64::new(2768);
    let picks: Vec<(usize, usize)> =
        (0..samples).map(|_| (rng.below(ROWS as u64) as usize, rng.below(COLUMNS as u64) as usize)).collect();
    let wrong: Vec<String> = picks
        .par_iter()
        .filter_map(|&(row, column)| {
            let c = perm_rank(&corners[minima[row] as usize].perm);
            let e = perm_rank(&edges[column].perm[..8]);
            let d = search.distance(c, e);
            let v = entry(table, row * COLUMNS + column);
            (v != value_of(d))
                .then(|| format!("row {row} column {column} reads {v}, a direct search says {d}"))
        })
        .collect();
    for w in &wrong {
        findings.note(false, w);
    }
    findings.check(
        wrong.is_empty(),
        format!("{samples} random entries against a direct search ({} wrong)", wrong.len()),
    );
    findings.into_failures()
}
