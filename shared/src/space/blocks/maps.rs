//! The column maps of a block space: a (row, move) transition's bijection of columns, block
//! by block, and its expansion for the inner loops (whose kernels are in `groups.rs`).

use crate::coord::ColumnMapper;
use crate::space::s4;

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
