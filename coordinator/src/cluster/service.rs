//! The gRPC `Coordinator` service over [`Shared`]: registration with a protocol-version check,
//! task polling (also the heartbeat), input downloads and shard uploads in chunks. Copying and
//! merging bit arrays runs on blocking threads, never on tokio's.

use super::scheduler::{Poll, Shared, TaskKind};
use cubefarm_proto::auth::{check_request, Token};
use cubefarm_proto::v1::{self, coordinator_server::CoordinatorServer};
use cubefarm_proto::{MAX_CHUNK_BYTES, PROTOCOL_VERSION};
use shared::bfs::Direction;
use shared::shard::{self, ShardError, ShardKey};
use shared::space::RowCounts;
use std::sync::Arc;
use tokio_stream::StreamExt;
use tonic::{Request, Response, Status, Streaming};

pub struct Service {
    pub shared: Arc<Shared>,
}

fn blocking_error(e: tokio::task::JoinError) -> Status {
    Status::internal(format!("coordinator task failed: {e}"))
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
            }));
        }
        let id = self.shared.register(&r.worker_name, r.threads, r.memory_bytes);
        Ok(Response::new(v1::RegisterReply { worker_id: id, accepted: true, message: String::new() }))
    }

    async fn poll_task(
        &self,
        request: Request<v1::PollTaskRequest>,
    ) -> Result<Response<v1::PollTaskReply>, Status> {
        let worker = request.into_inner().worker_id;
        let shared = self.shared.clone();
        let answer =
            tokio::task::spawn_blocking(move || shared.poll_wait(worker, std::time::Duration::from_secs(1)))
                .await
                .map_err(blocking_error)?;
        match answer {
            Poll::Done => Ok(Response::new(v1::PollTaskReply { task: None, done: true })),
            Poll::Wait => Ok(Response::new(v1::PollTaskReply { task: None, done: false })),
            Poll::Task(lease) => Ok(Response::new(v1::PollTaskReply {
                task: Some(v1::Task {
                    job_id: lease.job,
                    task_id: lease.task,
                    attempt: lease.attempt,
                    level: lease.depth,
                    row_begin: lease.rows.start as u64,
                    row_end: lease.rows.end as u64,
                    lease_ms: self.shared.lease_time.as_millis() as u64,
                    job_spec: lease.job_spec,
                    kind: match lease.kind {
                        TaskKind::Rows(Direction::Backward) => v1::TaskKind::RowsBackward as i32,
                        TaskKind::Rows(_) => v1::TaskKind::RowsForward as i32,
                        TaskKind::Unvisited => v1::TaskKind::RowsUnvisited as i32,
                        TaskKind::Cosets => v1::TaskKind::Product as i32,
                        TaskKind::H48 => v1::TaskKind::H48 as i32,
                    },
                    before_input: lease.before_input,
                    found_inputs: lease.found_inputs,
                    positions_only: lease.positions_only,
                    rows_per_part: lease.rows_per_part,
                }),
                done: false,
            })),
        }
    }

    async fn renew_lease(
        &self,
        request: Request<v1::RenewLeaseRequest>,
    ) -> Result<Response<v1::RenewLeaseReply>, Status> {
        let r = request.into_inner();
        let ok = self.shared.renew(r.worker_id, r.task_id, r.attempt);
        Ok(Response::new(v1::RenewLeaseReply { ok, lease_ms: self.shared.lease_time.as_millis() as u64 }))
    }

    /// Receives a task's result. Every size the peer states is bounded by what the task can
    /// produce: a stream longer than the largest shard of the task's largest result, or a shard
    /// whose header claims more, is refused with `INVALID_ARGUMENT` before it is buffered or
    /// allocated, and the task is handed out again.
    async fn upload_shard(
        &self,
        request: Request<Streaming<v1::ShardChunk>>,
    ) -> Result<Response<v1::UploadShardReply>, Status> {
        let mut stream = request.into_inner();
        let Some(first) = stream.next().await else {
            return Err(Status::invalid_argument("an empty upload"));
        };
        let mut chunk = first?;
        let (task, attempt) = (chunk.task_id, chunk.attempt);
        let stale = |received: u64| {
            Ok(Response::new(v1::UploadShardReply {
                accepted: false,
                message: "stale or duplicate result ignored".into(),
                bytes_received: received,
            }))
        };
        let Some(limit) = self.shared.upload_limit(task) else { return stale(chunk.data.len() as u64) };
        let refuse = |why: String| {
            self.shared.return_lease(task, attempt);
            tracing::warn!("refused the result of task {task} (attempt {attempt}): {why}");
            Err(Status::invalid_argument(why))
        };
        let max_bytes = shard::max_shard_bytes(limit.max_words);
        let mut bytes = self.shared.buffers.bytes();
        let mut counts = Vec::new();
        loop {
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
                counts = chunk.counts;
                break;
            }
            match stream.next().await {
                Some(next) => chunk = next?,
                None => break,
            }
        }
        let shared = self.shared.clone();
        let received = bytes.len() as u64;
        let expected = ShardKey { job: limit.job, task, attempt, level: limit.depth };
        let counts = match (limit.rows, &counts[..]) {
            (false, _) => None,
            (true, &[entries, positions, classes, self_inverse]) => {
                Some(RowCounts { entries, positions, classes, self_inverse })
            }
            (true, _) => return refuse(format!("a row result with {} counts, not 4", counts.len())),
        };
        let decoded = tokio::task::spawn_blocking(move || match counts {
            // A row result is only kept and forwarded: checked whole, not decoded.
            Some(counts) => shard::check_for(&bytes, expected, limit.max_words)
                .map(|()| shared.complete_rows(limit.depth, task, counts, bytes)),
            None => shard::decode_words_for(&bytes, expected, limit.max_words)
                .map(|words| shared.complete(limit.depth, task, words, bytes)),
        })
        .await
        .map_err(blocking_error)?;
        let result = match decoded {
            Err(e @ ShardError::TooLarge { .. }) => return refuse(e.to_string()),
            // A result of an earlier level for a task number the running level also has.
            Err(ShardError::WrongTask { found, .. }) if found.level != limit.depth => return stale(received),
            Err(e) => Err(e.to_string()),
            Ok(merged) => merged,
        };
        match result {
            Ok(merged) => Ok(Response::new(v1::UploadShardReply {
                accepted: merged,
                message: if merged { String::new() } else { "stale or duplicate result ignored".into() },
                bytes_received: received,
            })),
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
        // Inputs are encoded before their level is published (or are results already
        // received): this only looks them up.
        let parts = self.shared.input(&r.name).ok_or_else(|| {
            Status::not_found(format!("input {:?} is not available (level finished?)", r.name))
        })?;
        let total: u64 = parts.iter().map(|p| p.size()).sum();
        let from = r.offset.min(total);
        self.shared.count_sent(total - from);
        // The parts one after another, in chunks read (from disk or memory) on a blocking thread
        // as the stream is consumed: a few chunks are in flight, never a whole input.
        let (chunks, stream) = tokio::sync::mpsc::channel(4);
        tokio::task::spawn_blocking(move || {
            let mut start = 0u64;
            for part in parts {
                let len = part.size();
                let mut at = from.saturating_sub(start).min(len);
                while at < len {
                    let n = (len - at).min(MAX_CHUNK_BYTES as u64) as usize;
                    let offset = start + at;
                    let chunk = part
                        .read(at, n)
                        .map(|data| v1::InputChunk {
                            offset,
                            total_bytes: total,
                            last: offset + n as u64 == total,
                            data,
                        })
                        .map_err(|e| Status::internal(format!("reading input {:?}: {e}", r.name)));
                    let failed = chunk.is_err();
                    if chunks.blocking_send(chunk).is_err() || failed {
                        return;
                    }
                    at += n as u64;
                }
                start += len;
            }
        });
        Ok(Response::new(Box::pin(tokio_stream::wrappers::ReceiverStream::new(stream))))
    }

    async fn job_status(
        &self,
        _: Request<v1::JobStatusRequest>,
    ) -> Result<Response<v1::JobStatusReply>, Status> {
        let (level, tasks_total, tasks_done, tasks_running, workers, done) = self.shared.status();
        Ok(Response::new(v1::JobStatusReply {
            job_id: 1,
            level,
            tasks_total,
            tasks_done,
            tasks_running,
            workers,
            done,
            message: String::new(),
        }))
    }
}

/// What a plain-HTTP client of a TLS listener is told, instead of a dropped connection.
pub const NEEDS_TLS: &str =
    "this coordinator serves TLS: connect with an https:// URL and --ca FILE (the PEM certificate to trust)";

/// Serves the coordinator on `listener` (over TLS when `tls` is given) until `shutdown` resolves.
pub(super) async fn run(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    token: Option<Token>,
    tls: Option<tonic::transport::ServerTlsConfig>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), tonic::transport::Error> {
    let service = CoordinatorServer::with_interceptor(Service { shared: shared.clone() }, move |req| {
        check_request(token.as_ref(), req)
    });
    let Some(tls) = tls else {
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
    let refuser = CoordinatorServer::with_interceptor(Service { shared }, |_| {
        Err(Status::failed_precondition(NEEDS_TLS))
    });
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
    let token = cubefarm_proto::auth::load_token(token_file).map_err(anyhow::Error::msg)?;
    let endpoint = cubefarm_proto::tls::endpoint(url, ca).map_err(anyhow::Error::msg)?;
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
            "depth {}: {} of {} tasks merged, {} leased; {} workers connected",
            reply.level, reply.tasks_done, reply.tasks_total, reply.tasks_running, reply.workers
        );
    }
    Ok(())
}
