//! The jobs the command line runs, each from its validated config: enumerations by the row BFS
//! or by products, the H48 table builds and Rokicki's phase-2 table, with `info` and `verify`.

pub mod enumerate;
mod hbuild;
pub mod phase2;
mod product;
pub mod tables;

use crate::config::Target;
use anyhow::{ensure, Result};
use std::path::Path;

/// Refuses outputs (and `extra` bytes of state on the first target's disk) that do not fit.
pub fn check_disk(targets: &[Target], extra: u64) -> Result<()> {
    let needed: u64 = targets.iter().map(|t| t.layout.total).sum::<u64>() + extra;
    let dir = targets[0].path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if let Some(avail) = crate::resources::disk_available(dir) {
        ensure!(
            needed <= avail,
            "the table files need {:.2} GB of disk on {}, only {:.2} GB is free",
            needed as f64 / 1e9,
            dir.display(),
            avail as f64 / 1e9
        );
    }
    Ok(())
}
