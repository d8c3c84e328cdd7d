//! Where an owner keeps every level of its parts that it finished: on its own disk
//! ([`DiskStore`], one file per part and depth under `DIR/job-<id>/part-<k>/level-<d>`, written
//! under a temporary name and renamed), or in memory ([`MemoryStore`], the simulator's disks).
//! A level is kept as the part's rows message (a checksummed shard), so a damaged file is
//! refused when it is read, and the part is then made again.
//!
//! A kept level is read again only when something failed or a part moves, so the disk store
//! writes around the page cache (`O_DIRECT`, from a reused aligned buffer, where the file
//! system takes it): copying every level into fresh page-cache pages was the largest cost a
//! worker has beyond the embedded run's (docs/distribution.md, "What a byte costs").

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The levels an owner keeps.
pub trait LevelStore: Send + Sync {
    /// Keeps level `depth` of `part`: `len` bytes that `fill` writes into the slice it is
    /// given, the store's own buffer (a level is written once, where it is written from).
    fn put_with(&self, part: u32, depth: u32, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> io::Result<()>;
    /// Keeps level `depth` of `part`: the concatenation of `pieces`.
    fn put(&self, part: u32, depth: u32, pieces: &[&[u8]]) -> io::Result<()> {
        let len = pieces.iter().map(|p| p.len()).sum();
        self.put_with(part, depth, len, &mut |out| {
            let mut at = 0;
            for p in pieces {
                out[at..at + p.len()].copy_from_slice(p);
                at += p.len();
            }
        })
    }
    fn get(&self, part: u32, depth: u32) -> io::Result<Vec<u8>>;
    /// Per part with level 0 kept: how many levels `0 .. d` are kept without a gap.
    fn list(&self) -> io::Result<Vec<(u32, u32)>>;
    /// Forgets everything (the job is over).
    fn clear(&self) -> io::Result<()>;
}

/// Levels `0 .. d` without a gap, per part, from the (part, depth) pairs kept.
fn runs(kept: impl IntoIterator<Item = (u32, u32)>) -> Vec<(u32, u32)> {
    let mut by_part: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (part, depth) in kept {
        by_part.entry(part).or_default().push(depth);
    }
    by_part
        .into_iter()
        .filter_map(|(part, mut depths)| {
            depths.sort_unstable();
            let run = depths.iter().enumerate().take_while(|(i, &d)| d == *i as u32).count() as u32;
            (run > 0).then_some((part, run))
        })
        .collect()
}

/// Levels in files under a job's directory.
pub struct DiskStore {
    dir: PathBuf,
    /// Whether writes go around the page cache (cleared when the file system refuses them).
    direct: AtomicBool,
    /// Aligned buffers of earlier writes, reused.
    spare: Mutex<Vec<Vec<Block>>>,
}

/// The unit of a write around the page cache: addresses, lengths and offsets are multiples of it.
const BLOCK: usize = 4096;

#[derive(Clone, Copy)]
#[repr(C, align(4096))]
struct Block([u8; BLOCK]);

/// Buffers kept for reuse.
const SPARE_BUFFERS: usize = 4;

impl DiskStore {
    /// The store of job `job` under `root` (created if needed).
    pub fn open(root: &Path, job: u64) -> io::Result<Self> {
        let dir = root.join(format!("job-{job:016x}"));
        std::fs::create_dir_all(&dir)?;
        Ok(DiskStore { dir, direct: AtomicBool::new(cfg!(target_os = "linux")), spare: Mutex::default() })
    }

    fn path(&self, part: u32, depth: u32) -> PathBuf {
        self.dir.join(format!("part-{part}")).join(format!("level-{depth}"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `bytes` (whole blocks, of which the first `len` bytes are the file's) to a new
    /// file `path` around the page cache: `Ok(false)` if the file system does not take such
    /// writes (nothing is left at `path` then).
    #[cfg(target_os = "linux")]
    fn write_direct(path: &Path, bytes: &[u8], len: usize) -> io::Result<bool> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_DIRECT)
            .open(path);
        let written = opened.and_then(|mut file| {
            file.write_all(bytes)?;
            file.set_len(len as u64)
        });
        match written {
            Ok(()) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                let _ = std::fs::remove_file(path);
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn write_direct(_path: &Path, _bytes: &[u8], _len: usize) -> io::Result<bool> {
        Ok(false)
    }

    /// Writes the file `path` of `len` bytes that `fill` writes, from an aligned buffer.
    fn write(&self, path: &Path, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> io::Result<()> {
        use std::io::Write;
        let mut buffer = self.spare.lock().ok().and_then(|mut s| s.pop()).unwrap_or_default();
        let blocks = len.div_ceil(BLOCK);
        // A reused buffer's old bytes are overwritten, not cleared first; one too small is
        // replaced rather than grown, which would copy its old bytes (levels grow level by
        // level, so most writes of a dense level found a buffer too small).
        if buffer.capacity() < blocks {
            buffer = Vec::with_capacity(blocks);
        }
        buffer.resize(blocks, Block([0; BLOCK]));
        // SAFETY: `Block` is plain bytes, laid out one after another.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(buffer.as_mut_ptr().cast::<u8>(), buffer.len() * BLOCK) };
        fill(&mut bytes[..len]);
        bytes[len..].fill(0);
        let written = (|| {
            if self.direct.load(Ordering::Relaxed) && Self::write_direct(path, bytes, len)? {
                return Ok(());
            }
            self.direct.store(false, Ordering::Relaxed);
            std::fs::File::create(path)?.write_all(&bytes[..len])
        })();
        if let Ok(mut spare) = self.spare.lock() {
            if spare.len() < SPARE_BUFFERS {
                spare.push(buffer);
            }
        }
        written
    }
}

impl LevelStore for DiskStore {
    fn put_with(&self, part: u32, depth: u32, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> io::Result<()> {
        let path = self.path(part, depth);
        std::fs::create_dir_all(path.parent().expect("a part directory"))?;
        let temp = path.with_extension("tmp");
        self.write(&temp, len, fill)?;
        std::fs::rename(&temp, &path)
    }

    fn get(&self, part: u32, depth: u32) -> io::Result<Vec<u8>> {
        std::fs::read(self.path(part, depth))
    }

    fn list(&self) -> io::Result<Vec<(u32, u32)>> {
        let mut kept = Vec::new();
        for part in std::fs::read_dir(&self.dir)? {
            let part = part?;
            let Some(k) = part.file_name().to_str().and_then(|n| n.strip_prefix("part-")?.parse().ok())
            else {
                continue;
            };
            for level in std::fs::read_dir(part.path())? {
                let name = level?.file_name();
                if let Some(d) = name.to_str().and_then(|n| n.strip_prefix("level-")?.parse().ok()) {
                    kept.push((k, d));
                }
            }
        }
        Ok(runs(kept))
    }

    fn clear(&self) -> io::Result<()> {
        match std::fs::remove_dir_all(&self.dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// Levels in memory, shared by clones (a simulated disk outlives the worker that wrote it).
#[derive(Clone, Default)]
pub struct MemoryStore(Arc<Mutex<Levels>>);

/// Stored levels by (part, depth).
type Levels = BTreeMap<(u32, u32), Vec<u8>>;

impl MemoryStore {
    fn map(&self) -> std::sync::MutexGuard<'_, Levels> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Flips a bit of a kept level (a damaged disk, for the simulator).
    pub fn damage(&self, part: u32, depth: u32) -> bool {
        match self.map().get_mut(&(part, depth)) {
            Some(bytes) if !bytes.is_empty() => {
                let at = bytes.len() / 2;
                bytes[at] ^= 0x10;
                true
            }
            _ => false,
        }
    }
}

impl LevelStore for MemoryStore {
    fn put_with(&self, part: u32, depth: u32, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> io::Result<()> {
        let mut bytes = vec![0; len];
        fill(&mut bytes);
        self.map().insert((part, depth), bytes);
        Ok(())
    }

    fn get(&self, part: u32, depth: u32) -> io::Result<Vec<u8>> {
        self.map().get(&(part, depth)).cloned().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }

    fn list(&self) -> io::Result<Vec<(u32, u32)>> {
        Ok(runs(self.map().keys().copied()))
    }

    fn clear(&self) -> io::Result<()> {
        self.map().clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_lists_the_levels_it_keeps_without_a_gap() {
        assert_eq!(runs([(3, 0), (3, 1), (3, 3), (4, 1), (5, 0)]), [(3, 2), (5, 1)]);
        let dir = std::env::temp_dir().join(format!("cubefarm-store-{}", std::process::id()));
        let store = DiskStore::open(&dir, 7).unwrap();
        store.put(2, 0, &[b"a"]).unwrap();
        store.put(2, 1, &[b"b", b""]).unwrap();
        store.put(9, 1, &[b"c"]).unwrap();
        // A level longer than a block, in pieces of odd lengths, reads back whole.
        let long: Vec<u8> = (0..3 * BLOCK as u32 + 5).map(|i| (i * 7) as u8).collect();
        store.put(4, 0, &[&long[..1], &long[1..BLOCK + 3], &long[BLOCK + 3..]]).unwrap();
        assert_eq!(store.get(4, 0).unwrap(), long);
        assert_eq!(store.list().unwrap(), [(2, 2), (4, 1)]);
        assert_eq!(store.get(2, 1).unwrap(), b"b");
        assert!(store.get(2, 5).is_err());
        store.clear().unwrap();
        assert!(!store.dir().exists());
        std::fs::remove_dir_all(&dir).unwrap();
        // Buffered writes, as a file system that refuses writes around the page cache gets.
        let store = DiskStore::open(&dir, 7).unwrap();
        store.direct.store(false, Ordering::Relaxed);
        store.put(4, 0, &[&long[..5], &long[5..]]).unwrap();
        store.put(4, 1, &[b"d"]).unwrap();
        assert_eq!((store.get(4, 0).unwrap(), store.get(4, 1).unwrap()), (long, b"d".to_vec()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
