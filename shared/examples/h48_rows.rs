//! Measures the two row tasks of an hN build on a sample of rows, from levels saved by
//! `coordinator build ... --state-dir DIR`: making a row of the last level from the two before
//! it, and making a table row of h48hN. Prints images (gathered entries) per second and
//! nanoseconds per image, one thread.
//!
//! Then the same table rows made one by one and in groups that share sources
//! ([`H11Rows::table_rows`]), over GROUPS groups of GROUP_SIZE rows spread over the table.
//!
//!     cargo run --release -p shared --example h48_rows -- STATE_DIR N [ROWS [GROUPS GROUP_SIZE]]
//!
//! (GROUPS `all`: every row of the table.)

use shared::coord::h48::H48Coords;
use shared::h48::{base_for, H11Rows, Level, RowLines, RowScratch};
use shared::space::RowIndex;
use std::time::Instant;

/// FNV-1a's start.
const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// `hash` (FNV-1a) continued over a row's bytes, counts, deeper entries and first line.
fn fnv(hash: u64, lines: &RowLines) -> u64 {
    let counts = lines.counts.iter().chain([&lines.deeper, &lines.first_line]).flat_map(|c| c.to_le_bytes());
    lines.bytes.iter().copied().chain(counts).fold(hash, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("a state directory"));
    let h: u8 = args.next().and_then(|a| a.parse().ok()).expect("N of h48hN");
    let sample: u32 = args.next().map_or(40, |a| a.parse().expect("a row count"));
    // GROUPS may be `all`: every row of the table, in its groups.
    let groups: Option<usize> =
        args.next().map_or(Some(2), |a| (a != "all").then(|| a.parse().expect("a group count")));
    let group_size: usize = args.next().map_or(32, |a| a.parse().expect("a group size"));
    let base = base_for(h);
    let index = H11Rows::new(&H48Coords);
    let mut levels = vec![index.first_level()];
    for d in 1..=base + 1 {
        levels.push(Level::load(&dir.join(format!("h11-level-{d:02}.bin"))).expect("a saved level"));
    }
    // Evenly spread rows, class 0 (the solved class, stabilizer of 48) left out: its cost is
    // not typical.
    let rows: Vec<u32> = (0..sample).map(|k| 1 + k * (index.rows() - 1) / sample).collect();
    let stab: Vec<usize> = (0..index.rows()).map(|r| 1 + index.space().stabilizer(r).len()).collect();
    println!(
        "rows with a stabilizer: {} of {}; mean stabilizer size {:.3} (the closure's factor on images)",
        stab.iter().filter(|&&n| n > 1).count(),
        index.rows(),
        stab.iter().sum::<usize>() as f64 / index.rows() as f64
    );
    let mut s = RowScratch::default();
    let last = base as usize + 1;
    let (mut images, t) = (0u64, Instant::now());
    let mut made = 0u64;
    for &r in &rows {
        images += index.pushes(r, &levels[last - 1]);
        made += index.next_level_row(r, &levels[last - 1], Some(&levels[last - 2]), &mut s).len();
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "level {last} rows: {} rows, {images} images -> {made} entries in {secs:.2} s: {:.1} ns per image",
        rows.len(),
        secs * 1e9 / images as f64
    );
    // The rows' bytes and counts hashed, to compare two builds' rows.
    let (mut images, t, mut hash) = (0u64, Instant::now(), FNV_START);
    for &r in &rows {
        images += index.pushes(r, &levels[last]);
        hash = fnv(hash, &index.table_row(r, h, &levels, None, &mut s));
    }
    let secs = t.elapsed().as_secs_f64();
    println!("h48h{h} table rows' bytes and counts: FNV-1a {hash:016x}");
    println!(
        "h48h{h} table rows: {} rows, {images} images in {secs:.2} s: {:.1} ns per image; whole table (x {:.0}): {:.0} s on one thread",
        rows.len(),
        secs * 1e9 / images as f64,
        index.rows() as f64 / rows.len() as f64,
        secs * index.rows() as f64 / rows.len() as f64
    );
    // The marks alone (the images of level base + 1), into a cleared row each time.
    let mut bits = vec![0u64; H11Rows::table_row_words(h)];
    let t = Instant::now();
    for &r in &rows {
        bits.fill(0);
        index.table_marks(r, h, &levels[last], &mut bits);
    }
    let secs = t.elapsed().as_secs_f64();
    println!("h48h{h} marks alone: {secs:.2} s: {:.1} ns per image", secs * 1e9 / images as f64);

    // Groups that share sources, spread over the table: one by one, then together.
    let all: Vec<u32> = (0..index.rows()).collect();
    let made = index.table_groups(&all, group_size);
    let groups = groups.unwrap_or(made.len());
    let picked: Vec<&Vec<u32>> = (0..groups).map(|k| &made[k * made.len() / groups.max(1)]).collect();
    let images: u64 = picked.iter().flat_map(|g| g.iter()).map(|&r| index.pushes(r, &levels[last])).sum();
    let hash_of = |mut rows: Vec<(u32, RowLines)>| {
        rows.sort_by_key(|(r, _)| *r);
        rows.iter().fold(FNV_START, |hash, (_, lines)| fnv(hash, lines))
    };
    let t = Instant::now();
    let one_by_one: Vec<_> = picked
        .iter()
        .flat_map(|g| g.iter())
        .map(|&r| (r, index.table_row(r, h, &levels, None, &mut s)))
        .collect();
    let alone = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut together = Vec::new();
    for g in &picked {
        index.table_rows(g, h, &levels, &Default::default(), &mut s, |r, lines| together.push((r, lines)));
    }
    let grouped = t.elapsed().as_secs_f64();
    let n = together.len();
    println!(
        "h48h{h} {n} rows in {} groups of {group_size}: one by one {alone:.2} s ({:.1} ns per image, FNV-1a {:016x}), together {grouped:.2} s ({:.1} ns per image, FNV-1a {:016x})",
        picked.len(),
        alone * 1e9 / images as f64,
        hash_of(one_by_one),
        grouped * 1e9 / images as f64,
        hash_of(together)
    );
}
