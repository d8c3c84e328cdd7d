//! The columns of a row's set bits, in increasing order: how a sparse row becomes positions.
//!
//! Where the processor has AVX-512 VBMI2, each half word's bits select, in one instruction
//! (VPCOMPRESSW), their columns out of the 32 columns the half covers; otherwise a scalar loop
//! takes the bits one by one. Both give the same columns (tested against a bit-by-bit
//! reference, `sparse/tests.rs`).

/// Room `out` needs past the columns of `words`: see [`gather_columns`].
pub const GATHER_ROOM: usize = 4;

/// Writes the columns of the set bits of `words` (at most a segment) into `out` in increasing
/// order and returns how many. `out` holds `words.len() * 64 + GATHER_ROOM` entries; past the
/// columns written, its entries are left with any value. `dense`: the row holds about one
/// bit in two words or more (a hint of the fastest way; any value gives the same columns).
#[inline]
pub fn gather_columns(words: &[u64], out: &mut [u16], dense: bool) -> usize {
    assert!(out.len() >= words.len() * 64 + GATHER_ROOM, "room for a segment's columns");
    #[cfg(target_arch = "x86_64")]
    if x86::available() {
        // SAFETY: the processor reports the features the function is built for.
        return unsafe { x86::gather(words, out, dense) };
    }
    let _ = dense;
    portable(words, out)
}

/// The scalar way: empty words are skipped, and each other word's first four bits are written
/// whether it has them or not, the count moving on only past those it has, so that no branch
/// is taken per bit (mispredicted ones were most of this loop's time with one bit in 50 set);
/// a fifth bit and more take a loop.
pub fn portable(words: &[u64], out: &mut [u16]) -> usize {
    assert!(out.len() >= words.len() * 64 + GATHER_ROOM, "room for a segment's columns");
    let mut k = 0;
    for (j, &word) in words.iter().enumerate().filter(|(_, w)| **w != 0) {
        let base = (j * 64) as u16;
        let mut b = word;
        for _ in 0..4 {
            out[k] = base.wrapping_add(b.trailing_zeros() as u16);
            k += usize::from(b != 0);
            b &= b.wrapping_sub(1);
        }
        while b != 0 {
            out[k] = base + b.trailing_zeros() as u16;
            k += 1;
            b &= b - 1;
        }
    }
    k
}

#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use std::arch::x86_64::*;

    /// Whether this processor runs [`gather`].
    pub fn available() -> bool {
        use std::arch::is_x86_feature_detected as has;
        has!("avx512f") && has!("avx512bw") && has!("avx512vbmi2")
    }

    /// The columns 0 to 31 of a half word.
    static LANES: [u16; 32] = {
        let mut lanes = [0u16; 32];
        let mut i = 0;
        while i < 32 {
            lanes[i] = i as u16;
            i += 1;
        }
        lanes
    };

    /// [`super::gather_columns`] by VPCOMPRESSW: each half word's 32 columns compressed by its
    /// bits and stored whole at the count so far (the next store writes over what lies past
    /// the count). In a `dense` row every word is taken so, empty or not; otherwise only the
    /// nonempty words of each run of eight, found by one vector test (a branch per word is
    /// mispredicted about as often as taken near one bit in 50, and costs more than the
    /// word's two stores; the test costs more than it saves below one bit in about 110).
    ///
    /// # Safety
    /// The processor must have AVX-512F, BW and VBMI2 ([`available`]).
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi2")]
    pub unsafe fn gather(words: &[u64], out: &mut [u16], dense: bool) -> usize {
        assert!(out.len() >= words.len() * 64, "room for a segment's columns");
        // SAFETY: LANES is 64 bytes; an unaligned load.
        let lanes = unsafe { _mm512_loadu_si512(LANES.as_ptr().cast()) };
        let to = out.as_mut_ptr();
        let mut k = 0usize;
        let mut word_at = |j: usize, word: u64| {
            let base = _mm512_add_epi16(lanes, _mm512_set1_epi16((j * 64) as i16));
            let low = _mm512_maskz_compress_epi16(word as u32, base);
            let high = _mm512_maskz_compress_epi16(
                (word >> 32) as u32,
                _mm512_add_epi16(base, _mm512_set1_epi16(32)),
            );
            // SAFETY: before word j at most 64 j columns were counted, so the first store ends
            // by 64 j + 32 and the second (after at most 32 more) by 64 (j + 1): within `out`,
            // which holds 64 columns per word.
            unsafe {
                _mm512_storeu_si512(to.add(k).cast(), low);
                k += (word as u32).count_ones() as usize;
                _mm512_storeu_si512(to.add(k).cast(), high);
            }
            k += (word >> 32).count_ones() as usize;
        };
        let (whole, rest) = if dense { (&[][..], words) } else { words.as_chunks::<8>() };
        for (c, eight) in whole.iter().enumerate() {
            // SAFETY: eight words, an unaligned load.
            let v = unsafe { _mm512_loadu_si512(eight.as_ptr().cast()) };
            let mut nonempty = _mm512_test_epi64_mask(v, v);
            while nonempty != 0 {
                let i = nonempty.trailing_zeros() as usize;
                nonempty &= nonempty - 1;
                word_at(c * 8 + i, eight[i]);
            }
        }
        let first = words.len() - rest.len();
        for (i, &word) in rest.iter().enumerate() {
            word_at(first + i, word);
        }
        k
    }
}
