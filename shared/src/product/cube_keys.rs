//! The whole cube's product keys (see [`super::CubeCosets`]) with byte shuffles: for a fixed
//! second factor `t`, the key of `s t` gathers `s`'s cubies through `t`'s permutation, which
//! one `pshufb` does for all twelve edges (and one for the corners), so a key costs a few
//! vector instructions instead of some thirty dependent byte loads. Used where the processor
//! has SSSE3 and SSE4.1 (checked at run time); elsewhere the scalar key serves, and the tests
//! hold the two equal.

#[cfg(target_arch = "x86_64")]
use crate::cube::Cube;

/// Appends the key of `s t` for every `s` of `firsts` whose cut starts (`cuts`) miss
/// `t_starts` to `out`, or returns false (appending nothing) where the processor lacks the
/// instructions.
#[cfg(target_arch = "x86_64")]
pub fn append_keys(firsts: &[Cube], cuts: &[u32], t: &Cube, t_starts: u32, out: &mut Vec<u64>) -> bool {
    if !(std::arch::is_x86_feature_detected!("ssse3") && std::arch::is_x86_feature_detected!("sse4.1")) {
        return false;
    }
    // SAFETY: both instruction sets were just detected.
    unsafe { x86::append_keys(firsts, cuts, t, t_starts, out) };
    true
}

#[cfg(not(target_arch = "x86_64"))]
pub fn append_keys(
    _firsts: &[crate::cube::Cube],
    _cuts: &[u32],
    _t: &crate::cube::Cube,
    _t_starts: u32,
    _out: &mut Vec<u64>,
) -> bool {
    false
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use crate::cube::Cube;
    use std::arch::x86_64::*;

    /// Sixteen bytes: `byte(j)` for `j < len`, then `pad`. As a shuffle control with pad
    /// 0x80, lane `j` takes byte `byte(j)` and the lanes after `len` are zero.
    #[inline]
    #[target_feature(enable = "ssse3,sse4.1")]
    fn lanes(len: usize, pad: u8, byte: impl Fn(usize) -> u8) -> __m128i {
        let mut c = [pad; 16];
        for (j, b) in c.iter_mut().enumerate().take(len) {
            *b = byte(j);
        }
        // SAFETY: `c` is 16 readable bytes; the load has no alignment requirement.
        unsafe { _mm_loadu_si128(c.as_ptr().cast()) }
    }

    /// Sixteen bytes: the twelve given, then zeros.
    #[inline]
    #[target_feature(enable = "ssse3,sse4.1")]
    fn load12(bytes: &[u8; 12]) -> __m128i {
        let lo = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        let hi = u32::from_le_bytes(bytes[8..].try_into().expect("4 bytes"));
        _mm_set_epi64x(hi as i64, lo as i64)
    }

    #[target_feature(enable = "ssse3,sse4.1")]
    pub(super) fn append_keys(firsts: &[Cube], cuts: &[u32], t: &Cube, t_starts: u32, out: &mut Vec<u64>) {
        let (te, tc) = (&t.edges, &t.corners);
        // Edge places 9, 8, .., 0 (so nibble pairs pack most significant place first) and the
        // flips of places 10, 9, .., 0 (so the sign-bit mask has place 0 highest).
        let perm_ctl = lanes(10, 0x80, |j| te.perm[9 - j]);
        let flip_ctl = lanes(11, 0x80, |j| te.perm[10 - j]);
        let t_flips = lanes(11, 0, |j| te.ori[10 - j] << 7);
        let twist_ctl = lanes(7, 0x80, |j| tc.perm[j]);
        let t_twists = lanes(7, 0, |j| tc.ori[j]);
        let low_nibble = _mm_set1_epi8(0x0f);
        let three = _mm_set1_epi8(3);
        // (a + 16 b) for each pair of places, then base 3 in pairs of digits, then in fours.
        let nibble_pairs = _mm_set1_epi16(0x1001);
        let pairs3 = _mm_set_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 1, 3, 1, 3, 1);
        let fours9 = _mm_set_epi16(0, 0, 0, 0, 729, 81, 9, 1);
        out.reserve(firsts.len());
        let spare = &mut out.spare_capacity_mut()[..firsts.len()];
        let mut kept = 0;
        for (s, &cut) in firsts.iter().zip(cuts) {
            // Edge bytes: the cubie, with its flip in the sign bit.
            let perm = load12(&s.edges.perm);
            let flips = _mm_slli_epi16::<7>(load12(&s.edges.ori));
            let edges = _mm_or_si128(perm, flips);
            let places = _mm_and_si128(_mm_shuffle_epi8(edges, perm_ctl), low_nibble);
            let packed = _mm_packus_epi16(_mm_maddubs_epi16(places, nibble_pairs), _mm_setzero_si128());
            let perm40 = (_mm_cvtsi128_si64(packed) as u64) & ((1 << 40) - 1);
            let flip_bits = _mm_xor_si128(_mm_shuffle_epi8(edges, flip_ctl), t_flips);
            let flips11 = _mm_movemask_epi8(flip_bits) as u64 & 0x7ff;
            // Corner twists: s's twist at t's place, plus t's, mod 3, in base 3 (place 0 lowest).
            let corners = _mm_cvtsi64_si128(u64::from_le_bytes(s.corners.ori) as i64);
            let sum = _mm_add_epi8(_mm_shuffle_epi8(corners, twist_ctl), t_twists);
            let digits = _mm_min_epu8(sum, _mm_sub_epi8(sum, three));
            let fours = _mm_madd_epi16(_mm_maddubs_epi16(digits, pairs3), fours9);
            let twist = (_mm_extract_epi32::<0>(fours) + _mm_extract_epi32::<1>(fours)) as u64;
            // Written always, kept when not cut: no branch to mispredict.
            spare[kept].write(twist << 51 | perm40 << 11 | flips11);
            kept += (cut & t_starts == 0) as usize;
        }
        let len = out.len() + kept;
        // SAFETY: the first `kept` slots past the length were written above, within capacity.
        unsafe { out.set_len(len) };
    }
}
