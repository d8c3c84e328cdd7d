//! `coordinator build`, `info`, `verify`: the H48 solver's tables. h0 comes from the
//! row BFS of its own (cocsep class, esep) index; h1..h11 from exact h11 levels
//! ([`super::hbuild`]); the checks of `verify` are [`shared::h48::verify`].

use super::check_disk;
use crate::cluster::ClusterConfig;
use crate::config::{BuildConfig, Target};
use crate::driver::{search_levels, SearchSettings};
use crate::output::peak_rss_bytes;
use crate::resources::{check_memory, gib};
use anyhow::{ensure, Context, Result};
use shared::bfs::owned::PartIndex;
use shared::bfs::DepthRecorder;
use shared::container::{Section, SectionInfo, SectionKind, TableFileError};
use shared::coord::h48::H48Coords;
use shared::cube::MoveSet;
use shared::h48::{h48_section, small_sections, TableFile, TableWriter};
use shared::job::RowJob;
use shared::report::thousands;
use shared::space::{RowOrder, Space, Transitions};
use std::path::Path;
use std::time::Instant;

/// Builds the tables of `config` and describes them.
pub fn build(config: &BuildConfig) -> Result<()> {
    let targets = &config.targets;
    let start = Instant::now();
    let written = if targets[0].h == 0 {
        let t = &targets[0];
        check_disk(std::slice::from_ref(t), 0)?;
        build_h0(t, config.cluster.clone(), config.mem_limit)?;
        vec![t.path.clone()]
    } else {
        super::hbuild::build(config)?;
        // The levels' many row allocations, freed, stay in the allocator's per-thread arenas;
        // handed back before the tables are read, they do not add to the reading's pages.
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only releases free memory of the allocator.
        unsafe {
            libc::malloc_trim(0);
        }
        targets.iter().map(|t| t.path.clone()).collect()
    };
    for path in &written {
        print!("{}", describe(&TableFile::open(path)?, path));
    }
    println!(
        "built in {:.2} s, peak RSS {:.1} MiB",
        start.elapsed().as_secs_f64(),
        peak_rss_bytes() as f64 / 1048576.0
    );
    Ok(())
}

/// Writes a table from in-memory sections.
pub fn write_sections(target: &Target, cocsep: &Section, main: &Section, eoesep: &Section) -> Result<()> {
    let writer = TableWriter::create(&target.path, target.layout, false)
        .with_context(|| format!("cannot write {}", target.path.display()))?;
    let result = writer.write_main(0, &main.data).and_then(|_| writer.finish(cocsep, &main.info, eoesep));
    result.with_context(|| format!("cannot write {}", target.path.display()))
}

/// h0: every depth of the (cocsep class, esep) index by the row BFS (embedded or on workers).
fn build_h0(target: &Target, cluster: ClusterConfig, mem_limit: Option<u64>) -> Result<()> {
    let start = Instant::now();
    let job = RowJob { space: Space::H48h0, moves: MoveSet::Htm };
    let distributed = cluster.distributed();
    let index = job.build_index_checked(Transitions::Probe, RowOrder::Representative, |size| {
        // A byte per entry for the depths, the search's bit arrays here (none with workers),
        // and the table.
        let entries = size.rows * size.columns;
        let bits = if distributed { 0 } else { shared::bfs::state_bytes(size.rows, size.columns) };
        let needed = entries + bits + target.layout.main_len;
        tracing::info!(
            "h0: depths {}, bit arrays {}, table {}",
            gib(entries),
            gib(bits),
            gib(target.layout.main_len)
        );
        check_memory(needed, mem_limit, "")
    })?;
    tracing::info!(
        "h0 index: {} cocsep classes x {} esep values = {} entries ({:.1} s)",
        index.row_count(),
        thousands(index.column_count() as u64),
        thousands(index.entry_count()),
        start.elapsed().as_secs_f64()
    );
    let mut recorder = DepthRecorder::new(index.row_count(), index.column_count());
    let settings = SearchSettings {
        job,
        max_depth: None,
        state_dir: None,
        cluster,
        positions_only: true,
        level_bits: true,
        packed_index: None,
    };
    search_levels(&index, &settings, |report, bits| recorder.record(report, bits))?;
    let depths = recorder.finish();
    ensure!(
        depths.deeper == 0,
        "internal check failed: {} h0 entries were not reached",
        thousands(depths.deeper)
    );
    let main = h48_section(0, &depths);
    let [cocsep, eoesep] = small_sections(&H48Coords)?;
    write_sections(target, &cocsep, &main, &eoesep)
}

/// The main table's info and lines.
fn main_section(file: &TableFile) -> Result<(&SectionInfo, &[u8])> {
    file.section(SectionKind::H48).context("the file holds no h48 table")
}

/// Human-readable summary of every section.
pub fn describe(file: &TableFile, path: &Path) -> String {
    let mut out = format!(
        "{} ({} layout, {} bytes)\n",
        path.display(),
        file.format.name(),
        thousands(file.bytes().len() as u64)
    );
    for (s, _) in &file.sections {
        out += &format!("{}: {} entries, {} bytes", s.kind.name(s.h), thousands(s.entries), thousands(s.len));
        if s.kind == SectionKind::H48 {
            out += &format!(", base {}", s.base);
        }
        out += "\n";
        if let Some(b) = s.buckets {
            out += &format!("  2-bit values 0..3: {}\n", b.map(thousands).join(" / "));
        }
        let label = if s.kind == SectionKind::EoEsep { "value" } else { "depth" };
        for (d, &c) in s.depth_counts.iter().enumerate() {
            out += &format!("  {label} {d:>2}: {:>15}\n", thousands(c));
        }
        if s.deeper > 0 {
            out += &format!("  deeper:   {:>15}\n", thousands(s.deeper));
        }
    }
    out
}

/// Opens a table file: a file that cannot be read says so, one that can but is not a table
/// says why.
fn open(path: &Path) -> Result<TableFile> {
    TableFile::open(path).map_err(|e| match e {
        TableFileError::Io(io) => anyhow::anyhow!("cannot read {}: {io}", path.display()),
        TableFileError::Magic => unrecognized(path),
        other => anyhow::anyhow!("{} is not a valid table file: {other}", path.display()),
    })
}

/// Why a file with neither a cubefarm nor an H48 header is not read (`info` and `verify` try
/// those last): an nxopt header on a file of the wrong length is named, and otherwise the length
/// a phase-2 table in cube20src's bytes (which has no header) must have is given.
fn unrecognized(path: &Path) -> anyhow::Error {
    if let Some(why) = super::nxopt::misshapen(path) {
        return anyhow::anyhow!(why);
    }
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let phase2 = shared::phase2::FILE_BYTES as u64;
    anyhow::anyhow!(
        "{} is not a valid table file: {}; it has no table header and {} bytes, and a phase-2 table in cube20src's \
         bytes (no header) has exactly {}{}",
        path.display(),
        TableFileError::Magic,
        thousands(len),
        thousands(phase2),
        if len < phase2 { " (truncated?)" } else { "" }
    )
}

pub fn info(path: &Path, json: bool) -> Result<()> {
    let file = open(path)?;
    if !json {
        print!("{}", describe(&file, path));
        return Ok(());
    }
    let (main, _) = main_section(&file)?;
    let section_json = |s: &SectionInfo| {
        serde_json::json!({
            "name": s.kind.name(s.h),
            "entries": s.entries,
            "bytes": s.len,
            "depth_counts": s.depth_counts,
            "deeper": s.deeper,
        })
    };
    let value = serde_json::json!({
        "kind": "h48",
        "format": file.format.name(),
        "h": main.h,
        "base": main.base,
        "entries": main.entries,
        "bytes": main.len,
        "buckets": main.buckets,
        "depth_counts": main.depth_counts,
        "deeper": main.deeper,
        "sections": file.sections.iter().map(|(s, _)| section_json(s)).collect::<Vec<_>>(),
    });
    println!("{}", serde_json::to_string_pretty(&value)?);
    Ok(())
}

/// Runs the checks of [`shared::h48::verify`], printing each as it finishes.
pub fn verify(path: &Path, samples: u32) -> Result<()> {
    let file = open(path)?;
    super::run_checks(|report| Ok(shared::h48::verify(&file, samples, report)?))
}
