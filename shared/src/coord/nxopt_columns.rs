//! The column maps of nxopt's edge coordinate in factored form, small enough for the L1 and L2
//! caches whatever the table's size.
//!
//! A column is `(X * E2 + eo) * 512 + field`: X the permutation part, eo the flips, field the
//! E-slice occupancy. A move or a UD-axis symmetry acts on positions by a fixed permutation, so
//! the image's occupancy depends on the occupancy alone, its permutation part on (X, occupancy),
//! and its flips are the flips permuted by an order that depends on the occupancy alone (EO3's
//! untracked flip is the parity of the others, still linear), XORed with a constant that may
//! depend on (X, occupancy). So with `base[X][field]` the image of `(X, 0, field)` and
//! `linear[field](eo)` the linear part on the flips,
//!
//! `image(X, eo, field) = base[X][field] ^ (linear[field](eo) << 9)`
//!
//! and when the linear part is the same for every occupancy (EO3: flips are tracked by
//! position), one table of E2 entries serves every field. Per entry a map is two loads from
//! tables of at most a few hundred KB, where the full move and conjugation tables of EO3EP1 are
//! 4 MB each, read at random. Tests check every column of every buildable table against the
//! full tables ([`super::RawCoord`] over positions).
//!
//! The fields that hold no entry stay fields that hold no entry (the same field of another
//! block): the search never reaches them, so where they go does not matter beyond that.

use super::nxopt::{edge_coord, edges_of, mid_of, NxoptKind, BLOCK};
use super::ColumnMapper;
use crate::cube::{Edges, Move, Symmetry, SymmetryGroup};
use rayon::prelude::*;

/// Bits of the field in a column.
const FIELD_BITS: u32 = 9;
const FIELD_MASK: u32 = BLOCK - 1;

/// One map in factored form (see the module doc).
struct FactoredMap {
    /// Per (X, field): the image of `(X, eo = 0, field)`.
    base: Vec<u32>,
    /// The linear part on the flips: per eo, or per (eo, field) when it depends on the field.
    linear: Vec<u16>,
    per_field: bool,
}

impl FactoredMap {
    /// Factors the map `f`, probing it at eo = 0 for every (X, field) and at every single flip
    /// for every field (the linear part is the XOR of the images of the set flips).
    fn probe(kind: NxoptKind, f: impl Fn(u32) -> u32 + Sync) -> FactoredMap {
        let (e2, eo_bits) = (kind.e2(), kind.e2().trailing_zeros());
        let column = |x: u32, eo: u32, field: u32| ((x * e2 + eo) << FIELD_BITS) | field;
        let flips_of = |c: u32| (c >> FIELD_BITS) & (e2 - 1);
        let base: Vec<u32> = (0..kind.permutations() * BLOCK)
            .into_par_iter()
            .map(|i| {
                let (x, field) = (i >> FIELD_BITS, i & FIELD_MASK);
                match mid_of(field) {
                    Some(_) => f(column(x, 0, field)),
                    None => column(x, 0, field),
                }
            })
            .collect();
        // Per field, the image of each single flip (the identity on fields without an entry).
        let unit: Vec<Vec<u16>> = (0..BLOCK)
            .into_par_iter()
            .map(|field| {
                (0..eo_bits)
                    .map(|b| match mid_of(field) {
                        Some(_) => {
                            (flips_of(f(column(0, 1 << b, field))) ^ flips_of(base[field as usize])) as u16
                        }
                        None => 1 << b,
                    })
                    .collect()
            })
            .collect();
        let span = |units: &[u16]| -> Vec<u16> {
            let mut out = vec![0u16; e2 as usize];
            for eo in 1..e2 as usize {
                let low = eo.trailing_zeros() as usize;
                out[eo] = out[eo & (eo - 1)] ^ units[low];
            }
            out
        };
        let first = (0..BLOCK).find(|&f| mid_of(f).is_some()).expect("a block has fields") as usize;
        let uniform = (0..BLOCK as usize).all(|f| mid_of(f as u32).is_none() || unit[f] == unit[first]);
        if uniform {
            return FactoredMap { base, linear: span(&unit[first]), per_field: false };
        }
        let spans: Vec<Vec<u16>> = unit.iter().map(|u| span(u)).collect();
        let linear = (0..e2 as usize).flat_map(|eo| spans.iter().map(move |s| s[eo])).collect();
        FactoredMap { base, linear, per_field: true }
    }

    fn view(&self, eo_bits: u32) -> NxoptMap<'_> {
        NxoptMap {
            base: &self.base,
            linear: &self.linear,
            eo_bits,
            linear_shift: if self.per_field { FIELD_BITS } else { 0 },
            linear_field: if self.per_field { FIELD_MASK } else { 0 },
        }
    }

    fn bytes(&self) -> usize {
        self.base.len() * 4 + self.linear.len() * 2
    }
}

/// A column map of [`NxoptColumns`]: a move followed by a conjugation, or a conjugation.
#[derive(Clone, Copy)]
pub struct NxoptMap<'a> {
    base: &'a [u32],
    linear: &'a [u16],
    eo_bits: u32,
    /// `linear` is indexed by `(eo << linear_shift) | (field & linear_field)`.
    linear_shift: u32,
    linear_field: u32,
}

impl ColumnMapper for NxoptMap<'_> {
    #[inline]
    fn apply(&self, column: u32) -> u32 {
        let field = column & FIELD_MASK;
        let block = column >> FIELD_BITS;
        let eo = block & ((1 << self.eo_bits) - 1);
        let x = block >> self.eo_bits;
        let flips = self.linear[((eo << self.linear_shift) | (field & self.linear_field)) as usize] as u32;
        self.base[((x << FIELD_BITS) | field) as usize] ^ (flips << FIELD_BITS)
    }

    /// Block by block (512 fields, eight words): X and the flips are fixed within a block, so
    /// each entry costs one load from the block's row of `base` (and one from its row of
    /// `linear` where the linear part depends on the field). With AVX-512's byte compress the
    /// fields of a block of 8 or more set bits are listed without a branch per word and then
    /// mapped in one loop (see [`listing`]); other blocks and processors go bit by bit.
    #[inline]
    fn for_each_image(&self, row: &[u64], f: impl FnMut(u32)) {
        #[cfg(target_arch = "x86_64")]
        if listing::available() {
            // SAFETY: the processor has the features (just checked).
            return unsafe { listing::images_avx512(self, row, f) };
        }
        self.images_by_bit(row, f)
    }
}

impl NxoptMap<'_> {
    /// [`ColumnMapper::for_each_image`] one set bit at a time.
    #[inline(always)]
    fn images_by_bit(&self, row: &[u64], mut f: impl FnMut(u32)) {
        for (b, block) in row.chunks_exact(BLOCK as usize / 64).enumerate() {
            if block.iter().any(|&w| w != 0) {
                self.block_by_bit(b, block, &mut f);
            }
        }
    }

    /// The images of block `b`'s set bits, one at a time.
    #[inline(always)]
    fn block_by_bit(&self, b: usize, block: &[u64], f: &mut impl FnMut(u32)) {
        let (base, flips) = self.block_rows(b);
        match flips {
            Flips::Uniform(flips) => images(block, f, |field| base[field & FIELD_MASK as usize] ^ flips),
            Flips::PerField(linear) => images(block, f, |field| {
                let field = field & FIELD_MASK as usize;
                base[field] ^ ((linear[field] as u32) << FIELD_BITS)
            }),
        }
    }

    /// Block `b`'s row of `base` and its flips.
    #[inline(always)]
    fn block_rows(&self, b: usize) -> (&[u32; BLOCK as usize], Flips<'_>) {
        let (eo, x) = (b & ((1usize << self.eo_bits) - 1), b >> self.eo_bits);
        let base = self.base[x << FIELD_BITS..][..BLOCK as usize].try_into().expect("a block");
        let flips = match self.linear_field {
            0 => Flips::Uniform((self.linear[eo] as u32) << FIELD_BITS),
            _ => Flips::PerField(
                self.linear[eo << FIELD_BITS..][..BLOCK as usize].try_into().expect("a block"),
            ),
        };
        (base, flips)
    }
}

/// The flips of a block's images: the same for every field (shifted into place), or per field.
enum Flips<'a> {
    Uniform(u32),
    PerField(&'a [u16; BLOCK as usize]),
}

/// Calls `f` with `image(field)` for every set field of a block.
#[inline(always)]
fn images(block: &[u64], f: &mut impl FnMut(u32), image: impl Fn(usize) -> u32) {
    for (k, &word) in block.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            f(image(k * 64 + bits.trailing_zeros() as usize));
            bits &= bits - 1;
        }
    }
}

/// Listing a block's set fields with AVX-512 (VBMI2's byte compress), chosen at run time.
mod listing {
    use super::{Flips, NxoptMap, BLOCK, FIELD_BITS};

    /// Whether this processor has what [`images_avx512`] needs (the standard library keeps what
    /// the processor reported, so asking costs a few loads).
    #[cfg(target_arch = "x86_64")]
    pub fn available() -> bool {
        use std::arch::is_x86_feature_detected as has;
        has!("avx512f")
            && has!("avx512bw")
            && has!("avx512vbmi2")
            && has!("avx512vpopcntdq")
            && has!("popcnt")
    }

    /// Blocks with fewer set bits go bit by bit: listing costs eight compresses a block, more
    /// than a sparse level's one or two bits cost one at a time (nxopt EO2EP2's depth 9 took
    /// twice as long with every block listed).
    const LIST_FROM: i64 = 8;

    /// # Safety
    /// The processor must have AVX-512F, BW, VBMI2, VPOPCNTDQ and POPCNT.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,avx512vpopcntdq,popcnt")]
    pub unsafe fn images_avx512(map: &NxoptMap<'_>, row: &[u64], mut f: impl FnMut(u32)) {
        use std::arch::x86_64::*;
        const WORDS: usize = (BLOCK / 64) as usize;
        let iota: [u8; 64] = std::array::from_fn(|i| i as u8);
        // SAFETY: 64 bytes read from a 64-byte array.
        let iota = unsafe { _mm512_loadu_si512(iota.as_ptr() as *const _) };
        // Per half of a block (256 fields), the fields as bytes, with room for one more word.
        let mut listed = [[0u8; 256 + 64]; 2];
        for (b, block) in row.chunks_exact(WORDS).enumerate() {
            if block.iter().all(|&w| w == 0) {
                continue;
            }
            // SAFETY: eight words read from a block of eight.
            let ones = _mm512_reduce_add_epi64(_mm512_popcnt_epi64(unsafe {
                _mm512_loadu_si512(block.as_ptr() as *const _)
            }));
            if ones < LIST_FROM {
                map.block_by_bit(b, block, &mut f);
                continue;
            }
            let mut counts = [0usize; 2];
            for (k, &word) in block.iter().enumerate() {
                let (half, n) = (k / 4, counts[k / 4]);
                let fields = _mm512_add_epi8(iota, _mm512_set1_epi8(((k % 4) * 64) as u8 as i8));
                let packed = _mm512_maskz_compress_epi8(word, fields);
                // SAFETY: n <= 192 before the fourth word of a half, so 64 bytes fit.
                unsafe { _mm512_storeu_si512(listed[half][n..][..64].as_mut_ptr() as *mut _, packed) };
                counts[half] = n + word.count_ones() as usize;
            }
            let (base, flips) = map.block_rows(b);
            for (half, &n) in counts.iter().enumerate() {
                let fields = listed[half][..n].iter().map(|&field| half * 256 + field as usize);
                match flips {
                    Flips::Uniform(flips) => fields.for_each(|field| f(base[field] ^ flips)),
                    Flips::PerField(linear) => {
                        fields.for_each(|field| f(base[field] ^ ((linear[field] as u32) << FIELD_BITS)))
                    }
                }
            }
        }
    }
}

/// nxopt's edge coordinate of one table, with every (move, UD-axis symmetry) map factored.
pub struct NxoptColumns {
    kind: NxoptKind,
    /// `moved[m * 16 + s]`: move m, then conjugation by s.
    moved: Vec<FactoredMap>,
    conjugated: Vec<FactoredMap>,
}

impl NxoptColumns {
    pub fn new(kind: NxoptKind) -> Self {
        // The 18 moves and 16 symmetries from positions, then their compositions from those.
        let on = |e: u32, f: &dyn Fn(&Edges) -> Edges| match edges_of(kind, e) {
            Some(edges) => edge_coord(kind, &f(&edges)),
            None => e,
        };
        let moves: Vec<FactoredMap> = Move::all()
            .map(|m| FactoredMap::probe(kind, |e| on(e, &|x| x.compose(&m.cube().edges))))
            .collect();
        let conjugated: Vec<FactoredMap> = SymmetryGroup::UdAxis
            .members()
            .map(|s| FactoredMap::probe(kind, |e| on(e, &|x| s.conjugate_edges(x))))
            .collect();
        let eo_bits = kind.e2().trailing_zeros();
        let moved = moves
            .iter()
            .flat_map(|m| {
                let m = m.view(eo_bits);
                conjugated.iter().map(move |s| {
                    let s = s.view(eo_bits);
                    FactoredMap::probe(kind, |e| s.apply(m.apply(e)))
                })
            })
            .collect();
        NxoptColumns { kind, moved, conjugated }
    }

    pub fn size(&self) -> u32 {
        self.kind.columns()
    }

    /// Column c to `conj(s, move(m, c))`; `s` is one of the 16 UD-axis symmetries.
    pub fn moved(&self, m: Move, s: Symmetry) -> NxoptMap<'_> {
        self.moved[m.index() * SymmetryGroup::UdAxis.len() + s.index()].view(self.eo_bits())
    }

    /// Column c to `conj(s, c)`.
    pub fn conjugated(&self, s: Symmetry) -> NxoptMap<'_> {
        self.conjugated[s.index()].view(self.eo_bits())
    }

    /// Bytes of the factored maps.
    pub fn memory_bytes(&self) -> usize {
        self.moved.iter().chain(&self.conjugated).map(FactoredMap::bytes).sum()
    }

    /// Bytes [`Self::new`] will hold for `kind` at most, before building: 18 x 16 + 16 maps,
    /// each a `base` of 4 bytes per (X, field) and a linear part per eo (EO3, whose flips are
    /// tracked by position) or per (eo, field) (fewer where a map's linear part is uniform).
    pub fn planned_bytes(kind: NxoptKind) -> u64 {
        let base = kind.permutations() as u64 * BLOCK as u64 * 4;
        let linear = kind.e2() as u64 * 2 * if kind.eo == 3 { 1 } else { BLOCK as u64 };
        (Move::COUNT as u64 + 1) * SymmetryGroup::UdAxis.len() as u64 * (base + linear)
    }

    fn eo_bits(&self) -> u32 {
        self.kind.e2().trailing_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coord::nxopt::{edge_coord, edges_of};
    use crate::coord::RawCoord;
    use crate::cube::{random_cube, SplitMix64};

    /// The factored maps of `kind`, made once for all the tests here (a test asking for a kind
    /// another is making waits for it rather than making it again).
    fn columns_of(kind: NxoptKind) -> &'static NxoptColumns {
        type Made = Vec<(NxoptKind, &'static NxoptColumns)>;
        static MADE: std::sync::Mutex<Made> = std::sync::Mutex::new(Vec::new());
        let mut made = MADE.lock().unwrap();
        if let Some(&(_, columns)) = made.iter().find(|(k, _)| *k == kind) {
            return columns;
        }
        let columns: &'static NxoptColumns = Box::leak(Box::new(NxoptColumns::new(kind)));
        made.push((kind, columns));
        columns
    }

    /// The full tables over positions (the reference the factored maps replace).
    fn full_tables(kind: NxoptKind) -> RawCoord {
        let on = |e: u32, f: &dyn Fn(&Edges) -> Edges| match edges_of(kind, e) {
            Some(edges) => edge_coord(kind, &f(&edges)),
            None => e,
        };
        RawCoord::build(
            kind.columns(),
            SymmetryGroup::UdAxis,
            |m, e| on(e, &|x| x.compose(&m.cube().edges)),
            |s, e| on(e, &|x| s.conjugate_edges(x)),
        )
    }

    /// Every column with an entry, every (move, symmetry) and every symmetry: the factored map
    /// equals the full tables'; fields without an entry go to fields without an entry.
    fn check_every_column(kind: NxoptKind) {
        let columns = columns_of(kind);
        let full = full_tables(kind);
        let syms: Vec<Symmetry> = SymmetryGroup::UdAxis.members().collect();
        let bad: u64 = (0..kind.columns())
            .into_par_iter()
            .map(|c| {
                if mid_of(c & FIELD_MASK).is_none() {
                    let unused = |m: NxoptMap| mid_of(m.apply(c) & FIELD_MASK).is_none();
                    return Move::all()
                        .flat_map(|m| syms.iter().map(move |&s| (m, s)))
                        .any(|(m, s)| !unused(columns.moved(m, s))) as u64;
                }
                let mut bad = 0;
                for &s in &syms {
                    bad += (columns.conjugated(s).apply(c) != full.conjugate(s, c)) as u64;
                    for m in Move::all() {
                        bad += (columns.moved(m, s).apply(c) != full.conjugate(s, full.apply(m, c))) as u64;
                    }
                }
                bad
            })
            .sum();
        assert_eq!(bad, 0, "{}: {bad} columns differ", kind.name());
        assert!(columns.memory_bytes() as u64 <= NxoptColumns::planned_bytes(kind));
    }

    #[test]
    fn factored_maps_equal_the_full_tables_eo1_eo2() {
        for name in ["EO1EP1", "EO2EP1", "EO1EP2"] {
            check_every_column(NxoptKind::parse(name).unwrap());
        }
    }

    /// The largest choices of EO and of EP on every column; in CI the smaller three are
    /// checked on every column and every choice on random positions (below).
    #[test]
    #[ignore = "full tier (scripts/test-full.sh): 12 s of CPU"]
    fn factored_maps_equal_the_full_tables_eo3ep1_and_eo1ep3() {
        for name in ["EO3EP1", "EO1EP3"] {
            check_every_column(NxoptKind::parse(name).unwrap());
        }
    }

    /// Every table whose maps fit a test (all but EP4): random positions, moved and conjugated.
    #[test]
    fn factored_maps_follow_positions() {
        let mut rng = SplitMix64::new(11);
        for kind in NxoptKind::all().into_iter().filter(|k| k.ep < 4) {
            let columns = columns_of(kind);
            for _ in 0..300 {
                let x = random_cube(&mut rng).edges;
                let c = edge_coord(kind, &x);
                for s in SymmetryGroup::UdAxis.members() {
                    assert_eq!(columns.conjugated(s).apply(c), edge_coord(kind, &s.conjugate_edges(&x)));
                    for m in Move::all() {
                        let y = s.conjugate_edges(&x.compose(&m.cube().edges));
                        assert_eq!(columns.moved(m, s).apply(c), edge_coord(kind, &y), "{}", kind.name());
                    }
                }
            }
        }
    }

    /// A row's images, by every listing path this processor has, are the images of its set
    /// bits one by one, in order: rows of every density (empty, single, sparse, dense and full
    /// words, the blocks' first and last fields), uniform and per-field linear parts.
    #[test]
    fn images_of_a_row_are_its_bits_images_by_every_path() {
        let mut rng = SplitMix64::new(21);
        let ud: Vec<Symmetry> = SymmetryGroup::UdAxis.members().collect();
        for name in ["EO1EP1", "EO2EP1", "EO3EP1"] {
            let kind = NxoptKind::parse(name).unwrap();
            let columns = columns_of(kind);
            // Blocks empty, of one bit, sparse (listed bit by bit) and of words of every
            // density (empty, one bit, sparse, half, full, the first and last fields).
            let mut word = |i: usize| match i % 7 {
                0 => 0,
                1 => 1 << (rng.next_u64() % 64),
                2 => rng.next_u64() & rng.next_u64() & rng.next_u64(),
                3 => rng.next_u64(),
                4 => u64::MAX,
                5 => 1 | 1 << 63,
                _ => rng.next_u64() | rng.next_u64(),
            };
            let mut words = Vec::new();
            for b in 0..kind.columns() as usize / BLOCK as usize {
                let mut block = [0u64; 8];
                match b % 4 {
                    0 => {}
                    1 => block[b / 4 % 8] = 1 << (b % 64),
                    2 => (0..5).for_each(|k| block[(b + 3 * k) % 8] |= 1 << ((b * 7 + k * 13) % 64)),
                    _ => block.iter_mut().enumerate().for_each(|(k, w)| *w = word(b + k)),
                }
                words.extend(block);
            }
            for (m, s) in [(0, 0), (4, 5), (13, 11), (17, 15)] {
                let map = columns.moved(Move::all().nth(m).unwrap(), ud[s]);
                let mut expected = Vec::new();
                crate::coord::for_each_bit(&words, |c| expected.push(map.apply(c)));
                let mut by_bit = Vec::new();
                map.images_by_bit(&words, |c| by_bit.push(c));
                assert_eq!(by_bit, expected, "{name} by bit");
                #[cfg(target_arch = "x86_64")]
                if listing::available() {
                    let mut listed = Vec::new();
                    // SAFETY: the processor has the path's features (checked just above).
                    unsafe { listing::images_avx512(&map, &words, |c| listed.push(c)) };
                    assert_eq!(listed, expected, "{name} listed");
                }
            }
        }
    }
}
