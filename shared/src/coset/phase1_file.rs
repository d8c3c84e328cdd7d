//! Phase 1's distance table kept in a file (`coset --phase1-table`), as hcoset keeps
//! `p1p1h.dat`: read in well under a second instead of made in about four. The file is the
//! project's container (a versioned header and a CRC-32, see `crate::container`) around the
//! table's 32-bit entries; a file that fails a check is refused, never used.

use super::phase1::{Entries, Phase1};
use crate::container::{self, SectionInfo, SectionKind, TableFileError};
use std::path::Path;

/// Version of the entries' encoding (`phase1.rs`'s `encode`); a file of another is refused.
const ENCODING: u8 = 1;

/// Why the table file could not serve.
#[derive(Debug, thiserror::Error)]
pub enum Phase1FileError {
    #[error("phase-1 table {path}: {reason} (delete it to make it again)")]
    Refused { path: String, reason: TableFileError },
    #[error("phase-1 table {path}: entry encoding {found}, this build uses {ENCODING} (delete it to make it again)")]
    Encoding { path: String, found: u8 },
    #[error("phase-1 table {path}: {entries} entries, not this build's table (delete it to make it again)")]
    Size { path: String, entries: u64 },
    #[error("phase-1 table {path}: cannot write it: {reason}")]
    Write { path: String, reason: std::io::Error },
    #[error("phase 1's distance table: {0}")]
    Build(#[from] crate::bfs::BfsError),
}

/// Where the table came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Read,
    /// Made here and written to the file, which did not exist.
    Written,
}

/// The table from `path` if it exists (every check passed), else made and written there
/// (under a temporary name, then renamed).
pub fn load_or_make(path: &Path) -> Result<(Phase1, Origin), Phase1FileError> {
    let shown = path.display().to_string();
    let refused = |reason| Phase1FileError::Refused { path: shown.clone(), reason };
    let info = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(refused(e.into())),
        Ok(meta) => Some((read_info(path).map_err(refused)?, meta.len())),
    };
    let Some((info, file_len)) = info else {
        // A directory that is not there fails now, not after the table is made.
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
            let reason =
                std::io::Error::new(std::io::ErrorKind::NotFound, format!("no directory {}", dir.display()));
            return Err(Phase1FileError::Write { path: shown, reason });
        }
        let phase1 = Phase1::new()?;
        let payload = as_bytes(phase1.entries());
        let info = SectionInfo {
            kind: SectionKind::CosetPhase1,
            h: ENCODING,
            base: 0,
            entries: phase1.entries().len() as u64,
            depth_counts: Vec::new(),
            deeper: 0,
            buckets: None,
            len: payload.len() as u64,
        };
        container::write_single(path, info, &payload)
            .map_err(|reason| Phase1FileError::Write { path: shown.clone(), reason })?;
        return Ok((phase1, Origin::Written));
    };
    if info.h != ENCODING {
        return Err(Phase1FileError::Encoding { path: shown, found: info.h });
    }
    if info.len != 4 * info.entries || info.entries > u32::MAX as u64 {
        return Err(Phase1FileError::Size { path: shown, entries: info.entries });
    }
    // Refused before its memory is allocated.
    if info.len.saturating_add(container::HEADER_AREA) > file_len {
        let what = format!("{} bytes of entries in a file of {file_len}", info.len);
        return Err(refused(TableFileError::Truncated(what)));
    }
    let mut entries = Entries::zeroed(info.entries as usize).map_err(|e| refused(e.into()))?;
    container::read_single(path, SectionKind::CosetPhase1, entries.bytes_mut()).map_err(refused)?;
    for e in entries.iter_mut() {
        *e = u32::from_le(*e);
    }
    match Phase1::with_entries(entries)? {
        Some(phase1) => Ok((phase1, Origin::Read)),
        None => Err(Phase1FileError::Size { path: shown, entries: info.entries }),
    }
}

/// The section's counts from the header alone.
fn read_info(path: &Path) -> Result<SectionInfo, TableFileError> {
    let mut head = vec![0u8; container::HEADER_AREA as usize];
    let file = std::fs::File::open(path)?;
    let n = std::os::unix::fs::FileExt::read_at(&file, &mut head, 0)?;
    head.truncate(n);
    if !container::is_container(&head) {
        return Err(TableFileError::Magic);
    }
    match &container::section_infos(&head)?[..] {
        [info] if info.kind == SectionKind::CosetPhase1 => Ok(info.clone()),
        _ => Err(TableFileError::Header("not a coset phase-1 table".into())),
    }
}

/// The entries as little-endian bytes.
fn as_bytes(entries: &[u32]) -> Vec<u8> {
    entries.iter().flat_map(|e| e.to_le_bytes()).collect()
}
