//! One destination page of a pass ([`super::Pages::extend_from`]): for each group, the group's
//! own bits and its ten source groups, each moved into place. Two kernels compute the same
//! bytes: a scalar one, group by group, and where the processor has AVX-512 (F, BW, VBMI and
//! VPOPCNTDQ, checked at run time) one that takes a block of sixteen groups at a time: the
//! sources of the six moves of <U, D> as one shuffled load each (the layout keeps them in the
//! block), the other four moves' in one gather each, the slot permutations of R2, L2 and B2 as
//! word shuffles instead of table loads, and the page's elements counted as they are written.
//! The tests hold the two equal.

use super::{count_page, GROUPS, LOW};

/// Groups a vector step takes: one block of the layout's order (sixteen groups, 48 bytes).
const BLOCK: usize = 16;

/// The layout's tables as the kernels read them.
pub(super) struct Kernel {
    /// Per group, per move: the byte offset of the group of its members times the move.
    sources: Vec<[u16; 10]>,
    /// Per slot-permuting move (R2, L2, B2), per parity of the source half: the 12 slot bits of
    /// a source half mapped to the destination's.
    slot_maps: Vec<[Vec<u16>; 2]>,
    /// Per move, per group: the byte offset of its source group (the layout's `sources`
    /// transposed, so sixteen consecutive groups' offsets are one load).
    by_move: Vec<Vec<u16>>,
    /// Per slot-permuting move, per parity of the source half: the 12-bit slot map as three
    /// 32-word tables, for source bits 0..5, 5..10 and 10..12 (a map of bits is the OR of its
    /// parts).
    words: Vec<[[[u16; 32]; 3]; 2]>,
    /// Per move, if it maps every block of sixteen groups to the same block in the same way
    /// (the moves of <U, D>, by the layout's order of groups): the byte shuffle that takes the
    /// block's 48 bytes in the source page to its sixteen groups in place, one a 32-bit lane.
    blocks: [Option<[u8; 64]>; 10],
    /// The moves whose sources are gathered (the other four): their source pages for the next
    /// page are prefetched while a page is made, which hides their cache misses.
    gathered: [usize; 4],
    /// Whether the vector kernel runs here.
    vector: bool,
}

/// The byte shuffle of move `k`'s blocks, if its sources stay in the block (see
/// [`Kernel::blocks`]).
fn block_shuffle(sources: &[[u16; 10]], k: usize) -> Option<[u8; 64]> {
    let within: Vec<usize> = (0..BLOCK).map(|j| sources[j][k] as usize / 3).collect();
    let same = within.iter().all(|&j| j < BLOCK)
        && sources
            .chunks_exact(BLOCK)
            .enumerate()
            .all(|(b, block)| block.iter().zip(&within).all(|(o, &j)| o[k] as usize == 3 * (BLOCK * b + j)));
    same.then(|| std::array::from_fn(|i| (3 * within[i / 4] + (i % 4).min(2)) as u8))
}

impl Kernel {
    pub(super) fn new(sources: Vec<[u16; 10]>, slot_maps: Vec<[Vec<u16>; 2]>) -> Self {
        let by_move = (0..10).map(|k| sources.iter().map(|o| o[k]).collect()).collect();
        let words = slot_maps
            .iter()
            .map(|maps| {
                std::array::from_fn(|parity| {
                    std::array::from_fn(|part| {
                        std::array::from_fn(|i| {
                            let input = (i as u32) << (5 * part);
                            if input <= LOW {
                                maps[parity][input as usize]
                            } else {
                                0
                            }
                        })
                    })
                })
            })
            .collect();
        let blocks: [Option<[u8; 64]>; 10] = std::array::from_fn(|k| block_shuffle(&sources, k));
        let gathered: Vec<usize> = (0..10).filter(|&k| blocks[k].is_none()).collect();
        let gathered = gathered.try_into().expect("the six moves of <U, D> stay in their blocks");
        Kernel { sources, slot_maps, by_move, words, blocks, gathered, vector: vector_available() }
    }

    /// The same kernel, scalar whatever the processor (for the tests that compare the two).
    #[cfg(test)]
    pub(super) fn scalar(&self) -> Self {
        Kernel {
            sources: self.sources.clone(),
            slot_maps: self.slot_maps.clone(),
            by_move: self.by_move.clone(),
            words: self.words.clone(),
            blocks: self.blocks,
            gathered: self.gathered,
            vector: false,
        }
    }

    /// The byte offset of the group that the members of `group` are taken to by move `k`.
    pub(super) fn source(&self, group: usize, k: usize) -> u16 {
        self.sources[group][k]
    }

    /// The moves whose sources are gathered, not loaded a block at a time.
    pub(super) fn gathered(&self) -> [usize; 4] {
        self.gathered
    }

    #[cfg(test)]
    pub(super) fn is_vector(&self) -> bool {
        self.vector
    }
}

#[cfg(target_arch = "x86_64")]
fn vector_available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
        && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
}

#[cfg(not(target_arch = "x86_64"))]
fn vector_available() -> bool {
    false
}

/// Writes destination page `dst` (of a page whose corner permutation is `odd` or even) from
/// its ten source pages and its own page in the source set. Groups already full in `own` are
/// copied without reading their sources (the vector kernel: sixteen in a row). `ahead` are the
/// addresses of the pages that the page made after this one gathers from ([`Kernel::gathered`]),
/// which the vector kernel prefetches (it never reads them). Returns the elements of the page
/// made.
pub(super) fn extend_page(
    dst: &mut [u8],
    src: &[&[u8]; 10],
    own: &[u8],
    kernel: &Kernel,
    odd: bool,
    ahead: [*const u8; 4],
) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if kernel.vector {
        // SAFETY: the kernel's flag says the instructions were detected; the pages are
        // STRIDE bytes, as the scalar kernel's reads require too.
        return unsafe { avx512::extend_page(dst, src, own, kernel, odd, ahead) };
    }
    let _ = ahead;
    extend_page_scalar(dst, src, own, kernel, odd);
    count_page(dst)
}

/// Reads the 24 bits of a group (and one byte past it, which callers mask off).
#[inline(always)]
fn read(page: &[u8], offset: u16) -> u32 {
    debug_assert!(offset as usize + 4 <= page.len());
    // SAFETY: offsets come from the kernel's sources (3 x group < PAGE_BYTES) and every page slice
    // is STRIDE = PAGE_BYTES + 8 bytes long, so the four bytes are inside it.
    unsafe { std::ptr::read_unaligned(page.as_ptr().add(offset as usize) as *const u32) }
}

fn extend_page_scalar(dst: &mut [u8], src: &[&[u8]; 10], own: &[u8], kernel: &Kernel, odd: bool) {
    // The slot tables by the parity of the source half: the low half of a destination group
    // (slots of the page's parity) comes from the source's high half, of the other parity.
    let (to_low, to_high) = (odd as usize ^ 1, odd as usize);
    let maps: [(&[u16], &[u16]); 3] =
        std::array::from_fn(|k| (&kernel.slot_maps[k][to_low][..], &kernel.slot_maps[k][to_high][..]));
    for (g, o) in kernel.sources.iter().enumerate() {
        let mine = read(own, 3 * g as u16) & 0xff_ffff;
        if mine == 0xff_ffff {
            dst[3 * g..3 * g + 4].copy_from_slice(&mine.to_le_bytes());
            continue;
        }
        let swapped = read(src[0], o[0])
            | read(src[1], o[1])
            | read(src[2], o[2])
            | read(src[3], o[3])
            | read(src[4], o[4]);
        let mut w =
            mine | (swapped >> 12 & LOW) | (swapped & LOW) << 12 | read(src[5], o[5]) | read(src[6], o[6]);
        for (k, (low, high)) in maps.iter().enumerate() {
            let v = read(src[7 + k], o[7 + k]);
            w |= low[(v >> 12 & LOW) as usize] as u32 | (high[(v & LOW) as usize] as u32) << 12;
        }
        dst[3 * g..3 * g + 4].copy_from_slice(&(w & 0xff_ffff).to_le_bytes());
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{Kernel, BLOCK, GROUPS};
    use std::arch::x86_64::*;

    const BLOCK_BYTES: __mmask64 = (1 << 48) - 1;

    /// Sixty-four bytes as a vector.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn bytes(b: [u8; 64]) -> __m512i {
        // SAFETY: 64 readable bytes; the load has no alignment requirement.
        unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
    }

    /// A slot map applied to sixteen 12-bit values (one per 32-bit lane, upper word zero: its
    /// lookups read entry 0, which is 0).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn slot_map(x: __m512i, t: &[__m512i; 3]) -> __m512i {
        let a = _mm512_permutexvar_epi16(x, t[0]);
        let b = _mm512_permutexvar_epi16(_mm512_srli_epi32::<5>(x), t[1]);
        let c = _mm512_permutexvar_epi16(_mm512_srli_epi32::<10>(x), t[2]);
        _mm512_or_si512(_mm512_or_si512(a, b), c)
    }

    /// The sixteen source groups of move `k` for the block of groups from `g`, one a lane:
    /// the same block of the source page shuffled, or a gather.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    unsafe fn sources(
        kernel: &Kernel,
        shuffles: &[Option<__m512i>; 10],
        src: &[&[u8]; 10],
        k: usize,
        g: usize,
    ) -> __m512i {
        // SAFETY (caller): g + 16 <= GROUPS, and the offsets index STRIDE-byte pages.
        unsafe {
            if let Some(shuffle) = shuffles[k] {
                let raw = _mm512_maskz_loadu_epi8(BLOCK_BYTES, src[k].as_ptr().add(3 * g).cast());
                return _mm512_maskz_permutexvar_epi8(0x7777_7777_7777_7777, shuffle, raw);
            }
            let offsets = _mm256_loadu_si256(kernel.by_move[k].as_ptr().add(g).cast());
            _mm512_i32gather_epi32::<1>(_mm512_cvtepu16_epi32(offsets), src[k].as_ptr().cast())
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vpopcntdq")]
    pub(super) unsafe fn extend_page(
        dst: &mut [u8],
        src: &[&[u8]; 10],
        own: &[u8],
        kernel: &Kernel,
        odd: bool,
        ahead: [*const u8; 4],
    ) -> u32 {
        // 48 bytes to sixteen 32-bit lanes (byte 3 of each lane zero), and back.
        let unpack = bytes(std::array::from_fn(|i| (3 * (i / 4) + i % 4) as u8));
        let unpack_keep: __mmask64 = 0x7777_7777_7777_7777;
        let pack = bytes(std::array::from_fn(|i| if i < 48 { (4 * (i / 3) + i % 3) as u8 } else { 0 }));
        let low = _mm512_set1_epi32(0xfff);
        let full = _mm512_set1_epi32(0xff_ffff);
        let (to_low, to_high) = (odd as usize ^ 1, odd as usize);
        let table = |k: usize, parity: usize| -> [__m512i; 3] {
            // SAFETY: each table is 32 words, 64 readable bytes.
            std::array::from_fn(|part| unsafe {
                _mm512_loadu_si512(kernel.words[k][parity][part].as_ptr().cast())
            })
        };
        let maps: [[[__m512i; 3]; 2]; 3] = std::array::from_fn(|k| [table(k, to_low), table(k, to_high)]);
        let shuffles: [Option<__m512i>; 10] = std::array::from_fn(|k| kernel.blocks[k].map(|b| bytes(b)));
        assert!(dst.len() >= 3 * GROUPS && own.len() >= 3 * GROUPS);
        // Per lane, the elements of the groups written (counted as they are made: the page
        // is not read again).
        let mut count = _mm512_setzero_si512();
        let all = _mm512_set1_epi32(24);
        for g in (0..GROUPS).step_by(BLOCK) {
            // SAFETY: 3 g + 48 <= 3 GROUPS bytes of `own` and `dst` (asserted); `sources`'
            // offsets come from the layout's sources.
            unsafe {
                // A block's worth of each page gathered from next: a page a page. (A
                // prefetch reads nothing, so the addresses need not be readable.)
                for page in ahead {
                    _mm_prefetch::<_MM_HINT_T1>(page.wrapping_add(3 * g).cast());
                }
                let raw = _mm512_maskz_loadu_epi8(BLOCK_BYTES, own.as_ptr().add(3 * g).cast());
                let mine = _mm512_maskz_permutexvar_epi8(unpack_keep, unpack, raw);
                if _mm512_cmpeq_epi32_mask(mine, full) == 0xffff {
                    _mm512_mask_storeu_epi8(dst.as_mut_ptr().add(3 * g).cast(), BLOCK_BYTES, raw);
                    count = _mm512_add_epi32(count, all);
                    continue;
                }
                let mut swapped = sources(kernel, &shuffles, src, 0, g);
                for k in 1..5 {
                    swapped = _mm512_or_si512(swapped, sources(kernel, &shuffles, src, k, g));
                }
                let mut w = _mm512_or_si512(mine, _mm512_and_si512(_mm512_srli_epi32::<12>(swapped), low));
                w = _mm512_or_si512(w, _mm512_slli_epi32::<12>(_mm512_and_si512(swapped, low)));
                w = _mm512_or_si512(w, sources(kernel, &shuffles, src, 5, g));
                w = _mm512_or_si512(w, sources(kernel, &shuffles, src, 6, g));
                for (k, [to_low, to_high]) in maps.iter().enumerate() {
                    let v = sources(kernel, &shuffles, src, 7 + k, g);
                    w = _mm512_or_si512(
                        w,
                        slot_map(_mm512_and_si512(_mm512_srli_epi32::<12>(v), low), to_low),
                    );
                    w = _mm512_or_si512(
                        w,
                        _mm512_slli_epi32::<12>(slot_map(_mm512_and_si512(v, low), to_high)),
                    );
                }
                let w = _mm512_and_si512(w, full);
                count = _mm512_add_epi32(count, _mm512_popcnt_epi32(w));
                let packed = _mm512_permutexvar_epi8(pack, w);
                _mm512_mask_storeu_epi8(dst.as_mut_ptr().add(3 * g).cast(), BLOCK_BYTES, packed);
            }
        }
        _mm512_reduce_add_epi32(count) as u32
    }
}
