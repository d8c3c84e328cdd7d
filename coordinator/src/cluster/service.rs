//! The gRPC `Coordinator` service over [`Hub`]: registration with a protocol-version check,
//! heartbeats, task polling and shard uploads of leased tasks, job-wide input downloads, and a
//! row search's `RowsSync` and level uploads. Every message's bytes are counted against the
//! worker's link. Decoding runs on blocking threads, never on tokio's.

use super::hub::{Hub, Poll, SyncAnswer};
use cubefarm_proto::auth::{check_request, Token};
use cubefarm_proto::v1::{self, coordinator_server::CoordinatorServer};
use cubefarm_proto::{MAX_CHUNK_BYTES, PROTOCOL_VERSION};
use prost::Message;
use shared::shard::{self, ShardError, ShardKey};
use std::sync::Arc;
use std::time::Duration;
use tokio_stream::StreamExt;
use tonic::{Request, Response, Status, Streaming};

pub struct Service {
    pub hub: Arc<Hub>,
}

/// TLS material for the workers' listener, loaded and checked when the request is validated.
#[derive(Clone)]
pub struct Tls(tonic::transport::ServerTlsConfig);

impl Tls {
    pub fn load(cert: &std::path::Path, key: &std::path::Path) -> anyhow::Result<Tls> {
        Ok(Tls(cubefarm_proto::tls::server_config(cert, key)?))
    }
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tls")
    }
}

fn blocking_error(e: tokio::task::JoinError) -> Status {
    Status::internal(format!("coordinator task failed: {e}"))
}

/// How long a poll waits for something new before answering "nothing yet".
const LONG_POLL: Duration = Duration::from_secs(1);

impl Service {
    /// Counts a reply to `worker` and wraps it.
    fn reply<T: Message>(&self, worker: u64, received: usize, reply: T) -> Result<Response<T>, Status> {
        self.hub.count(worker, reply.encoded_len(), received);
        Ok(Response::new(reply))
    }
}

#[tonic::async_trait]
impl v1::coordinator_server::Coordinator for Service {
    async fn register(
        &self,
        request: Request<v1::RegisterRequest>,
    ) -> Result<Response<v1::RegisterReply>, Status> {
        let r = request.into_inner();
        if r.protocol_version != PROTOCOL_VERSION {
            tracing::warn!(
                "refused worker {:?}: protocol version {} (this coordinator speaks {PROTOCOL_VERSION})",
                r.worker_name,
                r.protocol_version
            );
            return Ok(Response::new(v1::RegisterReply {
                worker_id: 0,
                accepted: false,
                message: format!(
                    "protocol version {} is not supported: this coordinator speaks version {PROTOCOL_VERSION}",
                    r.protocol_version
                ),
                heartbeat_ms: 0,
            }));
        }
        let id = self.hub.register(
            &r.worker_name,
            r.threads,
            (r.memory_bytes, r.mem_limit_bytes),
            &r.peer_address,
            r.previous_worker_id,
        );
        let heartbeat_ms = self.hub.heartbeat.as_millis() as u64;
        self.reply(
            id,
            r.encoded_len(),
            v1::RegisterReply { worker_id: id, accepted: true, message: String::new(), heartbeat_ms },
        )
    }

    async fn heartbeat(
        &self,
        request: Request<v1::HeartbeatRequest>,
    ) -> Result<Response<v1::HeartbeatReply>, Status> {
        let r = request.into_inner();
        let known = self.hub.heartbeat(r.worker_id, r.sent_bytes, r.received_bytes);
        self.reply(r.worker_id, r.encoded_len(), v1::HeartbeatReply { known })
    }

    async fn poll_task(
        &self,
        request: Request<v1::PollTaskRequest>,
    ) -> Result<Response<v1::PollTaskReply>, Status> {
        let r = request.into_inner();
        let worker = r.worker_id;
        self.hub.heartbeat(worker, r.sent_bytes, r.received_bytes);
        let hub = self.hub.clone();
        let answer = tokio::task::spawn_blocking(move || hub.poll_wait(worker, LONG_POLL))
            .await
            .map_err(blocking_error)?;
        let reply = match answer {
            Poll::Unknown => {
                return Err(Status::not_found("this worker is not registered (or was declared lost)"))
            }
            Poll::Done => v1::PollTaskReply { done: true, ..Default::default() },
            Poll::Wait => v1::PollTaskReply::default(),
            Poll::OwnedRows => v1::PollTaskReply { owned_rows: true, ..Default::default() },
            Poll::Task(lease) => v1::PollTaskReply {
                task: Some(v1::Task {
                    job_id: lease.job,
                    task_id: lease.task,
                    attempt: lease.attempt,
                    level: lease.depth,
                    row_begin: lease.rows.start as u64,
                    row_end: lease.rows.end as u64,
                    lease_ms: self.hub.lease_time.as_millis() as u64,
                    job_spec: lease.job_spec,
                    homes: lease.homes,
                }),
                ..Default::default()
            },
        };
        self.reply(worker, r.encoded_len(), reply)
    }

    async fn renew_lease(
        &self,
        request: Request<v1::RenewLeaseRequest>,
    ) -> Result<Response<v1::RenewLeaseReply>, Status> {
        let r = request.into_inner();
        let ok = if r.release && !r.failure.is_empty() {
            self.hub.fail(r.worker_id, r.task_id, r.attempt, &r.failure)
        } else if r.release {
            self.hub.release(r.worker_id, r.task_id, r.attempt)
        } else {
            self.hub.renew(r.worker_id, r.task_id, r.attempt)
        };
        let reply = v1::RenewLeaseReply { ok, lease_ms: self.hub.lease_time.as_millis() as u64 };
        self.reply(r.worker_id, r.encoded_len(), reply)
    }

    /// Receives a task's result. Every size the peer states is bounded by what the task can
    /// produce: a stream longer than the largest shard of the task's largest result, or a shard
    /// whose header claims more, is refused with `INVALID_ARGUMENT` before it is buffered or
    /// allocated, and the task is handed out again.
    async fn upload_shard(
        &self,
        request: Request<Streaming<v1::ShardChunk>>,
    ) -> Result<Response<v1::UploadShardReply>, Status> {
        let worker = 0;
        let mut stream = request.into_inner();
        let Some(first) = stream.next().await else {
            return Err(Status::invalid_argument("an empty upload"));
        };
        let mut chunk = first?;
        let (task, attempt) = (chunk.task_id, chunk.attempt);
        let mut received = 0usize;
        let stale = |received: u64| v1::UploadShardReply {
            accepted: false,
            message: "stale or duplicate result ignored".into(),
            bytes_received: received,
        };
        let Some(limit) = self.hub.upload_limit(task) else {
            return self.reply(worker, chunk.encoded_len(), stale(chunk.data.len() as u64));
        };
        let refuse = |why: String| {
            self.hub.return_lease(task, attempt);
            tracing::warn!("refused the result of task {task} (attempt {attempt}): {why}");
            Err(Status::invalid_argument(why))
        };
        let max_bytes = shard::max_shard_bytes(limit.max_words);
        let mut bytes = Vec::new();
        loop {
            received += chunk.encoded_len();
            if chunk.offset != bytes.len() as u64 {
                return Err(Status::invalid_argument("shard chunks out of order"));
            }
            if bytes.len() as u64 + chunk.data.len() as u64 > max_bytes {
                return refuse(format!(
                    "an upload of more than {max_bytes} bytes, the most the task's result can take"
                ));
            }
            bytes.extend_from_slice(&chunk.data);
            if chunk.last {
                break;
            }
            match stream.next().await {
                Some(next) => chunk = next?,
                None => break,
            }
        }
        let hub = self.hub.clone();
        let size = bytes.len() as u64;
        let expected = ShardKey { job: limit.job, task, attempt, level: limit.depth };
        let decoded = tokio::task::spawn_blocking(move || {
            shard::decode_words_for(&bytes, expected, limit.max_words)
                .map(|words| hub.complete(limit.depth, task, words))
        })
        .await
        .map_err(blocking_error)?;
        let result = match decoded {
            Err(e @ ShardError::TooLarge { .. }) => return refuse(e.to_string()),
            // A result of an earlier level for a task number the running level also has.
            Err(ShardError::WrongTask { found, .. }) if found.level != limit.depth => {
                return self.reply(worker, received, stale(size))
            }
            Err(e) => Err(e.to_string()),
            Ok(merged) => merged.map_err(|e| e.to_string()),
        };
        match result {
            Ok(merged) => self.reply(
                worker,
                received,
                v1::UploadShardReply {
                    accepted: merged,
                    message: if merged { String::new() } else { "stale or duplicate result ignored".into() },
                    bytes_received: size,
                },
            ),
            Err(message) => {
                tracing::warn!("rejected shard of task {task}: {message}");
                Err(Status::data_loss(format!("shard rejected: {message}")))
            }
        }
    }

    type DownloadInputStream =
        std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Result<v1::InputChunk, Status>> + Send>>;

    async fn download_input(
        &self,
        request: Request<v1::DownloadInputRequest>,
    ) -> Result<Response<Self::DownloadInputStream>, Status> {
        let r = request.into_inner();
        let input = self.hub.input(&r.name).ok_or_else(|| {
            Status::not_found(format!("input {:?} is not available (level finished?)", r.name))
        })?;
        let total = input.len();
        let from = r.offset.min(total as u64) as usize;
        self.hub.count(r.worker_id, 0, r.encoded_len());
        // Chunks are copied out as the stream is read, not all at once: an input may be an
        // index of hundreds of MB that several workers download together.
        let hub = self.hub.clone();
        let chunks = (from..total).step_by(MAX_CHUNK_BYTES).map(move |offset| {
            let end = (offset + MAX_CHUNK_BYTES).min(total);
            let chunk = v1::InputChunk {
                offset: offset as u64,
                total_bytes: total as u64,
                last: end == total,
                data: input[offset..end].to_vec(),
            };
            hub.count(r.worker_id, chunk.encoded_len(), 0);
            Ok(chunk)
        });
        Ok(Response::new(Box::pin(tokio_stream::iter(chunks))))
    }

    async fn job_status(
        &self,
        _: Request<v1::JobStatusRequest>,
    ) -> Result<Response<v1::JobStatusReply>, Status> {
        let s = self.hub.status();
        Ok(Response::new(v1::JobStatusReply {
            job_id: self.hub.job(),
            level: s.depth,
            tasks_total: s.tasks,
            tasks_done: s.done,
            tasks_running: s.leased,
            workers: s.live_workers,
            done: s.finished,
            message: String::new(),
        }))
    }

    async fn rows_sync(
        &self,
        request: Request<v1::RowsSyncRequest>,
    ) -> Result<Response<v1::RowsSyncReply>, Status> {
        let r = request.into_inner();
        let received = r.encoded_len();
        let status = worker::rows::sync::status_of(&r).map_err(Status::invalid_argument)?;
        let hub = self.hub.clone();
        let (worker, job) = (r.worker_id, r.job_id);
        self.hub.heartbeat(worker, r.sent_bytes, r.received_bytes);
        let answer = tokio::task::spawn_blocking(move || hub.rows_sync(worker, job, status, LONG_POLL))
            .await
            .map_err(blocking_error)?;
        let reply = match answer {
            SyncAnswer::Unknown => {
                return Err(Status::not_found("this worker is not registered (or was declared lost)"))
            }
            SyncAnswer::Done => v1::RowsSyncReply { done: true, ..Default::default() },
            SyncAnswer::Wait => v1::RowsSyncReply { wait: true, ..Default::default() },
            SyncAnswer::Do(reply) => *reply,
        };
        self.reply(worker, received, reply)
    }

    async fn upload_level(
        &self,
        request: Request<Streaming<v1::PeerChunk>>,
    ) -> Result<Response<v1::DeliverReply>, Status> {
        let mut stream = request.into_inner();
        let mut messages = 0;
        let mut current: Option<(v1::PeerChunk, Vec<u8>)> = None;
        let mut from = 0;
        let mut received = 0usize;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk?;
            received += chunk.encoded_len();
            from = chunk.from;
            let max = self
                .hub
                .max_level_part_bytes()
                .ok_or_else(|| Status::failed_precondition("no table build runs"))?;
            let (head, bytes) = current.get_or_insert_with(|| {
                (v1::PeerChunk { data: Default::default(), ..chunk.clone() }, Vec::new())
            });
            if (head.part, head.level, head.epoch, head.from)
                != (chunk.part, chunk.level, chunk.epoch, chunk.from)
                || chunk.offset != bytes.len() as u64
            {
                return Err(Status::invalid_argument("message chunks out of order"));
            }
            if bytes.len() as u64 + chunk.data.len() as u64 > max {
                return Err(Status::invalid_argument("a part longer than the job's largest"));
            }
            bytes.extend_from_slice(&chunk.data);
            if chunk.last {
                let (head, bytes) = current.take().expect("a message");
                self.hub
                    .take_level_part(head.level, head.part, bytes)
                    .map_err(|e| Status::failed_precondition(e.to_string()))?;
                messages += 1;
            }
        }
        self.reply(from, received, v1::DeliverReply { messages })
    }
}

/// What a plain-HTTP client of a TLS listener is told, instead of a dropped connection.
pub const NEEDS_TLS: &str =
    "this coordinator serves TLS: connect with an https:// URL and --ca FILE (the PEM certificate to trust)";

/// Serves the coordinator on `listener` (over TLS when `tls` is given) until `shutdown` resolves.
pub(super) async fn run(
    listener: tokio::net::TcpListener,
    hub: Arc<Hub>,
    token: Option<Token>,
    tls: Option<Tls>,
    shutdown: super::Shutdown,
) -> Result<(), tonic::transport::Error> {
    let service = CoordinatorServer::with_interceptor(Service { hub: hub.clone() }, move |req| {
        check_request(token.as_ref(), req)
    });
    let Some(Tls(tls)) = tls else {
        // Small request/reply exchanges: without TCP_NODELAY, delayed ACKs add tens of
        // milliseconds to every task.
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener).map(|stream| {
            stream.inspect(|s| {
                let _ = s.set_nodelay(true);
            })
        });
        return tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming_shutdown(incoming, shutdown)
            .await;
    };
    // Connections that do not start with a TLS handshake go to a server that answers every
    // call with NEEDS_TLS, so a worker given http:// fails at once with a clear message.
    let (tls_in, tls_out) = tokio::sync::mpsc::channel(16);
    let (plain_in, plain_out) = tokio::sync::mpsc::channel(16);
    let sorter = tokio::spawn(sort_connections(listener, tls_in, plain_in));
    let refuser =
        CoordinatorServer::with_interceptor(Service { hub }, |_| Err(Status::failed_precondition(NEEDS_TLS)));
    let (refuser_stop, refuser_stopped) = tokio::sync::oneshot::channel::<()>();
    let refusing =
        tokio::spawn(tonic::transport::Server::builder().add_service(refuser).serve_with_incoming_shutdown(
            tokio_stream::wrappers::ReceiverStream::new(plain_out),
            async {
                refuser_stopped.await.ok();
            },
        ));
    let result = tonic::transport::Server::builder()
        .tls_config(tls)?
        .add_service(service)
        .serve_with_incoming_shutdown(tokio_stream::wrappers::ReceiverStream::new(tls_out), shutdown)
        .await;
    sorter.abort();
    let _ = refuser_stop.send(());
    let _ = refusing.await;
    result
}

/// Accepts connections and sends each to `tls` or `plain` by its first byte (a TLS connection
/// starts with a handshake record, 0x16). Connections silent for 10 s are dropped.
async fn sort_connections(
    listener: tokio::net::TcpListener,
    tls: tokio::sync::mpsc::Sender<std::io::Result<tokio::net::TcpStream>>,
    plain: tokio::sync::mpsc::Sender<std::io::Result<tokio::net::TcpStream>>,
) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // For example out of file descriptors: wait rather than spin.
                tracing::warn!("accepting a connection failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (tls, plain) = (tls.clone(), plain.clone());
        tokio::spawn(async move {
            let mut first = [0u8; 1];
            let peeked =
                tokio::time::timeout(std::time::Duration::from_secs(10), stream.peek(&mut first)).await;
            match peeked {
                Ok(Ok(1)) if first[0] == 0x16 => {
                    let _ = tls.send(Ok(stream)).await;
                }
                Ok(Ok(1)) => {
                    let _ = plain.send(Ok(stream)).await;
                }
                _ => {}
            }
        });
    }
}

/// `coordinator status`: asks a running coordinator for its job's progress and prints it.
pub fn print_status(
    url: &str,
    token_file: Option<&std::path::Path>,
    ca: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let token = cubefarm_proto::auth::load_token(token_file)?;
    let endpoint = cubefarm_proto::tls::endpoint(url, ca)?;
    let runtime = tokio::runtime::Runtime::new()?;
    let reply = runtime.block_on(async {
        let channel = endpoint
            .connect_timeout(std::time::Duration::from_secs(10))
            .connect()
            .await
            .map_err(|e| anyhow::anyhow!("cannot reach {url}: {}", cubefarm_proto::tls::describe(&e)))?;
        let mut client = v1::coordinator_client::CoordinatorClient::with_interceptor(channel, move |req| {
            cubefarm_proto::auth::add_token(token.as_ref(), req)
        });
        client.job_status(v1::JobStatusRequest { job_id: 1 }).await.map(|r| r.into_inner()).map_err(|s| {
            anyhow::anyhow!("status request failed: {}", cubefarm_proto::tls::describe_status(&s))
        })
    })?;
    if reply.done {
        println!("job finished; {} workers connected", reply.workers);
    } else if reply.tasks_total == 0 {
        println!("between levels; {} workers connected", reply.workers);
    } else {
        println!(
            "depth {}: {} of {} tasks done, {} at work; {} workers connected",
            reply.level, reply.tasks_done, reply.tasks_total, reply.tasks_running, reply.workers
        );
    }
    Ok(())
}
