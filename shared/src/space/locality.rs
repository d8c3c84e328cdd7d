//! Row orders that keep together rows the moves join. A cluster cuts the rows into runs of
//! consecutive rows, one owner each, and every image a move sends across a run's edge is sent
//! over the network; a space whose rows come in this order sends fewer (docs/distribution.md,
//! "Rows cut where few moves cross").
//!
//! The order is a recursive bisection of a weighted graph: its nodes are groups of rows that
//! should never be cut (orbits of the moves that stay inside them), its edges count the moves
//! between two groups. Each set is split into two halves of equal size by a breadth-first
//! sweep from a node far from the others, then nodes move across while that removes edges from
//! the cut and keeps the halves within 2 % of each other; each half is then ordered the same
//! way. Any run of the order at any scale (a half, a quarter, an eighth) is then a set that
//! few edges leave. Deterministic: ties go to the node met first.

use rayon::prelude::*;
use std::collections::VecDeque;

/// The parts a cluster cuts a row search's rows into unless told otherwise (the coordinator's
/// `--tasks-per-level`); each worker owns a run of consecutive parts.
pub const PARTS: u32 = 64;

/// How a block space (corners, edges) numbers its rows. The locality order spreads the
/// positions near the start over the whole bit array and slows a search in one process
/// (docs/row-bfs.md: edges to depth 9, 41 to 46 s against 49 to 55), so only a search whose
/// rows are cut among owners asks for it. H and H' are always in locality
/// order: theirs costs nothing measurable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowOrder {
    /// Classes by increasing representative, as they are built.
    Representative,
    /// [`row_order`]: runs of rows that few moves leave.
    Locality,
}

/// The rows `0..rows` in locality order, for a space with `moves` moves where `target(r, i)` is
/// the row move `i` takes row `r` to: the moves for which `home(i)` holds join the rows into
/// orbits (the orbits of the subgroup those moves generate, up to symmetry), which are never
/// cut; the orbits come in the bisection order of the graph the other moves make between them.
pub fn row_order(
    rows: u32,
    moves: usize,
    target: impl Fn(u32, usize) -> u32 + Sync,
    home: impl Fn(usize) -> bool,
) -> Vec<u32> {
    let n = rows as usize;
    let (inside, across): (Vec<usize>, Vec<usize>) = (0..moves).partition(|&i| home(i));
    let mut orbit_of = vec![usize::MAX; n];
    let mut orbits: Vec<Vec<u32>> = Vec::new();
    for start in 0..rows {
        if orbit_of[start as usize] != usize::MAX {
            continue;
        }
        let id = orbits.len();
        orbit_of[start as usize] = id;
        let mut members = vec![start];
        let mut i = 0;
        while let Some(&r) = members.get(i) {
            i += 1;
            for t in inside.iter().map(|&m| target(r, m)) {
                if orbit_of[t as usize] == usize::MAX {
                    orbit_of[t as usize] = id;
                    members.push(t);
                }
            }
        }
        orbits.push(members);
    }
    // Per orbit, the orbits its rows' other moves lead to, counted; then each edge both ways.
    let (target, orbit_of, across) = (&target, &orbit_of, &across);
    let out: Vec<Vec<(usize, u64)>> = orbits
        .par_iter()
        .enumerate()
        .map(|(a, members)| {
            let mut to: Vec<usize> = members
                .iter()
                .flat_map(|&r| across.iter().map(move |&m| target(r, m)))
                .map(|t| orbit_of[t as usize])
                .filter(|&b| b != a)
                .collect();
            to.sort_unstable();
            counted(to.into_iter().map(|b| (b, 1)))
        })
        .collect();
    let mut edges = out.clone();
    for (a, list) in out.iter().enumerate() {
        for &(b, w) in list {
            edges[b].push((a, w));
        }
    }
    for list in &mut edges {
        list.sort_unstable();
        *list = counted(list.drain(..));
    }
    let graph = GroupGraph { sizes: orbits.iter().map(|o| o.len() as u64).collect(), edges };
    graph.bisection_order().into_iter().flat_map(|o| orbits[o].iter().copied()).collect()
}

/// (node, weight) pairs sorted by node, with the weights of each node summed.
fn counted(pairs: impl Iterator<Item = (usize, u64)>) -> Vec<(usize, u64)> {
    let mut out: Vec<(usize, u64)> = Vec::new();
    for (b, w) in pairs {
        match out.last_mut() {
            Some((last, sum)) if *last == b => *sum += w,
            _ => out.push((b, w)),
        }
    }
    out
}

/// A graph of row groups: per node its size (rows) and its neighbours with edge weights.
pub struct GroupGraph {
    pub sizes: Vec<u64>,
    pub edges: Vec<Vec<(usize, u64)>>,
}

impl GroupGraph {
    /// The nodes in recursive-bisection order.
    pub fn bisection_order(&self) -> Vec<usize> {
        let mut member = vec![false; self.sizes.len()];
        let mut order = Vec::with_capacity(self.sizes.len());
        self.bisect((0..self.sizes.len()).collect(), &mut member, &mut order);
        order
    }

    fn bisect(&self, nodes: Vec<usize>, member: &mut [bool], order: &mut Vec<usize>) {
        if nodes.len() <= 1 {
            order.extend(nodes);
            return;
        }
        nodes.iter().for_each(|&x| member[x] = true);
        let far = *self.sweep(nodes[0], &nodes, member).last().expect("nodes");
        let sweep = self.sweep(far, &nodes, member);
        let total: u64 = nodes.iter().map(|&x| self.sizes[x]).sum();
        let mut first = vec![false; self.sizes.len()];
        let mut first_size = 0;
        for &x in &sweep {
            if 2 * first_size < total {
                first[x] = true;
                first_size += self.sizes[x];
            }
        }
        // Moves that shrink the cut, the best first, while the halves stay balanced. A node's
        // gain is the weight of its edges across the cut less those on its side.
        let slack = total / 50;
        let mut gain = vec![0i64; self.sizes.len()];
        for &x in &nodes {
            for &(y, w) in self.edges[x].iter().filter(|&&(y, _)| member[y]) {
                gain[x] += if first[y] == first[x] { -(w as i64) } else { w as i64 };
            }
        }
        for _ in 0..nodes.len() {
            let mut best: Option<usize> = None;
            for &x in &nodes {
                let moved = if first[x] { first_size - self.sizes[x] } else { first_size + self.sizes[x] };
                if gain[x] > 0
                    && (2 * moved).abs_diff(total) <= 2 * slack
                    && best.is_none_or(|b| gain[x] > gain[b])
                {
                    best = Some(x);
                }
            }
            let Some(x) = best else { break };
            first[x] = !first[x];
            first_size = if first[x] { first_size + self.sizes[x] } else { first_size - self.sizes[x] };
            gain[x] = -gain[x];
            for &(y, w) in self.edges[x].iter().filter(|&&(y, _)| member[y]) {
                gain[y] += if first[y] == first[x] { -2 * w as i64 } else { 2 * w as i64 };
            }
        }
        nodes.iter().for_each(|&x| member[x] = false);
        let (a, b): (Vec<usize>, Vec<usize>) = sweep.into_iter().partition(|&x| first[x]);
        self.bisect(a, member, order);
        self.bisect(b, member, order);
    }

    /// `nodes` in breadth-first order from `start` inside the set (`member`), then any the
    /// set's own edges do not reach, in the order given.
    fn sweep(&self, start: usize, nodes: &[usize], member: &[bool]) -> Vec<usize> {
        let mut seen = vec![false; self.sizes.len()];
        let mut out = Vec::with_capacity(nodes.len());
        for root in std::iter::once(start).chain(nodes.iter().copied()) {
            if seen[root] {
                continue;
            }
            seen[root] = true;
            let mut queue = VecDeque::from([root]);
            while let Some(x) = queue.pop_front() {
                out.push(x);
                for &(y, _) in &self.edges[x] {
                    if member[y] && !seen[y] {
                        seen[y] = true;
                        queue.push_back(y);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring of `n` unit nodes: any run of the order is an arc, so cutting it into `k` runs cuts
    /// at most about 2k edges, where a shuffled order would cut nearly every one.
    #[test]
    fn a_ring_is_cut_into_arcs() {
        let n = 256;
        let edges = (0..n).map(|i| vec![((i + 1) % n, 1), ((i + n - 1) % n, 1)]).collect();
        let graph = GroupGraph { sizes: vec![1; n], edges };
        let order = graph.bisection_order();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "a permutation");
        let mut run = vec![0; n];
        for k in [2, 4, 8, 16] {
            for (i, &x) in order.iter().enumerate() {
                run[x] = i * k / n;
            }
            let cut = (0..n).filter(|&i| run[i] != run[(i + 1) % n]).count();
            assert!(cut <= 2 * k, "{k} runs cut {cut} edges");
        }
    }

    /// Two cliques joined by one edge are split along that edge, whatever the node numbering.
    #[test]
    fn two_cliques_split_along_their_bridge() {
        let n = 20;
        let side = |x: usize| (x * 7) % n < n / 2;
        let mut edges: Vec<Vec<(usize, u64)>> = (0..n)
            .map(|x| (0..n).filter(|&y| x != y && side(x) == side(y)).map(|y| (y, 1)).collect())
            .collect();
        let (a, b) = ((0..n).find(|&x| side(x)).unwrap(), (0..n).find(|&x| !side(x)).unwrap());
        edges[a].push((b, 1));
        edges[b].push((a, 1));
        let order = GroupGraph { sizes: vec![1; n], edges }.bisection_order();
        assert!(order[..n / 2].iter().all(|&x| side(x) == side(order[0])), "{order:?}");
    }
}
