//! The solver's tables against its test vectors, and independent checks of the h0 and edge
//! fallback distances.

use super::*;
use crate::bfs::{bfs_depths, reference::brute_force_distribution, BfsOptions, Depths};
use crate::coord::h48::solver;
use crate::coord::h48::{solver_esep_words, EoEsepColumns, H48Coords, EO, ESEP};
use crate::cube::{Cube, Move, MoveSet, SplitMix64, SymmetryGroup};
use crate::space::RowIndex;
use crate::space::{EoEsepSpace, SymProductSpace};

/// The H48 solver's documentation: the solver's cocsep table, its first classes and esep words.
#[test]
fn the_solver_tables_match_its_test_vectors() {
    let coords = H48Coords;
    let cocsep = coords.cocsep_table();
    let w = |v: usize| cocsep.words[v];
    for (v, want) in [
        (0, 0xFFFF_FFFFu32),
        (7, 0x05BA_0406),
        (15, 0x0002_0002),
        (60, 0x0001_0401),
        (67, 0x0001_0001),
        (112, 0),
        (113, 0x018B_0105),
        (127, 0xFFFF_FFFF),
        (240, 0x06CA_0607),
    ] {
        assert_eq!(w(v), want, "cocsep word {v}: {:08x}", w(v));
    }
    let reps = [112, 67, 15, 131_619, 42, 131_686, 121_137, 111_379, 162_866, 34_855, 219_179, 145_075];
    let masks: [u64; 12] = [
        0xffff_ffff_ffff,
        0x0f00_000f,
        0xff00_00ff,
        0x1,
        0x4400_0011,
        0x1400_0041,
        0x81,
        0x1,
        0x21,
        0x21,
        0x81,
        0x5000_0005,
    ];
    for (k, (&rep, &mask)) in reps.iter().zip(&masks).enumerate() {
        assert_eq!(cocsep.classes.rep(k as u32), rep, "class {k}");
        // The mask's bit t is the solver's transformation t.
        let stab = cocsep.classes.stabilizer(k as u32);
        let solver_mask =
            (0..48).filter(|&t| stab >> solver::solver_sym(t).index() & 1 == 1).fold(0u64, |m, t| m | 1 << t);
        assert_eq!(solver_mask, mask, "stabilizer of class {k}");
    }
    let section = cocsep_section(&cocsep);
    assert_eq!(section.info.depth_counts, [1, 6, 63, 468, 3068, 15438, 53814, 71352, 8784, 96]);

    let esep = coords.esep_coord();
    let words = solver_esep_words(&esep, &coords.esep_classes(&esep));
    let want = [
        0x0000_2600u32,
        0x0001_0700,
        0x0001_1D00,
        0x0002_1B00,
        0x0002_1800,
        0x0001_1F00,
        0x0001_0500,
        0x0002_1A00,
        0x0002_1900,
        0x0003_1D00,
    ];
    assert_eq!(&words[..10], &want);
    assert_eq!(words[34_649], 0x000C_2600);
}

fn h0_depths(space: &SymProductSpace) -> Depths {
    bfs_depths(space, &MoveSet::Htm.moves(), &BfsOptions::default()).unwrap()
}

/// Raw coordinate values per depth: entries weighted by their row's class size (columns that
/// stand for no value, the cocsep values that do not occur, are never reached).
fn raw_counts(space: &SymProductSpace, depths: &Depths) -> Vec<u64> {
    let columns = space.column_count() as usize;
    let mut out = vec![0u64; depths.counts.len()];
    for (row, chunk) in depths.values.chunks(columns).enumerate() {
        let size = space.classes().class_size(row as u32) as u64;
        for &d in chunk.iter().filter(|&&d| d != table::DEEPER) {
            out[d as usize] += size;
        }
    }
    out
}

#[test]
#[ignore = "full tier (scripts/test-full.sh): about 21 s; in CI h0 is checked as the solver's own h0 file's bytes"]
fn h0_distances_agree_between_two_indexes_a_brute_force_search_and_a_direct_search() {
    let coords = H48Coords;
    let h0 = SymProductSpace::h0(&coords);
    let transposed = SymProductSpace::h0_transposed(&coords);
    // The H48 solver's documentation: 3393 x C(12,8) x C(8,4) = 117,567,450 entries for 5,304,568,500 values.
    assert_eq!(h0.entry_count(), 117_567_450);
    let a = h0_depths(&h0);
    let b = h0_depths(&transposed);
    assert_eq!(a.deeper, 0);
    let raw = raw_counts(&h0, &a);
    assert_eq!(raw, raw_counts(&transposed, &b), "two indexes disagree");
    assert_eq!(raw.iter().sum::<u64>(), 5_304_568_500);
    assert_eq!(a.counts.iter().sum::<u64>(), 117_567_450);

    // Small depths by a hash-set BFS over whole cubes projected onto their coset.
    let project = |x: &Cube| coords.position(coords.cocsep(x), coords.esep(x) * EO);
    let brute = brute_force_distribution(&MoveSet::Htm.moves(), SymmetryGroup::Full, 5, project);
    for c in &brute {
        assert_eq!(c.positions, raw[c.depth as usize], "depth {}", c.depth);
    }

    // Random entries against the direct search, and the cocsep distance = its row's minimum.
    let search = DirectSearch::default();
    let mut rng = SplitMix64::new(7);
    let columns = ESEP as u64;
    for _ in 0..12 {
        let i = rng.below(a.values.len() as u64);
        let (row, col) = ((i / columns) as u32, (i % columns) as u32);
        let (c, e) = h0.raw(row, col);
        let x = coords.position(c, e * EO);
        assert_eq!(search.h0_distance(&x), a.values[i as usize], "entry ({row}, {col})");
    }
    let cocsep = coords.cocsep_coord();
    let plain = plain_depths(&cocsep, coords.cocsep(&Cube::SOLVED), &MoveSet::Htm.moves());
    for (row, chunk) in a.values.chunks(columns as usize).enumerate() {
        let rep = h0.classes().rep(row as u32);
        assert_eq!(*chunk.iter().min().unwrap(), plain[rep as usize], "row {row}");
    }
}

#[test]
#[ignore = "full tier (scripts/test-full.sh): about 20 s; in CI the edge fallback is checked as the solver's own h0 file's bytes"]
fn edge_fallback_distances_equal_a_plain_bfs_over_every_raw_value() {
    let coords = H48Coords;
    let space = EoEsepSpace::new(&coords, &EoEsepColumns::new(&coords));
    assert_eq!(space.entry_count(), 782 * 2048);
    let depths = bfs_depths(&space, &MoveSet::Htm.moves(), &BfsOptions::default()).unwrap();
    let plain = plain_eoesep_depths(&coords, &MoveSet::Htm.moves());
    assert!(plain.iter().all(|&d| d != table::DEEPER));
    let classes = space.classes();
    for (v, &d) in plain.iter().enumerate() {
        let e = v as u32 / EO;
        let s = classes.to_rep(e);
        let at = coords.conjugate_eoesep(s, v as u32);
        let (row, col) = (classes.class_of(e), at % EO);
        assert_eq!(depths.values[(row * EO + col) as usize], d, "raw eoesep {v}");
    }
}

#[test]
#[ignore = "full tier (scripts/test-full.sh): about 17 s; in CI hN tables are checked against the solver's h1 bytes and verify's direct search"]
fn the_hn_direct_search_is_the_minimum_over_lifts() {
    // hN by one search with free orientations against the minimum of h11 searches over every
    // lift (the definition). (h0, where every orientation is free, is checked against the BFS.)
    let search = DirectSearch::default();
    let coords = search.coords();
    let mut rng = SplitMix64::new(4811);
    for n in [5u8, 7, 9, 10] {
        for _ in 0..6 {
            // A scramble of 9 moves keeps the searches quick.
            let mut x = Cube::SOLVED;
            for _ in 0..9 {
                x = x.compose(Move::all().nth(rng.below(18) as usize).unwrap().cube());
            }
            let (c, v) = (coords.cocsep(&x), coords.eoesep(&x));
            // hN keeps the n highest eo bits.
            let kept = v >> (11 - n) << (11 - n);
            let lifts: Vec<Cube> = (0..1 << (11 - n)).map(|d| coords.position(c, kept | d)).collect();
            let want = (0..).find(|&l| lifts.iter().any(|y| search.reaches_within(y, 11, l))).unwrap();
            assert_eq!(search.hn_distance(&x, n), want, "h{n}");
        }
    }
}

#[test]
fn table_marks_of_sources_kept_in_two_places_are_the_marks_of_all_sources() {
    // A cluster makes a table row's level base + 2 from the marks each keeper of its sources
    // computes: their OR must be what the whole level gives, and a row outside the sources
    // must add nothing.
    let index = H11Rows::new(&H48Coords);
    let done = std::sync::atomic::AtomicU64::new(0);
    let mut levels = vec![index.first_level()];
    for _ in 0..5 {
        let next = index.next_level(levels.last().unwrap(), levels.iter().rev().nth(1), &done);
        levels.push(next);
    }
    let level = levels.pop().unwrap();
    let keep = |odd: bool| Level {
        depth: level.depth,
        rows: (0..index.rows())
            .map(|r| {
                if (r % 2 == 1) == odd {
                    level.rows[r as usize].clone()
                } else {
                    ColumnSet::empty(H11_COLUMNS)
                }
            })
            .collect(),
    };
    let (even, odd) = (keep(false), keep(true));
    let h = 4;
    let words = H11Rows::table_row_words(h);
    let mut marked_rows = 0;
    for t in (0..index.rows()).step_by(7) {
        let mut all = vec![0u64; words];
        index.table_marks(t, h, &level, &mut all);
        let mut split = vec![0u64; words];
        index.table_marks(t, h, &even, &mut split);
        index.table_marks(t, h, &odd, &mut split);
        assert_eq!(all, split, "row {t}");
        let sources: Vec<u32> = index.sources(t).collect();
        let others = Level {
            depth: level.depth,
            rows: (0..index.rows())
                .map(|r| {
                    if sources.contains(&r) {
                        ColumnSet::empty(H11_COLUMNS)
                    } else {
                        level.rows[r as usize].clone()
                    }
                })
                .collect(),
        };
        let mut none = vec![0u64; words];
        index.table_marks(t, h, &others, &mut none);
        assert!(none.iter().all(|&w| w == 0), "row {t}: marks from rows that do not move into it");
        marked_rows += usize::from(all.iter().any(|&w| w != 0));
    }
    assert!(marked_rows > 20, "only {marked_rows} rows marked");
}

/// Table marks with dense blocks moved whole (and, in rows with a stabilizer, closed by whole
/// blocks, then folded) against the entry-by-entry marks, for sources dense enough to take
/// that path, in rows with and without a stabilizer, for h4, h9 and h11.
#[cfg(target_arch = "x86_64")]
#[test]
fn table_marks_of_whole_blocks_are_the_marks_entry_by_entry() {
    if !crate::coord::flips::available() {
        eprintln!("no AVX-512 gather on this processor: the entry-by-entry marks stay");
        return;
    }
    let index = H11Rows::new(&H48Coords);
    let mut rng = SplitMix64::new(4096);
    let with_stab =
        (1..index.rows()).find(|&r| !index.space().stabilizer(r).is_empty()).expect("a row with symmetry");
    let without = (1..index.rows()).find(|&r| index.space().stabilizer(r).is_empty()).expect("a row without");
    for target in [without, with_stab, 0] {
        let sources: Vec<u32> = index.sources(target).collect();
        let rows = (0..index.rows())
            .map(|r| {
                if !sources.contains(&r) {
                    return ColumnSet::empty(H11_COLUMNS);
                }
                // About 24 entries a block on average: blocks on both sides of the threshold.
                let mut columns: Vec<u32> =
                    (0..24 * ESEP).map(|_| rng.below(H11_COLUMNS as u64) as u32).collect();
                columns.sort_unstable();
                columns.dedup();
                ColumnSet::from_sorted(&columns, H11_COLUMNS)
            })
            .collect();
        let level = Level { depth: 11, rows };
        for h in [4u8, 9, 11] {
            let words = H11Rows::table_row_words(h);
            let before: Vec<u64> =
                (0..words).map(|_| rng.next_u64() & rng.next_u64() & rng.next_u64()).collect();
            let (mut whole, mut by_entry) = (before.clone(), before);
            index.table_marks(target, h, &level, &mut whole);
            index.table_marks_by_entry(target, h, &level, &mut by_entry);
            assert!(whole == by_entry, "row {target}, h{h}");
        }
    }
}

/// Table rows made in groups that share sources (each source decoded once for the group)
/// against the same rows made one by one: same lines, counts and depths, for groups of rows
/// with and without a stabilizer (made in the group through the move and each member) whose
/// sources do and do not move whole blocks, for h1, h4, h9
/// and h11.
#[test]
#[ignore = "full tier (scripts/test-full.sh): about 25 s; in CI the rows made in groups are checked as the solver's own h1 bytes"]
fn table_rows_made_in_groups_are_the_rows_made_one_by_one() {
    let index = H11Rows::new(&H48Coords);
    let mut rng = SplitMix64::new(8192);
    let all: Vec<u32> = (0..index.rows()).collect();
    let groups = index.table_groups(&all, 6);
    let with_stab = |g: &Vec<u32>| g.iter().any(|&r| !index.space().stabilizer(r).is_empty());
    let picked: Vec<&Vec<u32>> =
        [groups.iter().find(|g| with_stab(g)), groups.iter().find(|g| !with_stab(g) && g.len() == 6)]
            .into_iter()
            .map(|g| g.expect("a group"))
            .collect();
    let sources: std::collections::BTreeSet<u32> =
        picked.iter().flat_map(|g| g.iter()).flat_map(|&t| index.sources(t)).collect();
    // Sources of about 24 entries a block (blocks on both sides of the gather's threshold),
    // about 8 (a source decoded once and read by the register path or block by block) and
    // about 1 (entry by entry), a third each; the rows' own levels a few entries each.
    let rows = |depth: u8| Level {
        depth,
        rows: (0..index.rows())
            .map(|r| {
                let n = match (depth, sources.contains(&r)) {
                    (11, true) if r % 3 == 0 => ESEP,
                    (11, true) if r % 3 == 1 => 8 * ESEP,
                    (11, true) => 24 * ESEP,
                    _ => 200,
                };
                let mut columns: Vec<u32> = (0..n).map(|_| rng.below(H11_COLUMNS as u64) as u32).collect();
                columns.sort_unstable();
                columns.dedup();
                ColumnSet::from_sorted(&columns, H11_COLUMNS)
            })
            .collect(),
    };
    let levels: Vec<Level> = (0..=11).map(rows).collect();
    let mut s = RowScratch::default();
    for h in [1u8, 4, 9, 11] {
        let levels = &levels[12 - (base_for(h) as usize + 2)..];
        for group in &picked {
            let mut together = Vec::new();
            index.table_rows(group, h, levels, &Marks::new(), &mut s, |t, lines| together.push((t, lines)));
            together.sort_by_key(|(t, _)| *t);
            let mut one_by_one: Vec<(u32, RowLines)> =
                group.iter().map(|&t| (t, index.table_row(t, h, levels, None, &mut s))).collect();
            one_by_one.sort_by_key(|(t, _)| *t);
            assert!(together == one_by_one, "h{h}, group {group:?}");
            // The marks a keeper gives for the group are each row's own marks; and a row made
            // with marks from elsewhere ORed in is the row made from every source.
            let level = levels.last().unwrap();
            let words = H11Rows::table_row_words(h);
            let marks = index.table_marks_of(group, h, level, &mut s);
            for (&t, bits) in group.iter().zip(marks.chunks_exact(words)) {
                let mut alone = vec![0u64; words];
                index.table_marks(t, h, level, &mut alone);
                assert!(alone == bits, "h{h}, marks of row {t}");
            }
            if group != &picked[0] {
                continue;
            }
            let (t, mut split) = (group[0], levels.to_vec());
            let mut elsewhere = Marks::new();
            elsewhere.insert(t, marks[..words].to_vec());
            let last = split.len() - 1;
            for r in index.sources(t).filter(|&r| r != t) {
                split[last].rows[r as usize] = ColumnSet::from_sorted(&[], H11_COLUMNS);
            }
            let mut with_marks = Vec::new();
            index.table_rows(&[t], h, &split, &elsewhere, &mut s, |t, lines| with_marks.push((t, lines)));
            let expected = one_by_one.iter().find(|(u, _)| *u == t).expect("the group's row");
            assert!(
                with_marks.len() == 1 && with_marks[0] == *expected,
                "h{h}, row {t} with its marks from elsewhere"
            );
        }
    }
}

/// Groups hold every row once, at most `size` each, and share sources: groups of 16 decode at
/// most 0.6 of the sources rows one by one decode.
#[test]
fn table_groups_hold_every_row_once_and_share_sources() {
    let index = H11Rows::new(&H48Coords);
    let rows: Vec<u32> = (0..index.rows()).filter(|r| r % 5 != 2).collect();
    let groups = index.table_groups(&rows, 16);
    let mut seen: Vec<u32> = groups.iter().flatten().copied().collect();
    seen.sort_unstable();
    assert_eq!(seen, rows);
    assert!(groups.iter().all(|g| !g.is_empty() && g.len() <= 16));
    let alone: usize = rows.iter().map(|&t| index.sources(t).count()).sum();
    let together: usize = groups
        .iter()
        .map(|g| g.iter().flat_map(|&t| index.sources(t)).collect::<std::collections::BTreeSet<u32>>().len())
        .sum();
    assert!(together * 10 <= alone * 6, "groups decode {together} sources, one by one {alone}");
    assert_eq!(groups, index.table_groups(&rows, 16), "the same groups every time");
}

/// The task order holds every row once, and tasks of consecutive rows in it, regrouped as a
/// worker groups a task's rows, decode fewer sources than runs of the solver's rows: at most
/// 0.8 of them (0.72 measured).
#[test]
fn tasks_cut_in_the_task_order_share_more_sources_than_runs_of_rows() {
    let index = H11Rows::new(&H48Coords);
    let order = index.task_order();
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..index.rows()).collect::<Vec<_>>());
    let decoded = |rows: &[u32]| -> usize {
        rows.chunks(54)
            .flat_map(|task| index.table_groups(task, 32))
            .map(|g| {
                g.iter().flat_map(|&t| index.sources(t)).collect::<std::collections::BTreeSet<u32>>().len()
            })
            .sum()
    };
    let (in_order, in_runs) = (decoded(&order), decoded(&sorted));
    assert!(in_order * 10 <= in_runs * 8, "task order {in_order} sources, runs of rows {in_runs}");
    assert_eq!(order, index.task_order(), "the same order every time");
}

/// Level rows, through the scatter (few images) and a dense row (many), with and without a
/// stabilizer, against every source entry's image made one at a time, closed under the
/// stabilizer, less the row's two levels before.
#[test]
fn level_rows_are_the_images_closed_less_the_two_levels_before() {
    let index = H11Rows::new(&H48Coords);
    let space = index.space();
    let mut rng = SplitMix64::new(77);
    let mut random_row = |n: u32| {
        let mut columns: Vec<u32> = (0..n).map(|_| rng.below(H11_COLUMNS as u64) as u32).collect();
        columns.sort_unstable();
        columns.dedup();
        columns
    };
    let with_stab =
        (1..index.rows()).find(|&r| !space.stabilizer(r).is_empty()).expect("a row with symmetry");
    let without = (1..index.rows()).find(|&r| space.stabilizer(r).is_empty()).expect("a row without");
    let mut s = RowScratch::default();
    for target in [without, with_stab] {
        // 18 incoming maps: about 36 thousand images (the scatter) and 1.4 million (dense).
        for per_source in [2_000u32, 80_000] {
            let mut prev = vec![Vec::new(); index.rows() as usize];
            for r in index.sources(target) {
                prev[r as usize] = random_row(per_source);
            }
            if prev[target as usize].is_empty() {
                prev[target as usize] = random_row(per_source);
            }
            let mut images: Vec<u32> = Vec::new();
            for r in 0..index.rows() {
                for m in Move::all() {
                    let (to, map) = space.transition(r, m);
                    if to == target {
                        images.extend(prev[r as usize].iter().map(|&c| map.apply(c)));
                    }
                }
            }
            let stab = space.stabilizer(target);
            let closure: Vec<u32> =
                images.iter().flat_map(|&c| stab.iter().map(move |m| m.apply(c))).collect();
            images.extend(closure);
            images.sort_unstable();
            images.dedup();
            // The level before holds a fifth of the images and some other columns.
            let mut before_row: Vec<u32> =
                images.iter().copied().step_by(5).chain(random_row(1000)).collect();
            before_row.sort_unstable();
            before_row.dedup();
            let level = |rows: &[Vec<u32>], depth| Level {
                depth,
                rows: rows.iter().map(|r| ColumnSet::from_sorted(r, H11_COLUMNS)).collect(),
            };
            let mut before = vec![Vec::new(); index.rows() as usize];
            before[target as usize] = before_row;
            let (prev_level, before_level) = (level(&prev, 10), level(&before, 9));
            let want: Vec<u32> = images
                .into_iter()
                .filter(|c| {
                    prev[target as usize].binary_search(c).is_err()
                        && before[target as usize].binary_search(c).is_err()
                })
                .collect();
            let got = index.next_level_row(target, &prev_level, Some(&before_level), &mut s).to_vec();
            assert!(
                got == want,
                "row {target}, {per_source} entries a source: {} against {}",
                got.len(),
                want.len()
            );
        }
    }
}
