//! The h11 level rows of a distributed H48 build that this worker made and keeps for the whole
//! job (the coordinator holds none: other workers fetch them with `Peer.FetchRows`), and the
//! rows it fetched from others, kept while they fit in its memory so that later tasks reading
//! the same rows do not fetch them again; and the marks its rows give other workers' table
//! rows (`Peer.FetchMarks`); and the h11 index, obtained once per process.

use crate::connection::{download_packed, Client, InputError, Traffic};
use shared::h48::{ColumnSet, H11Rows, Level, RowScratch, H11_COLUMNS};
use shared::index_file;
use shared::job::{JobSpec, INDEX_INPUT};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

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

/// The h11 index made here, logged with the time it took.
fn build_index() -> H11Rows {
    let start = Instant::now();
    let index = JobSpec::h11_rows();
    tracing::info!("h11 index built in {:.2} s", start.elapsed().as_secs_f64());
    index
}

/// The index with its level 0 (the solved entry: microseconds).
fn with_first_level(index: H11Rows) -> (Arc<H11Rows>, Arc<Level>) {
    let first = index.first_level();
    (Arc::new(index), Arc::new(first))
}

/// Runs `f` on tokio's blocking threads (reading or making the index takes up to a second).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, tonic::Status> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| tonic::Status::internal(format!("obtaining the h11 index: {e}")))
}

/// What this worker keeps of its H48 job's levels (see the module's doc).
#[derive(Default)]
pub struct Kept {
    store: Mutex<Store>,
    /// The h11 index and its level 0 (the same for every build), obtained at first use.
    index: OnceLock<(Arc<H11Rows>, Arc<Level>)>,
    /// Held while the index is read or downloaded, so that tasks starting together obtain it
    /// once.
    obtaining: tokio::sync::Mutex<()>,
}

impl Kept {
    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The h11 index and level 0; the first call builds them unless [`Self::obtain_index`]
    /// set them (a second of CPU: call it off tokio's threads).
    pub fn index(&self) -> (Arc<H11Rows>, Arc<Level>) {
        self.index.get_or_init(|| with_first_level(build_index())).clone()
    }

    /// The h11 index and level 0, obtained once per process: read from `index_dir` (the
    /// worker's `--index-dir`), else the packed index job `job`'s coordinator serves (then kept
    /// in `index_dir`), else built here. A file or download that fails its checks is logged
    /// and not used.
    pub async fn obtain_index(
        &self,
        client: &mut Client,
        traffic: &Traffic,
        job: u64,
        index_dir: Option<&Path>,
    ) -> Result<(Arc<H11Rows>, Arc<Level>), tonic::Status> {
        let _one = self.obtaining.lock().await;
        if let Some(ready) = self.index.get() {
            return Ok(ready.clone());
        }
        let start = Instant::now();
        if let Some(dir) = index_dir {
            let path = index_file::h11_path(dir);
            let owned = dir.to_path_buf();
            match blocking(move || index_file::read_h11(&owned)).await? {
                Ok(Some(index)) => {
                    tracing::info!(
                        "h11 index read from {} in {:.2} s",
                        path.display(),
                        start.elapsed().as_secs_f64()
                    );
                    return Ok(self.set_index(index));
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!("{} is refused ({e}); the coordinator's h11 index is used", path.display())
                }
            }
        }
        match download_packed(client, traffic, job, INDEX_INPUT).await {
            Ok(packed) => {
                let took = start.elapsed();
                let (unpacked, packed) = blocking(move || (index_file::unpack_h11(&packed), packed)).await?;
                match unpacked {
                    Ok(index) => {
                        tracing::info!(
                            "h11 index received from the coordinator ({:.1} MiB in {:.2} s) and read in {:.2} s",
                            packed.len() as f64 / (1u64 << 20) as f64,
                            took.as_secs_f64(),
                            (start.elapsed() - took).as_secs_f64()
                        );
                        if let Some(dir) = index_dir {
                            match index_file::write_h11(dir, &packed) {
                                Ok(path) => tracing::info!("h11 index kept in {}", path.display()),
                                Err(e) => {
                                    tracing::warn!("cannot keep the h11 index in {}: {e}", dir.display())
                                }
                            }
                        }
                        return Ok(self.set_index(index));
                    }
                    Err(e) => tracing::warn!(
                        "the h11 index the coordinator sent is refused ({e}); building it here"
                    ),
                }
            }
            Err(InputError::Missing) => {
                tracing::info!("the coordinator serves no h11 index; building it here")
            }
            Err(InputError::Damaged(why)) => tracing::warn!("{why}; building the h11 index here"),
            Err(InputError::Rpc(status)) => return Err(status),
        }
        let index = blocking(build_index).await?;
        Ok(self.set_index(index))
    }

    fn set_index(&self, index: H11Rows) -> (Arc<H11Rows>, Arc<Level>) {
        self.index.get_or_init(|| with_first_level(index)).clone()
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
        // In groups that share sources (each source decoded once a group), a group on a thread.
        let words = H11Rows::table_row_words(h);
        let rows: Vec<u32> = targets.iter().map(|(t, _)| *t).collect();
        let groups = index.table_groups(&rows, H11Rows::table_group_size(h, rayon::current_num_threads()));
        use rayon::prelude::*;
        let made: Vec<(Vec<u32>, Vec<u64>)> = groups
            .into_par_iter()
            .with_max_len(1)
            .map_init(RowScratch::default, |s, group| {
                let bits = index.table_marks_of(&group, h, &level, s);
                (group, bits)
            })
            .collect();
        let mut by_row: HashMap<u32, &[u64]> = HashMap::new();
        for (group, bits) in &made {
            by_row.extend(group.iter().copied().zip(bits.chunks_exact(words)));
        }
        Some(rows.iter().flat_map(|t| by_row[t].iter().copied()).collect())
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
