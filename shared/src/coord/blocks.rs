//! Block coordinates: the pieces of one kind split into blocks of four (the corner tetrads, the
//! U and D layers, the three edge slices), and a position split into
//!
//! - its *row* value: which block's piece sits at each position (a multiset permutation, ranked
//!   as one k-subset per block) and the orientation at each position; and
//! - its *column*: for each block, the order of its four pieces over the four positions that
//!   hold them (a permutation of S4, so 24^blocks columns).
//!
//! When the subgroup "every piece in its own block's positions, all oriented" is invariant under
//! the symmetries used, the row value is a coordinate that moves and symmetries act on, and a
//! move maps the columns of a row through one bijection per block (see `bfs::rows`).

use super::rank::{binomial, ori_rank, ori_unrank, perm_rank, s4_orders, subset_rank, subset_unrank};
use crate::cube::{Corners, Cube, Edges, Pieces, Symmetry};

/// Blocks of four pieces over N pieces with O orientations.
#[derive(Clone, Debug)]
pub struct BlockLayout<const N: usize, const O: u8> {
    /// Home positions of each block's pieces, increasing.
    blocks: Vec<[u8; 4]>,
    block_of: [u8; N],
    member_of: [u8; N],
    /// Each assignment's positions per block (see [`Self::masks_of_assignment`]), made once:
    /// decoding a row and keying a class's members look them up for every row of every level.
    assignment_masks: Vec<[u32; 3]>,
    /// [`Self::row_keys`] split in two tables, made once: the pieces' blocks per assignment
    /// and the orientations per orientation rank (a class's members are keyed at every
    /// counted row of every level, 48 of them).
    assignment_keys: Vec<[u16; 3]>,
    ori_keys: Vec<[u16; 3]>,
}

impl<const N: usize, const O: u8> BlockLayout<N, O> {
    /// `blocks` must partition 0..N into sets of four.
    pub fn new(blocks: &[[u8; 4]]) -> Self {
        assert_eq!(blocks.len() * 4, N, "blocks of four must cover all pieces");
        let mut block_of = [u8::MAX; N];
        let mut member_of = [0u8; N];
        let mut sorted = blocks.to_vec();
        for (b, block) in sorted.iter_mut().enumerate() {
            block.sort_unstable();
            for (k, &p) in block.iter().enumerate() {
                assert_eq!(block_of[p as usize], u8::MAX, "piece {p} in two blocks");
                block_of[p as usize] = b as u8;
                member_of[p as usize] = k as u8;
            }
        }
        let mut layout = BlockLayout {
            blocks: sorted,
            block_of,
            member_of,
            assignment_masks: Vec::new(),
            assignment_keys: Vec::new(),
            ori_keys: Vec::new(),
        };
        layout.assignment_masks =
            (0..layout.assignment_count()).map(|a| layout.unrank_assignment(a)).collect();
        layout.assignment_keys =
            layout.assignment_masks.iter().map(|masks| layout.piece_keys(masks)).collect();
        layout.ori_keys = (0..layout.ori_count()).map(|o| layout.orientation_keys(o)).collect();
        layout
    }

    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// Number of ways to assign blocks to positions: the product of C(remaining, 4).
    pub fn assignment_count(&self) -> u32 {
        (0..self.blocks.len() - 1).map(|b| binomial(N - 4 * b, 4)).product()
    }

    pub fn ori_count(&self) -> u32 {
        (O as u32).pow(N as u32 - 1)
    }

    /// Number of row values (assignments x orientations).
    pub fn row_count(&self) -> u32 {
        self.assignment_count() * self.ori_count()
    }

    /// Number of columns, 24^blocks.
    pub fn column_count(&self) -> u32 {
        24u32.pow(self.blocks.len() as u32)
    }

    /// The block of each position's piece, as one mask of positions per block.
    fn position_masks(&self, x: &Pieces<N, O>) -> [u32; 3] {
        let mut masks = [0u32; 3];
        for (i, &p) in x.perm.iter().enumerate() {
            masks[self.block_of[p as usize] as usize] |= 1 << i;
        }
        masks
    }

    /// Which block's pieces sit on each position, ranked in `0..assignment_count()`.
    #[inline]
    pub fn assignment_of(&self, x: &Pieces<N, O>) -> u32 {
        self.assignment(&self.position_masks(x))
    }

    fn assignment(&self, masks: &[u32; 3]) -> u32 {
        let mut rank = 0;
        let mut free: u32 = (1 << N) - 1;
        for (b, &mask) in masks.iter().enumerate().take(self.blocks.len() - 1) {
            // Re-index the block's positions among the positions still free.
            let mut compact = 0u32;
            let mut j = 0;
            for i in 0..N {
                if free >> i & 1 == 1 {
                    compact |= (mask >> i & 1) << j;
                    j += 1;
                }
            }
            rank = rank * binomial(N - 4 * b, 4) + subset_rank(compact);
            free &= !mask;
        }
        rank
    }

    /// The positions of each block's pieces under assignment `rank`, one mask per block.
    #[inline]
    fn masks_of_assignment(&self, rank: u32) -> [u32; 3] {
        self.assignment_masks[rank as usize]
    }

    fn unrank_assignment(&self, mut rank: u32) -> [u32; 3] {
        let nb = self.blocks.len();
        let mut digits = [0u32; 3];
        for b in (0..nb - 1).rev() {
            let base = binomial(N - 4 * b, 4);
            digits[b] = rank % base;
            rank /= base;
        }
        let mut masks = [0u32; 3];
        let mut free: u32 = (1 << N) - 1;
        for b in 0..nb - 1 {
            let compact = subset_unrank(digits[b], N - 4 * b, 4);
            let mut j = 0;
            for i in 0..N {
                if free >> i & 1 == 1 {
                    masks[b] |= (compact >> j & 1) << i;
                    j += 1;
                }
            }
            free &= !masks[b];
        }
        masks[nb - 1] = free;
        masks
    }

    /// The row value: assignment rank x orientation count + orientation rank.
    #[inline]
    pub fn row(&self, x: &Pieces<N, O>) -> u32 {
        self.assignment(&self.position_masks(x)) * self.ori_count() + ori_rank(&x.ori, O)
    }

    /// The column: block orderings as base-24 digits, block 0 most significant.
    #[inline]
    pub fn column(&self, x: &Pieces<N, O>) -> u32 {
        let mut digits = [[0u8; 4]; 3];
        let mut filled = [0usize; 3];
        for &p in &x.perm {
            let b = self.block_of[p as usize] as usize;
            digits[b][filled[b]] = self.member_of[p as usize];
            filled[b] += 1;
        }
        digits[..self.blocks.len()].iter().fold(0, |acc, d| acc * 24 + perm_rank(d))
    }

    /// A position with the given row value and column.
    pub fn decode(&self, row: u32, column: u32) -> Pieces<N, O> {
        let nb = self.blocks.len();
        let masks = self.masks_of_assignment(row / self.ori_count());
        let mut x = Pieces::<N, O>::IDENTITY;
        ori_unrank(row % self.ori_count(), O, &mut x.ori);
        let mut col = column;
        for b in (0..nb).rev() {
            let order = s4_orders()[(col % 24) as usize];
            col /= 24;
            let mut k = 0;
            for i in 0..N {
                if masks[b] >> i & 1 == 1 {
                    x.perm[i] = self.blocks[b][order[k] as usize];
                    k += 1;
                }
            }
        }
        x
    }
}

impl<const N: usize, const O: u8> BlockLayout<N, O>
where
    Pieces<N, O>: Part,
{
    /// How conjugation by `s` permutes the blocks: block `b`'s pieces become block
    /// `result[b]`'s pieces. Found by conjugating a 3-cycle inside each block.
    pub fn block_permutation(&self, s: Symmetry) -> [u8; 3] {
        let mut out = [0u8; 3];
        for (b, block) in self.blocks.iter().enumerate() {
            let mut x = Pieces::<N, O>::IDENTITY;
            let [p, q, r, _] = *block;
            x.perm[p as usize] = q;
            x.perm[q as usize] = r;
            x.perm[r as usize] = p;
            let y = x.conjugate(s);
            let moved =
                (0..N).find(|&i| y.perm[i] as usize != i).expect("a conjugate of a 3-cycle moves pieces");
            out[b] = self.block_of[moved];
        }
        out
    }
}

/// Conjugation of row values by tables, for building classes of large row coordinates fast:
/// `s x s^-1` moves the assignment by a table, and the orientation at position i becomes
/// `offset(s, assignment)[i] + sign(s) * ori[perm(s)[i]]` (mirrors negate twists). With two
/// orientations that sum is an exclusive or of the two terms' ranks, so the edges look both up.
pub struct RowConjugation<const N: usize, const O: u8> {
    ori_count: u32,
    assign: Vec<u32>,
    /// O > 2: the offsets, per (assignment, symmetry).
    offset: Vec<[u8; N]>,
    perm: Vec<[u8; N]>,
    negate: Vec<bool>,
    /// O = 2: the offsets' ranks, per (assignment, symmetry).
    offset_rank: Vec<u16>,
    /// O = 2: the rank of `ori[perm(s)[i]]`, per (orientation rank, symmetry).
    moved_rank: Vec<u16>,
}

impl<const N: usize, const O: u8> RowConjugation<N, O> {
    /// The row value of `s x s^-1` for any x with row value `raw`.
    #[inline]
    pub fn apply(&self, s: Symmetry, raw: u32) -> u32 {
        let a = (raw / self.ori_count) as usize;
        // By assignment, then symmetry: a class's members are its representative under
        // every symmetry, so listing them reads a few adjacent lines.
        let k = a * 48 + s.index();
        if O == 2 {
            let moved = self.moved_rank[(raw % self.ori_count) as usize * 48 + s.index()];
            return self.assign[k] * self.ori_count + (self.offset_rank[k] ^ moved) as u32;
        }
        let mut ori = [0u8; N];
        ori_unrank(raw % self.ori_count, O, &mut ori);
        let offset = &self.offset[k];
        let perm = &self.perm[s.index()];
        let mut rank = 0u32;
        for i in 0..N - 1 {
            let v = ori[perm[i] as usize];
            let v = if self.negate[s.index()] { (O - v) % O } else { v };
            rank = rank * O as u32 + ((offset[i] + v) % O) as u32;
        }
        self.assign[k] * self.ori_count + rank
    }
}

impl<const N: usize, const O: u8> BlockLayout<N, O>
where
    Pieces<N, O>: Part,
{
    /// Tables for [`RowConjugation`], derived by conjugating positions.
    pub fn row_conjugation(&self) -> RowConjugation<N, O> {
        let oc = self.ori_count();
        let assignments = self.assignment_count();
        let mut assign = Vec::with_capacity(48 * assignments as usize);
        let mut offset = Vec::new();
        let mut offset_rank = Vec::new();
        let mut perm = Vec::with_capacity(48);
        let mut negate = Vec::with_capacity(48);
        for a in 0..assignments {
            let x = self.decode(a * oc, 0);
            for s in Symmetry::all() {
                let y = x.conjugate(s);
                assign.push(self.row(&y) / oc);
                if O == 2 {
                    offset_rank.push(ori_rank(&y.ori, O) as u16);
                } else {
                    offset.push(y.ori);
                }
            }
        }
        for s in Symmetry::all() {
            // Twist one position up and a neighbour down (a valid position), see where it lands.
            let landing = |j: usize, k: usize| {
                let mut x = Pieces::<N, O>::IDENTITY;
                x.ori[j] = 1;
                x.ori[k] = O - 1;
                x.conjugate(s).ori
            };
            let mut p = [0u8; N];
            let mut neg = false;
            for j in 0..N {
                let (a, b) = (landing(j, (j + 1) % N), landing(j, (j + 2) % N));
                let i = (0..N).find(|&i| a[i] != 0 && b[i] != 0).expect("a twisted position lands somewhere");
                p[i] = j as u8;
                neg = a[i] != 1;
            }
            perm.push(p);
            negate.push(neg);
        }
        let mut moved_rank = Vec::new();
        if O == 2 {
            moved_rank.reserve(48 * oc as usize);
            for o in 0..oc {
                let mut ori = [0u8; N];
                ori_unrank(o, O, &mut ori);
                for p in &perm {
                    let moved: [u8; N] = std::array::from_fn(|i| ori[p[i] as usize]);
                    moved_rank.push(ori_rank(&moved, O) as u16);
                }
            }
        }
        RowConjugation { ori_count: oc, assign, offset, perm, negate, offset_rank, moved_rank }
    }
}

impl<const N: usize, const O: u8> BlockLayout<N, O> {
    /// Per-position (block of the piece there, orientation there) of a row value, packed per
    /// home block: for block `b`, 4 bits for each of its home positions in increasing order.
    /// Two row values are equal exactly when all their keys are.
    #[inline]
    pub fn row_keys(&self, row: u32) -> [u16; 3] {
        let pieces = self.assignment_keys[(row / self.ori_count()) as usize];
        let ori = self.ori_keys[(row % self.ori_count()) as usize];
        std::array::from_fn(|b| pieces[b] | ori[b])
    }

    /// The pieces' half of [`Self::row_keys`]: each home position's piece block, in bits 2..4
    /// of its nibble.
    fn piece_keys(&self, masks: &[u32; 3]) -> [u16; 3] {
        let mut keys = [0u16; 3];
        for (b, block) in self.blocks.iter().enumerate() {
            for (k, &q) in block.iter().enumerate() {
                let piece_block =
                    (0..3).find(|&j| masks[j] >> q & 1 == 1).expect("every position holds a piece") as u16;
                keys[b] |= piece_block << 2 << (4 * k);
            }
        }
        keys
    }

    /// The orientations' half of [`Self::row_keys`]: each home position's orientation, in bits
    /// 0..2 of its nibble.
    fn orientation_keys(&self, rank: u32) -> [u16; 3] {
        let mut ori = [0u8; N];
        ori_unrank(rank, O, &mut ori);
        let mut keys = [0u16; 3];
        for (b, block) in self.blocks.iter().enumerate() {
            for (k, &q) in block.iter().enumerate() {
                keys[b] |= (ori[q as usize] as u16) << (4 * k);
            }
        }
        keys
    }

    /// For x = decode(row, column) with block `b`'s ordering `order`, the key (as in
    /// [`Self::row_keys`]) of x^-1 on the home positions of block `b`. It depends on nothing
    /// else, which lets the engine test "is x^-1 in this row's class?" block by block.
    pub fn inverse_keys(&self, row: u32, b: usize) -> [u16; 24] {
        let masks = self.masks_of_assignment(row / self.ori_count());
        let mut ori = [0u8; N];
        ori_unrank(row % self.ori_count(), O, &mut ori);
        // x^-1 holds, at piece q's home, the piece whose home is where q sits in x: the
        // nibble of the block's idx-th position goes to the nibble of its piece's member.
        let mut nibbles = [0u16; 4];
        let mut positions = (0..N).filter(|&i| masks[b] >> i & 1 == 1);
        for nibble in &mut nibbles {
            let i = positions.next().expect("four positions per block");
            *nibble = (self.block_of[i] as u16) << 2 | ((O - ori[i]) % O) as u16;
        }
        let orders = s4_orders();
        std::array::from_fn(|o| {
            (0..4).fold(0u16, |key, idx| key | nibbles[idx] << (4 * orders[o][idx] as usize))
        })
    }
}

/// A piece kind inside a [`Cube`]; the other kind is left solved.
pub trait Part: Sized + Copy + Send + Sync + PartialEq + 'static {
    fn of(x: &Cube) -> &Self;
    fn into_cube(self) -> Cube;
    /// `s self s^-1`.
    fn conjugate(&self, s: Symmetry) -> Self;
}

impl Part for Corners {
    fn of(x: &Cube) -> &Self {
        &x.corners
    }
    fn into_cube(self) -> Cube {
        Cube { corners: self, ..Cube::SOLVED }
    }
    fn conjugate(&self, s: Symmetry) -> Self {
        s.conjugate_corners(self)
    }
}

impl Part for Edges {
    fn of(x: &Cube) -> &Self {
        &x.edges
    }
    fn into_cube(self) -> Cube {
        Cube { edges: self, ..Cube::SOLVED }
    }
    fn conjugate(&self, s: Symmetry) -> Self {
        s.conjugate_edges(self)
    }
}

/// Corner tetrads {URF, ULB, DLF, DRB} and {UFL, UBR, DFR, DBL} (the H48 solver's corner separation).
pub fn corner_tetrads() -> BlockLayout<8, 3> {
    BlockLayout::new(&[[0, 2, 5, 7], [1, 3, 4, 6]])
}

/// Corner layers U and D (nxopt's top/bottom split).
pub fn corner_layers() -> BlockLayout<8, 3> {
    BlockLayout::new(&[[0, 1, 2, 3], [4, 5, 6, 7]])
}

/// Edge slices in the H48 solver's esep order: E (FR, FL, BL, BR), S (UR, UL, DL, DR), M (UF, UB,
/// DB, DF).
pub fn edge_slices() -> BlockLayout<12, 2> {
    BlockLayout::new(&[[8, 9, 10, 11], [0, 2, 4, 6], [1, 3, 5, 7]])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{random_cube, SplitMix64};

    #[test]
    fn table_conjugation_equals_conjugating_positions() {
        fn check<const N: usize, const O: u8>(layout: BlockLayout<N, O>, part: impl Fn(&Cube) -> Pieces<N, O>)
        where
            Pieces<N, O>: Part,
        {
            let conj = layout.row_conjugation();
            let mut rng = SplitMix64::new(21);
            for _ in 0..300 {
                let x = part(&random_cube(&mut rng));
                for s in Symmetry::all() {
                    assert_eq!(conj.apply(s, layout.row(&x)), layout.row(&x.conjugate(s)), "{s:?}");
                }
            }
        }
        check(corner_tetrads(), |c| c.corners);
        check(edge_slices(), |c| c.edges);
    }

    #[test]
    fn row_keys_name_each_home_positions_piece_block_and_orientation() {
        fn check<const N: usize, const O: u8>(layout: BlockLayout<N, O>, rows: impl Iterator<Item = u32>) {
            for row in rows {
                let x = layout.decode(row, 0);
                let expected: [u16; 3] = std::array::from_fn(|b| {
                    layout.blocks.get(b).map_or(0, |block| {
                        block.iter().enumerate().fold(0, |key, (k, &q)| {
                            let piece = x.perm[q as usize] as usize;
                            let nibble = (layout.block_of[piece] as u16) << 2 | x.ori[q as usize] as u16;
                            key | nibble << (4 * k)
                        })
                    })
                });
                assert_eq!(layout.row_keys(row), expected, "row {row}");
            }
        }
        let tetrads = corner_tetrads();
        let all = 0..tetrads.row_count();
        check(tetrads, all);
        let slices = edge_slices();
        let mut rng = SplitMix64::new(8);
        let count = slices.row_count() as u64;
        check(slices, (0..20_000).map(move |_| rng.below(count) as u32));
    }

    #[test]
    fn row_and_column_round_trip() {
        let mut rng = SplitMix64::new(5);
        let tetrads = corner_tetrads();
        let slices = edge_slices();
        assert_eq!(tetrads.row_count(), 70 * 2187);
        assert_eq!(tetrads.column_count(), 576);
        assert_eq!(slices.assignment_count(), 34_650);
        assert_eq!(slices.column_count(), 13_824);
        for _ in 0..2000 {
            let x = random_cube(&mut rng);
            let (r, c) = (tetrads.row(&x.corners), tetrads.column(&x.corners));
            assert_eq!(tetrads.decode(r, c), x.corners);
            let (r, c) = (slices.row(&x.edges), slices.column(&x.edges));
            assert_eq!(slices.decode(r, c), x.edges);
        }
        for a in 0..tetrads.assignment_count() {
            let x = tetrads.decode(a * tetrads.ori_count(), 0);
            assert_eq!(tetrads.row(&x), a * tetrads.ori_count());
        }
    }
}
