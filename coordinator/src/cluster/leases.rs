//! Levels of independent leased tasks on the hub (the task table is the protocol's core,
//! `shared::runtime::leases::TaskTable`): a product job's coset ranges ([`Hub::run_cosets`]) or
//! an H48 build's rows ([`Hub::run_h48_rows`]), the results each task may send, and the calls
//! workers make on their leases.

use super::hub::Hub;
use super::work::{holds, CosetWords, ResultWords, Work};
use super::ClusterError;
use shared::runtime::leases::TaskTable;
use shared::wire::Malformed;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Failed attempts of one task (computations that returned an error) that end the job.
pub const FAILURES_TO_END: u32 = 2;

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

impl Hub {
    /// Runs `f` on the level's task table, if a level of leased tasks runs.
    fn with_table<T>(&self, f: impl FnOnce(&mut TaskTable, &ResultWords) -> T) -> Option<T> {
        let mut s = self.lock();
        match &mut s.work {
            Work::Leases { table, words, .. } => Some(f(table, words)),
            _ => None,
        }
    }

    /// Extends the lease of `task` if `worker` still holds its attempt `attempt`.
    pub fn renew(&self, worker: u64, task: u64, attempt: u32) -> bool {
        let now = self.now_ms();
        self.lock().members.seen(worker)
            && self.with_table(|t, _| t.renew(worker, task, attempt, now)).unwrap_or(false)
    }

    /// Hands `task` out again at once if `worker` holds its attempt `attempt` and gives it up
    /// (it cannot finish it, e.g. the rows it reads are out of its reach): the task does not wait
    /// for the lease to end. Returns whether it did.
    pub fn release(&self, worker: u64, task: u64, attempt: u32) -> bool {
        let released = self.with_table(|t, _| t.release(worker, task, attempt)).unwrap_or(false);
        if released {
            tracing::warn!("task {task} (attempt {attempt}) given up by worker {worker}: handed out again");
            self.changed.notify_all();
        }
        released
    }

    /// `worker`'s attempt of `task` failed with `why` (its computation returned an error): the
    /// task is handed out again, and a task that failed [`FAILURES_TO_END`] times ends the job
    /// with the reason (the same input fails alike on any worker: a coset that leaves too many
    /// positions unreached, for one). Returns whether `worker` held the attempt.
    pub fn fail(&self, worker: u64, task: u64, attempt: u32, why: &str) -> bool {
        let failed =
            self.with_table(|t, _| t.fail(worker, task, attempt).map(|n| (n, t.rows(task)))).flatten();
        let Some((failures, rows)) = failed else { return false };
        let rows = rows.map_or(String::new(), |r| format!(" (rows or cosets {r:?})"));
        if failures >= FAILURES_TO_END {
            self.abort(format!(
                "task {task}{rows} failed {failures} times; the last on worker {worker}: {why}"
            ));
        } else {
            tracing::warn!("task {task}{rows} failed on worker {worker} ({why}); handed out again");
            self.changed.notify_all();
        }
        true
    }

    /// The limit of an upload for `task` of the running level, or `None` if the level has no
    /// such task.
    pub fn upload_limit(&self, task: u64) -> Option<UploadLimit> {
        let job = self.job();
        self.with_table(|t, words| {
            let rows = t.rows(task)?.len();
            let max_words = match words {
                ResultWords::Cosets(words) => rows.saturating_mul(words.limit()),
                ResultWords::H48Rows { max_words_per_row } => {
                    shared::wire::h48::max_task_words(rows, *max_words_per_row)
                }
            };
            Some(UploadLimit { job, depth: t.level, max_words })
        })
        .flatten()
    }

    /// Hands `task` out again at once if its attempt `attempt` is still leased (its holder sent
    /// a result that was refused).
    pub fn return_lease(&self, task: u64, attempt: u32) {
        self.with_table(|t, _| t.return_lease(task, attempt));
        self.changed.notify_all();
    }

    /// Takes a coset or H48 task's result (decoded as `words`): kept until the job's thread
    /// takes it. Results for a finished task or another level are ignored (`Ok(false)`); a
    /// coset result of the wrong size is refused and its task handed out again.
    pub fn complete(&self, depth: u32, task: u64, words: Vec<u64>) -> Result<bool, ClusterError> {
        let taken = self.with_table(|t, limit| {
            let Some(rows) = t.rows(task) else { return Err(ClusterError::NoTask(task)) };
            if let ResultWords::Cosets(per_coset) = *limit {
                let cosets = rows.len();
                let fits = match per_coset {
                    CosetWords::Exactly(n) => words.len() == cosets * n,
                    CosetWords::AtMost(n) => words.len() <= cosets.saturating_mul(n),
                };
                if !fits && t.level == depth {
                    return Err(ClusterError::WrongCounts { words: words.len(), cosets, per_coset });
                }
            }
            Ok(t.complete(depth, task, words))
        });
        let taken = taken.unwrap_or(Ok(false))?;
        if taken {
            self.changed.notify_all();
        }
        Ok(taken)
    }

    /// Publishes a level of leased tasks, each needing `needs` bytes of a worker's memory.
    fn publish(&self, table: TaskTable, words: ResultWords, homes: &str, needs: u64) {
        self.lock().work = Work::Leases { table, words, homes: homes.to_string(), needs };
        self.changed.notify_all();
    }

    /// Runs coset tasks `cosets` (of a product or a coset job, cut into `tasks_per_level`
    /// ranges) as one level and returns their results in task order, `words` per coset; each
    /// task goes only to a worker whose memory limit is at least `needs` (a level no live worker
    /// can hold waits, saying so every 30 s). `done` counts finished cosets on top of
    /// `cosets.start`. `level` must differ between the calls of one job: it tells a late result
    /// of an earlier call from one of this call.
    pub fn run_cosets(
        &self,
        level: u32,
        cosets: Range<u32>,
        words: CosetWords,
        needs: u64,
        done: &AtomicU64,
    ) -> Result<Vec<u64>, ClusterError> {
        let per_task = cosets.len().div_ceil(self.tasks_per_level).max(1) as u32;
        let ranges = TaskTable::even(cosets.clone(), per_task);
        let mut results = vec![Vec::new(); ranges.len()];
        let lease_ms = self.lease_time.as_millis() as u64;
        self.publish(TaskTable::new(level, ranges, lease_ms), ResultWords::Cosets(words), "", needs);
        let mut warned: Option<Instant> = None;
        let mut s = self.lock();
        loop {
            self.tick(&mut s);
            if let Some(why) = s.aborted.clone() {
                s.work = Work::Idle;
                return Err(ClusterError::Aborted(why));
            }
            let Work::Leases { table, .. } = &mut s.work else { unreachable!("a coset level stays one") };
            for (task, _, words) in table.take_results() {
                results[task as usize] = words;
            }
            let (_, finished, leased) = table.counts();
            done.store(cosets.start as u64 + finished * per_task as u64, Ordering::Relaxed);
            if table.finished() {
                break;
            }
            let limits: Vec<u64> = s.members.live().map(|m| m.mem_limit).collect();
            let none_fits = !limits.is_empty() && limits.iter().all(|&l| !holds(l, needs));
            if leased == 0
                && none_fits
                && warned.is_none_or(|t: Instant| t.elapsed() > Duration::from_secs(30))
            {
                tracing::warn!(
                    "cosets wait: one takes {} and no live worker may use that much (--mem-limit at most {}); \
                     start a worker with --mem-limit {}G or more",
                    shared::units::gib(needs),
                    shared::units::gib(limits.iter().copied().max().unwrap_or(0)),
                    needs.div_ceil(1 << 30)
                );
                warned = Some(Instant::now());
            }
            s = self.changed.wait(s, Duration::from_millis(200));
        }
        s.work = Work::Idle;
        Ok(results.concat())
    }

    /// Runs the row tasks of an H48 build's level `level` over `rows` (increasing; of a space
    /// of `total` rows; places in the job's task order, which the job maps to the index's
    /// rows: `KeptLevels::run_rows`), each row's result at most `max_words_per_row` words:
    /// each task's result goes to `take(rows, words)` on this thread as soon as it arrives
    /// (outside the lock). A result `take` refuses as bad is logged and its task handed out
    /// again; a fatal refusal ends the level with its reason. The tasks read rows that the
    /// workers `readers` keep (named by the input `homes`): if one of them is lost, the level
    /// stops ([`ClusterError::InputsLost`]; the results taken so far stay taken). A task goes
    /// first to the worker `prefer` names for most of its rows (per row, 0: none; empty: no
    /// preference), the one that keeps what it reads. `done` counts rows taken.
    #[allow(clippy::too_many_arguments)]
    pub fn run_h48_rows(
        &self,
        level: u32,
        rows: &[u32],
        total: u32,
        max_words_per_row: usize,
        (homes, readers, prefer): (&str, &[u64], &[u64]),
        done: &AtomicU64,
        mut take: impl FnMut(Range<u32>, Vec<u64>) -> Result<(), Refusal>,
    ) -> Result<(), ClusterError> {
        // Tasks are runs of consecutive rows, at most a share of the space each.
        let per_task = (total as usize).div_ceil(self.tasks_per_level).max(1) as u32;
        let ranges = TaskTable::runs(rows, per_task);
        if ranges.is_empty() {
            return Ok(());
        }
        let lease_ms = self.lease_time.as_millis() as u64;
        let table = TaskTable::new(level, ranges, lease_ms).prefer(|r| most_named(prefer, r.clone()));
        self.publish(table, ResultWords::H48Rows { max_words_per_row }, homes, 0);
        let mut waiting: Option<Instant> = None;
        let mut s = self.lock();
        loop {
            self.tick(&mut s);
            if let Some(why) = s.aborted.clone() {
                s.work = Work::Idle;
                return Err(ClusterError::Aborted(why));
            }
            let lost = readers.iter().copied().find(|&w| !s.members.is_live(w));
            let Work::Leases { table, .. } = &mut s.work else { unreachable!("an H48 level stays one") };
            let ready = table.take_results();
            if ready.is_empty() {
                if let Some(lost) = lost {
                    // Results that arrived before are taken first: they hold finished rows.
                    s.work = Work::Idle;
                    self.changed.notify_all();
                    return Err(ClusterError::InputsLost(lost));
                }
                if table.finished() {
                    break;
                }
                let (_, _, leased) = table.counts();
                let live: Vec<u64> = s.members.live().map(|m| m.id).collect();
                let stuck = leased == 0 && !live.is_empty() && live.iter().all(|w| s.full.contains(w));
                if stuck && waiting.is_none_or(|t: Instant| t.elapsed() > Duration::from_secs(30)) {
                    tracing::warn!(
                        "level {level}: tasks wait: none of the {} live workers has room for the rows it would keep (their --mem-limit); start a worker with room",
                        live.len()
                    );
                    waiting = Some(Instant::now());
                }
                s = self.changed.wait(s, Duration::from_millis(200));
                continue;
            }
            drop(s);
            let mut refused = Vec::new();
            for (task, range, words) in ready {
                let n = range.len() as u64;
                match take(range, words) {
                    Ok(()) => {
                        done.fetch_add(n, Ordering::Relaxed);
                    }
                    Err(Refusal::Bad(why)) => {
                        tracing::warn!("result of task {task} refused ({why}); handed out again");
                        refused.push(task);
                    }
                    Err(Refusal::Fatal(why)) => {
                        self.lock().work = Work::Idle;
                        return Err(ClusterError::Fatal(why));
                    }
                }
            }
            self.with_table(|t, _| refused.iter().for_each(|&task| t.refuse(task)));
            self.changed.notify_all();
            s = self.lock();
        }
        s.work = Work::Idle;
        Ok(())
    }
}

/// The worker named most often in `prefer` over `rows` (0 and rows beyond it name none).
fn most_named(prefer: &[u64], rows: Range<u32>) -> Option<u64> {
    let mut count: std::collections::BTreeMap<u64, usize> = Default::default();
    for r in rows {
        if let Some(&w) = prefer.get(r as usize).filter(|&&w| w != 0) {
            *count.entry(w).or_insert(0) += 1;
        }
    }
    count.into_iter().max_by_key(|&(w, n)| (n, std::cmp::Reverse(w))).map(|(w, _)| w)
}

#[cfg(test)]
mod tests {
    use super::super::hub::Poll;
    use super::super::work::Lease;
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
            let run = scope.spawn(|| hub.run_cosets(7, 10..14, CosetWords::Exactly(3), 0, &done));
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
            let run = scope.spawn(|| hub.run_cosets(1, 0..2, CosetWords::Exactly(1), 0, &done));
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
            let run = scope.spawn(|| hub.run_cosets(1, 0..1, CosetWords::Exactly(1), 0, &done));
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
            let run = scope.spawn(|| hub.run_cosets(1, 0..1, CosetWords::Exactly(1), 0, &done));
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
                let result = hub.run_h48_rows(
                    3,
                    &[0, 1, 2, 3],
                    4,
                    1,
                    ("h11-homes/1", &[keeper], &[]),
                    &done,
                    |rows, _| {
                        taken.push(rows);
                        Ok(())
                    },
                );
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
            let run = scope
                .spawn(|| hub.run_h48_rows(1, &[0, 1, 2, 3], 4, 1, ("", &[], &[]), &done, |_, _| Ok(())));
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
    fn coset_tasks_go_only_to_workers_whose_memory_limit_holds_one() {
        let hub = hub(Duration::from_secs(30));
        let gib = 1u64 << 30;
        let small = hub.register("small", 1, (0, 2 * gib), "", 0);
        let done = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let run = scope.spawn(|| hub.run_cosets(1, 0..2, CosetWords::Exactly(1), 4 * gib, &done));
            while hub.status().tasks == 0 {
                std::thread::sleep(Duration::from_millis(5));
            }
            // The level waits while no worker can hold a coset...
            assert!(matches!(hub.poll_wait(small, Duration::from_millis(300)), Poll::Wait));
            // ...and goes to one that can, as soon as it comes.
            let big = hub.register("big", 1, (0, 8 * gib), "", 0);
            for _ in 0..2 {
                let l = lease(&hub, big);
                assert!(hub.complete(1, l.task, vec![1; l.rows.len()]).unwrap());
                assert!(matches!(hub.poll_wait(small, Duration::from_millis(1)), Poll::Wait | Poll::Done));
            }
            assert_eq!(run.join().unwrap().unwrap(), [1, 1]);
        });
    }

    #[test]
    fn a_task_that_fails_twice_ends_the_job_with_its_reason() {
        let hub = hub(Duration::from_secs(30));
        let (a, b) = (hub.register("a", 1, (0, 0), "", 0), hub.register("b", 1, (0, 0), "", 0));
        let done = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let run = scope.spawn(|| hub.run_cosets(1, 0..1, CosetWords::Exactly(1), 0, &done));
            let first = lease(&hub, a);
            assert!(!hub.fail(b, first.task, first.attempt, "not b's"), "only the holder's attempt");
            assert!(hub.fail(a, first.task, first.attempt, "too many unreached"));
            let second = lease(&hub, b);
            assert_eq!((second.task, second.attempt), (first.task, 2), "handed out again");
            assert!(hub.fail(b, second.task, second.attempt, "too many unreached"));
            let why = run.join().unwrap().unwrap_err().to_string();
            assert!(why.contains("failed 2 times") && why.contains("too many unreached"), "{why}");
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
                hub.run_h48_rows(2, &[3, 4, 9], 10, 4, ("", &[], &[]), &done, |rows, words| {
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
            let run = scope.spawn(move || hub.run_h48_rows(3, &[0], 10, 4, ("", &[], &[]), done, fatal));
            let l = lease(hub, worker);
            assert!(hub.complete(3, l.task, vec![1]).unwrap());
            assert_eq!(run.join().unwrap().unwrap_err().to_string(), "disk full");
        });
        assert!(matches!(hub.poll_wait(worker, Duration::from_millis(10)), Poll::Wait), "the level is gone");
    }
}
