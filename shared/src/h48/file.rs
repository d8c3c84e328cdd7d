//! Table files in two layouts (docs/h48-tables.md):
//!
//! - *cubefarm*: magic, a bincode header (version, then per section its kind, h, base, entries,
//!   exact depth counts, deeper, buckets, offset, length, CRC-32), the header's own CRC-32, and
//!   the sections at 64-byte-aligned offsets. Everything is checked when loaded.
//! - *h48*: the solver's blob order (cocsep, main table, eoesep), each section preceded by a
//!   512-byte info block and starting 64-byte aligned. The info block holds the section's name,
//!   sizes, base, CRC-32 and value distribution as little-endian u64 fields, and ends with its
//!   own CRC-32.

use super::builder::{Section, SectionKind};
use crate::checksum::crc32;
use serde::{Deserialize, Serialize};
use std::io::Write;

const MAGIC: [u8; 8] = *b"CFTABLE\0";
/// Version of the cubefarm table layout; a reader refuses others.
pub const TABLE_VERSION: u16 = 1;
pub const INFO_BYTES: usize = 512;
const INFO_MAGIC: [u8; 8] = *b"H48INFO\0";
const ALIGN: u64 = 64;

/// The layout of a table file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Cubefarm,
    H48,
}

#[derive(Debug, thiserror::Error)]
pub enum TableFileError {
    #[error("not a table file (unknown magic; expected a cubefarm or h48 table)")]
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
}

#[derive(Serialize, Deserialize)]
struct SectionHeader {
    kind: SectionKind,
    h: u8,
    base: u8,
    entries: u64,
    depth_counts: Vec<u64>,
    deeper: u64,
    buckets: Option<[u64; 4]>,
    offset: u64,
    len: u64,
    crc: u32,
}

#[derive(Serialize, Deserialize)]
struct Header {
    version: u16,
    sections: Vec<SectionHeader>,
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_fixed_int_encoding().with_little_endian()
}

fn align(n: u64) -> u64 {
    n.div_ceil(ALIGN) * ALIGN
}

/// Writes `sections` in `format` to `out`.
pub fn write_tables(out: &mut impl Write, sections: &[Section], format: Format) -> std::io::Result<()> {
    match format {
        Format::Cubefarm => write_cubefarm(out, sections),
        Format::H48 => write_h48(out, sections),
    }
}

fn write_cubefarm(out: &mut impl Write, sections: &[Section]) -> std::io::Result<()> {
    // Offsets depend on the header length, which does not depend on the offsets' values.
    let mut header = Header {
        version: TABLE_VERSION,
        sections: sections
            .iter()
            .map(|s| SectionHeader {
                kind: s.kind,
                h: s.h,
                base: s.base,
                entries: s.entries,
                depth_counts: s.depth_counts.clone(),
                deeper: s.deeper,
                buckets: s.buckets,
                offset: 0,
                len: s.data.len() as u64,
                crc: crc32(&s.data),
            })
            .collect(),
    };
    let encoded_len = bincode::serde::encode_to_vec(&header, config()).map_err(std::io::Error::other)?.len();
    let mut at = align((MAGIC.len() + 4 + encoded_len + 4) as u64);
    for s in &mut header.sections {
        s.offset = at;
        at = align(at + s.len);
    }
    let encoded = bincode::serde::encode_to_vec(&header, config()).map_err(std::io::Error::other)?;
    let mut head = MAGIC.to_vec();
    head.extend((encoded.len() as u32).to_le_bytes());
    head.extend(&encoded);
    head.extend(crc32(&encoded).to_le_bytes());
    let mut written = head.len() as u64;
    out.write_all(&head)?;
    for (h, s) in header.sections.iter().zip(sections) {
        out.write_all(&vec![0u8; (h.offset - written) as usize])?;
        out.write_all(&s.data)?;
        written = h.offset + h.len;
    }
    out.write_all(&vec![0u8; (align(written) - written) as usize])
}

/// Reads and checks a table file of either layout.
pub fn read_tables(bytes: &[u8]) -> Result<(Format, Vec<Section>), TableFileError> {
    if bytes.starts_with(&MAGIC) {
        Ok((Format::Cubefarm, read_cubefarm(bytes)?))
    } else if bytes.len() >= INFO_BYTES && bytes[32..40] == INFO_MAGIC {
        Ok((Format::H48, read_h48(bytes)?))
    } else {
        Err(TableFileError::Magic)
    }
}

fn slice<'a>(bytes: &'a [u8], at: u64, len: u64, what: &str) -> Result<&'a [u8], TableFileError> {
    let end = at.checked_add(len).filter(|&e| e <= bytes.len() as u64);
    end.map(|e| &bytes[at as usize..e as usize]).ok_or_else(|| {
        TableFileError::Truncated(format!(
            "{what} needs bytes {at}..{} of {}",
            at.saturating_add(len),
            bytes.len()
        ))
    })
}

fn read_cubefarm(bytes: &[u8]) -> Result<Vec<Section>, TableFileError> {
    let len = u32::from_le_bytes(slice(bytes, 8, 4, "header length")?.try_into().expect("4 bytes")) as u64;
    let encoded = slice(bytes, 12, len, "header")?;
    let stored =
        u32::from_le_bytes(slice(bytes, 12 + len, 4, "header checksum")?.try_into().expect("4 bytes"));
    if crc32(encoded) != stored {
        return Err(TableFileError::HeaderChecksum);
    }
    let (header, _): (Header, usize) = bincode::serde::decode_from_slice(encoded, config())
        .map_err(|e| TableFileError::Header(e.to_string()))?;
    if header.version != TABLE_VERSION {
        return Err(TableFileError::Version { found: header.version, expected: TABLE_VERSION });
    }
    header
        .sections
        .into_iter()
        .map(|h| {
            let name = h.kind.name(h.h);
            let data = slice(bytes, h.offset, h.len, &name)?;
            let computed = crc32(data);
            if computed != h.crc {
                return Err(TableFileError::SectionChecksum { name, stored: h.crc, computed });
            }
            Ok(Section {
                kind: h.kind,
                h: h.h,
                base: h.base,
                entries: h.entries,
                depth_counts: h.depth_counts,
                deeper: h.deeper,
                buckets: h.buckets,
                data: data.to_vec(),
            })
        })
        .collect()
}

/// Info block fields after the 32-byte name and the 8-byte magic, as u64 LE.
const F_KIND: usize = 0;
const F_INFO: usize = 1;
const F_DATA_LEN: usize = 2;
const F_ENTRIES: usize = 3;
const F_BITS: usize = 4;
const F_BASE: usize = 5;
const F_H: usize = 6;
const F_NEXT: usize = 7;
const F_CRC: usize = 8;
const F_DEEPER: usize = 9;
const F_DEPTHS: usize = 10;
/// Distribution slots: exact entries per depth 0..=20 (H48 sections: the four buckets first).
const DIST_SLOTS: usize = 21;

fn kind_code(k: SectionKind) -> u64 {
    match k {
        SectionKind::Cocsep => 0,
        SectionKind::H48 => 1,
        SectionKind::EoEsep => 2,
    }
}

fn write_h48(out: &mut impl Write, sections: &[Section]) -> std::io::Result<()> {
    let order = [SectionKind::Cocsep, SectionKind::H48, SectionKind::EoEsep];
    let mut written = 0u64;
    for kind in order {
        let Some(s) = sections.iter().find(|s| s.kind == kind) else { continue };
        let data_len = s.data.len() as u64;
        let next = written + INFO_BYTES as u64 + align(data_len);
        let mut info = [0u8; INFO_BYTES];
        let name = s.kind.name(s.h);
        info[..name.len()].copy_from_slice(name.as_bytes());
        info[32..40].copy_from_slice(&INFO_MAGIC);
        let bits = match s.kind {
            SectionKind::Cocsep => 32,
            SectionKind::H48 => 2,
            SectionKind::EoEsep => 4,
        };
        let mut fields = vec![
            kind_code(s.kind),
            INFO_BYTES as u64,
            data_len,
            s.entries,
            bits,
            s.base as u64,
            s.h as u64,
            next,
            crc32(&s.data) as u64,
            s.deeper,
            s.depth_counts.len() as u64,
        ];
        let mut dist = [0u64; DIST_SLOTS];
        for (slot, &c) in dist.iter_mut().zip(&s.depth_counts) {
            *slot = c;
        }
        fields.extend(dist);
        fields.extend(s.buckets.unwrap_or_default());
        for (i, f) in fields.iter().enumerate() {
            info[40 + 8 * i..48 + 8 * i].copy_from_slice(&f.to_le_bytes());
        }
        let crc = crc32(&info[..INFO_BYTES - 4]);
        info[INFO_BYTES - 4..].copy_from_slice(&crc.to_le_bytes());
        out.write_all(&info)?;
        out.write_all(&s.data)?;
        out.write_all(&vec![0u8; (align(data_len) - data_len) as usize])?;
        written = next;
    }
    Ok(())
}

fn read_h48(bytes: &[u8]) -> Result<Vec<Section>, TableFileError> {
    let mut sections = Vec::new();
    let mut at = 0u64;
    while at < bytes.len() as u64 {
        let info = slice(bytes, at, INFO_BYTES as u64, "info block")?;
        if info[32..40] != INFO_MAGIC {
            return Err(TableFileError::Header(format!("no info block at offset {at}")));
        }
        let stored = u32::from_le_bytes(info[INFO_BYTES - 4..].try_into().expect("4 bytes"));
        if crc32(&info[..INFO_BYTES - 4]) != stored {
            return Err(TableFileError::HeaderChecksum);
        }
        let field = |i: usize| u64::from_le_bytes(info[40 + 8 * i..48 + 8 * i].try_into().expect("8 bytes"));
        let kind = match field(F_KIND) {
            0 => SectionKind::Cocsep,
            1 => SectionKind::H48,
            2 => SectionKind::EoEsep,
            k => return Err(TableFileError::Header(format!("unknown section kind {k} at offset {at}"))),
        };
        if field(F_INFO) != INFO_BYTES as u64 || field(F_BITS) == 0 {
            return Err(TableFileError::Header(format!("bad info block at offset {at}")));
        }
        let (h, base) = (field(F_H) as u8, field(F_BASE) as u8);
        let name = kind.name(h);
        let data = slice(bytes, at + INFO_BYTES as u64, field(F_DATA_LEN), &name)?;
        let computed = crc32(data);
        if computed as u64 != field(F_CRC) {
            return Err(TableFileError::SectionChecksum { name, stored: field(F_CRC) as u32, computed });
        }
        let depths = (field(F_DEPTHS) as usize).min(DIST_SLOTS);
        let buckets =
            (kind == SectionKind::H48).then(|| std::array::from_fn(|k| field(F_DEPTHS + 1 + DIST_SLOTS + k)));
        sections.push(Section {
            kind,
            h,
            base,
            entries: field(F_ENTRIES),
            depth_counts: (0..depths).map(|d| field(F_DEPTHS + 1 + d)).collect(),
            deeper: field(F_DEEPER),
            buckets,
            data: data.to_vec(),
        });
        let next = field(F_NEXT);
        if next <= at {
            return Err(TableFileError::Header(format!("info block at {at} points back to {next}")));
        }
        at = next;
    }
    Ok(sections)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Section> {
        let s = |kind, h, data: Vec<u8>| Section {
            kind,
            h,
            base: if kind == SectionKind::H48 { 8 } else { 0 },
            entries: data.len() as u64,
            depth_counts: vec![1, 2, 3],
            deeper: 4,
            buckets: (kind == SectionKind::H48).then_some([5, 6, 7, 8]),
            data,
        };
        vec![
            s(SectionKind::Cocsep, 0, (0..100).collect()),
            s(SectionKind::H48, 0, (0..=255).cycle().take(64 * 5).collect()),
            s(SectionKind::EoEsep, 0, vec![9; 33]),
        ]
    }

    #[test]
    fn both_layouts_round_trip_with_aligned_sections() {
        for format in [Format::Cubefarm, Format::H48] {
            let mut bytes = Vec::new();
            write_tables(&mut bytes, &sample(), format).unwrap();
            assert_eq!(bytes.len() % 64, 0);
            let (found, back) = read_tables(&bytes).unwrap();
            assert_eq!(found, format);
            assert_eq!(back, sample(), "{format:?}");
        }
        // The h48 layout: the main table right after cocsep's info block and padded data.
        let mut bytes = Vec::new();
        write_tables(&mut bytes, &sample(), Format::H48).unwrap();
        let main_info = INFO_BYTES + 128;
        assert_eq!(&bytes[main_info..main_info + 5], b"h48h0");
        assert_eq!(bytes[main_info + INFO_BYTES], 0);
    }

    #[test]
    fn corruption_and_truncation_are_refused() {
        for format in [Format::Cubefarm, Format::H48] {
            let mut bytes = Vec::new();
            write_tables(&mut bytes, &sample(), format).unwrap();
            let n = bytes.len();
            for at in [n / 2, n - 100, 20] {
                let mut bad = bytes.clone();
                bad[at] ^= 1;
                let err = read_tables(&bad).unwrap_err().to_string();
                assert!(
                    err.contains("checksum mismatch") || err.contains("magic"),
                    "{format:?} at {at}: {err}"
                );
            }
            let err = read_tables(&bytes[..n - 200]).unwrap_err().to_string();
            assert!(err.contains("truncated") || err.contains("info block"), "{format:?}: {err}");
        }
        assert!(matches!(read_tables(b"hello world"), Err(TableFileError::Magic)));
    }
}
