//! The worker loop: serve the `Peer` service, register, heartbeat apart from any work, and poll
//! for work until the job is done: leased tasks (a product job's cosets, an H48 build's rows)
//! are computed and uploaded; a row search is run with the other workers (`rows`).

use crate::connection::{classify, connect, Client, Fault, Traffic};
use crate::rows::peer::{PeerPool, PeerService};
use crate::rows::Host;
use crate::tasks::{run_coset_task, run_h48_task, run_product_task, Cache, TaskError};
use anyhow::{anyhow, Result};
use cubefarm_proto::auth::Token;
use cubefarm_proto::v1;
use cubefarm_proto::MAX_CHUNK_BYTES;
use prost::Message;
use shared::job::JobSpec;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tonic::transport::Endpoint;

/// A validated worker configuration.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    pub coordinator: String,
    /// PEM certificate to trust for an https:// coordinator (and https:// peers).
    pub ca: Option<PathBuf>,
    pub token: Option<Token>,
    pub name: String,
    /// Protocol version announced at registration (differs from ours only in tests).
    pub protocol_version: u32,
    /// Where the `Peer` service listens (port 0: any).
    pub listen: SocketAddr,
    /// The host (or host:port) other workers reach it at; `None`: the listening address, or
    /// with an unspecified one, this machine's address towards the coordinator.
    pub advertise: Option<String>,
    /// Certificate and key for the `Peer` service (TLS between workers).
    pub tls: Option<(PathBuf, PathBuf)>,
    /// The most memory the worker may use.
    pub mem_limit: u64,
    /// Where replicas of other workers' rows are kept (else a temporary directory).
    pub state_dir: Option<PathBuf>,
    /// How long to keep trying an unreachable coordinator, in all.
    pub patience: Duration,
}

/// Runs until the coordinator says the job is done (Ok), reconnecting with backoff when the
/// coordinator goes away (for example while it restarts and resumes), and failing on refusal
/// or once it has been unreachable for longer than `config.patience`.
pub async fn run_worker(config: WorkerConfig) -> Result<()> {
    // A bad address or CA file cannot get better by retrying: fail at once.
    let endpoint =
        cubefarm_proto::tls::endpoint(&config.coordinator, config.ca.as_deref())?.tcp_nodelay(true);
    let traffic = Arc::new(Traffic::default());
    let host = Arc::new(Host::new(
        traffic.clone(),
        PeerPool::new(config.token.clone(), config.ca.clone()),
        config.state_dir.clone(),
        config.mem_limit,
    ));
    let (peer_address, server) = serve_peers(&config, host.clone()).await?;
    let cache = Arc::new(Mutex::new(Cache::default()));
    let mut failures = 0u32;
    let result = loop {
        match session(&config, &endpoint, &cache, &host, &peer_address).await {
            Ok(()) => break Ok(()),
            Err(Fault::Fatal(e)) => break Err(e),
            Err(Fault::Transient(e)) => {
                // The job's rows stay: a coordinator that restarts from its journal takes this
                // worker back with them.
                failures += 1;
                if failures > 8 {
                    break Err(e.context("giving up after 8 reconnections"));
                }
                let delay = Duration::from_millis(250 << failures.min(5));
                tracing::warn!("{e:#}; reconnecting in {:.1} s", delay.as_secs_f64());
                tokio::time::sleep(delay).await;
            }
        }
    };
    host.drop_job();
    server.abort();
    let (sent, received) = traffic.totals();
    tracing::info!(
        "traffic: {:.1} MiB sent, {:.1} MiB received",
        sent as f64 / 1048576.0,
        received as f64 / 1048576.0
    );
    result
}

/// Starts the `Peer` service; returns the address to announce and the server's task.
async fn serve_peers(
    config: &WorkerConfig,
    host: Arc<Host>,
) -> Result<(String, tokio::task::JoinHandle<()>)> {
    cubefarm_proto::auth::check_listen(config.listen, config.token.as_ref())?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| anyhow!("cannot listen for other workers on {}: {e}", config.listen))?;
    let bound = listener.local_addr()?;
    let token = config.token.clone();
    let server = v1::peer_server::PeerServer::new(PeerService { host })
        .max_decoding_message_size(4 * MAX_CHUNK_BYTES)
        .max_encoding_message_size(4 * MAX_CHUNK_BYTES);
    let service = tonic::service::interceptor::InterceptedService::new(server, move |req| {
        cubefarm_proto::auth::check_request(token.as_ref(), req)
    });
    let mut builder = tonic::transport::Server::builder();
    let scheme = match &config.tls {
        Some((cert, key)) => {
            let tls = cubefarm_proto::tls::server_config(cert, key)?;
            builder = builder.tls_config(tls)?;
            "https"
        }
        None => "http",
    };
    let host = match &config.advertise {
        Some(a) => a.clone(),
        None if bound.ip().is_unspecified() => local_address_towards(&config.coordinator)?,
        None => bound.ip().to_string(),
    };
    let address = if host.contains(':') && !host.starts_with('[') {
        format!("{scheme}://{host}") // host:port given
    } else {
        format!("{scheme}://{host}:{}", bound.port())
    };
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    let server = tokio::spawn(async move {
        if let Err(e) = builder.add_service(service).serve_with_incoming(incoming).await {
            tracing::error!("the peer service failed: {e}");
        }
    });
    tracing::info!("serving other workers on {bound} as {address}");
    Ok((address, server))
}

/// This machine's address on the route to the coordinator's host (no packet is sent).
fn local_address_towards(coordinator: &str) -> Result<String> {
    let rest = coordinator.split("://").nth(1).unwrap_or(coordinator);
    let authority = rest.split('/').next().unwrap_or(rest);
    let target = if authority.contains(':') { authority.to_string() } else { format!("{authority}:80") };
    let socket = std::net::UdpSocket::bind("0.0.0.0:0")?;
    use std::net::ToSocketAddrs;
    let addr = target.to_socket_addrs()?.next().ok_or_else(|| {
        anyhow!("cannot resolve {authority} to find this worker's address; give --advertise")
    })?;
    socket.connect(addr)?;
    Ok(socket.local_addr()?.ip().to_string())
}

/// One registration, the heartbeat beside it, and the poll loop.
async fn session(
    config: &WorkerConfig,
    endpoint: &Endpoint,
    cache: &Arc<Mutex<Cache>>,
    host: &Arc<Host>,
    peer_address: &str,
) -> Result<(), Fault> {
    let traffic = host.traffic.clone();
    let mut client = connect(&config.coordinator, endpoint, config.token.as_ref(), config.patience).await?;
    let request = v1::RegisterRequest {
        protocol_version: config.protocol_version,
        worker_name: config.name.clone(),
        threads: rayon::current_num_threads() as u32,
        memory_bytes: total_memory_bytes(),
        peer_address: peer_address.to_string(),
        mem_limit_bytes: config.mem_limit,
        // A coordinator that restarted and resumes the job takes this worker back with its rows.
        previous_worker_id: host.previous_id(),
    };
    traffic.sent(request.encoded_len());
    let reply = client.register(request).await.map_err(|s| classify("registration failed", s))?.into_inner();
    traffic.received(reply.encoded_len());
    if !reply.accepted {
        return Err(Fault::Fatal(anyhow!("the coordinator refused this worker: {}", reply.message)));
    }
    let worker_id = reply.worker_id;
    if host.worker_id().is_some_and(|w| w != worker_id) {
        host.drop_job(); // its rows were given to others
    }
    host.registered_as(worker_id);
    if let Ok(mut c) = cache.lock() {
        c.forget_inputs();
    }
    let beat = Duration::from_millis(reply.heartbeat_ms.clamp(100, 60_000));
    let (lost_tx, mut lost) = tokio::sync::watch::channel(false);
    let heart = {
        let mut client = client.clone();
        let traffic = traffic.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(beat).await;
                let (sent, received) = traffic.totals();
                let request = v1::HeartbeatRequest { worker_id, sent_bytes: sent, received_bytes: received };
                traffic.sent(request.encoded_len());
                match client.heartbeat(request).await {
                    Ok(r) if !r.get_ref().known => {
                        let _ = lost_tx.send(true);
                        return;
                    }
                    Ok(r) => traffic.received(r.get_ref().encoded_len()),
                    Err(_) => {} // the poll loop notices a lost coordinator
                }
            }
        })
    };
    let result = tokio::select! {
        r = poll_loop(config, &mut client, cache, host, worker_id) => r,
        _ = lost.wait_for(|l| *l) => {
            host.drop_job();
            Err(Fault::Transient(anyhow!("the coordinator declared this worker lost (silent too long); registering again")))
        }
    };
    heart.abort();
    result
}

async fn poll_loop(
    config: &WorkerConfig,
    client: &mut Client,
    cache: &Arc<Mutex<Cache>>,
    host: &Arc<Host>,
    worker_id: u64,
) -> Result<(), Fault> {
    let traffic = host.traffic.clone();
    // A result uploads while the next task is polled for and computed; at most one upload is in
    // flight.
    let mut uploading: Option<tokio::task::JoinHandle<Result<(), Fault>>> = None;
    loop {
        let (sent_bytes, received_bytes) = traffic.totals();
        let request = v1::PollTaskRequest { worker_id, sent_bytes, received_bytes };
        traffic.sent(request.encoded_len());
        let poll =
            client.poll_task(request).await.map_err(|s| classify("lost the coordinator", s))?.into_inner();
        traffic.received(poll.encoded_len());
        if poll.done {
            return finish_upload(&mut uploading).await;
        }
        if poll.owned_rows {
            finish_upload(&mut uploading).await?;
            host.run(client, worker_id).await?;
            continue;
        }
        // The coordinator holds an idle poll up to a second, so polling again at once is fine.
        let Some(task) = poll.task else { continue };
        // Renew the lease a few times per lease period while the task runs.
        let mut renewer = {
            let mut client = client.clone();
            let period = Duration::from_millis((task.lease_ms / 3).max(100));
            let request = v1::RenewLeaseRequest {
                worker_id,
                task_id: task.task_id,
                attempt: task.attempt,
                release: false,
            };
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(period).await;
                    if !client.renew_lease(request).await.map(|r| r.into_inner().ok).unwrap_or(false) {
                        return;
                    }
                }
            })
        };
        // A task whose lease is lost (its level was stopped, or the lease went to another
        // worker) is dropped.
        let result = tokio::select! {
            r = run_task(client, cache, host, worker_id, &task, config.mem_limit) => r,
            _ = &mut renewer => Err(TaskError::Gone),
        };
        renewer.abort();
        let error = match result {
            Ok(output) => {
                finish_upload(&mut uploading).await?;
                uploading = Some(tokio::spawn(upload(
                    client.clone(),
                    task.task_id,
                    task.attempt,
                    output,
                    traffic.clone(),
                )));
                continue;
            }
            Err(e) => e,
        };
        // A task this worker cannot finish is given back, so that it is handed out again now
        // rather than when its lease ends (nothing happens if the lease is gone already).
        let release =
            v1::RenewLeaseRequest { worker_id, task_id: task.task_id, attempt: task.attempt, release: true };
        traffic.sent(release.encoded_len());
        if let Ok(reply) = client.renew_lease(release).await {
            traffic.received(reply.get_ref().encoded_len());
        }
        match error {
            TaskError::Gone => continue,
            TaskError::Rpc(s) => return Err(classify("a task's input download failed", s)),
            TaskError::Other(e) => return Err(Fault::Fatal(e)),
        }
    }
}

/// A leased task, by its job's kind (a row search leases none).
async fn run_task(
    client: &mut Client,
    cache: &Arc<Mutex<Cache>>,
    host: &Arc<Host>,
    worker_id: u64,
    task: &v1::Task,
    mem_limit: u64,
) -> Result<Vec<u8>, TaskError> {
    match task.job_spec.parse::<JobSpec>().map_err(anyhow::Error::from)? {
        JobSpec::Product(spec) => run_product_task(cache, task, spec).await,
        JobSpec::H48Table(h) => run_h48_task(client, cache, host, worker_id, task, h).await,
        JobSpec::Cosets(spec) if shared::coset::STATE_BYTES > mem_limit => Err(TaskError::Other(anyhow!(
            "a coset of {spec} holds {} of bit arrays, more than this worker's --mem-limit {}",
            shared::units::gib(shared::coset::STATE_BYTES),
            shared::units::gib(mem_limit)
        ))),
        JobSpec::Cosets(spec) => run_coset_task(client, cache, &host.traffic, task, spec).await,
        spec @ JobSpec::Rows(_) => Err(TaskError::Other(anyhow!("a leased task of row search {spec}"))),
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
async fn upload(
    mut client: Client,
    task_id: u64,
    attempt: u32,
    shard: Vec<u8>,
    traffic: Arc<Traffic>,
) -> Result<(), Fault> {
    let chunks: Vec<v1::ShardChunk> = shard
        .chunks(MAX_CHUNK_BYTES)
        .enumerate()
        .map(|(i, data)| v1::ShardChunk {
            task_id,
            attempt,
            offset: (i * MAX_CHUNK_BYTES) as u64,
            data: data.to_vec(),
            last: (i + 1) * MAX_CHUNK_BYTES >= shard.len(),
        })
        .collect();
    chunks.iter().for_each(|c| traffic.sent(c.encoded_len()));
    match client.upload_shard(tokio_stream::iter(chunks)).await {
        Ok(r) => {
            traffic.received(r.get_ref().encoded_len());
            Ok(())
        }
        // Damaged on the way: the lease will expire and the task be handed out again.
        Err(s) if s.code() == tonic::Code::DataLoss => {
            tracing::warn!("task {task_id} rejected: {}", s.message());
            Ok(())
        }
        Err(s) => Err(classify("upload failed", s)),
    }
}

/// Physical memory of this machine (Linux `MemTotal`; 0 where unknown), told to the coordinator.
pub fn total_memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib * 1024)
}
