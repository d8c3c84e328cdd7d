//! Phase 1's distance table: the row search's space it is made from, and its entries, 32 bits
//! each (the distance to H and what each move does to it).

use super::coords::TWISTS;
use crate::coord::ColumnMapper;
use crate::cube::{Move, Symmetry};
use crate::space::{AnyColumn, ClassRows, Inverses, RowIndex};

/// The phase-1 coordinates as a row index: rows the classes of (flip, slice) under the 16
/// symmetries that keep H, columns the twist. H is closed under those symmetries, so
/// conjugating keeps the distance to H.
pub(super) struct DistanceSpace<'a> {
    pub(super) rows: ClassRows,
    /// Per move, the twist after it, for every twist.
    pub(super) twist_move: Vec<u16>,
    pub(super) twist_conj: &'a [u16],
    pub(super) start: (u32, u32),
}

/// Column map: optionally a move's, then a symmetry's.
#[derive(Clone, Copy)]
pub(super) struct TwistMap<'a> {
    first: Option<&'a [u16]>,
    then: &'a [u16],
}

impl ColumnMapper for TwistMap<'_> {
    #[inline]
    fn apply(&self, column: u32) -> u32 {
        let t = self.first.map_or(column, |f| f[column as usize] as u32);
        self.then[t as usize] as u32
    }
}

impl RowIndex for DistanceSpace<'_> {
    type Mapper<'a>
        = TwistMap<'a>
    where
        Self: 'a;
    type Symmetric<'a>
        = TwistMap<'a>
    where
        Self: 'a;
    type Filter<'a>
        = AnyColumn
    where
        Self: 'a;

    fn row_count(&self) -> u32 {
        self.rows.row_count()
    }

    fn column_count(&self) -> u32 {
        TWISTS as u32
    }

    fn entry_count(&self) -> u64 {
        self.row_count() as u64 * TWISTS as u64
    }

    fn start(&self) -> (u32, u32) {
        self.start
    }

    #[inline]
    fn transition(&self, row: u32, m: Move) -> (u32, TwistMap<'_>) {
        let (target, s) = self.rows.target(row, m.index());
        let first = &self.twist_move[m.index() * TWISTS..][..TWISTS];
        (target, TwistMap { first: Some(first), then: &self.twist_conj[s.index() * TWISTS..][..TWISTS] })
    }

    fn row_weight(&self, row: u32) -> u64 {
        self.rows.class_size(row)
    }

    fn stabilizer(&self, row: u32) -> Vec<TwistMap<'_>> {
        self.rows
            .stabilizer(row)
            .iter()
            .map(|s| TwistMap { first: None, then: &self.twist_conj[s.index() * TWISTS..][..TWISTS] })
            .collect()
    }

    fn inverses(&self, _row: u32) -> Inverses<AnyColumn> {
        Inverses::Never
    }

    fn locate_inverse(&self, _row: u32, _column: u32) -> (u32, u32) {
        unreachable!("no row asks for inverses (Inverses::Never)")
    }
}

/// What the distance table says about a coordinate: its distance to H, and the moves that
/// take it one move closer (`down`) and that keep its distance (`level`); the others take it
/// one move further.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lookup {
    pub(super) distance: u8,
    pub(super) down: u32,
    pub(super) level: u32,
}

/// An entry: the distance in bits 24..28, and per face f a nibble at bits 4f..4f+4 for its
/// three turns (clockwise, half, counter-clockwise), whose effects on the distance differ by
/// at most one (one turns into another by a turn of the same face). Bit 3 set: the turns keep
/// the distance or lengthen it, and bits 0..2 mark those that lengthen it; bit 3 clear: they
/// keep it or shorten it, and bits 0..2 mark those that keep it. (The layout of Rokicki's
/// phase-1 table, which packs 18 moves' effects and the distance into 32 bits.)
pub(super) fn encode(distance: u8, closer: u32, further: u32) -> u32 {
    let mut entry = (distance as u32) << 24;
    for face in 0..6 {
        let (closer, further) = (closer >> (3 * face) & 7, further >> (3 * face) & 7);
        debug_assert!(closer == 0 || further == 0, "turns of one face differ by at most one");
        let nibble = if closer != 0 { !(closer | further) & 7 } else { 8 | further };
        entry |= nibble << (4 * face);
    }
    entry
}

/// The entries of the whole table from its distances, row by row: a move takes a row to one
/// row, so each row's 18 neighbours are read whole.
pub(super) fn encode_entries(space: &DistanceSpace, distances: &[u8]) -> std::io::Result<Entries> {
    use rayon::prelude::*;
    let mut entries = Entries::zeroed(distances.len())?;
    entries.par_chunks_mut(TWISTS).enumerate().for_each_init(
        || vec![(0u32, 0u32); TWISTS],
        |masks, (row, out)| {
            masks.fill((0, 0));
            let own = &distances[row * TWISTS..][..TWISTS];
            for m in Move::all() {
                let (target, map) = space.transition(row as u32, m);
                let to = &distances[target as usize * TWISTS..][..TWISTS];
                for (column, (closer, further)) in masks.iter_mut().enumerate() {
                    let (d, next) = (own[column], to[map.apply(column as u32) as usize]);
                    *closer |= ((next < d) as u32) << m.index();
                    *further |= ((next > d) as u32) << m.index();
                }
            }
            for ((e, &d), &(closer, further)) in out.iter_mut().zip(own).zip(masks.iter()) {
                *e = encode(d, closer, further);
            }
        },
    );
    Ok(entries)
}

/// The distance table's entries: an anonymous mapping in huge pages where the kernel allows
/// (as the coset's bit arrays are), since the search reads the table at random, one lookup per
/// node followed, and with 4 KiB pages each lookup also misses the TLB.
pub struct Entries {
    map: memmap2::MmapMut,
    len: usize,
}

impl Entries {
    /// `len` zero entries, mapped as they are first written.
    pub fn zeroed(len: usize) -> std::io::Result<Self> {
        let map = memmap2::MmapMut::map_anon((4 * len).max(4))?;
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::HugePage);
        Ok(Entries { map, len })
    }

    /// The entries' bytes, in this machine's byte order.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.map[..4 * self.len]
    }
}

impl std::ops::Deref for Entries {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        // SAFETY: the mapping is page aligned and at least 4 x len bytes, and any bytes are a
        // valid u32.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast::<u32>(), self.len) }
    }
}

impl std::ops::DerefMut for Entries {
    fn deref_mut(&mut self) -> &mut [u32] {
        // SAFETY: as in `deref`, through the exclusive borrow.
        unsafe { std::slice::from_raw_parts_mut(self.map.as_mut_ptr().cast::<u32>(), self.len) }
    }
}

/// [`Phase1::decode`]'s table for the symmetry `s`: the entry is that of `c0 = s c s^-1`, and
/// `c m` is as far from H as `c0 (s m s^-1)`.
pub(super) fn decode_table(s: Symmetry) -> [[u64; 256]; 3] {
    std::array::from_fn(|byte| {
        std::array::from_fn(|v| {
            let (mut down0, mut level0) = (0u32, 0u32);
            for half in 0..2 {
                let face = 2 * byte + half;
                let nibble = (v as u32 >> (4 * half)) & 15;
                let marked = nibble & 7;
                let (down, level) = if nibble & 8 == 0 { (!marked & 7, marked) } else { (0, !marked & 7) };
                down0 |= down << (3 * face);
                level0 |= level << (3 * face);
            }
            let (mut down, mut level) = (0u64, 0u64);
            for m in Move::all() {
                let m0 = s.conjugate_move(m).index();
                down |= ((down0 >> m0 & 1) as u64) << m.index();
                level |= ((level0 >> m0 & 1) as u64) << m.index();
            }
            down | level << 32
        })
    })
}
