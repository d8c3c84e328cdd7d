//! `coordinator build nxopt-EOxEPy`, and `info` and `verify` of nxopt's table files
//! ([`shared::nxopt`]), in nxopt's bytes.

use crate::config::NxoptBuild;
use crate::driver::{search_levels, SearchSettings};
use crate::output::{peak_rss_bytes, OutputFile, Placement};
use crate::resources;
use anyhow::{ensure, Context, Result};
use shared::bfs::state_bytes;
use shared::coord::nxopt::{NxoptKind, ROWS};
use shared::coord::nxopt_columns::NxoptColumns;
use shared::cube::MoveSet;
use shared::job::RowJob;
use shared::nxopt::{self, LevelWriter, HEADER_BYTES};
use shared::report::thousands;
use shared::space::{RowOrder, Space};
use std::io::Read;
use std::path::Path;
use std::time::Instant;

/// Memory a build maps: the search's three bit arrays (unless they live in a state directory)
/// and the edge coordinate's factored maps; the table comes on top where it is kept in memory
/// (see [`placement`]).
pub fn memory_needed(kind: NxoptKind, state_dir: bool) -> u64 {
    let bits = if state_dir { 0 } else { state_bytes(ROWS as u64, kind.columns() as u64) };
    bits + NxoptColumns::planned_bytes(kind)
}

/// Where the table fills: in memory when it fits beside the search (every level from the
/// seventh on writes nearly every page of it, which a file mapping would have written back
/// each time), in a file mapping when it does not (the kernel writes it back as it needs the
/// memory), and in a resumable file with a state directory (a killed build finds its levels).
fn placement(kind: NxoptKind, state_dir: bool, mem_limit: Option<u64>) -> Placement {
    let with_table = memory_needed(kind, state_dir) + kind.table_bytes();
    match state_dir {
        true => Placement::Resumable,
        false if resources::check_memory(with_table, mem_limit, "").is_ok() => Placement::Memory,
        false => Placement::Mapped,
    }
}

/// Builds table `kind` from a row BFS to depth base + 2, writing each level into the table as
/// it finishes.
pub fn build(job: &NxoptBuild) -> Result<()> {
    let kind = job.kind;
    let file_bytes = HEADER_BYTES as u64 + kind.table_bytes();
    let out = OutputFile::prepare(&job.out)?;
    resources::check_memory(
        memory_needed(kind, job.state_dir.is_some()),
        job.mem_limit,
        "; --state-dir DIR keeps the bit arrays on disk",
    )?;
    crate::jobs::check_free_disk(&job.out, file_bytes)?;
    if let Some(dir) = &job.state_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        resources::check(0, state_bytes(ROWS as u64, kind.columns() as u64), Some(dir), None)?;
    }
    let start = Instant::now();
    let job_spec = RowJob { space: Space::Nxopt(kind), moves: MoveSet::Htm };
    let index = job_spec.build_index(RowOrder::Representative);
    tracing::info!("index of {} built in {:.1} s", kind.name(), start.elapsed().as_secs_f64());
    let mut file = out.map(file_bytes, placement(kind, job.state_dir.is_some(), job.mem_limit))?;
    file[..HEADER_BYTES].copy_from_slice(&nxopt::header(kind));
    let mut writer = LevelWriter::new(kind, &mut file[HEADER_BYTES..]);
    let settings = SearchSettings {
        job: job_spec,
        max_depth: Some(kind.base() as u32 + 2),
        state_dir: job.state_dir.clone(),
        cluster: job.cluster.clone(),
        positions_only: true,
        level_bits: true,
        packed_index: None,
    };
    let searched = Instant::now();
    search_levels(&index, &settings, |report, bits| {
        writer.record(report.counts.depth as u8, report.entries, bits)
    })?;
    let search_seconds = searched.elapsed().as_secs_f64();
    let depth_counts = writer.depth_counts.clone();
    ensure!(
        depth_counts.len() == kind.base() as usize + 3 && depth_counts.iter().all(|&n| n > 0),
        "the search ended before depth {}",
        kind.base() + 2
    );
    file.finish()?;
    println!("{} (nxopt {}, {} bytes)", job.out.display(), kind.name(), thousands(file_bytes));
    let entries = ROWS as u64 * 495 * kind.permutations() as u64 * kind.e2() as u64;
    let near: u64 = depth_counts.iter().sum();
    for (d, &n) in depth_counts.iter().enumerate() {
        println!("  distance {d:>2}: {:>15} entries", thousands(n));
    }
    println!("  distance {:>2}+: {:>14} entries", kind.base() + 3, thousands(entries - near));
    let base = kind.base() as usize;
    let values =
        [depth_counts[..=base].iter().sum(), depth_counts[base + 1], depth_counts[base + 2], entries - near];
    for (v, &n) in values.iter().enumerate() {
        println!("  value {v}: {:>15} entries", thousands(n));
    }
    println!(
        "built in {:.1} s (search {search_seconds:.1} s), peak RSS {:.1} MiB",
        start.elapsed().as_secs_f64(),
        peak_rss_bytes() as f64 / 1048576.0
    );
    Ok(())
}

/// The nxopt table a file holds, by its header and length.
pub fn kind_of(path: &Path) -> Option<NxoptKind> {
    let (head, len) = head_of(path)?;
    nxopt::kind_of_file(&head, len)
}

/// Why a file that begins with an nxopt header is no nxopt table (its length is none of the
/// tables' of that base: cut short or damaged); `None` for any other file.
pub fn misshapen(path: &Path) -> Option<String> {
    let (head, len) = head_of(path)?;
    let sizes: Vec<String> = NxoptKind::all()
        .into_iter()
        .filter(|k| head == nxopt::header(*k))
        .map(|k| format!("nxopt-{} has {}", k.name(), thousands(HEADER_BYTES as u64 + k.table_bytes())))
        .collect();
    (!sizes.is_empty() && nxopt::kind_of_file(&head, len).is_none()).then(|| {
        format!(
            "{}: an nxopt table by its header (base {}), but {} bytes where {}: truncated or damaged (build it again)",
            path.display(),
            head[3],
            thousands(len),
            sizes.join(", ")
        )
    })
}

/// A file's first bytes (as many as an nxopt header) and its length.
fn head_of(path: &Path) -> Option<([u8; HEADER_BYTES], u64)> {
    let len = std::fs::metadata(path).ok()?.len();
    let mut head = [0u8; HEADER_BYTES];
    std::fs::File::open(path).ok()?.read_exact(&mut head).ok()?;
    Some((head, len))
}

fn read(path: &Path) -> Result<memmap2::Mmap> {
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    // SAFETY: the map is read-only and lives while this job reads it; a file truncated meanwhile
    // by another process is outside what this tool can guard against.
    unsafe { memmap2::Mmap::map(&file) }.with_context(|| format!("cannot map {}", path.display()))
}

/// Describes an nxopt file: its values and group minima, checked against each other.
pub fn info(path: &Path, kind: NxoptKind, json: bool) -> Result<()> {
    let file = read(path)?;
    let summary = nxopt::summarize(kind, &file[HEADER_BYTES..]);
    if json {
        let value = serde_json::json!({
            "kind": format!("nxopt-{}", kind.name()),
            "format": "nxopt",
            "base": kind.base(),
            "bytes": file.len(),
            "summary": summary,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!(
            "{} (nxopt {}, base {}, {} bytes)",
            path.display(),
            kind.name(),
            kind.base(),
            thousands(file.len() as u64)
        );
        for (v, &n) in summary.value_counts.iter().enumerate() {
            println!("  value {v}: {:>15} entries", thousands(n));
        }
        for (m, &n) in summary.minimum_counts.iter().enumerate().filter(|(_, &n)| n > 0) {
            println!("  group minimum {m:>2}: {:>13} groups", thousands(n));
        }
    }
    ensure!(
        summary.bad_minima == 0 && summary.bad_unused == 0,
        "{} group minima disagree with their entries, {} unused fields are not 3",
        summary.bad_minima,
        summary.bad_unused
    );
    Ok(())
}

/// Runs the checks of [`shared::nxopt::verify`], printing each as it finishes.
pub fn verify(path: &Path, kind: NxoptKind, samples: u32) -> Result<()> {
    let file = read(path)?;
    super::run_checks(|report| Ok(nxopt::verify(kind, &file, samples, report)))
}
