//! Ranking and unranking: permutations (Lehmer code), k-subsets (colexicographic rank) and
//! orientation vectors (base-O digits with the last one implied by the zero-sum rule).

/// n! for n <= 12.
pub const fn factorial(n: usize) -> u32 {
    let mut f = 1u32;
    let mut i = 2;
    while i <= n {
        f *= i as u32;
        i += 1;
    }
    f
}

/// C(n, k) for n <= 32: from a table for n, k < 16 (the ranks' hot loops), else computed.
#[inline]
pub const fn binomial(n: usize, k: usize) -> u32 {
    if n < 16 && k < 16 {
        BINOMIALS[n][k]
    } else {
        computed_binomial(n, k)
    }
}

/// C(n, k) by the product formula.
const fn computed_binomial(n: usize, k: usize) -> u32 {
    if k > n {
        return 0;
    }
    let mut r = 1u64;
    let mut i = 0;
    while i < k {
        r = r * (n - i) as u64 / (i + 1) as u64;
        i += 1;
    }
    r as u32
}

/// n! for n <= 12, for the hot loops.
const FACTORIALS: [u32; 13] = {
    let mut table = [0u32; 13];
    let mut n = 0;
    while n < 13 {
        table[n] = factorial(n);
        n += 1;
    }
    table
};

/// C(n, k) for n, k < 16, for the hot loops.
const BINOMIALS: [[u32; 16]; 16] = {
    let mut table = [[0u32; 16]; 16];
    let mut n = 0;
    while n < 16 {
        let mut k = 0;
        while k < 16 {
            table[n][k] = computed_binomial(n, k);
            k += 1;
        }
        n += 1;
    }
    table
};

/// Rank of a permutation of 0..n (n <= 12) in 0..n! (lexicographic order).
#[inline]
pub fn perm_rank(p: &[u8]) -> u32 {
    let n = p.len();
    let mut rank = 0u32;
    for i in 0..n {
        let mut smaller_after = 0;
        for &v in &p[i + 1..] {
            smaller_after += (v < p[i]) as u32;
        }
        rank += smaller_after * FACTORIALS[n - 1 - i];
    }
    rank
}

/// Inverse of [`perm_rank`]: writes the permutation of rank `rank` into `out` (at most 12
/// elements). No allocation: the search counts call it per entry.
#[inline]
pub fn perm_unrank(mut rank: u32, out: &mut [u8]) {
    let n = out.len();
    let mut unused: [u8; 12] = std::array::from_fn(|i| i as u8);
    for (i, slot) in out.iter_mut().enumerate() {
        let f = FACTORIALS[n - 1 - i];
        let digit = (rank / f) as usize;
        rank %= f;
        *slot = unused[digit];
        unused.copy_within(digit + 1..n - i, digit);
    }
}

/// The 24 permutations of four elements, by [`perm_rank`]: made once, for the paths that
/// unrank an ordering of a block of four per row or entry.
pub fn s4_orders() -> &'static [[u8; 4]; 24] {
    static ORDERS: std::sync::OnceLock<[[u8; 4]; 24]> = std::sync::OnceLock::new();
    ORDERS.get_or_init(|| {
        std::array::from_fn(|r| {
            let mut order = [0u8; 4];
            perm_unrank(r as u32, &mut order);
            order
        })
    })
}

/// Colexicographic rank of a k-subset of 0..n given as a bit mask: sum of C(pos_j, j+1) over
/// the members in increasing order.
#[inline]
pub fn subset_rank(mask: u32) -> u32 {
    let mut rank = 0;
    let mut j = 0;
    let mut m = mask;
    while m != 0 {
        let pos = m.trailing_zeros() as usize;
        j += 1;
        rank += binomial(pos, j);
        m &= m - 1;
    }
    rank
}

/// Inverse of [`subset_rank`] for k-subsets of 0..n.
pub fn subset_unrank(mut rank: u32, n: usize, k: usize) -> u32 {
    let mut mask = 0u32;
    let mut pos = n;
    for j in (1..=k).rev() {
        // largest pos with C(pos, j) <= rank
        pos -= 1;
        while binomial(pos, j) > rank {
            pos -= 1;
        }
        rank -= binomial(pos, j);
        mask |= 1 << pos;
    }
    mask
}

/// Rank of an orientation vector whose entries sum to 0 mod `o`: the first n-1 digits in base o.
pub fn ori_rank(ori: &[u8], o: u8) -> u32 {
    ori[..ori.len() - 1].iter().fold(0u32, |acc, &v| acc * o as u32 + v as u32)
}

/// Inverse of [`ori_rank`]; the last entry restores the zero sum.
pub fn ori_unrank(mut rank: u32, o: u8, out: &mut [u8]) {
    let n = out.len();
    let mut sum = 0u32;
    for i in (0..n - 1).rev() {
        out[i] = (rank % o as u32) as u8;
        sum += out[i] as u32;
        rank /= o as u32;
    }
    out[n - 1] = ((o as u32 - sum % o as u32) % o as u32) as u8;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s4_orders_are_the_24_permutations_in_rank_order() {
        let orders = s4_orders();
        for (r, order) in orders.iter().enumerate() {
            let mut sorted = *order;
            sorted.sort_unstable();
            assert_eq!(sorted, [0, 1, 2, 3]);
            assert_eq!(perm_rank(order), r as u32);
        }
    }

    #[test]
    fn permutations_round_trip_in_order() {
        let mut prev: Option<Vec<u8>> = None;
        for r in 0..factorial(5) {
            let mut p = [0u8; 5];
            perm_unrank(r, &mut p);
            assert_eq!(perm_rank(&p), r);
            if let Some(q) = &prev {
                assert!(q.as_slice() < &p[..], "lexicographic order");
            }
            prev = Some(p.to_vec());
        }
        let mut p = [0u8; 12];
        perm_unrank(factorial(12) - 1, &mut p);
        assert_eq!(p, [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    }

    #[test]
    fn subsets_round_trip_and_cover_all() {
        for (n, k) in [(8, 4), (12, 4), (8, 0), (5, 5)] {
            let mut seen = vec![false; binomial(n, k) as usize];
            for mask in 0u32..1 << n {
                if mask.count_ones() as usize == k {
                    let r = subset_rank(mask) as usize;
                    assert!(!seen[r]);
                    seen[r] = true;
                    assert_eq!(subset_unrank(r as u32, n, k), mask);
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
        assert_eq!(binomial(12, 4), 495);
        assert_eq!(binomial(8, 4), 70);
    }

    #[test]
    fn orientations_round_trip() {
        for r in 0..3u32.pow(7) {
            let mut o = [0u8; 8];
            ori_unrank(r, 3, &mut o);
            assert_eq!(o.iter().map(|&v| v as u32).sum::<u32>() % 3, 0);
            assert_eq!(ori_rank(&o, 3), r);
        }
    }
}
