//! A direct search for h0 distances, independent of the row BFS: IDA* over whole cubes, moves
//! applied by cube multiplication, the goal tested by encoding the position, and as heuristic
//! the larger of two plain-BFS distances (cocsep alone, esep alone), both admissible.

use super::builder::plain_depths;
use super::coords::H48Coords;
use crate::cube::{Cube, Move, MoveSet};

pub struct DirectSearch {
    coords: H48Coords,
    moves: Vec<Move>,
    cocsep_depth: Vec<u8>,
    esep_depth: Vec<u8>,
    goal: (u32, u32),
}

impl Default for DirectSearch {
    fn default() -> Self {
        let coords = H48Coords::default();
        let moves = MoveSet::Htm.moves();
        let goal = (coords.cocsep(&Cube::SOLVED), coords.esep(&Cube::SOLVED));
        let cocsep_depth = plain_depths(&coords.cocsep_coord(), goal.0, &moves);
        let esep_depth = plain_depths(&coords.esep_coord(), goal.1, &moves);
        DirectSearch { coords, moves, cocsep_depth, esep_depth, goal }
    }
}

impl DirectSearch {
    pub fn coords(&self) -> &H48Coords {
        &self.coords
    }

    fn bound(&self, x: &Cube) -> u8 {
        let c = self.cocsep_depth[self.coords.cocsep(x) as usize];
        let e = self.esep_depth[self.coords.esep(x) as usize];
        c.max(e)
    }

    /// The h0 distance of `x`: the fewest face turns that put every corner in its tetrad,
    /// oriented, and every edge in its slice.
    pub fn h0_distance(&self, x: &Cube) -> u8 {
        let mut limit = self.bound(x);
        loop {
            if self.dfs(x, 0, limit, usize::MAX) {
                return limit;
            }
            limit += 1;
        }
    }

    fn dfs(&self, x: &Cube, g: u8, limit: u8, last_face: usize) -> bool {
        let h = self.bound(x);
        if h == 0 && (self.coords.cocsep(x), self.coords.esep(x)) == self.goal {
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
            if self.dfs(&x.compose(m.cube()), g + 1, limit, f) {
                return true;
            }
        }
        false
    }
}
