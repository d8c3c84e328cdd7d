//! Class counts published by the sources (docs/references.md), each also checked against Burnside's lemma.

use super::*;
use crate::cube::{random_cube, Move, SplitMix64, Symmetry, SymmetryGroup};

/// Builds the classes and checks that the table really is an action on the coordinate: the
/// coordinate of a conjugated random position equals the table's image of its coordinate.
fn classes_of(coord: &dyn Coordinate, group: SymmetryGroup) -> (SymClasses, u64) {
    let tables = RawCoord::of(coord);
    let conj = |s: Symmetry, v: u32| tables.conjugate(s, v);
    let mut rng = SplitMix64::new(11);
    for _ in 0..500 {
        let x = random_cube(&mut rng);
        for s in group.members() {
            assert_eq!(coord.encode(&s.conjugate(&x)), conj(s, coord.encode(&x)), "{} {s:?}", coord.name());
        }
    }
    let classes = SymClasses::build(coord.size(), group, conj);
    let burnside = burnside_class_count(coord.size(), group, conj);
    (classes, burnside)
}

fn check_representatives(coord: &dyn Coordinate, classes: &SymClasses) {
    let tables = RawCoord::of(coord);
    let conj = |s: Symmetry, v: u32| tables.conjugate(s, v);
    for raw in 0..coord.size() {
        let class = classes.class_of(raw);
        assert_eq!(conj(classes.to_rep(raw), raw), classes.rep(class));
    }
    for class in 0..classes.class_count() as u32 {
        let rep = classes.rep(class);
        for s in classes.group().members() {
            assert_eq!(conj(s, rep) == rep, classes.stabilizer(class) >> s.index() & 1 == 1);
        }
    }
    let total: u64 = (0..classes.class_count() as u32).map(|c| classes.class_size(c) as u64).sum();
    assert_eq!(total, coord.size() as u64);
}

#[test]
fn cocsep_has_3393_classes_with_the_published_stabilizers() {
    let coord = cocsep();
    let (classes, burnside) = classes_of(&coord, SymmetryGroup::Full);
    assert_eq!(classes.class_count(), 3393);
    assert_eq!(burnside, 3393);
    assert_eq!(
        classes.stabilizer_histogram(),
        vec![(1, 3020), (2, 311), (3, 8), (4, 35), (6, 9), (8, 6), (12, 1), (16, 1), (24, 1), (48, 1)]
    );
    check_representatives(&coord, &classes);
}

#[test]
fn nxopt_corner_rows_have_9930_classes_under_ud_symmetries() {
    let coord = corner_layer_rows();
    let (classes, burnside) = classes_of(&coord, SymmetryGroup::UdAxis);
    assert_eq!(classes.class_count(), 9930);
    assert_eq!(burnside, 9930);
    check_representatives(&coord, &classes);
}

#[test]
fn corner_permutation_has_2768_classes_under_ud_symmetries() {
    let (classes, burnside) = classes_of(&CornerPermutation, SymmetryGroup::UdAxis);
    assert_eq!(classes.class_count(), 2768);
    assert_eq!(burnside, 2768);
    check_representatives(&CornerPermutation, &classes);
}

#[test]
fn move_tables_agree_with_cube_moves() {
    let coord = cocsep();
    let tables = RawCoord::of(&coord);
    let mut rng = SplitMix64::new(3);
    for _ in 0..1000 {
        let x = random_cube(&mut rng);
        let raw = coord.encode(&x);
        for m in Move::all() {
            assert_eq!(tables.apply(m, raw), coord.encode(&x.compose(m.cube())));
        }
    }
    // The solved position's coordinate is fixed by every symmetry.
    let solved = coord.encode(&crate::cube::Cube::SOLVED);
    assert!(Symmetry::all().all(|s| coord.encode(&s.conjugate(&crate::cube::Cube::SOLVED)) == solved));
}

/// Conjugation tables made from a few generators' tables equal those made from positions, for
/// every value and member, in the full group and in the 16 symmetries of the UD axis; so do
/// the half and inverse turns made from the quarter turns.
#[test]
fn tables_composed_from_generators_and_quarter_turns_are_those_of_positions() {
    let coord = CornerPermutation;
    let on = |s: Symmetry, v: u32| coord.encode(&s.conjugate(&coord.decode(v)));
    for group in [SymmetryGroup::Full, SymmetryGroup::UdAxis] {
        let tables =
            RawCoord::build(coord.size(), group, |m, v| coord.encode(&coord.decode(v).compose(m.cube())), on);
        for s in group.members() {
            let differ = (0..coord.size()).filter(|&v| tables.conjugate(s, v) != on(s, v)).count();
            assert_eq!(differ, 0, "{group:?}, {s:?}");
        }
        for m in Move::all() {
            let by_position = |v| coord.encode(&coord.decode(v).compose(m.cube()));
            let differ = (0..coord.size()).filter(|&v| tables.apply(m, v) != by_position(v)).count();
            assert_eq!(differ, 0, "{m:?}");
        }
    }
}
