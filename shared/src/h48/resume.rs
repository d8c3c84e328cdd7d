//! A table file written row by row that survives being killed: each row's interior lines go to
//! their place in the file, and what the file cannot say by itself (the row's counts and its
//! two edge lines, which neighbouring rows share) is recorded in a [`RowLog`] once the lines
//! are on disk. Reopened with the same log, the writer knows which rows are done and finishes
//! the file from the records, so a resumed build makes only the rows that were missing.

use super::file::{main_entries, Layout, TableWriter};
use super::lines::{merge_line, RowLines};
use super::table::{LINE_BYTES, LINE_ENTRIES};
use crate::container::{temp_path, Section, SectionInfo, SectionKind};
use crate::coord::h48::ESEP;
use std::collections::BTreeMap;
use std::io;
use std::path::Path;

/// Where a table's finished rows are recorded (the coordinator's journal): each record is the
/// bytes [`RowsWriter`] gives it, kept until [`RowLog::clear`].
pub trait RowLog {
    /// Every row recorded, with its record.
    fn load(&self) -> io::Result<Vec<(u32, Vec<u8>)>>;
    /// Records rows (their lines are already durable).
    fn record(&self, rows: &[(u32, Vec<u8>)]) -> io::Result<()>;
    /// Forgets every row (the file is finished, or gone).
    fn clear(&self) -> io::Result<()>;
}

/// What the log keeps of a finished row: its counts and its two edge lines.
#[derive(Debug, PartialEq)]
struct RowRecord {
    counts: Vec<u64>,
    deeper: u64,
    first: Vec<u8>,
    last: Vec<u8>,
}

impl RowRecord {
    fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(8 * self.counts.len() + 9 + 2 * LINE_BYTES);
        b.push(self.counts.len() as u8);
        for c in self.counts.iter().chain([&self.deeper]) {
            b.extend(c.to_le_bytes());
        }
        b.extend(&self.first);
        b.extend(&self.last);
        b
    }

    fn decode(bytes: &[u8]) -> Option<RowRecord> {
        let n = *bytes.first()? as usize;
        if bytes.len() != 1 + 8 * (n + 1) + 2 * LINE_BYTES {
            return None;
        }
        let word = |k: usize| u64::from_le_bytes(bytes[1 + 8 * k..9 + 8 * k].try_into().expect("8 bytes"));
        let lines = &bytes[1 + 8 * (n + 1)..];
        Some(RowRecord {
            counts: (0..n).map(word).collect(),
            deeper: word(n),
            first: lines[..LINE_BYTES].to_vec(),
            last: lines[LINE_BYTES..].to_vec(),
        })
    }
}

/// The temporary file of a table being written, as workers that share the coordinator's file
/// system see it: each writes the interior lines of the rows it makes at their place (the
/// same bytes whoever writes them, so a row written twice is harmless) and sends up only
/// what [`RowLines::without_interior`] keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedFile {
    pub path: std::path::PathBuf,
    /// Where the main table starts in the file, and its length.
    pub main: u64,
    pub main_len: u64,
}

impl SharedFile {
    /// Writes the interior lines of `rows` into the file and makes them durable.
    pub fn write(&self, rows: &[(u32, RowLines)]) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        let file = std::fs::OpenOptions::new().write(true).open(&self.path)?;
        for (_, lines) in rows {
            let (offset, interior) = (lines.interior_offset(), lines.interior());
            if offset + interior.len() as u64 > self.main_len {
                return Err(io::Error::other("a table row beyond the main table"));
            }
            file.write_all_at(interior, self.main + offset)?;
        }
        file.sync_data()
    }
}

/// An hN table's file, written row by row (see the module's documentation).
pub struct RowsWriter<'a> {
    writer: TableWriter,
    log: Option<&'a dyn RowLog>,
    h: u8,
    base: u8,
    rows: u32,
    done: BTreeMap<u32, RowRecord>,
}

impl<'a> RowsWriter<'a> {
    /// Opens the file of a table of `rows` rows at `path`: resumed from its temporary file when
    /// `log` has rows (and the file is still there; if not, the log is cleared and the table
    /// starts over), otherwise new.
    pub fn open(
        path: &Path,
        layout: Layout,
        base: u8,
        rows: u32,
        log: Option<&'a dyn RowLog>,
    ) -> io::Result<Self> {
        let mut done = BTreeMap::new();
        if let Some(log) = log {
            for (row, bytes) in log.load()? {
                let record = RowRecord::decode(&bytes).filter(|_| row < rows).ok_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidData, format!("a damaged record of table row {row}"))
                })?;
                done.insert(row, record);
            }
            if !done.is_empty() && !temp_path(path).exists() {
                tracing::warn!("{} is gone: h48h{} starts over", temp_path(path).display(), layout.h);
                log.clear()?;
                done.clear();
            }
        }
        let writer = TableWriter::create(path, layout, !done.is_empty())?;
        Ok(RowsWriter { writer, log, h: layout.h, base, rows, done })
    }

    /// Rows already written (before a resume, or since).
    pub fn done(&self) -> usize {
        self.done.len()
    }

    /// Whether `row` is written.
    pub fn is_done(&self, row: u32) -> bool {
        self.done.contains_key(&row)
    }

    /// Where workers that share the file system write rows themselves ([`SharedFile`]; the
    /// path made absolute, as they run elsewhere).
    pub fn shared_file(&self) -> io::Result<SharedFile> {
        let layout = self.writer.layout();
        let path = std::path::absolute(self.writer.temp_path())?;
        Ok(SharedFile { path, main: layout.main, main_len: layout.main_len })
    }

    /// Writes made rows (rows already written are skipped): their interior lines into the
    /// file and, with a log, synced and then recorded. A row without interior lines
    /// ([`RowLines::without_interior`]) was written by a worker ([`SharedFile::write`]).
    pub fn accept(&mut self, made: Vec<(u32, RowLines)>) -> io::Result<()> {
        let mut records = Vec::with_capacity(made.len());
        for (row, lines) in made {
            if self.done.contains_key(&row) {
                continue;
            }
            let n = lines.line_count() as usize;
            self.writer.write_main(lines.interior_offset(), lines.interior())?;
            let record = RowRecord {
                first: lines.line(0).to_vec(),
                last: lines.line(n - 1).to_vec(),
                counts: lines.counts,
                deeper: lines.deeper,
            };
            records.push((row, record));
        }
        if let Some(log) = self.log {
            self.writer.sync()?;
            let encoded: Vec<(u32, Vec<u8>)> = records.iter().map(|(r, rec)| (*r, rec.encode())).collect();
            log.record(&encoded)?;
            let (before, after, rows) =
                (self.done.len(), self.done.len() + records.len(), self.rows as usize);
            if after * 10 / rows > before * 10 / rows {
                tracing::info!("h48h{}: {after} of {rows} rows recorded", self.h);
            }
        }
        self.done.extend(records);
        Ok(())
    }

    /// Writes the edge lines (merged from the rows that share them), the small sections and
    /// the headers, and gives the file its name; then clears the log. Every row must be done.
    pub fn finish(self, cocsep: &Section, eoesep: &Section) -> io::Result<()> {
        let missing = self.rows as usize - self.done.len();
        if missing > 0 {
            return Err(io::Error::other(format!("{missing} rows of h48h{} are not made", self.h)));
        }
        let per_row = (ESEP as u64) << self.h;
        let mut edges: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        let mut counts = vec![0u64; self.base as usize + 3];
        let mut deeper = 0;
        for (&row, rec) in &self.done {
            let start = row as u64 * per_row;
            for (line, bytes) in [
                (start / LINE_ENTRIES as u64, &rec.first),
                ((start + per_row - 1) / LINE_ENTRIES as u64, &rec.last),
            ] {
                match edges.get_mut(&line) {
                    Some(have) => merge_line(have, bytes),
                    None => {
                        edges.insert(line, bytes.clone());
                    }
                }
            }
            for (c, r) in counts.iter_mut().zip(&rec.counts) {
                *c += r;
            }
            deeper += rec.deeper;
        }
        for (line, bytes) in &edges {
            self.writer.write_main(line * LINE_BYTES as u64, bytes)?;
        }
        let base = self.base as usize;
        let buckets = [counts[..=base].iter().sum(), counts[base + 1], counts[base + 2], deeper];
        let info = SectionInfo {
            kind: SectionKind::H48,
            h: self.h,
            base: self.base,
            entries: main_entries(self.h),
            depth_counts: counts,
            deeper,
            buckets: Some(buckets),
            len: self.writer.layout().main_len,
        };
        if info.depth_counts.iter().sum::<u64>() + deeper != info.entries {
            return Err(io::Error::other(
                "internal check failed: the rows' counts do not add up to the table's entries",
            ));
        }
        self.writer.finish(cocsep, &info, eoesep)?;
        if let Some(log) = self.log {
            log.clear()?;
        }
        Ok(())
    }

    /// Gives up the file: removed unless a log can resume it.
    pub fn abandon(self) {
        if self.log.is_none() {
            self.writer.discard();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damage_is_seen() {
        let rec = RowRecord {
            counts: vec![1, 2, 3],
            deeper: 9,
            first: vec![7; LINE_BYTES],
            last: vec![8; LINE_BYTES],
        };
        let bytes = rec.encode();
        assert_eq!(RowRecord::decode(&bytes), Some(rec));
        assert_eq!(RowRecord::decode(&bytes[..bytes.len() - 1]), None);
        assert_eq!(RowRecord::decode(&[]), None);
    }
}
