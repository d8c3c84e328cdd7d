//! `coordinator enumerate`: runs an exact enumeration and prints (and optionally saves) the
//! distribution.

use crate::cluster::Traffic;
use crate::config::{EnumerateConfig, Method};
use crate::driver::{search_levels, SearchSettings};
use crate::output::{peak_rss_bytes, OutputFile};
use crate::resources;
use anyhow::{ensure, Context, Result};
use shared::bfs;
use shared::bfs::owned::PartIndex;
use shared::index_file;
use shared::job::{AnyIndex, RowJob};
use shared::product::ProductSpec;
use shared::report::{thousands, DepthCounts, Distribution};
use shared::space::{RowOrder, Space, Transitions};
use shared::units::gib;
use std::sync::Arc;
use std::time::Instant;

/// Runs the enumeration, prints the table on stdout and progress on stderr.
pub fn run(config: EnumerateConfig) -> Result<()> {
    let json = config.json.as_deref().map(OutputFile::prepare).transpose()?;
    if let Some(dir) = &config.state_dir {
        ensure!(!dir.exists() || dir.is_dir(), "--state-dir {} is not a directory", dir.display());
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create --state-dir {}", dir.display()))?;
    }
    if let Some(count) = config.sample_tasks {
        return super::sample::run(product_spec(&config), &config, count);
    }
    let (distribution, traffic) = compute(&config)?;
    print!("{}", distribution.to_text());
    println!(
        "elapsed {:.2} s, peak RSS {:.1} MiB",
        distribution.elapsed_s,
        distribution.peak_rss_bytes as f64 / 1048576.0
    );
    if let Some(t) = &traffic {
        println!("{}", t.summary());
    }
    if let Some(out) = json {
        let mut text =
            serde_json::to_string(&WithTraffic { distribution: &distribution, traffic: traffic.as_ref() })?;
        text.push('\n');
        out.write(text.as_bytes())?;
        tracing::info!("wrote {}", out.path().display());
    }
    Ok(())
}

/// The JSON of `--json`: the distribution, and on workers what the job moved.
#[derive(serde::Serialize)]
struct WithTraffic<'a> {
    #[serde(flatten)]
    distribution: &'a Distribution,
    #[serde(skip_serializing_if = "Option::is_none")]
    traffic: Option<&'a Traffic>,
}

/// Computes the distribution of a space, reporting progress on stderr; on workers, also what
/// the job moved.
pub fn compute(config: &EnumerateConfig) -> Result<(Distribution, Option<Traffic>)> {
    let start = Instant::now();
    let (order, mut depths, traffic) = match (config.space, config.method) {
        (Space::Cube, _) | (Space::Edges, Method::Product) => {
            super::product::run(product_spec(config), config)?
        }
        (Space::Corners | Space::Edges | Space::H | Space::Hprime, _) => run_rows(config)?,
        (other, _) => anyhow::bail!("{other} is not one of the spaces enumerate counts"),
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
    Ok((distribution, traffic))
}

/// The product job of a configuration using the product method.
fn product_spec(config: &EnumerateConfig) -> ProductSpec {
    let max_depth = config.max_depth.expect("the product method has a --max-depth");
    ProductSpec::new(config.space, config.moves, max_depth)
}

/// Obtains the job's index (refused first if it and the search's bit arrays would not fit) and
/// runs the row search on it.
fn run_rows(config: &EnumerateConfig) -> Result<(u128, Vec<DepthCounts>, Option<Traffic>)> {
    let job = RowJob { space: config.space, moves: config.moves };
    let (index, packed_index) = obtain_index(config, job)?;
    let settings = SearchSettings {
        job,
        max_depth: config.max_depth,
        state_dir: config.state_dir.clone(),
        cluster: config.cluster.clone(),
        positions_only: false,
        level_bits: false,
        packed_index,
    };
    let searched = search_levels(&index, &settings, |_, _| {})?;
    let order = index.order().context("an enumerated space has an order")?;
    Ok((order, searched.depths, searched.traffic))
}

/// The job's index, refused first if it and the search's bit arrays would not fit; where
/// workers receive it and `--index-dir` is given, also its packed bytes: read from there if a
/// whole one is kept, else built and kept there.
fn obtain_index(config: &EnumerateConfig, job: RowJob) -> Result<(AnyIndex, Option<Arc<[u8]>>)> {
    let start = Instant::now();
    // With workers, this process expands no row and holds no bit array: it closes and counts
    // level 0 and schedules the rest (see `cluster::rows`). It still makes the whole index
    // where the workers receive it rather than build it (corners, edges: see
    // `AnyIndex::to_bytes`), and holds its bytes for them besides; otherwise it needs no
    // transitions.
    let distributed = config.cluster.distributed();
    let sends = distributed && job.sends_index();
    let transitions = if distributed && !sends { Transitions::Skip } else { Transitions::Probe };
    // Rows cut among owners come in locality order (fewer images between them).
    let order = if distributed { RowOrder::Locality } else { RowOrder::Representative };
    let kept_dir = config.cluster.index_dir.as_deref().filter(|_| sends);
    if let Some(dir) = kept_dir {
        match index_file::read(dir, &job) {
            Ok(Some(kept)) => {
                resources::check(kept.unpacked_bytes + kept.packed.len() as u64, 0, None, config.mem_limit)?;
                tracing::info!(
                    "index read from {} in {:.1} s: {} rows, {} packed",
                    index_file::path(dir, &job).display(),
                    start.elapsed().as_secs_f64(),
                    thousands(PartIndex::row_count(&kept.index) as u64),
                    gib(kept.packed.len() as u64)
                );
                return Ok((kept.index, Some(Arc::from(kept.packed))));
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(
                "{} is refused ({e}); the index is built and kept there again",
                index_file::path(dir, &job).display()
            ),
        }
    }
    let mut index = job.build_index_checked(transitions, order, |size| {
        let state = if distributed { 0 } else { bfs::state_bytes(size.rows, size.columns) };
        let index = if sends { 2 * size.bytes } else { size.bytes };
        let (memory, disk) = if config.state_dir.is_some() { (index, state) } else { (index + state, 0) };
        tracing::info!(
            "classes in {:.1} s; {} rows x {} columns: index {}, {}",
            start.elapsed().as_secs_f64(),
            thousands(size.rows),
            thousands(size.columns),
            gib(size.bytes),
            match (distributed, config.state_dir.is_some()) {
                (true, _) => "no bit arrays (the levels stay with the workers, as parts)".to_string(),
                (false, on_disk) =>
                    format!("bit arrays {}{}", gib(state), if on_disk { " (on disk)" } else { "" }),
            }
        );
        resources::check(memory, disk, config.state_dir.as_deref(), config.mem_limit)
    })?;
    if distributed {
        // It counts and expands nothing: the workers do.
        index.shrink();
    }
    if matches!(config.space, Space::H | Space::Hprime) {
        tracing::info!("classes are counted under the 16 symmetries that preserve H");
    }
    tracing::info!("index built in {:.1} s", start.elapsed().as_secs_f64());
    let Some(dir) = kept_dir else { return Ok((index, None)) };
    let packed = index_file::pack(&index).context("a sent index packs")?;
    match index_file::write(dir, &job, &packed) {
        Ok(path) => tracing::info!("index kept in {} ({})", path.display(), gib(packed.len() as u64)),
        Err(e) => tracing::warn!("cannot keep the index in {}: {e}", dir.display()),
    }
    Ok((index, Some(Arc::from(packed))))
}
