//! A row search whose rows the workers own (`shared::bfs::owned`): this worker keeps the parts
//! the coordinator assigns it for the whole job, makes each level in them from the messages
//! of the other workers, sends its own frontier's images (or, backward, its unvisited rows) to
//! the owners of the parts they concern, and keeps replicas of other workers' parts on disk.
//!
//! The coordinator says what to hold and do ([`Job::apply`], from `RowsSync` replies): the
//! assignment (an *epoch*: owners, replica holders, peers), the level to make, and when a
//! finished level is committed. A worker reports a level finished once every part it owns has
//! its new entries, counted, and stored by the part's replica holder. An epoch change drops the
//! level being made everywhere; parts that move are restored from their replicas.

pub mod peer;
mod replicas;

use crate::connection::{classify, Client, Fault, Traffic};
use anyhow::anyhow;
use cubefarm_proto::v1::{self, PeerKind};
use peer::{Meta, PeerPool};
use prost::Message;
use replicas::{Replicas, Stored};
use shared::bfs::owned::{self, OwnedFrontier, OwnedPart, PartFrontier};
use shared::bfs::owned::{PartCut, PartIndex};
use shared::bfs::task::{Counting, FullRows, RowBits, Sources};
use shared::bfs::Direction;
use shared::job::{AnyIndex, JobSpec, RowJob};
use shared::shard::{self, ShardKey};
use shared::space::RowCounts;
use shared::wire::SparseRows;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{watch, Semaphore};
use tonic::Status;

/// What the worker process holds for owned-row searches: its links, its limits, and the job.
pub struct Host {
    pub traffic: Arc<Traffic>,
    pub pool: Arc<PeerPool>,
    /// Where replicas are kept (else a temporary directory).
    pub state_dir: Option<PathBuf>,
    /// The most memory this worker may use.
    pub mem_limit: u64,
    job: Mutex<Option<Arc<Job>>>,
    /// Bumped whenever the job's state changes: the sync loop reports at once, and messages
    /// waiting for a level look again.
    events: Arc<watch::Sender<u64>>,
    /// Messages being received at once (each is buffered whole before it is taken).
    pub receiving: Semaphore,
    /// The h11 level rows of an H48 build that this worker made or fetched.
    pub kept: crate::kept::Kept,
    /// The id the coordinator last gave this worker (0: none yet).
    last_id: std::sync::atomic::AtomicU64,
}

impl Host {
    pub fn new(traffic: Arc<Traffic>, pool: PeerPool, state_dir: Option<PathBuf>, mem_limit: u64) -> Self {
        Host {
            traffic,
            pool: Arc::new(pool),
            state_dir,
            mem_limit,
            job: Mutex::new(None),
            events: Arc::new(watch::channel(0).0),
            receiving: Semaphore::new(rayon::current_num_threads() + 1),
            kept: Default::default(),
            last_id: Default::default(),
        }
    }

    fn current(&self) -> Option<Arc<Job>> {
        self.job.lock().ok().and_then(|j| j.clone())
    }

    /// The job `id`, waiting a little for it (a peer may speak before this worker has taken
    /// the job's first assignment).
    pub async fn job_for(&self, id: u64) -> Result<Arc<Job>, Status> {
        let mut events = self.events.subscribe();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(job) = self.current().filter(|j| j.id == id) {
                return Ok(job);
            }
            if tokio::time::timeout_at(deadline, events.changed()).await.is_err() {
                return Err(Status::failed_precondition(format!("this worker has no job {id:016x}")));
            }
        }
    }

    /// The id the coordinator gave this worker for the job it holds.
    pub fn worker_id(&self) -> Option<u64> {
        self.current().map(|j| j.me)
    }

    /// The id to ask back from a coordinator that restarted: the one it gave this worker last
    /// (0: none), under which it keeps its rows.
    pub fn previous_id(&self) -> u64 {
        self.worker_id().unwrap_or_else(|| self.last_id.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Takes the id a registration gave: under another id than before, the h11 rows this
    /// worker kept are nobody's (the coordinator knows them by the old id) and are dropped.
    pub fn registered_as(&self, id: u64) {
        let last = self.last_id.swap(id, std::sync::atomic::Ordering::Relaxed);
        if last != 0 && last != id {
            self.kept.clear();
        }
    }

    /// The longest message of job `id`, if it is this worker's job.
    pub fn max_message_bytes(&self, id: u64) -> Option<u64> {
        self.current().filter(|j| j.id == id).map(|j| j.max_message_bytes())
    }

    /// Drops the job (its memory and temporary replicas, and any kept h11 rows).
    pub fn drop_job(&self) {
        self.kept.clear();
        let job = self.job.lock().ok().and_then(|mut j| j.take());
        if let Some(job) = job {
            job.lock().dropped = true;
            job.changed();
        }
        self.events.send_modify(|n| *n += 1);
    }

    /// Runs an owned-row search with the coordinator until it is over (`Ok`) or the link fails.
    /// A reply is taken in a task of its own, while this loop keeps reporting: a reply naming
    /// a newer assignment meanwhile makes the task give up its deliveries (a holder it waits
    /// for may be gone) so that the newer one is taken next.
    pub async fn run(self: &Arc<Self>, client: &mut Client, worker: u64) -> Result<(), Fault> {
        let mut events = self.events.subscribe();
        let mut applying: Option<tokio::task::JoinHandle<anyhow::Result<()>>> = None;
        loop {
            let request = match self.current() {
                Some(job) if job.me == worker => job.sync_request(),
                _ => {
                    let (sent_bytes, received_bytes) = self.traffic.totals();
                    v1::RowsSyncRequest {
                        worker_id: worker,
                        sent_bytes,
                        received_bytes,
                        ..Default::default()
                    }
                }
            };
            if let Some(task) = applying.as_mut() {
                // Wait for it, asking now and then whether the assignment moved on.
                tokio::select! {
                    done = &mut *task => {
                        applying = None;
                        match done {
                            Ok(Ok(())) => {}
                            Ok(Err(e)) => self.failed(e)?,
                            Err(e) => self.failed(anyhow!("taking an assignment failed: {e}"))?,
                        }
                    }
                    _ = tokio::time::sleep(Duration::from_millis(500)) => {
                        self.traffic.sent(request.encoded_len());
                        let reply = client.rows_sync(request).await.map_err(|s| classify("lost the coordinator", s))?.into_inner();
                        self.traffic.received(reply.encoded_len());
                        if reply.done {
                            task.abort();
                            self.drop_job();
                            return Ok(());
                        }
                        if let Some(job) = self.current() {
                            job.supersede(reply.epoch);
                        }
                    }
                }
                continue;
            }
            self.traffic.sent(request.encoded_len());
            events.mark_unchanged();
            let reply = tokio::select! {
                r = client.rows_sync(request) => r.map_err(|s| classify("lost the coordinator", s))?.into_inner(),
                // Something to report (a finished level, a failure): ask again at once.
                _ = events.changed() => continue,
            };
            self.traffic.received(reply.encoded_len());
            if reply.done {
                self.drop_job();
                return Ok(());
            }
            if reply.wait {
                continue;
            }
            let (host, client) = (self.clone(), client.clone());
            applying = Some(tokio::spawn(async move { host.apply(reply, worker, &client).await }));
        }
    }

    /// A reply could not be taken: the job fails with the reason (or, with no job, the worker).
    fn failed(&self, e: anyhow::Error) -> Result<(), Fault> {
        match self.current() {
            Some(job) => {
                if !job.superseded() {
                    tracing::error!("{e:#}");
                    job.fail(format!("{e:#}"));
                }
                Ok(())
            }
            None => Err(Fault::Fatal(e)),
        }
    }

    /// Takes a reply: the job (built on first sight), then the assignment, commit and level.
    async fn apply(
        self: Arc<Self>,
        reply: v1::RowsSyncReply,
        worker: u64,
        client: &Client,
    ) -> anyhow::Result<()> {
        let job = match self.current().filter(|j| j.id == reply.job_id && j.me == worker) {
            Some(job) => job,
            None => {
                self.drop_job();
                let job = Job::build(&self, &reply, worker, client.clone()).await?;
                if let Ok(mut j) = self.job.lock() {
                    *j = Some(job.clone());
                }
                self.events.send_modify(|n| *n += 1);
                return Ok(());
            }
        };
        if reply.epoch == 0 {
            return Ok(()); // no assignment yet: the coordinator waits for the other workers
        }
        job.apply(&reply).await
    }
}

/// Why a message to a peer was not delivered (a link that fails is retried, not this).
#[derive(Debug, thiserror::Error)]
enum Undelivered {
    #[error("the assignment changed")]
    MovedOn,
    #[error("no address for worker {0}")]
    NoAddress(u64),
    #[error("worker {worker} refused a message: {why}")]
    Refused { worker: u64, why: String },
}

/// The assignment of an epoch: per part its owner and replica holder, and where peers are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Assignment {
    epoch: u64,
    owner: Vec<u64>,
    replica: Vec<u64>,
    /// Where the other workers are; may change within an epoch (a worker joins or is lost).
    peers: HashMap<u64, String>,
    peers_version: u64,
}

impl Assignment {
    fn of(reply: &v1::RowsSyncReply) -> Self {
        Assignment {
            epoch: reply.epoch,
            owner: reply.owner.clone(),
            replica: reply.replica.clone(),
            peers: reply.peers.iter().map(|p| (p.worker_id, p.address.clone())).collect(),
            peers_version: reply.peers_version,
        }
    }

    /// The same parts and replica holders (peers aside).
    fn same_parts(&self, other: &Assignment) -> bool {
        (self.epoch, &self.owner, &self.replica) == (other.epoch, &other.owner, &other.replica)
    }

    /// Workers owning at least one part.
    fn owners(&self) -> BTreeSet<u64> {
        self.owner.iter().copied().collect()
    }
}

/// The level being made.
struct LevelState {
    depth: u32,
    epoch: u64,
    direction: Direction,
    /// Workers whose message each owned part waits for.
    senders: BTreeSet<u64>,
    parts: BTreeMap<u32, PartLevel>,
    remaining: usize,
    counts: RowCounts,
    /// Traffic totals when the level began.
    traffic_at_start: (u64, u64),
}

#[derive(Default)]
struct PartLevel {
    /// This worker's own contribution is in.
    local: bool,
    from: BTreeSet<u64>,
    finishing: bool,
    /// Level 0's counts, found when its start entry was set.
    start_counts: RowCounts,
}

/// What this worker's share of a level reads: its frontier rows, the owners of every part,
/// its parts, the workers whose messages its parts wait for, and its sources.
struct LevelView {
    frontier: Arc<OwnedFrontier>,
    owners: Arc<Vec<u64>>,
    parts: BTreeMap<u32, HeldPart>,
    senders: Vec<u64>,
    sources: Arc<Sources>,
}

/// A finished level awaiting commit.
#[derive(Clone, Copy)]
struct Finished {
    depth: u32,
    epoch: u64,
    counts: RowCounts,
    sent: u64,
    received: u64,
}

/// An owned part, and the level its `next` is being made for (`None`: none). Its lock is never
/// taken while the job's state is locked, nor on the runtime's threads (only in blocking
/// tasks), and a message is merged only into the level it was sent for.
struct Held {
    part: OwnedPart,
    making: Option<(u32, u64)>,
}

type HeldPart = Arc<Mutex<Held>>;

fn hold(part: &HeldPart) -> std::sync::MutexGuard<'_, Held> {
    part.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Default)]
struct State {
    assignment: Assignment,
    parts: BTreeMap<u32, HeldPart>,
    /// The owned parts' frontiers (what pushes map and pulls test), readable without their locks.
    frontiers: BTreeMap<u32, Arc<PartFrontier>>,
    /// The sources of the rows that images go to, among the owned rows (what pushes read).
    sources: Option<Arc<Sources>>,
    /// Depth of the last level committed in the parts.
    committed: Option<u32>,
    level: Option<LevelState>,
    finished: Option<Finished>,
    failure: Option<String>,
    ready: bool,
    /// The newest epoch a reply named (beyond `assignment.epoch` while a reply is being taken).
    newest: u64,
    /// The worker let go of the job (it ended, or the worker registers again): whatever still
    /// waits on it gives up.
    dropped: bool,
}

impl State {
    /// Work for `epoch` is over: another assignment is held or named, or the job was dropped.
    fn moved_on(&self, epoch: u64) -> bool {
        self.dropped || self.assignment.epoch != epoch || self.newest > epoch
    }
}

pub struct Job {
    pub id: u64,
    pub me: u64,
    index: Arc<AnyIndex>,
    moves: Vec<shared::cube::Move>,
    cut: PartCut,
    words: usize,
    counting: Counting,
    /// Memory this worker can give to parts.
    room: u64,
    replicas: Replicas,
    pool: Arc<PeerPool>,
    traffic: Arc<Traffic>,
    /// The coordinator's link, for levels it reads (a table build).
    coordinator: Client,
    /// Send each finished part to the coordinator.
    upload_levels: bool,
    state: Mutex<State>,
    events: Arc<watch::Sender<u64>>,
    /// Decoded messages held at once (each up to a part's rows).
    decoding: Semaphore,
    /// Messages this worker has in flight.
    sending: Arc<Semaphore>,
    /// Zeroed buffers of a part's rows, for the messages it computes (see [`Job::buffer`]).
    spare: Mutex<Vec<Vec<u64>>>,
    /// Parts being finished at once (each holds its encoded replica until it is stored).
    finishing: Arc<Semaphore>,
}

/// Spare part buffers kept: about as many as are computed at once.
const SPARE_BUFFERS: usize = 2;

/// How a message is keyed (its shard's key): the job, the part, what it is, the depth.
fn message_key(job: u64, part: u32, kind: PeerKind, depth: u32) -> ShardKey {
    shared::wire::row_message_key(job, part, kind as u32, depth)
}

/// Resident memory of this process (Linux `VmRSS`; 0 where unknown).
fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib * 1024)
}

impl Job {
    /// Builds the job's index and sources (on a blocking thread) and opens its replica store.
    async fn build(
        host: &Arc<Host>,
        reply: &v1::RowsSyncReply,
        me: u64,
        coordinator: Client,
    ) -> anyhow::Result<Arc<Job>> {
        let spec: RowJob = match reply.job_spec.parse::<JobSpec>()? {
            JobSpec::Rows(r) => r,
            other => return Err(anyhow!("the coordinator sent {other} as a row search")),
        };
        tracing::info!("job {:016x} ({spec}): building the index", reply.job_id);
        let start = std::time::Instant::now();
        let index = tokio::task::spawn_blocking(move || {
            let mut index = spec.build_index();
            index.shrink();
            index
        })
        .await?;
        let rows = index.row_count();
        if reply.rows_per_part == 0 || reply.rows_per_part > rows {
            return Err(anyhow!("parts of {} rows in a space of {rows} rows", reply.rows_per_part));
        }
        let used = resident_bytes();
        let room = host.mem_limit.saturating_sub(used);
        tracing::info!(
            "job {:016x}: index built in {:.1} s; {:.2} GiB resident, {:.2} GiB left for rows",
            reply.job_id,
            start.elapsed().as_secs_f64(),
            used as f64 / (1u64 << 30) as f64,
            room as f64 / (1u64 << 30) as f64
        );
        let threads = rayon::current_num_threads();
        let job = Job {
            id: reply.job_id,
            me,
            words: index.words_per_row(),
            cut: PartCut::new(rows, reply.rows_per_part),
            index: Arc::new(index),
            moves: spec.moves.moves(),
            counting: if reply.positions_only { Counting::Positions } else { Counting::Classes },
            room,
            replicas: Replicas::new(host.state_dir.as_deref(), reply.job_id)?,
            pool: host.pool.clone(),
            traffic: host.traffic.clone(),
            coordinator,
            upload_levels: reply.upload_levels,
            state: Mutex::new(State { ready: true, ..Default::default() }),
            events: host.events.clone(),
            decoding: Semaphore::new(threads.max(1)),
            sending: Arc::new(Semaphore::new(threads + 2)),
            spare: Mutex::new(Vec::new()),
            finishing: Arc::new(Semaphore::new(threads.max(1))),
        };
        Ok(Arc::new(job))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn changed(&self) {
        self.events.send_modify(|n| *n += 1);
    }

    /// The longest message the job can carry (a part's rows, as a shard).
    pub fn max_message_bytes(&self) -> u64 {
        shard::max_shard_bytes(SparseRows::max_result_words(self.cut.rows_per_part as usize, self.words))
    }

    /// A reply named assignment `epoch`: work for an older one gives up.
    fn supersede(&self, epoch: u64) {
        let mut s = self.lock();
        s.newest = s.newest.max(epoch);
        drop(s);
        self.changed();
    }

    /// Whether a newer assignment than the one held was named.
    fn superseded(&self) -> bool {
        let s = self.lock();
        s.newest > s.assignment.epoch
    }

    /// Returns once work for `epoch` is over here (see [`State::moved_on`]).
    async fn moved_on(&self, epoch: u64) {
        let mut events = self.events.subscribe();
        while !self.lock().moved_on(epoch) {
            if events.changed().await.is_err() {
                return;
            }
        }
    }

    /// A zeroed buffer of `len` words for a message's rows: a spare one when there is one (its
    /// pages stay mapped; on a virtual machine fresh memory costs as much as the work).
    fn buffer(&self, len: usize) -> Vec<u64> {
        let mut b = self.spare.lock().ok().and_then(|mut s| s.pop()).unwrap_or_default();
        b.resize(len, 0);
        b
    }

    /// Takes a buffer back, zeroing only its written words.
    fn give_back(&self, mut buffer: Vec<u64>) {
        buffer.iter_mut().filter(|w| **w != 0).for_each(|w| *w = 0);
        self.keep_spare(buffer);
    }

    /// Takes back a buffer of rows of `words` words written only where `written` holds.
    fn give_back_rows(&self, mut buffer: Vec<u64>, words: usize, written: &[bool]) {
        for (row, _) in buffer.chunks_mut(words).zip(written).filter(|(_, &w)| w) {
            row.fill(0);
        }
        self.keep_spare(buffer);
    }

    fn keep_spare(&self, buffer: Vec<u64>) {
        if let Ok(mut s) = self.spare.lock() {
            if s.len() < SPARE_BUFFERS {
                s.push(buffer);
            }
        }
    }

    /// Ends this worker's part in the job: the coordinator hears why.
    fn fail(&self, why: String) {
        self.lock().failure.get_or_insert(why);
        self.changed();
    }

    /// Where this worker stands, for the coordinator.
    fn sync_request(&self) -> v1::RowsSyncRequest {
        let s = self.lock();
        let finished = s.finished.filter(|f| f.epoch == s.assignment.epoch);
        let making = s.level.as_ref().filter(|l| l.epoch == s.assignment.epoch);
        v1::RowsSyncRequest {
            worker_id: self.me,
            job_id: self.id,
            ready: s.ready,
            room_bytes: self.room,
            epoch: s.assignment.epoch,
            committed: s.committed.map_or(0, |d| d + 1),
            finished: finished.map_or(0, |f| f.depth + 1),
            counts: finished
                .map(|f| vec![f.counts.entries, f.counts.positions, f.counts.classes, f.counts.self_inverse])
                .unwrap_or_default(),
            level_sent: finished.map_or(0, |f| f.sent),
            level_received: finished.map_or(0, |f| f.received),
            failure: s.failure.clone().unwrap_or_default(),
            making: making.map_or(0, |l| l.depth + 1),
            sent_bytes: self.traffic.totals().0,
            received_bytes: self.traffic.totals().1,
            peers_version: s.assignment.peers_version,
        }
    }

    /// Takes a reply of the coordinator: adopts its assignment, commits, starts its level.
    async fn apply(self: &Arc<Self>, reply: &v1::RowsSyncReply) -> anyhow::Result<()> {
        let cut_parts = self.cut.parts() as usize;
        if reply.owner.len() != cut_parts || reply.replica.len() != cut_parts {
            return Err(anyhow!("an assignment of {} parts for a cut of {cut_parts}", reply.owner.len()));
        }
        let new = Assignment::of(reply);
        // A level finished under this epoch and committed by the coordinator becomes the frontier.
        let commit = {
            let s = self.lock();
            s.finished.filter(|f| {
                f.epoch == reply.committed_epoch
                    && f.depth + 1 == reply.committed
                    && f.epoch == s.assignment.epoch
            })
        };
        if let Some(f) = commit {
            self.commit(f.depth).await?;
        }
        let same = {
            let mut s = self.lock();
            let same = s.assignment.same_parts(&new);
            if same {
                s.assignment.peers = new.peers.clone();
                s.assignment.peers_version = new.peers_version;
            }
            same
        };
        if !same {
            self.adopt(new, reply.committed).await?;
        }
        if reply.level > 0 {
            let depth = reply.level - 1;
            let direction = match (depth, reply.backward) {
                (0, _) => Direction::Start,
                (_, true) => Direction::Backward,
                _ => Direction::Forward,
            };
            let start = {
                let s = self.lock();
                let ready = s.committed.map_or(depth == 0, |c| c + 1 == depth);
                let busy =
                    s.level.as_ref().is_some_and(|l| l.depth == depth && l.epoch == s.assignment.epoch)
                        || s.finished.is_some_and(|f| f.depth == depth && f.epoch == s.assignment.epoch);
                ready && !busy && s.failure.is_none()
            };
            if start {
                self.begin_level(depth, direction).await?;
            }
        }
        Ok(())
    }

    /// Makes the finished level `depth` the frontier of every owned part.
    async fn commit(self: &Arc<Self>, depth: u32) -> anyhow::Result<()> {
        let parts: Vec<(u32, HeldPart)> = self.lock().parts.iter().map(|(k, p)| (*k, p.clone())).collect();
        let frontiers = tokio::task::spawn_blocking(move || {
            use rayon::prelude::*;
            parts
                .par_iter()
                .map(|(k, p)| {
                    let mut h = hold(p);
                    h.making = None;
                    h.part.commit();
                    (*k, h.part.frontier.clone())
                })
                .collect::<BTreeMap<_, _>>()
        })
        .await?;
        {
            let mut s = self.lock();
            s.frontiers = frontiers;
            s.committed = Some(depth);
            s.finished = None;
            s.level = None;
        }
        self.changed();
        Ok(())
    }

    /// Takes a new assignment: drops the level being made, the parts and replicas that moved
    /// away, restores the parts that moved here (from their replicas) and seeds new replica
    /// holders of its parts.
    async fn adopt(self: &Arc<Self>, new: Assignment, committed_plus_one: u32) -> anyhow::Result<()> {
        let (old, parts) = {
            let mut s = self.lock();
            let old = std::mem::take(&mut s.assignment);
            s.level = None;
            s.finished = None;
            (old, s.parts.clone())
        };
        let held: Vec<HeldPart> = parts.values().cloned().collect();
        tokio::task::spawn_blocking(move || {
            for p in held {
                let mut h = hold(&p);
                h.making = None;
                h.part.discard();
            }
        })
        .await?;
        let committed = self.lock().committed;
        if committed.map_or(0, |c| c + 1) != committed_plus_one && !(parts.is_empty() && committed.is_none())
        {
            return Err(anyhow!(
                "this worker's parts hold levels to {committed:?}, the coordinator's to depth {}",
                committed_plus_one as i64 - 1
            ));
        }
        let me = self.me;
        let owned: Vec<u32> = (0..self.cut.parts()).filter(|&k| new.owner[k as usize] == me).collect();
        let mut kept = BTreeMap::new();
        let mut seed = Vec::new();
        for &k in &owned {
            match parts.get(&k) {
                Some(p) => {
                    if new.replica[k as usize] != old.replica.get(k as usize).copied().unwrap_or(0) {
                        seed.push(k);
                    }
                    kept.insert(k, p.clone());
                }
                None => {
                    let part = self.acquire(k, &new, committed_plus_one).await?;
                    if new.replica[k as usize] != old.replica.get(k as usize).copied().unwrap_or(0)
                        || self.replicas.holds(k)
                    {
                        seed.push(k);
                    }
                    kept.insert(k, Arc::new(Mutex::new(Held { part, making: None })));
                }
            }
        }
        // Replicas this worker no longer holds.
        for k in 0..self.cut.parts() {
            if new.replica[k as usize] != me && self.replicas.holds(k) {
                self.replicas.drop_part(k)?;
            }
        }
        let dropped = parts.len() - parts.keys().filter(|k| kept.contains_key(k)).count();
        let sources = {
            let (index, moves, owner) = (self.index.clone(), self.moves.clone(), new.owner.clone());
            let rows_per_part = self.cut.rows_per_part;
            tokio::task::spawn_blocking(move || {
                Arc::new(index.sources_from(&moves, |r| owner[(r / rows_per_part) as usize] == me))
            })
            .await?
        };
        let frontiers = {
            let kept: Vec<(u32, HeldPart)> = kept.iter().map(|(k, p)| (*k, p.clone())).collect();
            tokio::task::spawn_blocking(move || {
                kept.iter().map(|(k, p)| (*k, hold(p).part.frontier.clone())).collect()
            })
            .await?
        };
        {
            let mut s = self.lock();
            s.parts = kept;
            s.frontiers = frontiers;
            s.sources = Some(sources);
            s.assignment = new.clone();
            s.committed = committed_plus_one.checked_sub(1);
        }
        let held = owned.len();
        tracing::info!(
            "epoch {}: {held} parts here ({dropped} moved away), replicas of {} parts",
            new.epoch,
            new.replica.iter().filter(|&&r| r == me).count()
        );
        if let Some(c) = committed_plus_one.checked_sub(1) {
            for k in seed {
                self.seed(k, c, &new).await?;
            }
        }
        self.changed();
        Ok(())
    }

    /// Part `k`, moving here: fresh at the start, else restored from its replica (held here,
    /// or fetched from its holder).
    async fn acquire(&self, k: u32, new: &Assignment, committed_plus_one: u32) -> anyhow::Result<OwnedPart> {
        if committed_plus_one == 0 {
            let index = self.index.clone();
            let cut = self.cut;
            return Ok(tokio::task::spawn_blocking(move || index.fresh_part(cut, k)).await?);
        }
        let stored: Vec<(PeerKind, u32, Vec<u8>)> = if self.replicas.holds(k) {
            self.replicas
                .levels(k, committed_plus_one)?
                .into_iter()
                .map(|(kind, d, b)| {
                    (if kind == Stored::Base { PeerKind::Base } else { PeerKind::Replica }, d, b)
                })
                .collect()
        } else {
            let holder = new.replica[k as usize];
            let address = new
                .peers
                .get(&holder)
                .ok_or_else(|| anyhow!("part {k} moved here, and its replica holder {holder} is unknown"))?;
            let request = v1::FetchReplicaRequest {
                job_id: self.id,
                part: k,
                through: committed_plus_one,
                from: self.me,
                epoch: new.epoch,
            };
            let mut delay = Duration::from_millis(100);
            let fetched = loop {
                match self.pool.fetch(address, request, self.max_message_bytes(), &self.traffic).await {
                    Ok(f) => break f,
                    // The holder may be gone too: a newer assignment then says so.
                    Err(s) if !self.superseded() && s.code() == tonic::Code::Unavailable => {
                        tokio::time::sleep(delay).await;
                        delay = (delay * 2).min(Duration::from_secs(2));
                    }
                    Err(s) => {
                        return Err(anyhow!(
                            "fetching part {k} from worker {holder}: {}",
                            cubefarm_proto::tls::describe_status(&s)
                        ))
                    }
                }
            };
            fetched.into_iter().map(|(m, b)| (m.kind, m.level, b)).collect()
        };
        let last = stored.last().map(|(_, d, _)| *d);
        if last != Some(committed_plus_one - 1) {
            return Err(anyhow!(
                "the replica of part {k} ends at depth {last:?}, not {}",
                committed_plus_one - 1
            ));
        }
        let (index, cut, job, words) = (self.index.clone(), self.cut, self.id, self.words);
        let part = tokio::task::spawn_blocking(move || -> anyhow::Result<OwnedPart> {
            let rows = cut.range(k).len();
            let mut levels = Vec::new();
            for (kind, depth, bytes) in &stored {
                let set = SparseRows::decode_rows(bytes, message_key(job, k, *kind, *depth), rows, words)
                    .map_err(|e| anyhow!("the replica of part {k}, depth {depth}: {e}"))?;
                let mut full = vec![0u64; rows * words];
                for r in 0..rows {
                    if let Some(row) = set.row(r as u32) {
                        full[r * words..][..words].copy_from_slice(row);
                    }
                }
                levels.push(full);
            }
            let found: Vec<&[u64]> = levels.iter().map(|l| l.as_slice()).collect();
            let mut part = index.fresh_part(cut, k);
            for level in found {
                part.next.copy_from_slice(level);
                part.commit();
            }
            Ok(part)
        })
        .await??;
        tracing::info!("part {k} restored from its replica through depth {}", committed_plus_one - 1);
        Ok(part)
    }

    /// Gives part `k`'s new replica holder what it needs: every entry before the frontier, and
    /// the frontier (level `committed`).
    async fn seed(self: &Arc<Self>, k: u32, committed: u32, assignment: &Assignment) -> anyhow::Result<()> {
        let holder = assignment.replica[k as usize];
        if holder == 0 || holder == self.me {
            return Ok(());
        }
        let part = self.lock().parts.get(&k).cloned().ok_or_else(|| anyhow!("part {k} is not here"))?;
        let (index, cut, job, words) = (self.index.clone(), self.cut, self.id, self.words);
        let messages = tokio::task::spawn_blocking(move || {
            let h = hold(&part);
            let p = &h.part;
            let mut out = Vec::new();
            if committed > 0 {
                let reachable = index.fresh_part(cut, k).unvisited;
                let base = p.found_before_frontier(&reachable);
                let key = message_key(job, k, PeerKind::Base, committed - 1);
                out.push((
                    PeerKind::Base,
                    committed - 1,
                    SparseRows::encode_rows(key, &base, words, &|_| true),
                ));
            }
            let key = message_key(job, k, PeerKind::Replica, committed);
            out.push((
                PeerKind::Replica,
                committed,
                SparseRows::encode_rows(key, &p.frontier.bits, words, &|_| true),
            ));
            out
        })
        .await?;
        for (kind, depth, bytes) in messages {
            let meta =
                Meta { job: self.id, epoch: assignment.epoch, level: depth, from: self.me, part: k, kind };
            self.deliver(holder, meta, bytes)
                .await
                .map_err(|e| anyhow!("seeding the replica of part {k}: {e}"))?;
        }
        Ok(())
    }

    /// Sends `bytes` to `worker`, retrying a failed link while the assignment lasts.
    async fn deliver(&self, worker: u64, meta: Meta, bytes: Vec<u8>) -> Result<(), Undelivered> {
        let mut delay = Duration::from_millis(100);
        loop {
            let address = {
                let s = self.lock();
                if s.moved_on(meta.epoch) {
                    return Err(Undelivered::MovedOn);
                }
                s.assignment.peers.get(&worker).cloned().ok_or(Undelivered::NoAddress(worker))?
            };
            // A send to a peer that was lost (stopped, not gone) may never end: it is given up
            // with its epoch, so that it holds no sending permit meanwhile.
            let sent = tokio::select! {
                sent = self.pool.send(&address, meta, &bytes, &self.traffic) => sent,
                _ = self.moved_on(meta.epoch) => return Err(Undelivered::MovedOn),
            };
            match sent {
                Ok(()) => return Ok(()),
                Err(s)
                    if matches!(
                        s.code(),
                        tonic::Code::InvalidArgument
                            | tonic::Code::PermissionDenied
                            | tonic::Code::Unauthenticated
                    ) =>
                {
                    return Err(Undelivered::Refused { worker, why: s.message().to_string() })
                }
                Err(s) => {
                    tracing::debug!("sending to worker {worker} failed ({}); retrying", s.message());
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(2));
                }
            }
        }
    }

    /// Starts making level `depth` of the current epoch in the owned parts: arms them for it
    /// (messages for it are merged from then on), then computes this worker's share.
    async fn begin_level(self: &Arc<Self>, depth: u32, direction: Direction) -> anyhow::Result<()> {
        let (epoch, held) = {
            let s = self.lock();
            (s.assignment.epoch, s.parts.values().cloned().collect::<Vec<_>>())
        };
        tokio::task::spawn_blocking(move || {
            for p in held {
                let mut h = hold(&p);
                h.part.discard();
                h.making = Some((depth, epoch));
            }
        })
        .await?;
        {
            let mut s = self.lock();
            if s.assignment.epoch != epoch {
                return Ok(()); // a new assignment came meanwhile
            }
            let senders: BTreeSet<u64> = match direction {
                Direction::Start => BTreeSet::new(),
                _ => s.assignment.owners().into_iter().filter(|&w| w != self.me).collect(),
            };
            let parts: BTreeMap<u32, PartLevel> =
                s.parts.keys().map(|&k| (k, PartLevel::default())).collect();
            s.level = Some(LevelState {
                depth,
                epoch,
                direction,
                senders,
                remaining: parts.len(),
                parts,
                counts: RowCounts::default(),
                traffic_at_start: self.traffic.totals(),
            });
        }
        tracing::debug!("level {depth} ({direction}) begins, epoch {epoch}");
        self.changed();
        self.check_finished(depth, epoch);
        let job = self.clone();
        tokio::spawn(async move {
            let result = match direction {
                Direction::Start => job.make_start(depth, epoch).await,
                Direction::Forward => job.push_level(depth, epoch).await,
                Direction::Backward => job.ask_level(depth, epoch).await,
            };
            if let Err(e) = result {
                if job.is_current(depth, epoch) {
                    job.fail(format!("level {depth}: {e}"));
                }
            }
        });
        Ok(())
    }

    /// Whether level `depth` of `epoch` is still being made.
    fn is_current(&self, depth: u32, epoch: u64) -> bool {
        self.lock().level.as_ref().is_some_and(|l| l.depth == depth && l.epoch == epoch)
    }

    /// What this worker reads for the current level, if it is still current.
    fn level_view(&self, depth: u32, epoch: u64) -> Option<LevelView> {
        let s = self.lock();
        let l = s.level.as_ref().filter(|l| l.depth == depth && l.epoch == epoch)?;
        Some(LevelView {
            frontier: Arc::new(OwnedFrontier::new(self.cut, s.frontiers.values().cloned())),
            owners: Arc::new(s.assignment.owner.clone()),
            parts: s.parts.clone(),
            senders: l.senders.iter().copied().collect(),
            sources: s.sources.clone()?,
        })
    }

    /// Level 0: the start entry in the part holding it.
    async fn make_start(self: &Arc<Self>, depth: u32, epoch: u64) -> anyhow::Result<()> {
        let Some(LevelView { parts, .. }) = self.level_view(depth, epoch) else { return Ok(()) };
        for (k, part) in parts {
            let (index, counting) = (self.index.clone(), self.counting);
            let counts = tokio::task::spawn_blocking(move || {
                let mut h = hold(&part);
                (h.making == Some((depth, epoch))).then(|| index.start_part(&mut h.part, counting))
            })
            .await?;
            let Some(counts) = counts else { return Ok(()) };
            let mut s = self.lock();
            if let Some(l) = s.level.as_mut().filter(|l| l.depth == depth && l.epoch == epoch) {
                if let Some(p) = l.parts.get_mut(&k) {
                    p.start_counts = counts;
                }
            }
            drop(s);
            self.local_done(depth, epoch, k);
        }
        Ok(())
    }

    /// A forward level: this worker's frontier images, part by part, into its own parts and to
    /// the owners of the others.
    async fn push_level(self: &Arc<Self>, depth: u32, epoch: u64) -> anyhow::Result<()> {
        let Some(LevelView { frontier: view, owners, parts: mine, sources, .. }) =
            self.level_view(depth, epoch)
        else {
            tracing::debug!("level {depth} of epoch {epoch} is over before it is pushed");
            return Ok(());
        };
        let empty = view.is_empty();
        let parts = self.cut.parts();
        // Start after this worker's first part, so that workers do not all send to one at once.
        let first = mine.keys().next().copied().unwrap_or(0);
        let mut sends = tokio::task::JoinSet::new();
        for i in 0..parts {
            let k = (first + 1 + i) % parts;
            if !self.is_current(depth, epoch) {
                return Ok(());
            }
            let owner = owners[k as usize];
            if owner == self.me {
                if !empty {
                    let (index, moves, sources, view, part) = (
                        self.index.clone(),
                        self.moves.clone(),
                        sources.clone(),
                        view.clone(),
                        mine[&k].clone(),
                    );
                    let rows = self.cut.range(k);
                    tokio::task::spawn_blocking(move || {
                        let mut h = hold(&part);
                        if h.making == Some((depth, epoch)) {
                            index.push_images(&moves, rows, &sources, &view, &mut h.part.next);
                        }
                    })
                    .await?;
                }
                self.local_done(depth, epoch, k);
                continue;
            }
            let bytes = if empty {
                Vec::new()
            } else {
                let (index, moves, sources, view) =
                    (self.index.clone(), self.moves.clone(), sources.clone(), view.clone());
                let (rows, words) = (self.cut.range(k), self.words);
                let key = message_key(self.id, k, PeerKind::Images, depth);
                let job = self.clone();
                tokio::task::spawn_blocking(move || {
                    // Only the rows that images reach are written, read and cleared: a part's
                    // buffer is as large as its rows, a sparse level's images are not.
                    let reached: Vec<bool> =
                        rows.clone().map(|t| owned::images_reach(t, &sources, &*view)).collect();
                    if !reached.contains(&true) {
                        return Vec::new();
                    }
                    let mut out = job.buffer(rows.len() * words);
                    let bytes = if index.push_images(&moves, rows, &sources, &view, &mut out) {
                        SparseRows::encode_rows(key, &out, words, &|i| reached[i])
                    } else {
                        Vec::new()
                    };
                    job.give_back_rows(out, words, &reached);
                    bytes
                })
                .await?
            };
            let permit = self.sending.clone().acquire_owned().await?;
            let job = self.clone();
            let meta =
                Meta { job: self.id, epoch, level: depth, from: self.me, part: k, kind: PeerKind::Images };
            sends.spawn(async move {
                let _permit = permit;
                job.deliver(owner, meta, bytes).await
            });
        }
        while let Some(sent) = sends.join_next().await {
            if let Err(e) = sent? {
                if self.is_current(depth, epoch) {
                    return Err(anyhow!(e));
                }
            }
        }
        Ok(())
    }

    /// A backward level: each owned part's unvisited entries are first tested against this
    /// worker's own frontier, then those still unreached are asked of the other owners one
    /// after another (each asked only for rows with a neighbour row it owns), so that each
    /// message carries only what the owners before it did not reach. Parts go side by side.
    async fn ask_level(self: &Arc<Self>, depth: u32, epoch: u64) -> anyhow::Result<()> {
        let Some(LevelView { frontier: view, owners, parts: mine, senders, .. }) =
            self.level_view(depth, epoch)
        else {
            return Ok(());
        };
        let mut parts = tokio::task::JoinSet::new();
        for (i, (&k, part)) in mine.iter().enumerate() {
            // Each part asks the peers in its own order, so that they are asked evenly.
            let mut peers = senders.clone();
            let turn = if peers.is_empty() { 0 } else { i % peers.len() };
            peers.rotate_left(turn);
            let (job, view, owners, part) = (self.clone(), view.clone(), owners.clone(), part.clone());
            parts.spawn(async move { job.ask_part(depth, epoch, k, part, view, owners, peers).await });
        }
        while let Some(asked) = parts.join_next().await {
            if let Err(e) = asked? {
                if self.is_current(depth, epoch) {
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Part `k` of a backward level (see [`Self::ask_level`]).
    #[allow(clippy::too_many_arguments)]
    async fn ask_part(
        self: &Arc<Self>,
        depth: u32,
        epoch: u64,
        k: u32,
        part: HeldPart,
        view: Arc<OwnedFrontier>,
        owners: Arc<Vec<u64>>,
        peers: Vec<u64>,
    ) -> anyhow::Result<()> {
        let (index, moves, cut, words) = (self.index.clone(), self.moves.clone(), self.cut, self.words);
        let rows = cut.range(k);
        {
            let (index, moves, rows, part) = (index.clone(), moves.clone(), rows.clone(), part.clone());
            tokio::task::spawn_blocking(move || {
                let mut h = hold(&part);
                if h.making == Some((depth, epoch)) {
                    let p = &mut h.part;
                    let open = FullRows::at(rows.start, &p.unvisited, words);
                    index.pull_hits(&moves, rows, &open, &view, &mut p.next);
                }
            })
            .await?;
        }
        let mut events = self.events.subscribe();
        for peer in peers {
            if !self.is_current(depth, epoch) {
                return Ok(());
            }
            let permit = self.sending.clone().acquire_owned().await?;
            let (index, moves, rows, part, owners, job) =
                (index.clone(), moves.clone(), rows.clone(), part.clone(), owners.clone(), self.clone());
            let key = message_key(self.id, k, PeerKind::Open, depth);
            // The entries still unreached, in the rows with a neighbour row `peer` owns.
            let ask = tokio::task::spawn_blocking(move || {
                let h = hold(&part);
                if h.making != Some((depth, epoch)) {
                    return None;
                }
                let mut misses = job.buffer(rows.len() * words);
                misses
                    .iter_mut()
                    .zip(&h.part.unvisited)
                    .zip(&h.part.next)
                    .for_each(|((m, u), n)| *m = u & !n);
                let first = rows.start;
                let keep = |i: usize| {
                    index.open_rows_for(&moves, first + i as u32, |s| {
                        owners[(s / cut.rows_per_part) as usize] == peer
                    })
                };
                let any =
                    misses.chunks(words).enumerate().any(|(i, row)| row.iter().any(|&w| w != 0) && keep(i));
                let bytes = any.then(|| SparseRows::encode_rows(key, &misses, words, &keep));
                job.give_back(misses);
                Some(bytes)
            })
            .await?;
            let Some(ask) = ask else { return Ok(()) };
            match ask {
                // Nothing to ask of this peer: its (empty) answer is in.
                None => self.answered(depth, epoch, k, peer),
                Some(bytes) => {
                    let meta = Meta {
                        job: self.id,
                        epoch,
                        level: depth,
                        from: self.me,
                        part: k,
                        kind: PeerKind::Open,
                    };
                    let sent = self.deliver(peer, meta, bytes).await;
                    drop(permit);
                    sent?;
                    // Its hits come back as a message of their own (see `take_rows`).
                    loop {
                        {
                            let s = self.lock();
                            let Some(l) = s.level.as_ref().filter(|l| l.depth == depth && l.epoch == epoch)
                            else {
                                return Ok(());
                            };
                            if l.parts.get(&k).is_some_and(|p| p.from.contains(&peer)) {
                                break;
                            }
                        }
                        events.changed().await?;
                    }
                }
            }
        }
        self.local_done(depth, epoch, k);
        Ok(())
    }

    /// `peer`'s answer for part `k` is in (with nothing to merge).
    fn answered(self: &Arc<Self>, depth: u32, epoch: u64, k: u32, peer: u64) {
        {
            let mut s = self.lock();
            let Some(l) = s.level.as_mut().filter(|l| l.depth == depth && l.epoch == epoch) else { return };
            if let Some(p) = l.parts.get_mut(&k) {
                p.from.insert(peer);
            }
        }
        self.changed();
        self.maybe_finish(depth, epoch, k);
    }

    /// Waits until level `depth` of `epoch` is being made here; `false` when it never will be
    /// (an older epoch, or a level already over).
    async fn await_level(&self, depth: u32, epoch: u64) -> bool {
        let mut events = self.events.subscribe();
        loop {
            {
                let s = self.lock();
                if s.dropped || s.assignment.epoch > epoch || s.committed.is_some_and(|c| c >= depth) {
                    return false;
                }
                if s.level.as_ref().is_some_and(|l| l.depth == depth && l.epoch == epoch) {
                    return true;
                }
                if s.finished.is_some_and(|f| f.depth == depth && f.epoch == epoch) {
                    return false;
                }
            }
            if events.changed().await.is_err() {
                return false;
            }
        }
    }

    /// A message from another worker.
    pub async fn take(self: &Arc<Self>, meta: Meta, bytes: Vec<u8>) -> Result<(), Status> {
        if meta.part >= self.cut.parts() {
            return Err(Status::invalid_argument(format!("no part {}", meta.part)));
        }
        match meta.kind {
            PeerKind::Images | PeerKind::Hits => self.take_rows(meta, bytes).await,
            PeerKind::Open => self.answer_open(meta, bytes).await,
            PeerKind::Replica | PeerKind::Base => self.keep_replica(meta, bytes).await,
            PeerKind::Level => Err(Status::invalid_argument("levels go to the coordinator")),
            PeerKind::Rows => Err(Status::invalid_argument("h11 rows are fetched, not delivered")),
        }
    }

    /// Images or hits for an owned part: merged into the level being made.
    async fn take_rows(self: &Arc<Self>, meta: Meta, bytes: Vec<u8>) -> Result<(), Status> {
        if !self.await_level(meta.level, meta.epoch).await {
            return Ok(()); // stale: the sender will hear of the new epoch
        }
        let part = {
            let s = self.lock();
            let level = s.level.as_ref().filter(|l| l.depth == meta.level && l.epoch == meta.epoch);
            let Some(level) = level else { return Ok(()) };
            let Some(pl) = level.parts.get(&meta.part) else {
                return Err(Status::invalid_argument(format!("part {} is not owned here", meta.part)));
            };
            if !level.senders.contains(&meta.from) {
                return Err(Status::invalid_argument(format!(
                    "worker {} sends nothing this level",
                    meta.from
                )));
            }
            if pl.from.contains(&meta.from) || pl.finishing {
                return Ok(()); // a duplicate
            }
            s.parts[&meta.part].clone()
        };
        if !bytes.is_empty() {
            let _permit = self.decoding.acquire().await.map_err(|e| Status::internal(e.to_string()))?;
            let (rows, words, key) = (
                self.cut.range(meta.part),
                self.words,
                message_key(self.id, meta.part, meta.kind, meta.level),
            );
            let merged = tokio::task::spawn_blocking(move || -> Result<(), Status> {
                let set = SparseRows::decode_rows(&bytes, key, rows.len(), words)
                    .map_err(|e| Status::data_loss(format!("a damaged message: {e}")))?;
                // Merged only into the level it was sent for.
                let mut h = hold(&part);
                if h.making == Some((meta.level, meta.epoch)) {
                    h.part.merge(&Offset(rows.start, &set));
                }
                Ok(())
            })
            .await
            .map_err(|e| Status::internal(e.to_string()))?;
            merged?;
        }
        self.answered(meta.level, meta.epoch, meta.part, meta.from);
        Ok(())
    }

    /// Waits until this worker's frontier is the one level `depth` of `epoch` reads (it is
    /// making that level, or made it and awaits its commit); `false` when it never will be.
    async fn await_frontier(&self, depth: u32, epoch: u64) -> bool {
        let mut events = self.events.subscribe();
        loop {
            {
                let s = self.lock();
                if s.dropped || s.assignment.epoch > epoch || s.committed.is_some_and(|c| c >= depth) {
                    return false;
                }
                let making = s.level.as_ref().is_some_and(|l| l.depth == depth && l.epoch == epoch);
                let made = s.finished.is_some_and(|f| f.depth == depth && f.epoch == epoch);
                if making || made {
                    return true;
                }
            }
            if events.changed().await.is_err() {
                return false;
            }
        }
    }

    /// Another owner's unvisited rows: answered with those that have a neighbour in this
    /// worker's frontier (also after this worker has finished its own parts).
    async fn answer_open(self: &Arc<Self>, meta: Meta, bytes: Vec<u8>) -> Result<(), Status> {
        if !self.await_frontier(meta.level, meta.epoch).await {
            return Ok(());
        }
        let (view, owner) = {
            let s = self.lock();
            let view = OwnedFrontier::new(self.cut, s.frontiers.values().cloned());
            (view, s.assignment.owner[meta.part as usize])
        };
        if owner != meta.from {
            return Err(Status::invalid_argument(format!(
                "worker {} does not own part {}",
                meta.from, meta.part
            )));
        }
        let hits = {
            let _permit = self.decoding.acquire().await.map_err(|e| Status::internal(e.to_string()))?;
            let (index, moves, rows, words) =
                (self.index.clone(), self.moves.clone(), self.cut.range(meta.part), self.words);
            let (key, reply) = (
                message_key(self.id, meta.part, PeerKind::Open, meta.level),
                message_key(self.id, meta.part, PeerKind::Hits, meta.level),
            );
            let job = self.clone();
            tokio::task::spawn_blocking(move || -> Result<Vec<u8>, Status> {
                if bytes.is_empty() || view.is_empty() {
                    return Ok(Vec::new());
                }
                let open = SparseRows::decode_rows(&bytes, key, rows.len(), words)
                    .map_err(|e| Status::data_loss(format!("a damaged message: {e}")))?;
                let mut out = job.buffer(rows.len() * words);
                index.pull_hits(&moves, rows.clone(), &Offset(rows.start, &open), &view, &mut out);
                let hits = SparseRows::encode_rows(reply, &out, words, &|_| true);
                job.give_back(out);
                Ok(hits)
            })
            .await
            .map_err(|e| Status::internal(e.to_string()))??
        };
        let answer = Meta { from: self.me, kind: PeerKind::Hits, ..meta };
        self.deliver(meta.from, answer, hits).await.map_err(|e| Status::unavailable(e.to_string()))
    }

    /// A committed level (or base) of a part whose replica this worker holds.
    async fn keep_replica(self: &Arc<Self>, meta: Meta, bytes: Vec<u8>) -> Result<(), Status> {
        let mut events = self.events.subscribe();
        loop {
            let epoch = self.lock().assignment.epoch;
            if epoch >= meta.epoch {
                break;
            }
            if events.changed().await.is_err() {
                return Ok(());
            }
        }
        let holder = self.lock().assignment.replica[meta.part as usize];
        if holder != self.me {
            return Ok(()); // the part's replica moved on; its owner seeds the new holder
        }
        let kind = if meta.kind == PeerKind::Base { Stored::Base } else { Stored::Level };
        // Checked before it is kept, so that a damaged copy is refused while its owner lives.
        let (key, rows, words) = (
            message_key(self.id, meta.part, meta.kind, meta.level),
            self.cut.range(meta.part).len(),
            self.words,
        );
        let job = self.clone();
        tokio::task::spawn_blocking(move || -> Result<(), Status> {
            SparseRows::decode_rows(&bytes, key, rows, words)
                .map_err(|e| Status::data_loss(format!("a damaged replica: {e}")))?;
            job.replicas
                .store(meta.part, kind, meta.level, &bytes)
                .map_err(|e| Status::internal(format!("cannot keep a replica: {e}")))
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?
    }

    /// The stored levels of a part whose replica this worker holds, for its new owner. Served
    /// without waiting for this worker to take the requester's assignment (the two may be
    /// fetching parts from each other); only a requester of an older one is refused.
    async fn replica_for(
        &self,
        r: &v1::FetchReplicaRequest,
    ) -> Result<Vec<(PeerKind, u32, Vec<u8>)>, Status> {
        let (epoch, owner) = {
            let s = self.lock();
            (s.assignment.epoch, s.assignment.owner.get(r.part as usize).copied())
        };
        if r.epoch < epoch || (r.epoch == epoch && owner != Some(r.from)) {
            return Err(Status::permission_denied(format!(
                "worker {} does not own part {} in assignment {}",
                r.from, r.part, r.epoch
            )));
        }
        let stored = self.replicas.levels(r.part, r.through).map_err(|e| Status::not_found(e.to_string()))?;
        Ok(stored
            .into_iter()
            .map(|(k, d, b)| (if k == Stored::Base { PeerKind::Base } else { PeerKind::Replica }, d, b))
            .collect())
    }

    /// This worker's own contribution to part `k` is in.
    fn local_done(self: &Arc<Self>, depth: u32, epoch: u64, k: u32) {
        {
            let mut s = self.lock();
            let Some(l) = s.level.as_mut().filter(|l| l.depth == depth && l.epoch == epoch) else { return };
            if let Some(p) = l.parts.get_mut(&k) {
                p.local = true;
            }
        }
        self.maybe_finish(depth, epoch, k);
    }

    /// Finishes part `k` once everything it waits for is in: its new entries counted, then
    /// stored by its replica holder.
    fn maybe_finish(self: &Arc<Self>, depth: u32, epoch: u64, k: u32) {
        let (direction, start_counts, part, holder) = {
            let mut s = self.lock();
            let holder = s.assignment.replica[k as usize];
            let part = s.parts.get(&k).cloned();
            let Some(l) = s.level.as_mut().filter(|l| l.depth == depth && l.epoch == epoch) else { return };
            let senders = l.senders.clone();
            let direction = l.direction;
            let Some(p) = l.parts.get_mut(&k) else { return };
            if p.finishing || !p.local || !senders.is_subset(&p.from) {
                return;
            }
            p.finishing = true;
            (direction, p.start_counts, part, holder)
        };
        let Some(part) = part else { return };
        let job = self.clone();
        tokio::spawn(async move {
            let Ok(_permit) = job.finishing.clone().acquire_owned().await else { return };
            let (index, counting, words, id) = (job.index.clone(), job.counting, job.words, job.id);
            let upload = job.upload_levels;
            let made = tokio::task::spawn_blocking(move || {
                let mut h = hold(&part);
                if h.making != Some((depth, epoch)) {
                    return None;
                }
                let p = &mut h.part;
                let counts = match direction {
                    Direction::Start => start_counts,
                    _ => index.finish_part(p, direction, counting),
                };
                let key = message_key(id, k, PeerKind::Replica, depth);
                let replica = (holder != 0).then(|| SparseRows::encode_rows(key, &p.next, words, &|_| true));
                let key = message_key(id, k, PeerKind::Level, depth);
                let level = upload.then(|| SparseRows::encode_rows(key, &p.next, words, &|_| true));
                Some((counts, replica, level))
            })
            .await;
            let (counts, replica, level) = match made {
                Ok(Some(m)) => m,
                Ok(None) => return, // the level was dropped
                Err(e) => return job.fail(format!("finishing part {k}: {e}")),
            };
            if let Some(bytes) = level {
                let meta =
                    Meta { job: id, epoch, level: depth, from: job.me, part: k, kind: PeerKind::Level };
                if let Err(e) = job.upload_part(meta, bytes).await {
                    return job.fail(format!("sending part {k}'s level {depth} to the coordinator: {e}"));
                }
            }
            if let Some(bytes) = replica {
                let meta =
                    Meta { job: id, epoch, level: depth, from: job.me, part: k, kind: PeerKind::Replica };
                if let Err(e) = job.deliver(holder, meta, bytes).await {
                    if job.is_current(depth, epoch) {
                        job.fail(format!("storing part {k}'s level {depth} with worker {holder}: {e}"));
                    }
                    return;
                }
            }
            job.part_finished(depth, epoch, counts);
        });
    }

    fn part_finished(&self, depth: u32, epoch: u64, counts: RowCounts) {
        tracing::debug!("level {depth} of epoch {epoch}: a part is finished");
        {
            let mut s = self.lock();
            let Some(l) = s.level.as_mut().filter(|l| l.depth == depth && l.epoch == epoch) else { return };
            l.counts = l.counts + counts;
            l.remaining -= 1;
        }
        self.check_finished(depth, epoch);
    }

    /// Reports the level once every owned part is finished.
    fn check_finished(&self, depth: u32, epoch: u64) {
        {
            let mut s = self.lock();
            let Some(l) = s.level.as_ref().filter(|l| l.depth == depth && l.epoch == epoch) else { return };
            if l.remaining > 0 {
                return;
            }
            let (sent, received) = self.traffic.totals();
            let f = Finished {
                depth,
                epoch,
                counts: l.counts,
                sent: sent - l.traffic_at_start.0,
                received: received - l.traffic_at_start.1,
            };
            s.finished = Some(f);
            s.level = None;
        }
        self.changed();
    }

    /// Sends a finished part's new entries to the coordinator (a table build reads them).
    async fn upload_part(&self, meta: Meta, bytes: Vec<u8>) -> anyhow::Result<()> {
        let chunks = meta.chunks(&bytes);
        chunks.iter().for_each(|c| self.traffic.sent(c.encoded_len()));
        let mut client = self.coordinator.clone();
        let reply = client
            .upload_level(tokio_stream::iter(chunks))
            .await
            .map_err(|s| anyhow!("{}", cubefarm_proto::tls::describe_status(&s)))?;
        self.traffic.received(reply.get_ref().encoded_len());
        Ok(())
    }
}

/// A part's row set (rows numbered from 0) read by row number of the whole space.
struct Offset<'a>(u32, &'a SparseRows);

impl RowBits for Offset<'_> {
    #[inline]
    fn row(&self, r: u32) -> Option<&[u64]> {
        self.1.row(r.checked_sub(self.0)?)
    }
}
