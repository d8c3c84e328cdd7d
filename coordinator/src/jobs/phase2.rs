//! `coordinator build phase2`, and `info` and `verify` of a phase-2 file: Rokicki's phase-2 table
//! ([`shared::phase2`]) in cube20src's bytes.

use crate::output::{peak_rss_bytes, OutputFile};
use anyhow::{ensure, Context, Result};
use shared::bfs::{bfs_depths, BfsOptions, LocalExpander};
use shared::phase2::{self, FILE_BYTES};
use shared::report::thousands;
use shared::space::KociembaSpace;
use std::path::Path;
use std::time::Instant;

/// Builds the table from the H' row BFS and writes cube20src's file.
pub fn build(path: &Path) -> Result<()> {
    let out = OutputFile::prepare(path)?;
    super::check_free_disk(path, FILE_BYTES as u64)?;
    let start = Instant::now();
    let space = KociembaSpace::new(false);
    let options = BfsOptions { positions_only: true, ..Default::default() };
    let depths = bfs_depths(&space, space.moves(), &options, &LocalExpander::default())
        .map_err(|e| anyhow::anyhow!(e))?;
    let searched = start.elapsed().as_secs_f64();
    let built = phase2::build(&space, &depths);
    out.write(&built.file_bytes())?;
    println!("{} (cube20src layout, {} bytes)", path.display(), thousands(FILE_BYTES as u64));
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

/// Whether `path` is a phase-2 file by its length (cube20src's layout has no header).
pub fn is_phase2(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.len() == FILE_BYTES as u64)
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Describes a phase-2 file: its checksum and value counts.
pub fn info(path: &Path, json: bool) -> Result<()> {
    let file = read(path)?;
    let (table, stored) = file.split_at(phase2::TABLE_BYTES);
    let stored = i32::from_le_bytes(stored.try_into().expect("4 bytes"));
    let computed = phase2::checksum(table);
    let mut values = [0u64; 16];
    for &b in table {
        values[(b & 15) as usize] += 1;
        values[(b >> 4) as usize] += 1;
    }
    if json {
        let value = serde_json::json!({
            "kind": "phase2",
            "format": "cube20src",
            "entries": phase2::ROWS * phase2::COLUMNS,
            "bytes": file.len(),
            "checksum": stored,
            "checksum_ok": stored == computed,
            "value_counts": values,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!(
            "{} (phase-2 table, cube20src layout, {} bytes)",
            path.display(),
            thousands(file.len() as u64)
        );
        println!("checksum {stored} ({})", if stored == computed { "ok" } else { "WRONG" });
        for (v, &n) in values.iter().enumerate() {
            println!("  value {v:>2}: {:>12} entries", thousands(n));
        }
    }
    ensure!(stored == computed, "the checksum is {stored}, the table's is {computed}");
    Ok(())
}

/// Runs the checks of [`shared::phase2::verify`], printing each as it finishes.
pub fn verify(path: &Path, samples: u32) -> Result<()> {
    let start = Instant::now();
    let file = read(path)?;
    let failures = phase2::verify(&file, samples, &mut |ok, what| {
        println!("{} {what}", if ok { "ok  " } else { "FAIL" })
    });
    println!("verified in {:.1} s", start.elapsed().as_secs_f64());
    ensure!(failures.is_empty(), "{} check(s) failed: {}", failures.len(), failures.join("; "));
    Ok(())
}
