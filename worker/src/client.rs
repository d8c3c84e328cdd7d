//! The worker loop: register, poll for tasks (the poll is also the heartbeat), download the
//! task's inputs, compute on rayon in a blocking thread, upload the shard, until the job is done.

use anyhow::{anyhow, Result};
use cubefarm_proto::auth::{add_token, Token};
use cubefarm_proto::v1::{self, coordinator_client::CoordinatorClient};
use cubefarm_proto::MAX_CHUNK_BYTES;
use shared::bfs::task::Counting;
use shared::bfs::task::Sources;
use shared::bfs::Direction;
use shared::coord::h48::H48Coords;
use shared::h48::{base_for, H11Rows, Level, RowScratch};
use shared::job::{AnyIndex, JobSpec};
use shared::product::{ProductJob, ProductSpec};
use shared::shard::{self, ShardKey, WordPart};
use shared::space::RowCounts;
use shared::wire::{
    self, level_input_name, Before, KnownVisited, PartCut, PartedRows, PartsDecoder, SparseRows, WordPool,
};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

/// A validated worker configuration.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    pub coordinator: String,
    /// PEM certificate to trust for an https:// coordinator.
    pub ca: Option<std::path::PathBuf>,
    pub token: Option<Token>,
    pub name: String,
    /// Protocol version announced at registration (differs from ours only in tests).
    pub protocol_version: u32,
}

/// Adds the token to every request.
#[derive(Clone)]
struct TokenInterceptor(Option<Token>);

impl tonic::service::Interceptor for TokenInterceptor {
    fn call(&mut self, request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        add_token(self.0.as_ref(), request)
    }
}

type Client = CoordinatorClient<InterceptedService<Channel, TokenInterceptor>>;

/// Connects, retrying with backoff while the coordinator is unreachable; a TLS failure is
/// fatal at once (a certificate does not become trusted by waiting).
async fn connect(config: &WorkerConfig, endpoint: &Endpoint) -> Result<Client, Fault> {
    let mut delay = Duration::from_millis(100);
    let channel = loop {
        match endpoint.connect().await {
            Ok(c) => break c,
            Err(e) if cubefarm_proto::tls::is_tls_error(&e) => {
                return Err(Fault::Fatal(tls_failure(
                    &config.coordinator,
                    &cubefarm_proto::tls::describe(&e),
                )));
            }
            Err(e) if delay < Duration::from_secs(20) => {
                let e = cubefarm_proto::tls::describe(&e);
                tracing::warn!(
                    "cannot reach {} ({e}); retrying in {:.1} s",
                    config.coordinator,
                    delay.as_secs_f64()
                );
                tokio::time::sleep(delay).await;
                delay *= 2;
            }
            Err(e) => {
                return Err(Fault::Transient(anyhow!(
                    "cannot reach the coordinator at {}: {}",
                    config.coordinator,
                    cubefarm_proto::tls::describe(&e)
                )))
            }
        }
    };
    let interceptor = TokenInterceptor(config.token.clone());
    Ok(CoordinatorClient::with_interceptor(channel, interceptor)
        .max_decoding_message_size(4 * MAX_CHUNK_BYTES)
        .max_encoding_message_size(4 * MAX_CHUNK_BYTES))
}

fn tls_failure(url: &str, detail: &str) -> anyhow::Error {
    anyhow!(
        "TLS with {url} failed: {detail} (is the coordinator serving TLS, and is --ca its certificate \
         or the CA that signed it?)"
    )
}

/// What a worker keeps between tasks: the job's index and sources, and the level's input.
struct Cache {
    spec: Option<String>,
    index: Option<Arc<AnyIndex>>,
    /// The index's sources under the job's moves (for forward tasks).
    sources: Option<Arc<Sources>>,
    /// The row inputs of the current level (frontier or unvisited entries, and a forward
    /// level's second input), by name.
    row_inputs: Vec<(String, Arc<PartedRows>)>,
    /// This worker's results of the level it last worked on, as row sets: a result of a
    /// forward level's task k is part k of the next level's frontier, so those parts need no
    /// download. Kept until a task of another level finishes.
    own_results: Vec<(OwnPart, Arc<SparseRows>)>,
    /// A finished row task's output buffer, for the next task to fill (its pages stay mapped).
    spare_rows: Vec<u64>,
    /// Buffers of row sets no longer needed, for the next ones decoded or kept.
    pool: WordPool,
    /// Parts of frontiers taken from `own_results` and parts downloaded, for the log.
    parts_reused: u64,
    parts_downloaded: u64,
    /// A product job's stored positions and coset classes, by job spec.
    product: Option<(String, Arc<ProductJob>)>,
    /// An H48 build's h11 index and the levels downloaded so far (by depth).
    h48: Option<Arc<H11Rows>>,
    h48_levels: Vec<Option<Arc<Level>>>,
}

impl Cache {
    /// The worker's buffer pool (a handle to it).
    fn pool(cache: &Mutex<Cache>) -> WordPool {
        cache.lock().map(|c| c.pool.clone()).unwrap_or_default()
    }

    /// Drops the row inputs whose name `keep_input` refuses and the kept results `keep_own`
    /// refuses, giving their buffers back to the pool.
    fn drop_row_sets(&mut self, keep_input: impl Fn(&str) -> bool, keep_own: impl Fn(&OwnPart) -> bool) {
        let (inputs, own) = (std::mem::take(&mut self.row_inputs), std::mem::take(&mut self.own_results));
        let (kept, dropped): (Vec<_>, Vec<_>) = inputs.into_iter().partition(|(n, _)| keep_input(n));
        self.row_inputs = kept;
        let (kept_own, dropped_own): (Vec<_>, Vec<_>) = own.into_iter().partition(|(p, _)| keep_own(p));
        self.own_results = kept_own;
        // Own results are also parts of a frontier input: whichever goes last returns the buffer.
        dropped.into_iter().for_each(|(_, rows)| self.pool.recycle_parts(rows));
        dropped_own.into_iter().for_each(|(_, set)| self.pool.recycle(set));
    }
}

/// Which part of which level's results a kept result is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OwnPart {
    job: u64,
    level: u32,
    task: u32,
    rows_per_part: u32,
}

/// Why a session with the coordinator ended.
enum Fault {
    /// Refused (wrong token, other protocol version): retrying cannot help.
    Fatal(anyhow::Error),
    /// The connection or the coordinator went away: reconnect.
    Transient(anyhow::Error),
}

fn classify(context: &str, status: tonic::Status) -> Fault {
    if cubefarm_proto::tls::is_tls_error(&status) {
        return Fault::Fatal(anyhow!("{context}: {}", cubefarm_proto::tls::describe_status(&status)));
    }
    let e = anyhow!("{context}: {}", cubefarm_proto::tls::describe_status(&status));
    match status.code() {
        tonic::Code::Unauthenticated
        | tonic::Code::PermissionDenied
        | tonic::Code::InvalidArgument
        | tonic::Code::FailedPrecondition => Fault::Fatal(e),
        _ => Fault::Transient(e),
    }
}

/// Runs until the coordinator says the job is done (Ok), reconnecting with backoff when the
/// coordinator goes away (for example while it restarts and resumes), and failing on refusal.
pub async fn run_worker(config: WorkerConfig) -> Result<()> {
    // A bad address or CA file cannot get better by retrying: fail at once.
    let endpoint = cubefarm_proto::tls::endpoint(&config.coordinator, config.ca.as_deref())
        .map_err(anyhow::Error::msg)?
        .tcp_nodelay(true);
    let cache = Arc::new(Mutex::new(Cache {
        spec: None,
        index: None,
        sources: None,
        row_inputs: Vec::new(),
        own_results: Vec::new(),
        spare_rows: Vec::new(),
        pool: WordPool::default(),
        parts_reused: 0,
        parts_downloaded: 0,
        product: None,
        h48: None,
        h48_levels: Vec::new(),
    }));
    let mut failures = 0u32;
    loop {
        match session(&config, &endpoint, &cache).await {
            Ok(()) => {
                if let Ok(c) = cache.lock() {
                    if c.parts_reused + c.parts_downloaded > 0 {
                        tracing::info!(
                            "frontier parts: {} were this worker's own results, {} downloaded",
                            c.parts_reused,
                            c.parts_downloaded
                        );
                    }
                }
                return Ok(());
            }
            Err(Fault::Fatal(e)) => return Err(e),
            Err(Fault::Transient(e)) => {
                failures += 1;
                if failures > 8 {
                    return Err(e.context("giving up after 8 reconnections"));
                }
                let delay = Duration::from_millis(250 << failures.min(7));
                tracing::warn!("{e:#}; reconnecting in {:.1} s", delay.as_secs_f64());
                tokio::time::sleep(delay).await;
            }
        }
    }
}

/// One registration and the poll loop that follows it.
async fn session(config: &WorkerConfig, endpoint: &Endpoint, cache: &Arc<Mutex<Cache>>) -> Result<(), Fault> {
    let mut client = connect(config, endpoint).await?;
    let reply = client
        .register(v1::RegisterRequest {
            protocol_version: config.protocol_version,
            worker_name: config.name.clone(),
            threads: rayon::current_num_threads() as u32,
            memory_bytes: total_memory_bytes(),
        })
        .await
        .map_err(|s| classify("registration failed", s))?
        .into_inner();
    if !reply.accepted {
        return Err(Fault::Fatal(anyhow!("the coordinator refused this worker: {}", reply.message)));
    }
    let worker_id = reply.worker_id;
    // A result uploads while the next task is polled for and computed, so that the
    // coordinator's check and merge of one result overlap this worker's next task; at most one
    // upload is in flight.
    let mut uploading: Option<tokio::task::JoinHandle<Result<(), Fault>>> = None;
    loop {
        let poll = client
            .poll_task(v1::PollTaskRequest { worker_id })
            .await
            .map_err(|s| classify("lost the coordinator", s))?
            .into_inner();
        if poll.done {
            return finish_upload(&mut uploading).await;
        }
        // The coordinator holds an idle poll up to a second, so polling again at once is fine.
        let Some(task) = poll.task else { continue };
        // Renew the lease a few times per lease period while the task runs.
        let renewer = {
            let mut client = client.clone();
            let period = Duration::from_millis((task.lease_ms / 3).max(100));
            let request = v1::RenewLeaseRequest { worker_id, task_id: task.task_id, attempt: task.attempt };
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(period).await;
                    if !client.renew_lease(request).await.map(|r| r.into_inner().ok).unwrap_or(false) {
                        return;
                    }
                }
            })
        };
        let result = run_task(&mut client, cache, &task).await;
        renewer.abort();
        let output = match result {
            Ok(output) => output,
            Err(TaskError::Gone) => continue,
            Err(TaskError::Rpc(s)) => return Err(classify("a task's input download failed", s)),
            Err(TaskError::Other(e)) => return Err(Fault::Fatal(e)),
        };
        finish_upload(&mut uploading).await?;
        uploading = Some(tokio::spawn(upload(client.clone(), task.task_id, task.attempt, output)));
    }
}

/// Waits for the upload in flight, if any.
async fn finish_upload(
    uploading: &mut Option<tokio::task::JoinHandle<Result<(), Fault>>>,
) -> Result<(), Fault> {
    match uploading.take() {
        None => Ok(()),
        Some(handle) => handle.await.map_err(|e| Fault::Fatal(anyhow!("an upload stopped: {e}")))?,
    }
}

/// Uploads a task's result in chunks.
async fn upload(mut client: Client, task_id: u64, attempt: u32, output: Output) -> Result<(), Fault> {
    let Output { shard, counts } = output;
    let chunks: Vec<v1::ShardChunk> = shard
        .chunks(MAX_CHUNK_BYTES)
        .enumerate()
        .map(|(i, data)| v1::ShardChunk {
            task_id,
            attempt,
            offset: (i * MAX_CHUNK_BYTES) as u64,
            data: data.to_vec(),
            last: (i + 1) * MAX_CHUNK_BYTES >= shard.len(),
            counts: if (i + 1) * MAX_CHUNK_BYTES >= shard.len() { counts.clone() } else { Vec::new() },
        })
        .collect();
    match client.upload_shard(tokio_stream::iter(chunks)).await {
        Ok(_) => Ok(()),
        // Damaged on the way: the lease will expire and the task be handed out again.
        Err(s) if s.code() == tonic::Code::DataLoss => {
            tracing::warn!("task {task_id} rejected: {}", s.message());
            Ok(())
        }
        Err(s) => Err(classify("upload failed", s)),
    }
}

/// Physical memory of this machine (Linux `MemTotal`; 0 where unknown), told to the coordinator.
fn total_memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib * 1024)
}

/// Why a task was not computed.
enum TaskError {
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

/// Downloads parts `parts` of the row input `name` ("<input>/<depth>", shared by all the
/// level's tasks; one part is asked for as "<input>/<depth>/<part>"), decoding them as they
/// arrive.
async fn download(
    client: &mut Client,
    task: &v1::Task,
    name: &str,
    (cut, words_per_row): (PartCut, usize),
    parts: std::ops::Range<u32>,
    pool: WordPool,
) -> Result<PartedRows, TaskError> {
    let depth = wire::input_key_depth(name)
        .ok_or_else(|| anyhow!("the coordinator named an input {name:?} that is no row input"))?;
    let request =
        if parts == (0..cut.parts()) { name.to_string() } else { format!("{name}/{}", parts.start) };
    if parts.len() > 1 && request != name {
        return Err(TaskError::Other(anyhow!("parts {parts:?} of {name} are not one part or all")));
    }
    let rpc = |s: tonic::Status| {
        if s.code() == tonic::Code::NotFound {
            TaskError::Gone
        } else {
            TaskError::Rpc(s)
        }
    };
    let request = v1::DownloadInputRequest { worker_id: 0, job_id: task.job_id, name: request, offset: 0 };
    let mut stream = client.download_input(request).await.map_err(rpc)?.into_inner();
    // Decoded as the chunks arrive; a damaged download is fetched again with the task's next
    // lease.
    let damaged = |e: String| {
        tracing::warn!("input {name} is damaged ({e}); dropping the task");
        TaskError::Gone
    };
    // Decompression is heavy: it runs on a blocking thread, fed through a short queue while the
    // next chunks arrive, never on the runtime's threads.
    let mut decoder = PartsDecoder::new(task.job_id, depth, cut, words_per_row, parts).with_pool(pool);
    let (chunks, mut queued) = tokio::sync::mpsc::channel::<Vec<u8>>(DECODE_QUEUE_CHUNKS);
    let decoding = tokio::task::spawn_blocking(move || {
        while let Some(chunk) = queued.blocking_recv() {
            decoder.push(&chunk)?;
        }
        decoder.finish()
    });
    let received = async {
        while let Some(chunk) = stream.message().await.map_err(rpc)? {
            if chunks.send(chunk.data).await.is_err() {
                break; // the decoder stopped at a damaged chunk; its error is reported below
            }
        }
        Ok::<(), TaskError>(())
    }
    .await;
    drop(chunks);
    let decoded = decoding.await?;
    received?;
    decoded.map_err(damaged)
}

/// Chunks (of up to 1 MiB) queued between a download and its decoder.
const DECODE_QUEUE_CHUNKS: usize = 4;

/// A task's result: its shard, and a row task's counts (see `v1::ShardChunk::counts`).
struct Output {
    shard: Vec<u8>,
    counts: Vec<u64>,
}

impl Output {
    fn rows(shard: Vec<u8>, c: &RowCounts) -> Self {
        Output { shard, counts: vec![c.entries, c.positions, c.classes, c.self_inverse] }
    }
}

impl From<Vec<u8>> for Output {
    fn from(shard: Vec<u8>) -> Self {
        Output { shard, counts: Vec::new() }
    }
}

async fn run_task(
    client: &mut Client,
    cache: &Arc<Mutex<Cache>>,
    task: &v1::Task,
) -> Result<Output, TaskError> {
    let kind = v1::TaskKind::try_from(task.kind).map_err(|_| anyhow!("unknown task kind {}", task.kind))?;
    let spec = match (task.job_spec.parse().map_err(|e: String| anyhow!(e))?, kind) {
        (
            JobSpec::Rows(spec),
            v1::TaskKind::RowsForward | v1::TaskKind::RowsBackward | v1::TaskKind::RowsUnvisited,
        ) => spec,
        (JobSpec::Product(spec), v1::TaskKind::Product) => {
            return run_product_task(cache, task, spec).await.map(Output::from)
        }
        (JobSpec::H48Table(h), v1::TaskKind::H48) => {
            return run_h48_task(client, cache, task, h).await.map(Output::from)
        }
        (spec, kind) => return Err(TaskError::Other(anyhow!("a {kind:?} task of job {spec}"))),
    };
    let needs_index = cache.lock().map(|c| c.spec.as_deref() != Some(task.job_spec.as_str())).unwrap_or(true);
    if needs_index {
        // The first task of a job waits for this (edges: about 15 s), so say what it is doing.
        tracing::info!("job {} ({spec}): building the index", task.job_id);
        let (index, sources, took) = tokio::task::spawn_blocking(move || {
            let start = std::time::Instant::now();
            let index = spec.build_index();
            let sources = index.sources(&spec.moves.moves());
            (index, sources, start.elapsed())
        })
        .await?;
        tracing::info!("job {}: index built in {:.1} s", task.job_id, took.as_secs_f64());
        let mut c = cache.lock().map_err(|_| anyhow!("worker state poisoned"))?;
        c.index = Some(Arc::new(index));
        c.sources = Some(Arc::new(sources));
        c.spec = Some(task.job_spec.clone());
        c.drop_row_sets(|_| false, |_| false);
    }
    let rows = task.row_begin as u32..task.row_end as u32;
    // Inputs arrive over the network: check their sizes before any indexing trusts them.
    let (row_count, words_per_row, columns) = {
        let c = cache.lock().map_err(|_| anyhow!("worker state poisoned"))?;
        let index = c.index.as_ref().expect("index built");
        (index.row_count() as usize, index.words_per_row(), index.column_count())
    };
    if rows.start > rows.end || rows.end as usize > row_count {
        return Err(TaskError::Other(anyhow!("task rows {rows:?} outside 0..{row_count}")));
    }
    let key = ShardKey { job: task.job_id, task: task.task_id, attempt: task.attempt, level: task.level };
    let moves = spec.moves.moves();
    let forward = kind == v1::TaskKind::RowsForward;
    let input_name = format!(
        "{}/{}",
        level_input_name(if forward { Direction::Forward } else { Direction::Backward }),
        task.level
    );
    let before_name = if forward { task.before_input.as_str() } else { "" };
    // The level's inputs are cut as its tasks are: this task reads every part of the first,
    // and its own part of the second.
    let cut = PartCut::new(row_count as u32, task.rows_per_part);
    let part = task.task_id as u32;
    if part >= cut.parts() || cut.range(part) != rows {
        return Err(TaskError::Other(anyhow!("task {part} (rows {rows:?}) is not a part of {cut:?}")));
    }
    if kind == v1::TaskKind::RowsUnvisited {
        return run_unvisited_task(client, cache, task, (cut, words_per_row, columns), key).await;
    }
    let before_part = format!("{before_name}/{part}");
    // Inputs of earlier levels go first: a worker holds at most this task's two.
    if let Ok(mut c) = cache.lock() {
        c.drop_row_sets(|n| n == input_name || n == before_part, |_| true);
    }
    let input = row_input(client, cache, task, &input_name, (cut, words_per_row), 0..cut.parts()).await?;
    let before = match before_name {
        "" => None,
        name => Some(row_input(client, cache, task, name, (cut, words_per_row), part..part + 1).await?),
    };
    let counting = if task.positions_only { Counting::Positions } else { Counting::Classes };
    let index = cache.lock().ok().and_then(|c| c.index.clone()).expect("index built");
    let out = cache.lock().map(|mut c| std::mem::take(&mut c.spare_rows)).unwrap_or_default();
    let (result, counts) = if forward {
        let sources = cache.lock().ok().and_then(|c| c.sources.clone()).expect("sources built");
        let before_is_frontier = before_name.split('/').next() == Some(level_input_name(Direction::Forward));
        tokio::task::spawn_blocking(move || {
            let before = match &before {
                None => Before::Nothing,
                Some(b) if before_is_frontier => Before::Frontier(b),
                Some(b) => Before::Unvisited(b),
            };
            let seen = KnownVisited { frontier: &input, before };
            index.forward_task(&moves, rows, &sources, &input, &seen, counting, out)
        })
        .await?
    } else {
        tokio::task::spawn_blocking(move || index.pull_task(&moves, rows, &input, counting, out)).await?
    };
    // The result travels as a sparse row set (its empty rows cost nothing), compressed; this
    // worker keeps it too, as part of the next level's frontier.
    let pool = Cache::pool(cache);
    let (shard, own, result) = tokio::task::spawn_blocking(move || {
        let own = forward.then(|| {
            let buffer = pool.take(SparseRows::max_result_words(result.len() / words_per_row, words_per_row));
            Arc::new(SparseRows::from_rows(&result, words_per_row, buffer))
        });
        (
            Output::rows(SparseRows::encode_result(key, &result, words_per_row, columns, &counts), &counts),
            own,
            result,
        )
    })
    .await?;
    if let Ok(mut c) = cache.lock() {
        c.spare_rows = result;
        if let Some(own) = own {
            let part =
                OwnPart { job: task.job_id, level: task.level, task: part, rows_per_part: cut.rows_per_part };
            c.drop_row_sets(|_| true, |p| p.job == part.job && p.level == part.level);
            c.own_results.push((part, own));
        }
    }
    Ok(shard)
}

/// An unvisited task (see `v1::TaskKind::RowsUnvisited`): its part of `before_input` (or every
/// reachable entry) less its part of each found input (from an input held whole, its own kept
/// result, or downloaded).
async fn run_unvisited_task(
    client: &mut Client,
    cache: &Arc<Mutex<Cache>>,
    task: &v1::Task,
    (cut, words_per_row, columns): (PartCut, usize, u32),
    key: ShardKey,
) -> Result<Output, TaskError> {
    let part = task.task_id as u32;
    // The inputs of the level before are not needed any more, except the unvisited set this
    // round starts from (its parts are read from it); own results may be the next frontier.
    if let Ok(mut c) = cache.lock() {
        c.drop_row_sets(|n| n == task.before_input, |_| true);
    }
    let parts = (cut, words_per_row);
    // Its part of each found input, fetched side by side (the first round reads one part of
    // every frontier so far: one at a time, their round trips would add up).
    let mut fetching = tokio::task::JoinSet::new();
    for (i, name) in task.found_inputs.iter().enumerate() {
        let (mut client, cache, task, name) = (client.clone(), cache.clone(), task.clone(), name.clone());
        fetching.spawn(async move {
            (i, row_input(&mut client, &cache, &task, &name, parts, part..part + 1).await)
        });
    }
    let mut found = vec![None; task.found_inputs.len()];
    while let Some(fetched) = fetching.join_next().await {
        let (i, input) = fetched?;
        found[i] = Some(input?);
    }
    let found: Vec<Arc<PartedRows>> =
        found.into_iter().map(|f| f.expect("every found input fetched")).collect();
    let base = match task.before_input.as_str() {
        "" => None,
        name => Some(row_input(client, cache, task, name, parts, part..part + 1).await?),
    };
    let index = cache.lock().ok().and_then(|c| c.index.clone()).expect("index built");
    let out = cache.lock().map(|mut c| std::mem::take(&mut c.spare_rows)).unwrap_or_default();
    let rows = cut.range(part);
    let (output, result) = tokio::task::spawn_blocking(move || {
        let found: Vec<&PartedRows> = found.iter().map(|f| &**f).collect();
        let (result, counts) = index.unvisited_task(rows, base.as_deref(), &found, out);
        (
            Output::rows(SparseRows::encode_result(key, &result, words_per_row, columns, &counts), &counts),
            result,
        )
    })
    .await?;
    if let Ok(mut c) = cache.lock() {
        c.spare_rows = result;
        // Its downloaded parts go back to the pool.
        c.drop_row_sets(|n| n == task.before_input, |_| true);
    }
    Ok(output)
}

/// Parts `parts` of the row input `name` of the task's job: from the cache, or downloaded and
/// kept.
async fn row_input(
    client: &mut Client,
    cache: &Arc<Mutex<Cache>>,
    task: &v1::Task,
    name: &str,
    (cut, words_per_row): (PartCut, usize),
    parts: std::ops::Range<u32>,
) -> Result<Arc<PartedRows>, TaskError> {
    let key = if parts == (0..cut.parts()) { name.to_string() } else { format!("{name}/{}", parts.start) };
    let cached = cache.lock().ok().and_then(|c| {
        if let Some((_, input)) = c.row_inputs.iter().find(|(n, _)| *n == key) {
            return Some(input.clone());
        }
        // One part of an input held whole, or of a frontier this worker computed itself.
        if parts.len() != 1 {
            return None;
        }
        let k = parts.start;
        let set = c.row_inputs.iter().find(|(n, _)| n == name).and_then(|(_, whole)| whole.part(k)).or_else(
            || {
                // A frontier's parts are keyed by its depth (an unvisited set's carry the flag).
                let depth = wire::input_key_depth(name).filter(|d| d & wire::UNVISITED_ROUND == 0)?;
                let own = OwnPart {
                    job: task.job_id,
                    level: depth.checked_sub(1)?,
                    task: k,
                    rows_per_part: cut.rows_per_part,
                };
                c.own_results.iter().find(|(p, _)| *p == own).map(|(_, set)| set.clone())
            },
        )?;
        PartedRows::new(cut, parts.clone(), vec![set]).ok().map(Arc::new)
    });
    if let Some(input) = cached {
        return Ok(input);
    }
    let valid = name.starts_with(level_input_name(Direction::Forward))
        || name.starts_with(level_input_name(Direction::Backward));
    if !valid {
        return Err(TaskError::Other(anyhow!("the coordinator named an unknown row input {name:?}")));
    }
    let input = if key == name && name.starts_with(level_input_name(Direction::Forward)) {
        Arc::new(frontier(client, cache, task, name, (cut, words_per_row)).await?)
    } else {
        Arc::new(download(client, task, name, (cut, words_per_row), parts, Cache::pool(cache)).await?)
    };
    if let Ok(mut c) = cache.lock() {
        c.row_inputs.push((key, input.clone()));
    }
    Ok(input)
}

/// A whole forward level's frontier `name`: the parts this worker computed itself (its kept
/// results of the level before) and the others downloaded one by one, or every part at once
/// when it kept none.
async fn frontier(
    client: &mut Client,
    cache: &Arc<Mutex<Cache>>,
    task: &v1::Task,
    name: &str,
    (cut, words_per_row): (PartCut, usize),
) -> Result<PartedRows, TaskError> {
    let all = 0..cut.parts();
    let mut sets: Vec<Option<Arc<SparseRows>>> = {
        let c = cache.lock().map_err(|_| anyhow!("worker state poisoned"))?;
        all.clone()
            .map(|k| {
                let wanted = OwnPart {
                    job: task.job_id,
                    level: task.level.wrapping_sub(1),
                    task: k,
                    rows_per_part: cut.rows_per_part,
                };
                c.own_results.iter().find(|(p, _)| *p == wanted).map(|(_, set)| set.clone())
            })
            .collect()
    };
    let kept = sets.iter().flatten().count();
    if let Ok(mut c) = cache.lock() {
        c.parts_reused += kept as u64;
        c.parts_downloaded += (sets.len() - kept) as u64;
    }
    let pool = Cache::pool(cache);
    if kept == 0 {
        return download(client, task, name, (cut, words_per_row), all, pool).await;
    }
    // The missing parts are downloaded a few at a time, each decoded on its own thread, so a
    // worker of many cores does not decode the frontier on one.
    let missing: Vec<u32> = (0..cut.parts()).filter(|&k| sets[k as usize].is_none()).collect();
    let mut missing = missing.into_iter();
    let mut running = tokio::task::JoinSet::new();
    loop {
        while running.len() < rayon::current_num_threads().max(1) {
            let Some(k) = missing.next() else { break };
            let (mut client, task, name, pool) =
                (client.clone(), task.clone(), name.to_string(), pool.clone());
            running.spawn(async move {
                (k, download(&mut client, &task, &name, (cut, words_per_row), k..k + 1, pool).await)
            });
        }
        let Some(finished) = running.join_next().await else { break };
        let (k, part) = finished?;
        sets[k as usize] = part?.into_parts().pop();
    }
    let sets = sets.into_iter().map(|s| s.expect("every part kept or downloaded")).collect();
    PartedRows::new(cut, all, sets).map_err(|e| TaskError::Other(anyhow!("the frontier {name}: {e}")))
}

/// A product job's task: the counters of a range of representative cosets. It needs no input:
/// the stored positions and coset classes are rebuilt from the job spec (once per job).
async fn run_product_task(
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
async fn run_h48_task(
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
            let index = Arc::new(tokio::task::spawn_blocking(|| H11Rows::new(&H48Coords)).await?);
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
