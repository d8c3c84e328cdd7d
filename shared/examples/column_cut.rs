//! What owners that hold blocks of columns as well as rows would exchange: a row search's
//! positions cut into R runs of rows (as a cluster cuts them: `crossing`) times C blocks of
//! columns, one owner per (run, block). Per cut: the share of all (row, move, column) images
//! that cross owners, the largest owner's share of them arriving, and the (target row's
//! block, sender) pairs the largest owner receives, in rows' worth (at a dense level each
//! pair costs about its block's bits). Images are sampled, 512 columns per (row, move);
//! pairs reached by fewer columns can be missed, so the pairs are a lower bound.
//!
//! Columns are cut in blocks of consecutive numbers, or with `--locality` in the locality
//! order of the graph that the column maps of three rows per move make (as rows are ordered:
//! `shared::space::locality`; about a quarter of an hour for `h` on two cores).
//!
//!     cargo run --release -p shared --example column_cut -- h/h [--locality]

use shared::bfs::cut::PartCut;
use shared::coord::ColumnMapper;
use shared::cube::Move;
use shared::job::{IndexVisitor, RowJob};
use shared::space::locality::{row_order, PARTS};
use shared::space::{RowIndex, RowOrder};

/// (runs of rows, blocks of columns) of each cut counted.
const CUTS: [(u32, u32); 7] = [(2, 1), (8, 1), (1, 2), (1, 8), (2, 4), (4, 2), (4, 1)];
const SAMPLES: u32 = 512;

struct ColumnCut {
    moves: Vec<Move>,
    locality: bool,
}

impl IndexVisitor for ColumnCut {
    type Output = ();

    fn visit<I: RowIndex>(self, index: &I) {
        let (rows, columns) = (index.row_count(), index.column_count());
        // Each column's place in the order its blocks are cut from.
        let place: Vec<u32> = if self.locality {
            let picks = [7, rows / 3, rows / 2 + 11];
            let maps: Vec<Vec<u32>> = (self.moves.iter())
                .flat_map(|&m| picks.map(|r| (r, m)))
                .map(|(r, m)| {
                    let map = index.transition(r, m).1;
                    (0..columns).map(|c| map.apply(c)).collect()
                })
                .collect();
            let order =
                row_order(columns, index.start().1, maps.len(), |c, i| maps[i][c as usize], |_| false);
            let mut place = vec![0; columns as usize];
            for (k, &c) in order.iter().enumerate() {
                place[c as usize] = k as u32;
            }
            place
        } else {
            (0..columns).collect()
        };
        let cut = PartCut::into_parts(rows, PARTS);
        println!("runs x blocks\tcrossing share\tlargest owner's arriving share\tlargest owner's (block, sender) pairs, in rows");
        for (runs, blocks) in CUTS {
            // Runs of parts as `assign::first` deals them to equal workers.
            let parts = cut.parts();
            let mut run_of_part = Vec::new();
            for w in 0..runs {
                let share = parts / runs + u32::from(w < parts % runs);
                run_of_part.extend(std::iter::repeat_n(w, share as usize));
            }
            let run = |r: u32| run_of_part[(r / cut.rows_per_part) as usize];
            let block =
                |c: u32| (u64::from(place[c as usize]) * u64::from(blocks) / u64::from(columns)) as u32;
            let owner = |r: u32, c: u32| run(r) * blocks + block(c);
            let mut arriving = vec![0u64; (runs * blocks) as usize];
            let mut senders = vec![0u64; (rows * blocks) as usize];
            let (mut all, mut crossing) = (0u64, 0u64);
            let mut x = 0x9E37_79B9_7F4A_7C15u64;
            for r in 0..rows {
                for &m in &self.moves {
                    let (t, map) = index.transition(r, m);
                    for _ in 0..SAMPLES {
                        // xorshift64: any fixed sequence of columns will do.
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let c = (x % u64::from(columns)) as u32;
                        let image = map.apply(c);
                        let (from, to) = (owner(r, c), owner(t, image));
                        all += 1;
                        if from != to {
                            crossing += 1;
                            arriving[to as usize] += 1;
                            senders[(t * blocks + block(image)) as usize] |= 1 << from;
                        }
                    }
                }
            }
            let mut pairs = vec![0u64; (runs * blocks) as usize];
            for (cell, s) in senders.iter().enumerate() {
                let (t, b) = (cell as u32 / blocks, cell as u32 % blocks);
                pairs[(run(t) * blocks + b) as usize] += u64::from(s.count_ones());
            }
            let largest = |v: &[u64]| *v.iter().max().expect("owners") as f64;
            println!(
                "{runs} x {blocks}\t{:.4}\t{:.4}\t{:.4}",
                crossing as f64 / all as f64,
                largest(&arriving) / all as f64,
                largest(&pairs) / f64::from(blocks) / f64::from(rows)
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(job) = args.first().and_then(|s| s.parse::<RowJob>().ok()) else {
        eprintln!("usage: column_cut SPACE/MOVES [--locality]   (for example h/h)");
        std::process::exit(2);
    };
    let locality = args[1..].iter().any(|a| a == "--locality");
    let index = job.build_index(RowOrder::Locality);
    index.visit(ColumnCut { moves: job.moves.moves(), locality });
}
