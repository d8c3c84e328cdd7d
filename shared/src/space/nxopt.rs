//! nxopt's index: rows are the 9930 classes of the corner coordinate under the 16
//! UD-axis symmetries, numbered as nxopt numbers them (by smallest member, which is our
//! representative), columns the edge coordinate of an EOx EPy table with the flips innermost
//! ([`search_column`]: a level's bits are the table's fields transposed per 64 fields and 64
//! flips, [`crate::nxopt::LevelWriter`]). The fields that hold no entry (group minima and field
//! 511 of each block) are never reached. Columns are mapped by [`NxoptColumns`] (factored maps
//! that stay in cache); [`edge_columns`], the full tables in the table's layout, is the
//! reference tests compare with.

use super::h48::Columns;
use super::SymProductSpace;
use crate::coord::nxopt::{
    corner_coord, corners_of, edge_coord, edges_of, search_column, NxoptKind, CORNER_VALUES,
};
use crate::coord::nxopt_columns::{NxoptColumns, NxoptMap};
use crate::coord::{RawCoord, SymClasses};
use crate::cube::{Cube, Move, Symmetry, SymmetryGroup};

/// The corner coordinate with its move and conjugation tables.
pub fn corner_rows() -> RawCoord {
    let on = |c: u32, f: &dyn Fn(Cube) -> Cube| {
        corner_coord(&f(Cube { corners: corners_of(c), ..Cube::SOLVED }).corners)
    };
    RawCoord::build(
        CORNER_VALUES,
        SymmetryGroup::UdAxis,
        |m, c| on(c, &|x| x.compose(m.cube())),
        |s, c| on(c, &|x| s.conjugate(&x)),
    )
}

/// The edge coordinate of `kind` with its tables.
pub fn edge_columns(kind: NxoptKind) -> RawCoord {
    let on = |e: u32, f: &dyn Fn(Cube) -> Cube| match edges_of(kind, e) {
        Some(edges) => edge_coord(kind, &f(Cube { edges, ..Cube::SOLVED }).edges),
        None => e,
    };
    RawCoord::build(
        kind.columns(),
        SymmetryGroup::UdAxis,
        |m, e| on(e, &|x| x.compose(m.cube())),
        |s, e| on(e, &|x| s.conjugate(&x)),
    )
}

/// The index of table `kind`.
pub fn nxopt_space(kind: NxoptKind) -> SymProductSpace<NxoptColumns> {
    let rows = corner_rows();
    let classes = SymClasses::build(CORNER_VALUES, SymmetryGroup::UdAxis, |s, c| rows.conjugate(s, c));
    let solved =
        (corner_coord(&Cube::SOLVED.corners), search_column(kind, edge_coord(kind, &Cube::SOLVED.edges)));
    SymProductSpace::new(&rows, classes, NxoptColumns::new(kind), solved)
}

impl Columns for NxoptColumns {
    type Map<'a> = NxoptMap<'a>;
    fn size(&self) -> u32 {
        NxoptColumns::size(self)
    }
    fn moved(&self, m: Move, s: Symmetry) -> NxoptMap<'_> {
        NxoptColumns::moved(self, m, s)
    }
    fn conjugated(&self, s: Symmetry) -> NxoptMap<'_> {
        NxoptColumns::conjugated(self, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coord::nxopt::ROWS;
    use crate::cube::{random_cube, Move, SplitMix64};
    use crate::space::RowIndex;

    #[test]
    fn rows_are_nxopts_and_moves_follow_positions() {
        let kind = NxoptKind { eo: 2, ep: 2 };
        let space = nxopt_space(kind);
        assert_eq!(space.row_count(), ROWS);
        // The identity: row 0, table column 2 (field 2 of the first block), no flips.
        assert_eq!(space.start(), (0, 2 * kind.e2()));
        let rows = corner_rows();
        let columns = edge_columns(kind);
        let mut rng = SplitMix64::new(9930);
        for _ in 0..200 {
            let x = random_cube(&mut rng);
            let (c, e) = (corner_coord(&x.corners), edge_coord(kind, &x.edges));
            for m in Move::all() {
                let y = x.compose(m.cube());
                assert_eq!(rows.apply(m, c), corner_coord(&y.corners));
                assert_eq!(columns.apply(m, e), edge_coord(kind, &y.edges));
            }
            for s in SymmetryGroup::UdAxis.members() {
                let y = s.conjugate(&x);
                assert_eq!(rows.conjugate(s, c), corner_coord(&y.corners));
                assert_eq!(columns.conjugate(s, e), edge_coord(kind, &y.edges), "{s:?}");
            }
        }
    }
}
