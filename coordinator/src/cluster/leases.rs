//! Levels of independent leased tasks, the hub's first kind of work: a product job's coset
//! ranges ([`Hub::run_cosets`]) or an H48 build's table rows ([`Hub::run_h48_rows`]). A task
//! is leased to one worker at a time; a lease that expires, or whose holder is declared lost,
//! is handed out again, and a result is taken once, keyed by its task.

use super::hub::{Hub, Signal};
use super::members::Members;
use super::ClusterError;
use shared::wire::Malformed;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum TaskState {
    Pending,
    Leased { worker: u64, deadline: Instant },
    Done,
}

pub(super) struct Task {
    pub(super) rows: Range<u32>,
    pub(super) state: TaskState,
    pub(super) attempt: u32,
}

pub(super) struct Level {
    pub(super) depth: u32,
    pub(super) tasks: Vec<Task>,
    pub(super) remaining: usize,
    pub(super) work: Work,
    /// The input naming where the rows the tasks read are kept (H48 levels), or empty.
    pub(super) homes: String,
}

/// What a level's tasks compute and where their results go.
pub(super) enum Work {
    /// Independent coset tasks (of a product job or a coset job): each result is `words` per
    /// coset of the task, kept until the level ends.
    Cosets { words: CosetWords, results: Vec<Vec<u64>> },
    /// Row tasks of an H48 build: each result waits here until the job's thread takes it
    /// (see [`Hub::run_h48_rows`]); a row's result takes at most `max_words_per_row` words.
    H48Rows { results: Vec<Option<Vec<u64>>>, max_words_per_row: usize },
}

/// How many words a coset's result takes: always the same (a product job's counters), or at
/// most a number (a coset job's counts and the positions it left unreached).
#[derive(Clone, Copy, Debug)]
pub enum CosetWords {
    Exactly(usize),
    AtMost(usize),
}

impl CosetWords {
    fn limit(self) -> usize {
        match self {
            CosetWords::Exactly(n) | CosetWords::AtMost(n) => n,
        }
    }
}

/// Hands out again the tasks whose lease has expired or whose holder is lost; tells waiting
/// polls if there were any.
pub(super) fn requeue(tasks: &mut [Task], members: &Members, changed: &Signal) {
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
    Bad(Malformed),
    /// The job cannot go on (e.g. its output cannot be written).
    Fatal(anyhow::Error),
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
    /// See [`Level::homes`].
    pub homes: String,
}

impl Hub {
    /// Extends the lease of `task` if `worker` still holds its attempt `attempt`.
    pub fn renew(&self, worker: u64, task: u64, attempt: u32) -> bool {
        let lease_time = self.lease_time;
        self.held(worker, task, attempt, |t| {
            t.state = TaskState::Leased { worker, deadline: Instant::now() + lease_time }
        })
    }

    /// Hands `task` out again at once if `worker` holds its attempt `attempt` and gives it up
    /// (it cannot finish it, e.g. the rows it reads are out of its reach): the task does not wait
    /// for the lease to end. Returns whether it did.
    pub fn release(&self, worker: u64, task: u64, attempt: u32) -> bool {
        let released = self.held(worker, task, attempt, |t| t.state = TaskState::Pending);
        if released {
            tracing::warn!("task {task} (attempt {attempt}) given up by worker {worker}: handed out again");
            self.changed.notify_all();
        }
        released
    }

    /// Applies `change` to `task` if `worker` (a member) holds its attempt `attempt`.
    fn held(&self, worker: u64, task: u64, attempt: u32, change: impl FnOnce(&mut Task)) -> bool {
        let mut s = self.lock();
        if !s.members.seen(worker) {
            return false;
        }
        let Some(t) = s.level.as_mut().and_then(|l| l.tasks.get_mut(task as usize)) else { return false };
        match t.state {
            TaskState::Leased { worker: holder, .. } if holder == worker && t.attempt == attempt => {
                change(t);
                true
            }
            _ => false,
        }
    }

    /// The limit of an upload for `task` of the running level, or `None` if the level has no
    /// such task.
    pub fn upload_limit(&self, task: u64) -> Option<UploadLimit> {
        let s = self.lock();
        let level = s.level.as_ref()?;
        let rows = level.tasks.get(task as usize)?.rows.len();
        let max_words = match &level.work {
            Work::Cosets { words, .. } => rows.saturating_mul(words.limit()),
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
    pub fn complete(&self, depth: u32, task: u64, words: Vec<u64>) -> Result<bool, ClusterError> {
        let mut s = self.lock();
        let Some(level) = s.level.as_mut().filter(|l| l.depth == depth) else { return Ok(false) };
        let Some(t) = level.tasks.get(task as usize) else { return Err(ClusterError::NoTask(task)) };
        if t.state == TaskState::Done {
            return Ok(false);
        }
        let rows = t.rows.clone();
        match &mut level.work {
            Work::H48Rows { results, .. } => results[task as usize] = Some(words),
            Work::Cosets { words: per_coset, results } => {
                let cosets = rows.len();
                let fits = match *per_coset {
                    CosetWords::Exactly(n) => words.len() == cosets * n,
                    CosetWords::AtMost(n) => words.len() <= cosets.saturating_mul(n),
                };
                if !fits {
                    return Err(ClusterError::WrongCounts {
                        words: words.len(),
                        cosets,
                        per_coset: *per_coset,
                    });
                }
                results[task as usize] = words;
            }
        }
        level.tasks[task as usize].state = TaskState::Done;
        level.remaining -= 1;
        self.changed.notify_all();
        Ok(true)
    }

    /// Runs a product job's coset tasks `cosets` (cut into `tasks_per_level` ranges) as one
    /// level and returns their results in task order, `words` per coset;
    /// `done` counts finished cosets on top of `cosets.start`. `level` must differ between the
    /// calls of one job: it tells a late result of an earlier call from one of this call.
    pub fn run_cosets(
        &self,
        level: u32,
        cosets: Range<u32>,
        words: CosetWords,
        done: &AtomicU64,
    ) -> Result<Vec<u64>, ClusterError> {
        let per_task = cosets.len().div_ceil(self.tasks_per_level).max(1) as u32;
        let tasks: Vec<Task> = cosets
            .clone()
            .step_by(per_task as usize)
            .map(|a| Task { rows: a..(a + per_task).min(cosets.end), state: TaskState::Pending, attempt: 0 })
            .collect();
        let results = vec![Vec::new(); tasks.len()];
        let work = Work::Cosets { words, results };
        let mut s = self.lock();
        s.level = Some(Level { depth: level, remaining: tasks.len(), tasks, work, homes: String::new() });
        self.changed.notify_all();
        loop {
            self.tick(&mut s);
            if let Some(why) = s.aborted.clone() {
                s.level = None;
                return Err(ClusterError::Aborted(why));
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

    /// Runs the row tasks of an H48 build's level `level` over `rows` (increasing; of a space
    /// of `total` rows), each row's result at most `max_words_per_row` words: each task's result
    /// goes to `take(rows, words)` on this thread as soon as it arrives (outside the lock). A
    /// result `take` refuses as bad is logged and its task handed out again; a fatal refusal
    /// ends the level with its reason. The tasks read rows that the workers `readers` keep
    /// (named by the input `homes`): if one of them is lost, the level stops
    /// ([`ClusterError::InputsLost`]; the results taken so far stay taken). `done` counts rows
    /// taken.
    #[allow(clippy::too_many_arguments)]
    pub fn run_h48_rows(
        &self,
        level: u32,
        rows: &[u32],
        total: u32,
        max_words_per_row: usize,
        (homes, readers): (&str, &[u64]),
        done: &AtomicU64,
        mut take: impl FnMut(Range<u32>, Vec<u64>) -> Result<(), Refusal>,
    ) -> Result<(), ClusterError> {
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
        let homes = homes.to_string();
        s.level = Some(Level { depth: level, remaining: tasks.len(), tasks, work, homes });
        self.changed.notify_all();
        let mut taken = 0usize;
        let mut waiting: Option<Instant> = None;
        loop {
            self.tick(&mut s);
            if let Some(why) = s.aborted.clone() {
                s.level = None;
                return Err(ClusterError::Aborted(why));
            }
            if let Some(&lost) = readers.iter().find(|&&w| !s.members.is_live(w)) {
                // Results that arrived meanwhile are taken first: they hold finished rows.
                let pending = match &s.level.as_ref().expect("published").work {
                    Work::H48Rows { results, .. } => results.iter().any(|r| r.is_some()),
                    _ => false,
                };
                if !pending {
                    s.level = None;
                    self.changed.notify_all();
                    return Err(ClusterError::InputsLost(lost));
                }
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
                            return Err(ClusterError::Fatal(why));
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
            let idle = lvl.tasks.iter().all(|t| !matches!(t.state, TaskState::Leased { .. }));
            let live: Vec<u64> = st.members.live().map(|m| m.id).collect();
            let stuck = idle && !live.is_empty() && live.iter().all(|w| st.full.contains(w));
            if stuck && waiting.is_none_or(|t: Instant| t.elapsed() > Duration::from_secs(30)) {
                tracing::warn!(
                    "level {level}: {} tasks wait: none of the {} live workers has room for the rows it would keep (their --mem-limit); start a worker with room",
                    lvl.remaining,
                    live.len()
                );
                waiting = Some(Instant::now());
            }
            s = self.changed.wait(s, Duration::from_millis(200));
        }
        s.level = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::hub::Poll;
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
            let run = scope.spawn(|| hub.run_cosets(7, 10..14, CosetWords::Exactly(3), &done));
            let mut seen = Vec::new();
            for _ in 0..2 {
                let l = lease(&hub, worker);
                assert_eq!(l.depth, 7);
                // A late result of an earlier level with the same task number is ignored...
                assert!(!hub.complete(6, l.task, vec![9; 6]).unwrap());
                // ...a result of the wrong length is refused...
                assert!(hub.complete(7, l.task, vec![1; 5]).is_err());
                // ...and the right one is kept.
                let words: Vec<u64> = (0..6).map(|i| l.rows.start as u64 * 10 + i).collect();
                assert!(hub.complete(7, l.task, words).unwrap());
                assert!(!hub.complete(7, l.task, vec![0; 6]).unwrap(), "a duplicate is ignored");
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
            let run = scope.spawn(|| hub.run_cosets(1, 0..2, CosetWords::Exactly(1), &done));
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
            let run = scope.spawn(|| hub.run_cosets(1, 0..1, CosetWords::Exactly(1), &done));
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
    fn a_task_given_up_by_its_holder_is_handed_out_again_at_once() {
        let hub = hub(Duration::from_secs(30));
        let (a, b) = (hub.register("a", 1, (0, 0), "", 0), hub.register("b", 1, (0, 0), "", 0));
        let done = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let run = scope.spawn(|| hub.run_cosets(1, 0..1, CosetWords::Exactly(1), &done));
            let l = lease(&hub, a);
            // Only the holder of the current attempt can give it up.
            assert!(!hub.release(b, l.task, l.attempt), "b does not hold the task");
            assert!(!hub.release(a, l.task, l.attempt + 1), "no such attempt");
            assert!(matches!(hub.poll_wait(b, Duration::from_millis(1)), Poll::Wait));
            let started = Instant::now();
            assert!(hub.release(a, l.task, l.attempt));
            let again = lease(&hub, b);
            assert!(started.elapsed() < Duration::from_secs(5), "well before the 600 s lease");
            assert_eq!((again.task, again.attempt), (l.task, 2));
            assert!(!hub.renew(a, l.task, l.attempt) && !hub.release(a, l.task, l.attempt));
            assert!(hub.complete(1, again.task, vec![3]).unwrap());
            assert_eq!(run.join().unwrap().unwrap(), [3]);
        });
    }

    #[test]
    fn an_h48_level_stops_when_a_worker_keeping_rows_it_reads_is_lost_after_taking_what_arrived() {
        let hub = hub(Duration::from_millis(300));
        let (keeper, maker) =
            (hub.register("keeper", 1, (0, 0), "", 0), hub.register("maker", 1, (0, 0), "", 0));
        let done = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let mut taken = Vec::new();
            let run = scope.spawn(|| {
                let result =
                    hub.run_h48_rows(3, &[0, 1, 2, 3], 4, 1, ("h11-homes/1", &[keeper]), &done, |rows, _| {
                        taken.push(rows);
                        Ok(())
                    });
                (result, taken)
            });
            let first = lease(&hub, maker);
            assert_eq!(first.homes, "h11-homes/1", "a task names the homes of the rows it reads");
            assert!(hub.complete(3, first.task, vec![1; first.rows.len()]).unwrap());
            // The keeper falls silent; the maker keeps polling (and so stays live).
            let (result, taken) = loop {
                if run.is_finished() {
                    break run.join().unwrap();
                }
                let _ = hub.poll_wait(maker, Duration::from_millis(50));
            };
            assert!(matches!(result, Err(ClusterError::InputsLost(w)) if w == keeper), "{result:?}");
            assert_eq!(taken, [first.rows], "the result that arrived before is taken");
        });
    }

    #[test]
    fn a_worker_without_room_takes_no_task_until_it_has_some() {
        let hub = hub(Duration::from_secs(30));
        let (full, roomy) = (hub.register("full", 1, (0, 0), "", 0), hub.register("roomy", 1, (0, 0), "", 0));
        hub.set_full([full].into());
        let done = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let run =
                scope.spawn(|| hub.run_h48_rows(1, &[0, 1, 2, 3], 4, 1, ("", &[]), &done, |_, _| Ok(())));
            while hub.status().tasks == 0 {
                std::thread::sleep(Duration::from_millis(5));
            }
            assert!(matches!(hub.poll_wait(full, Duration::from_millis(20)), Poll::Wait));
            let l = lease(&hub, roomy);
            assert!(hub.complete(1, l.task, vec![1; l.rows.len()]).unwrap());
            hub.set_full([].into());
            let l = lease(&hub, full);
            assert!(hub.complete(1, l.task, vec![1; l.rows.len()]).unwrap());
            run.join().unwrap().unwrap();
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
                hub.run_h48_rows(2, &[3, 4, 9], 10, 4, ("", &[]), &done, |rows, words| {
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
            let fatal = |_, _| Err(Refusal::Fatal(anyhow::anyhow!("disk full")));
            let run = scope.spawn(move || hub.run_h48_rows(3, &[0], 10, 4, ("", &[]), done, fatal));
            let l = lease(hub, worker);
            assert!(hub.complete(3, l.task, vec![1]).unwrap());
            assert_eq!(run.join().unwrap().unwrap_err().to_string(), "disk full");
        });
        assert!(matches!(hub.poll_wait(worker, Duration::from_millis(10)), Poll::Wait), "the level is gone");
    }
}
