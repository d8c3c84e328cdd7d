//! The committed levels of parts this worker keeps for their owners, so that a part outlives
//! its owner: one file per level (`level-D`, the part's entries of depth D) and at most one
//! *base* (`base-D`, every entry of the part through depth D, how a new holder starts), under
//! `DIR/job-<id>/part-<k>/`. Files hold the messages as they came (shards: checksummed, keyed),
//! written under a temporary name and renamed.

use std::io;
use std::path::{Path, PathBuf};

/// What a stored file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// Every entry through the depth.
    Base,
    /// The entries of the depth.
    Level,
}

pub struct Replicas {
    dir: PathBuf,
    /// Made for this process (no --state-dir): removed when dropped.
    temporary: bool,
}

impl Replicas {
    /// The store of job `job` under `state_dir` (kept across restarts), or under a temporary
    /// directory of this process.
    pub fn new(state_dir: Option<&Path>, job: u64) -> io::Result<Self> {
        let (root, temporary) = match state_dir {
            Some(d) => (d.join("replicas"), false),
            None => (std::env::temp_dir().join(format!("cubefarm-replicas-{}", std::process::id())), true),
        };
        let dir = root.join(format!("job-{job:016x}"));
        std::fs::create_dir_all(&dir)?;
        Ok(Replicas { dir, temporary })
    }

    fn part_dir(&self, part: u32) -> PathBuf {
        self.dir.join(format!("part-{part}"))
    }

    fn name(kind: Stored, depth: u32) -> String {
        match kind {
            Stored::Base => format!("base-{depth}"),
            Stored::Level => format!("level-{depth}"),
        }
    }

    /// The stored files of `part`: (kind, depth), in no order.
    fn files(&self, part: u32) -> io::Result<Vec<(Stored, u32)>> {
        let dir = self.part_dir(part);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for entry in entries {
            let name = entry?.file_name();
            let name = name.to_string_lossy();
            let parsed = if let Some(d) = name.strip_prefix("base-") {
                d.parse().ok().map(|d| (Stored::Base, d))
            } else if let Some(d) = name.strip_prefix("level-") {
                d.parse().ok().map(|d| (Stored::Level, d))
            } else {
                None
            };
            out.extend(parsed);
        }
        Ok(out)
    }

    /// Keeps `bytes` as `kind` of depth `depth` of `part`. A base replaces everything held for
    /// the part; a level replaces that level and drops deeper ones (a level made again after an
    /// assignment changed).
    pub fn store(&self, part: u32, kind: Stored, depth: u32, bytes: &[u8]) -> io::Result<()> {
        let dir = self.part_dir(part);
        std::fs::create_dir_all(&dir)?;
        for (k, d) in self.files(part)? {
            let stale = match kind {
                Stored::Base => true,
                Stored::Level => d > depth || (k == Stored::Level && d == depth),
            };
            if stale {
                std::fs::remove_file(dir.join(Self::name(k, d)))?;
            }
        }
        let name = Self::name(kind, depth);
        let temp = dir.join(format!(".{name}.tmp"));
        // Renamed whole but not synced: a replica stands in for its owner's rows when the owner
        // is lost, and a killed process leaves its writes in the page cache; a holder that loses
        // its machine loses the replica with it, and the owner's copy is still there.
        std::fs::write(&temp, bytes)?;
        std::fs::rename(&temp, dir.join(name))
    }

    /// Whether anything is held for `part`.
    pub fn holds(&self, part: u32) -> bool {
        self.files(part).is_ok_and(|f| !f.is_empty())
    }

    /// What `part`'s owner needs of it through depth `through - 1`: the base (if any) and every
    /// level after it, oldest first, as stored. Fails if a level is missing.
    pub fn levels(&self, part: u32, through: u32) -> io::Result<Vec<(Stored, u32, Vec<u8>)>> {
        let files = self.files(part)?;
        let base = files.iter().filter(|(k, d)| *k == Stored::Base && *d < through).map(|(_, d)| *d).max();
        let first = base.map_or(0, |b| b + 1);
        let dir = self.part_dir(part);
        let mut out = Vec::new();
        if let Some(b) = base {
            out.push((Stored::Base, b, std::fs::read(dir.join(Self::name(Stored::Base, b)))?));
        }
        for d in first..through {
            let bytes = std::fs::read(dir.join(Self::name(Stored::Level, d))).map_err(|e| {
                io::Error::new(e.kind(), format!("level {d} of part {part} is not held here: {e}"))
            })?;
            out.push((Stored::Level, d, bytes));
        }
        Ok(out)
    }

    /// Forgets `part`.
    pub fn drop_part(&self, part: u32) -> io::Result<()> {
        match std::fs::remove_dir_all(self.part_dir(part)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

impl Drop for Replicas {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.dir);
            if let Some(parent) = self.dir.parent() {
                let _ = std::fs::remove_dir(parent);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_after_the_base_in_order_and_redone_levels_replace_deeper_ones() {
        let dir = std::env::temp_dir().join(format!("cubefarm-replica-test-{}", std::process::id()));
        let store = Replicas::new(Some(&dir), 7).unwrap();
        for d in 0..4 {
            store.store(3, Stored::Level, d, &[d as u8]).unwrap();
        }
        let got: Vec<_> = store.levels(3, 4).unwrap().into_iter().map(|(k, d, b)| (k, d, b[0])).collect();
        assert_eq!(
            got,
            [(Stored::Level, 0, 0), (Stored::Level, 1, 1), (Stored::Level, 2, 2), (Stored::Level, 3, 3)]
        );
        // Level 2 made again: level 3 goes.
        store.store(3, Stored::Level, 2, &[22]).unwrap();
        assert!(store.levels(3, 4).is_err(), "level 3 is gone");
        assert_eq!(store.levels(3, 3).unwrap()[2].2, [22]);
        // A base replaces everything.
        store.store(3, Stored::Base, 5, &[50]).unwrap();
        store.store(3, Stored::Level, 6, &[60]).unwrap();
        let got: Vec<_> = store.levels(3, 7).unwrap().into_iter().map(|(k, d, _)| (k, d)).collect();
        assert_eq!(got, [(Stored::Base, 5), (Stored::Level, 6)]);
        assert!(store.holds(3) && !store.holds(4));
        store.drop_part(3).unwrap();
        assert!(!store.holds(3));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
