//! Leased tasks simulated: a coordinator with its [`TaskTable`] per level (a product job's
//! chunks of cosets, a coset batch), a worker registry with liveness and a journal of finished
//! levels; workers with their [`LeaseWorker`] computing a stand-in task (each row's word a
//! hash of the job, level and row, sent as a checked shard), over the same faulty network,
//! clock and processes as the row searches.

use super::faults::{Faults, Queue};
use super::{Outcome, TIME_LIMIT_MS};
use crate::cube::SplitMix64;
use crate::runtime::leases::{Lease, LeaseAction, LeaseEvent, LeaseWorker, TaskTable};
use crate::runtime::WorkerId;
use crate::shard::{self, ShardKey};
use std::collections::{BTreeMap, VecDeque};

const BEAT_MS: u64 = 100;
const LIVENESS_MS: u64 = 1000;
const LEASE_MS: u64 = 3000;

type Addr = (usize, u32);

enum Ev {
    Boot(Addr),
    Register(Addr),
    Registered(Addr, WorkerId, u32),
    Beat(Addr),
    Heard(WorkerId, Addr, u32),
    Poll(Addr, WorkerId, u32),
    Reply(Addr, LeaseEvent),
    Renew(Addr, WorkerId, u32, Lease),
    Upload(Addr, WorkerId, u32, Lease, Vec<u8>),
    Computed(Addr, Lease, Option<Vec<u8>>),
    Release(WorkerId, u32, Lease),
    Tick(u32),
    CoordinatorBoot,
    Fault,
}

struct Proc {
    life: u32,
    alive: bool,
    stalled_until: u64,
    id: WorkerId,
    coordinator: u32,
    core: Option<LeaseWorker>,
    /// The life whose heartbeat runs.
    beating: u32,
}

struct Coordinator {
    life: u32,
    alive: bool,
    /// Members: their last heartbeat and whether they are lost.
    members: BTreeMap<WorkerId, (u64, bool)>,
    next_id: WorkerId,
    table: Option<TaskTable>,
    results: Vec<u64>,
}

struct World {
    rng: SplitMix64,
    faults: Faults,
    q: Queue<Ev>,
    job: u64,
    /// Per level, the rows of its tasks.
    levels: Vec<u32>,
    per_task: u32,
    procs: Vec<Proc>,
    coordinator: Coordinator,
    /// The journal: the results of the levels finished, in order.
    journal: Vec<Vec<u64>>,
    done: bool,
    outcome: Outcome,
    trace: VecDeque<String>,
}

/// A row's word in the stand-in task.
fn word(job: u64, level: u32, row: u32) -> u64 {
    let mut r = SplitMix64::new(job ^ (level as u64) << 40 ^ row as u64);
    r.next_u64()
}

/// Runs the leased tasks of `seed`; `Err` holds what went wrong and the run's last events.
pub fn run_leases(seed: u64) -> Result<Outcome, String> {
    super::run_seed(seed, World::new)
}

impl super::Simulation for World {
    type Outcome = Outcome;
    fn run(&mut self) -> Result<Outcome, String> {
        World::run(self)
    }
    fn last_events(&self) -> Vec<String> {
        self.trace.iter().cloned().collect()
    }
}

impl World {
    fn new(seed: u64) -> World {
        let mut rng = SplitMix64::new(seed ^ 0x1ea5e5);
        let levels = (0..1 + rng.below(4)).map(|_| 1 + rng.below(40) as u32).collect();
        let faults = Faults::draw(&mut rng);
        let mut w = World {
            job: rng.next_u64(),
            levels,
            per_task: 1 + rng.below(6) as u32,
            faults,
            q: Queue::default(),
            procs: Vec::new(),
            coordinator: Coordinator {
                life: 0,
                alive: false,
                members: BTreeMap::new(),
                next_id: 1,
                table: None,
                results: Vec::new(),
            },
            journal: Vec::new(),
            done: false,
            outcome: Outcome::default(),
            trace: VecDeque::new(),
            rng,
        };
        w.q.at(0, Ev::CoordinatorBoot);
        for _ in 0..1 + w.rng.below(4) {
            let after = w.rng.below(500);
            w.start_process(after);
        }
        for _ in 0..w.faults.count {
            let at = w.rng.below(w.faults.until_ms);
            w.q.at(at, Ev::Fault);
        }
        w
    }

    fn note(&mut self, line: String) {
        if self.trace.len() == 40 {
            self.trace.pop_front();
        }
        self.trace.push_back(format!("{:>6} ms {line}", self.q.now));
    }

    fn start_process(&mut self, after: u64) -> usize {
        let p =
            Proc { life: 1, alive: true, stalled_until: 0, id: 0, coordinator: 0, core: None, beating: 0 };
        self.procs.push(p);
        let slot = self.procs.len() - 1;
        self.q.at(after, Ev::Boot((slot, 1)));
        slot
    }

    fn run(&mut self) -> Result<Outcome, String> {
        while let Some(ev) = self.q.pop() {
            self.outcome.events += 1;
            if self.q.now > TIME_LIMIT_MS {
                return Err(format!("no end after {TIME_LIMIT_MS} simulated ms"));
            }
            self.handle(ev);
            if self.done {
                let expected: Vec<Vec<u64>> = (0..self.levels.len() as u32)
                    .map(|l| (0..self.levels[l as usize]).map(|r| word(self.job, l, r)).collect())
                    .collect();
                if self.journal != expected {
                    return Err("the results differ from the tasks computed in one process".into());
                }
                self.outcome.millis = self.q.now;
                self.outcome.changes = self.coordinator.table.as_ref().map_or(0, |t| t.requeued);
                return Ok(self.outcome.clone());
            }
        }
        Err("nothing left to happen, and the job is not over".into())
    }

    /// The process at `a` if it is that life and alive; an event for a stalled one waits.
    fn reach(&mut self, a: Addr, ev: Ev) -> Option<Ev> {
        let p = &self.procs[a.0];
        if !p.alive || p.life != a.1 {
            return None;
        }
        if p.stalled_until > self.q.now {
            let wait = p.stalled_until - self.q.now;
            self.q.at(wait, ev);
            return None;
        }
        Some(ev)
    }

    fn delay(&mut self) -> u64 {
        self.faults.delay(&mut self.rng)
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::CoordinatorBoot => {
                let c = &mut self.coordinator;
                c.life += 1;
                c.alive = true;
                c.members.clear();
                c.table = None;
                let life = c.life;
                self.note(format!(
                    "coordinator starts (life {life}), {} levels journaled",
                    self.journal.len()
                ));
                self.next_level();
                self.q.at(BEAT_MS, Ev::Tick(life));
            }
            Ev::Fault => self.fault(),
            Ev::Tick(life) => self.tick(life),
            Ev::Register(from) => {
                if !self.coordinator.alive {
                    let d = 300;
                    self.q.at(d, Ev::Boot(from));
                    return;
                }
                let c = &mut self.coordinator;
                let id = c.next_id;
                c.next_id += 1;
                c.members.insert(id, (self.q.now, false));
                let life = c.life;
                let d = self.delay();
                self.q.at(d, Ev::Registered(from, id, life));
            }
            Ev::Heard(id, from, life) => {
                if let Some(known) = self.coordinator_knows(id, life) {
                    if !known {
                        let d = self.delay();
                        self.q.at(d, Ev::Boot(from)); // lost: register again
                    }
                }
            }
            Ev::Poll(from, id, life) => {
                let reply = match self.coordinator_knows(id, life) {
                    // Nobody answers, or not as the coordinator it registered with: it
                    // registers again (after a pause while nobody answers).
                    None => {
                        self.q.at(300, Ev::Boot(from));
                        return;
                    }
                    Some(false) => {
                        let d = self.delay();
                        self.q.at(d, Ev::Boot(from));
                        return;
                    }
                    Some(true) if self.done => LeaseEvent::Over,
                    Some(true) => {
                        let now = self.q.now;
                        match self.coordinator.table.as_mut().and_then(|t| t.poll(id, now)) {
                            Some(lease) => LeaseEvent::Task(lease),
                            None => LeaseEvent::Nothing,
                        }
                    }
                };
                // An idle poll is held a while, as the coordinator's long poll is.
                let d = self.delay() + if reply == LeaseEvent::Nothing { 200 } else { 0 };
                self.q.at(d, Ev::Reply(from, reply));
            }
            Ev::Renew(from, id, life, lease) => {
                let now = self.q.now;
                let ok = self.coordinator_knows(id, life) == Some(true)
                    && self.coordinator.table.as_mut().is_some_and(|t| {
                        t.level == lease.level && t.renew(id, lease.task, lease.attempt, now)
                    });
                let d = self.delay();
                self.q.at(d, Ev::Reply(from, LeaseEvent::Renewed { lease, ok }));
            }
            Ev::Release(id, life, lease) => {
                if self.coordinator_knows(id, life) == Some(true) {
                    if let Some(t) = self.coordinator.table.as_mut().filter(|t| t.level == lease.level) {
                        t.release(id, lease.task, lease.attempt);
                    }
                }
            }
            Ev::Upload(from, id, life, lease, bytes) => self.upload(from, id, life, lease, bytes),
            ev => self.worker_event(ev),
        }
    }

    /// Whether the coordinator knows worker `id` registered with its life `life`: `Some(true)`
    /// live, `Some(false)` unknown or lost (it must register again), `None` nobody answers.
    fn coordinator_knows(&mut self, id: WorkerId, life: u32) -> Option<bool> {
        let c = &mut self.coordinator;
        if !c.alive {
            return None;
        }
        match c.members.get_mut(&id) {
            Some((seen, false)) if c.life == life => {
                *seen = self.q.now;
                Some(true)
            }
            _ => Some(false),
        }
    }

    fn upload(&mut self, from: Addr, id: WorkerId, life: u32, lease: Lease, bytes: Vec<u8>) {
        if self.coordinator_knows(id, life).is_none() {
            return;
        }
        let key = ShardKey { job: self.job, task: lease.task, attempt: lease.attempt, level: lease.level };
        let Some(table) = self.coordinator.table.as_mut().filter(|t| t.level == lease.level) else {
            let d = self.delay();
            self.q.at(d, Ev::Reply(from, LeaseEvent::Uploaded { lease }));
            return;
        };
        match shard::decode_words_for(&bytes, key, lease.rows.len()) {
            // A damaged result: its task goes out again at once.
            Err(_) => table.return_lease(lease.task, lease.attempt),
            Ok(words) => {
                table.complete(lease.level, lease.task, words);
            }
        }
        let d = self.delay();
        self.q.at(d, Ev::Reply(from, LeaseEvent::Uploaded { lease }));
        self.take_results();
    }

    /// Takes the results in, and journals the level once all are.
    fn take_results(&mut self) {
        let Some(table) = self.coordinator.table.as_mut() else { return };
        for (_, rows, words) in table.take_results() {
            let results = &mut self.coordinator.results;
            for (r, w) in rows.zip(words) {
                results[r as usize] = w;
            }
        }
        if table.finished() {
            let level = std::mem::take(&mut self.coordinator.results);
            self.journal.push(level);
            self.outcome.changes += table.requeued;
            self.note(format!("level {} finished", self.journal.len() - 1));
            self.next_level();
        }
    }

    fn next_level(&mut self) {
        let l = self.journal.len();
        if l == self.levels.len() {
            self.done = true;
            return;
        }
        let rows = self.levels[l];
        // Tasks may name a worker (an id that may be live, lost or never given), as an H48
        // build's name the keeper of their rows.
        let salt = self.rng.below(4);
        let table = TaskTable::new(l as u32, TaskTable::even(0..rows, self.per_task), LEASE_MS)
            .prefer(|r| (salt > 0).then(|| 1 + (r.start as u64 * salt) % 6));
        self.coordinator.table = Some(table);
        self.coordinator.results = vec![0; rows as usize];
    }

    fn tick(&mut self, life: u32) {
        let c = &mut self.coordinator;
        if !c.alive || c.life != life {
            return;
        }
        let now = self.q.now;
        for (id, (seen, lost)) in c.members.iter_mut() {
            if !*lost && now - *seen > LIVENESS_MS {
                *lost = true;
                self.trace.push_back(format!("{now:>6} ms worker {id} declared lost"));
            }
        }
        let members = c.members.clone();
        if let Some(t) = c.table.as_mut() {
            t.expire(now, |w| members.get(&w).is_some_and(|m| !m.1));
        }
        self.q.at(BEAT_MS, Ev::Tick(life));
    }

    fn worker_event(&mut self, ev: Ev) {
        let at = match &ev {
            Ev::Boot(a) | Ev::Registered(a, ..) | Ev::Beat(a) | Ev::Reply(a, _) | Ev::Computed(a, ..) => *a,
            _ => unreachable!("a coordinator's event"),
        };
        let Some(ev) = self.reach(at, ev) else { return };
        let p = &mut self.procs[at.0];
        match ev {
            Ev::Boot(a) => {
                p.id = 0;
                p.core = None;
                let d = self.delay();
                self.q.at(d, Ev::Register(a));
            }
            Ev::Registered(a, id, life) => {
                p.id = id;
                p.coordinator = life;
                p.core = Some(LeaseWorker::new(BEAT_MS));
                if p.beating != a.1 {
                    p.beating = a.1;
                    self.q.at(BEAT_MS, Ev::Beat(a));
                }
                self.pump(a);
            }
            Ev::Beat(a) => {
                if p.id != 0 {
                    let (id, life) = (p.id, p.coordinator);
                    if let Some(core) = p.core.as_mut() {
                        core.handle(LeaseEvent::Tick);
                    }
                    let d = self.delay();
                    self.q.at(d, Ev::Heard(id, a, life));
                    self.pump(a);
                }
                self.q.at(BEAT_MS, Ev::Beat(a));
            }
            Ev::Reply(a, event) => {
                if let Some(core) = p.core.as_mut() {
                    core.handle(event);
                }
                self.pump(a);
            }
            Ev::Computed(a, lease, result) => {
                if let Some(core) = p.core.as_mut() {
                    core.handle(match result {
                        Some(result) => LeaseEvent::Computed { lease, result },
                        None => LeaseEvent::Failed { lease },
                    });
                }
                self.pump(a);
            }
            _ => unreachable!("a worker's event"),
        }
    }

    fn pump(&mut self, a: Addr) {
        loop {
            let p = &mut self.procs[a.0];
            let (id, life) = (p.id, p.coordinator);
            let Some(action) = p.core.as_mut().and_then(|c| c.next_action()) else { return };
            let d = self.delay();
            match action {
                LeaseAction::Poll => self.q.at(d, Ev::Poll(a, id, life)),
                LeaseAction::Compute(lease) => {
                    // Sometimes a task cannot be finished here (an input out of reach).
                    let result = (!Faults::chance(&mut self.rng, 20)).then(|| {
                        let words: Vec<u64> =
                            lease.rows.clone().map(|r| word(self.job, lease.level, r)).collect();
                        let key = ShardKey {
                            job: self.job,
                            task: lease.task,
                            attempt: lease.attempt,
                            level: lease.level,
                        };
                        shard::encode_words(key, &words)
                    });
                    let t = self.faults.work_time(&mut self.rng) * 10;
                    self.q.at(t, Ev::Computed(a, lease, result));
                }
                LeaseAction::Renew(lease) => self.q.at(d, Ev::Renew(a, id, life, lease)),
                LeaseAction::Release(lease) => self.q.at(d, Ev::Release(id, life, lease)),
                LeaseAction::Upload(lease, mut bytes) => {
                    if Faults::chance(&mut self.rng, self.faults.damage) {
                        let i = self.rng.below(bytes.len() as u64) as usize;
                        bytes[i] ^= 1;
                    }
                    if Faults::chance(&mut self.rng, self.faults.drop) {
                        // The link failed: the worker's upload gives up; the lease expires.
                        self.q.at(d + 50, Ev::Reply(a, LeaseEvent::Uploaded { lease }));
                    } else {
                        self.q.at(d, Ev::Upload(a, id, life, lease, bytes));
                    }
                }
                LeaseAction::Abandon(_) | LeaseAction::Finish => {}
            }
        }
    }

    fn fault(&mut self) {
        self.outcome.faults += 1;
        let live: Vec<usize> = (0..self.procs.len()).filter(|&s| self.procs[s].alive).collect();
        let Some(&slot) = live.get(self.rng.below(live.len().max(1) as u64) as usize) else { return };
        let back = self.rng.below(2500);
        match self.rng.below(5) {
            0 => {
                let p = &mut self.procs[slot];
                p.life += 1;
                p.core = None;
                p.id = 0;
                let a = (slot, p.life);
                self.note(format!("slot {slot} killed; back in {back} ms"));
                self.q.at(back, Ev::Boot(a));
            }
            1 if live.len() > 1 => {
                self.procs[slot].alive = false;
                self.note(format!("slot {slot} killed for good"));
            }
            2 => {
                let stall = 100 + self.rng.below(3000);
                self.procs[slot].stalled_until = self.q.now + stall;
                self.note(format!("slot {slot} stalls for {stall} ms"));
            }
            3 => {
                self.coordinator.alive = false;
                self.note(format!("coordinator killed; back in {back} ms"));
                self.q.at(back, Ev::CoordinatorBoot);
            }
            _ => {
                let new = self.start_process(0);
                self.note(format!("a worker joins (slot {new})"));
            }
        }
    }
}
