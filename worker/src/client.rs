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
use std::time::{Duration, Instant};
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
    /// Where the worker keeps its id and its parts' committed levels (else a temporary directory).
    pub state_dir: Option<PathBuf>,
    /// How long to keep trying an unreachable coordinator, in all.
    pub patience: Duration,
    /// How a row search's messages to other workers are packed.
    pub compress: crate::rows::link::Compress,
    /// Where coset tasks keep phase 1's distance table (read, or made and written once).
    pub phase1_table: Option<PathBuf>,
    /// Where row searches keep their packed index (read, or written once received).
    pub index_dir: Option<PathBuf>,
}

impl WorkerConfig {
    /// A worker of this machine for the coordinator at `coordinator` (in-process workers,
    /// tests): listening on loopback, no TLS, the defaults of the command line otherwise, and
    /// 90 % of the memory this process may use.
    pub fn loopback(coordinator: String, token: Option<Token>, name: String) -> Self {
        WorkerConfig {
            coordinator,
            ca: None,
            token,
            name,
            protocol_version: cubefarm_proto::PROTOCOL_VERSION,
            listen: "127.0.0.1:0".parse().expect("a socket address"),
            advertise: None,
            tls: None,
            mem_limit: shared::units::memory_limit_bytes() / 10 * 9,
            state_dir: None,
            patience: Duration::from_secs(60),
            compress: Default::default(),
            phase1_table: None,
            index_dir: None,
        }
    }
}

/// Runs until the coordinator says the job is done (Ok), reconnecting with backoff when the
/// coordinator goes away (for example while it restarts and resumes), and failing on refusal
/// or once it has been unreachable for longer than `config.patience`.
pub async fn run_worker(config: WorkerConfig) -> Result<()> {
    // A bad address or CA file cannot get better by retrying: fail at once.
    let endpoint =
        cubefarm_proto::tls::endpoint(&config.coordinator, config.ca.as_deref())?.tcp_nodelay(true);
    let traffic = Arc::new(Traffic::default());
    let host = Arc::new(
        Host::new(
            traffic.clone(),
            PeerPool::new(config.token.clone(), config.ca.clone(), config.compress),
            config.state_dir.clone(),
            config.mem_limit,
        )
        .with_index_dir(config.index_dir.clone()),
    );
    let (peer_address, server) = serve_peers(&config, host.clone()).await?;
    let cache = Arc::new(Mutex::new(Cache::new(config.phase1_table.clone())));
    // One deadline for the whole wait: the coordinator must answer within `patience` of the
    // start, or of the last session that reached it.
    let mut since = Instant::now();
    let mut failures = 0u32;
    let result = loop {
        let mut reached = false;
        match session(&config, &endpoint, &cache, &host, &peer_address, since + config.patience, &mut reached)
            .await
        {
            Ok(()) => break Ok(()),
            Err(Fault::Fatal(e)) => break Err(e),
            Err(Fault::Transient(e)) => {
                // The job's rows stay: a coordinator that restarts from its journal takes this
                // worker back with them.
                if reached {
                    (since, failures) = (Instant::now(), 0);
                }
                if since.elapsed() >= config.patience {
                    break Err(e.context(format!(
                        "the coordinator has not answered for {} s (--connect-timeout)",
                        config.patience.as_secs()
                    )));
                }
                failures += 1;
                let delay = Duration::from_millis(250 << failures.min(4));
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
    let addr =
        target.to_socket_addrs().map_err(|e| anyhow!("cannot resolve {authority}: {e}"))?.next().ok_or_else(
            || anyhow!("cannot resolve {authority} to find this worker's address; give --advertise"),
        )?;
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
    deadline: Instant,
    reached: &mut bool,
) -> Result<(), Fault> {
    let traffic = host.traffic.clone();
    let mut client = connect(&config.coordinator, endpoint, config.token.as_ref(), deadline).await?;
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
    *reached = true;
    let worker_id = reply.worker_id;
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

/// The loop of leased tasks, as a shell around its core (`shared::runtime::leases::LeaseWorker`):
/// polls, computations, renewals, releases and uploads run as tasks of their own and report
/// back; a poll that finds a row search runs it (`rows`) before polling again.
async fn poll_loop(
    config: &WorkerConfig,
    client: &mut Client,
    cache: &Arc<Mutex<Cache>>,
    host: &Arc<Host>,
    worker_id: u64,
) -> Result<(), Fault> {
    use shared::runtime::leases::{Lease, LeaseAction, LeaseEvent, LeaseWorker};
    /// What comes back to the loop.
    enum Back {
        Event(LeaseEvent),
        /// A poll handed out a task.
        Task(v1::Task),
        /// A poll found a row search.
        OwnedRows,
        Fault(Fault),
        /// A task's computation failed, for this reason.
        Failed(Lease, String),
    }
    const TICK: Duration = Duration::from_millis(100);
    let traffic = host.traffic.clone();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Back>();
    let mut core = LeaseWorker::new(TICK.as_millis() as u64);
    // The tasks handed out (by task id) and the computation running.
    let mut tasks: std::collections::HashMap<u64, v1::Task> = Default::default();
    // Why a task's attempt failed, until the lease is given back with the reason.
    let mut failures: std::collections::HashMap<(u64, u32), String> = Default::default();
    let mut computing: Option<tokio::task::JoinHandle<()>> = None;
    let mut tick = tokio::time::interval(TICK);
    loop {
        while let Some(action) = core.next_action() {
            match action {
                LeaseAction::Poll => {
                    let (mut client, tx, traffic) = (client.clone(), tx.clone(), traffic.clone());
                    tokio::spawn(async move {
                        let (sent_bytes, received_bytes) = traffic.totals();
                        let request = v1::PollTaskRequest { worker_id, sent_bytes, received_bytes };
                        traffic.sent(request.encoded_len());
                        let back = match client.poll_task(request).await {
                            Err(s) => Back::Fault(classify("lost the coordinator", s)),
                            Ok(r) => {
                                let poll = r.into_inner();
                                traffic.received(poll.encoded_len());
                                match (poll.done, poll.owned_rows, poll.task) {
                                    (true, _, _) => Back::Event(LeaseEvent::Over),
                                    (_, true, _) => Back::OwnedRows,
                                    (_, _, Some(task)) => Back::Task(task),
                                    _ => Back::Event(LeaseEvent::Nothing),
                                }
                            }
                        };
                        let _ = tx.send(back);
                    });
                }
                LeaseAction::Compute(lease) => {
                    let Some(task) = tasks.get(&lease.task).cloned() else { continue };
                    let (mut client, cache, host, tx) =
                        (client.clone(), cache.clone(), host.clone(), tx.clone());
                    let mem_limit = config.mem_limit;
                    computing = Some(tokio::spawn(async move {
                        let back =
                            match run_task(&mut client, &cache, &host, worker_id, &task, mem_limit).await {
                                Ok(result) => Back::Event(LeaseEvent::Computed { lease, result }),
                                Err(TaskError::Gone) => Back::Event(LeaseEvent::Failed { lease }),
                                Err(TaskError::Rpc(s)) => {
                                    Back::Fault(classify("a task's input download failed", s))
                                }
                                // Reported with the lease given back: the coordinator hands it
                                // out again, or ends the job if it failed before.
                                Err(TaskError::Other(e)) => Back::Failed(lease, format!("{e:#}")),
                            };
                        let _ = tx.send(back);
                    }));
                }
                LeaseAction::Renew(lease) => {
                    let (mut client, tx) = (client.clone(), tx.clone());
                    let request = v1::RenewLeaseRequest {
                        worker_id,
                        task_id: lease.task,
                        attempt: lease.attempt,
                        release: false,
                        failure: String::new(),
                    };
                    tokio::spawn(async move {
                        let ok =
                            client.renew_lease(request).await.map(|r| r.into_inner().ok).unwrap_or(false);
                        let _ = tx.send(Back::Event(LeaseEvent::Renewed { lease, ok }));
                    });
                }
                LeaseAction::Release(lease) => {
                    // Given back, so that it is handed out again now rather than when its lease
                    // ends (nothing happens if the lease is gone already).
                    let mut client = client.clone();
                    let request = v1::RenewLeaseRequest {
                        worker_id,
                        task_id: lease.task,
                        attempt: lease.attempt,
                        release: true,
                        failure: failures.remove(&(lease.task, lease.attempt)).unwrap_or_default(),
                    };
                    traffic.sent(request.encoded_len());
                    tokio::spawn(async move {
                        let _ = client.renew_lease(request).await;
                    });
                }
                LeaseAction::Abandon(_) => {
                    if let Some(c) = computing.take() {
                        c.abort();
                    }
                }
                LeaseAction::Upload(lease, shard) => {
                    let (client, tx, traffic) = (client.clone(), tx.clone(), traffic.clone());
                    tokio::spawn(async move {
                        let back = match upload(client, lease.task, lease.attempt, shard, traffic).await {
                            Ok(()) => Back::Event(LeaseEvent::Uploaded { lease }),
                            Err(f) => Back::Fault(f),
                        };
                        let _ = tx.send(back);
                    });
                }
                LeaseAction::Finish => {}
            }
        }
        if core.is_over() {
            return Ok(());
        }
        let back = tokio::select! {
            back = rx.recv() => back.expect("the loop holds a sender"),
            _ = tick.tick() => Back::Event(LeaseEvent::Tick),
        };
        match back {
            Back::Task(task) => {
                // The task's whole description stays here; the core knows its lease.
                let lease = Lease {
                    level: task.level,
                    task: task.task_id,
                    attempt: task.attempt,
                    rows: task.row_begin as u32..task.row_end as u32,
                    lease_ms: task.lease_ms,
                };
                tasks.insert(task.task_id, task);
                core.handle(LeaseEvent::Task(lease));
            }
            Back::Event(event) => core.handle(event),
            Back::Failed(lease, why) => {
                tracing::warn!("task {} (attempt {}) failed: {why}", lease.task, lease.attempt);
                failures.insert((lease.task, lease.attempt), why);
                core.handle(LeaseEvent::Failed { lease });
            }
            Back::OwnedRows => {
                host.run(client, worker_id).await?;
                core.handle(LeaseEvent::Nothing);
            }
            Back::Fault(f) => return Err(f),
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
    shared::units::proc_kib_field("/proc/meminfo", "MemTotal:").unwrap_or(0)
}
