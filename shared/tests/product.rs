//! The product enumeration (seed 004's method) against independent results: the plain hash-set
//! BFS with brute-force canonicalization for the whole cube at small depths, seed 004's
//! published edges tables (which the row engine also matches), and the quarter-turn parity
//! rule coset by coset.

mod common;

use common::{expected, EDGES_HTM, EDGES_QTM};
use shared::bfs::reference::brute_force_distribution;
use shared::cube::{MoveSet, SymmetryGroup};
use shared::product::{
    self, CosetSpace, CubeCosets, EdgeCosets, Layers, ProductJob, ProductSpace, ProductSpec, Scratch,
};

fn enumerate(space: ProductSpace, moves: MoveSet, max_depth: u32) -> product::ProductCounts {
    ProductJob::build(ProductSpec { space, moves, max_depth }).enumerate()
}

#[test]
fn cube_matches_a_plain_hash_set_bfs() {
    for (set, depth) in [(MoveSet::Htm, 5), (MoveSet::Qtm, 6)] {
        let moves = set.moves();
        let brute = brute_force_distribution(&moves, SymmetryGroup::Full, depth, |x| *x);
        let counts = enumerate(ProductSpace::Cube, set, depth);
        assert_eq!(counts.depths, brute, "{set:?}");
    }
}

#[test]
fn edges_match_seed_004_to_depth_9_htm_and_10_qtm() {
    let htm = enumerate(ProductSpace::Edges, MoveSet::Htm, 9);
    assert_eq!(htm.depths, expected(&EDGES_HTM[..=9]));
    let qtm = enumerate(ProductSpace::Edges, MoveSet::Qtm, 10);
    assert_eq!(qtm.depths, expected(&EDGES_QTM[..=10]));
    // Every depth beyond the stored ones needs at least one product per position.
    assert!(htm.products.iter().zip(&htm.rep_positions).all(|(p, n)| p >= n));
}

#[test]
fn quarter_turn_depths_have_the_corner_permutation_parity() {
    // A quarter turn is an odd corner permutation, so a coset of odd corner permutations only
    // holds positions at odd depths.
    let space = CubeCosets;
    let moves = MoveSet::Qtm.moves();
    let layers = Layers::build(&space, &moves, 4);
    let classes = product::coset_classes(&space);
    let mut scratch = Scratch::default();
    let mut nonempty = 0;
    for class in (0..classes.class_count() as u32).step_by(7) {
        let coset = classes.rep(class);
        let odd = space.member(coset).corners.parity();
        for (d, c) in
            product::enumerate_coset(&space, &layers, &classes, coset, 8, &mut scratch).iter().enumerate()
        {
            if c.positions > 0 {
                assert_eq!(d % 2 == 1, odd, "coset {coset} depth {d}");
                nonempty += 1;
            }
        }
    }
    assert!(nonempty > 50, "{nonempty} non-empty coset depths checked");
}

#[test]
fn coset_classes_count_like_burnside() {
    for (i, space) in [&CubeCosets as &dyn CosetSpace, &EdgeCosets::default()].into_iter().enumerate() {
        let classes = product::coset_classes(space);
        let members: Vec<_> = (0..space.coset_count()).map(|c| space.member(c)).collect();
        let burnside =
            shared::coord::burnside_class_count(space.coset_count(), SymmetryGroup::Full, |s, c| {
                space.coset(&s.conjugate(&members[c as usize]))
            });
        assert_eq!(classes.class_count() as u64, burnside, "space {i}");
    }
}
