//! The `Peer` service between workers, and the clients that reach it: a message is sent as
//! chunks in one `Deliver` call, which returns once the receiver's job has taken it (or refused
//! it as damaged); an H48 build's level rows are fetched with `FetchRows`.

use super::link::{Compress, Links};
use super::Host;
use crate::connection::{TokenInterceptor, Traffic};
use bytes::{Bytes, BytesMut};
use cubefarm_proto::v1::{self, peer_client::PeerClient, PeerKind};
use cubefarm_proto::MAX_CHUNK_BYTES;
use prost::Message;
use shared::runtime::rows::{Kind, Note};
use shared::shard;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_stream::StreamExt;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::{Request, Response, Status, Streaming};

/// What a message is about: everything of a `PeerChunk` but its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    pub job: u64,
    pub epoch: u64,
    pub level: u32,
    pub from: u64,
    pub part: u32,
    pub kind: PeerKind,
}

/// The protocol's kind of a row search's message.
fn peer_kind(kind: Kind) -> PeerKind {
    match kind {
        Kind::Images => PeerKind::Images,
        Kind::Open => PeerKind::Open,
        Kind::Hits => PeerKind::Hits,
        Kind::Fetch => PeerKind::Fetch,
        Kind::Levels => PeerKind::Levels,
    }
}

impl Meta {
    /// A row search's message of job `job`.
    pub fn of_note(job: u64, note: Note) -> Meta {
        Meta {
            job,
            epoch: note.epoch,
            level: note.depth,
            from: note.from,
            part: note.part,
            kind: peer_kind(note.kind),
        }
    }

    /// The row search's note of a message (`None`: not one of its kinds).
    pub fn note(&self) -> Option<Note> {
        let kind = match self.kind {
            PeerKind::Images => Kind::Images,
            PeerKind::Open => Kind::Open,
            PeerKind::Hits => Kind::Hits,
            PeerKind::Fetch => Kind::Fetch,
            PeerKind::Levels => Kind::Levels,
            PeerKind::Level | PeerKind::Rows | PeerKind::Marks => return None,
        };
        Some(Note { epoch: self.epoch, depth: self.level, part: self.part, from: self.from, kind })
    }

    /// What a chunk is about, or why it is none of a message's.
    pub fn of(chunk: &v1::PeerChunk) -> Result<Meta, Status> {
        let kind = PeerKind::try_from(chunk.kind)
            .map_err(|_| Status::invalid_argument(format!("unknown message kind {}", chunk.kind)))?;
        Ok(Meta {
            job: chunk.job_id,
            epoch: chunk.epoch,
            level: chunk.level,
            from: chunk.from,
            part: chunk.part,
            kind,
        })
    }

    /// The chunks of a message of `bytes`: slices of it, not copies.
    pub fn chunks(self, bytes: Bytes) -> Vec<v1::PeerChunk> {
        let n = bytes.len().div_ceil(MAX_CHUNK_BYTES).max(1);
        (0..n)
            .map(|i| {
                let at = i * MAX_CHUNK_BYTES;
                v1::PeerChunk {
                    job_id: self.job,
                    epoch: self.epoch,
                    level: self.level,
                    from: self.from,
                    part: self.part,
                    kind: self.kind as i32,
                    offset: at as u64,
                    data: bytes.slice(at..(at + MAX_CHUNK_BYTES).min(bytes.len())),
                    last: i + 1 == n,
                    total: bytes.len() as u64,
                }
            })
            .collect()
    }
}

/// Reads whole messages from a stream of chunks, one at a time, refusing one that is out of
/// order or longer than its job's largest message before buffering it.
pub struct MessageReader<'a> {
    stream: &'a mut Streaming<v1::PeerChunk>,
    traffic: &'a crate::connection::Traffic,
}

/// The most bytes a message of a job not (yet) known here may take.
const UNKNOWN_JOB_MAX_BYTES: u64 = 1 << 30;

impl<'a> MessageReader<'a> {
    pub fn new(stream: &'a mut Streaming<v1::PeerChunk>, traffic: &'a crate::connection::Traffic) -> Self {
        MessageReader { stream, traffic }
    }

    /// The next whole message, or `None` at the end of the stream; `max_bytes(job, kind)` bounds
    /// it. A message of one chunk is that chunk's bytes as they were received, uncopied.
    pub async fn next(
        &mut self,
        max_bytes: impl Fn(u64, PeerKind) -> Option<u64>,
    ) -> Result<Option<(Meta, Bytes)>, Status> {
        let mut current: Option<(Meta, Joined)> = None;
        while let Some(chunk) = self.stream.next().await {
            let chunk = chunk?;
            self.traffic.received(chunk.encoded_len());
            let meta = Meta::of(&chunk)?;
            let (held, bytes) = current.get_or_insert_with(|| (meta, Joined::default()));
            if *held != meta || chunk.offset != bytes.len() as u64 {
                return Err(Status::invalid_argument("message chunks out of order"));
            }
            let max = max_bytes(meta.job, meta.kind).unwrap_or(UNKNOWN_JOB_MAX_BYTES);
            let end = bytes.len() as u64 + chunk.data.len() as u64;
            if end.max(chunk.total) > max {
                return Err(Status::invalid_argument("a message longer than the job's largest"));
            }
            if chunk.total > 0 && (end > chunk.total || (chunk.last && end != chunk.total)) {
                return Err(Status::invalid_argument("a message's chunks do not make its length"));
            }
            bytes.push(chunk.data, chunk.total as usize);
            if chunk.last {
                return Ok(current.map(|(meta, bytes)| (meta, bytes.into_bytes())));
            }
        }
        match current {
            Some(_) => Err(Status::invalid_argument("a message cut short")),
            None => Ok(None),
        }
    }
}

/// A message's chunks as they come: the first kept as it is, later ones copied behind it.
#[derive(Default)]
pub enum Joined {
    #[default]
    Empty,
    One(Bytes),
    Many(BytesMut),
}

impl Joined {
    /// Bytes received so far.
    pub fn len(&self) -> usize {
        match self {
            Joined::Empty => 0,
            Joined::One(b) => b.len(),
            Joined::Many(b) => b.len(),
        }
    }

    /// Whether no byte came yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next chunk, behind those before it, of a message of `total` bytes (0: not known).
    /// Joined chunks go into one buffer made once for the whole message, advised for huge
    /// pages (grown by doubling from 4 MiB, a 40 MiB message took buffers of 4, 8, 16, 32 and
    /// 64 MiB, each fresh memory).
    pub fn push(&mut self, chunk: Bytes, total: usize) {
        *self = match std::mem::take(self) {
            Joined::Empty => Joined::One(chunk),
            Joined::One(first) => {
                let mut joined = BytesMut::with_capacity(total.max(2 * (first.len() + chunk.len())));
                let spare = joined.spare_capacity_mut();
                shared::huge::advise(spare.as_ptr().cast(), spare.len());
                joined.extend_from_slice(&first);
                joined.extend_from_slice(&chunk);
                Joined::Many(joined)
            }
            Joined::Many(mut joined) => {
                joined.extend_from_slice(&chunk);
                Joined::Many(joined)
            }
        }
    }

    /// The whole message.
    pub fn into_bytes(self) -> Bytes {
        match self {
            Joined::Empty => Bytes::new(),
            Joined::One(b) => b,
            Joined::Many(b) => b.freeze(),
        }
    }
}

pub struct PeerService {
    pub host: Arc<Host>,
}

#[tonic::async_trait]
impl v1::peer_server::Peer for PeerService {
    async fn deliver(
        &self,
        request: Request<Streaming<v1::PeerChunk>>,
    ) -> Result<Response<v1::DeliverReply>, Status> {
        let host = self.host.clone();
        let mut stream = request.into_inner();
        let mut reader = MessageReader::new(&mut stream, &host.traffic);
        let mut messages = 0;
        loop {
            // Every message is read as it comes: a stream left unread would hold the link's
            // flow-control window that the others need (how many messages come at once is
            // bounded by their senders' windows).
            let Some((meta, bytes)) = reader.next(|job, kind| host.max_message_bytes(job, kind)).await?
            else {
                break;
            };
            let note =
                meta.note().ok_or_else(|| Status::invalid_argument("not a message between workers"))?;
            let job = host.job_for(meta.job).await?;
            if !job.take(note, bytes).await {
                return Err(Status::data_loss("a damaged message"));
            }
            messages += 1;
        }
        let reply = v1::DeliverReply { messages };
        self.host.traffic.sent(reply.encoded_len());
        Ok(Response::new(reply))
    }

    type FetchRowsStream = ChunkStream;

    async fn fetch_rows(
        &self,
        request: Request<v1::FetchRowsRequest>,
    ) -> Result<Response<Self::FetchRowsStream>, Status> {
        let r = request.into_inner();
        self.host.traffic.received(r.encoded_len());
        let depth = u8::try_from(r.level).map_err(|_| Status::invalid_argument("no such level"))?;
        let rows = self.host.kept.own_rows(r.job_id, depth, &r.rows).ok_or_else(|| {
            Status::not_found(format!(
                "this worker keeps not all of the {} rows asked of level {depth}",
                r.rows.len()
            ))
        })?;
        let bytes = tokio::task::spawn_blocking(move || {
            let words = shared::wire::h48::encode_level_rows(rows.iter().map(|r| &**r));
            shard::encode_words(rows_key(r.job_id, depth), &words)
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?;
        let meta = Meta { job: r.job_id, epoch: 0, level: r.level, from: 0, part: 0, kind: PeerKind::Rows };
        Ok(Response::new(counted_stream(meta.chunks(bytes.into()), &self.host.traffic)))
    }

    type FetchMarksStream = ChunkStream;

    async fn fetch_marks(
        &self,
        request: Request<v1::FetchMarksRequest>,
    ) -> Result<Response<Self::FetchMarksStream>, Status> {
        let r = request.into_inner();
        self.host.traffic.received(r.encoded_len());
        let depth = u8::try_from(r.level).map_err(|_| Status::invalid_argument("no such level"))?;
        let h = u8::try_from(r.table)
            .ok()
            .filter(|h| (1..=11).contains(h))
            .ok_or_else(|| Status::invalid_argument(format!("no table h48h{}", r.table)))?;
        let row_bytes = 8 * shared::h48::H11Rows::table_row_words(h);
        if r.targets.len() != r.source_counts.len()
            || r.source_counts.iter().map(|&n| n as usize).sum::<usize>() != r.sources.len()
            || r.targets.len() * row_bytes > MAX_MARKS_BYTES
        {
            return Err(Status::invalid_argument("marks asked in an inconsistent or too large request"));
        }
        let mut sources = r.sources.into_iter();
        let targets: Vec<(u32, Vec<u32>)> = r
            .targets
            .iter()
            .zip(&r.source_counts)
            .map(|(&t, &n)| (t, sources.by_ref().take(n as usize).collect()))
            .collect();
        let (host, job) = (self.host.clone(), r.job_id);
        let bytes = tokio::task::spawn_blocking(move || {
            let rows = host.kept.index().0.rows();
            if targets.iter().any(|(t, _)| *t >= rows) {
                return Err(Status::invalid_argument(format!("a target row beyond the {rows} rows")));
            }
            let marks = host.kept.marks(job, depth, h, &targets).ok_or_else(|| {
                Status::not_found(format!("this worker keeps not all of the rows of level {depth} asked"))
            })?;
            Ok(shard::encode_words(marks_key(job, depth, h), &marks))
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))??;
        let meta = Meta { job: r.job_id, epoch: 0, level: r.level, from: 0, part: 0, kind: PeerKind::Marks };
        Ok(Response::new(counted_stream(meta.chunks(bytes.into()), &self.host.traffic)))
    }
}

/// The chunks a `Peer` call streams back.
type ChunkStream = std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Result<v1::PeerChunk, Status>> + Send>>;

/// `chunks` as a reply stream, counted as sent.
fn counted_stream(chunks: impl IntoIterator<Item = v1::PeerChunk>, traffic: &Traffic) -> ChunkStream {
    let chunks: Vec<Result<v1::PeerChunk, Status>> =
        chunks.into_iter().inspect(|c| traffic.sent(c.encoded_len())).map(Ok).collect();
    Box::pin(tokio_stream::iter(chunks))
}

/// The shard key of a `FetchRows` message.
pub fn rows_key(job: u64, depth: u8) -> shard::ShardKey {
    shard::ShardKey { job, task: shard::LEVEL_INPUT, attempt: 0, level: depth as u32 }
}

/// The shard key of a `FetchMarks` message (the table in the attempt field, so that marks of
/// one table are never read as another's).
pub fn marks_key(job: u64, depth: u8, h: u8) -> shard::ShardKey {
    shard::ShardKey { job, task: shard::LEVEL_INPUT, attempt: 1 + h as u32, level: depth as u32 }
}

/// The most marks one `FetchMarks` call may ask for (bytes of row bits): requests are cut to fit.
pub const MAX_MARKS_BYTES: usize = 32 << 20;

type Client = PeerClient<InterceptedService<Channel, TokenInterceptor>>;

/// Clients of the other workers, by address, made on first use, and the measured speed of
/// each link (which decides how messages to it are packed).
pub struct PeerPool {
    token: Option<cubefarm_proto::auth::Token>,
    ca: Option<std::path::PathBuf>,
    clients: Mutex<HashMap<String, Client>>,
    compress: Compress,
    links: Links,
}

impl PeerPool {
    pub fn new(
        token: Option<cubefarm_proto::auth::Token>,
        ca: Option<std::path::PathBuf>,
        compress: Compress,
    ) -> Self {
        PeerPool { token, ca, clients: Mutex::new(HashMap::new()), compress, links: Links::default() }
    }

    /// How a message to the worker at `address` (if known) is packed.
    pub fn codec(&self, address: Option<&str>) -> shared::shard::Codec {
        self.links.codec(self.compress, address)
    }

    async fn client(&self, address: &str) -> Result<Client, Status> {
        if let Some(c) = self.clients.lock().ok().and_then(|c| c.get(address).cloned()) {
            return Ok(c);
        }
        let ca = if address.starts_with("https://") { self.ca.as_deref() } else { None };
        let endpoint = cubefarm_proto::tls::endpoint(address, ca)
            .map_err(|e| Status::failed_precondition(e.to_string()))?
            .tcp_nodelay(true)
            .connect_timeout(std::time::Duration::from_secs(5));
        let channel = endpoint.connect().await.map_err(|e| {
            Status::unavailable(format!("cannot reach {address}: {}", cubefarm_proto::tls::describe(&e)))
        })?;
        let client = PeerClient::with_interceptor(channel, TokenInterceptor(self.token.clone()))
            .max_decoding_message_size(4 * MAX_CHUNK_BYTES)
            .max_encoding_message_size(4 * MAX_CHUNK_BYTES);
        if let Ok(mut c) = self.clients.lock() {
            c.insert(address.to_string(), client.clone());
        }
        Ok(client)
    }

    /// Forgets the connection to `address` (after a failure, the next call reconnects).
    fn forget(&self, address: &str) {
        if let Ok(mut c) = self.clients.lock() {
            c.remove(address);
        }
    }

    /// Sends one message; returns once the receiver has taken it.
    pub async fn send(
        &self,
        address: &str,
        meta: Meta,
        bytes: Bytes,
        traffic: &crate::connection::Traffic,
    ) -> Result<(), Status> {
        let mut client = self.client(address).await?;
        let chunks = meta.chunks(bytes);
        let size: usize = chunks.iter().map(|c| c.encoded_len()).sum();
        self.links.begin(address);
        let result = client.deliver(tokio_stream::iter(chunks)).await;
        self.links.end(address, size as u64);
        match result {
            Ok(reply) => {
                traffic.sent(size);
                traffic.received(reply.get_ref().encoded_len());
                Ok(())
            }
            Err(s) => {
                if matches!(s.code(), tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Internal)
                {
                    self.forget(address);
                }
                Err(s)
            }
        }
    }

    /// Rows of level `depth` kept by the worker at `address` (see `FetchRows`), in the order
    /// asked.
    pub async fn fetch_rows(
        &self,
        address: &str,
        request: v1::FetchRowsRequest,
        traffic: &crate::connection::Traffic,
    ) -> Result<Vec<shared::h48::ColumnSet>, Status> {
        let (job, depth, n) = (request.job_id, request.level as u8, request.rows.len());
        let max_words = shared::wire::h48::max_task_words(n, shared::wire::h48::max_level_row_words());
        traffic.sent(request.encoded_len());
        let expect = Meta { job, epoch: 0, level: depth as u32, from: 0, part: 0, kind: PeerKind::Rows };
        let bytes = self
            .one_message(address, traffic, expect, shard::max_shard_bytes(max_words), |mut c| async move {
                c.fetch_rows(request).await
            })
            .await?;
        tokio::task::spawn_blocking(move || {
            let words = shard::decode_words_for(&bytes, rows_key(job, depth), max_words)
                .map_err(|e| Status::data_loss(format!("rows of level {depth}: {e}")))?;
            shared::wire::h48::decode_level_rows(&words, n).map_err(|e| Status::data_loss(e.to_string()))
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?
    }

    /// The marks of the table rows asked that the worker at `address` makes from the rows it
    /// keeps (see `FetchMarks`): each target's row bits, one after another.
    pub async fn fetch_marks(
        &self,
        address: &str,
        request: v1::FetchMarksRequest,
        traffic: &crate::connection::Traffic,
    ) -> Result<Vec<u64>, Status> {
        let (job, depth, h) = (request.job_id, request.level as u8, request.table as u8);
        let words = request.targets.len() * shared::h48::H11Rows::table_row_words(h);
        traffic.sent(request.encoded_len());
        let expect = Meta { job, epoch: 0, level: depth as u32, from: 0, part: 0, kind: PeerKind::Marks };
        let bytes = self
            .one_message(address, traffic, expect, shard::max_shard_bytes(words), |mut c| async move {
                c.fetch_marks(request).await
            })
            .await?;
        tokio::task::spawn_blocking(move || {
            let marks = shard::decode_words_for(&bytes, marks_key(job, depth, h), words)
                .map_err(|e| Status::data_loss(format!("marks from level {depth}: {e}")))?;
            if marks.len() != words {
                return Err(Status::data_loss(format!("{} words of marks, not {words}", marks.len())));
            }
            Ok(marks)
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?
    }

    /// The one message a `FetchRows` or `FetchMarks` call streams back, checked to be `expect`
    /// (kind, job and level) and at most `max_bytes`.
    async fn one_message<F, Fut>(
        &self,
        address: &str,
        traffic: &crate::connection::Traffic,
        expect: Meta,
        max_bytes: u64,
        call: F,
    ) -> Result<Bytes, Status>
    where
        F: FnOnce(Client) -> Fut,
        Fut: std::future::Future<Output = Result<Response<tonic::Streaming<v1::PeerChunk>>, Status>>,
    {
        let client = self.client(address).await?;
        let mut stream = match call(client).await {
            Ok(s) => s.into_inner(),
            Err(s) => {
                self.forget(address);
                return Err(s);
            }
        };
        let mut reader = MessageReader::new(&mut stream, traffic);
        let Some((meta, bytes)) = reader.next(|_, _| Some(max_bytes)).await? else {
            return Err(Status::data_loss("no answer"));
        };
        if meta.kind != expect.kind || meta.level != expect.level || meta.job != expect.job {
            return Err(Status::data_loss("an answer that is not what was asked"));
        }
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_joined_message_is_its_chunks_in_order() {
        let joined = |chunks: &[&[u8]], total: usize| {
            let mut j = Joined::default();
            chunks.iter().for_each(|c| j.push(Bytes::copy_from_slice(c), total));
            j.into_bytes()
        };
        assert!(joined(&[], 0).is_empty());
        assert_eq!(&joined(&[b"abc"], 3)[..], b"abc");
        assert_eq!(&joined(&[b"abc", b"de", b"f"], 6)[..], b"abcdef");
        assert_eq!(&joined(&[b"abc", b"de", b"f"], 0)[..], b"abcdef", "a length not known");
    }
}
