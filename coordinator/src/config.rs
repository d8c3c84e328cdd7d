//! Validated requests: what the command line asked for, checked once (flag combinations, files,
//! directories, TLS material) before any work, in plain values the jobs read.

use crate::cluster::ClusterConfig;
use anyhow::{bail, ensure, Context, Result};
use shared::container::TableFormat;
use shared::coord::nxopt::NxoptKind;
use shared::cube::MoveSet;
use shared::h48::{base_for, Layout};
use shared::space::Space;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    /// Breadth-first search over symmetry-reduced rows with visited bits.
    Rows,
    /// Products of the stored positions near start, one coset at a time (Bryan's method).
    Product,
}

/// A validated enumeration request.
#[derive(Debug, Clone)]
pub struct EnumerateConfig {
    pub space: Space,
    pub method: Method,
    pub moves: MoveSet,
    pub max_depth: Option<u32>,
    pub json: Option<PathBuf>,
    /// Keep the search's bit arrays in files here instead of anonymous memory.
    pub state_dir: Option<PathBuf>,
    pub mem_limit: Option<u64>,
    /// Product method: run this many random tasks and project the job from them.
    pub sample_tasks: Option<u32>,
    pub cluster: ClusterConfig,
}

impl EnumerateConfig {
    /// Chooses the move set and method, and refuses combinations that do not apply.
    pub fn new(
        space: Space,
        metric: Option<MoveSet>,
        method: Option<Method>,
        max_depth: Option<u32>,
        cluster: ClusterConfig,
    ) -> Result<Self> {
        ensure!(Space::ENUMERATED.contains(&space), "{space} is not one of the spaces enumerate counts");
        let moves = match (space.own_moves(), metric) {
            (Some(_), Some(_)) => bail!("{space} uses the 10 moves of H; --metric does not apply"),
            (Some(own), None) => own,
            (None, metric) => metric.unwrap_or(MoveSet::Htm),
        };
        let method = match method {
            None if space.has_rows() => Method::Rows,
            None => Method::Product,
            Some(Method::Rows) if !space.has_rows() => {
                bail!("the {space} is too big for the row BFS; use --method product")
            }
            Some(Method::Product) if !space.has_cosets() => {
                bail!("--method product is for the cube and edges, not {space}")
            }
            Some(method) => method,
        };
        if method == Method::Product {
            ensure!(
                max_depth.is_some(),
                "the product method needs --max-depth N (it stores the positions up to depth N/2)"
            );
        }
        Ok(EnumerateConfig {
            space,
            method,
            moves,
            max_depth,
            json: None,
            state_dir: None,
            mem_limit: None,
            sample_tasks: None,
            cluster,
        })
    }
}

/// One table to write.
#[derive(Clone, Debug)]
pub struct Target {
    pub h: u8,
    pub path: PathBuf,
    pub layout: Layout,
}

/// A validated `build` request.
#[derive(Clone, Debug)]
pub struct BuildConfig {
    /// The tables, all of one base.
    pub targets: Vec<Target>,
    pub mem_limit: Option<u64>,
    /// Where the h11 levels and the journal of finished table rows are kept.
    pub state_dir: Option<PathBuf>,
    pub cluster: ClusterConfig,
    /// The workers write the table's rows into the output file themselves (`--shared-out`).
    pub shared_out: bool,
}

/// The N of a table name "h48hN".
pub fn parse_table(name: &str) -> Result<u8> {
    name.strip_prefix("h48h")
        .and_then(|n| n.parse().ok())
        .filter(|&n| n <= 11)
        .with_context(|| format!("unknown table {name:?}: expected {}", table_names()))
}

/// Every table name `build` accepts, for messages.
pub fn table_names() -> String {
    let nxopt: Vec<String> = NxoptKind::all().iter().map(|k| format!("nxopt-{}", k.name())).collect();
    format!("h48h0 .. h48h11, phase2, {}", nxopt.join(", "))
}

/// A validated `build` request: H48 tables, Rokicki's phase-2 table, or an nxopt table.
#[derive(Clone, Debug)]
pub enum BuildJob {
    H48(Box<BuildConfig>),
    Phase2(Box<Phase2Build>),
    Nxopt(Box<NxoptBuild>),
}

/// A validated phase-2 build: the table in cube20src's bytes, alone or in a cubefarm file.
#[derive(Clone, Debug)]
pub struct Phase2Build {
    pub out: PathBuf,
    pub cubefarm: bool,
    pub mem_limit: Option<u64>,
    pub cluster: ClusterConfig,
}

/// A validated nxopt build.
#[derive(Clone, Debug)]
pub struct NxoptBuild {
    pub kind: NxoptKind,
    pub out: PathBuf,
    pub state_dir: Option<PathBuf>,
    pub mem_limit: Option<u64>,
    pub cluster: ClusterConfig,
}

impl BuildJob {
    /// Tells the table kinds apart and checks what applies to each.
    pub fn new(
        tables: &[String],
        out: &Path,
        format: Option<TableFormat>,
        cluster: ClusterConfig,
    ) -> Result<Self> {
        if let Some(name) = tables.iter().find(|t| t.to_ascii_lowercase().starts_with("nxopt-")) {
            let kind = NxoptKind::parse(&name["nxopt-".len()..])
                .with_context(|| format!("unknown table {name:?}: expected {}", table_names()))?;
            ensure!(tables.len() == 1, "{name} is built on its own: run the other tables separately");
            match format.unwrap_or(TableFormat::Nxopt) {
                TableFormat::Nxopt => {}
                other => bail!("nxopt tables are written in nxopt's layout only, not {other}"),
            }
            return Ok(BuildJob::Nxopt(Box::new(NxoptBuild {
                kind,
                out: out.to_path_buf(),
                state_dir: None,
                mem_limit: None,
                cluster,
            })));
        }
        if !tables.iter().any(|t| t == "phase2") {
            let format = format.unwrap_or(TableFormat::Cubefarm);
            match format {
                TableFormat::Cubefarm | TableFormat::H48 => {}
                TableFormat::Cube20src => bail!("--format cube20src is for the phase2 table"),
                TableFormat::Nxopt => bail!("--format nxopt is for the nxopt tables"),
            }
            return BuildConfig::new(tables, out, format, cluster).map(|c| BuildJob::H48(Box::new(c)));
        }
        ensure!(tables.len() == 1, "phase2 is built on its own: run the H48 tables separately");
        let cubefarm = match format.unwrap_or(TableFormat::Cube20src) {
            TableFormat::Cube20src => false,
            TableFormat::Cubefarm => true,
            TableFormat::H48 => bail!("--format h48 is for the H48 tables"),
            TableFormat::Nxopt => bail!("--format nxopt is for the nxopt tables"),
        };
        Ok(BuildJob::Phase2(Box::new(Phase2Build {
            out: out.to_path_buf(),
            cubefarm,
            mem_limit: None,
            cluster,
        })))
    }
}

impl BuildConfig {
    /// The tables named, their files (`out` is a directory when there are several), and checks
    /// that they can be written.
    pub fn new(tables: &[String], out: &Path, format: TableFormat, cluster: ClusterConfig) -> Result<Self> {
        let mut hs: Vec<u8> = tables.iter().map(|t| parse_table(t)).collect::<Result<_>>()?;
        hs.sort_unstable();
        hs.dedup();
        if hs.len() > 1 {
            let bases: Vec<u8> = hs.iter().map(|&h| base_for(h)).collect();
            ensure!(
                !hs.contains(&0) && bases.iter().all(|&b| b == bases[0]),
                "tables built in one run must share a base (h48h1..h48h3, h48h4..h48h7 or h48h8..h48h11): \
                 run the others separately"
            );
            ensure!(out.is_dir(), "with several tables --out must be an existing directory");
            ensure!(!cluster.distributed(), "a distributed build makes one table per run");
        }
        let targets: Vec<Target> = hs
            .iter()
            .map(|&h| {
                let path = if hs.len() == 1 {
                    out.to_path_buf()
                } else {
                    out.join(match format {
                        TableFormat::H48 => format!("h48h{h}"),
                        _ => format!("h48h{h}.cft"),
                    })
                };
                Ok(Target { h, path, layout: Layout::new(format, h)? })
            })
            .collect::<Result<_>>()?;
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
        Ok(BuildConfig { targets, mem_limit: None, state_dir: None, cluster, shared_out: false })
    }
}

/// The deepest `coset --exact-to` or `--bound` accepts: every position is within 20 face turns.
pub const MAX_COSET_DEPTH: u32 = shared::coset::MAX_DEPTH;

/// How far a bound run searches phase 1 unless told: as the proof of 20 did (cube20src's
/// `hcoset -F`).
pub const DEFAULT_SEARCH_TO: u32 = 16;

/// A validated coset request: the cosets (each by its representative's moves, as given), the
/// depth, and where the JSON goes.
#[derive(Debug, Clone)]
pub struct CosetConfig {
    /// Each coset's representative: its text and its moves.
    pub cosets: Vec<(String, Vec<shared::cube::Move>)>,
    pub spec: shared::coset::CosetSpec,
    /// A bound run's list of the positions it left unreached.
    pub unreached: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub mem_limit: Option<u64>,
    /// Journal finished chunks of cosets here, so that a killed job resumes.
    pub state_dir: Option<PathBuf>,
    /// Phase 1's distance table kept in this file (read, or made and written).
    pub phase1_table: Option<PathBuf>,
    /// Solve one coset of each class under the 16 symmetries of H (else every coset given).
    pub reduce: bool,
    pub cluster: ClusterConfig,
}

impl CosetConfig {
    /// Parses the representatives given on the command line and in `file` (one a line; blank
    /// lines and `#` comments skipped), refusing a malformed one, none at all, a coset given
    /// twice (two representatives of one coset have the same phase-1 coordinate) and a depth
    /// beyond 20.
    pub fn new(
        given: &[String],
        file: Option<&Path>,
        spec: shared::coset::CosetSpec,
        cluster: ClusterConfig,
    ) -> Result<Self> {
        ensure!(
            spec.depth <= MAX_COSET_DEPTH,
            "depth {}: every position is within {MAX_COSET_DEPTH} moves, so at most {MAX_COSET_DEPTH}",
            spec.depth
        );
        let mut texts: Vec<(String, String)> =
            given.iter().map(|t| (t.clone(), "the command line".into())).collect();
        if let Some(path) = file {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            for (i, line) in text.lines().enumerate() {
                let line = line.split('#').next().unwrap_or("").trim();
                if !line.is_empty() {
                    texts.push((line.to_string(), format!("line {} of {}", i + 1, path.display())));
                }
            }
        }
        ensure!(
            !texts.is_empty(),
            "no coset given: name each by a representative move sequence, or give --file FILE"
        );
        let mut seen: HashMap<shared::coset::phase1::Coord, String> = HashMap::new();
        let mut cosets = Vec::new();
        for (text, from) in texts {
            let moves = shared::cube::parse_moves(&text)
                .with_context(|| format!("coset representative {text:?} ({from})"))?;
            let coord = shared::coset::phase1::coord_of(&shared::cube::apply_moves(&moves));
            if let Some(first) = seen.get(&coord) {
                bail!("{text:?} ({from}) names the coset of {first:?} again");
            }
            seen.insert(coord, text.clone());
            cosets.push((text, moves));
        }
        Ok(CosetConfig {
            cosets,
            spec,
            unreached: None,
            json: None,
            mem_limit: None,
            state_dir: None,
            phase1_table: None,
            reduce: true,
            cluster,
        })
    }
}
