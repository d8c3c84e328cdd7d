//! nxopt's table coordinates (Rokicki's nxopt documentation), in cubepos's
//! numbering ([`super::cubepos`]).
//!
//! A table EOx EPy is indexed by a corner coordinate (which slots hold U-layer corners, and the
//! twists: 153,090 values, 9930 classes under the 16 symmetries that keep the UD axis) and an
//! edge coordinate: the E-slice occupancy (495 values, spread over 512 fields so that every 64
//! fields give their first two to a group minimum), the flips of the E-slice edges (EO1), of the
//! other eight (EO2) or of eleven positions (EO3), and nothing more (EP1), the order of the
//! E-slice edges (EP2), which of the other eight positions hold D edges (EP3), or both (EP4).
//! Both coordinates read only what sits at each slot, so moves and those 16 conjugations act on
//! them; [`super::RawCoord`] tabulates that from positions built by the decoders here.

use super::cubepos::{corner_slots, corners_from_slots, edge_slots, edges_from_slots, in_e_slice};
use super::rank::{perm_rank, perm_unrank};
use crate::cube::{Corners, Edges};

/// Number of corner coordinate values: 3^7 twists x C(8,4) occupancies.
pub const CORNER_VALUES: u32 = 2187 * 70;
/// Number of table rows: corner classes under the 16 UD-axis symmetries.
pub const ROWS: u32 = 9930;
/// Fields of a 512-field occupancy block, and of one group (whose first two hold its minimum).
pub const BLOCK: u32 = 512;
pub const GROUP: u32 = 64;

/// One of nxopt's twelve tables, EO`eo` EP`ep`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NxoptKind {
    pub eo: u8,
    pub ep: u8,
}

impl NxoptKind {
    /// Every table, in increasing size.
    pub fn all() -> Vec<NxoptKind> {
        let mut all: Vec<NxoptKind> =
            (1..=3).flat_map(|eo| (1..=4).map(move |ep| NxoptKind { eo, ep })).collect();
        all.sort_by_key(|k| k.columns());
        all
    }

    /// "EO2EP1" (any case) to the table.
    pub fn parse(name: &str) -> Option<NxoptKind> {
        let name = name.to_ascii_uppercase();
        let rest = name.strip_prefix("EO")?;
        let (eo, ep) = rest.split_once("EP")?;
        let kind = NxoptKind { eo: eo.parse().ok()?, ep: ep.parse().ok()? };
        ((1..=3).contains(&kind.eo) && (1..=4).contains(&kind.ep)).then_some(kind)
    }

    pub fn name(self) -> String {
        format!("EO{}EP{}", self.eo, self.ep)
    }

    /// nxopt's file name for the half-turn metric.
    pub fn file_name(self) -> String {
        format!("nxopth{}{}b.dat", self.eo, self.ep)
    }

    /// Distances up to the base are stored as 0 (half-turn metric, as nxopt's code sets them).
    pub fn base(self) -> u8 {
        match (self.eo, self.ep) {
            (1, 1) => 7,
            (2, 1) | (1, 2) | (1, 3) => 8,
            (3, 1) | (2, 2) | (2, 3) | (1, 4) => 9,
            (3, 2) | (3, 3) => 10,
            _ => 11,
        }
    }

    /// Values of the flip part.
    pub fn e2(self) -> u32 {
        [16, 256, 2048][self.eo as usize - 1]
    }

    /// Values of the permutation part (what EPy adds to the occupancy).
    pub fn permutations(self) -> u32 {
        [1, 24, 70, 1680][self.ep as usize - 1]
    }

    /// Fields per row: 512 x permutations x flips.
    pub fn columns(self) -> u32 {
        BLOCK * self.permutations() * self.e2()
    }

    /// Bytes of one row (2 bits a field).
    pub fn row_bytes(self) -> u64 {
        self.columns() as u64 / 4
    }

    /// Bytes of the table, without the file's 4-byte header.
    pub fn table_bytes(self) -> u64 {
        ROWS as u64 * self.row_bytes()
    }
}

/// The field of occupancy rank `mid` (0..495) in its 512-field block: each 64-field group
/// starts with two fields for its minimum, so 62 ranks per group.
#[inline]
pub fn field_of(mid: u32) -> u32 {
    mid + 2 * (mid / 62 + 1)
}

/// The occupancy rank of a field, or `None` for a group's minimum fields and field 511.
#[inline]
pub fn mid_of(field: u32) -> Option<u32> {
    (field % GROUP >= 2 && field < BLOCK - 1).then(|| field - 2 * (field / GROUP + 1))
}

/// Rank of a mask among the masks with the same number of bits set, in increasing order.
fn mask_rank(mask: u32) -> u32 {
    let bits = mask.count_ones();
    (0..mask).filter(|m| m.count_ones() == bits).count() as u32
}

/// The `rank`-th mask below `1 << width` with `bits` bits set.
fn mask_unrank(rank: u32, width: u32, bits: u32) -> u32 {
    (0..1 << width).filter(|m: &u32| m.count_ones() == bits).nth(rank as usize).expect("rank in range")
}

/// Rank tables of 4-bit masks of 12 and 8 positions (4096 and 256 entries).
struct Masks {
    rank12: Vec<u16>,
    unrank12: Vec<u16>,
    rank8: Vec<u8>,
    unrank8: Vec<u8>,
}

fn masks() -> &'static Masks {
    static MASKS: std::sync::OnceLock<Masks> = std::sync::OnceLock::new();
    MASKS.get_or_init(|| Masks {
        rank12: (0..4096).map(|m| mask_rank(m) as u16).collect(),
        unrank12: (0..495).map(|r| mask_unrank(r, 12, 4) as u16).collect(),
        rank8: (0..256).map(|m| mask_rank(m) as u8).collect(),
        unrank8: (0..70).map(|r| mask_unrank(r, 8, 4) as u8).collect(),
    })
}

/// The corner coordinate: `ori * 70 + occ`, ori the twists of slots 0..6 in base 3 (slot 0
/// lowest), occ the rank of the mask of slots holding U corners.
pub fn corner_coord(x: &Corners) -> u32 {
    let slots = corner_slots(x);
    let ori = slots[..7].iter().rev().fold(0, |acc, &(_, t)| acc * 3 + t as u32);
    let mask = (0..8).filter(|&s| slots[s].0 < 4).fold(0, |m, s| m | 1 << s);
    ori * 70 + masks().rank8[mask] as u32
}

/// Corners with a given corner coordinate.
pub fn corners_of(c: u32) -> Corners {
    let (mut ori, occ) = (c / 70, c % 70);
    let mask = masks().unrank8[occ as usize];
    let (mut up, mut down) = (0u8, 4u8);
    let mut sum = 0;
    let slots: [(u8, u8); 8] = std::array::from_fn(|slot| {
        let twist = if slot < 7 { (ori % 3) as u8 } else { ((3 - sum % 3) % 3) as u8 };
        ori /= 3;
        sum += twist as u32;
        let id = if mask >> slot & 1 == 1 { &mut up } else { &mut down };
        *id += 1;
        (*id - 1, twist)
    });
    corners_from_slots(&slots)
}

/// The cubepos slot at position `ii` of nxopt's edge order LB RB LF RF DB DL DR DF UB UL UR UF.
#[inline]
fn slot_at(ii: usize) -> usize {
    (ii + 4) % 12
}

/// The edge coordinate of `kind`: `(X * E2 + eo) * 512 + field(mid)`.
pub fn edge_coord(kind: NxoptKind, x: &Edges) -> u32 {
    let slots = edge_slots(x);
    let order: [(u8, u8); 12] = std::array::from_fn(|ii| slots[slot_at(ii)]);
    let (mut mid_mask, mut eo_slice, mut eo_other, mut eo_all, mut down) = (0u32, 0u32, 0u32, 0u32, 0u32);
    let (mut n_slice, mut n_other) = (0, 0);
    let mut slice_pos = [0u8; 4];
    for (ii, &(id, flip)) in order.iter().enumerate() {
        let flip = flip as u32;
        if ii < 11 {
            eo_all |= flip << ii;
        }
        if in_e_slice(id) {
            mid_mask |= 1 << ii;
            eo_slice |= flip << n_slice;
            slice_pos[id as usize - 4] = n_slice;
            n_slice += 1;
        } else {
            eo_other |= flip << n_other;
            down |= ((id >= 8) as u32) << n_other;
            n_other += 1;
        }
    }
    let m = masks();
    let mid = m.rank12[mid_mask as usize] as u32;
    let eo = [eo_slice, eo_other, eo_all][kind.eo as usize - 1];
    // The order of the E-slice edges: 23 - the lexicographic rank of (r7, r6, r5, r4).
    let p = 23 - perm_rank(&[slice_pos[3], slice_pos[2], slice_pos[1], slice_pos[0]]);
    let b = m.rank8[down as usize] as u32;
    let perm = [0, p, b, b * 24 + p][kind.ep as usize - 1];
    (perm * kind.e2() + eo) * BLOCK + field_of(mid)
}

/// The search's column of table column `column`: the same (permutation, flips, field) with the
/// flips innermost, `(X * 512 + field) * E2 + eo`. A move or a UD-axis symmetry then sends the
/// E2 columns of one (X, field) to the E2 columns of one other by one affine map of the flips
/// ([`super::nxopt_columns`]), so the search moves them as a group.
#[inline]
pub fn search_column(kind: NxoptKind, column: u32) -> u32 {
    let (field, block) = (column % BLOCK, column / BLOCK);
    let (eo, x) = (block % kind.e2(), block / kind.e2());
    (x * BLOCK + field) * kind.e2() + eo
}

/// The table column of search column `column` (the inverse of [`search_column`]).
#[inline]
pub fn table_column(kind: NxoptKind, column: u32) -> u32 {
    let (eo, group) = (column % kind.e2(), column / kind.e2());
    let (field, x) = (group % BLOCK, group / BLOCK);
    (x * kind.e2() + eo) * BLOCK + field
}

/// Edges with a given edge coordinate, or `None` for a field that holds no entry.
pub fn edges_of(kind: NxoptKind, column: u32) -> Option<Edges> {
    let mid = mid_of(column % BLOCK)?;
    let eo = column / BLOCK % kind.e2();
    let perm = column / BLOCK / kind.e2();
    let (p, b) = match kind.ep {
        1 => (0, 0),
        2 => (perm, 0),
        3 => (0, perm),
        _ => (perm % 24, perm / 24),
    };
    let m = masks();
    let mid_mask = m.unrank12[mid as usize] as u32;
    let down = m.unrank8[b as usize] as u32;
    let mut r = [0u8; 4];
    perm_unrank(23 - p, &mut r);
    // r = (r7, r6, r5, r4): E-slice edge 4 + j is the r_j-th slice position.
    let slice_id = |k: u8| 4 + (0..4).find(|&j| r[3 - j] == k).expect("a permutation") as u8;
    let (mut n_slice, mut n_other, mut up_id, mut down_id) = (0u8, 0u32, 0u8, 8u8);
    let mut order = [(0u8, 0u8); 12];
    for (ii, entry) in order.iter_mut().enumerate() {
        let (id, flip) = if mid_mask >> ii & 1 == 1 {
            n_slice += 1;
            (slice_id(n_slice - 1), if kind.eo == 1 { eo >> (n_slice - 1) & 1 } else { 0 })
        } else {
            n_other += 1;
            let id = if down >> (n_other - 1) & 1 == 1 { &mut down_id } else { &mut up_id };
            *id += 1;
            (*id - 1, if kind.eo == 2 { eo >> (n_other - 1) & 1 } else { 0 })
        };
        let flip = if kind.eo == 3 && ii < 11 { eo >> ii & 1 } else { flip };
        *entry = (id, flip as u8);
    }
    // Flips sum to zero: an untracked flip (position UF for EO3) absorbs the parity.
    if order.iter().map(|e| e.1 as u32).sum::<u32>() % 2 == 1 {
        let fix = match kind.eo {
            1 => order.iter().position(|e| !in_e_slice(e.0)),
            2 => order.iter().position(|e| in_e_slice(e.0)),
            _ => Some(11),
        };
        order[fix.expect("an untracked edge")].1 ^= 1;
    }
    let mut slots = [(0u8, 0u8); 12];
    for (ii, &e) in order.iter().enumerate() {
        slots[slot_at(ii)] = e;
    }
    Some(edges_from_slots(&slots))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::{random_cube, Cube, SplitMix64};

    #[test]
    fn fields_skip_the_group_minima() {
        let fields: Vec<u32> = (0..495).map(field_of).collect();
        assert_eq!(fields[0], 2);
        assert_eq!(*fields.last().unwrap(), 510);
        assert!(fields.iter().all(|&f| f % GROUP >= 2));
        assert_eq!((0..BLOCK).filter_map(mid_of).collect::<Vec<_>>(), (0..495).collect::<Vec<_>>());
    }

    #[test]
    fn coordinates_decode_to_themselves() {
        for c in 0..CORNER_VALUES {
            assert_eq!(corner_coord(&corners_of(c)), c);
        }
        for kind in NxoptKind::all() {
            // The identity is row 0, column 2 (docs/rokicki-tables.md).
            assert_eq!((corner_coord(&Cube::SOLVED.corners), edge_coord(kind, &Cube::SOLVED.edges)), (0, 2));
            let step = (kind.columns() / 20_000).max(1);
            for column in (0..kind.columns()).step_by(step as usize) {
                match edges_of(kind, column) {
                    Some(e) => {
                        assert!(e.is_valid());
                        assert_eq!(edge_coord(kind, &e), column, "{} column {column}", kind.name());
                    }
                    None => assert!(mid_of(column % BLOCK).is_none()),
                }
            }
        }
    }

    #[test]
    fn search_columns_are_table_columns_reordered() {
        for kind in NxoptKind::all().into_iter().filter(|k| k.columns() <= 1 << 28) {
            let step = (kind.columns() / 100_000).max(1) as usize;
            for column in (0..kind.columns()).step_by(step).chain([kind.columns() - 1]) {
                let s = search_column(kind, column);
                assert!(s < kind.columns());
                assert_eq!(table_column(kind, s), column);
                // The flips innermost: columns that differ only in their flips are neighbours.
                assert_eq!(
                    s / kind.e2(),
                    search_column(kind, column % BLOCK + column / BLOCK / kind.e2() * kind.e2() * BLOCK)
                        / kind.e2()
                );
            }
        }
    }

    #[test]
    fn sizes_are_nxopts() {
        // docs/rokicki-tables.md: table bytes of EO1EP1 and EO3EP4.
        let kinds = NxoptKind::all();
        assert_eq!(kinds.len(), 12);
        assert_eq!(NxoptKind::parse("eo1ep1").unwrap().table_bytes(), 20_336_640);
        assert_eq!(NxoptKind::parse("EO3EP4").unwrap().table_bytes(), 4_373_191_065_600);
        assert_eq!(NxoptKind::parse("EO2EP2").unwrap().file_name(), "nxopth22b.dat");
        assert!(NxoptKind::parse("EO4EP1").is_none() && NxoptKind::parse("EO1").is_none());
        let mut rng = SplitMix64::new(2);
        for _ in 0..100 {
            let x = random_cube(&mut rng);
            assert!(corner_coord(&x.corners) < CORNER_VALUES);
            for kind in &kinds {
                assert!(mid_of(edge_coord(*kind, &x.edges) % BLOCK).is_some());
            }
        }
    }
}
