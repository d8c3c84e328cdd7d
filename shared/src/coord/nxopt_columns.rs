//! The column maps of nxopt's edge coordinate in factored form, small enough for the L1 and L2
//! caches whatever the table's size, and moved a group of columns at a time.
//!
//! The search numbers a column `(X * 512 + field) * E2 + eo` ([`super::nxopt::search_column`]):
//! X the permutation part, field the E-slice occupancy, eo the flips, innermost. A move or a
//! UD-axis symmetry acts on positions by a fixed permutation, so the image's occupancy depends
//! on the occupancy alone, its permutation part on (X, occupancy), and its flips are the flips
//! permuted by an order that depends on the occupancy alone (EO3's untracked flip is the parity
//! of the others, still linear), XORed with a constant that may depend on (X, occupancy). So
//! with `base[group]` the image of the group's column with no flips (a group is one (X, field))
//! and `linear[field]` the linear part on the flips,
//!
//! `image(group, eo) = base[group] ^ linear[field](eo)`:
//!
//! the E2 columns of a group go to the E2 columns of one group, by one affine map of the flips.
//! Where the linear part is the same for every occupancy (EO3: flips are tracked by position),
//! one table of E2 entries serves every field. Per entry a map is two loads from tables of at
//! most a few hundred KB, where the full move and conjugation tables of EO3EP1 are 4 MB each,
//! read at random; a group of several entries is moved whole with AVX-512 where the processor
//! has it ([`groups`]). Tests check every column of
//! every buildable table against the full tables ([`super::RawCoord`] over positions).
//!
//! The fields that hold no entry stay fields that hold no entry (the same field of another
//! group): the search never reaches them, so where they go does not matter beyond that.

use super::flips::FlipInverse;
use super::nxopt::{edge_coord, edges_of, mid_of, search_column, table_column, NxoptKind, BLOCK};
use super::ColumnMapper;
use crate::cube::{Edges, Move, Symmetry, SymmetryGroup};
use rayon::prelude::*;

/// Fields of an X.
const FIELD_MASK: u32 = BLOCK - 1;

/// One map in factored form (see the module doc).
struct FactoredMap {
    /// Per group (X, field): the image of its column with no flips.
    base: Vec<u32>,
    /// The linear part on the flips: per eo, or per (field, eo) when it depends on the field.
    linear: Vec<u16>,
    per_field: bool,
    inverse: Inverse,
}

/// The inverse of a map's linear part in the form its group kernel reads ([`groups`]); per
/// field, or one when the linear part is uniform.
enum Inverse {
    /// EO1: the inverse's 16 values.
    Eo1(Vec<u8>),
    /// EO2: two GF(2) byte matrices, the inverse's bits 3..8 and 0..3.
    Eo2(Vec<[u64; 2]>),
    /// EO3 (uniform): the linear part's inverse ([`super::flips`]).
    Eo3(FlipInverse),
    /// EO3 with a linear part per field: no kernel, entry by entry.
    None,
}

impl FactoredMap {
    /// Factors the map `f` of search columns, probing it with no flips for every group and at
    /// every single flip for every field of X = 0 (the linear part is the XOR of the images of
    /// the set flips).
    fn probe(kind: NxoptKind, f: impl Fn(u32) -> u32 + Sync) -> FactoredMap {
        let (e2, eo_bits) = (kind.e2(), kind.e2().trailing_zeros());
        let base: Vec<u32> = (0..kind.permutations() * BLOCK)
            .into_par_iter()
            .map(|g| match mid_of(g & FIELD_MASK) {
                Some(_) => f(g << eo_bits),
                None => g << eo_bits,
            })
            .collect();
        // Per field, the image of each single flip (the identity on fields without an entry).
        let unit: Vec<Vec<u16>> = (0..BLOCK)
            .into_par_iter()
            .map(|field| {
                (0..eo_bits)
                    .map(|b| match mid_of(field) {
                        Some(_) => ((f(field << eo_bits | 1 << b) ^ base[field as usize]) & (e2 - 1)) as u16,
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
        let first = (0..BLOCK).find(|&f| mid_of(f).is_some()).expect("an X has fields") as usize;
        let uniform = (0..BLOCK as usize).all(|f| mid_of(f as u32).is_none() || unit[f] == unit[first]);
        let spans: Vec<Vec<u16>> = match uniform {
            true => vec![span(&unit[first])],
            false => unit.iter().map(|u| span(u)).collect(),
        };
        let inverse = match (eo_bits, uniform) {
            (4, _) => Inverse::Eo1(spans.iter().flat_map(|s| groups::inverse(s)).collect()),
            (8, _) => Inverse::Eo2(spans.iter().map(|s| groups::inverse_matrices(s)).collect()),
            (_, true) => Inverse::Eo3(FlipInverse::new(&spans[0])),
            _ => Inverse::None,
        };
        FactoredMap { base, linear: spans.concat(), per_field: !uniform, inverse }
    }

    fn view(&self, eo_bits: u32) -> NxoptMap<'_> {
        NxoptMap {
            base: &self.base,
            linear: &self.linear,
            inverse: &self.inverse,
            eo_bits,
            field_mask: if self.per_field { FIELD_MASK } else { 0 },
        }
    }

    fn bytes(&self) -> usize {
        let inverse = match &self.inverse {
            Inverse::Eo1(bytes) => bytes.len(),
            Inverse::Eo3(_) => 4096,
            Inverse::Eo2(matrices) => matrices.len() * 16,
            Inverse::None => 0,
        };
        self.base.len() * 4 + self.linear.len() * 2 + inverse
    }
}

/// A column map of [`NxoptColumns`]: a move followed by a conjugation, or a conjugation.
#[derive(Clone, Copy)]
pub struct NxoptMap<'a> {
    base: &'a [u32],
    linear: &'a [u16],
    inverse: &'a Inverse,
    eo_bits: u32,
    /// A group's field, masked by this, picks its linear part (0: one for every field).
    field_mask: u32,
}

impl ColumnMapper for NxoptMap<'_> {
    #[inline]
    fn apply(&self, column: u32) -> u32 {
        let group = column >> self.eo_bits;
        let eo = column & ((1 << self.eo_bits) - 1);
        self.base[group as usize] ^ self.linear_of(group)[eo as usize] as u32
    }

    /// Group by group (EO2 and EO3): the group's image with no flips and its linear part are
    /// loaded once, so each entry costs one more load.
    #[inline]
    fn for_each_image(&self, row: &[u64], mut f: impl FnMut(u32)) {
        match self.eo_bits {
            // EO1: four groups of 16 flips a word.
            4 => super::for_each_bit(row, |c| f(self.apply(c))),
            _ => {
                let words = 1 << (self.eo_bits - 6);
                for (g, group) in row.chunks_exact(words).enumerate() {
                    if group.iter().any(|&w| w != 0) {
                        self.group_by_bit(g, group, &mut f);
                    }
                }
            }
        }
    }

    /// With AVX-512 (F, BW, VBMI, BITALG, GFNI), groups go whole to their image groups
    /// ([`groups`]: every EO1 word and EO2 group that holds an entry, EO3 groups of 32 entries
    /// or more); otherwise entry by entry.
    #[inline]
    fn or_images(&self, row: &[u64], out: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        if groups::available() {
            // SAFETY: the processor has the features (just checked).
            match self.inverse {
                Inverse::Eo1(inverses) => {
                    return unsafe { groups::or_images_eo1_avx512(self, inverses, row, out) }
                }
                Inverse::Eo2(matrices) => {
                    return unsafe { groups::or_images_eo2_avx512(self, matrices, row, out) }
                }
                Inverse::Eo3(tables) => {
                    return unsafe { groups::or_images_eo3_avx512(self, tables, row, out) }
                }
                Inverse::None => {}
            }
        }
        self.for_each_image(row, |c| out[c as usize / 64] |= 1 << (c % 64));
    }
}

impl NxoptMap<'_> {
    /// The linear part of group `group`'s field: E2 flips' images.
    #[inline(always)]
    fn linear_of(&self, group: u32) -> &[u16] {
        let e2 = 1usize << self.eo_bits;
        &self.linear[((group & self.field_mask) as usize) << self.eo_bits..][..e2]
    }

    /// The images of group `g`'s set bits (its words, at least one), one at a time.
    #[inline(always)]
    fn group_by_bit(&self, g: usize, group: &[u64], f: &mut impl FnMut(u32)) {
        let (base, linear) = (self.base[g], self.linear_of(g as u32));
        for (k, &word) in group.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                f(base ^ linear[k * 64 + bits.trailing_zeros() as usize] as u32);
                bits &= bits - 1;
            }
        }
    }
}

mod groups;

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
        let on = |e: u32, f: &dyn Fn(&Edges) -> Edges| match edges_of(kind, table_column(kind, e)) {
            Some(edges) => search_column(kind, edge_coord(kind, &f(&edges))),
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
    /// tracked by position) or per (field, eo) (fewer where a map's linear part is uniform),
    /// with the group kernels' inverses (EO1, EO2: 16 bytes a field; EO3: 4 KB).
    pub fn planned_bytes(kind: NxoptKind) -> u64 {
        let base = kind.permutations() as u64 * BLOCK as u64 * 4;
        let linear = kind.e2() as u64 * 2 * if kind.eo == 3 { 1 } else { BLOCK as u64 };
        let inverse = match kind.eo {
            1 | 2 => BLOCK as u64 * 16,
            _ => 4096,
        };
        (Move::COUNT as u64 + 1) * SymmetryGroup::UdAxis.len() as u64 * (base + linear + inverse)
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
        // The full tables map table columns; the factored maps, search columns.
        let on = |map: NxoptMap, c: u32| table_column(kind, map.apply(search_column(kind, c)));
        let bad: u64 = (0..kind.columns())
            .into_par_iter()
            .map(|c| {
                if mid_of(c & FIELD_MASK).is_none() {
                    let unused = |m: NxoptMap| mid_of(on(m, c) & FIELD_MASK).is_none();
                    return Move::all()
                        .flat_map(|m| syms.iter().map(move |&s| (m, s)))
                        .any(|(m, s)| !unused(columns.moved(m, s))) as u64;
                }
                let mut bad = 0;
                for &s in &syms {
                    bad += (on(columns.conjugated(s), c) != full.conjugate(s, c)) as u64;
                    for m in Move::all() {
                        bad += (on(columns.moved(m, s), c) != full.conjugate(s, full.apply(m, c))) as u64;
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
                let column = |x: &Edges| search_column(kind, edge_coord(kind, x));
                let c = column(&x);
                for s in SymmetryGroup::UdAxis.members() {
                    assert_eq!(columns.conjugated(s).apply(c), column(&s.conjugate_edges(&x)));
                    for m in Move::all() {
                        let y = s.conjugate_edges(&x.compose(&m.cube().edges));
                        assert_eq!(columns.moved(m, s).apply(c), column(&y), "{}", kind.name());
                    }
                }
            }
        }
    }

    /// A row's images, by every path this processor has, are the images of its set bits one
    /// by one: groups empty, of one entry, below and at the dense threshold, of words of every
    /// density (empty, one bit, sparse, half, full, the first and last flips), uniform and
    /// per-field linear parts, moves with conjugations and conjugations alone.
    #[test]
    fn images_of_a_row_are_its_bits_images_by_every_path() {
        let mut rng = SplitMix64::new(21);
        let ud: Vec<Symmetry> = SymmetryGroup::UdAxis.members().collect();
        for name in ["EO1EP1", "EO2EP1", "EO2EP2", "EO3EP1"] {
            let kind = NxoptKind::parse(name).unwrap();
            let columns = columns_of(kind);
            let mut word = |i: usize| match i % 7 {
                0 => 0,
                1 => 1 << (rng.next_u64() % 64),
                2 => rng.next_u64() & rng.next_u64() & rng.next_u64(),
                3 => rng.next_u64(),
                4 => u64::MAX,
                5 => 1 | 1 << 63,
                _ => rng.next_u64() | rng.next_u64(),
            };
            // Rows of groups of eight words (the kernels' groups are 1/4, 4 and 32 words).
            let words: Vec<u64> = (0..kind.columns() as usize / 64)
                .map(|w| {
                    let (b, k) = (w / 8, w % 8);
                    match b % 6 {
                        0 => 0,
                        1 => ((k == b / 6 % 8) as u64) << (b % 64),
                        2 => ((k == b % 8) as u64 * 0b101) << (b % 60),
                        3 => ((k == b % 8) as u64 * 0b10011) << (b % 59),
                        _ => word(w),
                    }
                })
                .collect();
            let maps = [(0, 0), (4, 5), (13, 11), (17, 15)]
                .map(|(m, s)| columns.moved(Move::all().nth(m).unwrap(), ud[s]))
                .into_iter()
                .chain([columns.conjugated(ud[7])]);
            for (i, map) in maps.enumerate() {
                let mut expected = vec![0u64; words.len()];
                crate::coord::for_each_bit(&words, |c| {
                    let c = map.apply(c);
                    expected[c as usize / 64] |= 1 << (c % 64)
                });
                let mut by_bit = vec![0u64; words.len()];
                map.for_each_image(&words, |c| by_bit[c as usize / 64] |= 1 << (c % 64));
                assert!(by_bit == expected, "{name} map {i} by bit");
                let mut chosen = vec![0u64; words.len()];
                map.or_images(&words, &mut chosen);
                assert!(chosen == expected, "{name} map {i} chosen");
                #[cfg(target_arch = "x86_64")]
                if groups::available() {
                    let mut whole = vec![0u64; words.len()];
                    // SAFETY: the processor has the path's features (checked just above).
                    match map.inverse {
                        Inverse::Eo1(i) => unsafe {
                            groups::or_images_eo1_avx512(&map, i, &words, &mut whole)
                        },
                        Inverse::Eo2(i) => unsafe {
                            groups::or_images_eo2_avx512(&map, i, &words, &mut whole)
                        },
                        Inverse::Eo3(i) => unsafe {
                            groups::or_images_eo3_avx512(&map, i, &words, &mut whole)
                        },
                        Inverse::None => panic!("{name} map {i}: no group kernel"),
                    }
                    assert!(whole == expected, "{name} map {i} by groups");
                }
            }
        }
    }
}
