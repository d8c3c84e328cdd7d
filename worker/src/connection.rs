//! The worker's links: to the coordinator (connect with backoff, the token on every request,
//! what a failed call means) and the bytes that cross every link, counted for the job's traffic
//! report.

use anyhow::anyhow;
use cubefarm_proto::auth::{add_token, Token};
use cubefarm_proto::v1::coordinator_client::CoordinatorClient;
use cubefarm_proto::MAX_CHUNK_BYTES;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

/// Adds the token to every request.
#[derive(Clone)]
pub struct TokenInterceptor(pub Option<Token>);

impl tonic::service::Interceptor for TokenInterceptor {
    fn call(&mut self, request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        add_token(self.0.as_ref(), request)
    }
}

pub type Client = CoordinatorClient<InterceptedService<Channel, TokenInterceptor>>;

/// Why a session with the coordinator ended.
pub enum Fault {
    /// Refused (wrong token, other protocol version): retrying cannot help.
    Fatal(anyhow::Error),
    /// The connection or the coordinator went away: reconnect.
    Transient(anyhow::Error),
}

/// What a failed call means: a refusal is final, anything else is worth a reconnection.
pub fn classify(context: &str, status: tonic::Status) -> Fault {
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

/// Connects to `url`, retrying with backoff while it is unreachable (until `deadline`); a TLS
/// failure is fatal at once (a certificate does not become trusted by waiting).
pub async fn connect(
    url: &str,
    endpoint: &Endpoint,
    token: Option<&Token>,
    deadline: Instant,
) -> Result<Client, Fault> {
    let channel = connect_channel(url, endpoint, deadline).await?;
    Ok(CoordinatorClient::with_interceptor(channel, TokenInterceptor(token.cloned()))
        .max_decoding_message_size(4 * MAX_CHUNK_BYTES)
        .max_encoding_message_size(4 * MAX_CHUNK_BYTES))
}

/// A channel to `url` (see [`connect`]).
pub async fn connect_channel(url: &str, endpoint: &Endpoint, deadline: Instant) -> Result<Channel, Fault> {
    let mut delay = Duration::from_millis(100);
    loop {
        match endpoint.connect().await {
            Ok(c) => return Ok(c),
            Err(e) if cubefarm_proto::tls::is_tls_error(&e) => {
                return Err(Fault::Fatal(tls_failure(url, &cubefarm_proto::tls::describe(&e))));
            }
            Err(e) if Instant::now() + delay < deadline => {
                let e = cubefarm_proto::tls::describe(&e);
                tracing::warn!("cannot reach {url} ({e}); retrying in {:.1} s", delay.as_secs_f64());
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(5));
            }
            Err(e) => {
                return Err(Fault::Transient(anyhow!(
                    "cannot reach {url}: {}",
                    cubefarm_proto::tls::describe(&e)
                )))
            }
        }
    }
}

fn tls_failure(url: &str, detail: &str) -> anyhow::Error {
    anyhow!(
        "TLS with {url} failed: {detail} (is it serving TLS, and is --ca its certificate or the CA that \
         signed it?)"
    )
}

/// Bytes this worker sent and received, as protobuf messages, on every link.
#[derive(Debug, Default)]
pub struct Traffic {
    sent: AtomicU64,
    received: AtomicU64,
}

impl Traffic {
    pub fn sent(&self, bytes: usize) {
        self.sent.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub fn received(&self, bytes: usize) {
        self.received.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// (sent, received) so far.
    pub fn totals(&self) -> (u64, u64) {
        (self.sent.load(Ordering::Relaxed), self.received.load(Ordering::Relaxed))
    }
}

/// Why a job-wide input did not arrive.
#[derive(Debug)]
pub enum InputError {
    /// The coordinator holds no such input (for this job).
    Missing,
    Rpc(tonic::Status),
    /// It arrived, but out of order or failing its shard's checks.
    Damaged(String),
}

/// Downloads the job-wide input `name` (`<input>/<level>`, an encoded shard keyed by the job and
/// the level) of job `job` from the coordinator, checked, as bytes.
pub async fn download_input(
    client: &mut Client,
    traffic: &Traffic,
    job: u64,
    name: &str,
) -> Result<Vec<u8>, InputError> {
    let bytes = download_packed(client, traffic, job, name).await?;
    let level: u32 = name.rsplit_once('/').and_then(|(_, l)| l.parse().ok()).unwrap_or(0);
    let key = shared::shard::ShardKey { job, task: shared::shard::LEVEL_INPUT, attempt: 0, level };
    tokio::task::spawn_blocking(move || shared::shard::decode_for(&bytes, key))
        .await
        .map_err(|e| InputError::Damaged(format!("decoding input {name}: {e}")))?
        .map_err(|e| InputError::Damaged(format!("input {name}: {e}")))
}

/// Downloads input `name` of job `job` as the coordinator holds it: a shard, not yet checked
/// (the job's index, which its reader checks: `shared::index_file`).
pub async fn download_packed(
    client: &mut Client,
    traffic: &Traffic,
    job: u64,
    name: &str,
) -> Result<Vec<u8>, InputError> {
    use prost::Message;
    let request = cubefarm_proto::v1::DownloadInputRequest {
        worker_id: 0,
        job_id: job,
        name: name.to_string(),
        offset: 0,
    };
    traffic.sent(request.encoded_len());
    let rpc = |s: tonic::Status| {
        if s.code() == tonic::Code::NotFound {
            InputError::Missing
        } else {
            InputError::Rpc(s)
        }
    };
    let mut stream = client.download_input(request).await.map_err(rpc)?.into_inner();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.message().await.map_err(rpc)? {
        traffic.received(chunk.encoded_len());
        if chunk.offset != bytes.len() as u64 || chunk.total_bytes > 1 << 40 {
            return Err(InputError::Damaged(format!("input {name} arrived out of order")));
        }
        if bytes.is_empty() && bytes.try_reserve_exact(chunk.total_bytes as usize).is_err() {
            return Err(InputError::Damaged(format!(
                "input {name} of {} bytes does not fit",
                chunk.total_bytes
            )));
        }
        bytes.extend_from_slice(&chunk.data);
    }
    Ok(bytes)
}
