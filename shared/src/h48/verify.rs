//! Checks of an H48 table file that do not trust the builder: checksums (cubefarm), the 2-bit
//! values recounted against the header, the padding, every line minimum against the values of
//! its line, h0 entry by entry against a fresh BFS, the cocsep and edge fallback sections
//! against a fresh build, and random entries against a direct search of their position (an
//! IDA* over whole cubes that shares no code with the builders).

use super::table::{bucket, line_count, line_min, two_bit_entry, LINE_BYTES, LINE_ENTRIES};
use super::{small_sections, DirectSearch, TableFile};
use crate::bfs::{bfs_depths, BfsError, BfsOptions};
use crate::container::{SectionInfo, SectionKind, TableFormat};
use crate::coord::h48::{H48Coords, EO, ESEP};
use crate::cube::{MoveSet, SplitMix64};
use crate::report::{thousands, Findings};
use crate::space::SymProductSpace;
use rayon::prelude::*;

/// Why a file's checks could not run (a check that runs and fails is a finding, not this).
#[derive(Debug, thiserror::Error)]
pub enum CannotVerify {
    #[error("the file holds no h48 table")]
    NoTable,
    #[error("a fresh BFS failed: {0}")]
    Bfs(#[from] BfsError),
}

/// Verifies an opened table file with `samples` random entries against the direct search,
/// calling `report` with every check as it finishes; returns the failed checks' descriptions.
pub fn verify(
    file: &TableFile,
    samples: u32,
    report: &mut dyn FnMut(bool, &str),
) -> Result<Vec<String>, CannotVerify> {
    let mut findings = Findings::new(report);
    findings.check(
        true,
        format!(
            "{} layout{}",
            file.format.name(),
            if file.format == TableFormat::Cubefarm {
                ", checksums of 3 sections"
            } else {
                " (no checksums)"
            }
        ),
    );
    let (main, lines) = file.section(SectionKind::H48).ok_or(CannotVerify::NoTable)?;
    let range = file
        .sections
        .iter()
        .find(|(s, _)| s.kind == SectionKind::H48)
        .map(|(_, r)| r.clone())
        .expect("a main section");
    let failures = &mut findings;
    failures.check(
        line_count(main.entries) as usize * LINE_BYTES == lines.len(),
        format!(
            "{} lines of 64 bytes for {} entries",
            thousands(line_count(main.entries)),
            thousands(main.entries)
        ),
    );
    let (recount, padding_ok, bad_minima) = scan_lines(file, main, range);
    failures.check(main.buckets == Some(recount), format!("2-bit values recounted: {recount:?}"));
    failures.check(padding_ok, "the last line's padding reads 3".into());
    if !main.depth_counts.is_empty() {
        let from_depths: [u64; 4] = std::array::from_fn(|k| {
            main.depth_counts
                .iter()
                .enumerate()
                .filter(|&(d, _)| bucket(d as u8, main.base) == k as u8)
                .map(|(_, c)| c)
                .sum::<u64>()
                + if k == 3 { main.deeper } else { 0 }
        });
        failures.check(from_depths == recount, "2-bit values agree with the exact depth counts".into());
    }
    failures.check(
        bad_minima == 0,
        format!("every line minimum agrees with its line's values ({bad_minima} differ)"),
    );
    let coords = H48Coords;
    if main.h == 0 {
        verify_h0_entries(main, lines, &coords, failures)?;
    }
    verify_samples(main, lines, &coords, samples, failures);
    let rebuilt = small_sections(&coords)?;
    for fresh in rebuilt {
        let stored = file.section(fresh.info.kind);
        failures.check(
            stored.is_some_and(|(_, data)| data == fresh.data.as_slice()),
            format!("{} equals a fresh build", fresh.info.kind.name(0)),
        );
    }
    Ok(findings.into_failures())
}

/// The four 2-bit counts over the real entries, whether the padding reads 3, and the number of
/// lines whose minimum disagrees with their values: a line whose smallest value is c holds a
/// minimum at most base (c = 0), exactly base + c (c = 1, 2), or 15 (c = 3). The lines are read
/// window by window (see [`TableFile::for_each_window`]).
fn scan_lines(file: &TableFile, main: &SectionInfo, range: std::ops::Range<usize>) -> ([u64; 4], bool, u64) {
    let entries = main.entries;
    let mut counts = [0u64; 4];
    let mut bad = 0u64;
    let mut padding_ok = true;
    file.for_each_window(range, |offset, window| {
        let first_line = (offset / LINE_BYTES) as u64;
        let (c, b, p) = window
            .par_chunks(LINE_BYTES * 4096)
            .enumerate()
            .map(|(chunk, bytes)| {
                let mut c = [0u64; 4];
                let (mut bad, mut padding_ok) = (0u64, true);
                for (k, line) in bytes.chunks_exact(LINE_BYTES).enumerate() {
                    let l = first_line + chunk as u64 * 4096 + k as u64;
                    let first = l * LINE_ENTRIES as u64;
                    let real = (entries - first).min(LINE_ENTRIES as u64) as usize;
                    let mut smallest = 3;
                    for slot in 0..LINE_ENTRIES {
                        let v = line[slot / 4] >> (2 * (slot % 4)) & 3;
                        if slot < real {
                            c[v as usize] += 1;
                            smallest = smallest.min(v);
                        } else {
                            padding_ok &= v == 3;
                        }
                    }
                    let min = line[LINE_BYTES - 1] >> 4;
                    let ok = match smallest {
                        0 => min <= main.base,
                        3 => min == 15,
                        s => min == main.base + s,
                    };
                    bad += !ok as u64;
                }
                (c, bad, padding_ok)
            })
            .reduce(
                || ([0; 4], 0, true),
                |a, b| (std::array::from_fn(|k| a.0[k] + b.0[k]), a.1 + b.1, a.2 && b.2),
            );
        for k in 0..4 {
            counts[k] += c[k];
        }
        bad += b;
        padding_ok &= p;
    });
    (counts, padding_ok, bad)
}

/// h0: every entry and line minimum against a fresh BFS.
fn verify_h0_entries(
    main: &SectionInfo,
    lines: &[u8],
    coords: &H48Coords,
    failures: &mut Findings,
) -> Result<(), CannotVerify> {
    let space = SymProductSpace::h0(coords);
    let depths = bfs_depths(&space, &MoveSet::Htm.moves(), &BfsOptions::default())?;
    let bad_entries = (0..main.entries)
        .into_par_iter()
        .filter(|&i| two_bit_entry(lines, i) != bucket(depths.values[i as usize], main.base))
        .count();
    failures.check(bad_entries == 0, format!("every entry equals a fresh BFS ({bad_entries} differ)"));
    let bad_minima = (0..line_count(main.entries) as usize)
        .filter(|&l| {
            let chunk = &depths.values[l * LINE_ENTRIES..((l + 1) * LINE_ENTRIES).min(depths.values.len())];
            let min = chunk.iter().copied().filter(|&d| d <= main.base + 2).min().unwrap_or(15);
            line_min(lines, l) != min
        })
        .count();
    failures.check(bad_minima == 0, format!("every line minimum equals a fresh BFS ({bad_minima} differ)"));
    if !main.depth_counts.is_empty() {
        failures.check(main.depth_counts == depths.counts, "exact depth counts equal a fresh BFS".into());
    }
    Ok(())
}

/// Random entries against a direct search of their representative position (the dropped
/// orientations free).
fn verify_samples(
    main: &SectionInfo,
    lines: &[u8],
    coords: &H48Coords,
    samples: u32,
    failures: &mut Findings,
) {
    let (base, h) = (main.base, main.h);
    let search = DirectSearch::default();
    let classes = coords.cocsep_table().classes;
    let per_row = (ESEP as u64) << h;
    let mut rng = SplitMix64::new(0x48 + h as u64);
    let picks: Vec<u64> = (0..samples).map(|_| rng.below(main.entries)).collect();
    let wrong: Vec<String> = picks
        .par_iter()
        .filter_map(|&i| {
            let (row, rest) = ((i / per_row) as u32, (i % per_row) as u32);
            let eoesep = (rest >> h) * EO + ((rest & ((1 << h) - 1)) << (11 - h));
            let d = search.hn_distance(&coords.position(classes.rep(row), eoesep), h);
            let l = (i / LINE_ENTRIES as u64) as usize;
            let (v, min) = (two_bit_entry(lines, i), line_min(lines, l));
            (v != bucket(d, base) || (d <= base + 2 && min > d)).then(|| {
                format!("entry {i} (row {row}, eoesep {eoesep}) reads {v}, a direct search says {d}")
            })
        })
        .collect();
    for w in &wrong {
        failures.note(false, w);
    }
    failures.check(
        wrong.is_empty(),
        format!("{samples} random entries against a direct search ({} wrong)", wrong.len()),
    );
}
