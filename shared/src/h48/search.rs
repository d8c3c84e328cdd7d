//! A direct search for hN distances, independent of the row BFS: IDA* over whole cubes, moves
//! applied by cube multiplication, the goal tested by encoding the position, and as heuristic
//! the larger of two plain-BFS distances (cocsep alone, esep alone), both admissible.
//!
//! hN's value is the smallest distance over the positions that differ only in the dropped
//! orientation bits (positions 0..=10-N, and position 11, whose bit is their parity). Each lift
//! fixes the starting orientation of the pieces on those positions; a move sequence ends
//! oriented for some lift exactly when every other piece ends oriented (the parity of the
//! free pieces then follows). So one search suffices, in which the pieces that start on dropped
//! positions may end in either orientation.

use super::builder::{plain_depths, plain_eoesep_depths};
use crate::coord::h48::H48Coords;
use crate::cube::{Cube, Move, MoveSet};
use std::sync::OnceLock;

pub struct DirectSearch {
    coords: H48Coords,
    moves: Vec<Move>,
    cocsep_depth: Vec<u8>,
    esep_depth: Vec<u8>,
    /// Plain-BFS eoesep distances, the bound when no orientation is free (made on first use:
    /// 71 MB and a few seconds).
    eoesep_depth: OnceLock<Vec<u8>>,
    goal: (u32, u32),
}

impl Default for DirectSearch {
    fn default() -> Self {
        let coords = H48Coords;
        let moves = MoveSet::Htm.moves();
        let goal = (coords.cocsep(&Cube::SOLVED), coords.esep(&Cube::SOLVED));
        let cocsep_depth = plain_depths(&coords.cocsep_coord(), goal.0, &moves);
        let esep_depth = plain_depths(&coords.esep_coord(), goal.1, &moves);
        DirectSearch { coords, moves, cocsep_depth, esep_depth, eoesep_depth: OnceLock::new(), goal }
    }
}

impl DirectSearch {
    pub fn coords(&self) -> &H48Coords {
        &self.coords
    }

    /// An admissible bound on the distance of `x` with the orientations of `free` pieces free.
    fn bound(&self, x: &Cube, free: u16) -> u8 {
        let c = self.cocsep_depth[self.coords.cocsep(x) as usize];
        let e = if free == 0 {
            let eoesep = self.eoesep_depth.get_or_init(|| plain_eoesep_depths(&self.coords, &self.moves));
            eoesep[self.coords.eoesep(x) as usize]
        } else {
            self.esep_depth[self.coords.esep(x) as usize]
        };
        c.max(e)
    }

    /// The h0 distance of `x`: the fewest face turns that put every corner in its tetrad,
    /// oriented, and every edge in its slice.
    pub fn h0_distance(&self, x: &Cube) -> u8 {
        self.hn_distance(x, 0)
    }

    /// The hN distance of `x`: the fewest face turns that also orient every edge, for the best
    /// choice of the orientations hN drops.
    pub fn hn_distance(&self, x: &Cube, n: u8) -> u8 {
        let free = Self::free_pieces(x, n);
        (self.bound(x, free)..)
            .find(|&limit| self.dfs(x, free, 0, limit, usize::MAX))
            .expect("a distance exists")
    }

    /// Whether the hN distance of `x` is at most `limit`.
    pub fn reaches_within(&self, x: &Cube, n: u8, limit: u8) -> bool {
        self.dfs(x, Self::free_pieces(x, n), 0, limit, usize::MAX)
    }

    /// The pieces on the positions whose orientation hN drops: the solver's positions
    /// 0..=11-N (bits 0..=10-N of eo, and position 0, whose flip is implied), none for N = 11.
    fn free_pieces(x: &Cube, n: u8) -> u16 {
        assert!(n <= 11, "h48h{n} does not exist");
        (0..12)
            .filter(|&i| n < 11 && i + n as usize <= 11)
            .fold(0u16, |acc, i| acc | 1 << x.edges.perm[crate::coord::h48::solver::edge_slot(i)])
    }

    /// Every edge whose piece is not in `free` is oriented.
    fn oriented(x: &Cube, free: u16) -> bool {
        (0..12).all(|p| x.edges.ori[p] == 0 || free >> x.edges.perm[p] & 1 == 1)
    }

    fn dfs(&self, x: &Cube, free: u16, g: u8, limit: u8, last_face: usize) -> bool {
        let h = self.bound(x, free);
        if h == 0 && (self.coords.cocsep(x), self.coords.esep(x)) == self.goal && Self::oriented(x, free) {
            return true;
        }
        if g + h.max(1) > limit {
            return false;
        }
        for &m in &self.moves {
            let f = m.face();
            // Same face twice is never shorter; opposite faces commute, so keep one order.
            if f == last_face || (last_face != usize::MAX && f + 3 == last_face) {
                continue;
            }
            if self.dfs(&x.compose(m.cube()), free, g + 1, limit, f) {
                return true;
            }
        }
        false
    }
}
