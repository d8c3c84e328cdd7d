//! The jobs the command line runs, each from its validated config: enumerations by the row BFS
//! or by products, the H48 table builds and Rokicki's phase-2 and nxopt tables, with `info` and `verify`.

mod chunks;
pub mod coset;
pub mod enumerate;
mod hbuild;
mod kept_levels;
pub mod nxopt;
pub mod phase2;
mod product;
mod sample;
pub mod tables;

use crate::config::Target;
use anyhow::{ensure, Result};
use std::path::Path;
use std::time::Instant;

/// How `verify` runs a file's checks: `checks` calls its argument with each check as it
/// finishes (printed as `ok` or `FAIL`) and returns the failed ones; the time is printed after
/// them, and any failure makes the command fail.
pub fn run_checks(checks: impl FnOnce(&mut dyn FnMut(bool, &str)) -> Result<Vec<String>>) -> Result<()> {
    let start = Instant::now();
    let failures = checks(&mut |ok, what| println!("{} {what}", if ok { "ok  " } else { "FAIL" }))?;
    println!("verified in {:.1} s", start.elapsed().as_secs_f64());
    ensure!(failures.is_empty(), "{} check(s) failed: {}", failures.len(), failures.join("; "));
    Ok(())
}

/// Refuses outputs (and `extra` bytes of state on the first target's disk) that do not fit.
pub fn check_disk(targets: &[Target], extra: u64) -> Result<()> {
    let needed: u64 = targets.iter().map(|t| t.layout.total).sum::<u64>() + extra;
    check_free_disk(&targets[0].path, needed)
}

/// Refuses `needed` bytes of output beside `path` when its filesystem has less free.
pub fn check_free_disk(path: &Path, needed: u64) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if let Some(avail) = crate::resources::disk_available(dir) {
        ensure!(
            needed <= avail,
            "the output needs {:.2} GB of disk on {}, only {:.2} GB is free",
            needed as f64 / 1e9,
            dir.display(),
            avail as f64 / 1e9
        );
    }
    Ok(())
}
