//! A job's index packed once (checksummed, zstd, in a shard), under a key that names no job,
//! so that the bytes a coordinator sends its workers are also a file that a later job reads
//! instead of building or downloading the index: a row search's ([`AnyIndex::to_bytes`]) and
//! the h11 index of H48 builds ([`H11Rows::to_bytes`]). With `--index-dir DIR`, a coordinator
//! reads `DIR/<space>.index` or writes it after building the index, and a worker reads it
//! (or `DIR/h11.index`) or writes what it downloaded; a file that fails its checksum or is
//! not an index of the job's space is refused, and the index is then made as without one.
//! A row search's index is in the order a distributed search uses (locality) and shrunk as
//! its workers hold it; an embedded run builds its own.

use crate::h48::H11Rows;
use crate::job::{AnyIndex, RowJob};
use crate::shard::{self, ShardError, ShardKey};
use crate::space::IndexBytesError;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The key of a packed index, the same for every job. (A task number no work unit has.)
pub const PACKED_INDEX: ShardKey = ShardKey { job: 0, task: shard::LEVEL_INPUT - 1, attempt: 0, level: 0 };

/// Why packed bytes or a file are not the job's index.
#[derive(Debug, thiserror::Error)]
pub enum IndexFileError {
    #[error("{0}")]
    Shard(#[from] ShardError),
    #[error("{0}")]
    Index(#[from] IndexBytesError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The index packed, where workers receive it rather than build it (corners, edges).
pub fn pack(index: &AnyIndex) -> Option<Vec<u8>> {
    index.to_bytes().map(|bytes| shard::encode(PACKED_INDEX, &bytes))
}

/// The index `packed` holds, every value checked to be one of `job`'s space, and the length of
/// its bytes unpacked (about the memory it takes).
pub fn unpack(job: &RowJob, packed: &[u8]) -> Result<(AnyIndex, u64), IndexFileError> {
    let bytes = shard::decode_for(packed, PACKED_INDEX)?;
    Ok((job.index_from_bytes(&bytes)?, bytes.len() as u64))
}

/// An index read from a file: its packed bytes (what workers are sent), the index, and the
/// length of its bytes unpacked.
pub struct Kept {
    pub packed: Vec<u8>,
    pub index: AnyIndex,
    pub unpacked_bytes: u64,
}

/// Where `job`'s index is kept in `dir`.
pub fn path(dir: &Path, job: &RowJob) -> PathBuf {
    dir.join(format!("{}.index", job.space.name()))
}

/// The index kept in `dir` for `job`; `None` if there is no such file.
pub fn read(dir: &Path, job: &RowJob) -> Result<Option<Kept>, IndexFileError> {
    let Some(packed) = read_file(&path(dir, job))? else { return Ok(None) };
    let (index, unpacked_bytes) = unpack(job, &packed)?;
    Ok(Some(Kept { packed, index, unpacked_bytes }))
}

/// Keeps `packed` as `job`'s index in `dir` (see [`write_file`]).
pub fn write(dir: &Path, job: &RowJob, packed: &[u8]) -> std::io::Result<PathBuf> {
    write_file(&path(dir, job), packed)
}

/// The h11 index packed, where the workers of an H48 build receive it rather than make it.
pub fn pack_h11(index: &H11Rows) -> Vec<u8> {
    shard::encode(PACKED_INDEX, &index.to_bytes())
}

/// The h11 index `packed` holds, every value checked.
pub fn unpack_h11(packed: &[u8]) -> Result<H11Rows, IndexFileError> {
    let bytes = shard::decode_for(packed, PACKED_INDEX)?;
    Ok(H11Rows::from_bytes(&bytes)?)
}

/// Where the h11 index is kept in `dir`.
pub fn h11_path(dir: &Path) -> PathBuf {
    dir.join("h11.index")
}

/// The h11 index kept in `dir`; `None` if there is no such file.
pub fn read_h11(dir: &Path) -> Result<Option<H11Rows>, IndexFileError> {
    read_file(&h11_path(dir))?.map(|packed| unpack_h11(&packed)).transpose()
}

/// Keeps `packed` as the h11 index in `dir` (see [`write_file`]).
pub fn write_h11(dir: &Path, packed: &[u8]) -> std::io::Result<PathBuf> {
    write_file(&h11_path(dir), packed)
}

/// The bytes of `path`; `None` if there is no such file.
fn read_file(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Keeps `packed` at `path` (its directory created if missing), whole or not at all, as
/// processes sharing a file system may write it at once (`container::write_shared`: every
/// writer writes the same bytes).
fn write_file(path: &Path, packed: &[u8]) -> std::io::Result<PathBuf> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    crate::container::write_shared(path, |file| file.write_all_at(packed, 0))?;
    Ok(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::space::RowOrder;

    fn corners() -> RowJob {
        "corners/htm".parse().unwrap()
    }

    #[test]
    fn an_index_kept_in_a_directory_is_read_back_and_a_damaged_one_refused() {
        let job = corners();
        let mut index = job.build_index(RowOrder::Locality);
        index.shrink();
        let packed = pack(&index).expect("corners are sent packed");
        let dir = std::env::temp_dir().join(format!("index-file-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(read(&dir, &job).unwrap().is_none(), "no file yet");
        let file = write(&dir, &job, &packed).unwrap();
        assert_eq!(file, dir.join("corners.index"));
        let kept = read(&dir, &job).unwrap().expect("the file");
        assert_eq!(kept.packed, packed);
        let bytes = index.to_bytes().unwrap();
        assert_eq!(kept.index.to_bytes().unwrap(), bytes, "the same index");
        assert_eq!(kept.unpacked_bytes, bytes.len() as u64);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");
        // A flipped byte anywhere fails the shard's checksums.
        for at in [10, packed.len() / 2, packed.len() - 1] {
            let mut bad = packed.clone();
            bad[at] ^= 0x40;
            std::fs::write(path(&dir, &job), &bad).unwrap();
            assert!(matches!(read(&dir, &job), Err(IndexFileError::Shard(_))), "byte {at}");
        }
        // Whole, but of another space: refused by the index's own checks.
        let edges = RowJob { space: crate::space::Space::Edges, ..job };
        std::fs::write(path(&dir, &edges), &packed).unwrap();
        assert!(matches!(read(&dir, &edges), Err(IndexFileError::Index(_))));
        // Another job's shard is not an index.
        let other = shard::encode(ShardKey { job: 7, ..PACKED_INDEX }, &bytes);
        assert!(matches!(unpack(&job, &other), Err(IndexFileError::Shard(ShardError::WrongTask { .. }))));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_h11_index_kept_in_a_directory_is_read_back_and_a_damaged_one_refused() {
        let index = crate::job::JobSpec::h11_rows();
        let packed = pack_h11(&index);
        let dir = std::env::temp_dir().join(format!("h11-index-file-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(read_h11(&dir).unwrap().is_none(), "no file yet");
        assert_eq!(write_h11(&dir, &packed).unwrap(), dir.join("h11.index"));
        let read = read_h11(&dir).unwrap().expect("the file");
        assert_eq!(read.to_bytes(), index.to_bytes(), "the same index");
        for at in [10, packed.len() / 2, packed.len() - 1] {
            let mut bad = packed.clone();
            bad[at] ^= 0x40;
            std::fs::write(h11_path(&dir), &bad).unwrap();
            assert!(matches!(read_h11(&dir), Err(IndexFileError::Shard(_))), "byte {at}");
        }
        // A row search's index under the h11 name is refused by the index's own checks.
        let mut corners = corners().build_index(RowOrder::Locality);
        corners.shrink();
        std::fs::write(h11_path(&dir), pack(&corners).unwrap()).unwrap();
        assert!(matches!(read_h11(&dir), Err(IndexFileError::Index(IndexBytesError::Magic))));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
