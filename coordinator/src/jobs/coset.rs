//! `coset`: cosets of H solved whole (docs/coset.md), each position at its exact distance up to
//! a depth, or every position proven within a bound and the rest listed: embedded, one coset
//! after another on this process's threads, or as leased
//! tasks of workers (a range of cosets each; the representatives are the job's input). A coset
//! that one of the 16 symmetries of H maps onto a coset given before it is not solved: it takes
//! that coset's result (`shared::coset::classes`). Cosets run in chunks; with `--state-dir` each
//! finished chunk's results are journaled, and the same command run again computes only the
//! chunks still missing.

use super::chunks::Chunks;
use crate::cluster::{with_cluster, CosetWords, Traffic};
use crate::config::CosetConfig;
use crate::output::{peak_rss_bytes, OutputFile};
use crate::progress::Reporter;
use crate::resources::check_memory;
use anyhow::{Context, Result};
use shared::checksum::crc32;
use shared::coset::classes::{conjugate_unreached, Classes, Source};
use shared::coset::pages::Layout;
use shared::coset::phase1_file::{self, Origin};
use shared::coset::{
    unreached_position, CosetDistances, CosetSolver, CosetSpec, COSET_SIZE, MAX_UNREACHED, STATE_BYTES,
};
use shared::cube::{apply_moves, format_moves, Cube, Singmaster};
use shared::job::JobSpec;
use shared::report::thousands;
use shared::units::gib;
use shared::wire;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Cosets in one chunk (journaled together): a bound-20 run of a coset takes about 40 s on two
/// cores, so a kill loses at most about ten minutes of work there.
const COSETS_PER_CHUNK: usize = 16;

/// One coset's result, as `--json` writes it.
#[derive(serde::Serialize)]
struct CosetResult {
    representative: String,
    counts: Vec<u64>,
    beyond: u64,
    /// Time to solve it (0 for a coset read from another).
    seconds: f64,
    /// The coset given earlier whose result this one's is, through a symmetry of H.
    #[serde(skip_serializing_if = "Option::is_none")]
    solved_as: Option<String>,
    /// Cosets in its class under the 16 symmetries of H: its weight in a sum over all cosets.
    class_size: u32,
}

/// The JSON of `--json`.
#[derive(serde::Serialize)]
struct CosetsJson<'a> {
    /// "exact" (counts by exact distance) or "bound" (counts by the depth first reached).
    mode: &'static str,
    depth: u32,
    search_to: u32,
    cosets: &'a [CosetResult],
    /// Sums over the cosets, per depth.
    counts: Vec<u64>,
    beyond: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    traffic: Option<Traffic>,
}

pub fn run(config: &CosetConfig) -> Result<()> {
    let json = config.json.as_deref().map(OutputFile::prepare).transpose()?;
    let unreached_file = config.unreached.as_deref().map(OutputFile::prepare).transpose()?;
    let start = Instant::now();
    let spec = config.spec;
    let distributed = config.cluster.distributed();
    if !distributed {
        check_memory(STATE_BYTES, config.mem_limit, "")
            .context("a coset's run holds two bits per position of H")?;
        eprintln!(
            "cosets of H: {} positions each, {} of bit arrays",
            thousands(COSET_SIZE),
            gib(STATE_BYTES)
        );
    }
    let solver = if distributed {
        None
    } else if let Some(path) = &config.phase1_table {
        let (phase1, origin) = phase1_file::load_or_make(path)?;
        match origin {
            Origin::Read => eprintln!("phase-1 table read from {}", path.display()),
            Origin::Written => eprintln!("phase-1 table made and written to {}", path.display()),
        }
        Some(CosetSolver::with_phase1(phase1))
    } else {
        let made = Instant::now();
        eprintln!("making phase 1's distance table (--phase1-table FILE keeps it for the next run)");
        let solver = CosetSolver::new()?;
        eprintln!("phase 1's distance table made in {:.1} s", made.elapsed().as_secs_f64());
        Some(solver)
    };
    let reps: Vec<Cube> = config.cosets.iter().map(|(_, moves)| apply_moves(moves)).collect();
    let classes = Classes::of(&reps, config.reduce);
    let solved = classes.solved();
    if solved.len() < reps.len() {
        eprintln!(
            "{} cosets given, {} to solve: the others are images of those under the 16 symmetries of H \
             (--every-coset solves each)",
            reps.len(),
            solved.len()
        );
    }
    // The representatives as workers read them: one canonical move sequence a line.
    let list: String = solved.iter().map(|&i| format_moves(&config.cosets[i].1) + "\n").collect();
    let n = solved.len();
    let chunks: Vec<Range<u32>> =
        (0..n).step_by(COSETS_PER_CHUNK).map(|a| a as u32..(a + COSETS_PER_CHUNK).min(n) as u32).collect();
    let identity = format!("{spec} cosets={n} list-crc32={:08x}", crc32(list.as_bytes()));
    let mut chunks = Chunks::open(chunks, config.state_dir.as_deref(), &identity, "cosets")?;
    let reporter = Reporter::new(n as u64).with_unit("cosets");
    let done = &reporter.progress.rows_done;
    // Runs the chunks not yet finished, checking each chunk's words whoever made them: every
    // coset's counts add up to a coset.
    let mut run_chunks = |run: &mut dyn FnMut(u32, Range<u32>) -> Result<Vec<u64>>| {
        chunks.run(&reporter, &mut |chunk, range| {
            let words = run(chunk, range.clone())?;
            wire::coset::decode(&words, spec, range.len())?;
            Ok(words)
        })
    };
    let traffic = reporter.showing(|| {
        match &solver {
            Some(solver) => run_chunks(&mut |_, range| {
                let mut words = Vec::new();
                // The display counts cosets and shows the depth the running one is at.
                for &i in &solved[range.start as usize..range.end as usize] {
                    let t = Instant::now();
                    let found = solver.solve(&reps[i], spec, &reporter.progress)?;
                    words.extend(wire::coset::encode(&found, spec, t.elapsed().as_millis() as u64));
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok(words)
            })
            .map(|()| None),
            None => with_cluster(&config.cluster, JobSpec::Cosets(spec).to_string(), &reporter, |hub| {
                hub.publish_input(hub.job(), "cosets/0", list.as_bytes());
                // Each chunk is a level of its own, named by the chunk's index.
                run_chunks(&mut |chunk, range| {
                    Ok(hub.run_cosets(chunk, range, words_per_coset(spec), STATE_BYTES, done)?)
                })?;
                Ok(Some(hub.traffic()))
            }),
        }
    })?;
    let words = chunks.into_words();
    let solved_found = wire::coset::decode(&words, spec, n)?;
    // A bound run's unreached positions are numbered by their elements of H.
    let layout = spec.is_bound().then(Layout::new);
    let found = every_coset(&reps, &classes, solved_found, layout.as_ref());
    let results: Vec<CosetResult> = config
        .cosets
        .iter()
        .zip(&found)
        .enumerate()
        .map(|(i, ((text, _), (CosetDistances { counts, beyond, .. }, millis)))| CosetResult {
            representative: text.clone(),
            counts: counts.clone(),
            beyond: *beyond,
            seconds: *millis as f64 / 1000.0,
            solved_as: match classes.sources[i] {
                Source::Solved => None,
                Source::Conjugate { of, .. } => Some(config.cosets[of].0.clone()),
            },
            class_size: classes.class_sizes[i],
        })
        .collect();
    let depth = spec.depth as usize;
    let heading = if spec.is_bound() { "first reached at" } else { "distance" };
    for r in &results {
        match &r.solved_as {
            None => println!("coset of {:?} ({:.1} s)", r.representative, r.seconds),
            Some(of) => println!("coset of {:?} (that of {of:?} under a symmetry of H)", r.representative),
        }
        print_counts(&r.counts, r.beyond, depth, heading);
    }
    let sums: Vec<u64> = (0..=depth).map(|d| results.iter().map(|r| r.counts[d]).sum()).collect();
    let beyond = results.iter().map(|r| r.beyond).sum();
    if results.len() > 1 {
        println!("all {} cosets", results.len());
        print_counts(&sums, beyond, depth, heading);
    }
    if let (Some(out), Some(path), Some(layout)) = (unreached_file, &config.unreached, &layout) {
        // The positions in coset order, each coset's in the order of its elements of H.
        let mut text = String::new();
        for (rep, (found, _)) in reps.iter().zip(&found) {
            for &index in &found.unreached {
                text.push_str(&format!("SING {}\n", Singmaster(&unreached_position(layout, rep, index))));
            }
        }
        out.write(text.as_bytes())
            .with_context(|| format!("writing the unreached positions to {}", path.display()))?;
        eprintln!(
            "{} position(s) not reached within {} moves written to {}",
            thousands(beyond),
            spec.depth,
            path.display()
        );
    }
    eprintln!("{n} coset(s) in {:.1} s, peak RSS {}", start.elapsed().as_secs_f64(), gib(peak_rss_bytes()));
    if let Some(out) = json {
        let mode = if spec.is_bound() { "bound" } else { "exact" };
        let value = CosetsJson {
            mode,
            depth: spec.depth,
            search_to: spec.search_to,
            cosets: &results,
            counts: sums,
            beyond,
            traffic,
        };
        out.write(serde_json::to_string_pretty(&value)?.as_bytes())?;
    }
    Ok(())
}

/// Every coset's result from those of the cosets solved (in the order of `classes.solved()`):
/// a coset read from another has its counts, its unreached positions conjugated (a bound run's,
/// through `layout`), and no time of its own.
fn every_coset(
    reps: &[Cube],
    classes: &Classes,
    solved: Vec<(CosetDistances, u64)>,
    layout: Option<&Layout>,
) -> Vec<(CosetDistances, u64)> {
    let mut solved = solved.into_iter();
    let mut out: Vec<(CosetDistances, u64)> = Vec::with_capacity(reps.len());
    for (i, source) in classes.sources.iter().enumerate() {
        let result = match *source {
            Source::Solved => solved.next().expect("a result for every coset solved"),
            Source::Conjugate { of, through } => {
                let mut found = out[of].0.clone();
                if let Some(layout) = layout {
                    found.unreached =
                        conjugate_unreached(layout, &reps[of], &reps[i], through, &found.unreached);
                }
                (found, 0)
            }
        };
        out.push(result);
    }
    out
}

/// The most words one coset's result takes (see `shared::wire::coset`).
fn words_per_coset(spec: CosetSpec) -> CosetWords {
    let fixed = spec.depth as usize + 4;
    if spec.is_bound() {
        CosetWords::AtMost(fixed + MAX_UNREACHED as usize)
    } else {
        CosetWords::Exactly(fixed)
    }
}

fn print_counts(counts: &[u64], beyond: u64, depth: usize, heading: &str) {
    for (d, &n) in counts.iter().enumerate() {
        println!("  {heading} {d:>2}: {:>15}", thousands(n));
    }
    println!("  beyond {depth:>3}: {:>15}", thousands(beyond));
}
