//! The simulated workers: their events, and what their cores ask carried out over the
//! simulated network.

use super::{Addr, Ev, World, BEAT_MS};
use crate::bfs::cut::PartCut;
use crate::bfs::task::Counting;
use crate::runtime::rows::*;
use crate::runtime::sim::faults::Faults;
use crate::runtime::sim::tiny::TinySpace;
use crate::shard::Codec;
use std::sync::Arc;

impl World {
    pub(super) fn worker_event(&mut self, ev: Ev) {
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
                    // Every codec, on different links of one run.
                    let salt = self.rng.below(3);
                    let codec =
                        move |to: u64| [Codec::Raw, Codec::Lz4, Codec::Zstd][((id + to + salt) % 3) as usize];
                    p.parts = Some(Arc::new(Parts::new(
                        self.space.clone(),
                        self.job.id,
                        PartCut::new(self.job.rows, self.job.rows_per_part),
                        TinySpace::moves(),
                        counting,
                        Arc::new(p.disk.clone()),
                        Arc::new(codec),
                    )));
                }
                self.send_status(at);
                self.pump(at);
            }
            Ev::Beat(a) => {
                self.feed(a, WorkerEvent::Tick);
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
            Ev::Plan { plan, .. } => self.feed(at, WorkerEvent::Plan(plan)),
            Ev::Work { core, parts, work, .. } => {
                let p = &self.procs[slot];
                let done = match work {
                    Work::Build => Some(parts.built(p.room)),
                    work => parts.run(work),
                };
                if let Some(done) = done.filter(|_| core == p.generation) {
                    self.feed(at, WorkerEvent::Done(done));
                }
            }
            Ev::Deliver { message, .. } => self.feed(at, WorkerEvent::Message(message)),
            Ev::Acked { by, note, ok, .. } => self.feed(at, WorkerEvent::Acked { to: by, note, ok }),
            Ev::SendFailed { dest, message, .. } => {
                self.feed(at, WorkerEvent::SendFailed { to: dest, message })
            }
            Ev::Uploaded { part, depth, epoch, .. } => {
                self.feed(at, WorkerEvent::Uploaded { part, depth, epoch })
            }
            _ => unreachable!("a worker's event"),
        }
    }

    pub(super) fn feed(&mut self, at: Addr, event: WorkerEvent) {
        let Some(core) = self.procs[at.0].core.as_mut() else { return };
        core.handle(event);
        self.pump(at);
    }

    pub(super) fn send_status(&mut self, a: Addr) {
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
    pub(super) fn pump(&mut self, a: Addr) {
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
                        let mut damaged = message.payload.to_vec();
                        damaged[at] ^= 1 << self.rng.below(8);
                        message.payload = damaged.into();
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
}
