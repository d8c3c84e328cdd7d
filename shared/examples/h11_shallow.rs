//! The h11 search end to end for its first levels, on a machine that cannot hold its state:
//! the three bit arrays (30.1 GB each) live as sparse files in a state directory, and the first
//! levels touch only a few of their pages. Checks, independent of the h11 index:
//! - coset values (positions) per depth against a hash-set BFS over whole cubes projected onto
//!   their (cocsep, eoesep) coset;
//! - h0 folded out of the h11 levels (`HnRecorder`, every orientation dropped) against the h0
//!   table's own BFS over (cocsep class, esep), entry by entry, to the same depth.
//!
//! Run by scripts/bench/h11-shallow.sh:
//!
//!     cargo run --release -p shared --example h11_shallow -- STATE_DIR [DEPTH]

use shared::bfs::reference::brute_force_distribution;
use shared::bfs::{run, BfsOptions, LocalExpander};
use shared::cube::{MoveSet, SymmetryGroup};
use shared::h48::table::{pack_two_bit, DEEPER, LINE_BYTES, LINE_ENTRIES};
use shared::h48::{bfs_depths, H48Coords, HnRecorder, SymProductSpace, ESEP};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1).map(std::path::PathBuf::from) else {
        eprintln!("usage: h11_shallow STATE_DIR [DEPTH]");
        std::process::exit(2);
    };
    let depth: u32 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(5);
    std::fs::create_dir_all(&dir).expect("state directory");
    let coords = H48Coords::default();
    let moves = MoveSet::Htm.moves();
    let h11 = SymProductSpace::h11(&coords);
    let h0 = SymProductSpace::h0(&coords);
    let rows = h11.classes().class_count() as u32;

    let start = Instant::now();
    let mut recorder = HnRecorder::new(0, rows, ESEP as usize);
    let options = BfsOptions { max_depth: Some(depth), state_dir: Some(dir), ..BfsOptions::default() };
    let counts = run(&h11, &moves, &options, |report, bits| {
        println!(
            "h11 depth {:>2}: {:>12} entries, {:>12} positions ({:.1} s)",
            report.counts.depth,
            report.entries,
            report.counts.positions,
            start.elapsed().as_secs_f64()
        );
        recorder.record(report.counts.depth, bits)
    })
    .expect("h11 search");
    let folded = recorder.finish(depth);

    // Coset values per depth, by brute force over whole cubes.
    let project = |x: &shared::cube::Cube| coords.position(coords.cocsep(x), coords.eoesep(x));
    let brute = brute_force_distribution(&moves, SymmetryGroup::Full, depth, project);
    let mut ok = true;
    for (c, b) in counts.iter().zip(&brute) {
        let same = c.positions == b.positions;
        ok &= same;
        println!(
            "depth {:>2}: {} / {} coset values (h11 search / brute force) {}",
            c.depth,
            c.positions,
            b.positions,
            if same { "ok" } else { "DIFFER" }
        );
    }
    ok &= counts.len() == brute.len();

    // h0 = the minimum over all orientations of h11 distances, to the depth searched.
    let depths =
        bfs_depths(&h0, &moves, &BfsOptions::default(), &LocalExpander::default()).expect("h0 search");
    let capped: Vec<u8> = depths.values.iter().map(|&d| if d as u32 <= depth { d } else { DEEPER }).collect();
    let mut want = pack_two_bit(&capped, 8, depth as u8 + 1);
    // Entries beyond a shallow search are unknown, which the recorder writes as 3 (packing
    // assumes a search to base + 2 and files them under the bound).
    for (i, _) in capped.iter().enumerate().filter(|&(_, &d)| d == DEEPER) {
        let (line, k) = (i / LINE_ENTRIES, i % LINE_ENTRIES);
        want[line * LINE_BYTES + k / 4] |= 3 << (2 * (k % 4));
    }
    let same = folded.data == want && folded.depth_counts == depths.counts[..=depth as usize];
    ok &= same;
    println!(
        "h0 folded out of h11 to depth {depth}: {:?} entries per depth, {} the h0 BFS",
        folded.depth_counts,
        if same { "equal to" } else { "DIFFERENT from" }
    );
    println!(
        "{} in {:.1} s",
        if ok { "all checks passed" } else { "CHECKS FAILED" },
        start.elapsed().as_secs_f64()
    );
    if !ok {
        std::process::exit(1);
    }
}
