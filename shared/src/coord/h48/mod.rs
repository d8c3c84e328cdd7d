//! The coordinates of the H48 solver's documentation, in the solver's own numbering ([`solver`]):
//!
//! - *cocsep*: corner orientation and which tetrad's piece sits at each corner position, as
//!   the solver's raw value 128 x co + csep (0 .. 279,935, of which 153,090 occur);
//! - *esep*: which edge slice's piece sits at each edge position (495 x 70 = 34,650 values), and
//!   *eo*: the flips of the edges at the solver's positions 1..11 (2^11 values, position 0
//!   follows), together the column value `esep * 2048 + eo` of h11. hN keeps the N highest eo
//!   bits (the E slice first, then DR, DL, UL, UR, DF, DB, UB), so hN's column is `eoesep >>
//!   (11 - N)`.
//!
//! The target subgroup (every piece in its own tetrad or slice, and oriented) is invariant under
//! all 48 symmetries, so each coordinate is acted on by moves (right multiplication) and by
//! conjugation, which [`RawCoord`] tabulates. Classes and their numbering follow the solver
//! (docs/h48-tables.md), so table rows are the solver's rows.

pub mod solver;

use super::flips::{self, FlipInverse};
use super::{RawCoord, SymClasses};
use crate::cube::{Cube, Move, Symmetry, SymmetryGroup, SYMMETRY_COUNT};
use rayon::prelude::*;
use solver::{cocsep_occurs, solver_move, solver_sym, sym_index, COCSEP_RAW};

/// Number of esep values: C(12,4) x C(8,4).
pub const ESEP: u32 = 34_650;
/// Number of eo values.
pub const EO: u32 = 2048;
/// Number of cocsep values that occur: C(8,4) x 3^7.
pub const COCSEP: u32 = 153_090;
/// Number of cocsep classes under the 48 symmetries.
pub const COCSEP_CLASSES: u32 = 3393;
/// A word of the cocsep table for a value that does not occur.
pub const NO_WORD: u32 = u32::MAX;

/// The cocsep coordinate with the solver's classes: per raw value the word `class << 16 |
/// ttrep << 8 | depth` of the solver's cocsep table (`NO_WORD` where the value does not occur).
pub struct CocsepTable {
    pub coord: RawCoord,
    pub classes: SymClasses,
    pub words: Vec<u32>,
}

/// Encoders of the three coordinates, their tables, and positions that have given values.
#[derive(Default)]
pub struct H48Coords;

impl H48Coords {
    pub fn cocsep(&self, x: &Cube) -> u32 {
        solver::cocsep(x)
    }

    /// esep x 2048 + eo.
    pub fn eoesep(&self, x: &Cube) -> u32 {
        solver::esep(x) * EO + solver::eo(x)
    }

    pub fn esep(&self, x: &Cube) -> u32 {
        solver::esep(x)
    }

    pub fn eo(&self, x: &Cube) -> u32 {
        solver::eo(x)
    }

    /// A position with the given cocsep and eoesep values.
    pub fn position(&self, cocsep: u32, eoesep: u32) -> Cube {
        solver::position(cocsep, eoesep / EO, eoesep % EO)
    }

    /// The eoesep value of `s x s^-1` for any x with eoesep value `v`.
    pub fn conjugate_eoesep(&self, s: Symmetry, v: u32) -> u32 {
        self.eoesep(&s.conjugate(&solver::edge_position(v / EO, v % EO)))
    }

    /// cocsep with its tables, over all raw values; a value that does not occur maps to itself.
    pub fn cocsep_coord(&self) -> RawCoord {
        let on = |v: u32, f: &dyn Fn(Cube) -> Cube| {
            if cocsep_occurs(v) {
                solver::cocsep(&f(solver::cocsep_position(v)))
            } else {
                v
            }
        };
        RawCoord::build(
            COCSEP_RAW,
            SymmetryGroup::Full,
            |m, v| on(v, &|x| x.compose(m.cube())),
            |s, v| on(v, &|x| s.conjugate(&x)),
        )
    }

    /// cocsep with the solver's classes, representatives, ttrep and distances (docs/h48-tables.md).
    pub fn cocsep_table(&self) -> CocsepTable {
        let coord = self.cocsep_coord();
        let words = solver_cocsep_words(&coord);
        let class_of = words.iter().map(|&w| if w == NO_WORD { u32::MAX } else { w >> 16 }).collect();
        let to_rep = words
            .iter()
            .map(|&w| if w == NO_WORD { 0 } else { solver_sym((w >> 8 & 0xff) as usize).0 })
            .collect();
        let mut reps = vec![0u32; COCSEP_CLASSES as usize];
        for (v, &w) in words.iter().enumerate() {
            if w != NO_WORD && w >> 8 & 0xff == 0 {
                reps[(w >> 16) as usize] = v as u32;
            }
        }
        let classes =
            SymClasses::from_representatives(SymmetryGroup::Full, class_of, to_rep, reps, |s, v| {
                coord.conjugate(s, v)
            });
        CocsepTable { coord, classes, words }
    }

    /// cocsep's table and h11's column tables, made side by side (the cocsep words are made
    /// on one thread).
    pub fn h11_tables(&self) -> (CocsepTable, EoEsepColumns) {
        rayon::join(|| self.cocsep_table(), || EoEsepColumns::new(self))
    }

    /// esep with its tables.
    pub fn esep_coord(&self) -> RawCoord {
        let on = |e: u32, f: &dyn Fn(Cube) -> Cube| solver::esep(&f(solver::edge_position(e, 0)));
        RawCoord::build(
            ESEP,
            SymmetryGroup::Full,
            |m, e| on(e, &|x| x.compose(m.cube())),
            |s, e| on(e, &|x| s.conjugate(&x)),
        )
    }

    /// Classes of esep: numbered by their smallest value, which is the representative, as the
    /// solver numbers them.
    pub fn esep_classes(&self, esep: &RawCoord) -> SymClasses {
        SymClasses::build(ESEP, SymmetryGroup::Full, |s, v| esep.conjugate(s, v))
    }

    /// eo with its move table (per move, per eo value). Conjugating eo alone is not defined (it
    /// depends on esep).
    pub fn eo_moves(&self) -> Vec<u32> {
        Move::all()
            .flat_map(|m| (0..EO).map(move |o| solver::eo(&solver::edge_position(0, o).compose(m.cube()))))
            .collect()
    }
}

/// The solver's cocsep words (docs/h48-tables.md): classes numbered in the order an
/// iterative-deepening search from the solved cube first meets them (moves in the solver's
/// order), each class's first member its representative, ttrep the inverse of the smallest
/// solver transformation taking the representative to the value, and the distance.
fn solver_cocsep_words(coord: &RawCoord) -> Vec<u32> {
    let moves: Vec<&[u32]> = (0..18).map(|m| coord.move_row(solver_move(m))).collect();
    let syms: Vec<(&[u32], u32)> =
        (0..48).map(|t| (coord.conj_row(solver_sym(t)), sym_index(solver_sym(t).inverse()) as u32)).collect();
    let mut words = vec![NO_WORD; COCSEP_RAW as usize];
    let mut visited = vec![false; COCSEP_RAW as usize];
    let mut classes = 0u32;
    struct Pass<'a> {
        moves: &'a [&'a [u32]],
        syms: &'a [(&'a [u32], u32)],
        words: &'a mut [u32],
        visited: &'a mut [bool],
        classes: &'a mut u32,
        target: u32,
    }
    fn visit(p: &mut Pass, v: u32, d: u32) {
        let old = p.words[v as usize] & 0xff;
        if old < d || p.visited[v as usize] {
            return;
        }
        p.visited[v as usize] = true;
        if d == p.target {
            if old != 0xff {
                return;
            }
            for &(conj, inverse) in p.syms {
                let w = conj[v as usize] as usize;
                if p.words[w] == NO_WORD {
                    p.visited[w] = true;
                    p.words[w] = *p.classes << 16 | inverse << 8 | d;
                }
            }
            *p.classes += 1;
            return;
        }
        for m in 0..p.moves.len() {
            let next = p.moves[m][v as usize];
            visit(p, next, d + 1);
        }
    }
    let solved = solver::cocsep(&Cube::SOLVED);
    for target in 0..10 {
        visited.fill(false);
        let mut pass = Pass {
            moves: &moves,
            syms: &syms,
            words: &mut words,
            visited: &mut visited,
            classes: &mut classes,
            target,
        };
        visit(&mut pass, solved, 0);
    }
    assert_eq!(classes, COCSEP_CLASSES, "the solver's search numbers 3393 cocsep classes");
    words
}

/// The solver's esep words (docs/h48-tables.md): `class << 16 | ttrep << 8`, where ttrep is the
/// inverse of the largest solver transformation taking the representative to the value.
pub fn solver_esep_words(esep: &RawCoord, classes: &SymClasses) -> Vec<u32> {
    let mut words = vec![0u32; ESEP as usize];
    for c in 0..classes.class_count() as u32 {
        let rep = classes.rep(c);
        for t in 0..48 {
            let s = solver_sym(t);
            words[esep.conjugate(s, rep) as usize] = c << 16 | (sym_index(s.inverse()) as u32) << 8;
        }
    }
    words
}

/// eoesep (esep x 2048 + eo) as the column coordinate of h11, without full tables (70,963,200
/// values would need 18 GB of them). A move acts on esep and eo separately (two small tables).
/// Conjugation maps esep by its table and eo by a GF(2)-affine map: a linear part per symmetry
/// (positions relabelled; the twelfth position's bit is the parity of the other eleven) plus
/// flips that depend on esep (an edge changes orientation when the symmetry turns the axis its
/// slice and its position are measured on). A test checks the map against positions.
///
/// So a map moves a whole esep block of 2048 eo values to one block, by one table of the eo
/// values (the move's eo table, then the linear part: one per move and symmetry, 3.5 MB;
/// one more per symmetry) and one XOR per block (the flips of the block's esep): [`EoEsepMap::block`].
pub struct EoEsepColumns {
    esep: RawCoord,
    /// Per (move, symmetry), per eo value: the move's eo image, then the linear part of the
    /// conjugation; then per symmetry, per eo value: the linear part alone.
    eo_tables: Vec<u16>,
    /// Per symmetry, per esep value e: the conjugated esep times 2,048, plus the flips (below
    /// 2,048), so that a column's image is one lookup here XOR one in an eo table.
    blocks: Vec<u32>,
    /// Per eo table, the inverse of its linear part, where the processor can move whole
    /// blocks ([`crate::coord::flips`]).
    inverses: Option<Vec<FlipInverse>>,
}

/// Per eo table, the inverse of its linear part, where the processor can move whole blocks.
fn flip_inverses(eo_tables: &[u16]) -> Option<Vec<FlipInverse>> {
    flips::available().then(|| {
        eo_tables
            .par_chunks(EO as usize)
            .map(|eo| FlipInverse::new(&eo.iter().map(|&y| y ^ eo[0]).collect::<Vec<u16>>()))
            .collect()
    })
}

impl EoEsepColumns {
    pub fn new(coords: &H48Coords) -> Self {
        let esep = coords.esep_coord();
        let eo_moves = coords.eo_moves();
        let conj_eo = |s: Symmetry, e: u32, o: u32| (coords.conjugate_eoesep(s, e * EO + o) % EO) as u16;
        // The linear part of each conjugation, from the images of the eleven unit vectors.
        let linear: Vec<Vec<u16>> = Symmetry::all()
            .map(|s| {
                let units: Vec<u16> = (0..11).map(|k| conj_eo(s, 0, 1 << k) ^ conj_eo(s, 0, 0)).collect();
                (0..EO)
                    .map(|o| (0..11).filter(|k| o >> k & 1 == 1).fold(0, |acc, k| acc ^ units[k]))
                    .collect()
            })
            .collect();
        // Each symmetry's flips per esep value: a few generators' from positions, the others'
        // composed (w then g: the flips of g at w's image block, XOR w's flips through g's
        // linear part).
        let flips: Vec<u16> = SymmetryGroup::Full
            .tables_by_generators(
                |s| (0..ESEP).into_par_iter().map(|e| conj_eo(s, e, 0)).collect::<Vec<u16>>(),
                |g, by_g, w, by_w| {
                    let (esep_w, linear_g) = (esep.conj_row(w), &linear[g.index()]);
                    (0..ESEP as usize)
                        .map(|e| by_g[esep_w[e] as usize] ^ linear_g[by_w[e] as usize])
                        .collect()
                },
            )
            .concat();
        let mut eo_tables = Vec::with_capacity((Move::COUNT + 1) * SYMMETRY_COUNT * EO as usize);
        for m in Move::all() {
            for l in &linear {
                eo_tables.extend((0..EO).map(|o| l[eo_moves[m.index() * EO as usize + o as usize] as usize]));
            }
        }
        eo_tables.extend(linear.iter().flatten());
        let inverses = flip_inverses(&eo_tables);
        let blocks = (0..SYMMETRY_COUNT as u32 * ESEP)
            .map(|k| {
                esep.conj_row(Symmetry((k / ESEP) as u8))[(k % ESEP) as usize] * EO + flips[k as usize] as u32
            })
            .collect();
        EoEsepColumns { esep, eo_tables, blocks, inverses }
    }

    /// esep's tables, the eo tables and the blocks, as [`Self::from_parts`] takes them back.
    pub(crate) fn parts(&self) -> (&RawCoord, &[u16], &[u32]) {
        (&self.esep, &self.eo_tables, &self.blocks)
    }

    /// The column tables from [`Self::parts`] read back, checked for their lengths and ranges
    /// (each eo table a map of the 2,048 flips, each block below the columns); the inverses
    /// made again, as [`Self::new`] makes them.
    pub(crate) fn from_parts(
        esep: RawCoord,
        eo_tables: Vec<u16>,
        blocks: Vec<u32>,
    ) -> Result<Self, &'static str> {
        let fits = esep.size == ESEP
            && eo_tables.len() == (Move::COUNT + 1) * SYMMETRY_COUNT * EO as usize
            && eo_tables.iter().all(|&o| (o as u32) < EO)
            && blocks.len() == SYMMETRY_COUNT * ESEP as usize
            && blocks.iter().all(|&b| b < ESEP * EO);
        if !fits {
            return Err("the h11 column tables");
        }
        let inverses = flip_inverses(&eo_tables);
        Ok(EoEsepColumns { esep, eo_tables, blocks, inverses })
    }

    /// The esep coordinate with its tables.
    pub fn esep(&self) -> &RawCoord {
        &self.esep
    }

    /// The value of `x m` for any x with eoesep value `v`.
    pub fn apply(&self, m: Move, v: u32) -> u32 {
        self.moved(m, Symmetry(0)).apply(v)
    }

    /// The value of `s x s^-1` for any x with eoesep value `v`.
    pub fn conjugate(&self, s: Symmetry, v: u32) -> u32 {
        self.conjugated(s).apply(v)
    }

    pub fn moved(&self, m: Move, s: Symmetry) -> EoEsepMap<'_> {
        let table = m.index() * SYMMETRY_COUNT + s.index();
        EoEsepMap {
            esep_move: Some(self.esep.move_row(m)),
            eo: self.eo_table(table),
            inverse: self.inverses.as_ref().map(|i| &i[table]),
            ..self.conjugated(s)
        }
    }

    pub fn conjugated(&self, s: Symmetry) -> EoEsepMap<'_> {
        let table = Move::COUNT * SYMMETRY_COUNT + s.index();
        EoEsepMap {
            esep_move: None,
            eo: self.eo_table(table),
            inverse: self.inverses.as_ref().map(|i| &i[table]),
            blocks: &self.blocks[s.index() * ESEP as usize..][..ESEP as usize],
        }
    }

    fn eo_table(&self, k: usize) -> &[u16; EO as usize] {
        self.eo_tables[k * EO as usize..][..EO as usize].try_into().expect("an eo table")
    }
}

/// The column map of [`EoEsepColumns`]: optionally a move, then a conjugation.
#[derive(Clone, Copy)]
pub struct EoEsepMap<'a> {
    esep_move: Option<&'a [u32]>,
    /// The image of each eo value before the flips of its esep.
    eo: &'a [u16; EO as usize],
    /// `eo`'s linear part inverted, where the processor can move whole blocks.
    inverse: Option<&'a FlipInverse>,
    /// Per esep value after the move: the image block's first column plus its flips.
    blocks: &'a [u32],
}

impl EoEsepMap<'_> {
    #[inline]
    pub fn apply(&self, column: u32) -> u32 {
        // The flips are below EO, so XOR-ing the eo image into the block's word gives both.
        self.block_word(column / EO) ^ self.eo[(column % EO) as usize] as u32
    }

    /// The image block's first column plus its flips, for esep block `e`.
    #[inline]
    fn block_word(&self, e: u32) -> u32 {
        self.blocks[self.esep_move.map_or(e, |t| t[e as usize]) as usize]
    }

    /// Where the esep block `e` goes: the image block's esep, and the flips every eo value of
    /// the block takes there (see [`Self::eo_image`]).
    #[inline]
    pub fn block(&self, e: u32) -> (u32, u16) {
        let word = self.block_word(e);
        (word / EO, (word % EO) as u16)
    }

    /// The inverse of the eo map's linear part, where the processor can move whole blocks
    /// ([`crate::coord::flips`]).
    pub fn inverse(&self) -> Option<&FlipInverse> {
        self.inverse
    }

    /// ORs into `out` (rows of h11's columns) the images of `row`'s entries: blocks of
    /// [`flips::GATHER_FROM`] entries or more moved whole where the processor can, the others
    /// entry by entry.
    pub fn or_images(&self, row: &[u64], out: &mut [u64]) {
        let by_bit = |out: &mut [u64], e: usize, block: &[u64]| {
            let (to, xor) = self.block(e as u32);
            crate::coord::for_each_bit(block, |o| {
                let c = to * EO + self.eo_image(o, xor);
                out[c as usize / 64] |= 1 << (c % 64)
            });
        };
        #[cfg(target_arch = "x86_64")]
        if let Some(inverse) = self.inverse {
            let image = |e: usize| {
                let (to, xor) = self.block(e as u32);
                (to as usize, self.eo_image(0, xor) as u16)
            };
            // SAFETY: inverses are made only where the processor has the features.
            return unsafe { flips::or_group_images(row, out, inverse, image, by_bit) };
        }
        for (e, block) in row.chunks_exact(32).enumerate() {
            if block.iter().any(|&w| w != 0) {
                by_bit(out, e, block);
            }
        }
    }

    /// The image of eo value `o` in a block whose flips are `xor`.
    #[inline]
    pub fn eo_image(&self, o: u32, xor: u16) -> u32 {
        (self.eo[o as usize] ^ xor) as u32
    }
}

#[cfg(test)]
mod tests;
