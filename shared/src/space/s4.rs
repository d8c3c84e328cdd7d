//! The symmetric group S4 by rank (0..24, lexicographic): the orderings of one block's four
//! pieces. A block's column map is `o -> left . o . right`, so two bytes describe it.

use crate::coord::rank::{perm_rank, s4_orders};
use std::sync::OnceLock;

struct Tables {
    /// product[a][b] = rank of a . b, where (a . b)[k] = a[b[k]].
    product: [[u8; 24]; 24],
    inverse: [u8; 24],
    /// sandwich[left][right][o] = rank of left . o . right: a block's column map as a table.
    sandwich: [[[u8; 24]; 24]; 24],
}

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let perms = s4_orders();
        let mut product = [[0u8; 24]; 24];
        let mut inverse = [0u8; 24];
        for a in 0..24 {
            for b in 0..24 {
                let c: [u8; 4] = std::array::from_fn(|k| perms[a][perms[b][k] as usize]);
                product[a][b] = perm_rank(&c) as u8;
                if product[a][b] == 0 {
                    inverse[a] = b as u8;
                }
            }
        }
        let mut sandwich = [[[0u8; 24]; 24]; 24];
        for (l, by_right) in sandwich.iter_mut().enumerate() {
            for (r, image) in by_right.iter_mut().enumerate() {
                for (o, slot) in image.iter_mut().enumerate() {
                    *slot = product[product[l][o] as usize][r];
                }
            }
        }
        Tables { product, inverse, sandwich }
    })
}

#[inline]
pub fn mul(a: u8, b: u8) -> u8 {
    tables().product[a as usize][b as usize]
}

#[inline]
pub fn inv(a: u8) -> u8 {
    tables().inverse[a as usize]
}

/// The images of all 24 orderings under `o -> left . o . right`.
#[inline]
pub fn sandwich(left: u8, right: u8) -> &'static [u8; 24] {
    &tables().sandwich[left as usize][right as usize]
}

/// A transposition and a 4-cycle: together they generate S4, so a conjugation is fixed by
/// what it does to them.
pub const GENERATORS: [u8; 2] = [6, 9]; // [1,0,2,3] and [1,2,3,0]

/// Given T(o) = L . o . R for all o, recovers (L, R) from T(id) and T(g) for the generators.
pub fn solve_left_right(t_id: u8, t_gens: [u8; 2]) -> Option<(u8, u8)> {
    // T(g) . T(id)^-1 = L . g . L^-1
    let targets = t_gens.map(|t| mul(t, inv(t_id)));
    let left = (0..24u8).find(|&l| (0..2).all(|i| mul(mul(l, GENERATORS[i]), inv(l)) == targets[i]))?;
    Some((left, mul(inv(left), t_id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coord::rank::perm_unrank;

    #[test]
    fn generators_are_what_the_comments_say_and_generate_s4() {
        let mut p = [0u8; 4];
        perm_unrank(GENERATORS[0] as u32, &mut p);
        assert_eq!(p, [1, 0, 2, 3]);
        perm_unrank(GENERATORS[1] as u32, &mut p);
        assert_eq!(p, [1, 2, 3, 0]);
        let mut reached = vec![0u8];
        let mut i = 0;
        while i < reached.len() {
            for g in GENERATORS {
                let n = mul(reached[i], g);
                if !reached.contains(&n) {
                    reached.push(n);
                }
            }
            i += 1;
        }
        assert_eq!(reached.len(), 24);
    }

    #[test]
    fn left_right_recovered_for_all_pairs() {
        for l in 0..24 {
            for r in 0..24 {
                let t = |o: u8| mul(mul(l, o), r);
                assert!((0..24).all(|o| sandwich(l, r)[o as usize] == t(o)));
                assert_eq!(solve_left_right(t(0), GENERATORS.map(t)), Some((l, r)));
            }
        }
    }
}
