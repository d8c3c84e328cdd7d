//! A row search on workers, with no bit array in the coordinator: it schedules each level's
//! tasks, checks and counts their results, and keeps each result's shard, unchanged, as a part
//! of the inputs of the levels after it (see `docs/distribution.md`, "Tasks").
//!
//! A forward level reads the frontier (the results of the level before) and, for its own
//! rows, the input of the level before that. A backward level reads the unvisited entries,
//! which workers make in an *unvisited round* before it (`shared::bfs::task::unvisited_rows`):
//! the first from every reachable entry less every frontier so far (the coordinator keeps
//! them all until then), each later one from the one before less the last frontier. Directions
//! follow the engine's rule (pull once fewer entries are unvisited than in the frontier), so
//! the levels are the engine's, and the counts identical.

use super::parts::{PartDir, PartFile};
use super::scheduler::{Shared, TaskKind};
use anyhow::{anyhow, bail, Result};
use shared::bfs::task::{Counting, RowBits};
use shared::bfs::{level_report, Direction, Journal, LevelRecord, LevelReport, Progress};
use shared::report::DepthCounts;
use shared::space::{close_rows, set_bit, RowCounts, RowIndex};
use shared::wire::{input_key_depth, level_input_name, PartCut, PartsDecoder, SparseRows, UNVISITED_ROUND};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// What a distributed search needs besides its index.
pub struct SearchRun<'a> {
    pub max_depth: Option<u32>,
    pub counting: Counting,
    pub progress: &'a Progress,
    /// Pass each level's entries to `on_level` (decoded from its parts into one array; a table
    /// build needs them, an enumeration does not).
    pub level_bits: bool,
    /// With a state directory: the job resumes after a kill.
    pub durable: Option<Durable<'a>>,
}

/// Where a resumable search keeps its parts and records its levels: every level's results
/// (and unvisited sets) stay in `parts`, written under stable names and synced before the
/// level is journaled, for as long as a later level may read them, so a restarted job finds
/// the inputs of the level after its last journaled one.
pub struct Durable<'a> {
    pub parts: PathBuf,
    pub journal: &'a dyn Journal,
    /// The last level an earlier run journaled, and the counts of every level to it.
    pub resume: Option<(LevelRecord, Vec<DepthCounts>)>,
}

/// Runs the search from the solved position until no new entry appears or `max_depth` is done,
/// calling `on_level` after each depth with its report and, if `run.level_bits`, its entries
/// (rows of whole words; else empty). Returns the counts of every depth.
pub fn search<I: RowIndex>(
    shared: &Shared,
    space: &I,
    run: &SearchRun,
    mut on_level: impl FnMut(&LevelReport, &[u64]),
) -> Result<Vec<DepthCounts>> {
    let rows = space.row_count();
    let words = (space.column_count() as usize).div_ceil(64);
    let per_task = (rows as usize).div_ceil(shared.tasks_per_level).max(1) as u32;
    let cut = PartCut::new(rows, per_task);

    let parts = match &run.durable {
        Some(d) => Some(shared.keep_parts_in(d.parts.clone()).map_err(|e| anyhow!(e))?),
        None => None,
    };
    // Makes a level's results (or unvisited set) durable and, for a level, journals it.
    let record = |parts_kept: &[Arc<PartFile>], level: Option<LevelRecord>| -> Result<()> {
        if let (Some(dir), Some(d)) = (parts, &run.durable) {
            dir.sync(parts_kept).map_err(|e| anyhow!("cannot make the parts durable: {e}"))?;
            if let Some(level) = level {
                d.journal.level_done(&level).map_err(|e| anyhow!(e))?;
            }
        }
        Ok(())
    };
    let resume = run.durable.as_ref().and_then(|d| d.resume.clone());
    let mut bits = Vec::new();
    // The depth of the unvisited entries held (the input of that backward level), if any.
    let (mut report, mut out, mut visited_entries, mut open) = match resume {
        Some((last, counts)) => {
            let dir = parts.expect("a resumed job keeps its parts");
            let open = resume_inputs(shared, dir, cut, last.counts.depth)?;
            let report = LevelReport {
                counts: last.counts,
                entries: last.entries,
                direction: Direction::Start,
                seconds: 0.0,
            };
            (report, counts, last.visited_entries, open)
        }
        None => {
            let start = Instant::now();
            let (counts, kept) = start_input(shared, space, cut, run.counting)?;
            let mut report = level_report(counts, 0, Direction::Start).map_err(|e| anyhow!(e))?;
            report.seconds = start.elapsed().as_secs_f64();
            let entries = report.entries;
            record(
                &kept,
                Some(LevelRecord {
                    counts: report.counts,
                    entries,
                    visited_entries: entries,
                    frontier_slot: 0,
                }),
            )?;
            (report, vec![report.counts], entries, None)
        }
    };
    let mut depth = report.counts.depth;
    if run.level_bits {
        level_bits(shared, &frontier(depth + 1), cut, words, &mut bits)?;
    }
    // A resumed job's consumer may have been killed while taking this level: it gets it again.
    on_level(&report, &bits);
    let total_entries = space.entry_count();
    // The direction of the last level: a backward one's input is the unvisited set held.
    let mut direction = if open == Some(depth) { Direction::Backward } else { Direction::Forward };
    while report.entries > 0 && run.max_depth.is_none_or(|m| depth < m) {
        let start = Instant::now();
        depth += 1;
        run.progress.depth.store(depth, Ordering::Relaxed);
        run.progress.rows_done.store(0, Ordering::Relaxed);
        let left = total_entries - visited_entries;
        let previous = direction;
        direction = if left < report.entries { Direction::Backward } else { Direction::Forward };
        let before = match direction {
            Direction::Backward => {
                // This level's unvisited entries: from the last ones, or from the start.
                let (base, found) = match open {
                    Some(d) => (unvisited(d), (d + 1..=depth).map(frontier).collect()),
                    None => (String::new(), (1..=depth).map(frontier).collect()),
                };
                let round = (depth - 1) | UNVISITED_ROUND;
                let (counts, parts) = shared
                    .run_rows(
                        round,
                        TaskKind::Unvisited,
                        cut,
                        words,
                        run.counting,
                        (base, found, unvisited(depth)),
                        &run.progress.rows_done,
                    )
                    .map_err(|e| anyhow!(e))?;
                if counts.entries != left {
                    bail!(
                        "depth {depth}: workers found {} unvisited entries, {left} expected",
                        counts.entries
                    );
                }
                record(&parts, None)?;
                tracing::info!(
                    "depth {depth}: workers made its {left} unvisited entries in {:.2} s",
                    start.elapsed().as_secs_f64()
                );
                shared.keep_input(unvisited(depth), parts);
                open = Some(depth);
                run.progress.rows_done.store(0, Ordering::Relaxed);
                String::new()
            }
            _ if depth == 1 => String::new(),
            _ if previous == Direction::Backward => unvisited(depth - 1),
            _ => frontier(depth - 1),
        };
        // Keep what a later level reads: after unvisited entries of depth d, those and the
        // frontiers from depth d on; before any, every frontier (the first round reads them).
        let keep = |name: &str| match open {
            None => true,
            Some(d) => {
                name == unvisited(d)
                    || name
                        .strip_prefix(level_input_name(Direction::Forward))
                        .and_then(|n| n.strip_prefix('/'))
                        .and_then(|n| n.parse::<u32>().ok())
                        .is_some_and(|k| k > d)
            }
        };
        shared.retain_inputs(keep);
        let (counts, parts) = shared
            .run_rows(
                depth,
                TaskKind::Rows(direction),
                cut,
                words,
                run.counting,
                (before, Vec::new(), frontier(depth + 1)),
                &run.progress.rows_done,
            )
            .map_err(|e| anyhow!(e))?;
        report = level_report(counts, depth, direction).map_err(|e| anyhow!(e))?;
        report.seconds = start.elapsed().as_secs_f64();
        visited_entries += report.entries;
        if report.entries > 0 {
            let level = LevelRecord {
                counts: report.counts,
                entries: report.entries,
                visited_entries,
                frontier_slot: 0,
            };
            record(&parts, Some(level))?;
        }
        shared.keep_input(frontier(depth + 1), parts);
        if report.entries > 0 {
            if run.level_bits {
                level_bits(shared, &frontier(depth + 1), cut, words, &mut bits)?;
            }
            on_level(&report, &bits);
            out.push(report.counts);
        }
    }
    Ok(out)
}

/// The name of the row input that is the frontier of depth `depth` ("frontier-all/7"): the
/// results of level `depth - 1`, the input of level `depth`.
fn frontier(depth: u32) -> String {
    format!("{}/{depth}", level_input_name(Direction::Forward))
}

/// The name of the row input that holds the entries unvisited before level `depth`
/// ("unvisited-all/7"), made by an unvisited round for that backward level.
fn unvisited(depth: u32) -> String {
    format!("{}/{depth}", level_input_name(Direction::Backward))
}

/// Encodes the first level's input (the start entry, closed under its row's stabilizer) as
/// parts of `cut`; returns the start level's counts.
fn start_input<I: RowIndex>(
    shared: &Shared,
    space: &I,
    cut: PartCut,
    counting: Counting,
) -> Result<(RowCounts, Vec<Arc<PartFile>>)> {
    let words = (space.column_count() as usize).div_ceil(64);
    let (row0, col0) = space.start();
    let mut part = vec![0u64; cut.rows_per_part as usize * words];
    let at = (row0 % cut.rows_per_part) as usize * words;
    set_bit(&mut part[at..at + words], col0);
    close_rows(space, row0..row0 + 1, &mut part[at..at + words]);
    let counts = counting.count(space, row0..row0 + 1, &part[at..at + words]);
    let job = shared.job();
    // The other parts are empty (pages never written read as zero and cost no memory).
    let empty = vec![0u64; part.len()];
    let none = RowCounts::default();
    let parts = (0..cut.parts())
        .map(|k| {
            let rows = cut.range(k);
            let bits = if rows.contains(&row0) { &part } else { &empty };
            let bytes = SparseRows::encode_part(
                cut.key(job, 1, k),
                &bits[..rows.len() * words],
                words,
                space.column_count(),
                false,
                if rows.contains(&row0) { &counts } else { &none },
            );
            shared.write_part(&frontier(1), k, &bytes).map_err(|e| anyhow!(e))
        })
        .collect::<Result<Vec<_>>>()?;
    shared.keep_input(frontier(1), parts.clone());
    Ok((counts, parts))
}

/// The entries of the row input `name` (a level's frontier) as one array of whole rows, in
/// `bits` (its memory reused from level to level).
fn level_bits(shared: &Shared, name: &str, cut: PartCut, words: usize, bits: &mut Vec<u64>) -> Result<()> {
    let parts = shared.input(name).ok_or_else(|| anyhow!("the input {name} is not kept"))?;
    let depth = input_key_depth(name).ok_or_else(|| anyhow!("{name} is no row input"))?;
    bits.clear();
    bits.resize(cut.rows as usize * words, 0);
    for (k, part) in (0..cut.parts()).zip(parts) {
        let bytes =
            part.read(0, part.size() as usize).map_err(|e| anyhow!("reading part {k} of {name}: {e}"))?;
        let mut decoder = PartsDecoder::new(shared.job(), depth, cut, words, k..k + 1);
        decoder.push(&bytes).map_err(|e| anyhow!("part {k} of {name}: {e}"))?;
        let rows = decoder.finish().map_err(|e| anyhow!("part {k} of {name}: {e}"))?;
        for r in cut.range(k) {
            if let Some(row) = rows.row(r) {
                bits[r as usize * words..][..words].copy_from_slice(row);
            }
        }
    }
    Ok(())
}

/// Serves again the inputs a job killed after depth `last` left in `dir`: the frontiers up to
/// depth `last` (its results are `frontier-all/<last + 1>`) and the last unvisited set, as far
/// as a later level reads them (see `search`'s keep rule); removes every other file (results of
/// the unfinished level, temporary files). Returns the depth of the unvisited set, if any.
fn resume_inputs(shared: &Shared, dir: &PartDir, cut: PartCut, last: u32) -> Result<Option<u32>> {
    let complete = |name: &str| (0..cut.parts()).all(|k| dir.has_named(name, k));
    let open = (1..=last + 1).rev().find(|&d| complete(&unvisited(d)));
    let first = open.map_or(1, |d| d + 1);
    let wanted: Vec<String> =
        open.map(unvisited).into_iter().chain((first..=last + 1).map(frontier)).collect();
    dir.remove_unless(|name, k| k < cut.parts() && wanted.iter().any(|w| w == name))
        .map_err(|e| anyhow!("cannot clear the unfinished level's parts: {e}"))?;
    for name in wanted {
        let parts = (0..cut.parts()).map(|k| dir.open_named(&name, k)).collect::<Option<Vec<_>>>();
        let parts = parts.ok_or_else(|| {
            anyhow!("the state directory lacks parts of {name}, which the journal's last level (depth {last}) needs")
        })?;
        shared.keep_input(name, parts);
    }
    Ok(open)
}
