//! The worker loop: register, poll for tasks (the poll is also the heartbeat), download the
//! task's inputs, compute on rayon in a blocking thread, upload the shard, until the job is done.

use anyhow::{anyhow, bail, Context, Result};
use cubefarm_proto::auth::{add_token, Token};
use cubefarm_proto::v1::{self, coordinator_client::CoordinatorClient};
use cubefarm_proto::MAX_CHUNK_BYTES;
use shared::bfs::job::{AnyIndex, JobSpec, Scatter};
use shared::shard::{self, ShardKey};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

/// A validated worker configuration.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    pub coordinator: String,
    pub token: Option<Token>,
    pub name: String,
    /// Protocol version announced at registration (differs from ours only in tests).
    pub protocol_version: u32,
}

/// Adds the token to every request.
type TokenInterceptor =
    Box<dyn FnMut(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> + Send>;
type Client = CoordinatorClient<InterceptedService<Channel, TokenInterceptor>>;

async fn connect(config: &WorkerConfig) -> Result<Client> {
    let endpoint = Endpoint::from_shared(config.coordinator.clone())
        .with_context(|| format!("bad coordinator address {}", config.coordinator))?;
    let mut delay = Duration::from_millis(100);
    let channel = loop {
        match endpoint.connect().await {
            Ok(c) => break c,
            Err(e) if delay < Duration::from_secs(20) => {
                eprintln!(
                    "cannot reach {} ({e}); retrying in {:.1} s",
                    config.coordinator,
                    delay.as_secs_f64()
                );
                tokio::time::sleep(delay).await;
                delay *= 2;
            }
            Err(e) => bail!("cannot reach the coordinator at {}: {e}", config.coordinator),
        }
    };
    let token = config.token.clone();
    let interceptor: TokenInterceptor = Box::new(move |req| add_token(token.as_ref(), req));
    Ok(CoordinatorClient::with_interceptor(channel, interceptor)
        .max_decoding_message_size(4 * MAX_CHUNK_BYTES)
        .max_encoding_message_size(4 * MAX_CHUNK_BYTES))
}

/// Indexes built so far, by job spec, with the scatter buffer for forward tasks.
struct Cache {
    spec: Option<String>,
    index: Option<Arc<AnyIndex>>,
    scatter: Scatter,
    /// The whole frontier of a backward level: (level, words).
    frontier: Option<(u32, Arc<Vec<u64>>)>,
}

/// Runs until the coordinator says the job is done (Ok) or something fails.
pub async fn run_worker(config: WorkerConfig) -> Result<()> {
    let mut client = connect(&config).await?;
    let reply = client
        .register(v1::RegisterRequest {
            protocol_version: config.protocol_version,
            worker_name: config.name.clone(),
            threads: rayon::current_num_threads() as u32,
            memory_bytes: 0,
        })
        .await
        .map_err(|s| anyhow!("registration failed: {}", s.message()))?
        .into_inner();
    if !reply.accepted {
        bail!("the coordinator refused this worker: {}", reply.message);
    }
    let worker_id = reply.worker_id;
    let cache =
        Arc::new(Mutex::new(Cache { spec: None, index: None, scatter: Scatter::default(), frontier: None }));
    loop {
        let poll = client
            .poll_task(v1::PollTaskRequest { worker_id })
            .await
            .map_err(|s| anyhow!("lost the coordinator: {}", s.message()))?
            .into_inner();
        if poll.done {
            return Ok(());
        }
        let Some(task) = poll.task else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let shard = run_task(&mut client, &cache, &task).await?;
        let chunks: Vec<v1::ShardChunk> = shard
            .chunks(MAX_CHUNK_BYTES)
            .enumerate()
            .map(|(i, data)| v1::ShardChunk {
                task_id: task.task_id,
                attempt: task.attempt,
                offset: (i * MAX_CHUNK_BYTES) as u64,
                data: data.to_vec(),
                last: (i + 1) * MAX_CHUNK_BYTES >= shard.len(),
            })
            .collect();
        let chunks = if chunks.is_empty() {
            vec![v1::ShardChunk {
                task_id: task.task_id,
                attempt: task.attempt,
                offset: 0,
                data: vec![],
                last: true,
            }]
        } else {
            chunks
        };
        client
            .upload_shard(tokio_stream::iter(chunks))
            .await
            .map_err(|s| anyhow!("upload of task {} failed: {}", task.task_id, s.message()))?;
    }
}

async fn download(client: &mut Client, task: &v1::Task, input: &str) -> Result<Vec<u64>> {
    let name = format!("{input}/{}/{}/{}", task.level, task.task_id, task.attempt);
    let mut stream = client
        .download_input(v1::DownloadInputRequest {
            worker_id: 0,
            job_id: task.job_id,
            name: name.clone(),
            offset: 0,
        })
        .await
        .map_err(|s| anyhow!("download of {name} failed: {}", s.message()))?
        .into_inner();
    let mut bytes = Vec::new();
    while let Some(chunk) =
        stream.message().await.map_err(|s| anyhow!("download of {name} failed: {}", s.message()))?
    {
        bytes.extend_from_slice(&chunk.data);
    }
    let key = ShardKey { job: task.job_id, task: task.task_id, attempt: task.attempt, level: task.level };
    let raw = shard::decode_for(&bytes, key).map_err(|e| anyhow!("input {name} is corrupt: {e}"))?;
    Ok(raw.chunks(8).map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes"))).collect())
}

async fn run_task(client: &mut Client, cache: &Arc<Mutex<Cache>>, task: &v1::Task) -> Result<Vec<u8>> {
    let spec: JobSpec = task.job_spec.parse().map_err(|e: String| anyhow!(e))?;
    let needs_index = cache.lock().map(|c| c.spec.as_deref() != Some(task.job_spec.as_str())).unwrap_or(true);
    if needs_index {
        let index = tokio::task::spawn_blocking(move || AnyIndex::build(spec.space)).await?;
        let mut c = cache.lock().map_err(|_| anyhow!("worker state poisoned"))?;
        c.index = Some(Arc::new(index));
        c.spec = Some(task.job_spec.clone());
        c.frontier = None;
    }
    let rows = task.row_begin as u32..task.row_end as u32;
    let key = ShardKey { job: task.job_id, task: task.task_id, attempt: task.attempt, level: task.level };
    let moves = spec.moves.moves();
    let payload: Vec<u8> = if task.direction == v1::Direction::Forward as i32 {
        let frontier = download(client, task, "frontier-rows").await?;
        let cache = cache.clone();
        tokio::task::spawn_blocking(move || {
            let mut c = cache.lock().expect("worker state");
            let index = c.index.clone().expect("index built");
            index.push_task(&moves, rows, &frontier, &mut c.scatter)
        })
        .await?
    } else {
        let cached = cache.lock().ok().and_then(|c| c.frontier.clone()).filter(|(l, _)| *l == task.level);
        let frontier = match cached {
            Some((_, f)) => f,
            None => {
                let f = Arc::new(download(client, task, "frontier-all").await?);
                if let Ok(mut c) = cache.lock() {
                    c.frontier = Some((task.level, f.clone()));
                }
                f
            }
        };
        let visited = download(client, task, "visited-rows").await?;
        let index = cache.lock().ok().and_then(|c| c.index.clone()).expect("index built");
        let words =
            tokio::task::spawn_blocking(move || index.pull_task(&moves, rows, &visited, &frontier)).await?;
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    };
    Ok(shard::encode(key, &payload))
}
