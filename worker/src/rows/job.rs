//! One row search on this worker, as a shell around its core ([`RowsWorker`]): one task owns
//! the core and takes its inputs one at a time (plans from the sync loop, messages from the
//! `Peer` service, finished computations, delivered or failed sends, ticks); it carries the
//! core's actions out: computations on blocking threads (which run the parts' kernels on
//! rayon), sends to other workers, levels sent up to the coordinator, answers to deliveries.
//! Nothing else touches the core, so the shell holds no lock around it; the parts' data
//! ([`Parts`]) locks each part on its own.

use super::peer::{Meta, PeerPool};
use crate::connection::{download_packed, Client, InputError, Traffic};
use anyhow::anyhow;
use cubefarm_proto::v1;
use prost::Message as _;
use shared::bfs::owned::PartIndex;
use shared::bfs::task::Counting;
use shared::index_file;
use shared::job::{AnyIndex, JobSpec, RowJob, INDEX_INPUT};
use shared::runtime::rows::{
    DiskStore, Done, JobInfo, LevelStore, Message, Note, Parts, Plan, RowsWorker, Status, Work, WorkerAction,
    WorkerEvent,
};
use shared::runtime::WorkerId;
use shared::space::RowOrder;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};

/// What the job's task takes, one at a time.
enum Input {
    Event(WorkerEvent),
    /// A message delivered by the `Peer` service, answered once the core has taken it.
    Message(Message, oneshot::Sender<bool>),
    /// The index is built: the parts' data, and the room left for parts.
    Built(Arc<Parts<AnyIndex>>, u64),
}

/// What the job's shell needs of the worker's process.
#[derive(Clone)]
pub struct Links {
    pub traffic: Arc<Traffic>,
    pub pool: Arc<PeerPool>,
    /// Where other workers are, as the coordinator last said.
    pub peers: Arc<RwLock<HashMap<WorkerId, String>>>,
    pub coordinator: Client,
    /// Where the parts' levels are kept (`None`: a temporary directory).
    pub state_dir: Option<PathBuf>,
    pub mem_limit: u64,
    /// Where the packed index is kept (`--index-dir`).
    pub index_dir: Option<PathBuf>,
}

/// A row search this worker takes part in: a handle on its task.
pub struct Job {
    pub info: JobInfo,
    pub me: WorkerId,
    inputs: mpsc::UnboundedSender<Input>,
    status: watch::Receiver<Status>,
    /// The longest message of the job, once its index is built.
    max_message: Arc<OnceLock<u64>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Job {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Job {
    /// Starts worker `me`'s part in `info`: its first action builds the index.
    pub fn start(info: JobInfo, me: WorkerId, links: Links) -> Job {
        let window = rayon::current_num_threads() + 2;
        let core = RowsWorker::new(me, info.clone(), window);
        let (inputs, rx) = mpsc::unbounded_channel();
        let (status_tx, status) = watch::channel(core.status());
        let max_message = Arc::new(OnceLock::new());
        let shell = Shell {
            core,
            links,
            inputs: inputs.clone(),
            parts: None,
            acks: HashMap::new(),
            status: status_tx,
            max_message: max_message.clone(),
        };
        let task = tokio::spawn(shell.run(rx));
        Job { info, me, inputs, status, max_message, task }
    }

    /// What the worker reports now, and a receiver that changes with it.
    pub fn status(&self) -> watch::Receiver<Status> {
        self.status.clone()
    }

    pub fn plan(&self, plan: Plan) {
        let _ = self.inputs.send(Input::Event(WorkerEvent::Plan(plan)));
    }

    /// A message from another worker: `true` once the core has taken it, `false` if damaged.
    pub async fn take(&self, note: Note, payload: bytes::Bytes) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.inputs.send(Input::Message(Message { note, payload }, tx)).is_err() {
            return true; // the job is over: nothing to take it
        }
        rx.await.unwrap_or(true)
    }

    /// The longest message of `kind` the job carries (a part's rows; a part's every level).
    pub fn max_message_bytes(&self, kind: v1::PeerKind) -> Option<u64> {
        let one = *self.max_message.get()?;
        Some(if kind == v1::PeerKind::Levels {
            one.saturating_mul(shared::runtime::rows::MAX_DEPTH as u64)
        } else {
            one
        })
    }
}

struct Shell {
    core: RowsWorker,
    links: Links,
    inputs: mpsc::UnboundedSender<Input>,
    parts: Option<Arc<Parts<AnyIndex>>>,
    /// Deliveries waiting for the core to take their message, by sender and note.
    acks: HashMap<(WorkerId, Note), VecDeque<oneshot::Sender<bool>>>,
    status: watch::Sender<Status>,
    max_message: Arc<OnceLock<u64>>,
}

impl Shell {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Input>) {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        // Seconds without a change of status (a stuck job says where it stands, at debug level).
        let mut quiet = 0u32;
        loop {
            while let Some(action) = self.core.next_action() {
                self.carry_out(action);
            }
            let status = self.core.status();
            if self.status.send_if_modified(|s| std::mem::replace(s, status.clone()) != status) {
                tracing::debug!("status {status:?}");
                quiet = 0;
            }
            let input = tokio::select! {
                input = rx.recv() => match input {
                    Some(input) => input,
                    None => return,
                },
                _ = tick.tick() => {
                    quiet += 1;
                    if quiet.is_multiple_of(5) {
                        tracing::debug!("no change for {quiet} s: {}", self.core.describe());
                    }
                    Input::Event(WorkerEvent::Tick)
                }
            };
            match input {
                Input::Event(event) => self.core.handle(event),
                Input::Message(message, answer) => {
                    let key = (message.note.from, message.note);
                    self.acks.entry(key).or_default().push_back(answer);
                    self.core.handle(WorkerEvent::Message(message));
                }
                Input::Built(parts, room) => {
                    let _ = self.max_message.set(parts.max_message_bytes());
                    let done = parts.built(room);
                    self.parts = Some(parts);
                    self.core.handle(WorkerEvent::Done(done));
                }
            }
        }
    }

    fn carry_out(&mut self, action: WorkerAction) {
        match action {
            WorkerAction::Work(Work::Build) => self.build(),
            WorkerAction::Work(work) => {
                let Some(parts) = self.parts.clone() else { return };
                let inputs = self.inputs.clone();
                tokio::task::spawn_blocking(move || {
                    if let Some(done) = parts.run(work) {
                        let _ = inputs.send(Input::Event(WorkerEvent::Done(done)));
                    }
                });
            }
            WorkerAction::Send { to, message } => self.send(to, message),
            WorkerAction::Ack { to, note, ok } => {
                if let Some(waiting) = self.acks.get_mut(&(to, note)) {
                    if let Some(answer) = waiting.pop_front() {
                        let _ = answer.send(ok);
                    }
                    if waiting.is_empty() {
                        self.acks.remove(&(to, note));
                    }
                }
            }
            WorkerAction::Upload { part, depth, epoch, payload } => self.upload(part, depth, epoch, payload),
            WorkerAction::Report => {} // the status is published after every input
        }
    }

    /// Obtains the index (read from `--index-dir` where it is kept there, else received from
    /// the coordinator where it sends one, else built), then opens the store of the job's
    /// levels; the work on blocking threads.
    fn build(&self) {
        let (info, links, inputs) = (self.core.job().clone(), self.links.clone(), self.inputs.clone());
        tokio::spawn(async move {
            let (i, l) = (info.clone(), links.clone());
            let kept = tokio::task::spawn_blocking(move || kept_index(&i, &l)).await.ok().flatten();
            let received = match kept {
                Some(_) => None,
                None => {
                    let started = std::time::Instant::now();
                    let mut client = links.coordinator.clone();
                    match download_packed(&mut client, &links.traffic, info.id, INDEX_INPUT).await {
                        Ok(bytes) => Some((bytes, started.elapsed())),
                        Err(InputError::Missing) => None,
                        Err(e) => {
                            tracing::warn!("the job's index from the coordinator: {e:?}; building it here");
                            None
                        }
                    }
                }
            };
            let built = tokio::task::spawn_blocking(move || build_parts(&info, &links, kept, received)).await;
            let input = match built {
                Ok(Ok((parts, room))) => Input::Built(parts, room),
                Ok(Err(e)) => Input::Event(WorkerEvent::Done(Done::Failed { why: format!("{e:#}") })),
                Err(e) => {
                    Input::Event(WorkerEvent::Done(Done::Failed { why: format!("building the index: {e}") }))
                }
            };
            let _ = inputs.send(input);
        });
    }

    /// Delivers `message` to worker `to`; a link that fails is reported after a pause (the
    /// core sends again while the message matters).
    fn send(&self, to: WorkerId, message: Message) {
        let (links, inputs) = (self.links.clone(), self.inputs.clone());
        let meta = Meta::of_note(self.core.job().id, message.note);
        tokio::spawn(async move {
            let address = links.peers.read().ok().and_then(|p| p.get(&to).cloned());
            let sent = match &address {
                Some(a) => links.pool.send(a, meta, message.payload.clone(), &links.traffic).await,
                None => Err(tonic::Status::unavailable(format!("no address for worker {to}"))),
            };
            let event = match sent {
                Ok(()) => WorkerEvent::Acked { to, note: message.note, ok: true },
                Err(s) if s.code() == tonic::Code::DataLoss => {
                    WorkerEvent::Acked { to, note: message.note, ok: false }
                }
                Err(s) => {
                    tracing::debug!("sending to worker {to} failed ({}); the core decides", s.message());
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    WorkerEvent::SendFailed { to, message }
                }
            };
            let _ = inputs.send(Input::Event(event));
        });
    }

    /// Sends a finished part's level to the coordinator (a table build reads every level),
    /// retrying while the coordinator is away.
    fn upload(&self, part: u32, depth: u32, epoch: u64, payload: Vec<u8>) {
        let (links, inputs) = (self.links.clone(), self.inputs.clone());
        let meta = Meta {
            job: self.core.job().id,
            epoch,
            level: depth,
            from: self.core.me(),
            part,
            kind: v1::PeerKind::Level,
        };
        let payload = bytes::Bytes::from(payload);
        tokio::spawn(async move {
            loop {
                let chunks = meta.chunks(payload.clone());
                chunks.iter().for_each(|c| links.traffic.sent(c.encoded_len()));
                let mut client = links.coordinator.clone();
                match client.upload_level(tokio_stream::iter(chunks)).await {
                    Ok(reply) => {
                        links.traffic.received(reply.get_ref().encoded_len());
                        let _ = inputs.send(Input::Event(WorkerEvent::Uploaded { part, depth, epoch }));
                        return;
                    }
                    Err(s) => {
                        tracing::warn!(
                            "sending part {part} of level {depth} up: {}; trying again",
                            s.message()
                        );
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                }
            }
        });
    }
}

/// The job's index as kept in `--index-dir`, if it is kept there and passes its checks.
fn kept_index(info: &JobInfo, links: &Links) -> Option<AnyIndex> {
    let dir = links.index_dir.as_deref()?;
    let job = row_job(info).ok().filter(RowJob::sends_index)?;
    let start = std::time::Instant::now();
    match index_file::read(dir, &job) {
        Ok(Some(kept)) => {
            tracing::info!(
                "job {:016x} ({job}): index read from {} in {:.1} s",
                info.id,
                index_file::path(dir, &job).display(),
                start.elapsed().as_secs_f64()
            );
            Some(kept.index)
        }
        Ok(None) => None,
        Err(e) => {
            tracing::warn!(
                "job {:016x}: {} is refused ({e}); the coordinator's index is used",
                info.id,
                index_file::path(dir, &job).display()
            );
            None
        }
    }
}

/// The row search `info` names.
fn row_job(info: &JobInfo) -> anyhow::Result<RowJob> {
    match info.spec.parse::<JobSpec>()? {
        JobSpec::Rows(r) => Ok(r),
        other => Err(anyhow!("the coordinator sent {other} as a row search")),
    }
}

/// The job's index and parts, with the room left for parts once the index is made: `kept` (read
/// from `--index-dir`), else read from `received` (the packed index the coordinator sent, and
/// how long it took to arrive; then kept in `--index-dir`) when it is the job's index, else
/// built here.
fn build_parts(
    info: &JobInfo,
    links: &Links,
    kept: Option<AnyIndex>,
    received: Option<(Vec<u8>, Duration)>,
) -> anyhow::Result<(Arc<Parts<AnyIndex>>, u64)> {
    let spec = row_job(info)?;
    let start = std::time::Instant::now();
    let read = kept.or_else(|| {
        let (packed, took) = received?;
        match index_file::unpack(&spec, &packed) {
            Ok((index, _)) => {
                tracing::info!(
                    "job {:016x} ({spec}): index received from the coordinator ({:.1} MiB in {:.1} s) and read in {:.1} s",
                    info.id,
                    packed.len() as f64 / (1u64 << 20) as f64,
                    took.as_secs_f64(),
                    start.elapsed().as_secs_f64()
                );
                if let Some(dir) = &links.index_dir {
                    match index_file::write(dir, &spec, &packed) {
                        Ok(path) => tracing::info!("job {:016x}: index kept in {}", info.id, path.display()),
                        Err(e) => tracing::warn!("job {:016x}: cannot keep the index in {}: {e}", info.id, dir.display()),
                    }
                }
                Some(index)
            }
            Err(e) => {
                tracing::warn!("job {:016x}: the index the coordinator sent is refused ({e}); building it here", info.id);
                None
            }
        }
    });
    let index = match read {
        Some(index) => index,
        None => {
            tracing::info!("job {:016x} ({spec}): building the index", info.id);
            // As the coordinator of a distributed search builds it.
            let mut index = spec.build_index(RowOrder::Locality);
            index.shrink();
            tracing::info!("job {:016x}: index built in {:.1} s", info.id, start.elapsed().as_secs_f64());
            index
        }
    };
    if index.row_count() != info.rows || info.rows_per_part == 0 {
        return Err(anyhow!(
            "the coordinator's job has {} rows in parts of {}, its index {}",
            info.rows,
            info.rows_per_part,
            index.row_count()
        ));
    }
    let used = resident_bytes();
    let room = links.mem_limit.saturating_sub(used);
    tracing::info!(
        "job {:016x}: with the index, {:.2} GiB resident, {:.2} GiB left for rows",
        info.id,
        used as f64 / (1u64 << 30) as f64,
        room as f64 / (1u64 << 30) as f64
    );
    let store = open_store(links.state_dir.as_deref(), info.id)?;
    let counting = if info.positions_only { Counting::Positions } else { Counting::Classes };
    // Each message is packed for its link, as the pool measures it.
    let (pool, peers) = (links.pool.clone(), links.peers.clone());
    let codec = move |to: WorkerId| {
        let address = peers.read().ok().and_then(|p| p.get(&to).cloned());
        pool.codec(address.as_deref())
    };
    let parts = Parts::new(
        Arc::new(index),
        info.id,
        info.cut(),
        spec.moves.moves(),
        counting,
        store,
        Arc::new(codec),
    );
    Ok((Arc::new(parts), room))
}

/// The store of job `job`'s levels: under `--state-dir` (the levels of other jobs there are
/// removed), or a directory of this process's that is removed when it exits.
pub fn open_store(state_dir: Option<&std::path::Path>, job: u64) -> anyhow::Result<Arc<dyn LevelStore>> {
    let root = levels_root(state_dir);
    if let Ok(entries) = std::fs::read_dir(&root) {
        let keep = format!("job-{job:016x}");
        for e in entries.flatten() {
            let name = e.file_name();
            if name.to_string_lossy().starts_with("job-") && name.to_string_lossy() != keep {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let store = DiskStore::open(&root, job)
        .map_err(|e| anyhow!("cannot keep levels under {}: {e}", root.display()))?;
    Ok(Arc::new(store))
}

/// Where the levels of row searches are kept.
pub fn levels_root(state_dir: Option<&std::path::Path>) -> PathBuf {
    match state_dir {
        Some(d) => d.join("levels"),
        None => std::env::temp_dir().join(format!("cubefarm-levels-{}", std::process::id())),
    }
}

/// Resident memory of this process (Linux `VmRSS`; 0 where unknown).
fn resident_bytes() -> u64 {
    shared::units::proc_kib_field("/proc/self/status", "VmRSS:").unwrap_or(0)
}
