//! A row search whose rows the workers own (`shared::runtime::rows`), on this worker: the
//! process-wide [`Host`] (its links, limits, the id it goes by, the job it takes part in and
//! the H48 level rows it keeps) and the sync loop with the coordinator ([`Host::run`]): the
//! worker says where it stands ([`Status`]), the coordinator answers with the plan. The job
//! itself runs in `job.rs`; messages between workers come through `peer.rs`.

mod job;
pub mod link;
pub mod peer;
pub mod sync;

use crate::connection::{classify, Client, Fault, Traffic};
use cubefarm_proto::v1;
use job::{Job, Links};
use peer::PeerPool;
use prost::Message;
use shared::runtime::rows::JobInfo;
use shared::runtime::WorkerId;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::watch;
use tonic::Status as RpcStatus;

/// Removes this process's temporary directory of levels (`--state-dir` not given), with the
/// levels of a job it did not finish: nothing else would, as the name holds the process id.
pub fn remove_temporary_levels() {
    let _ = std::fs::remove_dir_all(job::levels_root(None));
}

/// What the worker process holds: its links, its limits, the id it goes by, and the job.
pub struct Host {
    pub traffic: Arc<Traffic>,
    pub pool: Arc<PeerPool>,
    /// Where the levels of row searches and this worker's id are kept (else a temporary
    /// directory, and no id across restarts).
    pub state_dir: Option<PathBuf>,
    /// The most memory this worker may use.
    pub mem_limit: u64,
    /// Where row searches' packed indexes are kept (`--index-dir`).
    pub index_dir: Option<PathBuf>,
    job: Mutex<Option<Arc<Job>>>,
    /// Bumped whenever the job changes: messages waiting for it look again.
    events: watch::Sender<u64>,
    /// The h11 level rows of an H48 build that this worker made or fetched.
    pub kept: crate::kept::Kept,
    /// The id the coordinator last gave this worker (0: none yet).
    last_id: AtomicU64,
    peers: Arc<RwLock<HashMap<WorkerId, String>>>,
}

/// The file under `--state-dir` that keeps the worker's id, so that a restarted worker
/// registers as itself and finds its parts' levels.
const ID_FILE: &str = "worker-id";

impl Host {
    pub fn new(traffic: Arc<Traffic>, pool: PeerPool, state_dir: Option<PathBuf>, mem_limit: u64) -> Self {
        if let Some(dir) = &state_dir {
            if let Err(e) = std::fs::create_dir_all(dir) {
                tracing::warn!("cannot create {}: {e}", dir.display());
            }
        }
        let id = state_dir
            .as_ref()
            .and_then(|d| std::fs::read_to_string(d.join(ID_FILE)).ok())
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0);
        Host {
            traffic,
            pool: Arc::new(pool),
            state_dir,
            mem_limit,
            index_dir: None,
            job: Mutex::new(None),
            events: watch::channel(0).0,
            kept: Default::default(),
            last_id: AtomicU64::new(id),
            peers: Default::default(),
        }
    }

    /// The host with row searches' packed indexes kept in `dir` (`--index-dir`).
    pub fn with_index_dir(self, dir: Option<PathBuf>) -> Self {
        Host { index_dir: dir, ..self }
    }

    fn current(&self) -> Option<Arc<Job>> {
        self.job.lock().ok().and_then(|j| j.clone())
    }

    /// The job `id`, waiting a little for it (a peer may speak before this worker has taken
    /// the job's first plan).
    pub async fn job_for(&self, id: u64) -> Result<Arc<Job>, RpcStatus> {
        let mut events = self.events.subscribe();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(job) = self.current().filter(|j| j.info.id == id) {
                return Ok(job);
            }
            if tokio::time::timeout_at(deadline, events.changed()).await.is_err() {
                return Err(RpcStatus::failed_precondition(format!("this worker has no job {id:016x}")));
            }
        }
    }

    /// The id to register with: the one the coordinator gave this worker last (0: none),
    /// under which it keeps its parts.
    pub fn previous_id(&self) -> u64 {
        self.last_id.load(Ordering::Relaxed)
    }

    /// Takes the id a registration gave. Under another id than before, what this worker held
    /// is nobody's: the job and the kept h11 rows are dropped.
    pub fn registered_as(&self, id: u64) {
        let last = self.last_id.swap(id, Ordering::Relaxed);
        if last != id {
            self.drop_job();
            self.kept.clear();
            if let Some(dir) = &self.state_dir {
                if let Err(e) = std::fs::write(dir.join(ID_FILE), format!("{id}\n")) {
                    tracing::warn!("cannot keep this worker's id in {}: {e}", dir.display());
                }
            }
        }
    }

    /// The longest message of `kind` of job `id`, if it is this worker's job.
    pub fn max_message_bytes(&self, id: u64, kind: v1::PeerKind) -> Option<u64> {
        self.current().filter(|j| j.info.id == id).and_then(|j| j.max_message_bytes(kind))
    }

    /// Drops the job (its memory; its levels stay on disk) and any kept h11 rows.
    pub fn drop_job(&self) {
        self.kept.clear();
        let job = self.job.lock().ok().and_then(|mut j| j.take());
        drop(job);
        self.events.send_modify(|n| *n += 1);
    }

    /// The job is over: its levels are removed too.
    fn finish_job(&self) {
        let job = self.current();
        self.drop_job();
        if let Some(job) = job {
            let dir = job::levels_root(self.state_dir.as_deref()).join(format!("job-{:016x}", job.info.id));
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    /// Runs a row search with the coordinator until it is over (`Ok`) or the link fails: the
    /// worker reports its status (at once when it changes), the coordinator answers with the
    /// plan when it changed (a long poll).
    pub async fn run(self: &Arc<Self>, client: &mut Client, worker: u64) -> Result<(), Fault> {
        // The status of the job being watched (one receiver, so that a change is seen once).
        let mut watching: Option<(u64, watch::Receiver<shared::runtime::rows::Status>)> = None;
        loop {
            let job = self.current().filter(|j| j.me == worker);
            if watching.as_ref().map(|w| w.0) != job.as_ref().map(|j| j.info.id) {
                watching = job.as_ref().map(|j| (j.info.id, j.status()));
            }
            let mut status = watching.as_mut().map(|w| &mut w.1);
            let (sent_bytes, received_bytes) = self.traffic.totals();
            let mut request =
                v1::RowsSyncRequest { worker_id: worker, sent_bytes, received_bytes, ..Default::default() };
            if let (Some(job), Some(status)) = (&job, status.as_mut()) {
                sync::put_status(&mut request, job.info.id, &status.borrow_and_update());
            }
            self.traffic.sent(request.encoded_len());
            let reply = tokio::select! {
                r = client.rows_sync(request) => r.map_err(|s| classify("lost the coordinator", s))?.into_inner(),
                // Something to report (a finished level, a failure): report it at once.
                Some(Ok(())) = async { Some(status.as_mut()?.changed().await) } => continue,
            };
            self.traffic.received(reply.encoded_len());
            if reply.done {
                self.finish_job();
                return Ok(());
            }
            if reply.wait {
                continue;
            }
            if let Ok(mut peers) = self.peers.write() {
                *peers = reply.peers.iter().map(|p| (p.worker_id, p.address.clone())).collect();
            }
            let job = match self.current().filter(|j| j.info.id == reply.job_id && j.me == worker) {
                Some(job) => job,
                None => self.start(sync::job_of(&reply), worker, client.clone()),
            };
            if reply.epoch != 0 {
                match sync::plan_of(&reply) {
                    Ok(plan) => job.plan(plan),
                    Err(why) => return Err(Fault::Fatal(anyhow::anyhow!("the coordinator's plan: {why}"))),
                }
            }
        }
    }

    fn start(&self, info: JobInfo, me: WorkerId, coordinator: Client) -> Arc<Job> {
        let links = Links {
            traffic: self.traffic.clone(),
            pool: self.pool.clone(),
            peers: self.peers.clone(),
            coordinator,
            state_dir: self.state_dir.clone(),
            mem_limit: self.mem_limit,
            index_dir: self.index_dir.clone(),
        };
        let job = Arc::new(Job::start(info, me, links));
        if let Ok(mut j) = self.job.lock() {
            *j = Some(job.clone());
        }
        self.events.send_modify(|n| *n += 1);
        job
    }
}
