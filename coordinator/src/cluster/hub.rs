//! Where the job's thread and the gRPC service meet ([`Hub`]): the workers ([`Members`]), with
//! liveness apart from leases; a level of independent leased tasks (a product job's cosets,
//! [`Hub::run_cosets`]; an H48 build's rows, [`Hub::run_h48_rows`]); or a row search whose rows the
//! workers own ([`OwnedRows`], driven by `rows.rs`, reached by workers through
//! [`Hub::rows_sync`]).
//!
//! Every wait here wakes at least every 200 ms to [`Hub::tick`]: workers silent for longer
//! than the liveness timeout are declared lost, their leases handed out again at once and
//! their rows recovered, rather than a level waiting out a lease.

use super::members::Members;
use super::owned::{OwnedRows, Report};
use shared::shard::{self, ShardKey};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq, Eq)]
enum TaskState {
    Pending,
    Leased { worker: u64, deadline: Instant },
    Done,
}

struct Task {
    rows: Range<u32>,
    state: TaskState,
    attempt: u32,
}

struct Level {
    depth: u32,
    tasks: Vec<Task>,
    remaining: usize,
    work: Work,
}

/// What a level's tasks compute and where their results go.
enum Work {
    /// Independent coset tasks of a product job: each result is `words_per_task` words per
    /// coset of the task, kept until the level ends.
    Cosets { words_per_task: usize, results: Vec<Vec<u64>> },
    /// Row tasks of an H48 build: each result waits here until the job's thread takes it
    /// (see [`Hub::run_h48_rows`]); a row's result takes at most `max_words_per_row` words.
    H48Rows { results: Vec<Option<Vec<u64>>>, max_words_per_row: usize },
}

/// Hands out again the tasks whose lease has expired or whose holder is lost; tells waiting
/// polls if there were any.
fn requeue(tasks: &mut [Task], members: &Members, changed: &Signal) {
    let now = Instant::now();
    let mut requeued = false;
    for (i, t) in tasks.iter_mut().enumerate() {
        if let TaskState::Leased { worker, deadline } = t.state {
            let lost = !members.is_live(worker);
            if deadline < now || lost {
                let why = if lost { "its worker is lost" } else { "its lease expired" };
                tracing::warn!("task {i} (attempt {}) of worker {worker} handed out again: {why}", t.attempt);
                t.state = TaskState::Pending;
                requeued = true;
            }
        }
    }
    if requeued {
        changed.notify_all();
    }
}

/// Why the job refused a task's result (see [`Hub::run_h48_rows`]).
pub enum Refusal {
    /// The result is malformed: hand the task out again.
    Bad(String),
    /// The job cannot go on (e.g. its output cannot be written).
    Fatal(String),
}

/// What an upload for a task of the running level may hold.
#[derive(Clone, Copy, Debug)]
pub struct UploadLimit {
    pub job: u64,
    pub depth: u32,
    /// The most words the task's result can take.
    pub max_words: usize,
}

/// What a worker is asked to do.
#[derive(Clone, Debug)]
pub struct Lease {
    pub job: u64,
    pub task: u64,
    pub attempt: u32,
    pub depth: u32,
    /// Representative cosets of a product job, or rows of an H48 build.
    pub rows: Range<u32>,
    pub job_spec: String,
}

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
    /// What it should hold and do, and where the live workers are.
    Do(Box<OwnedRows>, Vec<(u64, String)>),
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

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct WorkerTraffic {
    pub name: String,
    /// Bytes the worker reports on all its links (coordinator and peers).
    pub received_bytes: u64,
    pub sent_bytes: u64,
    /// Rows it owned at the end (a row search).
    pub rows: u64,
}

struct State {
    job: u64,
    job_spec: String,
    members: Members,
    level: Option<Level>,
    owned: Option<OwnedRows>,
    done: bool,
    /// Why the job cannot go on (set by [`Hub::abort`]).
    aborted: Option<String>,
    /// Inputs of the whole job by name (an H48 build's levels), encoded as shards.
    named_inputs: HashMap<String, Arc<Vec<u8>>>,
}

/// A condition variable that counts its notifications, so that a waiter can tell whether a
/// change came since it last looked.
#[derive(Default)]
struct Signal {
    condvar: Condvar,
    generation: AtomicU64,
}

impl Signal {
    fn notify_all(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.condvar.notify_all();
    }

    /// Releases `guard` until a notification or `limit`, and takes it back.
    fn wait<'a>(&self, guard: MutexGuard<'a, State>, limit: Duration) -> MutexGuard<'a, State> {
        self.condvar.wait_timeout(guard, limit).unwrap_or_else(|e| e.into_inner()).0
    }
}

pub struct Hub {
    state: Mutex<State>,
    changed: Signal,
    pub lease_time: Duration,
    /// How often workers call `Heartbeat`.
    pub heartbeat: Duration,
    pub tasks_per_level: usize,
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
                level: None,
                owned: None,
                done: false,
                aborted: None,
                named_inputs: HashMap::new(),
            }),
            changed: Signal::default(),
            lease_time,
            heartbeat: (liveness / 6).clamp(Duration::from_millis(100), Duration::from_secs(5)),
            tasks_per_level: tasks_per_level.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
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
        if let Some(o) = s.owned.as_mut() {
            o.peers_version += 1;
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

    /// Declares silent workers lost: their leases go back at once, and a row search moves
    /// their rows (see [`OwnedRows::recover`]). Called by every wait loop.
    fn tick(&self, s: &mut State) {
        let lost = s.members.expire(Instant::now());
        if lost.is_empty() {
            return;
        }
        if let Some(o) = s.owned.as_mut() {
            o.peers_version += 1;
        }
        if let Some(level) = s.level.as_mut() {
            requeue(&mut level.tasks, &s.members, &self.changed);
        }
        self.changed.notify_all();
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
        s.owned = None;
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
        if let Some(l) = &s.level {
            status.depth = l.depth;
            status.tasks = l.tasks.len() as u64;
            status.done = l.tasks.iter().filter(|t| t.state == TaskState::Done).count() as u64;
            status.leased =
                l.tasks.iter().filter(|t| matches!(t.state, TaskState::Leased { .. })).count() as u64;
        } else if let Some(o) = &s.owned {
            status.depth = o.level.saturating_sub(1);
            let owners = o.owners();
            status.tasks = owners.len() as u64;
            status.done = owners
                .iter()
                .filter(|w| o.reports.get(w).is_some_and(|r| r.epoch == o.epoch && r.finished == o.level))
                .count() as u64;
            status.leased = status.tasks - status.done;
        }
        status
    }

    /// What the job moved so far.
    pub fn traffic(&self) -> Traffic {
        let s = self.lock();
        let mut t = Traffic::default();
        for m in s.members.all() {
            t.through_coordinator_bytes += m.coordinator_sent + m.coordinator_received;
            t.workers.push(WorkerTraffic {
                name: m.name.clone(),
                received_bytes: m.received,
                sent_bytes: m.sent,
                rows: s.owned.as_ref().map_or(0, |o| o.rows_of(m.id)),
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
        if s.owned.is_some() {
            return Poll::OwnedRows;
        }
        let (job, spec) = (s.job, s.job_spec.clone());
        let Some(level) = s.level.as_mut() else { return Poll::Wait };
        let Some((i, task)) = level.tasks.iter_mut().enumerate().find(|(_, t)| t.state == TaskState::Pending)
        else {
            return Poll::Wait;
        };
        task.attempt += 1;
        task.state = TaskState::Leased { worker, deadline: Instant::now() + self.lease_time };
        Poll::Task(Lease {
            job,
            task: i as u64,
            attempt: task.attempt,
            depth: level.depth,
            rows: task.rows.clone(),
            job_spec: spec,
        })
    }

    /// Extends the lease of `task` if `worker` still holds its attempt `attempt`.
    pub fn renew(&self, worker: u64, task: u64, attempt: u32) -> bool {
        let mut s = self.lock();
        if !s.members.seen(worker) {
            return false;
        }
        let lease_time = self.lease_time;
        let Some(t) = s.level.as_mut().and_then(|l| l.tasks.get_mut(task as usize)) else { return false };
        match t.state {
            TaskState::Leased { worker: holder, .. } if holder == worker && t.attempt == attempt => {
                t.state = TaskState::Leased { worker, deadline: Instant::now() + lease_time };
                true
            }
            _ => false,
        }
    }

    /// The job-wide input `name` as an encoded shard, if served.
    pub fn input(&self, name: &str) -> Option<Arc<Vec<u8>>> {
        self.lock().named_inputs.get(name).cloned()
    }

    /// The limit of an upload for `task` of the running level, or `None` if the level has no
    /// such task.
    pub fn upload_limit(&self, task: u64) -> Option<UploadLimit> {
        let s = self.lock();
        let level = s.level.as_ref()?;
        let rows = level.tasks.get(task as usize)?.rows.len();
        let max_words = match &level.work {
            Work::Cosets { words_per_task, .. } => rows * words_per_task,
            Work::H48Rows { max_words_per_row, .. } => {
                shared::wire::h48::max_task_words(rows, *max_words_per_row)
            }
        };
        Some(UploadLimit { job: s.job, depth: level.depth, max_words })
    }

    /// Hands `task` out again at once if its attempt `attempt` is still leased (its holder sent
    /// a result that was refused).
    pub fn return_lease(&self, task: u64, attempt: u32) {
        let mut s = self.lock();
        let Some(t) = s.level.as_mut().and_then(|l| l.tasks.get_mut(task as usize)) else { return };
        if t.attempt == attempt && matches!(t.state, TaskState::Leased { .. }) {
            t.state = TaskState::Pending;
            self.changed.notify_all();
        }
    }

    /// Takes a coset or H48 task's result (decoded as `words`): kept until the level ends or
    /// the job's thread takes it. Results for a finished task or another level are ignored
    /// (`Ok(false)`); a malformed one is refused and its task handed out again.
    pub fn complete(&self, depth: u32, task: u64, words: Vec<u64>) -> Result<bool, String> {
        let mut s = self.lock();
        let Some(level) = s.level.as_mut().filter(|l| l.depth == depth) else { return Ok(false) };
        let Some(t) = level.tasks.get(task as usize) else { return Err(format!("no task {task}")) };
        if t.state == TaskState::Done {
            return Ok(false);
        }
        let rows = t.rows.clone();
        match &mut level.work {
            Work::H48Rows { results, .. } => results[task as usize] = Some(words),
            Work::Cosets { words_per_task, results } => {
                if words.len() != rows.len() * *words_per_task {
                    return Err(format!(
                        "counts of {} words for {} cosets (expected {words_per_task} each)",
                        words.len(),
                        rows.len()
                    ));
                }
                results[task as usize] = words;
            }
        }
        level.tasks[task as usize].state = TaskState::Done;
        level.remaining -= 1;
        self.changed.notify_all();
        Ok(true)
    }

    /// The job's number (the first field of every shard key).
    pub fn job(&self) -> u64 {
        self.lock().job
    }

    /// Runs a product job's coset tasks `cosets` (cut into `tasks_per_level` ranges) as one
    /// level and returns their counters in task order, `words_per_task` words per coset;
    /// `done` counts finished cosets on top of `cosets.start`. `level` must differ between the
    /// calls of one job: it tells a late result of an earlier call from one of this call.
    pub fn run_cosets(
        &self,
        level: u32,
        cosets: Range<u32>,
        words_per_task: usize,
        done: &AtomicU64,
    ) -> Result<Vec<u64>, String> {
        let per_task = cosets.len().div_ceil(self.tasks_per_level).max(1) as u32;
        let tasks: Vec<Task> = cosets
            .clone()
            .step_by(per_task as usize)
            .map(|a| Task { rows: a..(a + per_task).min(cosets.end), state: TaskState::Pending, attempt: 0 })
            .collect();
        let results = vec![Vec::new(); tasks.len()];
        let work = Work::Cosets { words_per_task, results };
        let mut s = self.lock();
        s.level = Some(Level { depth: level, remaining: tasks.len(), tasks, work });
        self.changed.notify_all();
        loop {
            self.tick(&mut s);
            if let Some(why) = s.aborted.clone() {
                s.level = None;
                return Err(why);
            }
            let st = &mut *s;
            let lvl = st.level.as_mut().expect("published");
            let finished = lvl.tasks.iter().filter(|t| t.state == TaskState::Done).count() as u64;
            done.store(cosets.start as u64 + finished * per_task as u64, Ordering::Relaxed);
            if lvl.remaining == 0 {
                break;
            }
            requeue(&mut lvl.tasks, &st.members, &self.changed);
            s = self.changed.wait(s, Duration::from_millis(200));
        }
        match s.level.take().expect("published").work {
            Work::Cosets { results, .. } => Ok(results.concat()),
            _ => unreachable!("a coset level stays one"),
        }
    }

    /// Serves `bytes` to workers as the input `name` ("<input>/<level>") for the rest of the job.
    pub fn publish_input(&self, job: u64, name: &str, bytes: &[u8]) {
        let (input, level) = name.rsplit_once('/').expect("an input name is <input>/<level>");
        let level: u32 = level.parse().expect("an input's level");
        let key = ShardKey { job, task: shard::LEVEL_INPUT, attempt: 0, level };
        let encoded = Arc::new(shard::encode(key, bytes));
        self.lock().named_inputs.insert(format!("{input}/{level}"), encoded);
    }

    /// Runs the row tasks of an H48 build's level `level` over `rows` (increasing; of a space
    /// of `total` rows), each row's result at most `max_words_per_row` words: each task's result
    /// goes to `take(rows, words)` on this thread as soon as it arrives (outside the lock). A
    /// result `take` refuses as bad is logged and its task handed out again; a fatal refusal
    /// ends the level with its reason. `done` counts rows taken.
    #[allow(clippy::too_many_arguments)]
    pub fn run_h48_rows(
        &self,
        level: u32,
        rows: &[u32],
        total: u32,
        max_words_per_row: usize,
        done: &AtomicU64,
        mut take: impl FnMut(Range<u32>, Vec<u64>) -> Result<(), Refusal>,
    ) -> Result<(), String> {
        // Tasks are runs of consecutive rows, at most a share of the space each.
        let per_task = (total as usize).div_ceil(self.tasks_per_level).max(1) as u32;
        let mut tasks: Vec<Task> = Vec::new();
        for &r in rows {
            match tasks.last_mut() {
                Some(t) if t.rows.end == r && t.rows.len() < per_task as usize => t.rows.end = r + 1,
                _ => tasks.push(Task { rows: r..r + 1, state: TaskState::Pending, attempt: 0 }),
            }
        }
        if tasks.is_empty() {
            return Ok(());
        }
        let results = vec![None; tasks.len()];
        let mut s = self.lock();
        let work = Work::H48Rows { results, max_words_per_row };
        s.level = Some(Level { depth: level, remaining: tasks.len(), tasks, work });
        self.changed.notify_all();
        let mut taken = 0usize;
        loop {
            self.tick(&mut s);
            if let Some(why) = s.aborted.clone() {
                s.level = None;
                return Err(why);
            }
            let lvl = s.level.as_mut().expect("published");
            let Work::H48Rows { results, .. } = &mut lvl.work else { unreachable!("an H48 level stays one") };
            let ready: Vec<(usize, Vec<u64>)> =
                results.iter_mut().enumerate().filter_map(|(i, r)| r.take().map(|w| (i, w))).collect();
            if !ready.is_empty() {
                let ranges: Vec<Range<u32>> = ready.iter().map(|(i, _)| lvl.tasks[*i].rows.clone()).collect();
                drop(s);
                let mut refused = Vec::new();
                for ((i, words), range) in ready.into_iter().zip(ranges) {
                    let n = range.len() as u64;
                    match take(range, words) {
                        Ok(()) => {
                            taken += 1;
                            done.fetch_add(n, Ordering::Relaxed);
                        }
                        Err(Refusal::Bad(why)) => {
                            tracing::warn!("result of task {i} refused ({why}); handed out again");
                            refused.push(i);
                        }
                        Err(Refusal::Fatal(why)) => {
                            self.lock().level = None;
                            return Err(why);
                        }
                    }
                }
                s = self.lock();
                let lvl = s.level.as_mut().expect("published");
                for i in refused {
                    lvl.tasks[i].state = TaskState::Pending;
                    lvl.remaining += 1;
                }
                self.changed.notify_all();
                continue;
            }
            if lvl.remaining == 0 && taken == lvl.tasks.len() {
                break;
            }
            let st = &mut *s;
            let lvl = st.level.as_mut().expect("published");
            requeue(&mut lvl.tasks, &st.members, &self.changed);
            s = self.changed.wait(s, Duration::from_millis(200));
        }
        s.level = None;
        Ok(())
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

    /// Starts an owned-row search: polls now send workers to `RowsSync`.
    pub fn start_owned(&self, rows: OwnedRows) {
        self.lock().owned = Some(rows);
        self.changed.notify_all();
    }

    /// Runs `f` on the owned-row search's state (after a tick), telling waiting workers when it
    /// returns true (the state changed). Errors if the job was aborted.
    pub fn with_owned<T>(&self, f: impl FnOnce(&mut OwnedRows, &Members) -> (T, bool)) -> Result<T, String> {
        let mut s = self.lock();
        self.tick(&mut s);
        if let Some(why) = s.aborted.clone() {
            return Err(why);
        }
        let s = &mut *s;
        let owned = s.owned.as_mut().ok_or("no row search is running")?;
        let (out, changed) = f(owned, &s.members);
        if changed {
            self.changed.notify_all();
        }
        Ok(out)
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

    /// A worker's `RowsSync`: records its report and answers with what it should hold and do,
    /// waiting up to `wait` while it already does (a long poll). Blocks: call it from a
    /// blocking thread.
    pub fn rows_sync(&self, worker: u64, report: Report, failure: &str, wait: Duration) -> SyncAnswer {
        let end = Instant::now() + wait;
        let mut s = self.lock();
        if !s.members.seen(worker) {
            return SyncAnswer::Unknown;
        }
        if !failure.is_empty() {
            let name = s.members.get(worker).map(|m| m.name.clone()).unwrap_or_default();
            s.aborted.get_or_insert(format!("worker {worker} ({name}): {failure}"));
            self.changed.notify_all();
        }
        if let Some(o) = s.owned.as_mut() {
            if o.reports.insert(worker, report) != Some(report) {
                self.changed.notify_all();
            }
        }
        loop {
            self.tick(&mut s);
            let Some(o) = s.owned.as_ref() else { return SyncAnswer::Done };
            if !o.in_sync(&report) {
                let peers = s
                    .members
                    .live()
                    .filter(|m| !m.expected && !m.peer_address.is_empty())
                    .map(|m| (m.id, m.peer_address.clone()))
                    .collect();
                return SyncAnswer::Do(Box::new(o.clone()), peers);
            }
            if s.aborted.is_some() || Instant::now() >= end {
                return SyncAnswer::Wait;
            }
            let left = end.saturating_duration_since(Instant::now()).min(Duration::from_millis(200));
            s = self.changed.wait(s, left);
        }
    }

    /// The longest part of a level an owner may send up (as a shard).
    pub fn max_level_part_bytes(&self) -> Option<u64> {
        let s = self.lock();
        let o = s.owned.as_ref().filter(|o| o.upload_levels)?;
        Some(shard::max_shard_bytes(shared::wire::SparseRows::max_result_words(
            o.cut.rows_per_part as usize,
            o.words,
        )))
    }

    /// Takes a part of the level being made from its owner (a table build).
    pub fn take_level_part(
        &self,
        worker: u64,
        epoch: u64,
        depth: u32,
        part: u32,
        bytes: Vec<u8>,
    ) -> Result<(), String> {
        let mut s = self.lock();
        let o = s.owned.as_mut().ok_or("no row search is running")?;
        if o.level != depth + 1 || o.owner.get(part as usize) != Some(&worker) || epoch != o.epoch {
            return Ok(()); // a late copy
        }
        o.uploaded.insert(part, bytes);
        self.changed.notify_all();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polls until a task is leased.
    fn lease(hub: &Hub, worker: u64) -> Lease {
        loop {
            match hub.poll_wait(worker, Duration::from_millis(50)) {
                Poll::Task(lease) => return lease,
                Poll::Wait => continue,
                _ => panic!("job done before a lease"),
            }
        }
    }

    fn hub(liveness: Duration) -> Hub {
        Hub::new(1, "product/cube/htm/2".into(), Duration::from_secs(600), liveness, 2)
    }

    #[test]
    fn coset_levels_keep_counters_and_ignore_results_of_earlier_levels() {
        let hub = hub(Duration::from_secs(30));
        let worker = hub.register("test", 1, (0, 0), "", 0);
        let done = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let run = scope.spawn(|| hub.run_cosets(7, 10..14, 3, &done));
            let mut seen = Vec::new();
            for _ in 0..2 {
                let l = lease(&hub, worker);
                assert_eq!(l.depth, 7);
                // A late result of an earlier level with the same task number is ignored...
                assert_eq!(hub.complete(6, l.task, vec![9; 6]), Ok(false));
                // ...a result of the wrong length is refused...
                assert!(hub.complete(7, l.task, vec![1; 5]).is_err());
                // ...and the right one is kept.
                let words: Vec<u64> = (0..6).map(|i| l.rows.start as u64 * 10 + i).collect();
                assert_eq!(hub.complete(7, l.task, words), Ok(true));
                assert_eq!(hub.complete(7, l.task, vec![0; 6]), Ok(false), "a duplicate is ignored");
                seen.push(l.rows);
            }
            seen.sort_by_key(|r| r.start);
            assert_eq!(seen, [10..12, 12..14]);
            let counters = run.join().unwrap().unwrap();
            assert_eq!(counters, [100, 101, 102, 103, 104, 105, 120, 121, 122, 123, 124, 125]);
        });
        assert_eq!(done.load(Ordering::Relaxed), 14);
    }

    #[test]
    fn a_silent_workers_lease_goes_to_another_at_once_and_it_must_register_again() {
        let hub = hub(Duration::from_millis(300));
        let (a, b) = (hub.register("a", 1, (0, 0), "", 0), hub.register("b", 1, (0, 0), "", 0));
        let done = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let run = scope.spawn(|| hub.run_cosets(1, 0..2, 1, &done));
            let first = lease(&hub, a);
            let second = lease(&hub, b);
            assert!(hub.complete(1, second.task, vec![2]).unwrap());
            // a falls silent holding its task; b keeps polling and gets it well before the
            // 600 s lease would end.
            let started = Instant::now();
            let again = lease(&hub, b);
            assert!(started.elapsed() < Duration::from_secs(5));
            assert_eq!((again.task, again.attempt), (first.task, 2));
            assert!(!hub.renew(a, first.task, first.attempt), "a lost worker holds no lease");
            assert!(matches!(hub.poll_wait(a, Duration::from_millis(10)), Poll::Unknown));
            assert!(hub.complete(1, again.task, vec![1]).unwrap());
            assert_eq!(run.join().unwrap().unwrap().len(), 2);
        });
    }

    #[test]
    fn a_renewed_lease_outlives_its_period_and_an_expired_one_is_handed_out_again() {
        let hub =
            Hub::new(1, "product/cube/htm/2".into(), Duration::from_millis(200), Duration::from_secs(30), 1);
        let (a, b) = (hub.register("a", 1, (0, 0), "", 0), hub.register("b", 1, (0, 0), "", 0));
        let done = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let run = scope.spawn(|| hub.run_cosets(1, 0..1, 1, &done));
            let l = lease(&hub, a);
            for _ in 0..4 {
                std::thread::sleep(Duration::from_millis(100));
                assert!(hub.renew(a, l.task, l.attempt));
                assert!(matches!(hub.poll_wait(b, Duration::from_millis(1)), Poll::Wait));
            }
            // a stops renewing (but keeps its heartbeat): the lease expires.
            let again = lease(&hub, b);
            assert_eq!(again.attempt, 2);
            assert!(!hub.renew(a, l.task, l.attempt));
            // The first attempt's late result is still a result of the task: taken once.
            assert!(hub.complete(1, l.task, vec![5]).unwrap());
            assert!(!hub.complete(1, again.task, vec![5]).unwrap());
            assert_eq!(run.join().unwrap().unwrap(), [5]);
        });
    }

    #[test]
    fn a_refused_h48_result_is_handed_out_again_and_a_fatal_refusal_ends_the_level() {
        let hub = hub(Duration::from_secs(30));
        let worker = hub.register("test", 1, (0, 0), "", 0);
        let done = AtomicU64::new(0);
        std::thread::scope(|scope| {
            // Rows 3, 4 and 9 of 10, two tasks a level: runs of consecutive rows, at most 5 each.
            let mut taken = Vec::new();
            let run = scope.spawn(|| {
                let mut first = true;
                hub.run_h48_rows(2, &[3, 4, 9], 10, 4, &done, |rows, words| {
                    if std::mem::take(&mut first) {
                        return Err(Refusal::Bad("damaged".into()));
                    }
                    taken.push((rows, words));
                    Ok(())
                })
                .map(|()| taken)
            });
            let mut attempts = Vec::new();
            for _ in 0..3 {
                let l = lease(&hub, worker);
                let words = vec![l.rows.start as u64; l.rows.len()];
                assert!(hub.complete(2, l.task, words).unwrap());
                attempts.push((l.rows, l.attempt));
            }
            attempts.sort_by_key(|(rows, attempt)| (rows.start, *attempt));
            // The first result taken was refused: its task came back as a second attempt.
            assert_eq!(attempts.iter().filter(|(_, a)| *a == 2).count(), 1, "{attempts:?}");
            let mut taken = run.join().unwrap().unwrap();
            taken.sort_by_key(|(rows, _)| rows.start);
            assert_eq!(taken, [(3..5, vec![3, 3]), (9..10, vec![9])]);
        });
        assert_eq!(done.load(Ordering::Relaxed), 3);
        std::thread::scope(|scope| {
            let (hub, done) = (&hub, &done);
            let fatal = |_, _| Err(Refusal::Fatal("disk full".into()));
            let run = scope.spawn(move || hub.run_h48_rows(3, &[0], 10, 4, done, fatal));
            let l = lease(hub, worker);
            assert!(hub.complete(3, l.task, vec![1]).unwrap());
            assert_eq!(run.join().unwrap(), Err("disk full".to_string()));
        });
        assert!(matches!(hub.poll_wait(worker, Duration::from_millis(10)), Poll::Wait), "the level is gone");
    }
}
