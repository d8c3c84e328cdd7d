//! The coordinator's side of a row search: the assignment and its epochs, the level to make,
//! the counts owners report, levels kept (journaled) and committed, lost parts made again.
//!
//! States: *gathering* (no assignment: waiting for `min_workers` ready workers with room for
//! every part), *settling* (an epoch is published: every owner brings its parts to the plan's
//! depth), *making* a level (the plan names it: waiting for the counts of every target part),
//! *keeping* (a new level's counts are summed: the process journals it, then it is committed),
//! and done or failed.
//!
//! Invariants:
//! - a level is committed only when the owner of every target part has reported it finished
//!   in the current epoch, and a new level only after it is journaled (`Kept`);
//! - a new epoch is published whenever an owner changes, an owner is lost or restarts, or a
//!   part cannot be had; the level being made is then made again from the start;
//! - a part made again ends with the same counts at every depth as when it was first made;
//! - every worker keeps the levels it stored until the job ends, so `source` (the worker that
//!   last held a part at its depth) can always serve them while it lives.

use super::assign::{self, Candidate};
use super::{JobInfo, LevelOrder, Plan, Status};
use crate::bfs::{level_report, Direction, LevelReport, Standing};
use crate::report::DepthCounts;
use crate::runtime::{first_epoch, Epoch, WorkerId};
use crate::space::RowCounts;
use std::collections::{BTreeMap, VecDeque};

/// What the coordinator keeps of a search in its journal: enough to resume it with the workers
/// that hold the parts.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Snapshot {
    pub job_id: u64,
    /// How many times a coordinator started on this journal before (see [`Epoch`]).
    pub incarnation: u32,
    pub owner: Vec<WorkerId>,
    pub source: Vec<WorkerId>,
    pub depth: Vec<u32>,
    /// Per kept level: its direction and the counts of every part (to check parts made again).
    pub levels: Vec<KeptLevel>,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeptLevel {
    pub backward: bool,
    /// Per part: entries, positions, classes, self-inverse classes.
    pub parts: Vec<[u64; 4]>,
}

fn to_words(c: RowCounts) -> [u64; 4] {
    [c.entries, c.positions, c.classes, c.self_inverse]
}

/// What the coordinator's process does for the core.
#[derive(Clone, Debug)]
pub enum CoordinatorAction {
    /// Journal the snapshot (a new epoch).
    Save(Snapshot),
    /// Keep a new level: journal it with the snapshot (read its entries first, for a table
    /// build), then report `Kept`.
    Keep { report: LevelReport, visited: u64, snapshot: Snapshot },
    /// The search is over: the counts of every depth.
    Finished(Vec<DepthCounts>),
    /// The search cannot go on.
    Failed(String),
}

/// What happens to the coordinator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoordinatorEvent {
    /// A worker registered: a new one, or one registering again under its id (it was lost,
    /// its process restarted, or the coordinator did). Only a worker the resumed search
    /// expects keeps what it held in memory; every worker keeps its disk.
    Joined {
        worker: WorkerId,
        threads: u32,
    },
    /// A worker was silent too long.
    Lost {
        worker: WorkerId,
    },
    Status {
        worker: WorkerId,
        status: Status,
    },
    /// The level of this depth is journaled.
    Kept {
        depth: u32,
    },
}

#[derive(Clone, Debug)]
struct Member {
    threads: u32,
    live: bool,
    /// A worker of an earlier run, not back yet (a resumed search waits for it).
    expected: bool,
    status: Status,
}

/// Settings of a search.
#[derive(Clone, Debug)]
pub struct SearchSettings {
    /// Memory a part takes on its owner.
    pub part_bytes: u64,
    /// Entries of the index (the direction rule reads it).
    pub total: u64,
    pub max_depth: Option<u32>,
    /// Owners send every new level's parts up (a table build).
    pub upload: bool,
    /// Workers ready before the first assignment.
    pub min_workers: usize,
    /// Workers that join while the search has reached at most this many entries get the
    /// layout of workers started together (`assign::Join::Layout`), later ones only the parts
    /// they take; [`SearchSettings::layout_until`] is the shells' rule.
    pub layout_until: u64,
    /// Each part's expected work, relative to the others ([`part_weights`]): the first
    /// assignment cuts the runs of parts by it.
    pub part_weights: Vec<u64>,
}

/// The expected work of each part of `cut` in a search of `index`: per row, the order of its
/// stabilizer. A row whose positions have symmetries is closed under each of them whenever it
/// gains entries, and each of its entries is compared with its images when counted; measured
/// on `h` with two workers, a row with a stabilizer of order s costs about s rows without one
/// (docs/distribution.md, "Parts cut by work").
pub fn part_weights<I: crate::space::RowIndex>(index: &I, cut: crate::bfs::cut::PartCut) -> Vec<u64> {
    (0..cut.parts()).map(|k| cut.range(k).map(|r| 1 + index.stabilizer(r).len() as u64).sum()).collect()
}

impl SearchSettings {
    /// 1/4096 of the entries: levels that small move in next to no bytes, and every later
    /// level keeps more images home in runs of equal length.
    pub fn layout_until(total: u64) -> u64 {
        total / 4096
    }
}

pub struct RowsCoordinator {
    job: JobInfo,
    settings: SearchSettings,
    incarnation: u32,
    count: u32,
    members: BTreeMap<WorkerId, Member>,
    plan: Plan,
    standing: Standing,
    levels: Vec<KeptLevel>,
    /// The new level whose journaling is awaited.
    keeping: Option<(u32, Vec<(u32, RowCounts)>)>,
    over: bool,
    /// Grows whenever the plan changes.
    version: u64,
    out: VecDeque<CoordinatorAction>,
}

impl RowsCoordinator {
    pub fn new(job: JobInfo, settings: SearchSettings) -> Self {
        let parts = job.parts() as usize;
        assert_eq!(settings.part_weights.len(), parts, "a weight for every part");
        RowsCoordinator {
            job,
            settings,
            incarnation: 0,
            count: 0,
            members: BTreeMap::new(),
            plan: Plan {
                epoch: 0,
                version: 0,
                owner: vec![0; parts],
                depth: vec![0; parts],
                source: vec![0; parts],
                level: None,
            },
            standing: Standing::default(),
            levels: Vec::new(),
            keeping: None,
            over: false,
            version: 0,
            out: VecDeque::new(),
        }
    }

    /// A search resumed from its journal: the snapshot and the levels kept. The workers named
    /// in it are awaited (they come back, or are lost).
    pub fn resume(job: JobInfo, settings: SearchSettings, snapshot: Snapshot, standing: Standing) -> Self {
        let mut c = RowsCoordinator::new(job, settings);
        c.incarnation = snapshot.incarnation + 1;
        for &w in snapshot.owner.iter().chain(&snapshot.source).filter(|&&w| w != 0) {
            c.members
                .insert(w, Member { threads: 1, live: false, expected: true, status: Status::default() });
        }
        c.plan.owner = snapshot.owner;
        c.plan.source = snapshot.source;
        c.plan.depth = snapshot.depth;
        c.levels = snapshot.levels;
        c.standing = standing;
        c.new_epoch();
        c
    }

    /// Workers a resumed search waits for.
    pub fn expected(&self) -> Vec<WorkerId> {
        self.members.iter().filter(|(_, m)| m.expected).map(|(&w, _)| w).collect()
    }

    pub fn job(&self) -> &JobInfo {
        &self.job
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Grows whenever [`Self::plan`] changes.
    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn next_action(&mut self) -> Option<CoordinatorAction> {
        self.out.pop_front()
    }

    /// Whether the search is finished or failed.
    pub fn is_over(&self) -> bool {
        self.over
    }

    /// Whether `worker` holds what the plan says and has nothing new to report: its poll waits.
    pub fn in_sync(&self, worker: WorkerId, status: &Status) -> bool {
        let _ = worker;
        status.epoch == self.plan.epoch || (self.plan.epoch == 0 && status.ready)
    }

    /// Rows of the target parts whose counts are in, and of all target parts (progress). A
    /// part's owner finishes its parts near the end of a level, so a part not in yet counts
    /// for the share of the level its owner says it has done.
    pub fn progress(&self) -> (u64, u64) {
        let Some(order) = self.plan.level else { return (0, 0) };
        let cut = self.job.cut();
        let mut done = 0;
        let mut all = 0;
        for k in 0..self.job.parts() {
            if self.plan.depth[k as usize] != order.depth {
                continue;
            }
            let rows = cut.range(k).len() as u64;
            all += rows;
            let owner = self.plan.owner[k as usize];
            let status = self.members.get(&owner).map(|m| &m.status).filter(|s| s.epoch == self.plan.epoch);
            let reported = status.is_some_and(|s| {
                s.finished
                    .as_ref()
                    .is_some_and(|(d, parts)| *d == order.depth && parts.iter().any(|(p, _)| *p == k))
            });
            let percent = match status.and_then(|s| s.progress) {
                Some((d, percent)) if d == order.depth => percent as u64,
                _ => 0,
            };
            done += if reported { rows } else { rows * percent / 100 };
        }
        (done, all)
    }

    /// Rows each live worker owns.
    pub fn rows_of(&self, worker: WorkerId) -> u64 {
        let cut = self.job.cut();
        (0..self.job.parts())
            .filter(|&k| self.plan.owner[k as usize] == worker)
            .map(|k| cut.range(k).len() as u64)
            .sum()
    }

    pub fn handle(&mut self, event: CoordinatorEvent) {
        if self.over {
            return;
        }
        match event {
            CoordinatorEvent::Joined { worker, threads } => {
                // A worker of a resumed search comes back with what it held; any other that
                // owns parts (it was lost, or its process restarted) holds nothing in memory.
                let returns = self.members.get(&worker).is_some_and(|m| m.expected);
                let member = Member { threads, live: true, expected: false, status: Status::default() };
                self.members.insert(worker, member);
                let holds = self.plan.owner.contains(&worker) || self.plan.source.contains(&worker);
                if !returns && holds && self.plan.epoch != 0 {
                    tracing::info!(
                        "worker {worker} registered again: its parts are read again from its disk"
                    );
                    self.new_epoch();
                }
            }
            CoordinatorEvent::Lost { worker } => {
                if let Some(m) = self.members.get_mut(&worker) {
                    m.live = false;
                    m.expected = false;
                }
            }
            CoordinatorEvent::Status { worker, status } => {
                let Some(m) = self.members.get_mut(&worker).filter(|m| m.live) else { return };
                if let Some(why) = &status.failure {
                    return self.fail(format!("worker {worker}: {why}"));
                }
                m.status = status;
            }
            CoordinatorEvent::Kept { depth } => self.kept(depth),
        }
        self.step();
    }

    fn fail(&mut self, why: String) {
        self.over = true;
        self.out.push_back(CoordinatorAction::Failed(why));
    }

    fn live(&self, w: WorkerId) -> bool {
        self.members.get(&w).is_some_and(|m| m.live)
    }

    /// Live workers holding the index, with the parts they have room for.
    fn candidates(&self) -> Vec<Candidate> {
        self.members
            .iter()
            .filter(|(_, m)| m.live && m.status.ready)
            .map(|(&id, m)| Candidate {
                id,
                threads: m.threads,
                capacity: assign::capacity(m.status.room, self.settings.part_bytes, m.threads),
            })
            .collect()
    }

    /// The plan changed: workers are sent it again.
    fn changed(&mut self) {
        self.version += 1;
        self.plan.version = self.version;
    }

    fn new_epoch(&mut self) {
        self.count += 1;
        self.plan.epoch = first_epoch(self.incarnation) | self.count as Epoch;
        self.plan.level = None;
        self.changed();
        self.out.push_back(CoordinatorAction::Save(self.snapshot()));
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            job_id: self.job.id,
            incarnation: self.incarnation,
            owner: self.plan.owner.clone(),
            source: self.plan.source.clone(),
            depth: self.plan.depth.clone(),
            levels: self.levels.clone(),
        }
    }

    /// Moves the search on as far as the workers' statuses allow.
    fn step(&mut self) {
        while !self.over && self.keeping.is_none() {
            if self.plan.epoch == 0 || self.plan.owner.contains(&0) {
                if !self.assign_first() {
                    return;
                }
                continue;
            }
            if self.members.values().any(|m| m.expected) {
                return; // a resumed search waits for its workers
            }
            match self.recover() {
                Some(true) => {
                    self.new_epoch();
                    continue;
                }
                Some(false) => {}
                None => return, // parts of lost workers fit nowhere yet
            }
            if let Some(order) = self.plan.level {
                if !self.level_made(order) {
                    return;
                }
                continue;
            }
            if !self.settled() {
                return;
            }
            // Every owner holds its parts: they are their sources from now on.
            if self.plan.source != self.plan.owner {
                self.plan.source = self.plan.owner.clone();
                self.changed();
            }
            // Levels this small move in next to no bytes: a newcomer gets the layout of
            // workers started together, not just the parts the others can spare.
            let join = if self.standing.visited <= self.settings.layout_until {
                assign::Join::Layout
            } else {
                assign::Join::Fewest
            };
            if let Some(owner) =
                assign::rebalance(&self.plan.owner, &self.candidates(), join, &self.settings.part_weights)
            {
                let moved = owner.iter().zip(&self.plan.owner).filter(|(a, b)| a != b).count();
                tracing::info!("{moved} parts move to workers that joined");
                self.plan.owner = owner;
                self.new_epoch();
                continue;
            }
            self.next_level();
            return;
        }
    }

    /// The first assignment, once enough workers are ready with room for every part.
    fn assign_first(&mut self) -> bool {
        let workers = self.candidates();
        if workers.len() < self.settings.min_workers.max(1) {
            return false;
        }
        let Some(owner) = assign::first(&workers, &self.settings.part_weights) else { return false };
        let owners = {
            let mut o = owner.clone();
            o.sort_unstable();
            o.dedup();
            o.len()
        };
        tracing::info!("{} parts of the rows assigned to {owners} workers", owner.len());
        self.plan.owner = owner;
        self.new_epoch();
        true
    }

    /// Parts whose owner is lost, whose source is lost before their owner had them, or that
    /// their owner cannot get: placed again, fetched from their source or made again.
    /// `Some(changed)`, or `None` when they fit on no live worker.
    fn recover(&mut self) -> Option<bool> {
        let parts = self.job.parts() as usize;
        let (mut depth, mut source, mut owner) =
            (self.plan.depth.clone(), self.plan.source.clone(), self.plan.owner.clone());
        for k in 0..parts {
            let lacking = self.members.get(&owner[k]).is_some_and(|m| {
                m.live && m.status.epoch == self.plan.epoch && m.status.lacking.contains(&(k as u32))
            });
            let gone = source[k] != 0 && !self.live(source[k]);
            let holds = self
                .members
                .get(&owner[k])
                .is_some_and(|m| m.live && m.status.epoch == self.plan.epoch && m.status.settled);
            if gone && holds {
                source[k] = owner[k]; // its owner has it already
            } else if lacking || gone {
                depth[k] = 0;
                source[k] = 0;
            }
        }
        let orphans: Vec<usize> = (0..parts).filter(|&k| !self.live(owner[k])).collect();
        if !orphans.is_empty() && !assign::place(&mut owner, &orphans, &self.candidates()) {
            return None;
        }
        let changed = (&depth, &source, &owner) != (&self.plan.depth, &self.plan.source, &self.plan.owner);
        if changed {
            let remade = (0..parts).filter(|&k| depth[k] == 0 && self.plan.depth[k] > 0).count();
            if !orphans.is_empty() {
                tracing::warn!("{} parts of lost workers move to others", orphans.len());
            }
            if remade > 0 {
                tracing::warn!("{remade} parts are made again from the levels the other workers keep");
            }
            (self.plan.depth, self.plan.source, self.plan.owner) = (depth, source, owner);
        }
        Some(changed)
    }

    /// Whether every owner holds its parts in this epoch.
    fn settled(&self) -> bool {
        self.plan.owners().iter().all(|w| {
            self.members
                .get(w)
                .is_some_and(|m| m.live && m.status.epoch == self.plan.epoch && m.status.settled)
        })
    }

    /// The level to make next: the lowest depth a part holds, made again, or a new level.
    fn next_level(&mut self) {
        let d = *self.plan.depth.iter().min().expect("a search has parts");
        let kept = self.standing.depths.len() as u32;
        let order = if d < kept {
            let backward = self.levels[d as usize].backward;
            let direction = match (d, backward) {
                (0, _) => Direction::Start,
                (_, true) => Direction::Backward,
                _ => Direction::Forward,
            };
            LevelOrder { depth: d, direction, upload: false }
        } else {
            // The entries rule: a backward level sends each part's unvisited entries to its
            // neighbours' owners, so a cluster pulls only once they are fewer than the frontier.
            match self.standing.next(self.settings.total, self.settings.max_depth, 1) {
                Some((depth, direction)) => LevelOrder { depth, direction, upload: self.settings.upload },
                None => {
                    self.over = true;
                    self.out.push_back(CoordinatorAction::Finished(self.standing.depths.clone()));
                    return;
                }
            }
        };
        self.plan.level = Some(order);
        self.changed();
    }

    /// Whether the level of `order` is made (all target parts reported in this epoch); then it
    /// is committed (a level made again) or kept (a new level).
    fn level_made(&mut self, order: LevelOrder) -> bool {
        let mut counts = Vec::new();
        for k in 0..self.job.parts() {
            if self.plan.depth[k as usize] != order.depth {
                continue;
            }
            let owner = self.plan.owner[k as usize];
            let reported = self.members.get(&owner).and_then(|m| {
                let (d, parts) = m.status.finished.as_ref().filter(|_| m.status.epoch == self.plan.epoch)?;
                (*d == order.depth).then(|| parts.iter().find(|(p, _)| *p == k).map(|(_, c)| *c))?
            });
            match reported {
                Some(c) => counts.push((k, c)),
                None => return false,
            }
        }
        if order.depth < self.standing.depths.len() as u32 {
            let kept = &self.levels[order.depth as usize];
            for &(k, c) in &counts {
                if to_words(c) != kept.parts[k as usize] {
                    self.fail(format!(
                        "internal check failed: part {k} of level {} made again with {} entries, first with {}",
                        order.depth, c.entries, kept.parts[k as usize][0]
                    ));
                    return true;
                }
            }
            self.commit(order.depth);
            return true;
        }
        let total = counts.iter().fold(RowCounts::default(), |a, (_, c)| a + *c);
        let report = match level_report(total, order.depth, order.direction) {
            Ok(r) => r,
            Err(e) => {
                self.fail(e.to_string());
                return true;
            }
        };
        if report.entries == 0 {
            self.over = true;
            self.out.push_back(CoordinatorAction::Finished(self.standing.depths.clone()));
            return true;
        }
        let visited = self.standing.keep(&report);
        self.levels.push(KeptLevel {
            backward: order.direction == Direction::Backward,
            parts: counts.iter().map(|(_, c)| to_words(*c)).collect(),
        });
        let mut snapshot = self.snapshot();
        snapshot.depth.iter_mut().for_each(|d| *d = order.depth + 1);
        self.keeping = Some((order.depth, counts));
        self.out.push_back(CoordinatorAction::Keep { report, visited, snapshot });
        true
    }

    fn kept(&mut self, depth: u32) {
        if self.keeping.as_ref().is_some_and(|(d, _)| *d == depth) {
            self.keeping = None;
            self.commit(depth);
        }
    }

    /// The level of `depth` is committed in its target parts.
    fn commit(&mut self, depth: u32) {
        for d in self.plan.depth.iter_mut().filter(|d| **d == depth) {
            *d = depth + 1;
        }
        self.plan.level = None;
        self.changed();
    }
}
