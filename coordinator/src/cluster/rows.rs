//! A row search on workers that own the rows, on the hub: its core
//! (`shared::runtime::rows::RowsCoordinator`) decides; this module carries what workers say
//! into it (`RowsSync`, levels sent up) and its actions out on the job's thread: snapshots and
//! levels journaled (`--state-dir`), each new level handed to `on_level` (with its entries, for
//! a table build), the end of the search. No level data passes here, except, for a table
//! build, each new level's parts, which their owners send up as they finish them.

use super::hub::{Hub, SyncAnswer};
use super::work::{RowsRun, Work};
use super::ClusterError;
use crate::journal::RedbJournal;
use anyhow::{anyhow, bail, Result};
use shared::bfs::cut::PartCut;
use shared::bfs::task::{Counting, Sources};
use shared::bfs::{LevelRecord, LevelReport, Progress, Standing};
use shared::report::DepthCounts;
use shared::runtime::rows::{
    CoordinatorAction, CoordinatorEvent, JobInfo, RowsCoordinator, SearchSettings, Snapshot, Status, LEVEL,
};
use shared::space::RowIndex;
use shared::units::gib;
use shared::wire::SparseRows;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a distributed search needs besides its index.
pub struct SearchRun<'a> {
    /// The job's spec, as workers parse it.
    pub spec: String,
    /// How many moves it expands by.
    pub moves: usize,
    pub max_depth: Option<u32>,
    pub counting: Counting,
    pub progress: &'a Progress,
    /// Pass each level's entries to `on_level` (a table build needs them, an enumeration does
    /// not): the owners send each new level's parts up.
    pub level_bits: bool,
    /// Start only once this many workers are ready.
    pub min_workers: usize,
    /// The index packed (`shared::index_file`), published to the workers (input
    /// `shared::job::INDEX_INPUT`) so that they read it instead of building it; `None`: they
    /// build their own.
    pub index: Option<&'a Arc<[u8]>>,
    /// With a state directory: levels and the assignment are journaled, so that a restarted
    /// coordinator resumes with the workers that hold the parts.
    pub durable: Option<Durable<'a>>,
}

pub struct Durable<'a> {
    pub journal: &'a RedbJournal,
    /// The last level an earlier run journaled, and the counts of every level to it.
    pub resume: Option<(LevelRecord, Vec<DepthCounts>)>,
}

/// Memory one part takes on its owner: three bit arrays and the sources of its rows.
fn part_bytes(rows_per_part: u32, words: usize, moves: usize) -> u64 {
    rows_per_part as u64 * (3 * 8 * words as u64 + Sources::bytes_per_row(moves))
}

/// Runs the search from the solved position until no new entry appears or `max_depth` is done,
/// calling `on_level` after each new depth with its report, its entries (if `run.level_bits`;
/// else empty) and the bytes workers sent and received meanwhile. Returns the counts of every
/// depth.
pub fn search<I: RowIndex>(
    hub: &Hub,
    space: &I,
    run: &SearchRun,
    mut on_level: impl FnMut(&LevelReport, &[u64], (u64, u64)),
) -> Result<Vec<DepthCounts>> {
    let rows = space.row_count();
    let words = (space.column_count() as usize).div_ceil(64);
    let cut = PartCut::into_parts(rows, hub.tasks_per_level as u32);
    let saved: Option<Snapshot> = match &run.durable {
        Some(d) => match d.journal.owned_snapshot()? {
            Some(text) => {
                Some(serde_json::from_str(&text).map_err(|e| anyhow!("corrupt journal state: {e}"))?)
            }
            None => None,
        },
        None => None,
    };
    let job = JobInfo {
        id: saved.as_ref().map_or_else(random_job_id, |s| s.job_id),
        spec: run.spec.clone(),
        rows,
        rows_per_part: cut.rows_per_part,
        positions_only: run.counting == Counting::Positions,
    };
    let settings = SearchSettings {
        part_bytes: part_bytes(cut.rows_per_part, words, run.moves),
        total: space.entry_count(),
        max_depth: run.max_depth,
        upload: run.level_bits,
        min_workers: run.min_workers,
        layout_until: SearchSettings::layout_until(space.entry_count()),
        part_weights: shared::runtime::rows::part_weights(space, cut),
    };
    let core = match saved {
        Some(snapshot) => {
            if snapshot.owner.len() != cut.parts() as usize {
                bail!(
                    "the journal's assignment has {} parts, this job {}",
                    snapshot.owner.len(),
                    cut.parts()
                );
            }
            let (last, depths) = run.durable.as_ref().and_then(|d| d.resume.clone()).unzip();
            let standing = Standing {
                depths: depths.unwrap_or_default(),
                visited: last.map_or(0, |l| l.visited_entries),
                frontier: last.map_or(0, |l| l.entries),
            };
            let core = RowsCoordinator::resume(job, settings, snapshot, standing);
            tracing::info!(
                "resuming after depth {}: waiting for workers {:?}, which hold the parts",
                core.plan().depth.iter().max().map_or(-1, |&d| d as i64 - 1),
                core.expected()
            );
            core
        }
        None if run.durable.as_ref().is_some_and(|d| d.resume.is_some()) => {
            bail!("the state directory holds levels of this job made without workers; resume it without them")
        }
        None => RowsCoordinator::new(job, settings),
    };
    let max_part_bytes = shard_bytes(cut, words);
    if let Some(packed) = run.index {
        hub.publish_packed(shared::job::INDEX_INPUT, packed.clone());
    }
    hub.start_rows(core, max_part_bytes);
    let mut bits = Vec::new();
    let mut level_start = (Instant::now(), hub.traffic_totals());
    let mut last_log = Instant::now();
    loop {
        let (action, (done, all), making) = hub.next_rows_action()?;
        run.progress.rows_done.store(done, Ordering::Relaxed);
        if let Some(depth) = making {
            run.progress.depth.store(depth, Ordering::Relaxed);
        }
        let Some(action) = action else {
            if all == 0 && last_log.elapsed() > Duration::from_secs(30) {
                let live = hub.status().live_workers;
                tracing::info!(
                    "waiting for workers: {live} live, at least {} wanted, with room for every part ({} each)",
                    run.min_workers,
                    gib(part_bytes(cut.rows_per_part, words, run.moves))
                );
                last_log = Instant::now();
            }
            continue;
        };
        match action {
            CoordinatorAction::Save(snapshot) => {
                if let Some(d) = &run.durable {
                    d.journal.owned_snapshot_saved(&serde_json::to_string(&snapshot)?)?;
                }
            }
            CoordinatorAction::Keep { mut report, visited, snapshot } => {
                let depth = report.counts.depth;
                report.seconds = level_start.0.elapsed().as_secs_f64();
                // A table build reads the level (its owners sent its parts up as they finished
                // them) before it is journaled, so a resumed build has every journaled level in
                // its table.
                if run.level_bits {
                    level_bits(hub.take_uploads(depth), cut, words, hub.rows_job_id(), depth, &mut bits)?;
                }
                let totals = hub.traffic_totals();
                let traffic = (totals.0 - level_start.1 .0, totals.1 - level_start.1 .1);
                level_start = (Instant::now(), totals);
                on_level(&report, &bits, traffic);
                if let Some(d) = &run.durable {
                    let record = LevelRecord {
                        counts: report.counts,
                        entries: report.entries,
                        visited_entries: visited,
                        frontier_slot: 0,
                    };
                    d.journal.owned_level_done(&record, &serde_json::to_string(&snapshot)?)?;
                }
                hub.rows_event(CoordinatorEvent::Kept { depth });
            }
            CoordinatorAction::Finished(depths) => return Ok(depths),
            CoordinatorAction::Failed(why) => bail!("the row search stopped: {why}"),
        }
    }
}

/// The longest level part an owner may send up (as a shard).
fn shard_bytes(cut: PartCut, words: usize) -> u64 {
    SparseRows::max_message_bytes(cut.rows_per_part as usize, words)
}

/// A job number for the shards' keys and for telling this job's workers from others.
fn random_job_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish() | 1
}

/// The entries of level `depth`, from the parts its owners sent up as they finished them, as
/// one array of whole rows (its memory reused from level to level).
fn level_bits(
    parts: BTreeMap<u32, Vec<u8>>,
    cut: PartCut,
    words: usize,
    job: u64,
    depth: u32,
    bits: &mut Vec<u64>,
) -> Result<()> {
    if parts.len() != cut.parts() as usize {
        bail!("level {depth} kept with {} of its {} parts sent up", parts.len(), cut.parts());
    }
    bits.clear();
    bits.resize(cut.rows as usize * words, 0);
    for (k, bytes) in parts {
        let rows = cut.range(k);
        let key = shared::wire::row_message_key(job, k, LEVEL, depth);
        let set = SparseRows::decode_rows(&bytes, key, rows.len(), words)
            .map_err(|e| anyhow!("part {k} of level {depth} from its owner: {e}"))?;
        set.or_into(&mut bits[rows.start as usize * words..rows.end as usize * words]);
    }
    Ok(())
}

/// The core's next action (if any), the progress (rows of target parts finished, of all) and
/// the depth of the level being made.
type NextAction = (Option<CoordinatorAction>, (u64, u64), Option<u32>);

impl Hub {
    /// Starts a row search: polls now send workers to `RowsSync`; the workers a resumed
    /// search expects are awaited (each is lost if silent for the liveness timeout).
    pub fn start_rows(&self, mut core: RowsCoordinator, max_part_bytes: u64) {
        let mut s = self.lock();
        // Workers that registered before the search began (in-process workers often do, while
        // the job builds its index) join it now: the core learns of a worker only by joining.
        let expected = core.expected();
        let present: Vec<(u64, u32)> =
            s.members.live().filter(|m| !m.expected).map(|m| (m.id, m.threads)).collect();
        for (worker, threads) in present {
            core.handle(CoordinatorEvent::Joined { worker, threads });
        }
        s.members.expect(&expected);
        s.work = Work::Rows(Box::new(RowsRun { core, uploads: BTreeMap::new(), max_part_bytes }));
        self.changed.notify_all();
    }

    fn with_rows<T>(&self, f: impl FnOnce(&mut RowsRun) -> T) -> Result<T, ClusterError> {
        let mut s = self.lock();
        match &mut s.work {
            Work::Rows(run) => Ok(f(run)),
            _ => Err(ClusterError::NoSearch),
        }
    }

    /// The core's next action, waiting up to 200 ms for one, with the progress (rows of target
    /// parts finished, of all) and the depth of the level being made. Errors if the job was
    /// aborted.
    fn next_rows_action(&self) -> Result<NextAction, ClusterError> {
        let end = Instant::now() + Duration::from_millis(200);
        let mut s = self.lock();
        loop {
            self.tick(&mut s);
            if let Some(why) = s.aborted.clone() {
                return Err(ClusterError::Aborted(why));
            }
            let Work::Rows(run) = &mut s.work else { return Err(ClusterError::NoSearch) };
            let action = run.core.next_action();
            let progress = run.core.progress();
            let making = run.core.plan().level.map(|o| o.depth);
            if action.is_some() || Instant::now() >= end {
                return Ok((action, progress, making));
            }
            s = self.changed.wait(s, end.saturating_duration_since(Instant::now()));
        }
    }

    /// Feeds the row search's core an event of the job's thread.
    pub fn rows_event(&self, event: CoordinatorEvent) {
        if self.with_rows(|run| run.core.handle(event)).is_ok() {
            self.changed.notify_all();
        }
    }

    fn rows_job_id(&self) -> u64 {
        self.with_rows(|run| run.core.job().id).unwrap_or(0)
    }

    /// Bytes every worker says it sent and received so far, summed.
    pub fn traffic_totals(&self) -> (u64, u64) {
        let t = self.traffic();
        (t.workers.iter().map(|w| w.sent_bytes).sum(), t.workers.iter().map(|w| w.received_bytes).sum())
    }

    /// A worker's `RowsSync`: its status goes to the core; the answer is the plan when the
    /// worker holds another (epoch and version), or another job, else after waiting up to
    /// `wait` for a change (a long poll). Blocks: call it from a
    /// blocking thread.
    pub fn rows_sync(&self, worker: u64, job: u64, status: Status, wait: Duration) -> SyncAnswer {
        let end = Instant::now() + wait;
        let mut s = self.lock();
        if !s.members.seen(worker) {
            return SyncAnswer::Unknown;
        }
        let Work::Rows(run) = &mut s.work else { return SyncAnswer::Done };
        let ours = job == run.core.job().id;
        if ours {
            run.core.handle(CoordinatorEvent::Status { worker, status: status.clone() });
            self.changed.notify_all();
        }
        loop {
            self.tick(&mut s);
            // The peers are read when the reply is made, not when the poll began: a worker
            // that registered meanwhile must be in it, or the others cannot reach it.
            let peers = s.members.peer_addresses();
            let Work::Rows(run) = &mut s.work else { return SyncAnswer::Done };
            let plan = run.core.plan();
            if !ours || (status.epoch, status.version) != (plan.epoch, plan.version) {
                let reply = worker::rows::sync::reply_of(run.core.job(), plan, peers);
                return SyncAnswer::Do(Box::new(reply));
            }
            if s.aborted.is_some() || Instant::now() >= end {
                return SyncAnswer::Wait;
            }
            let left = end.saturating_duration_since(Instant::now()).min(Duration::from_millis(200));
            s = self.changed.wait(s, left);
        }
    }

    /// The longest part of a level an owner may send up.
    pub fn max_level_part_bytes(&self) -> Option<u64> {
        self.with_rows(|run| run.max_part_bytes).ok()
    }

    /// Takes a part of a new level from its owner (a table build).
    pub fn take_level_part(&self, depth: u32, part: u32, bytes: Vec<u8>) -> Result<(), ClusterError> {
        self.with_rows(|run| {
            if part < run.core.job().parts() {
                run.uploads.insert((depth, part), bytes);
            }
        })
    }

    /// The parts of level `depth` sent up.
    fn take_uploads(&self, depth: u32) -> BTreeMap<u32, Vec<u8>> {
        self.with_rows(|run| {
            let keys: Vec<(u32, u32)> = run.uploads.keys().filter(|(d, _)| *d == depth).copied().collect();
            keys.into_iter().filter_map(|key| run.uploads.remove(&key).map(|b| (key.1, b))).collect()
        })
        .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(min_workers: usize) -> SearchSettings {
        SearchSettings {
            part_bytes: 1,
            total: 100,
            max_depth: None,
            upload: false,
            min_workers,
            layout_until: 0,
            part_weights: vec![1; 2],
        }
    }

    /// Workers that registered before the search began take part in it: the core learns of
    /// them when it starts (it once waited forever for "2 live, at least 2 wanted").
    #[test]
    fn workers_registered_before_the_search_began_are_assigned_parts() {
        let hub = Hub::new(1, "h/h".into(), Duration::from_secs(600), Duration::from_secs(30), 2);
        let (a, b) =
            (hub.register("a", 1, (0, 0), "http://a", 0), hub.register("b", 1, (0, 0), "http://b", 0));
        let job = JobInfo { id: 7, spec: "h/h".into(), rows: 4, rows_per_part: 2, positions_only: false };
        hub.start_rows(RowsCoordinator::new(job, settings(2)), 1 << 20);
        let ready = Status { ready: true, room: 1 << 30, ..Status::default() };
        assert!(matches!(hub.rows_sync(a, 7, ready.clone(), Duration::from_millis(10)), SyncAnswer::Wait));
        let SyncAnswer::Do(reply) = hub.rows_sync(b, 7, ready, Duration::from_millis(10)) else {
            panic!("the plan once both are ready")
        };
        assert_ne!(reply.epoch, 0);
        let mut owners = reply.owner.clone();
        owners.sort_unstable();
        owners.dedup();
        assert_eq!(owners, [a, b]);
    }

    /// A worker's long poll that began before another worker registered answers with that
    /// worker's address: with the addresses of when the poll began, the first worker could
    /// never send the newcomer its images and the level would wait forever.
    #[test]
    fn a_long_poll_answers_with_the_peers_of_when_it_answers() {
        let hub = Hub::new(1, "h/h".into(), Duration::from_secs(600), Duration::from_secs(30), 2);
        let job = JobInfo { id: 7, spec: "h/h".into(), rows: 4, rows_per_part: 2, positions_only: false };
        hub.start_rows(RowsCoordinator::new(job, settings(2)), 1 << 20);
        let ready = Status { ready: true, room: 1 << 30, ..Status::default() };
        let a = hub.register("a", 1, (0, 0), "http://a", 0);
        std::thread::scope(|scope| {
            let first = scope.spawn(|| hub.rows_sync(a, 7, ready.clone(), Duration::from_secs(20)));
            // The first worker's poll waits: no plan before two workers are ready.
            std::thread::sleep(Duration::from_millis(300));
            assert!(!first.is_finished());
            let b = hub.register("b", 1, (0, 0), "http://b", 0);
            let answer = hub.rows_sync(b, 7, ready.clone(), Duration::from_secs(20));
            assert!(matches!(answer, SyncAnswer::Do(_)));
            let SyncAnswer::Do(reply) = first.join().unwrap() else { panic!("the plan, after b joined") };
            assert_ne!(reply.epoch, 0);
            let mut peers: Vec<(u64, &str)> =
                reply.peers.iter().map(|p| (p.worker_id, p.address.as_str())).collect();
            peers.sort_unstable();
            assert_eq!(peers, [(a, "http://a"), (b, "http://b")]);
        });
    }
}
