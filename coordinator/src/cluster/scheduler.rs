//! Distributed levels: a [`ClusterExpander`] cuts each level into row-range tasks, leases them
//! to workers through the gRPC service in `service.rs`, and merges the shards they return. A
//! product job is one level of independent coset tasks ([`Shared::run_cosets`]) whose results
//! are counters, kept as they arrive.
//!
//! While a level runs, the engine's `visited`, `frontier` and `next` arrays are published in
//! [`Shared`] as raw pointers, valid until the expander returns; every access to them happens
//! under the state mutex while the level is published, and the expander unpublishes under the
//! same mutex before returning, so no handler can touch them afterwards.

use shared::bfs::task::RowBits;
use shared::bfs::{BfsError, BitStore, Direction, Expander, LevelInput};
use shared::cube::Move;
use shared::shard::{self, ShardKey};
use shared::space::RowIndex;
use shared::wire::{level_input_name, SparseRows};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How one level's data is reached while published.
struct Published {
    visited: *const u64,
    frontier: *const u64,
    next: *const AtomicU64,
    len: usize,
}

// SAFETY: the pointers are only dereferenced under the `Shared` mutex while the level that
// published them is running (see the module doc); the data they point to is Sync.
unsafe impl Send for Published {}

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
    /// Row ranges of a BFS level, merged into the published bit arrays.
    Rows {
        dir: Direction,
        words: usize,
        columns: u32,
        data: Published,
        /// The level's input as one shard, encoded once when the first worker asks for it.
        input: Option<Arc<Vec<u8>>>,
    },
    /// Independent coset tasks of a product job: each result is `words_per_task` words per
    /// coset of the task, kept until the level ends.
    Cosets { words_per_task: usize, results: Vec<Vec<u64>> },
    /// Row tasks of an H48 build: each result waits here until the job's thread takes it
    /// (see [`Shared::run_items`]); a row's result takes at most `max_words_per_row` words.
    Items { results: Vec<Option<Vec<u64>>>, max_words_per_row: usize },
}

/// Hands out again the tasks whose lease has expired.
fn requeue_expired(tasks: &mut [Task]) {
    let now = Instant::now();
    for (i, t) in tasks.iter_mut().enumerate() {
        if let TaskState::Leased { worker, deadline } = t.state {
            if deadline < now {
                tracing::warn!(
                    "lease of task {i} (attempt {}) by worker {worker} expired; re-queued",
                    t.attempt
                );
                t.state = TaskState::Pending;
            }
        }
    }
}

/// The kind of a leased task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskKind {
    Rows(Direction),
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
}

/// The scheduler state shared by the expander (the search thread) and the gRPC handlers.
pub struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    pub lease_time: Duration,
    pub tasks_per_level: usize,
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
            }),
            changed: Condvar::new(),
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
        loop {
            match self.poll(worker) {
                Poll::Wait if Instant::now() < end => {
                    let s = self.lock();
                    let left = end.saturating_duration_since(Instant::now());
                    drop(self.changed.wait_timeout(s, left.min(Duration::from_millis(100))));
                }
                answer => return answer,
            }
        }
    }

    /// A task for `worker`, if any is pending now.
    pub fn poll(&self, worker: u64) -> Poll {
        let mut s = self.lock();
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
        let kind = match &level.work {
            Work::Rows { dir, .. } => TaskKind::Rows(*dir),
            Work::Cosets { .. } => TaskKind::Cosets,
            Work::Items { .. } => TaskKind::H48,
        };
        Poll::Task(Lease {
            job,
            task: i as u64,
            attempt: task.attempt,
            depth: level.depth,
            kind,
            rows: task.rows.clone(),
            job_spec: spec,
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

    /// The current level's input (see [`level_input_name`]) as an encoded shard keyed by
    /// [`shard::LEVEL_INPUT`] and attempt 0, encoded once per level and shared. `None` when the
    /// level is not current or the name is not its input.
    pub fn input(&self, job: u64, depth: u32, name: &str) -> Option<Arc<Vec<u8>>> {
        let mut s = self.lock();
        if let Some(input) = s.named_inputs.get(&format!("{name}/{depth}")) {
            return Some(input.clone());
        }
        let level = s.level.as_mut().filter(|l| l.depth == depth)?;
        let Work::Rows { dir, words, columns, data, input } = &mut level.work else { return None };
        if name != level_input_name(*dir) {
            return None;
        }
        let backward = *dir == Direction::Backward;
        // SAFETY: the level is published (checked under the lock), so the arrays are alive and
        // `len` words long; the engine does not write them during the level.
        let source = unsafe {
            std::slice::from_raw_parts(if backward { data.visited } else { data.frontier }, data.len)
        };
        let (words, columns) = (*words, *columns);
        let encoded = input.get_or_insert_with(|| {
            let key = ShardKey { job, task: shard::LEVEL_INPUT, attempt: 0, level: depth };
            Arc::new(SparseRows::encode(key, source, words, columns, backward))
        });
        Some(encoded.clone())
    }

    /// The limit of an upload for `task` of the running level, or `None` if the level has no
    /// such task.
    pub fn upload_limit(&self, task: u64) -> Option<UploadLimit> {
        let s = self.lock();
        let level = s.level.as_ref()?;
        let rows = level.tasks.get(task as usize)?.rows.len();
        let max_words = match &level.work {
            Work::Rows { words, .. } => rows.div_ceil(64) + rows * words,
            Work::Cosets { words_per_task, .. } => rows * words_per_task,
            Work::Items { max_words_per_row, .. } => {
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

    /// Merges a task's result. A row task's is its rows as a sparse row set (see
    /// [`SparseRows`]; `words` is its payload), each occupied row ORed into `next` minus
    /// `visited` (forward results include visited entries; backward ones hold only new ones).
    /// A coset task's is its counters, kept as they are. Results for a finished task or another
    /// level are ignored (merging is idempotent, so a duplicate would do no harm either).
    pub fn complete(&self, depth: u32, task: u64, words: Vec<u64>, wire_bytes: u64) -> Result<bool, String> {
        let mut s = self.lock();
        s.bytes_in += wire_bytes;
        let Some(level) = s.level.as_mut().filter(|l| l.depth == depth) else { return Ok(false) };
        let Some(t) = level.tasks.get(task as usize) else { return Err(format!("no task {task}")) };
        if t.state == TaskState::Done {
            return Ok(false);
        }
        let rows = t.rows.clone();
        match &mut level.work {
            Work::Rows { words: w, data, .. } => {
                let w = *w;
                // SAFETY: as in `input`; `next` is only written through atomics.
                let (visited, next) = unsafe {
                    (
                        std::slice::from_raw_parts(data.visited, data.len),
                        std::slice::from_raw_parts(data.next, data.len),
                    )
                };
                let result = SparseRows::from_payload(words, rows.len(), w)?;
                for (k, r) in rows.enumerate() {
                    let Some(bits) = result.row(k as u32) else { continue };
                    let first = r as usize * w;
                    for ((&b, v), n) in
                        bits.iter().zip(&visited[first..first + w]).zip(&next[first..first + w])
                    {
                        let new = b & !v;
                        if new != 0 {
                            n.fetch_or(new, Ordering::Relaxed);
                        }
                    }
                }
            }
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

    /// Publishes a level, waits until every task is merged (re-queueing expired leases), and
    /// unpublishes it.
    fn run_level(
        &self,
        depth: u32,
        dir: Direction,
        rows: u32,
        columns: u32,
        level: &LevelInput,
        next: &mut BitStore,
    ) -> Result<(), String> {
        let words = level.words_per_row;
        let per_task = (rows as usize).div_ceil(self.tasks_per_level).max(1) as u32;
        let tasks: Vec<Task> = (0..rows)
            .step_by(per_task as usize)
            .map(|a| Task { rows: a..(a + per_task).min(rows), state: TaskState::Pending, attempt: 0 })
            .collect();
        let data = Published {
            visited: level.visited.as_ptr(),
            frontier: level.frontier.as_ptr(),
            next: next.atomics().as_ptr(),
            len: level.visited.len(),
        };
        let work = Work::Rows { dir, words, columns, data, input: None };
        self.run_tasks(depth, tasks, work, (0, per_task as u64), &level.progress.rows_done).map(drop)
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
            requeue_expired(&mut lvl.tasks);
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
            if let Some(why) = s.aborted.clone() {
                s.level = None;
                return Err(why);
            }
            let lvl = s.level.as_mut().expect("published");
            let done = lvl.tasks.iter().filter(|t| t.state == TaskState::Done).count();
            progress.store(base + done as u64 * per_task, Ordering::Relaxed);
            if lvl.remaining == 0 {
                break;
            }
            requeue_expired(&mut lvl.tasks);
            s = self.changed.wait_timeout(s, Duration::from_millis(200)).unwrap_or_else(|e| e.into_inner()).0;
        }
        Ok(s.level.take().expect("published").work)
    }
}

/// Expands levels by leasing row ranges to workers.
pub struct ClusterExpander<'a> {
    pub shared: &'a Shared,
}

impl<I: RowIndex> Expander<I> for ClusterExpander<'_> {
    fn expand(
        &self,
        space: &I,
        _moves: &[Move],
        direction: Direction,
        level: &LevelInput,
        next: &mut BitStore,
    ) -> Result<(), BfsError> {
        self.shared
            .run_level(level.depth, direction, space.row_count(), space.column_count(), level, next)
            .map_err(BfsError::from)
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
                assert_eq!(shared.complete(6, l.task, vec![9; 6], 0), Ok(false));
                // ...a result of the wrong length is refused...
                assert!(shared.complete(7, l.task, vec![1; 5], 0).is_err());
                // ...and the right one is kept.
                let words: Vec<u64> = (0..6).map(|i| l.rows.start as u64 * 10 + i).collect();
                assert_eq!(shared.complete(7, l.task, words, 0), Ok(true));
                assert_eq!(shared.complete(7, l.task, vec![0; 6], 0), Ok(false), "a duplicate is ignored");
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
