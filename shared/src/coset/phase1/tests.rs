//! Phase 1's coordinates, tables and search against cubes and a plain search.

use super::*;
use crate::cube::{apply_moves, parse_moves, SplitMix64};

/// One table for every test (it takes seconds to make).
fn phase1() -> &'static Phase1 {
    static TABLE: std::sync::OnceLock<Phase1> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| Phase1::new().unwrap())
}

#[test]
fn coordinates_round_trip_and_move_like_cubes() {
    let p = phase1();
    for t in [0u16, 1, 1000, 2186] {
        assert_eq!(twist_of(&with_twist(t)), t);
    }
    for f in [0u16, 1, 1000, 2047] {
        assert_eq!(flip_of(&with_flip(f)), f);
    }
    for s in 0..SLICES as u16 {
        assert_eq!(slice_of(&with_slice(s)), s);
    }
    let mut rng = SplitMix64::new(3);
    let mut x = Cube::SOLVED;
    let mut c = coord_of(&x);
    for _ in 0..200 {
        let m = Move::from_index(rng.below(18) as usize);
        x = x.compose(m.cube());
        c = p.apply(c, m);
        assert_eq!(c, coord_of(&x));
    }
}

/// The coordinates one move from H are those the table puts at 1, and the moves each
/// lists into H are exactly those that cube arithmetic takes into H (from a position with
/// that coordinate: a move outside H applied to solved).
#[test]
fn one_move_from_h_is_what_the_table_says() {
    let p = phase1();
    assert!(!p.one_away.is_empty());
    for &(c, to_h) in &p.one_away {
        assert_eq!(p.bound(c), 1);
        let x = Move::all().map(|m| *m.cube()).find(|x| coord_of(x) == c).expect("a position");
        let into_h = Move::all()
            .filter(|&m| !in_h(m) && p.is_goal(coord_of(&x.compose(m.cube()))))
            .fold(0u32, |mask, m| mask | 1 << m.index());
        assert!(to_h != 0 && to_h == into_h, "{c:?}: {to_h:#x} against {into_h:#x}");
    }
    let mut rng = SplitMix64::new(9);
    for _ in 0..20_000 {
        let c = coord_of(&crate::cube::random_cube(&mut rng));
        let near = Move::all().map(|m| p.apply(c, m)).find(|&n| p.bound(n) == 1);
        if let Some(n) = near {
            assert!(p.one_away.iter().any(|&(o, _)| o == n), "{n:?}");
        }
    }
}

/// The coordinates two moves from H are those a search over coordinates finds at depth 2,
/// each with exactly the moves that take it to depth 1.
#[test]
fn two_moves_from_h_are_what_a_search_finds() {
    let p = phase1();
    let goal = Coord { twist: 0, flip: 0, slice: p.goal_slice };
    let level = |from: &[Coord], seen: &mut Vec<Coord>| {
        let mut next = Vec::new();
        for &c in from {
            for n in Move::all().map(|m| p.apply(c, m)) {
                if !seen.contains(&n) {
                    seen.push(n);
                    next.push(n);
                }
            }
        }
        next
    };
    let mut seen = vec![goal];
    let one = level(&[goal], &mut seen);
    let two = level(&one, &mut seen);
    assert_eq!(two.len(), p.two_away.len());
    for &c in &two {
        let toward =
            Move::all().filter(|&m| one.contains(&p.apply(c, m))).fold(0u32, |mask, m| mask | 1 << m.index());
        assert!(toward != 0);
        assert_eq!(p.toward_h(c), toward, "{c:?}");
    }
    assert_eq!(p.toward_h(goal), 0);
    assert!(one.iter().all(|&c| p.toward_h(c) == 0));
}

/// The distance table is neighbour-consistent, and each entry's moves agree with it: a coordinate at distance d > 0 has a move
/// to d - 1 and none to less; only H's own coordinate is at 0. Checked on random positions.
#[test]
fn distances_are_consistent_with_every_neighbour() {
    let p = phase1();
    let mut rng = SplitMix64::new(5);
    let mut deepest = 0;
    for _ in 0..20_000 {
        let c = coord_of(&crate::cube::random_cube(&mut rng));
        let d = p.bound(c);
        let next: Vec<u8> = Move::all().map(|m| p.bound(p.apply(c, m))).collect();
        // The entry's moves are what the neighbours' distances say.
        let look = p.lookup(c);
        for (m, &n) in next.iter().enumerate() {
            let said = if look.down >> m & 1 == 1 {
                d - 1
            } else if look.level >> m & 1 == 1 {
                d
            } else {
                d + 1
            };
            assert_eq!(said, n, "{c:?}, move {m}");
        }
        assert_eq!(d == 0, p.is_goal(c));
        assert!(next.iter().all(|&n| n + 1 >= d && n <= d + 1), "{c:?} at {d}: {next:?}");
        assert!(d == 0 || next.contains(&(d - 1)), "{c:?} at {d}: {next:?}");
        deepest = deepest.max(d);
    }
    // Random positions lie 9 to 12 moves from H.
    assert!((10..=12).contains(&deepest), "{deepest}");
}

#[test]
fn the_bound_is_zero_exactly_in_h_and_never_overestimates() {
    let p = phase1();
    assert!(p.is_goal(coord_of(&apply_moves(&parse_moves("U R2 D' F2 L2").unwrap()))));
    assert_eq!(p.bound(coord_of(&apply_moves(&parse_moves("R").unwrap()))), 1);
    // R U F needs three moves to reach H: no pruning table may say more.
    assert!(p.bound(coord_of(&apply_moves(&parse_moves("R U F").unwrap()))) <= 3);
}
