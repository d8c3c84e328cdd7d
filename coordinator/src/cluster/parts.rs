//! Where a row search's level inputs wait while workers download them: each part (one task's
//! rows, see `shared::wire::PartCut`) is a file in a directory of the job's, so the
//! coordinator's memory holds the engine's arrays and not the compressed inputs beside them
//! (for edges HTM about 4 GB at the largest levels). The page cache serves recent parts at
//! memory speed when there is room; when there is not, the disk does.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Names of part directories: this prefix, the coordinator's process id, a job number.
const PREFIX: &str = "cubefarm-parts-";

/// The job's directory of parts: under the system's temporary directory (`$TMPDIR`), removed
/// with everything in it when the job ends; or, for a job with a state directory, a directory
/// there whose parts have stable names (see [`Self::durable`]).
pub struct PartDir {
    path: PathBuf,
    written: AtomicU64,
    /// Files of parts no longer served, overwritten by the next parts: their pages are still
    /// in the page cache, where a new file's would be allocated afresh (on a virtual machine,
    /// writing a part to fresh pages cost the coordinator about as much as decoding it).
    /// `None` for a durable directory, whose files are removed when no longer served.
    spares: Option<Arc<Mutex<Vec<PathBuf>>>>,
}

/// Spare files kept for reuse (about two levels' parts).
const SPARE_FILES: usize = 256;

impl PartDir {
    /// Makes the directory, after removing those a killed coordinator left behind.
    pub fn create() -> io::Result<Self> {
        static JOBS: AtomicU64 = AtomicU64::new(0);
        let root = std::env::temp_dir();
        remove_orphans(&root);
        let n = JOBS.fetch_add(1, Ordering::Relaxed);
        let path = root.join(format!("{PREFIX}{}-{n}", std::process::id()));
        fs::create_dir_all(&path)?;
        Ok(PartDir { path, written: AtomicU64::new(0), spares: Some(Arc::default()) })
    }

    /// A directory whose parts outlive the process, for a job that resumes: each part is
    /// written to a temporary name and renamed to one given by its input and number
    /// ([`Self::write_named`]), found again by [`Self::open_named`], and removed once released
    /// ([`PartFile::release`]) and no longer served; the directory and the parts not released
    /// stay (after a finished job, those of its last level, as the embedded run leaves its bit
    /// arrays).
    pub fn durable(path: PathBuf) -> io::Result<Self> {
        fs::create_dir_all(&path)?;
        Ok(PartDir { path, written: AtomicU64::new(0), spares: None })
    }

    fn named(&self, input: &str, k: u32) -> PathBuf {
        self.path.join(format!("{}.{k}.part", input.replace('/', "-")))
    }

    /// Keeps `bytes` as part `k` of the input `input` ("frontier-all/7"): under its own name in
    /// a durable directory, else as [`Self::write`] does.
    pub fn write_named(&self, input: &str, k: u32, bytes: &[u8]) -> io::Result<Arc<PartFile>> {
        if self.spares.is_some() {
            return self.write(bytes);
        }
        let path = self.named(input, k);
        let temporary = path.with_extension("tmp");
        fs::write(&temporary, bytes)
            .and_then(|()| fs::rename(&temporary, &path))
            .map_err(|e| io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))?;
        Ok(Arc::new(PartFile {
            path,
            len: bytes.len() as u64,
            spares: None,
            released: AtomicBool::new(false),
        }))
    }

    /// Whether an earlier run of the job left part `k` of the input `input` in this durable
    /// directory.
    pub fn has_named(&self, input: &str, k: u32) -> bool {
        self.named(input, k).is_file()
    }

    /// Part `k` of the input `input` as an earlier run of the job left it in a durable
    /// directory, if there, to be served again (its file goes when no longer served).
    pub fn open_named(&self, input: &str, k: u32) -> Option<Arc<PartFile>> {
        let path = self.named(input, k);
        let len = fs::metadata(&path).ok()?.len();
        Some(Arc::new(PartFile { path, len, spares: None, released: AtomicBool::new(false) }))
    }

    /// Removes the files of a durable directory that `keep` refuses (by input name and part),
    /// and any temporary file.
    pub fn remove_unless(&self, keep: impl Fn(&str, u32) -> bool) -> io::Result<()> {
        for entry in fs::read_dir(&self.path)? {
            let path = entry?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let kept = name.strip_suffix(".part").and_then(|n| n.rsplit_once('.')).and_then(|(input, k)| {
                let (kind, depth) = input.rsplit_once('-')?;
                Some(keep(&format!("{kind}/{depth}"), k.parse().ok()?))
            });
            if kept != Some(true) {
                fs::remove_file(&path)?;
            }
        }
        Ok(())
    }

    /// Makes `parts` and the directory's entries durable (fsync).
    pub fn sync(&self, parts: &[Arc<PartFile>]) -> io::Result<()> {
        for part in parts {
            File::open(&part.path)?.sync_all()?;
        }
        File::open(&self.path)?.sync_all()
    }

    /// Keeps `bytes` as a part, in a spare file if there is one, else in a new one; the file
    /// becomes a spare when the last handle to it goes.
    pub fn write(&self, bytes: &[u8]) -> io::Result<Arc<PartFile>> {
        let spare = self.spares.as_ref().and_then(|s| s.lock().ok()).and_then(|mut s| s.pop());
        let path = spare.unwrap_or_else(|| {
            let n = self.written.fetch_add(1, Ordering::Relaxed);
            self.path.join(format!("{n}.part"))
        });
        let written = OpenOptions::new().write(true).create(true).truncate(false).open(&path).and_then(|f| {
            f.write_all_at(bytes, 0)?;
            f.set_len(bytes.len() as u64)
        });
        written.map_err(|e| io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))?;
        Ok(Arc::new(PartFile {
            path,
            len: bytes.len() as u64,
            spares: self.spares.clone(),
            released: AtomicBool::new(true),
        }))
    }
}

/// Removes the part directories under `root` whose coordinator process no longer exists.
fn remove_orphans(root: &std::path::Path) {
    let Ok(entries) = fs::read_dir(root) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else { continue };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else { continue };
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } == -1
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

impl Drop for PartDir {
    fn drop(&mut self) {
        if self.spares.is_some() {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// One part on disk.
pub struct PartFile {
    path: PathBuf,
    len: u64,
    /// Where the file goes when no longer served (`None`: it is removed, if released).
    spares: Option<Arc<Mutex<Vec<PathBuf>>>>,
    /// No later level reads it: it may go once no longer served. A durable part not released
    /// stays when the process ends, for the job to resume from (see [`PartDir::durable`]).
    released: AtomicBool,
}

impl PartFile {
    /// Marks the part as read by no later level (see `released`).
    pub fn release(&self) {
        self.released.store(true, Ordering::Relaxed);
    }

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
        let path = std::mem::take(&mut self.path);
        if !self.released.load(Ordering::Relaxed) {
            return;
        }
        if let Some(Ok(mut spares)) = self.spares.as_ref().map(|s| s.lock()) {
            if spares.len() < SPARE_FILES {
                spares.push(path);
                return;
            }
        }
        let _ = fs::remove_file(path);
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
    fn parts_are_read_back_their_files_reused_and_removed_with_their_directory() {
        let dir = PartDir::create().unwrap();
        let root = dir.path.clone();
        let bytes: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
        let part = dir.write(&bytes).unwrap();
        let served = InputPart::File(part.clone());
        assert_eq!((served.size(), served.read(4990, 10).unwrap()), (5000, bytes[4990..].to_vec()));
        let path = part.path.clone();
        drop(part);
        assert_eq!(served.read(0, 10).unwrap(), bytes[..10], "a part being served stays");
        drop(served);
        // A part no longer served leaves its file to the next part, cut to its length.
        let next = dir.write(b"kept").unwrap();
        assert_eq!(next.path, path);
        assert_eq!((next.size(), fs::metadata(&path).unwrap().len()), (4, 4));
        assert_eq!(InputPart::File(next).read(0, 4).unwrap(), b"kept");
        drop(dir);
        assert!(!root.exists(), "the job's directory goes with the job");
    }

    #[test]
    fn durable_parts_keep_their_names_and_stay_unless_released() {
        let root = std::env::temp_dir().join(format!("cubefarm-durable-parts-{}", std::process::id()));
        let dir = PartDir::durable(root.clone()).unwrap();
        let kept = dir.write_named("frontier-all/7", 3, b"seven").unwrap();
        let released = dir.write_named("unvisited-all/5", 0, b"five").unwrap();
        assert!(dir.has_named("frontier-all/7", 3) && !dir.has_named("frontier-all/7", 2));
        released.release();
        drop((kept, released));
        drop(dir);
        // A later process finds what was not released, and only that.
        let dir = PartDir::durable(root.clone()).unwrap();
        assert!(!dir.has_named("unvisited-all/5", 0));
        let found = dir.open_named("frontier-all/7", 3).unwrap();
        assert_eq!(InputPart::File(found).read(0, 5).unwrap(), b"seven");
        fs::write(root.join("frontier-all-8.0.tmp"), b"half written").unwrap();
        dir.write_named("frontier-all/8", 1, b"eight").unwrap();
        dir.remove_unless(|name, k| name == "frontier-all/7" && k == 3).unwrap();
        let left: Vec<_> = fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["frontier-all-7.3.part"]);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn directories_of_killed_coordinators_are_removed() {
        // A process that has exited and been reaped: its id names no process (until reused).
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        let dead_pid = dead.id();
        dead.wait().unwrap();
        let orphan = std::env::temp_dir().join(format!("{PREFIX}{dead_pid}-0"));
        fs::create_dir_all(&orphan).unwrap();
        fs::write(orphan.join("0.part"), b"left behind").unwrap();
        let live = PartDir::create().unwrap();
        assert!(!orphan.exists(), "the directory of a process that is gone is removed");
        assert!(live.path.exists(), "this process's own directory stays");
    }
}
