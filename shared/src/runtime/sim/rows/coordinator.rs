//! The simulated coordinator's process around its core: registrations, liveness, the
//! journal, the plan sent to workers behind it, levels sent up and checked.

use super::{Addr, Ev, Member, MemberState, World, BEAT_MS, LIVENESS_MS};
use crate::bfs::Standing;
use crate::runtime::rows::*;
use crate::runtime::WorkerId;

impl World {
    pub(super) fn coordinator_boot(&mut self) {
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

    pub(super) fn register(&mut self, from: Addr, prev: WorkerId, threads: u32) {
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

    pub(super) fn status(&mut self, from: Addr, id: WorkerId, coordinator: u32, status: Status) {
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

    pub(super) fn tick(&mut self, life: u32) {
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

    pub(super) fn coordinator_event(&mut self, event: CoordinatorEvent) {
        if let Some(core) = self.coordinator.core.as_mut() {
            core.handle(event);
        }
        self.after_coordinator();
    }

    /// Carries out what the coordinator's core asks, and sends the plan to workers behind it.
    pub(super) fn after_coordinator(&mut self) {
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
    pub(super) fn check_uploads(&mut self, depth: u32) -> Result<(), String> {
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
            let got = set.to_rows();
            for (i, r) in rows.enumerate() {
                let want = &expected[r as usize * words..][..words];
                if got[i * words..][..words] != *want {
                    return Err(format!(
                        "row {r} of level {depth} as sent up differs from the embedded search's"
                    ));
                }
            }
        }
        Ok(())
    }
}
