//! The project's table container: the file layout every table it writes in its own format
//! shares (`--format cubefarm`), and the one way a file is committed under its final name.
//!
//! A container file is a 4096-byte header area (the magic `CFTABLE\0`, the length of a
//! bincode header, the header: the layout version and per section its kind, h, base, entries,
//! exact depth counts, buckets, offset, length and CRC-32; then the header's own CRC-32),
//! followed by the sections' payloads. Every CRC is checked when a file is read
//! ([`parse_sections`]). The payloads are other programs' bytes (the H48 solver's, cube20src's),
//! so a section can be handed to its program as it is. The H48 tables' layout of three sections
//! is in `crate::h48` (`docs/h48-tables.md`).
//!
//! Every file the project writes (tables in any format, JSON results) goes through [`commit`]:
//! written under a temporary name, synced, renamed, and the directory synced, so a final name
//! never holds a partial file, even after a power loss.

mod format;

pub use format::{TableFormat, UnknownFormat};

use crate::checksum::{crc32, Crc32};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The first bytes of a container file.
pub const MAGIC: [u8; 8] = *b"CFTABLE\0";
/// Version of the container layout; a reader refuses others. (2: the H48 solver's coordinate
/// and payloads.)
pub const TABLE_VERSION: u16 = 2;
/// Bytes reserved for the header.
pub const HEADER_AREA: u64 = 4096;

#[derive(Debug, thiserror::Error)]
pub enum TableFileError {
    #[error("not a table file this tool reads (a cubefarm table, an H48 solver blob, cube20src's p2p1h.dat or an nxopt table)")]
    Magic,
    #[error("table layout version {found}, this build reads version {expected}")]
    Version { found: u16, expected: u16 },
    #[error("file truncated: {0}")]
    Truncated(String),
    #[error("header checksum mismatch: the file is corrupt")]
    HeaderChecksum,
    #[error("section {name}: checksum mismatch (stored {stored:08x}, computed {computed:08x}): the file is corrupt")]
    SectionChecksum { name: String, stored: u32, computed: u32 },
    #[error("bad header: {0}")]
    Header(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// What a table section holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SectionKind {
    /// Per raw cocsep value (279,936): the solver's word `class << 16 | ttrep << 8 | depth`,
    /// or all ones where the value does not occur.
    Cocsep,
    /// The 2-bit hN table with line minima.
    H48,
    /// Per esep value the word `class << 16 | ttrep << 8`, then the 4-bit table over
    /// (esep class, eo).
    EoEsep,
    /// Rokicki's phase-2 table, cube20src's file bytes (`crate::phase2`), alone in its file.
    Phase2,
    /// The coset solver's phase-1 table (`crate::coset::phase1`): 32-bit little-endian entries,
    /// alone in its file; `h` is the entry encoding's version.
    CosetPhase1,
}

impl SectionKind {
    pub fn name(self, h: u8) -> String {
        match self {
            SectionKind::Cocsep => "cocsep".into(),
            SectionKind::H48 => format!("h48h{h}"),
            SectionKind::EoEsep => "eoesep".into(),
            SectionKind::Phase2 => "phase2".into(),
            SectionKind::CosetPhase1 => "coset-phase1".into(),
        }
    }
}

/// What a section holds and its counts; the payload is elsewhere.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionInfo {
    pub kind: SectionKind,
    /// Orientation bits kept (main table only).
    pub h: u8,
    /// Base of the 2-bit encoding (main table only).
    pub base: u8,
    pub entries: u64,
    /// Entries at each exact depth from 0 (empty when the file does not say).
    pub depth_counts: Vec<u64>,
    /// Entries deeper than the last depth counted.
    pub deeper: u64,
    /// The four 2-bit counts (main table only).
    pub buckets: Option<[u64; 4]>,
    pub len: u64,
}

/// One section held in memory: what it holds, and its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub info: SectionInfo,
    pub data: Vec<u8>,
}

/// A section's entry in the header: its info, where its payload starts, its CRC-32.
#[derive(Serialize, Deserialize)]
pub struct SectionHeader {
    pub info: SectionInfo,
    pub offset: u64,
    pub crc: u32,
}

#[derive(Serialize, Deserialize)]
struct Header {
    version: u16,
    sections: Vec<SectionHeader>,
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_fixed_int_encoding().with_little_endian()
}

/// The cubefarm header of `sections`: magic, length, the bincode header, its CRC-32.
pub fn header_area(sections: Vec<SectionHeader>) -> std::io::Result<Vec<u8>> {
    let encoded = bincode::serde::encode_to_vec(Header { version: TABLE_VERSION, sections }, config())
        .map_err(std::io::Error::other)?;
    let mut head = MAGIC.to_vec();
    head.extend((encoded.len() as u32).to_le_bytes());
    head.extend(&encoded);
    head.extend(crc32(&encoded).to_le_bytes());
    if head.len() as u64 > HEADER_AREA {
        return Err(std::io::Error::other("table header does not fit its area"));
    }
    Ok(head)
}

/// The name a table is written under until it is complete.
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".partial");
    path.with_file_name(name)
}

/// Gives `file` its full size with its blocks allocated where the filesystem can, so that a
/// full disk stops a build before it starts, not hours in.
pub fn reserve(file: &File, len: u64) -> std::io::Result<()> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: a valid open descriptor; posix_fallocate only allocates blocks of the file.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len as libc::off_t) };
    match rc {
        0 => Ok(()),
        libc::EOPNOTSUPP | libc::EINVAL => file.set_len(len),
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}

/// Syncs a complete temporary file and renames it onto its final name.
pub fn commit(file: &File, temp: &Path, path: &Path) -> std::io::Result<()> {
    file.sync_all()?;
    std::fs::rename(temp, path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Writes a file that processes on a shared file system may write at once (workers making
/// phase 1's table, keeping an index): `fill` writes it under a temporary name of this process,
/// so that none writes into another's, and [`commit`] puts it under `path`; the last rename
/// wins. A temporary file left by a failure is removed.
pub fn write_shared(path: &Path, fill: impl FnOnce(&File) -> std::io::Result<()>) -> std::io::Result<()> {
    let mut temp = temp_path(path).into_os_string();
    temp.push(format!(".{}", std::process::id()));
    let temp = PathBuf::from(temp);
    let result = (|| {
        let file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).open(&temp)?;
        fill(&file)?;
        commit(&file, &temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// Writes a cubefarm file of one section (a table kept in another program's bytes, such as the
/// phase-2 table): the header area, then `payload` with its CRC-32 and `info`'s counts
/// ([`write_shared`]).
pub fn write_single(path: &Path, info: SectionInfo, payload: &[u8]) -> std::io::Result<()> {
    assert_eq!(info.len, payload.len() as u64);
    write_shared(path, |file| {
        let head = header_area(vec![SectionHeader { info, offset: HEADER_AREA, crc: crc32(payload) }])?;
        file.write_all_at(&head, 0)?;
        file.write_all_at(payload, HEADER_AREA)
    })
}

/// Reads the payload of a file of one section of `kind` into `payload`, which must be the
/// section's length: the header, the section's kind and length and its CRC are checked.
pub fn read_single(
    path: &Path,
    kind: SectionKind,
    payload: &mut [u8],
) -> Result<SectionInfo, TableFileError> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut head = vec![0u8; HEADER_AREA.min(len) as usize];
    file.read_exact_at(&mut head, 0)?;
    if !is_container(&head) {
        return Err(TableFileError::Magic);
    }
    let header = read_header(&head)?;
    let section = match &header.sections[..] {
        [s] if s.info.kind == kind => s,
        _ => return Err(TableFileError::Header(format!("not a file of one {} section", kind.name(0)))),
    };
    if section.info.len != payload.len() as u64 {
        return Err(TableFileError::Header(format!(
            "the section holds {} bytes, {} expected",
            section.info.len,
            payload.len()
        )));
    }
    range_in(len, section.offset, section.info.len, &kind.name(0))?;
    file.read_exact_at(payload, section.offset)?;
    let computed = crc32(payload);
    if computed != section.crc {
        return Err(TableFileError::SectionChecksum { name: kind.name(0), stored: section.crc, computed });
    }
    Ok(section.info.clone())
}

/// Whether `bytes` start as a container file.
pub fn is_container(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// The byte range `at .. at + len` of `bytes`, or why the file is too short for it.
pub fn slice(bytes: &[u8], at: u64, len: u64, what: &str) -> Result<std::ops::Range<usize>, TableFileError> {
    range_in(bytes.len() as u64, at, len, what)
}

/// The range `at .. at + len` of a file of `total` bytes, or why the file is too short for it.
fn range_in(total: u64, at: u64, len: u64, what: &str) -> Result<std::ops::Range<usize>, TableFileError> {
    let end = at.checked_add(len).filter(|&e| e <= total);
    end.map(|e| at as usize..e as usize).ok_or_else(|| {
        TableFileError::Truncated(format!("{what} needs bytes {at}..{} of {total}", at.saturating_add(len)))
    })
}

/// Bytes read per window of a large section (a multiple of 64).
const WINDOW: usize = 1 << 28;

/// Calls `f` with consecutive windows of `range` (and each one's offset from its start), then
/// `release` with the window.
pub fn windows(
    bytes: &[u8],
    range: std::ops::Range<usize>,
    release: Release,
    mut f: impl FnMut(usize, &[u8]),
) {
    let mut at = range.start;
    while at < range.end {
        let end = (at + WINDOW).min(range.end);
        f(at - range.start, &bytes[at..end]);
        release(at..end);
        at = end;
    }
}

/// Drops the pages of `range` of a read-only file map from this process.
pub fn release_pages(map: &memmap2::Mmap, range: std::ops::Range<usize>) {
    // Page-aligned start; the map itself starts on a page.
    let page = 4096;
    let start = range.start / page * page;
    // Safety: the map is read-only and file-backed: dropped pages are read again from the file
    // on the next access, so no data is lost and no reference is invalidated.
    let _ =
        unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, range.end - start) };
}

/// What is done with a window once read (see [`release_pages`]).
pub type Release<'a> = &'a dyn Fn(std::ops::Range<usize>);

/// The header of a container file (which starts with [`MAGIC`]), its own CRC checked; the
/// payloads are not read (it needs the first [`HEADER_AREA`] bytes at most).
fn read_header(bytes: &[u8]) -> Result<Header, TableFileError> {
    let len_at = slice(bytes, 8, 4, "header length")?;
    let len = u32::from_le_bytes(bytes[len_at].try_into().expect("4 bytes")) as u64;
    if len + 16 > HEADER_AREA {
        return Err(TableFileError::HeaderChecksum);
    }
    let encoded = &bytes[slice(bytes, 12, len, "header")?];
    let stored =
        u32::from_le_bytes(bytes[slice(bytes, 12 + len, 4, "header checksum")?].try_into().expect("4"));
    if crc32(encoded) != stored {
        return Err(TableFileError::HeaderChecksum);
    }
    let (header, _): (Header, usize) = bincode::serde::decode_from_slice(encoded, config())
        .map_err(|e| TableFileError::Header(e.to_string()))?;
    if header.version != TABLE_VERSION {
        return Err(TableFileError::Version { found: header.version, expected: TABLE_VERSION });
    }
    Ok(header)
}

/// What the sections of a container file hold, from its header alone (a file's kind, told
/// without reading its payloads).
pub fn section_infos(head: &[u8]) -> Result<Vec<SectionInfo>, TableFileError> {
    Ok(read_header(head)?.sections.into_iter().map(|s| s.info).collect())
}

/// The sections of a container file (which starts with [`MAGIC`]), every CRC checked.
pub fn parse_sections(
    bytes: &[u8],
    release: Release,
) -> Result<Vec<(SectionInfo, std::ops::Range<usize>)>, TableFileError> {
    let header = read_header(bytes)?;
    header
        .sections
        .into_iter()
        .map(|h| {
            let name = h.info.kind.name(h.info.h);
            let range = slice(bytes, h.offset, h.info.len, &name)?;
            let mut crc = Crc32::default();
            windows(bytes, range.clone(), release, |_, w| crc.update(w));
            let computed = crc.finish();
            if computed != h.crc {
                return Err(TableFileError::SectionChecksum { name, stored: h.crc, computed });
            }
            Ok((h.info, range))
        })
        .collect()
}
