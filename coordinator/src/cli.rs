//! Command-line interface of the `coordinator` binary: clap definitions, and dispatch of the
//! validated requests ([`crate::config`]) to the jobs.

use crate::cluster::ClusterConfig;
use crate::config::{
    BuildConfig, BuildJob, CosetConfig, EnumerateConfig, Method, NxoptBuild, Phase2Build, DEFAULT_SEARCH_TO,
    MAX_COSET_DEPTH,
};
use crate::jobs;
use anyhow::{bail, ensure, Result};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};
use shared::container::TableFormat;
use shared::coset::CosetSpec;
use shared::cube::MoveSet;
use shared::job::RowJob;
use shared::space::Space;
use std::path::PathBuf;
use std::process::ExitCode;

/// Exact distance distributions and pruning tables for Rubik's-cube groups.
#[derive(Debug, Parser)]
#[command(name = "coordinator", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Exact distance distribution of a space: positions, classes under the 48 symmetries, and
    /// classes under symmetry and inversion, per depth.
    #[command(after_help = "Examples:
  coordinator enumerate edges --metric qtm --json edges-qtm.json
  coordinator enumerate h --state-dir state/h                     (a killed run resumes)
  coordinator enumerate cube --max-depth 10                       (the product method)
  coordinator enumerate h --listen 0.0.0.0:7878 --token-file tok  (remote workers: worker --coordinator ...)")]
    Enumerate(EnumerateArgs),
    /// Build pruning tables: the H48 solver's h48h0 .. h48h11, each with the cocsep and edge
    /// fallback tables, in the project's layout or the solver's own bytes; Rokicki's phase-2
    /// table `phase2` in cube20src's bytes; or nxopt's tables nxopt-EO1EP1 .. nxopt-EO3EP4 in
    /// nxopt's bytes.
    #[command(after_help = "Examples:
  coordinator build h48h7 --format h48 --out tables/h48h7         (the bytes nissy's H48 reads)
  coordinator build h48h1 h48h2 h48h3 --format h48 --out tables/  (one search, three tables)
  coordinator build phase2 --out phase2.dat                       (cube20src's phase-2 table)
  coordinator build nxopt-EO2EP2 --out nxopt22.dat
  coordinator build h48h11 --format h48 --out h11 --state-dir state/h11 --mem-limit 20G")]
    Build(BuildArgs),
    /// Describe a table file: an H48 table (cubefarm or h48 layout), a phase-2 table (cube20src
    /// or cubefarm layout) or an nxopt table.
    #[command(after_help = "Example:\n  coordinator info tables/h48h7 --json")]
    Info {
        /// The table file (its kind and layout are recognized from its contents).
        file: PathBuf,
        /// Print a JSON object (kind, h, base, entries, bytes, buckets, depth_counts, deeper).
        #[arg(long)]
        json: bool,
    },
    /// Check a table file: checksums, recounted values, line minima (H48; h0 entry by entry
    /// against a fresh BFS), and random entries against a direct search of their position.
    #[command(after_help = "Example:\n  coordinator verify tables/h48h7 --samples 1000")]
    Verify {
        /// The table file (its kind and layout are recognized from its contents).
        file: PathBuf,
        /// Random entries to check by direct search.
        #[arg(long, value_name = "K", default_value_t = 100)]
        samples: u32,
    },
    /// Show the progress of a job served by a coordinator started with --listen.
    #[command(after_help = "Example:\n  coordinator status --coordinator http://head:7878 --token-file tok")]
    Status {
        /// The coordinator's address, e.g. http://127.0.0.1:7878 (https:// with --ca), as the
        /// workers' --coordinator gives it.
        #[arg(long, value_name = "URL", visible_alias = "connect")]
        coordinator: String,
        /// File holding the shared token (else the CUBEFARM_TOKEN environment variable).
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
        /// PEM certificate to trust for an https:// address (the CA, or the coordinator's own
        /// certificate if self-signed).
        #[arg(long, value_name = "FILE")]
        ca: Option<PathBuf>,
    },
    /// Solve cosets of Kociemba's H = <U, D, R2, L2, F2, B2> whole, as the proof that every
    /// position is within 20 moves did: the exact distance of each of a coset's 19,508,428,800
    /// positions up to a depth, the rest counted as beyond it. A coset is named by a move
    /// sequence that reaches one of its positions ("R U F", or cube20src's "R1U1F1").
    #[command(after_help = "Examples:
  coordinator coset \"R U F\" --phase1-table phase1.dat           (proved within 20 moves)
  coordinator coset --exact-to 16 R1U2F3L1B2D1R3F1 --phase1-table phase1.dat
  coordinator coset --file cosets.txt --json cosets.json --state-dir state/cosets")]
    Coset(CosetArgs),
    /// Apply a move sequence in Singmaster notation (e.g. "R U2 F'") to the solved cube and show
    /// the position: cubies in Reid's notation, Bryan's words, its symmetries.
    #[command(
        after_help = "Examples:\n  coordinator position \"R U2 F'\"\n  coordinator position R1U2F3   (cube20src's turns: 1, 2, 3 quarter turns)"
    )]
    Position {
        /// The moves, separated by whitespace.
        moves: String,
    },
}

/// A depth: a whole number, 0 or more (a negative one is refused in these words, not taken
/// for an option).
fn parse_depth(text: &str) -> anyhow::Result<u32> {
    text.parse().map_err(|_| anyhow::anyhow!("a depth is a whole number, 0 or more (not {text:?})"))
}

/// The spaces `enumerate` counts, each with its description in the help.
fn space_parser() -> impl TypedValueParser<Value = Space> {
    let values = Space::ENUMERATED.map(|s| PossibleValue::new(s.name()).help(s.describe()));
    PossibleValuesParser::new(values).map(|name| Space::parse(&name).expect("a listed space"))
}

/// The metrics a user chooses between.
fn metric_parser() -> impl TypedValueParser<Value = MoveSet> {
    let values = MoveSet::METRICS.map(|m| PossibleValue::new(m.name()).help(m.describe()));
    PossibleValuesParser::new(values).map(|name| name.parse().expect("a listed metric"))
}

/// The table layouts `build --format` writes.
fn format_parser() -> impl TypedValueParser<Value = TableFormat> {
    let values = TableFormat::ALL.map(|f| PossibleValue::new(f.name()).help(f.describe()));
    PossibleValuesParser::new(values).map(|name| name.parse().expect("a listed format"))
}

#[derive(Debug, clap::Args)]
pub struct EnumerateArgs {
    /// The space to enumerate.
    #[arg(value_parser = space_parser())]
    pub space: Space,

    /// Metric: htm (18 face turns, the default) or qtm (12 quarter turns). Not for h and
    /// hprime, which use H's own 10 moves.
    #[arg(long, value_parser = metric_parser())]
    pub metric: Option<MoveSet>,

    /// Stop after this depth (required by the product method).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = parse_depth)]
    pub max_depth: Option<u32>,

    /// Engine: rows (the symmetry-reduced row BFS; corners, edges, h, hprime) or product
    /// (products of stored positions, coset by coset; cube and edges). Default: rows, and
    /// product for the cube.
    #[arg(long, value_enum)]
    pub method: Option<Method>,

    /// Also write the result as JSON to this file (written under a temporary name, then renamed).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    #[command(flatten)]
    pub limits: LimitArgs,

    /// Row searches on workers whose index is sent to them (corners, edges): read the index
    /// from DIR/<space>.index instead of building it, or build it and keep it there for the
    /// next run (checksummed; a file that fails its checks is built again). In-process workers
    /// use it too; give remote workers the same --index-dir on a shared file system, or a
    /// copy on each machine, and they read it instead of downloading it.
    #[arg(long, value_name = "DIR")]
    pub index_dir: Option<PathBuf>,

    /// Product method: run N of the job's tasks, chosen at random (the same ones every time),
    /// and project the whole job's CPU time and deepest-level count from them.
    #[arg(long, value_name = "N")]
    pub sample_tasks: Option<u32>,

    #[command(flatten)]
    pub cluster: ClusterArgs,
}

#[derive(Debug, clap::Args)]
pub struct CosetArgs {
    /// Representatives of the cosets, one move sequence each (quote it: "R U2 F'").
    #[arg(value_name = "MOVES")]
    pub cosets: Vec<String>,

    /// Also the representatives in this file, one a line (blank lines and # comments skipped).
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// Count every position at its exact distance up to this depth (0 to 20): phase 1 is
    /// searched to every depth.
    #[arg(long, value_name = "D", value_parser = parse_depth, conflicts_with_all = ["bound", "search_to", "unreached"])]
    pub exact_to: Option<u32>,

    /// Prove every position of each coset within D moves (the default, with D = 20): phase 1 is
    /// searched to --search-to moves and H's moves carry on to D, as in the proof of 20.
    #[arg(long, value_name = "D", value_parser = parse_depth)]
    pub bound: Option<u32>,

    /// Bound runs: search phase 1 to this many moves (at most the bound). Each move more costs
    /// about ten times the search: here 16 costs over a minute a coset (an exact run to 16
    /// takes 68 s), 14 about 15 s, and leaves a few more positions unreached.
    #[arg(long, value_name = "S", value_parser = parse_depth, default_value_t = DEFAULT_SEARCH_TO)]
    pub search_to: u32,

    /// Bound runs: write the positions left unreached here, one a line ("SING" and Singmaster's
    /// notation, as cube20src's hcoset writes them; written under a temporary name, then renamed).
    #[arg(long, value_name = "FILE", default_value = "unreached.txt")]
    pub unreached: PathBuf,

    /// Also write the results as JSON to this file (written under a temporary name, then
    /// renamed).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Keep phase 1's distance table in this file (564 MB): read and checked if it exists, made
    /// and written there if not. Without it the table is made at every start (about 4 s).
    #[arg(long, value_name = "FILE")]
    pub phase1_table: Option<PathBuf>,

    /// Solve every coset given. By default a coset that one of the 16 symmetries keeping the
    /// UD axis maps onto a coset given before it is not solved: its counts are that coset's,
    /// and its unreached positions that coset's, conjugated (docs/coset.md).
    #[arg(long)]
    pub every_coset: bool,

    #[command(flatten)]
    pub limits: LimitArgs,

    #[command(flatten)]
    pub cluster: ClusterArgs,
}

impl TryFrom<CosetArgs> for CosetConfig {
    type Error = anyhow::Error;
    fn try_from(a: CosetArgs) -> Result<Self> {
        let cluster = ClusterConfig { phase1_table: a.phase1_table.clone(), ..a.cluster.try_into()? };
        let spec = match a.exact_to {
            Some(depth) => CosetSpec::exact(depth),
            None => {
                let bound = a.bound.unwrap_or(MAX_COSET_DEPTH);
                ensure!(
                    a.search_to <= bound,
                    "--search-to {} is deeper than the bound {bound}: phase 1 is searched at most to the bound",
                    a.search_to
                );
                CosetSpec::bound(bound, a.search_to)
            }
        };
        let config = CosetConfig::new(&a.cosets, a.file.as_deref(), spec, cluster)?;
        Ok(CosetConfig {
            unreached: spec.is_bound().then_some(a.unreached),
            json: a.json,
            mem_limit: a.limits.mem_limit,
            state_dir: a.limits.state_dir,
            phase1_table: a.phase1_table,
            reduce: !a.every_coset,
            ..config
        })
    }
}

#[derive(Debug, clap::Args)]
pub struct BuildArgs {
    /// The table(s): h48h0 .. h48h11, phase2, or nxopt-EO1EP1 .. nxopt-EO3EP4. H48 tables of the
    /// same base (h1..h3, h4..h7, h8..h11) share one search and may be built in one run.
    #[arg(required = true, num_args = 1..)]
    pub tables: Vec<String>,

    /// Output file (written under a temporary name, then renamed); with several tables, a
    /// directory that receives h48hN (h48 layout) or h48hN.cft (cubefarm layout) for each.
    #[arg(long, value_name = "PATH")]
    pub out: PathBuf,

    /// File layout (default: cubefarm for H48 tables, cube20src for phase2, nxopt for nxopt).
    #[arg(long, value_parser = format_parser())]
    pub format: Option<TableFormat>,

    /// H48 builds (h48h1 and up) on workers: the workers write the table's rows into the
    /// output file themselves, so that the rows do not all pass through this process's link
    /// and disk. --out must then be on a file system every worker mounts at the same path;
    /// only each row's counts and its two edge lines come up.
    #[arg(long)]
    pub shared_out: bool,

    #[command(flatten)]
    pub limits: LimitArgs,

    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// Where a job keeps its state, and the memory it may take (`enumerate` and `build`).
#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// Keep the job's state in this directory, with a journal, so that a killed job started
    /// again with the same command resumes where it stopped. What is kept depends on the job:
    /// `enumerate`, its levels (embedded, the bit arrays, memory-mapped instead of in RAM; on
    /// workers, the assignment and the counts) or a product job's finished chunks; `build`, an
    /// H48 build's h11 levels and finished table rows; `coset`, the finished chunks of cosets.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    /// Refuse to start a job that needs more memory than this (e.g. 10G, 512M). The product
    /// method also cuts its cosets into parts so that one task per thread fits it.
    #[arg(long, value_name = "SIZE", value_parser = crate::resources::parse_size)]
    pub mem_limit: Option<u64>,

    /// Compute threads of this process (default: all cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,
}

/// Distributing a job's levels to workers over gRPC.
#[derive(Debug, Clone, clap::Args)]
pub struct ClusterArgs {
    /// Serve workers on this address (e.g. 127.0.0.1:7878; beyond loopback only with a token).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,

    /// In-process workers to start (default: none with --listen; without --listen the job runs
    /// embedded unless this is given).
    #[arg(long, value_name = "N")]
    pub workers: Option<u32>,

    /// File holding the shared token (else the CUBEFARM_TOKEN environment variable).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    /// Serve workers over TLS with this certificate chain (PEM; needs --tls-key and --listen).
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,

    /// Private key of --tls-cert (PEM).
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,

    /// Parts a row search's rows are cut into (each owned by one worker), or tasks a product
    /// job's or H48 build's level is cut into.
    #[arg(long, value_name = "N", default_value_t = shared::space::locality::PARTS, value_parser = clap::value_parser!(u32).range(1..))]
    pub tasks_per_level: u32,

    /// Seconds a worker may hold a task before it is handed to another.
    #[arg(long, value_name = "S", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub lease_secs: u64,

    /// Seconds a worker may stay silent before it is declared lost: its tasks go to others and
    /// its parts of a row search to other workers, which make them again from the levels every
    /// worker keeps on its disk (workers send a heartbeat every few seconds).
    #[arg(long, value_name = "S", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub liveness_secs: u64,

    /// Serve Prometheus metrics of the job at http://ADDR/metrics (depth, pace and ETA, tasks,
    /// live workers, bytes); a job with a token wants it from scrapers too, as
    /// `Authorization: Bearer TOKEN` (beyond loopback a token is required).
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<std::net::SocketAddr>,

    /// `enumerate` on workers that own the rows: start once this many workers are ready
    /// (default: the in-process workers, else 1; a worker that registers later takes its share
    /// at the next level). Jobs of tasks (builds, cosets, the product method) hand tasks to
    /// workers as they come.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub min_workers: Option<u32>,
}

impl ClusterArgs {
    /// Whether the job runs in this process alone (no listener, no in-process workers).
    fn embedded(&self) -> bool {
        self.listen.is_none() && self.workers.is_none()
    }
}

impl TryFrom<ClusterArgs> for ClusterConfig {
    type Error = anyhow::Error;
    fn try_from(a: ClusterArgs) -> Result<Self> {
        let metrics = a.metrics;
        let config = ClusterConfig::new(
            a.listen,
            a.workers,
            a.token_file,
            (a.tls_cert, a.tls_key),
            a.tasks_per_level,
            (a.lease_secs, a.liveness_secs),
            a.min_workers,
        )?;
        if let Some(addr) = metrics {
            anyhow::ensure!(
                config.distributed(),
                "--metrics serves a job on workers: give --listen ADDR or --workers N"
            );
            crate::cluster::refuse_open_listener(addr, config.token_file.as_deref())?;
        }
        Ok(ClusterConfig { metrics, ..config })
    }
}

impl TryFrom<EnumerateArgs> for EnumerateConfig {
    type Error = anyhow::Error;
    fn try_from(a: EnumerateArgs) -> Result<Self> {
        let cluster = ClusterConfig { index_dir: a.index_dir.clone(), ..a.cluster.try_into()? };
        let config = EnumerateConfig::new(a.space, a.metric, a.method, a.max_depth, cluster)?;
        if let Some(dir) = &a.index_dir {
            let sent = RowJob { space: config.space, moves: config.moves }.sends_index();
            ensure!(
                config.method == Method::Rows && sent && config.cluster.distributed(),
                "--index-dir {} keeps the index a row search sends its workers: corners or edges, with --listen ADDR or --workers N",
                dir.display()
            );
            ensure!(!dir.exists() || dir.is_dir(), "--index-dir {} is not a directory", dir.display());
        }
        if a.sample_tasks.is_some() {
            anyhow::ensure!(config.method == Method::Product, "--sample-tasks is for the product method");
            anyhow::ensure!(
                a.limits.state_dir.is_none() && !config.cluster.distributed(),
                "--sample-tasks runs here, without --state-dir, --listen or --workers"
            );
        }
        Ok(EnumerateConfig {
            json: a.json,
            state_dir: a.limits.state_dir,
            mem_limit: a.limits.mem_limit,
            sample_tasks: a.sample_tasks,
            ..config
        })
    }
}

impl TryFrom<BuildArgs> for BuildJob {
    type Error = anyhow::Error;
    fn try_from(a: BuildArgs) -> Result<Self> {
        let cluster = a.cluster.try_into()?;
        let LimitArgs { state_dir, mem_limit, .. } = a.limits;
        let job = BuildJob::new(&a.tables, &a.out, a.format, cluster)?;
        if a.shared_out {
            let BuildJob::H48(config) = &job else { bail!("--shared-out is for H48 builds (h48h1 and up)") };
            ensure!(
                config.cluster.distributed() && config.targets.iter().all(|t| t.h > 0),
                "--shared-out is for H48 builds of h48h1 and up on workers (--listen or --workers)"
            );
        }
        Ok(match job {
            BuildJob::H48(config) => BuildJob::H48(Box::new(BuildConfig {
                mem_limit,
                state_dir,
                shared_out: a.shared_out,
                ..*config
            })),
            BuildJob::Nxopt(job) => BuildJob::Nxopt(Box::new(NxoptBuild { mem_limit, state_dir, ..*job })),
            BuildJob::Phase2(job) => {
                anyhow::ensure!(
                    state_dir.is_none(),
                    "--state-dir is for H48 and nxopt builds: phase2 builds in seconds and keeps no journal"
                );
                BuildJob::Phase2(Box::new(Phase2Build { mem_limit, ..*job }))
            }
        })
    }
}

/// Parses the command line and runs it; errors print one line and exit with status 1.
pub fn main() -> ExitCode {
    if std::env::args().nth(1).is_some_and(|a| a.starts_with("--threads")) {
        eprintln!("coordinator: error: --threads goes after the command: coordinator enumerate|build|coset ... --threads N");
        return ExitCode::from(2);
    }
    let cli = Cli::parse();
    worker::logs::init();
    let quiet = match &cli.command {
        Command::Info { .. } | Command::Verify { .. } | Command::Position { .. } => true,
        Command::Coset(a) => a.cluster.embedded(),
        Command::Enumerate(a) => a.cluster.embedded(),
        Command::Build(a) => a.cluster.embedded(),
        Command::Status { .. } => false,
    };
    if quiet {
        quiet_on_closed_pipe();
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("coordinator: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Lets a report piped into a reader that stops early (`| head`) end the process quietly, as
/// other command-line tools do, instead of failing on its next line. Only for commands that
/// hold no network connections, whose writes must keep reporting closed sockets as errors.
fn quiet_on_closed_pipe() {
    // SAFETY: restores the default disposition of SIGPIPE before any thread is started.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

fn run(cli: Cli) -> Result<()> {
    let threads = match &cli.command {
        Command::Enumerate(a) => a.limits.threads,
        Command::Build(a) => a.limits.threads,
        Command::Coset(a) => a.limits.threads,
        _ => None,
    };
    if let Some(threads) = threads {
        rayon::ThreadPoolBuilder::new().num_threads(threads as usize).build_global()?;
    }
    match cli.command {
        Command::Enumerate(args) => jobs::enumerate::run(EnumerateConfig::try_from(args)?),
        Command::Build(args) => match BuildJob::try_from(args)? {
            BuildJob::H48(config) => jobs::tables::build(&config),
            BuildJob::Phase2(job) => jobs::phase2::build(&job),
            BuildJob::Nxopt(job) => jobs::nxopt::build(&job),
        },
        Command::Info { file, json } if jobs::phase2::is_phase2(&file) => jobs::phase2::info(&file, json),
        Command::Info { file, json } if jobs::nxopt::kind_of(&file).is_some() => {
            jobs::nxopt::info(&file, jobs::nxopt::kind_of(&file).expect("checked"), json)
        }
        Command::Info { file, json } => jobs::tables::info(&file, json),
        Command::Verify { file, samples } if jobs::phase2::is_phase2(&file) => {
            jobs::phase2::verify(&file, samples)
        }
        Command::Verify { file, samples } if jobs::nxopt::kind_of(&file).is_some() => {
            jobs::nxopt::verify(&file, jobs::nxopt::kind_of(&file).expect("checked"), samples)
        }
        Command::Verify { file, samples } => jobs::tables::verify(&file, samples),
        Command::Status { coordinator, token_file, ca } => {
            crate::cluster::print_status(&coordinator, token_file.as_deref(), ca.as_deref())
        }
        Command::Coset(args) => jobs::coset::run(&CosetConfig::try_from(args)?),
        Command::Position { moves } => {
            print!("{}", crate::position::describe(&moves)?);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn unknown_space_and_metric_are_refused() {
        assert!(Cli::try_parse_from(["coordinator", "enumerate", "teapot"]).is_err());
        assert!(Cli::try_parse_from(["coordinator", "enumerate", "corners", "--metric", "stm"]).is_err());
        let ok = Cli::try_parse_from(["coordinator", "enumerate", "corners", "--metric", "qtm"]).unwrap();
        assert!(matches!(ok.command, Command::Enumerate(EnumerateArgs { metric: Some(MoveSet::Qtm), .. })));
    }
}
