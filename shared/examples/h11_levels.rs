//! Measures the exact h11 levels in the level store: entries, bytes per entry and time per
//! level, up to the depth given (default 9).
//!
//!     cargo run --release -p shared --example h11_levels -- 10

use shared::h48::{H11Rows, H48Coords, Level};
use std::time::Instant;

fn main() {
    let depth: u8 = std::env::args().nth(1).map_or(9, |a| a.parse().expect("a depth"));
    let start = Instant::now();
    let index = H11Rows::new(&H48Coords);
    println!("index built in {:.2} s", start.elapsed().as_secs_f64());
    let mut levels: Vec<Level> = vec![index.first_level()];
    let mut total_bytes = 0u64;
    for d in 1..=depth {
        let t = Instant::now();
        let n = levels.len();
        let done = std::sync::atomic::AtomicU64::new(0);
        let next = index.next_level(&levels[n - 1], n.checked_sub(2).map(|k| &levels[k]), &done);
        let (entries, bytes) = (next.entries(), next.bytes());
        total_bytes += bytes;
        println!(
            "depth {d:>2}: {entries:>15} entries, {bytes:>13} bytes ({:.2} bits/entry), {:.2} s; store {:.3} GB",
            bytes as f64 * 8.0 / entries.max(1) as f64,
            t.elapsed().as_secs_f64(),
            total_bytes as f64 / 1e9
        );
        assert_eq!(next.depth, d);
        levels.push(next);
    }
    println!("total {:.2} s", start.elapsed().as_secs_f64());
    let last = levels.last().expect("a level");
    let t = Instant::now();
    let x: u64 = (0..index.rows()).map(|r| index.gather_checksum(r, last)).fold(0, |a, b| a ^ b);
    let pushes: u64 = (0..index.rows()).map(|r| index.pushes(r, last)).sum();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "gather alone (one thread): {pushes} images in {secs:.2} s, {:.2} ns each ({x:x})",
        secs * 1e9 / pushes as f64
    );
}
