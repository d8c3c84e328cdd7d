//! The 48 symmetries of the cube (24 rotations, each with or without a mirror), acting on
//! positions by conjugation `x -> s x s^-1` and on moves likewise.
//!
//! Numbering: 0 is the identity and symmetries 0..16 are the 16 that map the UD axis onto
//! itself (the group used by nxopt and Kociemba's solvers), so "the first 16" is that subgroup.
//! Symmetries act on stickers, so mirrors need no special orientation rules: a mirror reverses
//! the cyclic order of a corner's stickers, and conjugating twice undoes it.

use super::geometry::{det, signed_permutation_matrices, symmetry_stickers, Mat3};
use super::moves::Move;
use super::pieces::{compose_stickers, invert_stickers, Corners, Edges, Pieces};
use super::state::Cube;
use std::sync::OnceLock;

/// Number of cube symmetries.
pub const SYMMETRY_COUNT: usize = 48;
/// Number of symmetries fixing the UD axis (indices 0..16).
pub const UD_SYMMETRY_COUNT: usize = 16;

/// A symmetry by index (0..48).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Symmetry(pub u8);

/// A subgroup of the symmetries used for reduction.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum SymmetryGroup {
    /// All 48 symmetries (M).
    Full,
    /// The 16 symmetries that fix the UD axis.
    UdAxis,
    /// The identity alone: no reduction, every coordinate value its own class (a coset of H,
    /// which conjugation does not preserve).
    Identity,
}

impl SymmetryGroup {
    pub fn len(self) -> usize {
        match self {
            SymmetryGroup::Full => SYMMETRY_COUNT,
            SymmetryGroup::UdAxis => UD_SYMMETRY_COUNT,
            SymmetryGroup::Identity => 1,
        }
    }

    pub fn is_empty(self) -> bool {
        false
    }

    pub fn members(self) -> impl Iterator<Item = Symmetry> {
        (0..self.len() as u8).map(Symmetry)
    }

    /// A table per member of the group (its action on some coordinate), in member order, most
    /// of them composed rather than made: `make` is called for a few generators only, and
    /// every other member `g.then(w)` gets `compose(g, &table of g, w, &table of w)`: for an
    /// action where acting by w and then by g is acting by `g.then(w)`, as conjugation is.
    pub fn tables_by_generators<T>(
        self,
        make: impl Fn(Symmetry) -> T,
        compose: impl Fn(Symmetry, &T, Symmetry, &T) -> T,
    ) -> Vec<T> {
        let mut tables: Vec<Option<T>> = self.members().map(|_| None).collect();
        let mut generators: Vec<Symmetry> = Vec::new();
        while let Some(s) = tables.iter().position(|t| t.is_none()) {
            tables[s] = Some(make(Symmetry(s as u8)));
            generators.push(Symmetry(s as u8));
            // Close what is made under the generators.
            let mut grown = true;
            while grown {
                grown = false;
                for w in self.members() {
                    for &g in &generators {
                        let u = g.then(w).index();
                        if let (None, Some(by_g), Some(by_w)) =
                            (&tables[u], &tables[g.index()], &tables[w.index()])
                        {
                            tables[u] = Some(compose(g, by_g, w, by_w));
                            grown = true;
                        }
                    }
                }
            }
        }
        tables.into_iter().map(|t| t.expect("every member's table")).collect()
    }
}

struct SymmetryData {
    matrix: Mat3,
    corners: [u8; 24],
    edges: [u8; 24],
    corners_inv: [u8; 24],
    edges_inv: [u8; 24],
    inverse: u8,
    moves: [u8; 18],
    corner_map: PieceMap<8>,
    edge_map: PieceMap<12>,
}

/// Conjugation by one symmetry on one kind of piece, read place by place: place `q` of
/// `s x s^-1` takes its cubie from place `source[q]` of `x`, and cubie `c` with orientation `o`
/// there becomes `image[q][O c + o]` (the new cubie times 4 plus its orientation). The same map
/// as the sticker formula `s . x . s^-1`, without building the 24 stickers.
struct PieceMap<const N: usize> {
    source: [u8; N],
    image: [[u8; 24]; N],
}

impl<const N: usize> PieceMap<N> {
    /// From the symmetry's sticker permutation `s` and its inverse, for pieces with `o`
    /// orientations (sticker `o i + k` is sticker `k` of place `i`).
    fn new(s: &[u8; 24], s_inv: &[u8; 24], o: usize) -> Self {
        let mut map = PieceMap { source: [0; N], image: [[0; 24]; N] };
        for q in 0..N {
            // The reference sticker of place q comes from sticker k of place p.
            let from = s_inv[o * q] as usize;
            let (p, k) = (from / o, from % o);
            map.source[q] = p as u8;
            for c in 0..N {
                for ori in 0..o {
                    let y = s[o * c + (ori + k) % o] as usize;
                    map.image[q][o * c + ori] = (((y / o) << 2) | (y % o)) as u8;
                }
            }
        }
        map
    }

    #[inline]
    fn conjugate<const O: u8>(&self, x: &Pieces<N, O>) -> Pieces<N, O> {
        let mut out = Pieces::<N, O>::IDENTITY;
        for q in 0..N {
            let p = self.source[q] as usize;
            let v = self.image[q][O as usize * x.perm[p] as usize + x.ori[p] as usize];
            out.perm[q] = v >> 2;
            out.ori[q] = v & 3;
        }
        out
    }
}

struct Tables {
    syms: Vec<SymmetryData>,
    /// product[a][b] = index of "a then b" as sticker permutations.
    product: Vec<[u8; SYMMETRY_COUNT]>,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(build_tables)
}

fn build_tables() -> Tables {
    let identity: Mat3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
    let mut matrices = signed_permutation_matrices();
    // Identity first, then the UD-axis-fixing ones, then the rest; ties by matrix entries.
    matrices.sort_by_key(|m| (*m != identity, m[1][1] == 0, *m));
    let mut syms: Vec<SymmetryData> = matrices
        .iter()
        .map(|m| {
            let (corners, edges) = symmetry_stickers(m);
            let (corners_inv, edges_inv) = (invert_stickers(&corners), invert_stickers(&edges));
            SymmetryData {
                matrix: *m,
                corners,
                edges,
                corners_inv,
                edges_inv,
                inverse: 0,
                moves: [0; 18],
                corner_map: PieceMap::new(&corners, &corners_inv, 3),
                edge_map: PieceMap::new(&edges, &edges_inv, 2),
            }
        })
        .collect();
    let find = |c: &[u8; 24], e: &[u8; 24], syms: &[SymmetryData]| {
        syms.iter().position(|s| s.corners == *c && s.edges == *e).expect("symmetries form a group") as u8
    };
    let mut product = vec![[0u8; SYMMETRY_COUNT]; SYMMETRY_COUNT];
    for a in 0..SYMMETRY_COUNT {
        for b in 0..SYMMETRY_COUNT {
            let c = compose_stickers(&syms[a].corners, &syms[b].corners);
            let e = compose_stickers(&syms[a].edges, &syms[b].edges);
            product[a][b] = find(&c, &e, &syms);
        }
    }
    for a in 0..SYMMETRY_COUNT {
        let inverse = find(&syms[a].corners_inv, &syms[a].edges_inv, &syms);
        syms[a].inverse = inverse;
    }
    let tables = Tables { syms, product };
    let mut move_maps = Vec::with_capacity(SYMMETRY_COUNT);
    for s in 0..SYMMETRY_COUNT {
        let map: [u8; 18] = std::array::from_fn(|m| {
            let image = Symmetry(s as u8).conjugate_with(&tables, Move::from_index(m).cube());
            Move::all()
                .find(|mm| mm.cube() == &image)
                .expect("a symmetry maps face turns to face turns")
                .index() as u8
        });
        move_maps.push(map);
    }
    let mut tables = tables;
    for (s, map) in move_maps.into_iter().enumerate() {
        tables.syms[s].moves = map;
    }
    tables
}

impl Symmetry {
    pub const IDENTITY: Symmetry = Symmetry(0);

    pub fn index(self) -> usize {
        self.0 as usize
    }

    pub fn all() -> impl Iterator<Item = Symmetry> {
        (0..SYMMETRY_COUNT as u8).map(Symmetry)
    }

    /// The 3x3 signed permutation matrix of this symmetry (x = R, y = U, z = F).
    pub fn matrix(self) -> Mat3 {
        tables().syms[self.index()].matrix
    }

    /// True for the 24 symmetries that include a reflection.
    pub fn is_mirror(self) -> bool {
        det(&self.matrix()) == -1
    }

    pub fn inverse(self) -> Symmetry {
        Symmetry(tables().syms[self.index()].inverse)
    }

    /// `self`, then `other` (as sticker permutations).
    pub fn then(self, other: Symmetry) -> Symmetry {
        Symmetry(tables().product[self.index()][other.index()])
    }

    /// `s x s^-1`.
    pub fn conjugate(self, x: &Cube) -> Cube {
        self.conjugate_with(tables(), x)
    }

    fn conjugate_with(self, tables: &Tables, x: &Cube) -> Cube {
        let s = &tables.syms[self.index()];
        Cube { corners: s.corner_map.conjugate(&x.corners), edges: s.edge_map.conjugate(&x.edges) }
    }

    /// `s x s^-1` for the corners alone.
    pub fn conjugate_corners(self, x: &Corners) -> Corners {
        tables().syms[self.index()].corner_map.conjugate(x)
    }

    /// `s x s^-1` for the edges alone.
    pub fn conjugate_edges(self, x: &Edges) -> Edges {
        tables().syms[self.index()].edge_map.conjugate(x)
    }

    /// The move `s m s^-1`.
    pub fn conjugate_move(self, m: Move) -> Move {
        Move::from_index(tables().syms[self.index()].moves[m.index()] as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{random_cube, SplitMix64};

    /// The place-by-place maps agree with conjugating the sticker permutations themselves.
    #[test]
    fn piece_maps_conjugate_as_the_stickers_do() {
        fn by_stickers<const N: usize, const O: u8>(
            s: &[u8; 24],
            s_inv: &[u8; 24],
            x: &Pieces<N, O>,
        ) -> Pieces<N, O> {
            let y = compose_stickers(&compose_stickers(s, &x.to_stickers()), s_inv);
            Pieces::from_stickers(&y).expect("a conjugate is a position")
        }
        let mut rng = SplitMix64::new(48);
        for _ in 0..200 {
            let x = random_cube(&mut rng);
            for (i, s) in tables().syms.iter().enumerate() {
                let y = Symmetry(i as u8).conjugate(&x);
                assert_eq!(y.corners, by_stickers(&s.corners, &s.corners_inv, &x.corners));
                assert_eq!(y.edges, by_stickers(&s.edges, &s.edges_inv, &x.edges));
            }
        }
    }
}
