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
    // Every symmetry on a fifth of the esep values (most symmetries' flips are composed from
    // other symmetries' tables, not made from positions).
    for s in Symmetry::all() {
        for e in (0..ESEP).step_by(5) {
            let v = e * EO + (e * 7) % EO;
            assert_eq!(columns.conjugate(s, v), coords.conjugate_eoesep(s, v), "{s:?}, esep {e}");
        }
    }
}

/// A row's images by [`EoEsepMap::or_images`] (blocks gathered whole where the processor can,
/// the others bit by bit) against each bit's image by `apply`: blocks of 0, 1 and 31 entries,
/// at the gather's threshold and above, and full, under moves with symmetries and conjugations.
#[test]
fn images_of_a_row_by_blocks_are_its_bits_images() {
    let columns = EoEsepColumns::new(&H48Coords);
    let mut rng = SplitMix64::new(2047);
    let mut row = vec![0u64; (ESEP * EO / 64) as usize];
    for e in 0..3000usize {
        let n = [0u32, 1, 31, 32, 33, 300, 2048][e % 7];
        for _ in 0..n {
            let o = rng.below(EO as u64) as usize;
            row[e * 11 * 32 + o / 64] |= 1 << (o % 64);
        }
        if n == 2048 {
            row[e * 11 * 32..][..32].fill(u64::MAX);
        }
    }
    let maps = [(Move::all().nth(3), 5u8), (Move::all().nth(14), 40), (None, 17), (None, 0)]
        .map(|(m, s)| m.map_or(columns.conjugated(Symmetry(s)), |m| columns.moved(m, Symmetry(s))));
    for (i, map) in maps.iter().enumerate() {
        let mut expected = vec![0u64; row.len()];
        crate::coord::for_each_bit(&row, |c| {
            let c = map.apply(c);
            expected[c as usize / 64] |= 1 << (c % 64);
        });
        let mut by_blocks = vec![0u64; row.len()];
        map.or_images(&row, &mut by_blocks);
        assert!(by_blocks == expected, "map {i}");
    }
}
