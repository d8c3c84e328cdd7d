//! Independent tasks leased to workers (a product job's cosets, a coset job's cosets, the rows
//! of an H48 build): the coordinator's [`TaskTable`] and the worker's [`LeaseWorker`].
//!
//! A task is leased to one worker at a time, for a while that the worker renews as it works.
//! A lease that ends unrenewed, or whose holder is lost or gives it up, goes back to the queue
//! and is handed out again with a higher attempt number; the first result of any attempt is
//! taken, later ones are ignored. Time is a number of milliseconds the caller passes in.
//!
//! A task may name the worker it would best run on (the one that holds what it reads): that
//! worker gets it first, and another takes it only once it has none of its own or unnamed
//! left (from the back of the others' queue, which their own workers take from the front).
//!
//! Invariants: a task is leased to at most one worker at once; a task's result is taken at
//! most once; a result for a table of another level is ignored.

use super::WorkerId;
use std::ops::Range;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Pending,
    Leased {
        worker: WorkerId,
        until: u64,
    },
    /// Its result is in, waiting to be taken (or taken).
    Done,
}

#[derive(Clone, Debug)]
struct Task {
    rows: Range<u32>,
    state: State,
    attempt: u32,
    result: Option<Vec<u64>>,
    /// Attempts whose computation failed (not lost or expired: failed, with a reason).
    failures: u32,
    /// The worker it would best run on, if any.
    prefer: Option<WorkerId>,
}

/// A task as it is handed out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub level: u32,
    pub task: u64,
    pub attempt: u32,
    pub rows: Range<u32>,
    /// How long the lease lasts unless renewed.
    pub lease_ms: u64,
}

/// The coordinator's side: one level's tasks, their leases and results.
#[derive(Clone, Debug)]
pub struct TaskTable {
    /// Tells a late result of an earlier table of the job from one of this table.
    pub level: u32,
    tasks: Vec<Task>,
    lease_ms: u64,
    /// Tasks whose result is not in.
    remaining: usize,
    /// Leases handed out again (expired, lost, given up or refused).
    pub requeued: u64,
}

impl TaskTable {
    /// A table of one task per range, leased for `lease_ms` at a time.
    pub fn new(level: u32, ranges: impl IntoIterator<Item = Range<u32>>, lease_ms: u64) -> Self {
        let tasks: Vec<Task> = ranges
            .into_iter()
            .map(|rows| Task {
                rows,
                state: State::Pending,
                attempt: 0,
                result: None,
                failures: 0,
                prefer: None,
            })
            .collect();
        TaskTable { level, remaining: tasks.len(), tasks, lease_ms, requeued: 0 }
    }

    /// `range` cut into runs of `per_task` (the last shorter).
    pub fn even(range: Range<u32>, per_task: u32) -> Vec<Range<u32>> {
        let per = per_task.max(1);
        range.clone().step_by(per as usize).map(|a| a..(a + per).min(range.end)).collect()
    }

    /// Increasing `rows` cut into runs of consecutive rows of at most `per_task` each.
    pub fn runs(rows: &[u32], per_task: u32) -> Vec<Range<u32>> {
        let mut out: Vec<Range<u32>> = Vec::new();
        for &r in rows {
            match out.last_mut() {
                Some(t) if t.end == r && t.len() < per_task.max(1) as usize => t.end = r + 1,
                _ => out.push(r..r + 1),
            }
        }
        out
    }

    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// The rows of `task`, if the table has it.
    pub fn rows(&self, task: u64) -> Option<Range<u32>> {
        self.tasks.get(task as usize).map(|t| t.rows.clone())
    }

    /// Names for each task the worker it would best run on (`None`: any), from its rows.
    pub fn prefer(mut self, by_rows: impl Fn(&Range<u32>) -> Option<WorkerId>) -> Self {
        for t in &mut self.tasks {
            t.prefer = by_rows(&t.rows);
        }
        self
    }

    /// A pending task for `worker`, leased until `now` + the lease time: one it is named for,
    /// else one named for nobody, else the last one named for another worker.
    pub fn poll(&mut self, worker: WorkerId, now: u64) -> Option<Lease> {
        let pending = |t: &Task, prefer: Option<WorkerId>| t.state == State::Pending && t.prefer == prefer;
        let i = (self.tasks.iter().position(|t| pending(t, Some(worker))))
            .or_else(|| self.tasks.iter().position(|t| pending(t, None)))
            .or_else(|| self.tasks.iter().rposition(|t| t.state == State::Pending))?;
        let t = &mut self.tasks[i];
        t.attempt += 1;
        t.state = State::Leased { worker, until: now + self.lease_ms };
        Some(Lease {
            level: self.level,
            task: i as u64,
            attempt: t.attempt,
            rows: t.rows.clone(),
            lease_ms: self.lease_ms,
        })
    }

    fn held(&mut self, worker: WorkerId, task: u64, attempt: u32) -> Option<&mut Task> {
        self.tasks.get_mut(task as usize).filter(|t| {
            t.attempt == attempt && matches!(t.state, State::Leased { worker: w, .. } if w == worker)
        })
    }

    /// Extends `worker`'s lease of `task`'s attempt `attempt`; false if it holds none.
    pub fn renew(&mut self, worker: WorkerId, task: u64, attempt: u32, now: u64) -> bool {
        let until = now + self.lease_ms;
        self.held(worker, task, attempt).map(|t| t.state = State::Leased { worker, until }).is_some()
    }

    /// `worker` gives the attempt up (it cannot finish it): the task is handed out again now.
    pub fn release(&mut self, worker: WorkerId, task: u64, attempt: u32) -> bool {
        let released = self.held(worker, task, attempt).map(|t| t.state = State::Pending).is_some();
        self.requeued += released as u64;
        released
    }

    /// `worker`'s attempt failed (its computation returned an error): the task is handed out
    /// again now, as by [`Self::release`]. Returns how many attempts of it failed so far, or
    /// `None` if `worker` did not hold the attempt.
    pub fn fail(&mut self, worker: WorkerId, task: u64, attempt: u32) -> Option<u32> {
        if !self.release(worker, task, attempt) {
            return None;
        }
        let t = &mut self.tasks[task as usize];
        t.failures += 1;
        Some(t.failures)
    }

    /// Hands the attempt out again if it is still leased (its result was refused as damaged).
    pub fn return_lease(&mut self, task: u64, attempt: u32) {
        if let Some(t) = self.tasks.get_mut(task as usize) {
            if t.attempt == attempt && matches!(t.state, State::Leased { .. }) {
                t.state = State::Pending;
                self.requeued += 1;
            }
        }
    }

    /// A result for `task` of the table of `level`: kept if it is the first (`true`); a result
    /// of another level, or of a task already done, is ignored (`false`).
    pub fn complete(&mut self, level: u32, task: u64, words: Vec<u64>) -> bool {
        if level != self.level {
            return false;
        }
        let Some(t) = self.tasks.get_mut(task as usize).filter(|t| t.state != State::Done) else {
            return false;
        };
        t.state = State::Done;
        t.result = Some(words);
        self.remaining -= 1;
        true
    }

    /// The results that came in since the last call, with their tasks' rows.
    pub fn take_results(&mut self) -> Vec<(u64, Range<u32>, Vec<u64>)> {
        let mut out = Vec::new();
        for (i, t) in self.tasks.iter_mut().enumerate() {
            if let Some(words) = t.result.take() {
                out.push((i as u64, t.rows.clone(), words));
            }
        }
        out
    }

    /// A result the job refused (malformed): its task is handed out again.
    pub fn refuse(&mut self, task: u64) {
        if let Some(t) = self.tasks.get_mut(task as usize).filter(|t| t.state == State::Done) {
            t.state = State::Pending;
            self.remaining += 1;
            self.requeued += 1;
        }
    }

    /// Hands out again the leases that ended by `now` or whose holder is not `live`; returns
    /// the tasks requeued with their holders.
    pub fn expire(&mut self, now: u64, live: impl Fn(WorkerId) -> bool) -> Vec<(u64, WorkerId)> {
        let mut out = Vec::new();
        for (i, t) in self.tasks.iter_mut().enumerate() {
            if let State::Leased { worker, until } = t.state {
                if until <= now || !live(worker) {
                    t.state = State::Pending;
                    out.push((i as u64, worker));
                }
            }
        }
        self.requeued += out.len() as u64;
        out
    }

    /// Hands out again now every task leased to `worker`, which registered again: its new
    /// session holds no lease (its old one's tasks would otherwise wait for their leases to
    /// end). Returns the tasks.
    pub fn forget_worker(&mut self, worker: WorkerId) -> Vec<u64> {
        let mut out = Vec::new();
        for (i, t) in self.tasks.iter_mut().enumerate() {
            if matches!(t.state, State::Leased { worker: w, .. } if w == worker) {
                t.state = State::Pending;
                out.push(i as u64);
            }
        }
        self.requeued += out.len() as u64;
        out
    }

    /// Every task's result is in.
    pub fn finished(&self) -> bool {
        self.remaining == 0
    }

    /// Tasks, those done, and those leased now.
    pub fn counts(&self) -> (u64, u64, u64) {
        let done = self.tasks.len() - self.remaining;
        let leased = self.tasks.iter().filter(|t| matches!(t.state, State::Leased { .. })).count();
        (self.tasks.len() as u64, done as u64, leased as u64)
    }
}

/// What the worker's loop does for its [`LeaseWorker`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseAction {
    /// Ask the coordinator for a task.
    Poll,
    /// Compute the task (report `Computed` or `Failed`).
    Compute(Lease),
    /// Renew the lease of the task being computed (report `Renewed`).
    Renew(Lease),
    /// Stop computing the task: its lease is gone.
    Abandon(Lease),
    /// Give the task back: this worker cannot finish it.
    Release(Lease),
    /// Send the task's result up (report `Uploaded`).
    Upload(Lease, Vec<u8>),
    /// The job is over.
    Finish,
}

/// What happens to a worker of leased tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseEvent {
    /// The coordinator's answer to a poll: a task, nothing now, or the end of the job.
    Task(Lease),
    Nothing,
    Over,
    /// Time passed (a tick): the lease of the task being computed is renewed every third of
    /// its length.
    Tick,
    Renewed {
        lease: Lease,
        ok: bool,
    },
    Computed {
        lease: Lease,
        result: Vec<u8>,
    },
    Failed {
        lease: Lease,
    },
    Uploaded {
        lease: Lease,
    },
}

/// The worker's side: it computes one task at a time and sends up one result while it polls
/// for and computes the next.
#[derive(Debug, Default)]
pub struct LeaseWorker {
    /// Milliseconds a tick stands for.
    tick_ms: u64,
    running: Option<(Lease, u32)>,
    uploading: Option<Lease>,
    /// A result whose upload waits for the one in flight.
    waiting: Option<(Lease, Vec<u8>)>,
    polling: bool,
    over: bool,
    out: std::collections::VecDeque<LeaseAction>,
}

impl LeaseWorker {
    /// A worker whose ticks come every `tick_ms`; its first action polls.
    pub fn new(tick_ms: u64) -> Self {
        let mut w = LeaseWorker { tick_ms: tick_ms.max(1), ..Default::default() };
        w.poll();
        w
    }

    pub fn next_action(&mut self) -> Option<LeaseAction> {
        self.out.pop_front()
    }

    /// Whether the job is over and its last result is sent.
    pub fn is_over(&self) -> bool {
        self.over && self.uploading.is_none() && self.waiting.is_none()
    }

    /// Asks for a task, unless one runs, a poll is out, or a result waits for the upload in
    /// flight (at most one result waits: a worker whose uploads are slower than its tasks
    /// computes no further ahead).
    fn poll(&mut self) {
        if !self.polling && self.running.is_none() && self.waiting.is_none() && !self.over {
            self.polling = true;
            self.out.push_back(LeaseAction::Poll);
        }
    }

    pub fn handle(&mut self, event: LeaseEvent) {
        match event {
            LeaseEvent::Task(lease) => {
                let ours = self.running.as_ref().is_some_and(|(l, _)| *l == lease)
                    || self.uploading.as_ref() == Some(&lease)
                    || self.waiting.as_ref().is_some_and(|(l, _)| *l == lease);
                if ours {
                    // A reply delivered twice.
                } else if self.polling && self.running.is_none() && self.waiting.is_none() {
                    self.polling = false;
                    self.running = Some((lease.clone(), 0));
                    self.out.push_back(LeaseAction::Compute(lease));
                } else {
                    // Not asked for now (a second reply): given back, so that it goes out
                    // again at once instead of when its lease ends.
                    self.out.push_back(LeaseAction::Release(lease));
                }
            }
            LeaseEvent::Nothing => {
                self.polling = false;
                self.poll();
            }
            LeaseEvent::Over => {
                self.polling = false;
                self.over = true;
                if let Some((lease, _)) = self.running.take() {
                    self.out.push_back(LeaseAction::Abandon(lease));
                }
                self.out.push_back(LeaseAction::Finish);
            }
            LeaseEvent::Tick => {
                if let Some((lease, ticks)) = self.running.as_mut() {
                    *ticks += 1;
                    if *ticks as u64 * self.tick_ms >= lease.lease_ms / 3 {
                        *ticks = 0;
                        self.out.push_back(LeaseAction::Renew(lease.clone()));
                    }
                }
            }
            LeaseEvent::Renewed { lease, ok: false } => {
                if self.running.as_ref().is_some_and(|(l, _)| *l == lease) {
                    self.running = None;
                    self.out.push_back(LeaseAction::Abandon(lease));
                    self.poll();
                }
            }
            LeaseEvent::Renewed { .. } => {}
            LeaseEvent::Computed { lease, result } => {
                if self.running.as_ref().is_some_and(|(l, _)| *l == lease) {
                    self.running = None;
                    if self.uploading.is_none() {
                        self.uploading = Some(lease.clone());
                        self.out.push_back(LeaseAction::Upload(lease, result));
                    } else {
                        // No poll while a result waits, so none was waiting before this one.
                        assert!(self.waiting.is_none(), "a computed result would be dropped");
                        self.waiting = Some((lease, result));
                    }
                    self.poll();
                }
            }
            LeaseEvent::Failed { lease } => {
                if self.running.as_ref().is_some_and(|(l, _)| *l == lease) {
                    self.running = None;
                    self.out.push_back(LeaseAction::Release(lease));
                    self.poll();
                }
            }
            LeaseEvent::Uploaded { lease } => {
                if self.uploading.as_ref() == Some(&lease) {
                    self.uploading = None;
                    if let Some((next, result)) = self.waiting.take() {
                        self.uploading = Some(next.clone());
                        self.out.push_back(LeaseAction::Upload(next, result));
                        self.poll();
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results that come faster than uploads: each is uploaded, none dropped, and the worker
    /// computes at most one task ahead of its uploads.
    #[test]
    fn results_faster_than_uploads_are_all_uploaded() {
        let mut table = TaskTable::new(0, TaskTable::even(0..6, 1), 1000);
        let mut w = LeaseWorker::new(100);
        let (mut in_flight, mut uploaded) = (Vec::new(), Vec::new());
        for _ in 0..100 {
            while let Some(action) = w.next_action() {
                match action {
                    LeaseAction::Poll => {
                        if let Some(lease) = table.poll(1, 0) {
                            w.handle(LeaseEvent::Task(lease));
                        }
                    }
                    LeaseAction::Compute(lease) => w.handle(LeaseEvent::Computed { lease, result: vec![1] }),
                    LeaseAction::Upload(lease, _) => in_flight.push(lease),
                    other => panic!("unexpected {other:?}"),
                }
            }
            assert!(in_flight.len() <= 1, "one upload at a time");
            // The upload ends only after the loop has had every chance to compute more.
            if let Some(lease) = in_flight.pop() {
                assert!(table.complete(lease.level, lease.task, vec![1]));
                uploaded.push(lease.task);
                w.handle(LeaseEvent::Uploaded { lease });
            }
        }
        uploaded.sort_unstable();
        assert_eq!(uploaded, [0, 1, 2, 3, 4, 5]);
        assert!(table.finished());
    }

    #[test]
    fn a_task_goes_to_the_worker_it_names_first_and_to_others_from_the_back() {
        // Tasks 0..4 name workers 1, 1, 2, 2; task 4 names none.
        let mut t = TaskTable::new(1, (0..5).map(|i| i..i + 1), 100).prefer(|r| match r.start {
            0 | 1 => Some(1),
            2 | 3 => Some(2),
            _ => None,
        });
        let task = |l: Option<Lease>| l.map(|l| l.task);
        assert_eq!(task(t.poll(2, 0)), Some(2));
        assert_eq!(task(t.poll(3, 0)), Some(4), "unnamed before another's");
        assert_eq!(task(t.poll(3, 0)), Some(3), "another's, from the back");
        assert_eq!(task(t.poll(1, 0)), Some(0));
        assert_eq!(task(t.poll(2, 0)), Some(1), "worker 2 has none of its own left");
        assert_eq!(task(t.poll(1, 0)), None);
        // A lease that ends goes back to the worker it names.
        assert_eq!(t.expire(200, |_| true).len(), 5);
        assert_eq!(task(t.poll(3, 300)), Some(4));
        assert_eq!(task(t.poll(1, 300)), Some(0));
    }

    #[test]
    fn failed_attempts_are_counted_per_task_and_handed_out_again() {
        let mut t = TaskTable::new(0, TaskTable::even(0..2, 1), 1000);
        let (a, b) = (t.poll(1, 0).unwrap(), t.poll(2, 0).unwrap());
        assert_eq!(t.fail(2, a.task, a.attempt), None, "only the holder's attempt can fail");
        assert_eq!(t.fail(1, a.task, a.attempt), Some(1));
        assert_eq!(t.fail(1, a.task, a.attempt), None, "an attempt fails once");
        assert_eq!(t.fail(2, b.task, b.attempt), Some(1), "counted per task");
        let again = t.poll(3, 0).unwrap();
        assert_eq!((again.task, again.attempt), (a.task, 2), "handed out again at once");
        assert_eq!(t.fail(3, again.task, again.attempt), Some(2));
        assert!(!t.finished());
    }

    #[test]
    fn a_worker_that_registers_again_gives_its_leases_back() {
        let mut t = TaskTable::new(0, TaskTable::even(0..3, 1), 1000);
        let (a, b) = (t.poll(1, 0).unwrap(), t.poll(2, 0).unwrap());
        assert_eq!(t.forget_worker(1), [a.task]);
        assert_eq!(t.poll(3, 0).unwrap().task, a.task, "handed out again at once");
        assert!(!t.renew(1, a.task, a.attempt, 10), "the old session's lease is gone");
        assert!(t.renew(2, b.task, b.attempt, 10));
    }

    #[test]
    fn a_lease_is_held_by_one_worker_and_its_first_result_is_taken() {
        let mut t = TaskTable::new(3, TaskTable::even(0..5, 2), 100);
        assert_eq!(t.len(), 3);
        let a = t.poll(1, 0).unwrap();
        assert_eq!((a.task, a.attempt, a.rows.clone()), (0, 1, 0..2));
        assert!(!t.renew(2, a.task, a.attempt, 10), "only its holder renews");
        assert!(t.renew(1, a.task, a.attempt, 50));
        assert!(t.expire(140, |_| true).is_empty(), "renewed until 150");
        assert_eq!(t.expire(150, |_| true), [(0, 1)]);
        let again = t.poll(2, 150).unwrap();
        assert_eq!((again.task, again.attempt), (0, 2));
        assert!(!t.complete(2, 0, vec![7]), "another level's result");
        assert!(t.complete(3, 0, vec![7]));
        assert!(!t.complete(3, 0, vec![8]), "a second result");
        assert_eq!(t.take_results(), [(0, 0..2, vec![7])]);
        t.refuse(0);
        assert_eq!(t.poll(1, 200).unwrap().attempt, 3, "a refused result's task goes out again");
        assert_eq!(TaskTable::runs(&[1, 2, 3, 7, 8], 2), [1..3, 3..4, 7..9]);
    }

    #[test]
    fn a_worker_computes_one_task_and_uploads_while_it_polls() {
        let mut w = LeaseWorker::new(100);
        assert_eq!(w.next_action(), Some(LeaseAction::Poll));
        let lease = Lease { level: 0, task: 4, attempt: 1, rows: 0..1, lease_ms: 600 };
        w.handle(LeaseEvent::Task(lease.clone()));
        assert_eq!(w.next_action(), Some(LeaseAction::Compute(lease.clone())));
        w.handle(LeaseEvent::Tick);
        w.handle(LeaseEvent::Tick);
        assert_eq!(w.next_action(), Some(LeaseAction::Renew(lease.clone())));
        w.handle(LeaseEvent::Computed { lease: lease.clone(), result: vec![1] });
        assert_eq!(w.next_action(), Some(LeaseAction::Upload(lease.clone(), vec![1])));
        assert_eq!(w.next_action(), Some(LeaseAction::Poll));
        w.handle(LeaseEvent::Over);
        assert_eq!(w.next_action(), Some(LeaseAction::Finish));
        assert!(!w.is_over(), "its upload is in flight");
        w.handle(LeaseEvent::Uploaded { lease });
        assert!(w.is_over());
    }
}
