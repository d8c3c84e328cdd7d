//! The h11 level rows of a distributed H48 build that this worker made and keeps for the whole
//! job (the coordinator holds none: other workers fetch them with `Peer.FetchRows`), and the
//! rows it fetched from others, kept while they fit in its memory so that later tasks reading
//! the same rows do not fetch them again; and the marks its rows give other workers' table
//! rows (`Peer.FetchMarks`).

use shared::h48::{ColumnSet, H11Rows, Level, H11_COLUMNS};
use shared::job::JobSpec;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Rows by (depth, row) for one job.
#[derive(Default)]
struct Store {
    job: u64,
    own: HashMap<(u8, u32), Arc<ColumnSet>>,
    own_bytes: u64,
    fetched: HashMap<(u8, u32), Arc<ColumnSet>>,
    fetched_bytes: u64,
}

impl Store {
    fn for_job(&mut self, job: u64) -> &mut Store {
        if self.job != job {
            *self = Store { job, ..Store::default() };
        }
        self
    }
}

/// What this worker keeps of its H48 job's levels (see the module's doc).
#[derive(Default)]
pub struct Kept {
    store: Mutex<Store>,
    /// The h11 index and its level 0 (the same for every build), made at first use.
    index: OnceLock<(Arc<H11Rows>, Arc<Level>)>,
}

impl Kept {
    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The h11 index and level 0; the first call builds them (seconds: call it off tokio's
    /// threads).
    pub fn index(&self) -> (Arc<H11Rows>, Arc<Level>) {
        self.index
            .get_or_init(|| {
                let index = JobSpec::h11_rows();
                let first = index.first_level();
                (Arc::new(index), Arc::new(first))
            })
            .clone()
    }

    /// The marks (`H11Rows::table_marks`) of table rows of h48h`h`, each from its sources
    /// given with it, rows of level `depth` this worker made: each target's row bits one after
    /// another. `None` if a source is not one of this worker's rows.
    pub fn marks(&self, job: u64, depth: u8, h: u8, targets: &[(u32, Vec<u32>)]) -> Option<Vec<u64>> {
        let (index, _) = self.index();
        let mut wanted: Vec<u32> = targets.iter().flat_map(|(_, s)| s.iter().copied()).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let rows = self.own_rows(job, depth, &wanted)?;
        let mut level = Level { depth, rows: vec![ColumnSet::empty(H11_COLUMNS); index.rows() as usize] };
        for (r, set) in wanted.iter().zip(rows) {
            level.rows[*r as usize] = (*set).clone();
        }
        let words = H11Rows::table_row_words(h);
        let mut marks = vec![0u64; words * targets.len()];
        use rayon::prelude::*;
        marks
            .par_chunks_mut(words)
            .zip(targets)
            .for_each(|(bits, (t, _))| index.table_marks(*t, h, &level, bits));
        Some(marks)
    }

    /// Keeps rows this worker made.
    pub fn keep(&self, job: u64, depth: u8, rows: impl IntoIterator<Item = (u32, ColumnSet)>) {
        let mut guard = self.store();
        let s = guard.for_job(job);
        for (row, set) in rows {
            s.own_bytes += set.bytes() as u64;
            if let Some(old) = s.own.insert((depth, row), Arc::new(set)) {
                s.own_bytes -= old.bytes() as u64;
            }
        }
    }

    /// A row this worker made or fetched before.
    pub fn get(&self, job: u64, depth: u8, row: u32) -> Option<Arc<ColumnSet>> {
        let s = self.store();
        if s.job != job {
            return None;
        }
        s.own.get(&(depth, row)).or_else(|| s.fetched.get(&(depth, row))).cloned()
    }

    /// Rows this worker made (`None` if one of them is not here).
    pub fn own_rows(&self, job: u64, depth: u8, rows: &[u32]) -> Option<Vec<Arc<ColumnSet>>> {
        let s = self.store();
        if s.job != job {
            return None;
        }
        rows.iter().map(|r| s.own.get(&(depth, *r)).cloned()).collect()
    }

    /// Remembers fetched rows while the worker's own rows and the fetched ones stay within
    /// `budget` bytes; past it the fetched rows are forgotten first.
    pub fn remember(&self, job: u64, depth: u8, rows: &[(u32, Arc<ColumnSet>)], budget: u64) {
        let mut guard = self.store();
        let s = guard.for_job(job);
        let more: u64 = rows.iter().map(|(_, set)| set.bytes() as u64).sum();
        if s.own_bytes + s.fetched_bytes + more > budget {
            s.fetched.clear();
            s.fetched_bytes = 0;
        }
        if s.own_bytes + more > budget {
            return;
        }
        for (row, set) in rows {
            if s.fetched.insert((depth, *row), set.clone()).is_none() {
                s.fetched_bytes += set.bytes() as u64;
            }
        }
    }

    /// Forgets everything (the job is over, or this worker was declared lost).
    pub fn clear(&self) {
        *self.store() = Store::default();
    }
}
