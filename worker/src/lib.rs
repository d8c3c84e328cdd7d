//! Worker for distributed jobs: connects to a coordinator, leases tasks,
//! computes them and uploads the resulting shards.
//!
//! See [`client::run_worker`] for the loop.

use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

pub mod client;
pub mod connection;
pub mod kept;
pub mod logs;
pub mod rows;
mod tasks;

/// Command-line arguments of the `worker` binary.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "worker",
    version,
    about,
    after_help = "Examples:
  worker --coordinator http://head:7878 --token-file tok
  worker --coordinator http://head:7878 --token-file tok --threads 16 --mem-limit 60G --state-dir /scratch/cf
  worker --coordinator https://head:7878 --ca head.pem --token-file tok"
)]
pub struct Args {
    /// Coordinator address, e.g. http://127.0.0.1:7878 (http:// or https://).
    #[arg(long, value_name = "URL", value_parser = parse_coordinator_url)]
    pub coordinator: CoordinatorUrl,

    /// Number of compute threads (default: all available cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,

    /// File holding the shared token that authenticates this worker to the coordinator and to
    /// other workers (else the CUBEFARM_TOKEN environment variable).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    /// PEM certificate to trust for an https:// coordinator (the CA that signed its
    /// certificate, or that certificate itself if self-signed). Required with https://. Also
    /// trusted for other workers that serve TLS.
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,

    /// Where this worker listens for other workers of a row search (they exchange rows
    /// directly). Default: 127.0.0.1 on any port when the coordinator is on this machine's
    /// loopback, else 0.0.0.0 on any port (which needs a token).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,

    /// The host (or host:port) other workers reach this worker at. Default: the listening
    /// address, or this machine's address on the route to the coordinator.
    #[arg(long, value_name = "HOST")]
    pub advertise: Option<String>,

    /// Certificate and private key (PEM) for the listener of other workers: with them, workers
    /// exchange rows over TLS, trusting --ca.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// The most memory this worker may use, e.g. 3G: the coordinator gives it no more rows
    /// than fit. Default: 90 % of this machine's memory, or of its control group's limit
    /// when that is less (a Slurm step, a container).
    #[arg(long, value_name = "SIZE", value_parser = shared::units::parse_size)]
    pub mem_limit: Option<u64>,

    /// Keep this worker's id and its parts' committed levels here: started again with the same
    /// directory, it comes back as itself with its parts. Default: a temporary directory,
    /// removed at exit.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    /// Give up (exit 1) when the coordinator has not answered for this many seconds in all:
    /// from the start, or since the last time it answered (a restarting coordinator is
    /// waited for this long).
    #[arg(long, value_name = "S", default_value_t = 120)]
    pub connect_timeout: u64,

    /// How the rows a row search sends other workers are packed for the link: auto (raw on
    /// links measured at 350 MB/s or more while the job runs, zstd on slower or not yet
    /// measured ones), none, lz4 or zstd.
    #[arg(long, value_name = "HOW", value_enum, default_value_t = rows::link::Compress::Auto)]
    pub compress: rows::link::Compress,

    /// Coset jobs: read phase 1's distance table (564 MB) from this file, or make it (about 4 s)
    /// and write it there for the next worker or run. Workers on one shared file system can all
    /// name the same file. Default: made by each worker at its first coset.
    #[arg(long, value_name = "FILE")]
    pub phase1_table: Option<PathBuf>,

    /// The indexes the coordinator sends (corners and edges searches, and the h11 index of
    /// H48 table builds): read from DIR/<space>.index or DIR/h11.index instead of downloaded,
    /// or the one downloaded kept there for the next job or worker. A file that fails its
    /// checks is not used. Default: downloaded by each worker for each job (the h11 index
    /// once per process).
    #[arg(long, value_name = "DIR")]
    pub index_dir: Option<PathBuf>,
}

/// Whether `url`'s host is this machine's loopback.
fn is_loopback_url(url: &str) -> bool {
    let rest = url.split("://").nth(1).unwrap_or(url);
    let authority = rest.split('/').next().unwrap_or(rest);
    let host = match authority.rsplit_once(':') {
        Some((h, _)) if !h.is_empty() => h,
        _ => authority,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A coordinator URL whose scheme has been checked to be http or https.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorUrl(String);

impl CoordinatorUrl {
    /// The URL as given on the command line.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the connection uses TLS.
    pub fn is_https(&self) -> bool {
        self.0.starts_with("https://")
    }
}

impl fmt::Display for CoordinatorUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A `--coordinator` value that is not a coordinator's URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadUrl {
    #[error("coordinator URL must start with http:// or https:// (got {0:?}), e.g. http://127.0.0.1:7878")]
    Scheme(String),
    #[error("coordinator URL has no host: {0:?}")]
    NoHost(String),
}

/// Checks that `s` is an `http://` or `https://` URL with a non-empty host.
pub fn parse_coordinator_url(s: &str) -> Result<CoordinatorUrl, BadUrl> {
    let s = s.trim();
    let rest = s
        .strip_prefix("http://")
        .or_else(|| s.strip_prefix("https://"))
        .ok_or_else(|| BadUrl::Scheme(s.into()))?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() {
        return Err(BadUrl::NoHost(s.into()));
    }
    Ok(CoordinatorUrl(s.to_owned()))
}

/// At most two malloc arenas: buffers freed by one thread are reused by the next rather than
/// kept in an arena per thread, so the worker's resident memory stays near what it holds
/// (what --mem-limit bounds).
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes an allocator setting; called before any thread is started.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Runs the worker until the job is done, or until SIGINT/SIGTERM.
pub fn run(args: &Args) -> anyhow::Result<()> {
    if let Some(n) = args.threads {
        rayon::ThreadPoolBuilder::new().num_threads(n as usize).build_global()?;
    }
    let token = cubefarm_proto::auth::load_token(args.token_file.as_deref())?;
    let listen = args.listen.unwrap_or_else(|| {
        let ip = if is_loopback_url(args.coordinator.as_str()) { "127.0.0.1" } else { "0.0.0.0" };
        std::net::SocketAddr::new(ip.parse().expect("an IP address"), 0)
    });
    let physical = shared::units::memory_limit_bytes();
    let mem_limit = args.mem_limit.unwrap_or(physical / 10 * 9);
    if physical > 0 && mem_limit > physical {
        anyhow::bail!(
            "--mem-limit {} is more than this worker may use ({}: the machine's memory, or its control group's limit)",
            shared::units::gib(mem_limit),
            shared::units::gib(physical)
        );
    }
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(c), Some(k)) => Some((c.clone(), k.clone())),
        _ => None,
    };
    let config = client::WorkerConfig {
        coordinator: args.coordinator.as_str().to_string(),
        ca: args.ca.clone(),
        token,
        name: format!("worker-{}", std::process::id()),
        protocol_version: cubefarm_proto::PROTOCOL_VERSION,
        listen,
        advertise: args.advertise.clone(),
        tls,
        mem_limit,
        state_dir: args.state_dir.clone(),
        patience: std::time::Duration::from_secs(args.connect_timeout),
        compress: args.compress,
        phase1_table: args.phase1_table.clone(),
        index_dir: args.index_dir.clone(),
    };
    limit_malloc_arenas();
    // Blocking tasks are computations (each on rayon): a few at a time are enough, and each
    // thread beyond that would hold memory of its own.
    let threads = rayon::current_num_threads();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(2 * threads + 4)
        .build()?;
    let result = runtime.block_on(async {
        tokio::select! {
            r = client::run_worker(config) => r,
            _ = shutdown_signal() => {
                tracing::info!("worker: stopping on signal");
                Ok(())
            }
        }
    });
    drop(runtime);
    if args.state_dir.is_none() {
        rows::remove_temporary_levels();
    }
    result
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(t) => t,
            Err(_) => return ctrl_c.await.unwrap_or(()),
        };
        tokio::select! {
            _ = ctrl_c => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await.unwrap_or(());
}

/// Entry point of the `worker` binary.
pub fn main() -> ExitCode {
    // Clap prints its own usage errors (exit status 2) and --help/--version.
    let args = Args::parse();
    logs::init();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("worker: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
