//! A row's digits exchanged: the row as bits of columns (d0, d1, d2), d2 innermost, written
//! with digit d0 or d1 and d2 exchanged, so that a map whose innermost target block comes
//! from an outer source block can be applied group by group (`super::groups`).
//!
//! Digits are orderings of one block (24 values), so a row of three blocks is 24 x 24 matrices
//! of 24 x 24 bits, each to be transposed: exchanging d1 and d2 transposes each 72-byte run of
//! the row (fixed d0) where it lies, exchanging d0 and d2 the matrices whose rows lie 72 bytes
//! apart (fixed d1). Each 24 x 24 transpose is nine 8 x 8 bit tiles. With AVX-512 VBMI and
//! GFNI a run's nine tiles are gathered by two byte permutes, transposed by two affine
//! multiplications and scattered by two more; exchanging d0 and d2 is that, the three-byte
//! groups (d0, d1) moved to (d1, d0), and that again. Elsewhere, tile by tile.

/// Columns of a group: the orderings of one block.
const GROUP: usize = 24;

/// Bytes of a row of three blocks, the rows the vector kernel takes.
const ROW_BYTES: usize = GROUP * GROUP * GROUP / 8;

/// Bytes of a run of one outer digit's groups: 24 groups of three bytes.
const RUN: usize = GROUP * 3;

/// Bit strides of the three digits (index into a map's contributions).
pub(super) const STRIDE: [usize; 3] = [GROUP * GROUP, GROUP, 1];

/// Writes into `moved` (zeroed, as long as `row`) the row `row` (as bytes) with digit `k` (0 or
/// 1) and the innermost digit exchanged.
pub(super) fn swap_with_innermost(row: &[u8], k: usize, moved: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if row.len() == ROW_BYTES && moved.len() == ROW_BYTES && crate::coord::flips::available() {
        // SAFETY: the processor has the features (checked above); both rows are ROW_BYTES.
        unsafe {
            if k == 1 {
                transpose_runs_avx512(row, moved);
            } else {
                // (d0, d1, d2) to (d0, d2, d1), (d2, d0, d1) and (d2, d1, d0).
                let mut inner = [0u8; ROW_BYTES + SPILL];
                let mut outer = [0u8; ROW_BYTES + SPILL];
                transpose_runs_avx512(row, &mut inner[..ROW_BYTES]);
                exchange_outer(&inner, &mut outer);
                transpose_runs_avx512(&outer[..ROW_BYTES], moved);
            }
        }
        return;
    }
    swap_by_tiles(row, k, moved);
}

/// [`swap_with_innermost`] tile by tile, skipping empty tiles.
fn swap_by_tiles(row: &[u8], k: usize, moved: &mut [u8]) {
    let groups = row.len() * 8 / GROUP;
    // The digit that stays: d1 when swapping d0, else d0 (a single value for two blocks).
    let (other, others) = if k == 0 { (STRIDE[1] / 8, GROUP) } else { (STRIDE[0] / 8, groups / GROUP) };
    let stride = STRIDE[k] / 8;
    for o in 0..others {
        for kb in 0..GROUP / 8 {
            for ib in 0..GROUP / 8 {
                let from = o * other + 8 * kb * stride + ib;
                let tile = u64::from_le_bytes(std::array::from_fn(|r| row[from + r * stride]));
                if tile == 0 {
                    continue;
                }
                let to = o * other + 8 * ib * stride + kb;
                for (c, b) in transpose8(tile).to_le_bytes().into_iter().enumerate() {
                    moved[to + c * stride] = b;
                }
            }
        }
    }
}

/// Bytes past a row of three blocks that [`exchange_outer`] reads and writes.
const SPILL: usize = 5;

/// Writes into `out` the row of three blocks in `row` with its two outer digits exchanged:
/// the group (d0, d1) goes to (d1, d0), its three bytes unchanged. Each group moves as eight
/// bytes, the five after it written over by the next group of its run (or by the next run,
/// which is written after), so both hold [`SPILL`] bytes past the row.
fn exchange_outer(row: &[u8], out: &mut [u8]) {
    assert!(row.len() == ROW_BYTES + SPILL && out.len() == ROW_BYTES + SPILL, "rows with room");
    for d1 in 0..GROUP {
        for d0 in 0..GROUP {
            let from = d0 * RUN + d1 * 3;
            let group: [u8; 8] = row[from..from + 8].try_into().expect("eight bytes");
            out[d1 * RUN + d0 * 3..][..8].copy_from_slice(&group);
        }
    }
}

/// The byte permutes of [`transpose_runs_avx512`]. Tile t = 3 kb + ib of a run holds rows
/// 8 kb .. 8 kb + 8 (three bytes each) at their byte ib.
struct RunPermutes {
    /// Lane t < 8 (the first vector) or t = 8 (lane 0 of the second): byte r is the tile's row
    /// 7 - r (rows reversed, as the affine transpose wants them), indexing the run's 72 bytes
    /// as a pair of vectors.
    gather: [[u8; 64]; 2],
    /// Byte p of the run written (the first 64, then the last 8): byte c of transposed tile
    /// t = 3 kb + ib, where p = 24 ib + 3 c + kb, indexing the two vectors of tiles.
    scatter: [[u8; 64]; 2],
}

const PERMUTES: RunPermutes = {
    let mut gather = [[0u8; 64]; 2];
    let mut t = 0;
    while t < 9 {
        let (kb, ib) = (t / 3, t % 3);
        let mut r = 0;
        while r < 8 {
            let at = if t < 8 { 8 * t + r } else { 64 + r };
            gather[at / 64][at % 64] = (24 * kb + 3 * (7 - r) + ib) as u8;
            r += 1;
        }
        t += 1;
    }
    let mut scatter = [[0u8; 64]; 2];
    let mut p = 0;
    while p < RUN {
        let (ib, c, kb) = (p / 24, p % 24 / 3, p % 3);
        let t = 3 * kb + ib;
        scatter[p / 64][p % 64] = if t < 8 { 8 * t + c } else { 64 + c } as u8;
        p += 1;
    }
    RunPermutes { gather, scatter }
};

/// Transposes each 72-byte run of a row of three blocks (a 24 x 24 bit matrix of 24 rows of
/// three bytes) into `moved`: the exchange of d1 and d2.
///
/// # Safety
/// The processor must have AVX-512F, BW, VBMI and GFNI; both rows are [`ROW_BYTES`] long.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
unsafe fn transpose_runs_avx512(row: &[u8], moved: &mut [u8]) {
    use std::arch::x86_64::*;
    assert!(row.len() == ROW_BYTES && moved.len() == ROW_BYTES, "rows of three blocks");
    let load = |bytes: &[u8; 64]| {
        // SAFETY: 64 bytes.
        unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
    };
    let [gather_a, gather_b] = PERMUTES.gather.each_ref().map(load);
    let [scatter_lo, scatter_hi] = PERMUTES.scatter.each_ref().map(load);
    // Byte j of each lane is the unit vector j: A x for x = e_j is A's column j, reading row i
    // of the matrix from byte 7 - i (hence the rows gathered in reverse).
    let units = _mm512_set1_epi64(0x8040_2010_0804_0201u64 as i64);
    const TAIL: __mmask64 = (1 << (RUN - 64)) - 1;
    for run in 0..ROW_BYTES / RUN {
        let at = run * RUN;
        // SAFETY: bytes at .. at + 72 of rows of ROW_BYTES (a multiple of 72); the second load
        // and store touch only the eight bytes their mask names.
        unsafe {
            let lo = _mm512_loadu_si512(row.as_ptr().add(at).cast());
            let hi = _mm512_maskz_loadu_epi8(TAIL, row.as_ptr().add(at + 64).cast());
            let a = _mm512_permutex2var_epi8(lo, gather_a, hi);
            let b = _mm512_permutex2var_epi8(lo, gather_b, hi);
            let a = _mm512_gf2p8affine_epi64_epi8::<0>(units, a);
            let b = _mm512_gf2p8affine_epi64_epi8::<0>(units, b);
            _mm512_storeu_si512(
                moved.as_mut_ptr().add(at).cast(),
                _mm512_permutex2var_epi8(a, scatter_lo, b),
            );
            _mm512_mask_storeu_epi8(
                moved.as_mut_ptr().add(at + 64).cast(),
                TAIL,
                _mm512_permutex2var_epi8(a, scatter_hi, b),
            );
        }
    }
}

/// Transposes an 8 x 8 bit matrix held row r in byte r, column c in bit c.
#[inline]
fn transpose8(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00aa_00aa_00aa_00aa;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_cccc_0000_cccc;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_f0f0_f0f0;
    x ^ t ^ (t << 28)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_transpose(x: u64) -> u64 {
        let mut y = 0;
        for r in 0..8 {
            for c in 0..8 {
                y |= (x >> (8 * r + c) & 1) << (8 * c + r);
            }
        }
        y
    }

    #[test]
    fn transpose8_is_the_transpose() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..1000 {
            x = x.rotate_left(13).wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x1234;
            assert_eq!(transpose8(x), naive_transpose(x));
        }
    }

    /// The bit of column (d0, d1, d2) of a row of bytes.
    fn bit(row: &[u8], d: [usize; 3]) -> bool {
        let c = d[0] * STRIDE[0] + d[1] * STRIDE[1] + d[2];
        row[c / 8] >> (c % 8) & 1 == 1
    }

    /// Both exchanges, by whichever kernel this processor takes, against the definition bit by
    /// bit, on dense, sparse and empty rows of three blocks.
    #[test]
    fn exchanges_move_every_bit() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for density in [2u32, 9, 64, 0] {
            let row: Vec<u8> = (0..ROW_BYTES)
                .map(|_| {
                    (0..8).fold(0u8, |b, i| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let set = density > 0 && ((seed >> 33) as u32).is_multiple_of(density);
                        b | (set as u8) << i
                    })
                })
                .collect();
            for k in 0..2 {
                let (mut fast, mut tiles) = (vec![0u8; ROW_BYTES], vec![0u8; ROW_BYTES]);
                swap_with_innermost(&row, k, &mut fast);
                swap_by_tiles(&row, k, &mut tiles);
                assert_eq!(fast, tiles, "k = {k}, one bit in {density}");
                for d0 in 0..GROUP {
                    for d1 in 0..GROUP {
                        for d2 in 0..GROUP {
                            let mut to = [d0, d1, d2];
                            to.swap(k, 2);
                            assert_eq!(bit(&fast, to), bit(&row, [d0, d1, d2]), "k = {k}, {d0} {d1} {d2}");
                        }
                    }
                }
            }
        }
    }
}
