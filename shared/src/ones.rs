//! Counting the set bits of a run of words: every level's counts, every row message and its
//! check, every part's summary repeat it over whole rows.
//!
//! Built for the baseline x86-64, `u64::count_ones` is a shift-and-add sequence of about a dozen
//! instructions a word. The processor's own instructions are chosen at run time instead: AVX-512's
//! VPOPCNTQ (eight words an instruction), AVX2's byte shuffles with POPCNT, or the portable
//! sequence on a processor with neither. Every path gives the same count; tests hold each one
//! available here against the portable one. Whether one run has a bit another lacks
//! ([`any_outside`]) is the same kind of pass over whole rows.

/// One way of counting, from the fastest down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// AVX-512F with VPOPCNTDQ.
    Avx512,
    /// AVX2 with POPCNT.
    Avx2,
    /// Whatever the build's target gives `u64::count_ones`.
    Portable,
}

impl Path {
    /// The fastest path this processor runs.
    pub fn best() -> Path {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx512f") && has!("avx512vpopcntdq") && has!("popcnt") {
                return Path::Avx512;
            }
            if has!("avx2") && has!("popcnt") {
                return Path::Avx2;
            }
        }
        Path::Portable
    }

    /// Every path this processor runs, the portable one last.
    pub fn available() -> Vec<Path> {
        let all = [Path::Avx512, Path::Avx2, Path::Portable];
        let best = all.iter().position(|&p| p == Path::best()).expect("best is listed");
        all[best..].to_vec()
    }
}

/// The set bits of `words`, by the fastest path of this processor (the standard library keeps
/// what the processor reported, so asking again costs a few loads).
#[inline]
pub fn ones(words: &[u64]) -> u64 {
    // SAFETY: `Path::best` gives only a path whose features the processor reports.
    unsafe { ones_unchecked(Path::best(), words) }
}

/// Whether `a` has a set bit that `b` lacks (`a & !b != 0`; `b` as long as `a`). Eight words
/// are tested at once, with no branch among them, so that the compiler makes vector
/// instructions of them; a run stops at its first such eight. A word-by-word test with an
/// early exit was a scalar loop of five instructions a word.
#[inline]
pub fn any_outside(a: &[u64], b: &[u64]) -> bool {
    assert_eq!(a.len(), b.len(), "two runs of words of one length");
    let (whole_a, rest_a) = a.as_chunks::<8>();
    let (whole_b, rest_b) = b.as_chunks::<8>();
    let outside = |x: &[u64], y: &[u64]| x.iter().zip(y).fold(0, |acc, (x, y)| acc | (x & !y)) != 0;
    whole_a.iter().zip(whole_b).any(|(x, y)| outside(x, y)) || outside(rest_a, rest_b)
}

/// The set bits of `words` by `path`; a path this processor lacks counts by the portable one.
pub fn ones_by(path: Path, words: &[u64]) -> u64 {
    let path = if Path::available().contains(&path) { path } else { Path::Portable };
    // SAFETY: checked just above.
    unsafe { ones_unchecked(path, words) }
}

/// # Safety
/// The processor must have `path`'s features.
#[inline]
unsafe fn ones_unchecked(path: Path, words: &[u64]) -> u64 {
    match path {
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => unsafe { x86::ones_avx512(words) },
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => unsafe { x86::ones_avx2(words) },
        _ => portable(words),
    }
}

#[inline(always)]
fn portable(words: &[u64]) -> u64 {
    words.iter().map(|w| w.count_ones() as u64).sum()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    // The same loop compiled for each set of features: the compiler vectorizes it with the
    // instructions they allow.

    #[target_feature(enable = "avx512f,avx512vpopcntdq,popcnt")]
    pub(super) unsafe fn ones_avx512(words: &[u64]) -> u64 {
        super::portable(words)
    }

    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn ones_avx2(words: &[u64]) -> u64 {
        super::portable(words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_outside_is_the_word_by_word_test() {
        for n in [0, 1, 7, 8, 9, 27, 216, 217] {
            let a = random_words(n, 11 + n as u64, 4);
            // Covering every bit of `a`, then each bit of `a` left out in turn.
            let mut b: Vec<u64> = a.iter().map(|w| w | random_words(1, *w, 1)[0]).collect();
            assert!(!any_outside(&a, &b), "{n} covered");
            for i in 0..n {
                if a[i] == 0 {
                    continue;
                }
                let kept = b[i];
                b[i] &= !(1 << a[i].trailing_zeros());
                let slow = a.iter().zip(&b).any(|(x, y)| x & !y != 0);
                assert_eq!((any_outside(&a, &b), slow), (true, true), "{n} words, word {i} uncovered");
                b[i] = kept;
            }
        }
    }

    fn random_words(n: usize, seed: u64, density_shift: u32) -> Vec<u64> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Sparser words for larger shifts: an AND of shifted copies.
                (0..density_shift).fold(x, |w, s| w & x.rotate_left(7 * s + 3))
            })
            .collect()
    }

    /// Each word's bits one at a time: the count no vector path shares code with.
    fn slow(words: &[u64]) -> u64 {
        words.iter().map(|&w| (0..64).filter(|b| w >> b & 1 == 1).count() as u64).sum()
    }

    #[test]
    fn every_path_counts_as_bit_by_bit_on_random_and_structured_words() {
        let mut inputs: Vec<Vec<u64>> = Vec::new();
        for n in [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 1000, 15_121] {
            inputs.push(vec![0; n]);
            inputs.push(vec![u64::MAX; n]);
            inputs.push((0..n as u64).map(|i| 1 << (i % 64)).collect());
            inputs.push((0..n as u64).map(|i| 1u64.rotate_right(i as u32) | 1 << 63).collect());
            for shift in 0..4 {
                inputs.push(random_words(n, 0x9E37_79B9_7F4A_7C15 ^ n as u64, shift));
            }
        }
        assert_eq!(Path::available().last(), Some(&Path::Portable));
        // Every path, those this processor lacks too (they count by the portable one).
        let paths = [Path::Avx512, Path::Avx2, Path::Portable];
        for words in &inputs {
            let expected = slow(words);
            // Unaligned starts and short tails, as rows cut from a part are.
            for skip in 0..=words.len().min(2) {
                let tail = &words[skip..];
                let expected = expected - slow(&words[..skip]);
                for &path in &paths {
                    assert_eq!(ones_by(path, tail), expected, "{path:?} on {} words", tail.len());
                }
                assert_eq!(ones(tail), expected);
            }
        }
    }
}
