//! The two BFS indexes behind the H48 tables.
//!
//! - [`SymProductSpace`]: rows are the symmetry classes of one coordinate A, columns the raw
//!   values of another coordinate B that moves and symmetries act on independently of A. A move
//!   takes row r to the class of `A(rep(r) m)`, and a column b to `conj(s, move(m, b))`, where s
//!   brings `A(rep(r) m)` to its representative. h0 is (cocsep, esep), two table lookups per
//!   column; the transposed (esep, cocsep) index counts the same space through other tables,
//!   which tests use as a second method; h11 is (cocsep, eoesep), whose columns are mapped by
//!   [`EoEsepColumns`] instead of tables.
//! - [`EoEsepSpace`]: rows are the classes of esep, columns eo. Conjugating eo depends on esep,
//!   so each (row, move) gets its own 2048-entry column table (782 x 18 x 4 KiB = 58 MB).
//!
//! Both are coset spaces, where the inverse of an entry is not defined: the engine's last
//! class column then repeats the class column, and nothing reports it.

use super::index::{AnyColumn, ClassRows, Inverses, RowIndex};
use crate::coord::h48::{CocsepTable, EoEsepColumns, EoEsepMap, H48Coords, EO, ESEP};
use crate::coord::{ColumnMapper, RawCoord, SymClasses};
use crate::cube::{Cube, Move, Symmetry};
use rayon::prelude::*;

/// Column map of [`SymProductSpace`]: optionally a move table row, then a conjugation row.
#[derive(Clone, Copy)]
pub struct TableMap<'a> {
    first: Option<&'a [u32]>,
    then: &'a [u32],
}

impl ColumnMapper for TableMap<'_> {
    #[inline]
    fn apply(&self, column: u32) -> u32 {
        let c = self.first.map_or(column, |t| t[column as usize]);
        self.then[c as usize]
    }
}

/// A column coordinate of a [`SymProductSpace`]: its size, and the column maps of a move
/// followed by a conjugation, and of a conjugation alone.
pub trait Columns: Sync {
    type Map<'a>: ColumnMapper + Copy
    where
        Self: 'a;
    fn size(&self) -> u32;
    /// Column c to `conj(s, move(m, c))`.
    fn moved(&self, m: Move, s: Symmetry) -> Self::Map<'_>;
    /// Column c to `conj(s, c)`.
    fn conjugated(&self, s: Symmetry) -> Self::Map<'_>;
}

impl Columns for RawCoord {
    type Map<'a> = TableMap<'a>;
    fn size(&self) -> u32 {
        self.size
    }
    fn moved(&self, m: Move, s: Symmetry) -> TableMap<'_> {
        TableMap { first: Some(self.move_row(m)), then: self.conj_row(s) }
    }
    fn conjugated(&self, s: Symmetry) -> TableMap<'_> {
        TableMap { first: None, then: self.conj_row(s) }
    }
}

impl Columns for EoEsepColumns {
    type Map<'a> = EoEsepMap<'a>;
    fn size(&self) -> u32 {
        ESEP * EO
    }
    fn moved(&self, m: Move, s: Symmetry) -> EoEsepMap<'_> {
        EoEsepColumns::moved(self, m, s)
    }
    fn conjugated(&self, s: Symmetry) -> EoEsepMap<'_> {
        EoEsepColumns::conjugated(self, s)
    }
}

/// Rows: classes of coordinate A under the 48 symmetries; columns: raw values of B.
pub struct SymProductSpace<C = RawCoord> {
    columns: C,
    moves: ClassRows,
    start: (u32, u32),
}

impl<C: Columns> SymProductSpace<C> {
    /// `solved` = (A, B) of the solved cube; `classes` are A's classes.
    pub fn new(rows: &RawCoord, classes: SymClasses, columns: C, solved: (u32, u32)) -> Self {
        let moves = ClassRows::build(classes, &Move::all().collect::<Vec<_>>(), |m, v| rows.apply(m, v));
        let s = moves.classes.to_rep(solved.0);
        let start = (moves.classes.class_of(solved.0), columns.conjugated(s).apply(solved.1));
        SymProductSpace { columns, moves, start }
    }

    pub fn classes(&self) -> &SymClasses {
        &self.moves.classes
    }

    /// (row, column) of the raw values (a, b).
    pub fn locate(&self, a: u32, b: u32) -> (u32, u32) {
        let s = self.moves.classes.to_rep(a);
        (self.moves.classes.class_of(a), self.columns.conjugated(s).apply(b))
    }

    /// The raw values (a, b) at (row, column).
    pub fn raw(&self, row: u32, column: u32) -> (u32, u32) {
        (self.moves.classes.rep(row), column)
    }

    /// The column maps of a move from `row` followed by each member of the target row's
    /// stabilizer, the identity first: their images together are the move's images closed
    /// under that stabilizer, so a target row's marks need no pass of closure afterwards.
    pub fn closed_transition(&self, row: u32, m: Move) -> impl Iterator<Item = C::Map<'_>> + '_ {
        let (target, s) = self.moves.target(row, m.index());
        std::iter::once(s)
            .chain(self.moves.stabilizer(target).iter().map(move |&t| t.then(s)))
            .map(move |u| self.columns.moved(m, u))
    }

    /// Every column of `row` that stands for the same position class as `column`.
    pub fn variants(&self, row: u32, column: u32) -> Vec<u32> {
        let mut v: Vec<u32> =
            std::iter::once(column).chain(self.stabilizer(row).iter().map(|m| m.apply(column))).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

impl SymProductSpace {
    /// h0: cocsep classes (3393 rows) x esep (34,650 columns).
    pub fn h0(coords: &H48Coords) -> Self {
        let cocsep = coords.cocsep_table();
        Self::new(
            &cocsep.coord,
            cocsep.classes,
            coords.esep_coord(),
            (coords.cocsep(&Cube::SOLVED), coords.esep(&Cube::SOLVED)),
        )
    }

    /// The same space as h0 through esep classes (782 rows) x cocsep (153,090 columns).
    pub fn h0_transposed(coords: &H48Coords) -> Self {
        let esep = coords.esep_coord();
        let classes = coords.esep_classes(&esep);
        Self::new(
            &esep,
            classes,
            coords.cocsep_coord(),
            (coords.esep(&Cube::SOLVED), coords.cocsep(&Cube::SOLVED)),
        )
    }
}

impl SymProductSpace<EoEsepColumns> {
    /// h11: cocsep classes (3393 rows) x eoesep (esep x 2048 + eo: 70,963,200 columns).
    pub fn h11(coords: &H48Coords) -> Self {
        let (cocsep, columns) = coords.h11_tables();
        Self::h11_from(coords, &cocsep, columns)
    }

    /// h11 from tables made already (a table build also writes them into its file).
    pub fn h11_from(coords: &H48Coords, cocsep: &CocsepTable, columns: EoEsepColumns) -> Self {
        Self::new(
            &cocsep.coord,
            cocsep.classes.clone(),
            columns,
            (coords.cocsep(&Cube::SOLVED), coords.eoesep(&Cube::SOLVED)),
        )
    }

    /// The column tables.
    pub fn columns(&self) -> &EoEsepColumns {
        &self.columns
    }

    /// The rows (classes and transitions) and the start, beside [`Self::columns`]: what
    /// [`Self::from_parts`] takes back.
    pub(crate) fn rows_and_start(&self) -> (&ClassRows, (u32, u32)) {
        (&self.moves, self.start)
    }

    /// The space from its parts read back; the start checked to be one of its entries.
    pub(crate) fn from_parts(
        columns: EoEsepColumns,
        moves: ClassRows,
        start: (u32, u32),
    ) -> Result<Self, &'static str> {
        if start.0 >= moves.row_count() || start.1 >= ESEP * EO {
            return Err("the start entry");
        }
        Ok(SymProductSpace { columns, moves, start })
    }
}

impl<C: Columns> RowIndex for SymProductSpace<C> {
    type Mapper<'a>
        = C::Map<'a>
    where
        C: 'a;
    type Symmetric<'a>
        = C::Map<'a>
    where
        C: 'a;
    type Filter<'a>
        = AnyColumn
    where
        C: 'a;

    fn row_count(&self) -> u32 {
        self.moves.row_count()
    }
    fn column_count(&self) -> u32 {
        self.columns.size()
    }
    fn entry_count(&self) -> u64 {
        self.row_count() as u64 * self.column_count() as u64
    }
    fn start(&self) -> (u32, u32) {
        self.start
    }
    #[inline]
    fn transition(&self, row: u32, m: Move) -> (u32, C::Map<'_>) {
        let (target, s) = self.moves.target(row, m.index());
        (target, self.columns.moved(m, s))
    }
    fn row_weight(&self, row: u32) -> u64 {
        self.moves.class_size(row)
    }
    fn stabilizer(&self, row: u32) -> Vec<C::Map<'_>> {
        self.moves.stabilizer(row).iter().map(|&s| self.columns.conjugated(s)).collect()
    }
    fn inverses(&self, _: u32) -> Inverses<AnyColumn> {
        Inverses::Undefined
    }
    fn locate_inverse(&self, _: u32, _: u32) -> (u32, u32) {
        unreachable!("a coset space has no inverses")
    }
}

/// A full column table: entry c is the image of column c.
#[derive(Clone, Copy)]
pub struct FullMap<'a>(&'a [u16]);

impl ColumnMapper for FullMap<'_> {
    #[inline]
    fn apply(&self, column: u32) -> u32 {
        self.0[column as usize] as u32
    }
}

/// Rows: esep classes (782); columns: eo (2048). The space of the H48 solver's edge fallback table.
pub struct EoEsepSpace {
    moves: ClassRows,
    /// Per (row, move): the column table.
    maps: Vec<u16>,
    /// Per row, per stabilizer member (in `moves.stabilizers` order): the column table.
    stabilizer_maps: Vec<Vec<u16>>,
    start: (u32, u32),
}

impl EoEsepSpace {
    /// The column maps are h11's (`columns`) restricted to one esep value each: lookups in
    /// their tables rather than a conjugated position per entry.
    pub fn new(coords: &H48Coords, columns: &EoEsepColumns) -> Self {
        let esep = columns.esep();
        let moves = ClassRows::build(coords.esep_classes(esep), &Move::all().collect::<Vec<_>>(), |m, v| {
            esep.apply(m, v)
        });
        let rows = moves.row_count();
        let eo_of = |map: EoEsepMap, e: u32, o: u32| (map.apply(e * EO + o) % EO) as u16;
        let maps = (0..rows)
            .into_par_iter()
            .flat_map_iter(|r| {
                let rep = moves.classes.rep(r);
                let moves = &moves;
                Move::all().flat_map(move |m| {
                    let map = columns.moved(m, moves.target(r, m.index()).1);
                    (0..EO).map(move |o| eo_of(map, rep, o))
                })
            })
            .collect();
        let stabilizer_maps = (0..rows)
            .map(|r| {
                let rep = moves.classes.rep(r);
                moves
                    .stabilizer(r)
                    .iter()
                    .flat_map(|&s| (0..EO).map(move |o| eo_of(columns.conjugated(s), rep, o)))
                    .collect()
            })
            .collect();
        let solved = coords.eoesep(&Cube::SOLVED);
        let s = moves.classes.to_rep(solved / EO);
        let start = (moves.classes.class_of(solved / EO), columns.conjugate(s, solved) % EO);
        EoEsepSpace { moves, maps, stabilizer_maps, start }
    }

    pub fn classes(&self) -> &SymClasses {
        &self.moves.classes
    }
}

impl RowIndex for EoEsepSpace {
    type Mapper<'a> = FullMap<'a>;
    type Symmetric<'a> = FullMap<'a>;
    type Filter<'a> = AnyColumn;

    fn row_count(&self) -> u32 {
        self.moves.row_count()
    }
    fn column_count(&self) -> u32 {
        EO
    }
    fn entry_count(&self) -> u64 {
        self.row_count() as u64 * EO as u64
    }
    fn start(&self) -> (u32, u32) {
        self.start
    }
    #[inline]
    fn transition(&self, row: u32, m: Move) -> (u32, FullMap<'_>) {
        let (target, _) = self.moves.target(row, m.index());
        let k = row as usize * Move::COUNT + m.index();
        (target, FullMap(&self.maps[k * EO as usize..][..EO as usize]))
    }
    fn row_weight(&self, row: u32) -> u64 {
        self.moves.class_size(row)
    }
    fn stabilizer(&self, row: u32) -> Vec<FullMap<'_>> {
        self.stabilizer_maps[row as usize].chunks(EO as usize).map(FullMap).collect()
    }
    fn inverses(&self, _: u32) -> Inverses<AnyColumn> {
        Inverses::Undefined
    }
    fn locate_inverse(&self, _: u32, _: u32) -> (u32, u32) {
        unreachable!("a coset space has no inverses")
    }
}

impl ColumnMapper for EoEsepMap<'_> {
    #[inline]
    fn apply(&self, column: u32) -> u32 {
        EoEsepMap::apply(self, column)
    }

    fn or_images(&self, row: &[u64], out: &mut [u64]) {
        EoEsepMap::or_images(self, row, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{random_cube, SplitMix64};

    #[test]
    fn h11_transitions_follow_positions() {
        let coords = H48Coords;
        let h11 = SymProductSpace::h11(&coords);
        // The H48 solver's documentation: h11 has 3393 x 34,650 x 2048 entries.
        assert_eq!(h11.entry_count(), 240_778_137_600);
        let (row, column) = h11.start();
        assert_eq!(h11.raw(row, column), (coords.cocsep(&Cube::SOLVED), coords.eoesep(&Cube::SOLVED)));
        let mut rng = SplitMix64::new(1112);
        for _ in 0..300 {
            let x = random_cube(&mut rng);
            let (row, column) = h11.locate(coords.cocsep(&x), coords.eoesep(&x));
            // The position the entry stands for, on its row's representative.
            let (c, e) = h11.raw(row, column);
            let z = coords.position(c, e);
            for m in Move::all() {
                let (target, map) = h11.transition(row, m);
                let y = z.compose(m.cube());
                let (want_row, want_column) = h11.locate(coords.cocsep(&y), coords.eoesep(&y));
                assert_eq!(target, want_row);
                assert!(h11.variants(want_row, want_column).contains(&map.apply(column)), "move {m:?}");
            }
        }
    }

    #[test]
    fn a_transition_closed_under_the_stabilizer_maps_as_the_move_then_each_member() {
        let h11 = SymProductSpace::h11(&H48Coords);
        let mut rng = SplitMix64::new(373);
        let mut checked = 0;
        for row in 0..h11.row_count() {
            for m in Move::all() {
                let (target, map) = h11.transition(row, m);
                let stab = h11.stabilizer(target);
                if stab.is_empty() {
                    continue;
                }
                let closed: Vec<_> = h11.closed_transition(row, m).collect();
                assert_eq!(closed.len(), stab.len() + 1);
                for _ in 0..8 {
                    let c = rng.below(h11.column_count() as u64) as u32;
                    let mut want: Vec<u32> = std::iter::once(map.apply(c))
                        .chain(stab.iter().map(|t| t.apply(map.apply(c))))
                        .collect();
                    let mut got: Vec<u32> = closed.iter().map(|u| u.apply(c)).collect();
                    assert_eq!(got[0], want[0], "the move itself first");
                    want.sort_unstable();
                    got.sort_unstable();
                    assert_eq!(got, want, "row {row}, move {m:?}");
                }
                checked += 1;
            }
        }
        assert!(checked > 1000, "{checked} transitions into rows with a stabilizer");
    }
}
