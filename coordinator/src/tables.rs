//! `coordinator build`, `info` and `verify`: the H48 pruning tables (seed 000).

use crate::cli::{BuildArgs, ClusterArgs, TableFormat};
use crate::enumerate::{search_levels, SearchSettings};
use crate::output::{peak_rss_bytes, OutputFile};
use crate::resources::check_memory;
use anyhow::{ensure, Context, Result};
use shared::bfs::job::{JobSpec, SpaceKind};
use shared::bfs::{state_bytes, BfsOptions, LocalExpander, RowIndex};
use shared::cube::{MoveSet, SplitMix64};
use shared::h48::table::{bucket, bucket_counts, line_count, line_min, nibble, two_bit_entry, LINE_ENTRIES};
use shared::h48::{
    bfs_depths, h48_section, read_tables, small_sections, write_tables, DepthRecorder, DirectSearch, Format,
    H48Coords, HnRecorder, Section, SectionKind, SymProductSpace, EO, ESEP,
};
use shared::report::thousands;
use std::path::Path;
use std::time::Instant;
use tonic::transport::ServerTlsConfig;

/// The N of a table name "h48hN".
fn parse_table(name: &str) -> Result<u8> {
    name.strip_prefix("h48h")
        .and_then(|n| n.parse().ok())
        .filter(|&n| n <= 11)
        .with_context(|| format!("unknown table {name:?}: expected h48h0 .. h48h11"))
}

pub fn build(args: BuildArgs) -> Result<()> {
    let h = parse_table(&args.table)?;
    let out = OutputFile::prepare(&args.out)?;
    let tls = args.cluster.server_tls()?;
    let start = Instant::now();
    let coords = H48Coords::default();
    let main = if h == 0 {
        build_h0(&coords, args.cluster, tls)?
    } else {
        build_hn(h, &coords, args.mem_limit, args.cluster, tls)?
    };
    let [cocsep, eoesep] = small_sections(&coords).map_err(|e| anyhow::anyhow!(e))?;
    let sections = [cocsep, main, eoesep];
    let format = match args.format {
        TableFormat::Cubefarm => Format::Cubefarm,
        TableFormat::H48 => Format::H48,
    };
    let mut bytes = Vec::new();
    write_tables(&mut bytes, &sections, format)?;
    out.write(&bytes)?;
    print!("{}", describe(&sections));
    println!(
        "wrote {} ({} bytes) in {:.2} s, peak RSS {:.1} MiB",
        out.path().display(),
        thousands(bytes.len() as u64),
        start.elapsed().as_secs_f64(),
        peak_rss_bytes() as f64 / 1048576.0
    );
    Ok(())
}

fn settings(
    space: SpaceKind,
    max_depth: Option<u32>,
    cluster: ClusterArgs,
    tls: Option<ServerTlsConfig>,
) -> SearchSettings {
    SearchSettings { job: JobSpec { space, moves: MoveSet::Htm }, max_depth, state_dir: None, cluster, tls }
}

fn log_index(name: &str, columns: &str, space: &impl RowIndex, built_from: Instant) {
    tracing::info!(
        "{name} index: {} cocsep classes x {} {columns} values = {} entries ({:.1} s)",
        space.row_count(),
        thousands(space.column_count() as u64),
        thousands(space.entry_count()),
        built_from.elapsed().as_secs_f64()
    );
}

/// h0: every depth of the (cocsep class, esep) index.
fn build_h0(coords: &H48Coords, cluster: ClusterArgs, tls: Option<ServerTlsConfig>) -> Result<Section> {
    let start = Instant::now();
    let space = SymProductSpace::h0(coords);
    log_index("h0", "esep", &space, start);
    let mut recorder = DepthRecorder::new(&space);
    let settings = settings(SpaceKind::H48h0, None, cluster, tls);
    search_levels(&space, &MoveSet::Htm.moves(), &settings, |report, bits| recorder.record(report, bits))?;
    let depths = recorder.finish();
    ensure!(
        depths.deeper == 0,
        "internal check failed: {} h0 entries were not reached",
        thousands(depths.deeper)
    );
    Ok(h48_section(0, &depths))
}

/// hN (N > 0): the h11 index searched to base + 2, each level folded into the hN lines
/// (docs/h48-tables.md). Refused where the three h11 bit arrays and the table do not fit.
fn build_hn(
    h: u8,
    coords: &H48Coords,
    mem_limit: Option<u64>,
    cluster: ClusterArgs,
    tls: Option<ServerTlsConfig>,
) -> Result<Section> {
    let start = Instant::now();
    let space = SymProductSpace::h11(coords);
    let rows = space.row_count();
    let state = state_bytes(rows as u64, space.column_count() as u64);
    check_memory(state + HnRecorder::bytes(h, rows, ESEP as usize), mem_limit, "").with_context(|| {
        format!(
            "h48h{h} is built from exact h11 distances: a search over {} h11 entries (three bit arrays of {:.1} \
             GB) plus the table (docs/h48-tables.md)",
            thousands(space.entry_count()),
            state as f64 / 3e9
        )
    })?;
    log_index("h11", "eoesep", &space, start);
    let mut recorder = HnRecorder::new(h, rows, ESEP as usize);
    let max = recorder.max_depth();
    let settings = settings(SpaceKind::H48h11, Some(max), cluster, tls);
    search_levels(&space, &MoveSet::Htm.moves(), &settings, |report, bits| {
        recorder.record(report.counts.depth, bits)
    })?;
    Ok(recorder.finish(max))
}

fn load(path: &Path) -> Result<(Format, Vec<Section>)> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    read_tables(&bytes).with_context(|| format!("{} is not a valid table file", path.display()))
}

fn main_section(sections: &[Section]) -> Result<&Section> {
    sections.iter().find(|s| s.kind == SectionKind::H48).context("the file holds no h48 table")
}

/// Human-readable summary of every section.
fn describe(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections {
        out += &format!(
            "{}: {} entries, {} bytes",
            s.kind.name(s.h),
            thousands(s.entries),
            thousands(s.data.len() as u64)
        );
        if s.kind == SectionKind::H48 {
            out += &format!(", base {}", s.base);
        }
        out += "\n";
        if let Some(b) = s.buckets {
            out += &format!("  2-bit values 0..3: {}\n", b.map(thousands).join(" / "));
        }
        for (d, &c) in s.depth_counts.iter().enumerate() {
            out += &format!("  depth {d:>2}: {:>15}\n", thousands(c));
        }
        if s.deeper > 0 {
            out += &format!("  deeper:   {:>15}\n", thousands(s.deeper));
        }
    }
    out
}

pub fn info(path: &Path, json: bool) -> Result<()> {
    let (format, sections) = load(path)?;
    if !json {
        println!("{} ({} layout)", path.display(), if format == Format::H48 { "h48" } else { "cubefarm" });
        print!("{}", describe(&sections));
        return Ok(());
    }
    let main = main_section(&sections)?;
    let section_json = |s: &Section| {
        serde_json::json!({
            "name": s.kind.name(s.h),
            "entries": s.entries,
            "bytes": s.data.len(),
            "depth_counts": s.depth_counts,
            "deeper": s.deeper,
        })
    };
    let value = serde_json::json!({
        "kind": "h48",
        "format": if format == Format::H48 { "h48" } else { "cubefarm" },
        "h": main.h,
        "base": main.base,
        "entries": main.entries,
        "bytes": main.data.len(),
        "buckets": main.buckets,
        "depth_counts": main.depth_counts,
        "deeper": main.deeper,
        "sections": sections.iter().map(section_json).collect::<Vec<_>>(),
    });
    println!("{}", serde_json::to_string_pretty(&value)?);
    Ok(())
}

/// One verification finding.
fn check(ok: bool, what: String, failures: &mut Vec<String>) {
    println!("{} {what}", if ok { "ok  " } else { "FAIL" });
    if !ok {
        failures.push(what);
    }
}

pub fn verify(path: &Path, samples: u32) -> Result<()> {
    let start = Instant::now();
    let (_, sections) = load(path)?;
    println!("ok   checksums of {} sections", sections.len());
    let main = main_section(&sections)?;
    let mut failures = Vec::new();
    let lines = &main.data;
    check(
        line_count(main.entries) as usize * 64 == lines.len(),
        format!(
            "{} lines of 64 bytes for {} entries",
            thousands(line_count(main.entries)),
            thousands(main.entries)
        ),
        &mut failures,
    );
    let recount = bucket_counts(lines, main.entries);
    check(main.buckets == Some(recount), format!("2-bit values recounted: {recount:?}"), &mut failures);
    let from_depths: [u64; 4] = std::array::from_fn(|k| {
        main.depth_counts
            .iter()
            .enumerate()
            .filter(|&(d, _)| bucket(d as u8, main.base) == k as u8)
            .map(|(_, c)| c)
            .sum::<u64>()
            + if k == 3 { main.deeper } else { 0 }
    });
    check(from_depths == recount, "2-bit values agree with the exact depth counts".into(), &mut failures);

    let coords = H48Coords::default();
    if main.h == 0 {
        verify_h0_entries(main, &coords, &mut failures)?;
    } else {
        verify_hn_minima(main, &mut failures);
    }
    verify_samples(main, &coords, samples, &mut failures);

    let rebuilt = small_sections(&coords).map_err(|e| anyhow::anyhow!(e))?;
    for fresh in rebuilt {
        let stored = sections.iter().find(|s| s.kind == fresh.kind);
        check(
            stored.is_some_and(|s| s.data == fresh.data),
            format!("{} equals a fresh build", fresh.kind.name(0)),
            &mut failures,
        );
    }
    if let Some(e) = sections.iter().find(|s| s.kind == SectionKind::EoEsep) {
        let table = &e.data[ESEP as usize * 4..];
        let max = (0..e.entries).map(|i| nibble(table, i)).max().unwrap_or(0);
        check(max as usize + 1 == e.depth_counts.len(), format!("eoesep deepest entry {max}"), &mut failures);
    }
    println!("verified in {:.1} s", start.elapsed().as_secs_f64());
    ensure!(failures.is_empty(), "{} check(s) failed: {}", failures.len(), failures.join("; "));
    Ok(())
}

/// h0: every entry, line minimum and depth count against a fresh BFS.
fn verify_h0_entries(main: &Section, coords: &H48Coords, failures: &mut Vec<String>) -> Result<()> {
    let lines = &main.data;
    // Rebuild the distances and compare every entry and line minimum.
    let space = SymProductSpace::h0(coords);
    let depths = bfs_depths(&space, &MoveSet::Htm.moves(), &BfsOptions::default(), &LocalExpander::default())
        .map_err(|e| anyhow::anyhow!(e))?;
    let bad_entries = (0..main.entries)
        .filter(|&i| two_bit_entry(lines, i) != bucket(depths.values[i as usize], main.base))
        .count();
    check(bad_entries == 0, format!("every entry equals a fresh BFS ({bad_entries} differ)"), failures);
    let bad_minima = (0..line_count(main.entries) as usize)
        .filter(|&l| {
            let chunk = &depths.values[l * LINE_ENTRIES..((l + 1) * LINE_ENTRIES).min(depths.values.len())];
            line_min(lines, l) != (*chunk.iter().min().expect("non-empty line")).min(15)
        })
        .count();
    check(bad_minima == 0, format!("per-line minima recomputed ({bad_minima} differ)"), failures);
    check(main.depth_counts == depths.counts, "exact depth counts equal a fresh BFS".into(), failures);

    Ok(())
}

/// hN (N > 0): a fresh h11 search would be the build itself, so the line minima are checked
/// against the 2-bit values they must agree with.
fn verify_hn_minima(main: &Section, failures: &mut Vec<String>) {
    let (lines, base) = (&main.data, main.base);
    let bad_minima = (0..line_count(main.entries))
        .filter(|&l| {
            let first = l * LINE_ENTRIES as u64;
            let values =
                (first..(first + LINE_ENTRIES as u64).min(main.entries)).map(|i| two_bit_entry(lines, i));
            let smallest = values.min().expect("non-empty line");
            let min = line_min(lines, l as usize);
            if smallest == 0 {
                min > base
            } else {
                min != (base + smallest).min(15)
            }
        })
        .count();
    check(
        bad_minima == 0,
        format!("per-line minima agree with the 2-bit values ({bad_minima} differ)"),
        failures,
    );
}

/// Random entries against a direct search of their representative position (the dropped
/// orientations free), which shares no code with the BFS.
fn verify_samples(main: &Section, coords: &H48Coords, samples: u32, failures: &mut Vec<String>) {
    let (lines, base, h) = (&main.data, main.base, main.h);
    let search = DirectSearch::default();
    let classes = coords.cocsep_coord().classes();
    let per_row = (ESEP as u64) << h;
    let mut rng = SplitMix64::new(0x48 + h as u64);
    let mut wrong = 0;
    for _ in 0..samples {
        let i = rng.below(main.entries);
        let (row, rest) = ((i / per_row) as u32, (i % per_row) as u32);
        let eoesep = (rest >> h) * EO + (rest & ((1 << h) - 1));
        let d = search.hn_distance(&coords.position(classes.rep(row), eoesep), h);
        let l = (i / LINE_ENTRIES as u64) as usize;
        if two_bit_entry(lines, i) != bucket(d, base) || line_min(lines, l) > d {
            wrong += 1;
            tracing::error!("entry {i} (row {row}, eoesep {eoesep}): direct search says {d}");
        }
    }
    check(wrong == 0, format!("{samples} random entries against a direct search ({wrong} wrong)"), failures);
}
