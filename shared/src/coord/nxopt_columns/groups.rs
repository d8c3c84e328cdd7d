//! Groups (16, 256 and 2,048 flips) moved whole with AVX-512, chosen at run time.
//!
//! Target bit `j` of the image group is source bit `L^-1(j ^ c)`, with `L` the linear part and
//! `c` the image of no flips: a gather of the group's bits. Per 64 targets, each target's source
//! byte and bit (for EO2 by two affine byte transforms, GFNI; for EO1 from tables, XORed with
//! `L^-1(c)`; EO3 by [`crate::coord::flips`], shared with the H48 tables), a byte permutation (VBMI) that brings the source bytes into place and a
//! bit shuffle (BITALG) that picks the bits: about 7 vector instructions per 64 targets for EO2
//! and 9 for EO3, about 25 instructions an EO1 word (four groups) (counted in the code), against
//! one load and one random bit set per entry.

pub use super::super::flips::available;
use super::super::flips::{or_group_images, FlipInverse};
use super::NxoptMap;

/// The inverse of the linear part `span`: per target, its source.
pub fn inverse(span: &[u16]) -> Vec<u8> {
    let mut inverse = vec![0u8; span.len()];
    for (x, &y) in span.iter().enumerate() {
        inverse[y as usize] = x as u8;
    }
    inverse
}

/// The inverse of the linear part `span` (its 256 images) as two GF2P8AFFINEQB matrices:
/// one gives a target's source byte (bits 3..8 of `L^-1`), the other its bit (bits 0..3).
pub fn inverse_matrices(span: &[u16]) -> [u64; 2] {
    let inverse = inverse(span);
    // Row i of a matrix (byte 7 - i) holds the input bits whose parity is output bit i.
    let matrix = |f: &dyn Fn(u8) -> u8| -> u64 {
        (0..8)
            .map(|i| {
                let row = (0..8).fold(0u64, |row, b| row | (((f(1 << b) >> i) & 1) as u64) << b);
                row << (8 * (7 - i))
            })
            .fold(0, |a, r| a | r)
    };
    [matrix(&|y| inverse[y as usize] >> 3), matrix(&|y| inverse[y as usize] & 7)]
}

/// [`super::ColumnMapper::or_images`] for EO2: every group that holds an entry moved whole
/// (at EO2EP2's sparse levels, 0.4 and 4.5 entries a group at depths 9 and 10, this beat
/// the entry-by-entry loop for groups of fewer than 4: whole builds about 85 and 88 s against
/// 104 and 109 s, alternated, from the runs' log times).
///
/// # Safety
/// The processor must have AVX-512F, BW, VBMI, BITALG, GFNI and POPCNT.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,gfni,popcnt")]
pub unsafe fn or_images_eo2_avx512(map: &NxoptMap<'_>, matrices: &[[u64; 2]], row: &[u64], out: &mut [u64]) {
    use std::arch::x86_64::*;
    let lanes: [u8; 64] = std::array::from_fn(|i| i as u8);
    let bytes_at: [u8; 64] = std::array::from_fn(|i| (i % 8 * 8) as u8);
    // SAFETY: 64 bytes read from 64-byte arrays.
    let (lanes, bytes_at) = unsafe {
        (_mm512_loadu_si512(lanes.as_ptr() as *const _), _mm512_loadu_si512(bytes_at.as_ptr() as *const _))
    };
    let groups = nonzero_words(row).flat_map(|(chunk, words)| {
        [(words & 15 != 0).then_some(2 * chunk), (words >> 4 != 0).then_some(2 * chunk + 1)]
    });
    for g in groups.flatten() {
        let group = &row[4 * g..][..4];
        let image = map.base[g];
        let [byte_of, bit_of] = matrices[(g as u32 & map.field_mask) as usize];
        let (byte_of, bit_of) = (_mm512_set1_epi64(byte_of as i64), _mm512_set1_epi64(bit_of as i64));
        // SAFETY: four words read from a group of four.
        let source = _mm512_zextsi256_si512(unsafe { _mm256_loadu_si256(group.as_ptr() as *const _) });
        let flips = _mm512_set1_epi8(image as u8 as i8);
        let target = (image >> 8) as usize * 4;
        for (k, word) in out[target..target + 4].iter_mut().enumerate() {
            // Targets 64k..64k + 64, XORed with the image of no flips: L^-1 of these.
            let y = _mm512_xor_si512(_mm512_or_si512(lanes, _mm512_set1_epi8((k << 6) as u8 as i8)), flips);
            let byte = _mm512_gf2p8affine_epi64_epi8::<0>(y, byte_of);
            let bit = _mm512_or_si512(_mm512_gf2p8affine_epi64_epi8::<0>(y, bit_of), bytes_at);
            *word |= _mm512_bitshuffle_epi64_mask(_mm512_permutexvar_epi8(byte, source), bit);
        }
    }
}

/// The chunks of eight words of `row` (a multiple of eight) that hold a set bit, with a mask
/// of their words that do: eight words tested at once, so that a sparse level's empty words
/// cost little.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn nonzero_words(row: &[u64]) -> impl Iterator<Item = (usize, u8)> + '_ {
    use std::arch::x86_64::*;
    row.chunks_exact(8).enumerate().filter_map(|(chunk, words)| {
        // SAFETY: eight words read from a chunk of eight.
        let v = unsafe { _mm512_loadu_si512(words.as_ptr() as *const _) };
        let words = _mm512_test_epi64_mask(v, v);
        (words != 0).then_some((chunk, words))
    })
}

/// [`super::ColumnMapper::or_images`] for EO1: every nonzero word (four groups of 16 flips)
/// at once, each group's targets selected from the word by one bit shuffle.
///
/// # Safety
/// The processor must have AVX-512F, BW, VBMI, BITALG, GFNI and POPCNT.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,gfni,popcnt")]
pub unsafe fn or_images_eo1_avx512(map: &NxoptMap<'_>, inverses: &[u8], row: &[u64], out: &mut [u64]) {
    use std::arch::x86_64::*;
    // Lanes 16k.. select within group k's 16 bits of the word.
    let at: [u8; 64] = std::array::from_fn(|l| (l / 16 * 16) as u8);
    // SAFETY: 64 bytes read from a 64-byte array.
    let at = unsafe { _mm512_loadu_si512(at.as_ptr() as *const _) };
    let words = nonzero_words(row)
        .flat_map(|(chunk, words)| (0..8).filter(move |k| words >> k & 1 == 1).map(move |k| 8 * chunk + k));
    // Lane k (16 bytes) gets byte 4k of the four groups' images: group k's c (low 4 bits).
    let spread: [u8; 64] = std::array::from_fn(|l| (l / 16 * 4) as u8);
    // SAFETY: 64 bytes read from a 64-byte array; 16 bytes from a uniform map's one table.
    let (spread, uniform) = unsafe {
        (
            _mm512_loadu_si512(spread.as_ptr() as *const _),
            _mm512_broadcast_i32x4(_mm_loadu_si128(inverses.as_ptr() as *const _)),
        )
    };
    for w in words {
        let word = row[w];
        let images = &map.base[4 * w..][..4];
        // The four groups' inverses, lane by lane: their fields are consecutive.
        let lanes = match map.field_mask {
            0 => uniform,
            // SAFETY: 64 bytes at the first field's 16, which is at most 508 of 512.
            _ => unsafe { _mm512_loadu_si512(inverses.as_ptr().add(16 * ((4 * w) & 511)) as *const _) },
        };
        // SAFETY: four images read from a slice of four.
        let base = _mm512_castsi128_si512(unsafe { _mm_loadu_si128(images.as_ptr() as *const _) });
        let c = _mm512_and_si512(_mm512_permutexvar_epi8(spread, base), _mm512_set1_epi8(15));
        // L^-1(j ^ c) = L^-1(j) ^ L^-1(c), L^-1(c) by a byte shuffle within each lane.
        let selects = _mm512_xor_si512(lanes, _mm512_shuffle_epi8(lanes, c));
        let moved =
            _mm512_bitshuffle_epi64_mask(_mm512_set1_epi64(word as i64), _mm512_or_si512(selects, at));
        for (k, &image) in images.iter().enumerate() {
            let t = image >> 4;
            out[t as usize / 4] |= (moved >> (16 * k) & 0xffff) << (t % 4 * 16);
        }
    }
}

/// [`super::ColumnMapper::or_images`] for EO3 (a uniform linear part): dense groups moved
/// whole, the rest entry by entry.
///
/// # Safety
/// The processor must have AVX-512F, BW, VBMI, BITALG, GFNI and POPCNT.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,gfni,popcnt")]
pub unsafe fn or_images_eo3_avx512(map: &NxoptMap<'_>, inverse: &FlipInverse, row: &[u64], out: &mut [u64]) {
    let image = |g: usize| ((map.base[g] >> 11) as usize, (map.base[g] & 2047) as u16);
    let by_bit = |out: &mut [u64], g: usize, group: &[u64]| {
        map.group_by_bit(g, group, &mut |c| out[c as usize / 64] |= 1 << (c % 64))
    };
    // SAFETY: the caller's processor has the features.
    unsafe { or_group_images(row, out, inverse, image, by_bit) }
}
