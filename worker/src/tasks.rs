//! Independent tasks leased from the coordinator: a product job's cosets and an H48 table
//! build's rows. Each is computed on rayon (never on tokio's threads) and returned as a shard.

use crate::connection::Client;
use anyhow::anyhow;
use cubefarm_proto::v1;
use shared::coset::{CosetSolver, CosetSpec};
use shared::cube::{apply_moves, parse_moves, Cube};
use shared::h48::{base_for, H11Rows, Level, RowScratch};
use shared::job::JobSpec;
use shared::product::{ProductJob, ProductSpec};
use shared::shard::{self, ShardKey, WordPart};
use shared::wire;
use std::sync::{Arc, Mutex};

/// What a worker keeps between tasks of one job.
#[derive(Default)]
pub struct Cache {
    /// A product job's stored positions and coset classes, by job spec.
    product: Option<(String, Arc<ProductJob>)>,
    /// An H48 build's h11 index and the levels downloaded so far (by depth).
    h48: Option<Arc<H11Rows>>,
    h48_levels: Vec<Option<Arc<Level>>>,
    cosets: Option<CosetJob>,
}

/// A coset job's solver and representatives, with the job's spec and id.
#[derive(Clone)]
struct CosetJob {
    spec: String,
    job: u64,
    solver: Arc<CosetSolver>,
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

/// An H48 build's task: the rows of h11 level `task.level` (from the two levels before it), or,
/// for level base + 2, the table rows (from every level 0 ..= base + 1). The index is built
/// once per job and the levels are downloaded once each.
pub async fn run_h48_task(
    client: &mut Client,
    cache: &Arc<Mutex<Cache>>,
    task: &v1::Task,
    h: u8,
) -> Result<Vec<u8>, TaskError> {
    let base = base_for(h);
    let level = task.level;
    if level == 0 || level > base as u32 + 2 {
        return Err(TaskError::Other(anyhow!("no level {level} in an h48h{h} build")));
    }
    let cached = cache.lock().ok().and_then(|c| c.h48.clone());
    let index = match cached {
        Some(index) => index,
        None => {
            let index = Arc::new(tokio::task::spawn_blocking(JobSpec::h11_rows).await?);
            if let Ok(mut c) = cache.lock() {
                c.h48 = Some(index.clone());
                c.h48_levels = vec![Some(Arc::new(index.first_level()))];
            }
            index
        }
    };
    let rows = task.row_begin as u32..task.row_end as u32;
    if rows.start > rows.end || rows.end > index.rows() {
        return Err(TaskError::Other(anyhow!("task rows {rows:?} outside 0..{}", index.rows())));
    }
    let needed: Vec<u32> = if level <= base as u32 + 1 {
        (level.saturating_sub(2)..level).collect()
    } else {
        (0..=base as u32 + 1).collect()
    };
    let mut levels = Vec::new();
    for d in needed {
        let have = cache.lock().ok().and_then(|c| c.h48_levels.get(d as usize).cloned().flatten());
        let l = match have {
            Some(l) => l,
            None => {
                let bytes = download_bytes(client, task, &format!("h11-level/{d}"), d).await?;
                let l = tokio::task::spawn_blocking(move || Level::read_from(&mut bytes.as_slice())).await?;
                let l = Arc::new(l.map_err(|e| anyhow!("level {d} from the coordinator: {e}"))?);
                if l.depth as u32 != d || l.rows.len() != index.rows() as usize {
                    return Err(TaskError::Other(anyhow!(
                        "the coordinator sent a level that is not level {d}"
                    )));
                }
                if let Ok(mut c) = cache.lock() {
                    if c.h48_levels.len() <= d as usize {
                        c.h48_levels.resize(d as usize + 1, None);
                    }
                    c.h48_levels[d as usize] = Some(l.clone());
                }
                l
            }
        };
        levels.push(l);
    }
    let key = ShardKey { job: task.job_id, task: task.task_id, attempt: task.attempt, level };
    Ok(tokio::task::spawn_blocking(move || {
        use rayon::prelude::*;
        let words = if level <= base as u32 + 1 {
            let (prev, before) = (&levels[levels.len() - 1], (levels.len() == 2).then(|| &*levels[0]));
            let made: Vec<_> = rows
                .into_par_iter()
                .map_init(RowScratch::default, |s, t| index.next_level_row(t, prev, before, s))
                .collect();
            wire::h48::encode_level_rows(&made)
        } else {
            let made: Vec<_> = rows
                .into_par_iter()
                .map_init(RowScratch::default, |s, t| (t, index.table_row(t, h, &levels, s)))
                .collect();
            wire::h48::encode_table_rows(&made)
        };
        shard::encode_words(key, &words)
    })
    .await?)
}

/// A coset job's task: its cosets (a range of the representatives the coordinator publishes as
/// the input `cosets/0`, one move sequence a line) solved one after the other, each on every
/// thread. The solver's tables are built and the representatives downloaded once per job.
pub async fn run_coset_task(
    client: &mut Client,
    cache: &Arc<Mutex<Cache>>,
    task: &v1::Task,
    spec: CosetSpec,
) -> Result<Vec<u8>, TaskError> {
    let cached = cache
        .lock()
        .ok()
        .and_then(|c| c.cosets.clone())
        .filter(|c| c.spec == task.job_spec && c.job == task.job_id);
    let (solver, reps) = match cached {
        Some(c) => (c.solver, c.reps),
        None => {
            let bytes = download_bytes(client, task, "cosets/0", 0).await?;
            let text = String::from_utf8(bytes).map_err(|_| anyhow!("the coset list is not text"))?;
            let reps = text
                .lines()
                .map(|line| parse_moves(line).map(|m| apply_moves(&m)))
                .collect::<Result<Vec<Cube>, _>>()
                .map_err(|e| anyhow!("the coset list from the coordinator: {e}"))?;
            let alike = spec.slice_edges_alike;
            let solver = Arc::new(tokio::task::spawn_blocking(move || CosetSolver::new(!alike)).await?);
            let reps = Arc::new(reps);
            if let Ok(mut c) = cache.lock() {
                c.cosets = Some(CosetJob {
                    spec: task.job_spec.clone(),
                    job: task.job_id,
                    solver: solver.clone(),
                    reps: reps.clone(),
                });
            }
            (solver, reps)
        }
    };
    let range = task.row_begin as usize..task.row_end as usize;
    if range.start > range.end || range.end > reps.len() {
        return Err(TaskError::Other(anyhow!("task cosets {range:?} outside 0..{}", reps.len())));
    }
    let key = ShardKey { job: task.job_id, task: task.task_id, attempt: task.attempt, level: task.level };
    let words = tokio::task::spawn_blocking(move || -> anyhow::Result<Vec<u64>> {
        let progress = shared::bfs::Progress::default();
        let mut words = Vec::with_capacity(range.len() * spec.words_per_coset());
        for rep in &reps[range] {
            let start = std::time::Instant::now();
            let found = solver.exact(rep, spec.exact_to, &progress)?;
            words.extend(wire::coset::encode(&found, spec, start.elapsed().as_millis() as u64));
        }
        Ok(words)
    })
    .await??;
    Ok(shard::encode_words(key, &words))
}

/// Downloads the job-wide input `name` (an encoded shard keyed by `level`) as bytes.
async fn download_bytes(
    client: &mut Client,
    task: &v1::Task,
    name: &str,
    level: u32,
) -> Result<Vec<u8>, TaskError> {
    let request =
        v1::DownloadInputRequest { worker_id: 0, job_id: task.job_id, name: name.to_string(), offset: 0 };
    let rpc = |s: tonic::Status| {
        if s.code() == tonic::Code::NotFound {
            TaskError::Gone
        } else {
            TaskError::Rpc(s)
        }
    };
    let mut stream = client.download_input(request).await.map_err(rpc)?.into_inner();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.message().await.map_err(rpc)? {
        if chunk.offset != bytes.len() as u64 || chunk.total_bytes > 1 << 40 {
            return Err(TaskError::Other(anyhow!("input {name} arrived out of order")));
        }
        bytes.extend_from_slice(&chunk.data);
    }
    let key = ShardKey { job: task.job_id, task: shard::LEVEL_INPUT, attempt: 0, level };
    tokio::task::spawn_blocking(move || shard::decode_for(&bytes, key)).await?.map_err(|e| {
        tracing::warn!("input {level} is damaged ({e}); dropping the task");
        TaskError::Gone
    })
}
