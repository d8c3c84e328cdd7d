//! The column maps of a block space: a (row, move) transition's bijection of columns, block
//! by block, its expansion for the inner loops (whose kernels are in `groups.rs`), and the
//! table of a space's distinct maps, which its transitions name by number.

use crate::coord::ColumnMapper;
use crate::space::s4;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A block-wise bijection of columns: target block `j` takes source block `src[j]`'s ordering
/// `o` to `left[j] . o . right[j]`. Block 0 is the most significant base-24 digit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ColumnMap {
    pub(super) blocks: u8,
    pub(super) src: [u8; 3],
    pub(super) left: [u8; 3],
    pub(super) right: [u8; 3],
}

/// A [`ColumnMap`] expanded for the inner loop: column' = sum over source blocks of
/// `add[k][digit]`, where `k` counts blocks from the most significant of three (with two
/// blocks, `add[0]` is all zero), so the digits come out of one fixed division chain.
#[derive(Clone, Copy, Debug)]
pub struct Contributions {
    pub add: [[u32; 24]; 3],
}

impl ColumnMap {
    /// Splits a column into its base-24 digits, block 0 first.
    #[inline]
    pub fn digits(blocks: usize, column: u32) -> [u8; 3] {
        let mut d = [0u8; 3];
        let mut c = column;
        for b in (0..blocks).rev() {
            d[b] = (c % 24) as u8;
            c /= 24;
        }
        d
    }

    pub fn contributions(&self) -> Contributions {
        let nb = self.blocks as usize;
        let mut add = [[0u32; 24]; 3];
        for j in 0..nb {
            let weight = 24u32.pow((nb - 1 - j) as u32);
            let b = self.src[j] as usize + (3 - nb);
            for (slot, &image) in add[b].iter_mut().zip(s4::sandwich(self.left[j], self.right[j])) {
                *slot = image as u32 * weight;
            }
        }
        Contributions { add }
    }

    #[inline]
    pub fn apply(&self, column: u32) -> u32 {
        let nb = self.blocks as usize;
        let d = Self::digits(nb, column);
        (0..nb).fold(0, |acc, j| {
            acc * 24 + s4::mul(s4::mul(self.left[j], d[self.src[j] as usize]), self.right[j]) as u32
        })
    }

    /// The three columns a block-wise map is probed at: every block at the identity, then every
    /// block at each S4 generator.
    pub fn probe_columns(blocks: usize) -> [u32; 3] {
        let uniform = |o: u8| (0..blocks).fold(0u32, |acc, _| acc * 24 + o as u32);
        [uniform(0), uniform(s4::GENERATORS[0]), uniform(s4::GENERATORS[1])]
    }

    /// Recovers a block-wise map whose block `b` feeds target block `blocks_to[b]` from its
    /// images of the [`Self::probe_columns`]. Panics if the images do not fit that form: a bug
    /// in the space, not bad input.
    pub(super) fn from_probes(blocks: usize, blocks_to: [u8; 3], images: [u32; 3]) -> ColumnMap {
        let [t_id, g0, g1] = images.map(|c| Self::digits(blocks, c));
        let mut map = ColumnMap { blocks: blocks as u8, ..ColumnMap::default() };
        for (b, &to) in blocks_to.iter().enumerate().take(blocks) {
            let j = to as usize;
            let (left, right) = s4::solve_left_right(t_id[j], [g0[j], g1[j]])
                .expect("a block's column map is o -> left . o . right");
            map.src[j] = b as u8;
            map.left[j] = left;
            map.right[j] = right;
        }
        map
    }
}

impl ColumnMapper for ColumnMap {
    #[inline]
    fn apply(&self, column: u32) -> u32 {
        ColumnMap::apply(self, column)
    }
}

/// The distinct column maps of a space's transitions, each with its expansion: few against
/// the transitions (edges: 8,778 maps for 26.7 million (row, move) pairs), so a transition
/// names its map by number and the expansion is made once, not at every use.
#[derive(Clone, Debug, Default)]
pub struct MapTable {
    maps: Vec<ColumnMap>,
    contributions: Vec<Contributions>,
}

/// Hashes a map's packed value with one multiplication, its high half folded into the low bits
/// that pick a bucket (the keys are a space's own maps: nothing to defend against).
#[derive(Default)]
struct PackedHasher(u64);

impl Hasher for PackedHasher {
    fn finish(&self) -> u64 {
        self.0 ^ self.0 >> 32
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type Packed = BuildHasherDefault<PackedHasher>;

impl ColumnMap {
    /// The map as one integer (2 bits a block count or source, 5 an ordering): a hash key.
    fn packed(&self) -> u64 {
        let mut k = self.blocks as u64;
        for j in 0..3 {
            k = k << 2 | self.src[j] as u64;
            k = k << 5 | self.left[j] as u64;
            k = k << 5 | self.right[j] as u64;
        }
        k
    }

    /// The map [`Self::packed`] made `k` of.
    fn unpacked(mut k: u64) -> ColumnMap {
        let mut map = ColumnMap::default();
        for j in (0..3).rev() {
            map.right[j] = (k & 31) as u8;
            map.left[j] = (k >> 5 & 31) as u8;
            map.src[j] = (k >> 10 & 3) as u8;
            k >>= 12;
        }
        map.blocks = k as u8;
        map
    }
}

impl MapTable {
    /// The table of the distinct maps of `items` (each item's map is `map_of`), in the order of
    /// their packed values (so the same maps give the same numbers on any thread count), and
    /// each item's map number in it.
    pub fn number<T: Sync>(items: &[T], map_of: impl Fn(&T) -> ColumnMap + Sync) -> (MapTable, Vec<u32>) {
        let distinct = items
            .par_chunks(1 << 16)
            .map(|chunk| chunk.iter().map(|t| map_of(t).packed()).collect::<HashSet<u64, Packed>>())
            .reduce(HashSet::default, |mut a, b| {
                a.extend(b);
                a
            });
        let mut keys: Vec<u64> = distinct.into_iter().collect();
        keys.sort_unstable();
        let number: HashMap<u64, u32, Packed> =
            keys.iter().enumerate().map(|(i, &k)| (k, i as u32)).collect();
        let ids = items.par_iter().map(|t| number[&map_of(t).packed()]).collect();
        (MapTable::of(keys.into_iter().map(ColumnMap::unpacked).collect()), ids)
    }

    /// The table of these maps, in this order.
    pub fn of(maps: Vec<ColumnMap>) -> MapTable {
        let contributions = maps.iter().map(ColumnMap::contributions).collect();
        MapTable { maps, contributions }
    }

    pub fn len(&self) -> usize {
        self.maps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.maps.is_empty()
    }

    /// Map number `id`.
    #[inline]
    pub fn map(&self, id: u32) -> ColumnMap {
        self.maps[id as usize]
    }

    /// Map number `id`, expanded.
    #[inline]
    pub fn contributions(&self, id: u32) -> Contributions {
        self.contributions[id as usize]
    }

    pub fn maps(&self) -> &[ColumnMap] {
        &self.maps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(src: [u8; 3], left: [u8; 3], right: [u8; 3]) -> ColumnMap {
        ColumnMap { blocks: 3, src, left, right }
    }

    #[test]
    fn numbered_maps_are_the_maps_and_their_expansions() {
        let distinct = [
            map([0, 1, 2], [0, 0, 0], [0, 0, 0]),
            map([2, 0, 1], [23, 5, 0], [1, 17, 23]),
            map([1, 2, 0], [3, 3, 3], [22, 0, 9]),
            ColumnMap { blocks: 2, src: [1, 0, 0], left: [7, 8, 0], right: [9, 10, 0] },
        ];
        for m in distinct {
            assert_eq!(ColumnMap::unpacked(m.packed()), m);
        }
        // Repeats in a scrambled order, more than one parallel chunk of them.
        let maps: Vec<ColumnMap> = (0..200_000u64).map(|i| distinct[(i * 7 % 13 % 4) as usize]).collect();
        let (table, ids) = MapTable::number(&maps, |m| *m);
        assert_eq!(table.len(), distinct.len());
        for (m, &id) in maps.iter().zip(&ids) {
            assert_eq!(table.map(id), *m);
            assert_eq!(table.contributions(id).add, m.contributions().add);
        }
        // The numbers follow the maps, not their order of appearance.
        let reversed: Vec<ColumnMap> = maps.iter().rev().copied().collect();
        assert_eq!(MapTable::number(&reversed, |m| *m).0.maps(), table.maps());
    }
}
