//! The coset solver against a breadth-first search over whole positions: every position within
//! a few moves of solved, kept in a hash set, those of the coset counted by distance; and
//! against Rokicki's published distributions of two whole cosets (full tier).

use shared::bfs::Progress;
use shared::coset::{CosetSolver, CosetSpec, COSET_SIZE};
use shared::cube::{apply_moves, parse_moves, Cube, Move};
use std::collections::HashSet;

/// Whether `g . rep^-1` is in H: every piece oriented, the slice edges in the slice.
fn in_coset(g: &Cube, rep: &Cube) -> bool {
    let y = g.compose(&rep.inverse());
    y.corners.ori.iter().all(|&o| o == 0)
        && y.edges.ori.iter().all(|&o| o == 0)
        && y.edges.perm[8..].iter().all(|&p| p >= 8)
        && y.edges.perm[..8].iter().all(|&p| p < 8)
}

/// Positions of the coset of each representative at each distance to `depth`, by a BFS from
/// solved over whole positions.
fn brute_force(reps: &[Cube], depth: usize) -> Vec<Vec<u64>> {
    let mut counts = vec![Vec::new(); reps.len()];
    let start = Cube::SOLVED;
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
fn coset_distances_equal_a_search_over_positions() {
    const DEPTH: u32 = 5;
    // H itself, H again by a representative inside it, one move out, three moves out, and
    // cosets whose nearest position is farther than DEPTH (all counts zero but the beyond).
    let texts = ["", "U R2 D'", "R", "F", "R U F", "L' B2 R D F'", "R U F L B D R' F2 U' L"];
    let reps = reps(&texts);
    let expected = brute_force(&reps, DEPTH as usize);
    let solver = CosetSolver::new().unwrap();
    let progress = Progress::default();
    for ((text, rep), expected) in texts.iter().zip(&reps).zip(&expected) {
        let found = solver.solve(rep, CosetSpec::exact(DEPTH), &progress).unwrap();
        let mut counts = found.counts.clone();
        counts.resize(DEPTH as usize + 1, 0);
        assert_eq!(&counts, expected, "coset of {text:?}");
        assert_eq!(found.counts.iter().sum::<u64>() + found.beyond, COSET_SIZE, "{text:?}");
    }
    // The checks see the cosets: H holds solved; R and R' (= R2 R) are R's coset's positions at 1.
    assert!(expected[0][0] == 1 && expected[2][1] == 2, "{expected:?}");
}

/// The identity coset (H itself) and the flip8 coset (the eight U and D edges flipped) to depth
/// 10 against Rokicki's published distributions (docs/references.md).
#[test]
#[ignore = "full tier: (scripts/test-full.sh)"]
fn the_identity_and_flip8_cosets_have_rokickis_published_distances() {
    let identity: [u64; 11] =
        [1, 10, 67, 456, 3_079, 20_076, 125_218, 756_092, 4_331_124, 23_639_531, 122_749_840];
    let flip8: [u64; 11] = [0, 0, 0, 0, 0, 0, 128, 2_480, 29_616, 275_072, 2_025_588];
    let mut flipped = Cube::SOLVED;
    flipped.edges.ori[..8].fill(1);
    let solver = CosetSolver::new().unwrap();
    let progress = Progress::default();
    for (rep, published) in [(Cube::SOLVED, identity), (flipped, flip8)] {
        let found = solver.solve(&rep, CosetSpec::exact(10), &progress).unwrap();
        assert_eq!(found.counts, published);
        assert_eq!(found.counts.iter().sum::<u64>() + found.beyond, 19_508_428_800);
    }
}

/// A coset is as big as H: 8!·8!·4!/2 = 19,508,428,800 (Rokicki's cosets of H), and job
/// specs survive their text form.
#[test]
fn a_coset_is_as_big_as_h_and_specs_round_trip() {
    assert_eq!(COSET_SIZE, 19_508_428_800);
    for spec in [CosetSpec::exact(3), CosetSpec::bound(20, 16)] {
        assert_eq!(spec.to_string().parse::<CosetSpec>().unwrap(), spec);
    }
}
