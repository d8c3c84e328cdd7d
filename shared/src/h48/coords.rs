//! Seed 000's coordinates, defined on our piece numbering:
//!
//! - *cocsep*: which corner tetrad's piece sits at each corner position, and the corner
//!   orientation (70 x 3^7 = 153,090 values), the row value of [`corner_tetrads`];
//! - *esep*: which edge slice's piece sits at each edge position (495 x 70 = 34,650 values), and
//!   *eo*: the orientation of the edges at positions 0..11 (2^11 values, the twelfth follows),
//!   together the row value `esep * 2048 + eo` of [`edge_slices`]. Bit 0 of eo is position 10,
//!   bit 10 is position 0, so hN (keep N orientation bits) keeps `eo & (2^N - 1)`: the last N.
//!
//! The target subgroup (every piece in its own tetrad or slice, and oriented) is invariant under
//! all 48 symmetries, so each coordinate is acted on by moves (right multiplication) and by
//! conjugation, which [`RawCoord`] tabulates.

use crate::bfs::ColumnMapper;
use crate::coord::{corner_tetrads, edge_slices, BlockLayout, RowConjugation, SymClasses};
use crate::cube::{Cube, Move, Symmetry, SymmetryGroup};
use rayon::prelude::*;

/// Number of esep values: C(12,4) x C(8,4).
pub const ESEP: u32 = 34_650;
/// Number of eo values.
pub const EO: u32 = 2048;
/// Number of cocsep values: C(8,4) x 3^7.
pub const COCSEP: u32 = 153_090;

/// A raw coordinate with its move table (all 18 face turns) and conjugation table.
pub struct RawCoord {
    pub size: u32,
    moves: Vec<u32>,
    conj: Vec<u32>,
}

impl RawCoord {
    pub fn build(
        size: u32,
        apply_move: impl Fn(Move, u32) -> u32 + Sync,
        conjugate: impl Fn(Symmetry, u32) -> u32 + Sync,
    ) -> Self {
        let moves = Move::all()
            .flat_map(|m| (0..size).into_par_iter().map(|v| apply_move(m, v)).collect::<Vec<_>>())
            .collect();
        let conj = Symmetry::all()
            .flat_map(|s| (0..size).into_par_iter().map(|v| conjugate(s, v)).collect::<Vec<_>>())
            .collect();
        RawCoord { size, moves, conj }
    }

    /// The value of `x m` for any x with value `v`.
    #[inline]
    pub fn apply(&self, m: Move, v: u32) -> u32 {
        self.moves[m.index() * self.size as usize + v as usize]
    }

    /// The value of `s x s^-1` for any x with value `v`.
    #[inline]
    pub fn conjugate(&self, s: Symmetry, v: u32) -> u32 {
        self.conj[s.index() * self.size as usize + v as usize]
    }

    /// The move table row of `m`: entry v is `apply(m, v)`.
    pub fn move_row(&self, m: Move) -> &[u32] {
        &self.moves[m.index() * self.size as usize..][..self.size as usize]
    }

    /// The conjugation table row of `s`.
    pub fn conj_row(&self, s: Symmetry) -> &[u32] {
        &self.conj[s.index() * self.size as usize..][..self.size as usize]
    }

    /// Classes under the 48 symmetries.
    pub fn classes(&self) -> SymClasses {
        SymClasses::build(self.size, SymmetryGroup::Full, |s, v| self.conjugate(s, v))
    }
}

/// Encoders of the three coordinates, and positions that have given values.
pub struct H48Coords {
    corners: BlockLayout<8, 3>,
    edges: BlockLayout<12, 2>,
    edge_conj: RowConjugation<12, 2>,
}

impl Default for H48Coords {
    fn default() -> Self {
        let edges = edge_slices();
        let edge_conj = edges.row_conjugation();
        H48Coords { corners: corner_tetrads(), edges, edge_conj }
    }
}

impl H48Coords {
    pub fn cocsep(&self, x: &Cube) -> u32 {
        self.corners.row(&x.corners)
    }

    /// esep x 2048 + eo.
    pub fn eoesep(&self, x: &Cube) -> u32 {
        self.edges.row(&x.edges)
    }

    pub fn esep(&self, x: &Cube) -> u32 {
        self.eoesep(x) / EO
    }

    pub fn eo(&self, x: &Cube) -> u32 {
        self.eoesep(x) % EO
    }

    /// A position with the given cocsep and eoesep values.
    pub fn position(&self, cocsep: u32, eoesep: u32) -> Cube {
        Cube { corners: self.corners.decode(cocsep, 0), edges: self.edges.decode(eoesep, 0) }
    }

    /// The eoesep value of `s x s^-1` for any x with eoesep value `v` (by tables).
    #[inline]
    pub fn conjugate_eoesep(&self, s: Symmetry, v: u32) -> u32 {
        self.edge_conj.apply(s, v)
    }

    /// cocsep with its tables (conjugation by tables, checked against positions in tests).
    pub fn cocsep_coord(&self) -> RawCoord {
        let conj = self.corners.row_conjugation();
        RawCoord::build(
            COCSEP,
            |m, v| self.corners.row(&self.corners.decode(v, 0).compose(&m.cube().corners)),
            |s, v| conj.apply(s, v),
        )
    }

    /// esep with its tables.
    pub fn esep_coord(&self) -> RawCoord {
        RawCoord::build(
            ESEP,
            |m, v| self.edges.row(&self.edges.decode(v * EO, 0).compose(&m.cube().edges)) / EO,
            |s, v| self.edge_conj.apply(s, v * EO) / EO,
        )
    }

    /// eo with its move table. Conjugating eo alone is not defined (it depends on esep), so its
    /// conjugation table is the identity and must not be used.
    pub fn eo_moves(&self) -> Vec<u32> {
        Move::all()
            .flat_map(|m| {
                (0..EO).map(move |v| self.edges.row(&self.edges.decode(v, 0).compose(&m.cube().edges)) % EO)
            })
            .collect()
    }
}

/// eoesep (esep x 2048 + eo) as the column coordinate of h11, without full tables (70,963,200
/// values would need 18 GB of them). A move acts on esep and eo separately (two small tables).
/// Conjugation maps esep by its table and eo by a GF(2)-affine map: a linear part per symmetry
/// (positions relabelled; the twelfth position's bit is the parity of the other eleven) plus
/// flips that depend on esep (an edge changes orientation when the symmetry turns the axis its
/// slice and its position are measured on). A test checks the map against positions.
pub struct EoEsepColumns {
    esep: RawCoord,
    /// Per move, per eo value.
    eo_moves: Vec<u16>,
    /// Per symmetry: the linear part on eo bits 0..5 and 6..10.
    linear: Vec<([u16; 64], [u16; 32])>,
    /// Per symmetry, per esep value: the flips.
    flips: Vec<u16>,
}

impl EoEsepColumns {
    pub fn new(coords: &H48Coords) -> Self {
        let esep = coords.esep_coord();
        let eo_moves = coords.eo_moves().into_iter().map(|o| o as u16).collect();
        let conj_eo = |s: Symmetry, e: u32, o: u32| (coords.conjugate_eoesep(s, e * EO + o) % EO) as u16;
        let flips: Vec<u16> =
            Symmetry::all().flat_map(|s| (0..ESEP).map(move |e| conj_eo(s, e, 0))).collect();
        let linear = Symmetry::all()
            .map(|s| {
                let image = |bits: u32| -> u16 {
                    (0..11)
                        .filter(|k| bits >> k & 1 == 1)
                        .fold(0, |acc, k| acc ^ conj_eo(s, 0, 1 << k) ^ flips[s.index() * ESEP as usize])
                };
                (std::array::from_fn(|v| image(v as u32)), std::array::from_fn(|v| image((v as u32) << 6)))
            })
            .collect();
        EoEsepColumns { esep, eo_moves, linear, flips }
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
        EoEsepMap {
            moves: Some((self.esep.move_row(m), &self.eo_moves[m.index() * EO as usize..][..EO as usize])),
            ..self.conjugated(s)
        }
    }

    pub fn conjugated(&self, s: Symmetry) -> EoEsepMap<'_> {
        let (low, high) = &self.linear[s.index()];
        EoEsepMap {
            moves: None,
            esep_conj: self.esep.conj_row(s),
            low,
            high,
            flips: &self.flips[s.index() * ESEP as usize..][..ESEP as usize],
        }
    }
}

/// The column map of [`EoEsepColumns`]: optionally a move, then a conjugation.
#[derive(Clone, Copy)]
pub struct EoEsepMap<'a> {
    moves: Option<(&'a [u32], &'a [u16])>,
    esep_conj: &'a [u32],
    low: &'a [u16; 64],
    high: &'a [u16; 32],
    flips: &'a [u16],
}

impl ColumnMapper for EoEsepMap<'_> {
    #[inline]
    fn apply(&self, column: u32) -> u32 {
        let (mut e, mut o) = ((column / EO) as usize, (column % EO) as usize);
        if let Some((esep, eo)) = self.moves {
            (e, o) = (esep[e] as usize, eo[o] as usize);
        }
        let o = self.low[o & 63] ^ self.high[o >> 6] ^ self.flips[e];
        self.esep_conj[e] * EO + o as u32
    }
}
