//! The h11 index ([`H11Rows`]) as bytes, so that a distributed H48 build makes it once: the
//! coordinator sends it packed (`shared::index_file`) and a worker keeps it in its
//! `--index-dir` for later builds, instead of each worker making it again. What it holds:
//! esep's move and conjugation tables, the eo tables and blocks of the columns, the cocsep
//! classes with their per-value tables, every (row, move)'s target and symmetry, and the
//! start; the flip inverses and the incoming lists are made again from those. The bytes
//! carry no checksum of their own (they travel in a shard, which has one); lengths and ranges
//! are still checked on reading, so that another file or version is refused, not used.

use super::H11Rows;
use crate::coord::h48::solver::COCSEP_RAW;
use crate::coord::h48::{EoEsepColumns, COCSEP_CLASSES, ESEP};
use crate::coord::{RawCoord, SymClasses};
use crate::cube::{Move, SymmetryGroup, SYMMETRY_COUNT};
use crate::space::reader::{put_u16s, put_u32s, put_u64s, Reader};
use crate::space::{ClassRows, IndexBytesError, SymProductSpace};

const MAGIC: &[u8; 4] = b"CFHX";
const VERSION: u32 = 1;

impl H11Rows {
    /// The index as bytes (see the module's documentation), about 21 MB.
    pub fn to_bytes(&self) -> Vec<u8> {
        let (esep, eo_tables, blocks) = self.space.columns().parts();
        let (moves, conj) = esep.tables();
        let (rows, start) = self.space.rows_and_start();
        let classes = &rows.classes;
        assert!(
            classes.has_tables() && classes.group() == SymmetryGroup::Full,
            "the h11 index's cocsep classes"
        );
        let (class_of, to_rep, reps) = classes.tables();
        let stabilizers: Vec<u64> = (0..reps.len() as u32).map(|c| classes.stabilizer(c)).collect();
        let mut out = Vec::with_capacity(
            32 + 4 * (moves.len() + conj.len() + blocks.len() + class_of.len() + reps.len())
                + 2 * eo_tables.len()
                + to_rep.len()
                + 8 * stabilizers.len()
                + 5 * rows.targets().len(),
        );
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        put_u32s(&mut out, &[esep.size]);
        put_u32s(&mut out, moves);
        put_u32s(&mut out, conj);
        put_u16s(&mut out, eo_tables);
        put_u32s(&mut out, blocks);
        put_u32s(&mut out, &[class_of.len() as u32, reps.len() as u32]);
        put_u32s(&mut out, class_of);
        out.extend_from_slice(to_rep);
        put_u32s(&mut out, reps);
        put_u64s(&mut out, &stabilizers);
        put_u32s(&mut out, &[rows.move_count() as u32]);
        put_u32s(&mut out, &rows.targets().iter().map(|&(t, _)| t).collect::<Vec<u32>>());
        out.extend(rows.targets().iter().map(|&(_, s)| s));
        put_u32s(&mut out, &[start.0, start.1]);
        out
    }

    /// The index that `bytes` hold ([`Self::to_bytes`]), every length and value checked.
    pub fn from_bytes(bytes: &[u8]) -> Result<H11Rows, IndexBytesError> {
        let mut r = Reader::new(bytes);
        r.header(MAGIC, VERSION)?;
        let bad = IndexBytesError::Bad;
        let size = r.u32()?;
        if size != ESEP {
            return Err(IndexBytesError::Space(format!("esep of {size} values")));
        }
        let n = size as usize;
        let moves = r.u32s(Move::COUNT * n)?;
        let conj = r.u32s(SYMMETRY_COUNT * n)?;
        let esep = RawCoord::from_tables(size, moves, conj).map_err(bad)?;
        let eo_tables = r.u16s((Move::COUNT + 1) * SYMMETRY_COUNT * crate::coord::h48::EO as usize)?;
        let blocks = r.u32s(SYMMETRY_COUNT * n)?;
        let columns = EoEsepColumns::from_parts(esep, eo_tables, blocks).map_err(bad)?;
        let (raw_count, class_count) = (r.u32()?, r.u32()?);
        if (raw_count, class_count) != (COCSEP_RAW, COCSEP_CLASSES) {
            return Err(IndexBytesError::Space(format!("{class_count} classes of {raw_count} values")));
        }
        let class_of = r.u32s(raw_count as usize)?;
        let to_rep = r.take(raw_count as usize)?.to_vec();
        let reps = r.u32s(class_count as usize)?;
        let stabilizers = r.u64s(class_count as usize)?;
        let classes = SymClasses::from_tables(class_of, to_rep, reps, stabilizers).map_err(bad)?;
        let slots = r.u32()? as usize;
        if slots != Move::COUNT {
            return Err(bad("the moves of a row"));
        }
        let targets = r.u32s(class_count as usize * slots)?;
        let symmetries = r.take(targets.len())?;
        let targets = targets.into_iter().zip(symmetries.iter().copied()).collect();
        let rows = ClassRows::from_targets(classes, slots, targets).map_err(bad)?;
        let start = (r.u32()?, r.u32()?);
        if !r.at_end() {
            return Err(bad("bytes after the index"));
        }
        Ok(H11Rows::from_space(SymProductSpace::from_parts(columns, rows, start).map_err(bad)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::space::RowIndex;

    /// Read back, the index moves and closes every row's columns as the built one does, and
    /// damaged or foreign bytes are refused.
    #[test]
    fn the_h11_index_read_back_from_its_bytes_is_the_built_one() {
        let built = H11Rows::new(&crate::coord::h48::H48Coords);
        let bytes = built.to_bytes();
        let read = H11Rows::from_bytes(&bytes).unwrap();
        assert_eq!(read.to_bytes(), bytes, "the same bytes again");
        let (a, b) = (read.space(), built.space());
        assert_eq!(a.start(), b.start());
        let mut rng = crate::cube::SplitMix64::new(11);
        for row in 0..built.rows() {
            assert_eq!(a.row_weight(row), b.row_weight(row));
            let columns: Vec<u32> =
                (0..8).map(|_| (rng.next_u64() % crate::h48::H11_COLUMNS as u64) as u32).collect();
            for m in Move::all() {
                let ((ta, ma), (tb, mb)) = (a.transition(row, m), b.transition(row, m));
                assert_eq!(ta, tb, "row {row}, {m:?}");
                for &c in &columns {
                    assert_eq!(ma.apply(c), mb.apply(c), "row {row}, {m:?}, column {c}");
                }
            }
            let (sa, sb) = (a.stabilizer(row), b.stabilizer(row));
            assert_eq!(sa.len(), sb.len());
            for (x, y) in sa.iter().zip(&sb) {
                assert!(columns.iter().all(|&c| x.apply(c) == y.apply(c)), "row {row}'s stabilizer");
            }
            assert!(read.sources(row).eq(built.sources(row)), "row {row}'s sources");
        }
        assert_eq!(read.first_level().rows, built.first_level().rows);
        // Whatever the table, whole-block maps (the flip inverses, made again) agree too.
        let mut ra = vec![0u64; crate::h48::H11_COLUMNS as usize / 64];
        let mut rb = ra.clone();
        let source: Vec<u64> = (0..ra.len()).map(|_| rng.next_u64() & rng.next_u64()).collect();
        for m in [Move::all().next().unwrap(), Move::all().last().unwrap()] {
            a.transition(7, m).1.or_images(&source, &mut ra);
            b.transition(7, m).1.or_images(&source, &mut rb);
            assert!(ra == rb, "{m:?}'s images of a whole row");
        }

        let short = &bytes[..bytes.len() - 1];
        assert!(matches!(H11Rows::from_bytes(short), Err(IndexBytesError::Short(_))));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(H11Rows::from_bytes(&longer), Err(IndexBytesError::Bad(_))));
        let mut version = bytes.clone();
        version[4] = 9;
        assert!(matches!(H11Rows::from_bytes(&version), Err(IndexBytesError::Version(9, VERSION))));
        // The start beyond the rows.
        let mut start = bytes.clone();
        let at = start.len() - 8;
        start[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(H11Rows::from_bytes(&start), Err(IndexBytesError::Bad("the start entry"))));
        // A move table value beyond esep.
        let mut value = bytes.clone();
        value[12..16].copy_from_slice(&ESEP.to_le_bytes());
        assert!(matches!(H11Rows::from_bytes(&value), Err(IndexBytesError::Bad(_))));
        // A row space's index is not this one.
        assert!(matches!(H11Rows::from_bytes(b"CFRS\x04\0\0\0"), Err(IndexBytesError::Magic)));
    }
}
