//! The symmetry-reduced index of rows x columns and the per-(row, move) maps (docs/row-bfs.md).
//!
//! A position x of one piece kind is stored at (row, column): the row is the symmetry class of
//! its block-row value A(x) (see `coord::blocks`), and the column is the block ordering of
//! `s x s^-1`, where `s` brings A(x) to the class representative. For a row r and a move m, every
//! column of r lands in one target row r' and the columns map through one bijection that acts
//! block by block: target block j takes its ordering from one source block through
//! `o -> left . o . right` in S4 (a move only changes positions; the symmetry relabels pieces
//! and positions). So a [`ColumnMap`] is 9 bytes, found once per (row, move) from three probes.
//!
//! Rows whose representative has a non-trivial stabilizer hold, for one position class, every
//! column the stabilizer relates; `stabilizer_maps` lists those column maps so the engine can
//! close a row after writing it.

mod bytes;
mod filter;
mod groups;
mod maps;
mod transpose;

pub use bytes::IndexBytesError;
pub use filter::BlockFilter;
pub use maps::{ColumnMap, Contributions, MapTable};

use super::index::{Inverses, RowIndex};
use super::locality::{self, RowOrder};
use crate::coord::{BlockLayout, Part, RowConjugation, SymClasses};
use crate::cube::{Move, Pieces, Symmetry, SymmetryGroup};
use rayon::prelude::*;

/// The pull weight of a row space whose maps pull eight groups at a time (see
/// [`RowIndex::pull_weight`]).
const PULL_WEIGHT: u64 = 16;

/// Where a row goes under one move.
#[derive(Clone, Copy, Debug)]
pub struct Transition {
    pub target: u32,
    pub map: ColumnMap,
}

/// A transition as a space keeps it: the target row and its map's number in the space's
/// [`MapTable`] (8 bytes against 16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Step {
    target: u32,
    map: u32,
}

/// Whether [`RowSpace::with_classes`] probes the rows' transitions: a coordinator whose workers
/// expand every level needs none, which for edges saves most of the index's build time and
/// 0.4 GiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transitions {
    Probe,
    Skip,
}

/// Rows (symmetry classes of a block-row coordinate) x columns (block orderings), with the
/// move transitions of every row (unless built with [`Transitions::Skip`]).
pub struct RowSpace<const N: usize, const O: u8> {
    layout: BlockLayout<N, O>,
    classes: SymClasses,
    /// The action the classes were built with (to classify row values once their tables are
    /// dropped: see [`Self::shrink`]).
    conj: RowConjugation<N, O>,
    block_perms: Vec<[u8; 3]>,
    /// Every (row, move) transition, row by row, naming its map in `maps`.
    steps: Vec<Step>,
    maps: MapTable,
    stabilizer_maps: Vec<Vec<ColumnMap>>,
    /// Raw row values of every class, grouped by class (`members[member_start[r]..][..size]`).
    members: Vec<u32>,
    member_start: Vec<u32>,
    /// Tells this space's layout from another's in per-thread caches ([`next_space_id`]).
    id: u64,
}

/// A number no other space built in this process has.
fn next_space_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl<const N: usize, const O: u8> RowSpace<N, O>
where
    Pieces<N, O>: Part,
{
    /// Builds the classes of the layout's row values under all 48 symmetries and probes the
    /// map of every (row, face turn), so one space serves every metric.
    pub fn new(layout: BlockLayout<N, O>) -> Self {
        let classes = Self::build_classes(&layout);
        Self::with_classes(layout, classes, Transitions::Probe, RowOrder::Representative)
    }

    /// The symmetry classes of the layout's row values (the rows), the cheap first step.
    pub fn build_classes(layout: &BlockLayout<N, O>) -> SymClasses {
        let conj = layout.row_conjugation();
        SymClasses::build(layout.row_count(), SymmetryGroup::Full, |s, raw| conj.apply(s, raw))
    }

    /// Bytes the space will hold once built on these classes (class tables, members, and the
    /// transitions if probed).
    pub fn memory_bytes(classes: &SymClasses, transitions: Transitions) -> u64 {
        let raw = classes.raw_count() as u64;
        let rows = classes.class_count() as u64;
        let per_row = match transitions {
            Transitions::Probe => Move::COUNT * std::mem::size_of::<Step>(),
            Transitions::Skip => 0,
        } + std::mem::size_of::<Vec<ColumnMap>>();
        raw * (4 + 1 + 4) + rows * (4 + 4 + 8) + rows * per_row as u64
    }

    /// The space on these classes, with the transitions of every row probed, or without them
    /// for a process that locates and counts but never expands a row; its rows renumbered in
    /// locality order if `order` asks (which needs the transitions).
    pub fn with_classes(
        layout: BlockLayout<N, O>,
        classes: SymClasses,
        transitions: Transitions,
        order: RowOrder,
    ) -> Self {
        let block_perms = Symmetry::all().map(|s| layout.block_permutation(s)).collect();
        let conj = layout.row_conjugation();
        let mut space = RowSpace {
            layout,
            classes,
            conj,
            block_perms,
            steps: Vec::new(),
            maps: MapTable::default(),
            stabilizer_maps: Vec::new(),
            members: Vec::new(),
            member_start: Vec::new(),
            id: next_space_id(),
        };
        if transitions == Transitions::Probe {
            (space.steps, space.maps) = space.probe_transitions();
        }
        if order == RowOrder::Locality {
            space.renumber_in_locality_order();
        }
        (space.members, space.member_start) = group_by_class(&space.classes);
        let rows = space.row_count();
        space.stabilizer_maps = (0..rows)
            .into_par_iter()
            .map(|r| {
                let stab = space.classes.stabilizer(r);
                Symmetry::all()
                    .filter(|s| *s != Symmetry::IDENTITY && stab >> s.index() & 1 == 1)
                    .map(|s| {
                        let images = ColumnMap::probe_columns(space.blocks())
                            .map(|c| space.layout.column(&space.position(r, c).conjugate(s)));
                        ColumnMap::from_probes(space.blocks(), space.block_perms[s.index()], images)
                    })
                    .collect()
            })
            .collect();
        space
    }

    /// Renumbers the rows in locality order ([`locality::row_order`]), so that the parts a
    /// cluster cuts send few images to other owners: the six half turns join the rows into
    /// orbits (the half-turn group is normalized by all 48 symmetries, so its orbits are
    /// unions of classes), and the quarter turns join the orbits. Made from the probed
    /// transitions, which are probed first in the order by representative: their class-table
    /// lookups then stay in cache (in locality order they took 8.0 s against 5.8 for edges).
    fn renumber_in_locality_order(&mut self) {
        assert!(self.has_transitions(), "the locality order is made from the rows' transitions");
        let n = Move::COUNT;
        let steps = &self.steps;
        let order = locality::row_order(
            self.row_count(),
            self.start().0,
            n,
            |r, i| steps[r as usize * n + i].target,
            |i| Move::from_index(i).turns() == 2,
        );
        let mut new_of = vec![0u32; order.len()];
        for (k, &old) in order.iter().enumerate() {
            new_of[old as usize] = k as u32;
        }
        let renumbered = order
            .par_iter()
            .flat_map_iter(|&old| {
                let new_of = &new_of;
                steps[old as usize * n..][..n]
                    .iter()
                    .map(move |t| Step { target: new_of[t.target as usize], map: t.map })
            })
            .collect();
        self.steps = renumbered;
        self.classes = self.classes.renumbered(&order);
    }

    /// Every row's transition under every face turn, rows in order, with the table of their
    /// maps.
    fn probe_transitions(&self) -> (Vec<Step>, MapTable) {
        let probed: Vec<Transition> = (0..self.row_count())
            .into_par_iter()
            .flat_map_iter(|r| {
                let probes = ColumnMap::probe_columns(self.blocks()).map(|c| self.position(r, c));
                Move::all().map(move |m| self.probe_transition(&probes, m))
            })
            .collect();
        let (table, ids) = MapTable::number(&probed, |t| t.map);
        let steps = probed.par_iter().zip(ids).map(|(t, map)| Step { target: t.target, map }).collect();
        (steps, table)
    }

    /// The transition of a row under `m`, from the row's positions at the probe columns. All
    /// of them land in one row (a move acts on row values), located once.
    fn probe_transition(&self, probes: &[Pieces<N, O>; 3], m: Move) -> Transition {
        let ys = probes.map(|x| x.compose(Pieces::<N, O>::of(m.cube())));
        let raw = self.layout.row(&ys[0]);
        debug_assert!(ys.iter().all(|y| self.layout.row(y) == raw));
        let s = self.classes.to_rep(raw);
        let images = ys.map(|y| self.layout.column(&y.conjugate(s)));
        Transition {
            target: self.classes.class_of(raw),
            map: ColumnMap::from_probes(self.blocks(), self.block_perms[s.index()], images),
        }
    }

    fn blocks(&self) -> usize {
        self.layout.block_count()
    }

    /// Whether the rows' transitions were probed ([`Transitions::Probe`]).
    pub fn has_transitions(&self) -> bool {
        !self.steps.is_empty()
    }

    pub fn layout(&self) -> &BlockLayout<N, O> {
        &self.layout
    }

    pub fn classes(&self) -> &SymClasses {
        &self.classes
    }

    pub fn row_count(&self) -> u32 {
        self.classes.class_count() as u32
    }

    pub fn column_count(&self) -> u32 {
        self.layout.column_count()
    }

    /// Number of positions in the space: raw row values x columns.
    pub fn order(&self) -> u64 {
        self.layout.row_count() as u64 * self.column_count() as u64
    }

    /// The position stored at (row, column).
    pub fn position(&self, row: u32, column: u32) -> Pieces<N, O> {
        self.layout.decode(self.classes.rep(row), column)
    }

    /// (row, column) of a position: its class row and the column of its conjugate that lies
    /// in the representative row (one of them, when the row is self-symmetric).
    pub fn locate(&self, x: &Pieces<N, O>) -> (u32, u32) {
        let raw = self.layout.row(x);
        let (class, s) = self.classes.classify(raw, |s, v| self.conj.apply(s, v));
        (class, self.layout.column(&x.conjugate(s)))
    }

    /// Drops what only building the space needs, most of its memory for edges (the class and
    /// member tables of every raw row value, 9 bytes each: 0.6 GiB): rows are then located by
    /// conjugation (see [`SymClasses::classify`]), which a search does only to count
    /// self-inverse classes. A worker that owns rows needs the memory for them.
    pub fn shrink(&mut self) {
        self.classes.drop_tables();
        self.members = Vec::new();
        self.members.shrink_to_fit();
    }

    /// Runs `f` on each raw row value of class `row` with its place in the list: from the
    /// member table, or, in a shrunk space, as listed once per row and thread (for this and for
    /// locating inverses; a value may then come more than once).
    fn each_member(&self, row: u32, mut f: impl FnMut(usize, u32)) {
        if !self.members.is_empty() {
            let start = self.member_start[row as usize] as usize;
            let end = self.member_start[row as usize + 1] as usize;
            self.members[start..end].iter().enumerate().for_each(|(i, &m)| f(i, m));
        } else {
            self.with_listed_members(row, |members| {
                members.iter().enumerate().for_each(|(i, &(m, _))| f(i, m))
            });
        }
    }

    /// Where `row` goes under face turn `m`. Panics in a space built with [`Transitions::Skip`].
    #[inline]
    pub fn transition(&self, row: u32, m: Move) -> Transition {
        let step = self.step(row, m);
        Transition { target: step.target, map: self.maps.map(step.map) }
    }

    #[inline]
    fn step(&self, row: u32, m: Move) -> Step {
        debug_assert!(!self.steps.is_empty(), "a row space built without transitions expands no row");
        self.steps[row as usize * Move::COUNT + m.index()]
    }

    /// Column maps of the non-identity members of the row's stabilizer.
    #[inline]
    pub fn stabilizer_maps(&self, row: u32) -> &[ColumnMap] {
        &self.stabilizer_maps[row as usize]
    }

    /// Number of raw row values the row stands for (48 / |stabilizer|): each entry of the row
    /// counts for that many positions.
    #[inline]
    pub fn class_size(&self, row: u32) -> u32 {
        self.classes.class_size(row)
    }
}

/// All raw values sorted by class, with each class's start offset (plus a final end offset).
fn group_by_class(classes: &SymClasses) -> (Vec<u32>, Vec<u32>) {
    let n = classes.class_count();
    let mut start = vec![0u32; n + 1];
    for raw in 0..classes.raw_count() as u32 {
        start[classes.class_of(raw) as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut members = vec![0u32; classes.raw_count()];
    for raw in 0..classes.raw_count() as u32 {
        let c = classes.class_of(raw) as usize;
        members[fill[c] as usize] = raw;
        fill[c] += 1;
    }
    (members, start)
}

impl<const N: usize, const O: u8> RowIndex for RowSpace<N, O>
where
    Pieces<N, O>: Part,
{
    type Mapper<'a> = Contributions;
    type Symmetric<'a> = ColumnMap;
    type Filter<'a> = BlockFilter;

    fn row_count(&self) -> u32 {
        RowSpace::row_count(self)
    }

    fn column_count(&self) -> u32 {
        RowSpace::column_count(self)
    }

    fn entry_count(&self) -> u64 {
        self.row_count() as u64 * self.column_count() as u64
    }

    fn start(&self) -> (u32, u32) {
        self.locate(&Pieces::<N, O>::IDENTITY)
    }

    #[inline]
    fn transition(&self, row: u32, m: Move) -> (u32, Contributions) {
        let step = self.step(row, m);
        (step.target, self.maps.contributions(step.map))
    }

    fn row_weight(&self, row: u32) -> u64 {
        self.class_size(row) as u64
    }

    /// Where the processor pulls eight groups at a time, a pull's cost per (row, move) hardly
    /// depends on the density, and it pays once the frontier holds a sixteenth of the
    /// unvisited entries (edges, HTM: from depth 11, where it measured 33.6 s against 57.6
    /// pushed; docs/kernels.md, "Edges: pulled by groups").
    fn pull_weight(&self) -> u64 {
        if crate::coord::flips::available() {
            PULL_WEIGHT
        } else {
            1
        }
    }

    fn stabilizer(&self, row: u32) -> Vec<ColumnMap> {
        self.stabilizer_maps(row).to_vec()
    }

    fn inverses(&self, row: u32) -> Inverses<BlockFilter> {
        Inverses::Test(self.inverse_filter(row))
    }

    fn locate_inverse(&self, row: u32, column: u32) -> (u32, u32) {
        let x = self.position(row, column).inverse();
        if self.classes.has_tables() {
            return self.locate(&x);
        }
        // A shrunk space (a worker's) locates by trying every symmetry; the inverses a search
        // locates are mostly in the row they came from, whose members (and the symmetry that
        // takes each to the representative) are worked out once per row and thread.
        match self.to_rep_in_row(row, self.layout.row(&x)) {
            Some(s) => (row, self.layout.column(&x.conjugate(s))),
            None => self.locate(&x),
        }
    }

    /// A shrunk space answers from the row's members alone: an inverse whose row value is
    /// none of them lies in another row, which is then not looked for.
    fn inverse_in_row(&self, row: u32, column: u32) -> Option<u32> {
        let x = self.position(row, column).inverse();
        if self.classes.has_tables() {
            let (r, c) = self.locate(&x);
            return (r == row).then_some(c);
        }
        let s = self.to_rep_in_row(row, self.layout.row(&x))?;
        Some(self.layout.column(&x.conjugate(s)))
    }
}

/// The last class whose members [`RowSpace::to_rep_in_row`] listed on a thread.
struct RowMembers {
    /// The space ([`RowSpace::id`]: the members depend only on its layout) and the class's
    /// representative.
    space: u64,
    rep: u32,
    /// The class's raw values, each with the symmetry that takes it to the representative.
    members: Vec<(u32, Symmetry)>,
}

thread_local! {
    static ROW_MEMBERS: std::cell::RefCell<RowMembers> =
        const { std::cell::RefCell::new(RowMembers { space: 0, rep: 0, members: Vec::new() }) };
}

impl<const N: usize, const O: u8> RowSpace<N, O>
where
    Pieces<N, O>: Part,
{
    /// A symmetry s with `s raw s^-1` the representative of class `row`, if `raw` is one of the
    /// class's raw row values: of those that do, the one of the smallest index, so that the
    /// answer does not depend on the order of the list.
    fn to_rep_in_row(&self, row: u32, raw: u32) -> Option<Symmetry> {
        self.with_listed_members(row, |members| {
            members.iter().filter(|&&(m, _)| m == raw).map(|&(_, s)| s).min_by_key(|s| s.index())
        })
    }

    /// Runs `f` on the raw row values of class `row`, one per symmetry of the group (a value
    /// comes as often as its symmetries give it), each with a symmetry that takes it to the
    /// representative: listed once per row and thread (the last row listed is kept), as a
    /// shrunk space has no member table. Neither sorted nor made distinct: a row's inverse
    /// filter and the inverses located in it need neither, and sorting every row's list took
    /// as long as conjugating it.
    fn with_listed_members<T>(&self, row: u32, f: impl FnOnce(&[(u32, Symmetry)]) -> T) -> T {
        let rep = self.classes.rep(row);
        ROW_MEMBERS.with_borrow_mut(|last| {
            if (last.space, last.rep) != (self.id, rep) || last.members.is_empty() {
                // m = s rep s^-1, so s^-1 takes m back to rep.
                let members = &mut last.members;
                members.clear();
                members
                    .extend(self.classes.group().members().map(|s| (self.conj.apply(s, rep), s.inverse())));
                (last.space, last.rep) = (self.id, rep);
            }
            f(&last.members)
        })
    }
}
