//! A worker's side of a row search: which parts it holds for the plan's epoch and how it gets
//! them (its own disk, another worker's, or made again), commits, messages for later, and the
//! status it reports. The level itself is in `level.rs`.
//!
//! States of a part this worker owns: *coming* (a [`Work`] that puts it in memory runs: made
//! fresh, loaded from this worker's disk or taken from levels another worker sent),
//! *fetching* (its levels were asked of the worker that keeps them), *held* at a depth
//! (possibly with one more level made and stored, not committed), *committing*. The worker is
//! *settled* in an epoch when every part it owns is held at the plan's depth.
//!
//! Invariants: a message of an older epoch is dropped; one of a later epoch, or of a level not
//! begun here, waits; a level is committed in a part only when the plan says the part holds it
//! and this worker made it (else the worker fails: the coordinator broke the protocol).

use super::run::LevelRun;
use super::work::{Done, Work, WorkerAction, WorkerEvent};
use super::{JobInfo, Kind, Message, Note, Plan, Status};
use crate::runtime::{Epoch, WorkerId};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Ticks a fetch waits for its answer before it is sent again.
const FETCH_TICKS: u32 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PartState {
    Coming {
        depth: u32,
    },
    Fetching {
        from: WorkerId,
        depth: u32,
    },
    /// Levels `0 .. depth` in memory; `made`: level `depth` made and stored, not committed.
    Held {
        depth: u32,
        made: bool,
    },
    Committing {
        depth: u32,
    },
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Part {
    pub(super) tag: u64,
    pub(super) state: PartState,
    /// Ticks since its fetch was sent.
    pub(super) waited: u32,
}

pub struct RowsWorker {
    pub(super) me: WorkerId,
    pub(super) job: JobInfo,
    /// Images messages one destination may have in flight.
    pub(super) window: usize,
    ready: bool,
    room: u64,
    /// Levels on this worker's disk: per part, `0 .. d`.
    stored: BTreeMap<u32, u32>,
    /// A plan that came before the index was built.
    waiting_plan: Option<Plan>,
    pub(super) plan: Option<Plan>,
    pub(super) parts: BTreeMap<u32, Part>,
    tags: u64,
    pub(super) level: Option<LevelRun>,
    stash: Vec<(WorkerId, Message)>,
    lacking: BTreeSet<u32>,
    failure: Option<String>,
    pub(super) out: VecDeque<WorkerAction>,
}

impl RowsWorker {
    /// Worker `me` of `job`, letting each destination have `window` image messages in flight.
    /// Its first action builds the index.
    pub fn new(me: WorkerId, job: JobInfo, window: usize) -> Self {
        let mut w = RowsWorker {
            me,
            job,
            window: window.max(1),
            ready: false,
            room: 0,
            stored: BTreeMap::new(),
            waiting_plan: None,
            plan: None,
            parts: BTreeMap::new(),
            tags: 0,
            level: None,
            stash: Vec::new(),
            lacking: BTreeSet::new(),
            failure: None,
            out: VecDeque::new(),
        };
        w.out.push_back(WorkerAction::Work(Work::Build));
        w
    }

    /// The core's state, for a person reading a simulator's failure.
    pub fn describe(&self) -> String {
        format!(
            "parts {:?}\n  level {:?}\n  stash {:?}",
            self.parts,
            self.level,
            self.stash.iter().map(|(_, m)| m.note).collect::<Vec<_>>()
        )
    }

    pub fn me(&self) -> WorkerId {
        self.me
    }

    pub fn job(&self) -> &JobInfo {
        &self.job
    }

    /// The next action, if any.
    pub fn next_action(&mut self) -> Option<WorkerAction> {
        self.out.pop_front()
    }

    /// The epoch of the plan taken (0: none).
    pub fn epoch(&self) -> Epoch {
        self.plan.as_ref().map_or(0, |p| p.epoch)
    }

    /// What the worker tells the coordinator.
    pub fn status(&self) -> Status {
        Status {
            ready: self.ready,
            room: self.room,
            epoch: self.epoch(),
            version: self.plan.as_ref().map_or(0, |p| p.version),
            settled: self.settled(),
            lacking: self.lacking.iter().copied().collect(),
            finished: self.level.as_ref().and_then(|l| l.finished()),
            progress: self.level.as_ref().filter(|l| l.epoch == self.epoch()).map(|l| (l.depth, l.percent())),
            failure: self.failure.clone(),
        }
    }

    pub fn handle(&mut self, event: WorkerEvent) {
        if self.failure.is_some() {
            return;
        }
        match event {
            WorkerEvent::Plan(plan) => self.take_plan(plan),
            WorkerEvent::Done(done) => self.done(done),
            WorkerEvent::Message(m) => self.message(m.note.from, m),
            WorkerEvent::Acked { to, note, ok } => self.acked(to, note, ok),
            WorkerEvent::SendFailed { to, message } => self.send_failed(to, message),
            WorkerEvent::Uploaded { part, depth, epoch } => self.uploaded(part, depth, epoch),
            WorkerEvent::Tick => self.tick(),
        }
    }

    pub(super) fn report(&mut self) {
        if !self.out.contains(&WorkerAction::Report) {
            self.out.push_back(WorkerAction::Report);
        }
    }

    pub(super) fn fail(&mut self, why: String) {
        self.failure.get_or_insert(why);
        self.report();
    }

    pub(super) fn work(&mut self, work: Work) {
        self.out.push_back(WorkerAction::Work(work));
    }

    pub(super) fn send(&mut self, to: WorkerId, message: Message) {
        self.out.push_back(WorkerAction::Send { to, message });
    }

    fn ack(&mut self, to: WorkerId, note: Note, ok: bool) {
        self.out.push_back(WorkerAction::Ack { to, note, ok });
    }

    /// Whether every part it owns in the plan's epoch is held at the plan's depth.
    pub(super) fn settled(&self) -> bool {
        let Some(plan) = &self.plan else { return false };
        self.lacking.is_empty()
            && (0..self.job.parts()).filter(|&k| plan.owner[k as usize] == self.me).all(|k| {
                matches!(self.parts.get(&k), Some(p) if matches!(p.state,
                    PartState::Held { depth, .. } if depth == plan.depth[k as usize]))
            })
    }

    fn take_plan(&mut self, plan: Plan) {
        if !self.ready {
            if plan.epoch >= self.waiting_plan.as_ref().map_or(0, |p| p.epoch) {
                self.waiting_plan = Some(plan);
            }
            return;
        }
        let parts = self.job.parts() as usize;
        if plan.owner.len() != parts || plan.depth.len() != parts || plan.source.len() != parts {
            return self.fail(format!("a plan of {} parts for a job of {parts}", plan.owner.len()));
        }
        let version = self.plan.as_ref().map_or(0, |p| p.version);
        match self.epoch() {
            e if plan.epoch < e => {}
            e if plan.epoch == e && plan.version <= version => {}
            e if plan.epoch == e => self.update(plan),
            _ => self.adopt(plan),
        }
    }

    /// A plan of a new epoch: the level being made is dropped, parts that moved away leave
    /// memory, parts this worker owns are brought to the plan's depth.
    fn adopt(&mut self, plan: Plan) {
        self.level = None;
        self.lacking.clear();
        let me = self.me;
        let away: Vec<(u32, u64)> = self
            .parts
            .iter()
            .filter(|(k, _)| plan.owner[**k as usize] != me)
            .map(|(k, p)| (*k, p.tag))
            .collect();
        for (part, tag) in away {
            self.parts.remove(&part);
            self.work(Work::Release { part, tag });
        }
        self.plan = Some(plan.clone());
        for k in 0..self.job.parts() {
            if plan.owner[k as usize] != me {
                continue;
            }
            let want = plan.depth[k as usize];
            match self.parts.get(&k).map(|p| p.state) {
                Some(PartState::Held { depth, .. }) if depth == want => {}
                Some(PartState::Held { depth, made: true }) if depth + 1 == want => self.commit(k, depth),
                Some(PartState::Committing { depth }) if depth + 1 == want => {}
                Some(PartState::Coming { depth }) if depth == want => {}
                Some(PartState::Fetching { from, depth })
                    if depth == want && from == plan.source[k as usize] => {}
                _ => self.acquire(k, want),
            }
        }
        let stash = std::mem::take(&mut self.stash);
        for (from, m) in stash {
            self.message(from, m);
        }
        self.report();
        self.maybe_begin();
    }

    /// A plan of the epoch held: levels committed, and the next level to make.
    fn update(&mut self, plan: Plan) {
        let old = self.plan.replace(plan.clone()).expect("an epoch is held");
        if old.owner != plan.owner {
            return self.fail("the coordinator changed the owners without a new epoch".into());
        }
        for k in 0..self.job.parts() {
            let (was, now) = (old.depth[k as usize], plan.depth[k as usize]);
            if now == was || plan.owner[k as usize] != self.me {
                continue;
            }
            match self.parts.get(&k).map(|p| p.state) {
                Some(PartState::Held { depth, made: true }) if now == depth + 1 => self.commit(k, depth),
                // A level made before this epoch began and committed since: it is on the disk
                // (here, or the part's source's).
                _ if now > was => self.acquire(k, now),
                state => {
                    return self
                        .fail(format!("told that part {k} holds {now} levels, but it is {state:?} here"))
                }
            }
        }
        self.report();
        self.maybe_begin();
    }

    fn commit(&mut self, part: u32, depth: u32) {
        if let Some(p) = self.parts.get_mut(&part) {
            p.state = PartState::Committing { depth };
        }
        self.work(Work::Commit { part, depth });
    }

    /// Brings part `k` to `depth` levels: fresh, from this disk, or from its source.
    fn acquire(&mut self, part: u32, depth: u32) {
        self.tags += 1;
        let tag = self.tags;
        let source = self.plan.as_ref().map_or(0, |p| p.source[part as usize]);
        let state = if depth == 0 {
            self.work(Work::Fresh { part, tag });
            PartState::Coming { depth }
        } else if self.stored.get(&part).is_some_and(|&d| d >= depth) {
            self.work(Work::Load { part, depth, tag });
            PartState::Coming { depth }
        } else if source != 0 && source != self.me {
            let note = Note { epoch: self.epoch(), depth, part, from: self.me, kind: Kind::Fetch };
            self.send(source, Message { note, payload: bytes::Bytes::new() });
            PartState::Fetching { from: source, depth }
        } else {
            self.parts.remove(&part);
            self.lacking.insert(part);
            return;
        };
        self.parts.insert(part, Part { tag, state, waited: 0 });
    }

    fn tick(&mut self) {
        let epoch = self.epoch();
        let mut again = Vec::new();
        for (&part, p) in self.parts.iter_mut() {
            if let PartState::Fetching { from, depth } = p.state {
                p.waited += 1;
                if p.waited >= FETCH_TICKS {
                    p.waited = 0;
                    again.push((from, Note { epoch, depth, part, from: self.me, kind: Kind::Fetch }));
                }
            }
        }
        for (to, note) in again {
            self.send(to, Message { note, payload: bytes::Bytes::new() });
        }
    }

    fn done(&mut self, done: Done) {
        match done {
            Done::Built { room, stored } => {
                self.ready = true;
                self.room = room;
                self.stored = stored.into_iter().collect();
                self.report();
                if let Some(plan) = self.waiting_plan.take() {
                    self.take_plan(plan);
                }
            }
            Done::Held { part, tag, depth } => {
                if let Some(p) = self.parts.get_mut(&part).filter(|p| p.tag == tag) {
                    p.state = PartState::Held { depth, made: false };
                    let d = self.stored.entry(part).or_insert(0);
                    *d = (*d).max(depth);
                    self.report();
                    self.maybe_begin();
                }
            }
            Done::Unreadable { part, tag, .. } => {
                // A damaged file is not read again; a damaged message is asked for again.
                if let Some(PartState::Coming { depth } | PartState::Fetching { depth, .. }) =
                    self.parts.get(&part).filter(|p| p.tag == tag).map(|p| p.state)
                {
                    self.stored.remove(&part);
                    self.acquire(part, depth);
                    self.report();
                }
            }
            Done::Exported { part, depth, to, epoch, payload } => {
                let note = Note { epoch, depth, part, from: self.me, kind: Kind::Levels };
                self.send(to, Message { note, payload: payload.into() });
            }
            Done::Committed { part, depth } => {
                if let Some(p) = self.parts.get_mut(&part) {
                    if p.state == (PartState::Committing { depth }) {
                        p.state = PartState::Held { depth: depth + 1, made: false };
                    }
                }
                self.maybe_begin();
            }
            Done::Failed { why } => self.fail(why),
            other => self.level_done(other),
        }
    }

    fn message(&mut self, from: WorkerId, m: Message) {
        let note = m.note;
        match note.kind {
            Kind::Fetch => {
                // Served from the disk whatever the epoch: a level of a part is the same however
                // often it is made. An empty answer says the disk does not have it.
                if self.ready && self.stored.get(&note.part).is_some_and(|&d| d >= note.depth) {
                    let (part, depth, epoch) = (note.part, note.depth, note.epoch);
                    self.work(Work::Export { part, depth, to: from, epoch });
                } else if self.ready {
                    let answer = Note { from: self.me, kind: Kind::Levels, ..note };
                    self.send(from, Message { note: answer, payload: bytes::Bytes::new() });
                } else {
                    self.stash.push((from, m));
                }
                return;
            }
            Kind::Levels => return self.levels(from, m),
            _ => {}
        }
        let epoch = self.epoch();
        if note.epoch < epoch {
            return self.ack(from, note, true); // stale: its sender has moved on or will
        }
        if note.epoch > epoch {
            self.stash.push((from, m));
        } else if let Err(m) = self.take_level_message(from, m) {
            self.stash.push((from, m));
        }
    }

    /// The levels of a part this worker asked for.
    fn levels(&mut self, from: WorkerId, m: Message) {
        let note = m.note;
        let Some(p) = self.parts.get_mut(&note.part) else { return };
        if p.state != (PartState::Fetching { from, depth: note.depth }) {
            return;
        }
        if m.payload.is_empty() {
            self.parts.remove(&note.part);
            self.lacking.insert(note.part);
            self.report();
            return;
        }
        self.tags += 1;
        p.tag = self.tags;
        p.state = PartState::Coming { depth: note.depth };
        let (part, depth, tag) = (note.part, note.depth, p.tag);
        self.work(Work::Import { part, depth, tag, payload: m.payload });
    }

    /// Takes the waiting messages that the level now being made can take.
    pub(super) fn retry_stash(&mut self) {
        let stash = std::mem::take(&mut self.stash);
        for (from, m) in stash {
            self.message(from, m);
        }
    }

    fn send_failed(&mut self, to: WorkerId, message: Message) {
        let note = message.note;
        match note.kind {
            Kind::Fetch => {
                let wanted = self
                    .parts
                    .get(&note.part)
                    .is_some_and(|p| p.state == (PartState::Fetching { from: to, depth: note.depth }));
                if wanted {
                    self.send(to, message);
                }
            }
            Kind::Levels => {} // the fetcher asks again (see `tick`)
            _ => self.level_send_failed(to, message),
        }
    }

    /// A level of `part` was stored on the disk.
    pub(super) fn stored_level(&mut self, part: u32, depth: u32) {
        let d = self.stored.entry(part).or_insert(0);
        if *d >= depth {
            *d = (*d).max(depth + 1);
        }
    }

    /// A level was made in `part` (and stored): it waits for its commit.
    pub(super) fn made(&mut self, part: u32, depth: u32) {
        self.stored_level(part, depth);
        if let Some(p) = self.parts.get_mut(&part) {
            if p.state == (PartState::Held { depth, made: false }) {
                p.state = PartState::Held { depth, made: true };
            }
        }
    }
}
