//! A built [`RowSpace`] as bytes, so that a job's index is made once and the workers of a row
//! search receive it (about 0.23 GB for edges, against 15 CPU seconds to build): what
//! [`RowSpace::shrink`] keeps, the class representatives and stabilizers, every (row, move)
//! transition and the stabilizer maps. The layout, the symmetry action and the block
//! permutations are small and made again by the receiver from the space's name. The bytes carry
//! no checksum of their own: they travel inside a shard, which has one; every value is still
//! checked on decoding, so that a wrong file or version is refused rather than used.
//!
//! The transitions go as streams, which the shard's compression packs far better than records:
//! every target as its distance from its own row (zigzag, 4 bytes: in locality order most moves
//! lead to a nearby row, so the high bytes are zeros), then the table of the space's distinct
//! column maps, then every transition's number in that table.

use super::{ColumnMap, MapTable, RowSpace, Step};
use crate::coord::{BlockLayout, Part, SymClasses};
use crate::cube::{Move, Pieces, Symmetry, SymmetryGroup};
use crate::space::reader::Reader;
use rayon::prelude::*;

const MAGIC: &[u8; 4] = b"CFRS";
/// Version 4: the maps as a table and numbers in it (version 3: targets and maps as two
/// streams, targets relative to their rows; version 2: rows in locality order).
const VERSION: u32 = 4;
/// Bytes of one encoded [`ColumnMap`]: blocks, then source, left and right of each of 3 blocks.
const MAP_BYTES: usize = 10;
/// Bytes of one encoded transition: the target row's distance and its map's number (in two
/// streams).
const TRANSITION_BYTES: usize = 4 + 4;

/// `target - row` folded into an unsigned value, small for nearby rows of either side.
fn zigzag(row: u32, target: u32) -> u32 {
    let d = target.wrapping_sub(row) as i32;
    ((d << 1) ^ (d >> 31)) as u32
}

/// The target `zigzag` folded for `row`.
fn unzigzag(row: u32, z: u32) -> u32 {
    row.wrapping_add(((z >> 1) as i32 ^ -((z & 1) as i32)) as u32)
}

/// Why bytes are not an index of the kind wanted (a row space's, or the h11 index).
#[derive(Debug, thiserror::Error)]
pub enum IndexBytesError {
    #[error("not an index of this kind (bad magic)")]
    Magic,
    #[error("index encoding version {0}, this build reads {1}")]
    Version(u32, u32),
    #[error("the index is of another space ({0})")]
    Space(String),
    #[error("the index ends early, at byte {0}")]
    Short(usize),
    #[error("the index holds a bad value: {0}")]
    Bad(&'static str),
}

impl ColumnMap {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(self.blocks);
        out.extend_from_slice(&self.src);
        out.extend_from_slice(&self.left);
        out.extend_from_slice(&self.right);
    }

    /// A map read back (`bytes` holds at least [`MAP_BYTES`]), checked: at most three
    /// blocks, sources among them, orderings in S4.
    #[inline]
    fn get(bytes: &[u8]) -> Result<ColumnMap, IndexBytesError> {
        let b = |i: usize| [bytes[i], bytes[i + 1], bytes[i + 2]];
        let map = ColumnMap { blocks: bytes[0], src: b(1), left: b(4), right: b(7) };
        let n = map.blocks;
        let fits = n <= 3
            && map.src.iter().zip(0..n).all(|(&s, _)| s < n)
            && map.left.iter().chain(&map.right).all(|&o| o < 24);
        fits.then_some(map).ok_or(IndexBytesError::Bad("a column map"))
    }
}

impl<const N: usize, const O: u8> RowSpace<N, O>
where
    Pieces<N, O>: Part,
{
    /// The index as bytes (see the module's documentation). Panics on a space built without
    /// transitions: it has nothing a worker could use.
    pub fn to_bytes(&self) -> Vec<u8> {
        assert!(!self.steps.is_empty(), "a row space without transitions is not sent");
        let rows = self.row_count() as usize;
        let maps = self.maps.len() + self.stabilizer_maps.iter().map(Vec::len).sum::<usize>();
        let mut out =
            Vec::with_capacity(36 + rows * 13 + self.steps.len() * TRANSITION_BYTES + maps * MAP_BYTES);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&[N as u8, O]);
        out.extend_from_slice(&(self.classes.raw_count() as u64).to_le_bytes());
        out.extend_from_slice(&(rows as u32).to_le_bytes());
        for r in 0..rows as u32 {
            out.extend_from_slice(&self.classes.rep(r).to_le_bytes());
            out.extend_from_slice(&self.classes.stabilizer(r).to_le_bytes());
        }
        for (i, t) in self.steps.iter().enumerate() {
            out.extend_from_slice(&zigzag((i / Move::COUNT) as u32, t.target).to_le_bytes());
        }
        out.extend_from_slice(&(self.maps.len() as u32).to_le_bytes());
        self.maps.maps().iter().for_each(|m| m.put(&mut out));
        self.steps.iter().for_each(|t| out.extend_from_slice(&t.map.to_le_bytes()));
        for row_maps in &self.stabilizer_maps {
            out.push(row_maps.len() as u8);
            row_maps.iter().for_each(|m| m.put(&mut out));
        }
        out
    }

    /// The space of `layout` whose index `bytes` hold ([`Self::to_bytes`] of a space of the same
    /// layout), as [`Self::shrink`] leaves it; every value checked.
    pub fn from_bytes(layout: BlockLayout<N, O>, bytes: &[u8]) -> Result<Self, IndexBytesError> {
        let mut r = Reader::new(bytes);
        r.header(MAGIC, VERSION)?;
        let (n, o) = (r.u8()?, r.u8()?);
        let raw_count = r.u64()?;
        if (n as usize, o) != (N, O) || raw_count != layout.row_count() as u64 {
            return Err(IndexBytesError::Space(format!(
                "{n} pieces of {o} orientations, {raw_count} row values"
            )));
        }
        let rows = r.u32()? as usize;
        // Each row takes at least this many bytes: nothing is allocated for rows that are not there.
        let per_row = 12 + Move::COUNT * TRANSITION_BYTES + 1;
        if rows.saturating_mul(per_row) > bytes.len() - r.at {
            return Err(IndexBytesError::Short(bytes.len()));
        }
        let mut reps = Vec::with_capacity(rows);
        let mut stabilizers = Vec::with_capacity(rows);
        for _ in 0..rows {
            reps.push(r.u32()?);
            stabilizers.push(r.u64()?);
        }
        let mut sorted = reps.clone();
        sorted.sort_unstable();
        let distinct =
            sorted.windows(2).all(|w| w[0] < w[1]) && sorted.last().is_none_or(|&v| (v as u64) < raw_count);
        if !distinct || stabilizers.iter().any(|&s| s & 1 == 0) {
            return Err(IndexBytesError::Bad("the class representatives or stabilizers"));
        }
        // Fixed-size values, read on every thread (26.7 million transitions for edges).
        let targets = r.take(rows * Move::COUNT * 4)?;
        let map_count = r.u32()? as usize;
        if map_count.saturating_mul(MAP_BYTES) > bytes.len() - r.at {
            return Err(IndexBytesError::Short(bytes.len()));
        }
        let maps =
            (0..map_count).map(|_| ColumnMap::get(r.take(MAP_BYTES)?)).collect::<Result<Vec<_>, _>>()?;
        let ids = r.take(rows * Move::COUNT * 4)?;
        let step = |(i, (z, id)): (usize, (&[u8], &[u8]))| Step {
            target: unzigzag((i / Move::COUNT) as u32, u32::from_le_bytes(z.try_into().expect("4 bytes"))),
            map: u32::from_le_bytes(id.try_into().expect("4 bytes")),
        };
        let read = || targets.par_chunks_exact(4).zip(ids.par_chunks_exact(4)).enumerate().map(step);
        // Checked first, then written once into a vector of their number (a collect that can
        // fail gathers pieces and copies them into a vector grown as they come).
        read().try_for_each(|t| {
            if t.target as usize >= rows {
                return Err(IndexBytesError::Bad("a transition's target row"));
            }
            if t.map as usize >= map_count {
                return Err(IndexBytesError::Bad("a transition's map number"));
            }
            Ok(())
        })?;
        let mut steps = Vec::new();
        read().collect_into_vec(&mut steps);
        let mut stabilizer_maps = Vec::with_capacity(rows);
        for stabilizer in &stabilizers {
            // One map per symmetry of the stabilizer but the identity.
            let count = r.u8()? as usize;
            if count + 1 != stabilizer.count_ones() as usize {
                return Err(IndexBytesError::Bad("a row's stabilizer maps"));
            }
            let maps =
                (0..count).map(|_| ColumnMap::get(r.take(MAP_BYTES)?)).collect::<Result<Vec<_>, _>>()?;
            stabilizer_maps.push(maps);
        }
        if r.at != bytes.len() {
            return Err(IndexBytesError::Bad("bytes after the index"));
        }
        let classes = SymClasses::from_parts(SymmetryGroup::Full, raw_count as usize, reps, stabilizers);
        Ok(RowSpace {
            block_perms: Symmetry::all().map(|s| layout.block_permutation(s)).collect(),
            conj: layout.row_conjugation(),
            layout,
            classes,
            steps,
            maps: MapTable::of(maps),
            stabilizer_maps,
            members: Vec::new(),
            member_start: Vec::new(),
            id: super::next_space_id(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coord::corner_tetrads;
    use crate::space::RowIndex;

    #[test]
    fn a_row_space_read_back_from_its_bytes_is_the_shrunk_space() {
        let mut built = RowSpace::new(corner_tetrads());
        built.shrink();
        let bytes = built.to_bytes();
        let read = RowSpace::from_bytes(corner_tetrads(), &bytes).unwrap();
        assert_eq!(read.row_count(), built.row_count());
        for row in 0..built.row_count() {
            assert_eq!(read.classes.rep(row), built.classes.rep(row));
            assert_eq!(read.classes.stabilizer(row), built.classes.stabilizer(row));
            assert_eq!(read.stabilizer_maps[row as usize], built.stabilizer_maps[row as usize]);
            for m in Move::all() {
                let (a, b) = (read.transition(row, m), built.transition(row, m));
                assert_eq!((a.target, a.map), (b.target, b.map), "row {row}, {m:?}");
            }
        }
        // Locating positions (which the read space does by conjugating) agrees.
        let mut rng = crate::cube::SplitMix64::new(4);
        for _ in 0..1000 {
            let cube = crate::cube::random_cube(&mut rng);
            let x = <Pieces<8, 3> as Part>::of(&cube);
            assert_eq!(read.locate(x), built.locate(x));
        }
        // So does locating inverses (by the row's members when they are in the row), up to
        // the row's stabilizer, which is all a count compares.
        let unshrunk = RowSpace::new(corner_tetrads());
        let canonical = |space: &RowSpace<8, 3>, (row, column): (u32, u32)| {
            (row, crate::space::index::canonical(space.stabilizer_maps(row), column))
        };
        let mut in_row = 0;
        for row in (0..built.row_count()).step_by(23) {
            for column in (0..built.column_count()).step_by(5) {
                let want = canonical(&unshrunk, unshrunk.locate_inverse(row, column));
                assert_eq!(canonical(&read, read.locate_inverse(row, column)), want, "{row} {column}");
                // And both answer whether the inverse lies in the row, and where.
                let in_this = |space: &RowSpace<8, 3>| {
                    let c = space.inverse_in_row(row, column)?;
                    Some(crate::space::index::canonical(space.stabilizer_maps(row), c))
                };
                let expected = (want.0 == row).then_some(want.1);
                assert_eq!((in_this(&read), in_this(&unshrunk)), (expected, expected), "{row} {column}");
                in_row += usize::from(want.0 == row);
            }
        }
        assert!(in_row > 100, "only {in_row} inverses in their own row");
        assert_eq!(read.to_bytes(), bytes, "the same bytes again");
    }

    #[test]
    fn distances_fold_both_ways() {
        for (row, target) in [(0, 0), (5, 3), (3, 5), (0, u32::MAX), (u32::MAX, 0), (7, 7 + (1 << 30))] {
            assert_eq!(unzigzag(row, zigzag(row, target)), target, "{row} {target}");
        }
        assert_eq!((zigzag(10, 10), zigzag(10, 9), zigzag(10, 11)), (0, 1, 2));
    }

    #[test]
    fn bytes_of_another_space_a_version_or_a_cut_are_refused() {
        let mut built = RowSpace::new(corner_tetrads());
        built.shrink();
        let bytes = built.to_bytes();
        let refused = |b: &[u8]| RowSpace::from_bytes(corner_tetrads(), b).err().map(|e| e.to_string());
        assert!(refused(&bytes[..bytes.len() - 1]).unwrap().contains("ends early"));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(refused(&longer).unwrap().contains("bytes after"));
        let mut version = bytes.clone();
        version[4] = 9;
        assert!(refused(&version).unwrap().contains("version 9"));
        assert!(refused(b"not an index").unwrap().contains("magic"));
        // A row count the bytes cannot hold is refused before anything is allocated for it.
        let mut rows = bytes.clone();
        rows[18..22].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(refused(&rows).unwrap().contains("ends early"));
        // A transition's target beyond the rows.
        let first_transition = 4 + 4 + 2 + 8 + 4 + built.row_count() as usize * 12;
        for far in [u32::MAX - 1, 2 * built.row_count()] {
            // Beyond the last row, or before the first (row 0's distances are its targets).
            let mut target = bytes.clone();
            target[first_transition..first_transition + 4].copy_from_slice(&far.to_le_bytes());
            assert!(refused(&target).unwrap().contains("target row"), "{far}");
        }
        // A transition's map number beyond the table.
        let first_id = first_transition + built.steps.len() * 4 + 4 + built.maps.len() * MAP_BYTES;
        let mut id = bytes.clone();
        id[first_id..first_id + 4].copy_from_slice(&(built.maps.len() as u32).to_le_bytes());
        assert!(refused(&id).unwrap().contains("map number"));
        let edges = crate::coord::edge_slices();
        assert!(RowSpace::from_bytes(edges, &bytes).err().unwrap().to_string().contains("another space"));
    }
}
