//! The coset solver against a breadth-first search over whole positions: every position within
//! a few moves of solved, kept in a hash set, those of the coset counted by distance. In CI the
//! space is H' (the four middle-slice edges indistinguishable, 24 times smaller bit arrays:
//! the same phase-1 search, levels and kernels); the whole of H is in the full tier.

use shared::bfs::Progress;
use shared::coset::CosetSolver;
use shared::cube::{apply_moves, parse_moves, Cube, Move};
use std::collections::HashSet;

/// The position with the middle-slice edges (cubies 8..11) made alike, when `merge`.
fn merged(x: Cube, merge: bool) -> Cube {
    let mut x = x;
    if merge {
        for p in &mut x.edges.perm {
            *p = (*p).min(8);
        }
    }
    x
}

/// Whether `g . rep^-1` is in H: every piece oriented, the slice edges in the slice.
fn in_coset(g: &Cube, rep: &Cube) -> bool {
    let y = g.compose(&rep.inverse());
    y.corners.ori.iter().all(|&o| o == 0)
        && y.edges.ori.iter().all(|&o| o == 0)
        && y.edges.perm[8..].iter().all(|&p| p >= 8)
        && y.edges.perm[..8].iter().all(|&p| p < 8)
}

/// Positions of the coset of each representative at each distance to `depth`, by a BFS from
/// solved over whole positions (merged ones when `merge`).
fn brute_force(reps: &[Cube], depth: usize, merge: bool) -> Vec<Vec<u64>> {
    let mut counts = vec![Vec::new(); reps.len()];
    let start = merged(Cube::SOLVED, merge);
    let mut seen: HashSet<Cube> = HashSet::from([start]);
    let mut frontier = vec![start];
    loop {
        for (k, rep) in reps.iter().enumerate() {
            counts[k].push(frontier.iter().filter(|g| in_coset(g, rep)).count() as u64);
        }
        if counts[0].len() > depth {
            break;
        }
        let mut next = Vec::new();
        for g in &frontier {
            for m in Move::all() {
                let h = g.compose(m.cube());
                if seen.insert(h) {
                    next.push(h);
                }
            }
        }
        frontier = next;
    }
    counts
}

fn reps(texts: &[&str]) -> Vec<Cube> {
    texts.iter().map(|t| apply_moves(&parse_moves(t).unwrap())).collect()
}

#[test]
fn coset_distances_equal_a_search_over_positions_in_h_prime() {
    const DEPTH: u32 = 5;
    // H itself, H again by a representative inside it, one move out, three moves out, and
    // cosets whose nearest position is farther than DEPTH (all counts zero but the beyond).
    let texts = ["", "U R2 D'", "R", "F", "R U F", "L' B2 R D F'", "R U F L B D R' F2 U' L"];
    let reps = reps(&texts);
    let expected = brute_force(&reps, DEPTH as usize, true);
    let solver = CosetSolver::new(false);
    let progress = Progress::default();
    for ((text, rep), expected) in texts.iter().zip(&reps).zip(&expected) {
        let found = solver.exact(rep, DEPTH, &progress).unwrap();
        let mut counts = found.counts.clone();
        counts.resize(DEPTH as usize + 1, 0);
        assert_eq!(&counts, expected, "coset of {text:?}");
        assert_eq!(found.counts.iter().sum::<u64>() + found.beyond, solver.coset_size(), "{text:?}");
    }
    // The checks see the cosets: H holds solved; R and R' (= R2 R) are R's coset's positions at 1.
    assert!(expected[0][0] == 1 && expected[2][1] == 2, "{expected:?}");
}

/// The same on H itself, whose bit arrays are 4.9 GB each (touched only where levels are).
#[test]
#[ignore = "full tier: three 4.9 GB bit arrays (scripts/test-full.sh)"]
fn coset_distances_equal_a_search_over_positions_in_h() {
    const DEPTH: u32 = 5;
    let texts = ["", "R", "R U F", "L' B2 R D F'"];
    let reps = reps(&texts);
    let expected = brute_force(&reps, DEPTH as usize, false);
    let solver = CosetSolver::new(true);
    let progress = Progress::default();
    for ((text, rep), expected) in texts.iter().zip(&reps).zip(&expected) {
        let found = solver.exact(rep, DEPTH, &progress).unwrap();
        let mut counts = found.counts.clone();
        counts.resize(DEPTH as usize + 1, 0);
        assert_eq!(&counts, expected, "coset of {text:?}");
    }
}

/// The identity coset (H itself) and the flip8 coset (the eight U and D edges flipped) to depth
/// 10 against Rokicki's published distributions (docs/references.md).
#[test]
#[ignore = "full tier: about a minute a coset and 13.6 GiB (scripts/test-full.sh)"]
fn the_identity_and_flip8_cosets_have_rokickis_published_distances() {
    let identity: [u64; 11] =
        [1, 10, 67, 456, 3_079, 20_076, 125_218, 756_092, 4_331_124, 23_639_531, 122_749_840];
    let flip8: [u64; 11] = [0, 0, 0, 0, 0, 0, 128, 2_480, 29_616, 275_072, 2_025_588];
    let mut flipped = Cube::SOLVED;
    flipped.edges.ori[..8].fill(1);
    let solver = CosetSolver::new(true);
    let progress = Progress::default();
    for (rep, published) in [(Cube::SOLVED, identity), (flipped, flip8)] {
        let found = solver.exact(&rep, 10, &progress).unwrap();
        assert_eq!(found.counts, published);
        assert_eq!(found.counts.iter().sum::<u64>() + found.beyond, 19_508_428_800);
    }
}

#[test]
fn a_coset_jobs_size_and_memory_are_its_solvers() {
    use shared::coset::CosetSpec;
    for alike in [true, false] {
        let spec = CosetSpec { exact_to: 3, slice_edges_alike: alike };
        let solver = CosetSolver::new(!alike);
        assert_eq!(spec.state_bytes(), solver.state_bytes(), "alike {alike}");
        assert_eq!(spec.coset_size(), solver.coset_size(), "alike {alike}");
    }
}
