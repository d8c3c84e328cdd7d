//! The job journal: an embedded database (redb) in the state directory that records which job
//! the directory holds and every finished level, committed with fsync at each level boundary
//! (see `shared::bfs::Journal` for the ordering that makes resuming exact).

use anyhow::{bail, Context, Result};
use redb::{Database, ReadableTable, TableDefinition};
use shared::bfs::{BfsError, Journal, LevelRecord};
use std::path::Path;

const META: TableDefinition<&str, &str> = TableDefinition::new("meta");
const LEVELS: TableDefinition<u32, &[u8]> = TableDefinition::new("levels");

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

impl Journal for RedbJournal {
    fn level_done(&self, record: &LevelRecord) -> Result<(), BfsError> {
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
