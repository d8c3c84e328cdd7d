//! The share of a row search's (row, move) images that cross owners when its rows are cut as a
//! cluster cuts them: the index built as a distributed search builds it (rows in locality
//! order), the rows cut into the default parts, each of M owners a run of consecutive parts as
//! the first assignment deals them. `scripts/bench/scaling_model.py --crossing` reads its
//! output to scale the measured bytes to more machines (docs/distribution.md, "Scaling model").
//!
//!     cargo run --release -p shared --example crossing -- edges/htm [M ...]

use shared::bfs::owned::PartCut;
use shared::cube::Move;
use shared::job::{IndexVisitor, RowJob};
use shared::space::{locality::PARTS, RowIndex, RowOrder};

struct Crossing {
    moves: Vec<Move>,
    owners: Vec<u32>,
}

impl IndexVisitor for Crossing {
    type Output = Vec<(u32, f64, f64, f64)>;

    /// Per owner count: the crossing share of all images, the largest owner's share of the
    /// images that arrive from other owners, and the largest owner's count of (target row,
    /// sender) pairs over all rows: what it receives at a dense level, where each such pair
    /// costs about a row's bits whatever the number of owners.
    fn visit<I: RowIndex>(self, index: &I) -> Self::Output {
        let rows = index.row_count();
        let cut = PartCut::into_parts(rows, PARTS);
        let parts = cut.parts();
        let targets: Vec<u32> = (0..rows)
            .flat_map(|r| self.moves.iter().map(move |&m| (r, m)))
            .map(|(r, m)| index.transition(r, m).0)
            .collect();
        self.owners
            .iter()
            .map(|&m| {
                // As `assign::first` deals parts to equal workers: the first take one more.
                let mut owner_of_part = Vec::with_capacity(parts as usize);
                for w in 0..m {
                    let share = parts / m + u32::from(w < parts % m);
                    owner_of_part.extend(std::iter::repeat_n(w, share as usize));
                }
                let owner = |r: u32| owner_of_part[(r / cut.rows_per_part) as usize];
                let mut arriving = vec![0u64; m as usize];
                // Per target row, the owners that send it images (at most 64: one bit each).
                let mut senders = vec![0u64; rows as usize];
                for (i, &t) in targets.iter().enumerate() {
                    let r = (i / self.moves.len()) as u32;
                    if owner(r) != owner(t) {
                        arriving[owner(t) as usize] += 1;
                        senders[t as usize] |= 1 << owner(r);
                    }
                }
                let mut pairs = vec![0u64; m as usize];
                for (t, s) in senders.iter().enumerate() {
                    pairs[owner(t as u32) as usize] += u64::from(s.count_ones());
                }
                let all = targets.len() as f64;
                let crossing: u64 = arriving.iter().sum();
                let largest = |v: &[u64]| *v.iter().max().expect("owners") as f64;
                (m, crossing as f64 / all, largest(&arriving) / all, largest(&pairs) / f64::from(rows))
            })
            .collect()
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(job) = args.first().and_then(|s| s.parse::<RowJob>().ok()) else {
        eprintln!(
            "usage: crossing SPACE/MOVES [M ...]   (M owners, 1 to 64; for example edges/htm 2 4 8 16 32 64)"
        );
        std::process::exit(2);
    };
    let mut owners: Vec<u32> =
        args[1..].iter().filter_map(|s| s.parse().ok()).filter(|m| (1..=PARTS).contains(m)).collect();
    if owners.is_empty() {
        owners = vec![2, 4, 8, 16, 32, 64];
    }
    let index = job.build_index(RowOrder::Locality);
    let out = index.visit(Crossing { moves: job.moves.moves(), owners });
    println!("owners\tcrossing share\tlargest owner's arriving share\tlargest owner's (row, sender) pairs");
    for (m, share, largest, pairs) in out {
        println!("{m}\t{share:.4}\t{largest:.4}\t{pairs:.4}");
    }
}
