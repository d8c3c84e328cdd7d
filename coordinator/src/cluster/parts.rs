//! Where a row search's level inputs wait while workers download them: each part (one task's
//! rows, see `shared::wire::PartCut`) is a file in a directory of the job's, so the
//! coordinator's memory holds the engine's arrays and not the compressed inputs beside them
//! (for edges HTM about 4 GB at the largest levels). The page cache serves recent parts at
//! memory speed when there is room; when there is not, the disk does.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The job's directory of parts (under the system's temporary directory, `$TMPDIR`), removed
/// with everything in it when the job ends.
pub struct PartDir {
    path: PathBuf,
    written: AtomicU64,
}

impl PartDir {
    pub fn create() -> io::Result<Self> {
        static JOBS: AtomicU64 = AtomicU64::new(0);
        let n = JOBS.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("cubefarm-parts-{}-{n}", std::process::id()));
        fs::create_dir_all(&path)?;
        Ok(PartDir { path, written: AtomicU64::new(0) })
    }

    /// Keeps `bytes` as a new part file; the file goes when the last handle to it does.
    pub fn write(&self, bytes: &[u8]) -> io::Result<Arc<PartFile>> {
        let n = self.written.fetch_add(1, Ordering::Relaxed);
        let path = self.path.join(format!("{n}.part"));
        fs::write(&path, bytes)
            .map_err(|e| io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))?;
        Ok(Arc::new(PartFile { path, len: bytes.len() as u64 }))
    }
}

impl Drop for PartDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// One part on disk.
pub struct PartFile {
    path: PathBuf,
    len: u64,
}

impl PartFile {
    pub fn size(&self) -> u64 {
        self.len
    }

    /// `len` bytes from `offset`.
    pub fn read(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        File::open(&self.path)?.read_exact_at(&mut buf, offset)?;
        Ok(buf)
    }
}

impl Drop for PartFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// An input as the service streams it: a job-wide input held in memory (an H48 build's level),
/// or a part on disk.
#[derive(Clone)]
pub enum InputPart {
    Memory(Arc<Vec<u8>>),
    File(Arc<PartFile>),
}

impl InputPart {
    pub fn size(&self) -> u64 {
        match self {
            InputPart::Memory(bytes) => bytes.len() as u64,
            InputPart::File(file) => file.size(),
        }
    }

    /// `len` bytes from `offset`.
    pub fn read(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        match self {
            InputPart::Memory(bytes) => Ok(bytes[offset as usize..offset as usize + len].to_vec()),
            InputPart::File(file) => file.read(offset, len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_read_back_and_removed_with_their_last_handle_and_their_directory() {
        let dir = PartDir::create().unwrap();
        let root = dir.path.clone();
        let bytes: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
        let part = dir.write(&bytes).unwrap();
        let served = InputPart::File(part.clone());
        assert_eq!((served.size(), served.read(4990, 10).unwrap()), (5000, bytes[4990..].to_vec()));
        let path = part.path.clone();
        drop(part);
        assert!(path.exists(), "a part being served stays");
        drop(served);
        assert!(!path.exists(), "a part no longer served is removed");
        let _kept = dir.write(b"kept").unwrap();
        drop(dir);
        assert!(!root.exists(), "the job's directory goes with the job");
    }
}
