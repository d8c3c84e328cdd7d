//! `build h48h1` .. `h48h11`: exact h11 levels to base + 1 in the level store, then the tables
//! row by row into their files (docs/h48-tables.md). With `--state-dir` the levels are saved
//! as they are made and every batch of finished rows is journaled after its lines are on disk,
//! so a killed build resumes without redoing them.

use super::check_disk;
use super::kept_levels::KeptLevels;
use crate::cluster::{with_cluster, ClusterError, Refusal};
use crate::config::{BuildConfig, Target};
use crate::journal::RedbJournal;
use crate::output::peak_rss_bytes;
use crate::progress::Reporter;
use crate::resources::{check_memory, disk_available};
use anyhow::{ensure, Context, Result};
use rayon::prelude::*;
use shared::container::{Section, TableFormat};
use shared::coord::h48::{H48Coords, ESEP};
use shared::h48::table::{LINE_BYTES, LINE_ENTRIES};
use shared::h48::{
    base_for, small_sections_from, H11Rows, Level, Marks, RowLines, RowLog, RowScratch, RowsWriter,
    H11_COLUMNS,
};
use shared::job::JobSpec;
use shared::report::thousands;
use shared::units::gib;
use shared::wire;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Rows made between two journal commits.
const BATCH: usize = 32;

/// Where the h11 levels are: made and held by this process, or kept by the workers that made
/// them (and where table rows are made: here, or by those workers).
enum Levels<'a> {
    Here(Vec<Level>),
    Kept(KeptLevels<'a>),
}

/// Builds the tables of `config` (of one base, h >= 1): embedded, or on workers (one table per
/// run; the same bytes).
pub fn build(config: &BuildConfig) -> Result<()> {
    let (targets, mem_limit, state_dir) =
        (&config.targets[..], config.mem_limit, config.state_dir.as_deref());
    let base = base_for(targets[0].h);
    check_disk(targets, 0)?;
    let journal = match state_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            // The directory holds the h11 levels of one base and the finished rows of any of
            // its tables, so later builds of the same base reuse the levels.
            let identity = format!("h48 tables of base {base}: h11 levels 0..={}", base + 1);
            Some(RedbJournal::open(dir, &identity)?.0)
        }
        None => None,
    };
    let start = Instant::now();
    // The index and the file's small sections share the cocsep and column tables.
    let coords = H48Coords;
    let (cocsep_table, columns) = coords.h11_tables();
    let index = H11Rows::from_tables(&coords, &cocsep_table, columns);
    let [cocsep, eoesep] = small_sections_from(&coords, &cocsep_table, index.space().columns())?;
    drop(cocsep_table);
    tracing::info!(
        "h11 index: {} cocsep classes x {} eoesep values; cocsep and edge fallback tables ({:.1} s)",
        index.rows(),
        thousands(H11_COLUMNS as u64),
        start.elapsed().as_secs_f64()
    );
    let row_buffers =
        rayon::current_num_threads() as u64 * thread_bytes(targets.iter().map(|t| t.h).max().unwrap_or(0));
    // The row buffers alone are a floor of what the build needs: refused at once if even they
    // do not fit (the levels are checked as their sizes become known).
    if !config.cluster.distributed() {
        check_memory(row_buffers, mem_limit, "").context("the table pass's row buffers alone")?;
    }
    let reporter = Reporter::new(index.rows() as u64);
    let write_tables = |mut levels: Levels| -> Result<()> {
        for target in targets {
            let sections = (&cocsep, &eoesep);
            write_table(
                &index,
                target,
                &mut levels,
                journal.as_ref(),
                sections,
                config.shared_out,
                &reporter,
            )?;
        }
        Ok(())
    };
    if config.cluster.distributed() {
        let spec = JobSpec::H48Table(targets[0].h).to_string();
        // Made once: the workers read it instead of making it (or keep it in their --index-dir).
        let packed = shared::index_file::pack_h11(&index);
        tracing::info!(
            "h11 index packed for the workers: {:.1} MiB",
            packed.len() as f64 / (1u64 << 20) as f64
        );
        let packed: std::sync::Arc<[u8]> = packed.into();
        with_cluster(&config.cluster, spec, &reporter, |hub| {
            hub.publish_packed(shared::job::INDEX_INPUT, packed.clone());
            if state_dir.is_some_and(|d| d.join("h11-level-01.bin").exists()) {
                tracing::info!(
                    "the workers make the h11 levels: the saved level files are for builds in one process"
                );
            }
            let mut kept = KeptLevels::new(hub, index.task_order(), base + 1, journal.as_ref())?;
            kept.ensure(base + 1, &reporter)?;
            write_tables(Levels::Kept(kept))?;
            eprintln!("{}", hub.traffic().summary());
            Ok(())
        })
    } else {
        write_tables(Levels::Here(make_levels(
            &index,
            base + 1,
            mem_limit,
            state_dir,
            row_buffers,
            &reporter,
        )?))
    }
}

/// Bytes of one thread's buffers in the table pass and the level search: a row's three
/// bitmaps, the marks of a group of rows ([`H11Rows::table_group_size`]), its lines and a dense
/// h11 row; and the rows of a batch with those on their way to the writer.
fn thread_bytes(h: u8) -> u64 {
    let per_row = (ESEP as u64) << h;
    let group = H11Rows::table_group_size(h, rayon::current_num_threads()) as u64;
    let lines = per_row / LINE_ENTRIES as u64 * LINE_BYTES as u64;
    let batch = (BATCH as u64).div_ceil(rayon::current_num_threads() as u64) + 1;
    (3 + group) * per_row / 8 + (1 + batch) * lines + H11_COLUMNS as u64 / 8
}

/// The h11 levels 0 ..= `max`, loaded from the state directory where they were saved before.
fn make_levels(
    index: &H11Rows,
    max: u8,
    mem_limit: Option<u64>,
    state_dir: Option<&Path>,
    row_buffers: u64,
    reporter: &Reporter,
) -> Result<Vec<Level>> {
    let mut levels = vec![index.first_level()];
    for d in 1..=max {
        let path = state_dir.map(|dir| dir.join(format!("h11-level-{d:02}.bin")));
        if let Some(p) = path.as_ref().filter(|p| p.exists()) {
            let held: u64 = levels.iter().map(|l| l.bytes()).sum();
            let size = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
            check_memory(held + size + row_buffers, mem_limit, "")
                .with_context(|| format!("loading level {d} from {}", p.display()))?;
            let level = Level::load(p).with_context(|| format!("cannot resume from {}", p.display()))?;
            ensure!(
                level.depth == d && level.rows.len() == index.rows() as usize,
                "{} is not level {d} of this index",
                p.display()
            );
            eprintln!(
                "depth {d:>2}: {:>15} h11 entries (loaded from {})",
                thousands(level.entries()),
                p.display()
            );
            levels.push(level);
            continue;
        }
        check_level_memory(&levels, max, mem_limit, state_dir, row_buffers)?;
        reporter.progress.depth.store(d as u32, Ordering::Relaxed);
        reporter.progress.rows_done.store(0, Ordering::Relaxed);
        let t = Instant::now();
        let n = levels.len();
        let next = reporter.showing(|| {
            let (prev, before) = (&levels[n - 1], n.checked_sub(2).map(|k| &levels[k]));
            index.next_level(prev, before, &reporter.progress.rows_done)
        });
        if let Some(p) = &path {
            next.save(p).with_context(|| format!("cannot save level {d} to {}", p.display()))?;
        }
        eprintln!(
            "depth {d:>2}: {:>15} h11 entries, {} in the level store ({:.2} bits each), {:.2} s",
            thousands(next.entries()),
            gib(next.bytes()),
            next.bytes() as f64 * 8.0 / next.entries().max(1) as f64,
            t.elapsed().as_secs_f64()
        );
        levels.push(next);
    }
    Ok(levels)
}

/// Refuses the rest of the levels where their extrapolated size does not fit: each level is
/// taken to grow by the factor the last one grew by (the growth falls with depth, so this
/// overestimates).
fn check_level_memory(
    levels: &[Level],
    max: u8,
    mem_limit: Option<u64>,
    state_dir: Option<&Path>,
    row_buffers: u64,
) -> Result<()> {
    let n = levels.len();
    let held: u64 = levels.iter().map(|l| l.bytes()).sum();
    let last = levels[n - 1].bytes();
    if n < 3 || last < 1 << 20 {
        return Ok(());
    }
    let growth = last as f64 / levels[n - 2].bytes().max(1) as f64;
    let mut next = last as f64;
    let mut more = 0.0;
    for _ in n..=max as usize {
        next *= growth;
        more += next;
    }
    let needed = held + more as u64 + row_buffers;
    eprintln!(
        "levels {n}..={max}: about {} more (extrapolated, growth {growth:.1} per level), {} held, {} of row buffers",
        gib(more as u64),
        gib(held),
        gib(row_buffers)
    );
    check_memory(needed, mem_limit, "")?;
    if let Some(dir) = state_dir {
        if let Some(avail) = disk_available(dir) {
            ensure!(
                (more as u64) < avail,
                "the levels need about {} more on {}, only {} is free",
                gib(more as u64),
                dir.display(),
                gib(avail)
            );
        }
    }
    Ok(())
}

/// A table's finished rows in the coordinator's journal, under a key of the table's h and
/// layout (a resumed file must have the same layout).
struct JournalRows<'a> {
    journal: &'a RedbJournal,
    key: u8,
}

impl<'a> JournalRows<'a> {
    fn new(journal: &'a RedbJournal, target: &Target) -> Self {
        JournalRows { journal, key: target.h + if target.layout.format == TableFormat::H48 { 16 } else { 0 } }
    }
}

impl RowLog for JournalRows<'_> {
    fn load(&self) -> std::io::Result<Vec<(u32, Vec<u8>)>> {
        self.journal.table_rows(self.key).map_err(journal_error)
    }

    fn record(&self, rows: &[(u32, Vec<u8>)]) -> std::io::Result<()> {
        self.journal.table_rows_done(self.key, rows).map_err(journal_error)
    }

    fn clear(&self) -> std::io::Result<()> {
        self.journal.clear_table_rows(self.key).map_err(journal_error)
    }
}

fn journal_error(e: anyhow::Error) -> std::io::Error {
    std::io::Error::other(format!("the journal: {e:#}"))
}

/// Makes the table rows of `groups` on this process's threads, a group on a thread
/// ([`H11Rows::table_rows`]), and hands them to `writer` in batches as they come (the rows of
/// [`BATCH`] at most, with those on their way, are held at once).
fn make_rows_here(
    index: &H11Rows,
    h: u8,
    levels: &[Level],
    groups: &[Vec<u32>],
    writer: &mut RowsWriter,
    reporter: &Reporter,
) -> Result<()> {
    let (send, made) = std::sync::mpsc::sync_channel::<(u32, RowLines)>(rayon::current_num_threads());
    std::thread::scope(|scope| {
        scope.spawn(move || {
            // Stops at the first row the writer no longer takes (it failed).
            let _ = groups.par_iter().with_max_len(1).try_for_each_init(RowScratch::default, |s, group| {
                let mut taken = true;
                index.table_rows(group, h, levels, &Marks::new(), s, |row, lines| {
                    reporter.progress.rows_done.fetch_add(1, Ordering::Relaxed);
                    taken = taken && send.send((row, lines)).is_ok();
                });
                taken.then_some(()).ok_or(())
            });
        });
        let mut batch = Vec::with_capacity(BATCH);
        for row in made {
            batch.push(row);
            if batch.len() == BATCH {
                writer.accept(std::mem::take(&mut batch)).context("cannot write the table's rows")?;
            }
        }
        writer.accept(batch).context("cannot write the table's rows")
    })
}

/// Makes every table row of `target` not yet written, and finishes the file.
fn write_table(
    index: &H11Rows,
    target: &Target,
    levels: &mut Levels,
    journal: Option<&RedbJournal>,
    (cocsep, eoesep): (&Section, &Section),
    shared_out: bool,
    reporter: &Reporter,
) -> Result<()> {
    let h = target.h;
    let log = journal.map(|j| JournalRows::new(j, target));
    let mut writer = RowsWriter::open(
        &target.path,
        target.layout,
        base_for(h),
        index.rows(),
        log.as_ref().map(|l| l as &dyn RowLog),
    )
    .with_context(|| format!("cannot write {}", target.path.display()))?;
    if writer.done() > 0 {
        eprintln!("h48h{h}: {} of {} rows done before, resuming", writer.done(), index.rows());
    }
    if let Err(e) = fill_rows(index, target, levels, &mut writer, shared_out, reporter) {
        writer.abandon();
        return Err(e.context(format!("h48h{h} stopped; finished rows are kept only with --state-dir")));
    }
    writer.finish(cocsep, eoesep).with_context(|| format!("cannot write {}", target.path.display()))
}

/// Makes the rows `writer` has not written (on this process's threads in batches, or on the
/// workers that keep the levels, one task at a time; with `shared_out`, the workers write
/// the rows' interior lines into the file themselves).
fn fill_rows(
    index: &H11Rows,
    target: &Target,
    levels: &mut Levels,
    writer: &mut RowsWriter,
    shared_out: bool,
    reporter: &Reporter,
) -> Result<()> {
    let h = target.h;
    let todo: Vec<u32> = (0..index.rows()).filter(|&r| !writer.is_done(r)).collect();
    reporter.progress.depth.store(base_for(h) as u32 + 2, Ordering::Relaxed);
    reporter.progress.rows_done.store(writer.done() as u64, Ordering::Relaxed);
    let start = Instant::now();
    let base = base_for(h);
    match levels {
        Levels::Here(levels) => {
            let levels = &levels[..base as usize + 2];
            let groups =
                index.table_groups(&todo, H11Rows::table_group_size(h, rayon::current_num_threads()));
            reporter.showing(|| make_rows_here(index, h, levels, &groups, writer, reporter))?;
        }
        Levels::Kept(kept) => loop {
            // Rows kept by workers lost meanwhile are made again first.
            kept.ensure(base + 1, reporter)?;
            let todo: Vec<u32> = (0..index.rows()).filter(|&r| !writer.is_done(r)).collect();
            if todo.is_empty() {
                break;
            }
            let out = if shared_out {
                Some(writer.shared_file().context("the shared output file's path")?)
            } else {
                None
            };
            let written = out.is_some();
            let (homes, readers) = kept.publish(base as usize + 2, out);
            // A table row's task runs best where the row's level base + 1 is kept.
            let prefer = kept.homes(base as usize + 1).to_vec();
            reporter.progress.depth.store(base as u32 + 2, Ordering::Relaxed);
            reporter.progress.rows_done.store(writer.done() as u64, Ordering::Relaxed);
            let result = reporter.showing(|| {
                kept.run_rows(
                    base as u32 + 2,
                    &todo,
                    wire::h48::max_table_row_words(h),
                    (&homes, &readers),
                    &prefer,
                    &reporter.progress.rows_done,
                    |rows, words| {
                        let made =
                            wire::h48::decode_table_rows(&words, h, rows, written).map_err(Refusal::Bad)?;
                        writer.accept(made).context("cannot write the table's rows").map_err(Refusal::Fatal)
                    },
                )
            });
            match result {
                Ok(()) => break,
                Err(ClusterError::InputsLost(w)) => {
                    tracing::warn!(
                        "h48h{h}: table rows stopped: worker {w}, which keeps rows they read, is lost"
                    );
                }
                Err(e) => return Err(e.into()),
            }
        },
    }
    eprintln!(
        "h48h{h}: {} rows in {:.1} s, peak RSS {:.2} GiB",
        thousands(todo.len() as u64),
        start.elapsed().as_secs_f64(),
        peak_rss_bytes() as f64 / (1u64 << 30) as f64
    );
    Ok(())
}
