//! Where the job's thread and the gRPC service meet ([`Hub`]): the workers ([`Members`]), with
//! liveness apart from leases, and the job's work now ([`Work`]): a level of independent
//! leased tasks (`leases.rs`: a product job's cosets, [`Hub::run_cosets`]; an H48 build's rows,
//! [`Hub::run_h48_rows`]), or a row search whose rows the workers own (`rows.rs`, its core
//! `shared::runtime::rows::RowsCoordinator`). The protocols' state and rules are those cores';
//! the hub holds them under one lock, feeds them what the workers say and wakes whoever waits.
//!
//! Every wait here wakes at least every 200 ms to [`Hub::tick`]: workers silent for longer
//! than the liveness timeout are declared lost, their leases handed out again at once and
//! their parts moved, rather than a level waiting out a lease.

use super::members::Members;
use super::work::{holds, Lease, Work};
use shared::runtime::rows::CoordinatorEvent;
use shared::shard::{self, ShardKey};
use shared::units::gib;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The answer to a worker's poll.
pub enum Poll {
    Task(Lease),
    /// Nothing to do now; poll again.
    Wait,
    /// The job is a row search whose rows the workers own: sync instead.
    OwnedRows,
    /// The job is finished.
    Done,
    /// The coordinator does not know this worker (or declared it lost): register again.
    Unknown,
}

/// The answer to a worker's `RowsSync`.
pub enum SyncAnswer {
    /// The coordinator does not know this worker (or declared it lost): register again.
    Unknown,
    /// No row search runs (any more).
    Done,
    /// The worker holds what it should: ask again.
    Wait,
    /// The job and its plan, and where the live workers are.
    Do(Box<cubefarm_proto::v1::RowsSyncReply>),
}

/// A snapshot for `coordinator status` and the progress line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Status {
    pub depth: u32,
    pub tasks: u64,
    pub done: u64,
    pub leased: u64,
    pub live_workers: u32,
    pub finished: bool,
}

/// What a distributed job moved, for `--json`'s "traffic".
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Traffic {
    /// Bytes of every message through the coordinator's links, both ways.
    pub through_coordinator_bytes: u64,
    pub workers: Vec<WorkerTraffic>,
}

impl Traffic {
    /// One line: bytes through the coordinator and received by the workers (all, and the most
    /// by one).
    pub fn summary(&self) -> String {
        let received: u64 = self.workers.iter().map(|w| w.received_bytes).sum();
        let most = self.workers.iter().map(|w| w.received_bytes).max().unwrap_or(0);
        format!(
            "traffic: {} through the coordinator, {} received by {} workers (at most {} by one)",
            gib(self.through_coordinator_bytes),
            gib(received),
            self.workers.len(),
            gib(most)
        )
    }
}

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct WorkerTraffic {
    pub name: String,
    /// Bytes the worker reports on all its links (coordinator and peers).
    pub received_bytes: u64,
    pub sent_bytes: u64,
    /// Rows it owned at the end (a row search).
    pub rows: u64,
}

pub(super) struct State {
    pub(super) job: u64,
    pub(super) job_spec: String,
    pub(super) members: Members,
    pub(super) work: Work,
    pub(super) done: bool,
    /// Why the job cannot go on (set by [`Hub::abort`]).
    pub(super) aborted: Option<String>,
    /// Inputs of the whole job by name (an H48 build's homes of its levels), encoded as shards.
    pub(super) named_inputs: HashMap<String, Arc<[u8]>>,
    /// Workers that take no task for now: they have no room for the rows they would keep.
    pub(super) full: BTreeSet<u64>,
}

/// A condition variable that counts its notifications, so that a waiter can tell whether a
/// change came since it last looked.
#[derive(Default)]
pub(super) struct Signal {
    condvar: Condvar,
    generation: AtomicU64,
}

impl Signal {
    pub(super) fn notify_all(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.condvar.notify_all();
    }

    /// Releases `guard` until a notification or `limit`, and takes it back.
    pub(super) fn wait<'a>(&self, guard: MutexGuard<'a, State>, limit: Duration) -> MutexGuard<'a, State> {
        self.condvar.wait_timeout(guard, limit).unwrap_or_else(|e| e.into_inner()).0
    }
}

pub struct Hub {
    state: Mutex<State>,
    pub(super) changed: Signal,
    pub lease_time: Duration,
    /// How often workers call `Heartbeat`.
    pub heartbeat: Duration,
    pub tasks_per_level: usize,
    /// The leases' clock starts here.
    started: Instant,
}

impl Hub {
    pub fn new(
        job: u64,
        job_spec: String,
        lease_time: Duration,
        liveness: Duration,
        tasks_per_level: usize,
    ) -> Self {
        Hub {
            state: Mutex::new(State {
                job,
                job_spec,
                members: Members::new(liveness),
                work: Work::Idle,
                done: false,
                aborted: None,
                named_inputs: HashMap::new(),
                full: BTreeSet::new(),
            }),
            changed: Signal::default(),
            lease_time,
            heartbeat: (liveness / 6).clamp(Duration::from_millis(100), Duration::from_secs(5)),
            tasks_per_level: tasks_per_level.max(1),
            started: Instant::now(),
        }
    }

    /// Milliseconds since the hub started (the leases' clock).
    pub(super) fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a worker (see [`Members::register`] for `previous`).
    pub fn register(
        &self,
        name: &str,
        threads: u32,
        (memory_bytes, mem_limit): (u64, u64),
        peer_address: &str,
        previous: u64,
    ) -> u64 {
        let mut s = self.lock();
        let id = s.members.register(name, threads, mem_limit, peer_address, previous);
        match &mut s.work {
            Work::Rows(run) => run.core.handle(CoordinatorEvent::Joined { worker: id, threads }),
            // A worker that registers again holds no lease: its tasks go out again now.
            Work::Leases { table, .. } => {
                for task in table.forget_worker(id) {
                    tracing::info!("task {task} handed out again: worker {id} registered again");
                }
            }
            Work::Idle => {}
        }
        let gib = |b: u64| if b > 0 { shared::units::gib(b) } else { "unknown".to_string() };
        tracing::info!(
            "worker {id} ({name}) registered: {threads} threads, memory {}, limit {}, peers reach it at {peer_address}",
            gib(memory_bytes),
            gib(mem_limit)
        );
        self.changed.notify_all();
        id
    }

    /// A worker's heartbeat; false if it must register again.
    pub fn heartbeat(&self, worker: u64, sent: u64, received: u64) -> bool {
        self.lock().members.heartbeat(worker, sent, received)
    }

    /// Counts bytes of the coordinator's messages with `worker` (0: not known yet).
    pub fn count(&self, worker: u64, sent: usize, received: usize) {
        self.lock().members.count(worker, sent as u64, received as u64);
    }

    /// Declares silent workers lost (their leases go back at once, a row search moves their
    /// parts) and hands out again the leases that ended. Called by every wait loop.
    pub(super) fn tick(&self, s: &mut State) {
        let lost = s.members.expire(Instant::now());
        let now = self.now_ms();
        let members = &s.members;
        let changed = match &mut s.work {
            Work::Rows(run) => {
                for &worker in &lost {
                    run.core.handle(CoordinatorEvent::Lost { worker });
                }
                !lost.is_empty()
            }
            Work::Leases { table, .. } => {
                let requeued = table.expire(now, |w| members.is_live(w));
                for (task, worker) in &requeued {
                    let why =
                        if members.is_live(*worker) { "its lease expired" } else { "its worker is lost" };
                    tracing::warn!("task {task} of worker {worker} handed out again: {why}");
                }
                !requeued.is_empty() || !lost.is_empty()
            }
            Work::Idle => !lost.is_empty(),
        };
        if changed {
            self.changed.notify_all();
        }
    }

    /// Stops the job: the running level fails with `why`.
    pub fn abort(&self, why: String) {
        self.lock().aborted.get_or_insert(why);
        self.changed.notify_all();
    }

    /// Marks the job finished: polls answer `done`.
    pub fn finish(&self) {
        let mut s = self.lock();
        s.done = true;
        s.work = Work::Idle;
        self.changed.notify_all();
    }

    /// Waits (at most `limit`) until every live worker was told that the job is done.
    pub fn wait_for_goodbyes(&self, limit: Duration) {
        let end = Instant::now() + limit;
        let mut s = self.lock();
        loop {
            self.tick(&mut s);
            let pending = s.members.live().filter(|m| !m.dismissed).count();
            let now = Instant::now();
            if pending == 0 || now >= end {
                return;
            }
            s = self.changed.wait(s, (end - now).min(Duration::from_millis(200)));
        }
    }

    pub fn status(&self) -> Status {
        let s = self.lock();
        let live_workers = s.members.live().count() as u32;
        let mut status = Status { live_workers, finished: s.done, ..Default::default() };
        match &s.work {
            Work::Leases { table, .. } => {
                status.depth = table.level;
                (status.tasks, status.done, status.leased) = table.counts();
            }
            Work::Rows(run) => {
                let plan = run.core.plan();
                status.depth = plan.level.map_or(0, |l| l.depth);
                let (done, all) = run.core.progress();
                (status.tasks, status.done, status.leased) = (all, done, all - done);
            }
            Work::Idle => {}
        }
        status
    }

    /// What the job moved so far.
    pub fn traffic(&self) -> Traffic {
        let s = self.lock();
        let mut t = Traffic { through_coordinator_bytes: s.members.unattributed, ..Traffic::default() };
        for m in s.members.all() {
            t.through_coordinator_bytes += m.coordinator_sent + m.coordinator_received;
            t.workers.push(WorkerTraffic {
                name: m.name.clone(),
                received_bytes: m.received,
                sent_bytes: m.sent,
                rows: match &s.work {
                    Work::Rows(run) => run.core.rows_of(m.id),
                    _ => 0,
                },
            });
        }
        t
    }

    /// A task for `worker`, waiting up to `wait` for one (a long poll). Blocks: call it from a
    /// blocking thread.
    pub fn poll_wait(&self, worker: u64, wait: Duration) -> Poll {
        let end = Instant::now() + wait;
        let mut s = self.lock();
        loop {
            self.tick(&mut s);
            match self.poll_locked(&mut s, worker) {
                Poll::Wait if Instant::now() < end => {
                    let left = end.saturating_duration_since(Instant::now()).min(Duration::from_millis(200));
                    s = self.changed.wait(s, left);
                }
                answer => return answer,
            }
        }
    }

    fn poll_locked(&self, s: &mut State, worker: u64) -> Poll {
        if !s.members.seen(worker) {
            return Poll::Unknown;
        }
        if s.done {
            if let Some(m) = s.members.get_mut(worker) {
                m.dismissed = true;
            }
            self.changed.notify_all();
            return Poll::Done;
        }
        let now = self.now_ms();
        let (job, spec, full) = (s.job, s.job_spec.clone(), s.full.contains(&worker));
        let limit = s.members.get(worker).map_or(0, |m| m.mem_limit);
        match &mut s.work {
            Work::Rows(_) => Poll::OwnedRows,
            Work::Leases { .. } if full => Poll::Wait,
            Work::Leases { needs, .. } if !holds(limit, *needs) => Poll::Wait,
            Work::Leases { table, homes, .. } => match table.poll(worker, now) {
                Some(l) => Poll::Task(Lease {
                    job,
                    task: l.task,
                    attempt: l.attempt,
                    depth: l.level,
                    rows: l.rows,
                    job_spec: spec,
                    homes: homes.clone(),
                }),
                None => Poll::Wait,
            },
            Work::Idle => Poll::Wait,
        }
    }

    /// The job-wide input `name` as an encoded shard, if served.
    pub fn input(&self, name: &str) -> Option<Arc<[u8]>> {
        self.lock().named_inputs.get(name).cloned()
    }

    /// Where other workers reach each live worker's `Peer` service.
    pub fn peer_addresses(&self) -> Vec<(u64, String)> {
        let mut s = self.lock();
        self.tick(&mut s);
        s.members.peer_addresses()
    }

    /// The most memory each live worker may use (0: unknown), as it registered.
    pub fn mem_limits(&self) -> Vec<(u64, u64)> {
        self.lock().members.live().map(|m| (m.id, m.mem_limit)).collect()
    }

    /// Workers that take no task until further notice (no room for the rows they would keep).
    pub fn set_full(&self, workers: BTreeSet<u64>) {
        let mut s = self.lock();
        if s.full != workers {
            s.full = workers;
            self.changed.notify_all();
        }
    }

    /// Whether worker `id` is live (registered and not lost).
    pub fn is_live(&self, id: u64) -> bool {
        let mut s = self.lock();
        self.tick(&mut s);
        s.members.is_live(id)
    }

    /// The job's number (the first field of every shard key).
    pub fn job(&self) -> u64 {
        self.lock().job
    }

    /// Serves `bytes` to workers as the input `name` ("<input>/<level>") for the rest of the job.
    pub fn publish_input(&self, job: u64, name: &str, bytes: &[u8]) {
        let (_, level) = name.rsplit_once('/').expect("an input name is <input>/<level>");
        let level: u32 = level.parse().expect("an input's level");
        let key = ShardKey { job, task: shard::LEVEL_INPUT, attempt: 0, level };
        self.publish_packed(name, shard::encode(key, bytes).into());
    }

    /// Serves `packed`, a shard made elsewhere (the job's index: `shared::index_file`, shared
    /// with its maker rather than copied), as input `name`.
    pub fn publish_packed(&self, name: &str, packed: Arc<[u8]>) {
        self.lock().named_inputs.insert(name.to_string(), packed);
    }

    /// Holds places for the workers of an earlier run (see [`Members::expect`]).
    pub fn expect_workers(&self, ids: &[u64]) {
        self.lock().members.expect(ids);
    }

    /// How many of `ids` neither came back nor were declared lost yet.
    pub fn awaited(&self, ids: &[u64]) -> usize {
        let mut s = self.lock();
        self.tick(&mut s);
        ids.iter().filter(|&&id| s.members.get(id).is_some_and(|m| m.expected && !m.lost)).count()
    }

    /// A number that grows with every change of the state; see [`Self::wait_change`].
    pub fn generation(&self) -> u64 {
        self.changed.generation.load(Ordering::Acquire)
    }

    /// Waits for a change since `generation` was read (a report, a registration, a lost
    /// worker) or `limit`: a change between that reading and this call is not missed.
    pub fn wait_change(&self, generation: u64, limit: Duration) {
        let s = self.lock();
        if self.generation() != generation {
            return;
        }
        drop(self.changed.wait(s, limit.min(Duration::from_millis(200))));
    }
}
