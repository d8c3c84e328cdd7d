//! Table files in two layouts (docs/h48-tables.md). Both hold the same three payloads, byte for
//! byte the solver's (docs/h48-tables.md): the cocsep words, the 2-bit main table and the edge
//! fallback table.
//!
//! - *cubefarm*: a 4096-byte header area (magic, a bincode header with per section its kind,
//!   h, base, entries, exact depth counts, buckets, offset, length and CRC-32, then the header's
//!   own CRC-32), then the payloads at 64-byte-aligned offsets. Everything is checked when
//!   loaded.
//! - *h48*: exactly the blob the H48 solver generates and loads: each payload after the
//!   solver's 512-byte info block, no checksums.
//!
//! A table is written through [`TableWriter`]: the file is created at full size under a
//! temporary name, the main table is written at offsets (row by row, in any order), and
//! [`TableWriter::finish`] adds the small sections and headers, syncs and renames. Files are
//! read through a memory map ([`TableFile`]), so a 60 GB table need not fit in memory.

use super::table::{line_count, LINE_BYTES};
use crate::checksum::{crc32, Crc32};
use crate::container::{
    commit, header_area, is_container, parse_sections, release_pages, reserve, slice, temp_path, windows,
    Release, Section, SectionHeader, SectionInfo, SectionKind, TableFileError, TableFormat, HEADER_AREA,
};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The solver's info block.
pub const INFO_BYTES: usize = 512;
const ALIGN: u64 = 64;

/// Payload sizes that do not depend on N (docs/h48-tables.md).
pub const COCSEP_PAYLOAD: u64 = 279_936 * 4;
pub const EOESEP_PAYLOAD: u64 = 34_650 * 4 + 782 * 2048 / 2;

fn align(n: u64) -> u64 {
    n.div_ceil(ALIGN) * ALIGN
}

/// The solver's number of entries of hN: 3393 x 34,650 x 2^N.
pub fn main_entries(h: u8) -> u64 {
    (3393 * 34_650) << h
}

/// The payload offsets of a table file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub format: TableFormat,
    pub h: u8,
    pub cocsep: u64,
    pub main: u64,
    pub main_len: u64,
    pub eoesep: u64,
    pub total: u64,
}

/// A format the H48 tables are not written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the H48 tables are written as cubefarm or h48, not {0}")]
pub struct NotAnH48Format(pub TableFormat);

impl Layout {
    /// The layout of table hN in `format` (the H48 tables are written as cubefarm or h48).
    pub fn new(format: TableFormat, h: u8) -> Result<Layout, NotAnH48Format> {
        let main_len = line_count(main_entries(h)) * LINE_BYTES as u64;
        let info = INFO_BYTES as u64;
        Ok(match format {
            TableFormat::H48 => {
                let cocsep = info;
                let main = cocsep + COCSEP_PAYLOAD + info;
                let eoesep = main + main_len + info;
                Layout { format, h, cocsep, main, main_len, eoesep, total: eoesep + EOESEP_PAYLOAD }
            }
            TableFormat::Cubefarm => {
                let cocsep = HEADER_AREA;
                let main = align(cocsep + COCSEP_PAYLOAD);
                let eoesep = align(main + main_len);
                Layout { format, h, cocsep, main, main_len, eoesep, total: align(eoesep + EOESEP_PAYLOAD) }
            }
            other => return Err(NotAnH48Format(other)),
        })
    }
}

/// Writes one table file: full size under a temporary name, main table at offsets, the rest
/// and the headers at the end, then the rename.
pub struct TableWriter {
    file: File,
    temp: PathBuf,
    path: PathBuf,
    layout: Layout,
}

impl TableWriter {
    /// Creates (or, with `resume`, reopens) the temporary file for `path`.
    pub fn create(path: &Path, layout: Layout, resume: bool) -> std::io::Result<TableWriter> {
        let temp = temp_path(path);
        let file = if resume && temp.exists() {
            let file = std::fs::OpenOptions::new().read(true).write(true).open(&temp)?;
            if file.metadata()?.len() != layout.total {
                return Err(std::io::Error::other(format!(
                    "{} has {} bytes, not the {} this table takes: remove it to start over",
                    temp.display(),
                    file.metadata()?.len(),
                    layout.total
                )));
            }
            file
        } else {
            let file =
                std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&temp)?;
            reserve(&file, layout.total)?;
            file
        };
        Ok(TableWriter { file, temp, path: path.to_path_buf(), layout })
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The temporary name the file is written under.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// Writes bytes of the main table at `offset` from its start.
    pub fn write_main(&self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        assert!(offset + bytes.len() as u64 <= self.layout.main_len, "main table write out of range");
        self.file.write_all_at(bytes, self.layout.main + offset)
    }

    /// Makes what was written durable (before a journal records it).
    pub fn sync(&self) -> std::io::Result<()> {
        self.file.sync_data()
    }

    /// Reads bytes of the main table at `offset`.
    pub fn read_main(&self, offset: u64, bytes: &mut [u8]) -> std::io::Result<()> {
        self.file.read_exact_at(bytes, self.layout.main + offset)
    }

    /// Writes the small sections and the headers, syncs, and renames the file to its name.
    pub fn finish(self, cocsep: &Section, main: &SectionInfo, eoesep: &Section) -> std::io::Result<()> {
        let l = self.layout;
        assert_eq!((cocsep.data.len() as u64, eoesep.data.len() as u64), (COCSEP_PAYLOAD, EOESEP_PAYLOAD));
        assert_eq!(main.len, l.main_len);
        self.file.write_all_at(&cocsep.data, l.cocsep)?;
        self.file.write_all_at(&eoesep.data, l.eoesep)?;
        match l.format {
            TableFormat::H48 => {
                self.file.write_all_at(&solver_info(&cocsep.info, l.main - l.cocsep), 0)?;
                self.file.write_all_at(&solver_info(main, l.eoesep - l.main), l.main - INFO_BYTES as u64)?;
                self.file.write_all_at(&solver_info(&eoesep.info, 0), l.eoesep - INFO_BYTES as u64)?;
            }
            _ => {
                let main_crc = self.main_crc()?;
                let sections = vec![
                    SectionHeader { info: cocsep.info.clone(), offset: l.cocsep, crc: crc32(&cocsep.data) },
                    SectionHeader { info: main.clone(), offset: l.main, crc: main_crc },
                    SectionHeader { info: eoesep.info.clone(), offset: l.eoesep, crc: crc32(&eoesep.data) },
                ];
                self.file.write_all_at(&header_area(sections)?, 0)?;
            }
        }
        commit(&self.file, &self.temp, &self.path)
    }

    /// CRC-32 of the main table as it is on disk, read through a descriptor opened now (rows
    /// that workers wrote on a shared file system are seen as its close-to-open rule promises).
    fn main_crc(&self) -> std::io::Result<u32> {
        let mut crc = Crc32::default();
        let file = File::open(&self.temp)?;
        let mut reader = std::io::BufReader::with_capacity(1 << 23, &file);
        std::io::Seek::seek(&mut reader, std::io::SeekFrom::Start(self.layout.main))?;
        let mut left = self.layout.main_len;
        let mut buf = vec![0u8; 1 << 23];
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            reader.read_exact(&mut buf[..n])?;
            crc.update(&buf[..n]);
            left -= n as u64;
        }
        Ok(crc.finish())
    }

    /// Removes the temporary file (a build that failed and cannot be resumed).
    pub fn discard(self) {
        let _ = std::fs::remove_file(&self.temp);
    }
}

/// The solver's info block (docs/h48-tables.md); `next` is the distance to the next block.
fn solver_info(s: &SectionInfo, next: u64) -> [u8; INFO_BYTES] {
    let mut info = [0u8; INFO_BYTES];
    let (distribution, kind, entries, classes, name, bits, max, filler): (
        Vec<u64>,
        u64,
        u64,
        u64,
        String,
        u8,
        u8,
        u8,
    ) = match s.kind {
        SectionKind::Cocsep => (
            s.depth_counts.clone(),
            1,
            s.entries,
            3393,
            "cocsep data for h48".into(),
            32,
            (s.depth_counts.len() as u8).saturating_sub(1),
            0xff,
        ),
        SectionKind::H48 => {
            let name =
                if s.h < 10 { format!("h48 solver h = {}", s.h) } else { format!("h48 solver h ={}", s.h) };
            let lines = s.len / LINE_BYTES as u64;
            (s.buckets.unwrap_or_default().to_vec(), 0, s.entries + 2 * lines, 0, name, 2, 3, 0)
        }
        SectionKind::EoEsep => (
            s.depth_counts.clone(),
            1,
            s.entries,
            782,
            "eoesep data for h48".into(),
            4,
            (s.depth_counts.len() as u8).saturating_sub(1),
            0xff,
        ),
        SectionKind::Phase2 | SectionKind::CosetPhase1 => {
            unreachable!("only the H48 tables have H48 solver info blocks")
        }
    };
    for (k, v) in distribution.iter().take(21).enumerate() {
        info[8 * k..8 * k + 8].copy_from_slice(&v.to_le_bytes());
    }
    let fields = [kind, INFO_BYTES as u64, INFO_BYTES as u64 + s.len, 0, entries, classes, next];
    for (k, v) in fields.iter().enumerate() {
        info[168 + 8 * k..176 + 8 * k].copy_from_slice(&v.to_le_bytes());
    }
    info[224..224 + name.len()].copy_from_slice(name.as_bytes());
    info[324] = s.h;
    info[325] = bits;
    info[326] = s.base;
    info[327] = max;
    info[328..].fill(filler);
    info
}

/// A table file, memory-mapped and checked.
pub struct TableFile {
    map: memmap2::Mmap,
    pub format: TableFormat,
    pub sections: Vec<(SectionInfo, std::ops::Range<usize>)>,
}

impl TableFile {
    /// Opens and checks a table of either layout (every checksum of a cubefarm file).
    pub fn open(path: &Path) -> Result<TableFile, TableFileError> {
        let file = File::open(path)?;
        // Safety: the map is read-only; a table file is not modified while it is read.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        let release = |r: std::ops::Range<usize>| release_pages(&map, r);
        let (format, sections) = parse(&map, &release)?;
        Ok(TableFile { map, format, sections })
    }

    /// Calls `f` with consecutive windows of `range` of the file (with the offset of each
    /// window from the range's start), dropping each window's pages from this process once it
    /// is read (they stay in the page cache), so reading a table of 60 GB does not make the
    /// process 60 GB resident.
    pub fn for_each_window(&self, range: std::ops::Range<usize>, f: impl FnMut(usize, &[u8])) {
        windows(&self.map, range, &|r| release_pages(&self.map, r), f)
    }

    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// The info and payload of the section of `kind`.
    pub fn section(&self, kind: SectionKind) -> Option<(&SectionInfo, &[u8])> {
        self.sections.iter().find(|(s, _)| s.kind == kind).map(|(s, r)| (s, &self.map[r.clone()]))
    }
}

/// A file's layout and its sections with their byte ranges.
pub type Parsed = (TableFormat, Vec<(SectionInfo, std::ops::Range<usize>)>);

fn parse(bytes: &[u8], release: Release) -> Result<Parsed, TableFileError> {
    if is_container(bytes) {
        Ok((TableFormat::Cubefarm, parse_sections(bytes, release)?))
    } else if bytes.len() >= INFO_BYTES && bytes[224..244] == *b"cocsep data for h48\0" {
        Ok((TableFormat::H48, parse_h48(bytes)?))
    } else {
        Err(TableFileError::Magic)
    }
}

fn parse_h48(bytes: &[u8]) -> Result<Vec<(SectionInfo, std::ops::Range<usize>)>, TableFileError> {
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let mut sections = Vec::new();
    let mut at = 0u64;
    for kind in [SectionKind::Cocsep, SectionKind::H48, SectionKind::EoEsep] {
        let info = slice(bytes, at, INFO_BYTES as u64, "info block")?;
        let i = info.start;
        let (full, next) = (u64_at(i + 184), u64_at(i + 216));
        let (h, bits, base) = (bytes[i + 324], bytes[i + 325], bytes[i + 326]);
        let want_bits = match kind {
            SectionKind::Cocsep => 32,
            SectionKind::H48 => 2,
            SectionKind::EoEsep | SectionKind::Phase2 | SectionKind::CosetPhase1 => 4,
        };
        if u64_at(i + 176) != INFO_BYTES as u64 || bits != want_bits || full < INFO_BYTES as u64 {
            return Err(TableFileError::Header(format!("bad {} info block at offset {at}", kind.name(h))));
        }
        let name = kind.name(h);
        let range = slice(bytes, at + INFO_BYTES as u64, full - INFO_BYTES as u64, &name)?;
        let distribution: Vec<u64> = (0..21).map(|k| u64_at(i + 8 * k)).collect();
        let len = range.len() as u64;
        let section = match kind {
            SectionKind::H48 => {
                if h > 11 || len != line_count(main_entries(h)) * LINE_BYTES as u64 {
                    return Err(TableFileError::Header(format!(
                        "{name}: {len} bytes of lines, the solver's h48h{h} has {}",
                        line_count(main_entries(h.min(11))) * LINE_BYTES as u64
                    )));
                }
                SectionInfo {
                    kind,
                    h,
                    base,
                    entries: main_entries(h),
                    depth_counts: Vec::new(),
                    deeper: 0,
                    buckets: Some(std::array::from_fn(|k| distribution[k])),
                    len,
                }
            }
            _ => {
                let max = bytes[i + 327] as usize;
                SectionInfo {
                    kind,
                    h: 0,
                    base: 0,
                    entries: u64_at(i + 200),
                    depth_counts: distribution[..=max.min(20)].to_vec(),
                    deeper: 0,
                    buckets: None,
                    len,
                }
            }
        };
        let want_len = match kind {
            SectionKind::Cocsep => COCSEP_PAYLOAD,
            SectionKind::EoEsep => EOESEP_PAYLOAD,
            SectionKind::H48 | SectionKind::Phase2 | SectionKind::CosetPhase1 => len,
        };
        if len != want_len {
            return Err(TableFileError::Header(format!("{name}: {len} bytes, the solver's has {want_len}")));
        }
        sections.push((section, range));
        if kind == SectionKind::EoEsep {
            if next != 0 {
                return Err(TableFileError::Header("the eoesep info block is not the last".into()));
            }
        } else {
            if next != full {
                return Err(TableFileError::Header(format!("{name}: next block at {next}, expected {full}")));
            }
            at += next;
        }
    }
    if at + EOESEP_PAYLOAD + INFO_BYTES as u64 != bytes.len() as u64 {
        return Err(TableFileError::Truncated(format!(
            "{} bytes where the blob takes {}",
            bytes.len(),
            at + EOESEP_PAYLOAD + INFO_BYTES as u64
        )));
    }
    Ok(sections)
}
