//! The stored positions near start, P[0..=k]: every position of a space at each distance up to
//! `k`, grouped by coset so that the product join finds the partners of a position with one
//! lookup, and within a coset by the place of edge cubie 0, so that a task enumerating one part
//! of a coset (see [`super::coset::Part`]) finds exactly the partners that land in its part.

use super::cosets::CosetSpace;
use crate::cube::{Cube, Move};
use rayon::prelude::*;

/// Edge places: a coset's positions are grouped into this many cells by the place of edge
/// cubie 0.
pub const CELLS: usize = 12;

/// The place of edge cubie 0 in `x`: a position's cell inside its coset.
#[inline]
pub fn cell_of(x: &Cube) -> usize {
    x.edges.perm.iter().position(|&c| c == 0).expect("edge cubie 0 sits somewhere")
}

/// The positions at one distance, sorted by coset and, inside a coset, by cell.
pub struct Layer {
    /// The positions, grouped by coset and cell (`by_cell[CELLS * c + q]..by_cell[CELLS * c + q
    /// + 1]` are those of coset `c` with edge cubie 0 on place `q`).
    pub positions: Vec<Cube>,
    /// Their inverses, in the same order.
    pub inverses: Vec<Cube>,
    /// Per position `t`, the moves `m` (bit `i` for the job's move `i`) that begin an optimal
    /// word of `t`: `m^-1 t` lies one nearer start.
    pub starts: Vec<u32>,
    /// Per position `s`, the moves that must not begin the second factor of a product `s t`:
    /// those `m'` for which some move `m` ending an optimal word of `s` makes `m m'` the
    /// identity or one move. Such a product has a word shorter than its factors' distances
    /// add up to, so it is not new (see [`Cuts`]).
    pub cut_starts: Vec<u32>,
    by_cell: Vec<u32>,
    /// The cosets holding positions, increasing.
    cosets: Vec<u32>,
}

/// The exact rule that skips products which cannot be new. A position at distance `d = a + b`
/// is a product `s t` with `s` at distance `a` and `t` at `b`; if an optimal word of `s` ends
/// with move `m` and one of `t` begins with `m'`, and `m m'` is the identity or a single move
/// (in the half-turn metric: two turns of one face; in the quarter-turn metric: a turn and its
/// inverse), then `s t` has a word of length at most `a + b - 1` and was found at a smaller
/// depth. Which moves end or begin an optimal word follows from the stored layers: `s m^-1`
/// (or `m^-1 t`) lies one layer nearer start.
pub struct Cuts {
    /// The inverses of the job's moves in the space.
    inverses: Vec<Cube>,
    /// Per move `m`, the moves `m'` with `m m'` the identity or one move.
    short: Vec<u32>,
}

impl Cuts {
    fn new(moves: &[Cube]) -> Cuts {
        assert!(moves.len() <= 32, "move masks are 32 bits");
        let inverses: Vec<Cube> = moves.iter().map(Cube::inverse).collect();
        let short = moves
            .iter()
            .map(|m| {
                let mut mask = 0u32;
                for (j, n) in moves.iter().enumerate() {
                    let mn = m.compose(n);
                    if mn == Cube::SOLVED || moves.contains(&mn) {
                        mask |= 1 << j;
                    }
                }
                mask
            })
            .collect();
        Cuts { inverses, short }
    }

    /// The start moves of `t` and the cut starts of `s` for positions one layer beyond
    /// `nearer` (sorted).
    fn masks(&self, x: &Cube, nearer: &[Cube]) -> (u32, u32) {
        let (mut starts, mut cut) = (0u32, 0u32);
        for i in 0..self.inverses.len() {
            if nearer.binary_search(&self.inverses[i].compose(x)).is_ok() {
                starts |= 1 << i;
            }
            if nearer.binary_search(&x.compose(&self.inverses[i])).is_ok() {
                cut |= self.short[i];
            }
        }
        (starts, cut)
    }
}

impl Layer {
    /// The layer of `positions`, one layer beyond `nearer` (sorted; empty at start).
    fn new(space: &dyn CosetSpace, cuts: &Cuts, mut positions: Vec<Cube>, nearer: &[Cube]) -> Layer {
        let cell = |x: &Cube| CELLS * space.coset(x) as usize + cell_of(x);
        positions.par_sort_unstable_by_key(cell);
        let (starts, cut_starts) = positions.par_iter().map(|x| cuts.masks(x, nearer)).unzip();
        let cells = CELLS * space.coset_count() as usize;
        let mut by_cell = vec![0u32; cells + 1];
        for x in &positions {
            by_cell[cell(x) + 1] += 1;
        }
        for i in 0..cells {
            by_cell[i + 1] += by_cell[i];
        }
        let inverses = positions.par_iter().map(Cube::inverse).collect();
        let cosets = (0..space.coset_count())
            .filter(|&c| by_cell[CELLS * (c as usize + 1)] > by_cell[CELLS * c as usize])
            .collect();
        Layer { positions, inverses, starts, cut_starts, by_cell, cosets }
    }

    /// The cosets holding positions of this layer, increasing.
    pub fn cosets(&self) -> &[u32] {
        &self.cosets
    }

    /// Where the positions of one coset lie in `positions` and `inverses`.
    #[inline]
    pub fn range(&self, coset: u32) -> std::ops::Range<usize> {
        let c = CELLS * coset as usize;
        self.by_cell[c] as usize..self.by_cell[c + CELLS] as usize
    }

    /// Where the positions of one coset with edge cubie 0 on place `place` lie.
    #[inline]
    pub fn cell(&self, coset: u32, place: usize) -> std::ops::Range<usize> {
        let c = CELLS * coset as usize + place;
        self.by_cell[c] as usize..self.by_cell[c + 1] as usize
    }

    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
}

/// P[0..=k] by a plain breadth-first search over sorted vectors.
pub struct Layers {
    pub layers: Vec<Layer>,
}

impl Layers {
    pub fn build(space: &dyn CosetSpace, moves: &[Move], k: u32) -> Layers {
        let generators: Vec<Cube> = moves.iter().map(|m| space.project(m.cube())).collect();
        let cuts = Cuts::new(&generators);
        let mut levels: Vec<Vec<Cube>> = vec![vec![space.project(&Cube::SOLVED)]];
        for _ in 0..k {
            let last = levels.last().expect("level 0 exists");
            let mut next: Vec<Cube> =
                last.par_iter().flat_map_iter(|x| generators.iter().map(move |g| x.compose(g))).collect();
            next.par_sort_unstable();
            next.dedup();
            // A neighbour of distance d lies at d - 1, d or d + 1.
            let older: Vec<&Vec<Cube>> = levels.iter().rev().take(2).collect();
            next.retain(|x| older.iter().all(|level| level.binary_search(x).is_err()));
            levels.push(next);
        }
        // Deepest first, so each level moves into its layer while the one before is still here.
        let mut layers = Vec::with_capacity(levels.len());
        while let Some(level) = levels.pop() {
            layers.push(Layer::new(space, &cuts, level, levels.last().map_or(&[], |v| v.as_slice())));
        }
        layers.reverse();
        Layers { layers }
    }

    /// The depths of the factors of the products that reach depth `d`: P[a] x P[d - a] with
    /// `a = min(k, d)` (any optimal word of length `d` splits so).
    pub fn split(&self, d: u32) -> (&Layer, &Layer) {
        let a = d.min(self.depth());
        (&self.layers[a as usize], &self.layers[(d - a) as usize])
    }

    /// The products of an average coset at depth `d`: the pairs of P[a] x P[b] over the
    /// `cosets` cosets.
    pub fn pairs_per_coset(&self, d: u32, cosets: u32) -> u64 {
        let (first, second) = self.split(d);
        first.len() as u64 * second.len() as u64 / cosets as u64
    }

    /// The deepest stored distance.
    pub fn depth(&self) -> u32 {
        self.layers.len() as u32 - 1
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        let entries = |l: &Layer| l.len() * (2 * std::mem::size_of::<Cube>() + 8) + 4 * l.by_cell.len();
        self.layers.iter().map(|l| entries(l) as u64).sum()
    }
}
