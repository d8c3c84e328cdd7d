//! A row search simulated: the coordinator's core with a simulated process around it (worker
//! registry and liveness, journal, levels sent up), workers' cores with their real [`Parts`]
//! on a [`TinySpace`] and a [`MemoryStore`] as their disk, all exchanging messages through
//! one event queue.

mod coordinator;
mod workers;

use super::faults::{Faults, Queue};
use super::tiny::TinySpace;
use super::{Outcome, TIME_LIMIT_MS};

use crate::bfs::{BfsOptions, LevelReport};
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
        let mut rng = SplitMix64::new(seed ^ 0x005e_ed0f_7265);
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
            layout_until: 0,
            // Parts of unequal work, from the job's id (no draw, so the seed's other draws stay).
            part_weights: (0..parts).map(|k| 1 + job.id.rotate_left(k as u32 * 5) % 7).collect(),
        };
        // Workers that join get the whole layout in some runs, up to a random depth.
        if rng.below(2) == 0 {
            settings.layout_until = rng.below(settings.total);
        }
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
