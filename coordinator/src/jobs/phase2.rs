//! `coordinator build phase2`, and `info` and `verify` of a phase-2 file: Rokicki's phase-2 table
//! ([`shared::phase2`]) in cube20src's bytes, alone (`p2p1h.dat`) or as the one section of a
//! cubefarm file, which adds the versioned header, the exact per-depth counts and a CRC-32.

use crate::config::Phase2Build;
use crate::driver::{search_levels, SearchSettings};
use crate::output::{peak_rss_bytes, OutputFile};
use crate::resources::check_memory;
use anyhow::{ensure, Context, Result};
use shared::bfs::owned::PartIndex;
use shared::bfs::{state_bytes, DepthRecorder};
use shared::container::{is_container, section_infos, write_single, SectionInfo, SectionKind, HEADER_AREA};
use shared::cube::MoveSet;
use shared::h48::TableFile;
use shared::job::RowJob;
use shared::phase2::{self, FILE_BYTES};
use shared::report::thousands;
use shared::space::{RowOrder, Space};
use std::path::Path;
use std::time::Instant;

/// Memory a build holds: a byte per H' entry for the distances and the table (and, embedded,
/// the search's bit arrays; on workers, one level's bits gathered here).
fn memory_needed(distributed: bool) -> u64 {
    let entries = (phase2::ROWS * phase2::COLUMNS) as u64;
    let search =
        if distributed { entries / 8 } else { state_bytes(phase2::ROWS as u64, phase2::COLUMNS as u64) };
    entries + FILE_BYTES as u64 + search
}

/// Builds the table from the H' row BFS (embedded, or on workers that own its rows) and writes
/// cube20src's file, or with `cubefarm` the project's file around the same bytes.
pub fn build(job: &Phase2Build) -> Result<()> {
    let path = job.out.as_path();
    let out = OutputFile::prepare(path)?;
    check_memory(memory_needed(job.cluster.distributed()), job.mem_limit, "")?;
    super::check_free_disk(path, FILE_BYTES as u64 + 4096)?;
    let start = Instant::now();
    let job_spec = RowJob { space: Space::Hprime, moves: MoveSet::KociembaH };
    let index = job_spec.build_index(RowOrder::Representative);
    let space = index.kociemba().expect("H' is a Kociemba space");
    let settings = SearchSettings {
        job: job_spec,
        max_depth: None,
        state_dir: None,
        cluster: job.cluster.clone(),
        positions_only: true,
        level_bits: true,
        packed_index: None,
    };
    let mut recorder = DepthRecorder::new(index.row_count(), index.column_count());
    search_levels(&index, &settings, |report, bits| recorder.record(report, bits))?;
    let depths = recorder.finish();
    let searched = start.elapsed().as_secs_f64();
    let built = phase2::build(space, &depths);
    let bytes = built.file_bytes();
    if job.cubefarm {
        let info = SectionInfo {
            kind: SectionKind::Phase2,
            h: 0,
            base: 0,
            entries: (phase2::ROWS * phase2::COLUMNS) as u64,
            depth_counts: built.depth_counts.clone(),
            deeper: 0,
            buckets: None,
            len: bytes.len() as u64,
        };
        write_single(path, info, &bytes).with_context(|| format!("cannot write {}", path.display()))?;
    } else {
        out.write(&bytes)?;
    }
    let layout = if job.cubefarm { "cubefarm layout around cube20src's bytes" } else { "cube20src layout" };
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or_default();
    println!("{} ({layout}, {} bytes)", path.display(), thousands(size));
    println!("checksum {}", phase2::checksum(&built.table));
    for (d, &n) in built.depth_counts.iter().enumerate() {
        println!("  distance {d:>2}: {:>12} entries", thousands(n));
    }
    for (v, &n) in built.value_counts.iter().enumerate() {
        println!("  value {v:>2}: {:>12} entries", thousands(n));
    }
    println!(
        "built in {:.2} s (H' search {searched:.2} s), peak RSS {:.1} MiB",
        start.elapsed().as_secs_f64(),
        peak_rss_bytes() as f64 / 1048576.0
    );
    Ok(())
}

/// Whether `path` is a phase-2 file: cube20src's (known by its length, it has no header) or a
/// cubefarm file holding the phase-2 section.
pub fn is_phase2(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else { return false };
    if meta.len() == FILE_BYTES as u64 {
        return true;
    }
    // The header area alone tells a cubefarm file's sections, without a pass over its payloads
    // (an H48 table's may be 60 GB).
    let mut head = Vec::with_capacity(HEADER_AREA as usize);
    use std::io::Read;
    let read = std::fs::File::open(path).and_then(|f| f.take(HEADER_AREA).read_to_end(&mut head));
    read.is_ok()
        && is_container(&head)
        && section_infos(&head).is_ok_and(|s| s.iter().any(|i| i.kind == SectionKind::Phase2))
}

/// cube20src's bytes of a phase-2 file, with the counts a cubefarm file stores (every CRC
/// checked on opening).
fn read(path: &Path) -> Result<(Vec<u8>, Option<SectionInfo>)> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() == FILE_BYTES {
        return Ok((bytes, None));
    }
    let file = TableFile::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let (info, payload) = file.section(SectionKind::Phase2).context("the file holds no phase-2 table")?;
    ensure!(payload.len() == FILE_BYTES, "the phase-2 section has {} bytes, not {FILE_BYTES}", payload.len());
    Ok((payload.to_vec(), Some(info.clone())))
}

/// Describes a phase-2 file: its checksum and value counts (and a cubefarm file's depth counts).
pub fn info(path: &Path, json: bool) -> Result<()> {
    let (file, stored_info) = read(path)?;
    let (table, stored) = file.split_at(phase2::TABLE_BYTES);
    let stored = i32::from_le_bytes(stored.try_into().expect("4 bytes"));
    let computed = phase2::checksum(table);
    let mut values = [0u64; 16];
    for &b in table {
        values[(b & 15) as usize] += 1;
        values[(b >> 4) as usize] += 1;
    }
    let format = if stored_info.is_some() { "cubefarm" } else { "cube20src" };
    let depth_counts = stored_info.map(|i| i.depth_counts).unwrap_or_default();
    if json {
        let value = serde_json::json!({
            "kind": "phase2",
            "format": format,
            "entries": phase2::ROWS * phase2::COLUMNS,
            "bytes": file.len(),
            "checksum": stored,
            "checksum_ok": stored == computed,
            "depth_counts": depth_counts,
            "value_counts": values,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("{} (phase-2 table, {format} layout)", path.display());
        println!("checksum {stored} ({})", if stored == computed { "ok" } else { "WRONG" });
        for (d, &n) in depth_counts.iter().enumerate() {
            println!("  distance {d:>2}: {:>12} entries", thousands(n));
        }
        for (v, &n) in values.iter().enumerate() {
            println!("  value {v:>2}: {:>12} entries", thousands(n));
        }
    }
    ensure!(stored == computed, "the checksum is {stored}, the table's is {computed}");
    Ok(())
}

/// Runs the checks of [`shared::phase2::verify`], printing each as it finishes; a cubefarm
/// file's stored depth counts must also agree with its values.
pub fn verify(path: &Path, samples: u32) -> Result<()> {
    let (file, stored_info) = read(path)?;
    super::run_checks(|report| {
        let mut failures = phase2::verify(&file, samples, report);
        if let Some(info) = stored_info {
            let mut values = [0u64; 16];
            for &b in &file[..phase2::TABLE_BYTES] {
                values[(b & 15) as usize] += 1;
                values[(b >> 4) as usize] += 1;
            }
            let mut from_depths = [0u64; 16];
            for (d, &n) in info.depth_counts.iter().enumerate() {
                from_depths[phase2::value_of(d as u8) as usize] += n;
            }
            let ok = values == from_depths;
            report(ok, "the stored depth counts give the table's value counts");
            if !ok {
                failures.push("stored depth counts disagree with the values".into());
            }
        }
        Ok(failures)
    })
}
