//! A row search simulated: the coordinator's core with a simulated process around it (worker
//! registry and liveness, journal, levels sent up), workers' cores with their real [`Parts`]
//! on a [`TinySpace`] and a [`MemoryStore`] as their disk, all exchanging messages through
//! one event queue.

use super::faults::{Faults, Queue};
use super::tiny::TinySpace;
use super::{Outcome, TIME_LIMIT_MS};
use crate::bfs::owned::PartCut;
use crate::bfs::task::{Counting, RowBits};
use crate::bfs::{BfsOptions, LevelReport, Standing};
use crate::cube::SplitMix64;
use crate::report::DepthCounts;
use crate::runtime::rows::*;
use crate::runtime::WorkerId;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

const BEAT_MS: u64 = 100;
const LIVENESS_MS: u64 = 1000;

/// A process's address: its slot and its life (a restarted process is a new life).
type Addr = (usize, u32);

enum Ev {
    Boot(Addr),
    Retry(Addr),
    Register {
        from: Addr,
        prev: WorkerId,
        threads: u32,
    },
    Registered {
        to: Addr,
        id: WorkerId,
        keep: bool,
        coordinator: u32,
    },
    Beat(Addr),
    Status {
        from: Addr,
        id: WorkerId,
        coordinator: u32,
        status: Status,
    },
    Plan {
        to: Addr,
        plan: Plan,
    },
    Unknown(Addr),
    /// A computation of the core of generation `core`, on the parts it had.
    Work {
        at: Addr,
        core: u32,
        parts: Arc<Parts<TinySpace>>,
        work: Work,
    },
    Deliver {
        to: WorkerId,
        from: Addr,
        message: Message,
    },
    Acked {
        to: Addr,
        by: WorkerId,
        note: Note,
        ok: bool,
    },
    SendFailed {
        to: Addr,
        dest: WorkerId,
        message: Message,
    },
    Upload {
        from: Addr,
        coordinator: u32,
        part: u32,
        depth: u32,
        epoch: u64,
        payload: Vec<u8>,
    },
    Uploaded {
        to: Addr,
        part: u32,
        depth: u32,
        epoch: u64,
    },
    Tick(u32),
    Kept {
        coordinator: u32,
        report: LevelReport,
        visited: u64,
        snapshot: Snapshot,
    },
    CoordinatorBoot,
    Fault,
}

struct Proc {
    life: u32,
    alive: bool,
    stalled_until: u64,
    disk: MemoryStore,
    /// The id its disk remembers (0: none).
    identity: WorkerId,
    /// Its registration: id and the coordinator's life it registered with.
    id: WorkerId,
    coordinator: u32,
    core: Option<RowsWorker>,
    /// Counts the cores it made (a computation of an earlier core reports to nobody).
    generation: u32,
    parts: Option<Arc<Parts<TinySpace>>>,
    threads: u32,
    room: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum MemberState {
    Live,
    Lost,
    Expected,
}

struct Member {
    state: MemberState,
    last_seen: u64,
    at: Addr,
    /// The plan version last sent to it.
    sent: u64,
}

struct Coordinator {
    life: u32,
    alive: bool,
    core: Option<RowsCoordinator>,
    members: BTreeMap<WorkerId, Member>,
    next_id: WorkerId,
    uploads: BTreeMap<(u32, u32), Vec<u8>>,
}

#[derive(Default)]
struct Journal {
    snapshot: Option<Snapshot>,
    levels: Vec<(LevelReport, u64)>,
    max_id: WorkerId,
}

struct World {
    rng: SplitMix64,
    faults: Faults,
    q: Queue<Ev>,
    space: Arc<TinySpace>,
    job: JobInfo,
    settings: SearchSettings,
    window: usize,
    procs: Vec<Proc>,
    coordinator: Coordinator,
    journal: Journal,
    /// The embedded search's counts and the entries of each level.
    expected: (Vec<DepthCounts>, Vec<Vec<u64>>),
    result: Option<Result<Vec<DepthCounts>, String>>,
    faults_left: u32,
    /// Slots of processes killed for good.
    gone: Vec<usize>,
    outcome: Outcome,
    trace: VecDeque<String>,
}

/// Runs the row search of `seed`; `Err` holds what went wrong and the run's last events.
pub fn run_rows(seed: u64) -> Result<Outcome, String> {
    super::one_thread(|| {
        let mut w = World::new(seed);
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.run()));
        let why = match run {
            Ok(Ok(outcome)) => return Ok(outcome),
            Ok(Err(why)) => why,
            Err(panic) => super::panic_text(panic),
        };
        let trace: Vec<String> = w.trace.iter().cloned().collect();
        Err(format!("seed {seed}: {why}\nlast events:\n  {}", trace.join("\n  ")))
    })
}

impl World {
    fn new(seed: u64) -> World {
        let mut rng = SplitMix64::new(seed ^ 0x5eed_0f_7265);
        let rows = 6 + rng.below(20) as u32;
        let columns = 64 * (1 + rng.below(3) as u32);
        let space = Arc::new(TinySpace::new(rng.next_u64(), rows, columns));
        let rows_per_part = 1 + rng.below(5) as u32;
        let positions_only = rng.below(2) == 0;
        let max_depth = (rng.below(5) == 0).then(|| rng.below(rows as u64) as u32);
        let job =
            JobInfo { id: rng.next_u64() | 1, spec: "tiny/h".into(), rows, rows_per_part, positions_only };
        let parts = job.parts() as u64;
        let words = columns.div_ceil(64) as u64;
        let part_bytes = rows_per_part as u64 * 3 * 8 * words;
        let mut settings = SearchSettings {
            part_bytes,
            total: space.entry_count_(),
            max_depth,
            upload: rng.below(3) == 0,
            min_workers: 1,
        };
        let faults = Faults::draw(&mut rng);
        let workers = 1 + rng.below(4) as usize;
        settings.min_workers = 1 + rng.below(workers as u64) as usize;
        // Most runs give each worker room for every part; some only for a share.
        let tight = workers >= 3 && rng.below(5) == 0;
        let options = BfsOptions { max_depth, positions_only, ..Default::default() };
        let mut bits = Vec::new();
        let depths =
            crate::bfs::run(&*space, &TinySpace::moves(), &options, |_, level| bits.push(level.to_vec()))
                .expect("the embedded search");
        let mut w = World {
            faults_left: if tight { 0 } else { faults.count },
            faults,
            q: Queue::default(),
            space,
            job,
            settings,
            window: 1 + rng.below(4) as usize,
            procs: Vec::new(),
            coordinator: Coordinator {
                life: 0,
                alive: false,
                core: None,
                members: BTreeMap::new(),
                next_id: 1,
                uploads: BTreeMap::new(),
            },
            journal: Journal::default(),
            expected: (depths, bits),
            result: None,
            gone: Vec::new(),
            outcome: Outcome::default(),
            trace: VecDeque::new(),
            rng,
        };
        w.q.at(0, Ev::CoordinatorBoot);
        for _ in 0..workers {
            let capacity = if tight { parts.div_ceil(2) + 1 } else { parts };
            w.start_process(0, capacity);
        }
        // Workers that join while the search runs.
        for _ in 0..w.rng.below(3) {
            let after = w.rng.below(3000);
            w.start_process(after, parts);
        }
        for _ in 0..w.faults_left {
            let at = w.rng.below(w.faults.until_ms);
            w.q.at(at, Ev::Fault);
        }
        w
    }

    fn note(&mut self, line: String) {
        if self.trace.len() == 60 {
            self.trace.pop_front();
        }
        self.trace.push_back(format!("{:>6} ms {line}", self.q.now));
    }

    /// A new worker process (with a new disk), booting `after` ms from now.
    fn start_process(&mut self, after: u64, capacity: u64) -> usize {
        let threads = 1 + self.rng.below(3) as u32;
        let room = (128 << 20) + (capacity + threads as u64 + 2) * self.settings.part_bytes;
        self.procs.push(Proc {
            life: 1,
            alive: true,
            stalled_until: 0,
            disk: MemoryStore::default(),
            identity: 0,
            id: 0,
            coordinator: 0,
            core: None,
            generation: 0,
            parts: None,
            threads,
            room,
        });
        let slot = self.procs.len() - 1;
        self.q.at(after, Ev::Boot((slot, 1)));
        slot
    }

    fn run(&mut self) -> Result<Outcome, String> {
        while let Some(ev) = self.q.pop() {
            self.outcome.events += 1;
            if self.q.now > TIME_LIMIT_MS {
                return Err(format!("no end after {TIME_LIMIT_MS} simulated ms\n{}", self.standing()));
            }
            self.handle(ev);
            if let Some(result) = self.result.take() {
                let depths = result?;
                if depths != self.expected.0 {
                    return Err(format!(
                        "counts differ from the embedded search's:\n{depths:?}\n{:?}",
                        self.expected.0
                    ));
                }
                self.outcome.millis = self.q.now;
                return Ok(self.outcome.clone());
            }
        }
        Err("nothing left to happen, and the search is not over".into())
    }

    /// Where everyone stands (for a run that does not end).
    fn standing(&self) -> String {
        let mut out = String::new();
        if let Some(core) = &self.coordinator.core {
            out += &format!("plan: {:?}\n", core.plan());
        }
        for (id, m) in &self.coordinator.members {
            out += &format!(
                "member {id}: slot {} life {} lost {}\n",
                m.at.0,
                m.at.1,
                m.state == MemberState::Lost
            );
        }
        for (slot, p) in self.procs.iter().enumerate() {
            out += &format!("slot {slot}: alive {} life {} id {} ", p.alive, p.life, p.id);
            if let Some(core) = &p.core {
                out += &format!("{:?}\n  {}\n", core.status(), core.describe());
            } else {
                out += "no core\n";
            }
        }
        out
    }

    /// The process at `a` if it is that life and alive (an event of a dead life vanishes); an
    /// event for a stalled one waits until it wakes.
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

    /// The live process registered as `id`, if any.
    fn find(&self, id: WorkerId) -> Option<Addr> {
        (id != 0)
            .then(|| self.procs.iter().position(|p| p.alive && p.id == id && p.core.is_some()))?
            .map(|slot| (slot, self.procs[slot].life))
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::CoordinatorBoot => self.coordinator_boot(),
            Ev::Fault => self.fault(),
            Ev::Tick(life) => self.tick(life),
            Ev::Register { from, prev, threads } => self.register(from, prev, threads),
            Ev::Status { from, id, coordinator, status } => self.status(from, id, coordinator, status),
            Ev::Upload { from, coordinator, part, depth, epoch, payload } => {
                if self.coordinator.alive && self.coordinator.life == coordinator {
                    self.coordinator.uploads.insert((depth, part), payload);
                    let d = self.faults.delay(&mut self.rng);
                    self.q.at(d, Ev::Uploaded { to: from, part, depth, epoch });
                }
            }
            Ev::Kept { coordinator, report, visited, snapshot } => {
                if self.coordinator.alive && self.coordinator.life == coordinator {
                    let depth = report.counts.depth;
                    self.journal.levels.push((report, visited));
                    self.journal.snapshot = Some(snapshot);
                    self.coordinator_event(CoordinatorEvent::Kept { depth });
                }
            }
            ev => self.worker_event(ev),
        }
    }

    fn worker_event(&mut self, ev: Ev) {
        let at = match &ev {
            Ev::Boot(a) | Ev::Retry(a) | Ev::Beat(a) | Ev::Unknown(a) => *a,
            Ev::Registered { to, .. } | Ev::Plan { to, .. } | Ev::Acked { to, .. } => *to,
            Ev::SendFailed { to, .. } | Ev::Uploaded { to, .. } => *to,
            Ev::Work { at, .. } => *at,
            Ev::Deliver { to, from, message } => match self.find(*to) {
                Some(a) => a,
                None => {
                    // Nobody answers at that address: the sender hears of a failed link.
                    let d = 50 + self.faults.delay(&mut self.rng);
                    let (dest, message) = (*to, message.clone());
                    self.q.at(d, Ev::SendFailed { to: *from, dest, message });
                    return;
                }
            },
            _ => unreachable!("a coordinator's event"),
        };
        let Some(ev) = self.reach(at, ev) else { return };
        let slot = at.0;
        match ev {
            Ev::Boot(a) | Ev::Retry(a) => {
                if matches!(ev, Ev::Boot(_)) {
                    self.q.at(BEAT_MS, Ev::Beat(a));
                }
                let (prev, threads) = (self.procs[slot].identity, self.procs[slot].threads);
                let d = self.faults.delay(&mut self.rng);
                self.q.at(d, Ev::Register { from: a, prev, threads });
            }
            Ev::Registered { id, keep, coordinator, .. } => {
                let p = &mut self.procs[slot];
                p.id = id;
                p.identity = id;
                p.coordinator = coordinator;
                if !keep || p.core.as_ref().is_none_or(|c| c.me() != id) {
                    p.core = Some(RowsWorker::new(id, self.job.clone(), self.window));
                    p.generation += 1;
                    let counting =
                        if self.job.positions_only { Counting::Positions } else { Counting::Classes };
                    p.parts = Some(Arc::new(Parts::new(
                        self.space.clone(),
                        self.job.id,
                        PartCut::new(self.job.rows, self.job.rows_per_part),
                        TinySpace::moves(),
                        counting,
                        Arc::new(p.disk.clone()),
                    )));
                }
                self.send_status(at);
                self.pump(at);
            }
            Ev::Beat(a) => {
                self.to_core(a, WorkerEvent::Tick);
                self.send_status(a);
                self.q.at(BEAT_MS, Ev::Beat(a));
            }
            Ev::Unknown(a) => {
                let p = &mut self.procs[slot];
                if p.id != 0 {
                    p.id = 0;
                    let (prev, threads) = (p.identity, p.threads);
                    let d = self.faults.delay(&mut self.rng);
                    self.q.at(d, Ev::Register { from: a, prev, threads });
                }
            }
            Ev::Plan { plan, .. } => self.to_core(at, WorkerEvent::Plan(plan)),
            Ev::Work { core, parts, work, .. } => {
                let p = &self.procs[slot];
                let done = match work {
                    Work::Build => Some(parts.built(p.room)),
                    work => parts.run(work),
                };
                if let Some(done) = done.filter(|_| core == p.generation) {
                    self.to_core(at, WorkerEvent::Done(done));
                }
            }
            Ev::Deliver { message, .. } => self.to_core(at, WorkerEvent::Message(message)),
            Ev::Acked { by, note, ok, .. } => self.to_core(at, WorkerEvent::Acked { to: by, note, ok }),
            Ev::SendFailed { dest, message, .. } => {
                self.to_core(at, WorkerEvent::SendFailed { to: dest, message })
            }
            Ev::Uploaded { part, depth, epoch, .. } => {
                self.to_core(at, WorkerEvent::Uploaded { part, depth, epoch })
            }
            _ => unreachable!("a worker's event"),
        }
    }

    fn to_core(&mut self, at: Addr, event: WorkerEvent) {
        let Some(core) = self.procs[at.0].core.as_mut() else { return };
        core.handle(event);
        self.pump(at);
    }

    fn send_status(&mut self, a: Addr) {
        let p = &self.procs[a.0];
        let (Some(core), id) = (p.core.as_ref(), p.id) else { return };
        if id == 0 {
            return;
        }
        let (status, coordinator) = (core.status(), p.coordinator);
        let d = self.faults.delay(&mut self.rng);
        self.q.at(d, Ev::Status { from: a, id, coordinator, status });
    }

    /// Carries out what the worker's core asks.
    fn pump(&mut self, a: Addr) {
        while let Some(action) = self.procs[a.0].core.as_mut().and_then(|c| c.next_action()) {
            match action {
                WorkerAction::Work(work) => {
                    let t = self.faults.work_time(&mut self.rng);
                    let p = &self.procs[a.0];
                    let (core, parts) = (p.generation, p.parts.clone().expect("a core has its parts"));
                    self.q.at(t, Ev::Work { at: a, core, parts, work });
                }
                WorkerAction::Send { to, mut message } => {
                    if matches!(message.note.kind, Kind::Fetch | Kind::Levels) {
                        let (n, len) = (message.note, message.payload.len());
                        self.note(format!(
                            "{:?} of part {} ({} levels, {len} bytes) from {} to {to}",
                            n.kind, n.part, n.depth, n.from
                        ));
                    }
                    let d = self.faults.delay(&mut self.rng);
                    if Faults::chance(&mut self.rng, self.faults.drop) {
                        self.q.at(50 + d, Ev::SendFailed { to: a, dest: to, message });
                        continue;
                    }
                    if Faults::chance(&mut self.rng, self.faults.duplicate) {
                        let again = self.faults.delay(&mut self.rng);
                        self.q.at(again, Ev::Deliver { to, from: a, message: message.clone() });
                    }
                    if !message.payload.is_empty() && Faults::chance(&mut self.rng, self.faults.damage) {
                        let at = self.rng.below(message.payload.len() as u64) as usize;
                        message.payload[at] ^= 1 << self.rng.below(8);
                    }
                    self.q.at(d, Ev::Deliver { to, from: a, message });
                }
                WorkerAction::Ack { to, note, ok } => {
                    let by = self.procs[a.0].id;
                    if let Some(sender) = self.find(to) {
                        let d = self.faults.delay(&mut self.rng);
                        self.q.at(d, Ev::Acked { to: sender, by, note, ok });
                    }
                }
                WorkerAction::Upload { part, depth, epoch, payload } => {
                    let d = self.faults.delay(&mut self.rng);
                    let coordinator = self.procs[a.0].coordinator;
                    self.q.at(d, Ev::Upload { from: a, coordinator, part, depth, epoch, payload });
                }
                WorkerAction::Report => self.send_status(a),
            }
        }
    }

    fn coordinator_boot(&mut self) {
        let c = &mut self.coordinator;
        c.life += 1;
        c.alive = true;
        c.members.clear();
        c.uploads.clear();
        c.next_id = self.journal.max_id + 1;
        let core = match self.journal.snapshot.clone() {
            Some(snapshot) => {
                let mut standing = Standing::default();
                for (report, visited) in &self.journal.levels {
                    standing.depths.push(report.counts);
                    standing.visited = *visited;
                    standing.frontier = report.entries;
                }
                RowsCoordinator::resume(self.job.clone(), self.settings.clone(), snapshot, standing)
            }
            None => RowsCoordinator::new(self.job.clone(), self.settings.clone()),
        };
        let now = self.q.now;
        for id in core.expected() {
            let member =
                Member { state: MemberState::Expected, last_seen: now, at: (usize::MAX, 0), sent: 0 };
            self.coordinator.members.insert(id, member);
        }
        self.coordinator.core = Some(core);
        let life = self.coordinator.life;
        self.note(format!("coordinator starts (life {life})"));
        self.q.at(BEAT_MS, Ev::Tick(life));
        self.after_coordinator();
    }

    fn register(&mut self, from: Addr, prev: WorkerId, threads: u32) {
        if !self.coordinator.alive {
            self.q.at(300, Ev::Retry(from)); // nobody listens: try again
            return;
        }
        let now = self.q.now;
        let c = &mut self.coordinator;
        let known = c.members.get(&prev).map(|m| m.state).filter(|_| prev != 0);
        let (id, keep, event) = match known {
            Some(MemberState::Expected) => (prev, true, CoordinatorEvent::Joined { worker: prev, threads }),
            Some(MemberState::Live) => (prev, true, CoordinatorEvent::Joined { worker: prev, threads }),
            Some(MemberState::Lost) => (prev, false, CoordinatorEvent::Joined { worker: prev, threads }),
            None => {
                let id = c.next_id;
                c.next_id += 1;
                (id, false, CoordinatorEvent::Joined { worker: id, threads })
            }
        };
        c.members.insert(id, Member { state: MemberState::Live, last_seen: now, at: from, sent: 0 });
        self.journal.max_id = self.journal.max_id.max(id);
        self.note(format!(
            "worker {id} registers from slot {} (was {prev}, keeps its state: {keep})",
            from.0
        ));
        let coordinator = self.coordinator.life;
        let d = self.faults.delay(&mut self.rng);
        self.q.at(d, Ev::Registered { to: from, id, keep, coordinator });
        self.coordinator_event(event);
    }

    fn status(&mut self, from: Addr, id: WorkerId, coordinator: u32, status: Status) {
        let c = &mut self.coordinator;
        if !c.alive {
            return;
        }
        let known = c.life == coordinator
            && c.members.get(&id).is_some_and(|m| m.state == MemberState::Live && m.at == from);
        if !known {
            let d = self.faults.delay(&mut self.rng);
            self.q.at(d, Ev::Unknown(from));
            return;
        }
        let m = c.members.get_mut(&id).expect("known");
        m.last_seen = self.q.now;
        // As the coordinator's process answers a sync: with the plan whenever the worker holds
        // another one.
        let plan = c.core.as_ref().map(|core| (core.plan().epoch, core.plan().version));
        if plan.is_some_and(|p| p.0 != 0 && p != (status.epoch, status.version)) {
            m.sent = 0;
        }
        self.coordinator_event(CoordinatorEvent::Status { worker: id, status });
    }

    fn tick(&mut self, life: u32) {
        let c = &mut self.coordinator;
        if !c.alive || c.life != life {
            return;
        }
        let now = self.q.now;
        let silent: Vec<WorkerId> = c
            .members
            .iter()
            .filter(|(_, m)| m.state != MemberState::Lost && now - m.last_seen > LIVENESS_MS)
            .map(|(&id, _)| id)
            .collect();
        for id in silent {
            self.coordinator.members.get_mut(&id).expect("a member").state = MemberState::Lost;
            self.note(format!("worker {id} declared lost"));
            self.coordinator_event(CoordinatorEvent::Lost { worker: id });
        }
        self.q.at(BEAT_MS, Ev::Tick(life));
    }

    fn coordinator_event(&mut self, event: CoordinatorEvent) {
        if let Some(core) = self.coordinator.core.as_mut() {
            core.handle(event);
        }
        self.after_coordinator();
    }

    /// Carries out what the coordinator's core asks, and sends the plan to workers behind it.
    fn after_coordinator(&mut self) {
        let Some(core) = self.coordinator.core.as_mut() else { return };
        let mut actions = Vec::new();
        while let Some(a) = core.next_action() {
            actions.push(a);
        }
        let (plan, version) = (core.plan().clone(), core.version());
        for action in actions {
            match action {
                CoordinatorAction::Save(snapshot) => {
                    self.outcome.changes += 1;
                    self.note(format!(
                        "epoch {:x}: owners {:?} depths {:?}",
                        plan.epoch, snapshot.owner, snapshot.depth
                    ));
                    self.journal.snapshot = Some(snapshot);
                }
                CoordinatorAction::Keep { report, visited, snapshot } => {
                    if let Err(why) = self.check_uploads(report.counts.depth) {
                        self.result = Some(Err(why));
                        return;
                    }
                    let coordinator = self.coordinator.life;
                    let d = self.rng.below(20);
                    self.q.at(d, Ev::Kept { coordinator, report, visited, snapshot });
                }
                CoordinatorAction::Finished(depths) => self.result = Some(Ok(depths)),
                CoordinatorAction::Failed(why) => {
                    self.result = Some(Err(format!("the search failed: {why}")))
                }
            }
        }
        if plan.epoch == 0 {
            return;
        }
        let behind: Vec<(WorkerId, Addr)> = self
            .coordinator
            .members
            .iter()
            .filter(|(_, m)| m.state == MemberState::Live && m.sent != version)
            .map(|(&id, m)| (id, m.at))
            .collect();
        if !behind.is_empty() {
            self.note(format!(
                "plan v{} of epoch {:x}: depths {:?} sources {:?} level {:?}",
                plan.version, plan.epoch, plan.depth, plan.source, plan.level
            ));
        }
        for (id, to) in behind {
            self.coordinator.members.get_mut(&id).expect("a member").sent = version;
            let d = self.faults.delay(&mut self.rng);
            self.q.at(d, Ev::Plan { to, plan: plan.clone() });
        }
    }

    /// A table build reads every level from the parts their owners sent up: they must all be
    /// there, and be the embedded search's entries.
    fn check_uploads(&mut self, depth: u32) -> Result<(), String> {
        if !self.settings.upload {
            return Ok(());
        }
        let cut = self.job.cut();
        let words = (self.space.column_count_() as usize).div_ceil(64);
        let expected = &self.expected.1[depth as usize];
        for k in 0..cut.parts() {
            let bytes = self
                .coordinator
                .uploads
                .remove(&(depth, k))
                .ok_or_else(|| format!("level {depth} kept before part {k} was sent up"))?;
            let rows = cut.range(k);
            let key = crate::wire::row_message_key(self.job.id, k, LEVEL, depth);
            let set = crate::wire::SparseRows::decode_rows(&bytes, key, rows.len(), words)
                .map_err(|e| format!("part {k} of level {depth} as sent up: {e}"))?;
            for (i, r) in rows.enumerate() {
                let want = &expected[r as usize * words..][..words];
                let got = set.row(i as u32).map_or_else(|| vec![0; words], |row| row.to_vec());
                if got != want {
                    return Err(format!(
                        "row {r} of level {depth} as sent up differs from the embedded search's"
                    ));
                }
            }
        }
        Ok(())
    }

    /// A process fault: a kill (with a restart, or for good, or a new process in its place), a
    /// stall, the coordinator's kill and restart, or a worker joining.
    fn fault(&mut self) {
        self.outcome.faults += 1;
        let live: Vec<usize> =
            (0..self.procs.len()).filter(|&s| self.procs[s].alive && !self.gone.contains(&s)).collect();
        let kind = self.rng.below(7);
        let Some(&slot) = live.get(self.rng.below(live.len().max(1) as u64) as usize) else { return };
        let parts = self.job.parts() as u64;
        let back = self.rng.below(2500);
        match kind {
            0 | 1 => {
                // Killed, and restarted with its disk (sometimes a damaged level on it).
                self.kill(slot);
                if kind == 1 {
                    let (part, depth) = (self.rng.below(parts) as u32, self.rng.below(4) as u32);
                    self.procs[slot].disk.damage(part, depth);
                }
                self.note(format!("slot {slot} killed; back with its disk in {back} ms"));
                let p = &mut self.procs[slot];
                p.alive = true;
                p.life += 1;
                let a = (slot, p.life);
                self.q.at(back, Ev::Boot(a));
            }
            // For good only once the parts are assigned (before, the job waits for as many
            // workers as it was told to).
            2 if live.len() > 1 && self.coordinator.core.as_ref().is_some_and(|c| c.plan().epoch != 0) => {
                self.kill(slot);
                self.gone.push(slot);
                self.note(format!("slot {slot} killed for good"));
            }
            3 => {
                self.kill(slot);
                self.gone.push(slot);
                let new = self.start_process(back, parts);
                self.note(format!("slot {slot} killed; a new process (slot {new}, new disk) in {back} ms"));
            }
            4 => {
                let stall = 100 + self.rng.below(3000);
                self.procs[slot].stalled_until = self.q.now + stall;
                self.note(format!("slot {slot} stalls for {stall} ms"));
            }
            5 => {
                let c = &mut self.coordinator;
                c.alive = false;
                c.core = None;
                self.note(format!("coordinator killed; back in {back} ms"));
                self.q.at(back, Ev::CoordinatorBoot);
            }
            _ => {
                let new = self.start_process(0, parts);
                self.note(format!("a worker joins (slot {new})"));
            }
        }
    }

    /// Ends a process: its memory is gone, its disk stays.
    fn kill(&mut self, slot: usize) {
        let p = &mut self.procs[slot];
        p.alive = false;
        p.core = None;
        p.parts = None;
        p.id = 0;
    }
}

impl TinySpace {
    fn entry_count_(&self) -> u64 {
        crate::space::RowIndex::entry_count(self)
    }

    fn column_count_(&self) -> u32 {
        crate::space::RowIndex::column_count(self)
    }
}
