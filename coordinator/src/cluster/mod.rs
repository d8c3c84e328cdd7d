//! The cluster runtime: a job served to gRPC workers. [`hub`] is where the job's thread and the
//! service meet ([`Hub`]): the workers ([`members`], with liveness), levels of leased tasks
//! ([`leases`]), and a row search whose rows the workers own ([`rows`]), each protocol's state
//! and rules in its core in `shared::runtime`; [`service`] is the gRPC service over it, the only
//! module that speaks tonic's types; [`serve`] runs the service on a listener, and
//! [`with_cluster`] runs a job with the service (and any in-process workers) around it.

pub mod hub;
pub mod leases;
pub mod members;
pub mod metrics;
pub mod rows;
pub mod service;
pub mod work;

pub mod error;

pub use error::ClusterError;
pub use hub::{Hub, Traffic};
pub use leases::Refusal;
pub use service::{print_status, Tls};
pub use work::CosetWords;

use crate::progress::Reporter;
use anyhow::{bail, Result};
use cubefarm_proto::auth::Token;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// Refuses, before any work, a listener beyond loopback without a token (the token is read
/// again when the job starts and the listener is bound).
pub fn refuse_open_listener(addr: SocketAddr, token_file: Option<&std::path::Path>) -> Result<()> {
    let token = cubefarm_proto::auth::load_token(token_file)?;
    Ok(cubefarm_proto::auth::check_listen(addr, token.as_ref())?)
}

/// Where a job's tasks run: embedded (no listener, no in-process workers), or served to workers.
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    pub listen: Option<SocketAddr>,
    /// In-process workers to start.
    pub workers: u32,
    pub token_file: Option<PathBuf>,
    pub tls: Option<Tls>,
    pub tasks_per_level: u32,
    pub lease_secs: u64,
    /// A worker silent this long is lost (its leases and rows recovered).
    pub liveness_secs: u64,
    /// A row search starts once this many workers are ready.
    pub min_workers: u32,
    /// Serve Prometheus metrics of the job here ([`metrics`]).
    pub metrics: Option<SocketAddr>,
    /// Where in-process workers keep phase 1's table for coset tasks (a coset job's
    /// `--phase1-table`).
    pub phase1_table: Option<PathBuf>,
    /// Where this process and its in-process workers keep a row search's packed index
    /// (`--index-dir`, `shared::index_file`).
    pub index_dir: Option<PathBuf>,
}

impl ClusterConfig {
    /// Checks the flags and loads the TLS material now, so that a bad file fails before any work.
    pub fn new(
        listen: Option<SocketAddr>,
        workers: Option<u32>,
        token_file: Option<PathBuf>,
        tls: (Option<PathBuf>, Option<PathBuf>),
        tasks_per_level: u32,
        (lease_secs, liveness_secs): (u64, u64),
        min_workers: Option<u32>,
    ) -> Result<Self> {
        let tls = match tls {
            (None, None) => None,
            (Some(_), None) => bail!("--tls-cert needs --tls-key FILE, the certificate's private key"),
            (None, Some(_)) => bail!("--tls-key needs --tls-cert FILE, the certificate it belongs to"),
            (Some(_), Some(_)) if listen.is_none() => {
                bail!("--tls-cert and --tls-key need --listen ADDR (they secure the workers' listener)")
            }
            (Some(cert), Some(key)) => Some(Tls::load(&cert, &key)?),
        };
        if workers == Some(0) && listen.is_none() {
            bail!("--workers 0 starts no worker and --listen ADDR is not given: nothing would run the job (leave --workers out to run it in this process)");
        }
        if min_workers.is_some() && listen.is_none() && workers.is_none() {
            bail!("--min-workers needs --listen ADDR or --workers N");
        }
        if let Some(addr) = listen {
            refuse_open_listener(addr, token_file.as_deref())?;
        }
        let workers = workers.unwrap_or(0);
        Ok(ClusterConfig {
            listen,
            workers,
            token_file,
            tls,
            tasks_per_level,
            lease_secs,
            liveness_secs,
            min_workers: min_workers.unwrap_or(workers.max(1)),
            metrics: None,
            phase1_table: None,
            index_dir: None,
        })
    }

    /// The embedded default: every task on this process's threads.
    pub fn embedded() -> Self {
        ClusterConfig {
            listen: None,
            workers: 0,
            token_file: None,
            tls: None,
            tasks_per_level: shared::space::locality::PARTS,
            lease_secs: 600,
            liveness_secs: 30,
            min_workers: 1,
            metrics: None,
            phase1_table: None,
            index_dir: None,
        }
    }

    /// Whether tasks go to workers (a listener, or in-process workers).
    pub fn distributed(&self) -> bool {
        self.listen.is_some() || self.workers > 0
    }
}

/// What a listener serves: the job's hub, the token workers must present, and TLS.
#[derive(Clone)]
pub struct ServeConfig {
    pub hub: Arc<Hub>,
    pub token: Option<Token>,
    pub tls: Option<Tls>,
}

/// What ends a server: a future that resolves when it should stop.
pub type Shutdown = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// A running server, as a future that ends when it stops.
pub type Server = std::pin::Pin<Box<dyn std::future::Future<Output = Result<()>> + Send>>;

/// Serves `config` on `listener` until `shutdown` resolves. Returns the bound address at once,
/// with the server's future (to spawn on a tokio runtime).
///
/// Both futures are boxed, so that tonic's server is compiled once, in this crate, for every
/// caller (each future type would otherwise make another copy of it).
pub fn serve(
    config: ServeConfig,
    listener: tokio::net::TcpListener,
    shutdown: Shutdown,
) -> std::io::Result<(SocketAddr, Server)> {
    let addr = listener.local_addr()?;
    let server = async move {
        service::run(listener, config.hub, config.token, config.tls, shutdown)
            .await
            .map_err(|e| anyhow::anyhow!("the gRPC server failed: {e}"))
    };
    Ok((addr, Box::pin(server)))
}

/// Binds the listening socket (refusing non-loopback without a token).
pub async fn bind(addr: SocketAddr, token: Option<&Token>) -> Result<tokio::net::TcpListener> {
    cubefarm_proto::auth::check_listen(addr, token)?;
    tokio::net::TcpListener::bind(addr).await.map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))
}

/// Serves workers over gRPC (and starts the in-process ones) while `job` runs on this thread
/// with the hub; returns the job's result once the workers have been dismissed.
pub fn with_cluster<T>(
    cluster: &ClusterConfig,
    job_spec: String,
    reporter: &Reporter,
    job: impl FnOnce(&Hub) -> Result<T>,
) -> Result<T> {
    let (mut job, mut result) = (Some(job), None);
    run_cluster(cluster, job_spec, reporter, &mut |hub| {
        if let Some(job) = job.take() {
            result = Some(job(hub));
        }
    })?;
    result.expect("the cluster runs its job once")
}

/// [`with_cluster`] without its type parameters: the runtime, the servers and the in-process
/// workers are compiled once, not once per job type. Returns the servers' error, if any.
fn run_cluster(
    cluster: &ClusterConfig,
    job_spec: String,
    reporter: &Reporter,
    job: &mut dyn FnMut(&Hub),
) -> Result<()> {
    let token = cubefarm_proto::auth::load_token(cluster.token_file.as_deref())?;
    let runtime = tokio::runtime::Runtime::new()?;
    let addr = cluster.listen.unwrap_or_else(|| "127.0.0.1:0".parse().expect("a socket address"));
    let listener = runtime.block_on(bind(addr, token.as_ref()))?;
    let hub = Arc::new(Hub::new(
        1,
        job_spec,
        std::time::Duration::from_secs(cluster.lease_secs),
        std::time::Duration::from_secs(cluster.liveness_secs),
        cluster.tasks_per_level as usize,
    ));
    let status = hub.clone();
    reporter.set_extra(move || {
        let s = status.status();
        format!("{}/{} done, {} at work, {} live workers", s.done, s.tasks, s.leased, s.live_workers)
    });
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let until_stopped = move || -> Shutdown {
        let mut stopped = stopped.clone();
        Box::pin(async move {
            let _ = stopped.wait_for(|s| *s).await;
        })
    };
    let config = ServeConfig { hub: hub.clone(), token: token.clone(), tls: cluster.tls.clone() };
    let (local, server) = serve(config.clone(), listener, until_stopped())?;
    tracing::info!("serving workers on {local}");
    if cluster.tls.is_some() {
        tracing::info!("workers connect over TLS: https://HOST:{} with --ca", local.port());
    }
    let mut servers = vec![runtime.spawn(server)];
    let inproc = cluster.workers;
    // In-process workers reach a TLS coordinator through a second, plain loopback listener:
    // they hold no CA, and their traffic never leaves this process.
    let inproc_addr = if cluster.tls.is_some() && inproc > 0 {
        let plain = runtime.block_on(bind("127.0.0.1:0".parse()?, token.as_ref()))?;
        let (addr, server) = serve(ServeConfig { tls: None, ..config }, plain, until_stopped())?;
        servers.push(runtime.spawn(server));
        addr
    } else {
        local
    };
    // Without --listen no other worker can come: a failed in-process worker ends the job
    // instead of leaving it waiting for leases nobody will take.
    let alone = cluster.listen.is_none();
    let workers: Vec<_> = (0..inproc)
        .map(|i| {
            let config = worker::client::WorkerConfig {
                phase1_table: cluster.phase1_table.clone(),
                index_dir: cluster.index_dir.clone(),
                ..worker::client::WorkerConfig::loopback(
                    format!("http://{inproc_addr}"),
                    token.clone(),
                    format!("in-process-{i}"),
                )
            };
            let hub = hub.clone();
            runtime.spawn(async move {
                let result = worker::client::run_worker(config).await;
                if let Err(e) = &result {
                    tracing::error!("in-process worker {i} failed: {e:#}");
                    if alone {
                        hub.abort(format!("in-process worker {i} failed: {e:#}"));
                    }
                }
                result
            })
        })
        .collect();
    match cluster.metrics {
        None => job(&hub),
        Some(addr) => {
            let listener = std::net::TcpListener::bind(addr)
                .map_err(|e| anyhow::anyhow!("cannot serve metrics on {addr}: {e}"))?;
            tracing::info!("serving metrics on http://{}/metrics", listener.local_addr()?);
            let stop = std::sync::atomic::AtomicBool::new(false);
            std::thread::scope(|scope| {
                scope.spawn(|| metrics::serve(listener, token.clone(), &hub, reporter, &stop));
                job(&hub);
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            })
        }
    }
    hub.finish();
    for w in workers {
        if let Err(e) = runtime.block_on(w) {
            tracing::error!("in-process worker panicked: {e}");
        }
    }
    if inproc > 0 {
        // In-process workers keep their levels in this process's temporary directory.
        worker::rows::remove_temporary_levels();
    }
    // Give remote workers a moment to hear that the job is done.
    hub.wait_for_goodbyes(std::time::Duration::from_secs(10));
    let _ = stop.send(true);
    for server in servers {
        runtime.block_on(server)??;
    }
    Ok(())
}
