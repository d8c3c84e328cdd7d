//! Measures what the shards' zstd level costs and saves on real search levels: runs the `h`
//! search (Kociemba's H, its own moves) to depth 15 and compresses each of its levels 11 to 15
//! (the whole bit array, in 16 MiB frames as the shards cut it) at several levels, on one
//! thread. Prints the compressed size and the compression and decompression rates per level.
//!
//!     cargo run --release -p shared --example zstd_levels

use shared::bfs::{run, BfsOptions};
use shared::cube::MoveSet;
use shared::space::KociembaSpace;
use std::time::Instant;

const FRAME: usize = 16 << 20;
const LEVELS: [i32; 6] = [3, 1, -1, -3, -5, -10];

fn main() {
    let space = KociembaSpace::new(true);
    let moves = MoveSet::KociembaH.moves();
    let mut kept: Vec<(u32, Vec<u8>)> = Vec::new();
    let options = BfsOptions { max_depth: Some(15), ..Default::default() };
    run(&space, &moves, &options, |report, bits| {
        if report.counts.depth >= 11 {
            kept.push((report.counts.depth, bits.iter().flat_map(|w| w.to_le_bytes()).collect()));
        }
    })
    .expect("the h search runs in memory");
    println!("| depth | zstd level | raw MB | compressed MB | ratio | compress MB/s | decompress MB/s |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for (depth, bytes) in &kept {
        for level in LEVELS {
            let start = Instant::now();
            let frames: Vec<Vec<u8>> = bytes
                .chunks(FRAME)
                .map(|c| zstd::bulk::compress(c, level).expect("zstd compresses any input"))
                .collect();
            let compress = start.elapsed().as_secs_f64();
            let start = Instant::now();
            let back: Vec<Vec<u8>> = frames
                .iter()
                .map(|frame| zstd::bulk::decompress(frame, FRAME).expect("a frame just made"))
                .collect();
            let decompress = start.elapsed().as_secs_f64();
            assert!(back.concat() == *bytes, "depth {depth}, level {level}: the frames do not round-trip");
            let (raw, packed) =
                (bytes.len() as f64 / 1e6, frames.iter().map(Vec::len).sum::<usize>() as f64 / 1e6);
            println!(
                "| {depth} | {level} | {raw:.0} | {packed:.0} | {:.2} | {:.0} | {:.0} |",
                raw / packed,
                raw / compress,
                raw / decompress
            );
        }
    }
}
