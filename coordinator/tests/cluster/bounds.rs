//! A peer holding the token cannot stop the coordinator by stating sizes: an upload longer than
//! the task's largest result, or a shard whose header claims 2^40 bytes, is refused with
//! INVALID_ARGUMENT before it is buffered or allocated, the task is handed out again at once,
//! and the job still ends with the embedded result. The cluster runtime runs in this process
//! ([`serve`] returns the bound address).

use coordinator::cluster::{serve, CosetWords, Hub, ServeConfig};
use cubefarm_proto::v1;
use cubefarm_proto::CoordinatorClient;
use shared::cube::MoveSet;
use shared::product::{ProductJob, ProductSpec};
use shared::shard::{self, ShardKey};
use shared::space::Space;
use shared::wire;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;
use tonic::Code;

const SPEC: ProductSpec = ProductSpec::new(Space::Cube, MoveSet::Htm, 4);

/// Serves a product job's one level of coset tasks in this process; returns the runtime, the
/// bound address, the scheduler and the thread that runs the level.
#[allow(clippy::type_complexity)]
fn start() -> (
    tokio::runtime::Runtime,
    SocketAddr,
    Arc<Hub>,
    std::thread::JoinHandle<Result<Vec<u64>, coordinator::cluster::ClusterError>>,
) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let shared =
        Arc::new(Hub::new(1, SPEC.to_string(), Duration::from_secs(600), Duration::from_secs(30), 8));
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let config = ServeConfig { hub: shared.clone(), token: None, tls: None };
    let (addr, server) = serve(config, listener, Box::pin(std::future::pending())).unwrap();
    runtime.spawn(server);
    let job = ProductJob::build(SPEC);
    let level = {
        let shared = shared.clone();
        std::thread::spawn(move || {
            shared.run_cosets(
                0,
                0..job.task_count(),
                CosetWords::Exactly(wire::product::words_per_task(&job)),
                0,
                &AtomicU64::new(0),
            )
        })
    };
    (runtime, addr, shared, level)
}

/// Registers as a worker and takes the first task.
async fn take_task(addr: SocketAddr) -> (CoordinatorClient<tonic::transport::Channel>, v1::Task) {
    let mut client = CoordinatorClient::connect(format!("http://{addr}")).await.unwrap();
    let reply = client
        .register(v1::RegisterRequest {
            protocol_version: cubefarm_proto::PROTOCOL_VERSION,
            worker_name: "hostile".into(),
            threads: 1,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let worker_id = reply.worker_id;
    loop {
        let poll = client
            .poll_task(v1::PollTaskRequest { worker_id, ..Default::default() })
            .await
            .unwrap()
            .into_inner();
        if let Some(task) = poll.task {
            return (client, task);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Uploads `bytes` for (task, attempt) in chunks of `chunk` bytes.
async fn upload(
    client: &mut CoordinatorClient<tonic::transport::Channel>,
    task: u64,
    attempt: u32,
    bytes: Vec<u8>,
    chunk: usize,
) -> Result<v1::UploadShardReply, tonic::Status> {
    let n = bytes.len().div_ceil(chunk);
    let chunks: Vec<v1::ShardChunk> = bytes
        .chunks(chunk)
        .enumerate()
        .map(|(i, data)| v1::ShardChunk {
            task_id: task,
            attempt,
            offset: (i * chunk) as u64,
            data: data.to_vec(),
            last: i + 1 == n,
        })
        .collect();
    client.upload_shard(tokio_stream::iter(chunks)).await.map(|r| r.into_inner())
}

/// After a refusal the same task is handed out again at once (next attempt), and this time its
/// true result is accepted; a worker finishes the job, whose counts equal the embedded run's.
fn check_recovery(
    runtime: &tokio::runtime::Runtime,
    addr: SocketAddr,
    shared: &Hub,
    level: std::thread::JoinHandle<Result<Vec<u64>, coordinator::cluster::ClusterError>>,
    refused: &v1::Task,
) {
    let job = ProductJob::build(SPEC);
    let (mut client, task) = runtime.block_on(take_task(addr));
    assert_eq!((task.task_id, task.attempt), (refused.task_id, refused.attempt + 1), "leased again at once");
    let counts = wire::product::encode_counts(&job.run(task.row_begin as u32..task.row_end as u32, None));
    let key = ShardKey { job: task.job_id, task: task.task_id, attempt: task.attempt, level: task.level };
    let reply = runtime.block_on(upload(
        &mut client,
        task.task_id,
        task.attempt,
        shard::encode_words(key, &counts),
        4096,
    ));
    assert!(reply.unwrap().accepted);
    let worker = runtime.spawn(worker::client::run_worker(worker::client::WorkerConfig {
        mem_limit: 1 << 30,
        patience: Duration::from_secs(10),
        ..worker::client::WorkerConfig::loopback(format!("http://{addr}"), None, "honest".into())
    }));
    let words = level.join().unwrap().unwrap();
    shared.finish();
    runtime.block_on(worker).unwrap().unwrap();
    assert_eq!(words, wire::product::encode_counts(&job.run(0..job.task_count(), None)));
}

#[test]
fn an_upload_longer_than_the_task_can_produce_is_refused_and_the_task_handed_out_again() {
    let (runtime, addr, shared, level) = start();
    let (mut client, task) = runtime.block_on(take_task(addr));
    let limit = shared.upload_limit(task.task_id).unwrap();
    let too_long = shard::max_shard_bytes(limit.max_words) as usize + 1;
    let status = runtime
        .block_on(upload(&mut client, task.task_id, task.attempt, vec![0u8; too_long], 4096))
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    check_recovery(&runtime, addr, &shared, level, &task);
}

#[test]
fn a_shard_claiming_2_pow_40_bytes_is_refused_without_allocating_and_the_task_handed_out_again() {
    let (runtime, addr, shared, level) = start();
    let (mut client, task) = runtime.block_on(take_task(addr));
    let key = ShardKey { job: task.job_id, task: task.task_id, attempt: task.attempt, level: task.level };
    let mut forged = shard::encode_words(key, &[1, 2, 3]);
    // The header (bincode, fixed width, little-endian): magic 8, version 2, key 24, codec 1,
    // then the raw length at byte 35; its CRC-32 follows the 55 bytes of fields.
    forged[35..43].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let crc = shared::checksum::crc32(&forged[..55]);
    forged[55..59].copy_from_slice(&crc.to_le_bytes());
    let status = runtime.block_on(upload(&mut client, task.task_id, task.attempt, forged, 4096)).unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("1099511627776"), "{status:?}");
    check_recovery(&runtime, addr, &shared, level, &task);
}
