//! Distributed levels: the row tasks of a search level or an unvisited round ([`Shared::run_rows`],
//! driven by `search.rs`), leased to workers through the gRPC service in `service.rs`; a
//! product job's one level of independent coset tasks ([`Shared::run_cosets`]), whose results
//! are counters kept as they arrive; and an H48 build's row tasks ([`Shared::run_items`]).
//!
//! A row task returns its rows finished (new entries only, closed, counted: see
//! `shared::bfs::task`), so taking one is a check of its shard and a sum of its counters; its
//! shard is kept, unchanged, as its part of an input of the levels after it. The coordinator
//! holds no bit array: it checks a result outside the state mutex, with its task marked
//! [`TaskState::Merging`] (so it is taken once) and counted in the level's `merging`, and a
//! level ends only when no result is being taken.

use super::parts::{InputPart, PartDir, PartFile};
use shared::bfs::task::Counting;
use shared::bfs::Direction;
use shared::shard::{self, ShardKey};
use shared::space::RowCounts;
use shared::wire::{PartCut, SparseRows};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq, Eq)]
enum TaskState {
    Pending,
    Leased {
        worker: u64,
        deadline: Instant,
    },
    /// Its result is being merged (outside the state mutex).
    Merging,
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
    /// Row ranges of a BFS level or of an unvisited round, each result checked and kept.
    Rows {
        kind: TaskKind,
        words: usize,
        counting: Counting,
        /// A forward task's second input (see `shared::wire::KnownVisited`), or an unvisited
        /// task's base, by name: task k reads its part k.
        before: String,
        /// An unvisited task's found inputs (task k reads their parts k).
        found: Vec<String>,
        /// The input the results make ("frontier-all/8"): task k's is its part k.
        output: String,
        cut: PartCut,
        /// Each task's result as it arrived: part k of the next level's frontier.
        results: Vec<Option<Arc<PartFile>>>,
        /// The sum of the merged tasks' counts.
        counts: RowCounts,
        /// Results being merged now.
        merging: usize,
    },
    /// Independent coset tasks of a product job: each result is `words_per_task` words per
    /// coset of the task, kept until the level ends.
    Cosets { words_per_task: usize, results: Vec<Vec<u64>> },
    /// Row tasks of an H48 build: each result waits here until the job's thread takes it
    /// (see [`Shared::run_items`]); a row's result takes at most `max_words_per_row` words.
    Items { results: Vec<Option<Vec<u64>>>, max_words_per_row: usize },
}

/// How an error keeping a level input on disk begins (it ends the job: a full disk does not
/// heal by handing the task out again).
const KEEP_FAILED: &str = "cannot keep a level input's part";

/// Hands out again the tasks whose lease has expired; tells waiting polls if there were any.
fn requeue_expired(tasks: &mut [Task], changed: &Condvar) {
    let now = Instant::now();
    let mut requeued = false;
    for (i, t) in tasks.iter_mut().enumerate() {
        if let TaskState::Leased { worker, deadline } = t.state {
            if deadline < now {
                tracing::warn!(
                    "lease of task {i} (attempt {}) by worker {worker} expired; re-queued",
                    t.attempt
                );
                t.state = TaskState::Pending;
                requeued = true;
            }
        }
    }
    if requeued {
        changed.notify_all();
    }
}

/// Counts an upload of `bytes` and tells whether task `task` of level `depth` still awaits
/// its result (not if it is finished or being taken, or the level is over); a task the level
/// does not have is an error.
fn awaits_result(s: &mut State, depth: u32, task: u64, bytes: usize) -> Result<bool, String> {
    s.bytes_in += bytes as u64;
    let Some(level) = s.level.as_mut().filter(|l| l.depth == depth) else { return Ok(false) };
    let Some(t) = level.tasks.get(task as usize) else { return Err(format!("no task {task}")) };
    Ok(!matches!(t.state, TaskState::Done | TaskState::Merging))
}

/// The kind of a leased task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskKind {
    Rows(Direction),
    /// The unvisited entries of a row range (see `shared::bfs::task::unvisited_rows`).
    Unvisited,
    Cosets,
    H48,
}

/// Why the job refused a task's result (see [`Shared::run_items`]).
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
    /// A row task's result: checked and kept, with the counts its upload states (see
    /// [`Shared::complete_rows`]), rather than decoded.
    pub rows: bool,
}

/// What a worker is asked to do.
#[derive(Clone, Debug)]
pub struct Lease {
    pub job: u64,
    pub task: u64,
    pub attempt: u32,
    pub depth: u32,
    pub kind: TaskKind,
    /// Rows of a BFS level, or representative cosets of a product job.
    pub rows: Range<u32>,
    pub job_spec: String,
    /// A forward row task's second input, or an unvisited task's base (empty otherwise).
    pub before_input: String,
    /// An unvisited task's found inputs.
    pub found_inputs: Vec<String>,
    /// Rows of each part of a row task's inputs (the level's rows per task).
    pub rows_per_part: u32,
    /// A row task counts entries and positions only.
    pub positions_only: bool,
}

/// The answer to a worker's poll.
pub enum Poll {
    Task(Lease),
    /// Nothing to do now; poll again.
    Wait,
    /// The job is finished.
    Done,
}

struct State {
    job: u64,
    job_spec: String,
    workers: HashMap<u64, (String, Instant)>,
    next_worker: u64,
    level: Option<Level>,
    done: bool,
    /// Why the job cannot go on (set by [`Shared::abort`]).
    aborted: Option<String>,
    /// Workers told that the job is done.
    dismissed: std::collections::HashSet<u64>,
    bytes_in: u64,
    bytes_out: u64,
    /// Inputs of the whole job by name (an H48 build's levels), encoded as shards.
    named_inputs: HashMap<String, Arc<Vec<u8>>>,
    /// The inputs of a row search's current and previous level, and the frontier the running
    /// level's tasks returned so far.
    row_inputs: Vec<RowInput>,
}

/// A row search's level input as the coordinator serves it: parts of a [`PartCut`], each an
/// encoded shard on disk (either a task's result, forwarded as it arrived, or encoded here).
struct RowInput {
    /// "frontier-all/7".
    name: String,
    /// Part k from task k.
    parts: Vec<Arc<PartFile>>,
}

/// The scheduler state shared by the expander (the search thread) and the gRPC handlers.
pub struct Shared {
    state: Mutex<State>,
    /// Where row inputs' parts are kept (made by the first row level).
    parts: OnceLock<PartDir>,
    changed: Condvar,
    pub lease_time: Duration,
    pub tasks_per_level: usize,
    /// Buffers of kept row results' bytes, reused by the next uploads (see [`Buffers`]).
    pub buffers: Buffers,
}

/// A few spare buffers for the shards that arrive one after another: a row result's bytes go
/// back here once written to its part file, so the next upload fills memory already mapped
/// instead of faulting in fresh pages (which, on a virtual machine, costs as much as decoding
/// them).
#[derive(Default)]
pub struct Buffers {
    bytes: Mutex<Vec<Vec<u8>>>,
}

/// Spare buffers kept: about as many as uploads are taken at once.
const SPARE_BUFFERS: usize = 4;

impl Buffers {
    /// An empty buffer for a shard's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        self.bytes.lock().ok().and_then(|mut b| b.pop()).unwrap_or_default()
    }

    /// Takes back a merged result's bytes.
    fn give_bytes(&self, mut buffer: Vec<u8>) {
        buffer.clear();
        if let Ok(mut spares) = self.bytes.lock() {
            if spares.len() < SPARE_BUFFERS {
                spares.push(buffer);
            }
        }
    }
}

impl Shared {
    pub fn new(job: u64, job_spec: String, lease_time: Duration, tasks_per_level: usize) -> Self {
        Shared {
            state: Mutex::new(State {
                job,
                job_spec,
                workers: HashMap::new(),
                next_worker: 1,
                level: None,
                done: false,
                dismissed: std::collections::HashSet::new(),
                aborted: None,
                bytes_in: 0,
                bytes_out: 0,
                named_inputs: HashMap::new(),
                row_inputs: Vec::new(),
            }),
            changed: Condvar::new(),
            parts: OnceLock::new(),
            buffers: Buffers::default(),
            lease_time,
            tasks_per_level: tasks_per_level.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a worker with its compute threads and memory (0: unknown).
    pub fn register(&self, name: &str, threads: u32, memory_bytes: u64) -> u64 {
        let mut s = self.lock();
        let id = s.next_worker;
        s.next_worker += 1;
        s.workers.insert(id, (name.to_string(), Instant::now()));
        let memory = if memory_bytes > 0 {
            format!("{:.1} GiB", memory_bytes as f64 / (1u64 << 30) as f64)
        } else {
            "unknown memory".to_string()
        };
        tracing::info!("worker {id} ({name}) registered: {threads} threads, {memory}");
        id
    }

    /// Stops the job: the running level fails with `why`.
    pub fn abort(&self, why: String) {
        self.lock().aborted = Some(why);
        self.changed.notify_all();
    }

    /// Marks the job finished: polls answer `done`.
    pub fn finish(&self) {
        self.lock().done = true;
        self.changed.notify_all();
    }

    /// Waits (at most `limit`) until every worker seen in the last lease time was told that the
    /// job is done.
    pub fn wait_for_goodbyes(&self, limit: Duration) {
        let end = Instant::now() + limit;
        let mut s = self.lock();
        loop {
            let pending = s
                .workers
                .iter()
                .filter(|(id, (_, seen))| seen.elapsed() < self.lease_time && !s.dismissed.contains(id))
                .count();
            let now = Instant::now();
            if pending == 0 || now >= end {
                return;
            }
            s = self.changed.wait_timeout(s, end - now).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// A snapshot for `coordinator status`: (depth, tasks, done, leased, live workers, finished).
    pub fn status(&self) -> (u32, u64, u64, u64, u32, bool) {
        let s = self.lock();
        let workers = s.workers.values().filter(|(_, seen)| seen.elapsed() < self.lease_time).count() as u32;
        match &s.level {
            Some(l) => {
                let done = l.tasks.iter().filter(|t| t.state == TaskState::Done).count() as u64;
                let leased =
                    l.tasks.iter().filter(|t| matches!(t.state, TaskState::Leased { .. })).count() as u64;
                (l.depth, l.tasks.len() as u64, done, leased, workers, s.done)
            }
            None => (0, 0, 0, 0, workers, s.done),
        }
    }

    /// Counts bytes sent to workers (compressed, as on the wire).
    pub fn count_sent(&self, bytes: u64) {
        self.lock().bytes_out += bytes;
    }

    /// Bytes sent to and received from workers so far (compressed, as on the wire).
    pub fn traffic(&self) -> (u64, u64) {
        let s = self.lock();
        (s.bytes_out, s.bytes_in)
    }

    /// A task for `worker`, waiting up to `wait` for one to become pending (a long poll: idle
    /// workers hear about a new level at once without polling in a loop). Blocks: call it from a
    /// blocking thread.
    pub fn poll_wait(&self, worker: u64, wait: Duration) -> Poll {
        let end = Instant::now() + wait;
        // The state stays locked from the check to the wait, so a level published in between
        // cannot be missed.
        let mut s = self.lock();
        loop {
            match self.poll_locked(&mut s, worker) {
                Poll::Wait if Instant::now() < end => {
                    let left = end.saturating_duration_since(Instant::now());
                    s = self.changed.wait_timeout(s, left).unwrap_or_else(|e| e.into_inner()).0;
                }
                answer => return answer,
            }
        }
    }

    /// A task for `worker`, if any is pending now.
    fn poll_locked(&self, s: &mut State, worker: u64) -> Poll {
        if let Some(w) = s.workers.get_mut(&worker) {
            w.1 = Instant::now();
        }
        if s.done {
            s.dismissed.insert(worker);
            self.changed.notify_all();
            return Poll::Done;
        }
        let (job, spec) = (s.job, s.job_spec.clone());
        let Some(level) = s.level.as_mut() else { return Poll::Wait };
        let now = Instant::now();
        let lease_time = self.lease_time;
        let Some((i, task)) = level.tasks.iter_mut().enumerate().find(|(_, t)| t.state == TaskState::Pending)
        else {
            return Poll::Wait;
        };
        task.attempt += 1;
        task.state = TaskState::Leased { worker, deadline: now + lease_time };
        let (kind, before_input, found_inputs, rows_per_part, positions_only) = match &level.work {
            Work::Rows { kind, before, found, counting, cut, .. } => {
                (*kind, before.clone(), found.clone(), cut.rows_per_part, *counting == Counting::Positions)
            }
            Work::Cosets { .. } => (TaskKind::Cosets, String::new(), Vec::new(), 0, false),
            Work::Items { .. } => (TaskKind::H48, String::new(), Vec::new(), 0, false),
        };
        Poll::Task(Lease {
            job,
            task: i as u64,
            attempt: task.attempt,
            depth: level.depth,
            kind,
            rows: task.rows.clone(),
            job_spec: spec,
            before_input,
            found_inputs,
            rows_per_part,
            positions_only,
        })
    }

    /// Extends the lease of `task` if `worker` still holds its attempt `attempt`.
    pub fn renew(&self, worker: u64, task: u64, attempt: u32) -> bool {
        let mut s = self.lock();
        if let Some(w) = s.workers.get_mut(&worker) {
            w.1 = Instant::now();
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

    /// The input `name` as encoded shards, to be sent one after another: an H48 build's level
    /// ("<input>/<depth>", one shard), every part of a row search's level input
    /// ("frontier-all/7"), or one part of it ("frontier-all/7/3"). `None` when it is not (or no
    /// longer) served.
    pub fn input(&self, name: &str) -> Option<Vec<InputPart>> {
        let s = self.lock();
        if let Some(input) = s.named_inputs.get(name) {
            return Some(vec![InputPart::Memory(input.clone())]);
        }
        let (whole, part) = match name.matches('/').count() {
            1 => (name, None),
            _ => {
                let (whole, part) = name.rsplit_once('/')?;
                (whole, Some(part.parse::<usize>().ok()?))
            }
        };
        let input = s.row_inputs.iter().find(|i| i.name == whole)?;
        match part {
            Some(k) => Some(vec![InputPart::File(input.parts.get(k)?.clone())]),
            None => Some(input.parts.iter().cloned().map(InputPart::File).collect()),
        }
    }

    /// The limit of an upload for `task` of the running level, or `None` if the level has no
    /// such task.
    pub fn upload_limit(&self, task: u64) -> Option<UploadLimit> {
        let s = self.lock();
        let level = s.level.as_ref()?;
        let rows = level.tasks.get(task as usize)?.rows.len();
        let max_words = match &level.work {
            Work::Rows { words, .. } => SparseRows::max_result_words(rows, *words),
            Work::Cosets { words_per_task, .. } => rows * words_per_task,
            Work::Items { max_words_per_row, .. } => {
                shared::wire::h48::max_task_words(rows, *max_words_per_row)
            }
        };
        let rows = matches!(level.work, Work::Rows { .. });
        Some(UploadLimit { job: s.job, depth: level.depth, max_words, rows })
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

    /// Takes a row task's result: its shard (already checked whole and for this task, see
    /// `shard::check_for`) is kept, as it came, as a part of the inputs of the levels after it,
    /// and `counts` (as its upload states them) summed. The shard is written outside the state
    /// lock, with the task marked [`TaskState::Merging`] so that it is taken once. Results for a
    /// finished task or another level are ignored (`Ok(false)`).
    pub fn complete_rows(
        &self,
        depth: u32,
        task: u64,
        counts: RowCounts,
        shard: Vec<u8>,
    ) -> Result<bool, String> {
        let mut s = self.lock();
        if !awaits_result(&mut s, depth, task, shard.len())? {
            return Ok(false);
        }
        let level = s.level.as_mut().expect("a level awaiting a result");
        let t = &mut level.tasks[task as usize];
        let Work::Rows { merging, output, .. } = &mut level.work else {
            return Err("not a row level".into());
        };
        let output = output.clone();
        t.state = TaskState::Merging;
        *merging += 1;
        drop(s);
        let kept = self.write_part(&output, task as u32, &shard);
        self.buffers.give_bytes(shard);
        if let Err(why) = &kept {
            self.abort(why.clone());
        }
        let mut guard = self.lock();
        let level = guard.level.as_mut().expect("a level stays published while a result is taken");
        let Work::Rows { counts: sum, merging, results, .. } = &mut level.work else {
            unreachable!("a row level")
        };
        *merging -= 1;
        let t = &mut level.tasks[task as usize];
        let result = match kept {
            Ok(file) => {
                *sum = *sum + counts;
                t.state = TaskState::Done;
                level.remaining -= 1;
                results[task as usize] = Some(file);
                Ok(true)
            }
            Err(e) => {
                t.state = TaskState::Pending;
                Err(e)
            }
        };
        self.changed.notify_all();
        result
    }

    /// Takes a coset or H48 task's result (`shard`, decoded as `words`): kept as it is until the
    /// level ends or the job's thread takes it. Results for a finished task or another level are
    /// ignored (`Ok(false)`); a malformed one is refused and its task handed out again.
    pub fn complete(&self, depth: u32, task: u64, words: Vec<u64>, shard: Vec<u8>) -> Result<bool, String> {
        let mut s = self.lock();
        if !awaits_result(&mut s, depth, task, shard.len())? {
            return Ok(false);
        }
        let level = s.level.as_mut().expect("a level awaiting a result");
        let rows = level.tasks[task as usize].rows.clone();
        match &mut level.work {
            Work::Rows { .. } => return Err("a row result comes with its counts".into()),
            Work::Items { results, .. } => {
                results[task as usize] = Some(words);
            }
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

    /// Runs the row tasks of one level (`kind`: a search level's direction, or an unvisited
    /// round) over `cut`, each task reading its inputs by name (see [`Lease`]): waits until
    /// every result is checked and kept (re-queueing expired leases) and returns the sum of
    /// their counts and the results, part k from task k. `depth` tells this level's results
    /// from late ones of another.
    #[allow(clippy::too_many_arguments)]
    pub fn run_rows(
        &self,
        depth: u32,
        kind: TaskKind,
        cut: PartCut,
        words: usize,
        counting: Counting,
        (before, found, output): (String, Vec<String>, String),
        progress: &AtomicU64,
    ) -> Result<(RowCounts, Vec<Arc<PartFile>>), String> {
        self.part_dir()?;
        let tasks: Vec<Task> = (0..cut.parts())
            .map(|k| Task { rows: cut.range(k), state: TaskState::Pending, attempt: 0 })
            .collect();
        let work = Work::Rows {
            kind,
            words,
            counting,
            before,
            found,
            output,
            cut,
            results: vec![None; tasks.len()],
            counts: RowCounts::default(),
            merging: 0,
        };
        match self.run_tasks(depth, tasks, work, (0, cut.rows_per_part as u64), progress)? {
            Work::Rows { counts, results, .. } => {
                Ok((counts, results.into_iter().map(|r| r.expect("every task's result kept")).collect()))
            }
            _ => unreachable!("a row level stays one"),
        }
    }

    /// Serves `parts` (part k from task k) as the row input `name` ("frontier-all/7").
    pub fn keep_input(&self, name: String, parts: Vec<Arc<PartFile>>) {
        self.lock().row_inputs.push(RowInput { name, parts });
    }

    /// Stops serving the row inputs `keep` refuses (by name).
    pub fn retain_inputs(&self, keep: impl Fn(&str) -> bool) {
        self.lock().row_inputs.retain(|i| {
            let kept = keep(&i.name);
            if !kept {
                i.parts.iter().for_each(|p| p.release());
            }
            kept
        });
    }

    /// Keeps `bytes` as part `k` of the row input `input` (see [`Self::keep_input`]).
    pub fn write_part(&self, input: &str, k: u32, bytes: &[u8]) -> Result<Arc<PartFile>, String> {
        self.part_dir()?.write_named(input, k, bytes).map_err(|e| format!("{KEEP_FAILED}: {e}"))
    }

    /// Keeps the parts of row inputs in `dir`, under names that a restarted job finds again
    /// (see [`PartDir::durable`]); before the first part is written.
    pub fn keep_parts_in(&self, dir: std::path::PathBuf) -> Result<&PartDir, String> {
        let durable = PartDir::durable(dir).map_err(|e| format!("{KEEP_FAILED}: {e}"))?;
        self.parts.set(durable).map_err(|_| "parts are already kept elsewhere".to_string())?;
        self.part_dir()
    }

    /// The job's number (the first field of every shard key).
    pub fn job(&self) -> u64 {
        self.lock().job
    }

    /// The directory of row inputs' parts, made (under `$TMPDIR`) on first use.
    pub fn part_dir(&self) -> Result<&PartDir, String> {
        if let Some(dir) = self.parts.get() {
            return Ok(dir);
        }
        let dir =
            PartDir::create().map_err(|e| format!("{KEEP_FAILED}: cannot make a directory for them: {e}"))?;
        Ok(self.parts.get_or_init(|| dir))
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
        match self.run_tasks(level, tasks, work, (cosets.start as u64, per_task as u64), done)? {
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
    /// goes to `take(rows, words)` on this thread as soon as it arrives (outside the scheduler's
    /// lock). A result `take` refuses as bad is logged and its task handed out again; a fatal
    /// refusal ends the level with its reason. `done` counts rows taken.
    #[allow(clippy::too_many_arguments)]
    pub fn run_items(
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
        let work = Work::Items { results, max_words_per_row };
        s.level = Some(Level { depth: level, remaining: tasks.len(), tasks, work });
        self.changed.notify_all();
        let mut taken = 0usize;
        loop {
            if let Some(why) = s.aborted.clone() {
                s.level = None;
                return Err(why);
            }
            let lvl = s.level.as_mut().expect("published");
            let Work::Items { results, .. } = &mut lvl.work else { unreachable!("an H48 level stays one") };
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
            requeue_expired(&mut lvl.tasks, &self.changed);
            s = self.changed.wait_timeout(s, Duration::from_millis(200)).unwrap_or_else(|e| e.into_inner()).0;
        }
        s.level = None;
        Ok(())
    }

    /// Publishes a level, waits until every task is merged (re-queueing expired leases, counting
    /// progress as `base + per_task` units per merged task), unpublishes it and returns its work.
    fn run_tasks(
        &self,
        depth: u32,
        tasks: Vec<Task>,
        work: Work,
        (base, per_task): (u64, u64),
        progress: &AtomicU64,
    ) -> Result<Work, String> {
        let mut s = self.lock();
        s.level = Some(Level { depth, remaining: tasks.len(), tasks, work });
        self.changed.notify_all();
        loop {
            let in_flight =
                matches!(&s.level, Some(Level { work: Work::Rows { merging, .. }, .. }) if *merging > 0);
            if let Some(why) = s.aborted.clone() {
                if !in_flight {
                    s.level = None;
                    return Err(why);
                }
                s = self
                    .changed
                    .wait_timeout(s, Duration::from_millis(50))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                continue;
            }
            let lvl = s.level.as_mut().expect("published");
            let done = lvl.tasks.iter().filter(|t| t.state == TaskState::Done).count();
            progress.store(base + done as u64 * per_task, Ordering::Relaxed);
            if lvl.remaining == 0 {
                break;
            }
            requeue_expired(&mut lvl.tasks, &self.changed);
            s = self.changed.wait_timeout(s, Duration::from_millis(200)).unwrap_or_else(|e| e.into_inner()).0;
        }
        Ok(s.level.take().expect("published").work)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polls until a task is leased.
    fn lease(shared: &Shared, worker: u64) -> Lease {
        loop {
            match shared.poll_wait(worker, Duration::from_millis(50)) {
                Poll::Task(lease) => return lease,
                Poll::Wait => continue,
                Poll::Done => panic!("job done before a lease"),
            }
        }
    }

    #[test]
    fn coset_levels_keep_counters_and_ignore_results_of_earlier_levels() {
        let shared = Shared::new(1, "product/cube/htm/2".into(), Duration::from_secs(60), 2);
        let worker = shared.register("test", 1, 0);
        let done = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let run = scope.spawn(|| shared.run_cosets(7, 10..14, 3, &done));
            let mut seen = Vec::new();
            for _ in 0..2 {
                let l = lease(&shared, worker);
                assert_eq!((l.depth, l.kind), (7, TaskKind::Cosets));
                // A late result of an earlier level with the same task number is ignored...
                assert_eq!(shared.complete(6, l.task, vec![9; 6], vec![]), Ok(false));
                // ...a result of the wrong length is refused...
                assert!(shared.complete(7, l.task, vec![1; 5], vec![]).is_err());
                // ...and the right one is kept.
                let words: Vec<u64> = (0..6).map(|i| l.rows.start as u64 * 10 + i).collect();
                assert_eq!(shared.complete(7, l.task, words, vec![]), Ok(true));
                assert_eq!(
                    shared.complete(7, l.task, vec![0; 6], vec![]),
                    Ok(false),
                    "a duplicate is ignored"
                );
                seen.push(l.rows);
            }
            seen.sort_by_key(|r| r.start);
            assert_eq!(seen, [10..12, 12..14]);
            let counters = run.join().unwrap().unwrap();
            assert_eq!(counters, [100, 101, 102, 103, 104, 105, 120, 121, 122, 123, 124, 125]);
        });
        assert_eq!(done.load(Ordering::Relaxed), 14);
    }
}
