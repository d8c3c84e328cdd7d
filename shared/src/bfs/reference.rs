//! The slow, plain method for the corners-only cube, kept as an oracle for the row engine.
//!
//! Positions: a breadth-first search over the raw index `permutation rank x 3^7 + orientation
//! rank` (88,179,840 entries, one byte each), with separate move tables for the two parts and
//! no symmetry at all. Classes: Burnside's lemma per depth, counting for every symmetry `s` the
//! positions with `s x s^-1 = x` (classes under M), and also those with `s x^-1 s^-1 = x`
//! (classes under M and inversion, a group of 96 acting as `x -> s x^e s^-1`). Fixed points are
//! found by first filtering corner permutations, so nothing here canonicalizes a position or
//! shares code with the row engine beyond the cube algebra.

use crate::coord::rank::{factorial, ori_rank, ori_unrank, perm_rank, perm_unrank};
use crate::cube::{Corners, Move, Symmetry, SYMMETRY_COUNT};
use crate::report::DepthCounts;
use rayon::prelude::*;

const ORIS: usize = 2187;
const UNSEEN: u8 = u8::MAX;

fn corners_of(perm: u32, ori: u32) -> Corners {
    let mut x = Corners::IDENTITY;
    perm_unrank(perm, &mut x.perm);
    ori_unrank(ori, 3, &mut x.ori);
    x
}

/// Distance of every corner position, by raw index.
pub fn corner_depths(moves: &[Move]) -> Vec<u8> {
    let perms = factorial(8) as usize;
    let nm = moves.len();
    let perm_move: Vec<u32> = (0..perms as u32)
        .flat_map(|p| {
            let x = corners_of(p, 0);
            moves.iter().map(move |m| perm_rank(&x.compose(&m.cube().corners).perm)).collect::<Vec<_>>()
        })
        .collect();
    let ori_move: Vec<u32> = (0..ORIS as u32)
        .flat_map(|o| {
            let x = corners_of(0, o);
            moves.iter().map(move |m| ori_rank(&x.compose(&m.cube().corners).ori, 3)).collect::<Vec<_>>()
        })
        .collect();
    let mut depth = vec![UNSEEN; perms * ORIS];
    depth[0] = 0;
    let mut d = 0u8;
    loop {
        let mut found = false;
        for p in 0..perms {
            for o in 0..ORIS {
                if depth[p * ORIS + o] != d {
                    continue;
                }
                for mi in 0..nm {
                    let q = perm_move[p * nm + mi] as usize * ORIS + ori_move[o * nm + mi] as usize;
                    if depth[q] == UNSEEN {
                        depth[q] = d + 1;
                        found = true;
                    }
                }
            }
        }
        if !found {
            return depth;
        }
        d += 1;
    }
}

/// Per-depth positions and class counts of the corners-only cube by the plain method.
pub fn corner_distribution(moves: &[Move]) -> Vec<DepthCounts> {
    let depth = corner_depths(moves);
    let max = *depth.iter().max().expect("non-empty") as usize;
    assert!(max < UNSEEN as usize, "every corner position is reachable");
    let mut positions = vec![0u64; max + 1];
    for &d in &depth {
        positions[d as usize] += 1;
    }
    // Fixed points of x -> s x s^-1 (inverted = false) and x -> s x^-1 s^-1 (inverted = true).
    let fixed = |inverted: bool| -> Vec<u64> {
        Symmetry::all()
            .par_bridge()
            .map(|s| {
                let mut counts = vec![0u64; max + 1];
                let image = |x: &Corners| {
                    if inverted {
                        s.conjugate_corners(&x.inverse())
                    } else {
                        s.conjugate_corners(x)
                    }
                };
                for p in 0..factorial(8) {
                    let x0 = corners_of(p, 0);
                    if image(&x0).perm != x0.perm {
                        continue;
                    }
                    for o in 0..ORIS as u32 {
                        let x = corners_of(p, o);
                        if image(&x) == x {
                            counts[depth[p as usize * ORIS + o as usize] as usize] += 1;
                        }
                    }
                }
                counts
            })
            .reduce(|| vec![0; max + 1], |a, b| a.iter().zip(&b).map(|(x, y)| x + y).collect())
    };
    let plain = fixed(false);
    let inverted = fixed(true);
    (0..=max)
        .map(|d| {
            let g = SYMMETRY_COUNT as u64;
            assert_eq!(plain[d] % g, 0);
            assert_eq!((plain[d] + inverted[d]) % (2 * g), 0);
            DepthCounts {
                depth: d as u32,
                positions: positions[d],
                classes_sym: plain[d] / g,
                classes_sym_inv: (plain[d] + inverted[d]) / (2 * g),
            }
        })
        .collect()
}

/// Counts per depth by the most direct method there is: a breadth-first search over whole
/// [`crate::cube::Cube`] values in a hash set, with `project` mapping each position onto the
/// space (e.g. clearing the corners for the edges-only cube), and classes found by
/// canonicalizing: the smallest conjugate under `group` (and, for the last column, also of the
/// inverse). For small depths only.
pub fn brute_force_distribution(
    moves: &[Move],
    group: crate::cube::SymmetryGroup,
    max_depth: u32,
    project: impl Fn(&crate::cube::Cube) -> crate::cube::Cube,
) -> Vec<DepthCounts> {
    use crate::cube::Cube;
    use std::collections::HashSet;
    let canonical = |x: &Cube| group.members().map(|s| s.conjugate(x)).min().expect("non-empty group");
    let mut seen: HashSet<Cube> = HashSet::from([Cube::SOLVED]);
    let mut frontier = vec![Cube::SOLVED];
    let mut out = Vec::new();
    for depth in 0..=max_depth {
        if depth > 0 {
            let mut next = Vec::new();
            for x in &frontier {
                for m in moves {
                    let y = project(&x.compose(m.cube()));
                    if seen.insert(y) {
                        next.push(y);
                    }
                }
            }
            frontier = next;
        }
        if frontier.is_empty() {
            break;
        }
        let classes: HashSet<Cube> = frontier.iter().map(canonical).collect();
        let with_inverse: HashSet<Cube> =
            frontier.iter().map(|x| canonical(x).min(canonical(&x.inverse()))).collect();
        out.push(DepthCounts {
            depth,
            positions: frontier.len() as u64,
            classes_sym: classes.len() as u64,
            classes_sym_inv: with_inverse.len() as u64,
        });
    }
    out
}
