//! A small row index for the simulator: the search runs the real part code on it in
//! microseconds. Its six moves are the half turns (each its own inverse, so a pull sees the
//! neighbours a push does): the U and D half turns swap neighbouring rows in two interleaved
//! pairings, so rows form a path and the search runs about as many levels as there are rows;
//! each moves the columns by a permutation that depends on the row; the other four fix the row
//! and swap columns in pairs. Drawn from a seed.

use crate::coord::ColumnMapper;
use crate::cube::{Move, SplitMix64};
use crate::space::{AnyColumn, Inverses, RowIndex};

pub struct TinySpace {
    rows: u32,
    columns: u32,
    /// Per (row, face): the target row and the column map.
    moves: Vec<(u32, Vec<u16>)>,
}

#[derive(Clone, Copy)]
pub struct TinyMap<'a>(&'a [u16]);

impl ColumnMapper for TinyMap<'_> {
    #[inline]
    fn apply(&self, column: u32) -> u32 {
        self.0[column as usize] as u32
    }
}

fn permutation(rng: &mut SplitMix64, n: usize) -> Vec<u16> {
    let mut p: Vec<u16> = (0..n as u16).collect();
    for i in (1..n).rev() {
        p.swap(i, rng.below(i as u64 + 1) as usize);
    }
    p
}

fn inverse(p: &[u16]) -> Vec<u16> {
    let mut q = vec![0u16; p.len()];
    for (i, &v) in p.iter().enumerate() {
        q[v as usize] = i as u16;
    }
    q
}

/// A random involution: columns swapped in pairs, about a quarter left in place.
fn involution(rng: &mut SplitMix64, n: usize) -> Vec<u16> {
    let order = permutation(rng, n);
    let mut p: Vec<u16> = (0..n as u16).collect();
    for pair in order.chunks(2) {
        if let [a, b] = *pair {
            if rng.below(4) != 0 {
                p[a as usize] = b;
                p[b as usize] = a;
            }
        }
    }
    p
}

impl TinySpace {
    pub fn new(seed: u64, rows: u32, columns: u32) -> Self {
        let mut rng = SplitMix64::new(seed);
        let c = columns as usize;
        let mut moves = vec![(0, Vec::new()); rows as usize * 6];
        for face in 0..6usize {
            // U pairs rows 0-1, 2-3, ...; D pairs 1-2, 3-4, ...; the other faces fix rows.
            let first = match face {
                0 => 0,
                1 => 1,
                _ => rows,
            };
            let mut r = 0u32;
            while r < rows {
                if r >= first && (r - first).is_multiple_of(2) && r + 1 < rows {
                    let p = permutation(&mut rng, c);
                    moves[r as usize * 6 + face] = (r + 1, inverse(&p));
                    moves[(r + 1) as usize * 6 + face] = (r, p);
                    r += 2;
                } else {
                    moves[r as usize * 6 + face] = (r, involution(&mut rng, c));
                    r += 1;
                }
            }
        }
        TinySpace { rows, columns, moves }
    }

    /// The moves the space is searched with: the six half turns.
    pub fn moves() -> Vec<Move> {
        (0..6).map(|f| Move::new(f, 2)).collect()
    }
}

impl RowIndex for TinySpace {
    type Mapper<'a> = TinyMap<'a>;
    type Symmetric<'a> = TinyMap<'a>;
    type Filter<'a> = AnyColumn;

    fn row_count(&self) -> u32 {
        self.rows
    }

    fn column_count(&self) -> u32 {
        self.columns
    }

    fn entry_count(&self) -> u64 {
        self.rows as u64 * self.columns as u64
    }

    fn start(&self) -> (u32, u32) {
        (0, 0)
    }

    fn transition(&self, row: u32, m: Move) -> (u32, TinyMap<'_>) {
        assert_eq!(m.turns(), 2, "the tiny space moves by half turns");
        let (target, map) = &self.moves[row as usize * 6 + m.face()];
        (*target, TinyMap(map))
    }

    fn row_weight(&self, _: u32) -> u64 {
        1
    }

    /// More than one, so that workers pull their images in some forward levels (into their
    /// own parts, [`crate::bfs::owned::OwnedPart::pulls_own_images`], and into others',
    /// [`crate::bfs::owned::pulls_images`]) and push them in others: the simulator runs every
    /// way within one search.
    fn pull_weight(&self) -> u64 {
        4
    }

    fn stabilizer(&self, _: u32) -> Vec<TinyMap<'_>> {
        Vec::new()
    }

    fn inverses(&self, _: u32) -> Inverses<AnyColumn> {
        Inverses::Undefined
    }

    fn locate_inverse(&self, row: u32, column: u32) -> (u32, u32) {
        (row, column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_move_undoes_itself_and_the_search_runs_many_levels() {
        let space = TinySpace::new(5, 20, 128);
        for row in 0..20 {
            for m in TinySpace::moves() {
                let (t, map) = space.transition(row, m);
                let (back, inv) = space.transition(t, m);
                assert_eq!(back, row);
                for c in 0..128 {
                    assert_eq!(inv.apply(map.apply(c)), c);
                }
            }
        }
        let depths = crate::bfs::run(&space, &TinySpace::moves(), &Default::default(), |_, _| {}).unwrap();
        let total: u64 = depths.iter().map(|d| d.positions).sum();
        assert_eq!(total, 20 * 128, "every entry is reached");
        assert!(depths.len() >= 20, "{} levels", depths.len());
    }
}
