//! How fast a part's sparse rows are coded into a raw message: a synthetic part of 23,000
//! rows of 216 words (the rows of edges), its bits set at random with one chance in D, coded
//! seven times; the best time per entry and per byte of the message (docs/distribution.md,
//! "Two small costs"), and per entry of coding a buffer that is then cleared, against coding
//! that clears its rows as it goes ("Buffers cleared as they are coded").
//!
//!     cargo run --release -p shared --example sparse_coding [D ...]

use shared::shard::{Codec, ShardKey};
use shared::wire::SparseRows;
use std::time::Instant;

const WORDS: usize = 216;
const ROWS: usize = 23_000;

fn main() {
    let mut densities: Vec<u64> =
        std::env::args().skip(1).filter_map(|a| a.parse().ok()).filter(|&d| d > 0).collect();
    if densities.is_empty() {
        densities = vec![5000, 1000, 200, 50, 20];
    }
    let key = ShardKey { job: 1, task: 2, attempt: 0, level: 3 };
    for d in densities {
        // xorshift64: any fixed sequence will do.
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut full = vec![0u64; ROWS * WORDS];
        for word in full.iter_mut() {
            for b in 0..64 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *word |= u64::from(x.is_multiple_of(d)) << b;
            }
        }
        let entries: u64 = full.iter().map(|w| u64::from(w.count_ones())).sum();
        let (mut best, mut then_cleared, mut cleared, mut bytes) = (f64::MAX, f64::MAX, f64::MAX, 0);
        for _ in 0..7 {
            let start = Instant::now();
            let message = SparseRows::encode_rows(key, &full, WORDS, &|_| true, Codec::Raw);
            best = best.min(start.elapsed().as_secs_f64());
            bytes = message.len();
            // A sender's buffer, given back zeroed: cleared after coding, or by the coding.
            let mut rows = full.clone();
            let start = Instant::now();
            let _ = SparseRows::encode_rows(key, &rows, WORDS, &|_| true, Codec::Raw);
            rows.fill(0);
            then_cleared = then_cleared.min(start.elapsed().as_secs_f64());
            let mut rows = full.clone();
            let start = Instant::now();
            let _ = SparseRows::encode_rows_clearing(key, &mut rows, WORDS, &|_| true, Codec::Raw);
            cleared = cleared.min(start.elapsed().as_secs_f64());
        }
        let per_entry = |t: f64| t * 1e9 / entries as f64;
        println!(
            "one bit in {d}: {entries} entries, {bytes} bytes, {:.2} ns an entry, {:.3} ns a byte; \
             coded then cleared {:.2}, cleared while coded {:.2} ns an entry",
            per_entry(best),
            best * 1e9 / bytes as f64,
            per_entry(then_cleared),
            per_entry(cleared),
        );
    }
}
