//! A row search on workers that own the rows (see `owned.rs` and the worker's `rows` module):
//! the coordinator waits for workers with room for every part, assigns the parts, then for each
//! level (in the loop every search runs, `bfs::run_levels`) publishes its depth and direction, waits
//! until every owner reports it finished, sums their counts, journals the level and commits
//! it. A lost worker's parts move to the holders of their replicas (a new epoch), and the
//! level is made again. No level data passes here, except, for a table build, each level's
//! parts, which their owners send up for the table as they finish them.

use super::hub::Hub;
use super::owned::{OwnedRows, Recovery, Snapshot};
use crate::journal::RedbJournal;
use anyhow::{anyhow, bail, Result};
use shared::bfs::owned::PartCut;
use shared::bfs::task::{Counting, RowBits};
use shared::bfs::{run_levels, Direction, LevelMaker, LevelRecord, LevelReport, Progress, Standing};
use shared::report::DepthCounts;
use shared::space::{RowCounts, RowIndex};
use shared::units::gib;
use shared::wire::SparseRows;
use std::sync::atomic::Ordering;
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
    /// not): the owners send each committed level's parts up.
    pub level_bits: bool,
    /// Start only once this many workers are ready.
    pub min_workers: usize,
    /// With a state directory: levels are journaled, with the assignment, so that a restarted
    /// coordinator resumes with the workers that hold the parts.
    pub durable: Option<Durable<'a>>,
}

pub struct Durable<'a> {
    pub journal: &'a RedbJournal,
    /// The last level an earlier run journaled, and the counts of every level to it.
    pub resume: Option<(LevelRecord, Vec<DepthCounts>)>,
}

/// Runs the search from the solved position until no new entry appears or `max_depth` is done,
/// calling `on_level` after each depth with its report, its entries (if `run.level_bits`; else
/// empty) and the bytes workers exchanged making it. Returns the counts of every depth.
pub fn search<I: RowIndex>(
    hub: &Hub,
    space: &I,
    run: &SearchRun,
    on_level: impl FnMut(&LevelReport, &[u64], (u64, u64)),
) -> Result<Vec<DepthCounts>> {
    let rows = space.row_count();
    let words = (space.column_count() as usize).div_ceil(64);
    let cut = PartCut::new(rows, rows.div_ceil(hub.tasks_per_level as u32).max(1));
    let saved: Option<Snapshot> = match &run.durable {
        Some(d) if d.resume.is_some() => match d.journal.owned_snapshot()? {
            Some(text) => {
                Some(serde_json::from_str(&text).map_err(|e| anyhow!("corrupt journal state: {e}"))?)
            }
            None => None,
        },
        _ => None,
    };
    let job_id = saved.as_ref().map_or_else(random_job_id, |s| s.job_id);
    let positions_only = run.counting == Counting::Positions;
    let mut owned =
        OwnedRows::new(job_id, run.spec.clone(), positions_only, cut, (words, run.moves), run.level_bits);
    owned.replicas = hub.replicas;
    let (mut out, mut visited, mut last_entries) = (Vec::new(), 0u64, 0u64);
    let mut expected = Vec::new();
    if let (Some(s), Some(d)) = (&saved, &run.durable) {
        let (last, counts) = d.resume.clone().expect("a saved state comes with levels");
        if s.owner.len() != cut.parts() as usize {
            bail!("the journal's assignment has {} parts, this job {}", s.owner.len(), cut.parts());
        }
        // The same parts with the same workers; a new epoch, so that a level they made after
        // the last journaled one is dropped.
        owned.epoch = s.epoch + 1;
        owned.owner = s.owner.clone();
        owned.replica = if hub.replicas { s.replica.clone() } else { vec![0; s.replica.len()] };
        owned.committed = last.counts.depth + 1;
        owned.committed_epoch = s.committed_epoch;
        out = counts;
        visited = last.visited_entries;
        last_entries = last.entries;
        let mut workers = s.owner.clone();
        workers.extend(s.replica.iter().filter(|&&r| r != 0));
        workers.sort_unstable();
        workers.dedup();
        hub.expect_workers(&workers);
        tracing::info!(
            "resuming after depth {}: waiting for workers {workers:?}, which hold the rows",
            last.counts.depth
        );
        expected = workers;
    } else if run.durable.as_ref().is_some_and(|d| d.resume.is_some()) {
        bail!("the state directory holds levels of this job made without workers; resume it without them")
    }
    let resumed = owned.epoch > 0;
    hub.start_owned(owned);
    if resumed {
        // Every worker that held rows is back, or lost (then its rows move as usual).
        loop {
            let seen = hub.generation();
            if hub.awaited(&expected) == 0 {
                break;
            }
            hub.wait_change(seen, Duration::from_millis(200));
        }
    } else {
        assign(hub, run.min_workers)?;
    }
    let standing = Standing { depths: out, visited, frontier: last_entries };
    let mut levels = OwnedLevels { hub, run, cut, words, bits: Vec::new(), traffic: (0, 0), on_level };
    run_levels(&mut levels, space.entry_count(), standing, run.max_depth, run.progress)
}

/// The levels of a search whose rows the workers own: made by them, counted and kept here.
struct OwnedLevels<'a, 'r, F> {
    hub: &'a Hub,
    run: &'a SearchRun<'r>,
    cut: PartCut,
    words: usize,
    /// The level's entries, for a table build.
    bits: Vec<u64>,
    /// Bytes the workers sent and received making the level.
    traffic: (u64, u64),
    on_level: F,
}

impl<F: FnMut(&LevelReport, &[u64], (u64, u64))> LevelMaker for OwnedLevels<'_, '_, F> {
    type Error = anyhow::Error;

    fn make(&mut self, depth: u32, direction: Direction) -> Result<RowCounts> {
        self.hub.with_owned(|o, _| {
            o.level = depth + 1;
            o.backward = direction == Direction::Backward;
            ((), true)
        })?;
        let (counts, sent, received) = wait_for_level(self.hub, self.run.progress, depth)?;
        self.traffic = (sent, received);
        Ok(counts)
    }

    fn keep(&mut self, report: &LevelReport, visited: u64) -> Result<()> {
        let depth = report.counts.depth;
        // A table build reads the level (its owners sent its parts up as they finished) before
        // it is journaled, so a resumed build has every journaled level in its table.
        if self.run.level_bits {
            level_bits(self.hub, self.cut, self.words, depth, &mut self.bits)?;
        }
        (self.on_level)(report, &self.bits, self.traffic);
        let record = LevelRecord {
            counts: report.counts,
            entries: report.entries,
            visited_entries: visited,
            frontier_slot: 0,
        };
        if let Some(d) = &self.run.durable {
            let snapshot = self.hub.with_owned(|o, _| (o.snapshot(), false))?;
            let snapshot = Snapshot { committed_epoch: snapshot.epoch, ..snapshot };
            d.journal.owned_level_done(&record, &serde_json::to_string(&snapshot)?)?;
        }
        self.hub.with_owned(|o, _| {
            o.committed = depth + 1;
            o.committed_epoch = o.epoch;
            o.level = 0;
            o.uploaded.clear();
            ((), true)
        })?;
        Ok(())
    }

    fn end(&mut self) -> Result<()> {
        self.hub.with_owned(|o, _| {
            o.level = 0;
            ((), true)
        })?;
        Ok(())
    }
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

/// Waits until enough workers are ready with room for every part, then assigns the parts.
fn assign(hub: &Hub, min_workers: usize) -> Result<()> {
    let mut last_log = Instant::now();
    loop {
        let seen = hub.generation();
        let (assigned, ready, room, parts, part_bytes) = hub.with_owned(|o, members| {
            let (ready, room) = o.room(members);
            let assigned = ready >= min_workers.max(1) && o.assign(members).is_some();
            ((assigned, ready, room, o.cut.parts(), o.part_bytes), assigned)
        })?;
        if assigned {
            let owners = hub.with_owned(|o, _| (o.owners().len(), false))?;
            tracing::info!(
                "{parts} parts of the rows assigned to {owners} workers ({} each part)",
                gib(part_bytes)
            );
            return Ok(());
        }
        if last_log.elapsed() > Duration::from_secs(10) {
            tracing::info!(
                "waiting for workers: {ready} ready (at least {min_workers} wanted), with room for {room} of the {parts} \
                 parts ({} each)",
                gib(part_bytes)
            );
            last_log = Instant::now();
        }
        hub.wait_change(seen, Duration::from_millis(200));
    }
}

/// Waits until every owner reports level `depth` finished in the current epoch, moving the
/// parts of lost workers meanwhile; returns its counts and the bytes exchanged.
fn wait_for_level(
    hub: &Hub,
    progress: &Progress,
    depth: u32,
) -> Result<(shared::space::RowCounts, u64, u64)> {
    let mut waiting_since: Option<Instant> = None;
    loop {
        let seen = hub.generation();
        let state = hub.with_owned(|o, members| match o.recover(members) {
            Err(e) => (Err(e), false),
            Ok(Recovery::Moved { parts }) => {
                tracing::warn!(
                    "level {depth}: {parts} parts of lost workers moved (epoch {}); the level is made again",
                    o.epoch
                );
                (Ok(None), true)
            }
            Ok(Recovery::Waiting { parts }) => (Ok(Some(Err(parts))), false),
            Ok(Recovery::Nothing) => {
                let done: u64 = o
                    .owners()
                    .iter()
                    .filter(|w| o.reports.get(w).is_some_and(|r| r.epoch == o.epoch && r.finished == o.level))
                    .map(|&w| o.rows_of(w))
                    .sum();
                progress.rows_done.store(done, Ordering::Relaxed);
                (Ok(o.level_done().map(Ok)), false)
            }
        })??;
        match state {
            Some(Ok(done)) => return Ok(done),
            Some(Err(parts)) if waiting_since.is_none_or(|t| t.elapsed() > Duration::from_secs(30)) => {
                tracing::warn!(
                    "{parts} parts of lost workers fit on no live worker: waiting for a worker with room"
                );
                waiting_since = Some(Instant::now());
            }
            _ => {}
        }
        hub.wait_change(seen, Duration::from_millis(200));
    }
}

/// The entries of level `depth`, from the parts its owners sent up as they finished them, as
/// one array of whole rows (its memory reused from level to level).
fn level_bits(hub: &Hub, cut: PartCut, words: usize, depth: u32, bits: &mut Vec<u64>) -> Result<()> {
    let job = hub.with_owned(|o, _| (o.job_id, false))?;
    let parts = loop {
        let seen = hub.generation();
        let got = hub.with_owned(|o, _| {
            if o.uploaded.len() == cut.parts() as usize {
                (Some(std::mem::take(&mut o.uploaded)), false)
            } else {
                (None, false)
            }
        })?;
        if let Some(p) = got {
            break p;
        }
        hub.wait_change(seen, Duration::from_millis(200));
    };
    bits.clear();
    bits.resize(cut.rows as usize * words, 0);
    for (k, bytes) in parts {
        let rows = cut.range(k);
        let key = level_key(job, k, depth);
        let set = SparseRows::decode_rows(&bytes, key, rows.len(), words)
            .map_err(|e| anyhow!("part {k} of level {depth} from its owner: {e}"))?;
        for (i, r) in rows.enumerate() {
            if let Some(row) = set.row(i as u32) {
                bits[r as usize * words..][..words].copy_from_slice(row);
            }
        }
    }
    Ok(())
}

/// The key of a committed level's part as its owner sends it up.
fn level_key(job: u64, part: u32, depth: u32) -> shared::shard::ShardKey {
    shared::wire::row_message_key(job, part, cubefarm_proto::v1::PeerKind::Level as u32, depth)
}
