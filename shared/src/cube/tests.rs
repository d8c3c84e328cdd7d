//! Property tests of the cube algebra over seeded random positions.

use super::*;
use std::collections::HashSet;

fn randoms(seed: u64, n: usize) -> Vec<Cube> {
    let mut rng = SplitMix64::new(seed);
    (0..n).map(|_| random_cube(&mut rng)).collect()
}

fn order(x: &Cube) -> usize {
    let mut y = *x;
    let mut n = 1;
    while y != Cube::SOLVED {
        y = y.compose(x);
        n += 1;
    }
    n
}

#[test]
fn group_axioms_on_random_positions() {
    let xs = randoms(1, 300);
    for w in xs.windows(3) {
        let (a, b, c) = (&w[0], &w[1], &w[2]);
        assert_eq!(a.compose(&b.compose(c)), a.compose(b).compose(c));
        assert_eq!(a.compose(&Cube::SOLVED), *a);
        assert_eq!(Cube::SOLVED.compose(a), *a);
        assert_eq!(a.compose(&a.inverse()), Cube::SOLVED);
        assert_eq!(a.inverse().compose(a), Cube::SOLVED);
        assert!(a.is_solvable());
    }
}

#[test]
fn random_positions_depend_only_on_the_seed() {
    assert_eq!(randoms(7, 5), randoms(7, 5));
    assert_ne!(randoms(7, 5), randoms(8, 5));
}

#[test]
fn move_orders_and_inverses() {
    for m in Move::all() {
        let expected = if m.turns() == 2 { 2 } else { 4 };
        assert_eq!(order(m.cube()), expected, "{m}");
        assert_eq!(m.cube().compose(m.inverse().cube()), Cube::SOLVED);
        assert!(m.cube().is_solvable());
    }
    // Published orders of classic sequences.
    assert_eq!(order(&apply_moves(&parse_moves("R U").unwrap())), 105);
    assert_eq!(order(&apply_moves(&parse_moves("R U R' U'").unwrap())), 6);
    // Opposite faces commute, adjacent ones do not.
    let (u, d, r) = (Move::new(0, 1).cube(), Move::new(3, 1).cube(), Move::new(1, 1).cube());
    assert_eq!(u.compose(d), d.compose(u));
    assert_ne!(u.compose(r), r.compose(u));
}

#[test]
fn a_quarter_turn_moves_four_corners_and_four_edges() {
    let solved = Cube::SOLVED;
    for m in Move::all().filter(|m| m.turns() == 1) {
        let c = m.cube();
        let moved_c = (0..8).filter(|&i| c.corners.perm[i] != solved.corners.perm[i]).count();
        let moved_e = (0..12).filter(|&i| c.edges.perm[i] != solved.edges.perm[i]).count();
        assert_eq!((moved_c, moved_e), (4, 4), "{m}");
        assert!(c.corners.parity() && c.edges.parity());
    }
    // U and D keep every orientation; F and B flip their four edges (Kociemba's convention).
    assert_eq!(Move::new(0, 1).cube().edges.ori, [0; 12]);
    assert_eq!(Move::new(0, 1).cube().corners.ori, [0; 8]);
    assert_eq!(Move::new(2, 1).cube().edges.ori.iter().filter(|&&o| o == 1).count(), 4);
}

#[test]
fn parity_is_the_parity_of_the_swaps_that_sort_the_cubies() {
    for x in randoms(5, 300) {
        let swaps = |perm: &mut [u8]| {
            let mut n = 0;
            for i in 0..perm.len() {
                while perm[i] as usize != i {
                    let j = perm[i] as usize;
                    perm.swap(i, j);
                    n += 1;
                }
            }
            n % 2 == 1
        };
        assert_eq!(x.corners.parity(), swaps(&mut x.corners.perm.clone()));
        assert_eq!(x.edges.parity(), swaps(&mut x.edges.perm.clone()));
    }
}

#[test]
fn superflip_sequence_flips_every_edge_in_place() {
    // A published 20-move superflip.
    let x = apply_moves(&parse_moves("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2").unwrap());
    assert_eq!(x.corners, Corners::IDENTITY);
    assert_eq!(x.edges.perm, Edges::IDENTITY.perm);
    assert_eq!(x.edges.ori, [1; 12]);
}

#[test]
fn symmetries_form_a_group_and_conjugation_is_a_homomorphism() {
    let all: Vec<Symmetry> = Symmetry::all().collect();
    assert_eq!(all.len(), 48);
    assert_eq!(Symmetry::IDENTITY.matrix(), [[1, 0, 0], [0, 1, 0], [0, 0, 1]]);
    assert_eq!(all.iter().filter(|s| s.is_mirror()).count(), 24);
    for &s in &all {
        assert_eq!(s.then(s.inverse()), Symmetry::IDENTITY);
        let fixes_ud = s.matrix()[1][1] != 0;
        assert_eq!(fixes_ud, s.index() < UD_SYMMETRY_COUNT, "UD symmetries come first");
    }
    let xs = randoms(2, 40);
    let mut images = HashSet::new();
    for &s in &all {
        images.insert(s.conjugate(&xs[0]));
        for w in xs.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            assert_eq!(s.conjugate(&a.compose(b)), s.conjugate(a).compose(&s.conjugate(b)));
            assert_eq!(s.inverse().conjugate(&s.conjugate(a)), *a);
            for &t in &all {
                assert_eq!(t.conjugate(&s.conjugate(a)), t.then(s).conjugate(a));
            }
        }
    }
    // A random position has no symmetry, so its 48 conjugates are distinct.
    assert_eq!(images.len(), 48);
}

#[test]
fn conjugation_maps_each_move_set_onto_itself() {
    for (set, group) in [
        (MoveSet::Htm, SymmetryGroup::Full),
        (MoveSet::Qtm, SymmetryGroup::Full),
        (MoveSet::KociembaH, SymmetryGroup::UdAxis),
    ] {
        let moves: HashSet<Move> = set.moves().into_iter().collect();
        for s in group.members() {
            let image: HashSet<Move> = moves.iter().map(|&m| s.conjugate_move(m)).collect();
            assert_eq!(image, moves, "{set:?} under symmetry {s:?}");
            for &m in &moves {
                assert_eq!(&s.conjugate(m.cube()), s.conjugate_move(m).cube());
            }
        }
    }
    assert_eq!(MoveSet::Htm.moves().len(), 18);
    assert_eq!(MoveSet::Qtm.moves().len(), 12);
    assert_eq!(MoveSet::KociembaH.moves().len(), 10);
    // H is not closed under all 48: some symmetry sends U to a quarter turn of another face.
    let h: HashSet<Move> = MoveSet::KociembaH.moves().into_iter().collect();
    assert!(Symmetry::all().any(|s| h.iter().any(|&m| !h.contains(&s.conjugate_move(m)))));
    // Mirrors turn clockwise into counter-clockwise.
    for s in Symmetry::all() {
        let u = s.conjugate_move(Move::new(0, 1));
        assert_eq!(u.turns() == 3, s.is_mirror(), "{s:?}");
    }
}

#[test]
fn singmaster_parsing() {
    let m = parse_moves("  R U2\tF'\n R2' B3 ").unwrap();
    assert_eq!(format_moves(&m), "R U2 F' R2 B'");
    assert!(parse_moves("").unwrap().is_empty());
    let err = parse_moves("R U X2 F").unwrap_err();
    assert_eq!((err.token.as_str(), err.position), ("X2", 3));
    assert!(err.to_string().contains("`X2`"));
    for bad in ["R4", "u", "R''", "R U1'", "xR"] {
        assert!(parse_moves(bad).is_err(), "{bad}");
    }
    // cube20src writes turn counts and no spaces.
    assert_eq!(format_moves(&parse_moves("U1R3F2 D1").unwrap()), "U R' F2 D");
    assert_eq!(parse_moves("RU").unwrap(), parse_moves("R U").unwrap());
    for m in Move::all() {
        assert_eq!(parse_moves(&m.to_string()).unwrap(), vec![m]);
    }
}

#[test]
fn display_names_cubies_by_their_faces() {
    assert_eq!(
        Cube::SOLVED.to_string(),
        "UR UF UL UB DR DF DL DB FR FL BL BR URF UFL ULB UBR DFR DLF DBL DRB"
    );
    let u = Move::new(0, 1).cube().to_string();
    assert!(u.starts_with("UB UR UF UL DR"), "{u}");
}

#[test]
fn word_round_trips() {
    assert_eq!(Cube::SOLVED.edge_word(), "acegikmoqsuw");
    assert_eq!(Cube::SOLVED.corner_word(), "adgjmpsv");
    for x in randoms(3, 200) {
        assert_eq!(Cube::from_words(&x.edge_word(), &x.corner_word()), Ok(x));
        let (e, c) = x.full_words();
        assert_eq!(Cube::from_words(&e, &c), Ok(x));
        let mut letters: Vec<char> = e.chars().collect();
        letters.sort_unstable();
        assert_eq!(letters.iter().collect::<String>(), "abcdefghijklmnopqrstuvwx");
    }
    assert!(matches!(Cube::from_words("abc", "adgjmpsv"), Err(WordError::Length { .. })));
    assert!(matches!(Cube::from_words("acegikmoqsuz", "adgjmpsv"), Err(WordError::Letter { .. })));
    assert!(matches!(Cube::from_words("aaegikmoqsuw", "adgjmpsv"), Err(WordError::NotAPosition { .. })));
    // One flipped edge: the twists do not sum to zero.
    assert!(matches!(Cube::from_words("bcegikmoqsuw", "adgjmpsv"), Err(WordError::NotAPosition { .. })));
}

#[test]
fn singmaster_positions_name_the_cubie_in_each_place() {
    use super::Singmaster;
    let solved = "UF UR UB UL DF DR DB DL FR FL BR BL UFR URB UBL ULF DRF DFL DLB DBR";
    assert_eq!(Singmaster(&Cube::SOLVED).to_string(), solved);
    // R moves the cubies of the R face only: every other place keeps its cubie.
    let r = apply_moves(&parse_moves("R").unwrap());
    let text = Singmaster(&r).to_string();
    for (place, cubie) in solved.split(' ').zip(text.split(' ')) {
        assert_eq!(place == cubie, !place.contains('R'), "{place}: {cubie} in {text}");
    }
}
