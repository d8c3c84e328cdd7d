//! Independent tasks leased from the coordinator: a product job's cosets and an H48 table
//! build's rows. Each is computed on rayon (never on tokio's threads) and returned as a shard.

use crate::connection::{download_input, Client, InputError, Traffic};
use crate::rows::Host;
use anyhow::anyhow;
use cubefarm_proto::v1;
use shared::coset::phase1_file::{self, Origin};
use shared::coset::{CosetSolver, CosetSpec};
use shared::cube::{apply_moves, parse_moves, Cube};
use shared::h48::{base_for, ColumnSet, H11Rows, Level, RowScratch, H11_COLUMNS};
use shared::product::{ProductJob, ProductSpec};
use shared::shard::{self, ShardKey, WordPart};
use shared::wire;
use shared::wire::h48::{Homes, KeptRow, KeptRows};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// What a worker keeps between tasks of one job (and a coset solver, between jobs).
#[derive(Default)]
pub struct Cache {
    /// A product job's stored positions and coset classes, by job spec.
    product: Option<(String, Arc<ProductJob>)>,
    /// The homes of an H48 build's levels: job, input name, homes.
    homes: Option<(u64, String, Arc<Homes>)>,
    cosets: Option<CosetJob>,
    /// Where phase 1's distance table is kept (`--phase1-table`), if anywhere.
    phase1_table: Option<PathBuf>,
    /// The coset solver (its tables are the same for every coset job): made at the first coset
    /// task, from `phase1_table` when it is given.
    coset_solver: Option<Arc<CosetSolver>>,
}

impl Cache {
    /// An empty cache whose coset solver reads or writes phase 1's table at `phase1_table`.
    pub fn new(phase1_table: Option<PathBuf>) -> Self {
        Cache { phase1_table, ..Cache::default() }
    }

    /// Forgets what came from the coordinator's inputs (the homes of H48 levels, a coset job's
    /// representatives): a coordinator that restarted publishes them again, under the same
    /// names, and they may differ.
    pub fn forget_inputs(&mut self) {
        self.homes = None;
        self.cosets = None;
    }
}

/// A coset job's representatives, with the job's spec and id.
#[derive(Clone)]
struct CosetJob {
    spec: String,
    job: u64,
    reps: Arc<Vec<Cube>>,
}

/// Why a task was not computed.
pub enum TaskError {
    /// The level it belonged to is over (its lease expired and another worker finished it).
    Gone,
    Rpc(tonic::Status),
    Other(anyhow::Error),
}

impl From<anyhow::Error> for TaskError {
    fn from(e: anyhow::Error) -> Self {
        TaskError::Other(e)
    }
}

impl From<tokio::task::JoinError> for TaskError {
    fn from(e: tokio::task::JoinError) -> Self {
        TaskError::Other(anyhow!("a task computation failed: {e}"))
    }
}

/// A product job's task: the counters of a range of representative cosets. It needs no input:
/// the stored positions and coset classes are rebuilt from the job spec (once per job).
pub async fn run_product_task(
    cache: &Arc<Mutex<Cache>>,
    task: &v1::Task,
    spec: ProductSpec,
) -> Result<Vec<u8>, TaskError> {
    let cached = cache.lock().ok().and_then(|c| c.product.clone()).filter(|(spec, _)| *spec == task.job_spec);
    let job = match cached {
        Some((_, job)) => job,
        None => {
            if let Ok(mut c) = cache.lock() {
                c.product = None;
            }
            let job = Arc::new(tokio::task::spawn_blocking(move || ProductJob::build(spec)).await?);
            if let Ok(mut c) = cache.lock() {
                c.product = Some((task.job_spec.clone(), job.clone()));
            }
            job
        }
    };
    let (begin, end) = (task.row_begin, task.row_end);
    if begin > end || end > job.task_count() as u64 {
        return Err(TaskError::Other(anyhow!("task cosets {begin}..{end} outside 0..{}", job.task_count())));
    }
    let key = ShardKey { job: task.job_id, task: task.task_id, attempt: task.attempt, level: task.level };
    Ok(tokio::task::spawn_blocking(move || {
        let words = wire::product::encode_counts(&job.run(begin as u32..end as u32, None));
        shard::encode_word_parts(key, &[WordPart::plain(&words)])
    })
    .await?)
}

/// An H48 build's task: the rows of h11 level `task.level`, made from the level before (their
/// sources' rows) and kept here for the rest of the job, or, for level base + 2, the table rows
/// (from every level 0 ..= base + 1 of the rows, and level base + 1 of their sources). Rows this
/// worker does not keep are fetched from the workers that do, as the task's homes input says;
/// the index is obtained once per process (`Kept::obtain_index`).
pub async fn run_h48_task(
    client: &mut Client,
    cache: &Arc<Mutex<Cache>>,
    host: &Arc<Host>,
    me: u64,
    task: &v1::Task,
    h: u8,
) -> Result<Vec<u8>, TaskError> {
    let base = base_for(h);
    let level = task.level;
    if level == 0 || level > base as u32 + 2 {
        return Err(TaskError::Other(anyhow!("no level {level} in an h48h{h} build")));
    }
    let (index, first) = host
        .kept
        .obtain_index(client, &host.traffic, task.job_id, host.index_dir.as_deref())
        .await
        .map_err(TaskError::Rpc)?;
    let homes = homes_of(client, cache, &host.traffic, task).await?;
    // The task names a run of the homes' task order; its rows are made and sent ascending.
    let rows = match homes.task_rows(task.row_begin..task.row_end) {
        Some(rows) if homes.order.len() == index.rows() as usize => {
            let mut rows = rows.to_vec();
            rows.sort_unstable();
            rows
        }
        _ => {
            return Err(TaskError::Other(anyhow!(
                "task rows {}..{} outside a task order of {} rows (the index has {})",
                task.row_begin,
                task.row_end,
                homes.order.len(),
                index.rows()
            )))
        }
    };
    let targets: BTreeSet<u32> = rows.iter().copied().collect();
    let with_sources: BTreeSet<u32> =
        rows.iter().flat_map(|&t| index.sources(t)).chain(rows.iter().copied()).collect();
    let lease = v1::RenewLeaseRequest {
        worker_id: me,
        task_id: task.task_id,
        attempt: task.attempt,
        release: false,
        failure: String::new(),
    };
    let source = Source {
        host,
        homes: &homes,
        job: task.job_id,
        me,
        first: &first,
        rows: index.rows(),
        lease: (client.clone(), lease),
    };
    let key = ShardKey { job: task.job_id, task: task.task_id, attempt: task.attempt, level };
    let job = task.job_id;
    if level <= base as u32 + 1 {
        let d = level as u8;
        let prev = source.level(d - 1, &with_sources).await?;
        let before = match d {
            1 => None,
            _ => Some(source.level(d - 2, &targets).await?),
        };
        let host = host.clone();
        return Ok(tokio::task::spawn_blocking(move || {
            use rayon::prelude::*;
            let made: Vec<ColumnSet> = rows
                .par_iter()
                .map_init(RowScratch::default, |s, &t| index.next_level_row(t, &prev, before.as_ref(), s))
                .collect();
            let sizes =
                made.iter().map(|set| KeptRow { entries: set.len(), bytes: set.bytes() as u64 }).collect();
            host.kept.keep(job, d, rows.into_iter().zip(made));
            shard::encode_words(key, &wire::h48::encode_kept(&KeptRows { worker: me, rows: sizes }))
        })
        .await?);
    }
    let mut levels = Vec::with_capacity(base as usize + 2);
    for d in 0..=base {
        levels.push(source.level(d, &targets).await?);
    }
    let marks = if marks_pay(h) {
        let (local, marks) = source.marks(&index, base + 1, h, &targets).await?;
        levels.push(local);
        marks
    } else {
        levels.push(source.level(base + 1, &with_sources).await?);
        BTreeMap::new()
    };
    let out = homes.out.clone();
    tokio::task::spawn_blocking(move || {
        use rayon::prelude::*;
        // In groups that share sources, as the embedded build makes them (each source decoded
        // once a group), a group on a thread; in the rows' order.
        let size = H11Rows::table_group_size(h, rayon::current_num_threads());
        let groups = index.table_groups(&rows, size);
        let mut made: Vec<_> = groups
            .par_iter()
            .with_max_len(1)
            .map_init(RowScratch::default, |s, group| {
                let mut made = Vec::with_capacity(group.len());
                index.table_rows(group, h, &levels, &marks, s, |t, lines| made.push((t, lines)));
                made
            })
            .flatten()
            .collect();
        made.sort_unstable_by_key(|&(t, _)| t);
        // Rows the coordinator has this worker write into the shared file go up without their
        // interior lines, once those are on disk.
        let made = match out {
            Some(file) => {
                file.write(&made).map_err(|e| {
                    TaskError::Other(anyhow!("cannot write table rows into {}: {e}", file.path.display()))
                })?;
                made.iter().map(|(t, lines)| (*t, lines.without_interior())).collect()
            }
            None => made,
        };
        Ok(shard::encode_words(key, &wire::h48::encode_table_rows(&made)))
    })
    .await?
}

/// Where a task's level rows come from: this worker's own and fetched rows, level 0 (which
/// every worker makes), and the workers the homes name.
struct Source<'a> {
    host: &'a Arc<Host>,
    homes: &'a Homes,
    job: u64,
    me: u64,
    first: &'a Level,
    rows: u32,
    /// The task's lease, renewed when a fetch fails: a level stopped because a keeper was lost
    /// ends the lease, and the task is dropped at once.
    lease: (Client, v1::RenewLeaseRequest),
}

impl Source<'_> {
    /// Level `depth` holding `wanted` rows (the others empty).
    async fn level(&self, depth: u8, wanted: &BTreeSet<u32>) -> Result<Level, TaskError> {
        if depth == 0 {
            return Ok(self.first.clone());
        }
        let mut level = Level { depth, rows: vec![ColumnSet::empty(H11_COLUMNS); self.rows as usize] };
        let mut missing: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
        for &r in wanted {
            match self.host.kept.get(self.job, depth, r) {
                Some(set) => level.rows[r as usize] = (*set).clone(),
                None => match self.homes.home(depth as usize, r) {
                    // Rows this worker kept were dropped (it was declared lost): the task is
                    // someone else's now.
                    Some(home) if home != self.me => missing.entry(home).or_default().push(r),
                    _ => return Err(TaskError::Gone),
                },
            }
        }
        for (home, rows) in missing {
            let request = v1::FetchRowsRequest {
                job_id: self.job,
                level: depth as u32,
                rows: rows.clone(),
                from: self.me,
            };
            let (pool, traffic) = (&self.host.pool, &self.host.traffic);
            let sets = self
                .ask(home, &format!("rows of level {depth}"), |address| {
                    let request = request.clone();
                    async move { pool.fetch_rows(&address, request, traffic).await }
                })
                .await?;
            let fetched: Vec<(u32, Arc<ColumnSet>)> =
                rows.into_iter().zip(sets.into_iter().map(Arc::new)).collect();
            for (r, set) in &fetched {
                level.rows[*r as usize] = (**set).clone();
            }
            self.host.kept.remember(self.job, depth, &fetched, self.host.mem_limit / 2);
        }
        Ok(level)
    }

    /// For the table rows `targets` of h48h`h`: level `depth` (base + 1) holding the targets'
    /// rows and the sources this worker has, and the marks (`H11Rows::table_marks`) of the
    /// other sources, made by the workers that keep them, OR-ed by target (a target whose
    /// sources are all here has none).
    async fn marks(
        &self,
        index: &H11Rows,
        depth: u8,
        h: u8,
        targets: &BTreeSet<u32>,
    ) -> Result<(Level, BTreeMap<u32, Vec<u64>>), TaskError> {
        // The targets' own rows (their entries at base + 1), wherever they are kept.
        let mut level = self.level(depth, targets).await?;
        let mut have = targets.clone();
        // By keeper: the targets and, for each, its sources that keeper has.
        let mut asked: BTreeMap<u64, Vec<(u32, Vec<u32>)>> = BTreeMap::new();
        for &t in targets {
            for s in index.sources(t) {
                if have.contains(&s) {
                    continue;
                }
                match self.host.kept.get(self.job, depth, s) {
                    Some(set) => {
                        level.rows[s as usize] = (*set).clone();
                        have.insert(s);
                    }
                    None => match self.homes.home(depth as usize, s) {
                        Some(home) if home != self.me => {
                            let list = asked.entry(home).or_default();
                            match list.last_mut() {
                                Some((last, sources)) if *last == t => sources.push(s),
                                _ => list.push((t, vec![s])),
                            }
                        }
                        _ => return Err(TaskError::Gone),
                    },
                }
            }
        }
        let words = H11Rows::table_row_words(h);
        let per_call = (crate::rows::peer::MAX_MARKS_BYTES / (8 * words)).max(1);
        let mut marks: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        for (home, list) in asked {
            for batch in list.chunks(per_call) {
                let request = v1::FetchMarksRequest {
                    job_id: self.job,
                    level: depth as u32,
                    table: h as u32,
                    targets: batch.iter().map(|(t, _)| *t).collect(),
                    source_counts: batch.iter().map(|(_, s)| s.len() as u32).collect(),
                    sources: batch.iter().flat_map(|(_, s)| s.iter().copied()).collect(),
                    from: self.me,
                };
                let (pool, traffic) = (&self.host.pool, &self.host.traffic);
                let got = self
                    .ask(home, &format!("marks from level {depth}"), |address| {
                        let request = request.clone();
                        async move { pool.fetch_marks(&address, request, traffic).await }
                    })
                    .await?;
                for ((t, _), bits) in batch.iter().zip(got.chunks_exact(words)) {
                    let m = marks.entry(*t).or_insert_with(|| vec![0; words]);
                    m.iter_mut().zip(bits).for_each(|(a, b)| *a |= b);
                }
            }
        }
        Ok((level, marks))
    }

    /// Calls the keeper `home` (at its address in the homes), again after a failure while the
    /// task's lease lasts: the home may be lost, and then the coordinator makes its rows again
    /// and this task's lease ends (the worker drops it).
    async fn ask<T, F, Fut>(&self, home: u64, what: &str, call: F) -> Result<T, TaskError>
    where
        F: Fn(String) -> Fut,
        Fut: std::future::Future<Output = Result<T, tonic::Status>>,
    {
        let address = self.homes.address(home).ok_or(TaskError::Gone)?;
        let mut attempt = 0;
        loop {
            match call(address.to_string()).await {
                Ok(answer) => return Ok(answer),
                Err(e) if attempt < 6 => {
                    tracing::warn!("{what} from worker {home} at {address}: {}", e.message());
                    let (mut client, request) = self.lease.clone();
                    if !client.renew_lease(request).await.is_ok_and(|r| r.into_inner().ok) {
                        return Err(TaskError::Gone);
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(500 << attempt)).await;
                    attempt += 1;
                }
                Err(_) => return Err(TaskError::Gone),
            }
        }
    }
}

/// Whether a table task asks the keepers of its rows' sources for their marks rather than
/// fetching the sources' rows. A keeper's marks for a row are the row's bits (ESEP << h: 69 KB
/// for h48h4, 2.2 MB for h48h9, 8.9 MB for h48h11) and a row has at most one such answer per
/// keeper; its sources (13.9 distinct rows on average, at most 15) at level base + 1 average
/// 0.38 MB a row (level 10) to 2.8 MB (level 11), fetched once and remembered within half the
/// memory limit. So the marks move fewer bytes up to h48h9, and the rows beyond.
fn marks_pay(h: u8) -> bool {
    h <= 9
}

/// The homes of the levels a task reads (its `homes` input), downloaded once per version.
async fn homes_of(
    client: &mut Client,
    cache: &Arc<Mutex<Cache>>,
    traffic: &Traffic,
    task: &v1::Task,
) -> Result<Arc<Homes>, TaskError> {
    let name = &task.homes;
    let cached = cache.lock().ok().and_then(|c| c.homes.clone());
    if let Some((job, held, homes)) = cached {
        if job == task.job_id && held == *name {
            return Ok(homes);
        }
    }
    if name.rsplit_once('/').is_none_or(|(_, v)| v.parse::<u32>().is_err()) {
        return Err(TaskError::Other(anyhow!("an H48 task without the homes of its levels ({name:?})")));
    }
    let bytes = download_bytes(client, traffic, task, name).await?;
    let homes = Arc::new(Homes::decode(&bytes).map_err(|e| anyhow!("the homes from the coordinator: {e}"))?);
    if let Ok(mut c) = cache.lock() {
        c.homes = Some((task.job_id, name.clone(), homes.clone()));
    }
    Ok(homes)
}

/// A coset job's task: its cosets (a range of the representatives the coordinator publishes as
/// the input `cosets/0`, one move sequence a line) solved one after the other, each on every
/// thread. The representatives are downloaded once per job, the solver's tables made (or read
/// from `--phase1-table`) once per process.
pub async fn run_coset_task(
    client: &mut Client,
    cache: &Arc<Mutex<Cache>>,
    traffic: &Traffic,
    task: &v1::Task,
    spec: CosetSpec,
) -> Result<Vec<u8>, TaskError> {
    let solver = coset_solver(cache).await?;
    let cached = cache
        .lock()
        .ok()
        .and_then(|c| c.cosets.clone())
        .filter(|c| c.spec == task.job_spec && c.job == task.job_id);
    let reps = match cached {
        Some(c) => c.reps,
        None => {
            let bytes = download_bytes(client, traffic, task, "cosets/0").await?;
            let text = String::from_utf8(bytes).map_err(|_| anyhow!("the coset list is not text"))?;
            let reps = text
                .lines()
                .map(|line| parse_moves(line).map(|m| apply_moves(&m)))
                .collect::<Result<Vec<Cube>, _>>()
                .map_err(|e| anyhow!("the coset list from the coordinator: {e}"))?;
            let reps = Arc::new(reps);
            if let Ok(mut c) = cache.lock() {
                c.cosets =
                    Some(CosetJob { spec: task.job_spec.clone(), job: task.job_id, reps: reps.clone() });
            }
            reps
        }
    };
    let range = task.row_begin as usize..task.row_end as usize;
    if range.start > range.end || range.end > reps.len() {
        return Err(TaskError::Other(anyhow!("task cosets {range:?} outside 0..{}", reps.len())));
    }
    let key = ShardKey { job: task.job_id, task: task.task_id, attempt: task.attempt, level: task.level };
    let words = tokio::task::spawn_blocking(move || -> anyhow::Result<Vec<u64>> {
        let progress = shared::bfs::Progress::default();
        let mut words = Vec::new();
        for rep in &reps[range] {
            let start = std::time::Instant::now();
            let found = solver.solve(rep, spec, &progress)?;
            words.extend(wire::coset::encode(&found, spec, start.elapsed().as_millis() as u64));
        }
        Ok(words)
    })
    .await??;
    Ok(shard::encode_words(key, &words))
}

/// The process's coset solver, made at its first use: phase 1's table read from the cache's
/// file (or made and written there), else made.
async fn coset_solver(cache: &Arc<Mutex<Cache>>) -> Result<Arc<CosetSolver>, TaskError> {
    let (solver, path) = match cache.lock() {
        Ok(c) => (c.coset_solver.clone(), c.phase1_table.clone()),
        Err(_) => (None, None),
    };
    if let Some(solver) = solver {
        return Ok(solver);
    }
    let made = tokio::task::spawn_blocking(move || -> anyhow::Result<CosetSolver> {
        let started = std::time::Instant::now();
        let Some(path) = path else {
            let solver = CosetSolver::new()?;
            tracing::info!("phase 1's distance table made in {:.1} s", started.elapsed().as_secs_f64());
            return Ok(solver);
        };
        let (phase1, origin) = phase1_file::load_or_make(&path)?;
        let how = match origin {
            Origin::Read => "read from",
            Origin::Written => "made and written to",
        };
        tracing::info!(
            "phase 1's distance table {how} {} in {:.1} s",
            path.display(),
            started.elapsed().as_secs_f64()
        );
        Ok(CosetSolver::with_phase1(phase1))
    })
    .await??;
    let solver = Arc::new(made);
    if let Ok(mut c) = cache.lock() {
        c.coset_solver = Some(solver.clone());
    }
    Ok(solver)
}

/// Downloads the job-wide input `name` of the task's job (see [`download_input`]).
async fn download_bytes(
    client: &mut Client,
    traffic: &Traffic,
    task: &v1::Task,
    name: &str,
) -> Result<Vec<u8>, TaskError> {
    download_input(client, traffic, task.job_id, name).await.map_err(|e| match e {
        InputError::Missing => TaskError::Gone,
        InputError::Rpc(s) => TaskError::Rpc(s),
        InputError::Damaged(why) => {
            tracing::warn!("{why}; dropping the task");
            TaskError::Gone
        }
    })
}
