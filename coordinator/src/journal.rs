//! The job journal: an embedded database (redb) in the state directory that records which job
//! the directory holds and every finished level, committed with fsync at each level boundary
//! (see `shared::bfs::Journal` for the ordering that makes resuming exact), or, for a product
//! job, the counters of every finished chunk of cosets.

use anyhow::{bail, Context, Result};
use redb::{Database, ReadableTable, TableDefinition};
use shared::bfs::{Journal, JournalError, LevelRecord};
use std::path::Path;

const META: TableDefinition<&str, &str> = TableDefinition::new("meta");
const LEVELS: TableDefinition<u32, &[u8]> = TableDefinition::new("levels");
const CHUNKS: TableDefinition<u32, &[u8]> = TableDefinition::new("coset-chunks");
/// Finished rows of a table build, by (table key, row).
const TABLE_ROWS: TableDefinition<(u8, u32), &[u8]> = TableDefinition::new("table-rows");
/// A distributed H48 build's h11 levels, by depth: which worker keeps each row, and its size.
const KEPT_LEVELS: TableDefinition<u32, &[u8]> = TableDefinition::new("h11-kept-levels");

pub struct RedbJournal {
    db: Database,
}

impl RedbJournal {
    /// Opens (or creates) the journal of `dir` for the job `identity`; returns the finished
    /// levels of an earlier run of the same job, in depth order. Refuses a directory that holds
    /// another job.
    pub fn open(dir: &Path, identity: &str) -> Result<(Self, Vec<LevelRecord>)> {
        let path = dir.join("journal.redb");
        let db = Database::create(&path).map_err(|e| match e {
            redb::DatabaseError::DatabaseAlreadyOpen => anyhow::anyhow!(
                "another coordinator is using the state directory {} (its journal is locked)",
                dir.display()
            ),
            e => anyhow::anyhow!("cannot open the job journal {}: {e}", path.display()),
        })?;
        let txn = db.begin_write()?;
        {
            let mut meta = txn.open_table(META)?;
            let existing = meta.get("job")?.map(|v| v.value().to_string());
            match existing {
                Some(job) if job != identity => bail!(
                    "{} holds the state of another job ({job}); use another --state-dir or empty it",
                    dir.display()
                ),
                Some(_) => {}
                None => {
                    meta.insert("job", identity)?;
                }
            }
            txn.open_table(LEVELS)?;
            txn.open_table(CHUNKS)?;
            txn.open_table(TABLE_ROWS)?;
            txn.open_table(KEPT_LEVELS)?;
        }
        txn.commit()?;
        let levels = {
            let read = db.begin_read()?;
            let table = read.open_table(LEVELS)?;
            let mut levels = Vec::new();
            for item in table.iter()? {
                let (_, value) = item?;
                let record: LevelRecord =
                    serde_json::from_slice(value.value()).context("corrupt journal record")?;
                levels.push(record);
            }
            levels
        };
        for (i, l) in levels.iter().enumerate() {
            if l.counts.depth as usize != i {
                bail!("the journal in {} has a gap before depth {}", dir.display(), l.counts.depth);
            }
        }
        Ok((RedbJournal { db }, levels))
    }
}

impl RedbJournal {
    /// The counters of the product job's finished chunks, by chunk.
    pub fn chunks(&self) -> Result<std::collections::BTreeMap<u32, Vec<u64>>> {
        let read = self.db.begin_read()?;
        let table = read.open_table(CHUNKS)?;
        let mut chunks = std::collections::BTreeMap::new();
        for item in table.iter()? {
            let (chunk, value) = item?;
            let bytes = value.value();
            if bytes.len() % 8 != 0 {
                bail!("corrupt journal record of chunk {}", chunk.value());
            }
            let words = bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
            chunks.insert(chunk.value(), words.collect());
        }
        Ok(chunks)
    }

    /// Records a finished chunk's counters (committed with fsync).
    pub fn chunk_done(&self, chunk: u32, words: &[u64]) -> Result<()> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let txn = self.db.begin_write()?;
        {
            let mut table = txn.open_table(CHUNKS)?;
            table.insert(chunk, bytes.as_slice())?;
        }
        txn.commit()?;
        Ok(())
    }
}

impl RedbJournal {
    /// The records of the finished rows of table `h` (a key naming the table).
    pub fn table_rows(&self, h: u8) -> Result<Vec<(u32, Vec<u8>)>> {
        let read = self.db.begin_read()?;
        let table = read.open_table(TABLE_ROWS)?;
        let mut rows = Vec::new();
        for item in table.range((h, 0)..=(h, u32::MAX))? {
            let (key, value) = item?;
            rows.push((key.value().1, value.value().to_vec()));
        }
        Ok(rows)
    }

    /// Records finished rows of table `h` (committed with fsync).
    pub fn table_rows_done(&self, h: u8, rows: &[(u32, Vec<u8>)]) -> Result<()> {
        let txn = self.db.begin_write()?;
        {
            let mut table = txn.open_table(TABLE_ROWS)?;
            for (row, bytes) in rows {
                table.insert((h, *row), bytes.as_slice())?;
            }
        }
        txn.commit()?;
        Ok(())
    }

    /// Forgets the rows of table `h` (its file is complete, or gone).
    pub fn clear_table_rows(&self, h: u8) -> Result<()> {
        let txn = self.db.begin_write()?;
        {
            let mut table = txn.open_table(TABLE_ROWS)?;
            table.retain_in::<(u8, u32), _>((h, 0)..=(h, u32::MAX), |_, _| false)?;
        }
        txn.commit()?;
        Ok(())
    }
}

impl RedbJournal {
    /// The journaled levels of a distributed H48 build (see `jobs::kept_levels`), by depth.
    pub fn kept_levels(&self) -> Result<Vec<(u32, Vec<u8>)>> {
        let read = self.db.begin_read()?;
        let table = read.open_table(KEPT_LEVELS)?;
        let mut levels = Vec::new();
        for item in table.iter()? {
            let (depth, value) = item?;
            levels.push((depth.value(), value.value().to_vec()));
        }
        Ok(levels)
    }

    /// Records where the rows of level `depth` are kept (committed with fsync).
    pub fn kept_level_done(&self, depth: u32, bytes: &[u8]) -> Result<()> {
        let txn = self.db.begin_write()?;
        txn.open_table(KEPT_LEVELS)?.insert(depth, bytes)?;
        txn.commit()?;
        Ok(())
    }
}

impl RedbJournal {
    /// The saved state of a row search whose rows the workers own, as its last journaled
    /// level or assignment left it (JSON of `shared::runtime::rows::Snapshot`).
    pub fn owned_snapshot(&self) -> Result<Option<String>> {
        let read = self.db.begin_read()?;
        let meta = read.open_table(META)?;
        Ok(meta.get("owned")?.map(|v| v.value().to_string()))
    }

    /// Records the state of such a search (a new assignment; committed with fsync).
    pub fn owned_snapshot_saved(&self, snapshot: &str) -> Result<()> {
        let txn = self.db.begin_write()?;
        txn.open_table(META)?.insert("owned", snapshot)?;
        txn.commit()?;
        Ok(())
    }

    /// Records a finished level of such a search with its state, in one transaction
    /// (committed with fsync).
    pub fn owned_level_done(&self, record: &LevelRecord, snapshot: &str) -> Result<()> {
        let bytes = serde_json::to_vec(record)?;
        let txn = self.db.begin_write()?;
        {
            let mut table = txn.open_table(LEVELS)?;
            table.insert(record.counts.depth, bytes.as_slice())?;
            let mut meta = txn.open_table(META)?;
            meta.insert("owned", snapshot)?;
        }
        txn.commit()?;
        Ok(())
    }
}

impl Journal for RedbJournal {
    fn level_done(&self, record: &LevelRecord) -> Result<(), JournalError> {
        let bytes = serde_json::to_vec(record)?;
        let txn = self.db.begin_write()?;
        {
            let mut table = txn.open_table(LEVELS)?;
            table.insert(record.counts.depth, bytes.as_slice())?;
        }
        txn.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_coordinator_on_the_same_state_directory_is_refused() {
        let dir = std::env::temp_dir().join(format!("cubefarm-journal-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (first, levels) = RedbJournal::open(&dir, "hprime htm").unwrap();
        assert!(levels.is_empty());
        let second = RedbJournal::open(&dir, "hprime htm").err().expect("a second journal is refused");
        assert!(second.to_string().contains("another coordinator is using the state directory"), "{second}");
        drop(first);
        // Once the first is gone, the directory opens again, and another job's is refused.
        assert!(RedbJournal::open(&dir, "hprime htm").is_ok());
        let other = RedbJournal::open(&dir, "corners htm").err().expect("another job is refused");
        assert!(other.to_string().contains("holds the state of another job"), "{other}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
