//! The product enumeration (Bryan's method) against independent results: the plain hash-set
//! BFS with brute-force canonicalization for the whole cube at small depths, Bryan's
//! published edges tables (which the row engine also matches), and the quarter-turn parity
//! rule coset by coset.

use crate::common::{expected, EDGES_HTM, EDGES_QTM};
use shared::bfs::reference::brute_force_distribution;
use shared::cube::{MoveSet, SymmetryGroup};
use shared::product::{
    self, CosetSpace, CubeCosets, EdgeCosets, Layers, Part, ProductJob, ProductSpec, Scratch,
};
use shared::space::Space;

fn enumerate(space: Space, moves: MoveSet, max_depth: u32) -> product::ProductCounts {
    ProductJob::build(ProductSpec::new(space, moves, max_depth)).enumerate()
}

#[test]
#[ignore = "full tier: 34 s on 2 cores (scripts/test-full.sh); edges by the product method against Bryan's tables stays in CI"]
fn cube_matches_a_plain_hash_set_bfs_in_whole_cosets_and_in_parts() {
    for (set, depth) in [(MoveSet::Htm, 5), (MoveSet::Qtm, 6)] {
        let moves = set.moves();
        let brute = brute_force_distribution(&moves, SymmetryGroup::Full, depth, |x| *x);
        for parts in [1, 5, 12] {
            let spec = ProductSpec { parts, ..ProductSpec::new(Space::Cube, set, depth) };
            let counts = ProductJob::build(spec).enumerate();
            assert_eq!(counts.depths, brute, "{set:?}, {parts} parts");
        }
    }
}

/// The parts of a coset split it exactly: their positions, classes, self-inverse classes and
/// even the products formed add up to the whole coset's, depth by depth.
#[test]
fn the_parts_of_a_coset_add_up_to_the_coset() {
    for (space, set) in [(Space::Cube, MoveSet::Htm), (Space::Edges, MoveSet::Qtm)] {
        let whole = ProductJob::build(ProductSpec::new(space, set, 8));
        for parts in [2, 7, 12] {
            let job = ProductJob::build(ProductSpec { parts, ..whole.spec });
            for class in (0..whole.task_count()).step_by(41) {
                let expected = &whole.run(class..class + 1, None)[0];
                let cut = job.run(class * parts..(class + 1) * parts, None);
                assert!(cut.iter().all(|(coset, _)| *coset == expected.0));
                for (d, want) in expected.1.iter().enumerate() {
                    let sum =
                        |f: fn(&product::CosetDepth) -> u64| cut.iter().map(|(_, c)| f(&c[d])).sum::<u64>();
                    let got = product::CosetDepth {
                        positions: sum(|c| c.positions),
                        classes: sum(|c| c.classes),
                        self_inverse: sum(|c| c.self_inverse),
                        products: sum(|c| c.products),
                    };
                    assert_eq!(got, *want, "{space:?} class {class} depth {d}, {parts} parts");
                }
            }
        }
    }
}

/// Burnside's orbit-counting identity, per depth, on every position within HTM depth 5: each
/// class under the 48 symmetries holds 48 / |stabilizer| positions (96 / |stabilizer| under
/// symmetry and inversion), so those sizes over the classes the product engine counts must add
/// up to its position counts. This checks the class columns by the positions, which no class
/// test computes.
#[test]
fn class_columns_satisfy_the_orbit_identity() {
    use shared::cube::Cube;
    use std::collections::{HashMap, HashSet};
    let depth = 5;
    let counts = enumerate(Space::Cube, MoveSet::Htm, depth);
    let symmetries: Vec<_> = SymmetryGroup::Full.members().collect();
    // The images of x under the 96 maps (conjugations, and conjugations of the inverse).
    let images = |x: &Cube| -> Vec<Cube> {
        let inverse = x.inverse();
        symmetries.iter().flat_map(|s| [s.conjugate(x), s.conjugate(&inverse)]).collect()
    };
    let mut seen: HashSet<Cube> = HashSet::from([Cube::SOLVED]);
    let mut frontier = vec![Cube::SOLVED];
    for d in 0..=depth as usize {
        if d > 0 {
            let next: Vec<Cube> = frontier
                .iter()
                .flat_map(|x| MoveSet::Htm.moves().into_iter().map(move |m| x.compose(m.cube())))
                .filter(|y| seen.insert(*y))
                .collect();
            frontier = next;
        }
        // Per class (named by its smallest image), |stabilizer| = maps fixing a member.
        let (mut sym, mut sym_inv): (HashMap<Cube, u64>, HashMap<Cube, u64>) = Default::default();
        for x in &frontier {
            let all = images(x);
            let by_symmetry: Vec<&Cube> = all.iter().step_by(2).collect();
            let stab = by_symmetry.iter().filter(|y| **y == x).count() as u64;
            sym.insert(**by_symmetry.iter().min().unwrap(), stab);
            let stab_inv = all.iter().filter(|y| *y == x).count() as u64;
            sym_inv.insert(*all.iter().min().unwrap(), stab_inv);
        }
        let c = counts.depths[d];
        assert_eq!(sym.len() as u64, c.classes_sym, "depth {d}");
        assert_eq!(sym_inv.len() as u64, c.classes_sym_inv, "depth {d}");
        assert_eq!(sym.values().map(|s| 48 / s).sum::<u64>(), c.positions, "depth {d}: 48/|S| over classes");
        assert_eq!(
            sym_inv.values().map(|s| 96 / s).sum::<u64>(),
            c.positions,
            "depth {d}: 96/|S| over classes"
        );
    }
}

#[test]
fn edges_match_bryans_tables_to_depth_8_htm_and_9_qtm() {
    let htm = enumerate(Space::Edges, MoveSet::Htm, 8);
    assert_eq!(htm.depths, expected(&EDGES_HTM[..=8]));
    let qtm = enumerate(Space::Edges, MoveSet::Qtm, 9);
    assert_eq!(qtm.depths, expected(&EDGES_QTM[..=9]));
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
            product::enumerate_coset(&space, &layers, &classes, (coset, Part::WHOLE), 8, &mut scratch)
                .iter()
                .enumerate()
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

/// Inversion pairs the classes of cosets: a class and its inverse class have the same size,
/// and their representatives hold as many positions and classes at every depth, none of them
/// self-inverse. (The job enumerates one class of each such pair and counts it twice.)
#[test]
fn a_class_of_cosets_and_its_inverse_class_count_alike() {
    let space = CubeCosets;
    let classes = product::coset_classes(&space);
    let inverse = product::inverse_classes(&space, &classes);
    let layers = Layers::build(&space, &MoveSet::Htm.moves(), 4);
    let mut scratch = Scratch::default();
    let mut run = |class: u32| {
        let coset = (classes.rep(class), Part::WHOLE);
        product::enumerate_coset(&space, &layers, &classes, coset, 8, &mut scratch)
    };
    let mut paired = 0;
    for class in 0..classes.class_count() as u32 {
        let other = inverse[class as usize];
        assert_eq!(inverse[other as usize], class, "inversion is an involution on classes");
        assert_eq!(classes.class_size(class), classes.class_size(other));
        if other <= class || paired >= 40 {
            continue;
        }
        paired += 1;
        let (a, b) = (run(class), run(other));
        for (d, (a, b)) in a.iter().zip(&b).enumerate() {
            assert_eq!(
                (a.positions, a.classes),
                (b.positions, b.classes),
                "classes {class}, {other} depth {d}"
            );
            assert_eq!((a.self_inverse, b.self_inverse), (0, 0), "classes {class}, {other} depth {d}");
        }
    }
    let enumerated = product::enumerated(&inverse).count();
    assert!(
        paired == 40 && enumerated < classes.class_count(),
        "{paired} pairs checked, {enumerated} enumerated"
    );
}
