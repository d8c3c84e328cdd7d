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
/// depth.
///
/// Which moves end an optimal word of `y` is known as the layers are built: `y = x m` with `x`
/// one layer nearer start, so the moves that generated `y` from the layer before are exactly
/// its ending moves. The moves that begin one are the inverses of those ending a word of
/// `y^-1` (the move sets are closed under inversion, so each layer is too).
pub struct Cuts {
    /// Per move, the index of its inverse.
    inverse: Vec<u32>,
    /// Per move `m`, the moves `m'` with `m m'` the identity or one move.
    short: Vec<u32>,
}

impl Cuts {
    fn new(moves: &[Cube]) -> Cuts {
        assert!(moves.len() <= 32, "move masks are 32 bits");
        let inverse = moves
            .iter()
            .map(|m| {
                let m_inv = m.inverse();
                moves.iter().position(|n| *n == m_inv).expect("the move set holds every move's inverse")
                    as u32
            })
            .collect();
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
        Cuts { inverse, short }
    }

    /// The moves that must not begin a second factor after a first factor ending with `ends`.
    fn cut(&self, ends: u32) -> u32 {
        bits(ends).fold(0, |cut, i| cut | self.short[i])
    }

    /// The moves beginning an optimal word of `y`, from the moves ending one of `y^-1`.
    fn starts(&self, inverse_ends: u32) -> u32 {
        bits(inverse_ends).fold(0, |starts, i| starts | 1 << self.inverse[i])
    }
}

/// The indices of the set bits of `mask`.
fn bits(mask: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |i| mask >> i & 1 == 1)
}

/// One distance's positions, sorted, each with the moves ending its optimal words (bit `i`:
/// move `i`), as the breadth-first search finds them.
struct Level {
    positions: Vec<Cube>,
    ends: Vec<u32>,
}

impl Layer {
    /// The layer of one level: start moves and cut starts from its ending moves, then the
    /// positions grouped by coset and cell.
    fn new(space: &dyn CosetSpace, cuts: &Cuts, level: Level) -> Layer {
        let Level { positions, ends } = level;
        let masks: Vec<(u32, u32)> = positions
            .par_iter()
            .zip(&ends)
            .map(|(x, &e)| {
                let inverse = positions.binary_search(&x.inverse()).expect("a layer holds its inverses");
                (cuts.starts(ends[inverse]), cuts.cut(e))
            })
            .collect();
        let cell = |x: &Cube| CELLS * space.coset(x) as usize + cell_of(x);
        let mut entries: Vec<(Cube, (u32, u32))> = positions.into_iter().zip(masks).collect();
        entries.par_sort_unstable_by_key(|(x, _)| cell(x));
        let (positions, (starts, cut_starts)): (Vec<Cube>, (Vec<u32>, Vec<u32>)) =
            entries.into_par_iter().unzip();
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
        let mut levels = vec![Level { positions: vec![space.project(&Cube::SOLVED)], ends: vec![0] }];
        for _ in 0..k {
            let last = &levels.last().expect("level 0 exists").positions;
            let mut next: Vec<(Cube, u32)> = last
                .par_iter()
                .flat_map_iter(|x| generators.iter().enumerate().map(move |(i, g)| (x.compose(g), 1 << i)))
                .collect();
            next.par_sort_unstable_by_key(|&(y, _)| y);
            // One entry per position, with the moves of all that generated it.
            next.dedup_by(|(y, end), (kept, ends)| {
                let same = y == kept;
                if same {
                    *ends |= *end;
                }
                same
            });
            // A neighbour of distance d lies at d - 1, d or d + 1.
            let older: Vec<&Vec<Cube>> = levels.iter().rev().take(2).map(|l| &l.positions).collect();
            let (positions, ends) = next
                .into_par_iter()
                .filter(|(y, _)| older.iter().all(|older| older.binary_search(y).is_err()))
                .unzip();
            levels.push(Level { positions, ends });
        }
        let layers = levels.into_iter().map(|level| Layer::new(space, &cuts, level)).collect();
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
