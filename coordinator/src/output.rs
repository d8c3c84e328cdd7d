//! Writing result files: checked before the work starts, written under a temporary name in the
//! same directory and committed when complete ([`shared::container::commit`]: synced, renamed,
//! the directory synced), so a final name never holds a partial file.

use anyhow::{Context, Result};
use shared::container::{commit, temp_path};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// An output path that has been checked to be writable.
#[derive(Debug, Clone)]
pub struct OutputFile {
    path: PathBuf,
    temp: PathBuf,
}

impl OutputFile {
    /// Checks now that the directory exists and accepts a new file (creating and removing the
    /// temporary file), so a long job does not fail at its end.
    pub fn prepare(path: &Path) -> Result<Self> {
        let name = path.file_name().with_context(|| format!("{} is not a file path", path.display()))?;
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if path.is_dir() {
            anyhow::bail!("cannot write {}: it is a directory", path.display());
        }
        let temp = dir.join(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
        File::create(&temp).with_context(|| format!("cannot write {}", path.display()))?;
        fs::remove_file(&temp).ok();
        Ok(OutputFile { path: path.to_path_buf(), temp })
    }

    /// Writes `bytes` to the temporary name, syncs, and renames onto the final name.
    pub fn write(&self, bytes: &[u8]) -> Result<()> {
        let result = (|| -> std::io::Result<()> {
            let mut f = File::create(&self.temp)?;
            f.write_all(bytes)?;
            commit(&f, &self.temp, &self.path)
        })();
        if result.is_err() {
            fs::remove_file(&self.temp).ok();
        }
        result.with_context(|| format!("cannot write {}", self.path.display()))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A file of `len` bytes under a temporary name, written in place and committed by
    /// [`MappedOutput::finish`]. Where it lives while it fills is `placement`'s choice.
    pub fn map(&self, len: u64, placement: Placement) -> Result<MappedOutput> {
        let mut out = self.clone();
        if placement == Placement::Resumable {
            out.temp = temp_path(&self.path);
        }
        let reopen =
            placement == Placement::Resumable && fs::metadata(&out.temp).is_ok_and(|m| m.len() == len);
        let result = (|| -> std::io::Result<memmap2::MmapMut> {
            if placement == Placement::Memory {
                let map = memmap2::MmapMut::map_anon(len as usize)?;
                // Huge pages where the kernel gives them: every page of a table is written,
                // and 4 KiB pages cost a fault each (1.95 million for EO2EP2's table).
                #[cfg(target_os = "linux")]
                let _ = map.advise(memmap2::Advice::HugePage);
                return Ok(map);
            }
            let f = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(!reopen)
                .open(&out.temp)?;
            f.set_len(len)?;
            // SAFETY: the file is this job's own temporary file; nothing else maps or truncates it.
            unsafe { memmap2::MmapMut::map_mut(&f) }
        })();
        match result {
            Ok(map) => Ok(MappedOutput { map: Some(map), out, placement }),
            Err(e) => {
                if placement != Placement::Memory {
                    fs::remove_file(&out.temp).ok();
                }
                Err(e).with_context(|| format!("cannot write {}", self.path.display()))
            }
        }
    }
}

/// Where a [`MappedOutput`] lives while it is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// In anonymous memory, written to the file once when finished: for a table whose every
    /// page is written again by several levels, which a file mapping would have the kernel
    /// write back each time (EO2EP2's 7.8 GB table cost 58 GB of writes that way).
    Memory,
    /// A file mapping under a temporary name: the kernel writes pages back as it needs the
    /// memory, so the table may be larger than what is left beside the job.
    Mapped,
    /// A file mapping under a fixed name (`NAME.partial`), reopened as it is when a killed run
    /// left it at the right length and kept when the run fails, so a resumed job finds the
    /// levels its journal lists.
    Resumable,
}

/// An output file being written in place; see [`OutputFile::map`].
pub struct MappedOutput {
    map: Option<memmap2::MmapMut>,
    out: OutputFile,
    placement: Placement,
}

impl MappedOutput {
    /// Commits the file: a table in memory is written as [`OutputFile::write`] writes; a
    /// mapping is flushed, its file synced and renamed onto the final name.
    pub fn finish(mut self) -> Result<()> {
        let map = self.map.take().expect("finished once");
        if self.placement == Placement::Memory {
            return self.out.write(&map);
        }
        let result = (|| -> std::io::Result<()> {
            map.flush()?;
            drop(map);
            commit(&File::open(&self.out.temp)?, &self.out.temp, &self.out.path)
        })();
        result.with_context(|| format!("cannot write {}", self.out.path.display()))
    }
}

impl std::ops::Deref for MappedOutput {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.map.as_deref().expect("not finished")
    }
}

impl std::ops::DerefMut for MappedOutput {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.map.as_deref_mut().expect("not finished")
    }
}

impl Drop for MappedOutput {
    fn drop(&mut self) {
        if self.map.take().is_some() && self.placement == Placement::Mapped {
            fs::remove_file(&self.out.temp).ok();
        }
    }
}

/// Peak resident set size of this process in bytes (Linux `VmHWM`; 0 where unavailable).
pub fn peak_rss_bytes() -> u64 {
    shared::units::proc_kib_field("/proc/self/status", "VmHWM:").unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_missing_directory_and_leaves_no_temp_file() {
        let dir = std::env::temp_dir().join(format!("cubefarm-out-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        assert!(OutputFile::prepare(&dir.join("missing/x.json")).is_err());
        assert!(OutputFile::prepare(&dir).is_err());
        let out = OutputFile::prepare(&dir.join("x.json")).unwrap();
        out.write(b"{}").unwrap();
        assert_eq!(fs::read(dir.join("x.json")).unwrap(), b"{}");
        let names: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Every placement ends as the same bytes under the final name, leaves no other file, and
    /// leaves nothing when dropped unfinished except a resumable file.
    #[test]
    fn a_mapped_output_is_committed_whole_wherever_it_filled() {
        let dir = std::env::temp_dir().join(format!("cubefarm-map-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let names = |dir: &Path| {
            let mut n: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).collect();
            n.sort();
            n
        };
        for placement in [Placement::Memory, Placement::Mapped, Placement::Resumable] {
            let out = OutputFile::prepare(&dir.join("t.dat")).unwrap();
            let mut map = out.map(4096 * 3 + 5, placement).unwrap();
            map.iter_mut().enumerate().for_each(|(i, b)| *b = (i % 251) as u8);
            map.finish().unwrap();
            let bytes = fs::read(dir.join("t.dat")).unwrap();
            assert!(
                bytes.len() == 4096 * 3 + 5 && bytes.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8)
            );
            assert_eq!(names(&dir), ["t.dat"], "{placement:?}");
            fs::remove_file(dir.join("t.dat")).unwrap();
            drop(out.map(100, placement).unwrap());
            let left = if placement == Placement::Resumable { 1 } else { 0 };
            assert_eq!(names(&dir).len(), left, "{placement:?}");
            for name in names(&dir) {
                fs::remove_file(dir.join(name)).unwrap();
            }
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn peak_rss_is_reported_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(peak_rss_bytes() > 0);
        }
    }
}
