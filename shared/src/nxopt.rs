//! Rokicki's nxopt pruning tables: the file `nxopth<x><y>b.dat` of table EOx EPy exactly as
//! nxopt writes it (`docs/rokicki-tables.md`): a 4-byte header "NXH" and the
//! base, then 9930 rows of 2-bit fields, 16-byte groups whose first byte's low nibble holds the
//! group's minimum distance.
//!
//! The distances come from the row BFS of [`crate::space::nxopt_space`], whose rows are the
//! table's and whose columns are the table's with the flips innermost, run to depth base + 2: a
//! level's bits are written as the table's values as the level finishes ([`LevelWriter`],
//! transposing them back to the table's order), so the table needs no per-entry depth array.

use crate::coord::nxopt::{corner_coord, edge_coord, mid_of, NxoptKind, BLOCK, GROUP, ROWS};
use crate::report::Findings;
use rayon::prelude::*;

/// Bytes before the table.
pub const HEADER_BYTES: usize = 4;
/// The group-minimum nibble of a group whose entries are all deeper than base + 2.
pub const NO_MINIMUM: u8 = 15;
/// The value of an entry at least base + 3 away, and of every unused field.
pub const FAR: u8 = 3;

/// nxopt's header: "NXH" (half-turn metric) and the base.
pub fn header(kind: NxoptKind) -> [u8; HEADER_BYTES] {
    [b'N', b'X', b'H', kind.base()]
}

/// The table a file of this length and header holds, if any.
pub fn kind_of_file(head: &[u8], len: u64) -> Option<NxoptKind> {
    NxoptKind::all().into_iter().find(|k| {
        len == HEADER_BYTES as u64 + k.table_bytes() && head.len() >= HEADER_BYTES && head[..4] == header(*k)
    })
}

/// The 2-bit value of distance `d`: 0 up to the base, then 1, 2, and 3 from base + 3 on.
pub fn value_of(kind: NxoptKind, d: u8) -> u8 {
    d.saturating_sub(kind.base()).min(FAR)
}

/// The 2-bit field `column` of a row's bytes.
#[inline]
pub fn field(row: &[u8], column: u32) -> u8 {
    row[column as usize / 4] >> (2 * (column % 4)) & 3
}

/// The minimum nibble of group `g` of a row's bytes.
#[inline]
pub fn group_minimum(row: &[u8], g: u32) -> u8 {
    row[(g * GROUP / 4) as usize] & 15
}

/// Writes levels into a table (rows of `kind.row_bytes()` bytes, initially all ones).
pub struct LevelWriter<'a> {
    kind: NxoptKind,
    table: &'a mut [u8],
    /// Entries at each distance written so far.
    pub depth_counts: Vec<u64>,
}

impl<'a> LevelWriter<'a> {
    /// A writer into `table` (a new one, or one a killed build left, which is resumed).
    pub fn new(kind: NxoptKind, table: &'a mut [u8]) -> Self {
        assert_eq!(table.len() as u64, kind.table_bytes());
        LevelWriter { kind, table, depth_counts: Vec::new() }
    }

    /// Takes the level at distance `depth` with its `entries`: its bits (one per field, rows of
    /// whole 64-bit words) become the table's values, or, with no bits (a level a resumed search
    /// restored, already in the table), just its count. Depth 0 first sets every field to 3 and
    /// every group minimum to 15. Levels come in increasing depth (a resumed search may repeat
    /// its last one: writing it again changes nothing), so the first level to reach a group sets
    /// its minimum.
    pub fn record(&mut self, depth: u8, entries: u64, bits: &[u64]) {
        self.depth_counts.resize(self.depth_counts.len().max(depth as usize + 1), 0);
        self.depth_counts[depth as usize] = entries;
        if bits.is_empty() {
            return;
        }
        if depth == 0 {
            self.table.par_chunks_mut(1 << 20).for_each(|c| c.fill(0xff));
        }
        let kind = self.kind;
        let words = (kind.columns() as usize).div_ceil(64);
        let value = value_of(kind, depth) as u128;
        // One 64-field word of level bits in the table's order is one group: 16 bytes.
        self.table.par_chunks_mut(kind.row_bytes() as usize).zip(bits.par_chunks(words)).for_each(
            |(row, bits)| {
                table_words(kind, bits, |w, word| {
                    let group = &mut row[w * 16..][..16];
                    let mut g = u128::from_le_bytes(group.try_into().expect("16 bytes"));
                    let fields = spread(word);
                    g = (g & !(fields * 3)) | (fields * value);
                    if g & 15 == NO_MINIMUM as u128 {
                        g = g & !15 | depth as u128;
                    }
                    group.copy_from_slice(&g.to_le_bytes());
                })
            },
        );
    }
}

/// Calls `f(w, word)` for every word `w` of a row's bits in the table's order (64 fields of one
/// (X, eo)) that holds a set bit, from the row's bits in the search's order (the E2 flips of
/// each (X, field) innermost): per X, tiles of 64 fields x 64 flips (16 for EO1) transposed.
fn table_words(kind: NxoptKind, bits: &[u64], mut f: impl FnMut(usize, u64)) {
    let e2 = kind.e2() as usize;
    let fields = BLOCK as usize;
    let mut tile = [0u64; 64];
    // 64 groups (fields first..first + 64 of one X) of E2 bits are E2 words.
    let span = e2;
    for x in 0..kind.permutations() as usize {
        for first in (0..fields).step_by(64) {
            let start = (x * fields + first) * e2 / 64;
            if bits[start..start + span].iter().all(|&w| w == 0) {
                continue;
            }
            // Flips 64c..64c + 64 of fields first..first + 64 (all 16 flips for EO1).
            for c in 0..e2.div_ceil(64) {
                let mut any = 0;
                for (i, t) in tile.iter_mut().enumerate() {
                    let group = x * fields + first + i;
                    *t = match e2 {
                        16 => bits[group / 4] >> (group % 4 * 16) & 0xffff,
                        _ => bits[group * e2 / 64 + c],
                    };
                    any |= *t;
                }
                if any == 0 {
                    continue;
                }
                transpose(&mut tile);
                for (e, &word) in tile.iter().enumerate().take(e2.min(64)) {
                    if word != 0 {
                        f(((x * e2 + c * 64 + e) * fields + first) / 64, word);
                    }
                }
            }
        }
    }
}

/// Transposes a 64 x 64 bit matrix: bit j of word i goes to bit i of word j. With AVX-512
/// (VBMI, GFNI) in 64 vector instructions ([`transpose_avx512`]), else by 192 swaps of
/// bit blocks.
#[inline]
fn transpose(m: &mut [u64; 64]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx512f") && has!("avx512bw") && has!("avx512vbmi") && has!("gfni") {
            // SAFETY: the processor has the features (just checked).
            return unsafe { transpose_avx512(m) };
        }
    }
    transpose_by_blocks(m)
}

/// [`transpose`] in eight registers: each register's 8 x 8 blocks of bytes transposed (a byte
/// permutation), each block's bits transposed (one affine byte transform with the block as its
/// matrix), the blocks moved across registers (three rounds of word shuffles) and each
/// register's bytes transposed again.
///
/// # Safety
/// The processor must have AVX-512F, BW, VBMI and GFNI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
unsafe fn transpose_avx512(m: &mut [u64; 64]) {
    use std::arch::x86_64::*;
    // Position J * 8 + 7 - r takes byte J of word r: a block's rows in reverse, so that the
    // affine transform's row order (its byte 7 - i gives output bit i) puts row i at bit i.
    let rows: [u8; 64] = std::array::from_fn(|t| ((7 - t % 8) * 8 + t / 8) as u8);
    let bytes: [u8; 64] = std::array::from_fn(|t| (t % 8 * 8 + t / 8) as u8);
    // SAFETY: 64 bytes read from each 64-byte array, 8 words from each eighth of `m`.
    let (rows, bytes) = unsafe {
        (_mm512_loadu_si512(rows.as_ptr() as *const _), _mm512_loadu_si512(bytes.as_ptr() as *const _))
    };
    let units = _mm512_set1_epi64(0x8040_2010_0804_0201_u64 as i64);
    // w[I]'s word J: the block of rows 8I.., columns 8J.., transposed (byte c: column 8J + c).
    let w: [__m512i; 8] = std::array::from_fn(|i| {
        // SAFETY: eight words at 8i < 64.
        let z = unsafe { _mm512_loadu_si512(m.as_ptr().add(8 * i) as *const _) };
        _mm512_gf2p8affine_epi64_epi8::<0>(units, _mm512_permutexvar_epi8(rows, z))
    });
    // p[J]'s word I = w[I]'s word J.
    let t: [__m512i; 8] = std::array::from_fn(|i| match i % 2 {
        0 => _mm512_unpacklo_epi64(w[i], w[i + 1]),
        _ => _mm512_unpackhi_epi64(w[i - 1], w[i]),
    });
    let (lo2, hi2) =
        (_mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13), _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15));
    let u: [__m512i; 8] = std::array::from_fn(|i| match i % 4 {
        0 | 1 => _mm512_permutex2var_epi64(t[i], lo2, t[i + 2]),
        _ => _mm512_permutex2var_epi64(t[i - 2], hi2, t[i]),
    });
    let (lo4, hi4) =
        (_mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11), _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15));
    for j in 0..8 {
        let p = match j < 4 {
            true => _mm512_permutex2var_epi64(u[j], lo4, u[j + 4]),
            false => _mm512_permutex2var_epi64(u[j - 4], hi4, u[j]),
        };
        // SAFETY: eight words at 8j < 64.
        unsafe {
            _mm512_storeu_si512(m.as_mut_ptr().add(8 * j) as *mut _, _mm512_permutexvar_epi8(bytes, p))
        };
    }
}

/// [`transpose`] by swapping the off-diagonal blocks of 32, 16, ..., 1 bits.
fn transpose_by_blocks(m: &mut [u64; 64]) {
    let mut width = 32;
    let mut mask: u64 = 0x0000_0000_ffff_ffff;
    while width != 0 {
        // Swap the upper-right and lower-left blocks of every 2w x 2w block.
        let mut i = 0;
        while i < 64 {
            for k in i..i + width {
                let t = ((m[k] >> width) ^ m[k + width]) & mask;
                m[k] ^= t << width;
                m[k + width] ^= t;
            }
            i += 2 * width;
        }
        width /= 2;
        mask ^= mask << width;
    }
}

/// Bit k of `word` to bit 2k of the result: a field mask of 2-bit fields.
#[inline]
fn spread(word: u64) -> u128 {
    fn half(x: u64) -> u64 {
        let x = (x | x << 16) & 0x0000_ffff_0000_ffff;
        let x = (x | x << 8) & 0x00ff_00ff_00ff_00ff;
        let x = (x | x << 4) & 0x0f0f_0f0f_0f0f_0f0f;
        let x = (x | x << 2) & 0x3333_3333_3333_3333;
        (x | x << 1) & 0x5555_5555_5555_5555
    }
    half(word & 0xffff_ffff) as u128 | (half(word >> 32) as u128) << 64
}

/// What a table holds, counted from its bytes.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Entries (fields that stand for a coset) holding each 2-bit value.
    pub value_counts: [u64; 4],
    /// Groups per minimum nibble (15: every entry beyond base + 2).
    pub minimum_counts: [u64; 16],
    /// Unused fields that do not hold 3.
    pub bad_unused: u64,
    /// Groups whose minimum disagrees with their entries' values.
    pub bad_minima: u64,
}

/// Counts a table's values and group minima, and checks the two against each other: a group's
/// minimum m <= base + 2 needs an entry of value `value_of(m)` and none below; 15 needs every
/// entry to be 3.
pub fn summarize(kind: NxoptKind, table: &[u8]) -> Summary {
    let valid: Vec<bool> = (0..BLOCK).map(|f| mid_of(f).is_some()).collect();
    table
        .par_chunks(kind.row_bytes() as usize)
        .map(|row| {
            let mut s =
                Summary { value_counts: [0; 4], minimum_counts: [0; 16], bad_unused: 0, bad_minima: 0 };
            for g in 0..kind.columns() / GROUP {
                let minimum = group_minimum(row, g);
                s.minimum_counts[minimum as usize] += 1;
                let mut lowest = FAR + 1;
                for c in g * GROUP..(g + 1) * GROUP {
                    let v = field(row, c);
                    if valid[(c % BLOCK) as usize] {
                        s.value_counts[v as usize] += 1;
                        lowest = lowest.min(v);
                    } else if c % GROUP >= 2 && v != FAR {
                        s.bad_unused += 1;
                    }
                }
                let consistent = if minimum == NO_MINIMUM {
                    lowest == FAR
                } else {
                    minimum <= kind.base() + 2 && lowest == value_of(kind, minimum)
                };
                s.bad_minima += !consistent as u64;
            }
            s
        })
        .reduce(
            || Summary { value_counts: [0; 4], minimum_counts: [0; 16], bad_unused: 0, bad_minima: 0 },
            |mut a, b| {
                (0..4).for_each(|i| a.value_counts[i] += b.value_counts[i]);
                (0..16).for_each(|i| a.minimum_counts[i] += b.minimum_counts[i]);
                a.bad_unused += b.bad_unused;
                a.bad_minima += b.bad_minima;
                a
            },
        )
}

/// The table row of every corner coordinate value, and a symmetry-free description of it: the
/// rows are the values that no UD-axis conjugate undercuts, in increasing order.
pub fn canonical_rows(conjugates: impl Fn(u32) -> Vec<u32> + Sync) -> Vec<u32> {
    let canonical: Vec<u32> = (0..crate::coord::nxopt::CORNER_VALUES)
        .into_par_iter()
        .filter(|&c| conjugates(c).into_iter().all(|d| d >= c))
        .collect();
    assert_eq!(canonical.len(), ROWS as usize);
    canonical
}

/// Where the position `x` is stored: every (row, column) of the table that stands for it (more
/// than one in a self-symmetric row). `rows` are [`canonical_rows`].
pub fn entries_of(kind: NxoptKind, rows: &[u32], x: &crate::cube::Cube) -> Vec<(u32, u32)> {
    use crate::cube::SymmetryGroup;
    let conj: Vec<(u32, u32)> = SymmetryGroup::UdAxis
        .members()
        .map(|s| {
            let y = s.conjugate(x);
            (corner_coord(&y.corners), edge_coord(kind, &y.edges))
        })
        .collect();
    let least = conj.iter().map(|c| c.0).min().expect("16 conjugates");
    let row = rows.binary_search(&least).expect("the least conjugate is a row") as u32;
    let mut out: Vec<(u32, u32)> = conj.iter().filter(|c| c.0 == least).map(|c| (row, c.1)).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Exact distances of cosets, sharing nothing with the row BFS but the coordinates: IDA* over
/// the raw (corner, edge) coordinate pair with move tables built from positions, bounded below by
/// the distance of each coordinate alone (plain BFS over its values), with no symmetry.
pub struct CosetSearch {
    kind: NxoptKind,
    corner_moves: Vec<u32>,
    edge_moves: Vec<u32>,
    corner_depth: Vec<u8>,
    edge_depth: Vec<u8>,
}

impl CosetSearch {
    pub fn new(kind: NxoptKind) -> Self {
        use crate::coord::nxopt::{corners_of, edges_of, CORNER_VALUES};
        use crate::cube::{Cube, Move};
        let corner_moves: Vec<u32> = (0..CORNER_VALUES)
            .into_par_iter()
            .flat_map_iter(|c| {
                let x = Cube { corners: corners_of(c), ..Cube::SOLVED };
                Move::all().map(move |m| corner_coord(&x.compose(m.cube()).corners))
            })
            .collect();
        let edge_moves: Vec<u32> = (0..kind.columns())
            .into_par_iter()
            .flat_map_iter(|e| {
                let x = edges_of(kind, e).map(|edges| Cube { edges, ..Cube::SOLVED });
                Move::all().map(move |m| x.map_or(e, |x| edge_coord(kind, &x.compose(m.cube()).edges)))
            })
            .collect();
        let depth = |table: &[u32], start: u32| {
            let mut d = vec![u8::MAX; table.len() / 18];
            d[start as usize] = 0;
            let mut frontier = vec![start];
            let mut level = 0;
            while !frontier.is_empty() {
                level += 1;
                let mut next = Vec::new();
                for v in frontier {
                    for &w in &table[v as usize * 18..][..18] {
                        if d[w as usize] == u8::MAX {
                            d[w as usize] = level;
                            next.push(w);
                        }
                    }
                }
                frontier = next;
            }
            d
        };
        let solved = crate::cube::Cube::SOLVED;
        let corner_depth = depth(&corner_moves, corner_coord(&solved.corners));
        let edge_depth = depth(&edge_moves, edge_coord(kind, &solved.edges));
        CosetSearch { kind, corner_moves, edge_moves, corner_depth, edge_depth }
    }

    /// The corner coordinates of the 16 UD-axis conjugates of any position with corner value `c`.
    pub fn corner_conjugates(&self, c: u32) -> Vec<u32> {
        use crate::coord::nxopt::corners_of;
        use crate::cube::{Cube, SymmetryGroup};
        let x = Cube { corners: corners_of(c), ..Cube::SOLVED };
        SymmetryGroup::UdAxis.members().map(|s| corner_coord(&s.conjugate(&x).corners)).collect()
    }

    /// The distance of the coset of `x`, or `limit` if it is at least that.
    pub fn distance(&self, x: &crate::cube::Cube, limit: u8) -> u8 {
        let (c, e) = (corner_coord(&x.corners), edge_coord(self.kind, &x.edges));
        let mut bound = self.bound(c, e);
        while bound < limit {
            if self.search(c, e, bound, usize::MAX) {
                return bound;
            }
            bound += 1;
        }
        limit
    }

    fn bound(&self, c: u32, e: u32) -> u8 {
        self.corner_depth[c as usize].max(self.edge_depth[e as usize])
    }

    /// Whether (c, e) is solved within `togo` moves; `last` is the face of the previous move
    /// (a face is not turned twice in a row, and of two opposite faces the first comes first).
    fn search(&self, c: u32, e: u32, togo: u8, last: usize) -> bool {
        let b = self.bound(c, e);
        if b == 0 {
            return true;
        }
        if b > togo {
            return false;
        }
        (0..18).any(|m| {
            let face = m / 3;
            if last != usize::MAX && (face == last || face + 3 == last) {
                return false;
            }
            let (c2, e2) = (self.corner_moves[c as usize * 18 + m], self.edge_moves[e as usize * 18 + m]);
            self.search(c2, e2, togo - 1, face)
        })
    }
}

/// Checks a file of table `kind`: header and length, unused fields, group minima against
/// values, and `samples` positions (random walks of every length up to base + 4) against
/// [`CosetSearch`], at every entry that stands for them; each check goes to `report` as it
/// finishes. Returns the failed checks.
pub fn verify(kind: NxoptKind, file: &[u8], samples: u32, report: &mut dyn FnMut(bool, &str)) -> Vec<String> {
    let mut findings = Findings::new(report);
    let expected = HEADER_BYTES as u64 + kind.table_bytes();
    findings.check(
        file.len() as u64 == expected
            && file[..HEADER_BYTES.min(file.len())] == header(kind)[..HEADER_BYTES.min(file.len())],
        format!(
            "header and length: {} bytes (NXH, base {}, {expected} bytes expected)",
            file.len(),
            kind.base()
        ),
    );
    if file.len() as u64 != expected {
        return findings.into_failures();
    }
    let table = &file[HEADER_BYTES..];
    let s = summarize(kind, table);
    findings.check(s.bad_unused == 0, format!("unused fields hold 3 ({} do not)", s.bad_unused));
    findings
        .check(s.bad_minima == 0, format!("group minima agree with their entries ({} do not)", s.bad_minima));
    let search = CosetSearch::new(kind);
    let rows = canonical_rows(|c| search.corner_conjugates(c));
    let walks = kind.base() as u32 + 5;
    let wrong: u32 = (0..samples)
        .into_par_iter()
        .map(|i| {
            let mut rng = crate::cube::SplitMix64::new(0x6e786f7074 + i as u64);
            let mut x = crate::cube::Cube::SOLVED;
            for _ in 0..i % walks {
                x = x.compose(crate::cube::Move::from_index(rng.below(18) as usize).cube());
            }
            let want = value_of(kind, search.distance(&x, kind.base() + 3));
            let row_bytes = kind.row_bytes() as usize;
            entries_of(kind, &rows, &x)
                .into_iter()
                .filter(|&(row, column)| {
                    field(&table[row as usize * row_bytes..][..row_bytes], column) != want
                })
                .count() as u32
        })
        .sum();
    findings.check(
        wrong == 0,
        format!("{samples} positions (random walks up to {} moves) against an IDA* of their cosets ({wrong} entries wrong)", walks - 1),
    );
    let groups = samples.div_ceil(4);
    let wrong_minima =
        (0..groups).into_par_iter().filter(|&i| !group_minimum_holds(kind, table, &rows, &search, i)).count();
    findings.check(
        wrong_minima == 0,
        format!("{groups} random groups' minima against the IDA* distances of their entries ({wrong_minima} wrong)"),
    );
    findings.into_failures()
}

/// Whether the minimum of a random group (the `i`th draw) is the least exact distance of its
/// entries, where that is at most base + 2: every entry at or below the base is searched, above
/// it one entry of the least value is.
fn group_minimum_holds(kind: NxoptKind, table: &[u8], rows: &[u32], search: &CosetSearch, i: u32) -> bool {
    use crate::coord::nxopt::{corners_of, edges_of};
    let mut rng = crate::cube::SplitMix64::new(0x67726f7570 + i as u64);
    let row = rng.below(ROWS as u64) as u32;
    let g = rng.below((kind.columns() / GROUP) as u64) as u32;
    let row_bytes = kind.row_bytes() as usize;
    let bytes = &table[row as usize * row_bytes..][..row_bytes];
    let minimum = group_minimum(bytes, g);
    let entries: Vec<(u32, u8)> = (g * GROUP..(g + 1) * GROUP)
        .filter_map(|c| edges_of(kind, c).map(|_| (c, field(bytes, c))))
        .collect();
    let lowest = entries.iter().map(|e| e.1).min().expect("62 entries");
    if minimum == NO_MINIMUM {
        return lowest == FAR;
    }
    let corners = corners_of(rows[row as usize]);
    let distance = |c: u32| {
        let x = crate::cube::Cube { corners, edges: edges_of(kind, c).expect("an entry") };
        search.distance(&x, kind.base() + 3)
    };
    let exact = if lowest == 0 {
        entries.iter().filter(|e| e.1 == 0).map(|e| distance(e.0)).min()
    } else {
        entries.iter().find(|e| e.1 == lowest).map(|e| distance(e.0))
    };
    exact == Some(minimum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_puts_bit_k_at_bit_2k() {
        for k in 0..64 {
            assert_eq!(spread(1 << k), 1u128 << (2 * k));
        }
        assert_eq!(spread(u64::MAX), u128::MAX / 3);
    }

    /// Both transpositions move bit j of word i to bit i of word j, on random and structured
    /// matrices.
    #[test]
    fn transposes_agree_with_the_definition() {
        let mut rng = crate::cube::SplitMix64::new(8);
        for case in 0..200 {
            let m: [u64; 64] = std::array::from_fn(|i| match case % 4 {
                0 => rng.next_u64(),
                1 => 1 << ((i * 7 + case) % 64),
                2 => rng.next_u64() & rng.next_u64() & rng.next_u64(),
                _ => (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            });
            let expected: [u64; 64] =
                std::array::from_fn(|j| (0..64).fold(0, |w, i| w | (m[i] >> j & 1) << i));
            let mut by_blocks = m;
            transpose_by_blocks(&mut by_blocks);
            assert_eq!(by_blocks, expected);
            let mut chosen = m;
            transpose(&mut chosen);
            assert_eq!(chosen, expected);
        }
    }

    /// A row's bits in the search's order come out in the table's order, for every flip width:
    /// each set search column at its table column, nothing else, each word once.
    #[test]
    fn table_words_are_the_row_in_the_tables_order() {
        use crate::coord::nxopt::search_column;
        let mut rng = crate::cube::SplitMix64::new(64);
        for name in ["EO1EP1", "EO1EP2", "EO2EP1", "EO3EP1"] {
            let kind = NxoptKind::parse(name).unwrap();
            let words = kind.columns() as usize / 64;
            // Sparse columns everywhere, and a dense run of search words.
            let mut bits = vec![0u64; words];
            let mut expected = vec![0u64; words];
            let mut set = |c: u32, bits: &mut [u64]| {
                bits[search_column(kind, c) as usize / 64] |= 1 << (search_column(kind, c) % 64);
                expected[c as usize / 64] |= 1 << (c % 64);
            };
            for _ in 0..2000 {
                set((rng.next_u64() % kind.columns() as u64) as u32, &mut bits);
            }
            let dense = (rng.next_u64() % (words as u64 - 64)) as usize;
            for w in dense..dense + 64 {
                let word = rng.next_u64();
                for b in 0..64 {
                    if word >> b & 1 == 1 {
                        let c = crate::coord::nxopt::table_column(kind, (w * 64 + b) as u32);
                        set(c, &mut bits);
                    }
                }
            }
            let mut got = vec![0u64; words];
            table_words(kind, &bits, |w, word| {
                assert!(word != 0 && got[w] == 0, "{name}: word {w}");
                got[w] = word;
            });
            assert!(got == expected, "{name}");
        }
    }
}
