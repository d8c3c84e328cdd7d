//! The stored positions near start, P[0..=k]: every position of a space at each distance up to
//! `k`, grouped by coset so that the product join finds the partners of a position with one
//! lookup.

use super::cosets::CosetSpace;
use crate::cube::{Cube, Move};
use rayon::prelude::*;

/// The positions at one distance, sorted by coset.
pub struct Layer {
    /// The positions, grouped by coset (`by_coset[c]..by_coset[c + 1]` are those of coset `c`).
    pub positions: Vec<Cube>,
    /// Their inverses, in the same order.
    pub inverses: Vec<Cube>,
    by_coset: Vec<u32>,
    /// The cosets holding positions, increasing.
    cosets: Vec<u32>,
}

impl Layer {
    fn new(space: &dyn CosetSpace, mut positions: Vec<Cube>) -> Layer {
        positions.par_sort_unstable_by_key(|x| space.coset(x));
        let mut by_coset = vec![0u32; space.coset_count() as usize + 1];
        for x in &positions {
            by_coset[space.coset(x) as usize + 1] += 1;
        }
        for c in 0..space.coset_count() as usize {
            by_coset[c + 1] += by_coset[c];
        }
        let inverses = positions.par_iter().map(Cube::inverse).collect();
        let cosets =
            (0..space.coset_count()).filter(|&c| by_coset[c as usize + 1] > by_coset[c as usize]).collect();
        Layer { positions, inverses, by_coset, cosets }
    }

    /// The positions of one coset.
    #[inline]
    pub fn in_coset(&self, coset: u32) -> &[Cube] {
        &self.positions[self.range(coset)]
    }

    /// The cosets holding positions of this layer, increasing.
    pub fn cosets(&self) -> &[u32] {
        &self.cosets
    }

    /// Where the positions of one coset lie in `positions` and `inverses`.
    #[inline]
    pub fn range(&self, coset: u32) -> std::ops::Range<usize> {
        let c = coset as usize;
        self.by_coset[c] as usize..self.by_coset[c + 1] as usize
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
        Layers { layers: levels.into_iter().map(|level| Layer::new(space, level)).collect() }
    }

    /// The depths of the factors of the products that reach depth `d`: P[a] x P[d - a] with
    /// `a = min(k, d)` (any optimal word of length `d` splits so).
    pub fn split(&self, d: u32) -> (&Layer, &Layer) {
        let a = d.min(self.depth());
        (&self.layers[a as usize], &self.layers[(d - a) as usize])
    }

    /// The deepest stored distance.
    pub fn depth(&self) -> u32 {
        self.layers.len() as u32 - 1
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.layers.iter().map(|l| (2 * l.len() * std::mem::size_of::<Cube>()) as u64).sum()
    }
}
