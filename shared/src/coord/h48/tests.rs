//! The H48 coordinates against positions, and their class counts against Burnside's lemma.

use super::*;
use crate::coord::burnside_class_count;
use crate::cube::{random_cube, Move, SplitMix64, Symmetry, SymmetryGroup};

#[test]
fn coordinate_tables_act_like_cube_moves_and_symmetries() {
    let coords = H48Coords;
    let (cocsep, esep) = (coords.cocsep_coord(), coords.esep_coord());
    assert_eq!((cocsep.size, esep.size, COCSEP, ESEP, EO), (2187 * 128, 34_650, 70 * 2187, 495 * 70, 2048));
    let eo_moves = coords.eo_moves();
    let mut rng = SplitMix64::new(48);
    for _ in 0..300 {
        let x = random_cube(&mut rng);
        for m in Move::all() {
            let y = x.compose(m.cube());
            assert_eq!(cocsep.apply(m, coords.cocsep(&x)), coords.cocsep(&y));
            assert_eq!(esep.apply(m, coords.esep(&x)), coords.esep(&y));
            assert_eq!(eo_moves[m.index() * EO as usize + coords.eo(&x) as usize], coords.eo(&y));
        }
        for s in Symmetry::all() {
            let y = s.conjugate(&x);
            assert_eq!(cocsep.conjugate(s, coords.cocsep(&x)), coords.cocsep(&y));
            assert_eq!(esep.conjugate(s, coords.esep(&x)), coords.esep(&y));
            assert_eq!(coords.conjugate_eoesep(s, coords.eoesep(&x)), coords.eoesep(&y));
        }
    }
}

#[test]
fn class_counts_agree_with_burnside() {
    let coords = H48Coords;
    let esep = coords.esep_coord();
    let classes = coords.esep_classes(&esep);
    assert_eq!(
        classes.class_count() as u64,
        burnside_class_count(ESEP, SymmetryGroup::Full, |s, v| esep.conjugate(s, v))
    );
    // The H48 solver's documentation: 782 esep classes (the edge fallback table).
    assert_eq!(classes.class_count(), 782);
    let cocsep = coords.cocsep_table();
    assert_eq!(cocsep.classes.class_count(), 3393);
    // Burnside over the occurring values (the others are fixed by every symmetry: 126,846 x 48).
    let fixed =
        burnside_class_count(solver::COCSEP_RAW, SymmetryGroup::Full, |s, v| cocsep.coord.conjugate(s, v));
    assert_eq!(fixed - 126_846, 3393);
}

#[test]
fn h11_columns_act_like_cube_moves_and_symmetries() {
    let coords = H48Coords;
    let columns = EoEsepColumns::new(&coords);
    let mut rng = SplitMix64::new(1111);
    for _ in 0..300 {
        let x = random_cube(&mut rng);
        for m in Move::all() {
            assert_eq!(columns.apply(m, coords.eoesep(&x)), coords.eoesep(&x.compose(m.cube())));
        }
        for s in Symmetry::all() {
            assert_eq!(columns.conjugate(s, coords.eoesep(&x)), coords.eoesep(&s.conjugate(&x)));
        }
    }
}
