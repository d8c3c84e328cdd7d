//! Bit arrays for the BFS state, backed by memory maps: anonymous (RAM, pages appear as they
//! are touched) or a file in a state directory (so the state can exceed RAM and live on disk).

use memmap2::{MmapMut, MmapOptions};
use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// A zero-initialized array of 64-bit words.
pub struct BitStore {
    map: MmapMut,
    words: usize,
    /// The backing file of a file-backed store (cleared by punching a hole, see [`Self::clear`]).
    file: Option<File>,
}

impl BitStore {
    /// An anonymous mapping of `words` zero words.
    pub fn anonymous(words: usize) -> io::Result<Self> {
        let map = MmapOptions::new().len((words * 8).max(8)).map_anon()?;
        // Transparent huge pages cut the faults of first touching gigabytes of state by about
        // two orders of magnitude (edges to depth 9: 23.7 s of system time against 69.8 s with
        // 4 KiB pages; docs/kernels.md); where the kernel refuses, 4 KiB pages work.
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::HugePage);
        Ok(BitStore { map, words, file: None })
    }

    /// A mapping of a new file `path` of `words` zero words (any old content is discarded).
    pub fn file(path: &Path, words: usize) -> io::Result<Self> {
        let f = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path)?;
        f.set_len((words * 8).max(8) as u64)?;
        // SAFETY: the file was just created and sized by this process, which maps it once; the
        // state directory belongs to one job (the caller's contract), so nothing else resizes or
        // writes it while mapped.
        let map = unsafe { MmapOptions::new().map_mut(&f)? };
        Ok(BitStore { map, words, file: Some(f) })
    }

    /// Maps an existing file of exactly `words` words (to resume a job); refuses other sizes.
    pub fn open_existing(path: &Path, words: usize) -> io::Result<Self> {
        let f = OpenOptions::new().read(true).write(true).open(path)?;
        let len = f.metadata()?.len();
        if len != (words * 8).max(8) as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} has {len} bytes, expected {}", path.display(), words * 8),
            ));
        }
        // SAFETY: as in `file`: the state directory belongs to this job.
        let map = unsafe { MmapOptions::new().map_mut(&f)? };
        Ok(BitStore { map, words, file: Some(f) })
    }

    /// Writes dirty pages of a file-backed store to disk (a no-op for anonymous memory).
    pub fn flush(&self) -> io::Result<()> {
        self.map.flush()
    }

    pub fn words(&self) -> &[u64] {
        // SAFETY: the mapping is page aligned (so 8-byte aligned), at least words * 8 bytes
        // long, and any bit pattern is a valid u64.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast::<u64>(), self.words) }
    }

    pub fn words_mut(&mut self) -> &mut [u64] {
        // SAFETY: as in `words`, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.map.as_mut_ptr().cast::<u64>(), self.words) }
    }

    /// Sets every word to zero. A file-backed store punches a hole over the whole file (its
    /// size never changes, so a kill at any moment leaves a file a resume accepts), so nothing
    /// is written; where the file system refuses, the words are written as zeros. An anonymous
    /// store zeroes only the chunks that hold a set bit: a page never written reads as zero
    /// already, and a sparse level touches few. (Giving the pages back to the kernel instead
    /// had it clear each again on the next write fault: a tenth of a complete edges search.)
    pub fn clear(&mut self) -> io::Result<()> {
        use rayon::prelude::*;
        if let Some(f) = &self.file {
            if punch_hole(f)? {
                return Ok(());
            }
        }
        self.words_mut().par_chunks_mut(CLEAR_CHUNK_WORDS).for_each(|chunk| {
            if chunk.iter().any(|&w| w != 0) {
                chunk.fill(0);
            }
        });
        Ok(())
    }
}

/// Words of one unit of [`BitStore::clear`]: a 2 MiB huge page.
const CLEAR_CHUNK_WORDS: usize = (2 << 20) / 8;

/// Deallocates every block of `f` keeping its size; false where the file system refuses.
#[cfg(target_os = "linux")]
fn punch_hole(f: &File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let len = f.metadata()?.len() as libc::off_t;
    // SAFETY: a valid open file descriptor and a range within the file; the call only changes
    // the file's blocks, and `&mut self` in the caller means nothing reads the mapping meanwhile
    // (its pages read as zero afterwards).
    let rc = unsafe {
        libc::fallocate(f.as_raw_fd(), libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, 0, len)
    };
    if rc == 0 {
        return Ok(true);
    }
    match io::Error::last_os_error() {
        e if e.raw_os_error() == Some(libc::EOPNOTSUPP) => Ok(false),
        e => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn punch_hole(_f: &File) -> io::Result<bool> {
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clearing_a_file_keeps_its_size_and_zeroes_every_word() {
        let path = std::env::temp_dir().join(format!("cubefarm-bitstore-{}", std::process::id()));
        let words = 300_000;
        let mut store = BitStore::file(&path, words).unwrap();
        store.words_mut().iter_mut().step_by(997).for_each(|w| *w = u64::MAX);
        store.flush().unwrap();
        store.clear().unwrap();
        assert!(store.words().iter().all(|&w| w == 0));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), words as u64 * 8);
        // What a resume would open: the same size, all zero.
        drop(store);
        let again = BitStore::open_existing(&path, words).unwrap();
        assert!(again.words().iter().all(|&w| w == 0));
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn clearing_memory_zeroes_every_written_chunk() {
        // Three chunks and a part: words set in the first, the last and the partial one.
        let words = 3 * CLEAR_CHUNK_WORDS + 1000;
        let mut store = BitStore::anonymous(words).unwrap();
        for w in [0, 17, CLEAR_CHUNK_WORDS - 1, 2 * CLEAR_CHUNK_WORDS + 5, words - 1] {
            store.words_mut()[w] = 1 << (w % 64);
        }
        store.clear().unwrap();
        assert!(store.words().iter().all(|&w| w == 0));
    }
}
