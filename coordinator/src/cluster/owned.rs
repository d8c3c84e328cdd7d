//! The coordinator's side of a row search whose rows the workers own (`shared::bfs::owned`,
//! the worker's `rows` module): which worker owns each part of the rows and which keeps its
//! replica (an *epoch* of the assignment), which level is being made, what each worker last
//! reported, and how the assignment changes when workers are lost. No level data passes here:
//! workers exchange rows with each other; the coordinator only sums their counts.

use super::members::{Member, Members};
use super::ClusterError;
use shared::bfs::owned::PartCut;
use shared::bfs::task::Sources;
use shared::space::RowCounts;
use std::collections::BTreeMap;

/// What a worker last reported (its `RowsSync` request).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub ready: bool,
    /// Memory it can give to parts.
    pub room: u64,
    pub epoch: u64,
    /// Depth + 1 of its last committed level (0: none).
    pub committed: u32,
    /// Depth + 1 of a level it finished under `epoch` (0: none), with its counts.
    pub finished: u32,
    pub counts: RowCounts,
    pub level_sent: u64,
    pub level_received: u64,
    /// Depth + 1 of the level it is making (0: none).
    pub making: u32,
    /// The peers it knows (see [`OwnedRows::peers_version`]).
    pub peers_version: u64,
}

/// The state of an owned-row search.
#[derive(Clone, Debug)]
pub struct OwnedRows {
    pub job_id: u64,
    /// The job's spec (`shared::job::JobSpec`).
    pub spec: String,
    pub positions_only: bool,
    pub cut: PartCut,
    /// Words per row.
    pub words: usize,
    /// Memory one part takes on its owner.
    pub part_bytes: u64,
    /// The assignment: 0 before the first.
    pub epoch: u64,
    pub owner: Vec<u64>,
    /// Each part's replica holder (0: none); all 0 unless `replicas`.
    pub replica: Vec<u64>,
    /// Whether parts get replicas (`--replicas 1`, the default): without them a lost owner's
    /// parts are gone and the job stops.
    pub replicas: bool,
    pub committed: u32,
    pub committed_epoch: u64,
    /// Depth + 1 of the level to make (0: none), and its direction.
    pub level: u32,
    pub backward: bool,
    pub upload_levels: bool,
    /// Bumped whenever a worker registers or is lost: workers then learn the new addresses.
    pub peers_version: u64,
    pub reports: BTreeMap<u64, Report>,
    /// Parts of the last committed level sent up (a table build), by part.
    pub uploaded: BTreeMap<u32, Vec<u8>>,
}

/// What the journal keeps of an owned-row search with each level: enough to resume with the
/// same workers, which hold the parts, after the coordinator restarts.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Snapshot {
    pub job_id: u64,
    pub epoch: u64,
    pub committed_epoch: u64,
    pub owner: Vec<u64>,
    pub replica: Vec<u64>,
}

/// What a lost worker costs.
#[derive(Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Nothing it held matters.
    Nothing,
    /// Its parts and replicas moved: a new epoch.
    Moved { parts: usize },
    /// Its parts fit on no live worker: wait for one with room.
    Waiting { parts: usize },
}

/// Parts held at most by a worker with `room` bytes: a part's three arrays, with room left for
/// the buffers of the messages it computes, receives and decodes at once (each a part's rows at
/// most; about `threads` + 2 of them) and 128 MiB besides.
pub fn capacity(room: u64, part_bytes: u64, threads: u32) -> usize {
    let per = part_bytes.max(1);
    ((room.saturating_sub(128 << 20) / per) as usize).saturating_sub(threads as usize + 2)
}

impl OwnedRows {
    /// A search of `spec` over `cut` (rows of `words` words, expanded by `moves` moves).
    pub fn new(
        job_id: u64,
        spec: String,
        positions_only: bool,
        cut: PartCut,
        (words, moves): (usize, usize),
        upload_levels: bool,
    ) -> Self {
        OwnedRows {
            job_id,
            spec,
            positions_only,
            cut,
            words,
            // Three bit arrays, and the rows' sources of the worker's pushes.
            part_bytes: cut.rows_per_part as u64 * (3 * 8 * words as u64 + Sources::bytes_per_row(moves)),
            epoch: 0,
            owner: Vec::new(),
            replica: Vec::new(),
            replicas: true,
            committed: 0,
            committed_epoch: 0,
            level: 0,
            backward: false,
            upload_levels,
            peers_version: 0,
            reports: BTreeMap::new(),
            uploaded: BTreeMap::new(),
        }
    }

    fn capacity_of(&self, m: &Member) -> usize {
        let room = self.reports.get(&m.id).map_or(0, |r| r.room);
        capacity(room, self.part_bytes, m.threads)
    }

    /// Live workers that hold the job's index.
    fn ready<'a>(&'a self, members: &'a Members) -> impl Iterator<Item = &'a Member> + 'a {
        members.live().filter(|m| self.reports.get(&m.id).is_some_and(|r| r.ready))
    }

    /// (ready workers, parts they have room for).
    pub fn room(&self, members: &Members) -> (usize, usize) {
        let ready: Vec<&Member> = self.ready(members).collect();
        (ready.len(), ready.iter().map(|m| self.capacity_of(m)).sum())
    }

    /// The first assignment, over the ready workers: parts in proportion to their threads, as
    /// far as their room allows, interleaved; each part's replica with the next worker. `None`
    /// when they cannot hold every part.
    pub fn assign(&mut self, members: &Members) -> Option<()> {
        let workers: Vec<(u64, u32, usize)> =
            self.ready(members).map(|m| (m.id, m.threads.max(1), self.capacity_of(m))).collect();
        let parts = self.cut.parts() as usize;
        if workers.is_empty() || workers.iter().map(|w| w.2).sum::<usize>() < parts {
            return None;
        }
        let threads: u32 = workers.iter().map(|w| w.1).sum();
        let mut target: Vec<usize> =
            workers.iter().map(|w| (parts * w.1 as usize / threads as usize).min(w.2)).collect();
        // What rounding and room left over goes to those with room, in turn.
        let mut i = 0;
        while target.iter().sum::<usize>() < parts {
            if target[i] < workers[i].2 {
                target[i] += 1;
            }
            i = (i + 1) % workers.len();
        }
        let mut held = vec![0usize; workers.len()];
        self.owner = (0..parts)
            .map(|_| {
                // The worker furthest below its share (ties: the lowest id).
                let w = (0..workers.len())
                    .filter(|&w| held[w] < target[w])
                    .min_by(|&a, &b| (held[a] * target[b]).cmp(&(held[b] * target[a])).then(a.cmp(&b)))
                    .expect("targets sum to the parts");
                held[w] += 1;
                workers[w].0
            })
            .collect();
        let ring: Vec<u64> = workers.iter().map(|w| w.0).collect();
        self.replica = match self.replicas {
            true => self.owner.iter().map(|&o| next_in_ring(&ring, o)).collect(),
            false => vec![0; parts],
        };
        self.epoch += 1;
        Some(())
    }

    /// Moves the parts and replicas of workers no longer live: a part to its replica holder
    /// when it has room, else to the live worker with the most room; replicas to the next live
    /// worker after the owner. `Err` when a part's owner and replica holder are both gone.
    pub fn recover(&mut self, members: &Members) -> Result<Recovery, ClusterError> {
        if self.epoch == 0 {
            return Ok(Recovery::Nothing);
        }
        let live = |w: u64| w != 0 && members.is_live(w);
        let orphans: Vec<usize> = (0..self.owner.len()).filter(|&k| !live(self.owner[k])).collect();
        let lost_replicas = (0..self.replica.len()).any(|k| self.replica[k] != 0 && !live(self.replica[k]));
        let ring: Vec<u64> = self.ready(members).map(|m| m.id).collect();
        let unreplicated = self.replicas && ring.len() > 1 && self.replica.contains(&0);
        if orphans.is_empty() && !lost_replicas && !unreplicated {
            return Ok(Recovery::Nothing);
        }
        let mut free: BTreeMap<u64, isize> = self
            .ready(members)
            .map(|m| {
                (
                    m.id,
                    self.capacity_of(m) as isize - self.owner.iter().filter(|&&o| o == m.id).count() as isize,
                )
            })
            .collect();
        let mut owner = self.owner.clone();
        for &k in &orphans {
            let holder = self.replica[k];
            if !self.replicas {
                return Err(ClusterError::Unreplicated { part: k, owner: self.owner[k] });
            }
            if !live(holder) {
                return Err(ClusterError::PartLost { part: k, owner: self.owner[k], holder });
            }
            let pick = if free.get(&holder).is_some_and(|&f| f > 0) {
                Some(holder)
            } else {
                free.iter()
                    .filter(|(_, &f)| f > 0)
                    .max_by_key(|(id, &f)| (f, std::cmp::Reverse(**id)))
                    .map(|(id, _)| *id)
            };
            let Some(new) = pick else { return Ok(Recovery::Waiting { parts: orphans.len() }) };
            *free.get_mut(&new).expect("a ready worker") -= 1;
            owner[k] = new;
        }
        self.owner = owner;
        for k in 0..self.replica.len() {
            let r = self.replica[k];
            if ring.len() < 2 || !self.replicas {
                self.replica[k] = 0;
            } else if !live(r) || r == self.owner[k] {
                self.replica[k] = next_in_ring(&ring, self.owner[k]);
            }
        }
        self.epoch += 1;
        Ok(Recovery::Moved { parts: orphans.len() })
    }

    /// Whether `worker`, which last reported `report`, holds what it should and is at work on
    /// (or done with) the level: then its poll waits for a change.
    pub fn in_sync(&self, report: &Report) -> bool {
        if self.epoch == 0 {
            return report.ready;
        }
        report.peers_version == self.peers_version
            && report.epoch == self.epoch
            && report.committed == self.committed
            && (self.level == 0 || report.making == self.level || report.finished == self.level)
    }

    /// Workers owning at least one part.
    pub fn owners(&self) -> Vec<u64> {
        let mut o = self.owner.clone();
        o.sort_unstable();
        o.dedup();
        o
    }

    /// The level's counts and traffic once every owner has reported it finished in this epoch.
    pub fn level_done(&self) -> Option<(RowCounts, u64, u64)> {
        if self.level == 0 {
            return None;
        }
        let mut sum = (RowCounts::default(), 0, 0);
        for w in self.owners() {
            let r = self.reports.get(&w)?;
            if r.epoch != self.epoch || r.finished != self.level {
                return None;
            }
            sum = (sum.0 + r.counts, sum.1 + r.level_sent, sum.2 + r.level_received);
        }
        Some(sum)
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            job_id: self.job_id,
            epoch: self.epoch,
            committed_epoch: self.committed_epoch,
            owner: self.owner.clone(),
            replica: self.replica.clone(),
        }
    }

    /// Rows `worker` owns.
    pub fn rows_of(&self, worker: u64) -> u64 {
        (0..self.owner.len() as u32)
            .filter(|&k| self.owner[k as usize] == worker)
            .map(|k| self.cut.range(k).len() as u64)
            .sum()
    }
}

/// The worker after `w` in `ring` (ids in order), other than `w`; 0 when there is none.
fn next_in_ring(ring: &[u64], w: u64) -> u64 {
    let after = ring.iter().copied().find(|&r| r > w).or_else(|| ring.first().copied());
    after.filter(|&r| r != w).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn setup(workers: &[(u32, u64)]) -> (Members, OwnedRows) {
        let mut members = Members::new(Duration::from_secs(30));
        let mut rows = OwnedRows::new(7, "h/h".into(), false, PartCut::new(640, 10), (1, 0), false);
        for (i, &(threads, room)) in workers.iter().enumerate() {
            let id = members.register(&format!("w{i}"), threads, room, "http://127.0.0.1:1", 0);
            rows.reports.insert(id, Report { ready: true, room, ..Default::default() });
        }
        (members, rows)
    }

    /// Room for `parts` parts of the test cut (240 bytes each) on a worker of `threads`.
    fn room(parts: usize, threads: u32) -> u64 {
        (parts + threads as usize + 2) as u64 * 240 + (128 << 20)
    }

    #[test]
    fn parts_follow_threads_within_room_and_replicas_sit_elsewhere() {
        let (members, mut rows) = setup(&[(2, room(64, 2)), (1, room(64, 1)), (1, room(10, 1))]);
        rows.assign(&members).unwrap();
        let count = |w: u64| rows.owner.iter().filter(|&&o| o == w).count();
        // Shares 32 / 16 / 16, the third capped at its room of 10, the rest spread in turn.
        assert_eq!(count(3), 10);
        assert_eq!(count(1) + count(2), 54);
        assert!(count(1) >= 32 && count(2) >= 16);
        for k in 0..64 {
            assert_ne!(rows.replica[k], rows.owner[k]);
            assert_ne!(rows.replica[k], 0);
        }
        assert_eq!(rows.epoch, 1);
        // Parts interleave rather than run in blocks.
        assert_ne!(rows.owner[0], rows.owner[1]);
    }

    #[test]
    fn no_assignment_without_room_for_every_part() {
        let (members, mut rows) = setup(&[(1, room(20, 1)), (1, room(20, 1))]);
        assert!(rows.assign(&members).is_none());
        assert_eq!(rows.room(&members), (2, 40));
    }

    #[test]
    fn a_lost_owner_hands_its_parts_to_replica_holders_and_replicas_move_on() {
        let (mut members, mut rows) = setup(&[(1, room(64, 1)), (1, room(64, 1)), (1, room(64, 1))]);
        rows.assign(&members).unwrap();
        let before = rows.clone();
        members.get_mut(2).unwrap().last_seen = Instant::now() - Duration::from_secs(60);
        assert_eq!(members.expire(Instant::now()), [2]);
        let moved = rows.recover(&members).unwrap();
        assert_eq!(moved, Recovery::Moved { parts: before.owner.iter().filter(|&&o| o == 2).count() });
        assert_eq!(rows.epoch, 2);
        for k in 0..64 {
            assert_ne!(rows.owner[k], 2);
            assert_ne!(rows.replica[k], 2);
            assert_ne!(rows.replica[k], rows.owner[k]);
            if before.owner[k] == 2 {
                assert_eq!(rows.owner[k], before.replica[k], "part {k} goes to its replica holder");
            } else {
                assert_eq!(rows.owner[k], before.owner[k], "part {k} stays");
            }
        }
        assert_eq!(rows.recover(&members).unwrap(), Recovery::Nothing);
    }

    #[test]
    fn without_replicas_no_part_has_a_holder_and_a_lost_owner_stops_the_job() {
        let (mut members, mut rows) = setup(&[(1, room(64, 1)), (1, room(64, 1))]);
        rows.replicas = false;
        rows.assign(&members).unwrap();
        assert!(rows.replica.iter().all(|&r| r == 0));
        assert!(rows.owner.contains(&1) && rows.owner.contains(&2));
        assert_eq!(rows.recover(&members).unwrap(), Recovery::Nothing, "no holder is missing");
        members.get_mut(2).unwrap().lost = true;
        let err = rows.recover(&members).unwrap_err().to_string();
        assert!(err.contains("worker 2") && err.contains("--replicas 0"), "{err}");
    }

    #[test]
    fn without_room_recovery_waits_and_with_both_copies_gone_it_fails() {
        let (mut members, mut rows) = setup(&[(1, room(32, 1)), (1, room(32, 1)), (1, room(0, 1))]);
        rows.assign(&members).unwrap();
        assert!(rows.owner.iter().all(|&o| o != 3));
        members.get_mut(1).unwrap().lost = true;
        assert!(matches!(rows.recover(&members).unwrap(), Recovery::Waiting { .. }));
        assert_eq!(rows.epoch, 1, "nothing moves while it waits");
        // Worker 2 held the replicas of worker 1's parts; with both gone they are lost.
        members.get_mut(2).unwrap().lost = true;
        let err = rows.recover(&members).unwrap_err().to_string();
        assert!(err.contains("lost"), "{err}");
    }

    #[test]
    fn a_level_is_done_when_every_owner_reports_it_in_this_epoch() {
        let (members, mut rows) = setup(&[(1, room(64, 1)), (1, room(64, 1))]);
        rows.assign(&members).unwrap();
        rows.level = 3;
        let counts = RowCounts { entries: 5, positions: 10, classes: 5, self_inverse: 1 };
        let report =
            Report { ready: true, epoch: 1, finished: 3, counts, level_sent: 7, ..Default::default() };
        rows.reports.insert(1, report);
        assert!(rows.level_done().is_none());
        rows.reports.insert(2, Report { epoch: 0, ..report });
        assert!(rows.level_done().is_none(), "an old epoch's report does not count");
        rows.reports.insert(2, report);
        let (sum, sent, _) = rows.level_done().unwrap();
        assert_eq!((sum.entries, sum.positions, sent), (10, 20, 14));
        assert!(rows.in_sync(&report) == (rows.committed == report.committed));
    }
}
