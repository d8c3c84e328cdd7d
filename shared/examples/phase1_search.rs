//! Measures the coset solver's phase-1 search alone: every sequence of one length taking a
//! coset's representative into H, counted and dropped (no bit array), as many times as asked,
//! on every core. Prints the count, wall and CPU seconds of each run.
//!
//!     cargo run --release -p shared --example phase1_search -- TABLE LENGTH [RUNS] [MOVES]
//!
//! TABLE is phase 1's table file (`coordinator coset --phase1-table`; made there if missing);
//! MOVES the representative (default R U2 F' L B2 D R' F, cube20src's R1U2F3L1B2D1R3F1).

use shared::coset::{pages::Layout, perm::PermTables, phase1_file};
use shared::cube::{apply_moves, parse_moves};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let table = std::path::PathBuf::from(args.next().expect("phase 1's table file"));
    let length: u32 = args.next().and_then(|a| a.parse().ok()).expect("a length");
    let runs: usize = args.next().map_or(1, |a| a.parse().expect("a number of runs"));
    let moves = args.next().unwrap_or_else(|| "R U2 F' L B2 D R' F".to_string());
    let rep = apply_moves(&parse_moves(&moves).expect("a move sequence"));
    let (phase1, _) = phase1_file::load_or_make(&table).expect("phase 1's table");
    let perms = PermTables::new(&Layout::new());
    for _ in 0..runs {
        let found = AtomicU64::new(0);
        let (wall, cpu) = (Instant::now(), cpu_seconds());
        phase1.solutions(&perms, &rep, length, &|places| {
            found.fetch_add(places.len() as u64, Ordering::Relaxed);
        });
        println!(
            "length {length}: {} solutions, {:.3} s wall, {:.2} s CPU",
            found.load(Ordering::Relaxed),
            wall.elapsed().as_secs_f64(),
            cpu_seconds() - cpu
        );
    }
}

/// User and system time of this process so far (Linux's /proc/self/stat, in clock ticks of
/// 1/100 s).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or_default().split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}
