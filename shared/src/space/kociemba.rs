//! Kociemba's subgroup H = <U, D, R2, L2, F2, B2> as a row index, and its quotient H' that
//! ignores the middle-slice edges (Rokicki's phase2prune).
//!
//! In H every piece is oriented and the four middle-slice edges stay in the middle slice, so a
//! position is a corner permutation (8!), a permutation of the eight U/D-layer edges (8!) and
//! one of the middle-slice edges (4!), with equal corner and edge parity: 8!·8!·4!/2 =
//! 19,508,428,800 positions. H' drops the middle-slice edges: 8!·8! = 1,625,702,400.
//!
//! Rows are the classes of the corner permutation under the 16 symmetries that fix the UD axis
//! (the symmetries that preserve H): 2768 rows, in locality order ([`super::locality`]).
//! Columns are the U/D-edge permutation rank (times 24, plus the slice-edge rank, for H). A move
//! right-multiplies the edge permutations by the move's position permutation and the symmetry
//! bringing the corners to their representative conjugates them, so a column map is two table
//! lookups per part. Class columns here count classes under
//! those 16 symmetries (H is not invariant under all 48).

use super::index::{set_bit, AnyColumn, ClassRows, Inverses, RowIndex};
use super::locality;
use crate::coord::rank::{factorial, perm_rank, perm_unrank};
use crate::coord::{ColumnMapper, SymClasses};
use crate::cube::{Corners, Cube, Edges, Move, MoveSet, Symmetry, SymmetryGroup};

const UD: usize = 40320;

/// H (with the slice edges) or H' (without).
pub struct KociembaSpace {
    with_slice: bool,
    /// Rows, their targets per move slot and their stabilizers.
    rows: ClassRows,
    moves: Vec<Move>,
    /// Index of each face turn in `moves`, or `u8::MAX` when it is not a move of H.
    move_slot: [u8; Move::COUNT],
    /// rank(ud . move) per move slot, then rank(s ud s^-1) per symmetry.
    right8: Vec<u16>,
    conj8: Vec<u16>,
    right4: Vec<[u8; 24]>,
    conj4: Vec<[u8; 24]>,
    /// Per row: the row of the inverse of its representative corner permutation, and the
    /// symmetry that brings that inverse to its class's representative. The inverse of a
    /// position in H is the inverse of each of its three permutations, so a position's inverse
    /// is located from these and the two tables below, without building a cube.
    inverse_rows: Vec<(u32, Symmetry)>,
    /// Rank of the inverse of each U/D-edge permutation, and of each slice-edge permutation.
    inverse8: Vec<u16>,
    inverse4: [u8; 24],
    /// With the slice edges: one bit per column, set when the column's edge permutation is odd.
    odd_columns: Vec<u64>,
}

/// The corners of corner-permutation rank `rank`, all oriented.
pub(crate) fn corners_of(rank: u32) -> Corners {
    let mut c = Corners::IDENTITY;
    perm_unrank(rank, &mut c.perm);
    c
}

/// The edges of an element of H from its U/D-edge and slice-edge ranks, all oriented.
pub(crate) fn edges_of(ud: u32, slice: u32) -> Edges {
    let mut e = Edges::IDENTITY;
    perm_unrank(ud, &mut e.perm[..8]);
    let mut s = [0u8; 4];
    perm_unrank(slice, &mut s);
    for (slot, v) in e.perm[8..].iter_mut().zip(s) {
        *slot = 8 + v;
    }
    e
}

/// (U/D-edge rank, slice-edge rank) of edges in H.
pub(crate) fn edge_ranks(e: &Edges) -> (u32, u32) {
    debug_assert!(e.ori.iter().all(|&o| o == 0) && e.perm[..8].iter().all(|&p| p < 8));
    let slice: [u8; 4] = std::array::from_fn(|i| e.perm[8 + i] - 8);
    (perm_rank(&e.perm[..8]), perm_rank(&slice))
}

impl KociembaSpace {
    /// H or H' with rows reduced by the 16 symmetries of H.
    pub fn new(with_slice: bool) -> Self {
        Self::with_group(with_slice, SymmetryGroup::UdAxis)
    }

    /// H or H' with one row per corner permutation: a set of its positions that is not closed
    /// under symmetry (the positions of a coset of H reached so far) can be held.
    pub fn unreduced(with_slice: bool) -> Self {
        Self::with_group(with_slice, SymmetryGroup::Identity)
    }

    fn with_group(with_slice: bool, group: SymmetryGroup) -> Self {
        let classes = SymClasses::build(factorial(8), group, |s, raw| {
            perm_rank(&s.conjugate_corners(&corners_of(raw)).perm)
        });
        let moves = MoveSet::KociembaH.moves();
        let mut move_slot = [u8::MAX; Move::COUNT];
        for (i, m) in moves.iter().enumerate() {
            move_slot[m.index()] = i as u8;
        }
        let apply = |m: Move, raw: u32| perm_rank(&corners_of(raw).compose(&m.cube().corners).perm);
        // Rows in locality order: the turns of U and D (6 of the 10 moves) join them into orbits
        // of at most 16 rows (<U, D> acting on corner permutations, up to symmetry).
        let by_rep = ClassRows::build(classes.clone(), &moves, apply);
        let order = locality::row_order(
            by_rep.row_count(),
            by_rep.classes.class_of(perm_rank(&Cube::SOLVED.corners.perm)),
            moves.len(),
            |r, i| by_rep.target(r, i).0,
            |i| moves[i].face().is_multiple_of(3),
        );
        let class_rows = ClassRows::build(classes.renumbered(&order), &moves, apply);
        let classes = &class_rows.classes;
        let rows = classes.class_count() as u32;
        let right8 = moves
            .iter()
            .flat_map(|m| {
                (0..UD as u32).map(move |c| edge_ranks(&edges_of(c, 0).compose(&m.cube().edges)).0 as u16)
            })
            .collect();
        let conj8 = group
            .members()
            .flat_map(|s| {
                (0..UD as u32).map(move |c| edge_ranks(&s.conjugate_edges(&edges_of(c, 0))).0 as u16)
            })
            .collect();
        let right4 = moves
            .iter()
            .map(|m| {
                std::array::from_fn(|c| edge_ranks(&edges_of(0, c as u32).compose(&m.cube().edges)).1 as u8)
            })
            .collect();
        let conj4 = group
            .members()
            .map(|s| std::array::from_fn(|c| edge_ranks(&s.conjugate_edges(&edges_of(0, c as u32))).1 as u8))
            .collect();
        let inverse_rows = (0..rows)
            .map(|r| {
                let raw = perm_rank(&corners_of(classes.rep(r)).inverse().perm);
                (classes.class_of(raw), classes.to_rep(raw))
            })
            .collect();
        let inverse8 = (0..UD as u32).map(|c| edge_ranks(&edges_of(c, 0).inverse()).0 as u16).collect();
        let inverse4 = std::array::from_fn(|c| edge_ranks(&edges_of(0, c as u32).inverse()).1 as u8);
        let odd_columns = if with_slice {
            let slice_odd: Vec<bool> = (0..24).map(|s| edges_of(0, s).parity()).collect();
            let mut bits = vec![0u64; (UD * 24).div_ceil(64)];
            for ud in 0..UD as u32 {
                let ud_odd = corners_of(ud).parity();
                for (s, &odd) in slice_odd.iter().enumerate() {
                    if ud_odd != odd {
                        set_bit(&mut bits, ud * 24 + s as u32);
                    }
                }
            }
            bits
        } else {
            Vec::new()
        };

        KociembaSpace {
            odd_columns,
            with_slice,
            rows: class_rows,
            moves,
            move_slot,
            right8,
            conj8,
            right4,
            conj4,
            inverse_rows,
            inverse8,
            inverse4,
        }
    }

    /// The moves of H: U, U2, U', D, D2, D', R2, L2, F2, B2.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Number of positions: 8!·8!·4!/2 for H, 8!·8! for H'.
    pub fn order(&self) -> u64 {
        let ud = UD as u64;
        if self.with_slice {
            ud * ud * 12
        } else {
            ud * ud
        }
    }

    fn columns_per_ud(&self) -> u32 {
        if self.with_slice {
            24
        } else {
            1
        }
    }

    /// The rows: classes of the corner permutation rank under the 16 symmetries of H.
    pub fn classes(&self) -> &SymClasses {
        &self.rows.classes
    }

    /// The column map of conjugation by `s`, a member of the UD-axis group (whose member `k` is
    /// `Symmetry(k)`).
    pub fn symmetry_map(&self, s: Symmetry) -> KociembaMap<'_> {
        KociembaMap {
            first8: None,
            then8: &self.conj8[s.index() * UD..][..UD],
            first4: None,
            then4: &self.conj4[s.index()],
            slice: self.with_slice,
        }
    }

    /// The position at (row, column) as a cube (slice edges solved in H').
    pub fn position(&self, row: u32, column: u32) -> Cube {
        let per = self.columns_per_ud();
        Cube { corners: corners_of(self.rows.classes.rep(row)), edges: edges_of(column / per, column % per) }
    }

    /// (row, column) of a position of H (of H': its slice edges are ignored).
    pub fn locate(&self, x: &Cube) -> (u32, u32) {
        let raw = perm_rank(&x.corners.perm);
        let s = self.rows.classes.to_rep(raw);
        let (ud, slice) = edge_ranks(&s.conjugate_edges(&x.edges));
        (self.rows.classes.class_of(raw), if self.with_slice { ud * 24 + slice } else { ud })
    }
}

/// Column map: optionally right-multiply by a move, then conjugate by a symmetry.
#[derive(Clone, Copy)]
pub struct KociembaMap<'a> {
    first8: Option<&'a [u16]>,
    then8: &'a [u16],
    first4: Option<&'a [u8; 24]>,
    then4: &'a [u8; 24],
    slice: bool,
}

impl ColumnMapper for KociembaMap<'_> {
    #[inline]
    fn apply(&self, column: u32) -> u32 {
        let (ud, slice) = if self.slice { (column / 24, column % 24) } else { (column, 0) };
        let ud = self.first8.map_or(ud, |t| t[ud as usize] as u32);
        let ud = self.then8[ud as usize] as u32;
        if !self.slice {
            return ud;
        }
        let slice = self.first4.map_or(slice, |t| t[slice as usize] as u32);
        ud * 24 + self.then4[slice as usize] as u32
    }
}

impl RowIndex for KociembaSpace {
    type Mapper<'a> = KociembaMap<'a>;
    type Symmetric<'a> = KociembaMap<'a>;
    type Filter<'a> = AnyColumn;

    fn row_count(&self) -> u32 {
        self.rows.row_count()
    }

    fn column_count(&self) -> u32 {
        UD as u32 * self.columns_per_ud()
    }

    fn entry_count(&self) -> u64 {
        // With the slice edges, half the columns of a row have the wrong parity.
        self.row_count() as u64 * self.column_count() as u64 / if self.with_slice { 2 } else { 1 }
    }

    fn start(&self) -> (u32, u32) {
        self.locate(&Cube::SOLVED)
    }

    #[inline]
    fn transition(&self, row: u32, m: Move) -> (u32, KociembaMap<'_>) {
        let slot = self.move_slot[m.index()] as usize;
        assert!(slot < self.moves.len(), "{m} is not a move of H");
        let (target, s) = self.rows.target(row, slot);
        let mut map = self.symmetry_map(s);
        map.first8 = Some(&self.right8[slot * UD..][..UD]);
        map.first4 = Some(&self.right4[slot]);
        (target, map)
    }

    fn row_weight(&self, row: u32) -> u64 {
        self.rows.class_size(row)
    }

    fn stabilizer(&self, row: u32) -> Vec<KociembaMap<'_>> {
        self.rows.stabilizer(row).iter().map(|&s| self.symmetry_map(s)).collect()
    }

    fn inverses(&self, row: u32) -> Inverses<AnyColumn> {
        if self.inverse_rows[row as usize].0 == row {
            Inverses::Test(AnyColumn)
        } else {
            Inverses::Never
        }
    }

    /// Where [`Self::position`]`(row, column).inverse()` is: its corners' row and symmetry are
    /// the row's, its edge permutations are the inverses of the column's, conjugated by that
    /// symmetry (what [`Self::locate`] does, by table lookups).
    #[inline]
    fn locate_inverse(&self, row: u32, column: u32) -> (u32, u32) {
        let (inverse_row, s) = self.inverse_rows[row as usize];
        let per = self.columns_per_ud();
        let slice = if self.with_slice { self.inverse4[(column % per) as usize] as u32 } else { 0 };
        let inverse = self.inverse8[(column / per) as usize] as u32 * per + slice;
        (inverse_row, self.symmetry_map(s).apply(inverse))
    }

    fn mark_unreachable(&self, row: u32, bits: &mut [u64]) {
        if !self.with_slice {
            return;
        }
        // Corner and edge parities agree in H: the other half of the columns is never reached.
        let odd_row = corners_of(self.rows.classes.rep(row)).parity();
        for (b, &odd) in bits.iter_mut().zip(&self.odd_columns) {
            *b |= if odd_row { !odd } else { odd };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::SplitMix64;

    /// The turns of U and D keep a row within its orbit (at most 16 consecutive rows); the
    /// renumbered rows still locate their own representatives.
    #[test]
    fn rows_joined_by_turns_of_u_and_d_are_close() {
        for space in [KociembaSpace::new(false), KociembaSpace::unreduced(false)] {
            let classes = space.classes();
            let mut moved_far = 0;
            for row in 0..space.row_count() {
                assert_eq!(classes.class_of(classes.rep(row)), row);
                for (slot, m) in space.moves().iter().enumerate() {
                    let target = space.rows.target(row, slot).0;
                    if m.face() % 3 == 0 {
                        assert!(row.abs_diff(target) < 16, "{m} takes row {row} to {target}");
                    } else if row.abs_diff(target) >= 16 {
                        moved_far += 1;
                    }
                }
            }
            assert!(moved_far > 0, "the half turns join orbits");
        }
    }

    /// Cut into 2 to 16 runs of consecutive rows, the rows send at most half as many (row,
    /// move) images across runs as rows numbered by increasing representative.
    #[test]
    fn runs_of_rows_keep_most_images_home() {
        let space = KociembaSpace::new(false);
        let moves = space.moves();
        let by_rep = ClassRows::build(
            SymClasses::build(factorial(8), SymmetryGroup::UdAxis, |s, raw| {
                perm_rank(&s.conjugate_corners(&corners_of(raw)).perm)
            }),
            moves,
            |m, raw| perm_rank(&corners_of(raw).compose(&m.cube().corners).perm),
        );
        let rows = space.row_count();
        let crossing = |target: &dyn Fn(u32, usize) -> u32, runs: u32| {
            let run = |r: u32| r * runs / rows;
            (0..rows)
                .flat_map(|r| (0..moves.len()).map(move |m| (r, m)))
                .filter(|&(r, m)| run(r) != run(target(r, m)))
                .count()
        };
        for runs in [2, 4, 8, 16] {
            let ours = crossing(&|r, m| space.rows.target(r, m).0, runs);
            let old = crossing(&|r, m| by_rep.target(r, m).0, runs);
            assert!(2 * ours <= old, "{runs} runs: {ours} images cross against {old}");
        }
    }

    /// The table lookups of `locate_inverse` against building the inverse cube and locating it.
    #[test]
    fn inverses_located_by_tables_are_those_of_the_cubes() {
        let mut rng = SplitMix64::new(17);
        for with_slice in [false, true] {
            let space = KociembaSpace::new(with_slice);
            for row in 0..space.row_count() {
                for _ in 0..64 {
                    let column = rng.below(space.column_count() as u64) as u32;
                    let expected = space.locate(&space.position(row, column).inverse());
                    assert_eq!(space.locate_inverse(row, column), expected, "{with_slice} {row} {column}");
                }
            }
        }
    }
}
