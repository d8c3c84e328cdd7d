//! A block map applied to whole groups of 24 columns at a time.
//!
//! A row's columns are the base-24 digits (d0, d1, d2) of the blocks' orderings, the last digit
//! least significant, so the 24 columns that differ only in d2 (a *group*) are 24 consecutive
//! bits, starting on a byte. A block map sends every digit through its own S4 bijection and may
//! permute the blocks. When the innermost source block stays innermost, a whole group lands in
//! one target group, its 24 bits permuted: three byte lookups in a table made once per map, in
//! place of 24 single-column maps. When the symmetry of the transition moves the innermost block
//! outward, the row is first transposed (8 x 8 bit tiles) so that the block feeding the target's
//! innermost one becomes innermost, and then mapped the same way.
//!
//! Below [`DENSE_ENTRIES`] set bits a row is cheaper to map entry by entry, as
//! [`ColumnMapper::for_each_image`] does.

use super::maps::Contributions;
use super::transpose::swap_with_innermost;
use crate::coord::ColumnMapper;
use crate::cube::Move;
use crate::space::set_bit;

/// Columns of a group: the orderings of one block.
const GROUP: usize = 24;

/// The fewest set bits for which a row is mapped group by group. Not tuned yet: by the edges
/// profiles (docs/kernels.md) a row of three blocks costs about 3 us by groups and about 6.7 ns
/// per set bit entry by entry, which puts the break-even nearer 450.
const DENSE_ENTRIES: u32 = 256;

/// The most words of a row the group kernel handles: three blocks, 24^3 columns.
const MAX_WORDS: usize = GROUP * GROUP * GROUP / 64;
const MAX_BYTES: usize = MAX_WORDS * 8;

/// The expanded map of the inner loops: one column by digit lookups, or images and pulls by
/// whole groups through this module's kernels.
impl ColumnMapper for Contributions {
    #[inline]
    fn apply(&self, column: u32) -> u32 {
        // Digits by constant division; block count 2 leaves digit 2 at zero (add[2][0] = 0).
        let low = column % 24;
        let lane = column / 24;
        self.add[0][(lane / 24) as usize % 24] + self.add[1][(lane % 24) as usize] + self.add[2][low as usize]
    }

    fn or_images(&self, row: &[u64], out: &mut [u64]) {
        or_images(self, row, out);
    }

    fn pull_row(
        neighbours: &[Option<(&[u64], Self)>],
        unset: bool,
        open: &mut [u64],
        out: &mut [u64],
    ) -> bool {
        pull_row(neighbours, unset, open, out)
    }
}

/// ORs into `out` the image under `map` of every set bit of `row`.
pub fn or_images(map: &Contributions, row: &[u64], out: &mut [u64]) {
    let entries = crate::ones::ones(row) as u32;
    if entries < DENSE_ENTRIES || !or_images_by_groups(map, row, out) {
        map.for_each_image(row, |c| set_bit(out, c));
    }
}

/// [`or_images`] group by group, whatever the density; false (and nothing written) for a row
/// that is not whole groups of at most three blocks.
fn or_images_by_groups(map: &Contributions, row: &[u64], out: &mut [u64]) -> bool {
    let groups = row.len() * 64 / GROUP;
    if row.len() > MAX_WORDS || groups * GROUP != row.len() * 64 {
        return false;
    }
    let mut bytes = [0u8; MAX_BYTES];
    for (b, w) in bytes.chunks_exact_mut(8).zip(row) {
        b.copy_from_slice(&w.to_le_bytes());
    }
    let bytes = &bytes[..row.len() * 8];
    match innermost_source(map) {
        Some(2) => or_groups(&map.add, bytes, out),
        Some(k) => {
            let mut moved = [0u8; MAX_BYTES];
            let moved = &mut moved[..bytes.len()];
            swap_with_innermost(bytes, k, moved);
            let mut add = map.add;
            add.swap(k, 2);
            or_groups(&add, moved, out);
        }
        None => return false,
    }
    true
}

/// The source digit (index into `add`) that feeds the target's innermost digit: the one whose
/// contributions all stay below 24.
fn innermost_source(map: &Contributions) -> Option<usize> {
    (0..3).rev().find(|&k| map.add[k].iter().all(|&a| (a as usize) < GROUP) && map.add[k] != [0; GROUP])
}

/// The innermost-stays-innermost case: every source group (three bytes of `row`) goes whole to
/// one target group. Branch-free: an empty group ORs zero.
fn or_groups(add: &[[u32; GROUP]; 3], row: &[u8], out: &mut [u64]) {
    let table = ByteTable::new(&add[2]);
    for (g, bits) in row.chunks_exact(3).enumerate() {
        let image = table.permute(bits);
        let base = (add[0][g / GROUP % GROUP] + add[1][g % GROUP]) as usize;
        let wide = (image as u128) << (base % 64);
        out[base / 64] |= wide as u64;
        // A group that straddles two words; the last group of a row never does.
        if let Some(next) = out.get_mut(base / 64 + 1) {
            *next |= (wide >> 64) as u64;
        }
    }
}

/// A row's pull: moves from `open` (its entries not reached yet) to `out` those with a
/// neighbour set in the neighbour's row (clear, where `unset`: rows of unvisited entries),
/// through every neighbour's map, a group at a time. Where the innermost source block stays
/// innermost, a group's images are one target group, so its 24 bits come back through the
/// inverse of the innermost block's permutation. The maps that move the innermost block
/// outward go after those, by the block they make innermost: the open row is transposed once
/// for all of them (as a push transposes its source) and their hits transposed back, or,
/// with fewer than [`TRANSPOSE_FROM`] entries left open, tested one at a time. False
/// (nothing changed) for a row of more than three blocks or not of whole chunks of eight
/// groups (three words), or a neighbour row or map that does not fit the row's columns.
pub fn pull_row(
    neighbours: &[Option<(&[u64], Contributions)>],
    unset: bool,
    open: &mut [u64],
    out: &mut [u64],
) -> bool {
    if open.len() > MAX_WORDS || !open.len().is_multiple_of(3) || neighbours.len() > Move::COUNT {
        return false;
    }
    // Each map's source of the innermost block, found once; every group a map reaches lies
    // in its neighbour row (the gathers below read the words it names).
    let columns = open.len() * 64;
    let mut inner = [0usize; Move::COUNT];
    for (slot, (row, map)) in inner.iter_mut().zip(neighbours.iter().flatten()) {
        let reach = map.add.iter().map(|a| a.iter().max().copied().unwrap_or(0) as usize).sum::<usize>();
        match innermost_source(map) {
            Some(k) if row.len() == open.len() && reach < columns => *slot = k,
            _ => return false,
        }
    }
    let maps = || neighbours.iter().flatten().zip(inner);
    for ((row, map), _) in maps().filter(|&(_, k)| k == 2) {
        pull_innermost(map, row, unset, open, out);
    }
    for k in 0..2 {
        let mut moved = maps().filter(|&(_, source)| source == k).map(|(n, _)| n).peekable();
        if moved.peek().is_none() {
            continue;
        }
        let left = crate::ones::ones(open);
        if left == 0 {
            return true;
        }
        if left < TRANSPOSE_FROM {
            for (row, map) in moved {
                crate::coord::pull_entries(map, row, unset, open, out);
            }
            continue;
        }
        let mut swapped = [0u64; MAX_WORDS];
        let swapped = &mut swapped[..open.len()];
        swap_words(open, k, swapped);
        let mut hits = [0u64; MAX_WORDS];
        let hits = &mut hits[..open.len()];
        for (row, map) in moved {
            let mut add = map.add;
            add.swap(k, 2);
            pull_innermost(&Contributions { add }, row, unset, swapped, hits);
        }
        swap_words(hits, k, swapped);
        for ((o, x), h) in open.iter_mut().zip(out.iter_mut()).zip(swapped.iter()) {
            *o ^= h;
            *x |= h;
        }
    }
    true
}

/// Open entries below which the maps that move the innermost block outward test them one at
/// a time instead of transposing the row: of 128, 1,024 and 4,096, the fastest whole edges
/// search (docs/kernels.md, "Edges: pulled by groups").
const TRANSPOSE_FROM: u64 = 1024;

/// [`pull_row`] through a map whose innermost source block stays innermost.
fn pull_innermost(map: &Contributions, target: &[u64], unset: bool, open: &mut [u64], out: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if crate::coord::flips::available() {
        // SAFETY: the processor has the features (checked above).
        unsafe { pull_chunks_avx512(map, target, unset, open, out) };
        return;
    }
    pull_chunks(map, target, unset, open, out);
}

/// Writes into `moved` the row `row` with digit `k` (0 or 1) and the innermost exchanged
/// ([`swap_with_innermost`] on words).
fn swap_words(row: &[u64], k: usize, moved: &mut [u64]) {
    let mut bytes = [0u8; MAX_BYTES];
    let bytes = &mut bytes[..row.len() * 8];
    for (b, w) in bytes.chunks_exact_mut(8).zip(row) {
        b.copy_from_slice(&w.to_le_bytes());
    }
    let mut out = [0u8; MAX_BYTES];
    let out = &mut out[..row.len() * 8];
    swap_with_innermost(bytes, k, out);
    for (w, b) in moved.iter_mut().zip(out.chunks_exact(8)) {
        *w = u64::from_le_bytes(b.try_into().expect("eight bytes"));
    }
}

/// [`pull_innermost`] on any processor: a group's 24 bits through three byte lookups.
fn pull_chunks(map: &Contributions, target: &[u64], unset: bool, open: &mut [u64], out: &mut [u64]) {
    let groups = open.len() * 64 / GROUP;
    let mut back = [0u32; GROUP];
    for (i, &to) in map.add[2].iter().enumerate() {
        back[to as usize] = i as u32;
    }
    let table = ByteTable::new(&back);
    let flip = if unset { GROUP_MASK } else { 0 };
    // Eight groups are three words: most are empty once a few moves have reached their
    // entries (a row stays open while it holds one entry of the next depth), so a chunk of
    // three zero words is passed over whole.
    for chunk in 0..groups / 8 {
        if open[3 * chunk..3 * chunk + 3].iter().all(|&w| w == 0) {
            continue;
        }
        // Group g = 8 chunk + j has digits (g / 24, g % 24): 24 is three chunks.
        let (high, low) = (map.add[0][chunk / 3 % GROUP], &map.add[1][chunk % 3 * 8..][..8]);
        for (j, &add) in low.iter().enumerate() {
            let at = (8 * chunk + j) * GROUP;
            let want = group_bits(open, at);
            if want == 0 {
                continue;
            }
            let there = (group_bits(target, (high + add) as usize) ^ flip).to_le_bytes();
            let hit = table.permute(&there[..3]) & want;
            if hit != 0 {
                xor_group(open, at, hit);
                xor_group(out, at, hit);
            }
        }
    }
}

/// [`pull_innermost`] eight groups (three words) at a time: the eight target groups' words
/// gathered, each lane's 24 bits picked in the source order by three bit shuffles (one per
/// byte of a group) and the three masks interleaved back into three words.
///
/// # Safety
/// The processor must have AVX-512F, BW, VBMI and BITALG ([`crate::coord::flips::available`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg")]
unsafe fn pull_chunks_avx512(
    map: &Contributions,
    target: &[u64],
    unset: bool,
    open: &mut [u64],
    out: &mut [u64],
) {
    use std::arch::x86_64::*;
    // Byte p of a chunk's three words is byte p / 3 of the mask of group byte p % 3.
    const INTERLEAVE: [u8; 64] = {
        let mut t = [0u8; 64];
        let mut p = 0;
        while p < 24 {
            t[p] = (p % 3 * 8 + p / 3) as u8;
            p += 1;
        }
        t
    };
    let picks: [__m512i; 3] = std::array::from_fn(|k| {
        _mm512_set1_epi64(i64::from_le_bytes(std::array::from_fn(|i| map.add[2][8 * k + i] as u8)))
    });
    let lows: [__m256i; 3] = std::array::from_fn(|q| {
        // SAFETY: eight u32 from 8 q of a row of 24.
        unsafe { _mm256_loadu_si256(map.add[1][8 * q..].as_ptr().cast()) }
    });
    // SAFETY: 64 bytes.
    let interleave = unsafe { _mm512_loadu_si512(INTERLEAVE.as_ptr().cast()) };
    let flip = _mm512_set1_epi64(if unset { -1 } else { 0 });
    let last = _mm256_set1_epi32(target.len() as i32 - 1);
    for chunk in 0..open.len() / 3 {
        let words = &mut open[3 * chunk..3 * chunk + 3];
        if words.iter().all(|&w| w == 0) {
            continue;
        }
        // Each group's first bit in the target row, its word and the next (the last group
        // ends with the row: its next word is clamped, and only bits above 24 come from it).
        let bases =
            _mm256_add_epi32(_mm256_set1_epi32(map.add[0][chunk / 3 % GROUP] as i32), lows[chunk % 3]);
        let at = _mm256_srli_epi32::<6>(bases);
        let next = _mm256_min_epi32(_mm256_add_epi32(at, _mm256_set1_epi32(1)), last);
        let shift = _mm512_cvtepu32_epi64(_mm256_and_si256(bases, _mm256_set1_epi32(63)));
        // SAFETY: every index is a word of `target` (bases are columns of the row).
        let (lo, hi) = unsafe {
            (
                _mm512_i32gather_epi64::<8>(at, target.as_ptr().cast()),
                _mm512_i32gather_epi64::<8>(next, target.as_ptr().cast()),
            )
        };
        let up = _mm512_sub_epi64(_mm512_set1_epi64(64), shift);
        let there =
            _mm512_xor_si512(_mm512_or_si512(_mm512_srlv_epi64(lo, shift), _mm512_sllv_epi64(hi, up)), flip);
        let [m0, m1, m2] = picks.map(|p| _mm512_bitshuffle_epi64_mask(there, p) as i64);
        let packed = _mm512_permutexvar_epi8(interleave, _mm512_set_epi64(0, 0, 0, 0, 0, m2, m1, m0));
        let mut reached = [0u64; 8];
        // SAFETY: 64 bytes.
        unsafe { _mm512_storeu_si512(reached.as_mut_ptr().cast(), packed) };
        for (k, w) in words.iter_mut().enumerate() {
            let hit = reached[k] & *w;
            *w ^= hit;
            out[3 * chunk + k] |= hit;
        }
    }
}

/// The bits of a group.
const GROUP_MASK: u32 = (1 << GROUP) - 1;

/// The 24 bits of `row` from bit `at`.
#[inline]
fn group_bits(row: &[u64], at: usize) -> u32 {
    let (w, s) = (at / 64, at % 64);
    let mut v = row[w] >> s;
    if s > 64 - GROUP {
        v |= row[w + 1] << (64 - s);
    }
    v as u32 & GROUP_MASK
}

/// XORs `bits` (24) into `row` from bit `at`: clears them in `open`, where they are set, and
/// sets them in `out`, where they are clear (an entry is reached once).
#[inline]
fn xor_group(row: &mut [u64], at: usize, bits: u32) {
    let (w, s) = (at / 64, at % 64);
    row[w] ^= (bits as u64) << s;
    if s > 64 - GROUP {
        row[w + 1] ^= bits as u64 >> (64 - s);
    }
}

/// A permutation of 24 bits as three tables of 256 entries, one per byte.
struct ByteTable([[u32; 256]; 3]);

impl ByteTable {
    /// The table of `to[i]`, the position bit `i` goes to.
    fn new(to: &[u32; GROUP]) -> Self {
        let mut t = [[0u32; 256]; 3];
        for (k, t) in t.iter_mut().enumerate() {
            for i in 0..8 {
                let bit = 1u32 << to[8 * k + i];
                let n = 1usize << i;
                for b in 0..n {
                    t[n + b] = t[b] | bit;
                }
            }
        }
        ByteTable(t)
    }

    /// The image of the 24 bits held in three bytes, least significant first.
    #[inline]
    fn permute(&self, bits: &[u8]) -> u32 {
        self.0[0][bits[0] as usize] | self.0[1][bits[1] as usize] | self.0[2][bits[2] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coord::for_each_bit;
    use crate::space::blocks::transpose::STRIDE;
    use crate::space::s4;

    /// Every block map of three blocks (block permutation, left and right factors drawn from a
    /// seeded sequence) gives the same images group by group as column by column, on dense,
    /// structured and sparse rows.
    /// A seeded sequence of 31-bit numbers.
    fn sequence(mut seed: u64) -> impl FnMut() -> u32 {
        move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        }
    }

    #[test]
    fn groups_agree_with_single_columns() {
        let mut next = sequence(7);
        // Which source digit feeds each target digit: all orders of three digits, or of the
        // last two for two blocks (digit 0 then stays unused and zero).
        let orders: Vec<(usize, [usize; 3])> =
            [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
                .into_iter()
                .map(|src| (3, src))
                .chain([(2, [0, 1, 2]), (2, [0, 2, 1])])
                .collect();
        for trial in 0..64 {
            let (blocks, src) = orders[trial % orders.len()];
            let words = 24usize.pow(blocks as u32) / 64;
            {
                let mut add = [[0u32; 24]; 3];
                for j in 3 - blocks..3 {
                    let (l, r) = ((next() % 24) as u8, (next() % 24) as u8);
                    for o in 0..24u8 {
                        add[src[j]][o as usize] = s4::mul(s4::mul(l, o), r) as u32 * STRIDE[j] as u32;
                    }
                }
                let map = Contributions { add };
                for density in [1u32, 8, 64, 250] {
                    let row: Vec<u64> = (0..words)
                        .map(|w| {
                            (0..64).fold(0u64, |acc, b| {
                                let keep = if density == 250 {
                                    (w * 64 + b) % 7 < 3
                                } else {
                                    next() % 256 < density
                                };
                                acc | (keep as u64) << b
                            })
                        })
                        .collect();
                    let mut slow = vec![0u64; words];
                    map.for_each_image(&row, |c| set_bit(&mut slow, c));
                    let mut fast = vec![0u64; words];
                    assert!(or_images_by_groups(&map, &row, &mut fast));
                    assert_eq!(fast, slow, "blocks {blocks}, digits from {src:?}, density {density}");
                    let mut chosen = vec![0u64; words];
                    or_images(&map, &row, &mut chosen);
                    assert_eq!(chosen, slow);
                    // The pull: the entries of an open row whose image is set in `row` (or
                    // clear in its complement), against one entry at a time.
                    let wanted: Vec<u64> =
                        (0..words).map(|_| (next() as u64) << 32 | next() as u64).collect();
                    let reached = |c: u32| row[c as usize / 64] >> (c % 64) & 1 == 1;
                    let mut slow = vec![0u64; words];
                    for_each_bit(&wanted, |c| {
                        if reached(map.apply(c)) {
                            set_bit(&mut slow, c)
                        }
                    });
                    let unvisited: Vec<u64> = row.iter().map(|w| !w).collect();
                    for (target, unset) in [(&row, false), (&unvisited, true)] {
                        let (mut open, mut out) = (wanted.clone(), vec![0u64; words]);
                        let neighbours = [Some((&target[..], map))];
                        assert!(pull_row(&neighbours, unset, &mut open, &mut out), "every map pulls");
                        let left: Vec<u64> = wanted.iter().zip(&slow).map(|(w, s)| w & !s).collect();
                        let what = format!("pull: blocks {blocks}, digits from {src:?}, density {density}");
                        assert_eq!((&out, &open), (&slow, &left), "{what}");
                        if src[2] != 2 {
                            continue;
                        }
                        // Both kernels, whichever the processor chose.
                        let (mut open, mut out) = (wanted.clone(), vec![0u64; words]);
                        pull_chunks(&map, target, unset, &mut open, &mut out);
                        assert_eq!((&out, &open), (&slow, &left), "portable {what}");
                        #[cfg(target_arch = "x86_64")]
                        if crate::coord::flips::available() {
                            let (mut open, mut out) = (wanted.clone(), vec![0u64; words]);
                            // SAFETY: the processor has the features (checked above).
                            unsafe { pull_chunks_avx512(&map, target, unset, &mut open, &mut out) };
                            assert_eq!((&out, &open), (&slow, &left), "AVX-512 {what}");
                        }
                    }
                }
            }
        }
    }

    /// A row pulled through many maps at once (maps of every digit order, so some transpose the
    /// row and some do not; open rows sparse enough to be tested one at a time and dense)
    /// equals the pull made one entry at a time.
    #[test]
    fn a_row_pulled_through_many_maps_equals_one_entry_at_a_time() {
        let mut next = sequence(11);
        let words = 24usize.pow(3) / 64;
        let orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        for trial in 0..8 {
            let mut rows: Vec<Vec<u64>> = Vec::new();
            let mut maps = Vec::new();
            for n in 0..12 {
                let src = orders[(n + trial) % orders.len()];
                let mut add = [[0u32; 24]; 3];
                for j in 0..3 {
                    let (l, r) = ((next() % 24) as u8, (next() % 24) as u8);
                    for o in 0..24u8 {
                        add[src[j]][o as usize] = s4::mul(s4::mul(l, o), r) as u32 * STRIDE[j] as u32;
                    }
                }
                maps.push(Contributions { add });
                // Neighbour rows from nearly empty to nearly full.
                let p = [2, 30, 128, 250][n % 4];
                rows.push(
                    (0..words)
                        .map(|_| (0..64).fold(0u64, |a, b| a | ((next() % 256 < p) as u64) << b))
                        .collect(),
                );
            }
            for open_density in [1u32, 20, 128] {
                let wanted: Vec<u64> = (0..words)
                    .map(|_| (0..64).fold(0u64, |a, b| a | ((next() % 256 < open_density) as u64) << b))
                    .collect();
                for unset in [false, true] {
                    let (mut slow_open, mut slow) = (wanted.clone(), vec![0u64; words]);
                    for (row, map) in rows.iter().zip(&maps) {
                        crate::coord::pull_entries(map, row, unset, &mut slow_open, &mut slow);
                    }
                    let neighbours: Vec<Option<(&[u64], Contributions)>> =
                        rows.iter().zip(&maps).map(|(r, m)| Some((&r[..], *m))).collect();
                    let (mut open, mut out) = (wanted.clone(), vec![0u64; words]);
                    // A neighbour row shorter than the row is refused, nothing changed.
                    let short = [Some((&rows[0][..words - 3], maps[0]))];
                    assert!(!pull_row(&short, unset, &mut open, &mut out));
                    assert_eq!((&open, out.iter().all(|&w| w == 0)), (&wanted, true));
                    assert!(pull_row(&neighbours, unset, &mut open, &mut out));
                    assert_eq!(
                        (out, open),
                        (slow, slow_open),
                        "trial {trial}, open {open_density}, unset {unset}"
                    );
                }
            }
        }
    }
}
