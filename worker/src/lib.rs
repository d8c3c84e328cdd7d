//! Worker for distributed jobs: connects to a coordinator, leases tasks,
//! computes them and uploads the resulting shards.
//!
//! See [`client::run_worker`] for the loop.

use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

pub mod client;
pub mod logs;

/// Command-line arguments of the `worker` binary.
#[derive(Debug, Clone, Parser)]
#[command(name = "worker", version, about)]
pub struct Args {
    /// Coordinator address, e.g. http://127.0.0.1:50051 (http:// or https://).
    #[arg(long, value_name = "URL", value_parser = parse_coordinator_url)]
    pub coordinator: CoordinatorUrl,

    /// Number of compute threads (default: all available cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,

    /// File holding the token used to authenticate to the coordinator.
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,

    /// PEM certificate to trust for an https:// coordinator (the CA that signed its
    /// certificate, or that certificate itself if self-signed). Required with https://.
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
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

/// Checks that `s` is an `http://` or `https://` URL with a non-empty host.
pub fn parse_coordinator_url(s: &str) -> Result<CoordinatorUrl, String> {
    let s = s.trim();
    let rest = s.strip_prefix("http://").or_else(|| s.strip_prefix("https://")).ok_or_else(|| {
        format!(
            "coordinator URL must start with http:// or https:// (got {s:?}), e.g. http://127.0.0.1:50051"
        )
    })?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() {
        return Err(format!("coordinator URL has no host: {s:?}"));
    }
    Ok(CoordinatorUrl(s.to_owned()))
}

/// Runs the worker until the job is done, or until SIGINT/SIGTERM.
pub fn run(args: &Args) -> Result<(), String> {
    if let Some(n) = args.threads {
        rayon::ThreadPoolBuilder::new().num_threads(n as usize).build_global().map_err(|e| e.to_string())?;
    }
    let token = cubefarm_proto::auth::load_token(args.token_file.as_deref())?;
    let config = client::WorkerConfig {
        coordinator: args.coordinator.as_str().to_string(),
        ca: args.ca.clone(),
        token,
        name: format!("worker-{}", std::process::id()),
        protocol_version: cubefarm_proto::PROTOCOL_VERSION,
    };
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        tokio::select! {
            r = client::run_worker(config) => r.map_err(|e| format!("{e:#}")),
            _ = shutdown_signal() => {
                tracing::info!("worker: stopping on signal");
                Ok(())
            }
        }
    })
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
        Err(msg) => {
            eprintln!("worker: error: {msg}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Args::command().debug_assert();
    }

    #[test]
    fn accepts_http_and_https() {
        let u = parse_coordinator_url("http://127.0.0.1:50051").unwrap();
        assert!(!u.is_https());
        let u = parse_coordinator_url("https://farm.example:443/").unwrap();
        assert!(u.is_https());
    }

    #[test]
    fn rejects_other_schemes_and_empty_host() {
        let err = parse_coordinator_url("127.0.0.1:50051").unwrap_err();
        assert!(err.contains("http:// or https://"), "{err}");
        assert!(parse_coordinator_url("grpc://host:1").is_err());
        assert!(parse_coordinator_url("http://").is_err());
    }

    #[test]
    fn coordinator_is_required() {
        assert!(Args::try_parse_from(["worker"]).is_err());
        let args = Args::try_parse_from(["worker", "--coordinator", "http://localhost:1", "--threads", "4"])
            .unwrap();
        assert_eq!(args.threads, Some(4));
        assert!(Args::try_parse_from(["worker", "--coordinator", "ftp://x"]).is_err());
        assert!(Args::try_parse_from(["worker", "--coordinator", "http://x", "--threads", "0"]).is_err());
    }
}
