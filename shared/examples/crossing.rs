//! The share of a row search's (row, move) images that cross owners when its rows are cut as a
//! cluster cuts them: the index built as a distributed search builds it (rows in locality
//! order), the rows cut into the default parts, each of M owners a run of consecutive parts as
//! the first assignment deals them. `scripts/bench/scaling_model.py --crossing` reads its
//! output to scale the measured bytes to more machines (docs/distribution.md, "Scaling model").
//!
//! At a dense level a message costs about a row's bits whatever it carries, so what an owner
//! receives there is counted in rows: pushing, one per (target row, sender) pair; and the least
//! any mix of pushed target rows and pulled source rows can receive: per (sender, receiver), a
//! minimum vertex cover of the graph of their crossing (source row, target row) moves, which
//! by König's theorem is as large as its maximum matching.
//!
//!     cargo run --release -p shared --example crossing -- edges/htm [M ...]

use shared::bfs::cut::PartCut;
use shared::cube::Move;
use shared::job::{IndexVisitor, RowJob};
use shared::space::{locality::PARTS, RowIndex, RowOrder};

struct Crossing {
    moves: Vec<Move>,
    owners: Vec<u32>,
}

impl IndexVisitor for Crossing {
    type Output = Vec<(u32, f64, f64, f64, f64)>;

    /// Per owner count: the crossing share of all images, the largest owner's share of the
    /// images that arrive from other owners, and the largest owner's count of (target row,
    /// sender) pairs over all rows: what it receives at a dense level, where each such pair
    /// costs about a row's bits whatever the number of owners; and the same count for the
    /// best mix of pushed target rows and pulled source rows.
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
                // Per (sender, receiver), its crossing (source row, target row) pairs.
                let mut links = vec![Vec::new(); (m * m) as usize];
                for (i, &t) in targets.iter().enumerate() {
                    let r = (i / self.moves.len()) as u32;
                    if owner(r) != owner(t) {
                        arriving[owner(t) as usize] += 1;
                        senders[t as usize] |= 1 << owner(r);
                        links[(owner(r) * m + owner(t)) as usize].push((r, t));
                    }
                }
                let mut cover = vec![0u64; m as usize];
                for (k, pairs) in links.iter_mut().enumerate() {
                    cover[k % m as usize] += matching(pairs) as u64;
                }
                let mut pairs = vec![0u64; m as usize];
                for (t, s) in senders.iter().enumerate() {
                    pairs[owner(t as u32) as usize] += u64::from(s.count_ones());
                }
                let all = targets.len() as f64;
                let crossing: u64 = arriving.iter().sum();
                let largest = |v: &[u64]| *v.iter().max().expect("owners") as f64;
                let in_rows = |v: &[u64]| largest(v) / f64::from(rows);
                (m, crossing as f64 / all, largest(&arriving) / all, in_rows(&pairs), in_rows(&cover))
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
    println!(
        "owners\tcrossing share\tlargest owner's arriving share\tlargest owner's (row, sender) pairs\t\
         largest owner's rows, pushed or pulled at best"
    );
    for (m, share, largest, pairs, cover) in out {
        println!("{m}\t{share:.4}\t{largest:.4}\t{pairs:.4}\t{cover:.4}");
    }
}

/// The size of a maximum matching of the bipartite graph whose edges are `pairs` (source row,
/// target row; repeats allowed), by an augmenting path from each source row in turn.
fn matching(pairs: &mut Vec<(u32, u32)>) -> usize {
    pairs.sort_unstable();
    pairs.dedup();
    let numbered = |mut v: Vec<u32>| {
        v.sort_unstable();
        v.dedup();
        v
    };
    let (left, right): (Vec<u32>, Vec<u32>) = pairs.iter().copied().unzip();
    let (left, right) = (numbered(left), numbered(right));
    let at = |v: &[u32], x: u32| v.binary_search(&x).expect("listed");
    let mut adj = vec![Vec::new(); left.len()];
    for &(r, t) in pairs.iter() {
        adj[at(&left, r)].push(at(&right, t));
    }
    let mut mate = vec![usize::MAX; right.len()];
    let mut seen = vec![usize::MAX; right.len()];
    let mut size = 0;
    for u in 0..left.len() {
        // Depth first, iteratively: frames of (left node, its next edge); `path[i]` is the
        // right node that frame i went through.
        let mut stack = vec![(u, 0usize)];
        let mut path: Vec<usize> = Vec::new();
        while let Some(&(x, e)) = stack.last() {
            let Some(&v) = adj[x].get(e) else {
                stack.pop();
                path.pop();
                continue;
            };
            stack.last_mut().expect("a frame").1 += 1;
            if seen[v] == u {
                continue;
            }
            seen[v] = u;
            path.push(v);
            if mate[v] == usize::MAX {
                // The path alternates: each right node on it takes the left node before it.
                for (&(x, _), &v) in stack.iter().zip(&path) {
                    mate[v] = x;
                }
                size += 1;
                break;
            }
            stack.push((mate[v], 0));
        }
    }
    size
}
