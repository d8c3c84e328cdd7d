//! `coordinator enumerate`: runs an exact enumeration and prints (and optionally saves) the
//! distribution.

use crate::cli::{ClusterArgs, EnumerateArgs, Method, Metric, Space};
use crate::cluster::{ClusterExpander, Shared};
use crate::output::{peak_rss_bytes, OutputFile};
use crate::progress::Reporter;
use crate::resources;
use anyhow::{ensure, Result};
use shared::bfs::job::{JobSpec, SpaceKind};
use shared::bfs::{self, BfsOptions, DepthCounts, Direction, KociembaSpace, LevelReport, RowIndex, RowSpace};
use shared::coord::{corner_tetrads, edge_slices, BlockLayout, Part};
use shared::cube::{Move, MoveSet, Pieces};
use shared::product::{ProductSpace, ProductSpec};
use shared::report::{thousands, Distribution};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

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
    pub cluster: ClusterArgs,
    /// TLS for the workers' listener, from --tls-cert and --tls-key (checked before any work).
    pub tls: Option<tonic::transport::ServerTlsConfig>,
}

impl TryFrom<EnumerateArgs> for EnumerateConfig {
    type Error = anyhow::Error;

    fn try_from(a: EnumerateArgs) -> Result<Self> {
        let moves = match (a.space, a.metric) {
            (Space::H | Space::Hprime, Some(_)) => {
                anyhow::bail!("{} uses the 10 moves of H; --metric does not apply", a.space.name())
            }
            (Space::H | Space::Hprime, None) => MoveSet::KociembaH,
            (_, metric) => metric.unwrap_or(Metric::Htm).move_set(),
        };
        let method = match (a.space, a.method) {
            (Space::Cube, None | Some(Method::Product)) => Method::Product,
            (Space::Cube, Some(Method::Rows)) => {
                anyhow::bail!("the cube is too big for the row BFS; use --method product")
            }
            (Space::Edges, Some(method)) => method,
            (_, None | Some(Method::Rows)) => Method::Rows,
            (_, Some(Method::Product)) => {
                anyhow::bail!("--method product is for the cube and edges, not {}", a.space.name())
            }
        };
        if method == Method::Product {
            ensure!(
                a.max_depth.is_some(),
                "the product method needs --max-depth N (it stores the positions up to depth N/2)"
            );
        }
        let tls = a.cluster.server_tls()?;
        Ok(EnumerateConfig {
            tls,
            method,
            space: a.space,
            moves,
            max_depth: a.max_depth,
            json: a.json,
            state_dir: a.state_dir,
            mem_limit: a.mem_limit,
            cluster: a.cluster,
        })
    }
}

impl ClusterArgs {
    /// The TLS configuration from --tls-cert and --tls-key, checked now so that a bad file or
    /// flag fails before any work.
    pub fn server_tls(&self) -> Result<Option<tonic::transport::ServerTlsConfig>> {
        match (&self.tls_cert, &self.tls_key) {
            (None, None) => Ok(None),
            (Some(_), None) => {
                anyhow::bail!("--tls-cert needs --tls-key FILE, the certificate's private key")
            }
            (None, Some(_)) => {
                anyhow::bail!("--tls-key needs --tls-cert FILE, the certificate it belongs to")
            }
            (Some(_), Some(_)) if self.listen.is_none() => {
                anyhow::bail!(
                    "--tls-cert and --tls-key need --listen ADDR (they secure the workers' listener)"
                )
            }
            (Some(cert), Some(key)) => {
                cubefarm_proto::tls::server_config(cert, key).map(Some).map_err(anyhow::Error::msg)
            }
        }
    }
}

impl Metric {
    pub fn move_set(self) -> MoveSet {
        match self {
            Metric::Htm => MoveSet::Htm,
            Metric::Qtm => MoveSet::Qtm,
        }
    }
}

impl Space {
    /// The space as the row BFS knows it (the cube has no row index).
    pub fn row_space(self) -> Option<SpaceKind> {
        match self {
            Space::Corners => Some(SpaceKind::Corners),
            Space::Edges => Some(SpaceKind::Edges),
            Space::H => Some(SpaceKind::H),
            Space::Hprime => Some(SpaceKind::Hprime),
            Space::Cube => None,
        }
    }

    pub fn name(self) -> &'static str {
        self.row_space().map_or("cube", SpaceKind::name)
    }
}

/// Runs the enumeration, prints the table on stdout and progress on stderr.
pub fn run(config: EnumerateConfig) -> Result<()> {
    let json = config.json.as_deref().map(OutputFile::prepare).transpose()?;
    if let Some(dir) = &config.state_dir {
        ensure!(dir.is_dir(), "--state-dir {} is not a directory", dir.display());
    }
    let distribution = compute(&config)?;
    print!("{}", distribution.to_text());
    println!(
        "elapsed {:.2} s, peak RSS {:.1} MiB",
        distribution.elapsed_s,
        distribution.peak_rss_bytes as f64 / 1048576.0
    );
    if let Some(out) = json {
        let mut text = serde_json::to_string(&distribution)?;
        text.push('\n');
        out.write(text.as_bytes())?;
        tracing::info!("wrote {}", out.path().display());
    }
    Ok(())
}

/// Computes the distribution of a space, reporting progress on stderr.
pub fn compute(config: &EnumerateConfig) -> Result<Distribution> {
    let start = Instant::now();
    let moves = config.moves.moves();
    let (order, mut depths) = match (config.space, config.method) {
        (Space::Cube, _) => product(ProductSpace::Cube, config)?,
        (Space::Edges, Method::Product) => product(ProductSpace::Edges, config)?,
        (Space::Corners, _) => run_rows(corner_tetrads(), &moves, config)?,
        (Space::Edges, Method::Rows) => run_rows(edge_slices(), &moves, config)?,
        (Space::H | Space::Hprime, _) => {
            let space = KociembaSpace::new(config.space == Space::H);
            tracing::info!("classes are counted under the 16 symmetries that preserve H");
            (space.order() as u128, search(&space, &moves, config)?)
        }
    };
    // A resumed job's journal may reach deeper than this run's --max-depth.
    if let Some(m) = config.max_depth {
        depths.truncate(m as usize + 1);
    }
    let distribution = Distribution {
        space: config.space.name().to_string(),
        metric: config.moves.name().to_string(),
        order,
        depths,
        elapsed_s: start.elapsed().as_secs_f64(),
        peak_rss_bytes: peak_rss_bytes(),
    };
    if config.max_depth.is_none() {
        ensure!(
            distribution.is_complete(),
            "internal check failed: positions sum to {} but the space has {}",
            distribution.total_positions(),
            order
        );
    }
    Ok(distribution)
}

/// Runs the product enumeration of a space.
fn product(space: ProductSpace, config: &EnumerateConfig) -> Result<(u128, Vec<DepthCounts>)> {
    let max_depth = config.max_depth.expect("the product method has a --max-depth");
    crate::product::run(ProductSpec { space, moves: config.moves, max_depth }, config)
}

/// Builds the row space of a block layout (after checking the memory it will take) and runs
/// the search on it.
fn run_rows<const N: usize, const O: u8>(
    layout: BlockLayout<N, O>,
    moves: &[Move],
    config: &EnumerateConfig,
) -> Result<(u128, Vec<DepthCounts>)>
where
    Pieces<N, O>: Part,
{
    let start = Instant::now();
    let classes = RowSpace::build_classes(&layout);
    let rows = classes.class_count() as u64;
    let state = bfs::state_bytes(rows, layout.column_count() as u64);
    let index = RowSpace::<N, O>::memory_bytes(&classes);
    let (memory, disk) = if config.state_dir.is_some() { (index, state) } else { (index + state, 0) };
    tracing::info!(
        "classes in {:.1} s; {} rows x {} columns: index {:.2} GiB, bit arrays {:.2} GiB{}",
        start.elapsed().as_secs_f64(),
        thousands(rows),
        thousands(layout.column_count() as u64),
        index as f64 / (1u64 << 30) as f64,
        state as f64 / (1u64 << 30) as f64,
        if config.state_dir.is_some() { " (on disk)" } else { "" }
    );
    resources::check(memory, disk, config.state_dir.as_deref(), config.mem_limit)?;
    let space = RowSpace::with_classes(layout, classes);
    tracing::info!("index built in {:.1} s", start.elapsed().as_secs_f64());
    Ok((space.order() as u128, search(&space, moves, config)?))
}

/// Runs the search with live progress on stderr.
fn search<I: RowIndex>(space: &I, moves: &[Move], config: &EnumerateConfig) -> Result<Vec<DepthCounts>> {
    search_levels(space, moves, &SearchSettings::from(config), |_, _| {})
}

/// What a search needs besides its index: the job's name for workers, limits and placement.
pub struct SearchSettings {
    pub job: JobSpec,
    pub max_depth: Option<u32>,
    pub state_dir: Option<PathBuf>,
    pub cluster: ClusterArgs,
    /// TLS for the workers' listener (from [`ClusterArgs::server_tls`]).
    pub tls: Option<tonic::transport::ServerTlsConfig>,
}

impl From<&EnumerateConfig> for SearchSettings {
    fn from(c: &EnumerateConfig) -> Self {
        SearchSettings {
            job: job_spec(c),
            max_depth: c.max_depth,
            state_dir: c.state_dir.clone(),
            cluster: c.cluster.clone(),
            tls: c.tls.clone(),
        }
    }
}

/// Runs a search embedded or distributed, with live progress on stderr, calling `on_level` with
/// each new level's report and entries (levels restored from a journal are not replayed).
pub fn search_levels<I: RowIndex>(
    space: &I,
    moves: &[Move],
    config: &SearchSettings,
    mut on_level: impl FnMut(&LevelReport, &[u64]),
) -> Result<Vec<DepthCounts>> {
    let reporter = Reporter::new(space.row_count() as u64);
    let journal = match &config.state_dir {
        Some(dir) => {
            let identity =
                format!("{} rows={} columns={}", config.job, space.row_count(), space.column_count());
            Some(crate::journal::RedbJournal::open(dir, &identity)?)
        }
        None => None,
    };
    let finished = journal.as_ref().map(|j| j.1.clone()).unwrap_or_default();
    if let (Some(last), Some(dir)) = (finished.last(), &config.state_dir) {
        tracing::info!("resuming after depth {} from the journal in {}", last.counts.depth, dir.display());
        for r in &finished {
            reporter.level_done(&LevelReport {
                counts: r.counts,
                entries: r.entries,
                direction: Direction::Start,
                seconds: 0.0,
            });
        }
    }
    let options = BfsOptions {
        max_depth: config.max_depth,
        state_dir: config.state_dir.clone(),
        progress: Some(&reporter.progress),
        journal: journal.as_ref().map(|j| &j.0 as &dyn shared::bfs::Journal),
        resume: finished.last().copied(),
        resumed_counts: finished.iter().map(|r| r.counts).collect(),
    };
    let cluster = &config.cluster;
    let distributed = cluster.listen.is_some() || cluster.workers.is_some();
    let depths = std::thread::scope(|scope| {
        scope.spawn(|| reporter.display_loop());
        let result = if distributed {
            run_distributed(space, moves, config, &options, &reporter, &mut on_level)
        } else {
            bfs::run(space, moves, &options, |level, bits| {
                reporter.level_done(level);
                on_level(level, bits);
            })
            .map_err(|e| anyhow::anyhow!(e))
        };
        reporter.finish();
        result
    })?;
    Ok(depths)
}

/// The job's spec string, from which a worker builds the same index.
fn job_spec(config: &EnumerateConfig) -> JobSpec {
    JobSpec { space: config.space.row_space().expect("a row space"), moves: config.moves }
}

/// Runs a search with a [`ClusterExpander`] inside [`with_cluster`].
fn run_distributed<I: RowIndex>(
    space: &I,
    moves: &[Move],
    config: &SearchSettings,
    options: &BfsOptions,
    reporter: &Reporter,
    on_level: &mut impl FnMut(&LevelReport, &[u64]),
) -> Result<Vec<DepthCounts>> {
    with_cluster(&config.cluster, config.tls.clone(), config.job.to_string(), reporter, |shared| {
        bfs::run_with(space, moves, options, &ClusterExpander { shared }, |level, bits| {
            reporter.level_done(level);
            on_level(level, bits);
            let (out, inn) = shared.traffic();
            tracing::info!(
                "traffic so far (compressed): {:.1} MiB to workers, {:.1} MiB from workers",
                out as f64 / 1048576.0,
                inn as f64 / 1048576.0
            );
        })
        .map_err(|e| anyhow::anyhow!(e))
    })
}

/// Serves workers over gRPC (and starts the in-process ones) while `job` runs on this thread
/// with the scheduler; returns the job's result once the workers have been dismissed.
pub fn with_cluster<T>(
    cluster: &ClusterArgs,
    tls: Option<tonic::transport::ServerTlsConfig>,
    job_spec: String,
    reporter: &Reporter,
    job: impl FnOnce(&Shared) -> Result<T>,
) -> Result<T> {
    let token =
        cubefarm_proto::auth::load_token(cluster.token_file.as_deref()).map_err(anyhow::Error::msg)?;
    let runtime = tokio::runtime::Runtime::new()?;
    let addr = cluster.listen.unwrap_or_else(|| "127.0.0.1:0".parse().expect("a socket address"));
    let listener = runtime.block_on(crate::service::bind(addr, token.as_ref()))?;
    let local = listener.local_addr()?;
    tracing::info!("serving workers on {local}");
    if tls.is_some() {
        tracing::info!("workers connect over TLS: https://HOST:{} with --ca", local.port());
    }
    let shared = Arc::new(Shared::new(
        1,
        job_spec,
        std::time::Duration::from_secs(cluster.lease_secs),
        cluster.tasks_per_level as usize,
    ));
    let status = shared.clone();
    reporter.set_extra(move || {
        let (_, total, done, running, workers, _) = status.status();
        format!("tasks {done}/{total} done, {running} leased, {workers} live workers")
    });
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let until_stopped = move || {
        let mut stopped = stopped.clone();
        async move {
            let _ = stopped.wait_for(|s| *s).await;
        }
    };
    let mut servers = vec![runtime.spawn(crate::service::serve(
        listener,
        shared.clone(),
        token.clone(),
        tls.clone(),
        until_stopped(),
    ))];
    let inproc = cluster.workers.unwrap_or(0);
    // In-process workers reach a TLS coordinator through a second, plain loopback listener:
    // they hold no CA, and their traffic never leaves this process.
    let inproc_addr = if tls.is_some() && inproc > 0 {
        let plain = runtime.block_on(crate::service::bind("127.0.0.1:0".parse()?, token.as_ref()))?;
        let addr = plain.local_addr()?;
        servers.push(runtime.spawn(crate::service::serve(
            plain,
            shared.clone(),
            token.clone(),
            None,
            until_stopped(),
        )));
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
                coordinator: format!("http://{inproc_addr}"),
                ca: None,
                token: token.clone(),
                name: format!("in-process-{i}"),
                protocol_version: cubefarm_proto::PROTOCOL_VERSION,
            };
            let shared = shared.clone();
            runtime.spawn(async move {
                let result = worker::client::run_worker(config).await;
                if let Err(e) = &result {
                    tracing::error!("in-process worker {i} failed: {e:#}");
                    if alone {
                        shared.abort(format!("in-process worker {i} failed: {e:#}"));
                    }
                }
                result
            })
        })
        .collect();
    let result = job(&shared);
    shared.finish();
    for w in workers {
        if let Err(e) = runtime.block_on(w) {
            tracing::error!("in-process worker panicked: {e}");
        }
    }
    // Give remote workers a moment to hear that the job is done.
    shared.wait_for_goodbyes(std::time::Duration::from_secs(3));
    let _ = stop.send(true);
    for server in servers {
        runtime.block_on(server)?.map_err(|e| anyhow::anyhow!("the gRPC server failed: {e}"))?;
    }
    result
}
