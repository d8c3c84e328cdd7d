//! `coordinator build`, `info`: the H48 solver's tables (seed 000). h0 comes from the row BFS
//! of its own (cocsep class, esep) index; h1..h11 from exact h11 levels ([`crate::hbuild`]).
//! `verify` is in [`crate::table_verify`].

use crate::cli::{BuildArgs, ClusterArgs, TableFormat};
use crate::enumerate::{search_levels, SearchSettings};
use crate::output::peak_rss_bytes;
use anyhow::{bail, ensure, Context, Result};
use shared::bfs::job::{JobSpec, SpaceKind};
use shared::bfs::RowIndex;
use shared::cube::MoveSet;
use shared::h48::{
    base_for, h48_section, small_sections, DepthRecorder, Format, H48Coords, Layout, Section, SectionInfo,
    SectionKind, SymProductSpace, TableFile, TableWriter,
};
use shared::report::thousands;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The N of a table name "h48hN".
pub fn parse_table(name: &str) -> Result<u8> {
    name.strip_prefix("h48h")
        .and_then(|n| n.parse().ok())
        .filter(|&n| n <= 11)
        .with_context(|| format!("unknown table {name:?}: expected h48h0 .. h48h11"))
}

/// One table to write.
pub struct Target {
    pub h: u8,
    pub path: PathBuf,
    pub layout: Layout,
}

pub fn format_of(f: TableFormat) -> Format {
    match f {
        TableFormat::Cubefarm => Format::Cubefarm,
        TableFormat::H48 => Format::H48,
    }
}

/// The tables of a build, their files, and checks that they can be written.
fn targets(args: &BuildArgs) -> Result<Vec<Target>> {
    let mut hs: Vec<u8> = args.tables.iter().map(|t| parse_table(t)).collect::<Result<_>>()?;
    hs.sort_unstable();
    hs.dedup();
    let format = format_of(args.format);
    if hs.len() > 1 {
        let bases: Vec<u8> = hs.iter().map(|&h| base_for(h)).collect();
        ensure!(
            !hs.contains(&0) && bases.iter().all(|&b| b == bases[0]),
            "tables built in one run must share a base (h48h1..h48h3, h48h4..h48h7 or h48h8..h48h11): \
             run the others separately"
        );
        ensure!(args.out.is_dir(), "with several tables --out must be an existing directory");
    }
    let targets: Vec<Target> = hs
        .iter()
        .map(|&h| {
            let path = if hs.len() == 1 {
                args.out.clone()
            } else {
                args.out.join(match format {
                    Format::H48 => format!("h48h{h}"),
                    Format::Cubefarm => format!("h48h{h}.cft"),
                })
            };
            Target { h, path, layout: Layout::new(format, h) }
        })
        .collect();
    for t in &targets {
        if t.path.is_dir() {
            bail!("cannot write {}: it is a directory", t.path.display());
        }
        let dir = match t.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        ensure!(dir.is_dir(), "cannot write {}: no directory {}", t.path.display(), dir.display());
    }
    Ok(targets)
}

pub fn build(args: BuildArgs) -> Result<()> {
    let targets = targets(&args)?;
    let start = Instant::now();
    let written = if targets[0].h == 0 {
        let t = &targets[0];
        check_disk(std::slice::from_ref(t), 0)?;
        build_h0(t, args.cluster.clone())?;
        vec![t.path.clone()]
    } else {
        let distributed = args.cluster.listen.is_some() || args.cluster.workers.is_some();
        ensure!(!distributed || targets.len() == 1, "a distributed build makes one table per run");
        let cluster = if distributed {
            let tls = args.cluster.server_tls()?;
            Some((args.cluster.clone(), tls))
        } else {
            None
        };
        crate::hbuild::build(&targets, args.mem_limit, args.state_dir.as_deref(), cluster)?;
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

/// Writes a table from in-memory sections.
pub fn write_sections(target: &Target, cocsep: &Section, main: &Section, eoesep: &Section) -> Result<()> {
    let writer = TableWriter::create(&target.path, target.layout, false)
        .with_context(|| format!("cannot write {}", target.path.display()))?;
    let result = writer.write_main(0, &main.data).and_then(|_| writer.finish(cocsep, &main.info(), eoesep));
    result.with_context(|| format!("cannot write {}", target.path.display()))
}

/// h0: every depth of the (cocsep class, esep) index by the row BFS (embedded or on workers).
fn build_h0(target: &Target, cluster: ClusterArgs) -> Result<()> {
    let tls = cluster.server_tls()?;
    let coords = H48Coords;
    let start = Instant::now();
    let space = SymProductSpace::h0(&coords);
    tracing::info!(
        "h0 index: {} cocsep classes x {} esep values = {} entries ({:.1} s)",
        space.row_count(),
        thousands(space.column_count() as u64),
        thousands(space.entry_count()),
        start.elapsed().as_secs_f64()
    );
    let mut recorder = DepthRecorder::new(&space);
    let settings = SearchSettings {
        job: JobSpec { space: SpaceKind::H48h0, moves: MoveSet::Htm },
        max_depth: None,
        state_dir: None,
        cluster,
        tls,
    };
    search_levels(&space, &MoveSet::Htm.moves(), &settings, |report, bits| recorder.record(report, bits))?;
    let depths = recorder.finish();
    ensure!(
        depths.deeper == 0,
        "internal check failed: {} h0 entries were not reached",
        thousands(depths.deeper)
    );
    let main = h48_section(0, &depths);
    let [cocsep, eoesep] = small_sections(&coords).map_err(|e| anyhow::anyhow!(e))?;
    write_sections(target, &cocsep, &main, &eoesep)
}

/// The main table's info and lines.
pub fn main_section(file: &TableFile) -> Result<(&SectionInfo, &[u8])> {
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

pub fn info(path: &Path, json: bool) -> Result<()> {
    let file =
        TableFile::open(path).with_context(|| format!("{} is not a valid table file", path.display()))?;
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
