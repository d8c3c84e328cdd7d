//! The level a worker makes with the other owners, as a state machine per target part it owns.
//!
//! - **Start** (level 0): the start entry, if its row is in the part.
//! - **Forward**: the part gathers this worker's images and one `Images` message from every
//!   other owner; this worker sends each other owner's target part its images, at most
//!   `window` messages in flight to each destination.
//! - **Backward**: the part's unvisited entries are tested against this worker's rows, then
//!   those still unreached are asked of the other owners one after another (`Open`), each
//!   answering with its hits (`Hits`); the next is asked once the answer is merged.
//!
//! A part is finished (counted, stored on disk, sent to the coordinator if the plan asks) once
//! all of that is in; the worker reports the level when all its target parts are finished. It
//! answers other owners' `Open` messages until the level is committed or the epoch changes.

use super::run::{LevelRun, Target};
use super::work::{Done, Work, WorkerAction};
use super::worker::{PartState, RowsWorker};
use super::{Kind, Message, Note};
use crate::bfs::Direction;
use crate::runtime::{Epoch, WorkerId};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

impl RowsWorker {
    /// Begins the plan's level once every part is held at the plan's depth (and it is not
    /// begun yet). A worker that owns no part takes no part in it.
    pub(super) fn maybe_begin(&mut self) {
        let Some(plan) = self.plan.clone() else { return };
        let Some(order) = plan.level else { return };
        if !self.settled()
            || self.level.as_ref().is_some_and(|l| (l.epoch, l.depth) == (plan.epoch, order.depth))
        {
            return;
        }
        let me = self.me;
        let owned: Vec<u32> = (0..self.job.parts()).filter(|&k| plan.owner[k as usize] == me).collect();
        if owned.is_empty() {
            return;
        }
        let (targets, others): (Vec<u32>, Vec<u32>) = owned.iter().partition(|&&k| plan.is_target(k));
        let senders: BTreeSet<WorkerId> = plan.owners().into_iter().filter(|&w| w != me).collect();
        let mine = targets
            .iter()
            .enumerate()
            .map(|(i, &k)| {
                // Each part asks the other owners in its own order, so they are asked evenly.
                let mut peers: Vec<WorkerId> = senders.iter().copied().collect();
                if !peers.is_empty() {
                    let turn = i % peers.len();
                    peers.rotate_left(turn);
                }
                (k, Target { peers, ..Target::default() })
            })
            .collect();
        for k in &targets {
            if let Some(p) = self.parts.get_mut(k) {
                p.state = PartState::Held { depth: order.depth, made: false };
            }
        }
        self.level = Some(LevelRun {
            depth: order.depth,
            epoch: plan.epoch,
            direction: order.direction,
            upload: order.upload,
            prepared: false,
            senders,
            mine,
            queue: VecDeque::new(),
            flight: BTreeMap::new(),
            pushes: 0,
            pushed: 0,
        });
        self.work(Work::Prepare {
            depth: order.depth,
            epoch: plan.epoch,
            targets,
            others,
            owner: plan.owner,
        });
        self.report();
    }

    /// Whether `done` is about the level being made now.
    fn current(&self, depth: u32, epoch: Epoch) -> bool {
        self.level.as_ref().is_some_and(|l| (l.depth, l.epoch) == (depth, epoch))
    }

    pub(super) fn level_done(&mut self, done: Done) {
        match done {
            Done::Prepared { depth, epoch } if self.current(depth, epoch) => self.prepared(),
            Done::Local { part, depth, epoch } if self.current(depth, epoch) => {
                let Some(t) = self.target(part) else { return };
                t.local = true;
                self.ask_next(part);
            }
            Done::Pushed { part, depth, epoch, to, payload } if self.current(depth, epoch) => {
                if let Some(l) = self.level.as_mut() {
                    l.pushed += 1;
                }
                let note = Note { epoch, depth, part, from: self.me, kind: Kind::Images };
                self.send(to, Message { note, payload });
            }
            Done::Asked { part, depth, epoch, peer, payload } if self.current(depth, epoch) => {
                // Only the question to the owner being asked now counts (an earlier one for
                // the same owner may have been answered meanwhile).
                let Some(t) = self.target(part) else { return };
                if !t.asking || t.peers.get(t.answered) != Some(&peer) {
                    return;
                }
                match payload {
                    None => self.answered(part),
                    Some(payload) => {
                        let note = Note { epoch, depth, part, from: self.me, kind: Kind::Open };
                        self.send(peer, Message { note, payload });
                    }
                }
            }
            Done::Answered { note, payload } => {
                if self.current(note.depth, note.epoch) {
                    let hits = Note { from: self.me, kind: Kind::Hits, ..note };
                    self.send(note.from, Message { note: hits, payload });
                }
                self.out.push_back(WorkerAction::Ack { to: note.from, note, ok: true });
            }
            Done::Merged { note } => {
                self.out.push_back(WorkerAction::Ack { to: note.from, note, ok: true });
                if !self.current(note.depth, note.epoch) {
                    return;
                }
                let Some(t) = self.target(note.part) else { return };
                t.merging.remove(&note.from);
                match note.kind {
                    Kind::Hits => self.answered(note.part),
                    _ => {
                        t.merged.insert(note.from);
                        self.try_finish(note.part);
                    }
                }
            }
            Done::Damaged { note, .. } => {
                self.out.push_back(WorkerAction::Ack { to: note.from, note, ok: false });
                if !self.current(note.depth, note.epoch) {
                    return;
                }
                if let Some(t) = self.target(note.part) {
                    t.merging.remove(&note.from);
                    if note.kind == Kind::Hits {
                        self.ask_again(note.part); // its answer came damaged: ask again
                    }
                }
            }
            Done::Finished { part, depth, epoch, counts, upload } if self.current(depth, epoch) => {
                self.made(part, depth);
                let Some(t) = self.target(part) else { return };
                t.counts = Some(counts);
                if let Some(payload) = upload {
                    t.uploading = true;
                    self.out.push_back(WorkerAction::Upload { part, depth, epoch, payload });
                }
                self.report();
            }
            // Anything else is about a level no longer made here.
            _ => {}
        }
    }

    fn target(&mut self, part: u32) -> Option<&mut Target> {
        self.level.as_mut()?.mine.get_mut(&part)
    }

    /// Level `depth - 1` of every part this worker owns is ready to be read: its shares begin.
    fn prepared(&mut self) {
        let plan = self.plan.clone().expect("a level comes with a plan");
        let me = self.me;
        let l = self.level.as_mut().expect("current");
        l.prepared = true;
        let (depth, epoch, direction) = (l.depth, l.epoch, l.direction);
        let mine: Vec<u32> = l.mine.keys().copied().collect();
        if direction == Direction::Forward {
            // Other owners' target parts, starting after this worker's first part, so that
            // workers do not all send to one owner at once.
            let parts = self.job.parts();
            let first = plan.owner.iter().position(|&o| o == me).unwrap_or(0) as u32;
            l.queue = (0..parts)
                .map(|i| (first + 1 + i) % parts)
                .filter(|&k| plan.is_target(k) && plan.owner[k as usize] != me)
                .map(|k| (k, plan.owner[k as usize]))
                .collect();
            l.pushes = l.queue.len();
        }
        for part in mine {
            self.work(Work::Local { part, depth, epoch, direction });
        }
        self.pump();
        self.retry_stash();
    }

    /// Makes the images of queued target parts whose owner has room in its window.
    fn pump(&mut self) {
        let Some(l) = self.level.as_mut() else { return };
        let (depth, epoch, window) = (l.depth, l.epoch, self.window);
        let mut work = Vec::new();
        let mut i = 0;
        while i < l.queue.len() {
            let (part, to) = l.queue[i];
            let flight = l.flight.entry(to).or_insert(0);
            if *flight < window {
                *flight += 1;
                l.queue.remove(i);
                work.push(Work::Push { part, depth, epoch, to });
            } else {
                i += 1;
            }
        }
        for w in work {
            self.work(w);
        }
    }

    /// Backward: asks the next owner about `part`, or finishes it when all have answered.
    fn ask_next(&mut self, part: u32) {
        let Some(l) = self.level.as_ref() else { return };
        let (depth, epoch, direction) = (l.depth, l.epoch, l.direction);
        let Some(t) = self.target(part) else { return };
        if direction != Direction::Backward || t.answered == t.peers.len() {
            return self.try_finish(part);
        }
        if !t.asking {
            t.asking = true;
            let peer = t.peers[t.answered];
            self.work(Work::Ask { part, depth, epoch, peer });
        }
    }

    /// Backward: the owner being asked about `part` could not be asked or answered damaged.
    fn ask_again(&mut self, part: u32) {
        let Some(t) = self.target(part) else { return };
        t.asking = false;
        self.ask_next(part);
    }

    fn answered(&mut self, part: u32) {
        let Some(t) = self.target(part) else { return };
        t.asking = false;
        t.answered += 1;
        self.ask_next(part);
    }

    fn try_finish(&mut self, part: u32) {
        let Some(l) = self.level.as_mut() else { return };
        let (depth, epoch, direction, upload) = (l.depth, l.epoch, l.direction, l.upload);
        let senders = l.senders.clone();
        let Some(t) = l.mine.get_mut(&part) else { return };
        let all_in = match direction {
            Direction::Start => true,
            Direction::Forward => t.merged == senders && t.merging.is_empty(),
            Direction::Backward => t.answered == t.peers.len() && !t.asking,
        };
        if t.local && all_in && !t.finishing {
            t.finishing = true;
            self.work(Work::Finish { part, depth, epoch, direction, upload });
        }
    }

    /// A message of the plan's epoch about a level: taken (now, or later with an answer), or
    /// handed back when the level it belongs to is not begun here yet. Its bytes move on to the
    /// work that merges or answers them, never copied.
    pub(super) fn take_level_message(&mut self, from: WorkerId, m: Message) -> Result<(), Message> {
        let note = m.note;
        let Some(l) = self.level.as_mut() else { return Err(m) };
        if note.depth < l.depth {
            self.out.push_back(WorkerAction::Ack { to: from, note, ok: true });
            return Ok(());
        }
        if note.depth > l.depth || !l.prepared {
            return Err(m);
        }
        let valid = match note.kind {
            Kind::Images => {
                let sender = l.senders.contains(&from);
                match l.mine.get_mut(&note.part) {
                    Some(t)
                        if sender
                            && !t.finishing
                            && !t.merged.contains(&from)
                            && !t.merging.contains(&from) =>
                    {
                        t.merging.insert(from);
                        true
                    }
                    _ => false,
                }
            }
            Kind::Hits => match l.mine.get_mut(&note.part) {
                Some(t)
                    if t.asking && t.peers.get(t.answered) == Some(&from) && !t.merging.contains(&from) =>
                {
                    t.merging.insert(from);
                    true
                }
                _ => false,
            },
            Kind::Open => {
                let owner = self.plan.as_ref().map(|p| p.owner[note.part as usize]);
                if owner == Some(from) {
                    self.work(Work::Answer { note, payload: m.payload });
                    return Ok(());
                }
                false
            }
            Kind::Fetch | Kind::Levels => false,
        };
        if valid {
            self.work(Work::Merge { note, payload: m.payload });
        } else {
            // A duplicate, or a message this level has no use for.
            self.out.push_back(WorkerAction::Ack { to: from, note, ok: true });
        }
        Ok(())
    }

    /// The answer to a message this worker sent about the level.
    pub(super) fn acked(&mut self, to: WorkerId, note: Note, ok: bool) {
        if !self.current(note.depth, note.epoch) {
            return;
        }
        match note.kind {
            Kind::Images => {
                let l = self.level.as_mut().expect("current");
                if let Some(f) = l.flight.get_mut(&to) {
                    *f = f.saturating_sub(1);
                }
                if !ok {
                    l.queue.push_back((note.part, to)); // damaged on the way: made again
                }
                self.pump();
            }
            Kind::Open if !ok => self.ask_again(note.part),
            _ => {}
        }
    }

    /// A message about the level could not be delivered: sent again while the level is made.
    pub(super) fn level_send_failed(&mut self, to: WorkerId, message: Message) {
        if self.current(message.note.depth, message.note.epoch) {
            self.send(to, message);
        }
    }

    pub(super) fn uploaded(&mut self, part: u32, depth: u32, epoch: Epoch) {
        if !self.current(depth, epoch) {
            return;
        }
        if let Some(t) = self.target(part) {
            t.uploading = false;
            self.report();
        }
    }
}
