//! Groups of 2,048 bits indexed by eleven edge flips, moved whole by an affine map of the flips.
//!
//! Where a column map sends the 2,048 columns that differ only in eleven flips to one group,
//! by `j = L(i) ^ c` with `L` linear over GF(2) (nxopt's EO3 columns; the H48 solver's esep
//! blocks), target bit `j` of the image group is source bit `L^-1(j) ^ L^-1(c)`. With AVX-512
//! (F, BW, VBMI, BITALG) the image is gathered 64 targets at a time: each target's source byte
//! and bit from a table of `L^-1` XORed with `L^-1(c)`, two two-register byte permutations and
//! a blend fetch the source bytes, a bit shuffle picks the bits. About 9 vector instructions
//! per 64 targets, 32 rounds a group, against a load and a random bit set per entry.

/// Groups of fewer entries than this go entry by entry: below it, the gather's 32 rounds cost
/// more than the entries' loads and bit sets.
pub const GATHER_FROM: u32 = 32;

/// The inverse of an eleven-bit linear map, as the gather reads it: per target `j`, the byte of
/// `L^-1(j)`, then its bit plus eight times `j`'s place in its byte of eight (what the bit
/// shuffle selects within a word).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlipInverse(Box<[u8; 4096]>);

impl FlipInverse {
    /// From the map's 2,048 images (`span[i] = L(i)`, a bijection).
    pub fn new(span: &[u16]) -> Self {
        assert_eq!(span.len(), 2048, "eleven flips have 2,048 values");
        let mut table = Box::new([0u8; 4096]);
        for (x, &y) in span.iter().enumerate() {
            table[y as usize] = (x >> 3) as u8;
            table[2048 + y as usize] = (x & 7) as u8 | (y % 8 * 8) as u8;
        }
        FlipInverse(table)
    }

    /// `L^-1(j)`.
    #[cfg(test)]
    fn source(&self, j: u16) -> u16 {
        (self.0[j as usize] as u16) << 3 | (self.0[2048 + j as usize] & 7) as u16
    }
}

/// Whether this processor has what [`or_gathered`] needs (and GFNI, POPCNT and BMI2, which
/// the callers' kernels use beside it).
#[cfg(target_arch = "x86_64")]
pub fn available() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has!("avx512f")
        && has!("avx512bw")
        && has!("avx512vbmi")
        && has!("avx512bitalg")
        && has!("gfni")
        && has!("popcnt")
        && has!("bmi2")
}

#[cfg(not(target_arch = "x86_64"))]
pub fn available() -> bool {
    false
}

/// ORs into `out` (32 words) the image of the group `source` (32 words) under `j = L(i) ^ c`,
/// `inverse` being `L`'s.
///
/// # Safety
/// The processor must have AVX-512F, BW, VBMI and BITALG.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg")]
#[inline]
pub unsafe fn or_gathered(source: &[u64; 32], inverse: &FlipInverse, c: u16, out: &mut [u64; 32]) {
    use std::arch::x86_64::*;
    let (byte_of, bit_of) = inverse.0.split_at(2048);
    let c = (c & 2047) as usize;
    // L^-1(j ^ c) = L^-1(j) ^ L^-1(c): the byte and bit of L^-1(c).
    let byte_xor = _mm512_set1_epi8(byte_of[c] as i8);
    let bit_xor = _mm512_set1_epi8((bit_of[c] & 7) as i8);
    // SAFETY: 256 bytes read from 32 words.
    let source: [__m512i; 4] =
        std::array::from_fn(|q| unsafe { _mm512_loadu_si512(source.as_ptr().add(8 * q) as *const _) });
    for (k, word) in out.iter_mut().enumerate() {
        // SAFETY: 64 bytes read at 64k < 2048 from tables of 2,048.
        let (byte, bit) = unsafe {
            (
                _mm512_loadu_si512(byte_of.as_ptr().add(64 * k) as *const _),
                _mm512_loadu_si512(bit_of.as_ptr().add(64 * k) as *const _),
            )
        };
        let (byte, bit) = (_mm512_xor_si512(byte, byte_xor), _mm512_xor_si512(bit, bit_xor));
        // Source bytes 0..128 and 128..256 by the low seven bits, chosen by the eighth.
        let low = _mm512_permutex2var_epi8(source[0], byte, source[1]);
        let high = _mm512_permutex2var_epi8(source[2], byte, source[3]);
        let bytes = _mm512_mask_blend_epi8(_mm512_movepi8_mask(byte), low, high);
        *word |= _mm512_bitshuffle_epi64_mask(bytes, bit);
    }
}

/// ORs into `out` the images of `row`'s groups (32 words each) under maps that share one linear
/// part: a group `g` that holds entries goes to group `image(g).0` by `j = L(i) ^ image(g).1`,
/// gathered where it holds [`GATHER_FROM`] entries or more, else by `by_bit(out, g, group)`.
///
/// # Safety
/// The processor must have AVX-512F, BW, VBMI and BITALG.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg")]
pub unsafe fn or_group_images(
    row: &[u64],
    out: &mut [u64],
    inverse: &FlipInverse,
    image: impl Fn(usize) -> (usize, u16),
    mut by_bit: impl FnMut(&mut [u64], usize, &[u64]),
) {
    for (g, group) in row.chunks_exact(32).enumerate() {
        let ones: u32 = group.iter().map(|w| w.count_ones()).sum();
        if ones == 0 {
            continue;
        }
        if ones < GATHER_FROM {
            by_bit(out, g, group);
            continue;
        }
        let (to, c) = image(g);
        let source = group.try_into().expect("a group of 32 words");
        let target = (&mut out[to * 32..][..32]).try_into().expect("a group of 32 words");
        // SAFETY: the caller's processor has the features.
        unsafe { or_gathered(source, inverse, c, target) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::SplitMix64;

    /// A random invertible linear map of eleven bits, as its 2,048 images.
    fn random_span(rng: &mut SplitMix64) -> Vec<u16> {
        loop {
            let units: Vec<u16> = (0..11).map(|_| rng.below(2048) as u16).collect();
            let span: Vec<u16> = (0..2048u16)
                .map(|i| (0..11).filter(|k| i >> k & 1 == 1).fold(0, |a, k| a ^ units[k]))
                .collect();
            let mut seen = vec![false; 2048];
            if span.iter().all(|&y| !std::mem::replace(&mut seen[y as usize], true)) {
                return span;
            }
        }
    }

    #[test]
    fn the_inverse_undoes_the_map() {
        let mut rng = SplitMix64::new(11);
        let span = random_span(&mut rng);
        let inverse = FlipInverse::new(&span);
        assert!((0..2048u16).all(|i| inverse.source(span[i as usize]) == i));
    }

    /// The gather against setting each entry's image, on empty, one-entry, sparse, dense and
    /// full groups, ORed into a target that already holds bits.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_gathered_group_is_the_image_of_its_entries() {
        if !available() {
            eprintln!("no AVX-512 gather here: the scalar paths are tested by their callers");
            return;
        }
        let mut rng = SplitMix64::new(2048);
        for density in [0u64, 1, 20, 500, 1900, 2048] {
            let span = random_span(&mut rng);
            let inverse = FlipInverse::new(&span);
            let c = rng.below(2048) as u16;
            let mut source = [0u64; 32];
            for _ in 0..density {
                let i = rng.below(2048);
                source[i as usize / 64] |= 1 << (i % 64);
            }
            if density == 2048 {
                source = [u64::MAX; 32];
            }
            let before: [u64; 32] = std::array::from_fn(|_| rng.next_u64() & rng.next_u64());
            let mut expected = before;
            for i in 0..2048usize {
                if source[i / 64] >> (i % 64) & 1 == 1 {
                    let j = (span[i] ^ c) as usize;
                    expected[j / 64] |= 1 << (j % 64);
                }
            }
            let mut out = before;
            // SAFETY: the features were checked above.
            unsafe { or_gathered(&source, &inverse, c, &mut out) };
            assert_eq!(out, expected, "{density} entries");
        }
    }
}
